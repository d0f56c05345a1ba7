"""The result a table without chips publishes: the best hand the cards show (docs/mqtt.md, "A hand's end").

Such a table reads no bets, so it awards no chips; it reads the cards still live when the hand ends. One live seat
won the hand uncontested. Two or more live seats with the whole board: the best high hand of the cards read wins
(controller.showdown's evaluation: hold'em from two hole cards, Omaha's two-plus-three from four or more), a tie
names every seat that shares it. A board not dealt out, or several boards: no winner is named (the table cannot know
what the players agreed). A stud hand: the best hand of each live seat's seven cards (and the community card where
the deck ran short; razz: the best A-5 low). A hi-lo game's low half is the chip layer's: this names the high hand
only.
"""

from __future__ import annotations

from controller.betting import NLHE, PLO, RAZZ, STUD, STUD8
from controller.events import HandEnded, Showdown
from controller.outbox import Outbox
from controller.showdown import hand_rank


STUD_VARIANTS = {"stud": STUD, "stud8": STUD8, "razz": RAZZ}
STUD_CARDS = 7


def cards_showdown(ended: HandEnded, hole_cards: int, out: Outbox, stud: str | None = None) -> None:
    """Publish ``showdown`` for the hand that is ending: ``winners`` (and, when two or more were live, ``order``,
    the live seats, whose cards are on the secure branch). ``stud``: the hand's stud game, if it is one."""
    live = list(ended.live_seats)
    hands = {seat: list(cards) for seat, cards in ended.hole_cards}
    if len(live) == 1:
        out.publish(Showdown((), tuple(live)))
        return
    winners: list[int] = []
    if stud is not None and len(live) >= 2 and all(len(hands.get(seat, ())) + len(ended.board) == STUD_CARDS
                                                   for seat in live):
        ranks = {seat: hand_rank(STUD_VARIANTS[stud], hands[seat], ended.board) for seat in live}
        winners = sorted(seat for seat in live if ranks[seat] == min(ranks.values()))
    elif stud is None and len(live) >= 2 and len(ended.board) == 5 and len(ended.boards) <= 1 \
            and all(len(hands.get(seat, ())) == hole_cards for seat in live):
        variant = PLO if hole_cards >= 4 else NLHE
        ranks = {seat: hand_rank(variant, hands[seat], ended.board) for seat in live}
        best = min(ranks.values())  # phevaluator: smaller is stronger
        winners = sorted(seat for seat in live if ranks[seat] == best)
    out.publish(Showdown(tuple(live), tuple(winners), hands=tuple((s, tuple(hands.get(s, []))) for s in live)))
