"""`rfid-table register-deck` and `register-chips`: tags read through the real reader link (the firmware
emulator on a pseudo-terminal, opened by the tool with pyserial like hardware), cards placed on the field by
the test as a technician would; the chip registry's loader and writer; the configuration file kept byte for
byte around the deck."""

import queue
import re
import signal
import subprocess
import sys
import threading
import time
import tomllib
from pathlib import Path

import pytest

from conftest import TABLE_6
from controller.cards import FULL_DECK
from rfid_table.cli import main
from rfid_table.config.table import ConfigError, load_config
from rfid_table.ops.register_config import Abort, deck_section, place_deck, plan_deck
from rfid_table.ops.register_sessions import AntennaWatch, DeckSession
from rfid_table.config.registry import ChipRegistry, load_chip_registry, read_chip_list, render_chip_registry
from sim.field import TableField
from sim.firmware import FirmwareEmulator

COMMAND = Path(sys.executable).with_name("rfid-table")
RFID_TABLE = [str(COMMAND)] if COMMAND.exists() else [sys.executable, "-m", "rfid_table.cli"]
SIXMAX = TABLE_6.read_text(encoding="utf-8")
DECK_A = {card: uid for uid, card in load_config(TABLE_6).decks["A"].items()}
NEW = [f"E0040150D100{i:04X}" for i in range(1, 60)]  # tags of the deck being registered
REGISTER = ["--reader", "main", "--antenna", "12"]  # an antenna no zone of the 6-max table uses


def line_of(text: str, fragment: str) -> int:
    assert text.count(fragment) == 1, fragment
    return text[: text.index(fragment)].count("\n") + 1


@pytest.fixture
def reader(tmp_path):
    """The reader: the emulator on a pty, on the wall clock, 10 ms cycles; the registration antenna is
    antenna 12."""
    zones = dict(load_config(TABLE_6).zones, register=("main", 12))
    field = TableField(zones)
    emulator = FirmwareEmulator(field, reader="main", antenna_count=12, cycle_s=0.01,
                                link_path=tmp_path / "reader-main")
    emulator.start()
    yield field, emulator
    emulator.close()


def keep_off(reader, seconds: float = 0.4) -> None:
    """Leave the antenna empty of what was taken off for ``seconds`` of cycles the reader really ran: on a busy
    machine a bare sleep may pass without a single inventory, and the tool would never see the tag gone."""
    _field, emulator = reader
    started, cycles = time.monotonic(), emulator.stats.cycles
    deadline = started + 10
    while time.monotonic() < deadline:
        if time.monotonic() - started >= seconds and emulator.stats.cycles - cycles >= seconds / 0.01 / 2:
            return
        time.sleep(0.01)
    raise AssertionError("the reader ran no inventory for 10 s")


@pytest.fixture
def table(tmp_path, reader):
    """The 6-max table on the serial reader and the field the test places tags on."""
    field, emulator = reader
    text = SIXMAX.replace('backend = "sim"', f'backend = "serial"\nport = "{emulator.path}"')
    for absent in ("absent_after_ms = 600", "absent_after_ms = 1000"):  # cards, chips: taken off, gone sooner
        text = text.replace(absent, "absent_after_ms = 200")
    path = tmp_path / "table.toml"
    path.write_text(text, encoding="utf-8")
    return field, path


def as_from_a_terminal() -> None:
    """In the command's process before it runs: Ctrl-C (SIGINT) at its default, as a shell starts a command. A
    child inherits an ignored or blocked signal, and a full run's worker had SIGINT so after other tests: the
    command then never saw the test's Ctrl-C."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


class Tool:
    """The command in a subprocess: its output lines as they come, its stdin to type into."""

    def __init__(self, *args: str):
        self.process = subprocess.Popen(RFID_TABLE + list(args), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True, preexec_fn=as_from_a_terminal)
        self.lines: list[str] = []
        self._queue: queue.Queue = queue.Queue()
        self._seen = 0
        self._stderr: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        # stderr read as it comes too: a command that logs more than a pipe holds would otherwise block on it
        self._stderr_done = threading.Thread(target=lambda: self._stderr.extend(self.process.stderr), daemon=True)
        self._stderr_done.start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def expect(self, pattern: str, timeout: float = 5.0) -> re.Match:
        """Wait for the next output line matching ``pattern`` (earlier lines are skipped)."""
        deadline = time.monotonic() + timeout
        while True:
            while self._seen < len(self.lines):
                match = re.search(pattern, self.lines[self._seen])
                self._seen += 1
                if match:
                    return match
            try:
                line = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                line = None
            if line is None:
                raise AssertionError(f"no line matching {pattern!r}; output:\n" + "\n".join(self.lines)
                                     + "\nstderr:\n" + (self.stderr() if self.process.poll() is not None else ""))
            self.lines.append(line)

    def type(self, text: str) -> None:
        self.process.stdin.write(text + "\n")
        self.process.stdin.flush()

    def interrupt(self) -> int:
        self.process.send_signal(signal.SIGINT)
        return self.wait()

    def wait(self) -> int:
        try:
            return self.process.wait(timeout=30)  # a bound, not a pace: two busy cores start Python slowly
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise AssertionError("the command did not end; its stderr:\n" + self.stderr()[-3000:]) from None

    def stderr(self) -> str:
        self._stderr_done.join(10)
        return "".join(self._stderr)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def tools():
    started: list[Tool] = []

    def start(*args) -> Tool:
        started.append(Tool(*(str(a) for a in args)))
        return started[-1]

    yield start
    for tool in started:
        tool.close()


def place_card(field, tool, n: int, uid: str) -> None:
    field.place(uid, "register")
    card = FULL_DECK[n - 1]
    tool.expect(rf"^\s*{n}/52  {card} = {uid}   ")


# ---- register-deck over the reader link ------------------------------------------------------------------------


def test_a_deck_placed_card_by_card_is_written_to_the_configuration_and_validates(table, tools):
    field, path = table
    before = path.read_bytes()
    tool = tools("register-deck", path, "--deck", "B", *REGISTER)
    tool.expect(r"^\s*0/52  place 2s$")
    tool.expect(r"reader main: up — reader EMU-0001")
    for n, uid in enumerate(NEW[:52], start=1):
        place_card(field, tool, n, uid)  # cards pile up on the antenna, as on a real pad
    assert tool.wait() == 0, tool.stderr()
    first_line = len(before.split(b"\n")) + 1  # after a blank line
    tool.expect(rf"wrote deck B \(52 cards\) to {re.escape(str(path))}: \[decks\.B\] appended at line "
                rf"{first_line}$")
    tool.expect(r": OK — table 'sixmax-1', .* 2 deck\(s\), active deck 'A'$")

    after = path.read_bytes()
    assert after.startswith(before)  # the rest of the file, byte for byte
    config = load_config(path)
    assert config.decks["B"] == {uid: card for uid, card in zip(NEW, FULL_DECK)}
    assert config.decks["A"] == load_config(TABLE_6).decks["A"]
    assert [p.name for p in path.parent.iterdir() if p.name.startswith(".")] == []  # no temporary file left


def test_a_tag_registered_already_is_refused_and_the_registration_goes_on(table, reader, tools):
    field, path = table
    before = path.read_bytes()
    tool = tools("register-deck", path, "--deck", "B", *REGISTER)
    place_card(field, tool, 1, NEW[0])
    place_card(field, tool, 2, NEW[1])

    field.place(DECK_A["Kd"], "register")  # a card of deck A
    tool.expect(rf"refused: tag {DECK_A['Kd']} is registered already, as card Kd of deck 'A': take it off\. Place 4s$")
    field.remove(DECK_A["Kd"])
    field.remove(NEW[0])  # 2s of this deck, picked up and put down again
    keep_off(reader)
    field.place(NEW[0], "register")
    tool.expect(rf"tag {NEW[0]} is 2s of this deck already: leave it there, and place 4s$")

    place_card(field, tool, 3, NEW[2])  # the next new tag is the card announced
    tool.type("undo")  # and a mistake taken back
    tool.expect(rf"^\s*2/52  undone: 4s \(tag {NEW[2]}\); take that card off the antenna, then place 4s$")
    field.remove(NEW[2])
    place_card(field, tool, 3, NEW[3])
    assert tool.interrupt() == 130
    assert "aborted: nothing written" in tool.stderr()
    assert path.read_bytes() == before


def test_a_stack_of_new_cards_is_refused_until_it_is_taken_off(table, tools):
    field, path = table
    before = path.read_bytes()
    tool = tools("register-deck", path, "--deck", "B", *REGISTER)
    place_card(field, tool, 1, NEW[0])
    stack = NEW[1:6]
    for uid in stack:
        field.place(uid, "register")
    tool.expect(r"refused: 5 new tags at once\. Cards are registered one at a time, in order: take them all off "
                r"the antenna, then place 3s alone$")
    for uid in stack:
        field.remove(uid)
    tool.expect(r"the refused tags are off the antenna: place 3s$")
    place_card(field, tool, 2, stack[3])  # one of them, alone now
    taken = [m.group(1) for line in tool.lines if (m := re.search(r"^\s*\d+/52  \w\w = (\w+)", line))]
    assert taken == [NEW[0], stack[3]]
    assert tool.interrupt() == 130
    assert path.read_bytes() == before


def test_ctrl_c_writes_nothing(table, tools):
    field, path = table
    before = path.read_bytes()
    tool = tools("register-deck", path, "--deck", "A", "--replace", *REGISTER)
    for n, uid in enumerate(NEW[:3], start=1):
        place_card(field, tool, n, uid)
    assert tool.interrupt() == 130
    assert path.read_bytes() == before
    assert sorted(p.name for p in path.parent.iterdir()) == ["reader-main", "table.toml"]


# ---- register-chips over the reader link -----------------------------------------------------------------------


def test_chips_are_registered_by_batch_into_a_registry_the_loader_reads_back(table, reader, tools, tmp_path):
    field, path = table
    registry = tmp_path / "chips.toml"
    chips_25 = [f"E0040150E100{i:04X}" for i in range(1, 6)]
    chips_100 = [f"E0040150E200{i:04X}" for i in range(1, 3)]

    tool = tools("register-chips", registry, "--set", "main", "--denomination", 25, "--count", 5, "--config",
                 path, *REGISTER)
    tool.expect(r"^place 25-chips: 5 to register$")
    field.place(DECK_A["As"], "register")
    tool.expect(rf"refused: tag {DECK_A['As']} is registered already, as card As of deck 'A': take it off\.$")
    field.remove(DECK_A["As"])
    for uid in chips_25:  # a stack at once: fine for chips
        field.place(uid, "register")
    tool.expect(r"^\s*5/5  E0040150E100000\d = 25 +25 × 5 = 125$")
    assert tool.wait() == 0, tool.stderr()
    tool.expect(rf"{re.escape(str(registry))}: OK — 1 set\(s\), 5 chips$")
    assert load_chip_registry(registry).sets == {"main": {uid: 25 for uid in chips_25}}

    # A second batch, with the denomination typed while the tool runs and 'done' to finish.
    tool = tools("register-chips", registry, "--set", "main", "--denomination", 25, "--config", path, *REGISTER)
    tool.expect(r"^place 25-chips$")
    tool.type("100")
    tool.expect(r"now registering 100-chips$")
    for uid in chips_100:
        field.place(uid, "register")
    tool.expect(r"^\s*2  E0040150E200000\d = 100 +100 × 2 = 200$")
    tool.type("done")
    assert tool.wait() == 0, tool.stderr()
    loaded = load_chip_registry(registry, decks=load_config(path).decks)
    assert loaded.sets["main"] == {**{uid: 25 for uid in chips_25}, **{uid: 100 for uid in chips_100}}
    assert loaded.lookup(chips_100[0].lower()) == ("main", 100)
    assert loaded.lookup(chips_25[4]) == ("main", 25)
    assert loaded.lookup(DECK_A["As"]) is None
    assert loaded.totals("main") == {25: 5, 100: 2}
    assert "# 25: 5 chips" in registry.read_text() and "# 100: 2 chips" in registry.read_text()

    # A third run: the chips registered lie on the antenna still, and are refused (in one line: they are many).
    tool = tools("register-chips", registry, "--set", "other", "--denomination", 5, "--config", path, *REGISTER)
    tool.expect(r"refused: 7 tags registered already \(7 chips of set 'main'\): take them off\.$")
    for uid in chips_25 + chips_100[1:]:
        field.remove(uid)
    keep_off(reader)
    field.place(DECK_A["3c"], "register")
    field.remove(chips_100[0])
    keep_off(reader)
    field.place(chips_100[0], "register")
    tool.expect(rf"refused: tag {DECK_A['3c']} is registered already, as card 3c of deck 'A': take it off\.$")
    tool.expect(rf"refused: tag {chips_100[0]} is registered already, as a 100 chip of set 'main': take it off\.$")
    assert tool.interrupt() == 130
    assert load_chip_registry(registry).sets == loaded.sets


# ---- the simulated backend ---------------------------------------------------------------------------------


def test_simulate_registers_a_deck_and_chips_on_a_sim_table(tmp_path, capsys):
    path = tmp_path / "table.toml"
    path.write_text(SIXMAX, encoding="utf-8")
    assert main(["register-deck", str(path), "--deck", "B", "--zone", "muck"]) == 2
    assert "add --simulate" in capsys.readouterr().err
    assert main(["register-deck", str(path), "--deck", "B", "--zone", "muck", "--simulate", "--pace", "0",
                 "--seed", "4"]) == 0
    out = capsys.readouterr().out
    assert "52/52  Ac = " in out and "[decks.B] appended" in out
    assert path.read_text(encoding="utf-8").startswith(SIXMAX)
    assert len(load_config(path).decks["B"]) == 52
    assert main(["register-deck", str(path), "--deck", "B", "--zone", "muck", "--simulate"]) == 78
    assert "deck 'B' is registered already" in capsys.readouterr().err

    registry = tmp_path / "chips.toml"
    assert main(["register-chips", str(registry), "--set", "main", "--denomination", "25", "--count", "30",
                 "--config", str(path), "--antenna", "12", "--simulate", "--pace", "0"]) == 0
    loaded = load_chip_registry(registry, decks=load_config(path).decks)
    assert list(loaded.sets) == ["main"] and len(loaded.sets["main"]) == 30


# ---- the configuration file ------------------------------------------------------------------------------------


def test_replacing_a_deck_keeps_the_rest_of_the_file_byte_for_byte():
    deck_b = {card: uid for card, uid in zip(FULL_DECK, NEW)}
    text = SIXMAX.replace("\n", "\r\n") + "\r\n# Deck B: bought in March\r\n[decks.B]\r\n" + "".join(
        f'{uid} = "{card}"\r\n' for card, uid in deck_b.items())
    new_a = {card: uid.replace("D1", "D2") for card, uid in deck_b.items()}
    placement = place_deck(text, "A", deck_section("A", new_a, note="note"), replace=True)  # in the file's line ends
    header = line_of(text, "[decks.A]")
    start = text.index("[decks.A]")
    end = text.index('"Ac"\r\n') + len('"Ac"\r\n')
    assert placement.text == text[:start] + deck_section("A", new_a, "\r\n", "note") + text[end:]
    assert placement.first_line == header and placement.replaced == (header, header + 53)
    assert "\r\n# Deck B: bought in March\r\n[decks.B]" in placement.text  # it belongs to deck B
    with pytest.raises(Abort, match=r"deck 'B' is registered already \(line \d+\): give --replace"):
        place_deck(text, "B", deck_section("B", new_a), replace=False)
    appended = place_deck("[table]\nid = 'x'", "C", deck_section("C", new_a), replace=False)
    assert appended.text == "[table]\nid = 'x'\n\n" + deck_section("C", new_a) and appended.first_line == 4
    with pytest.raises(Abort, match="not written as a \\[decks.D\\] table"):
        place_deck('[decks]\nD.E0040150D1000001 = "2s"\n', "D", deck_section("D", new_a), replace=True)


def test_a_new_table_without_decks_can_register_its_first_one_and_problems_keep_their_lines(tmp_path):
    path = tmp_path / "table.toml"
    path.write_text(SIXMAX[: SIXMAX.index("[decks.A]")], encoding="utf-8")
    with pytest.raises(ConfigError):
        load_config(path)  # no deck yet
    plan = plan_deck(str(path), "A", replace=False)  # valid once the deck is there
    assert plan.known == {} and plan.config.zones["muck"] == ("main", 9)

    # A problem after the section being replaced is reported at its line in the file as it is.
    text = SIXMAX + '\n[decks.B]\nE0040150D1000001 = "2x"\n'
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as exc:
        plan_deck(str(path), "A", replace=True)
    line = line_of(text, '= "2x"')
    assert [p.render(exc.value.path) for p in exc.value.problems] == [
        f"{path}:{line}: decks.B.E0040150D1000001: '2x' is not a card: expected a rank of "
        "23456789TJQKA and a suit of shdc, like 'As' or 'Td'"]


# ---- the chip registry ---------------------------------------------------------------------------------------


def test_a_tag_in_two_sets_and_other_registry_problems_keep_their_lines(tmp_path):
    text = ("[sets.main]\nE0040150D1000001 = 25\nE0040150D1000002 = 0\nE0040150D100ZZ03 = 25\n"
            "E0040150D1000004 = \"100\"\ne0040150d1000001 = 5\nE0040150C3000001 = 25\n"
            "[sets.old-series]\nE0040150D1000001 = 100\n[limits]\nmax = 1\n")
    path = tmp_path / "chips.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as exc:
        load_chip_registry(path, decks={"A": {"E0040150C3000001": "2s"}})
    assert [p.render(str(path)) for p in exc.value.problems] == [
        f"{path}:10: limits: unknown key (expected: sets, as [sets.ID] tables of tag UID = denomination)",
        f"{path}:3: sets.main.E0040150D1000002: expected a positive denomination up to 1,000,000,000, got 0",
        f"{path}:4: sets.main.E0040150D100ZZ03: not a tag UID (expected 16 hex digits starting E0 (ISO 15693) or "
        "14 hex digits (ISO 14443A, 7 bytes))",
        f"{path}:5: sets.main.E0040150D1000004: expected a denomination (a whole number of chips' worth, like 25), "
        "got str '100'",
        f"{path}:6: sets.main.e0040150d1000001: duplicate UID: tag E0040150D1000001 is already registered in this "
        "set (line 2)",
        f"{path}:7: sets.main.E0040150C3000001: tag E0040150C3000001 is a card: 2s of deck 'A' in the table "
        "configuration",
        f"{path}:9: sets.old-series.E0040150D1000001: duplicate UID: tag E0040150D1000001 is already registered in "
        "set 'main' (line 2)",
    ]
    path.write_text("[sets.main]\nE0040150D1000001 = 25\nE0040150D1000001 = 50\n", encoding="utf-8")
    with pytest.raises(ConfigError) as exc:
        load_chip_registry(path)
    (problem,) = exc.value.problems
    assert problem.line == 3 and "a tag UID listed twice?" in problem.message
    path.write_text("# nothing yet\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="missing: at least one \\[sets.ID\\] table"):
        load_chip_registry(path)


def test_the_written_registry_reads_back_the_same():
    registry = ChipRegistry({"main": {"E0040150D1000002": 100, "E0040150D1000001": 25},
                             "old-series": {"E0040150D2000001": 25}})
    text = render_chip_registry(registry)
    assert text.splitlines()[0] == "# Chip registry: tag UID = denomination, per chip set"
    assert text.index("[sets.main]") < text.index("E0040150D1000001 = 25") < text.index("E0040150D1000002 = 100") \
        < text.index("[sets.old-series]")
    assert tomllib.loads(text)["sets"] == registry.sets
    with pytest.raises(ValueError, match="already registered: E0040150D2000001"):
        registry.add("main", {"e0040150d2000001": 5})


def test_a_manufacturers_list_is_imported_whole_or_not_at_all(tmp_path, capsys):
    path = tmp_path / "table.toml"
    path.write_text(SIXMAX, encoding="utf-8")
    registry = tmp_path / "chips.toml"
    listing = tmp_path / "chips-25.csv"
    listing.write_text("\ufeffTag UID;Value\nE0:04:01:50:F1:00:00:01;25\nE0040150F1000002;\n\n"
                       "# box 2\nE0040150F1000003;500\n", encoding="utf-8")
    assert read_chip_list(listing, 25) == (
        {"E0040150F1000001": 25, "E0040150F1000002": 25, "E0040150F1000003": 500},
        {"E0040150F1000001": 2, "E0040150F1000002": 3, "E0040150F1000003": 6})
    assert main(["register-chips", str(registry), "--set", "main", "--from-file", str(listing),
                 "--denomination", "25", "--config", str(path)]) == 0
    assert load_chip_registry(registry).sets == {"main": {"E0040150F1000001": 25, "E0040150F1000002": 25,
                                                          "E0040150F1000003": 500}}
    capsys.readouterr()

    before = registry.read_bytes()
    again = tmp_path / "more.csv"
    again.write_text(f"E0040150F1000009,25\nE0040150F1000003,25\n{DECK_A['2s']},5\nE00401,25\n"
                     "E0040150F100000A,-5\nE0040150F1000009,25\nE0040150F100000B\n", encoding="utf-8")
    assert main(["register-chips", str(registry), "--set", "new", "--from-file", str(again), "--config",
                 str(path)]) == 78
    assert capsys.readouterr().err.splitlines() == [
        "bad chip list (6 problems):",
        f"  {again}:4: 'E00401' is not a tag UID: 6 hex digits (expected 16 hex digits starting E0 (ISO 15693) or "
        "14 hex digits (ISO 14443A, 7 bytes))",
        f"  {again}:5: E0040150F100000A: expected a positive denomination up to 1,000,000,000, got -5",
        f"  {again}:6: E0040150F1000009: duplicate UID: listed already (line 1)",
        f"  {again}:7: E0040150F100000B: no denomination (add the column, or give --denomination)",
        f"  {again}:2: E0040150F1000003: registered already: a 500 chip of set 'main' in {registry}",
        f"  {again}:3: {DECK_A['2s']}: a card: 2s of deck 'A' in {path}",
    ]
    assert registry.read_bytes() == before


# ---- the session's rules, on synthetic cycles --------------------------------------------------------------


def test_a_stack_read_in_turns_is_refused_whole_and_a_flickering_card_is_still_taken():
    lines: list[str] = []
    session = DeckSession("B", {}, AntennaWatch(present_after_cycles=2, absent_after_s=0.3), lines.append)
    t, cycle = 0.0, 0

    def run(cycles: int, reads) -> None:
        nonlocal t, cycle
        for _ in range(cycles):
            cycle += 1
            t += 0.05
            session.feed(cycle, t, reads(cycle) if callable(reads) else reads)

    pile = [NEW[0]]
    run(5, pile)
    assert session.uid_of == {"2s": NEW[0]}
    stack = NEW[1:6]  # five new cards, the antenna reads two of them per cycle
    run(12, lambda c: pile + [stack[(2 * c + i) % 5] for i in range(2)])
    assert session.uid_of == {"2s": NEW[0]} and session.stack == set(stack)
    assert [line for line in lines if "refused" in line or "one more" in line][0].endswith(
        "place 3s alone") and sum("refused:" in line for line in lines) == 1
    run(8, pile)  # taken off
    assert lines[-1].endswith("the refused tags are off the antenna: place 3s")
    # A card read in two cycles of three arrives anyway, and is the card announced.
    run(12, lambda c: pile + ([NEW[7]] if c % 3 else []))
    assert session.uid_of == {"2s": NEW[0], "3s": NEW[7]}
    assert lines[-1] == f" 2/52  3s = {NEW[7]}   place 4s"


# ---- register-deck from the deck maker's list ------------------------------------------------------------------


def makers_list(path: Path, uids: list[str]) -> Path:
    """The list a deck maker ships: a header, ';' between columns, UIDs printed with ':' between the bytes."""
    rows = ["Tag UID;Card"] + [f"{':'.join(uid[i:i + 2] for i in range(0, 16, 2))};{card}"
                               for uid, card in zip(uids, FULL_DECK)]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_a_deck_placed_as_a_stack_is_checked_against_the_makers_list(table, tools, tmp_path):
    field, path = table
    listing = makers_list(tmp_path / "deck-B.csv", NEW[:52])
    tool = tools("register-deck", path, "--deck", "B", "--from-file", listing, *REGISTER)
    tool.expect(r"^\s*0/52  place the deck on the antenna")
    dead = NEW[51 - 7]  # one card's tag does not answer: 7c (index 44 of the deck's order)
    field.place(NEW[55], "register")  # a card of some other deck lies there too
    for uid in NEW[:52]:
        if uid != dead:
            field.place(uid, "register")
    tool.expect(rf"tag {NEW[55]} is not on {re.escape(str(listing))}: a card of another deck\? Take it off$")
    tool.expect(r"^51/52  read ", timeout=10)
    tool.expect(r"still unread \(1\): 7c — spread the stack or place those cards alone", timeout=10)
    field.place(dead, "register")  # the technician finds the card and lays it alone on the antenna
    tool.expect(r"^52/52  read 7c   the deck is complete$")
    assert tool.wait() == 0, tool.stderr()
    tool.expect(r"wrote deck B \(52 cards\)")
    assert load_config(path).decks["B"] == {uid: card for uid, card in zip(NEW, FULL_DECK)}


def test_a_makers_list_with_mistakes_is_refused_with_its_lines_before_any_card_is_read(tmp_path, capsys):
    path = tmp_path / "table.toml"
    path.write_text(SIXMAX, encoding="utf-8")
    uids = NEW[:52]
    listing = makers_list(tmp_path / "deck-B.csv", uids)
    lines = listing.read_text().splitlines()
    lines[3] = lines[3].replace("4s", "2s")  # line 4: 4s printed as 2s: 2s twice, 4s missing
    lines[10] = "E004015Z;9s"  # line 11: not a UID
    a_card, a_uid = next(iter(DECK_A.items()))
    lines[20] = f"{a_uid};{FULL_DECK[19]}"  # line 21: the tag of a card of deck A
    listing.write_text("\n".join(lines) + "\n", encoding="utf-8")
    before = path.read_bytes()
    assert main(["register-deck", str(path), "--deck", "B", "--from-file", str(listing), "--zone", "muck",
                 "--simulate", "--pace", "0"]) == 78
    err = capsys.readouterr().err
    assert f"{listing}:4: {uids[2]}: duplicate card: 2s is listed already (line 2)" in err
    assert f"{listing}:11: 'E004015Z' is not a tag UID" in err
    assert path.read_bytes() == before
    lines[3], lines[10] = lines[3].replace(";2s", ";4s"), f"{uids[9]};{FULL_DECK[9]}"  # fixed; the deck A tag stays
    listing.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["register-deck", str(path), "--deck", "B", "--from-file", str(listing), "--zone", "muck",
                 "--simulate", "--pace", "0"]) == 78
    assert f"{listing}:21: {a_uid}: registered already, as card {a_card} of deck 'A'" in capsys.readouterr().err
    lines[20] = f"{uids[19]};{FULL_DECK[19]}"
    listing.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["register-deck", str(path), "--deck", "B", "--from-file", str(listing), "--zone", "muck",
                 "--simulate", "--pace", "0", "--seed", "3"]) == 0
    assert load_config(path).decks["B"] == {uid: card for uid, card in zip(uids, FULL_DECK)}


# ---- ISO 14443A decks ------------------------------------------------------------------------------------------------

NTAG = [f"04A1B2{i:02X}5C6D80" for i in range(1, 60)]  # 7-byte ISO 14443A UIDs (04: NXP), as on NTAG cards


def test_an_iso_14443a_deck_is_registered_card_by_card_and_a_4_byte_tag_is_refused(tmp_path, reader, tools):
    field, emulator = reader
    # the registration antenna reads ISO 14443A; the table's own antennas stay on the active deck's ISO 15693
    text = SIXMAX.replace('backend = "sim"', f'backend = "serial"\nport = "{emulator.path}"\n'
                                             'antenna_standards = { 12 = "iso14443a" }')
    text = text.replace("absent_after_ms = 600", "absent_after_ms = 200")
    path = tmp_path / "table.toml"
    path.write_text(text, encoding="utf-8")
    tool = tools("register-deck", path, "--deck", "B", *REGISTER)
    tool.expect(r"^\s*0/52  place 2s$")
    field.place("1A2B3C4D", "register")  # a MIFARE Classic's 4-byte UID: it names no card for good
    tool.expect(r"!  refused: tag 1A2B3C4D is a 4-byte ISO 14443A UID, which does not name one tag for good .*: take "
                r"it off$")
    field.remove("1A2B3C4D")
    for n, uid in enumerate(NTAG[:52], start=1):
        place_card(field, tool, n, uid)
    assert tool.wait() == 0, tool.stderr()
    tool.expect(r": OK — table 'sixmax-1', .* 2 deck\(s\), active deck 'A'$")
    assert load_config(path).decks["B"] == {uid: card for uid, card in zip(NTAG, FULL_DECK)}


def test_a_manufacturers_list_of_an_iso_14443a_deck_is_read_with_its_bytes_apart(tmp_path):
    from rfid_table.config.registry import read_deck_list  # noqa: PLC0415

    rows = ["UID;Card"] + [f"{':'.join(uid[i:i + 2] for i in range(0, 14, 2))};{card}"
                           for uid, card in zip(NTAG, FULL_DECK)]
    listing = tmp_path / "ntag.csv"
    listing.write_text("\n".join(rows) + "\n")
    cards, lines = read_deck_list(listing)
    assert cards == {uid: card for uid, card in zip(NTAG, FULL_DECK)} and lines[NTAG[0]] == 2
    rows[5] = "1A:2B:3C:4D;5s"  # line 6: a 4-byte UID
    listing.write_text("\n".join(rows) + "\n")
    with pytest.raises(ConfigError) as refused:
        read_deck_list(listing)
    assert [p.render(str(listing)) for p in refused.value.problems][0] == (
        f"{listing}:6: '1A:2B:3C:4D' is a 4-byte ISO 14443A UID, which does not name one tag for good (a random "
        "number on many tags, not unique on MIFARE Classic): use tags with 7-byte UIDs (NTAG, MIFARE Ultralight) or "
        "ISO 15693 tags")
