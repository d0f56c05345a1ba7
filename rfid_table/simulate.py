"""Run the daemon against the simulated table: the same pipeline as on hardware, fed by a virtual dealer."""

import logging
from dataclasses import dataclass

from hal.readers import SimulatedReader
from rfid_table.config import TableConfig
from rfid_table.journal import Journal
from rfid_table.publisher import MqttPublisher
from rfid_table.daemon import Sink, StopFlag, TablePipeline, run_cycles
from sim.dealer import DealerSettings, SimDealer
from sim.field import TableField

log = logging.getLogger(__name__)
MAX_BACKLOG = 500  # messages


@dataclass(frozen=True)
class SimOptions:
    hands: int | None = 10  # None: play until stopped
    seed: int | None = None
    speed: float = 1.0  # table time per wall time; 0 = as fast as possible
    pace_s: float = 1.0  # seconds a typical dealer or player action takes
    players: int | None = None  # seats 1..N occupied; None: every seat
    fold_chance: float = 0.3


class SimulatedTable:
    """The virtual table, its readers and the daemon's pipeline, ready to step."""

    def __init__(self, config: TableConfig, options: SimOptions, sink: Sink | None, journal: "Journal | None" = None):
        players = list(range(1, (options.players or config.seats) + 1))
        if not 2 <= len(players) <= config.seats:
            raise ValueError(f"--players must be from 2 to {config.seats} (the table's seats), not {len(players)}")
        self.config = config
        self.options = options
        self.field = TableField(config.zones)
        self.dealer = SimDealer(
            self.field,
            config.decks[config.active_deck],
            DealerSettings(players, config.game.hole_cards, options.pace_s, options.fold_chance),
            options.seed,
        )
        readers = [SimulatedReader(r.name, r.antennas, self.field) for r in config.readers.values()]
        self.pipeline = TablePipeline(config, readers, sink, journal)
        self.cycle_s = min(r.cycle_s for r in config.readers.values())
        self._moves = self.dealer.hands(options.hands)
        self._next = next(self._moves, None)
        self._due: float | None = None

    def advance(self, t: float) -> bool:
        """Apply the dealer's moves due by table time ``t``; False once the last hand is over."""
        while self._next is not None:
            if self._due is None:
                self._due = t + self._next.delay_s
            if self._due > t:
                break
            log.debug("%s", self._next.describe)
            self._next.apply()
            self._next = next(self._moves, None)
            self._due = None if self._next is None else self._due + self._next.delay_s
        return self._next is not None or self.pipeline.controller.in_hand

    def run(self, stop: StopFlag, publisher: "MqttPublisher | None" = None) -> None:
        """Play until the last hand is over, giving the publisher the time between cycles. A table running
        faster than real time pauses while many messages still wait for the broker, so memory stays bounded."""

        def before_step(t: float) -> bool:
            while publisher is not None and publisher.pending > MAX_BACKLOG and not stop.is_set():
                publisher.service(0.005)
            return self.advance(t)

        run_cycles(self.pipeline, self.cycle_s, stop, self.options.speed, before_step=before_step,
                   idle=publisher.service if publisher is not None else None)
