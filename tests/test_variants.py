"""The cash-game variants on a simulated table, read from the chips and the cards through the zone tracker: 7-card
Omaha (CA GR 15), a hand run twice (CA Actions 8), the double board (CA GR 14.1)."""

from __future__ import annotations

import pytest

from simulated_table import play_chips_table
from test_rulings import ZONES, Table, of

pytest.importorskip("phevaluator")


class VariantTable(Table):
    """The rulings' table dealing ``variant`` (a key of controller.betting.VARIANTS) with ``hole_cards`` each; with
    ``board2``, a second board antenna."""

    def __init__(self, variant: str = "NLHE", hole_cards: int = 2, players=(1, 2, 3, 4, 5), button: int = 5,
                 stack: int = 5000, board2: bool = False, double_board: bool = False, missing_card_s: float = 10.0):
        super().__init__(players=players, button=button, stack=stack,
                         zones=ZONES | {"board2": ("main", 35)} if board2 else ZONES,
                         betting_options={"variant": variant, "double_board": double_board},
                         hole_cards=hole_cards, double_board=double_board, missing_card_s=missing_card_s)
        self.players = tuple(players)

    def deal_hands(self, hands: dict[int, str]) -> None:
        """Pitch ``hands`` (seat → its cards, space-separated) round by round from the seat left of the button."""
        button = self.controller.cards.button
        order = [s for s in sorted(hands) if s > button] + [s for s in sorted(hands) if s <= button]
        for rnd in range(len(next(iter(hands.values())).split())):
            for seat in order:
                card = hands[seat].split()[rnd]
                self.hole.setdefault(seat, []).append(card)
                self.card(f"seat{seat}.cards", card, seconds=0.1)
        self.run(0.6)

    def street(self, burn: str, cards: str, zone: str = "board") -> None:
        self.card("burn", burn)
        for card in cards.split():
            self.card(zone, card)


def test_seven_card_omaha_is_dealt_seven_cards_and_pays_the_hand_of_two_hole_and_three_board_cards():
    """CA GR 15.1: "5 players maximum 7 cards". Five players are dealt seven cards each (35 of the deck); everyone
    calls the big blind and checks to the river. The board has four spades: seat 3's one spade in hand makes no
    Omaha flush (exactly two hole cards), seat 4's two spades do and win the 500."""
    table = VariantTable("PLO7", 7)
    table.blinds()
    table.deal_hands({1: "2h 3h 4d 5d 6c 7c 8h", 2: "9h Th Jd Qd 2d 3d 4c", 3: "As Kh Kd Kc Qh 5h 6h",
                      4: "4s 5s 7h 7d 8c 8d 9c", 5: "Ah Ad Ac Qc Tc Jc Jh"})
    assert [e.public["count"] for e in of(table.events, "card_dealt") if e.public["seat"] == 1] == list(range(1, 8))
    assert not of(table.events, "irregular_card")
    for seat in (3, 4, 5):
        table.chips(seat, 100)
    table.chips(1, 25, 25)
    table.street("6s", "2s 7s 9s")
    table.street("8s", "Js")
    table.street("Ts", "3c")
    table.clear()
    table.run(3.0)
    [showdown] = of(table.events, "showdown")
    assert showdown.public["payouts"] == {"4": 500}
    assert not of(table.events, "irregular_card") and not of(table.events, "bet_ruling")


# ---- run it twice (CA Actions 8) -------------------------------------------------------------------------------

def heads_up_all_in(board2: bool = False) -> VariantTable:
    """Heads-up, seat 2 on the button posts the small blind: both all-in for 1000 before the flop, seat 1 with
    kings, seat 2 with queens."""
    table = VariantTable(players=(1, 2), button=2, stack=1000, board2=board2)
    table.chips(2, 25, 25)
    table.chips(1, 100)
    table.deal_hands({1: "Ks Kd", 2: "Qs Qd"})
    table.command("declare", seat=2, declaration="all_in")
    table.chips(2, 500, 100, 100, 100, 100, 25, 25)
    table.chips(1, 500, 100, 100, 100, 100)
    assert table.betting()["to_act"] is None and table.betting()["pot"] == 2000
    return table


RUN_1, RUN_2 = ("5h", "2c 7h 9d", "6h", "3s", "8h", "4h"), ("Th", "Qh 7c 9s", "Jh", "3d", "Ah", "4c")


def run_out(table: VariantTable, burns_and_cards, zone: str = "board") -> None:
    burn1, flop, burn2, turn, burn3, river = burns_and_cards
    table.street(burn1, flop, zone)
    table.street(burn2, turn, zone)
    table.street(burn3, river, zone)


def showdown_of(table: VariantTable):
    table.clear()
    table.run(3.0)
    [showdown] = of(table.events, "showdown")
    return showdown


def test_a_hand_run_twice_on_one_board_antenna_pays_each_run_half_the_pot():
    """CA Actions 8: "the entire board can be dealt twice if a.) no more action is possible, b.) all players declare
    themselves clearly". The dealer deals the first run whole, then the second on the same antenna: the table tells
    them apart by count (a run is complete before the next begins). Kings win the first run, the queens' set the
    second: 1000 each."""
    table = heads_up_all_in()
    [agreed] = of(table.command("run_it", times=2), "run_it_agreed")
    assert agreed.public["runs"] == 2 and agreed.public["pots"] is None and agreed.public["shared"] == 0
    run_out(table, RUN_1)
    run_out(table, RUN_2)
    second = [e.public for e in table.events if e.type == "board_card" and e.public.get("board_number") == 2]
    assert [(c["card"], c["position"], c["street"]) for c in second] == [
        ("Qh", 1, "flop"), ("7c", 2, "flop"), ("9s", 3, "flop"), ("3d", 4, "turn"), ("4c", 5, "river")]
    assert not of(table.events, "irregular_card")
    showdown = showdown_of(table)
    assert showdown.public["payouts"] == {"1": 1000, "2": 1000} and showdown.public["runs"] == 2
    assert showdown.public["boards"] == [RUN_1[1].split() + [RUN_1[3], RUN_1[5]],
                                         RUN_2[1].split() + [RUN_2[3], RUN_2[5]]]
    [history] = of(table.events, "hand_history")
    text = history.secret["pokerstars_complete"]
    assert "*** SECOND FLOP *** [Qh 7c 9s]" in text and "Hand was run twice" in text
    assert history.secret["ohh_complete"]["ohh"]["flags"] == ["Run_It_Twice"]


def test_a_hand_run_twice_from_the_flop_shares_the_flop_and_may_use_a_second_board_antenna():
    """The runs after the flop share it; the second run's turn and river lie on the second board antenna, dealt
    while the first run is still being completed."""
    table = VariantTable(players=(1, 2), button=2, stack=1000, board2=True)
    table.chips(2, 25, 25)
    table.chips(1, 100)
    table.deal_hands({1: "Ks Kd", 2: "Qs Qd"})
    table.chips(2, 25, 25)  # the small blind completes, the big blind checks on the flop's first card
    table.street("5h", "2c 7h 9d")
    table.command("declare", seat=1, declaration="all_in")
    table.chips(1, 500, 100, 100, 100, 100)
    table.chips(2, 500, 100, 100, 100, 100)
    [agreed] = of(table.command("run_it", times=2), "run_it_agreed")
    assert agreed.public["shared"] == 3
    table.card("burn", "6h")
    table.card("board", "3s")  # the first run's turn
    table.card("burn", "Th")
    table.card("board2", "Qh")  # the second run's turn on its own antenna
    table.card("burn", "8h")
    table.card("board", "4h")
    table.card("burn", "Jh")
    table.card("board2", "4c")
    assert not of(table.events, "irregular_card")
    showdown = showdown_of(table)
    assert showdown.public["boards"] == [["2c", "7h", "9d", "3s", "4h"], ["2c", "7h", "9d", "Qh", "4c"]]
    assert showdown.public["payouts"] == {"1": 1000, "2": 1000}


def test_running_twice_is_agreed_only_when_no_more_action_is_possible():
    """CA Actions 8a: "no more action is possible"."""
    table = VariantTable(players=(1, 2), button=2, stack=1000)
    table.chips(2, 25, 25)
    table.chips(1, 100)
    table.deal_hands({1: "Ks Kd", 2: "Qs Qd"})
    events, refusal = table.try_command("run_it", times=2, role="dealer", user="bob")
    assert events == [] and "no more action is possible" in refusal


def test_a_side_pot_run_twice_leaves_the_main_pot_to_the_first_run():
    """CA Actions 8e: "If the main pot was not approved for Run It Twice but only for the side pot, the main pot may
    not be used for Run It Twice in the showdown under any circumstances!" Seat 3 is all-in short (300): the main
    pot of 900 goes by the first run, where seat 3's aces win; the side pot (1400) is split between the runs."""
    table = VariantTable(players=(1, 2, 3), button=3, stack=1000)
    table.command("set_stacks", stacks={"3": 300})
    table.chips(1, 25, 25)
    table.chips(2, 100)
    table.deal_hands({1: "Ks Kd", 2: "Qs Qd", 3: "As Ad"})
    table.command("declare", seat=3, declaration="all_in")
    table.chips(3, 100, 100, 100)
    table.command("declare", seat=1, declaration="all_in")
    table.chips(1, 500, 100, 100, 100, 100, 25, 25)
    table.chips(2, 500, 100, 100, 100, 100)
    assert table.betting()["to_act"] is None and table.betting()["pot"] == 2300
    [agreed] = of(table.command("run_it", times=2, pots=[1]), "run_it_agreed")
    assert agreed.public["pots"] == [1]
    run_out(table, RUN_1)
    run_out(table, RUN_2)
    showdown = showdown_of(table)
    assert [p["amount"] for p in showdown.public["pots"]] == [900, 1400]
    assert showdown.public["payouts"] == {"3": 900, "1": 700, "2": 700}
    assert "CA Actions 8e" in showdown.public["pots"][0]["rules"]


# ---- the burn cards reshuffled for a later run (CA GR 15.3; CA Actions 8e) -------------------------------------

def again(table: VariantTable, zone: str, card: str, seconds: float = 0.25) -> list:
    """A card the dealer had set aside (a burn card taken up to be reshuffled) placed on ``zone``."""
    return table.put(card, zone, seconds)


def all_in_before_the_flop(players: int, hole_cards: int, variant: str) -> tuple[VariantTable, list[str]]:
    """``players`` seats dealt ``hole_cards`` each from the top of the deck; seats 1 (small blind) and 2 (big
    blind, 200 each) go all-in, the others fold. Returns the table and the stub left, top first."""
    seats = tuple(range(1, players + 1))
    table = VariantTable(variant, hole_cards, players=seats, button=players, stack=200, missing_card_s=5.0)
    table.chips(1, 25, 25)
    table.chips(2, 100)
    deck = list(table.stub)
    hands = {s: " ".join(deck[(s - 1) * hole_cards:s * hole_cards]) for s in seats}
    table.deal_hands(hands)
    for seat in seats[2:]:
        table.fold(seat)
    table.command("declare", seat=1, declaration="all_in")
    table.chips(1, 100, 25, 25)
    table.chips(2, 100)
    assert table.betting()["to_act"] is None and table.betting()["pot"] == 400
    table.command("run_it", times=2)
    return table, deck[players * hole_cards:]


def test_eight_players_at_five_card_omaha_run_twice_reuse_the_four_burn_cards_without_an_irregularity():
    """CA GR 15.3: "Burn / Flop / Burn / Turn / Burn / River / Burn / Flop 2 - after that, no more cards are
    available and the the croupier/croupière shuffles the remaining 4 burn cards: Burn / Turn 2 / Burn / River 2."
    40 cards dealt, the twelve left make the first board, four burns and the second flop; the four burn cards are
    taken up and shuffled (off every antenna longer than the missing-card time), then one is burned again, one is
    the second turn, one is burned, one is the second river: no duplicate, burn-on-board, missing-burn or missing
    card."""
    table, stub = all_in_before_the_flop(8, 5, "PLO5")
    a, f1, f2, f3, b, turn, c, river, d, g1, g2, g3 = stub
    assert len(stub) == 12
    table.street(a, f"{f1} {f2} {f3}")
    table.street(b, turn)
    table.street(c, river)
    table.street(d, f"{g1} {g2} {g3}")
    for burn in (a, b, c, d):  # the dealer takes the burn cards up and shuffles them
        table.remove(burn)
    table.run(6.0)
    again(table, "burn", b)
    again(table, "board", d)
    again(table, "burn", a)
    again(table, "board", c)
    assert not of(table.events, "irregular_card"), [e.public for e in of(table.events, "irregular_card")]
    reshuffled = [e.public for e in table.events if e.type == "board_card" and e.public.get("reshuffled")]
    assert [(p["card"], p["board_number"], p["street"]) for p in reshuffled] == [(d, 2, "turn"), (c, 2, "river")]
    showdown = showdown_of(table)
    assert showdown.public["boards"][1] == [g1, g2, g3, d, c]
    assert sum(showdown.public["payouts"].values()) == 400


def test_nine_players_at_omaha_run_twice_reshuffle_the_three_burn_cards_with_the_stub():
    """CA Actions 8e: "If cards have been dealt to nine players in Pot Limit Omaha and the board is required to be
    dealt twice, the three burn cards with the remaining eight cards are shuffled again after the first regular board
    before the second board can be dealt." The second board's flop and river hold two of the first board's burn
    cards and the third is burned again."""
    table, stub = all_in_before_the_flop(9, 4, "PLO")
    a, f1, f2, f3, b, turn, c, river, *rest = stub
    assert len(rest) == 8
    table.street(a, f"{f1} {f2} {f3}")
    table.street(b, turn)
    table.street(c, river)
    for burn in (a, b, c):
        table.remove(burn)
    table.run(6.0)
    table.card("burn", rest[0])
    again(table, "board", b)
    table.card("board", rest[1])
    table.card("board", rest[2])
    again(table, "burn", a)
    table.card("board", rest[3])
    table.card("burn", rest[4])
    again(table, "board", c)
    assert not of(table.events, "irregular_card"), [e.public for e in of(table.events, "irregular_card")]
    showdown = showdown_of(table)
    assert showdown.public["boards"][1] == [b, rest[1], rest[2], rest[3], c]


def test_a_later_run_without_a_burn_is_still_a_missing_burn():
    """The reshuffle does not excuse a street of a later run dealt without its burn (DE 3: play goes on)."""
    table = heads_up_all_in()
    table.command("run_it", times=2)
    run_out(table, RUN_1)
    table.street(RUN_2[0], RUN_2[1])
    table.card("board", RUN_2[3])  # the second turn without a burn
    table.run(2.0)
    [missing] = of(table.events, "irregular_card", "missing_burn")
    assert missing.public["street"] == "turn" and missing.public.get("board_number") == 2


# ---- the double board (CA GR 14.1) -----------------------------------------------------------------------------

@pytest.mark.parametrize("board2", [False, True])
def test_a_double_board_deals_two_boards_every_hand_and_divides_the_pot_between_them(board2):
    """CA GR 14.1: "The croupier deals two boards, each consisting of "Flop", "Turn" and "River". The pot is divided
    equally between these "Boards"." On one board antenna each street of the first board comes first, then the same
    street of the second; on a table with a second board antenna the second board lies there. The betting goes on as
    usual, street by street: a bet on the flop, called."""
    table = VariantTable(players=(1, 2), button=2, stack=1000, board2=board2, double_board=True)
    table.chips(2, 25, 25)
    table.chips(1, 100)
    table.deal_hands({1: "Ks Kd", 2: "Qs Qd"})
    table.chips(2, 25, 25)  # the small blind completes; the big blind checks when the flop comes
    second = "board2" if board2 else "board"
    table.street("5h", "2c 7h 9d")
    for card in ("Qh", "7c", "9s"):
        table.card(second, card)
    table.chips(1, 100)  # seat 1 bets on the flop, seat 2 calls
    table.chips(2, 100)
    table.street("6h", "3s")
    table.card(second, "3d")
    table.street("8h", "4h")
    table.card(second, "4c")
    assert not of(table.events, "irregular_card")
    on_two = [e.public["card"] for e in table.events if e.type == "board_card" and e.public.get("board_number") == 2]
    assert on_two == ["Qh", "7c", "9s", "3d", "4c"]
    showdown = showdown_of(table)
    assert showdown.public["payouts"] == {"1": 200, "2": 200}
    assert "CA GR 14.1" in showdown.public["pots"][0]["rules"]
    [history] = of(table.events, "hand_history")
    assert "*** SECOND FLOP *** [Qh 7c 9s]" in history.secret["pokerstars_complete"]


# ---- the player limits of CA GR 15 at the deal -----------------------------------------------------------------

def test_seven_card_omaha_refuses_a_sixth_player_at_the_deal_and_by_the_seats_command():
    """CA GR 15.1: "5 players maximum 7 cards". A table whose players are not configured learns them from its first
    deal: a card to a sixth seat is a card to an ineligible seat (the floor rules: a misdeal while one can be
    called). The floor's seats command naming six seats is refused."""
    table = Table(chips=False, players=None, button=None, hole_cards=7, max_players=5)
    for seat in (1, 2, 3, 4, 5):
        table.card(f"seat{seat}.cards", seconds=0.3)
    assert not of(table.events, "irregular_card")
    table.card("seat6.cards", seconds=0.3)
    [limit] = of(table.events, "irregular_card", "card_to_ineligible_seat")
    assert limit.public["seats"] == [6] and limit.public["max_players"] == 5
    assert "CA GR 15.1" in limit.public["rules"] and limit.public["needs_floor"]
    events, refusal = table.try_command("seats", seats=[1, 2, 3, 4, 5, 6])
    assert events == [] and "at most 5" in refusal and "CA GR 15.1" in refusal


@pytest.mark.parametrize("flop_first", [False, True])
def test_rfid_table_replay_plays_a_hand_run_twice_and_reads_back_both_boards(flop_first):
    """`rfid-table replay` (sim.replay): the PHH the table writes for a hand run twice (its user-defined fields
    ``_boards`` and ``_runs``: pokerkit 0.7.7's PHH has no runout count) is played as table activity — the
    all-in, the players' agreement, the first board and then the second on the board antenna — and read back the
    same, both boards and the stacks of the divided pot."""
    from controller import phh as phhlib
    from controller.betting import NLHE, BettingHand
    from controller.showdown import award
    from sim.replay import ReplayTable
    hand = BettingHand(NLHE, [1, 2, 3], 3, {1: 1000, 2: 1000, 3: 1000}, (50, 100))
    order = (3, 1, 2)  # pre-flop: the button first, three-handed
    if flop_first:
        assert hand.declare(3, "call").ok and hand.push(3, [100]).ok
        assert hand.declare(1, "call").ok and hand.push(1, [50]).ok
        assert hand.check(2).ok and hand.end_street().ok
        order = (1, 2, 3)
    for seat in order:
        assert hand.declare(seat, "all_in").ok and hand.push(seat, [hand.seat_state(seat)["owed"]]).ok
    while hand.status == "betting":
        assert hand.end_street().ok
    hole = {1: ["Ks", "Kd"], 2: ["Qs", "Qd"], 3: ["Js", "Jd"]}
    first = ["2c", "7h", "9d", "3s", "4h"]
    second = first[:3] + ["Qh", "4c"] if flop_first else ["Qh", "7c", "9s", "3d", "4c"]
    finishing = award(hand, hole, boards=[first, second], runs=2).finishing_stacks
    assert finishing[1] == 1500 and finishing[2] == 1500  # seat 1 wins the first run, seat 2 the second
    text = phhlib.dumps(phhlib.to_phh(hand, hole, first, [1, 2, 3], finishing,
                                      _boards=["".join(first), "".join(second)], _runs=2))
    result = ReplayTable(pace_s=0.5, settle_s=0.4, deal_s=0.05).replay(phhlib.loads(text), "run twice")
    assert result.ok, result.reason
    assert result.reconstructed["_boards"] == ["".join(first), "".join(second)]


def test_the_export_rebuilds_a_hand_run_twice_from_the_journaled_events():
    """`rfid-table export` writes a hand from its journaled `hand_history` (the PHH record) and `showdown` (the pots,
    and for a hand run twice its boards and what each paid): both runs come out as the feed wrote them."""
    from controller.pokerstars import to_pokerstars
    from rfid_table.ops.export import _Hand

    table = heads_up_all_in()
    table.command("run_it", times=2)
    run_out(table, RUN_1)
    run_out(table, RUN_2)
    showdown = showdown_of(table)
    [history] = of(table.events, "hand_history")
    [ended] = of(table.events, "hand_ended")
    record = _Hand(1, history.secret, showdown.public, ended.public["folded_seats"], 0.0, None).record("variants",
                                                                                                       True)
    assert record.runs == 2 and record.boards == showdown.public["boards"]
    exported = to_pokerstars(record).splitlines()
    fed = history.secret["pokerstars_complete"].splitlines()
    assert exported[1:] == fed[1:]  # the header differs by its date only


def test_a_bomb_pot_with_too_many_players_deals_without_the_small_blind():
    """CA GR 15.2 ("Pot Limit Omaha in the variants "Bomb Pot" and/or "Doubleboard" (if there are too many players,
    the small blind sits out)"): "8 players maximum 4 cards" — eight players at 5-card Omaha (CA GR 15.1 allows them
    on one board) play a bomb pot without the small blind, seat 1, who is dealt in again in the next hand."""
    table = VariantTable("PLO5", 5, players=tuple(range(1, 9)), button=8, stack=1000)
    [agreed] = of(table.command("bomb_pot", amount=100), "bomb_pot_agreed")
    assert agreed.public["sits_out"] == 1
    for seat in range(2, 9):
        table.chips(seat, 100)
    deck = list(table.stub)
    table.deal_hands({s: " ".join(deck[(s - 2) * 5:(s - 1) * 5]) for s in range(2, 9)})
    assert not of(table.events, "irregular_card")
    [started] = of(table.events, "betting_started")
    assert started.public["seats"] == list(range(2, 9)) and table.betting()["pot"] == 700
    table.clear()
    table.run(3.0)
    assert table.controller.cards.eligible == tuple(range(1, 9))


def test_the_snapshot_and_the_live_view_show_every_board():
    """Both snapshots list the boards of a hand run twice (the first is still ``board``); `rfid-table watch` draws
    each later board under the first."""
    import json

    from rich.console import Console

    from rfid_table.ops.watch import TableView
    from rfid_table.service.contract import Topics

    table = heads_up_all_in()
    table.command("run_it", times=2)
    run_out(table, RUN_1)
    table.street(RUN_2[0], RUN_2[1])
    snapshot = table.controller.snapshot(secure=False)
    assert snapshot["boards"] == [["2c", "7h", "9d", "3s", "4h"], ["Qh", "7c", "9s"]]
    topics = Topics.for_table("rfid-table", "variants")
    view = TableView(topics, want_secure=False)
    view.on_message(topics.snapshot(False), json.dumps({**snapshot, "epoch": "e"}).encode())
    console = Console(width=160, record=True, color_system=None)
    console.print(view.render())
    lines = console.export_text().splitlines()
    assert "board 2 Q♥ 7♣ 9♠ ·· ··" in lines, lines
    from rfid_table.ops.watch import describe_event
    said = [describe_event(e.payload(False)) for e in table.events if e.type in ("run_it_agreed", "board_card")]
    assert "run it twice for every pot (floor/ann)" in said and "board 2 flop: Qh" in said


def test_a_later_runs_card_lifted_and_laid_down_again_is_the_same_card():
    """A card of the second run read again (the dealer straightens the board) is no sixth board card."""
    table = heads_up_all_in()
    table.command("run_it", times=2)
    run_out(table, RUN_1)
    table.street(RUN_2[0], RUN_2[1])
    table.remove("Qh")
    table.run(1.0)
    again(table, "board", "Qh", seconds=0.5)
    assert not of(table.events, "irregular_card")
    assert [e.public["card"] for e in of(table.events, "board_card") if e.public.get("board_number")] == \
        ["Qh", "7c", "9s"]


def test_the_simulated_table_runs_it_twice_through_the_daemon_pipeline():
    """`rfid-table sim --run-it-twice 1`: players all-in with board cards to come always run it twice. Through the
    daemon's pipeline (the emulated readers' zone tracker, the controller), every such hand ends with two boards in
    its showdown and its histories, the later run told apart on the board antenna, and no irregularity."""
    events, table = play_chips_table({}, hands=30, seed=3, players=4, run_it_twice=1.0, players_style="random")
    runs = [e for e in events if e.type == "run_it_agreed"]
    assert len(runs) == table.dealer.runs_agreed >= 3
    showdowns = [e for e in events if e.type == "showdown" and e.public.get("runs") == 2]
    assert len(showdowns) == len(runs)
    assert not [e for e in events if e.type == "irregular_card"]
    assert not [e for e in events if e.type == "bet_ruling" and e.public["code"] == "showdown_unread"]
    histories = {e.hand: e for e in events if e.type == "hand_history"}
    for showdown in showdowns:
        assert "Hand was run twice" in histories[showdown.hand].secret["pokerstars_complete"]


def test_the_simulated_table_deals_seven_card_omaha_to_the_players_the_variant_allows():
    """A ten-seat table at `plo7` simulates five players (CA GR 15.1), and refuses --players 6."""
    plo7 = {"variant": "plo7", "max_players": 5}
    with pytest.raises(ValueError, match="--players must be from 2 to 5"):
        play_chips_table(plo7, hands=1, players=6)
    events, _table = play_chips_table(plo7, hands=3, seed=5)
    dealt = [e for e in events if e.type == "card_dealt"]
    assert {e.public["seat"] for e in dealt} == {1, 2, 3, 4, 5} and max(e.public["count"] for e in dealt) == 7
    assert not [e for e in events if e.type == "irregular_card"]


def test_the_broadcast_overlay_keeps_the_first_board_and_draws_the_second_run_apart():
    """overlay/overlay.js, run in Node with a minimal DOM (tests/overlay_harness.js): a second run's turn (position 4
    of board 2) does not replace the first board's turn; the page draws the second board with the shared flop."""
    import json
    import shutil
    import subprocess
    from pathlib import Path

    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        pytest.skip("node is not installed")
    root = Path(__file__).resolve().parents[1]
    flop = [("2c", 1), ("7h", 2), ("9d", 3), ("3s", 4), ("4h", 5)]
    events = [{"seq": 1, "type": "hand_started", "t": 1, "hand": 1}]
    events += [{"seq": 2 + i, "type": "board_card", "t": 2, "hand": 1, "card": card, "street": "flop",
                "position": position} for i, (card, position) in enumerate(flop)]
    events.append({"seq": 9, "type": "board_card", "t": 3, "hand": 1, "card": "Qh", "street": "turn", "position": 4,
                   "board_number": 2})
    out = subprocess.run([node, str(root / "tests" / "overlay_harness.js"), str(root / "overlay" / "overlay.js"),
                          json.dumps(events)], capture_output=True, text=True, timeout=30, check=True)
    drawn = json.loads(out.stdout.strip().splitlines()[-1])
    assert drawn == {"board": ["2c", "7h", "9d", "3s", "4h"], "later": [["2", ["2c", "7h", "9d", "Qh"]]]}


def test_rfid_table_export_writes_the_hands_a_journaled_session_ran_twice(tmp_path):
    """A journaled session (`rfid-table sim --run-it-twice 1` with a journal, as the daemon journals) exported with
    `rfid-table export` as a user runs it: the hands run twice come out in PokerStars' run-twice layout and as OHH
    with the Run_It_Twice flag, with the pots as the table divided them."""
    import dataclasses
    import json
    import subprocess
    import sys
    import time
    from pathlib import Path

    from rfid_table.config.table import load_config
    from rfid_table.devtools.simulate import SimOptions, SimulatedTable
    from rfid_table.service.daemon import StopFlag
    from rfid_table.service.journal import Journal

    root = Path(__file__).resolve().parents[1]
    config = load_config(root / "config" / "table-chips.toml")
    config = dataclasses.replace(config, broadcast_delay_s=0.0, journal_path=None)
    path = tmp_path / "main-2.journal"
    journal = Journal(path, table_id=config.table_id)
    assert journal.open().ok
    table = SimulatedTable(config, SimOptions(hands=20, seed=3, speed=0, pace_s=1.0, link="direct", players=4,
                                              run_it_twice=1.0, players_style="random"), None, journal)
    table.pipeline.restore(time.time())
    table.run(StopFlag())
    journal.close()
    runs = table.dealer.runs_agreed
    assert runs >= 2
    out = tmp_path / "out"
    for fmt in ("pokerstars", "ohh"):
        done = subprocess.run([sys.executable, "-m", "rfid_table.cli", "export", "--journal", str(path), "--format",
                               fmt, "--out", str(out)], capture_output=True, text=True, timeout=120, cwd=root)
        assert done.returncode == 0, done.stderr
    [text] = [p.read_text() for p in out.glob("*.txt")]
    assert text.count("Hand was run twice") == runs and text.count("*** SECOND SHOW DOWN ***") == runs
    [ohh] = [p.read_text() for p in out.glob("*.ohh")]
    hands = [json.loads(line)["ohh"] for line in ohh.splitlines() if line.strip()]
    assert sum(1 for h in hands if h.get("flags") == ["Run_It_Twice"]) == runs
