"""What the floor's and the dealer's commands did, as records (``controller.events`` has the hand's): who sits
where, a bomb pot agreed for the next hand, the game of the next hand, the stacks counted, a player's declaration.
Their wire form is ``controller.wire``'s; ``by`` is who sent the command (``role/user``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from controller.rotation import Game


@dataclass(frozen=True, slots=True)
class PlayerSeated:
    """``seat_player``: a player sits at the seat (or is renamed); ``player_id``: the floor's id, if it gave one."""

    seat: int
    name: str
    player_id: str | None
    by: str


@dataclass(frozen=True, slots=True)
class SeatCleared:
    """``clear_seat``: the player named ``name`` left the seat."""

    seat: int
    name: str
    by: str


@dataclass(frozen=True, slots=True)
class BombPotAgreed:
    """``bomb_pot``: every player puts ``amount`` in before the deal of hand ``applies_to_hand`` and nothing is bet
    before the flop (CA GR 14.3), or, a ``flip``, on no street (CA GR 14.2); ``sits_out``: the seat not dealt in
    (more players than CA GR 15.2 allows), or None."""

    amount: int
    flip: bool
    applies_to_hand: int
    sits_out: int | None
    by: str


@dataclass(frozen=True, slots=True)
class ButtonSet:
    """``set_button``: the floor put the button on ``seat`` for hand ``applies_to_hand``."""

    seat: int
    applies_to_hand: int
    by: str


@dataclass(frozen=True, slots=True)
class SeatsSet:
    """``seats``: the seats dealt in from hand ``applies_to_hand``."""

    seats: tuple[int, ...]
    applies_to_hand: int
    by: str


@dataclass(frozen=True, slots=True)
class RunItAgreed:
    """``run_it``: the players agreed to deal the rest of the board ``runs`` times, for ``pots`` (None: every pot),
    with ``shared`` board cards dealt once for all the runs."""

    runs: int
    pots: tuple[int, ...] | None
    shared: int
    by: str
    rules: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class NewHandCalled:
    """``new_hand``: the dealer says the next cards are a new hand's."""

    by: str


@dataclass(frozen=True, slots=True)
class FloorCalled:
    """``floor_call``: the floor is called to the table (to ``seat``, if one is named), with the caller's ``note``."""

    seat: int | None
    note: str | None
    by: str


@dataclass(frozen=True, slots=True)
class GameSet:
    """``set_game``: ``game`` is dealt from hand ``applies_to_hand`` (controller.rotation)."""

    game: Game
    applies_to_hand: int
    by: str


@dataclass(frozen=True, slots=True)
class StacksSet:
    """``set_stacks``: the floor counted the stacks, seat by seat."""

    stacks: tuple[tuple[int, int], ...]
    by: str


@dataclass(frozen=True, slots=True)
class Declaration:
    """``declare``: the player at ``seat`` declared an action (``declaration``), of ``amount`` where it names one."""

    seat: int
    declaration: str
    amount: int | None
    by: str
