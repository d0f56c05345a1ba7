"""Where the house rule books disagree (controller/rules.py's profiles), each house rules as its own book says:
scenarios played on a simulated table, read through the zone tracker into the controller, one per house whose book
speaks to the point. Each test quotes its rule from ``shared/rules/``."""

from __future__ import annotations

import pytest

from sim.table_driver import actions, of
from test_rulings import Table, checked_to_the_river, preflop_called


pytest.importorskip("phevaluator")


def heads_up_all_in(rules: str, stack: int) -> Table:
    """Heads-up, seat 2 on the button posts the small blind of 25; both all-in for ``stack`` before the flop."""
    table = Table(rules, players=(1, 2), button=2, blinds=(25, 50), stack=stack)
    table.chips(2, 25)
    table.chips(1, 25, 25)
    table.deal(seats=(1, 2))
    table.command("declare", seat=2, declaration="all_in")
    table.chips(2, *[25] * ((stack - 25) // 25))
    table.chips(1, *[25] * ((stack - 50) // 25))
    assert table.betting()["to_act"] is None and table.betting()["pot"] == 2 * stack
    return table


# ---- run it twice: the pot it needs (CA Actions 8c) ----------------------------------------------------------

@pytest.mark.parametrize("stack, taken", [(225, False), (250, True)])
def test_casinos_austria_runs_a_board_twice_only_for_a_pot_of_at_least_500(stack, taken):
    """CA Actions 8: "the river card, the turn and river card, as well as the entire board can be dealt twice if,
    [...] c.) there is at least € 500 in the pot". Both players all-in: a pot of 450 is refused with the rule named,
    a pot of 500 is run twice."""
    table = heads_up_all_in("casinos_austria", stack)
    produced, refusal = table.try_command("run_it", times=2)
    if taken:
        assert refusal is None and of(produced, "run_it_agreed")
    else:
        assert refusal is not None and "450" in refusal and "500" in refusal and "CA Actions 8c" in refusal
        assert not of(produced, "run_it_agreed")


@pytest.mark.parametrize("rules", ["tda", "poker_play", "allin_club", "club_tournament_de"])
def test_a_house_whose_book_sets_no_minimum_runs_a_small_pot_twice(rules):
    """Only CA Actions 8c sets a minimum pot for running the board twice; the other books say nothing of running it
    twice, and a pot of 100 is run twice when the players agree."""
    table = heads_up_all_in(rules, 50)
    produced, refusal = table.try_command("run_it", times=2)
    assert refusal is None and of(produced, "run_it_agreed")


# ---- action out of turn (TDA 53, PP Betting 10) --------------------------------------------------------------

def flop_bet_by_seat_1(rules: str) -> Table:
    """Five players see the flop for 100 each (tests/test_rulings.py's preflop_called); seat 1 bets 100 on it."""
    table = Table(rules)
    preflop_called(table)
    table.burn()
    table.board(3)
    table.chips(1, 100)
    assert actions(table.events)[-1] == (1, "bet", 100) and table.betting()["to_act"] == 2
    return table


def test_poker_play_dismisses_a_declaration_out_of_turn_without_penalty():
    """PP Betting 10: "A verbal declaration that is out of turn will be dismissed and no penalties will be infringed
    on the player responsible." Seat 4 says "raise" while seat 2 is to act: nothing is held, and on its turn seat 4
    raises to 300."""
    table = flop_bet_by_seat_1("poker_play")
    [dismissed] = [e for e in table.command("declare", seat=4, declaration="raise", role="dealer")
                   if e.type == "bet_ruling"]
    assert dismissed.public["code"] == "dismissed" and "PP Betting 10" in dismissed.public["rules"][0]
    table.chips(2, 100)
    table.chips(3, 100)
    table.command("declare", seat=4, declaration="raise", role="dealer")
    table.chips(4, 100, 100, 100)
    assert actions(table.events)[-3:] == [(2, "call", 100), (3, "call", 100), (4, "raise", 300)]


def test_poker_play_bars_a_raise_on_the_next_turn_of_a_player_who_pushed_out_of_turn():
    """PP Betting 10: "If a player deliberately moves out of turn, and acts ahead of another player, they will not be
    allowed to raise the pot on their next turn to act." Seat 4 pushes 100 while seat 2 is to act; seat 2 raises to
    300, so the push does not stand; on its turn seat 4 pushes chips of 400 more, 500 in all, a full raise anywhere
    else (as the TDA table below reads it): at this house it is a call of 300 and 200 go back."""
    def play(rules: str) -> Table:
        table = flop_bet_by_seat_1(rules)
        table.chips(4, 100)
        assert table.betting()["to_act"] == 2
        table.command("declare", seat=2, declaration="raise", role="dealer")
        table.chips(2, 100, 100, 100)
        table.chips(3, 100, 100, 100)
        table.chips(4, 100, 100, 100, 100)
        return table

    assert actions(play("tda").events)[-1] == (4, "raise", 500)
    table = play("poker_play")
    assert actions(table.events)[-3:] == [(2, "raise", 300), (3, "call", 300), (4, "call", 300)]
    assert table.betting()["to_act"] == 5 and table.betting()["bets"]["4"] == 300


@pytest.mark.parametrize("rules", ["tda", "casinos_austria", "allin_club", "club_tournament_de"])
def test_chips_pushed_out_of_turn_bind_when_the_action_does_not_change(rules):
    """TDA 53: "Aktionen außerhalb der Reihe sind bindend, wenn sich die Aktion bis zum Spieler, der außerhalb der
    Reihe gehandelt hat, nicht ändert" (AC 34, CA Actions 2 alike; DE 14 follows the TDA). Seat 4 pushes 100 while
    seat 2 is to act; seats 2 and 3 call: seat 4's push stands as its call."""
    table = flop_bet_by_seat_1(rules)
    table.chips(4, 100)
    table.chips(2, 100)
    table.chips(3, 100)
    assert actions(table.events)[-3:] == [(2, "call", 100), (3, "call", 100), (4, "call", 100)]
    assert table.betting()["to_act"] == 5


# ---- busted players: the start of heads-up (AC 29, DE 13), both blinds out (DE 9, AC 27) ---------------------

def deal_hands(table: Table, hands: dict[int, str]) -> None:
    """Deal ``hands`` (seat → its two hole cards) from the seat left of the button."""
    button = table.controller.cards.button
    order = [s for s in sorted(hands) if s > button] + [s for s in sorted(hands) if s <= button]
    for rnd in range(2):
        for seat in order:
            table.hole.setdefault(seat, []).append(hands[seat].split()[rnd])
            table.card(f"seat{seat}.cards", hands[seat].split()[rnd])
    table.run(0.6)


def run_out(table: Table, board: str) -> None:
    """The board dealt with its burns, then the cards gathered and the pot pushed."""
    flop, turn, river = board.split()[:3], board.split()[3], board.split()[4]
    for cards in (flop, [turn], [river]):
        table.burn()
        for card in cards:
            table.card("board", card, seconds=0.3)
    table.run(1.0)
    table.clear()
    table.run(3.0)


@pytest.mark.parametrize("rules", ["tda", "casinos_austria", "poker_play", "allin_club", "club_tournament_de"])
def test_at_the_start_of_heads_up_the_last_big_blind_takes_the_button(rules):
    """AC 29: "Pri heads-upe je small blind na buttone [...] Na začiatku heads-up môže byť potrebné upraviť button
    tak, aby ani jeden hráč nevsádzal big blind dvakrát po sebe." DE 13: "Bleiben zwei Spieler beim Heads-Up übrig,
    so hat der Dealer-Button den Small-Blind". Three players, the button on seat 3 busts (the other books are silent
    and no book rules otherwise): seat 2 posted the big blind, so seat 2 takes the button and the small blind and
    seat 1 posts the big blind; the deal from seat 1 is dealt right, not a misplaced button."""
    table = Table(rules, players=(1, 2, 3), button=3)
    table.command("set_stacks", stacks={"1": 5000, "2": 5000, "3": 100})
    table.blinds()
    deal_hands(table, {1: "As Ad", 2: "Ks Kd", 3: "7c 2d"})
    table.chips(3, 100)  # seat 3 all-in
    table.chips(1, 25, 25)
    run_out(table, "3h 4h 9c Tc Jd")
    table.command("seats", seats=[1, 2])  # seat 3 is out
    before = len(table.events)
    table.hole = {}
    table.chips(2, 25, 25)  # the button's small blind
    table.chips(1, 100)  # the big blind
    table.deal(seats=(1, 2))
    hand = table.events[before:]
    [started] = of(hand, "betting_started")
    assert started.public["button"] == 2 and table.controller.cards.button == 2
    assert actions(hand)[:2] == [(2, "post_sb", 50), (1, "post_bb", 100)]
    assert [e for e in hand if e.type == "irregular_card"] == []


@pytest.mark.parametrize("rules, button, blinds", [
    ("club_tournament_de", 5, [(3, "post_sb", 50), (4, "post_bb", 100)]),
    ("allin_club", 1, [(3, "post_bb", 100)]),
])
def test_when_both_blinds_bust_the_button_goes_as_the_house_says(rules, button, blinds):
    """DE 9: "Scheiden Small-Blind und Big-Blind in der aktuellen Runde aus, bleibt der Dealer in der neuen Runde an
    der aktuellen Position": the button stays on seat 5, seat 3 posts the small blind, seat 4 the big blind.
    AC 27: "big blind vsádza hráč, ktorý má povinnosť. Small blind a button sú umiestnené v závislosti od neho a môžu
    byť umiestnené aj na voľné miesta [...] Ak pripadá small blind na prázdne miesto, small blind v danej hre
    nebude": seat 3 owes the big blind, the small blind's seat 2 is empty (no small blind), the button is dead on
    the empty seat 1. Five players, the button on seat 5; the small blind (seat 1) and the big blind (seat 2) bust."""
    table = Table(rules)
    table.command("set_stacks", stacks={"1": 50, "2": 100})  # both blinds all-in with their blinds
    table.blinds()
    deal_hands(table, {3: "As Ad", 1: "7c 2d", 2: "8c 3d", 4: "Qs 4c", 5: "Qh 5c"})
    table.chips(3, 100)
    for seat in (4, 5):
        table.fold(seat)
    run_out(table, "3h 4h 9c Tc Jd")
    assert of(table.events, "showdown")[-1].public["payouts"] == {"3": 250}
    table.command("seats", seats=[3, 4, 5])
    assert table.controller.cards.button == button
    before = len(table.events)
    table.hole = {}
    for seat, _action, amount in blinds:
        table.chips(seat, *([25, 25] if amount == 50 else [100]))
    table.deal(seats=(3, 4, 5))
    hand = table.events[before:]
    [started] = of(hand, "betting_started")
    assert started.public["button"] == button
    assert actions(hand)[:len(blinds)] == blinds
    assert [e for e in hand if e.type == "irregular_card"] == [] and of(hand, "chip_count") == []


# ---- an incomplete call completed (CA Actions 2) ---------------------------------------------------------------

def test_casinos_austria_reads_chips_added_to_an_incomplete_call_as_the_call_and_returns_the_rest():
    """CA Actions 2: "If a player acts in sequence and calls with an insufficient bet because he has not noticed a
    raise, he must complete his bet or forfeit all claims to his bets and the pot. A raise is no longer permitted."
    Seat 3 raises to 300; seat 4 pushes 100, not seeing the raise: the player chooses, no floor is asked. It adds
    500: a call of 300 (not a raise to 600), and 300 go back."""
    table = Table("casinos_austria")
    table.blinds()
    table.deal()
    table.chips(3, 100, 100, 100)
    produced = table.chips(4, 100)
    [ruling] = of(produced, "bet_ruling", "incomplete_call")
    assert not ruling.public["needs_floor"] and "CA Actions 2" in ruling.public["rules"]
    produced = table.chips(4, 500)
    assert actions(produced) == [(4, "call", 300)]
    assert of(produced, "bet_ruling", "awaiting_choice") == []
    assert table.betting()["bets"]["4"] == 300 and table.betting()["to_act"] == 5


# ---- a player shows his own hole card (DE 3; AC 50, CA Actions 10; PP Irregularities 12-14) ----------------------

def shown_after_the_deal(rules: str) -> tuple[Table, list]:
    """Blinds 50/100, five players dealt; seat 3 calls 100, then seat 4 turns up one of its cards: the console
    reports it (``exposed_card``), after the deal, so it is the player's doing and not the dealer's."""
    table = Table(rules)
    table.blinds()
    table.deal()
    table.chips(3, 100)
    produced = table.command("exposed_card", role="dealer", seat=4)
    [shown] = of(produced, "irregular_card", "hole_card_exposed")
    assert shown.public["during_deal"] is False and shown.public["seats"] == [4]
    return table, produced


def test_poker_play_lets_a_card_the_player_flashed_play():
    """PP Irregularities 12: a card exposed by the dealer is replaced; 14: "If a player exposes his own card [...]
    the card plays" (the stored TDA translation has no rule: the TDA profile rules the same). Seat 4's shown card
    plays, nothing is replaced, and seat 4 may raise: 300 is a raise."""
    table, produced = shown_after_the_deal("poker_play")
    [shown] = of(produced, "irregular_card", "hole_card_exposed")
    assert shown.public["ruling"] == "play_on" and "PP Irregularities 14" in shown.public["rules"]
    table.chips(4, 100, 100, 100)
    assert actions(table.events)[-1] == (4, "raise", 300)


@pytest.mark.parametrize("rules, rule", [("casinos_austria", "CA Actions 10"), ("allin_club", "AC 50")])
def test_a_hand_whose_player_showed_a_card_is_passive(rules, rule):
    """CA Actions 10: "If a player shows one or more of his hole cards before the end of the hand or the showdown,
    his hand is passive". AC 50: "Jeho ruka však nie je nikdy mŕtva a tento hráč môže urobiť pri nasledujúcej akcii
    už len pasívne vyjadrenie – iba CHECK, CALL nebo FOLD." Seat 4 showed a card: its hand plays, and its push of
    300 facing 100 is a call of 100, the rest going back."""
    table, produced = shown_after_the_deal(rules)
    [shown] = of(produced, "irregular_card", "hole_card_exposed")
    assert shown.public["ruling"] == "passive_hand" and shown.public["rules"][0].startswith(rule)
    table.chips(4, 100, 100, 100)
    assert actions(table.events)[-1] == (4, "call", 100)
    assert table.betting()["bets"]["4"] == 100 and table.betting()["to_act"] == 5


@pytest.mark.parametrize("rules, bets", [("allin_club", True), ("casinos_austria", False)])
def test_allin_club_makes_only_the_next_action_passive_casinos_austria_the_hand(rules, bets):
    """AC 50: "tento hráč môže urobiť pri nasledujúcej akcii už len pasívne vyjadrenie" (at its next action only a
    passive one); CA Actions 10: "his hand is passive". Seat 4 showed a card and called; on the flop, checked to it,
    seat 4 may bet at the ALLIN club, and may not at Casinos Austria."""
    table, _ = shown_after_the_deal(rules)
    table.chips(4, 100)
    table.chips(5, 100)
    table.chips(1, 25, 25)
    table.burn()
    table.board(3)
    assert table.betting()["street"] == "flop"
    assert table.controller.betting.hand.engine.can_raise(4) is bets


def test_the_german_club_folds_a_hand_whose_player_showed_a_card():
    """DE 3: "Das Öffnen einer oder beider Hole-Cards während des Spiels ist verboten. Vorzeitiges Aufdecken gilt
    als gepasst." Seat 4 showed a card: its hand is folded, and the action passes it."""
    table, produced = shown_after_the_deal("club_tournament_de")
    [shown] = of(produced, "irregular_card", "hole_card_exposed")
    assert shown.public["ruling"] == "dead_hand" and shown.public["rules"][0].startswith("DE 3")
    assert 4 in table.betting()["folded"]
    table.chips(5, 100)
    assert actions(table.events)[-1] == (5, "call", 100)


def test_a_card_shown_once_the_deal_is_complete_is_the_players_even_before_any_action():
    """The dealer exposes cards during the deal (PP Irregularities 12: replaced); once every card is dealt, a shown
    card is the player's (PP Irregularities 14: it plays). Before, a card shown before anyone acted was taken as the
    dealer's and replaced."""
    table = Table("poker_play")
    table.blinds()
    table.deal()
    produced = table.command("exposed_card", role="dealer", seat=4)
    [shown] = of(produced, "irregular_card", "hole_card_exposed")
    assert shown.public["during_deal"] is False and shown.public["ruling"] == "play_on"
    assert len(table.controller.snapshot(secure=True)["seats"][3]["hole_cards"]) == 2


# ---- a winning hand the dealer withdrew (CA Actions 9; AC 14) -----------------------------------------------------

@pytest.mark.parametrize("river_bet", [False, True])
@pytest.mark.parametrize("rules", ["casinos_austria", "allin_club"])
def test_an_obviously_winning_hand_withdrawn_after_the_showdown_still_wins(rules, river_bet):
    """CA Actions 9: "If an obviously winning hand is mistakenly withdrawn by the croupier after the showdown, it can
    still win the pot." AC 14: "Dealeri nemôžu otočiť do mucku kombináciu, ktorá bola otočená face-up a bola jasne
    výherná." The blinds play to the river, checked or with a bet of 100 called; the dealer mucks the winner's
    cards: the table alerts the floor, whose confirm gives the winner the pot, bet or no bet."""
    table = Table(rules)
    winner, _loser = checked_to_the_river(table, river_bet=100 if river_bet else 0)
    if river_bet:
        assert actions(table.events)[-2:] == [(1, "bet", 100), (2, "call", 100)]
    table.fold(winner)  # the dealer withdraws the winning hand
    [alert] = of(table.events, "bet_ruling", "winning_hand_mucked")
    assert alert.public["seat"] == winner and alert.public["needs_floor"]
    table.command("confirm", irregularity=alert.seq)
    table.clear()
    table.run(3.0)
    [showdown] = of(table.events, "showdown")
    assert showdown.public["payouts"] == {str(winner): 400 if river_bet else 200}


# ---- chips that do not play (PP Betting 7) -----------------------------------------------------------------------

def test_poker_play_reads_a_push_without_the_chips_that_do_not_play():
    """PP Betting 7: "Smaller chips than this amount [the smallest chip used in the antes, blinds] do not play even
    in quantity." PP Betting 14: a full bet plus half a bet or more is a raise. The blinds are posted in 25s; seat 3
    pushes 100 and ten 5-chips facing the big blind of 100: counted whole, 150 would be a raise; without the 5s it
    is a call of 100, and the 50 in 5s go back."""
    table = Table("poker_play")
    table.blinds()
    table.deal()
    produced = table.chips(3, 100, *[5] * 10)
    [ruling] = of(produced, "bet_ruling", "chips_do_not_play")
    assert (ruling.public["stands"], ruling.public["returned"]) == (100, 50)
    assert actions(produced) == [(3, "call", 100)]
    assert table.betting()["bets"]["3"] == 100


# ---- blinds put in after the deal (PP Betting 7, 10; TDA 53) -------------------------------------------------------

@pytest.mark.parametrize("rules", ["tda", "casinos_austria", "poker_play", "allin_club", "club_tournament_de"])
def test_blinds_put_in_after_the_deal_are_the_forced_bets_not_actions_out_of_turn(rules):
    """A blind is a forced bet, not an action (TDA 53 and PP Betting 10 speak of players who act out of turn): its
    chips are the blind whenever they come. The big blind puts its 100 in once the cards are out, and the small blind
    only when its turn comes, with the call: 100 in 25s is its 50 and a call, not a raise to 150 (TDA 43 would make
    that 200). Nothing is held out of turn, no floor is called, and the big blind raises on its option, also at
    Poker-Play, whose PP Betting 10 bars a raise only to a player who moved out of turn."""
    table = Table(rules)
    table.deal()
    table.chips(2, 100)
    for seat in (3, 4, 5):
        table.chips(seat, 100)
    table.chips(1, 25, 25, 25, 25)
    table.chips(2, 100, 100)
    assert actions(table.events)[-5:] == [(3, "call", 100), (4, "call", 100), (5, "call", 100), (1, "call", 100),
                                          (2, "raise", 300)]
    assert of(table.events, "bet_ruling") == [] and of(table.events, "chip_count") == []
    assert table.betting()["to_act"] == 3


@pytest.mark.parametrize("rules, code", [("poker_play", "chips_do_not_play"), ("tda", "held_out_of_turn")])
def test_chips_beyond_a_blind_put_in_after_the_deal_are_read_as_the_house_reads_a_push(rules, code):
    """PP Betting 7: "The smallest chip that is permitted to be wagered in a hand is equivalent to the smallest chip
    used in the antes, blinds [...] Smaller chips than this amount do not play even in quantity." The small blind
    puts in 25 and 25 and the big blind 100 and five 5s, after the deal: at Poker-Play the 5s do not play (25 goes
    back), where a blind's chips read as a push let them play. At a TDA table the 25 beyond the blind is the big
    blind's action out of turn (TDA 53: "Aktionen außerhalb der Reihe sind bindend, wenn sich die Aktion [...] nicht
    ändert"), held until its turn."""
    table = Table(rules)
    table.deal()
    table.chips(1, 25, 25)
    produced = table.chips(2, 100, *[5] * 5)
    [ruling] = of(produced, "bet_ruling")
    assert ruling.public["code"] == code and ruling.public["seat"] == 2 and not ruling.public["needs_floor"]
    if code == "chips_do_not_play":
        assert (ruling.public["stands"], ruling.public["returned"]) == (0, 25)
    else:
        assert ruling.public["chips"] == [5] * 5
    assert table.betting()["bets"] == {"1": 50, "2": 100} and table.betting()["to_act"] == 3
    assert of(table.events, "chip_count") == []


def test_a_blind_still_short_when_the_pre_flop_bets_are_collected_is_a_chip_count():
    """A blind may come after the deal, so a zone short of its blind is counted only once the dealer collects the
    pre-flop bets: the small blind put in one 25 of its 50 and nothing after; it folds, the others call, the flop
    comes."""
    table = Table()
    table.chips(1, 25)
    table.chips(2, 100)
    table.deal()
    for seat in (3, 4, 5):
        table.chips(seat, 100)
    table.fold(1)
    assert of(table.events, "chip_count") == []
    table.burn()
    table.board(3)
    [count] = of(table.events, "chip_count", "forced_bet")
    assert {k: count.public[k] for k in ("code", "seat", "expected", "seen")} == {
        "code": "forced_bet", "seat": 1, "expected": 50, "seen": 25}


# ---- antes put in after the deal (TDA 53) --------------------------------------------------------------------------

def collect(table: Table) -> list:
    """The dealer moves every bet into the pot; the pot is counted once it has lain still."""
    for seat in (1, 2, 3, 4, 5):
        table.place(*table.tags_in(f"seat{seat}.bets"), zone="pot")
    return table.run(3.0)


@pytest.mark.parametrize("rules", ["tda", "casinos_austria", "poker_play", "allin_club", "club_tournament_de"])
def test_antes_put_in_after_the_deal_are_the_antes_and_a_short_pot_is_counted_when_the_bets_are_collected(rules):
    """An ante is a forced bet like a blind, not an action: TDA 53 speaks of actions out of turn, "Jede Aktion
    außerhalb der Reihe (Check, Call oder Raise)", and PP Betting 7 names the antes beside the blinds ("the smallest
    chip used in the antes, blinds"). So antes may come after the deal too. Blinds 50/100, an ante of 25 from each of
    five players: two antes lie in the pot at the deal, two come after it, one never does. Nothing is counted until
    the dealer collects the pre-flop bets; then the antes are 25 short, once."""
    table = Table(rules, betting_options={"ante": 25})
    table.chips("pot", 25, 25)
    table.blinds()
    table.deal()
    table.chips("pot", 25, 25)  # two players ante once the cards are out
    for seat in (3, 4, 5):
        table.chips(seat, 100)
    table.chips(1, 25, 25)
    assert of(table.events, "chip_count") == [] and of(table.events, "bet_ruling") == []
    assert table.betting()["pot"] == 125 + 5 * 100  # the engine posted every ante
    collect(table)
    [count] = of(table.events, "chip_count", "antes")
    assert {k: count.public[k] for k in ("code", "seat", "expected", "seen")} == {
        "code": "antes", "seat": None, "expected": 125, "seen": 100}
    counted = of(table.events, "chip_count")  # (the pot, once it lay still, is 25 short too)
    table.chips("pot", 25)  # the last ante, after the bets went in: the pot is whole again, nothing more is counted
    table.burn()
    table.board(3)
    assert of(table.events, "chip_count") == counted


def test_antes_that_all_come_after_the_deal_are_never_counted():
    """As above, every ante put in after the deal, before the dealer collects: the pot holds what the engine says
    through the flop, and no chip is counted."""
    table = Table(betting_options={"ante": 25})
    table.blinds()
    table.deal()
    table.chips("pot", 25, 25, 25, 25, 25)
    for seat in (3, 4, 5):
        table.chips(seat, 100)
    table.chips(1, 25, 25)
    collect(table)
    table.burn()
    table.board(3)
    assert of(table.events, "chip_count") == [] and table.betting()["pot"] == 625


# ---- the blinds after a hand without a small blind (AC 27, DE 9; AC 29, DE 13) -------------------------------------

TABLES = ["blinds_before_the_deal", "blinds_after_the_deal", "cards_only"]


def folded_to_the_big_blind(table: Table, order: list[int], blinds: list[tuple[int, int]], late: bool = False) -> list:
    """One hand: the blinds (seat, amount) put in on a table that reads chips, before the deal or (``late``) after
    it, two cards dealt to the seats of ``order`` from its first (the seat left of the button), every seat but the
    last blind's folds, the cards gathered. The events of the hand."""
    before = len(table.events)
    table.hole = {}
    chips = table.controller.betting is not None
    if chips and not late:
        for seat, amount in blinds:
            table.chips(seat, *[25] * (amount // 25))
    for _ in range(2):
        for seat in order:
            table.hole.setdefault(seat, []).append(table.stub[0])
            table.card(f"seat{seat}.cards")
    table.run(0.6)
    if chips and late:
        for seat, amount in blinds:
            table.chips(seat, *[25] * (amount // 25))
    big_blind = blinds[-1][0]
    i = order.index(big_blind)
    for seat in order[i + 1:] + order[:i]:
        table.fold(seat)
    table.clear()
    table.run(3.0)
    return table.events[before:]


def check_hand(table: Table, hand: list, button: int, blinds: list[tuple[int, int]]) -> None:
    """The hand was dealt as the controller expects (no misplaced button), from ``button``, and on a table that
    reads chips its forced bets were ``blinds``."""
    assert [e.public["code"] for e in hand if e.type == "irregular_card"] == []
    if table.controller.betting is not None:
        assert of(hand, "chip_count") == [] and of(hand, "bet_ruling") == []
        [started] = of(hand, "betting_started")
        assert started.public["button"] == button
        posts = [(s, a, v) for s, a, v in actions(hand) if a.startswith("post")]
        assert posts == [(s, "post_sb" if i == 0 and len(blinds) == 2 else "post_bb", v)
                         for i, (s, v) in enumerate(blinds)]


@pytest.mark.parametrize("kind", TABLES)
@pytest.mark.parametrize("rules", ["allin_club", "club_tournament_de"])
def test_after_a_hand_without_a_small_blind_the_big_blind_moves_one_player(rules, kind):
    """DE 9: "Sollte einmal der Big-Blind in der aktuellen Runde ausscheiden, gibt es in der nächsten Runde keinen
    Small-Blind." AC 27: "big blind vsádza hráč, ktorý má povinnosť. Small blind a button sú umiestnené v závislosti
    od neho a môžu byť umiestnené aj na voľné miesta [...] Ak pripadá small blind na prázdne miesto, small blind v danej
    hre nebude." Five players, the button on seat 5; the big blind (seat 2) leaves: the next hand has the button on
    seat 1, no small blind, seat 3's big blind; the hand after it seat 4's big blind, seat 3's small blind, the button
    dead on seat 2 (the deal from seat 3). Before, the button went to seat 3 and seat 4 was passed over for the big
    blind, on a table with chips or without; and blinds put in after the deal were read as a small and a big blind."""
    table = Table(rules, chips=kind != "cards_only")
    late = kind == "blinds_after_the_deal"
    folded_to_the_big_blind(table, [1, 2, 3, 4, 5], [(1, 50), (2, 100)], late)
    table.command("seats", seats=[1, 3, 4, 5])
    hand = folded_to_the_big_blind(table, [3, 4, 5, 1], [(3, 100)], late)
    check_hand(table, hand, 1, [(3, 100)])
    hand = folded_to_the_big_blind(table, [3, 4, 5, 1], [(3, 50), (4, 100)], late)
    check_hand(table, hand, 2, [(3, 50), (4, 100)])
    assert table.controller.cards.button == 3


@pytest.mark.parametrize("kind", TABLES)
@pytest.mark.parametrize("rules", ["allin_club", "club_tournament_de"])
def test_heads_up_after_a_hand_without_a_small_blind_the_last_big_blind_takes_the_button(rules, kind):
    """AC 29: "Na začiatku heads-up môže byť potrebné upraviť button tak, aby ani jeden hráč nevsádzal big blind
    dvakrát po sebe"; DE 13: "Bleiben zwei Spieler beim Heads-Up übrig, so hat der Dealer-Button den Small-Blind".
    The hand without a small blind (above) had seat 3's big blind; seats 1 and 5 leave: seat 3 takes the button and
    the small blind, seat 4 posts the big blind. Before, the button went to seat 4 and seat 3 posted the big blind
    twice in a row."""
    table = Table(rules, chips=kind != "cards_only")
    late = kind == "blinds_after_the_deal"
    folded_to_the_big_blind(table, [1, 2, 3, 4, 5], [(1, 50), (2, 100)], late)
    table.command("seats", seats=[1, 3, 4, 5])
    folded_to_the_big_blind(table, [3, 4, 5, 1], [(3, 100)], late)
    table.command("seats", seats=[3, 4])
    hand = folded_to_the_big_blind(table, [4, 3], [(3, 50), (4, 100)], late)
    check_hand(table, hand, 3, [(3, 50), (4, 100)])
