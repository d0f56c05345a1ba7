"""Equity of the stud games for the broadcast: a stud hand dealt through the simulated antennas, its spot taken by the
equity worker (a process of its own) from the table's secure snapshot, against an independent enumeration that
ranks the hands with pokerkit's evaluators (none of controller.equity's code is used)."""

from __future__ import annotations

from itertools import permutations

import pytest

from controller.cards import FULL_DECK
from controller.domain import DomainEvent
from controller.rotation import Game
from rfid_table.service.equity_worker import EquityWorker
from test_schemas import problems
from test_stud_table import street, table, third_street

pokerkit = pytest.importorskip("pokerkit")

# Sixth street, heads-up: seat 1's two pair (jacks and nines) against seat 2's four hearts (and, in the low games,
# four low cards). Seat 3 folded on fourth street: its down and up cards are out of the deck, as are the burns.
HANDS = {1: "As 9d 9c Jh Ts Jd", 2: "Qh 2h 8h Kh 3c 5d"}
FOLDED = "6s 7s Ks 2c"
BURNS = ("Ac", "Ad", "Ah")


def deal_to_sixth_street(game: str):
    t = table(players=(1, 2, 3), game=game)
    third_street(t, {1: "As 9d 9c", 2: "Qh 2h 8h", 3: "6s 7s Ks"})
    street(t, BURNS[0], {1: "Jh", 2: "Kh", 3: "2c"})
    for card in FOLDED.split():  # seat 3 folds: its cards to the muck
        t.put(card, "muck")
    street(t, BURNS[1], {1: "Ts", 2: "3c"})
    street(t, BURNS[2], {1: "Jd", 2: "5d"})
    return t


def reference(game: str) -> dict[int, dict[str, float]]:
    """Each seat's shares over every seventh-street card pair it and the other seat can be dealt."""
    hands = {seat: cards.split() for seat, cards in HANDS.items()}
    seen = {c for cards in hands.values() for c in cards} | set(FOLDED.split()) | set(BURNS)
    stub = [c for c in FULL_DECK if c not in seen]
    kinds = {"": pokerkit.RegularLowHand if game == "razz" else pokerkit.StandardHighHand}
    if game == "stud8":
        kinds["low_"] = pokerkit.EightOrBetterLowHand

    def ranked(kind, seat: int, card: str):  # pokerkit's hand (greater is better), None: no eight-or-better low
        try:
            return kind.from_game("".join(hands[seat] + [card]))
        except ValueError:
            return None

    # a seat's hand depends on its own seventh card alone: rank each once
    ranks = {(key, seat, card): ranked(kind, seat, card) for key, kind in kinds.items() for seat in hands
             for card in stub}
    shares = {seat: {"win": 0, "tie": 0, "low_win": 0, "low_tie": 0} for seat in hands}
    n = 0
    for one, two in permutations(stub, 2):
        for key in kinds:
            made = {seat: hand for seat, hand in ((1, ranks[key, 1, one]), (2, ranks[key, 2, two])) if hand is not None}
            if not made:
                continue
            best = max(made.values())
            winners = [seat for seat, hand in made.items() if hand == best]
            for seat in winners:
                shares[seat][key + ("win" if len(winners) == 1 else "tie")] += 1
        n += 1
    return {seat: {k: v / n for k, v in counts.items()} for seat, counts in shares.items()}


@pytest.mark.parametrize("game", ["stud", "stud8", "razz"])
def test_sixth_street_equity_is_the_exact_figure_and_stays_secret(game):
    t = deal_to_sixth_street(game)
    assert t.controller.snapshot(secure=False)["phase"] == "sixth"
    worker = EquityWorker(7, omaha=False, games=(Game.named(game, "", 7),))  # as the daemon makes it for this table
    try:
        worker.collect(t.controller, 10.0, [DomainEvent(100, "card_dealt", 10.0, 1)])  # sixth street dealt
        worker.offer(t.controller)
        assert worker.pending and worker.wait(30)
        result = worker.collect(t.controller, 11.0, [])
    finally:
        worker.close()
    assert result is not None
    event = result[1]
    # the numbers would tell the down cards: the public feed has the street alone
    assert event.payload(secure=False)["street"] == "sixth"
    assert not {"hands", "dead", "exact"} & set(event.payload(secure=False))
    secure = event.payload(secure=True)
    for schema, payload in (("event.public.schema.json", event.payload(secure=False)),
                            ("event.secure.schema.json", secure)):
        assert not problems(schema, {**payload, "epoch": "stud-equity"})  # (as the daemon publishes it)
    assert secure["exact"] and secure["runouts"] == 33 * 32
    assert secure["dead"] == sorted(FOLDED.split() + list(BURNS))
    expected = reference(game)
    for hand in secure["hands"]:
        want = expected[hand["seat"]]
        assert hand["win"] == pytest.approx(want["win"], abs=1e-4)
        assert hand["tie"] == pytest.approx(want["tie"], abs=1e-4)
        if game == "stud8":
            assert (hand["low_win"], hand["low_tie"]) == (pytest.approx(want["low_win"], abs=1e-4),
                                                          pytest.approx(want["low_tie"], abs=1e-4))
        else:
            assert "low_win" not in hand
    if game == "stud":
        # worked by hand: seat 2 wins with a heart (7 of 33 left) unless seat 1 fills up (Jc, Js, 9s, and 9h when
        # it is not seat 2's heart): (1 * 29 + 6 * 28) / (33 * 32)
        assert [h["win"] for h in secure["hands"]] == [round(1 - 197 / 1056, 4), round(197 / 1056, 4)]
