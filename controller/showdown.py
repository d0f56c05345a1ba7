"""Showdown: who shows first, which hand wins each pot, and how a split pot is divided.

Hand strength comes from phevaluator (imported lazily, so the controller imports without it; on a Raspberry Pi pip
installs its pure-Python wheel). Only ``evaluate_cards`` (5–7 cards) and ``evaluate_omaha_cards`` (5 board + 4 hole)
are used: both exist in the pure 0.5.3.1 wheel and in 0.6. Omaha with 5, 6 or 7 hole cards is the best result over
every 4-card subset of the hole cards, which covers every pair of hole cards (35 subsets for 7-card Omaha). No
home-made evaluator: phevaluator is maintained and runs everywhere the controller does.

Rules:
* order: the last aggressor of the last betting round shows first; with no bet in that round the first live seat
  left of the button (TDA 17; AC 12; CA Actions 6, 9);
* cards speak (AC 10; TDA 19): every live hand is evaluated, Omaha with exactly two hole and three board cards;
* each pot — main and side — goes to the best eligible hand(s), separately (CA Actions 7; TDA 20-5; AC 16;
  PP Ties 5d);
* a split is made down to the profile's unit (TDA 20: the smallest chip in play; CA GR 8: the small blind or ante);
  odd units go one per winner (PP Ties 4) in the profile's order (TDA 20-1, PP Ties 5a, AC 15: from the first
  winner left of the button; CA GR 8: from the winner closest to the button in the betting order).

Hi-lo split, eight or better (``Variant.hi_lo``: PLO8, FLO8, FLHE8):
* each pot — main and side — is split on its own between the best high hand and the best low among the hands
  eligible for it (CA Actions 7; TDA 20-5; PP Ties 5d);
* a low is five cards of different ranks, eight or lower, the ace low; straights and flushes do not count against
  it; Omaha's low too is exactly two hole and three board cards. Lows compare from their highest card down;
* no eligible hand has a low: the high hand takes the whole pot (scoops);
* the odd unit between the halves goes to the high half (TDA 20-3; PP Ties 5c); tied high hands, or tied lows,
  share their half as any tie, odd units by the house's order above (TDA 20-1; PP Ties 5c), a seat given an odd
  unit in the high half last in the low half's order (PP Ties 4: one odd chip each). Two lows tied with one high:
  each low gets a quarter (a "quartered" pot), by the same arithmetic.
The low is counted here, not by phevaluator (which ranks high hands only): an eight-or-better low is the five
lowest different ranks, a few lines.

Stud games (``Variant.stud``; ``controller.stud``):
* stud and stud8's high: the best five of the player's seven cards (and the community card where the deck ran short);
  stud8's low: five different ranks eight or lower among them, as above; no low, the high hand scoops;
* razz: the best A-5 low of the seven, no qualifier: aces low, straights and flushes do not count, a pair is worse
  than any five different ranks (two pair worse than one, then trips, a full house, four of a kind), equal groups
  compared from the highest rank down;
* no bet on seventh street: the seat that acted first on it shows first, the best hand showing (TDA 17-1: "high-hand
  bei Stud low-hand bei Razz");
* the odd chip between tied hands goes by the cards (TDA 20-2; PP Ties 5b; CA GR 8; the house's
  ``stud_odd_chip``), between the halves of stud8 to the high half (TDA 20-3; PP Ties 5c).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from functools import cache
from itertools import combinations
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from controller import stud
from controller.cards import RANKS, parse_card
from controller.rules import ODD_CHIP_CLOSEST_TO_BUTTON, SPLIT_SMALL_BLIND_OR_ANTE, STUD_ODD_CHIP_ALL_CARDS, RuleProfile
from controller.runouts import (DOUBLE_BOARD_RULE, RUN_IT_RULES, SIDE_POT_ONLY_RULE, BoardPart, board_units,
                                boards_of_pots, divide, one_each)

if TYPE_CHECKING:
    from controller.betting import BettingHand, Variant


Evaluate = Callable[..., int]  # phevaluator's: cards (names or ids) in, the rank out (smaller is stronger)


@cache  # imported once: a hand's end ranks every shown hand, each through an import statement otherwise
def _phevaluator() -> tuple[Evaluate, Evaluate]:
    try:
        phevaluator = importlib.import_module("phevaluator")  # (lazy on purpose; the package has no type hints)
    except ImportError as exc:  # pragma: no cover - depends on the machine
        raise ImportError("hand evaluation needs phevaluator: pip install 'phevaluator>=0.5.3.1'") from exc
    return phevaluator.evaluate_cards, phevaluator.evaluate_omaha_cards


EVALUATOR_SUITS = "cdhs"  # phevaluator's suit order in its card ids (rank * 4 + suit)


_EVALUATOR_IDS = {rank + suit: r * 4 + s for r, rank in enumerate(RANKS) for s, suit in enumerate(EVALUATOR_SUITS)}


def evaluator_id(card: str) -> int:
    """phevaluator's integer id of a checked card: its functions take ids as they are, and parse a card's name
    again on every call (ranking many hands of the same cards, that parsing is most of the cost)."""
    return _EVALUATOR_IDS[card]


@cache
def id_evaluators(omaha: bool) -> tuple[Evaluate, Evaluate | None]:
    """(evaluate 5 to 7 card ids, evaluate Omaha: 5 board + 4 hole ids, or None for Hold'em), for cards ranked many
    times over (equity, the words of a shown hand). phevaluator 0.6's native functions when it has them (its public
    wrappers convert every card again, which costs more than the evaluation), else the public functions (the
    pure-Python wheel). The Omaha evaluator is imported for Omaha only: in the pure-Python wheel its tables take
    about 400 MB, the Hold'em ones about 10."""
    try:  # (lazy: the controller imports without it)
        phevaluator = importlib.import_module("phevaluator")
    except ImportError as exc:  # pragma: no cover - depends on the machine
        raise ImportError("hand evaluation needs phevaluator: pip install 'phevaluator>=0.5.3.1'") from exc
    evaluate_cards: Evaluate = phevaluator.evaluate_cards
    try:
        native: Any = importlib.import_module("phevaluator._pheval")
    except ImportError:
        native = None
    if native is not None:
        by_count = {5: native.evaluate_5cards, 6: native.evaluate_6cards, 7: native.evaluate_7cards}
        return (lambda *cards: by_count[len(cards)](*cards)), (native.evaluate_omaha_cards if omaha else None)
    if not omaha:
        return evaluate_cards, None
    return evaluate_cards, phevaluator.evaluate_omaha_cards


def showdown_evaluator() -> Evaluate:
    """phevaluator's rank of exactly the five (to seven) cards given, named as the table names them."""
    return _phevaluator()[0]


def hand_rank(variant: Variant, hole: Sequence[str], board: Sequence[str]) -> int:
    """phevaluator's rank of the best five-card hand: smaller is stronger (1 = royal flush)."""
    evaluate_cards, evaluate_omaha_cards = _phevaluator()
    cards, shared = [parse_card(c) for c in hole], [parse_card(c) for c in board]
    if len(set(cards + shared)) != len(cards) + len(shared):
        raise ValueError(f"duplicate card among {cards + shared}")
    if variant.stud == "razz":
        return razz_rank([*cards, *shared])
    hole_ids, board_ids = [evaluator_id(c) for c in cards], [evaluator_id(c) for c in shared]
    if not variant.omaha:
        return evaluate_cards(*board_ids, *hole_ids)
    if len(board_ids) != 5 or len(hole_ids) < 4:
        raise ValueError("Omaha needs five board cards and at least four hole cards")
    return min(evaluate_omaha_cards(*board_ids, *four) for four in combinations(hole_ids, 4))


LOW_RANKS = {"A": 1, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7, "8": 8}  # eight or better, the ace low
HI_LO_RULES = ("TDA 20-3", "PP Ties 5c")  # the odd unit between the halves to the high half
NO_LOW = "hi-lo: no eight-or-better low, the high hand takes the pot"  # the game's definition; no book states it


def _low_value(ranks: Sequence[int]) -> int:
    """Five different low ranks as one number: smaller is a better low (compared from the highest card down)."""
    value = 0
    for r in sorted(ranks, reverse=True):
        value = value * 16 + r
    return value


def low_rank(variant: Variant, hole: Sequence[str], board: Sequence[str]) -> int | None:
    """The best eight-or-better low (smaller is better: 5-4-3-2-A is the best), or None for no qualifying low.
    Omaha: exactly two hole cards and three board cards; hold'em: any five of the seven."""
    cards, shared = [parse_card(c) for c in hole], [parse_card(c) for c in board]
    hole_lows = [LOW_RANKS[c[0]] for c in cards if c[0] in LOW_RANKS]
    board_lows = [LOW_RANKS[c[0]] for c in shared if c[0] in LOW_RANKS]
    if not variant.omaha:
        distinct = sorted(set(hole_lows + board_lows))
        return _low_value(distinct[:5]) if len(distinct) >= 5 else None
    best: int | None = None
    for two in {frozenset(p) for p in combinations(hole_lows, 2) if p[0] != p[1]}:
        for three in {frozenset(t) for t in combinations(board_lows, 3) if len(set(t)) == 3}:
            if two.isdisjoint(three):
                value = _low_value([*two, *three])
                best = value if best is None else min(best, value)
    return best


_RAZZ_GROUPS = {(1, 1, 1, 1, 1): 0, (2, 1, 1, 1): 1, (2, 2, 1): 2, (3, 1, 1): 3, (3, 2): 4, (4, 1): 5}


def _razz_five(cards: Sequence[str]) -> int:
    counts: dict[int, int] = {}
    for c in cards:
        r = stud.LOW_RANKS.index(c[0]) + 1  # the ace 1, the king 13
        counts[r] = counts.get(r, 0) + 1
    groups = sorted(counts.items(), key=lambda rc: (rc[1], rc[0]), reverse=True)
    value = _RAZZ_GROUPS[tuple(n for _, n in groups)] * 16 ** 5  # the kind of hand first, then its ranks
    for place, (r, _) in enumerate(groups):
        value += r * 16 ** (4 - place)
    return value


def razz_rank(cards: Sequence[str]) -> int:
    """The best A-5 low of five to seven cards, as one number: smaller is better (5-4-3-2-A is the best)."""
    if not 5 <= len(cards) <= 7 or len(set(cards)) != len(cards):
        raise ValueError(f"razz ranks five to seven different cards, not {list(cards)}")
    ranks = sorted({stud.LOW_RANKS.index(c[0]) + 1 for c in cards})
    if len(ranks) >= 5:  # five different ranks beat any pair: the five lowest are the best (the usual case)
        return sum(r * 16 ** place for place, r in enumerate(ranks[:5]))
    return min(_razz_five(five) for five in combinations(cards, 5))


def _best_five(variant: Variant, cards: Sequence[str], side: str) -> tuple[str, ...]:
    """The five cards of the hand that won ``side`` ("high" or "low"); where several fives make it, the one with
    the highest card by suit (the player shows the hand that gets the odd chip)."""
    ace_low = side == "low"
    fives = list(combinations(cards, 5))
    if variant.stud == "razz":
        value = {f: _razz_five(f) for f in fives}
    elif side == "low":
        value = {f: v for f in fives if (v := low_rank(variant, f, ())) is not None}
    else:
        evaluate = showdown_evaluator()
        value = {f: evaluate(*f) for f in fives}
    best = min(value.values())
    return max((f for f in value if value[f] == best),
               key=lambda f: max(stud.card_key(c, ace_low=ace_low) for c in f))


def stud_odd_chip_order(variant: Variant, winners: Sequence[int], cards: Mapping[int, Sequence[str]], side: str,
                        rules: RuleProfile) -> list[int]:
    """Tied stud winners of ``side`` in the order they get odd units, by the cards (``controller.stud``): the
    highest card by suit of the winning five (TDA 20-2), or of all the player's cards, the lowest in a low game
    (PP Ties 5b). ``cards``: each winner's cards, the community card included."""
    low = side == "low" or variant.stud == "razz"
    if rules.stud_odd_chip == STUD_ODD_CHIP_ALL_CARDS:
        return stud.odd_chip_order({s: cards[s] for s in winners}, lowest=low, ace_low=low)
    five = {s: _best_five(variant, cards[s], "low" if low else "high") for s in winners}
    return stud.odd_chip_order(five, ace_low=low)


@dataclass(frozen=True)
class PotHalf:
    """One half of a hi-lo pot: ``side`` is "high" or "low"."""

    side: str
    amount: int
    winners: tuple[int, ...]
    shares: Mapping[int, int]
    odd_chips: tuple[int, ...]


@dataclass(frozen=True)
class PotAward:
    index: int  # 0 = main pot
    amount: int
    eligible: tuple[int, ...]
    winners: tuple[int, ...]
    shares: Mapping[int, int]
    odd_chips: tuple[int, ...]  # seats that received an odd unit, in the order they got it
    rules: tuple[str, ...]
    boards: tuple[BoardPart, ...] = ()  # a pot divided between runs or boards: each board's part
    halves: tuple[PotHalf, ...] = ()  # a hi-lo pot: its high half, then its low half (none: no qualifying low)


@dataclass(frozen=True)
class Award:
    pots: tuple[PotAward, ...]
    payouts: Mapping[int, int]
    finishing_stacks: Mapping[int, int]
    showdown_order: tuple[int, ...]
    ranks: Mapping[int, int]  # on the first board
    board_ranks: tuple[Mapping[int, int], ...] = ()  # on each board, where the hand had more than one
    low_ranks: Mapping[int, int | None] = field(default_factory=dict)  # hi-lo: each live hand's low (None: no low)


def showdown_order(hand: BettingHand) -> list[int]:
    """Live seats in the order they show (TDA 17-1; AC 12; CA Actions 6, 9)."""
    live = hand.live_seats
    last_round = hand.last_betting_round
    first = hand.last_aggressor.get(last_round) if last_round is not None else None
    if (first is None or first not in live) and hand.variant.stud:
        first = hand.openers.get(len(hand.variant.streets) - 1)  # the best hand showing on seventh (TDA 17-1)
    if first is None or first not in live:
        first = live[0]  # ``order`` starts left of the button
    i = live.index(first)
    return live[i:] + live[:i]


def split_unit(hand: BettingHand, rules: RuleProfile) -> int:
    if rules.split_unit == SPLIT_SMALL_BLIND_OR_ANTE:
        return hand.ante or hand.small_blind or 1
    return hand.chip_values[0] if hand.chip_values else 1


def odd_chip_order(hand: BettingHand, winners: Sequence[int], rules: RuleProfile) -> list[int]:
    """Winners in the order odd units are handed out."""
    ordered = [s for s in hand.order if s in winners]  # clockwise from the first seat left of the button
    if rules.odd_chip == ODD_CHIP_CLOSEST_TO_BUTTON:
        ordered.reverse()  # the button first, then counter-clockwise: last in the betting order first
    return ordered


def split_pot(amount: int, winners_in_odd_chip_order: Sequence[int], unit: int) -> tuple[dict[int, int], list[int]]:
    """Divide ``amount`` equally down to ``unit``; odd units one each in the given order (PP Ties 3-4)."""
    n = len(winners_in_odd_chip_order)
    units, leftover = divmod(amount, unit)
    each, odd = divmod(units, n)
    shares = {s: each * unit for s in winners_in_odd_chip_order}
    receivers = list(winners_in_odd_chip_order[:odd])
    for s in receivers:
        shares[s] += unit
    if leftover:  # a pot not made of whole units (a short all-in below the unit): the remainder follows the order
        shares[winners_in_odd_chip_order[0]] += leftover
    return shares, receivers


def award(hand: BettingHand, hole_cards: Mapping[int, Sequence[str]] | None = None,
          board: Sequence[str] = (), rules: RuleProfile | None = None, *,
          boards: Sequence[Sequence[str]] | None = None, runs: int = 1, run_pots: Sequence[int] | None = None,
          double_board: bool = False) -> Award:
    """Award every pot of a finished hand. Uncontested pots need no cards.

    With several boards (``boards``, listed run by run: ``runs`` runs of one board, or of two with
    ``double_board``) each pot is divided between the boards it plays (``controller.runouts``): ``run_pots`` names
    the pots the players agreed to run more than once (None: all of them; CA Actions 8e), the others play the first
    run. ``board`` is then unused."""
    rules = rules or hand.rules
    if hand.status not in ("showdown", "complete"):
        raise ValueError(f"the betting is not over ({hand.status})")
    per_run = 2 if double_board else 1
    boards = [list(b) for b in boards] if boards is not None else [list(board)]
    if len(boards) != runs * per_run:
        raise ValueError(f"{runs} run(s) of {per_run} board(s) need {runs * per_run} boards, not {len(boards)}")
    live = hand.live_seats
    hi_lo = hand.variant.hi_lo
    board_ranks: list[dict[int, int]] = [{} for _ in boards]
    board_lows: list[dict[int, int | None]] = [{} for _ in boards]  # hi-lo: each hand's low on each board
    if len(live) > 1:
        if hole_cards is None or any(s not in hole_cards for s in live):
            raise ValueError("every live seat's hole cards are needed for the showdown")
        for i, cards in enumerate(boards):
            for s in live:
                board_ranks[i][s] = hand_rank(hand.variant, hole_cards[s], cards)
        if hi_lo:
            board_lows = [{s: low_rank(hand.variant, hole_cards[s], cards) for s in live} for cards in boards]
    lows = board_lows[0]
    unit = split_unit(hand, rules)
    all_cards = ({s: [*hole_cards[s], *boards[0]] for s in live}  # stud: the cards that decide odd chips
                 if hand.variant.stud and hole_cards is not None and len(live) > 1 else {})
    payouts = {s: 0 for s in hand.order}
    awards = []
    pots = hand.pots()
    plays = boards_of_pots(len(pots), runs, per_run, run_pots)
    for index, pot in enumerate(pots):
        contenders = [s for s in pot.eligible if s in live]
        cites: tuple[str, ...] = ("CA Actions 7", "TDA 20-5")
        halves: tuple[PotHalf, ...] = ()
        shares: dict[int, int]
        odd: list[int]
        parts: tuple[BoardPart, ...] = ()
        if hi_lo and len(contenders) > 1 and len(plays[index]) > 1:
            # each run or board its part of the pot, then each part split high and low on its own
            order = list(hand.order) if runs > 1 else odd_chip_order(hand, hand.order, rules)
            parts, shares, odd, cites = _split_boards_high_low(hand, pot.amount, contenders, plays[index], board_ranks,
                                                               board_lows, rules, unit, cites, all_cards, order)
            cites += (RUN_IT_RULES if runs > 1 else ()) + ((DOUBLE_BOARD_RULE,) if double_board else ())
            winners = [s for s in contenders if s in shares]
        elif hi_lo and len(contenders) > 1:
            halves, cites = _split_high_low(hand, pot.amount, contenders, board_ranks[0], lows, rules, unit, cites,
                                            all_cards)
            shares, odd = {}, []
            for half in halves:
                for s, v in half.shares.items():
                    shares[s] = shares.get(s, 0) + v
                odd += half.odd_chips
            winners = [s for s in contenders if s in shares]
        elif len(plays[index]) == 1 or len(contenders) == 1:
            winners = contenders if len(contenders) == 1 else _best(contenders, board_ranks[plays[index][0]])
            if hand.variant.stud and len(winners) > 1:
                order = stud_odd_chip_order(hand.variant, winners, all_cards, "high", rules)
            else:
                order = odd_chip_order(hand, winners, rules)
            shares, odd = split_pot(pot.amount, order, unit)
            if len(winners) > 1:
                cites += (rules.cite("stud_odd_chip" if hand.variant.stud else "odd_chip"), rules.cite("split_unit"))
            if runs > 1 and len(contenders) > 1:
                cites += (SIDE_POT_ONLY_RULE,)  # not agreed for this pot: the first run alone decides it
        else:
            by_board = {b: _best(contenders, board_ranks[b]) for b in plays[index]}
            # runs: the worse position first (CA Actions 8f); a double board: the house's order
            order = list(hand.order) if runs > 1 else odd_chip_order(hand, hand.order, rules)
            division = divide(pot.amount, by_board, order, unit)
            shares, odd, parts = dict(division.shares), list(division.odd_chips), division.parts
            winners = list(division.winners)
            odd += [s for part in parts for s in part.odd_chips]
            cites += (RUN_IT_RULES if runs > 1 else ()) + ((DOUBLE_BOARD_RULE,) if double_board else ())
            cites += (rules.cite("split_unit"),)
        for s, v in shares.items():
            payouts[s] += v
        awards.append(PotAward(index, pot.amount, pot.eligible, tuple(winners), shares, tuple(odd), cites, parts,
                               halves))
    finishing = {s: hand.stacks[s] + payouts[s] for s in hand.order}
    return Award(tuple(awards), payouts, finishing, tuple(showdown_order(hand)) if len(live) > 1 else tuple(live),
                 board_ranks[0], tuple(board_ranks) if len(boards) > 1 else (), lows)


def _split_boards_high_low(hand: BettingHand, amount: int, contenders: Sequence[int], played: Sequence[int],
                           board_ranks: Sequence[Mapping[int, int]], board_lows: Sequence[Mapping[int, int | None]],
                           rules: RuleProfile, unit: int, cites: tuple[str, ...], cards: Mapping[int, Sequence[str]],
                           order: Sequence[int]) -> tuple[tuple[BoardPart, ...], dict[int, int], list[int],
                                                          tuple[str, ...]]:
    """A hi-lo pot that plays several boards (runs, a double board): divided equally between the boards as in the
    other games (``controller.runouts``: the units left over one each to the pot's winners in ``order``), then each
    board's part split high and low by that board's hands, its odd unit to the high half (TDA 20-3). Returns the
    board parts (with their halves), what each seat gets, the odd units handed out, and the rules cited."""
    per_board, between, leftover = board_units(amount, len(played), unit)
    parts: list[BoardPart] = []
    shares: dict[int, int] = {}
    odd: list[int] = []
    for board in played:
        halves, cites = _split_high_low(hand, per_board * unit, contenders, board_ranks[board], board_lows[board],
                                        rules, unit, cites, cards)
        part: dict[int, int] = {}
        for half in halves:
            for s, v in half.shares.items():
                part[s] = part.get(s, 0) + v
        part_odd = tuple(s for half in halves for s in half.odd_chips)
        parts.append(BoardPart(board, per_board * unit, tuple(s for s in contenders if s in part), part, part_odd,
                               halves))
        odd += part_odd
        for s, v in part.items():
            shares[s] = shares.get(s, 0) + v
    everyone = [s for s in order if s in shares]
    receivers = one_each(between, everyone)
    for s in receivers:
        shares[s] += unit
    if leftover:  # a pot not made of whole units (a short all-in below the unit): the rest follows the order
        shares[everyone[0]] += leftover
    cites = tuple(dict.fromkeys(cites + (rules.cite("split_unit"),)))  # each rule once, however many boards
    return tuple(parts), shares, receivers + odd, cites


def _split_high_low(hand: BettingHand, amount: int, contenders: Sequence[int], ranks: Mapping[int, int],
                    lows: Mapping[int, int | None], rules: RuleProfile, unit: int, cites: tuple[str, ...],
                    cards: Mapping[int, Sequence[str]]) -> tuple[tuple[PotHalf, ...], tuple[str, ...]]:
    """A hi-lo pot's halves (the high half first) and the rules cited. The halves are whole units; the odd one,
    and any remainder below a unit, go to the high half (TDA 20-3; PP Ties 5c)."""
    high = _best(contenders, ranks)
    made = {s: value for s in contenders if (value := lows.get(s)) is not None}  # the eligible hands' lows
    if not made:
        sides = [("high", amount, high)]
        cites += (NO_LOW,)
    else:
        best_low = min(made.values())
        low = [s for s in contenders if made.get(s) == best_low]
        units = amount // unit
        low_amount = units // 2 * unit
        sides = [("high", amount - low_amount, high), ("low", low_amount, low)]
        cites += HI_LO_RULES
    halves: list[PotHalf] = []
    for side, part, winners in sides:
        if hand.variant.stud and len(winners) > 1:
            order = stud_odd_chip_order(hand.variant, winners, cards, side, rules)
        else:
            order = odd_chip_order(hand, winners, rules)
        had_one = {s for h in halves for s in h.odd_chips}  # at most one odd chip each (PP Ties 4)
        order = [s for s in order if s not in had_one] + [s for s in order if s in had_one]
        shares, odd = split_pot(part, order, unit)
        if len(winners) > 1:
            odd_rule = rules.cite("stud_odd_chip" if hand.variant.stud else "odd_chip")
            cites += tuple(c for c in (odd_rule, rules.cite("split_unit")) if c not in cites)
        halves.append(PotHalf(side, part, tuple(winners), shares, tuple(odd)))
    return tuple(halves), cites


def _best(contenders: Sequence[int], ranks: Mapping[int, int]) -> list[int]:
    best = min(ranks[s] for s in contenders)
    return [s for s in contenders if ranks[s] == best]
