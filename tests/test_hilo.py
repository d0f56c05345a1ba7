"""Hi-lo split games on a simulated table (cards on the antennas, chips on the bet zones, read through the zone
tracker): Omaha hi-lo eight or better (plo8), a pot split high and low, quartered, scooped without a low, the odd
chip to the high half, side pots split on their own; the hand's histories; the simulator dealing plo8."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from controller.betting import PLO8, BettingHand
from controller.histories import HandRecord
from controller.pokerstars import to_pokerstars
from controller.showdown import award, low_rank
from simulated_table import play_chips_table
from test_rulings import ZONES, Table, of

pytest.importorskip("phevaluator")

EVENT_SCHEMA = Draft202012Validator(json.loads((Path(__file__).resolve().parents[1] / "schemas" /
                                                "event.public.schema.json").read_text()))


class HiLoTable(Table):
    """Three players (seat 1 the small blind, seat 2 the big blind, seat 3 the button) at pot-limit Omaha hi-lo."""

    def __init__(self, blinds: tuple[int, int] = (50, 100), stack: int = 5000):
        super().__init__(players=(1, 2, 3), button=3, blinds=blinds, stack=stack, zones=ZONES,
                         betting_options={"variant": "PLO8"}, hole_cards=4)

    def deal_hands(self, hands: dict[int, str]) -> None:
        for rnd in range(4):
            for seat in (1, 2, 3):
                card = hands[seat].split()[rnd]
                self.hole.setdefault(seat, []).append(card)
                self.card(f"seat{seat}.cards", card, seconds=0.1)
        self.run(0.6)

    def called_to_the_flop(self, hands: dict[int, str]) -> None:
        """The blinds posted (seat 1's 50 in two chips, seat 2's 100), ``hands`` dealt, the button and the small
        blind calling: 100 from each player in the pot before the flop."""
        self.chips(1, 25, 25)
        self.chips(2, 100)
        self.deal_hands(hands)
        self.chips(3, 100)
        self.chips(1, 25, 25)

    def board_to_river(self, burns: str, board: str) -> None:
        """The flop, turn and river with their burn cards, every player checking."""
        cards = board.split()
        for burn, street in zip(burns.split(), (cards[:3], cards[3:4], cards[4:])):
            self.card("burn", burn)
            for card in street:
                self.card("board", card)

    def showdown(self) -> dict:
        self.clear()
        self.run(3.0)
        [showdown] = of(self.events, "showdown")
        return showdown.public


def test_a_pot_is_split_between_the_best_high_and_the_best_low():
    """Omaha hi-lo: seat 3's trip kings take the high half, seat 2's 7-5-3-2-A (two hole cards, three of the board)
    the low half; seat 1's 7-6-3-2-A is a worse low (lows compare from the highest card down). 150 each."""
    table = HiLoTable()
    table.called_to_the_flop({1: "Ad 6h Qc Qs", 2: "As 5d Jc Jh", 3: "Ks Kh 9c 9d"})
    table.board_to_river("2c 7s 8s", "2h 3d 7c Kd Td")
    public = table.showdown()
    [pot] = public["pots"]
    assert public["payouts"] == {"3": 150, "2": 150}
    assert pot["halves"] == [
        {"side": "high", "amount": 150, "winners": [3], "shares": {"3": 150}, "odd_chips": []},
        {"side": "low", "amount": 150, "winners": [2], "shares": {"2": 150}, "odd_chips": []}]
    assert {"TDA 20-3", "PP Ties 5c"} <= set(pot["rules"])


def test_two_equal_lows_quarter_the_pot():
    """Seats 1 and 2 both make 5-4-3-2-A (A-5 in hand with the board's 2-3-4); seat 3's flush takes the high half:
    150 to seat 3, a quarter (75) to each low."""
    table = HiLoTable()
    table.called_to_the_flop({1: "Ac 5s Qh Qd", 2: "Ad 5h Jh Jd", 3: "Ks 9s Kc 9c"})
    table.board_to_river("7d 8d Td", "2s 3s 4h Ts 6c")
    public = table.showdown()
    [pot] = public["pots"]
    assert public["payouts"] == {"3": 150, "1": 75, "2": 75}
    assert [(h["side"], h["winners"]) for h in pot["halves"]] == [("high", [3]), ("low", [1, 2])]


def test_without_an_eight_or_better_low_the_high_hand_scoops():
    """A board with two cards of eight or lower makes no low for anyone (exactly three board cards): seat 3's aces
    take the whole 300 with three aces; the pot has its high half only."""
    table = HiLoTable()
    table.called_to_the_flop({1: "2d 3d 4d 5d", 2: "As 2s Jc Jd", 3: "Ah Ac 9c 9d"})
    table.board_to_river("7d 8d Td", "Ad Kh 2c Qs 9h")
    public = table.showdown()
    [pot] = public["pots"]
    assert public["payouts"] == {"3": 300}
    assert [h["side"] for h in pot["halves"]] == ["high"]


def test_the_odd_chip_goes_to_the_high_half():
    """TDA 20-3: "H/L Split: der ungerade Chip im Gesamtpot geht an die High-Seite." Blinds 5/10, the smallest chip
    5: the small blind folds, the pot is 25 (five chips of 5): 15 to the high hand, 10 to the low."""
    table = HiLoTable(blinds=(5, 10))
    table.chips(1, 5)
    table.chips(2, 5, 5)
    table.deal_hands({1: "Qc Qd Jh Js", 2: "Ks Kh 9c 9d", 3: "As 2d Tc Td"})
    table.chips(3, 5, 5)
    table.fold(1)
    table.board_to_river("7d 8d 6d", "3h 4c 7s Kd Jc")
    public = table.showdown()
    [pot] = public["pots"]
    assert pot["amount"] == 25
    assert public["payouts"] == {"2": 15, "3": 10}
    assert [(h["side"], h["amount"]) for h in pot["halves"]] == [("high", 15), ("low", 10)]


def test_each_side_pot_is_split_on_its_own():
    """CA Actions 7; TDA 20-5; PP Ties 5d: each pot is split by the hands eligible for it. Seat 1 is all-in for 100:
    the main pot (300) goes half to its trip kings, half to seat 2's low; the side pot (400, seats 2 and 3) half to
    seat 3's aces, the best high without seat 1, and half to seat 2's low again."""
    hand = BettingHand(PLO8, [1, 2, 3], 3, {1: 100, 2: 300, 3: 300}, (50, 100))
    assert hand.declare(3, "raise", 300).ok and hand.push(3, [300]).ok
    assert hand.declare(1, "call").ok and hand.push(1, [50]).ok
    assert hand.declare(2, "call").ok and hand.push(2, [200]).ok
    while hand.status == "betting":
        assert hand.end_street().ok
    board = ["3d", "4c", "7h", "Kd", "Td"]
    hole = {1: ["Kc", "Ks", "Qc", "Qd"], 2: ["As", "2d", "Jc", "Jh"], 3: ["Ah", "Ac", "9c", "9d"]}
    main, side = award(hand, hole, board).pots
    assert (main.amount, main.eligible, side.amount, side.eligible) == (300, (1, 2, 3), 400, (2, 3))
    assert [(h.side, h.winners, h.amount) for h in main.halves] == [("high", (1,), 150), ("low", (2,), 150)]
    assert [(h.side, h.winners, h.amount) for h in side.halves] == [("high", (3,), 200), ("low", (2,), 200)]


def test_pokerstars_writes_each_half_collected_and_both_ways_of_a_shown_hand():
    """PokerStars' layout for hi-lo: the game "Omaha Hi/Lo Pot Limit", a shown hand "(HI: ...; LO: 5,4,3,2,A)",
    one "collected ... from pot" line per half, and the summary's "won (N) with HI: ...; LO: ..."."""
    hand = BettingHand(PLO8, [1, 2, 3], 3, {1: 1000, 2: 1000, 3: 1000}, (50, 100))
    assert hand.declare(3, "call").ok and hand.push(3, [100]).ok
    assert hand.declare(1, "call").ok and hand.push(1, [50]).ok
    while hand.status == "betting":  # checked to the river
        seat = hand.to_act()
        assert hand.end_street().ok if seat is None else hand.check(seat).ok
    board = ["2h", "3d", "7c", "Kd", "Td"]
    hole = {1: ["Ad", "6h", "Qc", "Qs"], 2: ["As", "5d", "Jc", "Jh"], 3: ["Ks", "Kh", "9c", "9d"]}
    result = award(hand, hole, board)
    record = HandRecord(hand, hole, board, [1, 2, 3], [(p.amount, p.shares) for p in result.pots], "t", "1",
                        pot_halves=[[h.shares for h in p.halves] for p in result.pots])
    text = to_pokerstars(record)
    assert "Omaha Hi/Lo Pot Limit (50/100)" in text.splitlines()[0]
    assert "seat2: shows [As 5d Jc Jh] (HI: a pair of Jacks; LO: 7,5,3,2,A)" in text
    assert "seat3: shows [Ks Kh 9c 9d] (HI: three of a kind, Kings)" in text
    assert "seat3 collected 150 from pot\nseat2 collected 150 from pot\n" in text
    assert "Seat 2: seat2 (big blind) showed [As 5d Jc Jh] and won (150) with HI: a pair of Jacks; LO: 7,5,3,2,A" \
        in text


@pytest.mark.parametrize("variant", ["plo8", "flo8"])
def test_the_simulated_table_plays_the_hi_lo_games_through_the_daemon_pipeline(variant):
    """`rfid-table sim` at plo8 and flo8: the dealer, the emulated readers' zone tracker and the controller, as the
    daemon runs them. Every hand ends; a showdown's pots name their halves, the high half first; the histories name
    the game as PokerStars does; no card is irregular and every showdown is read."""
    events, _table = play_chips_table({"variant": variant}, hands=8, seed=4, players=5, players_style="random")
    showdowns = [e for e in events if e.type == "showdown"]
    contested = [p for e in showdowns for p in e.public["pots"] if "halves" in p]
    assert len([e for e in events if e.type == "hand_ended"]) >= 8 and contested
    assert all([h["side"] for h in p["halves"]] in (["high"], ["high", "low"]) for p in contested)
    assert all(sum(h["amount"] for h in p["halves"]) == p["amount"] for p in contested)
    game = "Omaha Hi/Lo Pot Limit" if variant == "plo8" else "Omaha Hi/Lo Limit"
    histories = [e for e in events if e.type == "hand_history"]
    assert histories and all(game in e.secret["pokerstars_complete"].splitlines()[0] for e in histories)
    assert not [e for e in events if e.type == "irregular_card"]
    assert not [e for e in events if e.type == "bet_ruling" and e.public["code"] == "showdown_unread"]


def test_the_equity_of_a_split_game_gives_each_hand_its_high_and_its_low_share():
    """On the river: seat 3's four kings win the high half alone, seats 1 and 2 tie for the low (5-4-3-2-A each).
    On a turn of K-Q-J-T no river card can give anyone a low (a low needs three board cards of eight or lower):
    the high hand scoops every runout."""
    from controller.equity import equity

    hole = {1: ["Ac", "5s", "Qh", "Qd"], 2: ["Ad", "5h", "Jh", "Jd"], 3: ["Ks", "Kh", "9c", "9d"]}
    river = equity(hole, ["2s", "3c", "4h", "Kd", "Kc"], omaha=True, hi_lo=True).as_dict()
    assert river["no_low"] == 0
    assert [(h["seat"], h["win"], h["low_win"], h["low_tie"]) for h in river["hands"]] == \
        [(1, 0, 0, 1), (2, 0, 0, 1), (3, 1, 0, 0)]
    turn = equity(hole, ["Kc", "Qs", "Js", "Ts"], omaha=True, hi_lo=True).as_dict()
    assert turn["exact"] and turn["runouts"] == 52 - 12 - 4
    assert turn["no_low"] == 1 and all(h["low_win"] == h["low_tie"] == 0 for h in turn["hands"])
    assert "low_win" not in equity(hole, ["Kc", "Qs", "Js", "Ts"], omaha=True).as_dict()["hands"][0]


def test_a_hi_lo_hand_run_twice_splits_each_run_high_and_low_on_its_own():
    """All in before the flop, the players agree to run the board twice (CA Actions 8): each run takes half the pot
    (150), and each run's half is split high and low by that run's hands (the odd unit of a part to its high half,
    TDA 20-3). First run: Cem's trip kings high, Bo's 7-5-3-2-A low; second run: Anna's four queens high, Bo's
    8-5-3-2-A low (Anna's 8-6-3-2-A is worse). The event fits the published schema."""
    table = HiLoTable(stack=100)
    table.called_to_the_flop({1: "Ad 6h Qc Qs", 2: "As 5d Jc Jh", 3: "Ks Kh 9c 9d"})
    assert table.betting()["to_act"] is None
    table.command("run_it", times=2, role="dealer", user="bob")
    table.board_to_river("2c 7s 8s", "2h 3d 7c Kd Td")
    table.board_to_river("4c 4d 4h", "2d 3h 8c Qd Qh")
    public = table.showdown()
    [pot] = public["pots"]
    assert public["payouts"] == {"1": 75, "2": 150, "3": 75}
    assert [[(h["side"], h["winners"], h["amount"]) for h in board["halves"]] for board in pot["boards"]] == [
        [("high", [3], 75), ("low", [2], 75)], [("high", [1], 75), ("low", [2], 75)]]
    assert {"CA Actions 8", "TDA 20-3"} <= set(pot["rules"])
    [showdown] = [e for e in table.published() if e["type"] == "showdown"]
    showdown["epoch"] = "e-hilo"  # (the daemon stamps it on the way out)
    assert EVENT_SCHEMA.is_valid(showdown), list(EVENT_SCHEMA.iter_errors(showdown))[:1]


def test_a_hi_lo_pot_of_a_double_board_gives_each_board_its_high_and_low_halves_and_the_odd_units_by_the_rules():
    """A double board (CA GR 14.1: "The pot is divided equally between these Boards"), each board's part split high
    and low by its own hands. 1515 in the pot, in units of 5 (the smallest chip): 755 a board, the unit left over
    between the boards to the first winner left of the button (the house's odd-chip order, TDA 20-1); each board's
    755 split 380 high, 375 low (TDA 20-3: the odd unit of a part to its high half)."""
    hand = BettingHand(PLO8, [1, 2, 3], 3, {1: 505, 2: 505, 3: 505}, (5, 10), chip_values=(5, 25, 100))
    for seat in (3, 1, 2):
        assert hand.declare(seat, "all_in").ok and hand.push(seat, [hand.seat_state(seat)["owed"]]).ok
    while hand.status == "betting":
        seat = hand.to_act()
        assert hand.end_street().ok if seat is None else hand.check(seat).ok
    hole = {1: ["Ad", "6h", "Qc", "Qs"], 2: ["As", "5d", "Jc", "Jh"], 3: ["Ks", "Kh", "9c", "9d"]}
    result = award(hand, hole, boards=[["2h", "3d", "7c", "Kd", "Td"], ["2d", "3h", "8c", "Qd", "Qh"]],
                   double_board=True)
    main = result.pots[0]
    assert [[(h.side, h.winners, h.amount) for h in part.halves] for part in main.boards] == [
        [("high", (3,), 380), ("low", (2,), 375)], [("high", (1,), 380), ("low", (2,), 375)]]
    assert dict(result.payouts) == {1: 380 + 5, 2: 750, 3: 380}



def test_rfid_table_replay_plays_the_hi_lo_games_phh_from_chips_and_cards(tmp_path):
    """`rfid-table replay` reads a PHH hand of fixed-limit Omaha hi-lo (pokerkit's `FO/8`) and of pot-limit Omaha
    hi-lo (the table's `PLO8`), plays each on the simulated table and writes the hand it read back: the same actions,
    and the split pot's finishing stacks (seat 3's trip kings and seat 2's low: 150 each of 300)."""
    import subprocess
    import sys

    from controller import phh
    from controller.betting import FLO8
    from sim.replay import core_actions

    board = ["2h", "3d", "7c", "Kd", "Td"]
    hole = {1: ["Ad", "6h", "Qc", "Qs"], 2: ["As", "5d", "Jc", "Jh"], 3: ["Ks", "Kh", "9c", "9d"]}
    files = []
    for variant in (FLO8, PLO8):
        hand = BettingHand(variant, [1, 2, 3], 3, {1: 1000, 2: 1000, 3: 1000}, (50, 100))
        assert hand.declare(3, "call").ok and hand.push(3, [100]).ok
        assert hand.declare(1, "call").ok and hand.push(1, [50]).ok
        while hand.status == "betting":
            seat = hand.to_act()
            assert hand.end_street().ok if seat is None else hand.check(seat).ok
        path = tmp_path / f"{variant.code}.phh"
        path.write_text(phh.dumps(phh.to_phh(hand, hole, board, [1, 2, 3], award(hand, hole, board).finishing_stacks)))
        files.append(path)
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, "-m", "rfid_table.cli", "replay", *map(str, files), "--out", str(out)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "2 hands: 2 reconstructed exactly" in run.stdout
    for path, code in zip(files, ("FO/8", "PLO8")):
        written, original = phh.loads((out / path.name).read_text()), phh.loads(path.read_text())
        assert written["variant"] == code and core_actions(written["actions"]) == core_actions(original["actions"])
        assert written["finishing_stacks"] == [900, 1050, 1050]


def test_rfid_table_export_writes_a_journaled_plo8_session_as_the_feed_did(tmp_path):
    """A journaled `rfid-table sim` session at plo8 exported with `rfid-table export --format pokerstars --all-cards`: every hand
    in PokerStars' Omaha Hi/Lo layout, the same text as the feed published but for the date (the export rebuilds
    each pot's halves from the journaled showdown); a pot split high and low has a `collected` line per half."""
    import dataclasses
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
    config = dataclasses.replace(config, game=dataclasses.replace(config.game, variant="plo8"),
                                 broadcast_delay_s=0.0, journal_path=None)
    path = tmp_path / "main-2.journal"
    journal = Journal(path, table_id=config.table_id)
    assert journal.open().ok
    table = SimulatedTable(config, SimOptions(hands=12, seed=3, speed=0, pace_s=1.0, link="direct", players=5,
                                              players_style="random"), None, journal)
    table.pipeline.restore(time.time())
    table.run(StopFlag())
    feed = [e.secret["pokerstars_complete"] for e in journal.events_after(0, 10_000) if e.type == "hand_history"]
    journal.close()
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "rfid_table.cli", "export", "--journal", str(path), "--format",
                           "pokerstars", "--all-cards", "--out", str(out)], capture_output=True, text=True, timeout=120, cwd=root)
    assert done.returncode == 0, done.stderr
    [text] = [p.read_text() for p in out.glob("*.txt")]
    hands = [h for h in text.split("\n\n\n") if h.strip()]
    assert len(hands) == len(feed) >= 12 and all("Omaha Hi/Lo Pot Limit" in h.splitlines()[0] for h in hands)
    for exported, published in zip(hands, feed):  # the same text but for the export's date
        assert exported.split("\n", 1)[1].strip("\n") == published.split("\n", 1)[1].strip("\n")
    one_pot_split = [h for h in hands if "; LO: " in h and h.count(" from pot\n") == 2]
    assert one_pot_split, "no hand of one pot split high and low in the session"


@pytest.mark.slow  # nine hands replayed from chips and cards: 9 s
def test_random_hi_lo_hands_of_the_generator_are_read_back_exactly_by_rfid_table_replay(tmp_path):
    """sim.handgen's random legal hands of plo8, flo8 and flhe8 (short stacks, side pots, split pots) as PHH files:
    `rfid-table replay` plays each from chips and cards on the simulated table and reads every one back exactly."""
    import subprocess
    import sys

    from controller import phh
    from sim.handgen import HI_LO, random_hands

    files = []
    for n, hand in enumerate(random_hands(9, seed=11, variants=HI_LO)):
        path = tmp_path / f"hand{n}.phh"
        path.write_text(phh.dumps(hand))
        files.append(path)
    assert {phh.loads(path.read_text())["variant"] for path in files} == {"PLO8", "FO/8", "FLHE8"}
    run = subprocess.run([sys.executable, "-m", "rfid_table.cli", "replay", *map(str, files), "--out",
                          str(tmp_path / "out")], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "9 hands: 9 reconstructed exactly" in run.stdout


def test_the_simulated_table_runs_hi_lo_hands_twice_and_splits_each_run_high_and_low():
    """`rfid-table sim --run-it-twice 1` at plo8: players all-in with board cards to come run it twice; the table
    reads both runs from the board antenna and splits each run's part high and low (each board's `halves`)."""
    events, _table = play_chips_table({"variant": "plo8"}, hands=8, seed=2, players=3, players_style="random",
                                      run_it_twice=1.0)
    ran = [e.public for e in events if e.type == "showdown" and e.public.get("runs") == 2]
    assert ran, "no hand was run twice"
    for showdown in ran:
        for pot in showdown["pots"]:
            for board in pot.get("boards", ()):
                assert board["halves"][0]["side"] == "high"
                assert {w for h in board["halves"] for w in h["winners"]} == set(map(int, board["shares"]))
    assert not [e for e in events if e.type == "irregular_card"]
    assert not [e for e in events if e.type == "bet_ruling" and e.public["code"] == "showdown_unread"]
