"""How the simulated players at a chip table decide: plausibly, as at a live low-stakes game, or at random.

``plausible`` (the default): each player looks at their own cards, the board and the betting, never at anyone
else's cards.

* Before the flop a starting-hand chart (Bill Chen's points: the high card, pairs doubled, suited +2, gaps
  penalised) by position: the first player in raises with 9 points or more five seats or further from the button
  (about the top 7 % of hands), 8 in the middle (11 %), 7 at the cutoff (18 %), 6 on the button (26 %), 8 from the
  small blind, and limps a point below that in the middle and late. Facing a raise: a 3-bet with 11 points or more
  (QQ+, AKs, AQs: about 2 %), a call with 8 or more, or with a small pair when the raise is a small part of the
  stack (to hit a set); facing a 3-bet, AA and KK raise again, 11 points call. Omaha takes the best two of its
  cards against a chart two points tighter (three with five hole cards or more).
* After the flop the made hand against the board (the project's evaluator, phevaluator, as the showdown ranks it):
  a monster (a full house or better) bets and raises; a strong hand (two pair or better made with the hole cards;
  in Omaha a straight or better) bets and calls; top pair or an overpair bets and calls a bet up to about 70 % of
  the pot; a lesser pair calls a small bet; a straight or flush draw calls when the price is no more than its
  chance to come by the river (pot odds, the rule of 2 and 4) and now and then bets; the preflop raiser bets half
  the flops against one or two players whatever it holds; anything else checks or folds. In the hi-lo games a made
  eight-or-better low plays as top pair does (it is worth half the pot).
* All-ins are rare: a player goes all-in with a full house or better, with AA or KK against a 3-bet, or with 12 big
  blinds or less (push or fold); a player with one pair does not call off its stack.

``random``: every decision a random legal one (folds, checks, calls, bets and raises, often all-in), as the betting
oracle's hands (``sim.handgen``): for stress runs, the soak and the benchmarks.

Both are seeded and deterministic: the generator given plays the same decisions for the same cards.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from itertools import combinations
from typing import Iterable, Mapping, Sequence

from controller.betting import FIXED_LIMIT, BettingHand
from controller.cards import FULL_DECK, RANKS
from controller.showdown import evaluator_id, id_evaluators, low_rank
from sim.handgen import play_randomly

PLAUSIBLE, RANDOM = "plausible", "random"
ALL_IN = "all_in"  # a decision: every chip (a raise that would leave little behind is only a call)
PLAYERS_STYLES = (PLAUSIBLE, RANDOM)

# Chen points to raise first in, by seats to the button (0: the button, 1: the cutoff, ...; further ones as the last)
OPEN_POINTS = (5, 5, 6, 6, 7, 7)
SMALL_BLIND_OPEN, SMALL_BLIND_COMPLETE = 6, 5
THREE_BET_POINTS = 10
CALL_RAISE_POINTS = 6
FOUR_BET_POINTS = 16  # AA, KK
SHORT_STACK_BB = 12  # push or fold from here down
SET_MINING_SHARE = 1 / 15  # a small pair calls a raise of at most this share of its stack

# phevaluator's ranks run from 1 (a royal flush) to 7462, in blocks by category; the upper bound of each block
CATEGORY_BOUNDS = (10, 166, 322, 1599, 1609, 2467, 3325, 6185, 7462)
STRAIGHT_FLUSH, QUADS, FULL_HOUSE, FLUSH, STRAIGHT, TRIPS, TWO_PAIR, PAIR, HIGH_CARD = 8, 7, 6, 5, 4, 3, 2, 1, 0
NOTHING, WEAK_PAIR, GOOD_PAIR, STRONG, MONSTER = range(5)


def chen_points(first: str, second: str) -> int:
    """Bill Chen's points of a two-card starting hand (AA 20, AKs 12, 72o -1)."""
    high, low = sorted((RANKS.index(first[0]), RANKS.index(second[0])), reverse=True)
    points = {12: 10.0, 11: 8.0, 10: 7.0, 9: 6.0}.get(high, (high + 2) / 2)
    if high == low:
        return math.ceil(max(5.0, 2 * points))
    points += 2 if first[1] == second[1] else 0
    gap = high - low - 1
    points -= (0, 1, 2, 4)[gap] if gap < 4 else 5
    if gap <= 1 and high < RANKS.index("Q"):
        points += 1  # room for straights
    return math.ceil(points)


def preflop_points(hole: Sequence[str]) -> int:
    """The hand's points: Hold'em by Chen's, Omaha by its best two cards, less for the many hands worth playing."""
    if len(hole) == 2:
        return chen_points(*hole)
    return max(chen_points(a, b) for a, b in combinations(hole, 2)) - (len(hole) - 1)


def category(rank: int) -> int:
    return next(c for c, bound in zip(range(8, -1, -1), CATEGORY_BOUNDS) if rank <= bound)


_evaluate = None


def best_rank(hole: Sequence[str], board: Sequence[str], omaha: bool) -> int:
    """phevaluator's rank of the best hand (smaller is stronger); Omaha with exactly two hole and three board cards."""
    global _evaluate
    if _evaluate is None:
        _evaluate = id_evaluators(False)[0]  # five to seven cards: Omaha by its subsets, without the Omaha tables
    hole_ids, board_ids = [evaluator_id(c) for c in hole], [evaluator_id(c) for c in board]
    if not omaha:
        return _evaluate(*board_ids, *hole_ids)
    return min(_evaluate(*three, *two) for three in combinations(board_ids, 3) for two in combinations(hole_ids, 2))


def board_category(board: Sequence[str]) -> int:
    """What the board alone makes: pairs and trips of three or four cards, any hand of five."""
    if len(board) == 5:
        return category(best_rank([], board, False))
    counts = sorted(Counter(c[0] for c in board).values(), reverse=True)
    return {4: QUADS, 3: TRIPS}.get(counts[0], TWO_PAIR if counts[:2] == [2, 2] else PAIR if counts[0] == 2
                                    else HIGH_CARD)


def strength(hole: Sequence[str], board: Sequence[str], omaha: bool) -> int:
    """NOTHING to MONSTER: the made hand, counted only where the hole cards make it better than the board's own."""
    made = category(best_rank(hole, board, omaha))
    if made <= board_category(board):
        return NOTHING
    if made >= (QUADS if omaha else FULL_HOUSE):  # full houses are common in Omaha
        return MONSTER
    if made >= (STRAIGHT if omaha else TWO_PAIR):
        return STRONG
    if made == PAIR and not omaha:
        top = max(RANKS.index(c[0]) for c in board)
        pocket = hole[0][0] == hole[1][0]
        paired = max((RANKS.index(c[0]) for c in hole if any(b[0] == c[0] for b in board)), default=-1)
        return GOOD_PAIR if (pocket and RANKS.index(hole[0][0]) > top) or paired == top else WEAK_PAIR
    return GOOD_PAIR if omaha and made >= TWO_PAIR else WEAK_PAIR


def outs(hole: Sequence[str], board: Sequence[str], omaha: bool) -> int:
    """The next cards that make a straight or better with the hole cards (a draw's outs), on the flop and turn."""
    if len(board) not in (3, 4):
        return 0
    now = category(best_rank(hole, board, omaha))
    seen = set(hole) | set(board)
    count = 0
    for card in FULL_DECK:
        if card in seen:
            continue
        then = category(best_rank(hole, [*board, card], omaha))
        if then >= STRAIGHT and then > now and then > board_category([*board, card]):
            count += 1
    return count


def hit_chance(outs_: int, board: Sequence[str], hole_count: int) -> float:
    """The chance that one of ``outs_`` comes by the river."""
    unseen = 52 - hole_count - len(board)
    miss = 1.0
    for k in range(5 - len(board)):
        miss *= 1 - outs_ / (unseen - k)
    return 1 - miss


def play(hand: BettingHand, style: str, rng: random.Random, unit: int, hole: Mapping[int, Sequence[str]],
         board: Sequence[str]) -> None:
    """Play a hand's betting to its end in ``style``; bets are whole multiples of ``unit`` unless all-in."""
    if style == RANDOM:
        play_randomly(hand, rng, unit)
        return
    if style != PLAUSIBLE:
        raise ValueError(f"the players' style is one of {', '.join(PLAYERS_STYLES)}, not {style!r}")
    Plausible(hand, rng, unit, hole, board).play()


class Plausible:
    """One hand played by the chart and pot odds (the module docstring)."""

    def __init__(self, hand: BettingHand, rng: random.Random, unit: int, hole: Mapping[int, Sequence[str]],
                 board: Sequence[str]):
        self.hand, self.rng, self.unit, self.hole, self.board = hand, rng, unit, hole, board
        self.bb = hand.big_blind
        self.omaha = hand.variant.omaha
        self.hi_lo = hand.variant.hi_lo

    def play(self) -> None:
        hand = self.hand
        while hand.status == "betting":
            seat = hand.to_act()
            if seat is None:
                if not hand.end_street().ok:
                    raise RuntimeError("the engine refused to collect a complete round")
                continue
            legal = hand.legal(seat)
            if hand.street_index == 0:
                kind, target = self._preflop(seat, legal)
            else:
                kind, target = self._postflop(seat, legal)
            self._act(seat, kind, target, legal)

    # ---- the decisions: ("fold" | "check" | "call" | "raise", target of a raise) ------------------------------

    def _preflop(self, seat: int, legal) -> tuple[str, int]:
        hand = self.hand
        points = preflop_points(self.hole[seat])
        state = hand.seat_state(seat)
        reach = state["stack"] + state["bet"]
        raises = sum(1 for a in hand.actions if a.street == "preflop" and a.base in ("bet", "raise"))
        limpers = sum(1 for a in hand.actions if a.street == "preflop" and a.base == "call")
        current = hand.current_bet
        if reach <= SHORT_STACK_BB * self.bb:  # short: all in or out
            if points >= (self._open_points(seat) if raises == 0 else CALL_RAISE_POINTS + 2):
                return ALL_IN, 0
            return "fold", 0
        if raises == 0:
            if seat == hand.bb_seat:  # the option: raise the limpers now and then with a strong hand
                return ("raise", (3 + limpers) * self.bb) if points >= 10 and self.rng.random() < 0.7 else \
                    ("check", 0)
            opening = self._open_points(seat)
            if points >= opening and (limpers == 0 or points >= max(opening, 9)):
                return "raise", (3 + limpers) * self.bb
            if seat == hand.sb_seat and points >= SMALL_BLIND_COMPLETE:
                return "call", 0
            if points >= opening - 1 and (limpers or self._seats_to_button(seat) <= 3):
                return "call", 0  # a limp
            return "fold", 0
        if raises == 1:
            if points >= THREE_BET_POINTS:
                return "raise", 3 * current
            defend = CALL_RAISE_POINTS - (1 if seat == hand.bb_seat else 0)  # the big blind has half paid
            set_mining = self._pocket_pair(seat) and legal.to_call <= reach * SET_MINING_SHARE
            return ("call", 0) if points >= defend or set_mining else ("fold", 0)
        if points >= FOUR_BET_POINTS:
            return (ALL_IN, 0) if raises >= 3 or 23 * current // 10 > reach // 2 else ("raise", 23 * current // 10)
        if points >= THREE_BET_POINTS and legal.to_call <= reach // 4:
            return "call", 0
        return "fold", 0

    def _postflop(self, seat: int, legal) -> tuple[str, int]:
        hand = self.hand
        board = self.board[:(0, 3, 4, 5)[hand.street_index]]
        hole = self.hole[seat]
        level = strength(hole, board, self.omaha)
        if self.hi_lo and level < GOOD_PAIR and low_rank(hand.variant, hole, board) is not None:
            level = GOOD_PAIR  # a made low: half the pot
        draw = outs(hole, board, self.omaha) if level < STRONG else 0
        state = hand.seat_state(seat)
        reach = state["stack"] + state["bet"]
        pot = hand.pot_total()
        raises = sum(1 for a in hand.actions if a.street == hand.street and a.base in ("bet", "raise"))
        roll = self.rng.random()
        if legal.to_call == 0:
            if level >= STRONG:
                return "raise", 2 * pot // 3
            if (level == GOOD_PAIR and roll < 0.7) or (level == WEAK_PAIR and roll < 0.2) or (draw >= 8 and roll < 0.3):
                return "raise", pot // 2
            if hand.street == "flop" and hand.last_aggressor.get(0) == seat and len(hand.live_seats) <= 3 \
                    and roll < 0.5:
                return "raise", pot // 2  # the preflop raiser bets the flop, whatever it holds
            return "check", 0
        call = legal.to_call
        price = call / (pot + call)  # the share of the pot the call pays for: pot odds
        if level == MONSTER:
            target = 3 * hand.current_bet
            return (ALL_IN, 0) if raises >= 3 or target > reach // 2 else ("raise", target)
        if level == STRONG:
            if raises < 2 and roll < 0.3:
                return "raise", 3 * hand.current_bet
            return ("call", 0) if price <= 0.4 else ("fold", 0)
        if level == GOOD_PAIR and price <= 0.35 and call <= reach // 3:
            return "call", 0
        if level == WEAK_PAIR and price <= 0.25 and call <= reach // 5 and hand.street != "river":
            return "call", 0
        if draw and price <= hit_chance(draw, board, len(hole)) and call <= reach // 4:
            return "call", 0
        return "fold", 0

    # ---- helpers -------------------------------------------------------------------------------------------

    def _open_points(self, seat: int) -> int:
        if seat == self.hand.sb_seat and seat != self.hand.button:
            return SMALL_BLIND_OPEN
        return OPEN_POINTS[min(self._seats_to_button(seat), len(OPEN_POINTS) - 1)]

    def _seats_to_button(self, seat: int) -> int:
        order = self.hand.order
        if self.hand.button not in order:
            return len(order) - 1 - order.index(seat)
        return (order.index(self.hand.button) - order.index(seat)) % len(order)

    def _pocket_pair(self, seat: int) -> bool:
        ranks = [c[0] for c in self.hole[seat]]
        return len(set(ranks)) < len(ranks)

    def _act(self, seat: int, kind: str, target: int, legal) -> None:
        hand = self.hand
        if kind in ("raise", ALL_IN) and legal.can_raise:
            state = hand.seat_state(seat)
            reach = state["stack"] + state["bet"]
            if kind == ALL_IN:
                target = legal.max_to
            elif hand.variant.structure == FIXED_LIMIT:
                target = legal.min_to
            else:
                target = min(legal.max_to, max(legal.min_to, -(-target // self.unit) * self.unit))
                if reach - target < (target - state["bet"]) // 2:
                    target = 0  # it would leave less than half of itself behind: all-in is for the few, so a call
            if target:
                ruling = hand.declare(seat, "bet" if hand.current_bet == 0 else "raise", target)
                self._pay(seat, ruling)
                return
        if kind in ("raise", ALL_IN):  # may not raise (the betting was not reopened, a capped limit): call or check
            kind = "call" if legal.can_call else "check"
        if kind == "call" and not legal.can_call:
            kind = "check"
        if kind == "fold" and legal.can_check:
            kind = "check"  # nobody folds for free
        if kind == "call":
            self._pay(seat, hand.declare(seat, "call"))
        elif kind == "check":
            self._pay(seat, hand.check(seat))
        else:
            self._pay(seat, hand.fold(seat))

    def _pay(self, seat: int, ruling) -> None:
        if ruling.ok and self.hand.seat_state(seat)["owed"]:
            ruling = self.hand.push(seat, [self.hand.seat_state(seat)["owed"]])
        if not ruling.ok:
            raise RuntimeError(f"the simulated player made an illegal action: {ruling.code} {ruling.message}")


# ---- what a run of hands looks like -----------------------------------------------------------------------------


def figures(hands: Iterable[BettingHand]) -> dict[str, float]:
    """What an observer of the table sees over many hands (the docs' figures): the share of hands won before the
    flop and of those seen by two, raises per hand, all-ins per 100 hands, players seeing the flop, showdowns, and
    the players' VPIP (put chips in voluntarily before the flop) and PFR (raised before the flop)."""
    count = won_preflop = heads_up_flop = raises = all_ins = flop_seen = showdowns = 0
    seat_hands = vpip = pfr = 0
    for hand in hands:
        count += 1
        seat_hands += len(hand.order)
        preflop = [a for a in hand.actions if a.street == "preflop"]
        vpip += len({a.seat for a in preflop if a.base in ("call", "bet", "raise")})
        pfr += len({a.seat for a in preflop if a.base in ("bet", "raise")})
        raises += sum(1 for a in hand.actions if a.base in ("bet", "raise"))
        all_ins += sum(1 for a in hand.actions if a.all_in and a.base in ("call", "bet", "raise"))
        folded = {a.seat for a in preflop if a.kind == "fold"}
        left = len(hand.order) - len(folded)
        won_preflop += left == 1
        heads_up_flop += left == 2
        flop_seen += left if left > 1 else 0
        showdowns += hand.status == "showdown" and len(hand.live_seats) > 1
    count = max(count, 1)
    return {"hands": count, "won_preflop_pct": 100 * won_preflop / count,
            "two_to_flop_pct": 100 * heads_up_flop / count, "raises_per_hand": raises / count,
            "all_ins_per_100": 100 * all_ins / count, "players_per_flop": flop_seen / count,
            "showdown_pct": 100 * showdowns / count, "vpip_pct": 100 * vpip / max(seat_hands, 1),
            "pfr_pct": 100 * pfr / max(seat_hands, 1)}
