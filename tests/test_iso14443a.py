"""ISO 14443-A cards (NTAG21x, MIFARE Ultralight) read by the reader firmware (firmware/iso14443a.py) running unmodified
in the MicroPython unix port on the modelled PN5180 and its tags (sim/pn5180.py), seen from the host's side of the
USB link as the table sees them: every card on an antenna, two to a muck of 40, whatever bits their UIDs share;
antennas of both standards on one front end; the UID as the deck registry writes it."""

import random
import time

import pytest
import serial

from firmware_bridge.codec import FrameDecoder
from firmware_bridge.messages import Identify, IdentifyReply, Inventory, TagTechnology, encode_message
from hal.firmware_reader import serial_reader
from micropython_runtime import requires_micropython
from rfid_table.devtools.bench_reader import CARD, measure_dwell, ntag_uids, report_lines
from sim.pn5180 import ModelledReader, firmware_config

pytestmark = requires_micropython


def ntags(count: int, seed: int) -> list[str]:
    """7-byte UIDs as NXP's NTAG21x have them: 04, then six serial bytes (never 88 fourth: ISO/IEC 14443-3)."""
    rng = random.Random(seed)
    uids: set[str] = set()
    while len(uids) < count:
        serial_bytes = bytes(rng.randrange(256) for _ in range(6))
        if serial_bytes[2] != 0x88:
            uids.add("04" + serial_bytes.hex().upper())
    return sorted(uids)


def flipped(uid: str, bit: int) -> str:
    """``uid`` with one bit changed: bit 0 is the first the tag sends (byte 0's least significant)."""
    data = bytearray(bytes.fromhex(uid))
    data[bit // 8] ^= 1 << (bit % 8)
    return data.hex().upper()


class Field:
    def __init__(self, tags):
        self.tags = tags  # configuration antenna number (from 1) -> UIDs

    def tags_on(self, reader, antenna):
        return self.tags.get(antenna, [])


class Host:
    """The host end of the USB link: what each antenna reported, by dwell."""

    def __init__(self, path):
        self.port = serial.Serial(path, timeout=0)
        self.decoder = FrameDecoder()
        self.messages = []

    def wait_for(self, done, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.messages += self.decoder.feed(self.port.read(8192))
            if done():
                return
            time.sleep(0.002)
        raise AssertionError(f"not within {timeout} s; last: {self.messages[-4:]}")

    def dwells(self, antenna):
        """Each report of ``antenna``: its UIDs as the host names them (hex, capitals) and their read counts."""
        return [{e.uid.hex().upper(): e.read_count for e in m.entries}
                for m in self.messages if isinstance(m, Inventory) and m.antenna == antenna]

    def close(self):
        self.port.close()


@pytest.fixture
def reader(tmp_path):
    opened = []

    def open_reader(tags, frontends, standards, dwell_ms=2000):
        # A dwell ends as soon as its antenna is read whole: a long one only lets the unix port, slower than the
        # Pico at every SPI frame, read a muck in one.
        antennas = sum(frontends)
        field = tags if hasattr(tags, "tags_on") else Field(tags)
        device = ModelledReader(field, config=firmware_config(frontends, [(a, dwell_ms) for a in range(antennas)],
                                                              standards),
                                link_path=tmp_path / f"reader-{len(opened)}")
        host = Host(device.path)
        opened.append((device, host))
        return device, host

    yield open_reader
    for device, host in opened:
        host.close()
        device.close()


def test_every_card_on_an_antenna_is_read_alone_two_ten_and_a_40_card_muck(reader):
    mixed = ["1A2B3C4D", "04A1B2C3D4E5F6", "04A1B2C3D4E576", "04A1B233445566", "0403884A1B2C3D4E5F60", "77665544"]
    tags = {1: ntags(1, 1), 2: ntags(2, 2), 3: ntags(10, 3), 4: ntags(40, 4), 5: sorted(mixed), 6: []}
    device, host = reader(tags, [4, 2], "iso14443a")
    # Each antenna's report holds every card on it, once each, named as the deck registry names it; the empty
    # antenna says so.
    host.wait_for(lambda: all(tags[a + 1] == sorted(d) for a in range(6) for d in host.dwells(a)[-1:])
                  and all(host.dwells(a) for a in range(6)), 20)
    for antenna in range(6):
        last = host.dwells(antenna)[-1]
        assert sorted(last) == tags[antenna + 1] and set(last.values()) <= {1}, device.firmware_log()[-2000:]
    # The mixed antenna: UIDs of 4, 7 and 10 bytes (their ATQAs collide too), three 7-byte UIDs sharing their first
    # level, two of them all but their last bit.
    assert {len(uid) for uid in host.dwells(4)[-1]} == {8, 14, 20}


def test_a_collision_at_every_bit_of_a_cascade_level_is_resolved(reader):
    single = "1A2B3C4D"
    double = "04A1B210C3D4E5"
    tags = {
        1: sorted({single} | {flipped(single, bit) for bit in range(32)}),  # level 1, bits 0 to 31
        2: sorted({double} | {flipped(double, 24 + bit) for bit in range(32)}),  # one group; level 2, bits 0-31
        3: sorted({double} | {flipped(double, bit) for bit in range(24)}),  # level 1 after the cascade tag: 8-31
    }
    device, host = reader(tags, [3], "iso14443a")
    host.wait_for(lambda: all(host.dwells(a) and sorted(host.dwells(a)[-1]) == tags[a + 1] for a in range(3)), 20)
    # The PN5180 reported a collision at each bit of each level, and every one was resolved: all tags are read.
    collisions = device.board.chips[0].collisions
    assert {bit for level, bit in collisions if level == 1} == set(range(32))
    assert {bit for level, bit in collisions if level == 2} == set(range(32))


def test_a_muck_bigger_than_one_dwell_reads_is_read_whole_over_the_next_dwells(reader):
    muck = ntags(40, 5)
    _device, host = reader({1: muck}, [1], "iso14443a", dwell_ms=25)

    def whole():
        seen = set()
        for dwell in host.dwells(0):
            seen |= set(dwell)
        return seen == set(muck)

    host.wait_for(whole, 20)
    assert max(len(dwell) for dwell in host.dwells(0)) < 40  # no single 25 ms dwell read it all
    assert all(set(dwell) <= set(muck) for dwell in host.dwells(0))


def test_cards_picked_up_and_put_down_while_their_antenna_is_read_are_never_misread(reader):
    lying, moving = ntags(3, 8), ntags(3, 9)
    rng = random.Random(34)

    class Hovering(Field):
        def tags_on(self, reader, antenna):  # asked at every frame: the moving cards come and go between frames
            return lying + [uid for uid in moving if rng.random() < 0.5]

    _device, host = reader(Hovering({}), [1], "iso14443a")
    host.wait_for(lambda: len(host.dwells(0)) >= 40, 30)
    # A card that is there through the dwell is reported; a report names no card that was never there (a card
    # gone between the walk that found its first UID bytes and its SELECT is not read as a 4-byte UID).
    for dwell in host.dwells(0):
        assert set(lying) <= set(dwell) <= set(lying + moving)


def test_one_front_end_runs_iso15693_and_iso14443a_antennas_as_its_configuration_says(reader):
    vicinity = ["E0040150C3%06X" % n for n in range(1, 4)]
    proximity = ntags(3, 6)
    tags = {antenna: vicinity + proximity for antenna in range(1, 5)}
    device, host = reader(tags, [4], ["iso15693", "iso14443a", "iso14443a", "iso15693"], dwell_ms=100)
    host.port.write(encode_message(Identify(0, 1, 0)))
    host.wait_for(lambda: any(isinstance(m, IdentifyReply) for m in host.messages)
                  and all(len(host.dwells(a)) >= 2 for a in range(4)), 20)
    reply = next(m for m in host.messages if isinstance(m, IdentifyReply))
    assert reply.tag_technologies == TagTechnology.ISO15693 | TagTechnology.ISO14443A
    # Each antenna reads the tags of its own standard, every time; those of the other stay unseen.
    for antenna, wanted in ((0, vicinity), (1, proximity), (2, proximity), (3, vicinity)):
        assert [sorted(dwell) for dwell in host.dwells(antenna)] == [sorted(wanted)] * len(host.dwells(antenna))
    assert "iso14443a" in device.config["frontends"][0]["standard"]


def test_the_host_names_each_card_by_the_uid_the_deck_registry_has(reader):
    cards = ntags(5, 7)
    device, host = reader({1: cards[:2], 2: cards[2:]}, [2], "iso14443a", dwell_ms=50)
    host.close()  # the table's own reader backend opens the link instead
    backend = serial_reader("main", device.path, antennas=2, cycle_s=0.2)
    try:
        reads = {}
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and reads != {1: set(cards[:2]), 2: set(cards[2:])}:
            for cycle in backend.poll(time.monotonic()):
                reads = {}
                for read in cycle.reads:
                    reads.setdefault(read.antenna, set()).add(read.uid)
            time.sleep(0.01)
        assert reads == {1: set(cards[:2]), 2: set(cards[2:])}
    finally:
        backend.close()


def test_a_pin_map_naming_an_unknown_standard_stops_the_firmware_with_the_key_named(tmp_path):
    config = firmware_config([2], standards=["iso15693", "iso14443b"])
    device = ModelledReader(Field({}), config=config, link_path=tmp_path / "reader")
    try:
        deadline = time.monotonic() + 10
        while "standard" not in device.firmware_log() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "config.json: frontends[0].standard: 'iso14443b' is neither iso15693 nor iso14443a" \
            in device.firmware_log()
    finally:
        device.close()


def test_the_bench_gives_two_cards_of_each_standard_side_by_side_air_time_and_modelled():
    cards = {"iso15693": measure_dwell(CARD, 2, dwells=3), "iso14443a": measure_dwell(ntag_uids, 2, 3, "iso14443a")}
    vicinity, proximity = cards["iso15693"], cards["iso14443a"]
    assert vicinity["read_whole"] and proximity["read_whole"]
    # Two ISO 14443-A cards: 5.1 ms of field, then a few frames of about a millisecond; less air than ISO 15693's
    # 16-slot round, and the firmware only slower than the air (the two sampled over slightly different windows).
    assert 5.1 < proximity["air_ms"] < vicinity["air_ms"] and proximity["ms"] >= 0.8 * proximity["air_ms"]
    lines = report_lines({"dwell": {}, "table": {}, "arrival": {}, "cards": {"2 cards": cards}})
    assert "ISO 15693 air / unix port" in lines[1] and "ISO 14443-A air / unix port" in lines[1]
    assert f"{proximity['air_ms']:6.1f} / {proximity['ms']:6.1f} ms" in lines[2]
