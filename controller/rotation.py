"""Mixed games: the game each hand is dealt, from the house's rotation, and the button through the stud round.

A table that deals a mix (HORSE: limit hold'em, razz, stud, Omaha hi-lo, stud hi-lo; a house's own list) changes
game every ``hands_per_game`` hands, or with each tournament level (``controller.levels``), or when the floor says so
(``set_game``). The game changes between hands only: the hand that runs keeps the game it began with, as it keeps its
level (DE 5). A table that deals one game has a rotation of one game that never changes. A house may give each game
its own stakes (``Stakes``): the flop games' blinds, the stud games' antes, bring-in and bets.

TDA 4: "Bei mixed-games (z.B.: HORSE) wird, wenn das Spiel von Hold'em zu Stud wechselt, nach der letzten
Hold'em-Hand der Button an die Position versetzt, als wäre die nächste Hand eine Hold'em-Hand und wird dort für die
Dauer der Stud-Runde eingefroren. [...] Beim Wechsel zu Hold'em startet der Button dort, wo er eingefroren wurde."
So the button moves after a hand dealt from the button (a flop game) as it always does, and stays where it is after a
stud hand: the stud games deal without one (``button_moves``).

Pure like the rest of the controller: the hand's start and end in, the hand's game out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from controller.commands import Refusal
from controller.levels import LevelSchedule
from controller.stud import GAMES as STUD_GAMES  # dealt without a button (TDA 4: the button is frozen through them)

HORSE = ("flhe", "razz", "stud", "flo8", "stud8")  # hold'em, Omaha hi-lo, razz, stud, stud eight or better
CHANGE_HANDS = "hands"  # every hands_per_game hands
CHANGE_LEVEL = "level"  # with each tournament level


FLOP_GAME_STAKES = ("small_blind", "big_blind", "ante", "big_blind_ante")  # a game dealt from a button: blinds
STUD_GAME_STAKES = ("ante", "bring_in", "small_bet", "big_bet")  # a stud game: antes, a bring-in and fixed limits


@dataclass(frozen=True)
class Stakes:
    """The forced bets and limits a game of a mixed game is played at, where the house gives each game its own
    (``[game.stakes.<game>]``): a card room plays the flop games with blinds and the stud games with antes, a
    bring-in and a small and a big bet. 0: none."""

    small_blind: int = 0
    big_blind: int = 0
    ante: int = 0
    big_blind_ante: int = 0
    bring_in: int = 0
    small_bet: int = 0
    big_bet: int = 0

    def as_dict(self, stud: bool) -> dict[str, int]:
        """The stakes a game of its kind has, as the events name them."""
        return {key: getattr(self, key) for key in (STUD_GAME_STAKES if stud else FLOP_GAME_STAKES)}


@dataclass(frozen=True)
class Game:
    """One game the table deals: its configuration name (``flo8``), the betting engine's variant (a key of
    ``controller.betting.VARIANTS``; "": the table's one game), the cards a player holds, whether it is dealt
    from a button (the flop games; the stud games are not: TDA 4), and its own stakes (None: the table's)."""

    name: str
    engine: str
    hole_cards: int
    button: bool = True
    stakes: Stakes | None = None

    @classmethod
    def named(cls, name: str, engine: str, hole_cards: int, stakes: Stakes | None = None) -> Game:
        """A game by its configuration name: the stud games deal without a button."""
        return cls(name, engine, hole_cards, button=name not in STUD_GAMES, stakes=stakes)

    def stakes_in_play(self) -> dict[str, dict[str, int]]:
        """``{"stakes": ...}`` for the events that name the game (``hand_started``, ``game_set``) where the game has
        stakes of its own; nothing otherwise."""
        return {"stakes": self.stakes.as_dict(not self.button)} if self.stakes is not None else {}


@dataclass(frozen=True)
class RotationSetup:
    """The games in the order they are dealt, and when the game changes: every ``hands_per_game`` hands
    (``change`` "hands"), or at each level (``change`` "level"). One game: it never changes."""

    games: tuple[Game, ...]
    hands_per_game: int = 0
    change: str = CHANGE_HANDS
    start: int = 0  # the index of the game the table starts with

    def __post_init__(self) -> None:
        if not self.games:
            raise ValueError("a rotation needs at least one game")
        if self.change not in (CHANGE_HANDS, CHANGE_LEVEL):
            raise ValueError(f"change must be {CHANGE_HANDS!r} or {CHANGE_LEVEL!r}, not {self.change!r}")
        if len(self.games) > 1 and self.change == CHANGE_HANDS and self.hands_per_game < 1:
            raise ValueError("a rotation of several games changes every hands_per_game hands (1 or more)")
        if not 0 <= self.start < len(self.games):
            raise ValueError(f"start {self.start}: the rotation has {len(self.games)} games")


class Rotation:
    """The game of the running hand (or of the next one, between hands), and how far the rotation is."""

    def __init__(self, setup: RotationSetup, levels: LevelSchedule | None = None):
        if setup.change == CHANGE_LEVEL and len(setup.games) > 1 and levels is None:
            raise ValueError("a rotation that changes with the level needs a tournament's level schedule")
        self.setup = setup
        self.levels = levels
        self.index = setup.start  # the game of the running hand, or of the last one
        self.played = 0  # hands of that game played to their end (a misdealt hand is dealt again: not counted)
        self.pending: int | None = None  # the game the floor set for the next hand (set_game), by index
        self.level = levels.number if levels is not None else None  # the level the game began at

    @property
    def game(self) -> Game:
        return self.setup.games[self.index]

    @property
    def rotates(self) -> bool:
        return len(self.setup.games) > 1

    def next_index(self) -> int:
        """The game the next hand is dealt (nothing changes): the floor's, or the next in the list once the game
        has had its hands or a new level begins."""
        if self.pending is not None:
            return self.pending
        if not self.rotates:
            return self.index
        if self.setup.change == CHANGE_LEVEL:
            assert self.levels is not None
            levels = self.levels
            level = levels.pending if levels.pending is not None else levels.number
            return (self.index + 1) % len(self.setup.games) if level != self.level else self.index
        if self.played >= self.setup.hands_per_game:
            return (self.index + 1) % len(self.setup.games)
        return self.index

    def hand_started(self) -> Game:
        """A hand begins: its game. (In a tournament, before the level schedule starts the announced level.)"""
        index = self.next_index()
        if index != self.index or self.pending is not None:
            self.index, self.played = index, 0
        self.pending = None
        if self.levels is not None:
            self.level = self.levels.pending if self.levels.pending is not None else self.levels.number
        return self.game

    def hand_ended(self, misdeal: bool) -> None:
        """The hand is over; a misdealt one is dealt again in the same game and does not count."""
        if not misdeal:
            self.played += 1

    def button_moves(self) -> bool:
        """Whether the button moves on after the hand just played: only after a game dealt from it (TDA 4)."""
        return self.game.button

    # ---- set_game ----------------------------------------------------------------------------------

    def refusal(self, name: str) -> Refusal | None:
        """Why the floor cannot have ``name`` dealt from the next hand, or None."""
        names = [g.name for g in self.setup.games]
        if name not in names:
            if not self.rotates:
                return Refusal(f"this table deals {names[0] or 'one game'} only: the configuration's [game] rotation "
                               "names the games it may deal")
            return Refusal(f"{name} is not in this table's rotation ({', '.join(names)})")
        return None

    def named(self, name: str) -> Game:
        """The rotation's game of that name (as :meth:`refusal` allowed it)."""
        return next(g for g in self.setup.games if g.name == name)

    def set_game(self, name: str) -> None:
        """The floor's ``set_game`` (as :meth:`refusal` allowed): the next hand is ``name``'s first, and the
        rotation goes on from there."""
        self.pending = [g.name for g in self.setup.games].index(name)

    # ---- the picture -------------------------------------------------------------------------------

    def game_now(self, in_hand: bool) -> Game:
        """The running hand's game; between hands, the next hand's."""
        return self.game if in_hand else self.setup.games[self.next_index()]

    def snapshot(self, in_hand: bool) -> dict[str, Any] | None:
        """The rotation as the snapshot shows it (None: the table deals one game): the games, when the game changes,
        the hands of the game now (``game_now``) played to their end, and the game that comes after it."""
        if not self.rotates:
            return None
        games = self.setup.games
        now = self.index if in_hand else self.next_index()
        fresh = not in_hand and (now != self.index or self.pending is not None)  # the next hand begins a game
        following = self.pending if in_hand and self.pending is not None else (now + 1) % len(games)
        return {"games": [g.name for g in games], "change": self.setup.change,
                "hands_per_game": self.setup.hands_per_game if self.setup.change == CHANGE_HANDS else None,
                "hands_played": 0 if fresh else self.played, "next_game": games[following].name}

    def checkpoint_state(self) -> dict[str, Any]:
        return {"game": self.game.name, "played": self.played, "level": self.level,
                "pending": self.setup.games[self.pending].name if self.pending is not None else None}

    def restore_checkpoint_state(self, state: dict[str, Any]) -> None:
        names = [g.name for g in self.setup.games]
        if state.get("game") in names:  # (a configuration changed since: the table starts its rotation afresh)
            self.index = names.index(state["game"])
            self.played = int(state.get("played", 0))
            self.level = state.get("level", self.level)
            pending = state.get("pending")
            self.pending = names.index(pending) if pending in names else None
