"""The whole table: the card controller and, where the table has a chip set, the chip layer reading the betting.

Data flows one way. A zone event goes to the card controller (``controller.table``) when it concerns a card and to
the chip layer (``controller.chip_betting``) when it concerns a chip zone; the card controller's events then go on
to the chip layer, which turns them, with the chips, into the betting. Every event of both is numbered here, in the
order it happened, so the stream has one ``seq``.
"""

from __future__ import annotations

from typing import Any

from controller.chip_betting import BettingSetup, ChipBetting
from controller.clock import ActionClock, ClockRefused, ClockSettings
from controller.conduct import ConductRules, RuleEvent
from controller.dealing import dead_seats
from controller.levels import LevelSchedule
from controller.deck_audit import DeckAudit
from controller.domain import DomainEvent
from controller.table import TableController, TableSetup
from hal.events import DeviceEvent, SensorEvent, ZoneEvent
from hal.zone_names import Zone

CHIP_ZONES = ("bets", "pot", "stack")
UNREGISTERED_RUN = 3  # this many unknown tags in a row on the card zones, and no registered card: a deck not registered
# Rulings of the seat sensors and the clock that kill the hand once the floor confirms them (docs/conduct.md).
FLOOR_KILLS = ("hand_may_be_dead", "hand_dead", "floor_decides", "hand_dead_facing_bet")
MUCKED_WINNER = "winning_hand_mucked"  # its award waits for the floor, past the end of the hand
CONDUCT_SETTLE_S = 0.6  # the absent-at-deal decision waits this long for presence changes still being debounced


class GameController:
    """The interface of ``TableController`` (``handle``, ``handle_device``, ``handle_command``, ``tick``,
    ``snapshot``, ``on_table``), over cards and chips."""

    def __init__(self, setup: TableSetup, betting: BettingSetup | None = None, audit_hands: int = 50):
        self.players: dict[int, dict[str, str]] = {}  # seat → {"name", optional "player_id"} (seat_player)
        # a tournament's blinds and antes by level (DE 5, AC 18); None in a cash game
        self.levels = LevelSchedule(tuple(setup.levels), setup.start_level) if setup.levels else None
        self.betting = (ChipBetting(betting, setup.seats, setup.hole_cards, button_hint=self._card_button,
                                    player_names=self._player_names, levels=self.levels)
                        if betting and betting.chips else None)
        self.cards = TableController(setup, self.betting)  # the dealing rules ask the betting how far the hand is
        self.deck_audit = DeckAudit(audit_hands)  # every card of the deck must show up within audit_hands hands
        self.seq = 0
        self._card_uids = {uid for deck in (setup.decks or {"": setup.deck}).values() for uid in deck} | set(setup.deck)
        # the conduct the seat sensors see and the action clock (docs/conduct.md), by the table's house profile
        self.conduct = ConductRules(setup.rules, setup.seats, settle_s=CONDUCT_SETTLE_S)
        self.clock = ActionClock(ClockSettings(profile=setup.rules), seats=setup.seats)
        self._rules_t = float("-inf")  # the latest time given to the rules: their clock never goes back
        self._turn: int | None = None  # the seat the clock runs for
        self._dealt: dict[int, int] = {}  # this hand's hole cards per seat, to see when the deal is complete
        self._deal_done = False
        self.tick_changed = False
        # Rulings of the seat sensors, the clock and the betting that wait for the floor, by their seq (the card
        # controller keeps its own irregularities in cards.pending): answered by confirm / override, or dropped
        # when their hand ends.
        self.floor_waits: dict[int, dict[str, Any]] = {}
        self._check_or_fold: set[int] = set()  # absent players whose hand is checked or folded on their turn (DE 6)
        self._unknown_run = 0  # unknown tags on card zones since the last registered card

    def _card_button(self) -> int | None:
        return self.cards.button

    def _player_names(self) -> dict[int, str]:
        return {seat: player["name"] for seat, player in self.players.items()}

    # the card controller's picture, read by the daemon, the diagnostics and the tests
    @property
    def setup(self) -> TableSetup:
        return self.cards.setup

    @property
    def hand(self) -> int:
        return self.cards.hand

    @property
    def in_hand(self) -> bool:
        return self.cards.in_hand

    @property
    def now(self) -> float:
        return self.cards.now

    def __getattr__(self, name: str) -> Any:  # the rest of the card controller's state (board, seats, deck_id…)
        if name == "cards":
            raise AttributeError(name)
        return getattr(self.cards, name)

    # ---- inputs -------------------------------------------------------------------------------------

    def handle(self, event: ZoneEvent) -> list[DomainEvent]:
        if self.betting is not None and event.uid not in self._card_uids:
            if Zone.parse(event.zone).kind in CHIP_ZONES:
                self.cards.now = event.t
                out: list[DomainEvent] = []
                self.betting.chip_zone_event(event.kind, event.uid, event.zone, event.t, self._emitter(out, event.t))
                return self._conduct_after(out, event.t)
            if self.betting.is_chip(event.uid):
                return []  # a chip near the cards (a card protector, a stray chip): nothing to read
        return self._conduct_after(self._cards_then_chips(lambda: self.cards.handle(event)), event.t)

    def handle_device(self, event: DeviceEvent) -> list[DomainEvent]:
        return self._conduct_after(self._cards_then_chips(lambda: self.cards.handle_device(event)), event.t)

    def handle_sensor(self, event: SensorEvent) -> list[DomainEvent]:
        """A seat sensor changed (``rfid_table.service.table_gpio.GpioConsole``): the device and presence rules judge it."""
        out: list[DomainEvent] = []
        t = max(self._rules_t, event.t)
        self.cards.now = max(self.cards.now, event.t)
        self._emit_rules(out, self.clock.tick(t))  # what the clock had due comes first
        self._emit_rules(out, self.conduct.sensor(event))
        return self._conduct_after(out, t)

    def handle_command(self, command: dict[str, Any], t: float) -> tuple[list[DomainEvent], str | None]:
        name = command["command"]
        if self.betting is not None and name == "set_stacks":
            self.cards.now = t
            stacks = {int(seat): int(amount) for seat, amount in command["stacks"].items()}
            self.betting.set_stacks(stacks)
            out: list[DomainEvent] = []
            self._emitter(out, t)("stacks_set", {"stacks": {str(s): v for s, v in sorted(stacks.items())},
                                                  "by": f"{command['role']}/{command['user']}"}, None)
            return out, None
        if self.betting is not None and name == "declare":
            self.cards.now = t
            out = []
            emit = self._emitter(out, t)
            self.betting.start_if_dealt(t, emit)
            if not self.betting.accepts_declarations():
                return [], "the betting has not started (the deal is not complete)"
            extra = {"amount": command["amount"]} if "amount" in command else {}
            emit("declaration", {"seat": command["seat"], "declaration": command["declaration"], **extra,
                                 "by": f"{command['role']}/{command['user']}"}, None)
            self.betting.declare(command["seat"], command["declaration"], command.get("amount"), emit)
            return self._conduct_after(out, t), None
        if name in ("start_clock", "stop_clock", "time_bank"):
            return self._clock_command(command, t)
        if name == "set_level":
            return self._level_command(command, t)
        if name == "bomb_pot":
            return self._bomb_pot_command(command, t)
        if name == "run_it":  # the board's part (controller.board_runs), then the betting's: no more action possible
            refusal = self.cards.run_it_refusal(command["times"])
            if refusal is None and self.betting is not None:
                refusal = self.betting.agree_runs(command["times"], command.get("pots"))
            if refusal is not None:
                return [], refusal
        if name in ("seat_player", "clear_seat"):
            return self._seat_command(command, t)
        if name in ("confirm", "override") and command.get("irregularity") in self.floor_waits:
            return self._floor_answer(command, t), None
        if name == "undo":
            if self.betting is None:
                return [], "this table does not read the chips: there is no betting action to undo"
            self.cards.now = max(self.cards.now, t)
            out = []
            refusal = self.betting.undo(f"{command['role']}/{command['user']}", t, self._emitter(out, t))
            return (self._conduct_after(out, t) if refusal is None else []), refusal
        refusal = None

        def command_to_cards() -> list[DomainEvent]:
            nonlocal refusal
            events, refusal = self.cards.handle_command(command, t)
            return events

        events = self._cards_then_chips(command_to_cards)
        return (self._conduct_after(events, t) if refusal is None else events), refusal

    def _clock_command(self, command: dict[str, Any], t: float) -> tuple[list[DomainEvent], str | None]:
        """``start_clock`` (without a seat: on the seat to act) and ``time_bank``; a refusal changes nothing."""
        name = command["command"]
        t = max(self._rules_t, t)
        seat = command.get("seat")
        by = f"{command['role']}/{command['user']}"
        produced: list[RuleEvent] = []
        if name == "start_clock" and self.betting is None:
            # Without the chips the table does not know whose turn it is: the floor names the seat it calls the
            # clock on, and the clock runs for that seat until it is stopped, the seat folds or the hand ends.
            if seat is None:
                return [], ("this table does not read the betting, so it does not know whose turn it is: name the "
                            "seat (start_clock with seat)")
            place = self.cards.seats.get(seat)
            if not self.cards.in_hand or place is None or not place.cards or place.folded:
                return [], f"seat {seat} has no live hand"
            if seat != self.clock.seat or self.clock.phase(t) == "idle":
                if self.clock.phase(t) in ("minute", "count"):
                    return [], f"the clock is already running on seat {self.clock.seat}"
                produced = self.clock.turn(seat, t)
                self._turn = seat
        elif name in ("start_clock", "stop_clock") and seat is not None and seat != self.clock.seat:
            return [], (f"seat {seat} is not to act" + (f" (seat {self.clock.seat} is)" if self.clock.seat else
                                                       ": no player is to act"))
        try:
            if name == "start_clock":
                produced = produced + self.clock.start(t, by)
            elif name == "stop_clock":
                produced = self.clock.stop(t, by)
            else:
                produced = self.clock.time_bank(seat, t)
        except ClockRefused as exc:
            return [], str(exc)
        self.cards.now = max(self.cards.now, t)
        out: list[DomainEvent] = []
        self._emit_rules(out, produced)
        self._rules_t = t
        return out, None

    def _level_command(self, command: dict[str, Any], t: float) -> tuple[list[DomainEvent], str | None]:
        """``set_level``: the floor announces a level (or, without ``level``, the next one). It runs from the next
        hand: at once between hands, at the next hand's first card during one (DE 5: "beginnt diese mit dem nächsten
        Spiel"; AC 18)."""
        if self.levels is None:
            return [], "this table plays no tournament: the configuration has no [tournament] level schedule"
        in_hand = self.cards.in_hand
        number, refusal = self.levels.announce(command.get("level"), in_hand)
        if refusal is not None:
            return [], refusal
        self.cards.now = max(self.cards.now, t)
        out: list[DomainEvent] = []
        self._emitter(out, t)("level_set", {**self.levels.describe(number), "applies_to_hand": self.cards.hand + 1,
                                            "running": not in_hand, "by": f"{command['role']}/{command['user']}"},
                              None)
        return out, None

    def _bomb_pot_command(self, command: dict[str, Any], t: float) -> tuple[list[DomainEvent], str | None]:
        """``bomb_pot``: the players agreed before the deal that every player puts ``amount`` in and that nothing is
        bet before the flop (CA GR 14.3), or with ``kind`` ``flip`` on no street (CA GR 14.2). It applies to the next deal."""
        if self.cards.in_hand:
            return [], "the deal has begun: a bomb pot or flip is agreed before the deal (CA GR 14.2, 14.3)"
        flip = command.get("kind", "bomb_pot") == "flip"
        if self.betting is not None:
            self.betting.agree_bomb_pot(command["amount"], flip)
        sits_out = self.cards.bomb_pot_sit_out()  # too many players for CA GR 15.2: the small blind sits out
        self.cards.now = max(self.cards.now, t)
        out: list[DomainEvent] = []
        self._emitter(out, t)("bomb_pot_agreed", {"amount": command["amount"], "flip": flip,
                                                  "applies_to_hand": self.cards.hand + 1,
                                                  **({"sits_out": sits_out} if sits_out is not None else {}),
                                                  "by": f"{command['role']}/{command['user']}"}, None)
        return out, None

    def _seat_command(self, command: dict[str, Any], t: float) -> tuple[list[DomainEvent], str | None]:
        """``seat_player`` names who sits at a seat (any time: a player may be seated, or renamed, mid-hand);
        ``clear_seat`` frees it. Names are public: on both branches, in both snapshots, in the hand history."""
        seat, by = command["seat"], f"{command['role']}/{command['user']}"
        out: list[DomainEvent] = []
        if command["command"] == "clear_seat":
            if seat not in self.players:
                return [], f"seat {seat} has no player to clear"
            left = self.players.pop(seat)
            self.cards.now = max(self.cards.now, t)
            self._emitter(out, t)("seat_cleared", {"seat": seat, "name": left["name"], "by": by}, None)
            return out, None
        player = {"name": command["name"]}
        if "player_id" in command:
            player["player_id"] = command["player_id"]
        elsewhere = [s for s, p in self.players.items() if s != seat and "player_id" in player
                     and p.get("player_id") == player["player_id"]]
        if elsewhere:
            return [], f"player {player['player_id']} already sits at seat {elsewhere[0]}: clear_seat it first"
        self.players[seat] = player
        self.cards.now = max(self.cards.now, t)
        self._emitter(out, t)("player_seated", {"seat": seat, **player, "by": by}, None)
        return out, None

    def _floor_answer(self, command: dict[str, Any], t: float) -> list[DomainEvent]:
        """The floor confirms or overrides a ruling of the seat sensors, the clock or the betting. Confirming a
        ruling that may kill the hand kills it (the betting folds it); overriding lets play go on."""
        ident = command["irregularity"]
        wait = self.floor_waits.pop(ident)
        confirmed = command["command"] == "confirm"
        result = "play_on"
        if confirmed and wait["code"] == MUCKED_WINNER:
            result = "hand_restored"
        elif confirmed:
            result = "dead_hand" if wait.get("ruling") in FLOOR_KILLS else "none"
        self.cards.now = max(self.cards.now, t)
        out: list[DomainEvent] = []
        note = {"note": command["note"]} if command.get("note") else {}
        emit = self._emitter(out, t, wait["hand"])
        emit("floor_ruling", {"irregularity": ident, "code": wait["code"],
                              "decision": "confirmed" if confirmed else "overridden", "result": result, **note,
                              "by": f"{command['role']}/{command['user']}"}, None)
        if result == "dead_hand" and wait.get("seat") is not None:
            self._kill(out, wait["seat"], wait.get("rule") or "", t)
        if wait["code"] == MUCKED_WINNER and self.betting is not None:
            if confirmed:
                self.cards.restore_hand(wait["seat"])
            self.betting.mucked_winner_ruled(confirmed, emit, t)
        return self._conduct_after(out, t)

    def floor_pending(self) -> list[int]:
        """Every ruling waiting for the floor, oldest first: the card controller's irregularities and the rest."""
        return sorted([*self.cards.pending, *self.floor_waits])

    @property
    def game_stopped(self) -> bool:
        """The hand is void (a misdeal): no one is to act until the cards are dealt again. (An irregularity that
        stops the game until the floor rules is ``floor_pending``, the status light's more urgent condition.)"""
        return self.cards.in_hand and self.cards.void

    @property
    def deck_unregistered(self) -> bool:
        """The cards being dealt are tags of no registered deck (a new deck nobody registered)."""
        return self._unknown_run >= UNREGISTERED_RUN

    def tick(self, now: float) -> list[DomainEvent]:
        """Let time pass. ``tick_changed`` says whether it changed anything though it gave no event (the
        daemon journals such a tick too, so that a replay takes the same path)."""
        before, turn = self._rules_t, self._turn
        out = self._cards_then_chips(lambda: self.cards.tick(now))
        if self.betting is not None:
            self.betting.tick(now, self._emitter(out, now))
        out = self._conduct_after(out, now)
        t = max(self._rules_t, now)
        pending = self._deal_pending()
        self._emit_rules(out, self.conduct.tick(t))
        self._emit_rules(out, self.clock.tick(t))
        self.tick_changed = self._turn != turn or pending != self._deal_pending()
        self._rules_t = t if out or self.tick_changed else before  # an unjournaled tick leaves no trace
        return out

    # ---- conduct and the clock ----------------------------------------------------------------------

    def _conduct_after(self, events: list[DomainEvent], t: float) -> list[DomainEvent]:
        """Give the rules what this input did to the hand (docs/conduct.md, "Wiring it into the controller"), then
        the clock the seat to act; their events follow the input's, in the same sequence."""
        out = list(events)
        for event in events:
            self._hand_progress(out, event)
        t = max(self._rules_t, t)
        if self.betting is None:  # the clock runs where the floor called it, until that seat folds or the hand ends
            if self._turn is not None and any(e.type in ("hand_ended", "misdeal") or (
                    e.type == "fold" and e.public.get("seat") == self._turn) for e in events):
                self._turn = None
                self._emit_rules(out, self.clock.turn(None, t))
            self._rules_t = t
            return out
        seat = self._to_act()
        while seat is not None and seat in self._check_or_fold:  # an absent player's turn (DE 6): check or fold
            self._check_or_fold.discard(seat)
            emit = self._emitter(out, t)
            rule = self.conduct.profile.cite("absent_at_deal")
            if self.betting.hand.to_call(seat) == 0:
                self.betting.ruled_check(seat, rule, emit)
                self._check_or_fold.add(seat)  # still away: checked again on the next street, folded facing a bet
            else:
                self._kill(out, seat, rule, t)
            if self._to_act() == seat:
                break
            seat = self._to_act()
        acted = any(e.type in ("action", "betting_started", "fold", "hand_ended", "misdeal") for e in out)
        if seat != self._turn or (acted and seat is not None):
            self._turn = seat
            facing = None
            if seat is not None and self.betting is not None and self.betting.hand is not None:
                facing = self.betting.hand.to_call(seat) > 0
            self._emit_rules(out, self.clock.turn(seat, t, facing_bet=facing))
        self._rules_t = t
        return out

    def _hand_progress(self, out: list[DomainEvent], event: DomainEvent) -> None:
        t = max(self._rules_t, event.t)
        conduct = self.conduct
        if event.type == "hand_started":
            self._dealt, self._deal_done = {}, False
            for ident in [i for i, wait in self.floor_waits.items() if wait["code"] == MUCKED_WINNER]:
                del self.floor_waits[ident]  # a new hand: the award was made as the cards lay
            self._emit_rules(out, conduct.hand_started(t, event.hand))
        elif event.type == "card_dealt":
            seat = event.public["seat"]
            self._dealt[seat] = event.public.get("count", self._dealt.get(seat, 0) + 1)
            self._emit_rules(out, conduct.card_dealt(seat, t, event.hand))
            if (not self._deal_done and len(self._dealt) >= 2
                    and all(n >= self.cards.setup.hole_cards for n in self._dealt.values())):
                self._deal_complete(out, t)
        elif event.type in ("betting_started", "board_card", "burn"):
            if not self._deal_done and self._dealt:
                self._deal_complete(out, t)
        elif event.type == "fold":
            self._emit_rules(out, conduct.folded(event.public["seat"], t))
        elif dead_seats(event.type, event.public):  # the dealing rules killed hands: those seats are out
            for seat in dead_seats(event.type, event.public):
                self._emit_rules(out, conduct.folded(seat, t))
        elif event.type in ("hand_ended", "misdeal"):
            self._dealt, self._deal_done = {}, False
            self._check_or_fold.clear()
            for ident in [i for i, wait in self.floor_waits.items() if wait["hand"] in (event.hand, None)
                          and wait["code"] != MUCKED_WINNER]:
                del self.floor_waits[ident]  # the hand is over: nothing left to rule on but its award
            self._emit_rules(out, conduct.hand_ended(t))
        self._rules_t = t

    def _deal_complete(self, out: list[DomainEvent], t: float) -> None:
        self._deal_done = True
        self._emit_rules(out, self.conduct.deal_complete(t, sorted(self._dealt)))

    def _deal_pending(self) -> bool:
        """Whether the rules still wait to decide who was absent at the deal (their settle time)."""
        rules = self.conduct
        return rules.in_hand and rules._deal_t is not None and not rules._deal_decided

    def _to_act(self) -> int | None:
        hand = self.betting.hand if self.betting is not None else None
        return hand.to_act() if hand is not None and self.betting.accepts_declarations() else None

    def _emit_rules(self, out: list[DomainEvent], produced: list[RuleEvent]) -> None:
        for rule_event in produced:  # outside a hand (a player sitting down between hands) the hand is null
            hand = rule_event.hand if rule_event.hand is not None else (
                (self.cards.hand or None) if self.cards.in_hand or rule_event.type.startswith(("clock", "time"))
                else None)
            self.seq += 1
            out.append(DomainEvent(self.seq, rule_event.type, rule_event.t, hand, dict(rule_event.public), {}))
            self._note_floor_wait(self.seq, rule_event.type, rule_event.public, hand)
            self._apply_conduct_ruling(out, rule_event)

    def _kill(self, out: list[DomainEvent], seat: int, rule: str, t: float) -> None:
        """A ruling killed the seat's hand: the betting folds it (without chips: the card controller takes the
        seat out of the hand) and the conduct rules treat the seat as folded."""
        if self.betting is not None:
            self.betting.dead_hand(seat, rule, self._emitter(out, t))
        else:
            self.cards.hand_dead(seat)
        self._emit_rules(out, self.conduct.folded(seat, max(self._rules_t, t)))

    def _note_floor_wait(self, seq: int, type_: str, public: dict, hand: int | None) -> None:
        """Keep a ruling that waits for the floor (``needs_floor``) until the floor answers or its hand ends."""
        if public.get("needs_floor") and public.get("state", "started") == "started":
            self.floor_waits[seq] = {"code": public.get("code", type_), "seat": public.get("seat"), "hand": hand,
                                     "ruling": public.get("ruling"), "rule": public.get("rule")}

    def _apply_conduct_ruling(self, out: list[DomainEvent], rule_event: RuleEvent) -> None:
        """A ruling the rule applies by itself (no floor): the clock ran out or a player was away at the end of the
        deal, and the profile says the hand is dead (or, PP Dead hands 1f, checked): the betting follows."""
        public = rule_event.public
        if rule_event.type == "seat_returned":
            self._check_or_fold.discard(public.get("seat"))  # back in time to act: the player plays the hand
        if (rule_event.type not in ("clock_expired", "absent_at_deal", "seat_left")
                or public.get("needs_floor") or "seat" not in public):
            return
        if self.betting is None:  # no betting to fold: the card controller takes the seat out of the hand
            if public.get("ruling") == "hand_dead":
                self._kill(out, public["seat"], public.get("rule") or "", rule_event.t)
            return
        rule = public.get("rule") or ""
        emit = self._emitter(out, rule_event.t)
        if public.get("ruling") == "check_or_fold":  # DE 6: on the seat's turn (see _conduct_after)
            self._check_or_fold.add(public["seat"])
        elif public.get("ruling") == "hand_dead":
            self._kill(out, public["seat"], rule, rule_event.t)
        elif public.get("ruling") == "check":
            self.betting.ruled_check(public["seat"], rule, emit)

    # ---- plumbing -----------------------------------------------------------------------------------

    def _emitter(self, out: list[DomainEvent], t: float, hand: int | None = None):
        """``emit(type, public, secret)`` appending numbered events; ``hand``: the hand they belong to (default:
        the current one)."""
        def emit(type_: str, public: dict, secret: dict | None) -> int:
            self.seq += 1
            of = hand if hand is not None else (self.cards.hand or None)
            out.append(DomainEvent(self.seq, type_, t, of, public, secret or {}))
            self._note_floor_wait(self.seq, type_, public, of)
            return self.seq
        return emit

    def _cards_then_chips(self, call) -> list[DomainEvent]:
        """Run one input through the card controller, numbering its events in the shared sequence, then hand each
        to the chip layer; what the chip layer makes of them follows the card events of this input."""
        self.cards.seq = self.seq
        events = call()
        self.seq = self.cards.seq
        out = list(events)
        started = next((e for e in events if e.type == "hand_started"), None)
        if started is not None and self.levels is not None and (number := self.levels.hand_started()) is not None:
            # the announced level runs from this hand: before its blinds are read
            self._emitter(out, started.t, started.hand)("level_set", {**self.levels.describe(number),
                                                                      "applies_to_hand": started.hand,
                                                                      "running": True}, None)
        for event in events:
            if event.type == "unknown_tag" and not self._is_chip_zone(event.public.get("zone")):
                self._unknown_run += 1
            elif event.type in ("card_dealt", "board_card", "burn"):
                self._unknown_run = 0
            report = self.deck_audit.card_event(event.type, event.public, event.secret)
            if report is not None:
                self._emitter(out, event.t, event.hand)("deck_audit", report, None)
        if self.betting is not None:
            for event in events:
                # the card controller may already be in the next hand (its first card ended this one)
                self.betting.card_event(event.type, event.public, event.secret, event.t,
                                        self._emitter(out, event.t, event.hand))
        return out

    @staticmethod
    def _is_chip_zone(zone: str | None) -> bool:
        return zone is not None and Zone.parse(zone).kind in CHIP_ZONES

    # ---- the picture --------------------------------------------------------------------------------

    def on_table(self) -> dict[str, str]:
        tags = self.cards.on_table()
        if self.betting is not None:
            tags.update(self.betting.on_table())
        return tags

    # ---- checkpoints -------------------------------------------------------------------------------

    def checkpoint_state(self) -> dict[str, Any]:
        """What carries over from this hand's end to the next hand, as JSON: numbering, button, players, deck,
        stacks, the tags lying on the table, the deck audit, the time banks, what the seat sensors show. Taken
        between hands (``in_hand`` false); the journal keeps it with the hand's end (``rfid_table.service.checkpoint``),
        and another version of the program restarts from it, replaying the inputs since."""
        return {"seq": self.seq, "rules_t": self._rules_t if self._rules_t != float("-inf") else None,
                "cards": self.cards.checkpoint_state(), "deck_audit": self.deck_audit.checkpoint_state(),
                "betting": self.betting.checkpoint_state() if self.betting is not None else None,
                "clock": self.clock.checkpoint_state(), "conduct": self.conduct.checkpoint_state(),
                "level": self.levels.checkpoint_state() if self.levels is not None else None,
                "players": {str(seat): dict(player) for seat, player in self.players.items()}}

    def restore_checkpoint_state(self, state: dict[str, Any]) -> None:
        """Take over :meth:`checkpoint_state` on a controller just made from this table's setup."""
        self.cards.restore_checkpoint_state(state["cards"])
        self.seq = int(state["seq"])
        self._rules_t = float("-inf") if state["rules_t"] is None else float(state["rules_t"])
        self.deck_audit.restore_checkpoint_state(state["deck_audit"])
        if self.betting is not None and state["betting"] is not None:
            self.betting.restore_checkpoint_state(state["betting"])
        self.clock.restore_checkpoint_state(state["clock"])
        self.conduct.restore_checkpoint_state(state["conduct"])
        self.players = {int(seat): dict(player) for seat, player in state.get("players", {}).items()}
        if self.levels is not None and state.get("level"):  # (older checkpoints have none: the start level)
            self.levels.restore_checkpoint_state(state["level"])

    def snapshot(self, secure: bool) -> dict[str, Any]:
        snap = self.cards.snapshot(secure)
        snap["seq"] = self.seq
        if self.betting is not None:
            snap["betting"] = self.betting.snapshot()
        clock = self.clock.snapshot(max(self._rules_t, self.cards.now))
        if clock["banks_left"] is not None:
            clock["banks_left"] = {str(seat): left for seat, left in clock["banks_left"].items()}
        snap["clock"] = clock
        snap["conduct"] = self.conduct.snapshot()
        snap["level"] = self.levels.snapshot() if self.levels is not None else None
        for entry in snap["seats"]:  # who sits there (seat_player), or null
            player = self.players.get(entry["seat"])
            entry["player"] = dict(player) if player else None
        return snap
