"""Follow a hold'em hand from the cards the antennas see.

Input: zone events (a tag arrived in or left ``seatN.cards``, ``board``, ``burn`` or ``muck``) and the time.
Output: domain events (``hand_started``, ``card_dealt``, ``burn``, ``board_card``, ``fold``, ``hand_ended``,
and ``irregular_card`` / ``unknown_tag`` for what the game does not expect) plus a snapshot of the table.

How the hand is read:
* the first card that reaches a seat while no hand is running starts a hand;
* each seat takes ``hole_cards`` cards; the board takes the flop, turn and river in order; burns are counted;
* a live seat's card reaching the muck is a fold — unless that seat is the last one left, whose cards the dealer
  is simply gathering;
* the hand ends when nothing has been on any antenna for ``clear_after_s`` seconds (the dealer gathered the
  cards), or at once when the next hand's first card arrives on a cleared table.
A card lifted off its zone and put back (a player looking at their cards) changes nothing.
"""

from dataclasses import dataclass, field
from typing import Any, Mapping

from controller.domain import DomainEvent
from hal.events import DeviceEvent, ZoneEvent

STREETS = {1: "flop", 2: "flop", 3: "flop", 4: "turn", 5: "river"}


@dataclass(frozen=True)
class TableSetup:
    table_id: str
    seats: int
    deck: Mapping[str, str]  # tag UID → card name
    hole_cards: int = 2
    clear_after_s: float = 1.0
    decks: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # every registered deck, by id
    deck_id: str = ""  # the id of ``deck``


@dataclass
class _Seat:
    cards: list[str] = field(default_factory=list)
    folded: bool = False


def parse_zone(zone: str) -> tuple[str, int | None]:
    """``seat3.cards`` → ``("seat", 3)``; ``board`` → ``("board", None)``; chip zones → their own kind."""
    if zone.startswith("seat") and zone.endswith(".cards"):
        return "seat", int(zone[4:-6])
    if zone.startswith("seat") and "." in zone:
        return zone.split(".", 1)[1], int(zone[4 : zone.index(".")])
    return zone, None


class TableController:
    def __init__(self, setup: TableSetup):
        self.setup = setup
        self.seq = 0
        self.hand = 0
        self.in_hand = False
        self.now = 0.0
        self._on_table: dict[str, str] = {}  # uid → zone, everything the antennas report now
        self.readers: dict[str, dict[str, Any]] = {}  # reader → link state and faulted antennas
        self.deck_id, self.deck = setup.deck_id, setup.deck
        self._cleared_at: float | None = None
        self._new_hand_state()

    def _new_hand_state(self) -> None:
        self.seats = {n: _Seat() for n in range(1, self.setup.seats + 1)}
        self.board: list[str] = []
        self.burns: list[str] = []
        self.mucked: list[str] = []
        self._owner: dict[str, int] = {}  # hole card → seat

    # ---- inputs -------------------------------------------------------------------------------------

    def handle(self, event: ZoneEvent) -> list[DomainEvent]:
        """Apply one zone event; return the domain events it causes, in order."""
        self.now = event.t
        out: list[DomainEvent] = []
        if event.kind == "left":
            self._on_table.pop(event.uid, None)
            if not self._on_table and self.in_hand:
                self._cleared_at = event.t
            return out

        if self.in_hand and not self._on_table and self._cleared_at is not None:
            self._end_hand(out)  # the next hand's first card landed on a cleared table
        self._on_table[event.uid] = event.zone
        self._cleared_at = None

        card = self.deck.get(event.uid)
        if card is None:
            self._emit(out, "unknown_tag", {"zone": event.zone, "uid": event.uid})
            return out
        kind, seat = parse_zone(event.zone)
        if kind == "seat":
            self._card_to_seat(out, card, seat, event.zone)
        elif kind == "board":
            self._card_to_board(out, card)
        elif kind == "burn":
            self._card_to_burn(out, card)
        elif kind == "muck":
            self._card_to_muck(out, card)
        else:  # a card on a chip zone (bets, pot)
            self._irregular(out, "card_in_chip_zone", event.zone, card)
        return out

    def handle_device(self, event: DeviceEvent) -> list[DomainEvent]:
        """A reader link went up or down, an antenna faulted or recovered: published for the floor and the
        technician, and kept in the snapshot (a table whose reader is down is not seeing its cards)."""
        self.now = event.t
        out: list[DomainEvent] = []
        detail = dict(event.detail)
        reader = self.readers.setdefault(event.reader, {"link": "unknown", "faulted_antennas": []})
        if event.kind in ("reader_up", "reader_down", "reader_incompatible"):
            reader["link"] = event.kind.removeprefix("reader_")
            self._emit(out, "reader_link", {"reader": event.reader, "state": reader["link"], **detail})
        elif event.kind == "reader_reset":
            self._emit(out, "reader_link", {"reader": event.reader, "state": "reset", **detail})
        elif event.kind in ("antenna_fault", "antenna_ok"):
            antenna = detail.get("antenna")
            if (antenna in reader["faulted_antennas"]) == (event.kind == "antenna_fault"):
                return out  # the reader repeats a lasting fault every few seconds: news only when it changes
            faulted = set(reader["faulted_antennas"])
            faulted.add(antenna) if event.kind == "antenna_fault" else faulted.discard(antenna)
            reader["faulted_antennas"] = sorted(faulted)
            self._emit(out, "antenna", {"reader": event.reader, "state": "fault" if event.kind == "antenna_fault"
                                        else "ok", **detail})
        return out

    def handle_command(self, command: dict[str, Any], t: float) -> tuple[list[DomainEvent], str | None]:
        """A validated command from the floor or the dealer console; returns its events, or why it was refused
        in the current state (nothing changes then)."""
        self.now = t
        out: list[DomainEvent] = []
        by = {"by": f"{command['role']}/{command['user']}"}
        name = command["command"]
        if name == "select_deck":
            if self.in_hand:
                return out, "a hand is running: the deck can be changed between hands"
            self.deck_id, self.deck = command["deck"], self.setup.decks[command["deck"]]
            self._emit(out, "deck_selected", {"deck": self.deck_id, **by})
        elif name == "declare":
            if not self.in_hand:
                return out, "no hand is running"
            extra = {"amount": command["amount"]} if "amount" in command else {}
            self._emit(out, "declaration", {"seat": command["seat"], "declaration": command["declaration"],
                                            **extra, **by})
        return out, None

    def tick(self, now: float) -> list[DomainEvent]:
        """Let time pass: ends the hand once the table has stayed clear long enough."""
        self.now = now
        out: list[DomainEvent] = []
        if self.in_hand and self._cleared_at is not None and now - self._cleared_at >= self.setup.clear_after_s:
            self._end_hand(out)
        return out

    # ---- the rules ----------------------------------------------------------------------------------

    def _card_to_seat(self, out: list, card: str, seat: int, zone: str) -> None:
        if not self.in_hand:
            self._start_hand(out)
        owner = self._owner.get(card)
        if owner == seat:
            return  # the player put the card back down after looking at it
        if owner is not None:
            self._irregular(out, "hole_card_moved", zone, card, seat=seat, from_seat=owner)
            return
        if card in self.board or card in self.burns or card in self.mucked:
            self._irregular(out, "played_card_to_seat", zone, card, seat=seat)
            return
        place = self.seats[seat]
        if self.board:
            self._irregular(out, "hole_card_after_board", zone, card, seat=seat)
        elif place.folded:
            self._irregular(out, "card_to_folded_seat", zone, card, seat=seat)
        elif len(place.cards) >= self.setup.hole_cards:
            self._irregular(out, "extra_hole_card", zone, card, seat=seat)
        else:
            place.cards.append(card)
            self._owner[card] = seat
            self._emit(out, "card_dealt", {"seat": seat, "count": len(place.cards)}, {"card": card})

    def _card_to_board(self, out: list, card: str) -> None:
        if card in self.board:
            return  # re-read after being lifted
        if not self.in_hand:
            self._irregular(out, "card_outside_hand", "board", card, public_card=True)
        elif card in self._owner:
            self._irregular(out, "hole_card_on_board", "board", card, seat=self._owner[card])
        elif len(self.board) >= 5:
            self._irregular(out, "extra_board_card", "board", card, public_card=True)
        else:
            if card in self.burns:  # a burn card turned up: everyone sees it now
                self._irregular(out, "burn_card_on_board", "board", card, public_card=True)
            self.board.append(card)
            street = STREETS[len(self.board)]
            self._emit(out, "board_card", {"card": card, "street": street, "position": len(self.board)})

    def _card_to_burn(self, out: list, card: str) -> None:
        if card in self.burns:
            return
        if not self.in_hand:
            self._irregular(out, "card_outside_hand", "burn", card)
        elif card in self._owner:
            self._irregular(out, "hole_card_burned", "burn", card, seat=self._owner[card])
        elif card in self.board:
            self._irregular(out, "board_card_burned", "burn", card, public_card=True)
        else:
            self.burns.append(card)
            self._emit(out, "burn", {"count": len(self.burns)}, {"card": card})

    def _card_to_muck(self, out: list, card: str) -> None:
        if card in self.mucked:
            return
        if not self.in_hand:
            self._irregular(out, "card_outside_hand", "muck", card)
            return
        self.mucked.append(card)
        seat = self._owner.get(card)
        if seat is not None:
            place = self.seats[seat]
            if not place.folded and len(self._live_seats()) > 1:
                place.folded = True
                self._emit(out, "fold", {"seat": seat}, {"cards": list(place.cards)})
        elif card not in self.board and card not in self.burns:
            self._irregular(out, "unseen_card_mucked", "muck", card)

    def _start_hand(self, out: list) -> None:
        self._new_hand_state()
        self.in_hand = True
        self.hand += 1
        self._emit(out, "hand_started", {})

    def _end_hand(self, out: list) -> None:
        live = self._live_seats()
        self._emit(
            out,
            "hand_ended",
            {"board": list(self.board), "live_seats": live, "folded_seats": self._folded_seats()},
            {"hole_cards": {str(s): list(self.seats[s].cards) for s in live}},
        )
        self.in_hand = False
        self._cleared_at = None

    # ---- helpers ------------------------------------------------------------------------------------

    def _live_seats(self) -> list[int]:
        return [n for n, s in self.seats.items() if s.cards and not s.folded]

    def _folded_seats(self) -> list[int]:
        return [n for n, s in self.seats.items() if s.folded]

    def _irregular(self, out: list, code: str, zone: str, card: str, public_card: bool = False, **where: Any) -> None:
        public = {"code": code, "zone": zone, **where}
        if public_card:
            self._emit(out, "irregular_card", {**public, "card": card})
        else:
            self._emit(out, "irregular_card", public, {"card": card})

    def _emit(self, out: list, type_: str, public: dict, secret: dict | None = None) -> None:
        self.seq += 1
        hand = self.hand if self.hand else None
        out.append(DomainEvent(self.seq, type_, self.now, hand, public, secret or {}))

    # ---- the picture --------------------------------------------------------------------------------

    def on_table(self) -> dict[str, str]:
        """Every tag the controller believes lies on the table: uid → zone."""
        return dict(self._on_table)

    def phase(self) -> str:
        if not self.in_hand:
            return "waiting"
        return STREETS.get(len(self.board), "preflop") if self.board else "preflop"

    def snapshot(self, secure: bool) -> dict[str, Any]:
        """The table as it is now; hole and burn cards only when ``secure``."""
        seats = []
        for n, place in self.seats.items():
            entry: dict[str, Any] = {"seat": n, "cards": len(place.cards), "folded": place.folded}
            if secure:
                entry["hole_cards"] = list(place.cards)
            seats.append(entry)
        snap: dict[str, Any] = {
            "table": self.setup.table_id,
            "seq": self.seq,
            "t": round(self.now, 3),
            "hand": self.hand if self.hand else None,
            "phase": self.phase(),
            "seats": seats,
            "board": list(self.board),
            "burns": len(self.burns),
            "mucked": len(self.mucked),
            "readers": {name: dict(state) for name, state in self.readers.items()},
            "deck": self.deck_id,
        }
        if secure:
            snap["burn_cards"] = list(self.burns)
        return snap
