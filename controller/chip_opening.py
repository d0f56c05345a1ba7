"""How a betting hand begins (``Opening``), read from the deal and the chips lying in the zones (``read_opening``):
the seats dealt in, the button, the stacks, the blinds, straddles and antes, or a bomb pot agreed before the deal.

The button is where the blinds say it is (the big blind lies in the zone of the seat after the small blind's, and
heads-up the button posts the small blind); where the zones do not show that, the deal's order tells (the deal starts
left of the button). A dead button is where the card controller has it, when the blinds and the deal agree with it.
The stacks are the chips in a seat's stack zone, or the count the floor entered (``set_stacks``) or the last hand left.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from controller.betting import BettingHand, Straddle
from controller.chip_table import ChipTable
from controller.levels import Level
from hal.zone_names import Zone

UNKNOWN_STACK = 10**9  # no count entered and no stack zone: large enough never to be all-in by accident


@dataclass(frozen=True)
class Opening:
    """How a betting hand begins: the seats dealt in, the chips in their zones and in the pot, the button, the
    stacks (``known``: counted, not assumed), the blinds' seats, the stakes and the engine's set-up."""

    table: ChipTable
    seats: list[int]
    bets: dict[int, list[int]]
    pot: list[int]  # the chips lying in the pot zone: the antes, or bomb pot amounts put in there
    button: int
    stacks: dict[int, int]
    known: bool
    sb: int | None
    bb: int | None
    stakes: Level
    level: int | None  # a tournament's running level
    bomb_pot: tuple[int, bool] | None  # (amount, flip) agreed before the deal (CA GR 14.2, 14.3)
    straddles: list[Straddle]
    no_small_blind: bool
    bring_in_seat: int | None = None  # stud: the seat whose door card brings it in

    def engine(self) -> BettingHand:
        """The betting engine this opening makes (ValueError: it cannot begin, e.g. a seat with no chips)."""
        stakes, bomb = self.stakes, self.bomb_pot
        setup = self.table.setup
        if self.table.variant.stud:  # antes, the bring-in and the two bets of fixed limit; no blinds
            return BettingHand(self.table.variant, list(self.seats), self.button, dict(self.stacks), (0, 0),
                               bets=setup.bet_limits, ante=stakes.ante, bring_in=setup.bring_in,
                               bring_in_seat=self.bring_in_seat, rules=self.table.rules,
                               chip_values=self.table.chip_values)
        # a bomb pot: everyone's agreed amount, no blinds, no straddles, no antes beside it
        amount, flip = bomb if bomb is not None else (0, False)
        return BettingHand(self.table.variant, list(self.seats), self.button, dict(self.stacks),
                           (stakes.small_blind, stakes.big_blind), bets=self.table.setup.bet_limits,
                           ante=0 if bomb is not None else stakes.ante,
                           big_blind_ante=0 if bomb is not None else stakes.big_blind_ante,
                           bomb_pot=amount, flip=flip, no_small_blind=self.no_small_blind,
                           straddles=list(self.straddles), rules=self.table.rules, chip_values=self.table.chip_values,
                           forced_bet_chips={s: list(self.bets[s]) for s in self.seats
                                             if self.bets[s] and bomb is None})

    def posted_forced_bet(self, seat: int, hand: BettingHand) -> bool:
        """Whether ``seat`` posted a blind or a straddle in ``hand`` (the engine this opening made)."""
        return seat in (self.sb, self.bb) or any(a.seat == seat and a.kind == "straddle" for a in hand.actions)


ChipCount = tuple[str, int | None, int, int, list[str]]  # code, seat, expected, seen, rules (a chip_count event)


def posted_antes(hand: BettingHand) -> int:
    """The antes the engine posted (a big-blind ante among them)."""
    return sum(a.added for a in hand.actions if a.kind == "ante")


def posted_chip_counts(opening: Opening, hand: BettingHand) -> list[ChipCount]:
    """What lies in the forced bettors' zones and the pot checked against what the engine posted (``hand``, just
    made from ``opening``): a zone or a pot holding more than its forced bets is a chip count; a bomb pot's pot
    holding another amount too. A zone or a pot holding less is not yet: the rest of a blind or of the antes may come
    after the deal (``ForcedBetsDue``, ``LateAntes``)."""
    bets = opening.bets
    in_pot = sum(opening.pot)
    counts: list[ChipCount] = []
    if opening.bomb_pot is not None:
        # every player put the agreed amount in before the deal (CA GR 14.2, 14.3): in the seat's betting zone, or
        # already in the pot
        posted = {a.seat: a.added for a in hand.actions if a.kind == "ante"}
        rule = ["CA GR 14.2" if opening.bomb_pot[1] else "CA GR 14.3"]
        for s in hand.order:
            if bets[s] and sum(bets[s]) != posted.get(s, 0):
                counts.append(("forced_bet", s, posted.get(s, 0), sum(bets[s]), rule))
        owed_in_pot = sum(v for s, v in posted.items() if not bets[s])
        if owed_in_pot != in_pot:
            counts.append(("antes", None, owed_in_pot, in_pot, rule))
        return counts
    for s in hand.order:
        posted_bet = hand.bets[s]
        if opening.posted_forced_bet(s, hand) and sum(bets[s]) > posted_bet:
            counts.append(("forced_bet", s, posted_bet, sum(bets[s]), ["DE 9"] if hand.is_all_in(s) else []))
    antes = posted_antes(hand)
    if antes and in_pot > antes:
        counts.append(("antes", None, antes, in_pot, []))
    return counts


def read_opening(table: ChipTable, dealt_order: Sequence[int], zones: Mapping[str, Mapping[str, int]],
                 stacks: Mapping[int, int], stakes: Level, level: int | None, bomb_pot: tuple[int, bool] | None,
                 card_button: int | None, card_no_small_blind: bool = False, bring_in_seat: int | None = None
                 ) -> Opening:
    """How the betting hand would begin now (nothing changes): ``dealt_order``, the seats in the order their first
    card arrived; ``zones``, the chips lying on each chip zone; ``stacks``, the counts carried from hand to hand;
    ``card_button``, where the card controller has the button (it knows a dead one); ``card_no_small_blind``, that
    the hand has no small blind by the card controller's reckoning (a big blind left), which rules where the first
    player's zone is still empty (the blinds come after the deal). A stud game (``bring_in_seat``: the seat the
    door cards name) has no blinds and no button: the seat before the first dealt stands for it, so that the
    engine's order is the deal's; every chip in a seat's zone is an action of third street."""
    seats = sorted(dealt_order)
    bets = {s: sorted(zones.get(Zone("bets", s).name, {}).values()) for s in seats}
    button = None if table.variant.stud else _button_from_blinds(seats, bets, stakes)
    if button is None:
        first = dealt_order[0]
        button = seats[seats.index(first) - 1]  # the deal starts left of the button
    if card_button is not None and card_button not in seats and button == _seat_before(seats, card_button):
        button = card_button  # a dead button (tournaments): on a seat nobody plays, the blinds after it
    counted, known = {}, True
    for s in seats:
        in_zone = sum(bets[s])
        stack_zone = zones.get(Zone("stack", s).name)
        if stack_zone:
            counted[s] = sum(stack_zone.values()) + in_zone
        elif s in stacks:
            counted[s] = stacks[s]
        else:
            counted[s], known = UNKNOWN_STACK, False
    order = BettingHand.order_from_button(seats, button)  # the engine's own seating rule
    no_small_blind = False
    straddles: list[Straddle] = []
    if table.variant.stud:
        sb = bb = None
        bomb_pot = None  # (a bomb pot is a flop game's: CA GR 14.2, 14.3)
    elif bomb_pot is not None:
        sb = bb = None
    else:
        no_small_blind = _small_blind_seat_empty(table.seats, order, button, bets, stakes)
        if len(order) >= 3 and not bets[order[0]]:
            no_small_blind = card_no_small_blind
        sb, bb = (order[1], order[0]) if len(order) == 2 else (order[0], order[1])
        if no_small_blind:
            sb, bb = None, order[0]
        straddles = _straddles(order, bb, bets, stakes)
    return Opening(table, seats, bets, list(zones.get("pot", {}).values()), button, counted, known, sb, bb, stakes,
                   level, bomb_pot, straddles, no_small_blind, bring_in_seat)


def _small_blind_seat_empty(table_seats: int, order: list[int], button: int, bets: Mapping[int, list[int]],
                            stakes: Level) -> bool:
    """The zones and the seats show a big blind and no small blind (DE 9: "Sollte einmal der Big-Blind in der
    aktuellen Runde ausscheiden, gibt es in der nächsten Runde keinen Small-Blind"; AC 27): the first player
    left of the button posted the big blind, the next nothing, and the seat between the button and that player
    — where the small blind would be — is empty (three players or more)."""
    if len(order) < 3 or sum(bets[order[0]]) != stakes.big_blind or bets[order[1]]:
        return False
    first = order[0]
    between = range(button + 1, first) if first > button else [*range(button + 1, table_seats + 1),
                                                                *range(1, first)]
    return any(seat not in order for seat in between)


def _seat_before(seats: list[int], seat: int) -> int:
    """The seat in play that comes last before ``seat`` clockwise (the button a live seat would hold)."""
    before = [s for s in seats if s < seat]
    return before[-1] if before else seats[-1]


def _button_from_blinds(seats: list[int], bets: Mapping[int, list[int]], stakes: Level) -> int | None:
    """The button as the blinds show it: the big blind lies in the zone of the seat after the small blind's,
    and the button sits before the small blind (heads-up, the button posts the small blind). ``None`` when the
    zones do not show exactly that (a missing or wrong blind is then read against the deal's order)."""
    sb, bb = stakes.small_blind, stakes.big_blind
    for i, seat in enumerate(seats):
        after = seats[(i + 1) % len(seats)]
        if sum(bets[seat]) == sb and sum(bets[after]) == bb and sb != bb:
            return seat if len(seats) == 2 else seats[i - 1]
    return None


def _straddles(order: list[int], bb: int, bets: Mapping[int, list[int]], stakes: Level) -> list[Straddle]:
    """Chips in a seat's zone beyond the blinds before the cards are out: a straddle (CA Actions 1)."""
    if len(order) < 3:
        return []
    out: list[Straddle] = []
    level, previous = stakes.big_blind, bb
    for seat in order[2:] + order[:2]:
        amount = sum(bets.get(seat, []))
        if seat in (order[0], order[1]) or amount <= level:
            continue
        i = order.index(previous)
        if order[(i + 1) % len(order)] == seat:
            kind = "live"
        elif seat == order[-1]:
            kind = "button"
        else:
            kind = "mississippi"
        out.append(Straddle(amount, kind, seat))
        level, previous = amount, seat
        if kind != "live":
            break
    return out
