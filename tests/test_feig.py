"""The Feig backend (firmware_bridge.feig) against the emulator of the reader (sim.feig), over a real pty.

The vectors in docs/feig.md are checked byte for byte. Everything else runs the real stack: ``FeigLink`` with the real
pyserial transport on the emulator's pseudo-terminal, on a virtual clock (``sim.firmware.Lockstep``), most of it
through ``hal.firmware_reader.FirmwareReader`` as the daemon uses it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from firmware_bridge import feig
from firmware_bridge.feig import (
    Channel,
    FeigLink,
    FeigSerialTransport,
    FeigTiming,
    FrameDecoder,
    Status,
    crc16,
    decode_inventory,
    default_channels,
    encode_answer,
    encode_request,
    parse_channel,
)
from firmware_bridge.messages import FaultCode, InventoryFlag
from hal.firmware_reader import FirmwareReader
from sim.feig import FeigEmulator, command_time
from sim.field import TableField
from sim.firmware import FirmwareEmulator, Lockstep

DOC = (Path(__file__).resolve().parent.parent / "docs" / "feig.md").read_text(encoding="utf-8")
TICK = 0.001


def _blocks() -> list[dict[str, str]]:
    blocks = []
    for body in re.findall(r"^```feig-vector\n(.*?)^```$", DOC, re.M | re.S):
        block = {}
        for line in body.splitlines():
            key, _, value = line.partition(":")
            block[key.strip()] = value.strip()
        blocks.append(block)
    return blocks


VECTORS = _blocks()


def _hex(text: str) -> bytes:
    return bytes.fromhex(text.replace(" ", ""))


# --------------------------------------------------------------------------
# The documented vectors
# --------------------------------------------------------------------------


def test_the_document_has_the_vectors_the_backend_needs():
    names = {vector["name"] for vector in VECTORS}
    assert len(names) == len(VECTORS)
    assert {"crc-check-value", "inventory-request", "inventory-answer", "inventory-request-ant",
            "inventory-answer-ant", "inventory-answer-more-data"} <= names
    assert all(vector.get("source") for vector in VECTORS)


@pytest.mark.parametrize("vector", VECTORS, ids=lambda vector: vector["name"])
def test_vector(vector):
    if vector["kind"] == "crc":
        assert crc16(_hex(vector["input"])) == int(vector["crc"], 16)
        return
    frame = _hex(vector["frame"])
    assert crc16(frame[:-2]) == frame[-2] | frame[-1] << 8  # CRC low byte first
    answers = vector["kind"] == "answer"
    decoder = FrameDecoder(answers=answers)
    decoded = decoder.feed(frame)
    assert len(decoded) == 1 and decoder.pending_bytes == 0 and decoder.stats.frames_rejected == 0
    fields = json.loads(vector["fields"])
    got = decoded[0]
    assert (got.advanced, got.address, got.command, got.data) == (
        fields["advanced"], fields["address"], fields["command"], _hex(fields["data"]))
    if answers:
        assert got.status == fields["status"]
        again = encode_answer(got.address, got.command, got.status, got.data, advanced=got.advanced)
    else:
        again = encode_request(got.address, got.command, got.data, advanced=got.advanced)
    assert again == frame
    if "tags" in vector:
        records = decode_inventory(got.data, with_antennas=vector["antennas"] == "true")
        assert [record.uid.hex().upper() for record in records] == vector["tags"].split()


def test_a_damaged_frame_is_skipped_and_counted_once():
    good = _hex(next(v for v in VECTORS if v["name"] == "inventory-answer-ant")["frame"])
    damaged = bytearray(good)
    damaged[12] ^= 0x10
    decoder = FrameDecoder()
    # A Feig frame has no delimiter: after a damaged one the decoder may wait for bytes a false length announced,
    # until the line has been quiet (expire).
    frames = decoder.feed(bytes(damaged) + good) + decoder.expire()
    assert frames == FrameDecoder().feed(good)
    assert decoder.stats.crc_errors == 1 and decoder.stats.frames_ok == 1 and decoder.pending_bytes == 0
    assert decoder.last_error.counter == "crc_errors"


def test_every_status_byte_is_in_the_module_table():
    for status in Status:
        assert f"0x{status.value:02X}" in feig.__doc__, status.name


# --------------------------------------------------------------------------
# Channels
# --------------------------------------------------------------------------


def test_channel_notation():
    assert parse_channel(" 1.3.5 ") == Channel(1, (3, 5))
    assert str(parse_channel("2")) == "2" and parse_channel("1.3.5").feig_number == 53
    for wrong in ("0", "9", "1.9", "1.2.3.4.5", "a", "", "1..2"):
        with pytest.raises(ValueError, match="expected OUTPUT"):
            parse_channel(wrong)
    assert [str(c) for c in default_channels(3)] == ["1.1", "1.2", "1.3"]
    assert [str(c) for c in default_channels(10)][7:] == ["1.1.8", "1.2.1", "1.2.2"]
    assert default_channels(1) == [Channel(1)]
    with pytest.raises(ValueError, match="list the channels"):
        default_channels(65)
    with pytest.raises(ValueError, match="puts a multiplexer there"):
        FeigLink(lambda: None, name="x", channels=[parse_channel("1.3"), parse_channel("1.3.5")])
    with pytest.raises(ValueError, match="listed twice"):
        FeigLink(lambda: None, name="x", channels=[parse_channel("1.3"), parse_channel("1.3")])


# --------------------------------------------------------------------------
# The real stack over a pty
# --------------------------------------------------------------------------


class Table:
    """A field, an emulated reader on a pty, the link and the HAL reader, stepped together on a virtual clock."""

    def __init__(self, tmp_path, antennas: int, channels: list[str] | None = None, link_channels: list[str] | None
                 = None, timing: FeigTiming = FeigTiming(), **emulator_args):
        self.field = TableField({f"zone{n}": ("main", n) for n in range(1, antennas + 1)})
        chans = [parse_channel(text) for text in channels] if channels else None
        self.emulator = FeigEmulator(self.field, antennas=antennas, channels=chans, link_path=tmp_path / "feig-main",
                                     serial="1A2B3C4D", **emulator_args)
        link_chans = [parse_channel(text) for text in link_channels] if link_channels else \
            (chans or default_channels(antennas))
        self.link = FeigLink(lambda: FeigSerialTransport(self.emulator.path), name="main", channels=link_chans,
                             timing=timing)
        self.reader = FirmwareReader("main", self.link, antennas=len(link_chans), cycle_s=1.0)
        self.cycles = []
        self.events = []
        self.bench = Lockstep(self.emulator, self.link, self._poll, tick_s=TICK)

    def _poll(self, now):
        cycles = self.reader.poll(now)
        self.cycles += cycles
        self.events += self.reader.drain_link_events()
        return cycles

    def place(self, uid: str, antenna: int) -> None:
        self.field.place(uid, f"zone{antenna}")

    def wait(self, condition, timeout: float = 10.0) -> None:
        assert self.bench.run_until(condition, timeout), "condition not met in time"

    def wait_cycles(self, count: int, timeout: float = 20.0) -> list:
        target = len(self.cycles) + count
        self.wait(lambda: len(self.cycles) >= target, timeout)
        return self.cycles[target - count:target]

    def kinds(self) -> list[str]:
        return [event.kind for event in self.events]

    def close(self):
        self.link.close()
        self.emulator.close()


def reads(cycle) -> dict[int, set[str]]:
    out: dict[int, set[str]] = {}
    for read in cycle.reads:
        out.setdefault(read.antenna, set()).add(read.uid)
    return out


@pytest.fixture
def make_table(tmp_path):
    tables = []

    def make(*args, **kwargs):
        table = Table(tmp_path, *args, **kwargs)
        tables.append(table)
        return table

    yield make
    for table in tables:
        table.close()


def test_handshake_then_passes_read_exactly_the_field(make_table):
    table = make_table(12)
    table.place("E004015000000001", 2)
    table.place("E004015000000002", 2)
    table.place("E004015000000003", 12)
    table.wait(lambda: table.link.is_up, 3)
    identity = table.link.identity
    assert (identity.serial, identity.antenna_count, identity.firmware_major, identity.firmware_minor) == (
        "ID ISC.MR102 1A2B3C4D", 12, 2, 10)
    first, second = table.wait_cycles(2)
    expected = {2: {"E004015000000001", "E004015000000002"}, 12: {"E004015000000003"}}
    assert reads(first) == expected and reads(second) == expected
    assert table.kinds()[:2] == ["up", "inventory_requested"]
    # The link's own frames: one per antenna, REQUESTED through the first pass, CYCLE_END on the last antenna.
    table.field.remove("E004015000000003")
    table.place("E004015000000003", 5)
    assert reads(table.wait_cycles(2)[-1]) == {2: expected[2], 5: {"E004015000000003"}}
    stats = table.link.stats
    assert stats.state == "up" and stats.connects == 1 and stats.frames_rejected == 0 and stats.retransmits == 0
    assert table.emulator.stats.rf_resets == table.emulator.stats.inventories  # every inventory after an RF reset


def test_inventory_frames_carry_requested_and_cycle_end(make_table):
    table = make_table(3)
    seen = []
    link_poll = table.link.poll

    def poll(now):  # what the link hands the HAL, as it hands it
        events = link_poll(now)
        seen.extend(event.message for event in events if event.kind == "inventory")
        return events

    table.link.poll = poll
    table.wait(lambda: sum(1 for m in seen if m.flags & InventoryFlag.CYCLE_END) >= 2, 5)
    first_pass = [m for m in seen if m.cycle == seen[0].cycle]
    assert [m.antenna for m in first_pass] == [0, 1, 2]
    assert all(m.flags & InventoryFlag.REQUESTED for m in first_pass)
    assert [bool(m.flags & InventoryFlag.CYCLE_END) for m in first_pass] == [False, False, True]
    later = [m for m in seen if m.cycle != seen[0].cycle]
    assert later and not any(m.flags & InventoryFlag.REQUESTED for m in later)


def test_cascaded_multiplexers(make_table):
    channels = ["1.1.1", "1.1.8", "1.3.2", "1.3.7", "2.4", "3"]
    table = make_table(6, channels, outputs=3)
    uids = {n: f"E0040150000000{n:02X}" for n in range(1, 7)}
    for antenna, uid in uids.items():
        table.place(uid, antenna)
    table.place("E004015000000099", 4)
    table.wait(lambda: table.link.is_up, 3)
    cycle = table.wait_cycles(2)[-1]
    assert reads(cycle) == {n: {uid} for n, uid in uids.items()} | {4: {uids[4], "E004015000000099"}}
    assert table.emulator.stats.fu_commands >= 8  # level 1 and 2 selects, and the detection of 4 multiplexers


def test_quiet_tags_are_woken_every_pass(make_table):
    # One antenna: nothing ever switches, so only the RF reset wakes a tag the previous inventory made quiet.
    table = make_table(1)
    table.place("E004015000000001", 1)
    for cycle in table.wait_cycles(4, 10):
        assert reads(cycle) == {1: {"E004015000000001"}}


def test_a_card_across_two_antennas_is_reported_on_both_every_pass(make_table):
    table = make_table(2)
    table.place("E004015000000001", 1)
    table.field._tags_on[("main", 2)].append("E004015000000001")  # it lies across both zones' antennas
    for cycle in table.wait_cycles(3, 10):
        assert reads(cycle) == {1: {"E004015000000001"}, 2: {"E004015000000001"}}


def test_more_data_0x94_brings_every_tag(make_table):
    table = make_table(2, tx_buffer=64)  # two data sets an answer
    uids = {f"E00401500000{n:04X}" for n in range(7)}
    for uid in uids:
        table.place(uid, 2)
    cycle = table.wait_cycles(2)[-1]
    assert reads(cycle) == {2: uids}
    assert table.emulator.stats.statuses["0x94"] >= 6 and table.emulator.stats.more_requests >= 6


def test_a_pot_of_250_chips_takes_its_time_and_the_link_stays_up(make_table):
    """An inventory answers once every tag has: 250 chips take about 3.5 s before the answer's first byte, longer
    than the 2 s any other answer may take. The link waits for it, and the pot is read whole."""
    table = make_table(2)
    chips = {f"E004015000D1{n:04X}" for n in range(250)}
    for uid in chips:
        table.place(uid, 2)
    cycle = table.wait_cycles(2, timeout=30)[-1]
    assert reads(cycle) == {2: chips}
    assert not [e for e in table.events if e.kind == "down"], [e.reason for e in table.events if e.kind == "down"]


def test_antenna_faults_become_events_and_clear(make_table):
    table = make_table(5)
    for antenna in range(1, 6):
        table.place(f"E0040150000000{antenna:02X}", antenna)
    table.wait_cycles(1)
    for antenna, kind in ((1, "open"), (2, "short"), (3, "detuned"), (4, "noise")):
        table.emulator.antenna_fault(antenna, kind)
    cycle = table.wait_cycles(2)[-1]
    faults = {e.message.antenna: (e.message.fault, e.message.detail & 0xFF) for e in table.events
              if e.kind == "antenna_fault"}
    assert faults[0][0] == FaultCode.OPEN and faults[1][0] == FaultCode.OVERCURRENT  # a short draws DC current
    assert faults[2][0] == FaultCode.TUNING and faults[3] == (FaultCode.TUNING, 0x83)
    assert table.reader.faulted_antennas == {1, 2, 3, 4}
    # Unknown is not empty: the faulted antennas keep their last reads, the good one reads on.
    assert reads(cycle) == {n: {f"E0040150000000{n:02X}"} for n in range(1, 6)}
    assert sum(1 for e in table.events if e.kind == "antenna_fault") == 4  # once each, not every pass
    for antenna in range(1, 5):
        table.emulator.antenna_fault(antenna, None)
    table.wait_cycles(2)
    cleared = [e.message.antenna for e in table.events if e.kind == "antenna_fault"
               and e.message.fault == FaultCode.CLEARED]
    assert sorted(cleared) == [0, 1, 2, 3] and table.reader.faulted_antennas == set()


def test_a_multiplexer_lost_while_up_faults_its_antennas(make_table):
    table = make_table(10)  # 1.1.1 ... 1.1.8, 1.2.1, 1.2.2
    table.place("E004015000000001", 9)
    table.wait_cycles(1)
    table.emulator.remove_multiplexer(1, (2,))
    table.wait_cycles(2)
    faulted = {e.message.antenna for e in table.events if e.kind == "antenna_fault"}
    assert faulted == {8, 9} and all(e.message.fault == FaultCode.OPEN for e in table.events
                                     if e.kind == "antenna_fault")


@pytest.mark.parametrize("status, words", [(0x13, "login"), (0x82, "command not available"), (0x11, "parameter")])
def test_a_reader_that_refuses_inventories_is_incompatible_and_retried(make_table, status, words):
    table = make_table(2)
    table.wait(lambda: table.link.is_up, 3)
    table.emulator.inject_status(0xB0, status, count=1000)
    table.wait(lambda: table.link.stats.refused is not None, 3)
    refused = table.link.stats.refused
    assert f"0x{status:02X}" in refused and words in refused
    assert "down" in table.kinds() and "incompatible" in table.kinds()
    retry_at = table.link.next_attempt_at
    assert retry_at == pytest.approx(table.bench.now + 1.0, abs=0.01)


def test_another_status_fails_the_command_and_holds_the_antenna(make_table):
    table = make_table(2)
    table.place("E004015000000001", 1)
    table.wait_cycles(1)
    table.emulator.inject_status(0xB0, 0x05, count=1)  # wrong transponder type: not expected of an inventory
    table.wait_cycles(2)
    failed = [e for e in table.events if e.kind == "command_failed"]
    assert len(failed) == 1 and "0x05" in failed[0].reason
    assert [e.message.fault for e in table.events if e.kind == "antenna_fault"] == [FaultCode.TUNING,
                                                                                   FaultCode.CLEARED]
    assert table.link.stats.commands_failed == 1 and table.link.is_up


def test_damaged_answers_are_asked_again_without_losing_a_tag(make_table):
    table = make_table(3)
    table.place("E004015000000001", 2)
    table.wait_cycles(1)
    table.emulator.corrupt_answers(2)
    for cycle in table.wait_cycles(2):
        assert reads(cycle) == {2: {"E004015000000001"}}
    stats = table.link.stats
    assert stats.crc_errors + stats.runts >= 1 and stats.retransmits == 2
    assert table.kinds().count("up") == 1 and "down" not in table.kinds()
    # Three in a row: the line is bad, the link goes down and comes back.
    table.emulator.corrupt_answers(3)
    table.wait(lambda: table.kinds().count("up") == 2, 3)
    assert "damaged answers" in next(e.reason for e in table.events if e.kind == "down")
    assert reads(table.wait_cycles(2)[-1]) == {2: {"E004015000000001"}}


def test_unplug_then_replug_goes_down_then_up(make_table):
    table = make_table(2)
    table.place("E004015000000001", 1)
    table.wait_cycles(1)
    table.emulator.unplug()
    table.wait(lambda: not table.link.is_up, 1)
    assert "down" in table.kinds()
    table.bench.run(0.5)
    table.emulator.replug()
    table.wait(lambda: table.link.is_up, 5)
    assert reads(table.wait_cycles(2)[-1]) == {1: {"E004015000000001"}}
    assert table.kinds().count("up") == 2 and table.link.stats.reconnects == 1


def test_a_silent_reader_goes_down_after_two_seconds(make_table):
    table = make_table(2)
    table.wait_cycles(1)
    muted_at = table.bench.now
    table.emulator.mute(3.0)
    table.wait(lambda: "down" in table.kinds(), 3)
    down = next(e for e in table.events if e.kind == "down")
    assert 2.0 - 1e-6 <= down.t - muted_at <= 2.2 and "no answer" in down.reason
    table.wait(lambda: table.kinds().count("up") == 2, 10)
    assert "connect_failed" in table.kinds()  # the first attempt met the still silent reader


def test_a_wrong_device_is_incompatible_and_retried(tmp_path):
    other = FirmwareEmulator(TableField({}), antenna_count=2, link_path=tmp_path / "not-feig")
    link = FeigLink(lambda: FeigSerialTransport(other.path), name="main", channels=default_channels(2))
    bench = Lockstep(other, link, tick_s=0.005)
    try:
        assert bench.run_until(lambda: any(e.kind == "incompatible" for e in bench.outputs), 3)
        first = next(e for e in bench.outputs if e.kind == "incompatible")
        assert "not in Feig's ISO-host protocol" in first.reason and link.stats.refused == first.reason
        assert link.next_attempt_at == pytest.approx(bench.now + 1.0, abs=0.01)
        assert bench.run_until(lambda: sum(e.kind == "incompatible" for e in bench.outputs) == 2, 6)
        assert link.next_attempt_at == pytest.approx(bench.now + 2.0, abs=0.01)
        assert not any(e.kind == "up" for e in bench.outputs)
    finally:
        link.close()
        other.close()


def test_a_reader_without_the_configured_multiplexers_is_incompatible(make_table):
    table = make_table(1, ["1"], link_channels=["1.1", "1.2"])
    table.wait(lambda: table.link.stats.refused is not None, 3)
    refused = table.link.stats.refused
    assert "no ID ISC.ANT.MUX answers at reader output 1" in refused and "1.1, 1.2" in refused
    assert "up" not in table.kinds()


def _pass_model(channels: list[Channel], tags: dict[int, int]) -> float:
    total, state = command_time("diagnostic"), {}
    for index, channel in enumerate(channels):
        for level, out in enumerate(channel.path, start=1):
            key = channel.path[:level - 1]
            if state.get(key) != out:
                total += command_time("select")
                state[key] = out
        total += command_time("reset") + command_time("inventory", tags.get(index + 1, 0))
    return total


@pytest.mark.parametrize("antennas", [12, 25])
def test_pass_time_is_the_documented_model(make_table, antennas):
    table = make_table(antennas)
    tags = {2: 2, antennas: 1}
    for antenna, count in tags.items():
        for n in range(count):
            table.place(f"E0040150{antenna:04X}{n:04X}", antenna)
    table.wait_cycles(3, 30)
    ends = [cycle.t for cycle in table.cycles]  # the HAL stamps a cycle when its last antenna's frame arrives
    measured = ends[-1] - ends[-2]
    model = _pass_model(default_channels(antennas), tags)
    # Each step's answer is taken at the next tick of the virtual clock: at most one tick a step.
    steps = 4 * antennas + 1
    assert model <= measured <= model + steps * TICK
