"""The whole table: the card controller and, where the table has a chip set, the chip layer reading the betting,
with the conduct the seat sensors see and the action clock.

One path for every input, and the events come back from it. A zone event is routed once, by its zone's kind: a chip
zone's to the chip layer (``controller.chip_betting``), a card's to the card controller (``controller.table``), which
routes it on to the one part the card concerns. Then comes the one step in which the parts hear of each other, in
this order: the card controller's events of the input go, each list once, to the level schedule, the deck audit and
the chip layer (``_then_chips``), which turns them, with the chips, into the betting; then every event of the input
tells the conduct rules what happened to the hand (``_hand_progress``, by event type) and the clock hears whose
turn it is (``_conduct_after``). An input that made no event skips that step: nothing happened to learn from.

Timers run from ``tick``, and only when one is due: each part says when its tick next has something to do
(``next_due``: the card controller's deal, board and missing-card timers and the table clearing, the chips
settling, the absent-at-deal decision, the action clock), and a tick before the earliest only moves the table time.
(What a card read late waits for is also decided at the next card that comes after its time, as the order of the
cards requires; the card controller does that without asking the parts whose timers are not due.)

The card controller's parts, the chip layer and the deck audit emit into the one outbox made here
(``controller.outbox``); the conduct rules and the clock are pure and publish their records to the game as they
come (``_rule_event``: into the outbox, with the rulings they apply, by the record's class), so the stream has one
``seq``; the betting engine returns its ``Ruling``, which the chip layer publishes. Whatever waits for the floor is
in its one queue (``controller.floor``).

Commands (``controller.commands``): each part says which it owns (the card controller's and the chip layer's
``handlers``; the clock, the levels, the seats, the bomb pot and the floor's answers are the table's), and the table
makes one ``CommandTable`` of them (``_command_table``). A command is checked without changing anything, then applied;
a refused one leaves the table as it was.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any, Callable, Mapping

from controller import absent_turns, mucked_winner
from controller.absent_turns import AbsentTurns
from controller.bomb_pot import BombPot
from controller.chip_betting import BettingSetup, ChipBetting
from controller.chip_table import CHIP_ZONES, ChipTable
from controller.clock import ActionClock, ClockCommands, ClockSettings
from controller.command_events import GameSet, PlayerSeated, SeatCleared
from controller.commands import Apply, Check, Command, CommandTable, Handler, Refusal, unavailable
from controller.conduct import ConductRules, confirm_kills
from controller.conduct_events import (CHECK, CHECK_OR_FOLD, HAND_DEAD, AbsentAtDeal, ClockExpired, ClockRecord,
                                       ConductRecord, RuleEvent, SeatLeft, SeatReturned, SeatRuling)
from controller.dealing import HoleCardsDealt, dead_seats
from controller.deck_audit import DeckAudit
from controller.domain import DomainEvent
from controller.events import (ActionTaken, BettingStarted, BoardCard, Burn, CardDealt, FloorRuling, Folded,
                               HandEnded, HandOver, HandStarted, Misdeal)
from controller.floor import CARDS, HAND_END, NEXT_HAND, NEXT_HAND_ACTION, FloorQueue, not_waiting
from controller.levels import LevelSchedule, TournamentLevels
from controller.outbox import CURRENT, Outbox
from controller.rotation import Game, Rotation
from controller.shown_hands import cards_showdown
from controller.table import DUE_EARLY_S, TableController, TableSetup
from controller.unregistered_deck import UnregisteredDeck
from hal.events import DeviceEvent, SensorEvent, ZoneEvent
from hal.zone_names import Zone

CONDUCT_SETTLE_S = 0.6  # the absent-at-deal decision waits this long for presence changes still being debounced
TURN_MOVERS = (ActionTaken, BettingStarted, Folded, *HandOver)  # events after which the clock hears the turn again
ASK_NOW = None  # _quiet_until after an input: the next tick takes every part's deadline anew

Result = tuple[list[DomainEvent], "Refusal | None"]


class GameController:
    """The interface of ``TableController`` (``handle``, ``handle_device``, ``handle_command``, ``tick``,
    ``snapshot``, ``on_table``), over cards and chips."""

    def __init__(self, setup: TableSetup, betting: BettingSetup | None = None, audit_hands: int = 50):
        self.players: dict[int, dict[str, str]] = {}  # seat → {"name", optional "player_id"} (seat_player)
        # a tournament's blinds and antes by level (DE 5, AC 18); None in a cash game
        self.levels = LevelSchedule(tuple(setup.levels), setup.start_level) if setup.levels else None
        # the game of each hand: the table's one game, or a mixed game's rotation (by hands, by level, set_game)
        self.rotation = Rotation(setup.games(), self.levels)
        self.floor = FloorQueue()  # every ruling that waits for the floor, the cards' and the rest
        self.out = Outbox()  # every event of every part, numbered in one sequence
        self.betting = (ChipBetting(betting, setup.seats, setup.hole_cards, self.out, self.floor,
                                    players=self.players, levels=self.levels)
                        if betting and betting.chips else None)
        # the stakes each hand is played at, for the snapshot: the chip layer's table, or without chips the
        # configuration's (None: a table set up without them)
        self.stakes_table = (self.betting.table if self.betting is not None
                             else ChipTable.of(betting, setup.seats, setup.hole_cards) if betting else None)
        # the dealing rules ask the betting how far it is
        self.cards = TableController(setup, self.betting, self.out, self.floor, hand_ending=self._hand_ending,
                                     rotation=self.rotation)
        # the floor's set_level and the level each hand begins with (None in a cash game)
        self.tournament = TournamentLevels(self.levels, self.cards, self.out) if self.levels is not None else None
        self._before_end: list[DomainEvent] = []  # an input's events up to the hand's result (_hand_ending)
        # the floor's answer on a winning hand the dealer mucked: the cards, then the chips (the chips find it)
        self.mucked_winner = (mucked_winner.MuckedWinnerAnswer(self.cards, self.betting, self.out)
                              if self.betting is not None else None)
        self.deck_audit = DeckAudit(self.out, audit_hands)  # every card of the deck must show up within audit_hands hands
        self._card_uids = {uid for deck in (setup.decks or {"": setup.deck}).values() for uid in deck} | set(setup.deck)
        # the conduct the seat sensors see and the action clock (docs/conduct.md), by the table's house profile
        # their events go into the outbox as they come, each ruling applied before the next event (_rule_event)
        self.conduct = ConductRules(setup.rules, setup.seats, settle_s=CONDUCT_SETTLE_S, publish=self._conduct_event)
        self.clock = ActionClock(ClockSettings(profile=setup.rules), seats=setup.seats, publish=self._clock_event)
        self._rules_t = float("-inf")  # the latest time given to the rules: their clock never goes back
        # A ruling of the clock or the seat sensors moved the betting after the input's events were looked at (a
        # hand killed on a tick): the next input looks at the seat to act again, even if it makes no event.
        self._turn_moved = False
        # Before this time (the rules' time) no part has anything due: a tick only moves the table time. Every
        # input sets it to ASK_NOW (it may have set a timer); the tick after it takes the parts' deadlines again.
        self._quiet_until: float | None = ASK_NOW
        self._dealt = HoleCardsDealt(self.cards.game.hole_cards)  # this hand's hole cards: is the deal complete?
        self._deal_done = False
        self.tick_changed = False
        # absent players whose hand is checked or folded on their turn (DE 6), as the conduct rules ruled
        self.absent = AbsentTurns(self.conduct.profile.cite("absent_at_deal"))
        self.unregistered_deck = UnregisteredDeck()  # the status light's deck_not_registered
        self.commands = self._command_table()

    # the card controller's picture, read by the daemon, the diagnostics and the tests
    @property
    def setup(self) -> TableSetup:
        return self.cards.setup

    @property
    def seq(self) -> int:
        return self.out.seq

    @property
    def hand(self) -> int:
        return self.cards.hand

    @property
    def in_hand(self) -> bool:
        return self.cards.in_hand

    @property
    def now(self) -> float:
        return self.cards.now

    @property
    def board(self) -> list[str]:
        return self.cards.board

    @property
    def game(self) -> Game:
        """The running hand's game; between hands, the next hand's (``controller.rotation``)."""
        return self.rotation.game_now(self.cards.in_hand)

    def numbered_event(self, type_: str, t: float, public: dict[str, Any], secret: dict[str, Any] | None = None
                       ) -> DomainEvent:
        """An event the service raises (the journal's state, an equity result), numbered like the table's own so
        that the stream stays one gapless sequence and a replay numbers it the same."""
        return self.out.numbered(type_, t, public, secret)

    # ---- inputs -------------------------------------------------------------------------------------

    def handle(self, event: ZoneEvent) -> list[DomainEvent]:
        self._quiet_until = ASK_NOW
        kind, zone, uid, t = event
        betting = self.betting
        if betting is not None and uid not in self._card_uids:
            if Zone.parse(zone).kind in CHIP_ZONES:
                self.out.begin(t)
                betting.chip_zone_event(kind, uid, zone, t)
                # most chips make no event (a chip joining a bet, the pot growing): the conduct step then only
                # keeps the time
                return self._conduct_after(self.out.take(), t)
            if betting.is_chip(uid):
                return []  # a chip near the cards (a card protector, a stray chip): nothing to read
        return self._conduct_after(self._then_chips(self.cards.handle(event)), t)

    def handle_device(self, event: DeviceEvent) -> list[DomainEvent]:
        self._quiet_until = ASK_NOW
        return self._conduct_after(self._then_chips(self.cards.handle_device(event)), event.t)

    def handle_sensor(self, event: SensorEvent) -> list[DomainEvent]:
        """A seat sensor changed (``rfid_table.service.table_gpio.GpioConsole``): the device and presence rules judge
        it."""
        self._quiet_until = ASK_NOW
        t = max(self._rules_t, event.t)
        self.out.begin(event.t)
        self.clock.tick(t)  # what the clock had due comes first
        self.conduct.sensor(event)
        return self._conduct_after(self.out.take(), t)

    def handle_command(self, command: Mapping[str, Any] | Command, t: float) -> Result:
        """A validated command; returns its events, or why it was refused. A refused command changes nothing: no
        event, no number, not even the table's time (the journal keeps only what was applied)."""
        command = Command.of(command)
        refusal = self.commands.check(command, t)
        if refusal is not None:
            return [], refusal
        self._quiet_until = ASK_NOW
        return self.commands.apply(command, t), None

    # ---- commands: each from the part that owns it, checked, then applied (controller.commands) ----------

    def _command_table(self) -> CommandTable:
        """The table's commands. The card controller's and the chip layer's events go on to the conduct rules and
        the clock, as those of any input (the card controller's through the chips first); the stacks, the clock's,
        the levels', the seats' and the bomb pot's commands move no turn and tell the rules nothing. ``run_it``,
        ``confirm`` and ``override`` concern more than one part: the table shares them out."""
        cards, clock = self.cards.handlers, ClockCommands(self.clock, self.cards if self.betting is None else None)
        bomb_pot = BombPot(self.cards, self.betting, self.out)
        shared = ("run_it", "confirm", "override")
        own: dict[str, Handler] = {
            "start_clock": Handler(partial(self._clock_check, clock.start_refusal),
                                   partial(self._clock_command, clock.start)),
            "stop_clock": Handler(partial(self._clock_check, clock.stop_refusal),
                                  partial(self._clock_command, clock.stop)),
            "time_bank": Handler(partial(self._clock_check, clock.time_bank_refusal),
                                 partial(self._clock_command, clock.time_bank)),
            "seat_player": Handler(self._seat_player_refusal, self._seat_player),
            "clear_seat": Handler(self._clear_seat_refusal, self._clear_seat),
            "bomb_pot": Handler(bomb_pot.refusal, bomb_pot.apply),
            "run_it": Handler(self._run_it_refusal, self._run_it_command),
            "confirm": Handler(self._answer_refusal, self._floor_answer),
            "override": Handler(self._answer_refusal, self._floor_answer),
            "set_level": (Handler(self.tournament.refusal, self.tournament.apply) if self.tournament is not None else
                          unavailable("this table plays no tournament: the configuration has no [tournament] level "
                                      "schedule")),
            "set_game": Handler(self._game_refusal, self._game_command),
        }
        chips: dict[str, Handler] = {}
        if self.betting is not None:
            betting = self.betting.handlers
            chips = {"set_stacks": betting["set_stacks"],
                     "declare": Handler(betting["declare"].check, partial(self._conducted, betting["declare"].apply)),
                     "undo": Handler(betting["undo"].check, partial(self._conducted, betting["undo"].apply))}
        else:
            own["undo"] = unavailable("this table does not read the chips: there is no betting action to undo")
        return CommandTable(self.out, {name: Handler(h.check, partial(self._card_command, h.apply))
                                       for name, h in cards.items() if name not in shared}, chips, own)

    def _card_command(self, apply: Apply, command: Command, t: float) -> list[DomainEvent]:
        """One of the card controller's commands: its events go on to the chips, then to the conduct rules."""
        return self._conduct_after(self._then_chips(apply(command, t)), t)

    def _conducted(self, apply: Apply, command: Command, t: float) -> list[DomainEvent]:
        """A command of the betting: its events go on to the conduct rules and the clock."""
        return self._conduct_after(apply(command, t), t)

    def _clock_check(self, check: Check, command: Command, t: float) -> Refusal | None:
        """A command on the clock (``controller.clock.ClockCommands``), checked at the rules' time."""
        return check(command, max(self._rules_t, t))

    def _clock_command(self, apply: Callable[[Command, float], None], command: Command, t: float
                       ) -> list[DomainEvent]:
        """A command on the clock, applied at the rules' time; the clock's events are in the outbox, each at its
        own time."""
        t = max(self._rules_t, t)
        apply(command, t)
        self.out.begin(t)
        self._rules_t = t
        return self.out.take()

    def _game_refusal(self, command: Command, t: float) -> Refusal | None:
        return self.rotation.refusal(command["game"])

    def _game_command(self, command: Command, t: float) -> list[DomainEvent]:
        """``set_game``: the floor has ``game`` dealt from the next hand (the running hand keeps its game), and the
        rotation goes on from it; its hands are counted afresh."""
        self.rotation.set_game(command["game"])
        self.out.publish(GameSet(self.rotation.named(command["game"]), self.cards.hand + 1, command.by), t=t)
        return self.out.take()

    def _run_it_refusal(self, command: Command, t: float) -> Refusal | None:
        """``run_it``: the board's part (controller.board_runs), then the betting's (no more action possible, the
        pots it names)."""
        refusal = self.cards.handlers["run_it"].check(command, t)
        if refusal is None and self.betting is not None:
            refusal = self.betting.runs_refusal(command.get("pots"))
        return refusal

    def _run_it_command(self, command: Command, t: float) -> list[DomainEvent]:
        """The betting takes the agreement, then the card controller records it."""
        if self.betting is not None:
            self.betting.agree_runs(command["times"], command.get("pots"))
        return self._card_command(self.cards.handlers["run_it"].apply, command, t)

    def _clear_seat_refusal(self, command: Command, t: float) -> Refusal | None:
        seat = command["seat"]
        return None if seat in self.players else Refusal(f"seat {seat} has no player to clear")

    def _clear_seat(self, command: Command, t: float) -> list[DomainEvent]:
        """``clear_seat`` frees a seat."""
        seat = command["seat"]
        left = self.players.pop(seat)
        self.out.publish(SeatCleared(seat, left["name"], command.by), t=t)
        return self.out.take()

    def _seat_player_refusal(self, command: Command, t: float) -> Refusal | None:
        """A player sits at one seat at a time."""
        seat, player_id = command["seat"], command.get("player_id")
        elsewhere = [s for s, p in self.players.items() if s != seat and player_id is not None
                     and p.get("player_id") == player_id]
        if elsewhere:
            return Refusal(f"player {player_id} already sits at seat {elsewhere[0]}: clear_seat it first")
        return None

    def _seat_player(self, command: Command, t: float) -> list[DomainEvent]:
        """``seat_player`` names who sits at a seat (any time: a player may be seated, or renamed, mid-hand).
        Names are public: on both branches, in both snapshots, in the hand history."""
        seat = command["seat"]
        player = {"name": command["name"]}
        if "player_id" in command:
            player["player_id"] = command["player_id"]
        self.players[seat] = player
        self.out.publish(PlayerSeated(seat, player["name"], player.get("player_id"), command.by), t=t)
        return self.out.take()

    def _answer_refusal(self, command: Command, t: float) -> Refusal | None:
        """``confirm`` and ``override`` answer a ruling that waits for the floor: the part that made it checks the
        answer (the card controller its irregularities; the table the rulings of the seat sensors, the clock and
        the betting)."""
        wait = self.floor.get(command["irregularity"])
        if wait is None:
            return not_waiting(command["irregularity"])
        if wait.answered_by == CARDS:
            return self.cards.handlers[command.name].check(command, t)
        return None

    def _floor_answer(self, command: Command, t: float) -> list[DomainEvent]:
        """The floor confirms or overrides a ruling. Of the seat sensors, the clock or the betting: confirming a
        ruling that may kill the hand kills it (the betting folds it); overriding lets play go on."""
        ident = command["irregularity"]
        wait = self.floor.answered(ident)
        if wait.answered_by == CARDS:
            return self._card_command(self.cards.handlers[command.name].apply, command, t)
        self.floor.pop(ident)
        confirmed = command.name == "confirm"
        cards = self.cards
        its_hand_runs = wait.hand is not None and wait.hand == cards.hand and cards.in_hand and not cards.void
        result = "play_on"
        if wait.code == mucked_winner.MUCKED_WINNER:
            result = mucked_winner.floor_result(confirmed)
        elif confirmed:  # a hand can be killed only while it runs: afterwards the floor's answer is a penalty's
            kills = confirm_kills(wait.type, wait.ruling) and its_hand_runs
            result = "dead_hand" if kills else "none"
        of_hand = wait.hand if wait.hand is not None else CURRENT
        self.out.publish(FloorRuling(ident, wait.code, confirmed, result, None, command.by, command.note),
                         t=t, hand=of_hand)
        seat = wait.data.get("seat")
        if result == "dead_hand" and seat is not None:
            self._kill(seat, wait.data.get("rule") or "", t)
        if wait.code == mucked_winner.MUCKED_WINNER and self.mucked_winner is not None:
            self.mucked_winner.answer(wait.data["seat"], confirmed, t, of_hand)
        return self._conduct_after(self.out.take(), t)

    def floor_pending(self) -> list[int]:
        """Every ruling waiting for the floor, oldest first: the card controller's irregularities and the rest."""
        return self.floor.ids()

    @property
    def game_stopped(self) -> bool:
        """The hand is void (a misdeal): no one is to act until the cards are dealt again. (An irregularity that
        stops the game until the floor rules is ``floor_pending``, the status light's more urgent condition.)"""
        return self.cards.in_hand and self.cards.void

    def seat_to_act(self) -> int | None:
        """The seat whose turn it is, as the action clock knows it (None: no player is to act)."""
        return self.clock.seat

    def facing_bet(self) -> bool:
        """Whether the seat to act must put in chips to stay in: a call, a raise or its fold comes next, and a
        board card now would be premature. So too once the hand's cards are dealt and before its betting begins
        (the first to act faces the forced bets). False where no seat is to act, or the seat may check."""
        if self.clock.seat is None:
            return self.betting is not None and self.betting.first_to_act() is not None
        return self.clock.facing_bet is True

    def next_to_act(self) -> int | None:
        """Where the table expects chips next: the seat to act, or while the hand's cards are dealt the seat that
        acts first once they are (its chips may come as the last card lands)."""
        seat = self.clock.seat
        if seat is None and self.betting is not None:
            return self.betting.first_to_act()
        return seat

    def turn_lights(self, now: float) -> tuple[int | None, dict[int, str]]:
        """What the seat lights show at ``now``: the seat to act (None once its clock has run out: the hand is
        dead) and the action clock's lights. Never earlier than the rules' latest time."""
        t = max(now, self._rules_t)
        to_act = self.clock.seat if self.clock.phase(t) != "expired" else None
        return to_act, self.clock.lights(t)

    def sensor_known(self, seat: int, sensor: str, detects: str | None = None) -> bool | None:
        """What the rules believe a seat sensor shows: ``presence`` — a player seated (None: never reported);
        ``device`` — a device of kind ``detects`` on."""
        if sensor == "presence":
            return self.conduct.present(seat)
        return self.conduct.device_on(seat, detects)

    @property
    def deck_unregistered(self) -> bool:
        """The cards being dealt are tags of no registered deck (a new deck nobody registered)."""
        return self.unregistered_deck.dealt

    def tick(self, now: float) -> list[DomainEvent]:
        """Let time pass. ``tick_changed`` says whether it changed anything though it gave no event (the
        daemon journals such a tick too, so that a replay takes the same path). Before the parts' earliest
        deadline (``_next_due``) a tick only moves the table time."""
        if self._quiet_until is ASK_NOW:
            # Inputs came since the last tick: asking the parts when they are due costs less than ticking them,
            # and a table reads many tags between two ticks that set no timer due yet (a chip joining a bet).
            self._quiet_until = self._next_due()
        if max(self._rules_t, now) < self._quiet_until:
            self.out.begin(now)
            self.tick_changed = False
            return []
        before, turn = self._rules_t, self.clock.seat
        events = self.cards.tick(now)
        if events:
            events = self._then_chips(events)
        if self.betting is not None:
            self.betting.tick(now)
        out = self._conduct_after(events + self.out.take(), now)
        t = max(self._rules_t, now)
        pending = self.conduct.deal_decision_pending()
        self.conduct.tick(t)
        self.clock.tick(t)
        out += self.out.take()
        self.tick_changed = self.clock.seat != turn or pending != self.conduct.deal_decision_pending()
        self._rules_t = t if out or self.tick_changed else before  # an unjournaled tick leaves no trace
        self._quiet_until = self._next_due()
        return out

    def _next_due(self) -> float:
        """The earliest time a part's tick has something to do: the card controller's timers, the chips settling,
        the absent-at-deal decision, the action clock (each a moment early: a part asked early does nothing).
        An absent player's turn (DE 6) and a ruling that moved the betting are looked at on every tick."""
        if self._turn_moved or self.absent.waits_on(self.clock.seat):
            return -math.inf
        due = min(self.cards.next_due(), self.conduct.next_due(), self.clock.next_due())
        if self.betting is not None:
            due = min(due, self.betting.next_due())
        return due - DUE_EARLY_S

    # ---- conduct and the clock ----------------------------------------------------------------------

    def _conduct_after(self, events: list[DomainEvent], t: float) -> list[DomainEvent]:
        """Give the rules what this input did to the hand (docs/conduct.md, "Wiring it into the controller"), then
        the clock the seat to act; their events follow the input's, in the same sequence.

        An input that made no event changed nothing the rules learn from, and the seat to act is still the one the
        clock was told last (every input that moves the betting emits its action): nothing to do but keep the time.
        Only an absent player's turn (DE 6) is looked at again, as it may be ruled again."""
        if not events and not self._turn_moved and not self.absent.waits_on(self.clock.seat):
            self._rules_t = max(self._rules_t, t)
            return events
        for event in events:
            self._hand_progress(event)
        t = max(self._rules_t, t)
        if self.betting is None:  # the clock runs where the floor called it, until that seat folds or the hand ends
            running = self.clock.seat
            if running is not None and any(isinstance(e.record, HandOver) or (
                    isinstance(e.record, Folded) and e.record.seat == running) for e in events):
                self.clock.turn(None, t)
            self._rules_t = t
            return events + self.out.take()
        seat, owed = self.betting.turn()
        while seat is not None and (move := self.absent.move(seat, owed)) is not None:  # an absent player's (DE 6)
            if move == absent_turns.CHECK:
                with self.out.stamped(t):
                    self.betting.ruled_check(seat, self.absent.rule)
            else:
                self._kill(seat, self.absent.rule, t)
            ruled, (seat, owed) = seat, self.betting.turn()
            if seat == ruled:
                break
        out = events + self.out.take()
        acted = any(isinstance(e.record, TURN_MOVERS) for e in out)
        self._turn_moved = False
        if seat != self.clock.seat or (acted and seat is not None):
            self.clock.turn(seat, t, facing_bet=owed > 0 if seat is not None else None)
        self._rules_t = t
        return out + self.out.take()

    def _hand_progress(self, event: DomainEvent) -> None:
        """What one event of the input tells the conduct rules, by its record's class (``_ON_RECORD``); the rest tell
        them nothing, but the hands the dealing rules killed (``dead_seats``)."""
        t = max(self._rules_t, event.t)
        step = self._ON_RECORD.get(type(event.record))
        if step is not None:
            step(self, event.record, event.hand, t)
        else:
            for seat in dead_seats(event.record):  # the dealing rules killed hands: those seats are out
                self.conduct.folded(seat, t)
        self._rules_t = t

    def _progress_hand_started(self, started: HandStarted, hand: int | None, t: float) -> None:
        self._dealt, self._deal_done = HoleCardsDealt(started.game.hole_cards), False
        # a new hand: what could be disputed until it began can no longer be (TDA 20-6; AC 17; CA Actions 9)
        for wait in self.floor.lapsing(NEXT_HAND):
            if wait.hand != hand:
                self.floor.lapse(wait.id, NEXT_HAND, self.out, t)
        self.conduct.hand_started(t, hand)

    def _progress_card_dealt(self, card: CardDealt, hand: int | None, t: float) -> None:
        self._dealt.dealt(card)
        self.conduct.card_dealt(card.seat, t, hand)
        if not self._deal_done and self._dealt.complete():
            self._deal_complete(t)

    def _progress_betting_begun(self, record: object, hand: int | None, t: float) -> None:
        if not self._deal_done and self._dealt:
            self._deal_complete(t)

    def _progress_fold(self, folded: Folded, hand: int | None, t: float) -> None:
        self.conduct.folded(folded.seat, t)

    def _progress_hand_over(self, over: HandEnded | Misdeal, hand: int | None, t: float) -> None:
        self._dealt, self._deal_done = HoleCardsDealt(self.cards.game.hole_cards), False
        self.absent.hand_over()
        self.conduct.hand_ended(t)  # (a decision it takes now, on who was absent at the deal, is the hand's too)
        # the hand is over, or void: a ruling on it lapses (what outlives it waits as its kind may)
        resolution = "misdeal" if isinstance(over, Misdeal) else "hand_ended"
        for wait in self.floor.lapsing(HAND_END):
            if wait.hand in (hand, None):
                self.floor.lapse(wait.id, resolution, self.out, t)

    def _progress_action(self, action: ActionTaken, hand: int | None, t: float) -> None:
        """TDA 20-6: a pot error can be disputed "bis in der nächsten Hand wesentliche Handlungen stattgefunden
        haben" (the house's ``pot_disputes``)."""
        waiting = self.floor.lapsing(NEXT_HAND_ACTION)
        if waiting and self.betting is not None and self.betting.substantial_action():
            for wait in waiting:
                if wait.hand != hand:
                    self.floor.lapse(wait.id, NEXT_HAND_ACTION, self.out, t)

    # what each event tells the conduct rules, by its record's class (the record, its hand, the rules' time)
    _ON_RECORD: dict[type, Callable[["GameController", Any, int | None, float], None]] = {
        HandStarted: _progress_hand_started, CardDealt: _progress_card_dealt, BoardCard: _progress_betting_begun,
        Burn: _progress_betting_begun, Folded: _progress_fold, HandEnded: _progress_hand_over,
        Misdeal: _progress_hand_over, BettingStarted: _progress_betting_begun, ActionTaken: _progress_action}

    def _deal_complete(self, t: float) -> None:
        self._deal_done = True
        self.conduct.deal_complete(t, sorted(self._dealt.counts))

    def _conduct_event(self, event: RuleEvent) -> None:
        """What the conduct rules publish: in its hand, or (the rules know none) the table's current hand; outside
        a hand (a player sitting down between hands) the hand is null."""
        hand = event.hand if event.hand is not None else (
            (self.cards.hand or None) if self.cards.in_hand else None)
        self._rule_event(event.record, event.t, hand)

    def _clock_event(self, event: RuleEvent) -> None:
        """What the action clock publishes: it belongs to the table's latest hand (the clock knows no hands)."""
        self._rule_event(event.record, event.t, event.hand if event.hand is not None else (self.cards.hand or None))

    def _rule_event(self, record: ConductRecord | ClockRecord, t: float, hand: int | None) -> None:
        """One event of the conduct rules or the clock, into the outbox at its own time; a ruling that needs the
        floor waits for it, and one the rule applies by itself is applied now, before their next event."""
        self.floor.note(self.out.publish(record, t=t, hand=hand), self.conduct.profile.lapses(record))
        if isinstance(record, SeatReturned):
            self.absent.returned(record.seat)
        elif isinstance(record, (AbsentAtDeal, SeatLeft, ClockExpired)) and not record.ruled.needs_floor:
            self._carry_out(record.ruled, t)

    def _kill(self, seat: int, rule: str, t: float) -> None:
        """A ruling killed the seat's hand: the betting folds it (without chips: the card controller takes the
        seat out of the hand) and the conduct rules treat the seat as folded."""
        if self.betting is not None:
            with self.out.stamped(t):
                self.betting.dead_hand(seat, rule)
            self._turn_moved = True
        else:
            self.cards.hand_dead(seat)
        self.conduct.folded(seat, max(self._rules_t, t))

    def _carry_out(self, ruled: SeatRuling, t: float) -> None:
        """A ruling the rule applies by itself (no floor): the clock ran out or a player was away at the end of the
        deal, and the profile says the hand is dead (or, PP Dead hands 1f, checked): the betting follows."""
        if self.betting is None:  # no betting to fold: the card controller takes the seat out of the hand
            if ruled.ruling == HAND_DEAD:
                self._kill(ruled.seat, ruled.rule, t)
            return
        if ruled.ruling == CHECK_OR_FOLD:  # DE 6: on the seat's turn (see _conduct_after)
            self.absent.ruled(ruled.seat)
        elif ruled.ruling == HAND_DEAD:
            self._kill(ruled.seat, ruled.rule, t)
        elif ruled.ruling == CHECK:
            with self.out.stamped(t):
                self.betting.ruled_check(ruled.seat, ruled.rule)
            self._turn_moved = True

    # ---- the card controller's events, on to the deck audit and the chips ----------------------------

    def _hand_ending(self, ended: HandEnded) -> None:
        """The card controller is about to announce the hand's end. What it announced before goes to the listeners
        first; then the hand's result is published — the chip layer's award, or on a table without chips the best
        hand the cards show — so that a subscriber has the result before ``hand_ended`` (docs/mqtt.md)."""
        self._before_end += self._listen(self.out.take())
        if self.betting is not None:
            self.betting.hand_ending(ended, self.out.now)
        elif not ended.misdeal:
            cards_showdown(ended, self.cards.game.hole_cards, self.out, self.cards.stud_game)
        self._before_end += self.out.take()

    def _then_chips(self, events: list[DomainEvent]) -> list[DomainEvent]:
        """The card controller's events of one input, then what the level schedule, the deck audit and the chip
        layer make of them, in that order; a hand's result (``_hand_ending``) before the hand's end."""
        before, self._before_end = self._before_end, []
        return before + self._listen(events)

    def _listen(self, events: list[DomainEvent]) -> list[DomainEvent]:
        if not events:
            return events
        started = next((e for e in events if isinstance(e.record, HandStarted)), None)
        if started is not None and self.tournament is not None:
            self.tournament.hand_started(started.hand, started.t)  # before the hand's blinds are read
        self.unregistered_deck.card_events(events)
        self.deck_audit.card_events(events)
        if self.betting is not None:
            self.betting.card_events(events, self.cards.button, self.cards.no_small_blind)
        return events + self.out.take()

    # ---- the picture --------------------------------------------------------------------------------

    def on_table(self) -> dict[str, str]:
        tags = self.cards.on_table()
        if self.betting is not None:
            tags.update(self.betting.on_table())
        return tags

    # ---- checkpoints -------------------------------------------------------------------------------

    def checkpoint_state(self) -> dict[str, Any]:
        """What carries over from this hand's end to the next hand, as JSON: numbering, button, players, deck,
        stacks, the tags lying on the table, the deck audit, the time banks, what the seat sensors show, the rulings
        that outlive their hand waiting for the floor. Taken between hands (``in_hand`` false, no award waiting:
        ``award_waits``); the journal keeps it with the hand's end (``rfid_table.service.checkpoint``), and another
        version of the program restarts from it, replaying the inputs since."""
        return {"seq": self.seq, "rules_t": self._rules_t if self._rules_t != float("-inf") else None,
                "cards": self.cards.checkpoint_state(), "deck_audit": self.deck_audit.checkpoint_state(),
                "betting": self.betting.checkpoint_state() if self.betting is not None else None,
                "clock": self.clock.checkpoint_state(), "conduct": self.conduct.checkpoint_state(),
                "level": self.levels.checkpoint_state() if self.levels is not None else None,
                "rotation": self.rotation.checkpoint_state(),
                "players": {str(seat): dict(player) for seat, player in self.players.items()},
                "floor": self.floor.state()}

    def restore_checkpoint_state(self, state: dict[str, Any]) -> None:
        """Take over :meth:`checkpoint_state` on a controller just made from this table's setup."""
        self._quiet_until = ASK_NOW
        if state.get("rotation"):  # the next hand's game first: the card controller plans its deal (older
            self.rotation.restore_checkpoint_state(state["rotation"])  # checkpoints have none: it starts afresh)
        self.cards.restore_checkpoint_state(state["cards"])  # the outbox's numbering (the same seq) with it
        self._rules_t = float("-inf") if state["rules_t"] is None else float(state["rules_t"])
        self.deck_audit.restore_checkpoint_state(state["deck_audit"])
        if self.betting is not None and state["betting"] is not None:
            self.betting.restore_checkpoint_state(state["betting"])
        self.clock.restore_checkpoint_state(state["clock"])
        self.conduct.restore_checkpoint_state(state["conduct"])
        self.players.clear()  # the chip layer reads the same mapping
        self.players.update({int(seat): dict(player) for seat, player in state.get("players", {}).items()})
        if self.levels is not None and state.get("level"):  # (older checkpoints have none: the start level)
            self.levels.restore_checkpoint_state(state["level"])
        self.floor.restore(state.get("floor", []))  # (state version 1 has none: nothing outlived its hand)

    @property
    def award_waits(self) -> bool:
        """A hand is over and its award waits for the floor (a mucked winning hand): no moment for an explicit
        checkpoint, which cannot carry the betting that award needs."""
        return self.betting is not None and self.betting.award_waits

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
        game = self.rotation.game_now(self.cards.in_hand)  # the running hand's, or the next hand's
        snap["game"] = game.name or None
        level = self.levels.current if self.levels is not None else None
        snap["stakes"] = self.stakes_table.playing(game).stakes(level) if self.stakes_table is not None else None
        snap["rotation"] = self.rotation.snapshot(self.cards.in_hand)
        for entry in snap["seats"]:  # who sits there (seat_player), or null
            player = self.players.get(entry["seat"])
            entry["player"] = dict(player) if player else None
        return snap

