"""``rfid-table sim`` deals each stud game on the example stud table (cards only, eight players): through the
readers, the zone tracker and the daemon's pipeline, every hand is read without an irregularity, its bring-in and
its later streets announced, and the public feed never names a down card."""

from __future__ import annotations

import json

import pytest

from rfid_table.config.table import load_config
from rfid_table.devtools.streams import play, play_table
from rfid_table.package_data import CONFIG_DIR


@pytest.mark.parametrize("game", ["stud", "stud8", "razz"])
def test_the_simulator_deals_each_stud_game_and_the_table_reads_it_clean(game):
    recorded = play("table-stud.toml", {"variant": game}, {"seed": 7, "dealer_errors": 0.0, "floor_answer_s": 2.0},
                    3)
    events = [dict(zip(("seq", "type", "t", "hand", "public", "secret"), json.loads(line)))
              for line in recorded.lines]
    kinds = [e["type"] for e in events]
    assert kinds.count("hand_started") == kinds.count("hand_ended") == 3
    assert [e["public"]["game"] for e in events if e["type"] == "hand_started"] == [game] * 3
    assert "irregular_card" not in kinds and "misdeal" not in kinds
    assert kinds.count("bring_in") == 3
    dealt = [e for e in events if e["type"] == "card_dealt"]
    assert all(("card" in e["public"]) == e["public"]["up"] for e in dealt)  # up cards public, down cards secure
    assert all("card" in e["secret"] for e in dealt if not e["public"]["up"])
    assert {e["public"]["street"] for e in dealt} >= {"third", "fourth"}
    # the result a table without chips publishes: the best hand of the cards read (razz: the best low)
    for showdown in (e for e in events if e["type"] == "showdown"):
        assert showdown["public"]["winners"], showdown


def test_the_simulated_dealers_stud_errors_are_each_ruled():
    """The simulated dealer errs as a stud dealer can: a down card of third street dealt up (a misdeal the floor
    confirms, PP Misdeals 1a: the cards are dealt again), the door card dealt down (it plays, turned up), a later
    street's card at the wrong seat, moved on (fixed, PP Misdeals 1e). Each error the dealer made is reported."""
    sink, table = play_table(load_config(CONFIG_DIR / "table-stud.toml"),
                             {"seed": 11, "dealer_errors": 0.8, "floor_answer_s": 1.0}, 12)
    events = [json.loads(line) for line in sink.lines]
    reported = [(hand, public["code"]) for _seq, kind, _t, hand, public, _secret in events if kind == "irregular_card"]
    expected = {"stud: a down card dealt up": "stud_first_cards_up", "stud: the door card dealt down": "stud_up_card_down"}
    made = [(e.hand, expected.get(e.detail, "stud_card_wrong_seat")) for e in table.dealer.errors]
    assert made and reported == made
    misdeals = [hand for _seq, kind, _t, hand, _public, _secret in events if kind == "misdeal"]
    assert misdeals == [hand for hand, code in made if code == "stud_first_cards_up"]
    assert [e[4]["resolution"] for e in events if e[1] == "irregularity_resolved"] == \
        ["fixed"] * sum(code == "stud_card_wrong_seat" for _hand, code in made)


def test_the_simulator_deals_a_horse_rotation_and_the_table_reads_each_game_clean(tmp_path):
    """HORSE on the stud table (TDA 4: the button frozen through the stud round): each hand dealt as its game, the
    stud hands from the dealer's left, and read without an irregularity."""
    text = (CONFIG_DIR / "table-stud.toml").read_text()
    start = text.index('variant = "stud"')
    path = tmp_path / "horse.toml"
    path.write_text(text[:start] + 'rotation = "horse"\nhands_per_game = 1\n' + text[text.index("\n", start) + 1:])
    sink, _table = play_table(load_config(path), {"seed": 3}, 5)
    events = [json.loads(line) for line in sink.lines]
    assert [e[4]["game"] for e in events if e[1] == "hand_started"] == ["flhe", "razz", "stud", "flo8", "stud8"]
    assert [e for e in events if e[1] in ("irregular_card", "misdeal")] == []
    assert all(e[4]["winners"] for e in events if e[1] == "showdown")


def test_eight_players_who_all_stay_run_the_deck_short_and_share_the_community_card():
    recorded = play("table-stud.toml", {"variant": "stud"}, {"seed": 2, "dealer_errors": 0.0, "fold_chance": 0.0}, 1)
    events = [json.loads(line) for line in recorded.lines]
    [short] = [e[4] for e in events if e[1] == "irregular_card"]
    assert (short["code"], short["live_seats"]) == ("deck_short", list(range(1, 9)))
    [community] = [e[4] for e in events if e[1] == "board_card"]
    assert community["street"] == "seventh"
    [ended] = [e[4] for e in events if e[1] == "hand_ended"]
    assert ended["board"] == [community["card"]] and ended["live_seats"] == list(range(1, 9))
    assert [e[4]["winners"] for e in events if e[1] == "showdown"] != [[]]


@pytest.mark.parametrize("game", ["stud", "stud8", "razz"])
def test_the_simulator_plays_each_stud_game_with_chips_and_the_table_reads_the_betting_clean(game):
    """``rfid-table sim --config config/table-stud-chips.toml``: eight players ante into the pot, bring it in or
    complete, bet, raise, call and fold with the table's chips, the dealer collecting before each burn (and turning a
    community card when the deck runs short). Every hand is read without a bet ruling or a chip count, and the
    stacks the table's showdown finishes with are those the simulated players hold."""
    import dataclasses  # noqa: PLC0415

    config = load_config(CONFIG_DIR / "table-stud-chips.toml")
    sink, table = play_table(dataclasses.replace(config, game=dataclasses.replace(config.game, variant=game)),
                             {"seed": 7}, 4)
    events = [dict(zip(("seq", "type", "t", "hand", "public", "secret"), json.loads(line))) for line in sink.lines]
    kinds = [e["type"] for e in events]
    assert kinds.count("hand_ended") == kinds.count("showdown") == kinds.count("hand_history") == 4
    assert "bet_ruling" not in kinds and "chip_count" not in kinds
    assert {e["public"]["code"] for e in events if e["type"] == "irregular_card"} <= {"deck_short"}
    started = [e["public"] for e in events if e["type"] == "betting_started"]
    assert {(s["ante"], s["bring_in"], s["small_bet"], s["big_bet"]) for s in started} == {(5, 10, 25, 50)}
    assert {e["public"]["action"] for e in events if e["type"] == "action"} >= {"ante", "bring_in", "call", "fold"}
    last = [e["public"] for e in events if e["type"] == "showdown"][-1]
    assert {int(s): v for s, v in last["finishing_stacks"].items()} == table.dealer.stacks


def test_a_stud_chip_table_restarted_on_fifth_street_continues_the_betting_from_its_journal(tmp_path):
    """The daemon restarted mid-hand replays its journal's inputs: the stud betting is where it was (the streets
    opened by the cards, the bring-in and the bets read from the chips), and replaying makes the journaled events."""
    import dataclasses  # noqa: PLC0415

    from controller.game import GameController  # noqa: PLC0415
    from rfid_table.config.table import load_config  # noqa: PLC0415
    from rfid_table.devtools.simulate import SimOptions, SimulatedTable  # noqa: PLC0415
    from rfid_table.devtools.streams import CONFIG_DIR, Recorder  # noqa: PLC0415
    from rfid_table.service.journal import Journal  # noqa: PLC0415
    from rfid_table.service.replay import replay  # noqa: PLC0415

    config = dataclasses.replace(load_config(CONFIG_DIR / "table-stud-chips.toml"), broadcast_equity=False)
    sink = Recorder()
    with Journal(tmp_path / "journal.db") as journal:
        table = SimulatedTable(config, SimOptions(hands=1, speed=0, pace_s=0.5, link="direct", seed=7), sink, journal)
        t = 1000.0
        try:
            while table.advance(t) and not (sink.lines and '"action"' in sink.lines[-1]
                                            and '"fifth"' in sink.lines[-1]):
                table.step(t, wall=1_790_000_000.0 + t)
                t = round(t + table.cycle_s, 6)
            before = table.pipeline.controller.snapshot(secure=True)
        finally:
            table.close()
        assert before["betting"]["street"] == "fifth" and before["betting"]["to_act"] is not None
        restored = GameController(config.table_setup(), config.betting_setup(), config.audit_hands)
        assert replay(journal, restored).mismatches == []
    assert restored.snapshot(secure=True) == before
