"""Where the table expects a card (the next two seats in the dealing order), the readers' first read of a new card
is believed; anywhere else a card still needs its reads (``[hal.cards] present_after_cycles``), as does a card
where the table does not know who plays."""

from pathlib import Path

from rfid_table.config.table import load_config
from rfid_table.devtools.simulate import SimOptions, SimulatedTable
from rfid_table.service.intake import CARD_PARK_S, expected_card_zones

CONFIG = Path(__file__).resolve().parents[1] / "config" / "table-6max.toml"  # the simulated reader, 50 ms a cycle
CHIPS_CONFIG = CONFIG.parent / "table-chips.toml"  # ten seats; cards on reader main, bets on reader chips


def cycles_to_deal(sim: SimulatedTable, t: float, uid: str, zone: str) -> tuple[int, float]:
    """The card ``uid`` laid on ``zone``: the reader cycles until its ``card_dealt``, and the time after them."""
    sim.field.place(uid, zone)
    for cycle in range(1, 20):
        events = sim.step(t)
        t += sim.cycle_s
        if any(e.type == "card_dealt" for e in events):
            return cycle, t
    raise AssertionError(f"no card_dealt for {uid} on {zone}")


def cycles_to_read(sim: SimulatedTable, t: float, uid: str, zone: str) -> int:
    """The card ``uid`` laid on ``zone`` where no card is due: the reader cycles until the readers hold it there."""
    sim.field.place(uid, zone)
    for cycle in range(1, 20):
        sim.step(t)
        t += sim.cycle_s
        if uid in sim.pipeline.tracker.present()[zone]:
            return cycle
    raise AssertionError(f"{uid} never read on {zone}")


def test_the_next_seat_in_the_dealing_order_is_believed_on_one_read_a_card_elsewhere_on_two():
    config = load_config(CONFIG)  # present_after_cycles = 2
    sim = SimulatedTable(config, SimOptions(hands=None, link="direct"), None)
    try:
        uids = iter(config.decks["A"])
        sim.pipeline.submit({"command": "seats", "seats": [1, 2, 3, 4], "role": "floor", "user": "test"})
        sim.pipeline.submit({"command": "set_button", "seat": 4, "role": "floor", "user": "test"})
        t = 1000.0
        sim.step(t)
        t += sim.cycle_s
        # the first card starts the hand: the floor named the players, so seat 1 is expected already
        first, t = cycles_to_deal(sim, t, next(uids), "seat1.cards")
        assert first == 1
        # seat 2 is next: its card is believed on the first read
        second, t = cycles_to_deal(sim, t, next(uids), "seat2.cards")
        assert second == 1
        # a second card pitched to seat 1 while seats 3 and 4 are due: read on the felt after the full two reads
        assert cycles_to_read(sim, t, next(uids), "seat1.cards") == 2
    finally:
        sim.close()


def test_what_the_table_expects_follows_the_deal_round_the_table():
    """Button 4 of seats 1, 2, 4, 6: the deal goes 6, 1, 2, 4, twice; the next two seats are expected, the next
    first (a reader parks there), from before the first card; nothing once each has two cards, after the flop, or
    where the players are not known yet."""
    def snapshot(cards: dict[int, int], phase: str = "preflop", hand: int | None = 7) -> dict:
        return {"hand": hand, "phase": phase, "button": 4, "players": [1, 2, 4, 6],
                "seats": [{"seat": s, "cards": cards.get(s, 0)} for s in range(1, 7)]}

    assert expected_card_zones(snapshot({}), 2) == ["seat6.cards", "seat1.cards"]
    assert expected_card_zones(snapshot({6: 1, 1: 1}), 2) == ["seat2.cards", "seat4.cards"]
    assert expected_card_zones(snapshot({6: 1, 1: 1, 2: 1}), 2) == ["seat4.cards", "seat6.cards"]
    assert expected_card_zones(snapshot({6: 1, 1: 1, 2: 1, 4: 1}), 2) == ["seat6.cards", "seat1.cards"]
    assert expected_card_zones(snapshot({6: 2, 1: 2, 2: 2, 4: 1}), 2) == ["seat4.cards"]
    assert expected_card_zones(snapshot({6: 2, 1: 2, 2: 2, 4: 2}), 2) == []
    assert expected_card_zones(snapshot({6: 1}, phase="flop"), 2) == []
    # a hand folded in the pre-flop betting: its cards went to the muck, and it is owed none (no reader parks there)
    folded = snapshot({1: 2, 2: 2, 4: 2})
    folded["seats"][5]["folded"] = True
    assert expected_card_zones(folded, 2) == []
    # between hands: the next hand's first two seats (the button there is the next hand's)
    assert expected_card_zones(snapshot({}, phase="waiting", hand=None), 2) == ["seat6.cards", "seat1.cards"]
    assert expected_card_zones({**snapshot({}, phase="waiting"), "players": None}, 2) == []


def test_after_the_deal_the_cards_reader_waits_on_the_muck_then_the_burn_then_the_board():
    """At a table that reads the bets: while a seat faces a bet its fold comes next, and the cards reader parks on
    the muck; once nobody has to call, on the burn, then on the board once the burn is read. The burn and a flop card
    are believed on their first read there (a card elsewhere needs two). At the showdown it parks nowhere."""
    config = load_config(CHIPS_CONFIG)  # present_after_cycles = 2
    sim = SimulatedTable(config, SimOptions(hands=None, link="direct"), None)
    intake = sim.pipeline.reader_intake
    chips = config.chips.chips
    hundreds = iter(sorted(uid for uid, value in chips.items() if value == 100))
    quarters = iter(sorted(uid for uid, value in chips.items() if value == 25))
    try:
        uids = iter(config.decks["A"])
        for command in ({"command": "seats", "seats": [1, 2, 3]}, {"command": "set_button", "seat": 3}):
            sim.pipeline.submit({**command, "role": "floor", "user": "test"})
        t = 1000.0
        sim.step(t)
        t += sim.cycle_s

        def until(done, what: str) -> None:
            nonlocal t
            for _ in range(200):
                events = sim.step(t)
                t += sim.cycle_s
                if done(events):
                    return
            raise AssertionError(f"not within 200 cycles: {what}")

        def parked() -> str | None:
            """Where the cards reader parks once the daemon has taken in the last cycle's events."""
            nonlocal t
            sim.step(t)
            t += sim.cycle_s
            return intake.park_zone("main", t)

        def push(seat: int, uids_: list[str], action: str) -> None:
            for uid in uids_:
                sim.field.place(uid, f"seat{seat}.bets")
            until(lambda events: any(e.type == "action" and e.public.get("seat") == seat
                                     and e.public.get("action") == action for e in events), f"seat {seat} {action}")

        sim.field.place(next(quarters), "seat1.bets")  # the small blind, 50 in two chips of 25
        sim.field.place(next(quarters), "seat1.bets")
        sim.field.place(next(hundreds), "seat2.bets")  # the big blind
        for seat in (1, 2, 3, 1, 2, 3):
            _cycles, t = cycles_to_deal(sim, t, next(uids), f"seat{seat}.cards")
        assert parked() == "muck"  # seat 3 faces the big blind: a call, a raise or its fold
        push(3, [next(hundreds)], "call")
        assert parked() == "muck"  # the small blind faces 50 more
        push(1, [next(quarters), next(quarters)], "call")
        # the big blind may check: nobody has to call, the next card is the flop's burn
        assert parked() == "burn"
        assert cycles_to_read(sim, t, next(uids), "burn") == 1
        t += sim.cycle_s
        assert parked() == "board"
        first, t = cycles_to_deal_board(sim, t, next(uids))
        assert first == 1
        # a card where no card is due still needs its two reads (a fourth card on the burn, not yet due)
        assert cycles_to_read(sim, t, next(uids), "seat3.cards") == 2
    finally:
        sim.close()


def cycles_to_deal_board(sim: SimulatedTable, t: float, uid: str) -> tuple[int, float]:
    """The card ``uid`` turned on the board: the reader cycles until the readers hold it there."""
    sim.field.place(uid, "board")
    for cycle in range(1, 20):
        sim.step(t)
        t += sim.cycle_s
        if uid in sim.pipeline.tracker.present()["board"]:
            return cycle, t
    raise AssertionError(f"{uid} never read on the board")
