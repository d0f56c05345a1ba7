"""Cards that go missing during a hand (docs/events.md: ``card_missing``, ``hand_audit``), played with physical cards.

The cards lie on a simulated table (``sim.table_driver``) read every 50 ms by the HAL's zone tracker with the
debouncing of a real table (a card is gone 0.6 s after its last read), and the zone events go to the controller as
the daemon feeds them, with a tick after every cycle. A player looks at their cards and puts them back; a card taken
off the table for good while the hand goes on is reported once, after ``missing_card_s``; its return resolves it;
the dealer gathering the cards at the end is never a missing card; and the simulated dealer, slow and erring, never
loses a card.
"""

from collections import defaultdict

import pytest

from controller import TableController, TableSetup
from controller.cards import FULL_DECK
from controller.floor import CARDS
from hal.zones import DebounceSettings
from sim.dealer import DealerSettings, SimDealer
from sim.table_driver import TableDriver, of
from test_dealing import BettingSays

DECK = {f"E0040150A1{i:06X}": card for i, card in enumerate(FULL_DECK)}
ZONES = {f"seat{n}.cards": ("main", n) for n in range(1, 7)} | {
    "board": ("main", 11), "burn": ("main", 12), "muck": ("main", 13), "exposed": ("main", 14)}
PLAYERS = (1, 2, 3, 5)
ORDER = [1, 2, 3, 5]  # the button on seat 5: the first card goes to seat 1


class Table(TableDriver):
    """A physical table read every cycle: cards placed, lifted and put back take the time they take."""

    def __init__(self, missing_card_s: float | None = None, on_input=None):
        extra = {} if missing_card_s is None else {"missing_card_s": missing_card_s}
        self.betting = BettingSays()
        controller = TableController(TableSetup("t", 6, DECK, 2, clear_after_s=1.0, decks={"A": DECK}, deck_id="A",
                                                button=5, players=PLAYERS, **extra), self.betting)
        super().__init__(controller, ZONES, debounce=DebounceSettings(present_after_cycles=2, absent_after_s=0.6),
                         cycle_s=0.05, move_s=0.3, start_t=1000.0, deck=DECK, on_input=on_input)
        self.stub = list(FULL_DECK)
        self.hole: dict[int, list[str]] = defaultdict(list)
        self.board_cards: list[str] = []

    def put(self, card: str, zone: str, settle: float = 0.3) -> list:
        return super().put(card, zone, seconds=settle)

    def device(self, kind: str, antenna: int) -> list:
        return super().device(kind, antenna=antenna)

    def deal(self) -> list:
        out = []
        for _round in range(2):
            for seat in ORDER:
                card = self.stub.pop(0)
                self.hole[seat].append(card)
                out += self.put(card, f"seat{seat}.cards")
        return out

    def street(self, count: int) -> list:
        out = self.put(self.stub.pop(0), "burn")
        for _ in range(count):
            card = self.stub.pop(0)
            self.board_cards.append(card)
            out += self.put(card, "board")
        return out

    def fold(self, seat: int) -> list:
        out = []
        for card in self.hole[seat]:
            out += self.put(card, "muck")
        return out

    def gather(self) -> list:
        self.clear()
        return self.run(2.0)


def missing(events) -> list:
    return of(events, "irregular_card", "card_missing")


def test_a_hole_card_lifted_for_three_seconds_and_put_back_is_nothing():
    table = Table()
    table.deal()
    table.street(3)
    card = table.hole[2][0]
    table.take(card, seconds=3.0)  # the player looks at it
    table.put(card, "seat2.cards")
    table.run(20.0)  # long after: it lies where it belongs
    for seat in (2, 3):  # everyone looks at their cards now and then; both at once too
        table.take(*table.hole[seat], seconds=4.0)
        for hole_card in table.hole[seat]:
            table.put(hole_card, f"seat{seat}.cards")
    table.run(15.0)
    ended = table.gather()
    assert "hand_ended" in [e.type for e in ended]
    assert of(table.events, "irregular_card") == [] and of(table.events, "hand_audit") == []


def test_a_hole_card_taken_for_good_is_reported_once_after_the_threshold():
    table = Table()
    table.deal()
    table.street(3)
    card = table.hole[3][1]
    table.take(card, seconds=10.0)  # off the antenna 0.6 s after it was lifted: not 10 s yet
    assert missing(table.events) == []
    [event] = missing(table.run(1.0))
    public, secret = event.public, event.secret
    assert public == {"code": "card_missing", "zone": "seat3.cards", "absent_s": public["absent_s"], "seats": [3],
                      "severity": "warning", "ruling": "none", "rules": [], "needs_floor": False, "profile": "tda"}
    assert 10.0 <= public["absent_s"] <= 10.1
    assert secret == {"cards": [card]}  # the card on the secure branch only
    assert card not in str(public)
    assert [p["code"] for p in table.controller.snapshot(secure=False)["irregularities"]] == []  # no floor wait

    # The hand goes on without it: told once, not again.
    table.run(30.0)
    table.street(1)
    table.fold(1)
    table.street(1)
    assert len(missing(table.events)) == 1
    ended = table.gather()
    assert [e.type for e in ended] == ["hand_audit", "hand_ended"]
    audit = ended[0]
    assert audit.public == {"seen": 16, "places": {"seats": 5, "board": 5, "burn": 3, "muck": 2, "other": 0},
                            "missing": 1, "seats": [3], "irregularities": [event.seq], "severity": "warning",
                            "ruling": "new_deck", "rules": ["PP Irregularities 10"]}
    assert audit.secret == {"cards": {
        "seats": {"2": table.hole[2], "3": [table.hole[3][0]], "5": table.hole[5]}, "board": table.board_cards,
        "burn": [c for c in FULL_DECK[8:16] if c not in table.board_cards], "muck": table.hole[1], "other": [],
        "missing": [card]}}
    assert of(table.events, "irregularity_resolved") == []


def test_the_missing_card_coming_back_resolves_it_and_a_new_absence_is_a_new_report():
    table = Table()
    table.deal()
    table.street(3)
    card = table.hole[1][0]
    table.take(card, seconds=12.0)
    [first] = missing(table.events)
    back = table.put(card, "seat1.cards")
    assert [(e.type, e.public) for e in back] == [
        ("irregularity_resolved", {"irregularity": first.seq, "code": "card_missing", "resolution": "returned"})]
    table.run(20.0)
    assert len(missing(table.events)) == 1  # back where it belongs: nothing more
    table.take(card, seconds=12.0)  # gone again
    [_, second] = missing(table.events)
    assert second.seq != first.seq and second.secret == {"cards": [card]}
    table.put(card, "muck")  # found, and folded: back (then a fold)
    assert [e.type for e in table.events[-2:]] == ["irregularity_resolved", "fold"]
    table.street(1)
    ended = table.gather()
    assert [e.type for e in ended] == ["hand_ended"]  # everything accounted for: no audit


def test_a_board_card_taken_off_the_table_is_reported_without_a_seat():
    table = Table()
    table.deal()
    table.street(3)
    table.street(1)
    turn = table.board_cards[-1]
    table.take(turn, seconds=11.0)
    [event] = missing(table.events)
    assert event.public["zone"] == "board" and event.public["seats"] == [] and event.secret == {"cards": [turn]}
    ended = table.gather()
    assert ended[0].type == "hand_audit" and ended[0].public["seats"] == []
    assert ended[0].secret["cards"]["missing"] == [turn] and turn not in ended[0].secret["cards"]["board"]


def test_the_dealer_gathering_the_cards_at_the_end_is_no_missing_card():
    tables = []
    # Showdown: the dealer takes the board first, the players' cards a few seconds later.
    table = Table()
    table.deal()
    table.street(3)
    table.street(1)
    table.street(1)
    table.take(*table.board_cards, seconds=6.0)
    table.gather()
    tables.append(table)
    # Uncontested: once the last player but one has folded, what leaves the table is the gathering, however slow.
    table = Table()
    table.deal()
    table.street(3)
    for seat in (1, 2, 3):
        table.fold(seat)
    table.take(*table.board_cards, seconds=15.0)  # the winner keeps their cards a while
    table.take(*table.hole[5], seconds=15.0)  # the dealer takes them; the burn cards and the muck are still there
    table.gather()
    tables.append(table)
    # The board and the players' cards in the dealer's hands, the burn cards and the muck left lying a while.
    table = Table()
    table.deal()
    table.fold(1)
    table.street(3)
    table.take(*table.board_cards, *table.hole[2], *table.hole[3], *table.hole[5], seconds=15.0)
    table.gather()
    tables.append(table)
    # The board and the losing hands swept into the muck, the muck picked up last.
    table = Table()
    table.deal()
    table.street(3)
    for card in [*table.board_cards, *table.hole[1], *table.hole[2]]:
        table.put(card, "muck", settle=0.5)
    table.run(20.0)
    table.gather()
    tables.append(table)
    for table in tables:
        assert [e.type for e in table.events].count("hand_ended") == 1
        assert of(table.events, "irregular_card") == [] and of(table.events, "hand_audit") == []


def test_cards_folded_into_the_muck_are_accounted_for_when_the_muck_is_squared():
    table = Table()
    table.deal()
    table.fold(2)
    table.street(3)
    table.take(*table.hole[2], seconds=20.0)  # the dealer squares the muck, off its antenna
    table.street(1)
    ended = table.gather()
    assert of(table.events, "irregular_card") == [] and [e.type for e in ended] == ["hand_ended"]


def test_nothing_counts_while_an_antenna_is_faulted_and_the_count_starts_again_when_it_recovers():
    table = Table()
    table.deal()
    table.street(3)
    assert [e.type for e in table.device("antenna_fault", 3)] == ["antenna"]
    table.take(*table.hole[3], seconds=20.0)  # seat 3's antenna reads nothing
    assert missing(table.events) == []
    table.device("antenna_ok", 3)
    table.put(table.hole[3][0], "seat3.cards", settle=9.0)  # one card reads again, the other one really is gone
    assert missing(table.events) == []  # its absence counts from the recovery
    [event] = missing(table.run(2.0))
    assert event.secret == {"cards": [table.hole[3][1]]} and event.public["absent_s"] > 20


def test_nothing_counts_while_the_floor_is_to_rule():
    table = Table()
    table.deal()
    table.street(3)
    # A four-card flop waits for the floor's pick (TDA 39-1): the dealer mixes the four cards off the board.
    table.betting.open = lambda: True
    fourth = table.stub.pop(0)
    table.put(fourth, "board")
    [pick] = of(table.events, "irregular_card", "four_card_flop")
    table.betting.open = lambda: False
    table.take(*table.board_cards, fourth, seconds=30.0)
    assert missing(table.events) == []
    out, refusal = table.try_command("floor_pick", irregularity=pick.seq, card=fourth)
    assert refusal is None and "board_corrected" in [e.type for e in out]
    for card in table.board_cards:  # the flop back on the board, the pick on the burn zone
        table.put(card, "board")
    table.put(fourth, "burn", settle=15.0)
    assert missing(table.events) == []
    table.take(table.board_cards[0], seconds=11.0)  # with the floor's ruling made, a card taken away counts again
    assert len(missing(table.events)) == 1


@pytest.mark.parametrize("limit", [5.0, 0])
def test_the_time_a_card_may_be_away_is_the_table_s(limit):
    table = Table(missing_card_s=limit)
    table.deal()
    table.take(table.hole[1][0], seconds=5.0)
    assert missing(table.events) == []
    table.run(25.0)
    if limit:
        [event] = missing(table.events)
        assert 5.0 <= event.public["absent_s"] <= 5.1
    else:  # 0: not checked
        assert missing(table.events) == []
        assert [e.type for e in table.gather()] == ["hand_ended"]


def test_a_negative_time_is_refused():
    with pytest.raises(ValueError, match="missing_card_s"):
        TableController(TableSetup("t", 6, DECK, missing_card_s=-1.0))


def test_a_journal_replay_reports_the_same_missing_card(tmp_path):
    from rfid_table.service.inputs import device_input, tick_input, zone_input
    from rfid_table.service.journal import Journal
    from rfid_table.service.replay import replay

    inputs: list = []

    def journaled(step) -> None:  # as the daemon journals: only a tick that changed something is an input
        if step.kind == "zone":
            inputs.append(zone_input(step.body))
        elif step.kind == "device":
            inputs.append(device_input(step.body))
        elif step.kind == "tick" and step.produced:
            inputs.append(tick_input(step.t))

    table = Table(on_input=journaled)
    controller = table.controller
    table.deal()
    table.street(3)
    table.device("antenna_fault", 2)
    table.take(table.hole[2][0], seconds=3.0)
    table.device("antenna_ok", 2)
    table.take(table.hole[5][1], seconds=12.0)
    table.put(table.hole[5][1], "seat5.cards")
    table.take(table.hole[1][0], seconds=12.0)
    table.street(1)
    table.gather()
    assert [e.type for e in table.events].count("irregular_card") == 3
    journal = Journal(tmp_path / "j.db")
    assert journal.open().ok
    journal.record(inputs, table.events)
    restored = TableController(controller.setup)
    result = replay(journal, restored)
    journal.close()
    assert result.mismatches == []
    assert [(e.seq, e.type, e.t, e.public, e.secret) for e in result.events] == [
        (e.seq, e.type, e.t, e.public, e.secret) for e in table.events]


# ---- the simulated dealer -------------------------------------------------------------------------------------

def dealt_by_the_simulator(hands: int, seed: int, pace_s: float, exposed_by: str, **rates) -> tuple[list, SimDealer]:
    """The simulated dealer's moves on a table read every 0.25 s (a card is gone 0.6 s after its last read); the floor
    confirms at once whatever waits for it, as the simulated dealer assumes."""
    players = [1, 2, 3, 4, 5, 6]
    controller = TableController(TableSetup("t", 6, DECK, 2, decks={"A": DECK}, deck_id="A", button=players[0],
                                            players=tuple(players), exposed_by=exposed_by),
                                 betting := BettingSays())
    table = TableDriver(controller, ZONES, debounce=DebounceSettings(present_after_cycles=1, absent_after_s=0.6),
                        cycle_s=0.25, start_t=1000.0)
    dealer = SimDealer(table.field, DECK, DealerSettings(players, 2, pace_s, 0.3, exposed_by=exposed_by, **rates),
                       seed)
    betting.open = lambda: dealer.betting_open

    def floor_confirms(events: list) -> None:
        for event in events:
            if event.type == "irregular_card" and event.seq in controller.floor.of(CARDS):
                table.try_command("confirm", irregularity=event.seq, user="sim")

    for move in dealer.hands(hands):
        for _ in range(int(move.delay_s / 0.25)):
            floor_confirms(table.cycle())
        move.apply()
        floor_confirms(table.cycle(after_s=0.05, console=move.command))
    for _ in range(20):
        floor_confirms(table.cycle())
    return table.events, dealer


@pytest.mark.parametrize("pace_s, exposed_by, rates", [
    (1.0, "zone", {}),
    (4.0, "console", {}),  # a slow dealer: a fold or a street every few seconds
    (4.0, "console", dict(exposed_rate=0.08, extra_card_rate=0.05, wrong_seat_rate=0.05, premature_board_rate=0.08)),
    (2.5, "zone", dict(exposed_rate=0.08, extra_card_rate=0.05, premature_board_rate=0.08)),
])
def test_the_simulated_dealer_never_loses_a_card(pace_s, exposed_by, rates):
    events, dealer = dealt_by_the_simulator(120, 4, pace_s, exposed_by, **rates)
    assert dealer.hands_dealt >= 120 and [e.type for e in events].count("hand_ended") == dealer.hands_dealt
    assert missing(events) == [] and of(events, "hand_audit") == []
    if rates:  # the exposed cards taken away and the premature cards taken back were out of the play
        assert {e.kind for e in dealer.errors} >= {"exposed_card", "premature_board"}
