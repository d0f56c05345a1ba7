"""PARK (protocol 1.2, docs/protocol.md 6.13): the reader firmware, in MicroPython on the modelled board, holds a
front end on one antenna with its field on. Its first visit reads the stack whole and quiets it; each round after
reports only the tags put down since (INVENTORY flag QUIET); a whole reading every ``full_every_ms`` finds a tag
taken away; the front end's other antennas wait, the other front end scans on. Then the host's side: the
FirmwareReader carries the waiting antennas (no tag leaves them) and hands on the parked stack as it grows."""

import time

import pytest

from firmware_bridge.messages import (NO_ANTENNA, Ack, AckResult, Capability, Identify, IdentifyReply, Inventory,
                                      InventoryFlag, Park, ScheduleSlot, SetSchedule)
from controller.game import GameController
from hal.firmware_reader import serial_reader
from hal.pn5180_reader import dwell_schedule
from hal.zones import DebounceSettings, ZoneTracker
from micropython_runtime import requires_micropython
from rfid_table.config.table import load_config
from rfid_table.package_data import CONFIG_DIR
from rfid_table.service.diagnostics import DiagnosticsCollector
from rfid_table.service.intake import CARD_FREE_S, CARD_PARK_S, ReaderIntake
from sim.field import TableField
from sim.pn5180 import (ModelledReader, firmware_config, parked_push_air_s, parked_visit_air_s, round_air_s,
                        table_firmware_config)
from test_firmware_protocol import Field, Host

pytestmark = requires_micropython

STACK = [0xE004_0000_0000_1000 + n for n in range(10)]
NEIGHBOUR = [0xE004_0000_0000_2000 + n for n in range(3)]  # on antenna 1: the parked front end's other antenna
OTHER_FE = [0xE004_0000_0000_3000 + n for n in range(2)]  # on antenna 2: the other front end


def uids(inventory):
    return {int.from_bytes(entry.uid, "big") for entry in inventory.entries}


@pytest.fixture
def parked(tmp_path, request):
    field = Field()
    field.tags = {1: list(STACK), 2: list(NEIGHBOUR), 3: list(OTHER_FE)}
    device = ModelledReader(field, config=firmware_config([2, 2], [(0, 200), (1, 25), (2, 25), (3, 25)]),
                            link_path=tmp_path / "reader", missed_answer=getattr(request, "param", 0.0))
    host = Host(device.path)
    yield device, host, field
    host.port.close()
    device.close()


def test_a_parked_antenna_reports_only_the_tags_put_down_since_and_a_tag_taken_away_within_the_period(parked):
    device, host, field = parked
    host.send(Identify(0))
    reply = host.wait_for(lambda m: isinstance(m, IdentifyReply), 5)
    assert (reply.protocol_major, reply.protocol_minor) == (1, 2)
    assert reply.capabilities & Capability.PARK
    assert host.answer(host.send(Park(1, 4, 500)) or 1).result == AckResult.INVALID_ARGUMENT  # no antenna 4
    assert host.answer(host.send(Park(2, 0, 0)) or 2).result == AckResult.INVALID_ARGUMENT  # no period
    assert host.answer(host.send(Park(3, 0, 400)) or 3).result == AckResult.OK

    def parked_report(predicate=lambda m: True, timeout=3.0):
        return host.wait_for(lambda m: isinstance(m, Inventory) and m.antenna == 0 and predicate(m), timeout)

    whole = parked_report(lambda m: not m.flags & InventoryFlag.QUIET)
    assert uids(whole) == set(STACK)  # read whole once, then quiet
    quiet = parked_report(lambda m: m.flags & InventoryFlag.QUIET)
    assert uids(quiet) == set()
    since = len(host.received)
    new = [0xE004_0000_0000_1100 + n for n in range(3)]
    field.tags[1] += new
    grown = parked_report(lambda m: m.flags & InventoryFlag.QUIET and m.entries)
    assert uids(grown) == set(new)  # the new tags alone answer a round
    # the other front end scans on; the parked front end's other antenna waits
    assert host.wait_for(lambda m: isinstance(m, Inventory) and m.antenna == 2)
    seen = [m for _, m in host.received[since:] if isinstance(m, Inventory)]
    assert {m.antenna for m in seen} <= {0, 2, 3}

    def whole_reading():
        """The tags of the next whole reading: a report without QUIET, and those that go on with it (UNRESOLVED)."""
        report = parked_report(lambda m: not m.flags & InventoryFlag.QUIET)
        read = uids(report)
        while report.flags & InventoryFlag.UNRESOLVED:
            report = parked_report()
            read |= uids(report)
        return read

    field.tags[1].remove(STACK[0])  # a chip taken away: the whole reading after the next, at the latest, lacks it
    taken_at = time.monotonic()
    readings = [whole_reading(), whole_reading()]
    assert readings[-1] == set(STACK[1:] + new)
    assert readings[0] in (readings[1], readings[1] | {STACK[0]})  # (the first may have begun before)
    assert time.monotonic() - taken_at < 3.0  # twice 400 ms and the readings, in the unix port on a loaded machine
    assert host.answer(host.send(Park(4, NO_ANTENNA, 0)) or 4).result == AckResult.OK
    assert uids(host.wait_for(lambda m: isinstance(m, Inventory) and m.antenna == 1, 3)) == set(NEIGHBOUR)
    back: set[int] = set()  # scanned as any antenna again: read whole, in turns maybe, no round QUIET
    while back != set(STACK[1:] + new):
        report = parked_report(timeout=3.0)
        assert not report.flags & InventoryFlag.QUIET
        back |= uids(report)


def test_a_push_is_read_to_its_end_and_still_before_the_stack_is_read_whole_again(tmp_path):
    """A push of 20 chips lands as the next whole reading of the parked stack falls due (read whole every second;
    pushed 0.8 s after a whole reading ended): it is read in a quiet round, and two quiet visits with nothing new
    follow (the host's still readings) before the stack is woken and read whole again."""
    field = Field()
    field.tags = {1: list(STACK), 2: list(NEIGHBOUR), 3: list(OTHER_FE)}
    device = ModelledReader(field, config=firmware_config([2, 2], [(0, 400), (1, 25), (2, 25), (3, 25)]),
                            link_path=tmp_path / "reader")
    host = Host(device.path)
    try:
        assert host.answer(host.send(Park(1, 0, 1000)) or 1).result == AckResult.OK

        def parked_report(predicate=lambda m: True, timeout=3.0):
            return host.wait_for(lambda m: isinstance(m, Inventory) and m.antenna == 0 and predicate(m), timeout)

        for attempt in range(3):  # (a loaded machine may begin the whole reading before the push lands)
            parked_report(lambda m: not m.flags & InventoryFlag.QUIET)  # a whole reading ends
            time.sleep(0.8)
            new = [0xE004_0000_0000_1400 + 100 * attempt + n for n in range(20)]
            field.tags[1] += new
            grown = parked_report(lambda m: bool(uids(m) & set(new)))
            if grown.flags & InventoryFlag.QUIET and uids(grown) == set(new):
                break
            field.tags[1] = list(STACK)
        since = len(host.received)
        parked_report(lambda m: not m.flags & InventoryFlag.QUIET)
        after = [m for _, m in host.received[since:] if isinstance(m, Inventory) and m.antenna == 0]
        assert [(bool(m.flags & InventoryFlag.QUIET), len(m.entries)) for m in after[:2]] == [(True, 0), (True, 0)]
        assert not after[2].flags & InventoryFlag.QUIET  # (in turns, maybe: UNRESOLVED)
    finally:
        host.port.close()
        device.close()


def parked_for_good(device, host):
    """Antenna 0 parked with no whole reading to come (every 65 s), once its stack read whole is quiet: the parked
    front end's model (it visits antenna 0 and nothing else), and a wait for its next quiet report."""
    assert host.answer(host.send(Park(1, 0, 65535)) or 1).result == AckResult.OK

    def quiet_report(predicate=lambda m: True):
        return host.wait_for(lambda m: isinstance(m, Inventory) and m.antenna == 0
                             and m.flags & InventoryFlag.QUIET and predicate(m), 5)

    quiet_report()  # the first quiet visit (it tells the stack read whole to stay quiet)
    quiet_report()  # each visit now a round of one slot
    return device.board.chips[0], quiet_report


def test_a_quiet_visit_that_finds_nothing_new_is_a_round_of_one_slot(parked):
    """Between a parked stack's whole readings each visit is one round of one slot (2 ms of air, where a 16-slot
    round is 10): a push there is seen that much sooner. Then one new tag is read in that slot, alone."""
    device, host, field = parked
    chip, quiet_report = parked_for_good(device, host)
    since, air_before = len(host.received), chip.air_s
    quiet_report(lambda m: len([n for _, n in host.received[since:] if isinstance(n, Inventory)
                                and n.antenna == 0]) >= 20)
    visits = len([m for _, m in host.received[since:] if isinstance(m, Inventory) and m.antenna == 0])
    per_visit = (chip.air_s - air_before) / visits  # (a visit under way as the air is read: one visit at most)
    assert per_visit == pytest.approx(parked_visit_air_s(0), rel=0.1)
    assert per_visit < round_air_s(0) / 3
    new = 0xE004_0000_0000_1100
    field.tags[1].append(new)
    assert uids(quiet_report(lambda m: bool(m.entries))) == {new}


def test_a_push_onto_the_parked_stack_costs_the_air_the_felt_bench_takes_as_its_floor(parked):
    """A push of 20 chips onto the parked stack: the air from its landing to the second quiet visit with nothing new
    after it (the host's still readings) is what ``sim.pn5180.parked_push_air_s`` says for those UIDs, the floor of
    a bet in the felt bench: the round of one slot where they collide, the 16-slot rounds that read them, the 20
    told to stay quiet, two rounds of one slot nobody answers."""
    device, host, field = parked
    chip, quiet_report = parked_for_good(device, host)
    new = [0xE004_0000_0000_1500 + 0x1_0001 * n for n in range(20)]
    air_before = chip.air_s
    field.tags[1] += new
    read: set[int] = set()
    while read != set(new):  # (the visit under way as they land reads nothing, or all of them)
        read |= uids(quiet_report(lambda m: bool(m.entries)))
    assert [uids(quiet_report()) for _ in range(2)] == [set(), set()]
    air = chip.air_s - air_before
    reading, still = parked_push_air_s(new)
    assert reading > still > 20 * 0.0037  # (each Stay Quiet is a frame of 3.7 ms)
    # a visit under way as the push lands and as the air is read, one or two at most
    assert reading + still <= air <= reading + still + 3 * parked_visit_air_s(0)


def test_a_front_end_leaves_the_spi_bus_alone_while_the_air_says_nothing_can_have_come(parked):
    """The two front ends share the board's SPI bus and the Pico's CPU. While a front end's frame is on the air and
    t1 passes, and while a tag's answer whose SOF it saw is still coming, its IRQ status can hold nothing new: the
    firmware first reads it after, and the other front end has the bus meanwhile. Over a stack read whole, a push
    of 20 read, told to stay quiet and seen still, and the other front end's passes: not one such read."""
    device, host, field = parked
    _chip, quiet_report = parked_for_good(device, host)
    new = [0xE004_0000_0000_1600 + 0x1_0001 * n for n in range(20)]
    field.tags[1] += new
    read: set[int] = set()
    while read != set(new):
        read |= uids(quiet_report(lambda m: bool(m.entries)))
    assert [uids(quiet_report()) for _ in range(2)] == [set(), set()]
    host.wait_for(lambda m: isinstance(m, Inventory) and m.antenna == 3, 5)  # the other front end read too
    assert [chip.polls_on_air for chip in device.board.chips] == [0, 0]


@pytest.mark.parametrize("parked", [0.05], indirect=True, ids=["noise 0.05"])
def test_the_host_carries_the_waiting_antennas_and_hands_on_the_parked_stack_as_it_grows(parked):
    """At RF noise 0.05 (a tag's answer lost once in 20): every tag arrives once, and the one taken away alone
    leaves."""
    device, _host, field = parked
    _host.port.close()
    reader = serial_reader("chips", device.path, antennas=4, dwells=[200, 25, 25, 25], front_ends=[2, 2],
                           park_every_ms=300)
    zones = {("chips", 1): "seat1.bets", ("chips", 2): "seat2.bets", ("chips", 3): "seat3.bets",
             ("chips", 4): "seat4.bets"}
    tracker = ZoneTracker(zones, default=DebounceSettings(absent_after_s=1.0, absent_after_cycles=3))  # the chips'
    events = []

    def run(until, timeout=6.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            now = time.monotonic()
            for cycle in reader.poll(now):
                events.extend(tracker.feed(cycle))
            for visit in reader.take_early_reads():
                events.extend(tracker.feed_antenna("chips", visit.antenna, visit.reads, visit.t, visit.whole))
            watched = reader.link.is_up and len(events) >= 15
            reader.watch_antennas({1} if watched else set(), 1 if watched else None)
            if until():
                return
            time.sleep(0.002)
        raise AssertionError(f"not within {timeout} s: {events[-5:]}")

    def hexes(values):
        return {f"{v:016X}" for v in values}

    try:
        run(lambda: len(events) >= 15)  # the table at rest: 10 + 3 + 2 arrived
        assert {e.uid for e in events if e.kind == "arrived"} == hexes(STACK + NEIGHBOUR + OTHER_FE)
        run(lambda: reader.parked == 1)
        settled = len(events)
        new = [0xE004_0000_0000_1200 + n for n in range(20)]  # a push of twenty
        field.tags[1] += new
        pushed_at = time.monotonic()
        run(lambda: hexes(new) <= {e.uid for e in events[settled:] if e.kind == "arrived"})
        pushed_s = time.monotonic() - pushed_at
        field.tags[1].remove(STACK[0])
        run(lambda: any(e.kind == "left" for e in events[settled:]))
        assert [(e.kind, e.zone, e.uid) for e in events[settled:] if e.kind == "left"] == \
            [("left", "seat1.bets", f"{STACK[0]:016X}")]  # nothing left the waiting antenna 2
        arrived = [e.uid for e in events if e.kind == "arrived"]
        assert sorted(arrived) == sorted(hexes(STACK + NEIGHBOUR + OTHER_FE + new))  # each once
        assert pushed_s < 3.0
    finally:
        reader.close()


def test_the_cards_reader_parks_on_the_next_seat_and_still_sees_a_card_pitched_elsewhere(tmp_path):
    """The daemon's intake parks the cards reader on the next seat in the dealing order (between hands: the next
    hand's first seat). A card pitched to another seat on the parked front end is read all the same: a park that
    has not got its card for CARD_PARK_S gives way to the schedule for CARD_FREE_S. The card then dealt to the
    next seat is read while the reader is parked there."""
    config = load_config(str(CONFIG_DIR / "table-chips.toml"))
    main = config.readers["main"]
    field = TableField(config.zones)
    device = ModelledReader(field, reader="main", config=table_firmware_config(config, "main", main.antennas),
                            link_path=tmp_path / "reader-main")
    reader = serial_reader("main", device.path, antennas=main.antennas, cycle_s=main.cycle_s,
                           dwells=dwell_schedule(config.zones, "main", main.antennas), front_ends=[8, 8],
                           park_every_ms=500)
    tracker = ZoneTracker(config.antenna_zones(), config.debounce_by_zone())
    controller = GameController(config.table_setup(), config.betting_setup(), config.audit_hands)
    intake = ReaderIntake([reader], tracker, DiagnosticsCollector(), config.zones)
    events: list = []
    parked: set = set()  # the antennas the reader was parked on

    def run(until, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            now = time.monotonic()
            intake.expect(controller, now)
            for item in intake.take(now):
                events.extend(item.apply(controller))
            parked.add(reader.parked)
            if until():
                return time.monotonic()
            time.sleep(0.002)
        raise AssertionError(f"not within {timeout} s: parked on {parked}, {[e.type for e in events[-5:]]}")

    deck = iter(config.decks[config.active_deck])
    try:
        run(lambda: reader.link.is_up, 10)
        for command in ({"command": "seats", "seats": list(range(1, 11))}, {"command": "set_button", "seat": 10}):
            events.extend(controller.handle_command({**command, "role": "floor", "user": "test"},
                                                    time.monotonic())[0])
        run(lambda: reader.parked == 1, 5)  # seat 1's cards (antenna 1) get the hand's first card
        since = reader.cycles_emitted  # (the first pass after connecting is a REQUEST_INVENTORY's: every antenna)
        run(lambda: reader.cycles_emitted >= since + 2, 5)
        stray = next(deck)
        field.place(stray, "seat3.cards")  # antenna 3, on the parked front end
        pitched = time.monotonic()
        seen = run(lambda: stray in tracker.present()["seat3.cards"], CARD_PARK_S + CARD_FREE_S + 6)
        # not on the pass under way: the front end scanned seat 1 alone until the park gave way
        assert seen - pitched > 0.5
        run(lambda: reader.parked is not None, CARD_PARK_S + CARD_FREE_S + 2)
        expected = reader.parked
        card = next(deck)
        field.place(card, f"seat{expected}.cards")  # (config/table-chips.toml: seat N's cards on antenna N)
        run(lambda: card in tracker.present()[f"seat{expected}.cards"], 5)
        assert reader.parked == expected  # read there while parked (the park moves on from the next step)
    finally:
        reader.close()
        device.close()
