"""The action clock (controller.clock, AC 23) and the seat lights it drives. Every time is given: no sleeping."""

import pytest

from controller.clock import ActionClock, ClockSettings
from controller.conduct import CHECK, HAND_DEAD, conduct_profile
from hal.gpio import GpioInputs, GpioOutputs, SimulatedGpio
from published import Published
from rfid_table.service.table_gpio import STATUS_PATTERNS, GpioConsole, TableLights, light_levels, show_lights
from sim.conduct import simulated_pin_map


def clock_for(settings: ClockSettings | None = None, seats: int = 6) -> tuple[ActionClock, Published]:
    """A clock on its own, and what it publishes."""
    published = Published()
    return ActionClock(settings, seats=seats, publish=published), published


def brief(events):
    return [(e.type, e.t, e.public.get("phase"), e.public.get("remaining_s")) for e in events]


def test_reasonable_time_then_the_minute_then_a_ten_second_count_then_the_hand_is_dead():
    clock, published = clock_for(ClockSettings(reasonable_s=30), seats=6)
    assert published.of(clock.turn(3, 100.0)) == []
    assert clock.phase(120.0) == "thinking" and published.of(clock.tick(120.0)) == []
    [due] = published.of(clock.tick(131.0))  # the reasonable time is up: the floor may call the clock
    assert (due.type, due.t, due.public["seat"], due.public["waited_s"]) == ("clock_due", 130.0, 3, 30.0)
    assert published.of(clock.tick(140.0)) == []  # told once; the clock waits for the floor
    [started] = published.of(clock.start(140.0, "floor/anna"))
    assert started.public == {"seat": 3, "by": "floor/anna", "minute_s": 60.0, "count_s": 10, "waited_s": 40.0,
                              "rule": conduct_profile("allin_club").cite("clock_ruling")}
    minute = published.of(clock.tick(199.5))
    assert brief(minute) == [("clock_tick", 140.0 + s, "minute", 60.0 - s) for s in (10, 20, 30, 40, 50)]
    count = published.of(clock.tick(209.5))
    assert brief(count) == [("clock_tick", 200.0 + s, "count", 10.0 - s) for s in range(10)]  # 10, 9, … 1
    [expired] = published.of(clock.tick(210.0))
    assert expired.type == "clock_expired" and expired.t == 210.0
    assert expired.public == {"seat": 3, "rule": conduct_profile("allin_club").cite("clock_ruling"),
                              "ruling": HAND_DEAD, "ruling_text": "the hand is dead", "needs_floor": False,
                              "profile": "allin_club", "started_by": "floor/anna", "facing_bet": None}
    assert expired.public["rule"].startswith("AC 23")
    assert published.of(clock.tick(300.0)) == [] and clock.phase(300.0) == "expired"


def test_a_late_tick_loses_nothing_and_keeps_the_order():
    clock, published = clock_for(ClockSettings(reasonable_s=20, auto_start=True), seats=6)
    clock.turn(1, 0.0)
    events = published.of(clock.tick(1000.0))
    assert [e.type for e in events] == ["clock_started"] + ["clock_tick"] * 15 + ["clock_expired"]
    assert [e.t for e in events] == sorted(e.t for e in events)
    assert events[0].public["by"] == "auto" and events[0].t == 20.0 and events[-1].t == 90.0


def test_auto_start_after_the_reasonable_time():
    clock, published = clock_for(ClockSettings(reasonable_s=15, auto_start=True), seats=6)
    clock.turn(2, 10.0)
    assert clock.lights(24.0)[2] == "on"
    [started] = published.of(clock.tick(25.0))
    assert (started.type, started.t, started.public["by"]) == ("clock_started", 25.0, "auto")
    assert clock.remaining(30.0) == 55.0


def test_the_floor_may_start_the_clock_before_the_reasonable_time_and_only_once():
    clock, published = clock_for(seats=6)
    assert clock.start_refusal(1.0) == "no player is to act: the clock starts on the player whose turn it is"
    clock.turn(4, 2.0)
    [started] = published.of(clock.start(5.0, "dealer/console"))
    assert started.public["waited_s"] == 3.0
    assert clock.start_refusal(6.0) == "the clock is already running on seat 4"
    clock.tick(100.0)
    assert clock.start_refusal(100.0) == "the clock on seat 4 has run out"


def test_acting_stops_the_clock_and_the_next_turn_starts_afresh():
    clock, published = clock_for(seats=6)
    clock.turn(1, 0.0)
    clock.start(10.0, "floor/anna")
    clock.tick(45.0)
    assert [e.type for e in published.of()] == ["clock_started"] + ["clock_tick"] * 3  # at 20, 30 and 40 s
    [stopped] = published.of(clock.turn(2, 47.5))
    assert stopped.public == {"seat": 1, "reason": "acted", "phase": "minute", "remaining_s": 22.5}
    assert clock.seat == 2 and clock.phase(48.0) == "thinking"
    assert published.of(clock.turn(None, 50.0)) == []  # not running: nothing to stop
    assert clock.phase(500.0) == "idle" and published.of(clock.tick(500.0)) == []


def test_the_floor_stops_the_clock_and_it_does_not_restart_by_itself():
    clock, published = clock_for(ClockSettings(auto_start=True, reasonable_s=10), seats=6)
    clock.turn(5, 0.0)
    assert [e.type for e in published.of(clock.tick(12.0))] == ["clock_started"]  # by itself at 10 s
    tick, stopped = published.of(clock.stop(20.0, "floor/anna"))  # the tick due at 20 s comes first
    assert (tick.type, tick.public["remaining_s"]) == ("clock_tick", 50.0)
    assert (stopped.public["reason"], stopped.public["by"]) == ("floor", "floor/anna")
    assert published.of(clock.tick(100.0)) == [] and clock.phase(100.0) == "thinking"
    assert clock.stop_refusal(101.0) == "the clock is not running"


def test_a_time_bank_extends_the_minute_and_interrupts_the_count():
    clock, published = clock_for(ClockSettings(time_bank_s=30, time_banks=2), seats=6)
    clock.turn(6, 0.0)
    assert clock.time_bank_refusal(6, 5.0) == "the clock is not running: no time bank is needed yet"
    assert [e.type for e in published.of(clock.start(10.0, "floor/anna"))] == ["clock_started"]
    assert clock.time_bank_refusal(2, 20.0) == "it is not seat 2's turn (seat 6 is to act)"
    ticks = published.of(clock.tick(30.0))
    used = published.of(clock.time_bank(6, 30.0))
    assert [e.public["remaining_s"] for e in ticks] == [50.0, 40.0]
    assert used[-1].type == "time_bank_used"
    assert used[-1].public == {"seat": 6, "added_s": 30.0, "phase": "minute", "remaining_s": 70.0, "banks_left": 1,
                               "rule": "CA GR 5 (time bank cards)"}
    minute = published.of(clock.tick(99.0))
    assert [e.public["remaining_s"] for e in minute] == [60.0, 50.0, 40.0, 30.0, 20.0, 10.0]
    count = published.of(clock.tick(103.5))
    assert brief(count) == [("clock_tick", 100.0, "count", 10.0), ("clock_tick", 101.0, "count", 9.0),
                            ("clock_tick", 102.0, "count", 8.0), ("clock_tick", 103.0, "count", 7.0)]
    [used] = published.of(clock.time_bank(6, 103.5))  # in the count: 30 s before a new count
    assert (used.public["phase"], used.public["remaining_s"], used.public["banks_left"]) == ("count", 30.0, 0)
    assert clock.phase(104.0) == "minute" and clock.lights(104.0)[6] == "on"
    assert [e.t for e in published.of(clock.tick(133.4))] == [113.5, 123.5]
    assert clock.time_bank_refusal(6, 134.0) == "seat 6 has no time bank left"
    [expired] = published.of(clock.tick(143.5))[-1:]
    assert expired.type == "clock_expired"
    clock.reset_time_banks(6)
    assert clock.banks_left(6) == 2


def test_lights_on_for_the_player_to_act_and_blinking_in_the_count():
    clock, published = clock_for(ClockSettings(reasonable_s=10, auto_start=True), seats=4)
    assert clock.lights(0.0) == {1: "off", 2: "off", 3: "off", 4: "off"}
    clock.turn(2, 0.0)
    assert clock.lights(5.0) == {1: "off", 2: "on", 3: "off", 4: "off"}
    assert clock.lights(69.9)[2] == "on"
    assert clock.lights(70.0)[2] == "blink" and clock.lights(79.9)[2] == "blink"
    assert clock.lights(80.0)[2] == "off"  # expired: the hand is dead

    # the same on the pins: the seat light blinks at 1 Hz during the count
    pins = simulated_pin_map(4)
    backend = SimulatedGpio(pins)
    outputs = GpioOutputs(pins.outputs, backend, STATUS_PATTERNS)
    lit = []
    for t in (69.0, 70.0, 70.25, 70.5, 70.75, 71.0, 71.5):
        show_lights(outputs, TableLights(to_act=2, clock=clock.lights(t)))
        outputs.poll(t)
        lit.append(backend.output_active("seat2.light"))
    assert lit == [True, True, True, False, False, True, False]
    assert not backend.output_active("seat1.light") and not backend.output_active("status_light")


def test_poker_play_kills_the_hand_only_when_it_faces_a_bet():
    settings = ClockSettings(profile="poker_play", auto_start=True)
    rulings = []
    for facing in (True, False, None):
        clock, published = clock_for(settings, seats=6)
        clock.turn(1, 0.0, facing_bet=facing)
        [expired] = published.of(clock.tick(1000.0))[-1:]
        rulings.append((expired.public["ruling"], expired.public["needs_floor"], expired.public["facing_bet"]))
    assert rulings == [(HAND_DEAD, False, True), (CHECK, False, False), ("hand_dead_facing_bet", True, None)]


def test_settings_are_checked_and_errors_name_the_setting():
    with pytest.raises(ValueError, match=r"clock.minute_s: expected seconds > 0, got 0.*clock.count_s: expected "
                                         r"whole seconds from 1 to 60, got 2.5"):
        ClockSettings(minute_s=0, count_s=2.5)
    with pytest.raises(ValueError, match=r"clock.profile: unknown rule profile 'wsop'"):
        ClockSettings(profile="wsop")
    with pytest.raises(ValueError, match=r"clock.auto_start: expected true or false, got 'yes'"):
        ClockSettings(auto_start="yes")
    with pytest.raises(ValueError, match=r"clock.time_banks: expected a count >= 0"):
        ClockSettings(time_banks=-1)
    with pytest.raises(ValueError, match=r"game.clock.colour: unknown key .*game.clock.reasonable_s: expected "
                                         r"seconds > 0, got -1"):
        ClockSettings.from_mapping({"colour": "red", "reasonable_s": -1}, root="game.clock")
    assert ClockSettings.from_mapping({"reasonable_s": 20, "auto_start": True}) == ClockSettings(20, auto_start=True)
    assert ClockSettings.from_mapping(None) == ClockSettings()
    with pytest.raises(ValueError, match="seat 7: expected a seat from 1 to 6"):
        ActionClock(seats=6, publish=Published()).turn(7, 0.0)


def test_the_start_clock_button_reaches_the_clock_as_a_command():
    pins = simulated_pin_map(6)
    backend = SimulatedGpio(pins)
    inputs = GpioInputs(pins.inputs, backend, clock=lambda: 0.0)
    console = GpioConsole(pins.inputs)
    clock, published = clock_for(seats=6)
    clock.turn(3, 0.0)
    for t, level in ((40.0, True), (40.004, False), (40.008, True)):  # a bouncing press
        backend.set_active("start_clock", level, t)
    backend.release("start_clock", 40.3)
    [press] = console.translate(inputs.poll(41.0))
    assert press.body == {"id": "console-1", "role": "dealer", "user": "console", "command": "start_clock"}
    by = f"{press.body['role']}/{press.body['user']}"
    # the controller: start_clock without a seat = the seat to act
    [due, started] = published.of(clock.start(press.t, by))
    assert due.type == "clock_due" and due.t == 30.0
    assert (started.public["seat"], started.public["by"], started.t) == (3, "dealer/console", 40.008)


def test_status_and_seat_lights_from_the_table_state():
    pins = simulated_pin_map(3)
    state = TableLights(to_act=1, clock={1: "off", 2: "blink"}, link_down=True, awaiting_floor=True)
    assert state.seat_modes([1, 2, 3]) == {1: "on", 2: "blink", 3: "off"}
    assert state.conditions() == {"link_down", "awaiting_floor"}
    levels = light_levels(state, pins.outputs, 0.3)  # link_down: 4 Hz, lit 0.125 s of every 0.25
    by_name = {p.name: levels[p.bcm_pin] for p in pins.outputs}
    assert by_name == {"seat1.light": True, "seat2.light": True, "seat3.light": False, "status_light": True}
    assert {p.name: light_levels(state, pins.outputs, 0.6)[p.bcm_pin] for p in pins.outputs}["seat2.light"] is False
    stopped = TableLights(to_act=1, clock={2: "blink"}, game_stopped=True)
    assert stopped.seat_modes([1, 2]) == {1: "off", 2: "off"}
    with pytest.raises(ValueError, match="clock light of seat 2: 'fast'"):
        TableLights(clock={2: "fast"}).seat_modes([2])
