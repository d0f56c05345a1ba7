"""The simulated chip table runs for days: the players' chips stay within what the table's chip set can make.

Rebuys add chips to the table and nothing took them away, so one stack grew until a single all-in needed more chips
than the set holds (`ValueError: the hand needs more chips than the rack holds` after 50 to 300 hands). Here:
thousands of hands of the dealer of config/table-chips.toml across seeds, every move applied to the table, and the
whole simulated table (readers and the daemon's pipeline) past the hand where two seeds ran out, one per core.
"""

from concurrent.futures import ProcessPoolExecutor

import pytest

from rfid_table.config.table import ENGINE_VARIANTS, load_config
from rfid_table.service.daemon import StopFlag
from rfid_table.devtools.simulate import SimOptions, SimulatedTable
from sim.betting_dealer import BettingDealer
from sim.field import TableField
from test_watch import CHIP_TABLE

SEEDS = range(8)
HANDS_PER_SEED = 400


@pytest.mark.slow
def test_thousands_of_hands_of_the_chip_table_stay_within_its_chip_set():
    config = load_config(CHIP_TABLE)
    game = config.game
    chip_set_value = sum(config.chips.chips.values())
    played = 0
    for seed in SEEDS:
        field = TableField(config.zones)
        dealer = BettingDealer(field, config.decks[config.active_deck], config.chips.chips,
                               list(range(1, config.seats + 1)), variant=ENGINE_VARIANTS[game.variant],
                               blinds=(game.small_blind, game.big_blind), ante=game.ante, command=lambda body: None,
                               seed=seed)
        for move in dealer.hands(HANDS_PER_SEED):  # raised "more chips than the rack holds" before the fix
            move.apply()
            assert sum(dealer.stacks.values()) <= chip_set_value // 2 + dealer.max_stack, (seed, dealer.hands_dealt)
        assert dealer.hands_dealt == HANDS_PER_SEED
        played += dealer.hands_dealt
    assert played == len(SEEDS) * HANDS_PER_SEED


def play_chip_table(seed: int, hands: int) -> int:
    """What `rfid-table sim --config config/table-chips.toml --speed 0 --link direct --hands N --seed S` plays: the
    dealer, the simulated readers and the daemon's whole pipeline (without a broker to publish to)."""
    table = SimulatedTable(load_config(CHIP_TABLE), SimOptions(hands=hands, seed=seed, speed=0, link="direct"), None)
    table.run(StopFlag())
    return table.pipeline.controller.hand


def test_the_simulated_table_plays_past_where_the_chip_set_ran_out_through_the_daemons_pipeline():
    hands = 120
    seeds = (1, 7)  # the chip set ran out at hand 99 with seed 1 and at hand 85 with seed 7
    with ProcessPoolExecutor(max_workers=2) as pool:  # the machine's two cores
        played = dict(zip(seeds, pool.map(play_chip_table, seeds, [hands] * len(seeds))))
    assert played == {seed: hands for seed in seeds}
