"""``rfid-table demo --game``: the game asked for is the one the demo's table deals, on a table that can deal it;
a game the table cannot deal is refused before anything starts, with the reason."""

from __future__ import annotations

import pytest

from controller.rotation import HORSE
from rfid_table.cli import main
from rfid_table.config.table import EX_CONFIG, load_config
from rfid_table.devtools.demo import table_with_games
from rfid_table.package_data import CONFIG_DIR


def test_horse_is_dealt_on_the_stud_table_and_a_flop_game_on_the_chips_table(tmp_path):
    for name in ("horse", "plo"):
        (tmp_path / name).mkdir()
    horse = load_config(str(table_with_games(CONFIG_DIR / "table-stud.toml", HORSE, tmp_path / "horse")))
    assert (horse.game.variant, horse.game.rotation) == ("flhe", ("flhe", "razz", "stud", "flo8", "stud8"))
    # the chips table's registry is named relative to its file: the copy reads it too
    plo = load_config(str(table_with_games(CONFIG_DIR / "table-chips.toml", ("plo4",), tmp_path / "plo")))
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
