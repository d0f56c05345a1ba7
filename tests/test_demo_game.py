"""``rfid-table demo --game``: the game asked for is the one the demo's table deals, on a table that can deal it;
a game the table cannot deal is refused before anything starts, with the reason."""

from __future__ import annotations

import pytest

from controller.rotation import HORSE
from rfid_table.cli import main
from rfid_table.config.table import EX_CONFIG, load_config
from rfid_table.devtools.demo import demo_table, table_with_games
from rfid_table.package_data import CONFIG_DIR


def test_each_game_is_dealt_on_a_table_that_reads_its_chips(tmp_path):
    def table(games: tuple[str, ...]):
        work = tmp_path / "-".join(games)
        work.mkdir()
        # the copy is read as the demo's simulator reads it, its chip registry beside it
        return load_config(str(table_with_games(demo_table(games), games, work)))

    horse = table(HORSE)
    assert (horse.game.variant, horse.game.rotation) == ("flhe", ("flhe", "razz", "stud", "flo8", "stud8"))
    assert horse.chips is not None and {game.name: game.stakes.bring_in for game in horse.game.games().games
                                        if not game.button} == {"razz": 15, "stud": 15, "stud8": 15}
    stud = table(("stud8",))
    assert (stud.game.variant, stud.game.rotation, stud.chips is not None) == ("stud8", (), True)
    assert (stud.game.ante, stud.game.bring_in, stud.game.small_bet, stud.game.big_bet) == (5, 10, 25, 50)
    mixed = table(("nlhe", "razz"))  # the HORSE table's razz stakes kept, the other stud games' left out
    assert (mixed.game.rotation, mixed.chips is not None) == (("nlhe", "razz"), True)
    plo = table(("plo4",))
    assert (plo.game.variant, plo.game.rotation, plo.chips is not None) == ("plo4", (), True)


@pytest.mark.parametrize("argv, said", [
    (["--game", "razz", "--config", str(CONFIG_DIR / "table-chips.toml")],
     [f"{CONFIG_DIR / 'table-chips.toml'} cannot deal razz:", "zones.seat1: seat 1 has no up-card zone"]),
    (["--game", "stud,omaha"], ["omaha is not a game"]),
])
def test_a_game_the_table_cannot_deal_is_refused_with_the_reason(argv, said, capsys):
    assert main(["demo", *argv]) == EX_CONFIG
    err = capsys.readouterr().err
    assert all(words in err for words in said), err
