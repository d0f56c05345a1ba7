"""Conduct rules (controller.conduct): devices and presence at the seats, per house profile, driven through the
simulated GPIO backend and the HAL's debouncing where a sensor is involved. No sleeping: every time is given.
"""

import re

import pytest

from controller.conduct import (
    CHECK_OR_FOLD,
    CONDUCT_PROFILES,
    FLOOR_DECIDES,
    HAND_DEAD,
    HAND_MAY_BE_DEAD,
    WARNING,
    ConductRules,
    conduct_profile,
)
from controller.rules import PROFILES
from hal.events import SensorEvent
from hal.gpio import GpioInputs, SimulatedGpio
from published import Published
from rfid_table.service.table_gpio import GpioConsole
from sim.conduct import ConductInjector, ConductSimOptions, Injection, simulated_pin_map


class Table:
    """Seat sensors on the simulated backend → HAL debouncing → GpioConsole → ConductRules."""

    def __init__(self, profile: str, seats: int = 6, seated: tuple[int, ...] = (1, 2, 3, 4), settle_s: float = 0.0):
        self.pins = simulated_pin_map(seats)
        self.backend = SimulatedGpio(self.pins)
        for seat in seated:  # players already seated when the daemon starts: read at start, no event
            self.backend.setup_input(self.pins.input(f"seat{seat}.presence").bcm_pin, "up")
            self.backend.set_active(f"seat{seat}.presence", True)
        self.inputs = GpioInputs(self.pins.inputs, self.backend, clock=lambda: 0.0)
        self.console = GpioConsole(self.pins.inputs)
        present = {int(name[4:].split(".")[0]): on for name, on in self.inputs.states().items()
                   if name.endswith(".presence")}
        self.published = Published()
        self.rules = ConductRules(profile, seats, present=present, settle_s=settle_s, publish=self.published)

    def bounce(self, name: str, active: bool, t: float) -> None:
        """A sensor changes with contact bounce: three edges within 20 ms, ending on ``active``."""
        for dt, level in ((0.0, active), (0.008, not active), (0.02, active)):
            self.backend.set_active(name, level, t + dt)

    def poll(self, now: float) -> list:
        out = []
        for item in self.console.translate(self.inputs.poll(now)):
            assert isinstance(item, SensorEvent)
            out += self.published.of(self.rules.sensor(item))
        return out

    def deal(self, seats, t: float = 10.0, complete: bool = True) -> list:
        out = self.published.of(self.rules.hand_started(t))
        for n, seat in enumerate(seats):
            out += self.published.of(self.rules.card_dealt(seat, t + 0.2 * n))
        for n, seat in enumerate(seats):
            out += self.published.of(self.rules.card_dealt(seat, t + 0.2 * (len(seats) + n)))
        if complete:
            out += self.published.of(self.rules.deal_complete(t + 0.2 * 2 * len(seats), seats))
        return out


def rules_for(profile: str, seats: int, **options) -> tuple[ConductRules, Published]:
    """A rule set on its own, and what it publishes."""
    published = Published()
    return ConductRules(profile, seats, publish=published, **options), published


def types(events):
    return [e.type for e in events]


# ---- profiles -------------------------------------------------------------------------------------------


# A rule as the rule books number it, and what it says in a few words: "CA GR 5 (...)", "PP Dead hands 1f", "TDA 20-1"
RULE = r"(TDA \d+(-\d+)?|CA (GR|Stakes|Actions|Penalties) \d+[a-z]?|AC \d+[a-z]?|DE \d+" \
       r"|PP [A-Z][a-z]+( [a-z]+)? \d+[a-z]?(-\d+)?)( \([^()]+\))?"
CITATION = re.compile(rf"{RULE}(, {RULE})*")
# what a note on the rule books says, which docs/conduct.md and docs/rules.md keep: never a payload's
NOTES = ("stored", "translation", ".txt", "heading", "no rule", "no own rule", "no text", "silent", "applied",
         "not covered", "names no")


def test_every_rule_profile_has_conduct_settings_citing_their_source():
    assert set(CONDUCT_PROFILES) == set(PROFILES)
    for profile in CONDUCT_PROFILES.values():
        for name, value in vars(profile).items():
            if name not in ("name", "sources"):
                assert name in profile.sources, f"{profile.name}.{name} names no rule, not even none"
    assert conduct_profile("casinos_austria").cite("device_ruling").startswith("CA GR 5")
    assert conduct_profile("allin_club").device_kinds == ("phone",)
    with pytest.raises(KeyError, match="unknown rule profile 'wsop'; known: casinos_austria"):
        conduct_profile("wsop")


def test_a_payload_cites_rules_or_nothing():
    """What an event's ``rule`` or ``rules`` says is a citation of the rule books, or nothing where none has a rule;
    a note on the books (that a stored text lacks a rule, that a book is silent) is for the documentation."""
    for profile in [*CONDUCT_PROFILES.values(), *PROFILES.values()]:
        for setting, cited in profile.sources.items():
            assert cited == "" or CITATION.fullmatch(cited), f"{profile.name}.{setting}: {cited!r} is no citation"
            assert not any(note in cited for note in NOTES), f"{profile.name}.{setting}: {cited!r}"
    # the TDA text has no rule on devices: its breach cites none, and says what the table does
    table = Table("tda")
    table.deal([1, 2, 3, 4])
    table.bounce("seat3.device", True, 20.0)
    [started] = table.poll(20.3)
    assert (started.type, started.public["rule"], started.public["ruling"]) == ("device_breach", "", WARNING)
    assert started.public["ruling_text"] == "the player is warned; the floor decides any further penalty"


# ---- devices --------------------------------------------------------------------------------------------


def test_device_use_at_a_live_seat_tells_the_floor_at_once_and_the_duration_at_the_end():
    table = Table("casinos_austria")
    table.deal([1, 2, 3, 4])
    table.bounce("seat3.device", True, 20.0)  # bounce: one change, not three
    assert table.poll(20.1) == []  # device sensors debounce for 200 ms
    [started] = table.poll(20.3)
    assert started.type == "device_breach" and started.hand == 1 and started.t == pytest.approx(20.02)
    assert started.public == {
        "seat": 3, "device": "phone", "state": "started", "since": 20.02, "device_since": 20.02,
        "rule": conduct_profile("casinos_austria").cite("device_ruling"), "ruling": HAND_MAY_BE_DEAD,
        "ruling_text": "the floor may declare the hand dead", "needs_floor": True, "profile": "casinos_austria"}
    table.bounce("seat3.device", False, 35.0)
    [ended] = table.poll(36.0)
    assert ended.type == "device_breach"
    assert {k: ended.public[k] for k in ("seat", "state", "reason", "duration_s", "device_s", "needs_floor")} == {
        "seat": 3, "state": "ended", "reason": "device_off", "duration_s": 15.0, "device_s": 15.0,
        "needs_floor": False}
    assert table.inputs.edges_seen == 6


def test_allin_club_forbids_phones_only():
    rules, published = rules_for("allin_club", 6)
    rules.card_dealt(2, 1.0)
    [mp3] = published.of(rules.device(2, True, 5.0, kind="device"))  # AC 4: other devices are allowed
    assert (mp3.type, mp3.public["reason"], mp3.public["needs_floor"]) == ("device_seen", "kind_allowed", False)
    assert mp3.public["rule"].startswith("AC 4")
    [phone] = published.of(rules.device(2, True, 6.0, kind="phone"))
    assert (phone.type, phone.public["ruling"], phone.public["needs_floor"]) == ("device_breach", WARNING, True)
    assert phone.public["rule"] == "AC 4 (no mobile phone while the hand is live), AC 1 (the organisers decide)"


def test_after_a_fold_device_use_is_only_logged():
    table = Table("allin_club")
    table.deal([1, 2, 3, 4])
    assert types(table.published.of(table.rules.folded(3, 15.0))) == []
    table.bounce("seat3.device", True, 20.0)
    [seen] = table.poll(21.0)
    assert seen.type == "device_seen"
    assert {k: seen.public[k] for k in ("seat", "state", "reason", "needs_floor")} == {
        "seat": 3, "state": "started", "reason": "folded", "needs_floor": False}
    table.bounce("seat3.device", False, 30.0)
    [ended] = table.poll(31.0)
    assert (ended.type, ended.public["state"], ended.public["duration_s"]) == ("device_seen", "ended", 10.0)


def test_between_hands_device_use_is_only_logged():
    rules, published = rules_for("casinos_austria", 6)
    [seen] = published.of(rules.device(1, True, 1.0, kind="rf"))
    assert seen.type == "device_seen" and seen.hand is None
    assert seen.public["reason"] == "no_live_hand" and "beneath the edge of the table" in seen.public["note"]
    assert published.of(rules.device(1, True, 2.0, kind="rf")) == []  # the same state again changes nothing


def test_a_device_already_active_when_the_cards_come_is_a_breach_from_the_first_card_until_the_fold():
    rules, published = rules_for("casinos_austria", 6)
    assert types(published.of(rules.device(4, True, 3.0))) == ["device_seen"]  # between hands: logged only
    rules.hand_started(9.0)
    assert types(published.of(rules.card_dealt(1, 10.0))) == []
    [started] = published.of(rules.card_dealt(4, 10.6))
    assert started.type == "device_breach"
    assert (started.public["since"], started.public["device_since"]) == (10.6, 3.0)
    [ended] = published.of(rules.folded(4, 30.0))
    assert (ended.public["state"], ended.public["reason"], ended.public["duration_s"]) == ("ended", "folded", 19.4)
    [off] = published.of(rules.device(4, False, 40.0))
    assert (off.type, off.public["reason"], off.public["duration_s"]) == ("device_seen", "folded", 37.0)


def test_the_hand_ending_ends_a_breach():
    rules, published = rules_for("tda", 6)
    rules.card_dealt(5, 1.0)
    assert types(published.of(rules.device(5, True, 2.0))) == ["device_breach"]
    [ended] = published.of(rules.hand_ended(12.5))
    assert (ended.type, ended.public["reason"], ended.public["duration_s"]) == ("device_breach", "hand_ended", 10.5)
    [off] = published.of(rules.device(5, False, 13.0))
    assert off.type == "device_seen" and off.public["reason"] == "no_live_hand"


def test_unknown_device_kinds_and_seats_are_refused():
    rules, published = rules_for("tda", 6)
    with pytest.raises(ValueError, match="device kind 'laser': expected one of phone, rf, device"):
        rules.device(1, True, 1.0, kind="laser")
    with pytest.raises(ValueError, match="seat 7: expected a seat from 1 to 6"):
        rules.presence(7, True, 1.0)


# ---- presence -------------------------------------------------------------------------------------------


def test_a_player_away_when_the_deal_is_complete_has_an_invalid_hand():
    table = Table("casinos_austria", seated=(1, 2, 4))  # seat 3 is empty but dealt in
    events = table.deal([1, 2, 3, 4], t=10.0)
    [absent] = [e for e in events if e.type == "absent_at_deal"]
    assert absent.t == pytest.approx(11.6) and absent.hand == 1
    ca = conduct_profile("casinos_austria")
    assert absent.public == {
        "seat": 3, "deal_t": 11.6, "away_since": None, "rule": ca.cite("absent_at_deal"),
        "ruling": HAND_DEAD, "ruling_text": "the hand is dead", "needs_floor": False, "profile": "casinos_austria",
        "blinds": "posted", "blinds_rule": ca.cite("absent_blinds")}


def test_a_player_who_leaves_during_the_deal_is_absent_at_its_end_and_the_sensor_may_report_late():
    table = Table("allin_club", settle_s=0.6)  # wait out the presence debounce before deciding
    table.deal([1, 2, 3, 4], t=10.0, complete=False)
    table.bounce("seat2.presence", False, 11.2)  # leaves just before the last card (11.6); known at 11.72
    assert types(table.published.of(table.rules.deal_complete(11.6, [1, 2, 3, 4]))) == []  # not yet decided
    later = table.poll(11.8)
    assert types(later) == ["seat_presence"]  # the change itself, during the deal
    [absent] = table.published.of(table.rules.tick(12.2))
    assert (absent.type, absent.public["seat"], absent.public["away_since"]) == ("absent_at_deal", 2, 11.22)
    assert absent.public["ruling"] == HAND_DEAD and absent.public["rule"].startswith("AC 25")
    assert table.published.of(table.rules.tick(13.0)) == []


def test_de_profile_keeps_an_absent_players_hand_checked_or_folded_with_the_blinds_posted():
    rules, published = rules_for("club_tournament_de", 6, present={1: True, 2: False})
    rules.card_dealt(1, 1.0)
    rules.card_dealt(2, 1.2)
    [absent] = published.of(rules.deal_complete(1.4))  # the seats that got a card
    assert absent.public["seat"] == 2
    assert (absent.public["ruling"], absent.public["needs_floor"], absent.public["blinds"]) == (
        CHECK_OR_FOLD, False, "posted")
    assert absent.public["rule"].startswith("DE 6")


def test_leaving_a_live_seat_is_an_event_and_coming_back_too():
    table = Table("casinos_austria")
    table.deal([1, 2, 3, 4])
    table.bounce("seat4.presence", False, 30.0)
    assert table.poll(30.3) == []  # presence debounces for 500 ms: leaning back is not leaving
    [left] = table.poll(30.6)
    assert left.type == "seat_left" and left.t == pytest.approx(30.02)
    assert (left.public["seat"], left.public["ruling"], left.public["needs_floor"]) == (4, HAND_MAY_BE_DEAD, True)
    assert left.public["rule"].startswith("CA GR 11")
    table.bounce("seat4.presence", True, 50.0)
    [back] = table.poll(51.0)
    assert (back.type, back.public) == ("seat_returned", {"seat": 4, "away_s": 20.0})


def test_a_short_absence_within_the_debounce_window_is_nothing():
    table = Table("allin_club")
    table.deal([1, 2, 3, 4])
    table.backend.set_active("seat1.presence", False, 30.0)
    table.backend.set_active("seat1.presence", True, 30.3)
    assert table.poll(40.0) == []


def test_leaving_after_a_fold_or_between_hands_is_only_occupancy():
    table = Table("allin_club")
    table.deal([1, 2, 3, 4])
    table.rules.folded(2, 20.0)
    table.bounce("seat2.presence", False, 25.0)
    [occupancy] = table.poll(26.0)
    assert (occupancy.type, occupancy.public) == ("seat_presence", {"seat": 2, "present": False, "duration_s": None})
    table.rules.hand_ended(40.0)
    table.bounce("seat1.presence", False, 45.0)
    [between] = table.poll(46.0)
    assert between.type == "seat_presence" and between.hand is None
    left, left_published = rules_for("poker_play", 6, present={1: True})
    left.card_dealt(1, 1.0)
    left.deal_complete(1.2)
    [pp] = left_published.of(left.presence(1, False, 5.0))
    assert (pp.type, pp.public["ruling"], pp.public["needs_floor"]) == ("seat_left", FLOOR_DECIDES, True)


def test_seats_without_a_presence_report_never_count_as_absent():
    rules, published = rules_for("casinos_austria", 6)
    rules.card_dealt(1, 1.0)
    rules.card_dealt(2, 1.2)
    assert published.of(rules.deal_complete(1.4)) == []
    assert rules.present(1) is None and rules.live(1)
    assert rules.snapshot()["seats"][0] == {"seat": 1, "present": None, "devices": [], "live": True, "breach": [],
                                            "absent_at_deal": False, "left": False}


# ---- the simulator's injection --------------------------------------------------------------------------


def run_injection(options, players=(1, 2, 3, 4), until=3600.0, step=0.25, hands_every=None):
    pins = simulated_pin_map(6)
    backend = SimulatedGpio(pins)
    inputs = GpioInputs(pins.inputs, backend, clock=lambda: 0.0)
    console = GpioConsole(pins.inputs)
    injector = ConductInjector(backend, players, options)
    injector.start(0.0)
    sensed, t, next_hand = [], 0.0, 0.0
    while t < until:
        t = round(t + step, 6)
        if hands_every and t >= next_hand:
            injector.hand_started(t)
            next_hand += hands_every
        injector.advance(t)
        sensed += console.translate(inputs.poll(t))
    return injector, sensed, inputs


def test_injected_activity_reaches_the_rules_through_the_debouncer_one_event_per_change():
    options = ConductSimOptions(device_per_hour=4, absence_per_hour=2, seed=11)
    injector, sensed, inputs = run_injection(options)
    assert injector.injected and inputs.edges_seen > len(injector.injected)  # bounce happened
    assert len(sensed) == len(injector.injected)
    for seat in (1, 2, 3, 4):
        for sensor in ("presence", "device"):
            made = [i for i in injector.injected if (i.seat, i.sensor) == (seat, sensor)]
            seen = [e for e in sensed if (e.seat, e.sensor) == (seat, sensor)]
            assert [e.active for e in seen] == [i.active for i in made]
            for event, change in zip(seen, made):
                assert change.t <= event.t <= change.t + options.bounce_s  # stamped at the last bounce edge
    devices = [i for i in injector.injected if i.sensor == "device" and i.active]
    absences = [i for i in injector.injected if i.sensor == "presence" and not i.active]
    assert 4 <= len(devices) <= 40 and 1 <= len(absences) <= 25  # about 16 and 8 for four seats in an hour
    assert {i.seat for i in injector.injected} <= {1, 2, 3, 4}


def test_injection_is_deterministic_per_seed_whatever_the_step():
    options = ConductSimOptions(device_per_hour=6, absence_per_hand=0.2, device_per_hand=0.1, seed=5)
    a, _, _ = run_injection(options, until=1800.0, step=0.25, hands_every=90.0)
    b, _, _ = run_injection(options, until=1800.0, step=1.0, hands_every=90.0)
    assert a.injected == b.injected and a.injected
    c, _, _ = run_injection(ConductSimOptions(device_per_hour=6, absence_per_hand=0.2, device_per_hand=0.1, seed=6),
                            until=1800.0, hands_every=90.0)
    assert c.injected != a.injected


def test_per_hand_injection_drives_a_breach_in_the_rules():
    options = ConductSimOptions(device_per_hand=1.0, device_s=(5.0, 5.0), hand_s=2.0, seed=1, bounce_edges=3)
    pins = simulated_pin_map(4)
    backend = SimulatedGpio(pins)
    inputs = GpioInputs(pins.inputs, backend, clock=lambda: 0.0)
    console = GpioConsole(pins.inputs)
    injector = ConductInjector(backend, [1, 2], options)
    rules, published = rules_for("allin_club", 4)
    injector.start(0.0)
    events = []
    for sensor_event in console.translate(inputs.poll(1.0)):
        events += published.of(rules.sensor(sensor_event))
    assert types(events) == ["seat_presence", "seat_presence"]  # the players sat down
    rules.card_dealt(1, 10.0)
    rules.card_dealt(2, 10.1)
    rules.deal_complete(10.2)
    injector.hand_started(10.2)  # every seat gets a phone episode within 2 s
    planned = injector.planned()
    assert sorted((i.seat, i.sensor, i.active) for i in planned) == [
        (1, "device", False), (1, "device", True), (2, "device", False), (2, "device", True)]
    assert all(10.2 <= i.t <= 10.2 + 2.0 + 5.0 for i in planned)
    events = []
    t = 10.2
    while t < 20.0:
        t = round(t + 0.1, 6)
        injector.advance(t)
        for sensor_event in console.translate(inputs.poll(t)):
            events += published.of(rules.sensor(sensor_event))
    breaches = [e for e in events if e.type == "device_breach"]
    assert sorted((e.public["seat"], e.public["state"]) for e in breaches) == [
        (1, "ended"), (1, "started"), (2, "ended"), (2, "started")]
    assert all(e.public["duration_s"] == pytest.approx(5.0, abs=0.05) for e in breaches if e.public["state"] == "ended")


def test_injection_options_are_checked():
    with pytest.raises(ValueError, match=r"device_per_hand: expected a chance from 0 to 1.*absence_s: expected"):
        ConductSimOptions(device_per_hand=2, absence_s=(0.2, 1.0))
    assert not ConductSimOptions().enabled and ConductSimOptions(absence_per_hour=1).enabled
    assert Injection(1.0, 2, "device", True) < Injection(2.0, 1, "device", True)
