"""A simulated dealer and players: a stream of physical moves of the cards on the table.

The dealer moves the button, shuffles, deals the hole cards one round at a time starting left of the
button, burns and turns the flop, turn and river, and gathers the cards at the end. Players fold by pushing
their cards into the muck. Everything is drawn from one seeded random generator, so a seed replays a run.
"""

import random
from dataclasses import dataclass
from typing import Callable, Iterator

from controller.cards import FULL_DECK
from sim.field import TableField


@dataclass(frozen=True)
class Move:
    delay_s: float  # how long after the previous move this one happens
    describe: str
    apply: Callable[[], None]


@dataclass(frozen=True)
class DealerSettings:
    players: list[int]  # occupied seats
    hole_cards: int = 2
    pace_s: float = 1.0  # the time a typical action takes
    fold_chance: float = 0.3  # per player per street


class SimDealer:
    def __init__(self, field: TableField, deck: dict[str, str], settings: DealerSettings, seed: int | None = None):
        self.field = field
        self.uid_of = {card: uid for uid, card in deck.items()}
        self.settings = settings
        self.rng = random.Random(seed)
        self.button = settings.players[-1]  # moves to the first player before the first hand
        self.hands_dealt = 0

    def _after(self, seat: int) -> list[int]:
        """The players in dealing order, starting left of ``seat``."""
        players = sorted(self.settings.players)
        later = [p for p in players if p > seat]
        return later + [p for p in players if p <= seat]

    def hand(self) -> Iterator[Move]:
        """The moves of one hand, from the deal to the gathered table."""
        s = self.settings
        pace = s.pace_s
        self.button = self._after(self.button)[0]
        self.hands_dealt += 1
        deck = list(FULL_DECK)
        self.rng.shuffle(deck)
        order = self._after(self.button)
        hole: dict[int, list[str]] = {seat: [] for seat in order}
        live = list(order)

        def put(card: str, zone: str) -> Callable[[], None]:
            return lambda: self.field.place(self.uid_of[card], zone)

        for _round in range(s.hole_cards):
            for seat in order:
                card = deck.pop()
                hole[seat].append(card)
                yield Move(pace * 0.25, f"deal {card} to seat {seat}", put(card, f"seat{seat}.cards"))

        for street, count in (("preflop", 0), ("flop", 3), ("turn", 1), ("river", 1)):
            if count:
                yield Move(pace * 0.5, f"burn before the {street}", put(deck.pop(), "burn"))
                for _ in range(count):
                    yield Move(pace * 0.3, f"{street} card", put(deck.pop(), "board"))
            for seat in list(live):
                if len(live) > 1 and self.rng.random() < s.fold_chance:
                    live.remove(seat)
                    for card in hole[seat]:
                        yield Move(pace, f"seat {seat} folds", put(card, "muck"))
            if len(live) == 1:
                break
        yield Move(pace * 2, "showdown" if len(live) > 1 else f"seat {live[0]} wins uncontested", lambda: None)
        yield Move(pace, "the dealer gathers the cards", self.field.clear)
        yield Move(pace * 2, "shuffle", lambda: None)

    def hands(self, count: int | None) -> Iterator[Move]:
        """``count`` hands one after another (forever with None)."""
        while count is None or self.hands_dealt < count:
            yield from self.hand()
