"""The table driver the scenario tests play on (``sim.table_driver``): what it reads, when, and what it reports."""

import pytest

from controller import TableController, TableSetup
from controller.cards import FULL_DECK
from hal.zones import DebounceSettings
from sim.noise import NoiseModel
from sim.replay import card_uid, table_zones
from sim.table_driver import CommandRefused, TableDriver, debounce_by_pile, of, types

DECK = {card_uid(i): card for i, card in enumerate(FULL_DECK)}


def table(**options) -> TableDriver:
    controller = TableController(TableSetup("t", 10, DECK, decks={"A": DECK}, deck_id="A", players=(1, 2), button=2))
    return TableDriver(controller, table_zones(), **{"debounce": debounce_by_pile(table_zones()), "deck": DECK,
                                                     **options})


def test_a_card_is_read_when_the_readers_pass_and_not_before():
    """A card takes three reads in a row (CARD_DEBOUNCE): placed and skipped over, nothing is read; the readers pass
    and the card is dealt on the third pass, when the zone tracker's picture is the table's."""
    driver = table()
    driver.place("Ah", zone="seat1.cards")
    assert driver.skip(1.0) == [] and not driver.settled()
    produced = driver.read_until_settled()
    assert types(produced) == ["hand_started", "card_dealt"] and driver.settled()
    assert driver.t == pytest.approx(1.0 + 3 * driver.cycle_s)
    assert driver.read_until_settled() == []  # already settled: no pass at all
    assert driver.events == produced


def test_a_table_that_cannot_settle_says_what_it_sees():
    driver = table(debounce=DebounceSettings(present_after_cycles=1000))
    driver.place("Ah", zone="board")
    with pytest.raises(TimeoutError, match=r"after 0.5 s the zone tracker sees .*'board': set\(\)"):
        driver.read_until_settled(timeout_s=0.5)


def test_the_public_feed_never_carries_the_hole_card_and_the_secure_one_does():
    driver = table()
    driver.put("Ah", "seat1.cards", seconds=0.5)
    [dealt] = of(driver.events, "card_dealt")
    public, secure = (next(p for p in driver.published(s) if p["type"] == "card_dealt") for s in (False, True))
    assert "card" not in public and secure["card"] == "Ah" == dealt.secret["card"]


def test_a_refused_command_raises_with_the_refusal_unless_it_is_tried():
    driver = table()
    with pytest.raises(CommandRefused, match="exposed_card: no hand is running"):
        driver.command("exposed_card", role="dealer", seat=2)
    assert driver.try_command("exposed_card", role="dealer", seat=2) == ([], "no hand is running")
    assert driver.events == []


def test_every_input_is_handed_on_in_the_order_the_controller_took_it():
    """What a journal records: the zone events of a pass, then its tick; a command with its refusal; a device
    report; each with what it produced."""
    inputs = []
    driver = table(on_input=inputs.append)
    driver.put("Ah", "seat1.cards", seconds=3 * driver.cycle_s)
    driver.try_command("set_button", seat=7)
    driver.try_command("undo", role="dealer")
    driver.device("antenna_fault", antenna=4)
    assert [(i.kind, types(i.produced)) for i in inputs] == [
        ("tick", []), ("tick", []), ("zone", ["hand_started", "card_dealt"]), ("tick", []),
        ("command", ["button_set"]), ("command", []), ("device", ["antenna"])]
    assert inputs[2].body.uid == driver.uid("Ah") and inputs[5].refusal == "undo is not available on this table"
    assert [e for i in inputs for e in i.produced] == driver.events


def test_a_driver_reading_through_rf_noise_keeps_the_neighbours_weak_reads_out():
    """Every tag is also read through the antennas next to its own, 20 dB weaker: with the RSSI floor the zone tracker
    ignores those reads and the card is dealt once, where it lies, on a pass at the time the caller gives."""
    driver = table(noise=NoiseModel(cross_read=1.0, seed=1), min_rssi_dbm=-60)
    driver.place("Ah", zone="seat1.cards")
    produced = []
    for t in (0.05, 0.1, 0.15):
        produced += driver.read_at(t)
    [dealt] = of(produced, "card_dealt")
    assert dealt.public["seat"] == 1 and driver.t == 0.15 and driver.settled()
    assert driver.tracker.weak_reads == 3  # read through seat 2's antenna on each of the three passes
