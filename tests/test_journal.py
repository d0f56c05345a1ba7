"""The SQLite journal: round trip, atomicity under kill -9, corruption detection, delivery marks, retention."""

import logging
import os
import random
import signal
import sqlite3
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from controller import DomainEvent, TableController, TableSetup
from controller.cards import FULL_DECK
from hal.events import ZoneEvent
from rfid_table.service.inputs import journal_event, journal_input, tick_input, zone_input
from rfid_table.service.journal import Checkpoint, Journal, JournalCorrupt, JournalError
from rfid_table.service.journal_codec import crc as _crc
from rfid_table.service.replay import replay

ROOT = Path(__file__).resolve().parents[1]


def zone(step: int, i: int = 0) -> tuple[str, float, dict]:
    return "zone", 1000.0 + step + i / 10, {"kind": "arrived", "zone": "board", "uid": f"UID-{step}-{i}"}


def event(seq: int, type_: str = "card_dealt", hand: int | None = 1, **public) -> DomainEvent:
    return DomainEvent(seq, type_, 1000.0 + seq / 3, hand, public or {"seat": seq % 10}, {"card": "Ah"})


def fill(journal: Journal, n: int, start: int = 1) -> None:
    """``n`` steps of one input and one event each."""
    for seq in range(start, start + n):
        journal.record([zone(seq)], [event(seq)])


@pytest.fixture
def path(tmp_path) -> Path:
    return tmp_path / "journal.db"


@pytest.fixture
def journal(path):
    with Journal(path) as opened:
        yield opened


def reopen(path: Path, **kwargs) -> Journal:
    journal = Journal(path, **kwargs)
    journal.open()
    return journal


# ---- round trip ---------------------------------------------------------------------------------------------


def test_inputs_and_events_round_trip(path):
    with Journal(path) as journal:
        assert (journal.last_seq(), journal.latest_checkpoint(), list(journal.inputs_since())) == (0, None, [])
        epoch = journal.epoch
        inputs = [zone(1), ("tick", 1001.25, {}), ("command", 1001.5, {"name": "void_hand", "by": "flóor"})]
        events = [DomainEvent(1, "hand_started", 1001.0, 1, {}, {}),
                  DomainEvent(2, "card_dealt", 1001.1, 1, {"seat": 3, "count": 1}, {"card": "A♠"}),
                  DomainEvent(3, "unknown_tag", 1001.2, None, {"zone": "muck", "uid": "E0"}, {})]
        journal.record(inputs, events, caused_by=[0, 0, 2])
        journal.record([zone(2)], [event(4, "hand_ended", board=["Ah"], live_seats=[3])])

    with Journal(path) as journal:  # read back from the file, not from memory
        assert journal.epoch == epoch and journal.meta("start_count") == "2"
        back = list(journal.inputs_since())
        assert [(x.id, x.kind, x.t, x.body) for x in back[:3]] == [(i + 1, *row) for i, row in enumerate(inputs)]
        assert back[0].zone_event() == ZoneEvent("arrived", "board", "UID-1-0", 1001.0)
        stored = journal.events_after(0)
        assert [e.seq for e in stored] == [1, 2, 3, 4] and journal.last_seq() == 4
        assert [e.input_id for e in stored] == [1, 1, 3, 4]  # caused_by, then the step's last input by default
        for original, kept in zip(events, stored):
            assert kept.payload(secure=False) == original.payload(secure=False)
            assert kept.payload(secure=True) == original.payload(secure=True)
            assert kept.t == original.t  # bit for bit, not rounded
        assert journal.events_after(2, limit=1)[0].seq == 3
        assert [x.id for x in journal.inputs_since(3)] == [4]
        journal.record([zone(3)], [event(5)])  # numbering continues after a restart
        assert list(journal.inputs_since(4))[0].id == 5


def test_record_refuses_a_seq_that_does_not_follow_and_writes_nothing(journal):
    fill(journal, 3)
    with pytest.raises(JournalError, match="does not follow"):
        journal.record([zone(9)], [event(5)])
    with pytest.raises(JournalError, match="does not follow"):
        journal.record([zone(9)], [event(4), event(6)])
    with pytest.raises(ValueError):
        journal.record([("noise", 1.0, {})], [])
    assert journal.last_seq() == 3 and journal.last_input_id() == 3
    assert [x.id for x in journal.inputs_since()] == [1, 2, 3]


# ---- replay (event sourcing) --------------------------------------------------------------------------------

DECK = {f"E0040150{i:08X}": card for i, card in enumerate(FULL_DECK)}
UID = {card: uid for uid, card in DECK.items()}


def play(controller: TableController, journal: Journal) -> None:
    """Half a hand through the controller, journaling each step the way the daemon would."""
    t = 1000.0
    moves = [("As", "seat1.cards"), ("Kd", "seat2.cards"), ("Qh", "seat1.cards"), ("Jc", "seat2.cards"),
             ("2c", "burn"), ("7h", "board"), ("8h", "board"), ("9h", "board"), ("Kd", "muck")]
    for card, where in moves:
        t += 0.3
        zone_event = ZoneEvent("arrived", where, UID[card], t)
        journal.record([zone_input(zone_event)], controller.handle(zone_event))
        out = controller.tick(t + 0.1)
        if out:  # a tick that changed nothing only moves the clock: not journaled
            journal.record([tick_input(t + 0.1)], out)


def test_replay_rebuilds_the_hand_in_progress(path):
    setup = TableSetup("t", 6, DECK)
    original = TableController(setup)
    with Journal(path) as journal:
        play(original, journal)
    with Journal(path) as journal:  # "after the crash"
        restored = TableController(setup)
        result = replay(journal, restored)
        assert result.mismatches == []
        assert result.inputs == journal.last_input_id() and restored.seq == journal.last_seq() == original.seq
        # Only unjournaled ticks differ, and they only moved the clock: the daemon's next step moves it again.
        assert restored.tick(1010.0) == original.tick(1010.0) == []
        assert restored.snapshot(secure=True) == original.snapshot(secure=True)
        assert restored.phase() == "flop"


def test_replay_reports_a_controller_that_disagrees_with_the_journal(path):
    with Journal(path) as journal:
        play(TableController(TableSetup("t", 6, DECK)), journal)
        other_rules = TableController(TableSetup("t", 6, DECK, hole_cards=1))
        assert replay(journal, other_rules).mismatches


# ---- atomicity under kill -9 --------------------------------------------------------------------------------

# Writes steps as fast as it can: 1-4 inputs and 0-5 events each, every input saying which step it belongs to
# and how big the step is, with checkpoints, delivery marks and pruning mixed in.
WRITER = r"""
import random, sys
from controller.domain import DomainEvent
from rfid_table.service.journal import Journal

journal = Journal(sys.argv[1], retention_events=200)
check = journal.open()
if not check.ok:
    print(check, flush=True)
    sys.exit(3)
cp = journal.latest_checkpoint()
last = None
for last in journal.inputs_since(cp):
    pass
step = last.body["step"] if last else (cp.state["step"] if cp else 0)
seq = journal.last_seq()
rng = random.Random()
print("ready", flush=True)
while True:
    step += 1
    n_in, n_ev = rng.randint(1, 4), rng.randint(0, 5)
    inputs = [("zone", step + i / 10, {"step": step, "i": i, "n": n_in, "events": n_ev}) for i in range(n_in)]
    events = []
    for k in range(n_ev):
        seq += 1
        events.append(DomainEvent(seq, "test", float(step), step, {"step": step, "k": k, "n": n_ev},
                                  {"pad": "x" * rng.randint(0, 300)}))
    journal.record(inputs, events, caused_by=[rng.randrange(n_in) for _ in events],
                   checkpoint={"step": step, "base": True} if step % 25 == 0 else None)
    if step % 7 == 0:
        journal.mark_delivered(rng.choice(["public", "secure"]), max(0, seq - rng.randint(0, 20)))
    if step % 30 == 0:
        journal.prune()
    print(step, flush=True)  # the test kills after a number of these: the same work however loaded the machine
"""


def check_whole_steps(journal: Journal) -> int:
    """Every retained step is whole: all its inputs, and all its events unless pruned from the front."""
    inputs = list(journal.inputs_since())
    cp = journal.latest_checkpoint()
    if not inputs:  # all pruned at a checkpoint taken after the last step
        return cp.state["step"] if cp else 0
    by_step = defaultdict(list)
    for item in inputs:
        by_step[item.body["step"]].append(item)
    steps = sorted(by_step)
    assert steps == list(range(steps[0], steps[-1] + 1))
    for items in by_step.values():
        assert [x.body["i"] for x in items] == list(range(items[0].body["n"]))

    events = journal.events_after(0, limit=10**6)
    if events:
        assert [e.seq for e in events] == list(range(events[0].seq, journal.last_seq() + 1))
    ev_by_step = defaultdict(list)
    for e in events:
        ev_by_step[e.public["step"]].append(e)
        if e.public["step"] in by_step:  # the input that caused it belongs to the same step
            assert e.input_id in {x.id for x in by_step[e.public["step"]]}
    first_event_step = events[0].public["step"] if events else None
    for s, evs in ev_by_step.items():
        n = evs[0].public["n"]
        expected = list(range(n - len(evs), n)) if s == first_event_step else list(range(n))
        assert [e.public["k"] for e in evs] == expected, f"step {s} has a partial set of events"
    for s in steps:  # no inputs without their events, no events without their inputs
        if first_event_step is None or s > first_event_step:
            assert len(ev_by_step.get(s, [])) == by_step[s][0].body["events"], f"step {s} is partial"
    assert max(ev_by_step, default=0) <= steps[-1]

    if cp:  # saved in the same transaction as the step it follows
        at = {x.id: x for x in inputs}.get(cp.input_id)
        if at is not None:
            assert (at.body["step"], at.body["i"]) == (cp.state["step"], at.body["n"] - 1)
        else:
            assert inputs[0].id == cp.input_id + 1 and inputs[0].body["step"] == cp.state["step"] + 1
    return steps[-1]


def test_kill_9_at_random_points_leaves_only_whole_steps(path):
    rng = random.Random(20240611)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    last_step = 0
    for kill in range(50):
        writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], cwd=ROOT, env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        ready = writer.stdout.readline()
        assert ready == "ready\n", f"kill {kill}: writer said {ready!r} {writer.stderr.read()}"
        for _ in range(rng.randint(0, 12)):  # it goes on writing meanwhile: the kill lands anywhere in a step
            assert writer.stdout.readline(), f"kill {kill}: the writer stopped: {writer.stderr.read()}"
        writer.send_signal(signal.SIGKILL)
        writer.wait()
        writer.stdout.close()
        writer.stderr.close()

        journal = Journal(path, retention_events=200)
        check = journal.open()
        assert check.ok, f"kill {kill}: {check}"
        try:
            step = check_whole_steps(journal)
        finally:
            journal.close()
        assert step >= last_step  # nothing committed was lost
        last_step = step
    assert last_step > 200  # the writer really was writing when it was killed


# ---- corruption ---------------------------------------------------------------------------------------------


def journal_with_everything(path: Path) -> None:
    with Journal(path) as journal:
        fill(journal, 10)
        journal.save_checkpoint(2, {"hand": 1})
        journal.mark_delivered("public", 6)


@pytest.mark.parametrize("sql, expected", [
    ("UPDATE inputs SET body = replace(body, 'board', 'boarb') WHERE id = 3", "inputs row 3: checksum"),
    ("UPDATE events SET public = replace(public, '5', '6') WHERE seq = 5", "events row 5: checksum"),
    ("UPDATE events SET t = t + 1e-9 WHERE seq = 7", "events row 7: checksum"),
    ("UPDATE checkpoints SET state = '{\"hand\":2}'", "checkpoints row 1: checksum"),
    ("UPDATE delivery SET seq = 8 WHERE feed = 'public'", "delivery row public: checksum"),
    (f"UPDATE delivery SET seq = 11, crc = {_crc('public', 11)} WHERE feed = 'public'",
     "delivery row public: acknowledged seq 11 beyond the last journaled 10"),
    ("DELETE FROM events WHERE seq = 4", "events: seq jumps from 3 to 5"),
    ("DELETE FROM inputs WHERE id = 6", "inputs: id jumps from 5 to 7"),
    ("DELETE FROM checkpoints; DELETE FROM inputs WHERE id <= 2",  # pruned inputs with no checkpoint to cover them
     "inputs: first retained is 3 but there is no checkpoint"),
])
def test_self_check_names_the_damaged_table_and_row(path, sql, expected, caplog):
    journal_with_everything(path)
    db = sqlite3.connect(path)
    db.executescript(sql)  # behind the journal's back: no checksum is updated
    db.close()
    journal = reopen(path)
    check = journal.last_check
    assert not check.ok and any(expected in p for p in check.problems), check.problems
    assert "refusing to publish" in caplog.text and expected in caplog.text
    with pytest.raises(JournalCorrupt):  # nothing more goes in, so nothing is published from it
        journal.record([zone(11)], [event(11)])
    with pytest.raises(JournalCorrupt):
        journal.mark_delivered("public", 1)
    journal.close()
    with pytest.raises(JournalCorrupt, match=expected.split(":")[0]):
        Journal(path).__enter__()


def corrupt_file(path: Path, how: str) -> None:
    """Overwrite bytes of the database file itself, as a failing SD card would."""
    assert not Path(f"{path}-wal").exists()  # the close folded the WAL into the file
    with sqlite3.connect(path) as db:
        page_size = db.execute("PRAGMA page_size").fetchone()[0]
        root = db.execute("SELECT rootpage FROM sqlite_schema WHERE name = 'events'").fetchone()[0]
    db.close()
    data = bytearray(path.read_bytes())
    if how == "row text":
        at = data.find(b"UID-7-0")
        assert at > 0 and data.find(b"UID-7-0", at + 1) == -1
        data[at + 4] = ord("8")  # still valid JSON and UTF-8: only the checksum can tell
    elif how == "b-tree page":
        page = (root - 1) * page_size
        data[page + 8: page + 10] = b"\x00\x05"  # first cell pointer of the events leaf page
    elif how == "file header":
        data[0:16] = b"not a database!!"
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("how, expected", [
    ("row text", "inputs row 7: checksum mismatch"),
    ("b-tree page", "(table events)"),
    ("file header", "cannot be opened: file is not a database"),
])
def test_self_check_detects_bytes_flipped_in_the_file(path, how, expected):
    with Journal(path) as journal:
        fill(journal, 10)
    corrupt_file(path, how)
    journal = reopen(path)
    check = journal.last_check
    journal.close()
    assert not check.ok and any(expected in p for p in check.problems), check.problems


def test_self_check_of_12000_events_takes_well_under_a_second(journal):
    for start in range(1, 12_001, 1000):
        journal.record([zone(s) for s in range(start, start + 1000)],
                       [event(s) for s in range(start, start + 1000)])
    check = journal.self_check()
    assert check.ok and check.rows >= 24_000
    assert check.seconds < 1.0, check


# ---- delivery, retention ------------------------------------------------------------------------------------


def test_delivery_marks_never_go_backwards(path):
    with Journal(path) as journal:
        fill(journal, 10)
        assert journal.delivered("public") == 0 and journal.undelivered_count("public") == 10
        assert journal.mark_delivered("public", 7) == 7
        assert journal.mark_delivered("public", 3) == 7
        assert journal.mark_delivered("delayed", 2) == 2  # a feed can join later
        with pytest.raises(JournalError, match="beyond|cannot acknowledge"):
            journal.mark_delivered("secure", 11)
        assert journal.undelivered_count("public") == 3 and journal.undelivered_count("secure") == 10
    with Journal(path) as journal:
        assert (journal.delivered("public"), journal.delivered("delayed"), journal.delivered("secure")) == (7, 2, 0)
        journal.mark_delivered("public", 5)
        assert journal.delivered("public") == 7


def test_prune_keeps_undelivered_events_and_inputs_after_the_checkpoint(path):
    with Journal(path, retention_events=10) as journal:
        fill(journal, 50)
        journal.mark_delivered("public", 40)
        journal.mark_delivered("secure", 20)
        assert journal.prune() == (20, 0, 0)  # the slower feed holds events back; no checkpoint holds inputs
        assert journal.events_after(0)[0].seq == 21 and journal.undelivered_count("secure") == 30
        assert len(list(journal.inputs_since())) == 50

        journal.save_checkpoint(30, {"hand": 3, "base": True})
        journal.save_checkpoint(40, {"hand": 4, "base": True})
        with pytest.raises(JournalError):  # backwards: inputs 31-40 may already be gone
            journal.save_checkpoint(35, {"hand": 3})
        assert journal.prune() == (0, 30, 0)  # up to the base before the newest: hand 4's inputs stay
        assert journal.latest_checkpoint() == Checkpoint(40, {"hand": 4, "base": True})
        assert [x.id for x in journal.inputs_since(journal.latest_checkpoint())] == list(range(41, 51))

        journal.mark_delivered("public", 50)
        journal.mark_delivered("secure", 50)
        assert journal.prune().events == 20  # everything delivered: the newest 10 stay
        assert journal.usage() == (10, 10) and journal.events_after(0)[0].seq == 41
        journal.record([zone(51)], [event(51)], checkpoint={"hand": 5, "base": True})
        assert journal.prune().inputs == 10  # hand 4's: hand 5's stay
    with sqlite3.connect(path) as db:  # every input gone, as the retention of an older version left it
        db.execute("DELETE FROM inputs")

    with Journal(path, retention_events=10) as journal:  # the numbering survives an empty inputs table
        assert journal.self_check().ok and journal.last_seq() == 51 and journal.last_input_id() == 51
        journal.record([zone(52)], [event(52)])
        assert [x.id for x in journal.inputs_since(journal.latest_checkpoint())] == [52]
        assert journal.self_check().ok


def test_prune_keeps_the_inputs_since_the_last_checkpoint_any_version_can_restart_from(path):
    """A checkpoint that is not a base (its hand ended by the next hand's first card: no moment between hands)
    does not let the inputs before it go; older checkpoints between the base and the newest do go. The inputs of
    the newest base's own hand stay: another version replays it from the base before, to show the ended hand."""
    with Journal(path) as journal:
        fill(journal, 30)
        journal.save_checkpoint(5, {"hand": 0, "base": True, "t": float("nan")})  # JSON SQLite cannot read
        assert journal.latest_checkpoint(base=True) is None and journal.prune().inputs == 0
        journal.save_checkpoint(10, {"hand": 1, "base": False})
        assert journal.prune().inputs == 0  # no base yet: every input stays
        journal.save_checkpoint(15, {"hand": 2, "base": True})
        journal.save_checkpoint(20, {"hand": 3, "base": False})
        journal.save_checkpoint(25, {"hand": 4, "base": False})
        assert journal.prune() == (0, 0, 3)  # hands 0, 1 and 3 go; one base: its own hand's inputs stay too
        assert journal.first_input_id() == 1
        assert journal.latest_checkpoint(base=True) == Checkpoint(15, {"hand": 2, "base": True})
        assert journal.latest_checkpoint() == Checkpoint(25, {"hand": 4, "base": False})
        journal.save_checkpoint(28, {"hand": 5, "base": True})
        assert journal.prune() == (0, 15, 1)  # up to the base before the newest; hand 4 goes
        assert journal.first_input_id() == 16
        assert journal.base_checkpoints() == [Checkpoint(28, {"hand": 5, "base": True}),
                                              Checkpoint(15, {"hand": 2, "base": True})]
        assert journal.self_check().ok


def test_near_limit_is_raised_by_undelivered_events(path):
    with Journal(path, retention_events=100, warn_at=0.9) as journal:
        fill(journal, 90)
        assert journal.usage() == (90, 100) and not journal.near_limit
        fill(journal, 1, start=91)
        assert journal.near_limit  # 91 undelivered > 90
        journal.mark_delivered("public", 91)
        assert journal.near_limit  # the secure feed is still behind
        journal.mark_delivered("secure", 50)
        assert not journal.near_limit

        fill(journal, 200, start=92)  # broker away: nothing more delivered, nothing undelivered pruned
        assert journal.prune().events == 50
        assert journal.usage() == (241, 100) and journal.near_limit
        journal.mark_delivered("public", 291)
        journal.mark_delivered("secure", 291)
        journal.prune()
        assert journal.usage() == (100, 100) and not journal.near_limit  # full, as retention means, but fine


def test_the_near_limit_warning_clears_only_well_below_the_line(path):
    with Journal(path, retention_events=100, warn_at=0.9) as journal:
        fill(journal, 95)
        assert journal.near_limit and journal.slowest_undelivered() == 95
        for feed in ("public", "secure"):
            journal.mark_delivered(feed, 6)  # 89 left: below the line, but a backlog hovering there must not flap
        assert not journal.near_limit and not journal.back_from_limit
        for feed in ("public", "secure"):
            journal.mark_delivered(feed, 23)  # 72 left = 0.8 of the warning level
        assert journal.back_from_limit
        assert journal.delivery_marks() == {"public": 23, "secure": 23}


def test_a_journal_event_replays_with_its_seq_and_is_found_at_the_next_start(path):
    """The daemon's own ``journal`` event is journaled as an input and numbered by the controller like the game's
    events: a restored controller ends at the same seq, and the next start knows the warning is raised."""
    setup = TableSetup("t", 6, DECK)
    original = TableController(setup)
    with Journal(path) as journal:
        play(original, journal)
        raised = journal_input(1005.0, "near_limit", 12, 11, 12)
        warning = journal_event(original, 1005.0, raised[2])
        journal.record([raised], [warning])
        turn = ZoneEvent("arrived", "board", UID["Ts"], 1006.0)
        journal.record([zone_input(turn)], original.handle(turn))
    assert warning.type == "journal" and warning.hand == 1
    assert warning.payload(secure=False) == {"seq": warning.seq, "type": "journal", "t": 1005.0, "hand": 1,
                                             "state": "near_limit", "rows": 12, "undelivered": 11, "limit": 12}
    with Journal(path) as journal:
        assert [e.type for e in journal.events_after(warning.seq - 1)][:2] == ["journal", "board_card"]
        restored = TableController(setup)
        result = replay(journal, restored)
        assert result.mismatches == [] and restored.seq == original.seq == journal.last_seq()
        kept = journal.last_event("journal")
        assert (kept.seq, kept.public["state"]) == (warning.seq, "near_limit")
        assert journal.last_event("hand_ended") is None


def test_the_running_daemon_removes_delivered_events_past_the_retention(tmp_path):
    """[journal] retention_events bounds the file: once a minute the daemon removes the events every feed has had
    acknowledged beyond the newest retention_events; undelivered events always stay."""
    from rfid_table.config.table import load_config
    from rfid_table.devtools.simulate import SimOptions, SimulatedTable

    config = load_config(Path(__file__).resolve().parent.parent / "config" / "table-6max.toml")
    journal = Journal(tmp_path / "journal.db", retention_events=20, feeds=("public", "secure"))
    assert journal.open().ok
    table = SimulatedTable(config, SimOptions(hands=None, seed=4, speed=0, pace_s=0.5, link="direct"), None, journal)
    try:
        t = 1000.0
        for _ in range(int(30 / table.cycle_s)):
            table.advance(t)
            table.step(t)
            t += table.cycle_s
        rows, _limit = journal.usage()
        assert rows > 20  # nothing acknowledged yet: all kept
        delivered = journal.last_seq() - 5
        for feed in ("public", "secure"):
            journal.mark_delivered(feed, delivered)
        for _ in range(int(61 / table.cycle_s)):
            table.advance(t)
            table.step(t)
            t += table.cycle_s
        kept = journal.events_after(0, limit=100_000)
        assert journal.last_seq() - 20 > delivered  # so the acknowledged events are the ones that may go
        assert kept[0].seq == delivered + 1 and kept[-1].seq == journal.last_seq()
        assert journal.usage()[0] == len(kept)
    finally:
        table.close()
        journal.close()


def test_a_restart_starts_from_the_last_hand_boundary_and_the_inputs_before_it_go(tmp_path):
    """At each hand's end the controller is checkpointed; the retention then drops the inputs the checkpoint
    covers, so the journal and the restart time stay bounded, and a restart restores the same table. (The dealer
    takes two seconds to shuffle: the table is clear between hands, so each hand's end is a base checkpoint.)"""
    from rfid_table.config.table import load_config
    from rfid_table.devtools.simulate import SimOptions, SimulatedTable

    config = load_config(Path(__file__).resolve().parent.parent / "config" / "table-chips.toml")
    path = tmp_path / "journal.db"
    journal = Journal(path, retention_events=50, feeds=("public", "secure"))
    assert journal.open().ok
    table = SimulatedTable(config, SimOptions(hands=None, seed=6, speed=0, pace_s=1.0, link="direct"), None, journal)
    try:
        t = 1000.0
        for _ in range(int(140 / table.cycle_s)):
            table.advance(t)
            table.step(t)
            t += table.cycle_s
            if journal.last_seq():
                for feed in ("public", "secure"):
                    journal.mark_delivered(feed, journal.last_seq())
        checkpoint = journal.latest_checkpoint()
        assert checkpoint is not None and table.pipeline.controller.hand >= 2
        kept_inputs = list(journal.inputs_since(None))
        assert kept_inputs and kept_inputs[0].id > 1  # the inputs before a checkpoint were removed
        snapshot = {**table.pipeline.controller.snapshot(secure=True), "t": None}  # a tick without change: not kept
        last_input = journal.last_input_id()
    finally:
        table.close()
        journal.close()
    journal = Journal(path, retention_events=50, feeds=("public", "secure"))
    assert journal.open().ok
    restarted = SimulatedTable(config, SimOptions(hands=None, seed=6, speed=0, link="direct"), None, journal)
    try:
        replayed = restarted.pipeline.restore(t)
        assert replayed == last_input - journal.latest_checkpoint().input_id < len(kept_inputs) + 1
        assert {**restarted.pipeline.controller.snapshot(secure=True), "t": None} == snapshot
    finally:
        restarted.close()
        journal.close()


def test_a_checkpoint_of_another_program_version_is_never_unpickled_the_table_restarts_from_its_explicit_state(
        tmp_path, caplog):
    """After an upgrade the pickled controller of the last hand's end is not loaded (its classes may have changed):
    a new controller takes over the checkpoint's explicit JSON state (stacks, button, numbering, tags on the table,
    deck audit...) and the hand in progress is rebuilt from its journaled inputs, to exactly the same table."""
    import base64

    from rfid_table.service.checkpoint import STATE_VERSION
    from rfid_table.config.table import load_config
    from rfid_table.devtools.simulate import SimOptions, SimulatedTable

    config = load_config(Path(__file__).resolve().parent.parent / "config" / "table-chips.toml")
    path = tmp_path / "journal.db"
    journal = Journal(path, retention_events=50)
    assert journal.open().ok
    table = SimulatedTable(config, SimOptions(hands=None, seed=11, speed=0, pace_s=1.0, link="direct"), None, journal)
    controller = table.pipeline.controller
    try:
        t = 1000.0
        while not (controller.hand >= 3 and controller.in_hand and journal.latest_checkpoint(base=True) is not None
                   and journal.last_input_id() - journal.latest_checkpoint(base=True).input_id > 20):
            table.advance(t)
            table.step(t)
            t += table.cycle_s
            for feed in ("public", "secure"):
                journal.mark_delivered(feed, journal.last_seq())
            assert t < 1000 + 600, "three hands did not come"
        snapshot = controller.snapshot(secure=True)
        base = journal.latest_checkpoint(base=True)
        assert base.state["state_version"] == STATE_VERSION
        assert base.state["state"]["betting"]["stacks"]  # the chips' counts are in the explicit state
        # as another version of the program would find it: its pickles unloadable, its code not this code
        latest = journal.latest_checkpoint()
        journal.save_checkpoint(latest.input_id, {**latest.state, "code": "another-version",
                                                  "controller": base64.b64encode(b"junk").decode()})
        journal.prune()
        newest, base = journal.base_checkpoints()  # a restart replays from the base before the newest
        assert journal.first_input_id() == base.input_id + 1 and newest.input_id > base.input_id
    finally:
        table.close()
        journal.close()
    journal = Journal(path, retention_events=50)
    assert journal.open().ok
    restarted = SimulatedTable(config, SimOptions(hands=None, seed=11, speed=0, link="direct"), None, journal)
    try:
        with caplog.at_level("WARNING"):
            replayed = restarted.pipeline.restore(t)
        assert replayed == journal.last_input_id() - base.input_id
        assert any("another version of the program" in r.getMessage() for r in caplog.records)
        assert not [r for r in caplog.records if r.levelname == "ERROR"]  # the replay gave the journaled events
        assert restarted.pipeline.controller.snapshot(secure=True) == snapshot
    finally:
        restarted.close()
        journal.close()


def test_a_checkpoint_from_before_version_stamps_is_loaded_and_an_unloadable_one_is_refused_clearly(tmp_path):
    """A journal written before checkpoints had a version stamp holds only a pickle, and the retention had removed
    the inputs before it: that pickle is the only state there is. If it cannot be loaded, the start-up says why."""
    import base64
    import pickle
    import sqlite3

    from rfid_table.service.checkpoint import CheckpointUnusable
    from rfid_table.config.table import load_config
    from rfid_table.devtools.simulate import SimOptions, SimulatedTable

    config = load_config(Path(__file__).resolve().parent.parent / "config" / "table-6max.toml")
    path = tmp_path / "journal.db"
    journal = Journal(path)
    assert journal.open().ok
    table = SimulatedTable(config, SimOptions(hands=None, seed=2, speed=0, pace_s=0.5, link="direct"), None, journal)
    try:
        t = 1000.0
        while table.pipeline.controller.hand < 2:
            table.advance(t)
            table.step(t)
            t += table.cycle_s
        legacy = {"format": "pickle-v1",
                  "controller": base64.b64encode(pickle.dumps(table.pipeline.controller)).decode()}
        journal.save_checkpoint(journal.last_input_id(), legacy)
        snapshot = table.pipeline.controller.snapshot(secure=True)
        last_input = journal.last_input_id()
    finally:
        table.close()
        journal.close()
    with sqlite3.connect(path) as db:  # what the retention of that version did, and that version wrote no other
        db.execute("DELETE FROM inputs WHERE id <= ?", (last_input,))
        db.execute("DELETE FROM checkpoints WHERE instr(state, 'pickle-v1') = 0")
    for pickled, expected in ((legacy["controller"], "restored"), (base64.b64encode(b"junk").decode(), "refused")):
        journal = Journal(path)
        assert journal.open().ok
        journal.save_checkpoint(last_input, {**legacy, "controller": pickled})
        restarted = SimulatedTable(config, SimOptions(hands=None, seed=2, speed=0, link="direct"), None, journal)
        try:
            if expected == "restored":
                assert restarted.pipeline.restore(t) == 0
                assert restarted.pipeline.controller.snapshot(secure=True) == snapshot
            else:
                with pytest.raises(CheckpointUnusable, match="without a version stamp, cannot be loaded"):
                    restarted.pipeline.restore(t)
        finally:
            restarted.close()
            journal.close()
