"""The conduct rules and the action clock in the running daemon: the seat sensors on the simulated GPIO, through the
pipeline (journaled as ``sensor`` inputs), into the controller, and back out as events, lights and snapshots."""

import dataclasses
from collections import defaultdict

from controller.floor import CARDS
from conftest import ROOT, TABLE_10
from rfid_table.config.table import load_config
from rfid_table.service.journal import Journal
from rfid_table.devtools.simulate import SimOptions, SimulatedTable

TABLE_CHIPS = ROOT / "config" / "table-chips.toml"
T0 = 1_800_000_000.0


def chips_config(rules: str = "casinos_austria"):
    config = load_config(TABLE_CHIPS)
    return dataclasses.replace(config, journal_path=None, broadcast_delay_s=0.0,
                               game=dataclasses.replace(config.game, rules=rules))


class Driven:
    """A simulated table with the simulated GPIO (every sensor, button and light), stepped by hand, no broker."""

    def __init__(self, config, journal: Journal | None = None, t: float = T0, **options):
        self.config = config
        self.table = SimulatedTable(config, SimOptions(link="direct", hands=None, seed=1, gpio=True, **options),
                                    None, journal)
        self.uid = {card: uid for uid, card in config.decks[config.active_deck].items()}
        self.rack: dict[int, list[str]] = defaultdict(list)
        for uid, value in sorted(config.chips.chips.items() if config.chips else ()):
            self.rack[value].append(uid)
        self.t = t
        self.events: list = []

    @property
    def controller(self):
        return self.table.pipeline.controller

    @property
    def sensors(self):
        return self.table.gpio.backend

    def run(self, seconds: float) -> list:
        produced = []
        end = self.t + seconds
        while self.t < end:
            produced += self.table.step(self.t)
            self.t += self.table.cycle_s
        self.events += produced
        return produced

    def sensor(self, name: str, active: bool, settle_s: float = 0.8) -> list:
        self.sensors.set_active(name, active, self.t)
        return self.run(settle_s)

    def command(self, name: str, **fields) -> list:
        self.table.pipeline.submit({"id": name, "command": name, "role": "floor", "user": "anna", **fields})
        return self.run(0.2)

    def chips(self, zone: str, *values: int) -> None:
        for value in values:
            self.table.field.place(self.rack[value].pop(), zone)

    def deal(self, seats=(1, 2, 3), cards=("As", "Kd", "7h", "Ac", "Kc", "7c")) -> list:
        """The blinds (seats 1 and 2; the button is seat 10), then two hole cards each, in order."""
        self.chips("seat1.bets", 25, 25)
        self.chips("seat2.bets", 100)
        self.run(0.7)
        produced = []
        for card, seat in zip(cards, [*seats, *seats]):
            self.table.field.place(self.uid[card], f"seat{seat}.cards")
            produced += self.run(0.2)
        return produced + self.run(1.0)

    def close(self) -> None:
        self.table.close()


def of(events, *types) -> list:
    return [e for e in events if e.type in types]


def seated(config=None, **options) -> Driven:
    table = Driven(config or chips_config(), **options)
    assert [e.type for e in table.run(0.8)] == ["seat_presence"] * 10  # the simulated players sit down
    assert "stacks_set" in [e.type for e in table.command("set_stacks", stacks={"1": 1000, "2": 1000, "3": 1000})]
    return table


def test_a_phone_at_a_live_seat_is_a_breach_with_the_profiles_ruling():
    table = seated()
    try:
        assert [e.type for e in table.sensor("seat4.device", True)] == ["device_seen"]  # seat 4 is not dealt in
        table.deal()
        [started] = of(table.sensor("seat1.device", True), "device_breach")
        assert started.hand == 1 and started.public["seat"] == 1 and started.public["state"] == "started"
        assert started.public["device"] == "phone"  # what the simulated pin map's sensors detect
        assert started.public["ruling"] == "hand_may_be_dead" and started.public["needs_floor"] is True
        assert started.public["profile"] == "casinos_austria" and started.public["rule"].startswith("CA GR 5")
        assert table.controller.snapshot(secure=False)["conduct"]["seats"][0]["breach"] == ["phone"]
        [ended] = of(table.sensor("seat1.device", False), "device_breach")
        assert ended.public["state"] == "ended" and ended.public["reason"] == "device_off"
        assert ended.seq > started.seq and ended.public["since"] == started.public["since"]
    finally:
        table.close()


def test_after_a_fold_a_device_is_only_seen():
    table = seated(chips_config("allin_club"))
    try:
        table.deal()
        [breach] = of(table.sensor("seat3.device", True), "device_breach")  # AC 4: no phone while the hand is live
        assert breach.public["ruling"] == "warning" and breach.public["profile"] == "allin_club"
        for card in ("7h", "7c"):  # seat 3 folds: its breach ends
            table.table.field.place(table.uid[card], "muck")
        folded = table.run(1.0)
        assert [e.public["reason"] for e in of(folded, "device_breach")] == ["folded"]
        table.sensor("seat3.device", False)
        produced = table.sensor("seat3.device", True)
        assert of(produced, "device_breach") == []
        [seen] = of(produced, "device_seen")
        assert seen.public["reason"] == "folded" and seen.public["needs_floor"] is False
    finally:
        table.close()


def test_a_seat_empty_at_the_end_of_the_deal_is_absent_at_deal_and_a_player_leaving_later_is_reported():
    table = seated()
    try:
        table.sensor("seat3.presence", False)  # seat 3 goes away before the deal
        dealt = table.deal()
        [absent] = of(dealt, "absent_at_deal")
        assert absent.public["seat"] == 3 and absent.public["ruling"] == "hand_dead"  # CA GR 6
        assert absent.public["blinds"] == "posted" and absent.hand == 1
        assert absent.t >= max(e.t for e in of(dealt, "card_dealt"))
        assert [e.type for e in table.sensor("seat2.presence", False)] == ["seat_left"]
        [back] = table.sensor("seat2.presence", True)
        assert back.type == "seat_returned" and back.public["away_s"] > 0
        seats = table.controller.snapshot(secure=False)["conduct"]["seats"]
        assert [s["absent_at_deal"] for s in seats[:3]] == [False, False, True]
    finally:
        table.close()


def test_the_action_clock_runs_out_and_the_seat_light_follows_it():
    table = seated()
    try:
        table.deal()
        assert table.controller.clock.seat == 3  # under the gun, after the blinds of seats 1 and 2
        assert table.sensors.output_active("seat3.light") and not table.sensors.output_active("seat1.light")
        refused = table.command("time_bank", seat=3)  # the clock does not run yet: refused, nothing happens
        assert refused == []
        [due] = of(table.run(30.0), "clock_due")
        assert due.public["seat"] == 3
        table.sensors.click("start_clock", table.t)  # the dealer console's button
        [started] = of(table.run(0.5), "clock_started")
        assert started.public["by"] == "dealer/console" and started.public["minute_s"] == 60.0
        assert table.controller.snapshot(secure=False)["clock"]["phase"] == "minute"
        ticks = of(table.run(61.0), "clock_tick")
        assert [e.public["remaining_s"] for e in ticks if e.public["phase"] == "minute"] == [50, 40, 30, 20, 10]
        assert table.controller.clock.lights(table.t)[3] == "blink"  # the count
        lit = set()
        for _ in range(12):
            table.run(0.25)
            lit.add(table.sensors.output_active("seat3.light"))
        assert lit == {True, False}  # blinking
        table.run(8.0)
        [expired] = of(table.events, "clock_expired")
        assert expired.public["seat"] == 3 and expired.public["ruling"] == "hand_dead"
        assert expired.public["started_by"] == "dealer/console"
        assert not table.sensors.output_active("seat3.light")
        # the profile kills the hand: the betting folds seat 3 and moves on
        dead = [e for e in table.events if e.type == "bet_ruling" and e.public["code"] == "hand_dead"]
        assert [e.public["seat"] for e in dead] == [3] and dead[0].public["rules"] == [expired.public["rule"]]
        assert 3 in table.controller.snapshot(secure=False)["betting"]["folded"]
        assert table.controller.clock.seat != 3
    finally:
        table.close()


def test_start_clock_and_time_bank_commands_and_their_refusals():
    table = seated()
    try:
        pipeline = table.table.pipeline
        out, refusal = table.controller.handle_command(
            {"id": "x", "command": "start_clock", "role": "floor", "user": "anna"}, table.t)
        assert (out, refusal) == ([], "no player is to act: the clock starts on the player whose turn it is")
        table.deal()
        _, refusal = table.controller.handle_command(
            {"id": "x", "command": "start_clock", "seat": 1, "role": "floor", "user": "anna"}, table.t)
        assert refusal == "seat 1 is not to act (seat 3 is)"
        assert [e.type for e in table.command("start_clock", seat=3)] == ["clock_started"]
        [bank] = table.command("time_bank", seat=3)
        assert bank.type == "time_bank_used" and bank.public["added_s"] == 30.0
        assert pipeline.controller.snapshot(secure=True)["clock"]["remaining_s"] > 60
        table.chips("seat3.bets", 100)  # seat 3 calls: its clock stops, seat 1's turn begins
        stopped = of(table.run(1.5), "clock_stopped")
        assert [(e.public["seat"], e.public["reason"]) for e in stopped] == [(3, "acted")]
        assert table.controller.clock.seat == 1
    finally:
        table.close()


def test_a_restart_from_the_journal_restores_the_breach_the_absence_and_the_clock(tmp_path, caplog):
    path = tmp_path / "journal.db"
    journal = Journal(path)
    assert journal.open().ok
    table = seated(journal=journal)
    try:
        table.sensor("seat3.presence", False)
        table.deal()
        [breach] = of(table.sensor("seat1.device", True), "device_breach")
        table.command("start_clock")
        before = table.controller.snapshot(secure=True)
        t, seq = table.t, table.controller.seq
        clock_before = table.controller.clock.snapshot(t)
        on_table = {zone: table.table.field.tags_in(zone) for zone in table.config.zones}
        assert before["conduct"]["seats"][0]["breach"] == ["phone"] and before["clock"]["phase"] == "minute"
    finally:
        table.close()
        journal.close()
    journal = Journal(path)
    assert journal.open().ok
    restored = Driven(chips_config(), journal=journal, t=t)
    try:
        assert restored.table.pipeline.restore(t) > 0
        assert "replay differs" not in caplog.text  # the sensor inputs replayed to the same events
        assert restored.controller.seq == seq
        after = restored.controller.snapshot(secure=True)
        assert after["conduct"] == before["conduct"] and restored.controller.clock.snapshot(t) == clock_before
        for zone, uids in on_table.items():  # the cards and chips are where they were
            for uid in uids:
                restored.table.field.place(uid, zone)
        # The sensors as they are now: every player seated (seat 3 is back), seat 1's phone still on.
        restored.sensors.set_active("seat1.device", True, t)
        produced = restored.run(1.0)
        assert of(produced, "device_breach", "device_seen") == []
        assert [e.public["seat"] for e in of(produced, "seat_presence")] == [3]
        [ended] = of(restored.sensor("seat1.device", False), "device_breach")
        assert ended.public["since"] == breach.public["since"] and ended.public["reason"] == "device_off"
        assert of(restored.run(70.0), "clock_expired")
    finally:
        restored.close()
        journal.close()


def test_the_simulator_injects_devices_and_absences_the_same_for_a_seed():
    def play(seed: int) -> list:
        config = chips_config()
        table = SimulatedTable(config, SimOptions(hands=6, seed=seed, speed=0, pace_s=0.5, link="direct",
                                                  players=6, devices_per_hand=0.3, absences_per_hand=0.2), None)
        t, events = T0, []
        try:
            while table.advance(t) and t < T0 + 3600:
                events += table.step(t)
                t += table.cycle_s
        finally:
            table.close()
        return [(e.seq, e.type, round(e.t - T0, 3), e.hand, e.public.get("seat")) for e in events
                if e.type in ("device_breach", "device_seen", "absent_at_deal", "seat_left", "seat_returned")]

    first = play(3)
    assert {kind for _seq, kind, *_ in first} >= {"device_breach", "absent_at_deal"}
    assert play(3) == first


def test_without_a_pin_map_or_conduct_options_there_is_no_gpio():
    config = chips_config()
    assert config.gpio is None
    table = SimulatedTable(config, SimOptions(hands=1, seed=1, link="direct"), None)
    try:
        assert table.gpio is None and table.pipeline.gpio is None and table.injector is None
    finally:
        table.close()


def test_the_confirm_key_confirms_the_irregularity_waiting_for_the_floor():
    table = seated()
    try:
        table.deal()
        deck_b = {card: uid for uid, card in table.config.decks["B"].items()}
        table.table.field.place(deck_b["9d"], "seat3.cards")  # a card of the other deck reaches a seat
        table.run(0.8)
        [foreign] = [e for e in table.events if e.type == "irregular_card" and e.public["code"] == "foreign_card"]
        assert foreign.public["needs_floor"] and foreign.seq in table.controller.floor.of(CARDS)
        table.sensors.click("confirm", table.t)  # the floor turns the confirm key at the dealer console
        ruled = of(table.run(0.5), "floor_ruling")
        assert [(e.public["irregularity"], e.public["decision"]) for e in ruled] == [(foreign.seq, "confirmed")]
        assert foreign.seq not in table.controller.floor.of(CARDS)
    finally:
        table.close()


def test_a_device_breach_waits_for_the_floor_and_the_confirm_key_kills_the_hand():
    table = seated()  # Casinos Austria: the floor may declare the hand void (CA GR 5)
    try:
        table.deal()
        assert not table.sensors.output_active("status_light")
        [breach] = of(table.sensor("seat3.device", True), "device_breach")
        assert breach.public["needs_floor"] and table.controller.floor_pending() == [breach.seq]
        assert table.sensors.output_active("status_light")  # steady: a ruling waits for the floor
        table.sensors.click("confirm", table.t)  # the floor confirms: the hand is dead
        produced = table.run(0.5)
        [ruled] = of(produced, "floor_ruling")
        assert ruled.public == {"irregularity": breach.seq, "code": "device_breach", "decision": "confirmed",
                                "result": "dead_hand", "by": "floor/console"}
        assert [(e.public["seat"], e.public["action"]) for e in of(produced, "action")] == [(3, "fold")]
        assert [e.public["reason"] for e in of(produced, "device_breach")] == ["folded"]  # no longer live
        assert table.controller.floor_pending() == [] and not table.sensors.output_active("status_light")
        assert 3 in table.controller.snapshot(secure=False)["betting"]["folded"]
    finally:
        table.close()


def test_the_floor_may_override_a_breach_and_play_goes_on():
    table = seated()
    try:
        table.deal()
        [breach] = of(table.sensor("seat3.device", True), "device_breach")
        [ruled] = of(table.command("override", irregularity=breach.seq, note="warned"), "floor_ruling")
        assert (ruled.public["decision"], ruled.public["result"], ruled.public["note"]) == (
            "overridden", "play_on", "warned")
        assert of(table.events, "action")[-1].public["action"] == "post_bb"  # no fold: seat 3 is still to act
        assert table.controller.clock.seat == 3 and table.controller.floor_pending() == []
    finally:
        table.close()


def test_de_profile_checks_an_absent_players_hand_and_folds_it_facing_a_bet():
    table = seated(chips_config("club_tournament_de"))
    try:
        table.sensor("seat1.presence", False)  # the small blind is away when the deal completes
        dealt = table.deal()
        [absent] = of(dealt, "absent_at_deal")
        assert absent.public["ruling"] == "check_or_fold" and absent.public["rule"].startswith("DE 6")
        table.chips("seat3.bets", 100)  # seat 3 calls; the small blind's turn: it faces 50 more: folded
        produced = table.run(1.0)
        assert [(e.public["seat"], e.public["action"]) for e in of(produced, "action")] == [(3, "call"), (1, "fold")]
        [dead] = of(produced, "bet_ruling")
        assert dead.public["code"] == "hand_dead" and dead.public["rules"] == [absent.public["rule"]]
        assert table.controller.clock.seat == 2  # the big blind acts next
    finally:
        table.close()


def test_the_status_light_says_the_deck_is_not_registered_when_unknown_cards_are_dealt():
    table = seated()
    try:
        table.chips("seat1.bets", 25, 25)
        table.chips("seat2.bets", 100)
        table.run(0.7)
        for n, seat in enumerate((1, 2, 3)):  # a new deck nobody registered: tags of no deck
            table.table.field.place(f"E00401500AAA{n:04X}", f"seat{seat}.cards")
            table.run(0.3)
        assert len(of(table.events, "unknown_tag")) == 3 and table.controller.deck_unregistered
        lit = set()
        for _ in range(8):  # a slow blink
            table.run(0.25)
            lit.add(table.sensors.output_active("status_light"))
        assert lit == {True, False}
        table.table.field.place(table.uid["As"], "seat1.cards")  # a registered card: the warning ends
        table.run(1.0)
        assert not table.controller.deck_unregistered
    finally:
        table.close()


def test_after_a_misdeal_the_game_is_stopped_until_the_cards_are_dealt_again():
    table = seated()
    try:
        table.deal()
        assert table.sensors.output_active("seat3.light")  # under the gun is to act
        table.sensors.click("misdeal", table.t)  # the dealer's key
        assert "misdeal" in [e.type for e in table.run(0.5)]
        outputs = table.table.gpio.outputs
        assert table.controller.game_stopped and outputs.status_shown == "game_stopped"
        assert not any(table.sensors.output_active(f"seat{s}.light") for s in range(1, 11))  # no one is to act
        table.table.field.clear()  # the dealer gathers everything
        table.run(4.0)
        table.deal()  # and deals again
        assert not table.controller.game_stopped and outputs.status_shown is None
        assert table.sensors.output_active("seat3.light")
    finally:
        table.close()


def test_de_profile_checks_an_absent_players_hand_when_it_has_nothing_to_call():
    table = seated(chips_config("club_tournament_de"))
    try:
        table.sensor("seat2.presence", False)  # the big blind is away when the deal completes
        [absent] = of(table.deal(), "absent_at_deal")
        assert absent.public["seat"] == 2 and absent.public["ruling"] == "check_or_fold"
        table.chips("seat3.bets", 100)  # seat 3 calls
        table.run(1.0)
        table.chips("seat1.bets", 25, 25)  # the small blind completes: the big blind has the option, nothing to call
        produced = table.run(1.0)
        assert [(e.public["seat"], e.public["action"]) for e in of(produced, "action")] == [(1, "call"), (2, "check")]
        assert of(produced, "bet_ruling") == []  # checked, not dead: the hand stays in (DE 6)
        assert 2 not in table.controller.snapshot(secure=False)["betting"]["folded"]
    finally:
        table.close()


def test_the_floor_stops_the_clock_by_command_and_a_second_stop_is_refused():
    table = seated()
    try:
        table.deal()
        assert [e.type for e in table.command("start_clock")] == ["clock_started"]
        [stopped] = table.command("stop_clock", seat=3)  # the player acted in a way the table cannot read
        assert (stopped.type, stopped.public["reason"], stopped.public["by"]) == ("clock_stopped", "floor",
                                                                                 "floor/anna")
        _, refusal = table.controller.handle_command(
            {"id": "x", "command": "stop_clock", "role": "floor", "user": "anna"}, table.t)
        assert refusal == "the clock is not running"
    finally:
        table.close()


def test_on_a_table_without_chips_the_floor_calls_the_clock_on_a_named_seat():
    config = dataclasses.replace(load_config(TABLE_10), journal_path=None, broadcast_delay_s=0.0)
    table = Driven(config)
    try:
        table.run(0.8)
        _, refusal = table.controller.handle_command(
            {"id": "x", "command": "start_clock", "seat": 3, "role": "floor", "user": "anna"}, table.t)
        assert refusal == "seat 3 has no live hand"
        for card, seat in zip(("As", "Kd", "7h", "Ac", "Kc", "7c"), (1, 2, 3, 1, 2, 3)):
            table.table.field.place(table.uid[card], f"seat{seat}.cards")
            table.run(0.2)
        table.run(1.0)
        table.sensors.click("start_clock", table.t)  # the console's key names no seat: refused, nothing runs
        table.run(0.5)
        assert of(table.events, "clock_started") == [] and table.controller.clock.seat is None
        [started] = table.command("start_clock", seat=3)
        assert started.type == "clock_started" and started.public["seat"] == 3
        assert table.sensors.output_active("seat3.light")
        table.run(72.0)  # the minute and the ten-second count
        [expired] = of(table.events, "clock_expired")
        assert expired.public["seat"] == 3 and expired.public["ruling"] == "hand_dead"
        seats = table.controller.snapshot(secure=False)["seats"]
        assert seats[2]["folded"] is True and not table.sensors.output_active("seat3.light")
        [started] = table.command("start_clock", seat=2)  # now on seat 2, which folds: the clock stops
        for card in ("Kd", "Kc"):
            table.table.field.place(table.uid[card], "muck")
        stopped = of(table.run(1.5), "clock_stopped")
        assert [(e.public["seat"], e.public["reason"]) for e in stopped] == [(2, "turn_ended")]
    finally:
        table.close()
