"""Stud and hi-lo details a viewer or the floor notices: the equity of seven or eight stud players, whose deck runs
short on seventh street; a stud seat's up card read as fast as a down card; a hi-lo hand run twice in PokerStars'
layout; a hi-lo pot's halves as docs/events.md shows them."""

from __future__ import annotations

import json
import re
from pathlib import Path

from controller.cards import FULL_DECK
from rfid_table.config.table import load_config
from rfid_table.devtools.simulate import SimOptions, SimulatedTable
from rfid_table.service.equity_worker import GameKind, compute, stud_spot_of
from test_expected_card import cycles_to_deal
from test_hilo import EVENT_SCHEMA, HiLoTable
from test_rulings import of
from test_stud_table import street, table as stud_table, third_street

EIGHT = tuple(range(1, 9))
STUD = GameKind(7, False, False, "stud")
STUD_CONFIG = Path(__file__).resolve().parents[1] / "config" / "table-stud.toml"  # the simulated reader


def test_eight_stud_players_get_their_equity_the_seventh_card_drawn_as_the_community_card():
    """Eight players' 56 cards and the burns are more than 52: on seventh street the last card is one card every
    hand shares. The equity counts it so, from third street on, where it once gave no equity at all."""
    rolled_up = stud_table(players=EIGHT)  # seat 1's three aces against seven unpaired hands
    third_street(rolled_up, {1: "As Ah Ad", 2: "2s 7h Jc", 3: "3d 8s Qc", 4: "4c 9d Kh", 5: "5h Ts 2c",
                             6: "6s Jd 3h", 7: "7c Qd 4s", 8: "8d Ks 5c"})
    body = compute(stud_spot_of(rolled_up.controller.snapshot(secure=True)), STUD)
    third = body["secret"]
    assert (body["public"]["street"], third["exact"], third["runouts"]) == ("third", False, 10_000)
    assert [h["seat"] for h in third["hands"]] == list(EIGHT)
    aces, *others = third["hands"]
    assert aces["win"] > 0.5 and all(h["win"] < 0.15 for h in others)

    t = stud_table(players=EIGHT)
    deck = list(FULL_DECK)
    third_street(t, {s: " ".join(deck[3 * (s - 1):3 * s]) for s in EIGHT})
    rest = deck[24:]
    for _street in ("fourth", "fifth", "sixth"):
        street(t, rest.pop(0), {s: rest.pop(0) for s in EIGHT})
    # one card left for eight players: it is the community card, and it gives seat 8 a straight (T-J-Q-K and the
    # ace) over seat 5's three aces (tests/test_stud_table.py deals the same hand to the showdown)
    sixth = compute(stud_spot_of(t.controller.snapshot(secure=True)), STUD)["secret"]
    assert (sixth["exact"], sixth["runouts"]) == (True, 1)
    assert [h["seat"] for h in sixth["hands"] if h["win"] == 1.0] == [8]


def test_a_stud_seats_up_card_is_believed_on_its_first_read_when_it_is_due_there():
    """The readers believe a new card on its first read in the zones the deal brings it to next: at a stud table a
    seat's third to sixth cards on its up-card antenna (seatN.up), the others on its down-card antenna. A card
    where no card is due still needs its two reads."""
    config = load_config(STUD_CONFIG)  # present_after_cycles = 2
    sim = SimulatedTable(config, SimOptions(hands=None, link="direct"), None)
    try:
        uids = iter(config.decks["A"])
        sim.pipeline.submit({"command": "seats", "seats": [1, 2, 3], "role": "floor", "user": "test"})
        t = 1000.0
        sim.step(t)
        t += sim.cycle_s
        for _round in range(2):  # two down cards each, from the dealer's left
            for seat in (1, 2, 3):
                reads, t = cycles_to_deal(sim, t, next(uids), f"seat{seat}.cards")
                assert reads == 1
        door, t = cycles_to_deal(sim, t, next(uids), "seat1.up")
        assert door == 1
        surprise = next(uids)  # a second up card to seat 1 while seats 2 and 3 are due their door cards
        sim.field.place(surprise, "seat1.up")
        sim.step(t)
        assert surprise not in sim.pipeline.tracker.present()["seat1.up"]
        sim.step(t + sim.cycle_s)
        assert surprise in sim.pipeline.tracker.present()["seat1.up"]
    finally:
        sim.close()


def test_a_hi_lo_hand_run_twice_writes_each_runs_halves_collected_as_pokerstars_does():
    """PokerStars writes a hi-lo hand run twice with a "collected ... from pot" line per half of each run, the high
    half first, so a seat that won the high half and tied the low has two lines (its own history of a Courchevel
    hi-lo hand run twice: "Player0 collected $40.75 from pot", "Hero collected $20.38 from pot", "Player0 collected
    $20.37 from pot"). All in before the flop, 300 in the pot, 150 a run: Cem's three kings take the first run's
    high half, Anna's four queens the second's; Anna and Bo tie each low (A-2 both), 40 and 35 of its 75 (the
    table's smallest chip is 5, the odd one to the first seat left of the button)."""
    table = HiLoTable(stack=100)
    table.chips(1, 25, 25)
    table.chips(2, 100)
    table.deal_hands({1: "Ad 2c Qc Qs", 2: "As 2d Jc Jh", 3: "Ks Kh 9c 9d"})
    table.chips(3, 100)
    table.chips(1, 25, 25)
    table.command("run_it", times=2, role="dealer", user="bob")
    table.board_to_river("2h 7s 8s", "5h 3d 7c Kd Td")
    table.board_to_river("4c 4d 4h", "5d 3h 8c Qd Qh")
    table.showdown()
    [history] = of(table.events, "hand_history")
    text = history.secret["pokerstars_complete"]
    first, second = text.split("*** FIRST SHOW DOWN ***\n")[1].split("*** SUMMARY ***")[0].split(
        "*** SECOND SHOW DOWN ***\n")
    assert [line for line in first.splitlines() if "collected" in line] == [
        "seat3 collected 75 from pot", "seat1 collected 40 from pot", "seat2 collected 35 from pot"]
    assert [line for line in second.splitlines() if "collected" in line] == [
        "seat1 collected 75 from pot", "seat1 collected 40 from pot", "seat2 collected 35 from pot"]
    assert "and won (115) with HI: four of a kind, Queens; LO: 8,5,3,2,A" in text  # the summary: the run's whole


def test_the_hi_lo_showdown_of_docs_events_is_what_the_table_publishes():
    """docs/events.md's example of a quartered pot's `halves`, against the hand played: seat 3's flush high, seats 1
    and 2 tied low with A-5 in hand and the board's 2-3-4."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "events.md").read_text(encoding="utf-8")
    [example] = re.findall(r"### Hi-lo halves\n.*?```json\n(.*?)\n```", text, re.S)
    documented = json.loads(example)
    table = HiLoTable()
    table.chips(1, 25, 25)
    table.chips(2, 100)
    table.deal_hands({1: "Ac 5s Qh Qd", 2: "Ad 5h Jh Jd", 3: "Ks 9s Kc 9c"})
    table.chips(3, 100)
    table.chips(1, 25, 25)
    table.board_to_river("7d 8d Td", "2s 3s 4h Ts 6c")
    table.showdown()
    [published] = [e for e in table.published() if e["type"] == "showdown"]
    assert {k: v for k, v in documented.items() if k not in ("t", "epoch")} == \
        {k: v for k, v in published.items() if k != "t"}
    assert EVENT_SCHEMA.is_valid(documented)
