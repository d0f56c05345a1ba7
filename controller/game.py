"""The whole table: the card controller and, where the table has a chip set, the chip layer reading the betting.

Data flows one way. A zone event goes to the card controller (``controller.table``) when it concerns a card and to
the chip layer (``controller.chip_betting``) when it concerns a chip zone; the card controller's events then go on
to the chip layer, which turns them, with the chips, into the betting. Every event of both is numbered here, in the
order it happened, so the stream has one ``seq``.
"""

from __future__ import annotations

from typing import Any

from controller.chip_betting import BettingSetup, ChipBetting, zone_seat
from controller.domain import DomainEvent
from controller.table import TableController, TableSetup
from hal.events import DeviceEvent, ZoneEvent

CHIP_ZONES = ("bets", "pot", "stack")


class GameController:
    """The interface of ``TableController`` (``handle``, ``handle_device``, ``handle_command``, ``tick``,
    ``snapshot``, ``on_table``), over cards and chips."""

    def __init__(self, setup: TableSetup, betting: BettingSetup | None = None):
        self.cards = TableController(setup)
        self.betting = ChipBetting(betting, setup.seats, setup.hole_cards) if betting and betting.chips else None
        self.seq = 0
        if self.betting is not None:  # the dealing rules ask the betting how far the hand has gone
            self.cards.substantial_action = self.betting.substantial_action
            self.cards.betting_round_open = self.betting.round_open
        self._card_uids = {uid for deck in (setup.decks or {"": setup.deck}).values() for uid in deck} | set(setup.deck)

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
            if zone_seat(event.zone)[0] in CHIP_ZONES:
                self.cards.now = event.t
                out: list[DomainEvent] = []
                self.betting.chip_zone_event(event.kind, event.uid, event.zone, event.t, self._emitter(out, event.t))
                return out
            if self.betting.is_chip(event.uid):
                return []  # a chip near the cards (a card protector, a stray chip): nothing to read
        return self._cards_then_chips(lambda: self.cards.handle(event))

    def handle_device(self, event: DeviceEvent) -> list[DomainEvent]:
        return self._cards_then_chips(lambda: self.cards.handle_device(event))

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
            return out, None
        refusal = None

        def command_to_cards() -> list[DomainEvent]:
            nonlocal refusal
            events, refusal = self.cards.handle_command(command, t)
            return events

        events = self._cards_then_chips(command_to_cards)
        return events, refusal

    def tick(self, now: float) -> list[DomainEvent]:
        out = self._cards_then_chips(lambda: self.cards.tick(now))
        if self.betting is not None:
            self.betting.tick(now, self._emitter(out, now))
        return out

    # ---- plumbing -----------------------------------------------------------------------------------

    def _emitter(self, out: list[DomainEvent], t: float, hand: int | None = None):
        """``emit(type, public, secret)`` appending numbered events; ``hand``: the hand they belong to (default:
        the current one)."""
        def emit(type_: str, public: dict, secret: dict | None) -> None:
            self.seq += 1
            out.append(DomainEvent(self.seq, type_, t, hand if hand is not None else (self.cards.hand or None),
                                   public, secret or {}))
        return emit

    def _cards_then_chips(self, call) -> list[DomainEvent]:
        """Run one input through the card controller, numbering its events in the shared sequence, then hand each
        to the chip layer; what the chip layer makes of them follows the card events of this input."""
        self.cards.seq = self.seq
        events = call()
        self.seq = self.cards.seq
        out = list(events)
        if self.betting is not None:
            for event in events:
                # the card controller may already be in the next hand (its first card ended this one)
                self.betting.card_event(event.type, event.public, event.secret, event.t,
                                        self._emitter(out, event.t, event.hand))
        return out

    # ---- the picture --------------------------------------------------------------------------------

    def on_table(self) -> dict[str, str]:
        tags = self.cards.on_table()
        if self.betting is not None:
            tags.update(self.betting.on_table())
        return tags

    def snapshot(self, secure: bool) -> dict[str, Any]:
        snap = self.cards.snapshot(secure)
        snap["seq"] = self.seq
        if self.betting is not None:
            snap["betting"] = self.betting.snapshot()
        return snap
