"""Stud and hi-lo details a viewer or the floor notices: the equity of seven or eight stud players, whose deck runs
short on seventh street; a stud seat's up card read as fast as a down card; a hi-lo hand run twice in PokerStars'
layout; a hi-lo pot's halves as docs/events.md shows them; each game of a mixed game at its own stakes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from controller.cards import FULL_DECK
from controller.rotation import Game, Stakes
from rfid_table.config.checker import ConfigError
from rfid_table.config.table import load_config
from rfid_table.devtools.simulate import SimOptions, SimulatedTable
from rfid_table.service.equity_worker import GameKind, compute, stud_spot_of
from simulated_table import play_chips_table
from test_expected_card import cycles_to_deal, cycles_to_read
from test_hilo import EVENT_SCHEMA, HiLoTable
from test_mixed import MixedTable
from test_rulings import of
from test_schemas import problems
from test_stud_table import street, table as stud_table, third_street

EIGHT = tuple(range(1, 9))
STUD = GameKind(7, False, False, "stud")
STUD_CONFIG = Path(__file__).resolve().parents[1] / "config" / "table-stud.toml"  # the simulated reader


def test_eight_stud_players_get_their_equity_the_seventh_card_drawn_as_the_community_card():
    """Eight players' 56 cards and the burns are more than 52: on seventh street the last card is one card every
    hand shares. The equity counts it so, from third street on, where it once gave no equity at all."""
    rolled_up = stud_table(players=EIGHT)  # seat 1's three aces against seven unpaired hands
    third_street(rolled_up, {1: "As Ah Ad", 2: "2s 7h Jc", 3: "3d 8s Qc", 4: "4c 9d Kh", 5: "5h Ts 2c",
                             6: "6s Jd 3h", 7: "7c Qd 4s", 8: "8d Ks 5c"})
    body = compute(stud_spot_of(rolled_up.controller.snapshot(secure=True)), STUD)
    third = body["secret"]
    assert (body["public"]["street"], third["exact"], third["runouts"]) == ("third", False, 10_000)
    assert [h["seat"] for h in third["hands"]] == list(EIGHT)
    aces, *others = third["hands"]
    assert aces["win"] > 0.5 and all(h["win"] < 0.15 for h in others)

    t = stud_table(players=EIGHT)
    deck = list(FULL_DECK)
    third_street(t, {s: " ".join(deck[3 * (s - 1):3 * s]) for s in EIGHT})
    rest = deck[24:]
    for _street in ("fourth", "fifth", "sixth"):
        street(t, rest.pop(0), {s: rest.pop(0) for s in EIGHT})
    # one card left for eight players: it is the community card, and it gives seat 8 a straight (T-J-Q-K and the
    # ace) over seat 5's three aces (tests/test_stud_table.py deals the same hand to the showdown)
    sixth = compute(stud_spot_of(t.controller.snapshot(secure=True)), STUD)["secret"]
    assert (sixth["exact"], sixth["runouts"]) == (True, 1)
    assert [h["seat"] for h in sixth["hands"] if h["win"] == 1.0] == [8]


def test_a_stud_seats_up_card_is_believed_on_its_first_read_when_it_is_due_there():
    """The readers believe a new card on its first read in the zones the deal brings it to next: at a stud table a
    seat's third to sixth cards on its up-card antenna (seatN.up), the others on its down-card antenna. A card
    where no card is due still needs its two reads."""
    config = load_config(STUD_CONFIG)  # present_after_cycles = 2
    sim = SimulatedTable(config, SimOptions(hands=None, link="direct"), None)
    try:
        uids = iter(config.decks["A"])
        sim.pipeline.submit({"command": "seats", "seats": [1, 2, 3], "role": "floor", "user": "test"})
        t = 1000.0
        sim.step(t)
        t += sim.cycle_s
        for _round in range(2):  # two down cards each, from the dealer's left
            for seat in (1, 2, 3):
                reads, t = cycles_to_deal(sim, t, next(uids), f"seat{seat}.cards")
                assert reads == 1
        door, t = cycles_to_deal(sim, t, next(uids), "seat1.up")
        assert door == 1
        # a second up card to seat 1 while seats 2 and 3 are due their door cards: its two reads
        assert cycles_to_read(sim, t, next(uids), "seat1.up") == 2
    finally:
        sim.close()


def test_a_hi_lo_hand_run_twice_writes_each_runs_halves_collected_as_pokerstars_does():
    """PokerStars writes a hi-lo hand run twice with a "collected ... from pot" line per half of each run, the high
    half first, so a seat that won the high half and tied the low has two lines (its own history of a Courchevel
    hi-lo hand run twice: "Player0 collected $40.75 from pot", "Hero collected $20.38 from pot", "Player0 collected
    $20.37 from pot"). All in before the flop, 300 in the pot, 150 a run: Cem's three kings take the first run's
    high half, Anna's four queens the second's; Anna and Bo tie each low (A-2 both), 40 and 35 of its 75 (the
    table's smallest chip is 5, the odd one to the first seat left of the button)."""
    table = HiLoTable(stack=100)
    table.called_to_the_flop({1: "Ad 2c Qc Qs", 2: "As 2d Jc Jh", 3: "Ks Kh 9c 9d"})
    table.command("run_it", times=2, role="dealer", user="bob")
    table.board_to_river("2h 7s 8s", "5h 3d 7c Kd Td")
    table.board_to_river("4c 4d 4h", "5d 3h 8c Qd Qh")
    table.showdown()
    [history] = of(table.events, "hand_history")
    text = history.secret["pokerstars_complete"]
    first, second = text.split("*** FIRST SHOW DOWN ***\n")[1].split("*** SUMMARY ***")[0].split(
        "*** SECOND SHOW DOWN ***\n")
    assert [line for line in first.splitlines() if "collected" in line] == [
        "seat3 collected 75 from pot", "seat1 collected 40 from pot", "seat2 collected 35 from pot"]
    assert [line for line in second.splitlines() if "collected" in line] == [
        "seat1 collected 75 from pot", "seat1 collected 40 from pot", "seat2 collected 35 from pot"]
    assert "and won (115) with HI: four of a kind, Queens; LO: 8,5,3,2,A" in text  # the summary: the run's whole


def test_the_hi_lo_showdown_of_docs_events_is_what_the_table_publishes():
    """docs/events.md's example of a quartered pot's `halves`, against the hand played: seat 3's flush high, seats 1
    and 2 tied low with A-5 in hand and the board's 2-3-4."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "events.md").read_text(encoding="utf-8")
    [example] = re.findall(r"### Hi-lo halves\n.*?```json\n(.*?)\n```", text, re.S)
    documented = json.loads(example)
    table = HiLoTable()
    table.called_to_the_flop({1: "Ac 5s Qh Qd", 2: "Ad 5h Jh Jd", 3: "Ks 9s Kc 9c"})
    table.board_to_river("7d 8d Td", "2s 3s 4h Ts 6c")
    table.showdown()
    [published] = [e for e in table.published() if e["type"] == "showdown"]
    assert {k: v for k, v in documented.items() if k not in ("t", "epoch")} == \
        {k: v for k, v in published.items() if k != "t"}
    assert EVENT_SCHEMA.is_valid(documented)


def deal(table: MixedTable, hands: dict[int, str]) -> None:
    """The hole cards, a card a seat at a time in the order given (from the seat left of the button)."""
    for rnd in range(len(next(iter(hands.values())).split())):
        for seat, cards in hands.items():
            table.put(cards.split()[rnd], f"seat{seat}.cards", 0.1)
    table.run(0.6)


def test_each_game_of_a_rotation_is_played_at_its_own_stakes():
    """A card room's mix: hold'em at blinds 25/50, pot-limit Omaha at 100/200 (the table's [game] blinds are 50/100).
    hand_started and the floor's game_set name the stakes in play, and the chips are read at them: the Omaha hand's
    blinds are 100 and 200."""
    nlhe = Game.named("nlhe", "NLHE", 2, Stakes(small_blind=25, big_blind=50))
    plo = Game.named("plo4", "PLO", 4, Stakes(small_blind=100, big_blind=200))
    table = MixedTable((nlhe, plo))
    table.chips(1, 25)
    table.chips(2, 25, 25)
    deal(table, {1: "As Kd", 2: "Qc Qd", 3: "7s 2d"})
    table.command("set_game", game="plo4", role="floor", user="ann")
    for card in ("7s", "2d", "As", "Kd"):  # seats 3 and 1 fold: the big blind wins
        table.put(card, "muck")
    table.clear()
    table.run(3.0)
    table.chips(2, 100)  # the button moved to seat 1: seat 2 the small blind, seat 3 the big
    table.chips(3, 100, 100)
    deal(table, {2: "Ah Ad 2s 3s", 3: "Kh Kc 4s 5s", 1: "9h 9d 8c 8d"})
    started = [e.public for e in of(table.events, "hand_started")]
    assert started == [{"game": "nlhe", "stakes": {"small_blind": 25, "big_blind": 50, "ante": 0, "big_blind_ante": 0}},
                       {"game": "plo4", "stakes": {"small_blind": 100, "big_blind": 200, "ante": 0,
                                                   "big_blind_ante": 0}}]
    [game_set] = of(table.events, "game_set")
    assert game_set.public["stakes"] == {"small_blind": 100, "big_blind": 200, "ante": 0, "big_blind_ante": 0}
    blinds = [(e.public["action"], e.public["added"]) for e in of(table.events, "action")
              if e.public["action"].startswith("post")]
    assert blinds == [("post_sb", 25), ("post_bb", 50), ("post_sb", 100), ("post_bb", 200)]
    assert not of(table.events, "bet_ruling")
    for name in ("event.public.schema.json", "event.secure.schema.json"):
        for e in of(table.events, "hand_started") + [game_set]:
            assert not problems(name, {"seq": e.seq, "type": e.type, "t": e.t, "hand": e.hand or 1, "epoch": "e",
                                       **e.public, **({"by": "floor/ann"} if e.type == "game_set" else {})})


def horse_table(tmp_path: Path, stakes: str) -> Path:
    """The example stud table dealing HORSE, with ``stakes`` (its [game.stakes.<game>] tables) at the end."""
    text = STUD_CONFIG.read_text().replace('variant = "stud"', 'rotation = "horse"')
    path = tmp_path / "table.toml"
    path.write_text(text + "\n" + stakes)
    return path


def test_a_rotations_stakes_per_game_are_read_and_checked_with_key_and_line(tmp_path):
    """HORSE at a card room's stakes: limit hold'em at blinds 10/20, the stud games with an ante of 5, a bring-in of
    5 and bets of 20 and 40; Omaha hi-lo, without its own, at the table's [game] stakes (blinds 1/2 and the ante
    of 1 of the example). check-config names each mistake with its key and line."""
    stud = "ante = 5\nbring_in = 5\nsmall_bet = 20\nbig_bet = 40\n"
    config = load_config(horse_table(tmp_path, "[game.stakes.flhe]\nsmall_blind = 10\nbig_blind = 20\n" +
                                     "".join(f"[game.stakes.{name}]\n{stud}" for name in ("razz", "stud", "stud8"))))
    games = {g.name: g for g in config.table_setup().rotation.games}
    assert games["flhe"].stakes_in_play() == {"stakes": {"small_blind": 10, "big_blind": 20, "ante": 1,
                                                         "big_blind_ante": 0}}  # (the table's ante: not given)
    assert games["razz"].stakes_in_play() == {"stakes": {"ante": 5, "bring_in": 5, "small_bet": 20, "big_bet": 40}}
    assert games["flo8"].stakes_in_play() == {"stakes": {"small_blind": 1, "big_blind": 2, "ante": 1,
                                                         "big_blind_ante": 0}}
    path = horse_table(tmp_path, "[game.stakes.flhe]\nsmall_blind = 30\nbig_blind = 20\n"
                                 "[game.stakes.plo4]\nsmall_blind = 1\n"
                                 "[game.stakes.razz]\nante = 5\nbring_in = 5\nsmall_bet = 20\nsmall_blind = 1\n"
                                 f"[game.stakes.stud]\n{stud}")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    text = str(caught.value)
    lines = path.read_text().splitlines()
    line = {entry: lines.index(entry) + 1 for entry in ("small_blind = 30", "[game.stakes.plo4]", "[game.stakes.razz]",
                                                        "small_blind = 1")}
    assert f"table.toml:{line['small_blind = 30']}: game.stakes.flhe.small_blind: expected 0 < small_blind (30) <= " \
           "big_blind (20)" in text
    assert f"table.toml:{line['[game.stakes.plo4]']}: game.stakes.plo4: 'plo4' is not in the rotation" in text
    assert f"table.toml:{line['[game.stakes.razz]']}: game.stakes.razz: missing big_bet" in text
    assert "game.stakes.razz.small_blind: unknown key (expected one of: ante, bring_in, small_bet, big_bet)" in text
    assert "game.stakes: stud8 has no [game.stakes.stud8]" in text


def test_the_stakes_per_game_example_of_docs_betting_is_a_table_check_config_reads(tmp_path):
    """docs/betting.md's example, as the [game] of the example stud table: hold'em at the table's blinds (10/20),
    Omaha hi-lo at its own (20/40), razz with its ante, bring-in and bets."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "betting.md").read_text(encoding="utf-8")
    [example] = [block for block in re.findall(r"```toml\n(.*?)```", text, re.S) if "[game.stakes." in block]
    config_text = re.sub(r"\[game\]\n.*?\n\n(?=\[mqtt\])", lambda _m: example + "\n", STUD_CONFIG.read_text(),
                         flags=re.S)
    path = tmp_path / "table.toml"
    path.write_text(config_text)
    games = {g.name: g.stakes_in_play()["stakes"] for g in load_config(path).table_setup().rotation.games}
    assert games == {"flhe": {"small_blind": 10, "big_blind": 20, "ante": 0, "big_blind_ante": 0},
                     "flo8": {"small_blind": 20, "big_blind": 40, "ante": 0, "big_blind_ante": 0},
                     "razz": {"ante": 5, "bring_in": 5, "small_bet": 20, "big_bet": 40}}


def test_the_simulated_table_plays_each_game_at_its_own_blinds_through_the_daemon_pipeline():
    """`rfid-table sim` at the chips table dealing hold'em at the table's blinds (50/100) and pot-limit Omaha at its
    own (100/200), in turn: the simulated players post each game's blinds, the table reads them so, and nothing is
    ruled."""
    game = {"rotation": ("nlhe", "plo4"), "hands_per_game": 1,
            "stakes": (("plo4", Stakes(small_blind=100, big_blind=200)),)}
    events, _table = play_chips_table(game, hands=4, seed=5, players=3, players_style="random")
    started = [(e.public["game"], e.public["stakes"]["big_blind"]) for e in events if e.type == "hand_started"]
    assert started == [("nlhe", 100), ("plo4", 200), ("nlhe", 100), ("plo4", 200)]
    blinds = [e.public["added"] for e in events if e.type == "action" and e.public["action"] == "post_bb"]
    assert blinds == [100, 200, 100, 200]
    assert not [e for e in events if e.type in ("bet_ruling", "irregular_card")]
