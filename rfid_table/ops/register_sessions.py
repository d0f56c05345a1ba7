"""The registration sessions: what the technician does on the registration antenna, tag by tag.

:class:`DeckSession` registers a deck card by card, in the announced order; :class:`StackSession` a deck from its
manufacturer's list, placed as a stack or in handfuls; :class:`ChipSession` chips, every new tag at the
denomination in force. Each is fed the antenna's inventory cycles (``rfid_table.ops.register_reader``), takes the
technician's typed lines, and says what it did in lines for the technician. Tags registered already
(:func:`known_tags`) are refused.

Presence on the registration antenna is debounced with the table's own settings (``[hal.cards]``,
``[hal.chips]``): a tag is on the antenna after that many reads in a row and gone after that long without
one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

from controller.cards import FULL_DECK
from rfid_table.config.registry import ChipRegistry

SETTLE_CYCLES = 2  # cycles after a new tag counts as present before it is taken: another one may join it
STALL_S = 5.0  # a stack registration that stops short this long names the cards still unread
DECK_SIZE = len(FULL_DECK)


# ---- what is on the registration antenna --------------------------------------------------------------------


@dataclass
class _Seen:
    last_cycle: int
    last_t: float
    hits: int = 1  # reads in consecutive cycles
    present: bool = False


class AntennaWatch:
    """The tags on one antenna, from raw inventory cycles.

    A tag *arrives* after ``present_after_cycles`` reads in a row and *leaves* after ``absent_after_s``
    without a read (the table's debouncing). ``seen`` holds every tag read lately, arrived or not yet.
    """

    def __init__(self, present_after_cycles: int, absent_after_s: float):
        self.present_after_cycles = present_after_cycles
        self.absent_after_s = absent_after_s
        self.seen: dict[str, _Seen] = {}

    def feed(self, cycle: int, t: float, uids: Iterable[str]) -> tuple[list[str], list[str]]:
        """One inventory cycle's reads on the antenna → (tags arrived, tags left)."""
        read = set(uids)
        arrived: list[str] = []
        left: list[str] = []
        for uid in sorted(read):
            state = self.seen.get(uid)
            if state is None:
                state = self.seen[uid] = _Seen(cycle, t)
            else:
                state.hits = state.hits + 1 if state.last_cycle == cycle - 1 else 1
                state.last_cycle, state.last_t = cycle, t
            if not state.present and state.hits >= self.present_after_cycles:
                state.present = True
                arrived.append(uid)
        for uid, state in list(self.seen.items()):
            if uid not in read and t - state.last_t >= self.absent_after_s:
                del self.seen[uid]
                if state.present:
                    left.append(uid)
        return arrived, left

    def present(self, uid: str) -> bool:
        state = self.seen.get(uid)
        return state is not None and state.present


# ---- tags registered already ---------------------------------------------------------------------------------

Known = dict[str, tuple[str, str]]  # tag → (what it is, its group): ("card Kd of deck 'A'", "cards of deck 'A'")
REFUSED_ONE_BY_ONE = 3  # more tags refused at once are summed up in one line


def known_tags(decks: dict[str, dict[str, str]], registry: ChipRegistry | None = None) -> Known:
    """The tags that may not be registered again: the configuration's cards and the registry's chips."""
    known: Known = {uid.upper(): (f"card {card} of deck {deck_id!r}", f"cards of deck {deck_id!r}")
                    for deck_id, cards in decks.items() for uid, card in cards.items()}
    for set_id, chips in (registry.sets if registry is not None else {}).items():
        for uid, value in chips.items():
            known.setdefault(uid.upper(), (f"a {value} chip of set {set_id!r}", f"chips of set {set_id!r}"))
    return known


def refuse(uids: list[str], known: Known, say: Callable[[str], None], hint: str = "") -> None:
    """Tell the technician that these tags, just put on the antenna, are registered already."""
    hint = f" {hint}" if hint else ""
    if len(uids) <= REFUSED_ONE_BY_ONE:
        for uid in uids:
            say(f"     !  refused: tag {uid} is registered already, as {known[uid][0]}: take it off.{hint}")
        return
    groups: dict[str, int] = {}
    for uid in uids:
        groups[known[uid][1]] = groups.get(known[uid][1], 0) + 1
    say(f"     !  refused: {len(uids)} tags registered already ("
        + ", ".join(f"{count} {group}" for group, count in groups.items()) + f"): take them off.{hint}")


# ---- the deck ----------------------------------------------------------------------------------------------


class DeckSession:
    """Registering one deck: new tags become the announced cards, one at a time.

    ``known``: tags registered elsewhere (:func:`known_tags`); they are refused. ``say`` prints a line for the
    technician.
    """

    def __init__(self, deck_id: str, known: Known, watch: AntennaWatch, say: Callable[[str], None]):
        self.deck_id = deck_id
        self.known = known
        self.watch = watch
        self.say = say
        self.uid_of: dict[str, str] = {}  # card → tag, in the order registered
        self.card_of: dict[str, str] = {}  # tag → card
        self.ignored: set[str] = set()  # not to be taken until they leave the antenna (a stack, an undone card)
        self.stack: set[str] = set()  # the refused stack's tags still on the antenna
        self._batch: set[str] = set()  # new tags read since _batch_start
        self._batch_start: int | None = None

    @property
    def done(self) -> bool:
        return len(self.uid_of) == DECK_SIZE

    @property
    def expected(self) -> str | None:
        """The card to place next."""
        return FULL_DECK[len(self.uid_of)] if not self.done else None

    def start(self) -> None:
        self.say(f"{0:2d}/{DECK_SIZE}  place {self.expected}")

    def _new(self, uid: str) -> bool:
        return uid not in self.card_of and uid not in self.known and uid not in self.ignored

    def feed(self, cycle: int, t: float, uids: Iterable[str]) -> None:
        uids = set(uids)
        arrived, _left = self.watch.feed(cycle, t, uids)
        # Gone from the antenna, whether they had counted as arrived or not (a stack read in turns may never
        # have given a tag the reads in a row it takes).
        self.ignored &= self.watch.seen.keys()
        if self.stack:
            self.stack &= self.watch.seen.keys()
            if not self.stack:
                self.say(f"        the refused tags are off the antenna: place {self.expected}")
        back = [uid for uid in arrived if uid in self.card_of]  # taken off and put back
        if len(back) > REFUSED_ONE_BY_ONE:
            self.say(f"     !  {len(back)} cards of this deck, registered already, are back on the antenna: leave "
                     f"them there, and place {self.expected}")
        for uid in back if len(back) <= REFUSED_ONE_BY_ONE else ():
            self.say(f"     !  tag {uid} is {self.card_of[uid]} of this deck already: leave it there, and "
                     f"place {self.expected}")
        refuse([uid for uid in arrived if uid in self.known], self.known, self.say, f"Place {self.expected}")
        new = {uid for uid in uids if self._new(uid)}
        if self.stack:
            # A stack is read in turns when it is larger than what the antenna reads per cycle: whatever new
            # shows up before the whole stack has gone may belong to it.
            for uid in sorted(new):
                self.stack.add(uid)
                self.ignored.add(uid)
                self.say(f"     !  tag {uid} is one more of the refused stack ({len(self.stack)} tags on the "
                         "antenna): take them all off")
            return
        if new and self._batch_start is None:
            self._batch_start = cycle
        self._batch |= new
        self._batch = {uid for uid in self._batch if uid in self.watch.seen}  # a stray read that went away
        if not self._batch:
            self._batch_start = None
            return
        if cycle - self._batch_start < self.watch.present_after_cycles - 1 + SETTLE_CYCLES:
            return  # give the others of a stack time to be read
        if len(self._batch) > 1:
            self.stack, self.ignored = set(self._batch), self.ignored | self._batch
            self.say(f"     !  refused: {len(self._batch)} new tags at once. Cards are registered one at a time, "
                     f"in order: take them all off the antenna, then place {self.expected} alone")
            self._batch, self._batch_start = set(), None
            return
        (uid,) = self._batch
        if self.watch.present(uid):
            self._batch, self._batch_start = set(), None
            self._take(uid)

    def _take(self, uid: str) -> None:
        card = self.expected
        self.uid_of[card] = uid
        self.card_of[uid] = card
        following = self.expected
        self.say(f"{len(self.uid_of):2d}/{DECK_SIZE}  {card} = {uid}   "
                 + (f"place {following}" if following else "the deck is complete"))

    def command(self, line: str) -> None:
        word = line.strip().lower()
        if not word:
            return
        if word in ("u", "undo"):
            if not self.uid_of:
                self.say("        nothing to undo")
                return
            card, uid = self.uid_of.popitem()
            del self.card_of[uid]
            if uid in self.watch.seen:
                self.ignored.add(uid)  # it lies on the antenna: not to be taken again until it has left
            self.say(f"{len(self.uid_of):2d}/{DECK_SIZE}  undone: {card} (tag {uid}); take that card off the "
                     f"antenna, then place {card}")
            return
        self.say(f"        '{line.strip()}'? Type 'undo' and Enter to take back the last card; Ctrl-C aborts")


class StackSession:
    """Registering a deck from its manufacturer's list (``--from-file``): the list says which tag is which card,
    so the deck may be placed as a stack, or in handfuls, in any order. Every listed tag read on the antenna counts
    (a big stack is read in turns, a few tags per cycle, so one read is enough); the deck is complete when all 52
    were read — the deck in hand is the deck on the list, every tag alive.

    A tag not on the list, or registered already, is pointed out once. When the count stops short for
    ``STALL_S``, the cards still unread are named: a card with a dead tag, or one the stack hides from the antenna.
    """

    def __init__(self, deck_id: str, listed: dict[str, str], list_name: str, known: Known, watch: AntennaWatch,
                 say: Callable[[str], None]):
        self.deck_id = deck_id
        self.listed = listed  # tag → card
        self.list_name = list_name
        self.known = known
        self.watch = watch
        self.say = say
        self.read: set[str] = set()
        self._pointed_out: set[str] = set()
        self._progress_t: float | None = None  # when the count last grew (or the first read)
        self._stall_said = False

    @property
    def done(self) -> bool:
        return len(self.read) == DECK_SIZE

    @property
    def uid_of(self) -> dict[str, str]:
        """card → tag, in the deck's order (what is written)."""
        by_card = {card: uid for uid, card in self.listed.items()}
        return {card: by_card[card] for card in FULL_DECK}

    def start(self) -> None:
        self.say(f"{0:2d}/{DECK_SIZE}  place the deck on the antenna (a stack, or a handful at a time)")

    def feed(self, cycle: int, t: float, uids: Iterable[str]) -> None:
        uids = set(uids)
        self.watch.feed(cycle, t, uids)
        new = sorted((uid for uid in uids if uid in self.listed and uid not in self.read),
                     key=lambda uid: FULL_DECK.index(self.listed[uid]))
        strangers = sorted(uid for uid in uids - self.listed.keys() if uid not in self._pointed_out)
        self._pointed_out.update(strangers)
        refuse([uid for uid in strangers if uid in self.known], self.known, self.say)
        for uid in (uid for uid in strangers if uid not in self.known):
            self.say(f"     !  tag {uid} is not on {self.list_name}: a card of another deck? Take it off")
        if new:
            self.read.update(new)
            self._progress_t, self._stall_said = t, False
            self.say(f"{len(self.read):2d}/{DECK_SIZE}  read " + " ".join(self.listed[uid] for uid in new)
                     + ("   the deck is complete" if self.done else ""))
        elif self._progress_t is None and uids:
            self._progress_t = t
        if (not self.done and self._progress_t is not None and not self._stall_said
                and t - self._progress_t >= STALL_S):
            self._stall_said = True
            unread = [card for card in FULL_DECK if card not in {self.listed[u] for u in self.read}]
            shown = " ".join(unread[:12]) + (" …" if len(unread) > 12 else "")
            self.say(f"     !  still unread ({len(unread)}): {shown} — spread the stack or place those cards alone; "
                     "a card never read has a dead tag")

    def command(self, line: str) -> None:
        if line.strip():
            self.say(f"        '{line.strip()}'? The list says which tag is which card: there is nothing to undo. "
                     "Ctrl-C aborts")


# ---- the chips ---------------------------------------------------------------------------------------------


class ChipSession:
    """Registering chips: every new tag read is registered with the batch's denomination.

    ``known``: tags that are refused (:func:`known_tags`). ``count``: finish after this many new chips
    (None: when the technician types ``done``).
    """

    def __init__(self, set_id: str, denomination: int, known: Known, watch: AntennaWatch,
                 say: Callable[[str], None], count: int | None = None):
        self.set_id = set_id
        self.denomination = denomination
        self.known = known
        self.watch = watch
        self.say = say
        self.count = count
        self.new: dict[str, int] = {}  # tag → denomination, in the order registered
        self.finished = False

    @property
    def done(self) -> bool:
        return self.finished or (self.count is not None and len(self.new) >= self.count)

    def start(self) -> None:
        self.say(f"place {self.denomination}-chips" + (f": {self.count} to register" if self.count else ""))

    def totals(self) -> dict[int, int]:
        counts: dict[int, int] = {}
        for value in self.new.values():
            counts[value] = counts.get(value, 0) + 1
        return dict(sorted(counts.items()))

    def feed(self, cycle: int, t: float, uids: Iterable[str]) -> None:
        arrived, _left = self.watch.feed(cycle, t, uids)
        refuse([uid for uid in arrived if uid in self.known and uid not in self.new], self.known, self.say)
        for uid in arrived:
            if self.done:
                return
            if uid in self.new or uid in self.known:
                continue  # taken off and put back, or refused
            self.new[uid] = self.denomination
            progress = f"{len(self.new)}/{self.count}" if self.count else f"{len(self.new)}"
            summary = " | ".join(f"{value:,} × {n} = {value * n:,}" for value, n in self.totals().items())
            total = sum(self.new.values())
            self.say(f"{progress:>7}  {uid} = {self.denomination:<6} {summary}"
                     + (f" | total {total:,}" if len(self.totals()) > 1 else ""))

    def command(self, line: str) -> None:
        word = line.strip().lower()
        if not word:
            return
        if word in ("done", "d", "w", "write"):
            self.finished = True
            return
        try:
            value = int(word.replace("_", "").replace(",", ""))
        except ValueError:
            value = 0
        if value > 0:
            self.denomination = value
            self.say(f"        now registering {value}-chips")
            return
        self.say(f"        '{line.strip()}'? Type a denomination and Enter to switch to it, 'done' and Enter to "
                 "write the registry; Ctrl-C aborts")
