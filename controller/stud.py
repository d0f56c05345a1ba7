"""Seven Card Stud, Stud hi-lo and Razz: who brings it in, who acts first, the limit of fourth street, the odd chip.

Pure functions of the cards showing; the betting engine (``controller.betting``) and the table call them. Games:
``stud`` (high), ``stud8`` (high and an eight-or-better low: the high rules decide who acts), ``razz`` (A-5 low).
Seats are compared in ``order``, the seats clockwise from the dealer's left (default: by seat number).

Rules:
* suits rank clubs, diamonds, hearts, spades from the lowest (PP Ties 1: "Clubs, Diamonds, Hearts, Spades"; suits
  only break ties between cards of the same rank, never decide a pot);
* the bring-in: on third street the lowest up card, aces high, brings it in, suits breaking ties (the 2 of clubs is
  the lowest card); in razz the highest up card, aces low, the king of spades the highest (pokerkit 0.7's
  ``Opening.LOW_CARD`` and ``Opening.HIGH_CARD``: rank, then suit); the bring-in may complete to the small bet;
* fourth to seventh street: the best hand showing acts first, pairs and trips counting, straights and flushes not;
  in razz the best low showing (a pair is worse than any unpaired cards). Equal hands showing: the first of them
  clockwise from the dealer's left (pokerkit's ``Opening.HIGH_HAND``/``LOW_HAND``: "then position");
* an open pair on fourth street: the big bet may be made (CA Actions 3c: "if a player opens the betting round in
  Stud variants in the lower limit although a pair is open ..."), in stud high only, where the house allows it
  (``RuleProfile.open_pair_big_bet``; pokerkit does not offer it);
* the odd chip of a split pot goes by the cards, not the seats: the highest card by suit of the winning five-card
  hand (TDA 20-2, for Stud, Razz and either half of Stud/8; CA GR 8: "the player with the highest card (including
  suit priority)"), or, by PP Ties 5b, the highest card by suit among all the player's cards in high games and the
  lowest in low games ("All cards are factored into this determination - Not just the five cards of the hand").
  Which of the two is ``RuleProfile.stud_odd_chip``. Between the high and the low half the odd chip goes high
  (TDA 20-3; PP Ties 5c), as in every hi-lo game (``controller.showdown``).
"""

from __future__ import annotations

from collections import Counter
from typing import Mapping, Sequence

from controller.cards import parse_card

STREETS = ("third", "fourth", "fifth", "sixth", "seventh")
GAMES = ("stud", "stud8", "razz")
SUIT_ORDER = "cdhs"  # clubs lowest, spades highest (PP Ties 1)
HIGH_RANKS = "23456789TJQKA"  # aces high: stud, stud8
LOW_RANKS = "A23456789TJQK"  # aces low: razz

BRING_IN_RULES = {
    "stud": "the lowest up card brings it in, suits clubs, diamonds, hearts, spades from the lowest (PP Ties 1)",
    "stud8": "the lowest up card brings it in, suits clubs, diamonds, hearts, spades from the lowest (PP Ties 1)",
    "razz": "the highest up card brings it in, aces low, the king of spades the highest (PP Ties 1 suit order)",
}
FIRST_TO_ACT_RULES = {
    "stud": "the best hand showing acts first; equal hands: the first from the dealer's left",
    "stud8": "the best high hand showing acts first; equal hands: the first from the dealer's left",
    "razz": "the best low hand showing acts first; equal hands: the first from the dealer's left",
}
OPEN_PAIR_RULE = "CA Actions 3c (an open pair on fourth street: the upper limit may be bet)"


def _check_game(game: str) -> None:
    if game not in GAMES:
        raise ValueError(f"unknown stud game {game!r}; known: {', '.join(GAMES)}")


def card_key(card: str, *, ace_low: bool = False) -> tuple[int, int]:
    """(rank, suit) of a card, both counted from the lowest: aces high unless ``ace_low``."""
    c = parse_card(card)
    return (LOW_RANKS if ace_low else HIGH_RANKS).index(c[0]), SUIT_ORDER.index(c[1])


def _seats_in_order(seats: Sequence[int], order: Sequence[int] | None) -> list[int]:
    if order is None:
        return sorted(seats)
    missing = [s for s in seats if s not in order]
    if missing:
        raise ValueError(f"seats {missing} are not in the dealing order {list(order)}")
    return [s for s in order if s in seats]


def bring_in_seat(up: Mapping[int, str], game: str) -> int:
    """The seat that brings it in on third street, from each live seat's up card (the door card)."""
    _check_game(game)
    if not up:
        raise ValueError("no up cards: no seat can bring it in")
    if game == "razz":
        return max(up, key=lambda s: card_key(up[s], ace_low=True))
    return min(up, key=lambda s: card_key(up[s]))


def showing_key(cards: Sequence[str], *, ace_low: bool = False) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The strength of up cards as a poker hand without straights and flushes: the sizes of the rank groups (four of
    a kind, three, two pair, a pair, no pair), then the ranks, largest group first and higher rank first."""
    counts = Counter(card_key(c, ace_low=ace_low)[0] for c in cards)
    groups = sorted(counts.items(), key=lambda rc: (rc[1], rc[0]), reverse=True)
    return tuple(n for _, n in groups), tuple(r for r, _ in groups)


def first_to_act(showing: Mapping[int, Sequence[str]], game: str, order: Sequence[int] | None = None) -> int:
    """The seat that acts first on fourth to seventh street, from each live seat's up cards.

    Stud and stud8: the best high hand showing; razz: the best low showing (ranked as a high hand with aces low,
    the weakest first). Equal hands: the first in ``order`` (clockwise from the dealer's left)."""
    _check_game(game)
    if not showing:
        raise ValueError("no live seat shows cards")
    seats = _seats_in_order(list(showing), order)
    if game == "razz":
        keys = {s: showing_key(showing[s], ace_low=True) for s in seats}
        best = min(keys.values())
    else:
        keys = {s: showing_key(showing[s]) for s in seats}
        best = max(keys.values())
    return next(s for s in seats if keys[s] == best)


def has_open_pair(showing: Mapping[int, Sequence[str]]) -> bool:
    """Whether any live seat's up cards hold a pair."""
    return any(max(Counter(parse_card(c)[0] for c in cards).values(), default=0) >= 2 for cards in showing.values())


def big_bet_allowed_on_fourth(showing: Mapping[int, Sequence[str]], game: str, house_allows: bool) -> bool:
    """Whether fourth street may be bet at the big bet: an open pair in stud high, where the house allows it
    (CA Actions 3c). Never in stud8 or razz."""
    _check_game(game)
    return house_allows and game == "stud" and has_open_pair(showing)


def odd_chip_order(cards: Mapping[int, Sequence[str]], *, lowest: bool = False, ace_low: bool = False) -> list[int]:
    """Tied winners in the order they receive odd chips: by their highest card by suit, the highest first (TDA 20-2;
    PP Ties 5b; CA GR 8), or with ``lowest`` by their lowest card by suit, the lowest first (PP Ties 5b, low games).
    ``cards``: each winner's cards the house counts (the winning five, or all of them)."""
    if not cards:
        return []
    if lowest:
        keys = {s: min(card_key(c, ace_low=ace_low) for c in cs) for s, cs in cards.items()}
        return sorted(keys, key=lambda s: keys[s])
    keys = {s: max(card_key(c, ace_low=ace_low) for c in cs) for s, cs in cards.items()}
    return sorted(keys, key=lambda s: keys[s], reverse=True)
