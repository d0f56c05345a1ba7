"""How long a ruling waits for the floor, and where a late subscriber finds it (docs/events.md, "How long a ruling
waits"): played on a simulated table (``sim.table_driver``) as tests/test_rulings.py plays them, and through the
daemon's pipeline with a journal for the restarts. Each lifetime quotes the rule it follows."""

from __future__ import annotations

import base64
import json

import pytest
from jsonschema import Draft202012Validator

from conftest import ROOT
from controller.conduct import conduct_profile
from hal.events import SensorEvent
from rfid_table.service.checkpoint import STATE_VERSION, restore, state_of
from rfid_table.service.journal import Checkpoint, Journal
from sim.table_driver import of
from test_conduct_daemon import Driven, chips_config, seated
from test_rulings import Table, checked_to_the_river

SNAPSHOT_SCHEMAS = {secure: Draft202012Validator(json.loads(
    (ROOT / "schemas" / f"snapshot.{'secure' if secure else 'public'}.schema.json").read_text()))
    for secure in (False, True)}


def sensor(table: Table, seat: int, kind: str, active: bool) -> list:
    """A seat sensor changes now (debounced already), as the daemon hands it to the controller."""
    detects = "phone" if kind == "device" else None
    produced = table.controller.handle_sensor(SensorEvent(table.t, seat, kind, active, detects))
    table.events += produced
    return produced + table.run(0.2)


def lapsed(events) -> list[tuple[int, str, str]]:
    return [(e.public["irregularity"], e.public["code"], e.public["resolution"])
            for e in of(events, "irregularity_resolved")]


def waiting(table, secure: bool = False) -> list[dict]:
    return table.controller.snapshot(secure=secure)["irregularities"]


def gather(table: Table) -> list:
    """The dealer gathers the cards (and the chips): the hand ends once the table stays clear."""
    table.clear()
    return table.run(3.0)


# ---- how long each kind waits --------------------------------------------------------------------------------

def test_a_ruling_on_the_hand_lapses_when_the_hand_ends_and_every_screen_is_told():
    """CA GR 11: "A hand may be declared void if the player is not at his seat during a hand": once the hand is
    over there is nothing to void, so the floor's call lapses with it, and says so."""
    table = Table("casinos_austria", chips=False)
    sensor(table, 3, "presence", True)
    table.deal()
    [left] = of(sensor(table, 3, "presence", False), "seat_left")
    assert left.public["needs_floor"] and left.public["ruling"] == "hand_may_be_dead"
    assert [(w["irregularity"], w["type"], w["lapses"]) for w in waiting(table)] == [(left.seq, "seat_left",
                                                                                       "hand_end")]
    ended = gather(table)
    assert lapsed(ended) == [(left.seq, "seat_left", "hand_ended")]
    assert [e.type for e in ended].index("hand_ended") < [e.type for e in ended].index("irregularity_resolved")
    assert waiting(table) == [] and table.controller.floor_pending() == []
    _, refusal = table.try_command("confirm", irregularity=left.seq)
    assert refusal == f"no irregularity {left.seq} waits for the floor"


def test_a_phone_at_a_live_seat_waits_for_the_floor_past_its_hand_and_is_then_only_acknowledged():
    """CA GR 5: the floor may declare the hand void, and penalise "by a warning, a time penalty, the declaration of
    a hand as dead, exclusion from play"; AC 50: "Prípadná penalizácia nastáva po dohraní danej ruky" (a penalty is
    given once the hand is played out). So a breach waits until the floor answers; confirmed once its hand is over,
    it kills no hand (least of all the seat's hand in the next one)."""
    table = Table("casinos_austria", chips=False)
    table.deal()
    [breach] = of(sensor(table, 2, "device", True), "device_breach")
    assert breach.public["ruling"] == "hand_may_be_dead" and breach.public["needs_floor"]
    sensor(table, 2, "device", False)
    ended = gather(table)
    assert "hand_ended" in [e.type for e in ended] and lapsed(ended) == []
    table.deal(seats=(2, 3, 4, 5, 1))  # the next hand
    assert [(w["irregularity"], w["hand"], w["lapses"]) for w in waiting(table)] == [(breach.seq, 1, "never")]
    answered = table.command("confirm", irregularity=breach.seq, note="warned")
    assert [e.public for e in of(answered, "floor_ruling")] == [{
        "irregularity": breach.seq, "code": "device_breach", "decision": "confirmed", "result": "none",
        "note": "warned", "by": "floor/ann"}]
    assert of(answered, "floor_ruling")[0].hand == 1  # the ruling belongs to the breach's hand
    assert not table.controller.snapshot(secure=False)["seats"][1]["folded"] and waiting(table) == []


def test_a_mucked_winning_hand_waits_until_the_next_hand_begins_then_the_fold_stands():
    """TDA 20-6: "Das Lesen einer aufgedeckten Hand kann angefochten werden, bis eine neue Hand beginnt";
    AC 17: "Právo zpochybnit víťaznú ruku končí v momente začiatku novej ruky"; CA Actions 9: "The complaint must
    be made immediately before the next game has started". Unanswered, it lapses at the next hand's first card,
    before the pot goes to the hand left."""
    table = Table()
    winner, loser = checked_to_the_river(table)
    table.fold(winner)  # the dealer mucks the winning hand
    [alert] = of(table.events, "bet_ruling", "winning_hand_mucked")
    gather(table)
    assert [(w["type"], w["code"], w["ruling"], w["answers"], w["lapses"]) for w in waiting(table)] == [
        ("bet_ruling", "winning_hand_mucked", "hand_restored", ["confirm", "override"], "next_hand")]
    # the award is still to be made: the restart state of this moment is the controller's alone, no explicit one
    assert state_of(table.controller)["base"] is False
    produced = table.card("seat1.cards")  # the next hand's first card
    assert lapsed(produced) == [(alert.seq, "winning_hand_mucked", "next_hand")]
    kinds = [e.type for e in produced]
    assert kinds.index("hand_started") < kinds.index("irregularity_resolved") < kinds.index("showdown")
    assert of(produced, "showdown")[0].public["payouts"] == {str(loser): 200}
    assert waiting(table) == []


@pytest.mark.parametrize("rules, lapses", [("tda", "next_hand_action"), ("casinos_austria", "next_hand")])
def test_a_pot_pushed_to_the_wrong_seat_waits_as_long_as_the_house_lets_it_be_disputed(rules, lapses):
    """TDA 20-6: "Fehler bei dem Berechnen oder Zuweisen des Pots können angefochten werden, bis in der nächsten Hand
    wesentliche Handlungen stattgefunden haben"; CA Actions 9: "before the next game has started, after which no
    further corrections are possible" (AC 17 likewise). The house's ``pot_disputes``."""
    table = Table(rules)
    winner, loser = checked_to_the_river(table)
    table.place(*table.tags_in("seat1.bets"), *table.tags_in("seat2.bets"), zone="pot")  # the dealer collects
    table.run(1.0)
    table.place(*table.tags_in("pot"), zone=f"seat{loser}.stack")  # and pushes the pot to the wrong player
    table.run(1.0)
    gather(table)
    counts = of(table.events, "chip_count", "award")
    assert [(e.public["seat"], e.public["needs_floor"]) for e in counts] == sorted([(winner, True), (loser, False)])
    [short] = [e for e in counts if e.public["needs_floor"]]
    assert [(w["irregularity"], w["type"], w["code"], w["lapses"]) for w in waiting(table)] == [
        (short.seq, "chip_count", "award", lapses)]
    # the next hand: the button on seat 1, seat 2 posts the small blind, seat 3 the big blind
    table.chips(2, 25, 25)
    table.chips(3, 100)
    started = table.card("seat2.cards")
    if rules == "casinos_austria":
        assert lapsed(started) == [(short.seq, "award", "next_hand")]
        return
    assert lapsed(started) == []
    table.deal(seats=(3, 4, 5, 1, 2, 3, 4, 5, 1), rounds=1)
    assert lapsed(table.chips(4, 100)) == []  # one call: not yet substantial action (TDA 36, example 1-A)
    assert lapsed(table.chips(5, 100)) == [(short.seq, "award", "next_hand_action")]
    assert waiting(table) == []


# ---- what waits, in both snapshots ---------------------------------------------------------------------------

def test_every_kind_that_waits_is_in_both_snapshots_and_a_picks_cards_only_in_the_secure_one():
    """A late subscriber sees the queue as it is: a breach of the seat sensors and the deal's four-card flop (TDA
    39-1), oldest first, each with the commands that answer it and how long it waits. The cards the floor picks the
    burn card from are on the secure snapshot only (the fourth card is not on the board)."""
    table = Table(chips=False)
    table.deal()
    [breach] = of(sensor(table, 2, "device", True), "device_breach")
    table.burn()
    flop = table.stub[:4]
    table.board(4)
    table.run(2.0)
    [four] = of(table.events, "irregular_card", "four_card_flop")
    public, secure = (table.controller.snapshot(secure=s) for s in (False, True))
    assert public["irregularities"] == [
        {"irregularity": breach.seq, "hand": 1, "type": "device_breach", "code": "device_breach",
         "severity": "stop", "ruling": "warning", "seats": [2], "rules": [],  # the TDA has no rule on devices
         "answers": ["confirm", "override"], "lapses": "never"},
        {"irregularity": four.seq, "hand": 1, "type": "irregular_card", "code": "four_card_flop", "severity": "stop",
         "ruling": "floor_picks_burn", "seats": [], "rules": four.public["rules"],
         "answers": ["floor_pick", "override"], "lapses": "hand_end"}]
    assert secure["irregularities"] == [public["irregularities"][0], {**public["irregularities"][1],
                                                                      "candidates": flop}]
    hole = [card for seat in secure["seats"] for card in seat["hole_cards"]]
    assert not [card for card in [flop[3], *hole] if card in json.dumps(public)]
    for secured, snapshot in ((False, public), (True, secure)):
        assert not list(SNAPSHOT_SCHEMAS[secured].iter_errors({**snapshot, "epoch": "e"}))
    # a public snapshot with the pick's cards breaks its schema
    leaked = {**public, "epoch": "e", "irregularities": secure["irregularities"]}
    assert not SNAPSHOT_SCHEMAS[False].is_valid(leaked)


# ---- what outlives its hand outlives a restart -------------------------------------------------------------

def test_a_restart_from_the_journal_keeps_what_waits_past_its_hand_both_ways(tmp_path, caplog):
    """The daemon stopped between two hands' inputs: restarted by the same program (the checkpoint's pickle) and by
    another version of it (the checkpoint's explicit state, then the inputs since), the table still waits for the
    floor on the breach of the hand before, and the snapshot is the same."""
    path = tmp_path / "journal.db"
    journal = Journal(path)
    assert journal.open().ok
    table = seated(journal=journal)  # Casinos Austria: CA GR 5
    try:
        table.deal()
        [breach] = of(table.sensor("seat1.device", True), "device_breach")
        table.sensor("seat1.device", False)
        table.table.field.clear()  # the hand ends on a clear table: a checkpoint any version can restart from
        table.run(3.0)
        base = journal.latest_checkpoint(base=True)
        assert base.state["state_version"] == STATE_VERSION == 2
        # with the breach, the pot the table could not award (the cards were gathered in the betting): the ruling on
        # the award comes before hand_ended, right after the breach's end
        assert [(w["id"], w["code"], w["lapses"]) for w in base.state["state"]["floor"]] == [
            (breach.seq, "device_breach", "never"), (breach.seq + 2, "hand_ended_in_betting", "next_hand")]
        table.table.field.place(table.uid["Qs"], "seat2.cards")  # the next hand begins: CA Actions 9
        assert [e.public["code"] for e in of(table.run(0.5), "irregularity_resolved")] == ["hand_ended_in_betting"]
        before = {**table.controller.snapshot(secure=True), "t": None}  # (a tick without change is not journaled)
        assert [w["irregularity"] for w in before["irregularities"]] == [breach.seq]
        t = table.t
    finally:
        table.close()
        journal.close()
    for how in ("exact", "state"):
        journal = Journal(path)
        assert journal.open().ok
        if how == "state":  # as another version of the program finds the journal: its pickle is not this code's
            latest = journal.latest_checkpoint()
            journal.save_checkpoint(latest.input_id, {**latest.state, "code": "another-version",
                                                      "controller": base64.b64encode(b"junk").decode()})
        restarted = Driven(chips_config(), journal=journal, t=t)
        try:
            assert restarted.table.pipeline.restore(t) > 0
            assert "replay differs" not in caplog.text
            assert {**restarted.controller.snapshot(secure=True), "t": None} == before, how
            if how == "state":  # (journaled: the restart after it would replay it)
                [ruled] = of(restarted.command("override", irregularity=breach.seq), "floor_ruling")
                assert ruled.public["result"] == "play_on"
        finally:
            restarted.close()
            journal.close()


def test_a_checkpoint_state_of_version_1_restores_with_nothing_waiting():
    """A journal written before the floor's queue was in the explicit state: nothing outlived its hand then."""
    table = Table(chips=False)
    table.deal()
    sensor(table, 2, "device", True)
    gather(table)
    state = table.controller.checkpoint_state()
    assert [w["type"] for w in state["floor"]] == ["device_breach"]
    older = {k: v for k, v in state.items() if k != "floor"}

    class Older:  # the journal of that version: one base checkpoint, its pickle of other code, inputs since it
        def latest_checkpoint(self, base: bool = False) -> Checkpoint:
            return Checkpoint(7, {"format": "checkpoint-v2", "base": True, "state_version": 1, "state": older,
                                  "code": "older", "controller": ""})

        def base_checkpoints(self) -> list[Checkpoint]:
            return [self.latest_checkpoint(base=True)]

        def first_input_id(self) -> int:
            return 8

    fresh = Table(chips=False).controller
    restored, checkpoint, how = restore(Older(), fresh)
    assert (restored, checkpoint.input_id, how) == (fresh, 7, "state")
    assert fresh.snapshot(secure=False)["irregularities"] == [] and fresh.hand == table.controller.hand
