"""What happened at the table, as the controller's parts tell each other: one frozen record per kind of event.

A part that makes an event makes its record and gives it to the outbox (``Outbox.publish``), which numbers it and
makes its wire form, the ``DomainEvent`` subscribers see, in one place (``controller.wire``). A part that listens to
another's events reads the record (``DomainEvent.record``) and picks what to do by its class: a fact has one name,
one type and one owner, and "find usages" of a record finds every part that reads it.

Each record is the owner's word for the fact, in the owner's terms (seats as ints, cards as tuples); the wire's
shape (JSON keys, strings for seat keys, which fields are secret) is ``controller.wire``'s business alone.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class HandStarted:
    """The card controller began a hand (its first card was read, or the floor started it)."""


@dataclass(frozen=True, slots=True)
class HandEnded:
    """The card controller ended the hand: the cards were gathered. ``boards`` holds every board when more than one
    was dealt (a run twice, a double board); ``hole_cards`` the live seats' cards (secret)."""

    board: tuple[str, ...]
    boards: tuple[tuple[str, ...], ...]
    live_seats: tuple[int, ...]
    folded_seats: tuple[int, ...]
    hole_cards: tuple[tuple[int, tuple[str, ...]], ...]


@dataclass(frozen=True, slots=True)
class Misdeal:
    """The hand is void (controller.misdeals): the bets go back, the button stays, the cards are dealt again."""

    reason: str
    rules: tuple[str, ...]
    irregularity: int | None  # the irregularity that caused it, if one did
    button: int | None
    by: str | None = None  # who called it (role/user), for a misdeal the floor called
    note: str | None = None  # the caller's note


HandOver = (HandEnded, Misdeal)  # the hand is over, or void: what waits on it lapses
