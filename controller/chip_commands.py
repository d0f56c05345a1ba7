"""The commands the chip layer owns (``ChipCommands``), each checked without changing anything, then applied
(``controller.commands``): ``set_stacks`` (the floor counted the stacks), ``declare`` (a verbal declaration entered
at the console) and ``undo`` (the dealer takes back the latest betting input of the round)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from controller.command_events import Declaration, StacksSet
from controller.commands import Command, Handler, Refusal, allowed
from controller.domain import DomainEvent
from controller.outbox import Outbox

if TYPE_CHECKING:
    from controller.chip_betting import ChipBetting

NOT_STARTED = "the betting has not started (the deal is not complete)"


class ChipCommands:
    def __init__(self, chips: ChipBetting, out: Outbox):
        self.chips = chips
        self.out = out  # the commands' own events, and where every event of the command is taken from

    def handlers(self) -> dict[str, Handler]:
        return {"set_stacks": Handler(allowed, self.set_stacks),
                "declare": Handler(self.declare_refusal, self.declare),
                "undo": Handler(self.undo_refusal, self.undo)}

    def set_stacks(self, command: Command, t: float) -> list[DomainEvent]:
        """``set_stacks``: the floor counted the stacks."""
        stacks = {int(seat): int(amount) for seat, amount in command["stacks"].items()}
        self.chips.set_stacks(stacks)
        self.out.publish(StacksSet(tuple(sorted(stacks.items())), command.by))
        return self.out.take()

    def declare_refusal(self, command: Command, t: float) -> Refusal | None:
        """Why a declaration is refused now, or None: the betting has begun, or begins with it (a betting input once
        the deal is over, ``ChipBetting.start_if_dealt``), and the seat is in its hand."""
        seat, hand = command["seat"], self.chips.hand
        if hand.accepts_declarations() and hand.engine is not None:  # (it does once the betting began)
            seats = hand.engine.order
        elif hand.would_start(betting_input=True):
            opening = self.chips.opening()
            try:
                opening.engine()  # the betting could not begin (a seat with no chips)
            except ValueError:
                return Refusal(NOT_STARTED)
            seats = opening.seats
        else:
            return Refusal(NOT_STARTED)
        return None if seat in seats else Refusal(f"seat {seat} is not in the hand")

    def declare(self, command: Command, t: float) -> list[DomainEvent]:
        """``declare``, as :meth:`declare_refusal` allowed (the betting begins with it if the deal is over)."""
        self.chips.start_if_dealt(t)
        self.out.publish(Declaration(command["seat"], command["declaration"], command.get("amount"), command.by))
        self.chips.hand.declare(command["seat"], command["declaration"], command.get("amount"))
        return self.out.take()

    def undo_refusal(self, command: Command, t: float) -> Refusal | None:
        """Why the dealer's ``undo`` is refused now, or None (``HandReading.undo_refusal``)."""
        return self.chips.hand.undo_refusal()

    def undo(self, command: Command, t: float) -> list[DomainEvent]:
        """The dealer's ``undo``, as :meth:`undo_refusal` allowed (``HandReading.take_back``)."""
        self.chips.hand.take_back(t, command.by)
        return self.out.take()
