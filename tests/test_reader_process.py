"""A modelled reader in a process of its own (sim.reader_process), as the felt bench runs its readers: the tags moved
on the bench's table reach the firmware in the child, its first look at an awaited tag comes back, and its air time
is counted there; it can run under the idle scheduling policy."""

import os
from pathlib import Path

import pytest

from firmware_bridge.messages import Inventory
from micropython_runtime import requires_micropython
from sim.pn5180 import firmware_config
from sim.reader_process import MirroredField, ReaderProcess
from test_firmware_protocol import Host

pytestmark = requires_micropython

ZONES = {"bets_1": ("chips", 1), "bets_2": ("chips", 2), "pot": ("chips", 3)}
AT_REST = "e0040000000010%02x"


def test_moves_on_the_bench_table_reach_the_reader_in_its_own_process(tmp_path):
    field = MirroredField(ZONES)
    for n in range(3):
        field.place(AT_REST % n, "pot")  # on the table before the reader starts
    reader = ReaderProcess(field, reader="chips", config=firmware_config([3], [(0, 25), (1, 25), (2, 25)]),
                           link_path=tmp_path / "reader-chips", idle=True)
    host = Host(reader.path)
    try:
        # the board model and its firmware yield every core to the daemon and to the kernel's work for it
        firmware = [int(pid) for pid in Path(f"/proc/{reader.pid}/task/{reader.pid}/children").read_text().split()]
        assert len(firmware) == 1
        assert [os.sched_getscheduler(pid) for pid in (reader.pid, *firmware)] == [os.SCHED_IDLE] * 2

        def read_on(antenna: int, wanted: set[str]) -> None:
            host.wait_for(lambda m: isinstance(m, Inventory) and m.antenna == antenna
                          and {e.uid.hex() for e in m.entries} == wanted, timeout=10)

        read_on(2, {AT_REST % n for n in range(3)})
        air_before = reader.air_s()
        pushed = "e004000000002001"
        looked = field.await_look(pushed)
        field.place(pushed, "bets_2")
        assert looked.wait(10), "the reader's first look at the pushed chip was not told back"
        read_on(1, {pushed})
        field.place(pushed, "bets_1")  # moved: gone from the one antenna, on the other
        read_on(1, set())
        read_on(0, {pushed})
        field.clear()
        read_on(2, set())
        assert field.tags_in("pot") == [] and field.zone_of(pushed) is None
        assert reader.air_s()[0] > air_before[0] > 0
        reader.close()
        with pytest.raises(RuntimeError, match="reader process reader-chips has stopped"):
            field.place(pushed, "bets_1")  # a move a stopped reader would never see: the bench must not go on
    finally:
        host.port.close()
        reader.close()


def test_a_reader_process_that_cannot_start_says_why(tmp_path):
    field = MirroredField(ZONES)
    with pytest.raises(RuntimeError, match="reader process reader-chips failed to start: .*no-such-micropython"):
        ReaderProcess(field, reader="chips", config=firmware_config([3], [(0, 25)]),
                      link_path=tmp_path / "reader-chips", micropython=str(tmp_path / "no-such-micropython"))
