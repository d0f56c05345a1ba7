"""Equity and outs against an independent exhaustive enumeration, on a few hundred random spots.

The reference below enumerates every runout itself and ranks every hand as the best five-card combination it can
make (Hold'em: any five of the seven; Omaha: exactly two hole and three board cards), with phevaluator's
five-card evaluation only and phevaluator's own card ids: none of controller.equity's code is used.
"""

import dataclasses
import random
import time
from itertools import combinations

import pytest
from phevaluator import Card, evaluate_cards

from conftest import ListSink
from controller.cards import FULL_DECK
from controller.domain import DomainEvent
from controller.equity import equity
from controller.game import GameController
from rfid_table.service.equity_worker import EquityWorker
from rfid_table.service.journal import Journal
from rfid_table.service.replay import replay
from rfid_table.devtools.simulate import SimOptions, SimulatedTable


def best(hole, board, omaha):
    if omaha:
        return min(evaluate_cards(*two, *three) for two in combinations(hole, 2) for three in combinations(board, 3))
    return min(evaluate_cards(*five) for five in combinations(list(hole) + list(board), 5))


def reference(hole, board, dead, omaha):
    ids = {s: [Card(c).id_ for c in cards] for s, cards in hole.items()}
    board_ids = [Card(c).id_ for c in board]
    used = {Card(c).id_ for c in [*board, *dead, *(c for cards in hole.values() for c in cards)]}
    stub = [i for i in range(52) if i not in used]
    wins = {s: 0 for s in hole}
    ties = {s: 0 for s in hole}
    n = 0
    for extra in combinations(stub, 5 - len(board)):
        ranks = {s: best(h, board_ids + list(extra), omaha) for s, h in ids.items()}
        top = min(ranks.values())
        leaders = [s for s, r in ranks.items() if r == top]
        for s in leaders:
            (wins if len(leaders) == 1 else ties)[s] += 1
        n += 1
    outs = {}
    if len(board) in (3, 4):
        now = {s: best(h, board_ids, omaha) for s, h in ids.items()}
        behind = [s for s, r in now.items() if r != min(now.values())]
        for s in behind:
            outs[s] = []
        for card in stub:
            ranks = {s: best(h, board_ids + [card], omaha) for s, h in ids.items()}
            top = min(ranks.values())
            leaders = [s for s, r in ranks.items() if r == top]
            if len(leaders) == 1 and leaders[0] in outs:
                outs[leaders[0]].append(str(Card(card)))
    return {s: wins[s] / n for s in hole}, {s: ties[s] / n for s in hole}, outs, n


def random_spot(rng, seats, board_cards, hole_count, dead_count):
    deck = list(FULL_DECK)
    rng.shuffle(deck)
    hole = {seat: [deck.pop() for _ in range(hole_count)] for seat in rng.sample(range(1, 11), seats)}
    board = [deck.pop() for _ in range(board_cards)]
    dead = [deck.pop() for _ in range(dead_count)]
    return hole, board, dead


def canonical(card):
    return card[0].upper() + card[1].lower()


SPOTS = (
    # (omaha, hole cards, seats range, board cards, how many spots)
    [(False, 2, (2, 9), 4, 100), (False, 2, (2, 4), 3, 50), (False, 2, (2, 9), 5, 40)]
    + [(True, 4, (2, 5), 4, 50), (True, 4, (2, 2), 3, 15), (True, 5, (2, 3), 4, 15), (True, 6, (2, 3), 5, 15)]
)


@pytest.mark.slow
@pytest.mark.parametrize("omaha,hole_count,seat_range,board_cards,count", SPOTS)
def test_equity_and_outs_match_an_exhaustive_enumeration(omaha, hole_count, seat_range, board_cards, count):
    rng = random.Random(hash((omaha, hole_count, board_cards)) & 0xFFFF)
    for _ in range(count):
        hole, board, dead = random_spot(rng, rng.randint(*seat_range), board_cards, hole_count, rng.randint(0, 6))
        got = equity(hole, board, dead, omaha=omaha)
        wins, ties, outs, n = reference(hole, board, dead, omaha)
        assert got.exact and got.runouts == n and got.stderr == 0
        for seat in got.seats:
            where = f"{hole} board {board} dead {dead}: seat {seat.seat}"
            assert seat.win == pytest.approx(wins[seat.seat], abs=1e-12), where
            assert seat.tie == pytest.approx(ties[seat.seat], abs=1e-12), where
            if board_cards == 5:
                assert seat.outs is None, where
            else:
                expected = outs.get(seat.seat)
                assert (None if seat.outs is None else sorted(seat.outs)) == \
                    (None if expected is None else sorted(canonical(c) for c in expected)), where


def test_dead_cards_are_not_outs():
    # Seat 2 draws to the nut flush: nine hearts, two of them mucked by a folded player and one burned.
    hole = {1: ["As", "Ad"], 2: ["Kh", "Qh"]}
    board = ["2h", "7h", "9c"]
    live = equity(hole, board)
    assert len(live.seats[1].outs) >= 9
    dead = equity(hole, board, dead=["3h", "4h", "5h"])
    assert not {"3h", "4h", "5h"} & set(dead.seats[1].outs)
    assert len(dead.seats[1].outs) == len(live.seats[1].outs) - 3
    assert dead.seats[1].win < live.seats[1].win
    assert live.seats[0].outs is None  # the leader has no outs to name


def test_preflop_is_sampled_within_its_stated_error():
    # Forced to sample a flop spot, the answer stays within four of its standard errors of the exact one.
    rng = random.Random(5)
    for _ in range(10):
        hole, board, dead = random_spot(rng, 3, 3, 2, 2)
        exact = equity(hole, board, dead)
        sampled = equity(hole, board, dead, exact_limit=0, samples=3000)
        assert not sampled.exact and sampled.runouts == 3000 and 0 < sampled.stderr <= 0.5 / 3000 ** 0.5 + 1e-9
        for a, b in zip(exact.seats, sampled.seats):
            assert abs(a.win - b.win) <= 4 * sampled.stderr + 1e-9
            assert abs(a.tie - b.tie) <= 4 * sampled.stderr + 1e-9
    pre = equity({1: ["As", "Ah"], 2: ["Ks", "Kh"]})
    assert pre.street == "preflop" and not pre.exact
    assert pre.seats[0].win == pytest.approx(0.82, abs=4 * pre.stderr + 0.005)  # aces over kings, about 82 %
    assert pre.as_dict() == equity({2: ["Ks", "Kh"], 1: ["As", "Ah"]}).as_dict()  # the same spot, the same draw


@pytest.mark.parametrize("hole,board,dead,message", [
    ({1: ["As", "Ah"]}, [], [], "two live seats"),
    ({1: ["As", "Ah"], 2: ["As", "Kh"]}, [], [], "As is given twice"),
    ({1: ["As", "Ah"], 2: ["Ks", "Kh"]}, ["2c", "3c"], [], "0, 3, 4 or 5 cards"),
    ({1: ["As", "Ah"], 2: ["Ks", "Kh"]}, ["2c", "3c", "4c"], ["2c"], "2c is given twice"),
    ({1: ["As", "Ah"], 2: ["Ks", "Xh"]}, [], [], "'Xh' is not a card"),
])
def test_bad_spots_are_refused_with_what_is_wrong(hole, board, dead, message):
    with pytest.raises(ValueError, match=message):
        equity(hole, board, dead)


# ---- the equity event, computed by the daemon's worker process ------------------------------------------------



def test_the_daemon_publishes_equity_after_every_change_secret_on_the_public_branch(table_config, tmp_path):
    config = dataclasses.replace(table_config, broadcast_equity=True, broadcast_delay_s=0.0)
    journal = Journal(tmp_path / "journal.db")
    journal.open()
    sink = ListSink()
    table = SimulatedTable(config, SimOptions(hands=3, seed=11, speed=0, pace_s=0.3, link="direct", players=6,
                                              fold_chance=0.15), sink, journal)
    worker = table.pipeline.equity
    t = 1000.0
    while table.advance(t):
        table.step(t)
        if worker.pending:  # let the worker answer before the dealer's next card (a dealer is slower than it)
            assert worker.wait(10), "the equity worker did not answer within 10 s"
            table.step(t)
        t += table.cycle_s
    table.close()
    events = sink.events
    assert [e.seq for e in events] == list(range(1, len(events) + 1))  # one gapless sequence, equity included
    equities = [e for e in events if e.type == "equity"]
    assert {e.public["street"] for e in equities} >= {"preflop", "flop", "turn", "river"}
    hole, board, dead, checked = {}, [], [], 0
    for event in events:
        if event.type == "hand_started":
            hole, board, dead, folded = {}, [], [], set()
        elif event.type == "card_dealt":
            hole.setdefault(event.public["seat"], []).append(event.secret["card"])
        elif event.type == "burn":
            dead.append(event.secret["card"])
        elif event.type == "board_card":
            board.append(event.public["card"])
        elif event.type == "fold":
            folded.add(event.public["seat"])
            dead += hole[event.public["seat"]]
        elif event.type == "equity":
            assert set(event.public) == {"street"}  # public/events: nothing that reveals a hole card
            assert "win" not in str(event.payload(secure=False))
            live = {s: c for s, c in hole.items() if s not in folded}
            expected = equity(live, board, dead).as_dict()
            assert event.secret["hands"] == expected["hands"], f"hand {event.hand} seq {event.seq}"
            assert event.secret["exact"] == (len(board) >= 3)
            assert sorted(event.secret["dead"]) == sorted(dead)
            checked += 1
    assert checked == len(equities) >= 3 * 2
    # The events are journaled inputs: a restart replays them with the same seqs and the same numbers.
    again = GameController(config.table_setup(), config.betting_setup(), config.audit_hands)
    replayed = replay(journal, again)
    assert replayed.mismatches == [] and again.seq == events[-1].seq
    journal.close()


class Table:
    """A controller's picture for the worker: a secure snapshot that the test changes, and the event numbering."""

    def __init__(self):
        self.seq, self.hand = 10, 1
        self.seats = {1: ["As", "Ah"], 2: ["Kd", "Qd"], 3: ["7c", "2s"]}
        self.folded: set[int] = set()
        self.board = ["Ts", "9d", "3h"]

    def snapshot(self, secure):
        return {"phase": "flop", "hand": self.hand, "misdeal": False, "board": list(self.board), "burn_cards": ["8c"],
                "players": sorted(self.seats), "betting": None,
                "seats": [{"seat": n, "cards": 2, "folded": n in self.folded, "hole_cards": c}
                          for n, c in self.seats.items()]}

    def numbered_event(self, type_, t, public, secret=None):
        self.seq += 1
        return DomainEvent(self.seq, type_, t, self.hand or None, public, secret or {})


def cycle(worker, table, *types):
    """One daemon cycle: its events (of these types), the worker's result if any, then the offer."""
    events = [DomainEvent(table.seq + i + 1, kind, 1.0, table.hand) for i, kind in enumerate(types)]
    table.seq += len(events)
    result = worker.collect(table, 2.0, events)
    worker.offer(table)
    return [result[1]] if result is not None else []


def test_a_result_survives_a_cycle_of_other_events_and_a_stale_one_is_dropped():
    table = Table()
    worker = EquityWorker(hole_cards=2, omaha=False)
    try:
        assert cycle(worker, table, "board_card") == [] and worker.pending
        assert worker.wait(20)
        # the result is back, but this cycle has a betting action (the spot may have changed): it waits a cycle
        assert cycle(worker, table, "action") == []
        (first,) = cycle(worker, table)
        assert first.public == {"street": "flop"} and [h["seat"] for h in first.secret["hands"]] == [1, 2, 3]
        assert first.secret["dead"] == ["8c"] and not worker.pending
        # seat 3 folds; before its equity is journaled the turn comes: only the equity of the spot now goes out
        table.folded.add(3)
        assert cycle(worker, table, "fold") == [] and worker.pending
        assert worker.wait(20)  # the fold's result is back ...
        table.board.append("4c")
        assert cycle(worker, table, "board_card") == []  # ... and stale now
        assert worker.wait(20)
        (turn,) = cycle(worker, table)
        assert turn.public == {"street": "turn"} and [h["seat"] for h in turn.secret["hands"]] == [1, 2]
        assert sorted(turn.secret["dead"]) == ["2s", "7c", "8c"]
        assert turn.secret["hands"] == equity({1: ["As", "Ah"], 2: ["Kd", "Qd"]}, table.board,
                                              ["8c", "7c", "2s"]).as_dict()["hands"]
        assert not worker.pending and cycle(worker, table) == []
        # seat 2 folds too: one live seat, nothing to compute
        table.folded.add(2)
        assert cycle(worker, table, "fold") == [] and not worker.pending
    finally:
        worker.close()
