"""The controller reading a hold'em hand from the cards laid on a simulated table (``sim.table_driver``), and what it
does with cards out of place."""

import pytest

from controller import TableController, TableSetup
from controller.cards import FULL_DECK
from hal.zones import DebounceSettings
from sim.table_driver import TableDriver, types

DECK = {f"E0040150{i:08X}": card for i, card in enumerate(FULL_DECK)}
ZONES = {f"seat{n}.cards": ("main", n) for n in range(1, 7)} | {"board": ("main", 11), "burn": ("main", 12),
                                                                "muck": ("main", 13)}


class Table(TableDriver):
    """Each move read in the one pass of the readers that follows it, 0.1 s after the last."""

    def __init__(self, seats: int = 6, hole_cards: int = 2):
        super().__init__(TableController(TableSetup("t", seats, DECK, hole_cards, clear_after_s=1.0)), ZONES,
                         debounce=DebounceSettings(present_after_cycles=1, absent_after_s=0.0), cycle_s=0.1,
                         start_t=1000.0, deck=DECK)

    def lift(self, card: str) -> list:
        return self.take(card)

    def gather(self) -> list:
        self.clear()
        return self.cycle()

    def wait(self, seconds: float) -> list:
        return self.skip(seconds)

    def deal(self, hands: dict[int, list[str]]) -> None:
        rounds = max(len(cards) for cards in hands.values())
        for i in range(rounds):
            for seat, cards in hands.items():
                self.put(cards[i], f"seat{seat}.cards")


def test_a_hand_from_deal_to_gathered_cards():
    table = Table()
    table.deal({1: ["As", "Kd"], 3: ["7h", "7c"], 5: ["2d", "9s"]})
    assert types(table.events) == ["hand_started"] + ["card_dealt"] * 6
    assert table.controller.snapshot(secure=True)["seats"][2]["hole_cards"] == ["7h", "7c"]

    table.put("Qc", "burn")
    for card in ("Jh", "Th", "3c"):
        table.put(card, "board")
    assert table.controller.phase() == "flop"
    folds = table.put("2d", "muck") + table.put("9s", "muck")  # seat 5 pushes both cards into the muck
    assert [(e.type, e.public, e.secret) for e in folds] == [("fold", {"seat": 5}, {"cards": ["2d", "9s"]})]
    table.put("4c", "burn")
    table.put("5c", "board")
    table.put("6c", "burn")
    table.put("8d", "board")
    assert table.controller.phase() == "river"

    table.gather()
    assert table.wait(0.5) == []  # not clear for long enough yet
    ended = table.wait(0.6)
    assert types(ended) == ["hand_ended"]
    assert ended[0].public == {"board": ["Jh", "Th", "3c", "5c", "8d"], "live_seats": [1, 3], "folded_seats": [5],
                               "misdeal": False}
    assert ended[0].secret == {"hole_cards": {"1": ["As", "Kd"], "3": ["7h", "7c"]}}
    assert table.controller.phase() == "waiting"
    assert [e.seq for e in table.events] == list(range(1, len(table.events) + 1))


def test_hole_cards_burns_and_folded_cards_stay_out_of_every_public_part():
    table = Table()
    table.deal({2: ["As", "Kd"], 4: ["7h", "7c"]})
    table.put("Qc", "burn")
    table.put("As", "muck")
    secret_cards = {"As", "Kd", "7h", "7c", "Qc"}
    for event in table.events:
        assert not secret_cards & set(map(str, _strings(event.public))), event
    public = table.controller.snapshot(secure=False)
    assert not secret_cards & set(_strings(public))
    assert "Qc" in _strings(table.controller.snapshot(secure=True))


def _strings(value):
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [value]


def test_a_player_looking_at_their_cards_changes_nothing():
    table = Table()
    table.deal({1: ["As", "Kd"], 2: ["7h", "7c"]})
    before = len(table.events)
    table.lift("As")
    table.put("As", "seat1.cards")
    assert len(table.events) == before


def test_the_last_live_players_cards_going_to_the_muck_are_gathered_not_folded():
    table = Table()
    table.deal({1: ["As", "Kd"], 2: ["7h", "7c"]})
    table.put("7h", "muck")  # seat 2 folds: seat 1 wins
    table.put("7c", "muck")
    table.put("As", "muck")  # the dealer gathers the winner's cards
    table.put("Kd", "muck")
    assert types(table.events).count("fold") == 1
    table.gather()
    table.wait(1.0)
    assert table.events[-1].public["live_seats"] == [1]


def test_the_next_hands_first_card_ends_the_previous_hand_at_once():
    table = Table()
    table.deal({1: ["As", "Kd"], 2: ["7h", "7c"]})
    table.gather()
    # The button moved from seat 2 to seat 1: the next deal starts at seat 2.
    table.deal({2: ["2c", "3c"], 1: ["4c", "5c"]})
    assert types(table.events)[:9] == ["hand_started"] + ["card_dealt"] * 4 + ["hand_ended", "hand_started",
                                                                               "card_dealt", "card_dealt"]
    assert table.controller.hand == 2
    assert {e.hand for e in table.events if e.type == "card_dealt"} == {1, 2}
    assert "irregular_card" not in types(table.events)


@pytest.mark.parametrize("variant_cards", [4, 5, 6])
def test_omaha_seats_take_four_five_or_six_cards(variant_cards):
    table = Table(hole_cards=variant_cards)
    table.deal({1: FULL_DECK[:variant_cards], 2: FULL_DECK[10:10 + variant_cards]})
    assert types(table.events).count("card_dealt") == 2 * variant_cards
    assert "irregular_card" not in types(table.events)


def irregular(events) -> list[tuple]:
    return [(e.public["code"], e.public.get("seat"), e.secret.get("card", e.public.get("card")))
            for e in events if e.type == "irregular_card"]


def test_cards_where_the_game_does_not_expect_them_become_events_not_silence():
    table = Table()
    assert irregular(table.put("Ah", "board")) == [("card_outside_hand", None, "Ah")]  # no hand running
    table.lift("Ah")
    table.deal({1: ["As", "Kd"], 2: ["7h", "7c"]})
    assert irregular(table.put("2c", "seat1.cards")) == [("extra_hole_card", 1, "2c")]
    assert irregular(table.put("Kd", "seat2.cards")) == [("hole_card_moved", 2, "Kd")]
    assert irregular(table.put("7h", "board")) == [("hole_card_on_board", 2, "7h")]
    table.put("Qc", "burn")
    table.put("Qc", "board")  # the burn card turned face up: everyone has seen it
    assert irregular(table.events[-2:]) == [("burn_card_on_board", None, "Qc")]
    for card in ("3s", "4s", "5s", "6s"):
        table.put(card, "board")
    assert irregular(table.put("8s", "board")) == [("extra_board_card", None, "8s")]
    assert irregular(table.put("9s", "seat3.cards")) == [("hole_card_after_board", 3, "9s")]
    assert irregular(table.put("Jd", "muck")) == [("unseen_card_mucked", None, "Jd")]


def test_an_unregistered_tag_is_reported_with_its_zone_and_never_counts_as_a_card():
    table = Table()
    table.deal({1: ["As", "Kd"], 2: ["7h", "7c"]})
    out = table.put("E00401509999FFFF", "seat1.cards")
    assert [(e.type, e.public) for e in out] == [("unknown_tag", {"zone": "seat1.cards",
                                                                   "uid": "E00401509999FFFF"})]
    assert table.controller.snapshot(secure=True)["seats"][0]["hole_cards"] == ["As", "Kd"]


def test_a_foreign_deck_dumped_on_the_muck_is_five_unknown_tags_then_one_that_counts_the_rest():
    """A flood of unknown tags must not flood the feeds and the journal: 5 a zone in 10 s, then the window's end
    gives the newest with how many arrived (docs/mqtt.md, "Bursts"); another zone has its own 5."""
    table = Table()
    foreign = [f"E00401509999{i:04X}" for i in range(52)]
    table.place(*foreign, zone="muck")
    first = table.cycle()
    assert [(e.type, e.public.get("summarised")) for e in first] == [("unknown_tag", None)] * 5
    assert table.put("E00401508888AAAA", "seat2.cards") != []  # a zone of its own
    assert table.wait(5.0) == []  # the window is not over
    last = table.wait(5.0)
    assert [(e.type, e.public["zone"], e.public["uid"], e.public["summarised"]) for e in last] == [
        ("unknown_tag", "muck", foreign[-1], 47)]
    table.take(*foreign)
    table.place(*foreign[:3], zone="muck")  # a new window: one by one again
    assert [e.public.get("summarised") for e in table.cycle()] == [None] * 3


def test_the_same_inputs_give_the_same_events():
    def run():
        table = Table()
        table.deal({1: ["As", "Kd"], 2: ["7h", "7c"], 3: ["2s", "3s"]})
        table.put("7h", "muck")
        table.put("Qc", "burn")
        table.put("Jh", "board")
        table.gather()
        table.wait(2)
        return [(e.seq, e.type, e.t, e.hand, e.public, e.secret) for e in table.events]

    assert run() == run()
