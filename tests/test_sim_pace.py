"""The simulated chip table at a brisk pace: every hand is read to its end, none runs into the next."""

from collections import Counter

import pytest

from conftest import ListSink
from rfid_table.config.table import load_config
from rfid_table.devtools.simulate import SimOptions, SimulatedTable, table_hand_over_s, table_read_s
from rfid_table.service.daemon import StopFlag
from test_watch import CHIP_TABLE


@pytest.mark.slow
@pytest.mark.parametrize("pace_s", [0.5, 0.3, 0.1])
def test_a_brisk_dealer_posts_the_next_blinds_only_once_the_table_has_ended_the_hand(pace_s):
    # What `rfid-table sim --config config/table-chips.toml --players 4 --seed 3 --speed 0 --hands 30 --pace P`
    # plays. At pace 0.5 the blinds of the next hand went in 1.25 s after the cards were gathered, before the table
    # had seen it clear for clear_after_s: 13 of the 30 hands ended in the betting with no award. At 0.1 the players
    # also acted before the bet before them was read (settle_ms), out of turn as the table saw it.
    sink = ListSink()
    table = SimulatedTable(load_config(CHIP_TABLE),
                           SimOptions(hands=30, seed=3, speed=0, pace_s=pace_s, players=4, link="direct"), sink)
    table.run(StopFlag())
    rulings = Counter(e.public["code"] for e in sink.events if e.type == "bet_ruling")
    assert rulings == {}
    histories = [e.hand for e in sink.events if e.type == "hand_history"]
    assert histories == sorted(set(histories)) and len(histories) == 30
    assert sum(1 for e in sink.events if e.type == "showdown") == 30


def test_the_table_ends_a_hand_once_the_last_card_is_gone_and_the_table_stayed_clear():
    config = load_config(CHIP_TABLE)
    # the muck's pile leaves after 1 s, the table must then stay clear 1 s, at 20 reader cycles a second
    assert table_hand_over_s(config) == pytest.approx(1.0 + 1.0 + 0.1)


def test_the_table_reads_a_bet_once_its_chips_have_settled():
    assert table_read_s(load_config(CHIP_TABLE)) == pytest.approx(0.5 + 0.1)  # settle_ms = 500
