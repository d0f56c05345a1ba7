"""Random, legal stud hands (``stud``, ``stud8``, ``razz``), played by pokerkit, and the same hands dealt on a
simulated cards-only stud table: the proof that the table reads a stud hand as it was dealt.

pokerkit plays the hand: antes, the bring-in or a completion, and random legal actions street by street, its own
rules saying whose turn it is and which cards are dealt up. The cards come from one seeded deck, dealt in pokerkit's
order (one round at a time from the first seat); a burn card precedes each of fourth to seventh street. A hand in
which the deck would run short on seventh street (seven players all staying) is drawn again: pokerkit reshuffles
the discards where the table deals a community card, so their hands would differ (``StudHand.redrawn`` counts them).

:func:`deal_on_table` lays the hand's cards on the table's antennas as a dealer would: down cards on ``seatN.cards``,
up cards on ``seatN.up``, burns on ``burn``, a folded hand's cards into the muck, and everything gathered at the end.
"""

from __future__ import annotations

import random
import warnings
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from controller.cards import FULL_DECK
from controller.domain import DomainEvent

GAMES = ("stud", "stud8", "razz")
STREETS = ("third", "fourth", "fifth", "sixth", "seventh")
SEATS = 8  # the example stud table's


@dataclass
class StudHand:
    """One hand as pokerkit played it."""

    game: str
    seats: list[int]  # in dealing order (pokerkit's players 0, 1, ...)
    moves: list[tuple[str, Any, Any]] = field(default_factory=list)  # ("deal", seat, (card, up)), ("burn", card,
    # None), ("fold", seat, street)
    hole: dict[int, list[tuple[str, bool]]] = field(default_factory=dict)  # seat → (card, up) as dealt
    folded: list[int] = field(default_factory=list)
    payoffs: dict[int, int] = field(default_factory=dict)  # seat → chips won or lost (pokerkit's)
    openers: dict[str, int] = field(default_factory=dict)  # street → the seat whose cards open it, by pokerkit (third:
    # the bring-in), on each street where anyone acted
    redrawn: int = 0  # hands drawn again before this one (the deck would have run short)
    stakes: tuple[int, int, int, int] = (0, 0, 0, 0)  # ante, bring-in, small bet, big bet
    stacks: dict[int, int] = field(default_factory=dict)  # seat → its stack before the antes
    # every action in order: (seat, street, what, chips added), what one of "bring_in", "cbr" (a completion, bet or
    # raise), "cc" (a check or call) and "f" (PHH's verbs)
    actions: list[tuple[int, str, str, int]] = field(default_factory=list)


def _pokerkit_game(game: str):
    from pokerkit import (FixedLimitRazz, FixedLimitSevenCardStud,  # noqa: PLC0415 (the oracle, on demand)
                          FixedLimitSevenCardStudHighLowSplitEightOrBetter)
    return {"stud": FixedLimitSevenCardStud, "stud8": FixedLimitSevenCardStudHighLowSplitEightOrBetter,
            "razz": FixedLimitRazz}[game]


def random_stud_hand(rng: random.Random, game: str, players: tuple[int, int] = (2, 7)) -> StudHand:
    """A random legal hand of ``game`` with ``players`` (the fewest and the most) on random seats."""
    redrawn = 0
    while True:
        hand = _play(rng, game, players)
        if hand is not None:
            hand.redrawn = redrawn
            return hand
        redrawn += 1


def _play(rng: random.Random, game: str, players: tuple[int, int]) -> StudHand | None:
    from pokerkit import Automation  # noqa: PLC0415
    n = rng.randint(*players)
    seats = sorted(rng.sample(range(1, SEATS + 1), n))
    ante, bring_in, small, big = rng.choice([(1, 2, 5, 10), (5, 10, 20, 40), (25, 50, 200, 400)])
    stacks = [rng.choice([big * 3, big * 10, big * 40]) for _ in seats]
    automations = (Automation.ANTE_POSTING, Automation.BET_COLLECTION, Automation.BLIND_OR_STRADDLE_POSTING,
                   Automation.HOLE_CARDS_SHOWING_OR_MUCKING, Automation.HAND_KILLING, Automation.CHIPS_PUSHING,
                   Automation.CHIPS_PULLING)
    state = _pokerkit_game(game).create_state(automations, True, ante, bring_in, small, big, stacks, n)
    deck = list(FULL_DECK)
    rng.shuffle(deck)
    hand = StudHand(game, seats, hole={s: [] for s in seats}, stakes=(ante, bring_in, small, big),
                    stacks=dict(zip(seats, stacks)))
    street = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        while state.status:
            if state.can_burn_card():
                if len(deck) < 1 + sum(1 for s in state.statuses if s):
                    return None  # seventh street: not a card for every live seat
                card = deck.pop()
                state.burn_card("??")
                hand.moves.append(("burn", card, None))
                street += 1
            elif state.can_deal_hole():
                index = state.hole_dealee_index
                card = deck.pop()
                dealt = state.deal_hole(card)
                up = bool(dealt.statuses[0])
                seat = seats[index]
                hand.hole[seat].append((card, up))
                hand.moves.append(("deal", seat, (card, up)))
            elif state.actor_index is not None:
                _act(state, rng, hand, seats, STREETS[street])
            else:
                break
    hand.payoffs = {seat: int(p) for seat, p in zip(seats, state.payoffs)}
    return hand


def _act(state, rng: random.Random, hand: StudHand, seats: list[int], street: str) -> None:
    index = state.actor_index
    seat = seats[index]
    hand.openers.setdefault(street, seats[state.opener_index])  # by the cards, though it be all-in
    bet = int(state.bets[index])  # the seat's bet this street before it acts
    roll = rng.random()
    if state.can_post_bring_in():
        if roll < 0.7 or not state.can_complete_bet_or_raise_to():
            what, added = "bring_in", int(state.post_bring_in().amount)
        else:
            what, added = "cbr", int(state.complete_bet_or_raise_to().amount) - bet
    elif state.can_complete_bet_or_raise_to() and roll < 0.2 and all(state.stacks):
        # (no raise once a player is all-in: after a short all-in the engine raises from the last full bet, TDA
        # 47-2, and pokerkit from the all-in: tests/test_stud_oracle.py counts those hands)
        what, added = "cbr", int(state.complete_bet_or_raise_to().amount) - bet
    elif state.checking_or_calling_amount == 0 or roll < 0.8 or not state.can_fold():
        what, added = "cc", int(state.check_or_call().amount)
    else:
        state.fold()
        hand.folded.append(seat)
        hand.moves.append(("fold", seat, street))
        what, added = "f", 0
    hand.actions.append((seat, street, what, added))
    if added:
        hand.moves.append(("chips", seat, added))


def engine_stud_hand(rng: random.Random, game: str, seats: Sequence[int], stacks: Mapping[int, int],
                     stakes: tuple[int, int, int, int], rules: str = "tda") -> StudHand:
    """A random legal hand of ``game`` played by the betting engine (``controller.betting``) among ``seats`` (in
    dealing order) with ``stacks`` and ``stakes`` (ante, bring-in, small bet, big bet): the simulator's stud dealer,
    where pokerkit (a test dependency) is not at hand. Each street opens from the cards showing (``controller.stud``,
    an open pair on fourth street as the house allows), the players act as pokerkit's random players do here; with
    too few cards left for seventh street the dealer turns one community card. ``payoffs``: the engine's award."""
    from controller import stud  # noqa: PLC0415
    from controller.betting import VARIANTS, BettingHand  # noqa: PLC0415
    from controller.rules import profile  # noqa: PLC0415
    from controller.showdown import award  # noqa: PLC0415
    from sim.chip_change import chips_for  # noqa: PLC0415

    ante, bring_in, small, big = stakes
    house = profile(rules)
    seats = list(seats)
    hand = BettingHand(VARIANTS[game.upper()], seats, seats[-1], dict(stacks), (0, 0), ante=ante, bets=(small, big),
                       bring_in=bring_in, rules=house)
    out = StudHand(game, seats, hole={s: [] for s in seats}, stakes=stakes, stacks=dict(stacks))
    deck = list(FULL_DECK)
    rng.shuffle(deck)
    board: list[str] = []
    done = 0  # the engine's actions already turned into moves

    def moves() -> None:
        """The engine's new actions as :attr:`StudHand.actions`, and the moves they make (chips, a fold)."""
        nonlocal done
        for a in hand.actions[done:]:
            done += 1
            if a.kind == "ante":  # (the antes go in before the deal: chip_steps)
                continue
            kind = a.base if a.kind == "all_in" else a.kind
            what = {"bring_in": "bring_in", "call": "cc", "check": "cc", "fold": "f"}.get(kind, "cbr")
            out.actions.append((a.seat, a.street, what, a.added))
            if what == "f":
                out.folded.append(a.seat)
                out.moves.append(("fold", a.seat, a.street))
            elif a.added:
                out.moves.append(("chips", a.seat, a.added))

    def pay(seat: int) -> None:
        owed = hand.seat_state(seat)["owed"]
        if owed:
            hand.push(seat, chips_for(owed))

    moves()
    for k, street in enumerate(STREETS):
        if hand.status != "betting":
            break
        live = [s for s in seats if s in hand.live_seats]
        if k:
            out.moves.append(("burn", deck.pop(), None))  # (seven cards to eight seats and the burns leave one)
            if k == 4 and len(deck) < len(live):  # not a card for every live seat: one community card, the last of
                # the deck, or with none left the burn card dealt again from the discards
                board.append(deck.pop() if deck else out.moves[-1][1])
                out.moves.append(("board", board[0], None))
        for r in range(3 if k == 0 else 1):
            for seat in live if not board else []:
                up = (r == 2) if k == 0 else k < 4
                card = deck.pop()
                out.hole[seat].append((card, up))
                out.moves.append(("deal", seat, (card, up)))
        showing = {s: [c for c, up in out.hole[s] if up] for s in live}
        if k == 0:
            first = stud.bring_in_seat({s: showing[s][0] for s in live}, game)
        else:
            first = stud.first_to_act(showing, game, seats)
        open_pair = k == 1 and stud.big_bet_allowed_on_fourth(showing, game, house.open_pair_big_bet)
        out.openers[street] = first
        hand.start_street(first, open_pair=open_pair)
        while (seat := hand.to_act()) is not None:
            roll = rng.random()
            legal = hand.legal(seat)
            assert legal is not None
            if not legal.can_fold and not legal.can_check and hand.current_bet == 0:  # the bring-in is due (it
                # cannot be checked or folded): brought in, or completed
                hand.declare(seat, "bring_in" if roll < 0.7 or not legal.can_raise else "complete")
            elif legal.can_raise and roll < 0.2 and not any(hand.is_all_in(s) for s in hand.live_seats):
                hand.declare(seat, "bet" if hand.current_bet == 0 else "raise", hand.min_raise_to(seat))
            elif hand.to_call(seat) and roll > 0.8:
                hand.fold(seat)
            else:
                hand.declare(seat, "call" if hand.to_call(seat) else "check")
            pay(seat)
            moves()
        if hand.status == "betting" and hand.round_complete():
            hand.end_street()
            moves()
    result = award(hand, {s: [c for c, _up in out.hole[s]] for s in hand.live_seats}
                   if hand.status == "showdown" else None, board)
    out.payoffs = {s: result.finishing_stacks[s] - stacks[s] for s in seats}
    return out


def pokerkit_winners(hand: StudHand) -> dict[str, list[int]]:
    """The seats whose cards win the showdown by pokerkit's hand ranking, high and (stud8) low, among the seats that
    did not fold; empty when one seat was left."""
    from pokerkit import EightOrBetterLowHand, RegularLowHand, StandardHighHand  # noqa: PLC0415
    live = [s for s in hand.seats if s not in hand.folded]
    if len(live) < 2:
        return {}

    def best(kind) -> list[int]:
        hands = {}
        for seat in live:
            try:
                hands[seat] = kind.from_game("".join(card for card, _up in hand.hole[seat]))
            except ValueError:  # no qualifying low
                continue
        top = max(hands.values(), default=None)
        return sorted(seat for seat, h in hands.items() if h == top)

    if hand.game == "razz":
        return {"high": best(RegularLowHand)}
    winners = {"high": best(StandardHighHand)}
    if hand.game == "stud8":
        winners["low"] = best(EightOrBetterLowHand)
    return winners


def random_stud_hands(count: int, seed: int = 0, games: tuple[str, ...] = GAMES) -> list[StudHand]:
    rng = random.Random(seed)
    return [random_stud_hand(rng, games[i % len(games)]) for i in range(count)]


# ---- the hand on the table ----------------------------------------------------------------------------

def stud_zones(seats: int = SEATS) -> dict[str, tuple[str, int]]:
    """The antennas of a stud table: each seat's down and up cards side by side (neighbours: the RF noise model's
    cross reads pass between them), the board (the community card), burn and muck."""
    zones: dict[str, tuple[str, int]] = {}
    for s in range(1, seats + 1):
        zones[f"seat{s}.cards"] = ("main", 2 * s - 1)
        zones[f"seat{s}.up"] = ("main", 2 * s)
    for i, name in enumerate(("board", "burn", "muck")):
        zones[name] = ("main", 2 * seats + 1 + i)
    return zones


def deal_on_table(driver, hand: StudHand, pace_s: float = 0.4) -> None:
    """Deal ``hand`` on ``driver`` (a ``sim.table_driver.TableDriver`` of :func:`stud_zones`), a move every
    ``pace_s``, then gather the cards and wait until the table has ended the hand."""
    cards_of: dict[int, list[str]] = {s: [] for s in hand.seats}
    for kind, what, detail in hand.moves:
        if kind == "deal":
            card, up = detail
            driver.put(card, f"seat{what}.{'up' if up else 'cards'}", seconds=pace_s)
            cards_of[what].append(card)
        elif kind == "burn":
            driver.put(what, "burn", seconds=pace_s)
        elif kind == "fold":  # the seat's cards pushed into the muck
            driver.place(*cards_of[what], zone="muck")
            driver.run(pace_s)
    _gather(driver)


def _gather(driver) -> None:
    """The cards gathered and the pot pushed; wait until the table has ended the hand."""
    driver.run(1.0)
    driver.clear()
    for _ in range(100):
        if any(e.type == "hand_ended" for e in driver.run(0.5)):
            return
    raise AssertionError("the table did not end the hand")


# ---- the hand with its chips ----------------------------------------------------------------------------

DENOMINATIONS = (1, 5, 25, 100, 500, 1000, 5000)


def chip_rack(chips_each: int = 300) -> dict[int, list[str]]:
    """A chip set for the simulated stud table: ``chips_each`` chips of each of ``DENOMINATIONS``."""
    return {value: [f"E00403{d:02X}{n:08X}" for n in range(chips_each)] for d, value in enumerate(DENOMINATIONS)}


def chip_zones(seats: int = SEATS) -> dict[str, tuple[str, int]]:
    """:func:`stud_zones` and, after them, a betting zone per seat and the pot."""
    zones = stud_zones(seats)
    first = max(antenna for _reader, antenna in zones.values()) + 1
    zones.update({f"seat{s}.bets": ("main", first + s - 1) for s in range(1, seats + 1)})
    zones["pot"] = ("main", first + seats)
    return zones


Step = tuple[float, str, Callable[[], None]]  # wait this long, then (described so) do this


def chip_steps(hand: StudHand, field, uid_of_card: Mapping[str, str], rack: Mapping[int, list[str]],
               command: Callable[[dict], None], pace_s: float = 0.4, push_s: float = 1.0) -> list[Step]:
    """The physical moves of ``hand`` with its betting as chips, on ``field`` (a ``sim.field.TableField`` of
    :func:`chip_zones`; ``rack``: the chips at hand, value → tag UIDs, taken from the end): the floor enters the
    stacks (``command``), the antes go into the pot, the cards are dealt (down on ``seatN.cards``, up on
    ``seatN.up``, a burn before each later street, the community card on the board when the deck runs short), each
    bet is the chips the player adds pushed into the betting zone in one motion (a raise holds a chip no larger than
    the raise, so that it reads as one: TDA 45), a check is nothing at all, a fold sends the cards to the muck; before
    each later street's burn the dealer collects the bets into the pot, an uncalled part back to its owner. Each
    step waits ``pace_s`` after a card and ``push_s`` after chips (the table reads a push once its chips settle)."""
    from sim.chip_change import chips_for, split_uids  # noqa: PLC0415

    steps: list[Step] = []
    values = {uid: value for value, uids in rack.items() for uid in uids}
    denominations = tuple(sorted(rack))
    ante = hand.stakes[0]
    stacks = dict(hand.stacks)
    steps.append((0.0, "the floor enters the stacks", lambda: command(
        {"command": "set_stacks", "stacks": {str(s): stacks[s] for s in hand.seats}})))

    def take(amount: int, smallest: int | None = None) -> list[str]:
        try:
            return [rack[value].pop() for value in chips_for(amount, smallest, denominations)]
        except (IndexError, KeyError):
            raise ValueError("the hand needs more chips than the rack holds") from None

    def place(uids: Sequence[str], zone: str) -> Callable[[], None]:
        return lambda: [field.place(uid, zone) for uid in uids]

    antes = [uid for seat in hand.seats if ante for uid in take(min(ante, stacks[seat]))]
    steps.append((0.05, "the players ante", place(antes, "pot")))
    cards_of: dict[int, list[str]] = {s: [] for s in hand.seats}
    bets: dict[int, list[str]] = {s: [] for s in hand.seats}  # the chips in each betting zone this street
    wait = pace_s

    def bet_of(seat: int) -> int:
        return sum(values[uid] for uid in bets[seat])

    def collect() -> None:
        """The bets into the pot; the part of the largest bet that nobody matched goes back to its owner."""
        nonlocal wait
        if not any(bets.values()):
            return
        top = max(hand.seats, key=bet_of)
        uncalled = bet_of(top) - max(bet_of(s) for s in hand.seats if s != top)
        back: list[str] = []
        if uncalled > 0:
            back, stays = split_uids(bets[top], values, uncalled)
            if not back:  # no exact change in the zone: the dealer takes it all and puts the called part in
                back, stays = list(bets[top]), take(bet_of(top) - uncalled)
            bets[top] = stays
        into_pot = [uid for seat in hand.seats for uid in bets[seat]]
        steps.append((wait, "the dealer collects the bets", lambda: (
            [field.remove(uid) for uid in back], [field.place(uid, "pot") for uid in into_pot])))
        wait = push_s
        for seat in hand.seats:
            bets[seat] = []

    for kind, what, detail in hand.moves:
        if kind == "deal":
            card, up = detail
            steps.append((wait, f"deal {card} {'up' if up else 'down'} to seat {what}",
                          place([uid_of_card[card]], f"seat{what}.{'up' if up else 'cards'}")))
            cards_of[what].append(card)
            wait = pace_s
        elif kind == "burn":
            collect()
            steps.append((wait, "burn", place([uid_of_card[what]], "burn")))
            wait = pace_s
        elif kind == "board":  # the deck ran short on seventh street: one community card
            collect()
            steps.append((wait, f"the community card {what}", place([uid_of_card[what]], "board")))
            wait = pace_s
        elif kind == "fold":
            steps.append((wait, f"seat {what} folds", place([uid_of_card[c] for c in cards_of[what]], "muck")))
            wait = pace_s
        else:  # chips: what the seat added, in one motion
            facing = max(map(bet_of, hand.seats)) - bet_of(what)
            uids = take(detail, detail - facing if 0 < facing < detail else None)
            steps.append((wait, f"seat {what} puts in {detail}", place(uids, f"seat{what}.bets")))
            bets[what] += uids
            wait = push_s
    return steps


def deal_with_chips(driver, hand: StudHand, pace_s: float = 0.4, push_s: float = 1.0) -> None:
    """Deal ``hand`` with its chips (:func:`chip_steps`) on ``driver`` (a ``sim.table_driver.TableDriver`` of
    :func:`chip_zones` with a rack of chips), then gather the cards and push the pot, and wait until the table has
    ended the hand."""
    for wait, _describe, apply in chip_steps(hand, driver.field, driver.uid_of, driver.rack,
                                              lambda body: driver.command(body.pop("command"), **body),
                                              pace_s, push_s):
        driver.run(wait)
        apply()
    _gather(driver)


def read_back_betting(events: list[DomainEvent]) -> dict[str, Any]:
    """The last hand's betting as the table read it from the chips: each action as :attr:`StudHand.actions` has them
    (PHH's verbs), the finishing stacks of the showdown, and the chip layer's rulings and chip counts (codes)."""
    hand = max(e.hand for e in events if e.hand is not None)
    mine = [e for e in events if e.hand == hand]
    verbs = {"bring_in": "bring_in", "check": "cc", "call": "cc", "bet": "cbr", "raise": "cbr", "complete": "cbr",
             "fold": "f"}
    actions = []
    for e in mine:
        if e.type == "action" and e.public["action"] != "ante":
            kind = e.public["action"] if e.public["action"] != "all_in" else e.public["as"]
            actions.append((e.public["seat"], e.public["street"], verbs[kind], e.public["added"]))
    showdown = [e.public for e in mine if e.type == "showdown"]
    finishing = showdown[-1]["finishing_stacks"] if showdown else None
    pots = showdown[-1]["pots"] if showdown else []
    return {"actions": actions,
            "finishing": {int(s): v for s, v in finishing.items()} if finishing else None,
            # what lets the award differ from pokerkit's: odd chips given by the cards (TDA 20-2), pots divided each
            # on its own (TDA 20-5) where pokerkit pools the pots the same hands contest
            "odd_chips": sum(len(p["odd_chips"]) for p in pots),
            "split_pots": sum(1 for p in pots if len(p["winners"]) > 1 or p.get("halves")),
            "problems": [f"{e.type} {e.public.get('code')}" for e in mine if e.type in ("bet_ruling", "chip_count")]}


def pokerkit_finishing(hand: StudHand) -> dict[int, int]:
    """Each seat's stack after the hand, as pokerkit paid it."""
    return {s: hand.stacks[s] + hand.payoffs[s] for s in hand.seats}


def read_back(events: list[DomainEvent]) -> dict[str, Any]:
    """The last hand as the table published it on its secure feed: each seat's cards with their face, the folds."""
    hand = max(e.hand for e in events if e.hand is not None)
    mine = [e.payload(secure=True) for e in events if e.hand == hand]
    hole: dict[int, list[tuple[str, bool]]] = {}
    for e in mine:
        if e["type"] == "card_dealt":
            hole.setdefault(e["seat"], []).append((e["card"], e["up"]))
    ended = next(e for e in mine if e["type"] == "hand_ended")
    return {"hole": hole, "folded": [e["seat"] for e in mine if e["type"] == "fold"],
            "live": ended["live_seats"], "irregular": [e for e in mine if e["type"] == "irregular_card"],
            "openers": {e["street"]: e["seat"] for e in mine if e["type"] in ("bring_in", "first_to_act")}}


def play_with_chips(hand: StudHand, noise=None, rules: str = "tda") -> dict[str, Any]:
    """``hand`` dealt with its chips on a new simulated stud table (``noise``: a ``sim.noise.NoiseModel``, None:
    perfect reads) and read back (:func:`read_back_betting`)."""
    driver = chip_table(hand, noise, rules)
    deal_with_chips(driver, hand)
    return read_back_betting(driver.events)


def chip_table(hand: StudHand, noise=None, rules: str = "tda"):
    """A new simulated stud table that reads cards and chips (a ``sim.table_driver.TableDriver`` of
    :func:`chip_zones` with a rack of chips) set for ``hand``'s game, stakes and players."""
    from controller.chip_betting import BettingSetup  # noqa: PLC0415
    from controller.game import GameController  # noqa: PLC0415
    from controller.table import TableSetup  # noqa: PLC0415
    from hal.zones import DebounceSettings  # noqa: PLC0415
    from sim.table_driver import TableDriver, debounce_by_pile  # noqa: PLC0415

    ante, bring_in, small, big = hand.stakes
    rack = chip_rack()
    zones = chip_zones()
    setup = TableSetup("stud-chips", SEATS, TABLE_DECK, hole_cards=7, players=tuple(hand.seats), variant=hand.game,
                       rules=rules)
    betting = BettingSetup(variant=hand.game.upper(), small_blind=0, big_blind=0, ante=ante,
                           chips={uid: value for value, uids in rack.items() for uid in uids}, chip_set="stud",
                           rules=rules, bet_limits=(small, big), bring_in=bring_in, settle_s=0.4)
    cards = DebounceSettings(2, 0.6, move_after_cycles=3)  # the example tables' card debouncing
    debounce = debounce_by_pile(zones) | {zone: cards for zone in zones if zone.endswith((".cards", ".up"))}
    return TableDriver(GameController(setup, betting), zones, deck=TABLE_DECK, noise=noise, debounce=debounce,
                       order_window_s=1.0, min_rssi_dbm=-60, rack=rack)


# ---- a PHH hand history as a hand to deal ----------------------------------------------------------------

PHH_GAMES = {"F7S": "stud", "F7S/8": "stud8", "FR": "razz"}  # pokerkit's codes


def hand_from_phh(phh: Mapping[str, Any], rng: random.Random) -> StudHand:
    """A stud PHH hand history (``controller.phh``'s stud notation) as the moves a dealer makes: each street's cards
    as the history deals them (third street two down and one up, then up to sixth, seventh down), a burn before each
    later street, the community card (``d db``) where the deck ran short, and each action's chips by the betting
    engine's reading of it. A down card the history hides (``??``) and never shows is drawn from the rest of the deck
    with ``rng``, as are the burns. Raises ``ValueError`` for a hand that cannot be dealt (an up card unknown)."""
    from controller import phh as phhlib  # noqa: PLC0415

    engine, _hole, _board, _shown = phhlib.replay(phh)
    seats = list(engine.order)
    seat_of = {f"p{i + 1}": s for i, s in enumerate(seats)}
    dealt: dict[int, list[str]] = {s: [] for s in seats}  # as the history deals them, "??" where hidden
    lines = [raw.split("#")[0].split() for raw in phh["actions"]]
    lines = [words for words in lines if words]
    for words in lines:
        if words[:2] == ["d", "dh"]:
            text = words[3] if len(words) > 3 else ""
            dealt[seat_of[words[2]]] += [text[i:i + 2] for i in range(0, len(text), 2)]
        elif len(words) > 2 and words[1] == "sm" and words[2] != "-":  # the cards shown name the hidden ones
            shown = phhlib.parse_cards(words[2])
            if len(shown) == len(dealt[seat_of[words[0]]]):
                dealt[seat_of[words[0]]] = shown
    for seat, cards in dealt.items():
        for k, card in enumerate(cards):
            if card == "??" and 2 <= k <= 5:
                raise ValueError(f"seat {seat}'s up card {k - 1} is unknown ('??'): the table cannot deal it")
    known = {c for cards in dealt.values() for c in cards if c != "??"}
    known |= {c for words in lines if words[:2] == ["d", "db"] for c in phhlib.parse_cards(words[2])}
    deck = [c for c in FULL_DECK if c not in known]
    rng.shuffle(deck)
    for cards in dealt.values():
        cards[:] = [deck.pop() if c == "??" else c for c in cards]
    ante, bring_in, small, big = (engine.ante, engine.bring_in, *engine.limit_bets)
    hand = StudHand(PHH_GAMES[phh["variant"]], seats, hole={s: [] for s in seats}, stakes=(ante, bring_in, small, big),
                    stacks=phhlib.starting_stacks(engine))
    played = [a for a in engine.actions if a.kind != "ante"]
    verbs = {"bring_in": "bring_in", "call": "cc", "check": "cc", "fold": "f"}
    street = 0
    to_deal: list[tuple[int, int]] = []  # a street's cards, (seat, how many), as the history deals them

    def deal_street() -> None:
        """The street's cards dealt as a dealer deals them: one round at a time, each seat in turn."""
        nonlocal street
        for deal_round in range(max((n for _seat, n in to_deal), default=0)):
            for seat, n in to_deal:
                k = len(hand.hole[seat])
                if k >= len(dealt[seat]) or n <= deal_round:
                    continue
                if max(0, k - 2) > street:  # the first card of a later street: a burn before it
                    street = k - 2
                    hand.moves.append(("burn", deck.pop(), None))
                card, up = dealt[seat][k], 2 <= k <= 5
                hand.hole[seat].append((card, up))
                hand.moves.append(("deal", seat, (card, up)))
        to_deal.clear()

    for words in lines:
        if words[:2] == ["d", "dh"]:
            to_deal.append((seat_of[words[2]], len(words[3]) // 2 if len(words) > 3 else 0))
            continue
        deal_street()
        if words[:2] == ["d", "db"]:  # seventh street's one community card
            street = 4
            if deck:  # (else the community card is the burn card dealt again)
                hand.moves.append(("burn", deck.pop(), None))
            hand.moves.append(("board", phhlib.parse_cards(words[2])[0], None))
        elif words[0] != "d" and words[1] != "sm":
            if not played:
                raise ValueError(f"{' '.join(words)!r}: the betting engine read no action for it")
            a = played.pop(0)
            kind = a.base if a.kind == "all_in" else a.kind
            what = verbs.get(kind, "cbr")
            hand.actions.append((a.seat, a.street, what, a.added))
            if what == "f":
                hand.folded.append(a.seat)
                hand.moves.append(("fold", a.seat, a.street))
            elif a.added:
                hand.moves.append(("chips", a.seat, a.added))
    deal_street()
    return hand


TABLE_DECK = {f"E0040150C3{i + 1:06X}": card for i, card in enumerate(FULL_DECK)}


def oracle_run(hands: int, noisy: int, seed: int = 20261204, games: tuple[str, ...] = GAMES) -> dict[str, Counter]:
    """``hands`` random hands of each game dealt with their chips (the first ``noisy`` with RF noise) and read back:
    per game, how many read back as pokerkit played them and what they held. A hand that differs is counted by what
    differs; an award that differs only by a split pot's odd chips (TDA 20-2) is counted as such."""
    from sim.noise import NoiseModel  # noqa: PLC0415

    out: dict[str, Counter] = {}
    for game in games:
        rng = random.Random(f"{seed}-{game}")
        counts: Counter = Counter()
        for i in range(hands):
            hand = random_stud_hand(rng, game)
            got = play_with_chips(hand, NoiseModel.realistic(0.05, seed=i) if i < noisy else None)
            counts["hands"] += 1
            counts["noisy"] += i < noisy
            counts["players"] += len(hand.seats)
            counts["showdowns"] += len(hand.seats) - len(hand.folded) > 1
            for _seat, _street, what, added in hand.actions:
                counts[f"actions {what}"] += 1
            theirs = pokerkit_finishing(hand)
            if got["actions"] != hand.actions:
                counts["actions differ"] += 1
            elif got["problems"]:
                counts["rulings or chip counts"] += 1
            elif got["finishing"] == theirs:
                counts["identical"] += 1
            elif got["split_pots"] and sum(got["finishing"].values()) == sum(theirs.values()):
                counts["identical actions, a split pot's odd chips by the cards (TDA 20-2)"] += 1
            else:
                counts["award differs"] += 1
        out[game] = counts
    return out


def main(argv: list[str] | None = None) -> int:
    import argparse  # noqa: PLC0415
    import time  # noqa: PLC0415

    parser = argparse.ArgumentParser(prog="python -m sim.stud_hands", description="pokerkit's random stud hands dealt "
                                     "with their chips on the simulated stud table and read back (the oracle's counts)")
    parser.add_argument("--hands", type=int, default=100, help="hands per game (default 100)")
    parser.add_argument("--noisy", type=int, default=30, help="of them read with RF noise (default 30)")
    parser.add_argument("--seed", type=int, default=20261204)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    for game, counts in oracle_run(args.hands, args.noisy, args.seed).items():
        print(f"{game}: {dict(sorted(counts.items()))}")
    print(f"{time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
