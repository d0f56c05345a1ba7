"""Tournament levels: the blinds and antes of a schedule, changed by the floor from the next hand on.

DE 5: "Die Blinds und Limits werden nach vorgegebenem Zeitplan gesteigert. [...] Wenn das Zeitlimit für eine Stufe
abgelaufen ist und die neue Limitstufe angekündigt wurde, beginnt diese mit dem nächsten Spiel." AC 18: the higher
blinds and ante apply in the new hand. The table keeps no clock of its own for the levels: the floor announces a
level (``set_level``) and the table plays it from the next hand; a hand that is running keeps the level it began
with. Pure like the rest of the controller.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from controller.commands import Command, Refusal

if TYPE_CHECKING:  # (the outbox makes the wire form of a LevelSet: it imports this module)
    from controller.domain import DomainEvent
    from controller.outbox import Outbox
    from controller.table import TableController


@dataclass(frozen=True)
class Level:
    """One level of the schedule: the forced bets every hand of it is played with."""

    small_blind: int
    big_blind: int
    ante: int = 0
    big_blind_ante: int = 0
    minutes: int | None = None  # how long the schedule gives the level (the floor announces the next one)


class LevelSchedule:
    """The running level (numbered from 1) and the one the floor announced for the next hand."""

    def __init__(self, levels: tuple[Level, ...], start: int = 1):
        if not levels:
            raise ValueError("a tournament schedule needs at least one level")
        if not 1 <= start <= len(levels):
            raise ValueError(f"level {start} is not in the schedule (levels 1 to {len(levels)})")
        self.levels = levels
        self.number = start
        self.pending: int | None = None  # the level the next hand starts with, set during a hand

    @property
    def current(self) -> Level:
        return self.levels[self.number - 1]

    def target(self, number: int | None) -> int:
        """The level ``set_level`` names: ``number``, or without it the level after the latest announced."""
        latest = self.pending if self.pending is not None else self.number
        return latest + 1 if number is None else number

    def refusal(self, number: int | None) -> Refusal | None:
        """Why the floor cannot announce level ``number`` (None: the next one), or None."""
        target = self.target(number)
        if not 1 <= target <= len(self.levels):
            last = "" if number is not None else f" (level {target - 1} is the schedule's last)"
            return Refusal(f"level {target} is not in the schedule (levels 1 to {len(self.levels)}){last}")
        return None

    def announce(self, number: int | None, in_hand: bool) -> int:
        """The floor's ``set_level`` (as :meth:`refusal` allowed): between hands it runs at once (the next hand is
        the next to be dealt); during a hand it waits for the hand's end. Returns the level."""
        target = self.target(number)
        if in_hand:
            self.pending = None if target == self.number else target
        else:
            self.number, self.pending = target, None
        return target

    def hand_started(self) -> int | None:
        """A new hand begins: the announced level runs from it. Returns the level that began, or None."""
        if self.pending is None:
            return None
        self.number, self.pending = self.pending, None
        return self.number

    def describe(self, number: int) -> dict[str, Any]:
        """A level as events and snapshots show it."""
        return describe(number, self.levels[number - 1])

    def snapshot(self) -> dict[str, Any]:
        return {**self.describe(self.number), "levels": len(self.levels), "next_hand": self.pending}

    def checkpoint_state(self) -> dict[str, Any]:
        return {"number": self.number, "pending": self.pending}

    def restore_checkpoint_state(self, state: dict[str, Any]) -> None:
        number = int(state["number"])
        self.number = number if 1 <= number <= len(self.levels) else self.number
        pending = state.get("pending")
        self.pending = int(pending) if pending is not None and 1 <= int(pending) <= len(self.levels) else None


def describe(number: int, level: Level) -> dict[str, Any]:
    """Level ``number`` as events and snapshots show it."""
    return {"level": number, **{k: v for k, v in asdict(level).items() if k != "minutes"}, "minutes": level.minutes}


@dataclass(frozen=True, slots=True)
class LevelSet:
    """Level ``number`` runs from hand ``applies_to_hand``: announced by the floor (``by``; ``running``: at once,
    between hands, or not until the running hand ends), or begun at that hand's first card (``by`` None)."""

    number: int
    level: Level
    applies_to_hand: int | None
    running: bool
    by: str | None = None


class TournamentLevels:
    """The floor's ``set_level``, checked, then applied, and the level an announced level begins with: each a
    ``level_set`` (LevelSet)."""

    def __init__(self, schedule: LevelSchedule, cards: TableController, out: Outbox):
        self.schedule = schedule
        self.cards = cards
        self.out = out

    def refusal(self, command: Command, t: float) -> Refusal | None:
        return self.schedule.refusal(command.get("level"))

    def apply(self, command: Command, t: float) -> list[DomainEvent]:
        """``set_level``: the floor announces a level (or, without ``level``, the next one). It runs from the next
        hand: at once between hands, at the next hand's first card during one (DE 5: "beginnt diese mit dem
        nächsten Spiel"; AC 18)."""
        in_hand = self.cards.in_hand
        number = self.schedule.announce(command.get("level"), in_hand)
        self.out.publish(LevelSet(number, self.schedule.levels[number - 1], self.cards.hand + 1, not in_hand,
                                  command.by), t=t)
        return self.out.take()

    def hand_started(self, hand: int | None, t: float) -> None:
        """Hand ``hand`` began at ``t``: a level announced during the hand before runs from it, before its blinds
        are read."""
        number = self.schedule.hand_started()
        if number is not None:
            self.out.publish(LevelSet(number, self.schedule.levels[number - 1], hand, True), t=t, hand=hand)
