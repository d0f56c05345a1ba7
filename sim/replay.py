"""Replay a PHH hand history as physical table activity and read it back with the real controller.

``ReplayTable`` is a ten-seat simulated table (a card zone and a betting zone per seat, board, burn, muck and pot)
with one deck and a generated chip set. For each hand it

1. enters the starting stacks as the floor would (``set_stacks``) and puts the antes into the pot zone and the
   blinds and straddles into the posting seats' betting zones, as chips;
2. deals the hole cards one at a time from the seat left of the button;
3. plays every action as the hand history gives it: a bet, call or raise is the chips the player adds, pushed into
   the betting zone in one motion; a check is nothing at all (the table cannot see it); a fold sends the seat's
   cards to the muck;
4. at the end of each betting round collects the bets into the pot (an uncalled bet goes back to its owner), burns
   and turns the board cards;
5. finally clears the table.

A stud hand (``F7S``, ``F7S/8``, ``FR``) is dealt instead on a simulated stud table of its own, set for its game,
stakes and players (``sim.stud_hands``: up cards on antennas of their own, the bring-in and bets as chips).

The moves go through the simulated field, the readers (perfect, or with the RF noise model), the HAL's zone
tracker and the real controller (cards and chips), exactly as at a table: on the table driver the scenario tests play
on (``sim.table_driver``), which this replay steps on a schedule of its own (every cycle right after a move, else
every half second). The controller's ``hand_history`` event is the reconstruction. Nothing here tells the
controller what happened except the tags it reads and the floor's stack count.

Chips are made of real denominations so the chip-reading rules stay honest: a raise is never pushed as a single
chip (a lone overchip is a call, TDA 45) and always contains a chip no larger than the raise itself, so taking
away the smallest chip still leaves more than a call (the multiple-chip rule reads it as a raise).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, NamedTuple, Sequence

from controller import phh as phhlib
from controller.betting import FIXED_LIMIT, VARIANTS, BettingHand
from controller.cards import FULL_DECK
from controller.chip_betting import BettingSetup
from controller.domain import DomainEvent
from controller.game import GameController
from controller.rules import EXPOSED_BURN_AFTER_DEAL
from controller.table import TableSetup
from sim.chip_change import DENOMINATIONS, chips_for, split_uids
from sim.field import TableField
from sim.noise import NoiseModel
from sim.stud_hands import PHH_GAMES as STUD_PHH_GAMES  # (sim.stud_hands' chip arithmetic: sim.chip_change)
from sim.table_driver import TableDriver, debounce_by_pile

SEATS = 10
CYCLE_S = 0.05
PHH_VARIANTS = {"NT": "NLHE", "PO": "PLO", "FT": "FLHE", "FO/8": "FLO8", "PLO8": "PLO8", "FLHE8": "FLHE8"}
ORDER_WINDOW_S = 1.0  # arrivals come out in the order the tags were first read (hal.zones)
MIN_RSSI_DBM = -60  # between a tag at a zone's edge (about -55 dBm) and one read through the next antenna (-65)


def card_uid(index: int) -> str:
    return f"E0040150C3{index + 1:06X}"


def chip_uid(denomination_index: int, serial: int) -> str:
    return f"E00402{denomination_index:02X}{serial:08X}"


def table_zones(seats: int = SEATS) -> dict[str, tuple[str, int]]:
    zones: dict[str, tuple[str, int]] = {}
    for s in range(1, seats + 1):
        zones[f"seat{s}.cards"] = ("main", s)
        zones[f"seat{s}.bets"] = ("main", seats + s)
    for i, name in enumerate(("board", "burn", "muck", "pot")):
        zones[name] = ("main", 2 * seats + 1 + i)
    return zones


@dataclass
class HandResult:
    name: str
    ok: bool
    reason: str = ""
    reconstructed: dict[str, Any] | None = None
    reconstructed_text: str = ""
    events: list[DomainEvent] = field(default_factory=list)


class Step(NamedTuple):
    """One physical move of a hand's script (a named tuple: a hand has dozens, made anew for every hand)."""

    at: float  # table time after the hand's start
    describe: str
    apply: Callable[[], None]
    reads: int = 0  # cycles the readers need to see it: 3 for a card (three reads in a row), 1 for a chip


class HandScript:
    """The physical moves of a hand, from the betting engine's reading of it (exact amounts).

    ``rack``: the chips at hand, denomination → tag UIDs; ``command``: enters a floor input (the stacks).
    """

    def __init__(self, field: TableField, uid_of_card: Mapping[str, str], rack: Mapping[int, Sequence[str]],
                 command: Callable[[dict], None], rng: random.Random, pace_s: float = 0.8, deal_s: float = 0.3,
                 announce_seats: bool = False, read_s: float = 0.0):
        self.field, self.uid_of_card, self.command, self.rng = field, uid_of_card, command, rng
        self.announce_seats = announce_seats
        self.pace_s, self.deal_s = pace_s, max(CYCLE_S, deal_s)
        # The next player acts, and the dealer collects, once the bet before is in: never sooner than the table
        # takes to read it (its chips settled), however brisk the pace.
        self.act_s = max(pace_s, read_s)
        self.chip_set = {uid: value for value, uids in rack.items() for uid in uids}
        self.denominations = tuple(sorted(rack))
        self._rack = {value: list(uids) for value, uids in rack.items()}
        self.free = {value: list(uids) for value, uids in rack.items()}

    def reset(self) -> None:
        """Every chip back in the rack."""
        self.free = {value: list(uids) for value, uids in self._rack.items()}

    def _take_chips(self, values: Sequence[int]) -> list[str]:
        try:
            return [self.free[v].pop() for v in values]
        except (IndexError, KeyError):
            raise ValueError("the hand needs more chips than the rack holds") from None

    def steps(self, hand: BettingHand, hole: Mapping[int, list[str]], board: Sequence[str],
              exposed_at: int | None = None, exposed_procedure: str = EXPOSED_BURN_AFTER_DEAL,
              floor_s: float = 4.5, later_boards: Sequence[Sequence[str]] = ()) -> list[Step]:
        """The physical moves of one hand, from the hand history as the engine read it (exact amounts).

        ``exposed_at``: the dealer exposes the card of this position of the deal (0 is the first card), and the
        dealer's console reports it. The first or second card is a misdeal (TDA 35): after ``floor_s`` for the floor,
        the dealer gathers the cards, the bets go back, and the hand is dealt again. A later card is taken away and
        replaced as the house's ``exposed_procedure`` says (controller.rules.EXPOSED_*). ``later_boards``: a hand
        run twice or three times (CA Actions 8), the boards after the first, each whole: the players agree once the
        betting is over, the first board is run out, then each later run's cards with a burn before each street."""
        steps: list[Step] = []
        t = 0.0
        pace = self.pace_s

        def at(dt: float, describe: str, apply: Callable[[], None], reads: int = 3) -> None:
            nonlocal t
            t += dt
            steps.append(Step(t, describe, apply, reads))

        deal_s = self.deal_s
        order = hand.order
        stacks = phhlib.starting_stacks(hand)
        at(0.0, "the floor enters the stacks", lambda: self.command(
            {"command": "set_stacks", "stacks": {str(s): v for s, v in stacks.items()}}))
        if self.announce_seats:  # hands of unrelated tables: the floor says who plays and where the button is
            at(0.0, "the floor enters the seats", lambda: self.command({"command": "seats", "seats": sorted(order)}))
            at(0.0, "the floor sets the button", lambda: self.command({"command": "set_button",
                                                                       "seat": hand.button}))
        if hand.bomb_pot:  # the players agree before the deal (CA GR 14.2, 14.3)
            at(0.0, "the players agree a bomb pot", lambda: self.command(
                {"command": "bomb_pot", "amount": hand.bomb_pot, "kind": "flip" if hand.flip else "bomb_pot"}))
        zone_value: dict[int, int] = {s: 0 for s in order}  # chips in each betting zone, by value
        zone_uids: dict[int, list[str]] = {s: [] for s in order}
        pot_uids: list[str] = []

        def push(seat: int, values: list[int], describe: str, dt: float) -> None:
            uids = self._take_chips(values)
            zone_uids[seat].extend(uids)
            zone_value[seat] += sum(values)
            at(dt, describe, lambda: [self.field.place(u, f"seat{seat}.bets") for u in uids], reads=1)

        forced = [a for a in hand.actions if a.kind in ("ante", "post_sb", "post_bb", "straddle")]
        for a in forced:
            if a.kind == "ante" and a.added:
                uids = self._take_chips(chips_for(a.added, None, self.denominations))
                pot_uids.extend(uids)
                at(0.05, f"seat {a.seat} antes {a.added}", lambda uids=uids: [self.field.place(u, "pot") for u in uids], reads=1)
            elif a.added:
                push(a.seat, chips_for(a.added, None, self.denominations), f"seat {a.seat} posts {a.added}", 0.05)

        # deal: one card at a time from the seat left of the button
        known = {c for b in later_boards for c in b} | set(board) | {c for h in hole.values() for c in h}
        cards_left = [c for c in FULL_DECK if c not in known]
        self.rng.shuffle(cards_left)
        dealt = {s: list(hole.get(s) or []) for s in order}
        for s in order:
            while len(dealt[s]) < hand.variant.hole_cards:
                dealt[s].append(cards_left.pop())
        plan = [(s, dealt[s][r]) for r in range(hand.variant.hole_cards) for s in order]
        exposed_burn: str | None = None  # an exposed card that is to be the flop's burn
        position = 0
        while position < len(plan):
            s, card = plan[position]
            if position == exposed_at:
                shown = cards_left.pop()
                uid = self.uid_of_card[shown]
                at(deal_s, f"deal {shown} to seat {s}", lambda s=s, uid=uid: self.field.place(uid, f"seat{s}.cards"))
                at(pace * 0.25, f"seat {s}'s card was exposed",
                   lambda s=s: self.command({"command": "exposed_card", "seat": s}), reads=0)
                at(pace * 0.1, "the dealer takes the exposed card", lambda uid=uid: self.field.remove(uid), reads=0)
                if position <= 1:
                    return self._misdeal(steps, t, hand, hole, board, floor_s, later_boards)
                if exposed_procedure == EXPOSED_BURN_AFTER_DEAL:
                    exposed_burn = shown
                    plan.append((s, card))  # the replacement comes after the deal
                    position += 1
                    continue
            at(deal_s, f"deal {card} to seat {s}", lambda s=s, card=card: self.field.place(self.uid_of_card[card],
                                                                                     f"seat{s}.cards"))
            position += 1
        at(0.3, "the deal is over", lambda: None, reads=0)

        board = list(board)
        while len(board) < 5:
            board.append(cards_left.pop())
        burns = [cards_left.pop() for _ in range(3)]
        if exposed_burn is not None:
            burns[0] = exposed_burn
        street = 0
        collected = {c.street: c for c in hand.collections}
        street_names = ("preflop", "flop", "turn", "river")

        def collect(street_index: int) -> None:
            """The dealer sweeps every bet into the pot; an uncalled bet goes back to its owner."""
            c = collected.get(street_names[street_index])
            returned = dict(c.returned) if c else {}
            into_pot, back_to_players = [], []
            for s in order:
                if zone_uids[s]:
                    back = returned.get(s, 0)
                    to_player, to_pot = split_uids(zone_uids[s], self.chip_set, back)
                    if back and not to_player:  # no exact change in the zone: the dealer makes it from the pot
                        to_player, _ = split_uids(zone_uids[s] + pot_uids + into_pot, self.chip_set, back)
                        to_pot = [u for u in zone_uids[s] if u not in to_player]
                        for u in to_player:
                            for pile in (pot_uids, into_pot):
                                if u in pile:
                                    pile.remove(u)
                    into_pot += to_pot
                    back_to_players += to_player
                    zone_uids[s], zone_value[s] = [], 0
            if into_pot or back_to_players:
                pot_uids.extend(into_pot)
                at(self.act_s, "the dealer collects the bets", lambda: (
                    [self.field.place(u, "pot") for u in into_pot], [self.field.remove(u) for u in back_to_players]),
                   reads=1)

        def next_street() -> None:
            nonlocal street
            collect(street)
            street += 1
            lo, hi = (0, 3) if street == 1 else (street + 1, street + 2)
            at(pace * 0.6, f"burn before street {street}", lambda b=burns[street - 1]:
               self.field.place(self.uid_of_card[b], "burn"))
            for card in board[lo:hi]:
                at(deal_s, f"board {card}", lambda card=card: self.field.place(self.uid_of_card[card], "board"))
            at(0.3, "the board is out", lambda: None, reads=0)

        last_push = {(a.seat, a.street): i for i, a in enumerate(hand.actions) if a.added}
        for i, a in enumerate(hand.actions):
            if a.kind in ("ante", "post_sb", "post_bb", "straddle"):
                continue
            while street_names.index(a.street) > street:
                next_street()
            s = a.seat
            if a.kind == "fold":
                for i, card in enumerate(dealt[s]):
                    at(self.act_s if i == 0 else CYCLE_S, f"seat {s} folds",
                       lambda card=card: self.field.place(self.uid_of_card[card], "muck"))
                continue
            if a.kind == "check" or a.added == 0:
                continue  # nothing to see
            facing = max(zone_value.values()) - zone_value[s]
            raising = a.base in ("bet", "raise") or (a.kind in ("bet", "raise"))
            smallest = (a.added - facing) if raising and facing > 0 else None
            back = collected[a.street].returned.get(s, 0) if a.street in collected else 0
            if back and last_push[(s, a.street)] == i and a.added > back:
                # the part nobody calls comes back: pushed as its own chips, the dealer can hand them back
                values = chips_for(a.added - back, smallest, self.denominations) + chips_for(back, None,
                                                                                            self.denominations)
            else:
                values = chips_for(a.added, smallest, self.denominations)
            push(s, values, f"seat {s} {a.kind} to {a.to_amount}", self.act_s)
        # run out the board where the hand went to a showdown
        if len(hand.live_seats) > 1:
            shared = (0, 3, 4, 5)[street]
            if later_boards:  # no more action is possible: the players agree to run it (CA Actions 8)
                at(pace * 2, "the players agree to run it", lambda: self.command(  # once the call is read
                    {"command": "run_it", "times": 1 + len(later_boards)}), reads=0)
            while street < 3:
                next_street()
            for later in later_boards:
                for lo, hi in ((0, 3), (3, 4), (4, 5)):
                    if hi <= shared:
                        continue
                    at(pace * 0.6, "burn for a later run", lambda b=cards_left.pop(): self.field.place(
                        self.uid_of_card[b], "burn"))
                    for card in later[lo:hi]:
                        at(deal_s, f"board {card}", lambda card=card: self.field.place(self.uid_of_card[card],
                                                                                       "board"))
        collect(street)
        at(self.act_s, "the pot is pushed, the cards are gathered", self.field.clear, reads=0)
        return steps

    def _misdeal(self, steps: list[Step], t: float, hand: BettingHand, hole: Mapping[int, list[str]],
                 board: Sequence[str], floor_s: float, later_boards: Sequence[Sequence[str]] = ()) -> list[Step]:
        """The void deal's steps so far, the floor's time, the cards gathered and the bets handed back, then the
        hand dealt again (the button stays)."""
        steps.append(Step(t + floor_s, "misdeal: the floor rules", lambda: None, 0))
        steps.append(Step(t + floor_s + self.pace_s, "the dealer gathers the cards, the bets go back",
                          self.field.clear, 1))
        again_at = t + floor_s + 3 * self.pace_s  # shuffled
        self.reset()  # every chip of the void deal is off the table by then
        return steps + [Step(again_at + step.at, step.describe, step.apply, step.reads)
                        for step in self.steps(hand, hole, board, later_boards=later_boards)]



class ReplayTable:
    """The simulated table the hand histories are replayed on; one controller for the whole run, like a table."""

    def __init__(self, noise: float = 0.0, seed: int = 0, rules: str = "tda", settle_s: float = 0.5,
                 pace_s: float = 0.8, deal_s: float = 0.3):
        self.zones = table_zones()
        self.deck = {card_uid(i): card for i, card in enumerate(FULL_DECK)}
        self.uid_of_card = {card: uid for uid, card in self.deck.items()}
        rack = {value: [chip_uid(d, n) for n in range(400)] for d, value in enumerate(DENOMINATIONS)}
        self.chip_set = {uid: value for value, uids in rack.items() for uid in uids}
        self._fine_until = 0.0
        self.noise = NoiseModel.realistic(noise, seed=seed) if noise else None
        # The readers, the zone tracker and the controller (set for each hand's game, see _controller_for)
        self.driver = TableDriver(None, self.zones, noise=self.noise, debounce=debounce_by_pile(self.zones),
                                  min_rssi_dbm=MIN_RSSI_DBM, order_window_s=ORDER_WINDOW_S, cycle_s=CYCLE_S)
        self.field = self.driver.field
        self.rng = random.Random(seed)
        self.rules = rules
        self.settle_s = settle_s
        self.pace_s = pace_s
        # perfect reads keep the order of cards dealt even one cycle apart
        self.script = HandScript(self.field, self.uid_of_card, rack, self._command, self.rng, pace_s, deal_s,
                                 announce_seats=True)
        self.controller: GameController | None = None
        self._setup_key: tuple | None = None

    # ---- the controller for a hand's game ------------------------------------------------------------------

    def _controller_for(self, phh: Mapping[str, Any]) -> GameController:
        variant = PHH_VARIANTS.get(phh["variant"])
        if variant is None:
            raise ValueError(f"variant {phh['variant']!r} cannot be replayed (supported: {', '.join(PHH_VARIANTS)})")
        n = len(phh["starting_stacks"])
        blinds = list(phh["blinds_or_straddles"]) + [0, 0]
        antes = phh.get("antes", 0)
        antes = list(antes) if isinstance(antes, list) else [antes] * n
        nonzero = [i for i, a in enumerate(antes) if a]
        ante = bb_ante = 0
        if nonzero == [1] and (n == 2 or not phh.get("ante_trimming_status", False)):
            bb_ante = antes[1]
        elif nonzero:
            ante = antes[nonzero[0]]
        sb, bb = (blinds[0], blinds[1])
        if phh.get("_bomb_pot"):  # no blinds: every player's agreed amount (the bomb_pot command), not an ante
            sb, bb, ante = phh.get("_small_blind", phh["min_bet"] // 2), phh["min_bet"], 0
        game = VARIANTS[variant]
        limits = (phh["small_bet"], phh["big_bet"]) if game.structure == FIXED_LIMIT else None
        hole = game.hole_cards
        key = (variant, sb, bb, ante, bb_ante, limits)
        if self.controller is None or key != self._setup_key:
            setup = TableSetup("replay", SEATS, self.deck, hole_cards=hole, clear_after_s=1.0, decks={"A": self.deck},
                               deck_id="A")
            betting = BettingSetup(variant=variant, small_blind=sb, big_blind=bb, ante=ante, big_blind_ante=bb_ante,
                                   chips=self.chip_set, chip_set="replay", rules=self.rules, settle_s=self.settle_s,
                                   bet_limits=limits)
            self.controller = GameController(setup, betting)
            self.driver.use(self.controller)
            self._setup_key = key
        return self.controller

    # ---- physical moves ----------------------------------------------------------------------------------

    def _command(self, body: dict) -> None:
        fields = {key: value for key, value in body.items() if key != "command"}
        self.driver.command(body["command"], role="floor", user="replay", **fields)

    # ---- running -------------------------------------------------------------------------------------------

    def replay(self, phh: Mapping[str, Any], name: str = "") -> HandResult:
        """Play one hand history on the table and return the controller's reconstruction."""
        if phh.get("variant") in STUD_PHH_GAMES:  # dealt on a stud table of their own
            return self._replay_stud(phh, name)
        if phh.get("variant") not in PHH_VARIANTS:
            return HandResult(name, False, f"variant {phh.get('variant')!r} cannot be replayed on the simulated table "
                              f"(supported: {', '.join(PHH_VARIANTS)})")
        try:
            hand, hole, board, _shown = phhlib.replay(phh)
        except (ValueError, KeyError) as exc:
            return HandResult(name, False, f"the hand history cannot be played: {exc}")
        driver = self.driver
        driver.forget_events()  # what this hand produced, and no more, is its result
        self._controller_for(phh)
        self.script.reset()
        try:
            later = [phhlib.parse_cards(text) for text in phh.get("_boards", ())[1:]]  # a hand run twice
            steps = self.script.steps(hand, hole, board, later_boards=later)
        except ValueError as exc:
            return HandResult(name, False, str(exc))
        start = driver.t + 1.0
        fine = self.noise is not None
        for step in steps:
            due = start + step.at
            self._run_until(due, fine)
            step.apply()
            self._fine_until = driver.t + (step.reads - 0.5) * CYCLE_S
        # let the last moves settle and the table clear long enough for the hand to end
        before = len([e for e in driver.events if e.type == "hand_history"])
        end = driver.t + 10.0
        while driver.t < end and len([e for e in driver.events if e.type == "hand_history"]) == before:
            self._run_until(driver.t + 0.5, fine)
        self._run_until(driver.t + 0.5, fine)  # every tag gone before the next hand
        return self._result(phh, name, driver.events)

    def _replay_stud(self, phh: Mapping[str, Any], name: str) -> HandResult:
        """A stud hand, dealt with its chips on a simulated stud table (``sim.stud_hands``: up cards on their own
        antennas), set for the hand's game, stakes and players."""
        from sim.stud_hands import chip_table, deal_with_chips, hand_from_phh  # noqa: PLC0415

        try:
            hand = hand_from_phh(phh, self.rng)
        except (ValueError, KeyError) as exc:
            return HandResult(name, False, f"the hand history cannot be played: {exc}")
        driver = chip_table(hand, self.noise, self.rules)
        try:
            deal_with_chips(driver, hand)
        except ValueError as exc:
            return HandResult(name, False, str(exc))
        except AssertionError as exc:  # the table never ended the hand
            return HandResult(name, False, f"no hand history: {exc}", events=driver.events)
        return self._result(phh, name, driver.events)

    def _result(self, phh: Mapping[str, Any], name: str, events: list[DomainEvent]) -> HandResult:
        """The hand the table read (its ``hand_history``) against the one it played."""
        history = [e for e in events if e.type == "hand_history"]
        if not history:
            problems = [f"{e.type} {e.public}" for e in events if e.type in ("bet_ruling", "chip_count",
                                                                            "betting_unread", "irregular_card")]
            return HandResult(name, False, "no hand history: " + ("; ".join(problems[:3]) or "the hand never ended"),
                              events=events)
        text = history[-1].secret.get("phh_complete")
        reconstructed = phhlib.loads(text)
        problems = compare(phh, reconstructed)
        return HandResult(name, not problems, "; ".join(problems), reconstructed, text, events)

    def _run_until(self, until: float, fine: bool) -> None:
        """Cycle the readers up to table time ``until``. With perfect reads, the stretches between moves are stepped
        through every 0.5 s (every tag on the table is still read within its absence time; a bet settling or the
        table clearing is read up to one step late, and the controller keeps the order of what happened); right
        after a move, every cycle is run."""
        driver = self.driver
        t = driver.t
        while t + 1e-9 < until:
            step = CYCLE_S if fine or t < self._fine_until else 0.5
            t = min(until, t + step)
            driver.read_at(t)


def compare(original: Mapping[str, Any], reconstructed: Mapping[str, Any]) -> list[str]:
    """Differences between a hand history and its reconstruction in the fields the table reads."""
    problems = []
    for key in ("variant", "antes", "bring_in", "blinds_or_straddles", "min_bet", "small_bet", "big_bet",
                "starting_stacks", "_bomb_pot", "_flip", "_boards", "_runs"):
        if key in original and list_or(original[key]) != list_or(reconstructed.get(key)):
            problems.append(f"{key}: {original[key]} read as {reconstructed.get(key)}")
    if core_actions(original["actions"]) != core_actions(reconstructed["actions"]):
        a, b = core_actions(original["actions"]), core_actions(reconstructed["actions"])
        i = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
        problems.append(f"action {i + 1}: {a[i] if i < len(a) else 'none'!r} read as "
                        f"{b[i] if i < len(b) else 'none'!r}")
    theirs, ours = known_cards(original["actions"]), known_cards(reconstructed["actions"])
    if len(theirs) != len(ours) or any(not a <= b for a, b in zip(theirs, ours)):  # (a stud hand hides some)
        problems.append(f"cards: {_cards_text(theirs)} read as {_cards_text(ours)}")
    if "finishing_stacks" in original and list(original["finishing_stacks"]) != list(
            reconstructed.get("finishing_stacks") or []):
        problems.append(f"finishing_stacks: {original['finishing_stacks']} read as "
                        f"{reconstructed.get('finishing_stacks')}")
    return problems


def _cards_text(sets: Sequence[frozenset[str]]) -> str:
    return " ".join("".join(sorted(cards)) or "??" for cards in sets)


def list_or(value: Any) -> Any:
    return list(value) if isinstance(value, (list, tuple)) else value


def core_actions(actions: Sequence[str]) -> list[str]:
    """The actions without shows and comments, the cards left out (compared by ``compare_cards``)."""
    out = []
    for raw in actions:
        words = raw.split("#")[0].split()
        if not words or (len(words) > 1 and words[1] == "sm"):
            continue
        if words[:2] == ["d", "dh"]:
            out.append(f"d dh {words[2]}")
        elif words[:2] == ["d", "db"]:
            out.append(f"d db {len(words[2]) // 2 if len(words) > 2 else 0}")
        else:
            out.append(" ".join(words))
    return out


def known_cards(actions: Sequence[str]) -> list[frozenset[str]]:
    """The cards a hand history names, as the sets that matter: each player's hole cards, the flop, the turn and the
    river (the order within a set is the order they happened to be read in). Unknown cards ('??') are left out."""
    out = []
    for raw in actions:
        words = raw.split("#")[0].split()
        if len(words) > 2 and words[0] == "d" and words[1] in ("dh", "db"):
            text = words[3] if words[1] == "dh" and len(words) > 3 else (words[2] if words[1] == "db" else "")
            out.append(frozenset(text[i:i + 2] for i in range(0, len(text), 2) if "?" not in text[i:i + 2]))
    return out
