"""A simulated dealer and players: a stream of physical moves of the cards on the table.

The dealer moves the button, shuffles, deals the hole cards one round at a time starting left of the
button, burns and turns the flop, turn and river, and gathers the cards at the end. Players fold by pushing
their cards into the muck. Everything is drawn from one seeded random generator, so a seed replays a run.

The dealer can also err, at rates given in :class:`DealerSettings` (none by default): expose a card, deal extra
cards, pitch a card to the wrong seat, turn board cards before the betting is over, deal a card of another deck or
a second card of a rank and suit already dealt. At most one error per deal; each is written to ``errors`` (the
hand — every deal is a hand for the table, a deal again after a misdeal too —, the kind and the seat) so a test can
check that the table reported it. After an error the dealer goes on as the house rules say: it gives the burn
card an extra card, moves a card to the right seat, returns premature cards and reshuffles them, or — when the
error makes the hand void (a misdeal, a foreign or duplicate card once the floor confirmed) — gathers the cards and
deals again with the button where it was. The errors are drawn from a generator of their own, so a run without
errors is the same as ever for a seed.
"""

import random
from dataclasses import dataclass
from typing import Callable, Iterator

from controller.cards import FULL_DECK
from controller.rotation import STUD_GAMES, Rotation, RotationSetup
from controller.rules import EXPOSED_BURN_AFTER_DEAL, EXPOSED_REPLACE_NOW
from sim.field import TableField

ERROR_KINDS = ("exposed_card", "extra_card", "wrong_seat", "premature_board", "foreign_card", "duplicate_card")
FLOOR_S = 3.0  # the floor comes to the table and rules before the dealer gathers the cards of a misdeal


@dataclass(frozen=True)
class Move:
    delay_s: float  # how long after the previous move this one happens
    describe: str
    apply: Callable[[], None]
    # A dealer-console input made with this move (``{"command": "exposed_card", "seat": 3}``), for a table that
    # learns of exposed cards from the console. Whoever drives the table sends it; SimulatedTable does not.
    command: dict | None = None


@dataclass(frozen=True)
class DealerSettings:
    players: list[int]  # occupied seats
    hole_cards: int = 2
    pace_s: float = 1.0  # the time a typical action takes
    fold_chance: float = 0.3  # per player per street
    # Dealing errors: the chance per deal of each (at most one error per deal).
    exposed_rate: float = 0.0  # a card of the deal exposed (any position; the first or second is a misdeal)
    extra_card_rate: float = 0.0  # an extra card after the deal (a quarter of the time two: a misdeal)
    wrong_seat_rate: float = 0.0  # a card to the wrong seat (not the first); moved on at once half of the time
    premature_board_rate: float = 0.0  # the next street turned while players are still to act
    foreign_card_rate: float = 0.0  # a card of the spare deck dealt to a seat (needs spare_deck)
    duplicate_card_rate: float = 0.0  # a spare-deck card of a rank and suit already dealt (needs spare_deck)
    spare_deck: dict[str, str] | None = None  # tag → card of another registered deck
    exposed_by: str = "zone"  # "zone": exposed cards go to the ``exposed`` zone; "console": an exposed_card command
    exposed_procedure: str = EXPOSED_BURN_AFTER_DEAL  # the house's: controller.rules.EXPOSED_*
    # How long the table takes to see a hand over once the cards are gathered (the card zones' absence time and
    # the clear table's wait: rfid_table.devtools.simulate.table_hand_over_s). A brisk dealer (a small pace_s)
    # still shuffles at least that long: cards dealt sooner would be read as the last hand's.
    hand_over_s: float = 0.0
    # A stud game: two down cards and one up, then one up card each street to the sixth, the last down; no board but
    # the community card when the deck runs short; dealt without a button, from the first seat on. Its errors: an
    # exposed card is a card of third street dealt on the wrong face, a wrong seat a later street's card moved on.
    stud: bool = False
    games: RotationSetup | None = None  # a mixed game's rotation by hands: each hand dealt as its game

    def error_rates(self) -> dict[str, float]:
        return {"exposed_card": self.exposed_rate, "extra_card": self.extra_card_rate,
                "wrong_seat": self.wrong_seat_rate, "premature_board": self.premature_board_rate,
                "foreign_card": self.foreign_card_rate, "duplicate_card": self.duplicate_card_rate}


@dataclass(frozen=True)
class InjectedError:
    hand: int  # the table's hand number (every deal counts, a deal again after a misdeal too)
    kind: str  # one of ERROR_KINDS
    seat: int | None  # the seat concerned (None: a board error)
    detail: str = ""  # "position 2", "fixed", "dealt over", "flop", "second extra card", ...
    void: bool = False  # the error made the hand void: the cards were dealt again


class SimDealer:
    def __init__(self, field: TableField, deck: dict[str, str], settings: DealerSettings, seed: int | None = None):
        self.field = field
        self.uid_of = {card: uid for uid, card in deck.items()}
        self.spare_uid_of = {card: uid for uid, card in (settings.spare_deck or {}).items()}
        self.settings = settings
        self.rng = random.Random(seed)
        self.error_rng = random.Random(None if seed is None else f"dealing-errors/{seed}")
        self.button = settings.players[-1]  # moves to the first player before the first hand
        self.rotation = Rotation(settings.games) if settings.games is not None else None
        self.hole_cards = settings.hole_cards  # the running hand's game's
        self.hands_dealt = 0
        self.errors: list[InjectedError] = []
        self.betting_open = False  # players are still to act in the current betting round
        self._opening = False  # the round opens with the next move (once the table has seen the last card)
        if settings.exposed_by not in ("zone", "console"):
            raise ValueError(f"exposed_by must be zone or console, not {settings.exposed_by!r}")
        if settings.exposed_procedure not in (EXPOSED_BURN_AFTER_DEAL, EXPOSED_REPLACE_NOW):
            raise ValueError(f"unknown exposed_procedure {settings.exposed_procedure!r}")
        if (settings.foreign_card_rate or settings.duplicate_card_rate) and not settings.spare_deck:
            raise ValueError("foreign and duplicate cards need a spare_deck")

    def _after(self, seat: int) -> list[int]:
        """The players in dealing order, starting left of ``seat``."""
        players = sorted(self.settings.players)
        later = [p for p in players if p > seat]
        return later + [p for p in players if p <= seat]

    def _draw_error(self) -> str | None:
        rates = self.settings.error_rates()
        if not any(rates.values()):
            return None  # no draw at all: a run without errors is what it always was
        for kind in ERROR_KINDS:
            if self.error_rng.random() < rates[kind]:
                return kind
        return None

    def _record(self, kind: str, seat: int | None, detail: str = "", void: bool = False) -> None:
        self.errors.append(InjectedError(self.hands_dealt, kind, seat, detail, void))

    def hand(self) -> Iterator[Move]:
        """The moves of one hand, from the deal to the gathered table (deals again after a misdeal)."""
        stud, self.hole_cards = self.settings.stud, self.settings.hole_cards
        if self.rotation is not None:  # the game the table deals this hand (a misdeal's deal again is the same)
            game = self.rotation.hand_started()
            stud, self.hole_cards = game.name in STUD_GAMES, game.hole_cards
        if not stud:  # a stud hand is dealt from the same seat every hand (TDA 4: the button frozen)
            self.button = self._after(self.button)[0]
        while True:
            self.hands_dealt += 1
            void: list[bool] = []
            for move in (self._deal_stud(void) if stud else self._deal(void)):
                yield Move(move.delay_s, move.describe, self._opens_first(move.apply), move.command)
            if not void:
                if self.rotation is not None:
                    self.rotation.hand_ended(misdeal=False)
                return

    def _opens_first(self, apply: Callable[[], None]) -> Callable[[], None]:
        def move() -> None:
            if self._opening:
                self.betting_open, self._opening = True, False
            apply()
        return move

    def _deal(self, void: list[bool]) -> Iterator[Move]:
        s = self.settings
        pace = s.pace_s
        deck = list(FULL_DECK)
        self.rng.shuffle(deck)
        order = self._after(self.button)
        hole: dict[int, list[str]] = {seat: [] for seat in order}
        live = list(order)
        error = self._draw_error()
        plan = [seat for _round in range(self.hole_cards) for seat in order]
        at = self.error_rng.randrange(len(plan)) if error in ("exposed_card",) else (
            self.error_rng.randrange(1, len(plan)) if error in ("wrong_seat", "foreign_card", "duplicate_card")
            else None)

        def put(card: str, zone: str) -> Callable[[], None]:
            return lambda: self.field.place(self.uid_of[card], zone)

        def open_betting(move: Callable[[], None], is_open: bool) -> Callable[[], None]:
            """The betting round opens after the last card of a street (with the next move: the table reads the
            card first) and is over before the next street's burn."""
            def apply() -> None:
                if is_open:
                    move()
                    self._opening = True
                else:
                    self.betting_open = self._opening = False
                    move()
            return apply

        def misdeal(why: str) -> Iterator[Move]:
            void.append(True)

            def gather() -> None:
                self.field.clear()
                self.betting_open = self._opening = False
            yield Move(FLOOR_S, f"misdeal ({why}): the floor rules", lambda: None)
            yield Move(pace, "the dealer gathers the cards", gather)
            yield Move(max(pace * 2, s.hand_over_s), "shuffle", lambda: None)

        burn_card: str | None = None  # a card that is to be the flop's burn (an exposed or extra card)
        index = 0
        while index < len(plan):
            seat = plan[index]
            last = index == len(plan) - 1
            card = deck.pop()
            if index == at and error == "exposed_card":
                at = None
                self._record("exposed_card", seat, f"position {index + 1}", void=index <= 1)
                if s.exposed_by == "zone":
                    yield Move(pace * 0.25, f"deal {card} to seat {seat}: exposed", put(card, "exposed"))
                else:
                    hole[seat].append(card)
                    yield Move(pace * 0.25, f"deal {card} to seat {seat}", put(card, f"seat{seat}.cards"))
                    yield Move(pace * 0.25, f"seat {seat}'s card was exposed", lambda: None,
                               {"command": "exposed_card", "seat": seat})
                    hole[seat].remove(card)
                    uid = self.uid_of[card]
                    yield Move(pace * 0.1, "the dealer takes the exposed card", lambda u=uid: self.field.remove(u))
                if index <= 1:
                    yield from misdeal("first or second card exposed")
                    return
                if s.exposed_procedure == EXPOSED_REPLACE_NOW:
                    continue  # the same seat gets the next card
                burn_card = card
                plan.append(seat)  # the replacement comes after the deal
                index += 1
                continue
            if index == at and error == "wrong_seat":
                wrong = order[(order.index(seat) + (1 if self.error_rng.random() < 0.5 else -1)) % len(order)]
                fixed = self.error_rng.random() < 0.5
                self._record("wrong_seat", seat, ("fixed" if fixed else "dealt over") + f", to seat {wrong}",
                             void=not fixed)
                yield Move(pace * 0.25, f"deal {card} to seat {wrong} (due to seat {seat})",
                           put(card, f"seat{wrong}.cards"))
                if fixed:
                    hole[seat].append(card)
                    yield Move(pace * 0.25, f"move {card} on to seat {seat}", put(card, f"seat{seat}.cards"))
                    index += 1
                    continue
                if last:  # dealt over: the dealer burns as if the deal were complete
                    yield Move(pace * 0.5, "burn before the flop", put(deck.pop(), "burn"))
                else:
                    nxt = plan[index + 1]
                    yield Move(pace * 0.25, f"deal {deck[-1]} to seat {nxt}", put(deck.pop(), f"seat{nxt}.cards"))
                yield from misdeal("card dealt out of sequence")
                return
            if index == at and error in ("foreign_card", "duplicate_card"):
                dealt = [c for cards in hole.values() for c in cards]
                if error == "foreign_card":
                    choices = sorted(c for c in self.spare_uid_of if c not in dealt)
                else:
                    choices = sorted(c for c in self.spare_uid_of if c in dealt)
                if choices:
                    stray = self.error_rng.choice(choices)
                    self._record(error, seat, stray, void=True)
                    uid = self.spare_uid_of[stray]
                    yield Move(pace * 0.25, f"deal {stray} of another deck to seat {seat}",
                               lambda u=uid, z=f"seat{seat}.cards": self.field.place(u, z))
                    yield from misdeal(f"{error.replace('_', ' ')}: the floor voids the hand")
                    return
            hole[seat].append(card)
            move = put(card, f"seat{seat}.cards")
            yield Move(pace * 0.25, f"deal {card} to seat {seat}", open_betting(move, True) if last else move)
            index += 1

        if error == "extra_card":
            extras = 2 if self.error_rng.random() < 0.25 else 1
            for n in range(extras):
                seat = order[n % len(order)]
                card = deck.pop()
                self._record("extra_card", seat, "second extra card" if n else "extra card", void=extras > 1)
                yield Move(pace * 0.25, f"deal an extra card {card} to seat {seat}", put(card, f"seat{seat}.cards"))
            if extras > 1:
                yield from misdeal("two extra cards")
                return
            burn_card = card
            yield Move(pace * 0.25, f"the extra card {card} becomes the burn card", put(card, "burn"))

        premature_street = None
        if error == "premature_board":
            premature_street = self.error_rng.choice(("preflop", "flop", "turn"))
        streets = (("preflop", 0), ("flop", 3), ("turn", 1), ("river", 1))
        burned_early = False  # the premature cards' burn stays: no second burn for that street
        for number, (street, count) in enumerate(streets):
            if count:
                if burn_card is not None and street == "flop":
                    if self.field.zone_of(self.uid_of[burn_card]) != "burn":
                        yield Move(pace * 0.5, f"{burn_card} is the burn card before the flop",
                                   open_betting(put(burn_card, "burn"), False))
                    else:
                        yield Move(pace * 0.5, "the burn card lies on the burn zone",
                                   open_betting(lambda: None, False))
                elif burned_early:
                    yield Move(pace * 0.5, f"the {street}'s burn card is already out",
                               open_betting(lambda: None, False))
                else:
                    yield Move(pace * 0.5, f"burn before the {street}", open_betting(put(deck.pop(), "burn"), False))
                burned_early = False
                for i in range(count):
                    card = deck.pop()
                    move = put(card, "board")
                    yield Move(pace * 0.3, f"{street} card", open_betting(move, True) if i == count - 1 else move)
            if street == premature_street and len(live) > 1:
                nxt, turned = streets[number + 1]
                shown = [deck.pop() for _ in range(self.error_rng.randint(1, turned))]
                self._record("premature_board", None, nxt)
                yield Move(pace * 0.5, f"burn too early for the {nxt}", put(deck.pop(), "burn"))
                burned_early = True
                for card in shown:
                    yield Move(pace * 0.3, f"{nxt} card turned too early", put(card, "board"))

                def take_back(cards: list[str] = shown) -> None:
                    for c in cards:
                        self.field.remove(self.uid_of[c])
                yield Move(pace, f"the premature {nxt} goes back into the deck", take_back)
                deck.extend(shown)
                self.rng.shuffle(deck)
            for seat in list(live):
                if len(live) > 1 and self.rng.random() < s.fold_chance:
                    live.remove(seat)
                    for card in hole[seat]:
                        yield Move(pace, f"seat {seat} folds", put(card, "muck"))
            if len(live) == 1:
                break

        def gathered() -> None:
            self.field.clear()
            self.betting_open = self._opening = False
        yield Move(pace * 2, "showdown" if len(live) > 1 else f"seat {live[0]} wins uncontested", lambda: None)
        yield Move(pace, "the dealer gathers the cards", gathered)
        yield Move(max(pace * 2, s.hand_over_s), "shuffle", lambda: None)

    def _deal_stud(self, void: list[bool]) -> Iterator[Move]:
        """A stud hand: third street (two down, one up) a round at a time, a burn before each later street, the up
        cards on ``seatN.up``, seventh street down on ``seatN.cards``, folds into the muck after each street's betting;
        on seventh street, with fewer cards left than live players, one community card on the board. An error: a
        card of third street on the wrong face (a down card up: the floor confirms the misdeal, the cards are dealt
        again; the door card down: the dealer turns it up), or a later street's card to the wrong seat, moved on."""
        pace = self.settings.pace_s
        deck = list(FULL_DECK)
        self.rng.shuffle(deck)
        order = sorted(self.settings.players)  # from the dealer's left, whatever the button (TDA 4)
        hole: dict[int, list[str]] = {seat: [] for seat in order}
        live = list(order)
        error = self._draw_error()
        wrong_face = self.error_rng.randrange(3 * len(order)) if error == "exposed_card" else None
        wrong_seat = self.error_rng.choice(("fourth", "fifth", "sixth")) if error == "wrong_seat" else None

        def put(card: str, zone: str) -> Callable[[], None]:
            return lambda: self.field.place(self.uid_of[card], zone)

        def deal(seat: int, up: bool) -> Move:
            card = deck.pop()
            hole[seat].append(card)
            return Move(pace * 0.3, f"{'up' if up else 'down'} card to seat {seat}",
                        put(card, f"seat{seat}.{'up' if up else 'cards'}"))

        for index in range(3 * len(order)):
            seat, up = order[index % len(order)], index >= 2 * len(order)
            if index != wrong_face:
                yield deal(seat, up)
                continue
            move = deal(seat, not up)
            yield Move(move.delay_s, f"{move.describe}: dealt on the wrong face", move.apply)
            if not up:  # a down card face up: a misdeal (PP Misdeals 1a), once the floor confirms it
                self._record("exposed_card", seat, "stud: a down card dealt up", void=True)
                void.append(True)
                yield Move(FLOOR_S, "misdeal: the floor rules", lambda: None)
                yield Move(pace, "the dealer gathers the cards", self.field.clear)
                yield Move(max(pace * 2, self.settings.hand_over_s), "shuffle", lambda: None)
                return
            self._record("exposed_card", seat, "stud: the door card dealt down")
            yield Move(pace * 0.3, f"the dealer turns seat {seat}'s door card up", put(hole[seat][-1], f"seat{seat}.up"))
        for street in ("fourth", "fifth", "sixth", "seventh"):
            for seat in list(live):
                if len(live) > 1 and self.rng.random() < self.settings.fold_chance:
                    live.remove(seat)
                    for card in hole[seat]:
                        yield Move(pace * 0.3, f"seat {seat} folds", put(card, "muck"))
            if len(live) == 1:
                break
            if street == "seventh" and len(deck) - 1 < len(live):  # no card for each: no burn, one for all
                yield Move(pace * 0.5, "the deck runs short: a community card", put(deck.pop(), "board"))
                continue
            yield Move(pace * 0.5, f"burn before {street} street", put(deck.pop(), "burn"))
            for seat in live:
                if street == wrong_seat and seat == live[-1] and len(live) > 1:  # pitched to the first seat, moved on
                    card = deck.pop()
                    hole[seat].append(card)
                    self._record("wrong_seat", seat, f"stud: {street} street's card at seat {live[0]}, moved on")
                    yield Move(pace * 0.3, f"{street} card for seat {seat} lands at seat {live[0]}",
                               put(card, f"seat{live[0]}.up"))
                    yield Move(pace * 0.5, f"moved on to seat {seat}", put(card, f"seat{seat}.up"))
                    continue
                yield deal(seat, street != "seventh")
        yield Move(pace * 2, "showdown" if len(live) > 1 else f"seat {live[0]} wins uncontested", lambda: None)
        yield Move(pace, "the dealer gathers the cards", self.field.clear)
        yield Move(max(pace * 2, self.settings.hand_over_s), "shuffle", lambda: None)

    def hands(self, count: int | None) -> Iterator[Move]:
        """``count`` hands one after another (forever with None)."""
        while count is None or self.hands_dealt < count:
            yield from self.hand()
