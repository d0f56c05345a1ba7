"""``rfid-table sim`` at the example chips table, played in process through the daemon's pipeline (the emulated
readers' zone tracker, the controller) on the table clock, as fast as it goes: what a test of a game reads the
table's published events from."""

from __future__ import annotations

import dataclasses

from rfid_table.config.table import load_config
from rfid_table.devtools.simulate import SimOptions, SimulatedTable
from rfid_table.package_data import CONFIG_DIR

LAST_HAND_END_CYCLES = 100  # cycles stepped after the dealer's last deal: the last hand ends in them


def play_chips_table(game: dict, **options) -> tuple[list, SimulatedTable]:
    """Play config/table-chips.toml with ``game``'s changes to its [game] (no broadcast delay, no journal) and
    ``options`` of ``SimOptions`` (hands, seed, players, ...): every hand the dealer deals, then the last hand's end.
    Returns the events published, in order, and the closed table (its dealer tells what it did)."""
    config = load_config(CONFIG_DIR / "table-chips.toml")
    config = dataclasses.replace(config, game=dataclasses.replace(config.game, **game), broadcast_delay_s=0.0,
                                 journal_path=None)
    table = SimulatedTable(config, SimOptions(speed=0, link="direct", **options), None)
    events, t = [], 1000.0
    try:
        while table.advance(t):
            events += table.step(t)
            t += table.cycle_s
        for _ in range(LAST_HAND_END_CYCLES):
            events += table.step(t)
            t += table.cycle_s
    finally:
        table.close()
    return events, table
