"""Mixed games on a simulated table (cards on the antennas, chips on the bet zones, read through the zone tracker):
each hand dealt, bet and shown down as the game the rotation gives it, the game changing every few hands, with the
level or at the floor's word, and the button frozen through the stud round (TDA 4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.domain import DomainEvent
from controller.game import GameController
from controller.levels import Level
from controller.rotation import CHANGE_LEVEL, Game, RotationSetup
from controller.table import TableSetup
from rfid_table.config.checker import ConfigError
from rfid_table.config.table import load_config
from rfid_table.service.equity_worker import EquityWorker
from simulated_table import play_chips_table
from test_rulings import ZONES, Table, of

pytest.importorskip("phevaluator")

NLHE, PLO, FLO8 = Game.named("nlhe", "NLHE", 2), Game.named("plo4", "PLO", 4), Game.named("flo8", "FLO8", 4)
HOLDEM_BOARD = ("burn", "board", "board", "board", "burn", "board", "burn", "board")  # where a hand's board goes


class MixedTable(Table):
    """Three players, seat 3 on the button at the first hand, blinds 50/100, dealing ``games`` in turn."""

    def __init__(self, games: tuple[Game, ...], hands_per_game: int = 1, chips: bool = True, **rotation):
        super().__init__(players=(1, 2, 3), button=3, chips=chips, zones=ZONES,
                         rotation=RotationSetup(games, hands_per_game, **rotation), **rotation_levels(rotation))

    def play(self, holes: dict[int, str], board: str, burns: str = "2c 3c 4c") -> list:
        """One hand from the button the table has: the blinds, the deal from the seat left of the button, everyone
        calls, the board checked down, the cards gathered. Returns the hand's events."""
        start = len(self.events)
        button = self.controller.snapshot(secure=False)["button"]
        order = [(button + i - 1) % 3 + 1 for i in (1, 2, 3)]  # small blind, big blind, the button
        small, big, last = order
        if self.controller.betting is not None:
            self.chips(small, 25, 25)
            self.chips(big, 100)
        cards = {seat: holes[seat].split() for seat in order}
        for rnd in range(len(cards[small])):
            for seat in order:
                self.put(cards[seat][rnd], f"seat{seat}.cards", 0.1)
        self.run(0.6)
        if self.controller.betting is not None:
            self.chips(last, 100)
            self.chips(small, 25, 25)
        street = board.split()
        for burn, turned in zip(burns.split(), (street[:3], street[3:4], street[4:])):
            self.put(burn, "burn")
            for card in turned:
                self.put(card, "board")
        self.clear()
        self.run(3.0)
        return self.events[start:]


def rotation_levels(rotation: dict) -> dict:
    """A level schedule for a rotation that changes with the level."""
    if rotation.get("change") == CHANGE_LEVEL:
        return {"levels": (Level(25, 50), Level(50, 100), Level(100, 200))}
    return {}


def test_each_hand_of_a_rotation_is_dealt_bet_and_shown_down_as_its_own_game():
    """nlhe, then pot-limit Omaha, then Omaha hi-lo, a hand each. The Omaha hand plays exactly two hole cards: seat
    1's queen of hearts with four hearts on the board is no flush there, so seat 2's three kings win. The Omaha hi-lo
    hand is split: the kings high, 7-5-3-2-A low (TDA 20-3)."""
    table = MixedTable((NLHE, PLO, FLO8))
    first = table.play({1: "As Ad", 2: "Kc Kd", 3: "7s 2d"}, "Ac 9d 4h Th 3s")
    second = table.play({1: "Qh Js Jd 3c", 2: "Kd Kc 8s 8d", 3: "4s 5s 6d Tc"}, "Ah Kh 7h 2h 9c",
                        burns="5c 6c 8c")
    third = table.play({1: "Ad 6h Qc Qs", 2: "As 5d Jc Jh", 3: "Ks Kh 9c 9d"}, "2h 3d 7c Kd Td",
                       burns="2c 7s 8s")
    assert [e.public["game"] for e in of(table.events, "hand_started")] == ["nlhe", "plo4", "flo8"]
    assert not of(table.events, "irregular_card")
    assert of(first, "showdown")[0].public["payouts"] == {"1": 300}
    assert of(second, "showdown")[0].public["payouts"] == {"2": 300}
    [pot] = of(third, "showdown")[0].public["pots"]
    assert [(half["side"], half["winners"], half["amount"]) for half in pot["halves"]] == [
        ("high", [3], 150), ("low", [2], 150)]


def test_the_game_changes_after_its_hands_and_the_snapshot_says_which_comes_next():
    """Two hands a game: the snapshot between hands names the next hand's game and how many hands of it were
    played; a cards-only table deals the hole cards each game has."""
    table = MixedTable((NLHE, PLO), hands_per_game=2, chips=False)
    snap = table.controller.snapshot(secure=False)
    assert (snap["game"], snap["rotation"]["hands_played"], snap["rotation"]["next_game"]) == ("nlhe", 0, "plo4")
    table.play({1: "As Ad", 2: "Kc Kd", 3: "7s 2d"}, "Ac 9d 4h Th 3s")
    snap = table.controller.snapshot(secure=False)
    assert (snap["game"], snap["rotation"]["hands_played"], snap["rotation"]["next_game"]) == ("nlhe", 1, "plo4")
    table.play({1: "As Ad", 2: "Kc Kd", 3: "7s 2d"}, "Ac 9d 4h Th 3s")
    snap = table.controller.snapshot(secure=False)
    assert (snap["game"], snap["rotation"]["hands_played"], snap["rotation"]["next_game"]) == ("plo4", 0, "nlhe")
    events = table.play({1: "Qh Js Jd 3c", 2: "Kd Kc 8s 8d", 3: "4s 5s 6d Tc"}, "Ah Kh 7h 2h 9c", burns="5c 6c 8c")
    [ended] = of(events, "hand_ended")
    assert sorted(len(cards) for cards in ended.secret["hole_cards"].values()) == [4, 4, 4]
    assert [e.public["game"] for e in of(table.events, "hand_started")] == ["nlhe", "nlhe", "plo4"]


def test_the_floor_sets_the_next_hands_game_and_the_running_hand_keeps_its_own():
    """set_game during a hand: the hand goes on as the game it began with; the next one is the floor's, and the
    rotation goes on from it. A game not in the rotation is refused, naming the rotation."""
    table = MixedTable((NLHE, PLO, FLO8), hands_per_game=4)
    table.chips(1, 25, 25)
    table.chips(2, 100)
    table.put("As", "seat1.cards")
    [game_set] = of(table.command("set_game", game="flo8"), "game_set")
    assert game_set.public == {"game": "flo8", "applies_to_hand": 2, "by": "floor/ann"}
    assert "plo8 is not in this table's rotation (nlhe, plo4, flo8)" in table.try_command("set_game", game="plo8")[1]
    assert table.controller.snapshot(secure=False)["game"] == "nlhe"
    for card, zone in (("Kc", "seat2.cards"), ("7s", "seat3.cards"), ("Ad", "seat1.cards"), ("Kd", "seat2.cards"),
                       ("2d", "seat3.cards")):
        table.put(card, zone, 0.1)
    table.run(0.6)
    table.chips(3, 100)
    table.chips(1, 25, 25)
    for card, zone in zip("2c Ac 9d 4h 3c Th 4c 3s".split(), HOLDEM_BOARD):
        table.put(card, zone)
    table.clear()
    table.run(3.0)
    assert of(table.events, "showdown")[0].public["payouts"] == {"1": 300}
    assert not of(table.events, "irregular_card")
    table.play({1: "Ad 6h Qc Qs", 2: "As 5d Jc Jh", 3: "Ks Kh 9c 9d"}, "2h 3d 7c Kd Td", burns="2c 7s 8s")
    assert [e.public["game"] for e in of(table.events, "hand_started")] == ["nlhe", "flo8"]


def test_a_restart_between_hands_goes_on_with_the_rotation_where_it_was():
    """The checkpoint taken between hands carries the rotation: the game, its hands played and a game the floor set
    for the next hand."""
    table = MixedTable((NLHE, PLO, FLO8), hands_per_game=2, chips=False)
    table.play({1: "As Ad", 2: "Kc Kd", 3: "7s 2d"}, "Ac 9d 4h Th 3s")
    state = table.controller.checkpoint_state()
    restarted = GameController(table.controller.setup, None)
    restarted.restore_checkpoint_state(state)
    assert restarted.snapshot(secure=False)["rotation"]["hands_played"] == 1
    table.use(restarted)
    table.play({1: "As Ad", 2: "Kc Kd", 3: "7s 2d"}, "Ac 9d 4h Th 3s")
    table.command("set_game", game="flo8")
    state = table.controller.checkpoint_state()
    restarted = GameController(table.controller.setup, None)
    restarted.restore_checkpoint_state(state)
    table.use(restarted)
    assert restarted.snapshot(secure=False)["game"] == "flo8"
    table.play({1: "Ad 6h Qc Qs", 2: "As 5d Jc Jh", 3: "Ks Kh 9c 9d"}, "2h 3d 7c Kd Td", burns="2c 7s 8s")
    assert [e.public["game"] for e in of(table.events, "hand_started")] == ["nlhe", "nlhe", "flo8"]


def test_a_table_that_deals_one_game_refuses_set_game():
    table = Table(players=(1, 2, 3), button=3, zones=ZONES)
    refusal = table.try_command("set_game", game="plo4")[1]
    assert refusal is not None and "this table deals" in refusal


def test_the_game_changes_with_the_level():
    """change = "level": the game changes when the floor's next level begins, with the hand that begins it."""
    table = MixedTable((NLHE, PLO), chips=False, change=CHANGE_LEVEL)
    table.play({1: "As Ad", 2: "Kc Kd", 3: "7s 2d"}, "Ac 9d 4h Th 3s")
    table.play({1: "As Ad", 2: "Kc Kd", 3: "7s 2d"}, "Ac 9d 4h Th 3s")
    table.command("set_level")
    assert table.controller.snapshot(secure=False)["game"] == "plo4"
    table.play({1: "Qh Js Jd 3c", 2: "Kd Kc 8s 8d", 3: "4s 5s 6d Tc"}, "Ah Kh 7h 2h 9c", burns="5c 6c 8c")
    assert [e.public["game"] for e in of(table.events, "hand_started")] == ["nlhe", "nlhe", "plo4"]


def test_the_button_is_frozen_through_the_stud_round():
    """TDA 4: "wird, wenn das Spiel von Hold'em zu Stud wechselt, nach der letzten Hold'em-Hand der Button an die
    Position versetzt, als wäre die nächste Hand eine Hold'em-Hand und wird dort für die Dauer der Stud-Runde
    eingefroren. [...] Beim Wechsel zu Hold'em startet der Button dort, wo er eingefroren wurde." Two hold'em hands,
    two of a game dealt without a button (a stand-in for stud, dealt here as hold'em is), two hold'em hands again:
    the button moves after the hold'em hands only."""
    stud = Game("stud-stand-in", "", 2, button=False)
    table = MixedTable((NLHE, stud), hands_per_game=2, chips=False)
    buttons = []
    for _ in range(6):
        buttons.append(table.controller.snapshot(secure=False)["button"])
        table.play({1: "As Ad", 2: "Kc Kd", 3: "7s 2d"}, "Ac 9d 4h Th 3s")
    assert buttons == [3, 1, 2, 2, 2, 3]


# ---- the configuration --------------------------------------------------------------------------------------------

CONFIG_DIR = Path(__file__).resolve().parent.parent / "config"


def configured(tmp_path: Path, example: str, game_lines: str, drop: str = "") -> Path:
    """An example table with its ``[game] variant`` line replaced by ``game_lines`` (and lines starting with
    ``drop`` left out)."""
    lines = []
    for line in (CONFIG_DIR / example).read_text().splitlines():
        if line.startswith("variant = "):
            line = game_lines
        elif drop and line.startswith(drop):
            continue
        lines.append(line)
    path = tmp_path / "table.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_horse_deals_hold_em_razz_stud_omaha_hi_lo_and_stud_hi_lo_in_turn(tmp_path):
    """``rotation = "horse"`` on a table with each seat's up-card antenna and a board: the five games in the order
    of the name, from limit hold'em, each for hands_per_game hands."""
    config = load_config(configured(tmp_path, "table-stud.toml", 'rotation = "horse"\nhands_per_game = 4'))
    rotation = config.table_setup().rotation
    assert [(g.name, g.hole_cards, g.button) for g in rotation.games] == [
        ("flhe", 2, True), ("razz", 7, False), ("stud", 7, False), ("flo8", 4, True), ("stud8", 7, False)]
    assert (rotation.hands_per_game, rotation.start) == (4, 0)


def test_a_mixed_games_mistakes_are_reported_with_key_and_line(tmp_path):
    """A game that is not one, a starting game outside the rotation, a change with the level at a cash table, the
    zones a game of the rotation needs (the flop games' board)."""
    path = configured(tmp_path, "table-stud.toml", 'rotation = ["nlhe", "studd", "razz"]\nvariant = "plo4"\n'
                      'change = "level"', drop="board")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    text = str(caught.value)
    line = {text.split(" = ")[0]: n for n, text in enumerate(path.read_text().splitlines(), 1)}
    assert f"table.toml:{line['rotation']}: game.rotation: 'studd' is not a game" in text
    assert f"table.toml:{line['variant']}: game.variant: plo4 is not in the rotation" in text
    assert "game.change: 'level' changes the game with the tournament's level" in text
    assert "zones.board: missing" in text


def test_the_simulated_table_plays_a_rotation_through_the_daemon_pipeline():
    """`rfid-table sim` dealing nlhe, pot-limit Omaha and Omaha hi-lo, a hand each: the dealer deals each hand as
    the table's game, every hand ends with its showdown read, no card is irregular, and each hand's history names
    its own game as PokerStars does."""
    events, _table = play_chips_table({"rotation": ("nlhe", "plo4", "flo8"), "hands_per_game": 1}, hands=3, seed=5,
                                      players=3, players_style="random")
    assert [e.public["game"] for e in events if e.type == "hand_started"] == ["nlhe", "plo4", "flo8"]
    titles = [e.secret["pokerstars_complete"].splitlines()[0] for e in events if e.type == "hand_history"]
    assert [("Hold'em No Limit" in s, "Omaha Pot Limit" in s, "Omaha Hi/Lo Limit" in s) for s in titles] == (
        [(True, False, False), (False, True, False), (False, False, True)])
    assert not [e for e in events if e.type == "irregular_card"]
    assert not [e for e in events if e.type == "bet_ruling" and e.public["code"] == "showdown_unread"]


class Snapshots:
    """A controller's secure snapshot as the equity worker reads it: a plo4 hand of a mixed game on the river."""

    seq, hand = 10, 3

    def snapshot(self, secure: bool) -> dict:
        seats = {1: ["Qh", "Js", "Jd", "3c"], 2: ["Kd", "Kc", "8s", "8d"]}
        return {"phase": "river", "hand": self.hand, "misdeal": False, "board": ["Ah", "Kh", "7h", "2h", "9c"],
                "burn_cards": [], "players": [1, 2], "betting": None, "game": "plo4",
                "seats": [{"seat": n, "cards": 4, "folded": False, "hole_cards": c} for n, c in seats.items()]}

    def numbered_event(self, type_, t, public, secret=None):
        self.seq += 1
        return DomainEvent(self.seq, type_, t, self.hand, public, secret or {})


def test_the_equity_of_a_mixed_games_hand_is_its_own_games():
    """A hold'em table's worker given the rotation computes a plo4 hand as Omaha: the queen of hearts and four hearts
    on the board are no flush there, the three kings win."""
    worker = EquityWorker(2, omaha=False, games=(NLHE, PLO))
    table = Snapshots()
    try:
        worker.collect(table, 1.0, [DomainEvent(11, "board_card", 1.0, 3)])
        worker.offer(table)
        assert worker.wait(20)
        result = worker.collect(table, 2.0, [])
    finally:
        worker.close()
    assert result is not None
    hands = {h["seat"]: h for h in result[1].secret["hands"]}
    assert (hands[2]["win"], hands[1]["win"]) == (1.0, 0.0)


def test_the_button_stays_where_the_last_holdem_hand_left_it_through_a_stud_round_dealt_from_the_dealers_left():
    """TDA 4 with the stud deal itself: two hold'em hands (the button on seat 3, then seat 1), two stud hands, dealt
    from the dealer's left (seat 1) whatever the button, then hold'em again from the button where the stud round
    froze it (seat 2): its first card to seat 3, left of the button, and no card out of sequence."""
    from sim.stud_hands import stud_zones
    from sim.table_driver import TableDriver
    from test_stud_table import DECK, READ, street, third_street

    games = (NLHE, Game.named("stud", "", 7))
    setup = TableSetup("mix-1", 8, DECK, players=(1, 2, 3), button=3, rotation=RotationSetup(games, 2))
    t = TableDriver(GameController(setup), stud_zones(), deck=DECK, debounce=READ, move_s=0.3)

    def holdem(first: int) -> None:
        order = [(first + i - 1) % 3 + 1 for i in range(3)]
        for card, seat in zip("As Kc 7s Ad Kd 2d".split(), order * 2):
            t.put(card, f"seat{seat}.cards")
        for card, zone in zip("2c Ac 9d 4h 3c Th 4c 3s".split(), HOLDEM_BOARD):
            t.put(card, zone)
        t.field.clear()
        t.run(3.0)

    def stud() -> None:
        third_street(t, {1: "As Kd 9c", 2: "3s 4s 2d", 3: "6h 7h Ks"})
        street(t, "Ac", {1: "Jh", 2: "8c", 3: "2h"})
        street(t, "Ad", {1: "Th", 2: "8d", 3: "3h"})
        street(t, "Ah", {1: "Jd", 2: "5c", 3: "4h"})
        street(t, "Kc", {1: "Qc", 2: "2c", 3: "5h"}, up=False)
        t.field.clear()
        t.run(3.0)

    buttons = []
    for deal, first in ((holdem, 1), (holdem, 2), (stud, 1), (stud, 1), (holdem, 3)):
        buttons.append(t.controller.snapshot(secure=False)["button"])
        deal(first) if deal is holdem else deal()
    assert [e.public["game"] for e in of(t.events, "hand_started")] == ["nlhe", "nlhe", "stud", "stud", "nlhe"]
    assert buttons == [3, 1, 2, 2, 2]
    assert [e.public["code"] for e in of(t.events, "irregular_card")] == []
