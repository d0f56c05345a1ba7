"""The firmware configuration the simulator gives each modelled reader of a table (``sim.pn5180``): where stacks lie
(bets, the pot, the muck) the antenna dwells long enough to read a whole stack; elsewhere a card's dwell does."""

from conftest import ROOT
from rfid_table.config.table import load_config
from sim.pn5180 import CARD_DWELL_MS, STACK_DWELL_MS, table_firmware_config


def dwell_by_zone(table, reader: str) -> dict[str, int]:
    settings = table.readers[reader]
    schedule = dict(table_firmware_config(table, reader, settings.antennas)["schedule"])
    return {zone: schedule[antenna - 1] for zone, (name, antenna) in table.zones.items() if name == reader}


def test_the_stacks_zones_get_the_long_dwell_and_the_card_zones_the_short_one():
    table = load_config(ROOT / "config" / "table-chips.toml")
    main, chips = dwell_by_zone(table, "main"), dwell_by_zone(table, "chips")
    assert main["muck"] == STACK_DWELL_MS
    assert {main[zone] for zone in main if zone != "muck"} == {CARD_DWELL_MS}  # seat cards, board, burn
    assert set(chips.values()) == {STACK_DWELL_MS} and "seat10.bets" in chips and "pot" in chips
