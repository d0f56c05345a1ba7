"""The ``pn5180`` backend: PN5180 front ends on the Pi's own SPI bus, run by the reader firmware's driver in process.

The real parts are the firmware's driver and scheduler (firmware/) and the register-level PN5180 model (sim/pn5180.py)
that proves the firmware on the Pico; spidev and the header's pins, which cannot run here, are stand-ins at their
interface (sim/spidev_model.py). The wiring is the shipped example's (config/table-pi-pn5180.toml)."""

import time

import pytest

from conftest import ROOT, ListSink
from hal.pn5180_reader import firmware
from rfid_table.config.table import load_config
from rfid_table.devtools.simulate import SimOptions, SimulatedTable
from rfid_table.service.daemon import StopFlag
from sim.field import TableField
from sim.spidev_model import PiBoard, modelled_pi_reader

EXAMPLE = ROOT / "config" / "table-pi-pn5180.toml"
CONFIG = load_config(EXAMPLE)
DECK_A = list(CONFIG.decks["A"])
DECK_B = list(CONFIG.decks["B"])  # ISO 14443A (NTAG) cards


def wait_for(reader, until, timeout: float = 15.0):
    """Poll ``reader`` as the table does until ``until(cycle)`` holds for a cycle; that cycle."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for cycle in reader.poll(time.monotonic()):
            if until(cycle):
                return cycle
        time.sleep(0.01)
    raise AssertionError(f"no such cycle in {timeout} s")


def by_antenna(cycle) -> dict[int, set[str]]:
    found: dict[int, set[str]] = {}
    for read in cycle.reads:
        found.setdefault(read.antenna, set()).add(read.uid)
    return found


@pytest.fixture
def pi(request):
    """The example table's reader on the board model; ``request.param``: its link, when not the example's."""
    link = getattr(request, "param", None) or CONFIG.readers["main"].link
    field = TableField(CONFIG.zones)
    board = PiBoard(link, field, "main")
    reader = board.reader("main", sum(fe["antennas"] for fe in link["frontends"]), cycle_s=0.0)
    yield field, board, reader
    reader.close()


def test_the_pi_reads_every_antenna_through_the_firmware_driver(pi):
    field, board, reader = pi
    placed = {"seat1.cards": DECK_A[0:2], "seat7.cards": DECK_A[2:4], "seat8.cards": DECK_A[4:6],
              "board": DECK_A[6:11], "muck": DECK_A[11:31]}
    for zone, uids in placed.items():
        for uid in uids:
            field.place(uid, zone)
    expected = {CONFIG.zones[zone][1]: set(uids) for zone, uids in placed.items()}
    cycle = wait_for(reader, lambda c: by_antenna(c) == expected)
    assert cycle.reader == "main"
    up = [e for e in reader.device_events() if e.kind == "reader_up"]
    assert dict(up[0].detail)["antennas"] == 13 and dict(up[0].detail)["serial"] == "PN5180-SPI0-7x6"
    assert reader.link_up and reader.faulted_antennas == set()
    # both PN5180s answered on their own chip select (CE0: front end 1, antennas 1-7; CE1: antennas 8-13)
    assert [device.ce_pin for device in board.devices] == [8, 7]


def test_a_card_taken_off_is_gone_from_the_next_pass(pi):
    field, _board, reader = pi
    field.place(DECK_A[0], "seat3.cards")
    wait_for(reader, lambda c: by_antenna(c) == {3: {DECK_A[0]}})
    field.remove(DECK_A[0])
    field.place(DECK_A[0], "burn")
    wait_for(reader, lambda c: by_antenna(c) == {12: {DECK_A[0]}})


def test_a_broken_antenna_is_reported_and_its_cards_held_until_it_reads_again(pi):
    field, board, reader = pi
    field.place(DECK_A[0], "seat2.cards")
    wait_for(reader, lambda c: by_antenna(c).get(2) == {DECK_A[0]})
    board.break_antenna(2, "open")
    field.remove(DECK_A[0])  # unknown while the antenna is broken: the table keeps the card where it lay
    deadline = time.monotonic() + 10
    while 2 not in reader.faulted_antennas:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    events = reader.device_events()
    assert [(e.kind, dict(e.detail)) for e in events if e.kind.startswith("antenna")] == [
        ("antenna_fault", {"antenna": 2, "fault": "open"})]
    cycle = wait_for(reader, lambda c: True)
    assert by_antenna(cycle).get(2) == {DECK_A[0]}
    board.mend_antenna(2)
    wait_for(reader, lambda c: 2 not in by_antenna(c))
    assert [e.kind for e in reader.device_events()] == ["antenna_ok"] and reader.faulted_antennas == set()


def test_a_front_end_that_stops_answering_faults_its_antennas_and_the_other_reads_on(pi):
    field, board, reader = pi
    field.place(DECK_A[0], "seat1.cards")
    field.place(DECK_A[1], "seat9.cards")
    wait_for(reader, lambda c: len(c.reads) == 2)
    board.kill_frontend(1)  # BUSY stuck high: antennas 8-13 are behind it
    deadline = time.monotonic() + 10
    while reader.faulted_antennas != set(range(8, 14)):
        assert time.monotonic() < deadline, reader.faulted_antennas
        time.sleep(0.02)
    field.place(DECK_A[2], "seat4.cards")
    wait_for(reader, lambda c: by_antenna(c).get(4) == {DECK_A[2]})
    assert reader.link_up


THREE_ON_SPI0 = {"spi_bus": 0, "frontends": [
    {"cs": 0, "busy": 25, "rst": 24, "select": [5, 6, 12], "release": 13, "antennas": 4},
    {"nss": 22, "busy": 23, "rst": 24, "select": [16, 20, 21], "release": 26, "antennas": 4},
    {"nss": 27, "busy": 4, "rst": 24, "select": [17, 18, 19], "release": 14, "antennas": 5}]}


@pytest.mark.parametrize("pi", [THREE_ON_SPI0], indirect=True)
def test_front_ends_selected_by_gpio_share_the_bus_with_one_on_ce0(pi):
    field, board, reader = pi
    for zone, uid in (("seat1.cards", DECK_A[0]), ("seat5.cards", DECK_A[1]), ("seat9.cards", DECK_A[2])):
        field.place(uid, zone)
    wait_for(reader, lambda c: by_antenna(c) == {1: {DECK_A[0]}, 5: {DECK_A[1]}, 9: {DECK_A[2]}})
    # the GPIO-selected front ends' frames go through CE1's device, whose line has nothing on it
    assert [(d.ce_pin, d.no_cs) for d in board.devices] == [(8, False), (7, True)]


def test_closing_the_reader_turns_every_field_off():
    field = TableField(CONFIG.zones)
    field.place(DECK_A[0], "muck")
    board = PiBoard(CONFIG.readers["main"].link, field, "main")
    reader = board.reader("main", 13)
    wait_for(reader, lambda c: len(c.reads) == 1)
    reader.close()
    assert not any(chip.rf for chip in board.board.chips)
    assert board.board.pins[24] == 0  # RST held low: both PN5180s in reset
    assert all(device.closed for device in board.devices)


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(firmware(), "iso14443a"), reason="the driver reads ISO 15693 only")
def test_iso_14443a_cards_and_iso_15693_chips_on_one_reader():
    link = dict(CONFIG.readers["main"].link, standards=["iso14443a"] * 12 + ["iso15693"])
    field = TableField(CONFIG.zones)
    for zone, uids in (("seat1.cards", DECK_B[0:2]), ("board", DECK_B[2:7]), ("muck", DECK_A[0:10])):
        for uid in uids:
            field.place(uid, zone)
    board = PiBoard(link, field, "main")
    reader = board.reader("main", 13)
    try:
        wait_for(reader, lambda c: by_antenna(c) == {1: set(DECK_B[0:2]), 11: set(DECK_B[2:7]),
                                                     13: set(DECK_A[0:10])})
    finally:
        reader.close()


class PiTable(SimulatedTable):
    """``rfid-table sim`` with its readers on the Pi's PN5180 backend and the board model."""

    def _reader(self, settings):
        return modelled_pi_reader(self.config, settings, self.field)


@pytest.mark.slow
def test_hands_are_played_through_the_pi_backend():
    sink = ListSink()
    table = PiTable(CONFIG, SimOptions(hands=1, seed=3, speed=1, pace_s=0.6, players=3, link="direct"), sink)
    table.run(StopFlag())
    types = [e.type for e in sink.events]
    assert types.count("card_dealt") == 6, types
    assert "hand_ended" in types and "antenna_fault" not in types



def test_sim_with_the_pn5180_link_plays_a_hand_read_by_the_pis_own_backend(broker, recorder_factory):
    """`rfid-table sim --link pn5180`: the dealer's cards read by the firmware's driver running in the daemon's own
    process, on modelled front ends behind the spidev and pin stand-ins, published through the broker."""
    import subprocess  # noqa: PLC0415

    from conftest import TABLE_6  # noqa: PLC0415
    from test_run_daemon import RFID_TABLE  # noqa: PLC0415

    recorder = recorder_factory("rfid-table/sixmax-1/secure/events")
    done = subprocess.run(RFID_TABLE + ["sim", "--config", str(TABLE_6), "--link", "pn5180", "--hands", "1", "--pace",
                                        "1", "--players", "2", "--seed", "3", "--host", broker.host, "--port",
                                        str(broker.port)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert recorder.wait_for(lambda m: any(e["type"] == "hand_ended" for e in recorder.json("/secure/events")), 10)
    dealt = [(e["seat"], e["card"]) for e in recorder.json("/secure/events") if e["type"] == "card_dealt"]
    assert len(dealt) == 4 and {seat for seat, _ in dealt} == {1, 2}, dealt
