"""Tournament levels on a simulated table: the blinds and antes of the level schedule, read from the chips through the
zone tracker, and the floor's ``set_level`` taking effect from the next hand. Each test quotes the rule it follows."""

from __future__ import annotations

import pytest

from controller.game import GameController
from controller.levels import Level
from conftest import ROOT
from rfid_table.cli import main
from test_check_config import SIXMAX, line_of
from sim.table_driver import actions, of
from test_rulings import PLAYERS, Table

SCHEDULE = (Level(50, 100, minutes=12), Level(100, 200, minutes=12), Level(200, 400, big_blind_ante=400))


class TournamentTable(Table):
    """test_rulings' table, playing a tournament's level schedule (club tournament rules)."""

    def __init__(self, levels=SCHEDULE, start: int = 1, chips: bool = True):
        super().__init__("club_tournament_de", chips=chips, stack=20_000, levels=levels, start_level=start)

    def set_level(self, level: int | None = None) -> list:
        return self.command("set_level", **({} if level is None else {"level": level}))

    def level(self) -> dict:
        return self.controller.snapshot(secure=False)["level"]

    def everyone_folds_to_the_big_blind(self, big_blind: int) -> None:
        for seat in PLAYERS:
            if seat != big_blind:
                self.fold(seat)
        self.clear()  # the big blind takes the pot, the cards are gathered
        self.run(3.0)


def test_a_level_announced_during_a_hand_runs_from_the_next_hand_and_the_chips_are_read_by_it():
    """DE 5: "Die Blinds und Limits werden nach vorgegebenem Zeitplan gesteigert. [...] Wenn das Zeitlimit für eine
    Stufe abgelaufen ist und die neue Limitstufe angekündigt wurde, beginnt diese mit dem nächsten Spiel." AC 18: "Po
    vypršaní času kola a oznámení nového levelu floormanagerom sa v novej hre uplatnia vyššie blindy a ante." The
    hand running keeps 50/100; the next hand's 100/200 blinds are read as its blinds, not as a blind and a raise."""
    table = TournamentTable()
    table.blinds()  # 25 + 25 and 100: level 1
    table.deal()
    [announced] = of(table.set_level(), "level_set")
    assert announced.public == {"level": 2, "small_blind": 100, "big_blind": 200, "ante": 0,
                                     "big_blind_ante": 0, "minutes": 12, "applies_to_hand": 2, "running": False,
                                     "by": "floor/ann"}
    assert table.level()["level"] == 1 and table.level()["next_hand"] == 2
    produced = table.chips(3, 100)  # a call of the running level's big blind
    assert actions(produced) == [(3, "call", 100)]
    table.everyone_folds_to_the_big_blind(2)
    assert table.level()["level"] == 1 and table.level()["next_hand"] == 2  # still waiting for the next deal

    before = len(table.events)  # hand 2: the button moves to seat 1, seat 2 posts 100, seat 3 posts 200
    table.chips(2, 100)
    table.chips(3, 100, 100)
    table.hole = {}
    table.deal(seats=(2, 3, 4, 5, 1))
    table.chips(4, 100, 100)
    hand = table.events[before:]
    [began] = of(hand, "level_set")
    assert began.hand == 2 and began.public["running"] and "by" not in began.public
    [started] = of(hand, "betting_started")
    assert (started.public["level"], started.public["small_blind"], started.public["big_blind"]) == (2, 100, 200)
    assert actions(hand) == [(2, "post_sb", 100), (3, "post_bb", 200), (4, "call", 200)]
    assert of(hand, "chip_count") == []
    assert table.level() == {"level": 2, "small_blind": 100, "big_blind": 200, "ante": 0, "big_blind_ante": 0,
                             "minutes": 12, "levels": 3, "next_hand": None}


def test_a_level_set_between_hands_runs_at_once_with_its_big_blind_ante():
    """DE 5 (the new level "beginnt [...] mit dem nächsten Spiel"): announced between hands, the next hand to be dealt
    plays it. Level 3's big-blind ante lies in the pot before the deal and is read as the ante, the blinds as blinds."""
    table = TournamentTable()
    [announced] = of(table.set_level(3), "level_set")
    assert announced.public["running"] and announced.public["applies_to_hand"] == 1
    assert table.level()["level"] == 3 and table.level()["next_hand"] is None
    table.chips(1, 100, 100)  # small blind 200
    table.chips(2, 100, 100, 100, 100)  # big blind 400
    table.chips("pot", 100, 100, 100, 100)  # the big blind's ante of 400
    table.deal()
    hand = table.events
    assert [a for a in actions(hand) if a[1] != "ante"] == [(1, "post_sb", 200), (2, "post_bb", 400)]
    assert sum(e.public["added"] for e in hand if e.type == "action" and e.public["action"] == "ante") == 400
    assert of(hand, "chip_count") == []
    assert table.betting()["pot"] == 1000


def test_the_schedule_ends_at_its_last_level_and_a_cash_table_has_none():
    """DE 11 lists the schedule's levels ("Runde Small Big Minuten"): the floor cannot go past its last level, and a
    table without a schedule refuses set_level; neither changes anything."""
    table = TournamentTable(start=3)
    events, refusal = table.try_command("set_level")
    assert events == [] and refusal == "level 4 is not in the schedule (levels 1 to 3) (level 3 is the schedule's last)"
    assert table.level()["level"] == 3
    cash = Table()
    events, refusal = cash.try_command("set_level", level=2)
    assert events == [] and "no [tournament] level schedule" in refusal
    assert cash.controller.snapshot(secure=True)["level"] is None


def test_a_table_without_chips_shows_the_level_and_a_restart_keeps_the_announced_one():
    """DE 5: the announced level waits for the next hand, also across a restart from the checkpoint taken between
    hands (the journal's checkpoint carries it)."""
    table = TournamentTable(chips=False)
    table.deal()
    table.set_level(2)
    table.clear()
    table.run(3.0)
    assert not table.controller.in_hand
    state = table.controller.checkpoint_state()
    restarted = GameController(table.controller.setup, None)
    restarted.restore_checkpoint_state(state)
    assert restarted.snapshot(secure=False)["level"]["next_hand"] == 2
    table.controller = restarted
    table.hole = {}
    table.deal()
    assert table.level()["level"] == 2 and of(table.events, "level_set")[-1].hand == 2


TOURNAMENT_TOML = """
[tournament]
start_level = 1

[[tournament.levels]]
small_blind = 25
big_blind = 50

[[tournament.levels]]
small_blind = 100
big_blind = 50
blinds = 3

[[tournament.levels]]
small_blind = 100
big_blind = 200
ante = 25
big_blind_ante = 200
"""


@pytest.mark.parametrize("text, fragment, nth, key, expected", [
    (TOURNAMENT_TOML, "blinds = 3", 1, "tournament.levels.2.blinds",
     "unknown key (expected one of: small_blind, big_blind, ante, big_blind_ante, minutes)"),
    (TOURNAMENT_TOML.replace("blinds = 3\n", ""), "small_blind = 100\nbig_blind = 50", 1,
     "tournament.levels.2.small_blind", "level 2: the small blind (100) is larger than the big blind (50)"),
    (TOURNAMENT_TOML, "big_blind_ante = 200", 1, "tournament.levels.3.big_blind_ante",
     "level 3: either an ante from every player or a big-blind ante, not both (set one of them to 0)"),
    (TOURNAMENT_TOML.replace("big_blind = 200\nante = 25", "big_blind = 40\nante = 0").replace("blinds = 3\n", "")
     .replace("small_blind = 100\nbig_blind = 50", "small_blind = 50\nbig_blind = 50"), "big_blind = 40", 1,
     "tournament.levels.3.big_blind", "level 3's big blind (40) is lower than level 2's (50): the blinds go up by "
                                      "the schedule (DE 5)"),
    (TOURNAMENT_TOML.replace("start_level = 1", "start_level = 7"), "start_level = 7", 1,
     "tournament.start_level", "expected a level from 1 to 3, got 7"),
    ("\n[tournament]\nstart_level = 1\n", "[tournament]", 1, "tournament.levels",
     "missing or not a list of levels (expected one [[tournament.levels]] table per level, with small_blind and "
     "big_blind)"),
])
def test_check_config_names_the_level_key_and_its_line(tmp_path, capsys, text, fragment, nth, key, expected):
    """Every key of the schedule is checked like the others: the key path (the level's number in it) and its line.
    The chip-less six-max example, its [game] blinds replaced by a schedule."""
    config = SIXMAX.replace("small_blind = 1\nbig_blind = 2\n", "") + text
    path = tmp_path / "table.toml"
    path.write_text(config, encoding="utf-8")
    with pytest.raises(SystemExit) as exc:
        main(["check-config", str(path)])
    assert exc.value.code == 78
    line = line_of(config, fragment)
    assert f"  {path}:{line}: {key}: {expected}" in capsys.readouterr().err.splitlines()


def test_the_game_blinds_beside_a_schedule_are_refused(tmp_path, capsys):
    """At a tournament table the levels set the blinds: [game] blinds beside them are a mistake, named with line."""
    config = SIXMAX + TOURNAMENT_TOML.replace("blinds = 3\n", "").replace("small_blind = 100\nbig_blind = 50",
                                                                          "small_blind = 25\nbig_blind = 50") \
        .replace("ante = 25\n", "")
    path = tmp_path / "table.toml"
    path.write_text(config, encoding="utf-8")
    with pytest.raises(SystemExit):
        main(["check-config", str(path)])
    err = capsys.readouterr().err
    small, big = line_of(config, "small_blind = 1\n"), line_of(config, "big_blind = 2\n")
    assert f"{path}:{small}: game.small_blind: set by the [tournament] levels" in err
    assert f"{path}:{big}: game.big_blind: set by the [tournament] levels" in err


def test_the_shipped_tournament_example_passes_and_plays_its_schedule(capsys):
    """config/table-tournament.toml: the club's schedule (DE 11) on the demo chip set."""
    from rfid_table.config.table import load_config
    path = str(ROOT / "config" / "table-tournament.toml")
    assert main(["check-config", path]) == 0
    assert capsys.readouterr().out.startswith(f"{path}: OK — table 'tourney-1'")
    config = load_config(path)
    controller = GameController(config.table_setup(), config.betting_setup(), config.audit_hands)
    assert controller.snapshot(secure=False)["level"] == {"level": 1, "small_blind": 25, "big_blind": 50, "ante": 0,
                                                         "big_blind_ante": 0, "minutes": 12, "levels": 5,
                                                         "next_hand": None}
