"""`rfid-table check-config FILE`: every kind of bad configuration is rejected (exit 78) with its key path,
its line and what was expected; the daemon refuses to start on it with the same message.

Bad configurations are the shipped config/table-6max.toml with one edit, so the rest of the file is
realistic; the expected line is found in the edited text, never asked of the code under test.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from controller.dealing import ReadWindows
from rfid_table.cli import main
from rfid_table.config.table import load_config

CONFIG = Path(__file__).resolve().parents[1] / "config"
SIXMAX = (CONFIG / "table-6max.toml").read_text(encoding="utf-8")
LAST_CARD = 'E0040150C3000034 = "Ac"\n'
# A second deck, a copy of deck A on new tags, except one tag that was moved over from deck A.
DECK_B = "\n[decks.B]\n" + SIXMAX[SIXMAX.index("E0040150C3000001"):].replace("E0040150C3", "E0040150C4").replace(
    'E0040150C4000010 = "4h"', 'E0040150C3000010 = "4h"  # moved from deck A')
TABLE_KEYS = "id, name, seats, active_deck, clear_after_s, button, players, exposed_cards, audit_hands, missing_card_s"
MQTT_KEYS = ("host, port, topic_prefix, client_id, username, password, keepalive, reconnect_max_s, "
             "backlog_in_flight, backlog_per_s, tls, tls_ca_file, tls_cert_file, tls_key_file, tls_insecure")
TABLE_ID = "expected letters, digits, '-' or '_' (it is an MQTT topic level), got"
SEATS = "expected a number of seats from 2 to 10, got"
UID_TWICE = "Cannot overwrite a value (a key written twice — a tag UID listed twice in a deck?)"


def edited(old: str, new: str) -> str:
    assert SIXMAX.count(old) == 1, old
    return SIXMAX.replace(old, new)


def line_of(text: str, fragment: str) -> int:
    assert text.count(fragment) == 1, fragment
    return text[: text.index(fragment)].count("\n") + 1


def column_of(text: str, fragment: str) -> int:
    start = text.index(fragment)
    return start - text.rfind("\n", 0, start)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "table.toml"
    path.write_text(text, encoding="utf-8")
    return path


def check_config_fails(path, capsys) -> list[str]:
    with pytest.raises(SystemExit) as exc:
        main(["check-config", str(path)])
    assert exc.value.code == 78
    captured = capsys.readouterr()
    assert captured.out == ""
    return captured.err.splitlines()


@pytest.mark.parametrize("name, summary", [
    ("table-10.toml", "table 'main-1', 10 seats, 13 zones on 1 reader(s), 2 deck(s), active deck 'A'"),
    ("table-chips.toml", "table 'main-2', 10 seats, 24 zones on 2 reader(s), 2 deck(s), active deck 'A', "
                         "chip set 'demo' (960 chips)"),
    ("table-6max.toml", "table 'sixmax-1', 6 seats, 9 zones on 1 reader(s), 1 deck(s), active deck 'A'"),
    ("table-metratec.toml", "table 'metratec-1', 10 seats, 24 zones on 2 reader(s), 2 deck(s), active deck 'A', "
                            "chip set 'demo' (960 chips)"),
    ("table-feig.toml", "table 'feig-1', 10 seats, 24 zones on 1 reader(s), 2 deck(s), active deck 'A', "
                        "chip set 'demo' (960 chips)"),
])
def test_shipped_examples_pass(capsys, name, summary):
    path = str(CONFIG / name)
    assert main(["check-config", path]) == 0
    assert capsys.readouterr().out == f"{path}: OK — {summary}\n"


def case(id, old, new, key, at, expected):
    """Replace ``old`` by ``new``: one problem, on ``key``, on the line holding ``at``."""
    return pytest.param(old, new, key, at, expected, id=id)


@pytest.mark.parametrize("old, new, key, at, expected", [
    case("unknown top-level key", "[table]\n", 'colour = "green"\n\n[table]\n', "colour", "colour =",
         "unknown key (expected one of: table, game, tournament, mqtt, readers, zones, decks, chips, hal, journal, broadcast, "
         "gpio)"),
    case("unknown key in [table]", "seats = 6\n", "seats = 6\nchairs = 6\n", "table.chairs", "chairs =",
         f"unknown key (expected one of: {TABLE_KEYS})"),
    case("unknown key in [mqtt]", "port = 1883\n", "port = 1883\nqos = 2\n", "mqtt.qos", "qos =",
         f"unknown key (expected one of: {MQTT_KEYS})"),
    case("unknown key in a zone", "antenna = 7 }", "antenna = 7, gain = 3 }", "zones.board.gain", "gain = 3",
         "unknown key (expected one of: reader, antenna)"),
    case("duplicate antenna", 'burn = { reader = "main", antenna = 8 }', 'burn = { reader = "main", antenna = 7 }',
         "zones.burn.antenna", "burn =", "antenna 7 of reader 'main' is already assigned to zone 'board'"),
    case("seat without a card zone", 'seat4.cards = { reader = "main", antenna = 4 }\n', "", "zones.seat4",
         "[zones]", 'seat 4 has no card zone (add seat4.cards = { reader = "NAME", antenna = N })'),
    case("UID twice in a deck, other case", LAST_CARD, LAST_CARD + 'e0040150c300000a = "Js"\n',
         "decks.A.e0040150c300000a", "e0040150c300000a",
         "duplicate UID: tag E0040150C300000A is already registered in deck 'A'"),
    case("UID in two decks", LAST_CARD, LAST_CARD + DECK_B, "decks.B.E0040150C3000010", "# moved from deck A",
         "duplicate UID: tag E0040150C3000010 is already registered in deck 'A'"),
    case("duplicate card", 'E0040150C3000002 = "3s"', 'E0040150C3000002 = "2s"', "decks.A.E0040150C3000002",
         'E0040150C3000002 = "2s"', "duplicate card: 2s is already registered to tag E0040150C3000001 in this deck"),
    case("deck of 51 cards", 'E0040150C300001A = "Ah"\n', "", "decks.A", "[decks.A]",
         "deck has 51 cards, expected 52 (missing: Ah)"),
    case("invalid card", 'E0040150C3000005 = "6s"', 'E0040150C3000005 = "Xx"', "decks.A.E0040150C3000005", '"Xx"',
         "'Xx' is not a card: expected a rank of 23456789TJQKA and a suit of shdc, like 'As' or 'Td'"),
    case("one seat", "seats = 6", "seats = 1", "table.seats", "seats =", f"{SEATS} 1"),
    case("eleven seats", "seats = 6", "seats = 11", "table.seats", "seats =", f"{SEATS} 11"),
    case("seats not a number", "seats = 6", 'seats = "six"', "table.seats", "seats =", f"{SEATS} str 'six'"),
    case("zone beyond the seats", "board =", 'seat7.cards = { reader = "main", antenna = 10 }\nboard =',
         "zones.seat7.cards", "seat7.cards", "no seat 7: table.seats is 6 (expected seat1 … seat6)"),
    case("unknown reader", 'muck = { reader = "main"', 'muck = { reader = "side"', "zones.muck.reader", "muck =",
         "no reader named 'side' (readers: main)"),
    case("antenna beyond the reader", "antenna = 9 }", "antenna = 13 }", "zones.muck.antenna", "muck =",
         "reader 'main' has antennas 1 to 12, not 13"),
    case("unknown backend", '\nbackend = "sim"', '\nbackend = "bluetooth"', "readers.main.backend", '"bluetooth"',
         "expected one of: sim, serial, usb, metratec, feig, pn5180, got 'bluetooth'"),
    case("table id with /", 'id = "sixmax-1"', 'id = "room/1"', "table.id", "id =", f"{TABLE_ID} 'room/1'"),
    case("table id with +", 'id = "sixmax-1"', 'id = "six+1"', "table.id", "id =", f"{TABLE_ID} 'six+1'"),
    case("table id ending in a newline", 'id = "sixmax-1"', r'id = "sixmax-1\n"', "table.id", "id =",
         rf"{TABLE_ID} 'sixmax-1\n'"),
    case("[zones] as a list", "[zones]", "[[zones]]", "zones", "[[zones]]",
         "expected the [zones] table mapping each zone to a reader antenna, got a list"),
    case("zone as a number", 'board = { reader = "main", antenna = 7 }', "board = 7", "zones.board", "board = 7",
         'expected { reader = "NAME", antenna = N }, got int 7'),
    case("invalid big blind is not compared", "small_blind = 1\nbig_blind = 2", 'small_blind = 5\nbig_blind = "10"',
         "game.big_blind", "big_blind =", "expected a positive number of chips, got str '10'"),
    case("more players than CA GR 15.1 allows at 7-card Omaha", 'variant = "nlhe"',
         'variant = "plo7"\nmax_players = 6', "game.max_players", "max_players =",
         "expected players from 2 to 5 (CA GR 15.1: at most 5 players at plo7), got 6"),
    case("a double board must be true or false", 'variant = "nlhe"', 'variant = "plo5"\ndouble_board = "yes"',
         "game.double_board", "double_board =",
         "expected true (two boards every hand, CA GR 14.1) or false, got str 'yes'"),
    case("a move needing no read", "move_after_cycles = 3 ", "move_after_cycles = 0 ",
         "hal.cards.move_after_cycles", "move_after_cycles = 0", "expected cycles from 1 to 20, got 0"),
    case("U+2028 in a comment does not shift lines", "small_blind = 1", "# chips\u2028(pasted)\nsmall_blind = 0",
         "game.small_blind", "small_blind =", "expected a positive number of chips, got 0"),
])
def test_each_mistake_is_reported_with_key_line_and_expectation(tmp_path, capsys, old, new, key, at, expected):
    text = edited(old, new)
    path = write(tmp_path, text)
    assert check_config_fails(path, capsys) == [
        "bad configuration (1 problem):",
        f"  {path}:{line_of(text, at)}: {key}: {expected}",
    ]


def test_the_players_listed_must_fit_the_variant(tmp_path, capsys):
    """CA GR 15.1: "5 players maximum 7 cards": six players listed for 7-card Omaha are refused on the players' line;
    with a double board CA GR 15.2 allows 7 players at 5-card Omaha, not 8."""
    text = edited("seats = 6\n", "seats = 6\nplayers = [1, 2, 3, 4, 5, 6]\n").replace('variant = "nlhe"',
                                                                                    'variant = "plo7"')
    path = write(tmp_path, text)
    assert check_config_fails(path, capsys) == [
        "bad configuration (1 problem):",
        f"  {path}:{line_of(text, 'players =')}: table.players: 6 players, but at most 5 may be dealt in "
        "(CA GR 15.1: at most 5 players at plo7)",
    ]
    ten = (CONFIG / "table-10.toml").read_text(encoding="utf-8")
    assert ten.count('variant = "nlhe"') == 1
    text = ten.replace('variant = "nlhe"', 'variant = "plo5"\ndouble_board = true\nmax_players = 8')
    path = write(tmp_path, text)
    assert check_config_fails(path, capsys) == [
        "bad configuration (1 problem):",
        f"  {path}:{line_of(text, 'max_players =')}: game.max_players: expected players from 2 to 7 "
        "(CA GR 15.2: at most 7 players at plo5 with a double board), got 8",
    ]
    path = write(tmp_path, text.replace("max_players = 8", "max_players = 7"))
    assert main(["check-config", str(path)]) == 0


@pytest.mark.parametrize("old, new, key, at, expected", [
    case("TOML syntax error", "seats = 6", "seats = half", "table.seats", "half", "Invalid value"),
    case("UID written twice", LAST_CARD, LAST_CARD + 'E0040150C3000007 = "8s"  # again\n',
         "decks.A.E0040150C3000007", "  # again", UID_TWICE),  # the parser stops after the value
    case("zone written twice", "[decks.A]", 'board = { reader = "main", antenna = 10 }  # spare\n\n[decks.A]',
         "zones.board", "  # spare", "Cannot overwrite a value (a key written twice?)"),
])
def test_toml_syntax_errors_give_line_and_column(tmp_path, capsys, old, new, key, at, expected):
    text = edited(old, new)
    path = write(tmp_path, text)
    assert check_config_fails(path, capsys) == [
        "bad configuration (1 problem):",
        f"  {path}:{line_of(text, at)}:{column_of(text, at)}: {key}: not valid TOML: {expected}",
    ]


def test_unreadable_files(tmp_path, capsys):
    missing, directory = tmp_path / "missing.toml", tmp_path / "conf.d"
    directory.mkdir()
    assert check_config_fails(missing, capsys)[1:] == [f"  {missing}: cannot read the file: it does not exist"]
    assert check_config_fails(directory, capsys)[1:] == [f"  {directory}: cannot read the file: it is a directory"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files without read permission")
def test_file_without_read_permission(tmp_path, capsys):
    path = write(tmp_path, SIXMAX)
    path.chmod(0)
    assert check_config_fails(path, capsys)[1:] == [f"  {path}: cannot read the file: permission denied"]


def test_file_not_utf8(tmp_path, capsys):
    text = edited('name = "Six-max table 1"', 'name = "Café 1"')  # saved as Latin-1
    path = tmp_path / "table.toml"
    path.write_bytes(text.encode("latin-1"))
    assert check_config_fails(path, capsys)[1:] == [
        f"  {path}:{line_of(text, 'Café')}:{column_of(text, 'é')}: "
        "cannot read the file: byte 0xE9 is not UTF-8 (expected UTF-8 text)"]


EDITS = [  # (old, new, key, the line's fragment): all in one file
    ("[table]\n", "colour = 1\n[table]\n", "colour", "colour ="),
    ('id = "sixmax-1"', 'id = "six/1"', "table.id", "six/1"),
    ("port = 1883", "port = 70000", "mqtt.port", "port ="),
    ('\nbackend = "sim"', '\nbackend = "bluetooth"', "readers.main.backend", '"bluetooth"'),
    ('seat3.cards = { reader = "main", antenna = 3 }', 'seat3.bets = { reader = "side", antenna = 3 }',
     "zones.seat3.bets.reader", "seat3.bets"),
    ('seat2.cards = { reader = "main", antenna = 2 }\n', "", "zones.seat2", "[zones]"),
    ("antenna = 8 }", "antenna = 1 }", "zones.burn.antenna", "burn ="),
    ('E0040150C3000002 = "3s"', 'E0040150C3000002 = "2s"', "decks.A.E0040150C3000002", 'C3000002 = "2s"'),
]


def test_every_mistake_in_a_file_is_reported(tmp_path, capsys):
    text = SIXMAX
    for old, new, _, _ in EDITS:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    path = write(tmp_path, text)
    err = check_config_fails(path, capsys)
    assert err[0] == f"bad configuration ({len(EDITS) + 1} problems):"
    prefixes = [f"  {path}:{line_of(text, at)}: {key}: " for _, _, key, at in EDITS]
    # seat3.bets is wrong and seat3.cards is gone: both are reported
    prefixes.append(f"  {path}:{line_of(text, 'seat3.bets')}: zones.seat3: seat 3 has no card zone")
    for prefix in prefixes:
        assert sum(line.startswith(prefix) for line in err) == 1, prefix
    assert len(err) == 1 + len(prefixes)


COMMAND = Path(sys.executable).with_name("rfid-table")
RFID_TABLE = [str(COMMAND)] if COMMAND.exists() else [sys.executable, "-m", "rfid_table.cli"]


def rfid_table(*args) -> subprocess.CompletedProcess:
    return subprocess.run([*RFID_TABLE, *args], capture_output=True, text=True, timeout=30)


@pytest.fixture
def bad_config(tmp_path) -> tuple[Path, list[str]]:
    text = edited('\nbackend = "sim"', '\nbackend = "bluetooth"').replace("antenna = 8 }", "antenna = 7 }")
    path, backend, burn = write(tmp_path, text), line_of(text, '"bluetooth"'), line_of(text, "burn =")
    return path, [
        "bad configuration (2 problems):",
        f"  {path}:{backend}: readers.main.backend: expected one of: sim, serial, usb, metratec, feig, pn5180, "
        "got 'bluetooth'",
        f"  {path}:{burn}: zones.burn.antenna: antenna 7 of reader 'main' is already assigned to zone 'board'",
    ]


def test_check_config_command_exits_78(bad_config):
    path, message = bad_config
    done = rfid_table("check-config", str(path))
    assert (done.returncode, done.stdout, done.stderr.splitlines()) == (78, "", message)


@pytest.mark.parametrize("daemon", [["sim", "--hands", "1"], ["run"]])
def test_daemon_refuses_to_start_with_the_same_message(bad_config, daemon):
    path, message = bad_config
    done = rfid_table(daemon[0], "--config", str(path), *daemon[1:])
    assert (done.returncode, done.stderr.splitlines()) == (78, message)


@pytest.mark.parametrize("reader, key, expected", [
    ('backend = "serial"', "readers.main.port",
     "missing (expected the reader's serial device, best a stable /dev/serial/by-id/... path)"),
    ('backend = "usb"\nvendor_id = 0x1209', "readers.main.product_id", "missing (expected a USB id such as 0x1209)"),
    ('backend = "serial"\nport = "/dev/ttyACM0"\nvendor_id = 0x1209', "readers.main.vendor_id",
     "not used by backend 'serial'"),
])
def test_hardware_readers_need_their_link_settings(tmp_path, capsys, reader, key, expected):
    text = edited('backend = "sim"', reader)
    err = check_config_fails(write(tmp_path, text), capsys)
    assert err[1].endswith(f": {key}: {expected}"), err


def test_a_serial_reader_with_a_stable_port_is_accepted(tmp_path, capsys):
    text = edited('backend = "sim"', 'backend = "serial"\nport = "/dev/serial/by-id/usb-Table_Reader_0001-if00"')
    assert main(["check-config", str(write(tmp_path, text))]) == 0


def read_windows(path: Path) -> ReadWindows:
    """The deal's windows for cards read late on the table ``path`` configures."""
    setup = load_config(path).table_setup()
    return ReadWindows.of(setup.card_pass_s, setup.card_reads)


def test_the_deal_allows_for_cards_read_late_at_the_pace_of_the_card_readers(tmp_path):
    """A reader that visits its antennas in turn cannot tell the order of two cards that landed within one of its
    passes, and reads a card some passes after it landed: the deal's windows follow the slowest reader of the zones
    cards lie on (its cycle_ms) and [hal.cards] present_after_cycles. The chip reader's pace plays no part, and the
    reference reader's tables keep 0.15 s and 1.5 s."""
    assert read_windows(CONFIG / "table-6max.toml") == ReadWindows(read_late_s=0.15, read_order_s=1.5)
    metratec = read_windows(CONFIG / "table-metratec.toml")  # cards 650 ms a pass, chips 1600 ms
    assert metratec.read_late_s == 0.65 and metratec.read_order_s == pytest.approx(3 * 0.65)
    feig = read_windows(CONFIG / "table-feig.toml")  # one reader for the whole table, 3000 ms
    assert (feig.read_late_s, feig.read_order_s) == (3.0, 9.0)
    # the muck on a slower reader of its own, and three reads to settle a dealt card
    text = edited('muck = { reader = "main", antenna = 9 }', 'muck = { reader = "muck", antenna = 1 }')
    text = text.replace("\n[zones]\n", '\n[readers.muck]\nbackend = "sim"\nantennas = 1\ncycle_ms = 800\n\n[zones]\n')
    text = text.replace("present_after_cycles = 2 ", "present_after_cycles = 3 ")
    slow = read_windows(write(tmp_path, text))
    assert slow.read_late_s == 0.8 and slow.read_order_s == pytest.approx(4 * 0.8)


def test_a_bet_settles_over_the_pace_of_the_chips_reader(tmp_path):
    """A push's chips that landed after their antenna's dwell are read a pass later: a bet is read once its chips
    have lain still for a pass and a half of the slowest reader of the chip zones, two and a half where the reader
    reads a stack in turns (the reader firmware, the simulated reader), or the house's settle_ms where that is
    longer. The cards' reader plays no part."""
    chips = (CONFIG / "table-chips.toml").read_text(encoding="utf-8").replace(  # both readers 50 ms a pass,
        '"chips-demo.toml"', repr(str(CONFIG / "chips-demo.toml")))              # settle_ms 500
    assert load_config(write(tmp_path, chips)).betting_setup().settle_s == 0.5
    slow = chips.replace('antennas = 11\ncycle_ms = 50', 'antennas = 11\ncycle_ms = 800')
    assert load_config(write(tmp_path, slow)).betting_setup().settle_s == pytest.approx(2.0)
    slow_house = slow.replace("settle_ms = 500 ", "settle_ms = 3000 ")
    assert load_config(write(tmp_path, slow_house)).betting_setup().settle_s == 3.0
    slow_cards = chips.replace('antennas = 16\ncycle_ms = 50', 'antennas = 16\ncycle_ms = 800')
    assert load_config(write(tmp_path, slow_cards)).betting_setup().settle_s == 0.5
    assert load_config(CONFIG / "table-metratec.toml").betting_setup().settle_s == pytest.approx(2.4)  # 1600 ms


def test_a_broadcast_delay_needs_a_journal(tmp_path, capsys):
    text = edited('path = "/var/lib/rfid-table/sixmax-1.journal"\n', "")
    err = check_config_fails(write(tmp_path, text), capsys)
    assert err[1].endswith("broadcast.delay_s: the delayed feed needs [journal] path "
                           "(the delay must survive a restart)"), err


GPIO = """
[gpio]
backend = "sim"
[gpio.buttons]
new_hand = { pin = 17 }
misdeal = { pin = 17 }
[gpio.seats.1]
light = 12
"""


def test_the_gpio_pin_map_is_checked_with_the_rest(tmp_path, capsys):
    text = SIXMAX + GPIO
    err = check_config_fails(write(tmp_path, text), capsys)
    assert len(err) == 2 and err[1].startswith(f"  {tmp_path / 'table.toml'}:{line_of(text, 'misdeal')}: "
                                               "gpio.buttons.misdeal.pin: "), err
    assert "17" in err[1] and "new_hand" in err[1]  # the pin used twice names its other user
    assert main(["check-config", str(write(tmp_path, text.replace("misdeal = { pin = 17 }", "misdeal = { pin = 27 }")))]) == 0


def test_chip_set_problems_name_the_registry_line(tmp_path, capsys):
    """[chips] points at the chip registry: a missing file, an unknown set, a chip tag that is a card, and a chip
    set on a table without chip zones are each reported where they are."""
    chips = CONFIG / "chips-demo.toml"
    registry = tmp_path / "chips.toml"
    registry.write_text(chips.read_text() + 'E0040150C3000001 = 5\n')  # 2s of the six-max table's deck
    text = SIXMAX + '\n[chips]\nregistry = "chips.toml"\nactive_set = "demo"\n'
    lines = check_config_fails(write(tmp_path, text), capsys)
    card_line = registry.read_text().count("\n")
    assert any(f"chips.registry: {registry}:{card_line}: sets.demo.E0040150C3000001: tag E0040150C3000001 is a "
               "card: 2s of deck 'A'" in line for line in lines), lines
    registry.write_text(chips.read_text())
    lines = check_config_fails(write(tmp_path, text.replace('"demo"', '"blue"')), capsys)
    assert any("chips.active_set: no chip set 'blue'" in line and "(sets: demo)" in line for line in lines), lines
    lines = check_config_fails(write(tmp_path, text.replace("chips.toml", "missing.toml")), capsys)
    assert any("chips.registry:" in line and "missing.toml: cannot read the file" in line for line in lines), lines
    lines = check_config_fails(write(tmp_path, text), capsys)
    assert any("a chip set but no chip zone" in line for line in lines), lines


# ---- hostile files: exit 78 with the reason, in bounded time and memory ---------------------------------------


def check_config_bounded(path: Path) -> subprocess.CompletedProcess:
    """check-config in a child with 30 s and 1 GiB of address space: a hang or a read without end fails here."""
    import resource  # noqa: PLC0415

    def limit_memory() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    return subprocess.run([sys.executable, "-m", "rfid_table.cli", "check-config", str(path)], capture_output=True,
                          text=True, timeout=30, preexec_fn=limit_memory, cwd=Path(__file__).resolve().parents[1])


@pytest.mark.parametrize("nesting", [
    pytest.param("x = " + "[" * 5000 + "]" * 5000 + "\n", id="arrays"),
    pytest.param("x = " + "{a = " * 3000 + "1" + "}" * 3000 + "\n", id="inline tables"),
])
def test_deeply_nested_toml_is_refused_with_exit_78(tmp_path, nesting):
    path = write(tmp_path, SIXMAX + nesting)
    result = check_config_bounded(path)
    assert result.returncode == 78, result.stderr
    assert "Traceback" not in result.stderr
    assert f"{path}: not valid TOML: nested too deeply" in result.stderr


def test_a_deep_dotted_key_is_refused_with_exit_78(tmp_path):
    path = write(tmp_path, SIXMAX.replace("[zones]\n", "[zones]\n" + ".".join(["seat1"] * 5000) + " = 1\n"))
    result = check_config_bounded(path)
    assert result.returncode == 78, result.stderr
    assert "Traceback" not in result.stderr
    assert "nested too deeply" in result.stderr


def test_a_chip_registry_that_never_ends_is_refused_with_exit_78(tmp_path):
    path = write(tmp_path, SIXMAX + '\n[chips]\nregistry = "/dev/zero"\nactive_set = "demo"\n')
    result = check_config_bounded(path)
    assert result.returncode == 78, result.stderr
    assert "chips.registry: /dev/zero: cannot read the file: not a regular file (a character device)" \
        in result.stderr


def test_a_configuration_larger_than_the_limit_is_refused(tmp_path):
    from rfid_table.config.checker import MAX_FILE_BYTES  # noqa: PLC0415

    path = write(tmp_path, SIXMAX + ("#" * 99 + "\n") * (MAX_FILE_BYTES // 100 + 1))
    result = check_config_bounded(path)
    assert result.returncode == 78, result.stderr
    assert f"{path}: cannot read the file: larger than {MAX_FILE_BYTES:,} bytes" in result.stderr


@pytest.mark.parametrize("key", ["tls_ca_file", "tls_cert_file"])
def test_a_fifo_as_a_tls_file_is_refused_without_waiting_for_a_writer(tmp_path, key):
    fifo = tmp_path / "ca.pem"
    os.mkfifo(fifo)
    path = write(tmp_path, SIXMAX.replace("[mqtt]\n", f'[mqtt]\ntls = true\n{key} = "ca.pem"\n'))
    result = check_config_bounded(path)
    assert result.returncode == 78, result.stderr
    assert f"mqtt.{key}: {fifo} is not a regular file (a FIFO)" in result.stderr


def test_the_configuration_itself_as_a_fifo_is_refused(tmp_path):
    fifo = tmp_path / "table.toml"
    os.mkfifo(fifo)
    result = check_config_bounded(fifo)
    assert result.returncode == 78, result.stderr
    assert f"{fifo}: cannot read the file: not a regular file (a FIFO)" in result.stderr
def test_check_config_on_a_chip_registry_says_what_it_is_and_how_a_table_checks_it(tmp_path):
    done = rfid_table("check-config", str(Path(__file__).resolve().parents[1] / "config" / "chips-demo.toml"))
    assert done.returncode == 0, done.stderr
    assert "OK — a chip registry (not a table configuration): set(s) demo (960 chips)" in done.stdout
    assert "[chips] registry = \"chips-demo.toml\"" in done.stdout and "check-config TABLE.toml" in done.stdout
    broken = tmp_path / "chips.toml"
    broken.write_text('[sets.main]\nE0040150D1000001 = 25\nE0040150D1000001 = 5\n'.replace(
        "E0040150D1000001 = 5", "e0040150d1000001 = 5"))
    done = rfid_table("check-config", str(broken))
    assert done.returncode == 78
    assert "a chip registry (not a table configuration), with 1 problem" in done.stderr
    assert f"{broken}:3:" in done.stderr and "duplicate UID" in done.stderr
    assert "missing [table]" not in done.stderr and "missing table [table]" not in done.stderr


# ---- a PN5180 reader on the Pi's SPI bus, ISO 14443A tags ------------------------------------------------------------

PI = (CONFIG / "table-pi-pn5180.toml").read_text(encoding="utf-8")
SHAPES = "expected 16 hex digits starting E0 (ISO 15693) or 14 hex digits (ISO 14443A, 7 bytes)"


def pi_edited(old: str, new: str) -> str:
    assert PI.count(old) == 1, old
    return PI.replace(old, new)


def test_the_pi_example_holds_its_wiring_and_each_antennas_dwell():
    reader = load_config(CONFIG / "table-pi-pn5180.toml").readers["main"]
    assert reader.backend == "pn5180" and reader.cycle_s == 0.15
    link = reader.link
    assert (link["spi_bus"], link["spi_hz"], link["agc"]) == (0, 7_000_000, [100, 700, 950])
    assert link["frontends"] == [
        {"cs": 0, "busy": 25, "rst": 24, "select": [5, 6, 12], "release": 13, "antennas": 7},
        {"cs": 1, "busy": 23, "rst": 24, "select": [16, 20, 21], "release": 26, "antennas": 6}]
    assert link["dwell_ms"] == [25] * 12 + [400]  # the muck, where cards pile up, dwells long enough for a stack
    assert link["standards"] == ["iso15693"] * 13


@pytest.mark.parametrize("old, new, key, at, expected", [
    case("a line on the SPI bus", "busy = 25", "busy = 10", "readers.main.frontends.1.busy", "busy = 10",
         "BCM 10 is already used by reader 'main' (SPI0 MOSI) (expected another pin)"),
    case("a pin used twice", "release = 26", "release = 13  # again", "readers.main.frontends.2.release", "# again",
         "BCM 13 is already used by reader 'main' (front end 1's switch release) (expected another pin)"),
    case("a physical pin number", "busy = 23", "busy = 31", "readers.main.frontends.2.busy", "busy = 31",
         "BCM 31 is not a GPIO of the 40-pin header (expected a BCM GPIO number from 2 to 27; physical pin 31 is "
         "BCM 6 — this map uses BCM numbers)"),
    case("both chip selects", "cs = 1  ", "cs = 1\nnss = 22  ", "readers.main.frontends.2", "# antennas 8-13",
         "give either cs (the bus's chip select line: 0 for CE0, 1 for CE1) or nss (a GPIO as the chip select), "
         "not both"),
    case("no such chip select", "cs = 1  ", "cs = 2  ", "readers.main.frontends.2.cs", "cs = 2",
         "expected a chip select line of SPI0: 0 (CE0, BCM 8), 1 (CE1, BCM 7), got 2"),
    case("antennas that do not add up", "antennas = 6\n", "antennas = 5\n", "readers.main.antennas",
         "antennas = 13", "13 antennas, but the front ends have 12 (7 + 5)"),
    case("more antennas than select lines switch", "select = [16, 20, 21]", "select = [16, 20]",
         "readers.main.frontends.2.antennas", "antennas = 6\n", "expected antennas from 1 to 4 (2 select lines), "
         "got 6"),
    case("a clock the PN5180 cannot take", "spi_hz = 7000000", "spi_hz = 10000000", "readers.main.spi_hz",
         "spi_hz =", "expected an SPI clock from 100000 to 7000000 Hz (the PN5180 takes at most 7 MHz), got 10000000"),
    case("an unknown standard", 'standard = "iso15693"', 'standard = "felica"', "readers.main.standard",
         "felica", "expected iso15693 (ISO 15693 tags, UIDs starting E0) or iso14443a (ISO 14443A: NTAG, MIFARE "
         "Ultralight), got 'felica'"),
    case("a standard for an antenna the reader lacks", "# antenna_standards = { 13 = \"iso14443a\" }",
         "antenna_standards = { 14 = \"iso14443a\" }", "readers.main.antenna_standards.14", "antenna_standards =",
         "expected an antenna number from 1 to 13"),
    case("a front end's key misspelt", "busy = 23", "busy = 23\nbusyy = 4", "readers.main.frontends.2.busyy",
         "busyy", "unknown key (expected one of: cs, nss, busy, rst, select, release, antennas)"),
    case("an ISO 14443A deck on ISO 15693 antennas", 'active_deck = "A"', 'active_deck = "B"',
         "readers.main.standard", 'standard = "iso15693"',
         "antennas 1-13 read ISO 15693, but the active deck's cards carry ISO 14443A tags: they would never be read "
         "(expected standard = \"iso14443a\", or antenna_standards for those antennas)"),
    case("a 4-byte ISO 14443A UID", "04A1B2015C6D80 = ", "04A1B201 = ", "decks.B.04A1B201", "04A1B201 =",
         "a 4-byte ISO 14443A UID, which does not name one tag for good (a random number on many tags, not unique "
         "on MIFARE Classic): use tags with 7-byte UIDs (NTAG, MIFARE Ultralight) or ISO 15693 tags"),
    case("16 hex digits not starting E0", "04A1B2025C6D80 = ", "04A1B2025C6D8000 = ", "decks.B.04A1B2025C6D8000",
         "04A1B2025C6D8000 =", f"not a tag UID: 16 hex digits, but an ISO 15693 UID starts E0 ({SHAPES})"),
    case("the cascade tag as a UID's fourth byte", "04A1B2035C6D80 = ", "04A1B2885C6D80 = ",
         "decks.B.04A1B2885C6D80", "04A1B2885C6D80 =", "not a tag UID: 88 is ISO 14443A's cascade tag, never the "
         f"first or fourth byte of a 7-byte UID ({SHAPES})"),
    case("10 bytes", "04A1B2045C6D80 = ", "04A1B2045C6D80112233 = ", "decks.B.04A1B2045C6D80112233",
         "04A1B2045C6D80112233 =", f"not a tag UID: 20 hex digits ({SHAPES})"),
])
def test_each_mistake_in_a_pi_reader_or_a_uid_is_reported_with_key_and_line(tmp_path, capsys, old, new, key, at,
                                                                             expected):
    text = pi_edited(old, new)
    path = write(tmp_path, text)
    assert check_config_fails(path, capsys) == [
        "bad configuration (1 problem):",
        f"  {path}:{line_of(text, at)}: {key}: {expected}",
    ]


def test_an_iso_14443a_deck_is_accepted_where_its_antennas_read_iso_14443a(tmp_path, capsys):
    text = pi_edited('active_deck = "A"', 'active_deck = "B"').replace('standard = "iso15693"',
                                                                        'standard = "iso14443a"')
    config = load_config(write(tmp_path, text))
    assert len(config.decks["B"]) == 52 and all(len(uid) == 14 for uid in config.decks["B"])
    assert config.readers["main"].link["standards"] == ["iso14443a"] * 13
    # the muck's antenna left on ISO 15693: the deck's cards would never be read there
    muck = text.replace('# antenna_standards = { 13 = "iso14443a" }', 'antenna_standards = { 13 = "iso15693" }')
    path, line = write(tmp_path, muck), line_of(muck, 'standard = "iso14443a"    #')
    assert check_config_fails(path, capsys)[1:] == [
        f"  {path}:{line}: readers.main.standard: antenna 13 reads ISO 15693, "
        "but the active deck's cards carry ISO 14443A tags: they would never be read (expected standard = "
        "\"iso14443a\", or antenna_standards for those antennas)"]


def test_a_pi_readers_keys_on_a_reader_of_another_backend_are_refused(tmp_path, capsys):
    text = pi_edited('backend = "pn5180"', 'backend = "sim"')
    path = write(tmp_path, text)
    err = check_config_fails(path, capsys)
    for key in ("spi_bus", "spi_hz", "frontends"):
        assert f"  {path}:{line_of(text, key + ' =') if key != 'frontends' else line_of(text, '# antennas 1-7')}: " \
               f"readers.main.{key}: not used by backend 'sim'" in err


def test_a_deck_of_both_standards_is_refused_on_its_active_deck_line(tmp_path, capsys):
    text = pi_edited('04A1B2015C6D80 = "2s"', 'E0040150FF000001 = "2s"').replace('active_deck = "A"',
                                                                                'active_deck = "B"')
    path = write(tmp_path, text)
    assert check_config_fails(path, capsys)[1:] == [
        f"  {path}:{line_of(text, 'active_deck = ' + chr(34))}: table.active_deck: the active deck's cards carry "
        "both ISO 15693 "
        "and ISO 14443A tags, but an antenna reads one standard: some of them would not be read where they lie "
        "(expected tags of one standard)"]


def test_a_console_pin_on_the_pi_readers_lines_is_refused(tmp_path, capsys):
    text = PI.replace("[zones]", "[gpio]\nbackend = \"rpi\"\n[gpio.buttons]\nnew_hand = { pin = 25 }\n"
                                 "misdeal = { pin = 8 }\n\n[zones]")
    path = write(tmp_path, text)
    err = check_config_fails(path, capsys)
    assert f"  {path}:{line_of(text, 'new_hand =')}: gpio.buttons.new_hand.pin: BCM 25 is used by reader 'main' " \
           "(front end 1's BUSY) (expected another pin)" in err
    assert f"  {path}:{line_of(text, 'misdeal =')}: gpio.buttons.misdeal.pin: BCM 8 is used by reader 'main' " \
           "(SPI0 CE0) (expected another pin)" in err
