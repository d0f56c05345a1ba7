"""One hand's betting engine and every input it took (``EngineLog``), and what the dealer's ``undo`` can take back
(``UndoStack``).

Each input is a typed record (``Push``, ``Fold``, ``Check``, ``Declare``, ``EndStreet``, ``Passive``, and in stud
``StartStreet``) that gives itself to an engine (``apply``). The engine is deterministic, so an undo rebuilds it from
the hand's opening and the inputs before the undone one, and a copy to try an input on is replayed the same way:
nothing is copied on the way (a copy of the engine per push cost a third of the replay's time).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Union

from controller.betting import Action, BettingHand, Ruling

if TYPE_CHECKING:
    from controller.chip_opening import Opening


@dataclass(frozen=True)
class Push:
    """Chips put into ``seat``'s betting zone in one motion; ``withdrawn``: chips taken back."""

    seat: int
    chips: tuple[int, ...]
    withdrawn: tuple[int, ...] = ()

    def apply(self, hand: BettingHand) -> Ruling:
        return hand.push(self.seat, list(self.chips), list(self.withdrawn))


@dataclass(frozen=True)
class Fold:
    """The seat's cards reached the muck, or a rule killed its hand."""

    seat: int

    def apply(self, hand: BettingHand) -> Ruling:
        return hand.fold(self.seat)


@dataclass(frozen=True)
class Check:
    """A check the table cannot see: inferred, or ruled when the clock ran out."""

    seat: int

    def apply(self, hand: BettingHand) -> Ruling:
        return hand.check(self.seat)


@dataclass(frozen=True)
class Declare:
    """A verbal declaration entered at the console; ``amount``: one, or the amounts heard when it was unclear."""

    seat: int
    kind: str
    amount: int | tuple[int, ...] | None

    def apply(self, hand: BettingHand) -> Ruling:
        return hand.declare(self.seat, self.kind, self.amount)


@dataclass(frozen=True)
class EndStreet:
    """The dealer collects the bets."""

    def apply(self, hand: BettingHand) -> Ruling:
        return hand.end_street()


@dataclass(frozen=True)
class Passive:
    """The seat showed a hole card and the house makes its hand passive (``rule``)."""

    seat: int
    rule: str

    def apply(self, hand: BettingHand) -> Ruling:
        return hand.make_passive(self.seat, self.rule)


@dataclass(frozen=True)
class StartStreet:
    """Stud: the street's cards are out and name the seat that opens it (the bring-in, or the first to act);
    ``open_pair``: fourth street may be bet at the big bet (CA Actions 3c)."""

    seat: int
    open_pair: bool = False

    def apply(self, hand: BettingHand) -> Ruling:
        return hand.start_street(self.seat, open_pair=self.open_pair)


EngineInput = Union[Push, Fold, Check, Declare, EndStreet, Passive, StartStreet]


class EngineLog:
    """The betting engine of one hand, made from its opening, and the inputs it took, in order."""

    def __init__(self, opening: Opening):
        self.opening = opening
        self.engine = opening.engine()  # ValueError: the betting cannot begin (a seat dealt in with no chips)
        self._inputs: list[EngineInput] = []

    def __len__(self) -> int:
        return len(self._inputs)

    def act(self, given: EngineInput) -> Ruling:
        """Give the engine one input, logged."""
        self._inputs.append(given)
        return given.apply(self.engine)

    def replayed(self) -> BettingHand:
        """A new engine given every input so far: the same state as the engine's, to try an input on."""
        hand = self.opening.engine()
        for given in self._inputs:
            given.apply(hand)
        return hand

    def back_to(self, length: int) -> None:
        """The engine as it was after its first ``length`` inputs; the later inputs are forgotten."""
        del self._inputs[length:]
        self.engine = self.replayed()

    def without_fold(self, seat: int) -> None:
        """The engine as if ``seat``'s latest fold had never been (the floor restored a mucked hand)."""
        folds = [i for i, given in enumerate(self._inputs) if isinstance(given, Fold) and given.seat == seat]
        if folds:
            del self._inputs[folds[-1]]
            self.engine = self.replayed()


@dataclass
class UndoPoint:
    """What one betting input did, so that the dealer's ``undo`` can take it back: where it begins in the engine's
    log, the chip tags of the push (back in motion after an undo) and the actions it published."""

    log_length: int  # the engine's inputs this hand before this one
    seat: int | None
    what: str  # "push" or "declaration"
    arrived: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)
    actions: list[tuple[int, Action]] = field(default_factory=list)  # each published action, with its event's seq
    declaration: str | None = None
    forced_paid: int = 0  # what the push paid of its seat's forced bet (due again once the push is undone)

    def published(self, seq: int, action: Action) -> None:
        self.actions.append((seq, action))


class UndoStack:
    """This betting round's inputs the dealer can take back, latest last, and the latest action that cannot be (a
    fold, a ruling): what the undo's refusal names."""

    def __init__(self) -> None:
        self.points: list[UndoPoint] = []
        self.fixed: Action | None = None

    def taken(self, ruling: Ruling, point: UndoPoint | None) -> UndoPoint | None:
        """What an input the engine ruled on leaves to undo: the point whose actions are published now (None: no
        point to record them in)."""
        if point is not None and (ruling.actions or (ruling.ok and point.what == "declaration")):
            self.points.append(point)
            return point
        if ruling.actions:  # a fold or a ruling stands: what came before it can no longer be taken back
            self.points.clear()
            self.fixed = ruling.actions[-1]
        return None

    def pop(self) -> UndoPoint:
        """The latest input of the round, which an undo takes back."""
        return self.points.pop()

    def round_over(self) -> None:
        """The round's actions stand."""
        self.points.clear()
        self.fixed = None
