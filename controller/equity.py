"""Equity: each live hand's chance to win and to tie from here, and the outs of the hands behind.

Pure and deterministic: the same spot gives the same answer (a sampled preflop draws its boards from a generator
seeded by the spot itself), so a replay and a test see what the broadcast saw.

* **Exact** whenever the runouts to enumerate are at most ``exact_limit`` (default 20,000: every flop, turn and
  river spot of up to 10 seats, and preflop only with very many dead cards). Preflop heads-up is 1.7 M boards,
  6 seats 0.66 M: that is seconds, not a broadcast's moment, so preflop is **sampled**: ``samples`` boards drawn
  without replacement from the remaining cards, and the result says so with its standard error (the largest over
  the seats, as a share: ``sqrt(p(1-p)/n)``).
* **Dead cards** — burned and mucked cards the table read — are out of the deck ("true outs").
* **Hold'em** (any two hole cards with the board) and **Omaha** (exactly two hole and three board cards; four,
  five or six hole cards).
* **Hi-lo split** (``hi_lo``): ``win`` and ``tie`` are the high half's; ``low_win`` and ``low_tie`` the shares of
  the runouts the seat's eight-or-better low wins alone or ties, and ``no_low`` the share where no live hand makes
  a low (the high hand scoops). Lows are counted by ``controller.showdown.low_rank``.
* **Stud games** (``stud_equity``: stud, stud8, razz): each live seat's cards so far, down and up; the cards still
  to come are each seat's own, drawn from the deck minus every card seen (the live seats' cards and ``dead``: the
  folded hands' up cards, the table's burns). Exact while the deals to enumerate are at most ``exact_limit``
  (sixth street heads-up), sampled before. Razz's ``win`` is the best A-5 low; stud8's as hi-lo above. Where the
  deck will run short on seventh street (seven or eight seats: their cards and a burn before each street are more
  than 52), the seventh card drawn is one community card, as the table deals it.
* **Outs** (flop and turn): for a seat behind now (not the best or tied best hand on the board as it stands), the
  next cards with which it would hold the best hand alone.

phevaluator ranks hands (smaller is stronger), through its integer card ids: the C extension of phevaluator 0.6
evaluates about 5 M seven-card hands a second here; the pure-Python wheel of 0.5.3.1 (what a Raspberry Pi gets
when no wheel for its platform is built) about 0.2 M.
"""

from __future__ import annotations

import math
import random
import zlib
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, Callable, Iterable, Mapping, Sequence

from controller.cards import FULL_DECK, parse_card
from controller.betting import FLHE8 as HOLDEM_HI_LO, PLO8 as OMAHA_HI_LO, STUD8
from controller.showdown import evaluator_id, id_evaluators, low_rank, razz_rank
from controller.stud import GAMES as STUD_GAMES, STREETS as STUD_STREETS

EXACT_LIMIT = 20_000  # runouts enumerated exactly at most; beyond, sampled
SAMPLES = 10_000  # boards drawn when sampled: a standard error of at most 0.5 percentage points


@dataclass(frozen=True)
class SeatEquity:
    seat: int
    win: float  # share of the runouts this seat wins alone
    tie: float  # share of the runouts it ties for the best hand
    outs: tuple[str, ...] | None = None  # next cards that put it ahead alone; None: not behind, or no next card
    low_win: float | None = None  # hi-lo: share of the runouts its low wins alone (None: not a split game)
    low_tie: float | None = None  # hi-lo: share it ties for the best low

    def as_dict(self) -> dict:
        body: dict[str, Any] = {"seat": self.seat, "win": round(self.win, 4), "tie": round(self.tie, 4)}
        if self.low_win is not None and self.low_tie is not None:
            body.update(low_win=round(self.low_win, 4), low_tie=round(self.low_tie, 4))
        if self.outs is not None:
            body["outs"] = list(self.outs)
        return body


@dataclass(frozen=True)
class Equity:
    street: str  # preflop, flop, turn, river
    exact: bool
    runouts: int  # boards enumerated or drawn
    stderr: float  # 0 when exact
    seats: tuple[SeatEquity, ...] = field(default_factory=tuple)
    no_low: float | None = None  # hi-lo: share of the runouts where no live hand makes a low

    def as_dict(self) -> dict:
        body = {"street": self.street, "exact": self.exact, "runouts": self.runouts,
                "stderr": round(self.stderr, 4), "hands": [s.as_dict() for s in self.seats]}
        if self.no_low is not None:
            body["no_low"] = round(self.no_low, 4)
        return body


STREETS = {0: "preflop", 3: "flop", 4: "turn", 5: "river"}


def _ranker(omaha: bool, hole_count: int) -> Callable[[Sequence[int], Sequence[int]], int]:
    """rank(hole ids, board ids) → phevaluator rank, for a board of 3 to 5 cards."""
    evaluate_cards, omaha_evaluator = id_evaluators(omaha)
    if not omaha or omaha_evaluator is None:  # (Omaha has its evaluator)
        return lambda hole, board: evaluate_cards(*board, *hole)
    evaluate_omaha_cards = omaha_evaluator
    fours = list(combinations(range(hole_count), 4))

    def omaha_rank(hole: Sequence[int], board: Sequence[int]) -> int:
        if len(board) == 5:
            if hole_count == 4:
                return evaluate_omaha_cards(*board, *hole)
            return min(evaluate_omaha_cards(*board, *(hole[i] for i in four)) for four in fours)
        # a partial board (the outs on the flop and turn): exactly three of its cards and two hole cards
        return min(evaluate_cards(*three, *two) for three in combinations(board, 3) for two in combinations(hole, 2))
    return omaha_rank


def _spot_seed(hole: Mapping[int, Sequence[str]], board: Sequence[str], dead: Sequence[str]) -> int:
    text = "|".join(f"{s}:{''.join(c)}" for s, c in sorted(hole.items())) + "|" + "".join(board) + "|" + \
        "".join(sorted(dead))
    return zlib.crc32(text.encode())


def equity(hole: Mapping[int, Sequence[str]], board: Sequence[str] = (), dead: Sequence[str] = (),
           omaha: bool = False, exact_limit: int = EXACT_LIMIT, samples: int = SAMPLES, hi_lo: bool = False
           ) -> Equity:
    """The equity of every live seat (``hole``: seat → its hole cards, two or more seats) on ``board`` (0, 3, 4 or
    5 cards) with ``dead`` cards out of the deck; ``hi_lo``: split high and low, eight or better. Raises ValueError
    naming a bad card or a card given twice."""
    if len(hole) < 2:
        raise ValueError(f"equity needs two live seats or more, got {len(hole)}")
    if len(board) not in STREETS:
        raise ValueError(f"a board has 0, 3, 4 or 5 cards, got {len(board)}")
    hole = {seat: [parse_card(c) for c in cards] for seat, cards in hole.items()}
    counts = {len(cards) for cards in hole.values()}
    if len(counts) != 1 or (omaha and not 4 <= min(counts) <= 6) or (not omaha and counts != {2}):
        raise ValueError(f"every seat needs {'4 to 6' if omaha else '2'} hole cards, the same number each: "
                         f"{ {s: len(c) for s, c in hole.items()} }")
    board = [parse_card(c) for c in board]
    dead = [parse_card(c) for c in dead]
    known = [c for cards in hole.values() for c in cards] + board
    seen: set[str] = set()
    for card in known + dead:
        if card in seen:
            raise ValueError(f"{card} is given twice (hole cards, board and dead cards must differ)")
        seen.add(card)
    rank = _ranker(omaha, counts.pop())
    seats = sorted(hole)
    holes = [[evaluator_id(c) for c in hole[s]] for s in seats]
    board_ids = [evaluator_id(c) for c in board]
    stub = [evaluator_id(c) for c in FULL_DECK if c not in seen]
    to_come = 5 - len(board)
    total = math.comb(len(stub), to_come)
    exact = total <= exact_limit
    runouts: Iterable[Sequence[int]]
    if exact:
        runouts = combinations(stub, to_come)
    else:
        rng = random.Random(_spot_seed(hole, board, dead))
        runouts = (rng.sample(stub, to_come) for _ in range(samples))
    wins = [0] * len(seats)
    ties = [0] * len(seats)
    low_wins = [0] * len(seats)
    low_ties = [0] * len(seats)
    no_low = 0
    low_of = _low_ranker(omaha) if hi_lo else None
    names = {evaluator_id(c): c for c in FULL_DECK}
    hole_names = [hole[s] for s in seats]
    n = 0
    for extra in runouts:
        full = board_ids + list(extra)
        ranks = [rank(h, full) for h in holes]
        best = min(ranks)
        winners = [i for i, r in enumerate(ranks) if r == best]
        if len(winners) == 1:
            wins[winners[0]] += 1
        else:
            for i in winners:
                ties[i] += 1
        if low_of is not None:
            full_names = [names[c] for c in full]
            lows = [low_of(h, full_names) for h in hole_names]
            made = [low for low in lows if low is not None]
            if not made:
                no_low += 1
            else:
                low_winners = [i for i, low in enumerate(lows) if low == min(made)]
                for i in low_winners:
                    (low_wins if len(low_winners) == 1 else low_ties)[i] += 1
        n += 1
    outs = _outs(rank, holes, board_ids, stub) if len(board) in (3, 4) else [None] * len(seats)
    stderr = 0.0 if exact else max(math.sqrt(p * (1 - p) / n) for p in
                                   [w / n for w in wins] + [t / n for t in ties])
    if not hi_lo:
        return Equity(STREETS[len(board)], exact, n, stderr,
                      tuple(SeatEquity(s, wins[i] / n, ties[i] / n, outs[i]) for i, s in enumerate(seats)))
    return Equity(STREETS[len(board)], exact, n, stderr,
                  tuple(SeatEquity(s, wins[i] / n, ties[i] / n, outs[i], low_wins[i] / n, low_ties[i] / n)
                        for i, s in enumerate(seats)), no_low / n)


def _low_ranker(omaha: bool) -> Callable[[Sequence[str], Sequence[str]], int | None]:
    """low(hole names, board names) → the eight-or-better low (smaller is better), None for no low."""
    variant = OMAHA_HI_LO if omaha else HOLDEM_HI_LO
    return lambda hole, board: low_rank(variant, hole, board)


def _outs(rank: Callable[[list[int], list[int]], int], holes: list[list[int]], board: list[int], stub: list[int]
          ) -> list[tuple[str, ...] | None]:
    """Per seat, the next cards that make it the best hand alone, for the seats behind now (None otherwise)."""
    now = [rank(h, board) for h in holes]
    best = min(now)
    behind = [i for i, r in enumerate(now) if r != best]
    outs: list[tuple[str, ...] | None] = [None] * len(holes)
    found: dict[int, list[int]] = {i: [] for i in behind}
    for card in stub:
        full = board + [card]
        ranks = [rank(h, full) for h in holes]
        top = min(ranks)
        leaders = [i for i, r in enumerate(ranks) if r == top]
        if len(leaders) == 1 and leaders[0] in found:
            found[leaders[0]].append(card)
    names = {evaluator_id(c): c for c in FULL_DECK}
    for i, cards in found.items():
        outs[i] = tuple(names[c] for c in cards)
    return outs


def _stud_deals(stub: list[str], needs: list[int]) -> Iterable[list[tuple[str, ...]]]:
    """Every way to give each seat its ``needs[i]`` cards from ``stub`` (the seats' cards are their own)."""
    if not needs:
        yield []
        return
    for mine in combinations(stub, needs[0]):
        rest = [c for c in stub if c not in mine]
        for others in _stud_deals(rest, needs[1:]):
            yield [mine, *others]


def stud_equity(cards: Mapping[int, Sequence[str]], game: str, dead: Sequence[str] = (),
                exact_limit: int = EXACT_LIMIT, samples: int = SAMPLES, community: Sequence[str] = (),
                burns_to_come: int | None = None) -> Equity:
    """The equity of every live seat of a stud game (``cards``: seat → its cards so far, 3 to 7, down and up) with
    ``dead`` cards seen and out of the deck (folded up cards, burns); ``community``: the card every seat shares on
    seventh street where the deck ran short. A deck that will run short (seven or eight seats before seventh street,
    counting ``burns_to_come``, by default one before each street to come) deals the seventh-street card as that
    community card. ``street`` is the stud street the live seats are on. Raises ValueError naming a bad card or a
    card given twice."""
    if game not in STUD_GAMES:
        raise ValueError(f"unknown stud game {game!r}; known: {', '.join(STUD_GAMES)}")
    if len(cards) < 2:
        raise ValueError(f"equity needs two live seats or more, got {len(cards)}")
    shared = [parse_card(c) for c in community]
    hands = {seat: [parse_card(c) for c in held] + shared for seat, held in cards.items()}
    if any(not 3 <= len(h) <= 7 for h in hands.values()):
        raise ValueError(f"a stud hand has 3 to 7 cards: { {s: len(h) for s, h in hands.items()} }")
    seen: set[str] = set()
    for card in [c for h in hands.values() for c in h[:len(h) - len(shared)]] + shared + [parse_card(c) for c in dead]:
        if card in seen:
            raise ValueError(f"{card} is given twice (the seats' cards and dead cards must differ)")
        seen.add(card)
    seats = sorted(hands)
    needs = [7 - len(hands[s]) for s in seats]
    stub = [c for c in FULL_DECK if c not in seen]
    if burns_to_come is None:
        burns_to_come = max(needs)  # the dealer burns a card before each street
    # the deck runs short when seventh street, after the streets before it and their burns, has fewer cards than
    # live seats: then its card is one the seats share (needs count their own cards only)
    short = not shared and max(needs) > 0 and \
        len(stub) - burns_to_come - sum(need - 1 for need in needs if need) < sum(1 for need in needs if need)
    if short:
        needs = [max(need - 1, 0) for need in needs]
    drawn = sum(needs) + short  # the cards to come that decide the hands (the community card last)
    if drawn > len(stub):
        raise ValueError(f"{drawn} cards to come, {len(stub)} left in the deck")
    total, left = 1, len(stub)
    for need in needs + [1] * short:
        total *= math.comb(left, need)
        left -= need
    exact = total <= exact_limit
    deals: Iterable[Sequence[Sequence[str]]]
    if exact:
        deals = _stud_deals(stub, needs + [1] * short)
    else:
        rng = random.Random(_spot_seed(hands, (), dead))
        deals = (_split(rng.sample(stub, drawn), needs + [1] * short) for _ in range(samples))
    evaluate = id_evaluators(False)[0]
    wins, ties, low_wins, low_ties = ([0] * len(seats) for _ in range(4))
    no_low = n = 0
    for deal in deals:
        common = list(deal[-1]) if short else []
        full = [hands[s] + list(extra) + common for s, extra in zip(seats, deal)]
        if game == "razz":
            ranks = [razz_rank(h) for h in full]
        else:
            ranks = [evaluate(*(evaluator_id(c) for c in h)) for h in full]
        best = min(ranks)
        winners = [i for i, r in enumerate(ranks) if r == best]
        for i in winners:
            (wins if len(winners) == 1 else ties)[i] += 1
        if game == "stud8":
            lows = [low_rank(STUD8, h, ()) for h in full]
            made = [low for low in lows if low is not None]
            if not made:
                no_low += 1
            else:
                low_winners = [i for i, low in enumerate(lows) if low == min(made)]
                for i in low_winners:
                    (low_wins if len(low_winners) == 1 else low_ties)[i] += 1
        n += 1
    stderr = 0.0 if exact else max(math.sqrt(p * (1 - p) / n) for p in [w / n for w in wins] + [t / n for t in ties])
    street = STUD_STREETS[min(len(h) for h in hands.values()) - 3]
    if game != "stud8":
        return Equity(street, exact, n, stderr, tuple(SeatEquity(s, wins[i] / n, ties[i] / n)
                                                      for i, s in enumerate(seats)))
    return Equity(street, exact, n, stderr, tuple(SeatEquity(s, wins[i] / n, ties[i] / n, None, low_wins[i] / n,
                                                             low_ties[i] / n) for i, s in enumerate(seats)),
                  no_low / n)


def _split(cards: list[str], needs: list[int]) -> list[list[str]]:
    out, at = [], 0
    for need in needs:
        out.append(cards[at:at + need])
        at += need
    return out
