"""A stud hand whose deck ran short (eight players to seventh street): the one community card in each hand history
as the formats write a board card, and a PHH that plays back to the same hand on the table."""

from __future__ import annotations

import random

import pytest

pytest.importorskip("phevaluator")

from controller import phh  # noqa: E402
from controller.showdown import award  # noqa: E402
from sim.replay import ReplayTable  # noqa: E402
from sim.stud_hands import chip_table, deal_with_chips, engine_stud_hand  # noqa: E402


@pytest.fixture(scope="module")
def histories():
    """Eight razz players see seventh street: the deck is empty after its burn, the burn card turned up is shared."""
    seats = list(range(1, 9))
    hand = engine_stud_hand(random.Random(203), "razz", seats, {s: 4000 for s in seats}, (1, 2, 5, 10))
    [community] = [card for kind, card, _ in hand.moves if kind == "board"]
    table = chip_table(hand)
    deal_with_chips(table, hand)
    [history] = [e for e in table.events if e.type == "hand_history"]
    return community, history


def test_phh_deals_the_community_card_as_a_board_card_and_plays_back_the_same(histories):
    community, history = histories
    complete = phh.loads(history.secret["phh_complete"])
    seventh = complete["actions"][complete["actions"].index(f"d db {community}") - 1:]
    assert not any(line.startswith("d dh") for line in seventh)  # nobody is dealt a seventh card of his own
    assert f"d db {community}" in phh.loads(history.public["phh"])["actions"]  # face up: in the public copy too
    hand, hole, board, _shown = phh.replay(complete)
    assert board == [community]
    assert award(hand, hole, board).finishing_stacks == dict(zip(complete["seats"], complete["finishing_stacks"]))
    result = ReplayTable().replay(complete, "short-deck.phh")
    assert result.ok, result.reason


def test_pokerstars_turns_the_community_card_on_the_river_and_names_the_board(histories):
    community, history = histories
    lines = history.secret["pokerstars_complete"].splitlines()
    river = lines.index(f"*** RIVER *** [{community}]")
    assert not any(line.startswith("Dealt to") for line in lines[river:])
    assert f"Board [{community}]" in lines[lines.index("*** SUMMARY ***"):]


def test_open_hand_history_puts_the_community_card_on_the_seventh_street_round(histories):
    community, history = histories
    [seventh] = [r for r in history.secret["ohh_complete"]["ohh"]["rounds"] if r["street"] == "Seventh Street"]
    assert seventh["cards"] == [community]
    assert "Dealt Cards" not in {a["action"] for a in seventh["actions"]}
