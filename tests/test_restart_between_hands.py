"""A table restarted between two hands shows the hand that ended, as it did before the restart.

Between hands the snapshot is the ended hand (docs/mqtt.md, "Ordering, sequence numbers and epochs"): its cards,
its board, its folds. A late subscriber — a console, an overlay — joining after a restart gets that picture from
the first snapshot. The journal is written by a seeded simulated table and cut just after a hand's end, as a
daemon killed there leaves it; the table is then restored from the file twice: by the same program (the
checkpoint's pickle) and as another version of the program finds it after an upgrade (the checkpoint's explicit
state, which starts the next hand afresh, and the inputs the retention kept).
"""

import base64
from pathlib import Path

import pytest

from rfid_table.config.table import load_config
from rfid_table.devtools.simulate import SimOptions, SimulatedTable
from rfid_table.service.journal import Journal

CONFIG = Path(__file__).resolve().parent.parent / "config" / "table-6max.toml"
SEED = 20240917


def hand_from_events(events: list[dict], hand: int) -> dict:
    """The cards of ``hand`` as its secure events tell them: hole cards by seat, board, burns, folded seats."""
    seen = {"hole_cards": {}, "board": [], "burn_cards": [], "folded": []}
    for e in events:
        if e["hand"] != hand:
            continue
        if e["type"] == "card_dealt":
            seen["hole_cards"].setdefault(e["seat"], []).append(e["card"])
        elif e["type"] == "board_card":
            seen["board"].append(e["card"])
        elif e["type"] == "burn":
            seen["burn_cards"].append(e["card"])
        elif e["type"] == "fold":
            seen["folded"] = sorted(seen["folded"] + [e["seat"]])
    return seen


def hand_in_snapshot(snapshot: dict) -> dict:
    return {"hole_cards": {s["seat"]: s["hole_cards"] for s in snapshot["seats"] if s["hole_cards"]},
            "board": snapshot["board"], "burn_cards": snapshot["burn_cards"],
            "folded": [s["seat"] for s in snapshot["seats"] if s["folded"]]}


@pytest.fixture(scope="module")
def cut_after_hand_3(tmp_path_factory):
    """A journal whose last step ended hand 3, with the retention run after every hand as the daemon runs it;
    the secure snapshot of that moment; the journal's events as published."""
    path = tmp_path_factory.mktemp("restart") / "table.journal"
    config = load_config(CONFIG)
    journal = Journal(path)
    assert journal.open().ok
    table = SimulatedTable(config, SimOptions(hands=None, seed=SEED, speed=0, pace_s=0.5, link="direct"), None,
                           journal)
    try:
        t = 1000.0
        while table.pipeline.controller.hand < 3 or table.pipeline.controller.in_hand:
            table.advance(t)
            ended = any(e.type == "hand_ended" for e in table.step(t))
            t += table.cycle_s
            if ended:  # delivered, then the retention: what a daemon that ran for a while has left on disk
                for feed in ("public", "secure"):
                    journal.mark_delivered(feed, journal.last_seq())
                journal.prune()
            assert t < 1000.0 + 600, "three hands did not end"
        before = table.pipeline.controller.snapshot(secure=True)
    finally:
        table.close()
        journal.close()
    journal = Journal(path)
    assert journal.open().ok
    try:
        events = [e.payload(secure=True) for e in journal.events_after(0, limit=10**6)]
    finally:
        journal.close()
    return path, config, t, before, events


@pytest.mark.parametrize("program", ["same", "upgraded"])
def test_a_table_restarted_just_after_a_hand_ended_shows_that_hand(cut_after_hand_3, tmp_path, caplog, program):
    original, config, t, before, events = cut_after_hand_3
    assert events[-1]["type"] == "hand_ended" and events[-1]["hand"] == 3  # the cut: nothing after the hand's end
    ended = hand_from_events(events, 3)
    assert len(ended["hole_cards"]) > 1 and ended["board"] and ended["folded"]  # a hand worth showing
    assert hand_in_snapshot(before) == ended  # the table showed the ended hand before the restart

    path = tmp_path / "table.journal"
    path.write_bytes(original.read_bytes())  # (closed cleanly: no -wal file to copy)
    journal = Journal(path)
    assert journal.open().ok
    if program == "upgraded":  # as another version of the program finds the journal: this code's pickle is not its
        latest = journal.latest_checkpoint()
        assert latest.state["base"]  # hand 3 ended on a clear table: the checkpoint has an explicit state
        journal.save_checkpoint(latest.input_id, {**latest.state, "code": "another-version",
                                                  "controller": base64.b64encode(b"junk").decode()})
    restarted = SimulatedTable(config, SimOptions(hands=None, seed=SEED, speed=0, link="direct"), None, journal)
    try:
        with caplog.at_level("WARNING"):
            restarted.pipeline.restore(t)
        assert ("another version of the program" in caplog.text) == (program == "upgraded")
        assert "replay differs" not in caplog.text
        after = restarted.pipeline.controller.snapshot(secure=True)
    finally:
        restarted.close()
        journal.close()
    assert (after["hand"], after["phase"], after["seq"]) == (3, "waiting", events[-1]["seq"])
    assert hand_in_snapshot(after) == ended
    assert {**after, "t": None} == {**before, "t": None}  # and everything else the table showed
