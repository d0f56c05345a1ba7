"""The simulated players of a chip table: plausible by default (most hands folded before the flop, a raise or two a
hand, all-ins rare), at random for stress runs as before, the same hands for the same seed; and the stacks a floor
enters at the table are what the simulated players hold from then on (sim/players.py, sim/betting_dealer.py)."""

import random

import pytest

from conftest import ListSink
from controller.betting import BettingHand
from rfid_table.config.table import ENGINE_VARIANTS, load_config
from rfid_table.devtools.simulate import SimOptions, SimulatedTable
from sim.betting_dealer import TABLE_CLEAR, BettingDealer
from sim.field import TableField
from sim.handgen import play_randomly
from sim.players import chen_points, figures
from test_watch import CHIP_TABLE

CONFIG = load_config(CHIP_TABLE)


def dealer(seed: int, players: int = 10, variant: str = "nlhe", **options) -> BettingDealer:
    game = CONFIG.game
    return BettingDealer(TableField(CONFIG.zones), CONFIG.decks[CONFIG.active_deck], CONFIG.chips.chips,
                         list(range(1, players + 1)), variant=ENGINE_VARIANTS[variant],
                         blinds=(game.small_blind, game.big_blind), ante=game.ante, command=lambda body: None,
                         seed=seed, **options)


def hands_played(table: BettingDealer, count: int, apply: bool = False) -> list[BettingHand]:
    played = []
    for move in table.hands(count):
        if apply:
            move.apply()
        if move.describe == TABLE_CLEAR:
            played.append(table.last_hand)
    return played


def test_the_chart_ranks_starting_hands_as_chen_does():
    assert chen_points("As", "Ad") == 20 and chen_points("Ks", "Kd") == 16 and chen_points("As", "Ks") == 12
    assert chen_points("Ah", "Kd") == 10 and chen_points("Th", "9h") == 8 and chen_points("2c", "2d") == 5
    assert chen_points("7s", "2d") == -1 and chen_points("Jh", "5c") == 1  # what went all-in before


def test_by_default_the_players_play_like_a_live_low_stakes_game():
    """500 hands of the demo's table (ten players, 50/100, 100 big blinds): what a card-room manager watching sees."""
    seen = figures(hands_played(dealer(seed=1), 500))
    assert seen["won_preflop_pct"] + seen["two_to_flop_pct"] >= 50  # most hands: all but one or two fold
    assert 18 <= seen["vpip_pct"] <= 32 and 8 <= seen["pfr_pct"] <= 18
    assert seen["all_ins_per_100"] <= 8
    assert 1.5 <= seen["players_per_flop"] <= 3 and seen["showdown_pct"] <= 40


def test_random_players_stay_the_stress_run_they_were():
    seen = figures(hands_played(dealer(seed=1, players_style="random"), 200))
    assert seen["all_ins_per_100"] > 300 and seen["showdown_pct"] > 90


@pytest.mark.parametrize("seed", range(5))
def test_random_players_decide_first_from_the_dealers_generator_as_before(seed):
    """The random style draws from the dealer's generator first, before the deck is shuffled, as it always did: a
    seed plays the same hands as before (rfid_table.devtools.streams compares whole runs)."""
    game = CONFIG.game
    table = dealer(seed, players_style="random")
    (first,) = hands_played(table, 1)
    again = BettingHand(first.variant, table.players, first.button, {s: table.buy_in for s in table.players},
                        (game.small_blind, game.big_blind), ante=game.ante)
    play_randomly(again, random.Random(seed), table.unit)
    assert again.actions == first.actions


@pytest.mark.parametrize("style", ["plausible", "random"])
def test_a_seed_plays_the_same_hands(style):
    first, again, other = (hands_played(dealer(seed, players_style=style), 40) for seed in (3, 3, 4))
    assert [h.actions for h in first] == [h.actions for h in again]
    assert [h.actions for h in first] != [h.actions for h in other]


@pytest.mark.slow
@pytest.mark.parametrize(("variant", "players"), [("plhe", 10), ("flhe", 10), ("plo4", 10), ("plo5", 6), ("plo6", 6),
                                                  ("plo7", 5)])
def test_plausible_players_play_every_variant_legally(variant, players):
    played = hands_played(dealer(seed=2, players=players, variant=variant), 120, apply=True)
    assert len(played) == 120 and figures(played)["won_preflop_pct"] < 60


def test_stacks_a_floor_enters_are_what_the_simulated_players_hold_from_then_on():
    """The floor counts seat 3 while a hand is played: the table keeps the count over that hand's result, and the
    simulated floor enters it at the next hand instead of what its player had."""
    sink = ListSink()
    table = SimulatedTable(CONFIG, SimOptions(hands=3, seed=3, speed=0, pace_s=0.5, link="direct", players=4), sink)
    counted = False
    t = 1000.0
    try:
        while table.advance(t) and t < 1400:
            table.step(t)
            if not counted and any(e.type == "action" for e in sink.events):
                table.pipeline.submit({"command": "set_stacks", "stacks": {"3": 12_345}, "role": "floor",
                                       "user": "anna"})
                counted = True
            t = round(t + table.cycle_s, 6)
    finally:
        table.close()
    entered = [(e.hand, e.public["by"], e.public["stacks"].get("3")) for e in sink.events if e.type == "stacks_set"]
    assert entered[:3] == [(None, "floor/simulator", 10_000), (1, "floor/anna", 12_345),
                           (1, "floor/simulator", 12_345)], entered
    started = [e.public["stacks"] for e in sink.events if e.type == "betting_started"]
    assert started[1]["3"] == 12_345
    assert not [e for e in sink.events if e.type in ("bet_ruling", "chip_count")]
