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
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from controller.betting import Action
    from controller.pots import Collection
    from controller.rotation import Game
    from controller.showdown import PotAward


@dataclass(frozen=True, slots=True)
class HandStarted:
    """The card controller began a hand (its first card was read, or the floor started it), of ``game`` (a mixed
    game's rotation changes it between hands: ``controller.rotation``)."""

    game: Game


@dataclass(frozen=True, slots=True)
class HandEnded:
    """The card controller ended the hand: the cards were gathered. ``boards`` holds every board when more than one
    was dealt (a run twice, a double board); ``hole_cards`` the live seats' cards (secret)."""

    board: tuple[str, ...]
    boards: tuple[tuple[str, ...], ...]
    live_seats: tuple[int, ...]
    folded_seats: tuple[int, ...]
    hole_cards: tuple[tuple[int, tuple[str, ...]], ...]
    misdeal: bool = False  # the hand was void: nobody won it (its seats and cards are the table's, not a result)


@dataclass(frozen=True, slots=True)
class Misdeal:
    """The hand is void (controller.misdeals): the bets go back, the button stays, the cards are dealt again."""

    reason: str
    rules: tuple[str, ...]
    irregularity: int | None  # the irregularity that caused it, if one did
    button: int | None
    by: str | None = None  # who called it (role/user), for a misdeal the floor called
    note: str | None = None  # the caller's note


@dataclass(frozen=True, slots=True)
class CardDealt:
    """A hole card reached a seat as the deal planned it (or as the floor accepted it): its ``count``-th. In a stud
    hand, ``up`` says whether it lies face up (on the seat's up-card antenna: public) and ``street`` which street
    dealt it; None in the other games."""

    seat: int
    count: int
    card: str  # secret, unless up
    up: bool | None = None
    street: str | None = None


@dataclass(frozen=True, slots=True)
class BoardCard:
    """A board card was turned: the ``position``-th of its board (1 to 5) on ``street``. ``board_number``: which
    board, where the hand has more than one (a run or a double board's second board; None: the first board's card
    as it was turned)."""

    card: str
    street: str
    position: int
    board_number: int | None = None
    reshuffled: bool = False  # a later run's card from the burn cards shuffled again (CA GR 15.3)


@dataclass(frozen=True, slots=True)
class StudOpener:
    """A stud street's cards are out: the seat whose cards open its betting (``controller.stud``), on third street
    the bring-in (``card``: its door card), later the first to act. ``open_pair``: fourth street shows a pair in
    stud high, where the house may allow the big bet (CA Actions 3c); not on the wire, the chip layer rules on it."""

    street: str
    seat: int
    rule: str
    card: str | None = None  # third street: the door card that brings it in
    open_pair: bool = False


@dataclass(frozen=True, slots=True)
class Burn:
    """A card was burned: the hand's ``count``-th burn card."""

    count: int
    card: str  # secret


@dataclass(frozen=True, slots=True)
class Folded:
    """A seat's cards reached the muck: its hand is folded."""

    seat: int
    cards: tuple[str, ...]  # secret


@dataclass(frozen=True, slots=True)
class BoardCorrected:
    """The floor picked the burn card of a flop dealt with too many cards or without a burn (TDA 39): the board is
    ``board`` and ``burn`` the burn card."""

    irregularity: int
    code: str
    board: tuple[str, ...]
    burn: str  # secret
    by: str | None = None


@dataclass(frozen=True, slots=True)
class IrregularCard:
    """The card controller found an irregularity (controller.irregularities): its code, ruling and the rules cited;
    with ``needs_floor`` it waits for the floor under this event's number. ``details`` are the code's own public
    fields (zone, seat, card...), ``secret`` the cards it names that are not public."""

    code: str
    ruling: str
    severity: str
    seats: tuple[int, ...]
    rules: tuple[str, ...]
    needs_floor: bool
    profile: str  # the house rule profile that ruled
    details: dict[str, Any]
    secret: dict[str, Any]


@dataclass(frozen=True, slots=True)
class IrregularityResolved:
    """A ruling that waited for the floor waits no more, unanswered (``resolution``: why, or what came of it).
    ``seats``: the hands a ``dead_hand`` resolution kills."""

    irregularity: int
    code: str
    resolution: str
    seats: tuple[int, ...] | None = None


@dataclass(frozen=True, slots=True)
class FloorRuling:
    """The floor answered a ruling (``confirm``, ``override``): ``result`` is what came of it; ``seats``: the hands
    a ``dead_hand`` result of the card controller kills."""

    irregularity: int
    code: str
    confirmed: bool
    result: str
    seats: tuple[int, ...] | None
    by: str
    note: str | None = None


@dataclass(frozen=True, slots=True)
class HandAudit:
    """Cards the hand saw went missing before it ended (controller.missing_cards): the results stand, a new deck is
    brought in (PP Irregularities 10). ``places``: where the hand's other cards were (secret)."""

    seen: int
    counts: dict[str, int]
    missing: tuple[str, ...]  # secret
    seats: tuple[int, ...]  # the seats the missing cards were dealt to
    irregularities: tuple[int, ...]  # the irregularities that reported them missing
    rules: tuple[str, ...]
    places: dict[str, Any]


@dataclass(frozen=True, slots=True)
class CardsNeverSeen:
    """The deck audit (controller.deck_audit): over the last ``audit_hands`` hands only ``distinct_cards`` of the
    deck were seen, ``missing`` never (PP Irregularities 10: a new deck is brought in)."""

    audit_hands: int
    distinct_cards: int
    missing: tuple[str, ...]
    rules: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class DeckSelected:
    """The floor changed the active deck."""

    deck: str
    by: str


@dataclass(frozen=True, slots=True)
class ReaderLinkChanged:
    """A reader's link is ``up``, ``down``, ``incompatible`` (firmware the table cannot use), or was ``reset``;
    ``detail``: what the reader's link said of it (docs/events.md)."""

    reader: str
    state: str
    detail: dict[str, Any]


@dataclass(frozen=True, slots=True)
class AntennaChanged:
    """An antenna of a reader faulted (``state`` ``fault``) or works again (``ok``); ``detail``: which, and what the
    reader said."""

    reader: str
    state: str
    detail: dict[str, Any]


@dataclass(frozen=True, slots=True)
class UnknownTag:
    """A tag of no registered deck or chip set on a card zone; ``summarised``: how many such arrived together."""

    zone: str
    uid: str
    summarised: int = 1


@dataclass(frozen=True, slots=True)
class BettingStarted:
    """The deal is over and the chip layer began reading the betting (controller.chip_opening): the order of the
    seats, the stakes, and the stacks where the floor counted them (None: not known)."""

    button: int | None
    seats: tuple[int, ...]
    small_blind: int
    big_blind: int
    ante: int
    big_blind_ante: int
    level: int | None
    bomb_pot: tuple[int, bool] | None  # the amount each put in, and whether it is a flip (no betting at all)
    stacks: tuple[tuple[int, int], ...] | None
    rules: str  # the house rule profile the betting follows
    stud: tuple[int, int, int] | None = None  # a stud game's bring-in, small bet and big bet (no blinds)


@dataclass(frozen=True, slots=True)
class ActionTaken:
    """The betting engine took an action (controller.betting.Action); ``pot`` is the pot after it and ``next`` the
    seat to act after it."""

    action: Action
    pot: int
    next: int | None


@dataclass(frozen=True, slots=True)
class ActionUndone:
    """The dealer's ``undo`` took back the latest betting input: ``seat``'s push or declaration (``declaration``: its
    kind, for a declaration), and ``undone``, the actions it had published, each with its event's ``seq``. ``street``
    (None: the betting is over), ``pot`` and ``next`` (the seat to act) are the betting's after the undo."""

    seat: int | None
    undone: tuple[tuple[int, Action], ...]
    declaration: str | None
    street: str | None
    pot: int
    next: int | None
    by: str


@dataclass(frozen=True, slots=True)
class PotsCollected:
    """A betting round is over: the bets went into the pot, the uncalled part back to its owner
    (controller.pots)."""

    collection: Collection


@dataclass(frozen=True, slots=True)
class ChipsReturned:
    """After a misdeal, the void wagers went back (``returned``, by zone); ``left_in_place``: what still lies in a
    zone at the new deal and counts as the next hand's (the blinds left in place)."""

    returned: dict[str, int]
    left_in_place: dict[str, int]

    @property
    def complete(self) -> bool:
        return not self.left_in_place


@dataclass(frozen=True, slots=True)
class ForeignChip:
    """A chip tag not of the active chip set in a chip zone: of the registered set ``chip_set``, or of none (None).
    It is not counted."""

    zone: str
    uid: str
    chip_set: str | None


@dataclass(frozen=True, slots=True)
class Showdown:
    """The hand's result: the live seats in the order they show (``order``: empty when one seat won uncontested),
    the seats that won, and, where the chips were read, the pots awarded (controller.showdown), what each seat that
    took chips took (``payouts``) and the stacks after the award (``finishing_stacks``; None: not known).
    ``boards`` and ``runs``: a hand of more than one board. ``hands``: the cards of the seats in ``order`` (secret;
    None: no cards were shown)."""

    order: tuple[int, ...]
    winners: tuple[int, ...]
    pots: tuple[PotAward, ...] = ()
    payouts: tuple[tuple[int, int], ...] = ()
    finishing_stacks: tuple[tuple[int, int], ...] | None = None
    boards: tuple[tuple[str, ...], ...] = ()
    runs: int = 1
    hands: tuple[tuple[int, tuple[str, ...]], ...] | None = None


@dataclass(frozen=True, slots=True)
class HandHistory:
    """The hand written as a PHH hand history without the hole cards (``phh``) and, secret, with them
    (``complete``), with its OHH and PokerStars copies (secret). A variant PHH has no notation for: ``phh`` and
    ``complete`` are None and ``reason`` says why."""

    phh: str | None
    complete: str | None
    ohh: dict[str, Any]
    pokerstars: str
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class FloorQuestion:
    """What a ruling that waits for the floor asks it (controller.floor): about ``seat`` (None: the table), citing
    ``rules``; ``ruling``: what a confirm carries out (None: what the part that queues it says, else the floor
    decides), by the rule ``rule``; ``code``: the ruling's code (None: the event's type)."""

    seat: int | None
    rules: tuple[str, ...]
    ruling: str | None = None
    rule: str | None = None
    code: str | None = None


class MayAskTheFloor:
    """A record whose ruling may wait for the floor: its ``floor_question`` says what it asks (None: nothing; it is
    ruled, or it is a later state of a ruling that waits already)."""

    __slots__ = ()

    @property
    def floor_question(self) -> FloorQuestion | None:
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class BetRuling(MayAskTheFloor):
    """The chip layer or the betting engine ruled on the betting: an input it took otherwise than it came, refused,
    or could not read (``needs_floor``: it waits for the floor). ``chips``, ``withdrawn``: the motion it ruled on;
    ``stands``, ``returned``: what of an unplayable chip plays and what goes back."""

    code: str
    seat: int | None
    message: str
    rules: tuple[str, ...]
    needs_floor: bool
    chips: tuple[int, ...] | None = None
    withdrawn: tuple[int, ...] | None = None
    stands: int | None = None
    returned: int | None = None

    @property
    def floor_question(self) -> FloorQuestion | None:
        return FloorQuestion(self.seat, self.rules, code=self.code) if self.needs_floor else None


@dataclass(frozen=True, slots=True)
class ChipCount(MayAskTheFloor):
    """The chips in a zone differ from what the rules say (the pot, an award, a forced bet)."""

    code: str
    seat: int | None
    expected: int
    seen: int
    rules: tuple[str, ...]

    @property
    def needs_floor(self) -> bool:
        """A seat paid less than the award may dispute it (TDA 20-6); the dealer puts the rest right."""
        return self.code == "award" and self.seen < self.expected

    @property
    def floor_question(self) -> FloorQuestion | None:
        return FloorQuestion(self.seat, self.rules, code=self.code) if self.needs_floor else None


HandOver = (HandEnded, Misdeal)  # the hand is over, or void: what waits on it lapses
