"""Hand histories for trackers: Open Hand History and PokerStars-style text, on the secure feed and exported, and
PHH exported.

A simulated session (``SimulatedTable`` on ``config/table-chips.toml``, six players betting with chips, a journal
on disk) is played once; ``rfid-table export`` then runs on its journal as a user runs it (a subprocess).

Independent checks:
* PokerStars text: pokerkit's PokerStars parser (``HandHistory.from_pokerstars``, a maintained parser that replays
  the text through pokerkit's own state machine) reads every hand back: players, starting stacks and finishing
  stacks must be the table's;
* OHH: the JSON Schema of the published 1.4.6 specification (``schemas/histories/ohh.schema.json``), the OHH
  storage format (one object a line, a blank line between), and the hand's arithmetic (what each player put in,
  less what came back, plus what the pots paid, is how its stack changed);
* PHH: pokerkit's own reader (``HandHistory.loads_all``, the reference implementation of the format) reads every
  hand of the ``.phhs`` file and plays it to the table's finishing stacks;
* the wording of shown hands against the descriptions in published PokerStars hands.

Side pots and all-ins occur in the session (asserted, so a seed that stops producing them fails). Bomb pots and
run-it-twice are not played by the table yet, so no history has them.
"""

from __future__ import annotations

import dataclasses
import json
import random
import re
import sqlite3
import subprocess
import sys
import time
import warnings
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from controller import phh as phhlib
from controller.histories import HandRecord
from controller.ohh import to_ohh
from controller.pokerstars import describe, to_pokerstars
from controller.showdown import award
from rfid_table.config.table import load_config
from rfid_table.service.daemon import StopFlag
from rfid_table.service.journal import Journal
from rfid_table.service.publisher import MqttPublisher
from rfid_table.devtools.simulate import SimOptions, SimulatedTable
from sim.handgen import random_hand

pokerkit = pytest.importorskip("pokerkit")

ROOT = Path(__file__).resolve().parents[1]
TABLE_CHIPS = ROOT / "config" / "table-chips.toml"
OHH_SCHEMA = json.loads((ROOT / "schemas" / "histories" / "ohh.schema.json").read_text())
HANDS, SEED, PLAYERS = 30, 7, 6
COMMAND = Path(sys.executable).with_name("rfid-table")  # the installed command, as a user runs it
RFID_TABLE = [str(COMMAND)] if COMMAND.exists() else [sys.executable, "-m", "rfid_table.cli"]


def session_config(**changes):
    config = load_config(TABLE_CHIPS)
    return dataclasses.replace(config, broadcast_delay_s=0.0, journal_path=None, **changes)


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    """A journaled session of HANDS hands; returns the journal's path and its hands' events by type."""
    path = tmp_path_factory.mktemp("export") / "main-2.journal"
    config = session_config()
    journal = Journal(path, table_id=config.table_id)
    assert journal.open().ok
    table = SimulatedTable(config, SimOptions(hands=HANDS, seed=SEED, speed=0, pace_s=0.5, link="direct",
                                              players=PLAYERS, players_style="random"), None, journal)
    table.pipeline.restore(time.time())
    table.run(StopFlag())
    events = []
    seq = 0
    while batch := journal.events_after(seq, 1000):
        events += batch
        seq = batch[-1].seq
    journal.close()
    return path, events


def export(journal: Path, fmt: str, out: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([*RFID_TABLE, "export", "--journal", str(journal), "--format", fmt, "--out", str(out),
                           *extra], capture_output=True, text=True, timeout=120, cwd=ROOT)


def histories(events) -> list:
    return [e for e in events if e.type == "hand_history"]


def by_hand(events, type_: str) -> dict:
    return {e.hand: e for e in events if e.type == type_}


def pokerstars_hands(text: str) -> list:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pokerkit names its own time-zone field as unexpected
        return list(pokerkit.HandHistory.from_pokerstars(text, error_status=True))


def final_stacks(history) -> dict[str, int]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        state = list(history)[-1]
    return dict(zip(history.players, state.stacks))


# ---- the session: what the table wrote, exported as a user exports it ------------------------------------


def test_the_session_has_side_pots_and_all_ins(session):
    _path, events = session
    showdowns = by_hand(events, "showdown")
    assert len(histories(events)) >= 15
    assert sum(len(showdowns[e.hand].public["pots"]) > 1 for e in histories(events)) >= 3  # side pots
    assert sum(1 for e in events if e.type == "action" and e.public.get("all_in")) >= 10


def test_pokerstars_export_is_read_back_by_pokerkit_with_the_tables_stacks(session, tmp_path):
    path, events = session
    done = export(path, "pokerstars", tmp_path)
    assert done.returncode == 0, done.stderr
    files = list(tmp_path.glob("main-2-*.txt"))
    assert len(files) == 1, files
    text = files[0].read_text(encoding="utf-8")
    assert f"{len(histories(events))} hands as pokerstars, 0 skipped" in done.stdout
    parsed = pokerstars_hands(text)
    assert len(parsed) == len(histories(events))
    showdowns = by_hand(events, "showdown")
    exact = split = 0
    for history, event in zip(parsed, histories(events)):
        table = phhlib.loads(event.secret["phh_complete"])
        names = [f"seat{s}" for s in table["seats"]]
        assert history.players == names, event.hand
        assert list(history.starting_stacks) == table["starting_stacks"], event.hand
        expected = dict(zip(names, table["finishing_stacks"]))
        if final_stacks(history) == expected:
            exact += 1
        else:  # pokerkit gives a split pot's odd chips to one player; the table follows TDA 20-1
            pots = showdowns[event.hand].public["pots"]
            assert any(len(p["winners"]) > 1 for p in pots), f"hand {event.hand}: {final_stacks(history)} {expected}"
            split += 1
    assert exact + split == len(parsed) and exact > 0


def test_pokerstars_text_follows_the_published_layout(session, tmp_path):
    path, events = session
    assert export(path, "pokerstars", tmp_path).returncode == 0
    text = next(tmp_path.glob("*.txt")).read_text(encoding="utf-8")
    hands = text.split("\n\n\n")
    assert len(hands) == len(histories(events))  # two blank lines between hands, as PokerStars writes them
    for hand in hands:
        lines = hand.strip("\n").split("\n")
        assert re.fullmatch(r"PokerStars Hand #\d{13}:  Hold'em No Limit \(50/100\) - "
                            r"\d{4}/\d\d/\d\d \d{1,2}:\d\d:\d\d UTC \[\d{4}/\d\d/\d\d \d{1,2}:\d\d:\d\d ET\]",
                            lines[0]), lines[0]
        assert re.fullmatch(r"Table 'main-2' 10-max Seat #\d+ is the button", lines[1]), lines[1]
        seats = [line for line in lines if re.fullmatch(r"Seat \d+: seat\d+ \(\d+ in chips\)", line)]
        assert len(seats) == PLAYERS
        order = [line.split(" ***")[0] for line in lines if line.startswith("*** ")]
        assert order[0] == "*** HOLE CARDS" and order[-1] == "*** SUMMARY"
        assert order[1:-1] in (["*** FLOP"], ["*** FLOP", "*** TURN"], ["*** FLOP", "*** TURN", "*** RIVER"],
                               ["*** FLOP", "*** TURN", "*** RIVER", "*** SHOW DOWN"], []), order
        assert lines.index("*** HOLE CARDS ***") > lines.index([s for s in lines if "posts big blind" in s][0])
        summary = lines[lines.index("*** SUMMARY ***") + 1:]
        assert re.fullmatch(r"Total pot \d+( Main pot \d+\.( Side pot(-\d+)? \d+\.)+)? \| Rake 0", summary[0])
        results = [line for line in summary if line.startswith("Seat ")]
        assert len(results) == PLAYERS
        for line in results:
            assert re.fullmatch(r"Seat \d+: seat\d+( \(button\))?( \((small|big) blind\))? "
                                r"(folded before Flop( \(didn't bet\))?|folded on the (Flop|Turn|River)"
                                r"|collected \(\d+\)"
                                r"|showed \[[2-9TJQKA][shdc] [2-9TJQKA][shdc]\] and (won \(\d+\)|lost) with .+)",
                                line), line
    assert "side pot" in text and "and is all-in" in text and "Uncalled bet (" in text


def test_ohh_export_matches_the_published_schema_and_the_tables_arithmetic(session, tmp_path):
    path, events = session
    done = export(path, "ohh", tmp_path, "--all-cards")
    assert done.returncode == 0, done.stderr
    text = next(tmp_path.glob("main-2-*.ohh")).read_text(encoding="utf-8")
    chunks = text.split("\n\n")  # the OHH storage format: one object after another, a blank line between
    assert len(chunks) == len(histories(events))
    validator = Draft202012Validator(OHH_SCHEMA)
    showdowns = by_hand(events, "showdown")
    multi_pot = 0
    for chunk, event in zip(chunks, histories(events)):
        assert chunk.count("\n") <= 1
        hand = json.loads(chunk)
        problems = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(hand)]
        assert not problems, problems
        ohh = hand["ohh"]
        table = phhlib.loads(event.secret["phh_complete"])
        seat_of = {p["id"]: p["seat"] for p in ohh["players"]}
        start = {p["seat"]: p["starting_stack"] for p in ohh["players"]}
        assert start == dict(zip(table["seats"], table["starting_stacks"]))
        put_in = Counter()
        for round_ in ohh["rounds"]:
            for action in round_["actions"]:
                put_in[seat_of[action["player_id"]]] += action.get("amount", 0)
        won = Counter()
        for pot in ohh["pots"]:
            assert pot["amount"] == sum(w["win_amount"] for w in pot["player_wins"])
            for w in pot["player_wins"]:
                won[seat_of[w["player_id"]]] += w["win_amount"]
        pots = showdowns[event.hand].public["pots"]
        assert [p["amount"] for p in ohh["pots"]] == [p["amount"] for p in pots]
        multi_pot += len(pots) > 1
        finishing = dict(zip(table["seats"], table["finishing_stacks"]))
        uncalled = _uncalled(events, event.hand)
        for seat in start:  # what a seat put in, less an uncalled bet back, less what it won, is what it lost
            assert start[seat] - finishing[seat] == put_in[seat] - uncalled[str(seat)] - won[seat], (event.hand, seat)
        assert [r["street"] for r in ohh["rounds"]][0] == "Preflop"
        assert all(len(r["cards"]) == {"Flop": 3, "Turn": 1, "River": 1}[r["street"]]
                   for r in ohh["rounds"] if r["street"] in ("Flop", "Turn", "River"))
    assert multi_pot >= 3


def test_phh_export_is_read_back_by_pokerkit_numbered_dated_and_with_the_tables_stacks(session, tmp_path):
    path, events = session
    shown_dir, all_dir = tmp_path / "shown", tmp_path / "all"
    done = export(path, "phh", shown_dir)
    assert done.returncode == 0, done.stderr
    assert f"{len(histories(events))} hands as phh, 0 skipped" in done.stdout
    assert export(path, "phh", all_dir, "--all-cards").returncode == 0
    (written,) = shown_dir.glob("main-2-*.phhs")
    text = written.read_text(encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # pokerkit warns of a field PHH does not define: none may come
        parsed = list(pokerkit.HandHistory.loads_all(text))
    assert len(parsed) == len(histories(events))
    assert re.findall(r"^\[(\d+)\]$", text, re.M) == [str(n) for n in range(1, len(parsed) + 1)]
    showdowns, starts = by_hand(events, "showdown"), by_hand(events, "hand_started")
    exact = split = 0
    for history, event in zip(parsed, histories(events)):
        table = phhlib.loads(event.secret["phh_complete"])
        assert list(history.starting_stacks) == table["starting_stacks"] and history.seats == table["seats"]
        # numbered as the feed's copies, dated from the journal as the other exports
        assert (history.table, history.hand) == ("main-2", event.secret["ohh_complete"]["ohh"]["game_number"])
        started = datetime.fromtimestamp(starts[event.hand].wall, timezone.utc)
        assert (history.year, history.month, history.day, history.time, history.time_zone) == (
            started.year, started.month, started.day, started.time().replace(microsecond=0), "UTC")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            finishing = list(list(history)[-1].stacks)
        if finishing == table["finishing_stacks"]:
            exact += 1
        else:  # pokerkit gives a split pot's odd chips to one player; the table follows TDA 20-1
            assert any(len(p["winners"]) > 1 for p in showdowns[event.hand].public["pots"]), event.hand
            split += 1
    assert exact + split == len(parsed) and exact > 0
    # the cards nobody showed are unknown, unless every card is asked for
    assert text.count(" ????\"") > 20
    assert "????" not in next(all_dir.glob("*.phhs")).read_text(encoding="utf-8")


def _uncalled(events, hand: int) -> dict:
    out: Counter = Counter()
    for e in events:
        if e.type == "pots" and e.hand == hand:
            out.update({k: v for k, v in e.public["returned"].items()})
    return out


def test_the_secure_feed_carries_the_same_hands_undated(session, tmp_path):
    """The journaled hand_history events (what the secure feed published) hold the OHH and PokerStars copies;
    the export of the same journal gives the same hands with the start date added."""
    path, events = session
    assert export(path, "ohh", tmp_path, "--all-cards").returncode == 0
    assert export(path, "pokerstars", tmp_path, "--all-cards").returncode == 0
    exported_ohh = [json.loads(c) for c in next(tmp_path.glob("*.ohh")).read_text().split("\n\n")]
    exported_text = next(tmp_path.glob("*.txt")).read_text().split("\n\n\n")
    starts = by_hand(events, "hand_started")
    for event, dated, text in zip(histories(events), exported_ohh, exported_text):
        feed = event.secret["ohh_complete"]
        assert "start_date_utc" not in feed["ohh"]
        started = dated["ohh"].pop("start_date_utc")
        assert started == time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(starts[event.hand].wall))
        dated["ohh"]["internal_version"] = feed["ohh"]["internal_version"]
        assert dated == feed, event.hand
        header, rest = text.split("\n", 1)
        feed_header, feed_rest = event.secret["pokerstars_complete"].split("\n", 1)
        assert header.startswith(feed_header + " - ") and rest.strip("\n") == feed_rest.strip("\n")
        assert "pokerstars_complete" not in event.public and "ohh_complete" not in event.public


def test_cards_nobody_showed_stay_out_of_the_export_unless_asked(session, tmp_path):
    path, events = session
    shown_dir, all_dir = tmp_path / "shown", tmp_path / "all"
    for fmt in ("ohh", "pokerstars"):
        assert export(path, fmt, shown_dir).returncode == 0
        assert export(path, fmt, all_dir, "--all-cards").returncode == 0
    hidden = shown = 0
    texts = {d: [f.read_text() for f in sorted(d.iterdir())] for d in (shown_dir, all_dir)}
    shown_ohh, shown_ps = texts[shown_dir]
    all_ohh, all_ps = texts[all_dir]
    ohh_hands = [json.loads(c) for c in shown_ohh.split("\n\n")]
    ps_hands = shown_ps.split("\n\n\n")
    for event, ohh, ps in zip(histories(events), ohh_hands, ps_hands):
        table = phhlib.loads(event.secret["phh_complete"])
        _hand, hole, _board, showed = phhlib.replay(table)
        for seat, cards in hole.items():
            pair = " ".join(cards)
            dealt = [a for r in ohh["ohh"]["rounds"] for a in r["actions"] if a["action"] == "Dealt Cards"
                     and a["player_id"] == sorted(hole).index(seat)]
            if seat in showed:
                shown += 1
                assert f"[{pair}]" in ps and dealt[0]["cards"] == cards
            else:
                hidden += 1
                assert f"[{pair}]" not in ps and "cards" not in dealt[0], (event.hand, seat)
                assert f"Dealt to seat{seat} [{pair}]" in all_ps
    assert hidden > 20 and shown > 10
    assert all_ohh.count('"Dealt Cards","cards"') > shown_ohh.count('"Dealt Cards","cards"')


def test_progress_on_a_long_journal(session, tmp_path):
    path, events = session
    assert len(events) >= 1000
    done = export(path, "pokerstars", tmp_path)
    assert done.returncode == 0
    tenths = re.findall(r"(\d+)% of the journal read \((\d+) of (\d+) events\), (\d+) hands?", done.stderr)
    assert [int(t[0]) for t in tenths] == list(range(10, 101, 10)), done.stderr
    assert int(tenths[-1][1]) == int(tenths[-1][2]) == len(events)


# ---- what goes wrong --------------------------------------------------------------------------------------


def test_a_missing_journal_is_named_and_exits_66(tmp_path):
    done = export(tmp_path / "nowhere.journal", "ohh", tmp_path / "out")
    assert done.returncode == 66
    assert f"no journal at {tmp_path / 'nowhere.journal'}" in done.stderr
    assert not (tmp_path / "out").exists()  # nothing made for nothing


def test_a_damaged_journal_is_refused_with_the_row_and_exits_65(session, tmp_path):
    path, events = session
    damaged = tmp_path / "damaged.journal"
    source = sqlite3.connect(path)
    target = sqlite3.connect(damaged)
    source.backup(target)
    source.close()
    seq = histories(events)[0].seq
    target.execute("UPDATE events SET secret = replace(secret, 'seat1', 'seat9') WHERE seq = ?", (seq,))
    target.commit()
    target.close()
    done = export(damaged, "pokerstars", tmp_path / "out")
    assert done.returncode == 65, done.stderr
    assert f"the journal {damaged} is damaged" in done.stderr and str(seq) in done.stderr
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").glob("*.txt"))


@pytest.mark.parametrize("content", [b"", b"not a journal at all\n" * 10])
def test_a_file_that_is_no_journal_exits_65(tmp_path, content):
    path = tmp_path / "table.journal"
    path.write_bytes(content)
    done = export(path, "ohh", tmp_path / "out")
    assert done.returncode == 65, done.stderr
    assert str(path) in done.stderr


def test_an_unwritable_out_dir_exits_73_and_names_it(session, tmp_path):
    path, _events = session
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    done = export(path, "ohh", blocker / "histories")
    assert done.returncode == 73
    assert f"cannot create --out {blocker / 'histories'}" in done.stderr


def test_a_wrong_format_is_a_usage_error(session, tmp_path):
    path, _events = session
    done = export(path, "xml", tmp_path)
    assert done.returncode == 2 and "invalid choice: 'xml'" in done.stderr


# ---- the writers on their own: random hands with antes, big-blind antes, side pots; PokerStars wording ---------


@pytest.mark.slow
def test_random_hands_write_valid_ohh_and_pokerkit_reads_their_pokerstars_text():
    rng = random.Random(20261201)
    validator = Draft202012Validator(OHH_SCHEMA)
    checked = Counter()
    for number in range(300):
        history = random_hand(rng)
        hand, hole, board, shown = phhlib.replay(history)
        result = award(hand, {s: hole[s] for s in hand.live_seats} if len(hand.live_seats) > 1 else None, board)
        record = HandRecord(hand, hole, board, shown, [(p.amount, p.shares) for p in result.pots], "t-1",
                            f"{number + 1}", started=None)
        ohh = to_ohh(record)
        ohh["ohh"]["start_date_utc"] = "2026-12-01T09:00:00"
        assert not list(validator.iter_errors(ohh)), number
        text = to_pokerstars(record)
        if hand.variant.omaha or hand.ante or hand.big_blind_ante:
            checked["structure only (pokerkit reads no antes nor Omaha)"] += 1
            assert text.count("posts the ante") == (len(hand.order) if hand.ante else bool(hand.big_blind_ante))
            continue
        parsed = pokerstars_hands(text)
        assert len(parsed) == 1
        assert list(parsed[0].starting_stacks) == history["starting_stacks"], number
        stacks = final_stacks(parsed[0])
        expected = dict(zip(parsed[0].players, history["finishing_stacks"]))
        if stacks == expected:
            checked["read back exactly by pokerkit"] += 1
        else:
            assert any(len(p.winners) > 1 for p in result.pots), (number, stacks, expected)
            checked["split pot: odd chips by the house rule"] += 1
        if len(result.pots) > 1:
            checked["side pots"] += 1
    assert checked["read back exactly by pokerkit"] >= 50 and checked["side pots"] >= 10, checked


@pytest.mark.parametrize("hole, board, words", [  # shown hands of published PokerStars hand histories
    ("Kd Ac", "3c 6s 9d 8d Ks", "a pair of Kings"),
    ("Jd Js", "3c 6s 9d 8d Ks", "a pair of Jacks"),
    ("9c Qd", "3c 6s 9d 8d Ks", "a pair of Nines"),
    ("Qc Kc", "8s 9s Js Ac Qd", "a pair of Queens"),
    ("5c 5h", "4c 7s 8h 4h As", "two pair, Fives and Fours"),
    ("2s 2h", "2d 5s Td 7s Kh", "three of a kind, Deuces"),
    ("Ah Kh", "Qh Jh Th 2c 3d", "a Royal Flush"),
    ("Ah 2c", "3d 4s 5h Kc Kd", "a straight, Ace to Five"),
    ("6h 6d", "6s Kc Kd 2h 3c", "a full house, Sixes full of Kings"),
    ("Ah 9h", "2h 5h Kh Qc Jd", "a flush, Ace high"),
    ("7c 2d", "Ks Qh 9s 4d 3c", "high card King"),
])
def test_shown_hands_are_worded_as_pokerstars_words_them(hole, board, words):
    assert describe(False, hole.split(), board.split()) == words


def test_omaha_uses_two_hole_cards_and_three_of_the_board():
    # four hearts on the board and one in the hand make no flush in Omaha, nor K-Q-J with the board's nine and ten
    assert describe(True, "Ah Kc Qd Js".split(), "2h 5h 8h 9h Tc".split()) == "a straight, Eight to Queen"


# ---- the secure feed through a real broker ------------------------------------------------------------------


def test_the_secure_feed_publishes_both_copies_and_the_public_feed_neither(mqtt_settings, recorder_factory):
    config = session_config(mqtt=mqtt_settings, table_id="export-feed")
    recorder = recorder_factory(f"{config.mqtt.topic_prefix}/export-feed/#")
    publisher = MqttPublisher(config.mqtt, config.table_id, epoch="export-feed")
    table = SimulatedTable(config, SimOptions(hands=6, seed=SEED, speed=0, pace_s=0.5, link="direct",
                                              players=PLAYERS), publisher)
    assert publisher.start(), "the publisher could not reach the test broker"
    try:
        table.run(StopFlag(), publisher)
    finally:
        publisher.stop()
    recorder.sync()
    secure = [m for m in recorder.json("/secure/events") if m["type"] == "hand_history"]
    public = [m for m in recorder.json("/public/events") if m["type"] == "hand_history"]
    assert secure and len(public) == len(secure)
    for message in secure:
        assert message["ohh_complete"]["ohh"]["game_number"] in message["pokerstars_complete"].split("\n")[0]
        assert len(pokerstars_hands(message["pokerstars_complete"])) == 1
    for message in public:
        assert not {"ohh_complete", "pokerstars_complete", "phh_complete"} & message.keys()


@pytest.mark.parametrize("variant, game", [
    ("NLHE", "Hold'em No Limit (50/100)"), ("PLHE", "Hold'em Pot Limit (50/100)"),
    ("FLHE", "Hold'em Limit (100/200)"), ("PLO", "Omaha Pot Limit (50/100)"),
    ("PLO5", "5 Card Omaha Pot Limit (50/100)"), ("PLO6", "6 Card Omaha Pot Limit (50/100)"),
])
def test_every_variant_the_table_deals_is_named_as_pokerstars_names_it(variant, game):
    from controller.betting import BettingHand, Straddle  # noqa: PLC0415
    from controller.cards import FULL_DECK  # noqa: PLC0415
    from sim.handgen import play_randomly  # noqa: PLC0415

    rng = random.Random(variant)
    validator = Draft202012Validator(OHH_SCHEMA)
    for players in (2, 3, 7):  # heads-up (the button posts the small blind), a straddle with three or more
        seats = list(range(1, players + 1))
        straddles = [Straddle(200)] if players > 2 and variant != "FLHE" else []
        hand = BettingHand(variant, seats, seats[-1], {s: rng.randint(300, 5000) for s in seats}, (50, 100),
                           straddles=straddles)
        deck = list(FULL_DECK)
        rng.shuffle(deck)
        hole = {s: [deck.pop() for _ in range(hand.variant.hole_cards)] for s in hand.order}
        board = [deck.pop() for _ in range(5)]
        play_randomly(hand, rng)
        result = award(hand, hole if len(hand.live_seats) > 1 else None, board)
        shown = list(result.showdown_order) if len(hand.live_seats) > 1 else []
        record = HandRecord(hand, hole, board, shown, [(p.amount, p.shares) for p in result.pots], "t-1", "7",
                            table_size=9)
        text = to_pokerstars(record)
        assert text.startswith(f"PokerStars Hand #7:  {game}\nTable 't-1' 9-max Seat #{players} is the button\n")
        if players == 2:
            assert f"Seat {players}: seat{players} (button) (small blind) " in text
        if straddles:
            assert f"seat{hand.order[2]}: posts straddle 200\n" in text  # the live straddle: after the big blind
        ohh = to_ohh(record)
        ohh["ohh"]["start_date_utc"] = "2026-12-01T09:00:00"
        assert not list(validator.iter_errors(ohh))
        assert ohh["ohh"]["bet_limit"]["bet_type"] == {"N": "NL", "P": "PL", "F": "FL"}[variant[0]]
        assert ohh["ohh"]["game_type"] == ("Omaha" if variant.startswith("PLO") else "Holdem")


# ---- a hand given up unseen at the showdown -------------------------------------------------------------------


def test_a_losing_hand_mucked_at_the_showdown_is_not_shown_and_a_winning_one_still_is():
    from test_chip_layer import Table, checked_down  # noqa: PLC0415 (the chip layer's table, played by hand)

    table = Table()
    hole, _board, winner = checked_down(table)
    loser = 3 - winner
    table.chips(1, 100)  # a bet on the river and a call
    table.chips(2, 100)
    # the dealer collects the river: the betting is over, the showdown begins
    table.place(*table.tags_in("seat1.bets"), *table.tags_in("seat2.bets"), zone="pot")
    table.run(1.0)
    table.place(*hole[loser], zone="muck")  # no all-in: the loser gives up without showing (TDA 17-2; CA Actions 9)
    table.run(0.8)
    table.clear()
    history = [e for e in table.run(3.0) if e.type == "hand_history"]
    assert len(history) == 1
    text, ohh = history[0].secret["pokerstars_complete"], history[0].secret["ohh_complete"]["ohh"]
    assert f"seat{loser}: mucks hand\n" in text and f"seat{winner}: shows [{' '.join(hole[winner])}]" in text
    assert re.search(rf"Seat {loser}: seat{loser} \(\w+ blind\) mucked \[{' '.join(hole[loser])}\]\n", text)
    showdown = next(r for r in ohh["rounds"] if r["street"] == "Showdown")["actions"]
    assert {a["action"] for a in showdown} == {"Shows Cards", "Mucks Cards"}
    parsed = pokerstars_hands(text)  # a parser still reads the hand, the mucked seat losing its blind
    assert final_stacks(parsed[0])[f"seat{loser}"] == 5000 - 200


def test_tabled_hands_follow_the_all_in_rule_and_cards_speak():
    from controller.betting import BettingHand  # noqa: PLC0415
    from controller.histories import tabled  # noqa: PLC0415

    hand = BettingHand("NLHE", [1, 2, 3], 3, {1: 1000, 2: 1000, 3: 300}, (50, 100))
    assert tabled(hand, [1, 2, 3], {2}, {1: 900}) == [1, 3]  # seat 2 gave up unseen
    assert tabled(hand, [1, 2, 3], {1, 2}, {1: 900}) == [1, 3]  # the winner's cards speak
    hand.declare(3, "all_in")  # seat 3 all-in: every hand is turned face up once the betting is over
    assert tabled(hand, [1, 2, 3], {2}, {1: 900}) == [1, 2, 3]


def test_a_journal_the_table_is_still_writing_is_exported_as_far_as_it_goes(tmp_path):
    config = session_config()
    path = tmp_path / "live.journal"
    journal = Journal(path, table_id=config.table_id)
    assert journal.open().ok
    try:
        table = SimulatedTable(config, SimOptions(hands=4, seed=3, speed=0, pace_s=0.5, link="direct",
                                                  players=PLAYERS), None, journal)
        table.pipeline.restore(time.time())
        table.run(StopFlag())
        written = sum(1 for e in journal.events_after(0, 100000) if e.type == "hand_history")
        assert Path(f"{path}-wal").stat().st_size > 0  # the last commits are still in the write-ahead log
        done = export(path, "pokerstars", tmp_path / "out")  # while the table holds the journal open
        assert done.returncode == 0, done.stderr
        assert f"{written} hands as pokerstars" in done.stdout and written > 0
        assert journal.self_check().ok  # and the table's journal is as it was
    finally:
        journal.close()


def test_player_names_of_the_phh_record_name_the_players(session, tmp_path):
    """A PHH record with player names (PHH's optional ``players``) names them in the export."""
    _path, events = session
    named = tmp_path / "named.journal"
    journal = Journal(named, table_id="main-2")
    assert journal.open().ok
    copied = []
    for event in events:
        secret = dict(event.secret)
        if event.type == "hand_history":
            table = phhlib.loads(secret["phh_complete"])
            table["players"] = [f"Player {s}" for s in table["seats"]]
            secret["phh_complete"] = phhlib.dumps(table)
        copied.append(dataclasses.replace(event.domain_event(), secret=secret))
    journal.record([("tick", events[-1].t, {})], copied)
    journal.close()
    done = export(named, "pokerstars", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    first = next((tmp_path / "out").glob("*.txt")).read_text().split("\n\n\n")[0]
    table = phhlib.loads(histories(events)[0].secret["phh_complete"])
    assert pokerstars_hands(first)[0].players == [f"Player {s}" for s in table["seats"]]
    assert re.search(r"^Seat \d+: Player \d+ \(\d+ in chips\)$", first, re.MULTILINE), first


def test_a_journal_without_a_finished_hand_writes_nothing_and_says_so(tmp_path):
    path = tmp_path / "new.journal"
    journal = Journal(path, table_id="main-2")
    assert journal.open().ok
    journal.close()
    done = export(path, "ohh", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    assert "0 hands as ohh, 0 skipped" in done.stdout and "nothing written" in done.stdout
    assert not list((tmp_path / "out").iterdir())
