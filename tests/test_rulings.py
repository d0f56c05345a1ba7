"""Rulings of the rule books (``shared/rules/``, digested in docs/rules.md) played on a simulated table
(``sim.table_driver``): tagged cards and chips placed on the zones, read by the HAL's zone tracker and fed to the
controller as the daemon does, with and without the chip layer. Each test quotes the rule it follows."""

from __future__ import annotations

import pytest

from controller.cards import FULL_DECK
from controller.chip_betting import BettingSetup
from controller.game import GameController
from controller.table import TableSetup
from sim.replay import card_uid, chip_uid, table_zones
from sim.table_driver import TableDriver, actions, debounce_by_pile, irregular_codes, of

DENOMINATIONS = (5, 25, 100, 500, 1000)
PLAYERS = (1, 2, 3, 4, 5)
BUTTON = 5  # seat 1 posts the small blind, seat 2 the big blind, seat 3 is first to act
ZONES = table_zones() | {f"seat{s}.stack": ("main", 24 + s) for s in range(1, 11)}
DECK = {card_uid(i): card for i, card in enumerate(FULL_DECK)}


class Table(TableDriver):
    """A ten-seat table of which ``players`` are dealt in, read through the zone tracker into ``GameController``;
    ``chips=False``: a table that reads only the cards. ``setup_options``: more of its ``TableSetup`` (a level schedule,
    the hole cards…), ``betting_options`` more of its ``BettingSetup`` (the variant…)."""

    def __init__(self, rules: str = "tda", chips: bool = True, players=PLAYERS, button: int | None = BUTTON,
                 blinds: tuple[int, int] = (50, 100), stack: int = 5000, zones=ZONES,
                 betting_options: dict | None = None, **setup_options):
        rack = {value: [chip_uid(d, n) for n in range(60)] for d, value in enumerate(DENOMINATIONS)}
        betting = None
        if chips:
            betting = BettingSetup(small_blind=blinds[0], big_blind=blinds[1], rules=rules, chip_set="test",
                                   chips={uid: value for value, uids in rack.items() for uid in uids},
                                   **(betting_options or {}))
        controller = GameController(
            TableSetup("rulings", 10, DECK, decks={"A": DECK}, deck_id="A", button=button, rules=rules,
                       players=None if players is None else tuple(players), **setup_options), betting)
        super().__init__(controller, zones, debounce=debounce_by_pile(zones), deck=DECK, rack=rack, move_s=0.25)
        self.stub = list(FULL_DECK)
        self.hole: dict[int, list[str]] = {}
        if chips and players is not None:
            self.command("set_stacks", stacks={str(s): stack for s in players})

    # ---- moves ------------------------------------------------------------------------------------------

    def card(self, zone: str, card: str | None = None, seconds: float = 0.25) -> list:
        card = card or self.stub[0]
        self.stub.remove(card)
        return self.put(card, zone, seconds)

    def blinds(self) -> None:
        self.chips(1, 25, 25)
        self.chips(2, 100)

    def deal(self, seats=PLAYERS, rounds: int = 2, skip: tuple[tuple[int, int], ...] = ()) -> None:
        """Deal ``rounds`` rounds to ``seats``; ``skip``: (round, seat) the dealer passes over."""
        for rnd in range(rounds):
            for seat in seats:
                if (rnd, seat) in skip:
                    continue
                self.hole.setdefault(seat, []).append(self.stub[0])
                self.card(f"seat{seat}.cards")
        self.run(0.6)

    def fold(self, seat: int) -> list:
        self.place(*self.hole[seat], zone="muck")
        return self.run(0.8)

    def burn(self) -> list:
        return self.card("burn")

    def board(self, count: int = 1, seconds: float = 0.25) -> list:
        out = []
        for _ in range(count):
            out += self.card("board", seconds=seconds)
        return out

    # ---- what happened ----------------------------------------------------------------------------------

    def betting(self) -> dict:
        return self.controller.snapshot(secure=False)["betting"]


def preflop_called(table: Table) -> None:
    """Blinds 50/100, five players; seats 3, 4 and 5 call, the small blind completes, the big blind checks."""
    table.blinds()
    table.deal()
    for seat in (3, 4, 5):
        table.chips(seat, 100)
    table.chips(1, 25, 25)


# ---- the four-card flop (TDA 39-1, AC 32) --------------------------------------------------------------------

@pytest.mark.parametrize("rules", ["tda", "allin_club", "casinos_austria", "poker_play", "club_tournament_de"])
@pytest.mark.parametrize("chips", [True, False])
def test_a_four_card_flop_stops_for_the_floor_pick_on_every_table(rules, chips):
    """TDA 39-1: "Sollte der Flop aus vier statt drei Karten bestehen, aufgedeckt oder nicht [...] wird der Floor
    gerufen. Der Dealer mischt die vier Karten verdeckt und der Floor sucht eine der Karten, die als nächste
    Burn-Karte verwendet wird, zufällig aus." AC 32: "Floormanager náhodne vyberie jednu z týchto kariet, ktorá bude
    následne prvá spálená karta, ostávajúce tri karty sa potom stanú FLOPom." On a table with or without chips, no
    betting round open: the fourth card is not the turn, and no checks are invented to reach it."""
    table = Table(rules, chips=chips)
    if chips:
        preflop_called(table)
    else:
        table.deal()
    table.burn()
    flop = table.stub[:4]
    before = len(table.events)
    table.board(4)
    produced = table.events[before:] + table.run(2.0)
    [four] = of(produced, "irregular_card", "four_card_flop")
    assert four.public["ruling"] == "floor_picks_burn" and four.public["needs_floor"]
    assert {"TDA 39-1", "AC 32"} <= set(four.public["rules"]) and four.secret == {"cards": [flop[3]]}
    assert [e.public["position"] for e in produced if e.type == "board_card"] == [1, 2, 3]
    assert "missing_burn" not in irregular_codes(produced)
    assert [a for a in actions(produced) if a[1] == "check"] == ([(2, "check", 100)] if chips else [])
    assert four.seq in table.controller.floor_pending()
    corrected = table.command("floor_pick", irregularity=four.seq, card=flop[0])
    assert [e.public["board"] for e in corrected if e.type == "board_corrected"] == [flop[1:]]
    assert table.controller.board == flop[1:]
    if chips:  # the flop's betting starts now, nobody has acted on it
        assert table.betting()["street"] == "flop" and table.betting()["to_act"] == 1
        table.chips(1, 100)
        assert actions(table.events)[-1] == (1, "bet", 100)


@pytest.mark.parametrize("chips", [True, False])
def test_a_turn_dealt_after_action_on_the_flop_without_a_burn_is_the_turn(chips):
    """DE 3 (a forgotten burn, "play goes on"); TDA 39-2 ("Sollte eine beliebige Aktion (selbst ein Check)
    stattgefunden haben, wird das Spiel [...] fortgesetzt"): once a player acted on the flop, a card without a burn
    is the turn, dealt without its burn."""
    table = Table(chips=chips)
    if chips:
        preflop_called(table)
    else:
        table.deal()
    table.burn()
    table.board(3)
    if chips:
        table.chips(1, 100)  # the small blind bets, everyone calls
        for seat in (2, 3, 4, 5):
            table.chips(seat, 100)
    else:
        table.fold(3)
    turn = table.stub[0]
    produced = table.board(1) + table.run(2.0)
    assert irregular_codes(produced) == ["missing_burn"]
    assert [e.public["position"] for e in produced if e.type == "board_card"] == [4]
    assert table.controller.board[3] == turn


def test_a_turn_burn_read_after_the_turn_card_makes_it_the_turn():
    """DE 3: one burn before each street. The turn's burn card read a moment after the turn card (the readers
    settle a card over several passes) is the turn's burn: no four-card flop, no missing burn."""
    table = Table(chips=False)
    table.deal()
    table.burn()
    table.board(3)
    turn, burn = table.stub[:2]
    table.card("board", turn, seconds=0.3)
    table.card("burn", burn, seconds=2.0)
    assert irregular_codes(table.events) == []
    assert [e.public["position"] for e in table.events if e.type == "board_card"] == [1, 2, 3, 4]
    assert table.controller.board[3] == turn


def test_the_floor_can_rule_a_fourth_card_the_turn():
    """TDA 39-1 calls the floor; where every seat checked the flop unseen and the dealer forgot the turn's burn,
    the floor's override makes the fourth card the turn, and the flop's checks follow from it."""
    table = Table()
    preflop_called(table)
    table.burn()
    table.board(4)
    table.run(2.0)
    [four] = of(table.events, "irregular_card", "four_card_flop")
    produced = table.command("override", irregularity=four.seq)
    assert [e.public["position"] for e in produced if e.type == "board_card"] == [4]
    assert [a for a in actions(produced)] == [(1, "check", 0), (2, "check", 0), (3, "check", 0), (4, "check", 0),
                                              (5, "check", 0)]


# ---- too few cards after the action has begun (TDA example 1-A; PP Dead hands 1d) ------------------------------

def test_a_seat_with_one_card_after_substantial_action_is_dead_and_play_goes_on():
    """TDA example 1-A: "SB / BB auf den Plätzen 1 und 2 [...] Platz 3 (UTG) passt, Platz 4 bezahlt und komplettiert
    damit wesentliche Handlungen (WH). Platz 5 stellt dann fest, dass er nur eine Karte hat. Die Hand ist
    automatisch „tot“, da WH stattgefunden hat. Der Dealer brennt nur eine Karte und legt den Flop." PP Dead hands
    1d: "The hand does not contain the right amount of cards for that specific game." """
    table = Table()
    table.blinds()
    table.deal(skip=((1, 5),))  # seat 5 is passed over in the second round
    table.fold(3)
    table.chips(4, 100)
    table.run(1.0)
    [short] = of(table.events, "irregular_card", "wrong_card_count")
    assert short.public["seats"] == [5]
    table.chips(1, 25, 25)  # the small blind completes; the big blind checks
    table.burn()
    table.board(3)
    table.run(1.0)
    dead = [e for e in table.events if e.type in ("irregular_card", "irregularity_resolved")
            and e.public.get("ruling", e.public.get("resolution")) == "dead_hand"]
    assert dead and (dead[-1].public["seats"] == [5])
    assert "misdeal" not in [e.type for e in table.events]
    assert (5, "fold", 0) in actions(table.events) and 5 in table.betting()["folded"]
    assert table.betting()["street"] == "flop" and table.controller.board == table.events[-1].public.get(
        "board", table.controller.board)
    assert [e.public["position"] for e in table.events if e.type == "board_card"] == [1, 2, 3]
    assert actions(table.events)[:4] == [(1, "post_sb", 50), (2, "post_bb", 100), (3, "fold", 0), (4, "call", 100)]
    table.chips(1, 100)  # the flop's betting is read as ever
    assert actions(table.events)[-1] == (1, "bet", 100)


@pytest.mark.parametrize("chips", [True, False])
def test_a_seat_with_one_card_before_substantial_action_is_a_misdeal_unless_fixed(chips):
    """PP Misdeals 1e: "An incorrect number of cards has been dealt to a player. This can be fixed only if the
    player with the incorrect number is the next player in the dealing sequence." Before substantial action (here
    one fold) the flop with a seat still short is a misdeal."""
    table = Table(chips=chips)
    if chips:
        table.blinds()
    table.deal(skip=((1, 5),))
    table.fold(3)
    table.run(2.0)
    [short] = of(table.events, "irregular_card", "wrong_card_count")
    assert short.public["ruling"] == "misdeal_unless_fixed" and short.public["seats"] == [5]
    if chips:
        assert actions(table.events) == [(1, "post_sb", 50), (2, "post_bb", 100), (3, "fold", 0)]
    table.burn()
    table.board(1)
    assert [e.public["reason"] for e in table.events if e.type == "misdeal"] == ["wrong_card_count"]


# ---- substantial action, per profile (TDA example 1-A; TDA 53) ----------------------------------------------

@pytest.mark.parametrize("rules, substantial", [("tda", True), ("club_tournament_de", True), ("poker_play", True),
                                                ("allin_club", False), ("casinos_austria", False)])
def test_a_fold_and_a_call_after_the_blinds_are_substantial_action_by_the_house(rules, substantial):
    """TDA example 1-A: "Platz 3 (UTG) passt, Platz 4 bezahlt und komplettiert damit wesentliche Handlungen" (DE is
    silent: TDA). PP Misdeals 2: "action is considered to occur when two players after the blinds have acted on
    their hands". AC 31: "akékoľvek dve akcie, ktoré urobia dvaja hráči, keď každý do potu vloží žetóny, alebo
    akékoľvek tri akcie". CA GR 9: "two or more active actions (bet, call, raise, re-raise, all-in,...)". A fold
    and a call: the misdeal can still be called under AC and CA only."""
    table = Table(rules)
    table.blinds()
    table.deal()
    table.fold(3)
    table.chips(4, 100)
    events, refusal = table.try_command("misdeal")
    if substantial:
        assert refusal is not None and "substantial action" in refusal and events == []
    else:
        assert refusal is None and [e.type for e in events][:1] == ["misdeal"]


def flop_bet_by_seat_1(table: Table) -> None:
    preflop_called(table)
    table.burn()
    table.board(3)
    table.run(2.0)
    table.chips(1, 100)  # the small blind bets on the flop; seat 2 is to act


def test_a_single_push_out_of_turn_sends_no_hand_to_the_floor():
    """TDA 53-2: "Hatte ein übersprungener Spieler eine angemessene Zeit zur Verfügung und er sich nicht meldet
    bevor wesentliche Handlungen (Regel 36) außerhalb der Reihe nach ihm auftreten, sind die Aktionen verbindlich."
    One call out of turn after the bet is not substantial action after the skipped seat: it waits for the turn,
    and the skipped seat plays on."""
    table = Table()
    flop_bet_by_seat_1(table)
    produced = table.chips(3, 100)  # seat 3 calls while seat 2 is to act
    [held] = of(produced, "bet_ruling", "held_out_of_turn")
    assert held.public["needs_floor"] is False and "TDA 53-2" not in held.public["rules"]
    assert table.controller.floor_pending() == []
    table.chips(2, 100)  # seat 2 calls in turn: seat 3's call binds
    assert actions(table.events)[-2:] == [(2, "call", 100), (3, "call", 100)]


@pytest.mark.parametrize("rules, floor", [("tda", True), ("allin_club", False)])
def test_a_push_and_a_fold_out_of_turn_after_a_skipped_seat_go_to_the_floor_by_the_house(rules, floor):
    """TDA 53-2 example 1: "Platz 5 die 600 OOT bezahlt. Platz 6 überlegt einen Moment und passt anschließend [...]
    Der Floor wird gerufen, um eine Entscheidung über den Verbleib der Hand von Platz 4 zu treffen." AC 31 applies
    its own count to a player "predbehnutý inými hráčmi": a call and a fold are not two players putting chips in."""
    table = Table(rules)
    flop_bet_by_seat_1(table)
    table.chips(3, 100)
    produced = table.fold(4)
    rulings = of(produced, "bet_ruling")
    assert bool(rulings and rulings[-1].public["needs_floor"] and "TDA 53-2" in rulings[-1].public["rules"]) is floor


# ---- a winning hand killed by the dealer at the showdown (CA Actions 9; AC 14) --------------------------------

def checked_to_the_river(table: Table, river_bet: int = 0) -> tuple[int, int]:
    """Seats 3, 4 and 5 fold, the blinds check it down to the river on a board that does not split (with a
    ``river_bet``, one chip of it: seat 1 bets it on the river and seat 2 calls): (winner, loser)."""
    from controller.betting import NLHE
    from controller.showdown import hand_rank
    table.blinds()
    table.deal()
    for seat in (3, 4, 5):
        table.fold(seat)
    table.chips(1, 25, 25)
    used = {c for cards in table.hole.values() for c in cards}
    board = [c for c in ("2c", "7d", "9h", "Js", "4s", "3h", "8c", "Td") if c not in used][:5]
    burns = [c for c in ("2d", "2h", "3c", "3d", "5c") if c not in used and c not in board]
    for position, card in enumerate(board, start=1):
        if position in (1, 4, 5):
            table.card("burn", burns.pop(0))
        table.card("board", card, seconds=0.4)
    if river_bet:
        table.chips(1, river_bet)
        table.chips(2, river_bet)
    table.run(2.0)
    ranks = {s: hand_rank(NLHE, table.hole[s], board) for s in (1, 2)}
    assert ranks[1] != ranks[2]
    winner = min(ranks, key=ranks.get)
    return winner, 3 - winner


def showdown_payouts(events) -> dict:
    [showdown] = of(events, "showdown")
    return showdown.public["payouts"]


@pytest.mark.parametrize("answer_after_the_gathering", [False, True])
def test_a_mucked_winning_hand_restored_by_the_floor_wins_the_pot(answer_after_the_gathering):
    """CA Actions 9: "the croupier may not fold a clearly winning hand"; AC 14 (a clearly winning tabled hand must
    not be mucked by the dealer; cards speak). The table knows the cards: the floor's confirm restores the hand, and
    the pot goes to the best hand — whether the floor answers before the cards are gathered or after."""
    table = Table()
    winner, loser = checked_to_the_river(table)
    table.fold(winner)  # the dealer mucks the winner's cards
    [alert] = of(table.events, "bet_ruling", "winning_hand_mucked")
    assert alert.public["seat"] == winner and alert.public["needs_floor"]
    if answer_after_the_gathering:
        table.clear()
        table.run(3.0)
        assert of(table.events, "showdown") == [] and alert.seq in table.controller.floor_pending()
    answered = table.command("confirm", irregularity=alert.seq)
    assert [e.public["result"] for e in answered if e.type == "floor_ruling"] == ["hand_restored"]
    assert [e.public["seat"] for e in of(answered, "bet_ruling", "hand_restored")] == [winner]
    if not answer_after_the_gathering:
        assert table.controller.snapshot(secure=False)["seats"][winner - 1]["folded"] is False
        table.clear()
        table.run(3.0)
    assert showdown_payouts(table.events) == {str(winner): 200}


def test_the_floor_can_let_the_fold_of_a_mucked_winning_hand_stand():
    """TDA 54-5 (a fold with no bet to face is binding) where the floor overrides the AC 14 alert: the pot goes to
    the hand left."""
    table = Table()
    winner, loser = checked_to_the_river(table)
    table.fold(winner)
    [alert] = of(table.events, "bet_ruling", "winning_hand_mucked")
    table.clear()
    table.run(3.0)
    table.command("override", irregularity=alert.seq)
    assert showdown_payouts(table.events) == {str(loser): 200}


# ---- blinds after a bust (DE 9; AC 27) ---------------------------------------------------------------------------

def test_after_the_big_blind_busts_the_next_hand_has_a_big_blind_and_no_small_blind():
    """DE 9: "Sollte einmal der Big-Blind in der aktuellen Runde ausscheiden, gibt es in der nächsten Runde keinen
    Small-Blind." AC 27: "Vždy je na jednu ruku len jeden big blind. Ak pripadá small blind na prázdne miesto, small
    blind v danej hre nebude." Seat 2's big blind busts; next hand the button is on seat 1, seat 2 is empty, seat 3
    posts the big blind: read from the chips and the seats, with no chip-count error."""
    from itertools import combinations

    from controller.betting import NLHE
    from controller.showdown import hand_rank
    table = Table("club_tournament_de")
    table.command("set_stacks", stacks={"2": 100})  # the big blind is all-in with the blind
    table.blinds()
    table.deal()
    for seat in (3, 4, 5):
        table.fold(seat)
    table.chips(1, 25, 25)  # the small blind calls
    board = next(list(b) for b in combinations(table.stub[1:12], 5)
                 if hand_rank(NLHE, table.hole[1], list(b)) < hand_rank(NLHE, table.hole[2], list(b)))
    table.burn()
    for card in board:
        table.card("board", card, seconds=0.4)
    table.clear()  # seat 1 wins the pot, the cards are gathered
    table.run(3.0)
    assert showdown_payouts(table.events) == {"1": 200}
    table.command("seats", seats=[1, 3, 4, 5])  # seat 2 is out of the tournament
    before = len(table.events)
    table.chips(3, 100)  # the big blind, and no small blind
    table.hole = {}
    table.deal(seats=(3, 4, 5, 1))
    table.chips(4, 100)
    hand = table.events[before:]
    [started] = of(hand, "betting_started")
    assert started.public["button"] == 1 and started.public["seats"] == [3, 4, 5, 1]
    assert actions(hand) == [(3, "post_bb", 100), (4, "call", 100)]
    assert of(hand, "chip_count") == [] and table.betting()["to_act"] == 5


# ---- chips that do not play (PP Betting 7); bets divisible by the small blind or ante (CA GR 8, CA Stakes 1) -----

def test_chips_smaller_than_the_blinds_chip_do_not_play():
    """PP Betting 7: "The smallest chip that is permitted to be wagered in a hand is equivalent to the smallest chip
    used in the antes, blinds, rake, or collection. Smaller chips than this amount do not play even in quantity."
    The blinds are posted in 25s: five 5-chips pushed with a bet do not play and go back."""
    table = Table("poker_play")
    table.blinds()
    table.deal()
    produced = table.chips(3, 100, 100, 5, 5, 5, 5, 5)  # a raise to 200 and 25 in 5-chips
    [ruling] = of(produced, "bet_ruling", "chips_do_not_play")
    assert ruling.public["stands"] == 200 and ruling.public["returned"] == 25
    assert "PP Betting 7" in ruling.public["rules"][0]
    assert actions(produced) == [(3, "raise", 200)]


def test_a_bet_not_divisible_by_the_small_blind_is_reduced_and_the_spike_goes_back():
    """CA GR 8: "All bets placed must be divisible by the ante or small blind [...] The player will be reimbursed
    for any resulting spike." CA Stakes 1: "All bets placed must be divisible by the ante or small blind". At 50/100,
    a raise pushed as 325 stands as 300, and 25 goes back."""
    table = Table("casinos_austria")
    table.blinds()
    table.deal()
    produced = table.chips(3, 100, 100, 100, 25)
    [ruling] = of(produced, "bet_ruling", "bet_not_divisible")
    assert (ruling.public["stands"], ruling.public["returned"]) == (300, 25)
    assert ruling.public["rules"][0].startswith("CA GR 8, CA Stakes 1")
    assert actions(produced) == [(3, "raise", 300)]
    table.chips(4, 100, 100, 100)  # an exact call of 300: nothing to rule
    assert of(table.events, "bet_ruling", "bet_not_divisible") == [ruling]


@pytest.mark.parametrize("rules", ["tda", "allin_club", "club_tournament_de"])
def test_houses_without_a_rule_play_every_chip_in_play(rules):
    """TDA 20 (odd chips are coloured up to "den kleinsten noch im Spiel befindlichen Nennwert"): every chip in play
    plays; the TDA, AC and DE books set no divisibility rule, so 325 is a raise to 325."""
    table = Table(rules)
    table.blinds()
    table.deal()
    produced = table.chips(3, 100, 100, 100, 25)
    assert [e for e in produced if e.type == "bet_ruling" and e.public["code"] in
            ("bet_not_divisible", "chips_do_not_play")] == []
    assert actions(produced) == [(3, "raise", 325)]


# ---- cards pitched quickly to the wrong seats (PP Misdeals 1f, 1h; AC 30c) -------------------------------------

def pitch(table: Table, seats, seconds: float) -> None:
    """The dealer pitches one card to each of ``seats``, ``seconds`` apart."""
    for seat in seats:
        table.hole.setdefault(seat, []).append(table.stub[0])
        table.card(f"seat{seat}.cards", seconds=seconds)


@pytest.mark.parametrize("chips", [True, False])
def test_two_cards_pitched_a_fraction_of_a_second_apart_to_swapped_seats_go_to_the_floor(chips):
    """PP Misdeals 1f: "Any card has been dealt out of the proper dealing sequence and has been dealt over with more
    cards". Seat 3's card lands 0.2 s before seat 2's: the readers cannot tell that from seat 2's card read late,
    so the table says so (``read_order: uncertain``) and the floor rules; its confirm is the misdeal."""
    table = Table(chips=chips)
    if chips:
        table.blinds()
    pitch(table, [1], 0.3)
    pitch(table, [3, 2], 0.2)
    pitch(table, [4, 5], 0.3)
    [event] = of(table.events, "irregular_card", "card_out_of_sequence")
    assert event.public["read_order"] == "uncertain" and event.public["gap_s"] < 1.5
    assert event.public["seats"] == [3, 2] and event.public["needs_floor"] and event.public["ruling"] == "misdeal"
    assert "PP Misdeals 1f" in event.public["rules"]
    confirmed = table.command("confirm", irregularity=event.seq)
    assert [e.public["reason"] for e in confirmed if e.type == "misdeal"] == ["card_out_of_sequence"]


def test_the_card_due_one_reader_cycle_after_the_next_seats_card_was_only_read_late_and_the_deal_goes_on():
    """Seat 2's card reaches its seat one reader cycle (0.05 s) after seat 3's: no dealer pitches two cards that
    close together, so it was read late (a card at a zone's edge), not dealt out of turn: no call to the floor, and
    the cards are dealt in order."""
    table = Table(chips=False)
    pitch(table, [1], 0.3)
    pitch(table, [3, 2], 0.05)
    pitch(table, [4, 5, 1, 2, 3, 4, 5], 0.3)
    assert irregular_codes(table.events) == []
    assert [(e.public["seat"], e.public["count"]) for e in table.events if e.type == "card_dealt"] == \
        [(seat, rnd) for rnd in (1, 2) for seat in PLAYERS]


def test_a_swap_the_floor_rules_a_late_read_plays_on():
    """PP Misdeals 1f applies only to a card dealt out of sequence; where the floor finds the card was only read
    late, its override lets the deal go on as dealt."""
    table = Table(chips=False)
    pitch(table, [1], 0.3)
    pitch(table, [3, 2], 0.2)
    [event] = of(table.events, "irregular_card", "card_out_of_sequence")
    table.command("override", irregularity=event.seq)
    pitch(table, [4, 5, 1, 2, 3, 4, 5], 0.3)
    table.burn()
    table.board(3)
    assert irregular_codes(table.events) == ["card_out_of_sequence"] and "misdeal" not in [e.type for e in table.events]
    assert [e.public["position"] for e in table.events if e.type == "board_card"] == [1, 2, 3]


def test_a_swap_seen_over_a_longer_time_is_out_of_sequence_without_doubt():
    """PP Misdeals 1f: a card to seat 3 and, two seconds later, seat 2's card: far longer than a late read, so the
    card was dealt out of sequence (no ``read_order``)."""
    table = Table(chips=False)
    pitch(table, [1], 0.3)
    pitch(table, [3], 2.0)
    pitch(table, [2], 0.3)
    [event] = of(table.events, "irregular_card", "card_out_of_sequence")
    assert "read_order" not in event.public and event.public["ruling"] == "misdeal" and event.public["needs_floor"]


METRATEC_PASS_S = 0.65  # the cards reader's pass of config/table-metratec.toml (cycle_ms)
FEIG_PASS_S = 3.0  # one Feig reader for the whole table, config/table-feig.toml


@pytest.mark.parametrize("pass_s", [None, METRATEC_PASS_S])
def test_on_a_table_whose_card_reader_takes_a_pass_of_over_half_a_second_a_swap_within_it_is_a_late_read(pass_s):
    """A reader that visits its antennas in turn cannot tell the order of two cards that landed within one of its
    passes (docs/events.md, "Cards read late"). Seat 2's card reaches its seat 0.4 s after seat 3's: on a table whose
    card reader takes 0.65 s a pass, it was read late and the deal goes on in order; at the reference reader's pace
    (20 passes a second) the readers could have told, so the floor rules (PP Misdeals 1f)."""
    table = Table(chips=False, **({} if pass_s is None else {"card_pass_s": pass_s}))
    pitch(table, [1], 0.3)
    pitch(table, [3, 2], 0.4)
    pitch(table, [4, 5, 1, 2, 3, 4, 5], 0.3)
    if pass_s is None:
        [event] = of(table.events, "irregular_card", "card_out_of_sequence")
        assert event.public["read_order"] == "uncertain" and event.public["needs_floor"]
        return
    assert irregular_codes(table.events) == []
    assert [(e.public["seat"], e.public["count"]) for e in table.events if e.type == "card_dealt"] == \
        [(seat, rnd) for rnd in (1, 2) for seat in PLAYERS]


@pytest.mark.parametrize("pass_s", [None, FEIG_PASS_S])
def test_a_card_read_two_and_a_half_seconds_late_by_a_reader_with_a_three_second_pass_takes_its_place(pass_s):
    """Such a reader reads a card up to a pass after it landed, and needs two reads: seat 2's card, due before seat
    3's, comes 2.5 s after it. With a 3 s pass it was read late and is placed in order; at the reference reader's
    pace that is far longer than a late read, and the card was dealt out of sequence (PP Misdeals 1f)."""
    table = Table(chips=False, **({} if pass_s is None else {"card_pass_s": pass_s}))
    pitch(table, [1], 0.3)
    pitch(table, [3], 2.5)
    pitch(table, [2, 4, 5, 1, 2, 3, 4, 5], 0.3)
    if pass_s is None:
        [event] = of(table.events, "irregular_card", "card_out_of_sequence")
        assert "read_order" not in event.public and event.public["ruling"] == "misdeal"
        return
    assert irregular_codes(table.events) == []
    assert [(e.public["seat"], e.public["count"]) for e in table.events if e.type == "card_dealt"] == \
        [(seat, rnd) for rnd in (1, 2) for seat in PLAYERS]


@pytest.mark.parametrize("pass_s", [None, FEIG_PASS_S])
def test_a_flop_burn_read_two_and_a_half_seconds_after_the_flop_by_a_reader_with_a_three_second_pass_counts(pass_s):
    """TDA 39-2 rules a flop turned without a burn; a burn read up to the read-order window after the flop counts.
    With a 3 s pass a burn read 2.5 s after the flop was read late; at the reference reader's pace the flop had no
    burn, and the floor picks one among the three."""
    table = Table(chips=False, **({} if pass_s is None else {"card_pass_s": pass_s}))
    table.deal()
    table.board(3)
    table.run(2.5)
    table.burn()
    table.run(10.0)  # past every window
    if pass_s is None:
        assert irregular_codes(table.events) == ["flop_without_burn"]
        return
    assert irregular_codes(table.events) == []
    assert [e.public["position"] for e in table.events if e.type == "board_card"] == [1, 2, 3]
    assert [e.public["count"] for e in table.events if e.type == "burn"] == [1]


def test_the_first_card_pitched_to_the_wrong_seat_a_moment_early_goes_to_the_floor():
    """AC 30c: "prvá karta rozdaná na chybné miesto" (the first card dealt to the wrong seat) is a misdeal; PP
    Misdeals 1h: "The first card was improperly dealt to the wrong position." Seat 2's card lands 0.2 s before seat
    1's and the second round starts at seat 1: a late read or the first card to the wrong seat — the floor rules."""
    table = Table(chips=False)
    pitch(table, [2, 1], 0.2)
    pitch(table, [3, 4, 5], 0.3)
    assert of(table.events, "irregular_card") == []  # the second round shows what the first one was
    pitch(table, [1], 0.3)
    [event] = of(table.events, "irregular_card", "first_card_wrong_seat")
    assert event.public["read_order"] == "uncertain" and event.public["needs_floor"]
    assert event.public["ruling"] == "misdeal" and {"PP Misdeals 1h", "AC 30c"} <= set(event.public["rules"])
    table.command("override", irregularity=event.seq)
    assert table.controller.snapshot(secure=False)["button"] == BUTTON


def test_a_seat_with_three_cards_after_substantial_action_is_dead_and_folded_in_the_betting():
    """TDA example 1-B: "Platz 5 stellt dann fest, dass er drei Karten hat. Die Hand ist „tot“, da WH stattgefunden
    hat." On a chip table the dead hand is folded in the betting too, so it takes no part in the pot."""
    table = Table()
    table.blinds()
    table.deal()
    table.fold(3)
    table.chips(4, 100)
    table.card("seat5.cards")  # a third card to seat 5
    [extra] = of(table.events, "irregular_card", "extra_hole_card")
    assert extra.public["ruling"] == "dead_hand" and "TDA example 1-B" in extra.public["rules"]
    assert (5, "fold", 0) in actions(table.events) and 5 in table.betting()["folded"]
    conduct = table.controller.snapshot(secure=False)["conduct"]["seats"]
    assert [s["live"] for s in conduct if s["seat"] in (4, 5)] == [True, False]  # the seat sensors' view too
    table.chips(1, 25, 25)
    table.burn()
    table.board(3)
    table.run(1.0)
    assert table.betting()["street"] == "flop" and "misdeal" not in [e.type for e in table.events]


@pytest.mark.parametrize("rules, folds, dead", [("tda", 3, True), ("tda", 2, False), ("poker_play", 2, True),
                                                ("allin_club", 2, False), ("casinos_austria", 3, False)])
def test_a_table_without_chips_counts_the_folds_it_sees_as_action(rules, folds, dead):
    """TDA 36 as example 1-A counts it and AC 31: "any three actions"; PP Misdeals 2: "two players after the blinds
    have acted"; CA GR 9 counts only "active actions" with chips. A table that reads only the cards sees the folds:
    enough of them, and a seat found short of a card is dead (TDA example 1-A), otherwise a misdeal."""
    table = Table(rules, chips=False)
    table.deal(skip=((1, 5),))
    for seat in (3, 4, 1)[:folds]:
        table.fold(seat)
    table.run(2.0)
    table.burn()
    table.board(1)
    table.run(2.0)
    assert ("misdeal" in [e.type for e in table.events]) is not dead
    if dead:
        assert table.controller.snapshot(secure=False)["seats"][4]["folded"] is True


# ---- other rules of the digest ------------------------------------------------------------------------------------

def test_a_flop_without_a_burn_stands_once_a_player_has_acted():
    """TDA 39-2: "Sollte eine beliebige Aktion (selbst ein Check) stattgefunden haben, wird das Spiel mit den
    anfänglichen drei Karten fortgesetzt." The small blind bets on a flop turned without a burn before the table
    has ruled on it: play goes on with the three cards, and no pick of a burn card is offered."""
    table = Table()
    preflop_called(table)
    table.board(3, seconds=0.1)
    table.chips(1, 100, seconds=1.0)  # within the time a late burn could still be read
    table.run(1.0)
    [event] = of(table.events, "irregular_card", "flop_without_burn")
    assert event.public["ruling"] == "play_on" and event.public["after_action"] is True
    assert event.public["rules"] == ["TDA 39-2"] and not event.public["needs_floor"]
    assert len(table.controller.board) == 3 and table.controller.floor_pending() == []


def test_a_flop_without_a_burn_waiting_for_the_pick_stands_once_a_player_acts():
    """TDA 39-2 (as above): the floor's pick is offered while nobody has acted; once a player acts, a pick is refused
    and the three cards stand."""
    table = Table()
    preflop_called(table)
    table.board(3)
    table.run(2.0)
    [event] = of(table.events, "irregular_card", "flop_without_burn")
    assert event.public["ruling"] == "floor_picks_burn" and event.public["needs_floor"]
    table.chips(1, 100)
    events, refusal = table.try_command("floor_pick", irregularity=event.seq, card=table.controller.board[0])
    assert events == [] and "TDA 39-2" in refusal
    assert len(table.controller.board) == 3 and actions(table.events)[-1] == (1, "bet", 100)


def test_a_table_that_does_not_read_the_chips_refuses_set_stacks():
    table = Table(chips=False)  # answered ok before, and no stack was set
    events, refusal = table.controller.handle_command({"command": "set_stacks", "role": "floor", "user": "ann",
                                                       "stacks": {"1": 5000}}, table.t)
    assert (events, refusal) == ([], "set_stacks is not available on this table")
