"""The host tells a reader of the table firmware what matters now: the antennas whose reads are wanted at once
(the seat the table deals to next) are visited several times a pass, through SET_SCHEDULE, and the reader goes
back to its plain schedule once nothing is watched. The firmware runs in MicroPython on the modelled PN5180."""

import time
from pathlib import Path

from micropython_runtime import requires_micropython

from firmware_bridge.message_types import ScheduleSlot
from hal.firmware_reader import hinted_schedule, serial_reader
from sim.field import TableField
from sim.pn5180 import ModelledReader, firmware_config

pytestmark = requires_micropython

ZONES = {f"seat{n}.cards": ("main", n) for n in range(1, 9)}
DWELLS = [25] * 8


def reports_per_pass(reader, antenna: int, passes: int = 3) -> list[int]:
    """How many times ``antenna`` (configuration number) reported its reads in each of the next whole passes, as the
    host takes them early. (A report that comes in the same read of the link as its pass's end is carried by the
    whole pass instead: a loaded machine can leave a pass one short.)"""
    counts: list[int] = []
    current = 0
    deadline = time.monotonic() + 60
    reader.poll(time.monotonic())
    while len(counts) < passes:
        assert time.monotonic() < deadline, "the reader did not end its passes"
        cycles = reader.poll(time.monotonic())
        current += sum(1 for visit in reader.take_early_reads() if visit.antenna == antenna)
        if cycles:
            counts.append(current)
            current = 0
        time.sleep(0.002)
    return counts


def test_a_watched_antenna_is_visited_three_times_a_pass(tmp_path):
    field = TableField(ZONES)
    field.place("E0040150A1000001", "seat1.cards")
    device = ModelledReader(field, reader="main", config=firmware_config([8], [(a, 25) for a in range(8)]),
                            link_path=tmp_path / "reader")
    reader = serial_reader("main", device.path, antennas=8, dwells=DWELLS)
    try:
        deadline = time.monotonic() + 30
        while reader.poll(time.monotonic()) == [] or not reader.link_up:
            assert time.monotonic() < deadline, "the reader did not come up"
            time.sleep(0.01)
        reader.watch_antennas({1})
        # once the schedule is taken (from the pass after it came; 8 passes leave it time): its own slot (the
        # first), after the third and after the sixth, in 3 of the last 4 passes at least
        assert reports_per_pass(reader, 1, passes=8)[-4:].count(3) >= 3
        reader.watch_antennas({6})  # the next seat
        # its own slot (the sixth) and after the third: never twice in a row
        assert reports_per_pass(reader, 6, passes=8)[-4:].count(2) >= 3
    finally:
        reader.close()
        device.close()


def test_the_hinted_schedule_adds_a_watched_antenna_after_every_third_slot_of_its_front_end():
    dwells = [25] * 13 + [400]  # two front ends: wire antennas 0-7 and 8-13
    slots = [(s.antenna, s.dwell_ms) for s in hinted_schedule(dwells, frozenset({4, 9}))]
    order = [a for a, _ in slots]
    assert order == [0, 1, 2, 4, 3, 4, 5, 4, 6, 7, 8, 9, 10, 9, 11, 12, 13, 9]
    assert set(slots) == {(a, d) for a, d in enumerate(dwells)}
    assert hinted_schedule(dwells, frozenset()) == tuple(ScheduleSlot(a, d) for a, d in enumerate(dwells))
    # too many to hint: the plain schedule
    assert hinted_schedule(dwells, frozenset(range(5))) == hinted_schedule(dwells, frozenset())


def test_the_seat_to_acts_betting_zone_is_visited_after_every_slot_of_its_own_front_end():
    """The chips' reader of the bench's table: 11 antennas wired 6 and 5 to its two front ends. The watched zone
    (wire antenna 4) comes between every two other antennas of its front end, never twice in a row, and the
    other front end's schedule is the plain one."""
    slots = hinted_schedule([400] * 11, frozenset({4}), every=1, front_ends=[6, 5])
    assert [s.antenna for s in slots] == [0, 4, 1, 4, 2, 4, 3, 4, 5, 4, 6, 7, 8, 9, 10]
    # the reference board by default: 8 antennas to a front end
    assert [s.antenna for s in hinted_schedule([400] * 11, frozenset({9}), every=1)] == [
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 9]


def test_the_configuration_pages_reader_schedule_reaches_the_reader_the_daemon_opens(tmp_path):
    """docs/configuration.md's "A reader told what comes next", in config/table-chips.toml: the chips reader opened
    as `rfid-table run` opens it holds the schedule it is to be told, its front ends, and a visit after every slot
    (its zones hold chips); the push is read after two unchanged reads and settle_ms alone."""
    import re  # noqa: PLC0415

    from hal.readers import open_reader  # noqa: PLC0415
    from rfid_table.config.table import load_config  # noqa: PLC0415
    from rfid_table.package_data import CONFIG_DIR  # noqa: PLC0415

    page = (Path(__file__).parent.parent / "docs" / "configuration.md").read_text(encoding="utf-8")
    section = page[page.index("## A reader told what comes next"):]
    readers, hal = re.findall(r"```toml\n(.*?)```", section, re.S)[:2]
    table = (CONFIG_DIR / "table-chips.toml").read_text(encoding="utf-8")
    table = re.sub(r"\[readers\.chips\]\n(.*\n)*?cycle_ms = \d+\n", readers, table)
    table = table.replace("[hal.chips]\n", hal)
    for name in ("chips-demo.toml",):
        (tmp_path / name).write_text((CONFIG_DIR / name).read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "table.toml").write_text(table, encoding="utf-8")
    config = load_config(str(tmp_path / "table.toml"))
    settings = config.readers["chips"]
    reader = open_reader(settings.name, settings.backend, settings.antennas, settings.link, cycle_s=settings.cycle_s)
    try:
        assert reader.dwells == [400] * 11 and reader.front_ends == [8, 3] and reader.hint_every == 1
        assert reader.park_every_ms == 2000  # parked on the seat to act's bets by a reader that can (PARK, 1.2)
        assert config.debounce["chips"].still_after_reads == 2 and config.bet_settle_s == config.game.settle_s
    finally:
        reader.close()
