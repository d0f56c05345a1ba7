"""A stud table's configuration: the up-card antenna of every seat, the board only where the deck can run short, and
eight players at most; check-config names what is missing, with the key and its line."""

from pathlib import Path

import pytest

from rfid_table.cli import main
from rfid_table.config.table import load_config

CONFIG = Path(__file__).resolve().parents[1] / "config"
STUD = (CONFIG / "table-stud.toml").read_text(encoding="utf-8")


def check_config_fails(text: str, tmp_path: Path, capsys) -> list[str]:
    path = tmp_path / "table.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SystemExit) as exc:
        main(["check-config", str(path)])
    assert exc.value.code == 78
    return capsys.readouterr().err.splitlines()[1:]


def line_of(text: str, fragment: str) -> int:
    return text[: text.index(fragment)].count("\n") + 1


def test_the_example_stud_table_deals_seven_cards_to_at_most_eight_players():
    config = load_config(CONFIG / "table-stud.toml")
    assert (config.game.variant, config.game.hole_cards, config.game.max_players) == ("stud", 7, 8)
    assert config.table_setup().variant == "stud"
    assert all(f"seat{seat}.up" in config.zones for seat in range(1, 9))


def test_a_seat_without_its_up_card_antenna_and_a_missing_board_are_named(tmp_path, capsys):
    text = "\n".join(line for line in STUD.splitlines() if not line.startswith(("seat3.up", "board =")))
    problems = check_config_fails(text, tmp_path, capsys)
    assert problems == [
        f"  {tmp_path}/table.toml:{line_of(text, 'seat3.cards')}: zones.seat3: seat 3 has no up-card zone: stud deals "
        "cards face up (add seat3.up = { reader = \"NAME\", antenna = N })",
        f"  {tmp_path}/table.toml:{line_of(text, '[zones]')}: zones.board: missing: with 8 players the deck can run "
        "short on seventh street (8 × 7 cards and 5 burns), and the community card is dealt on the board (add board = "
        "{ reader = \"NAME\", antenna = N }, or set [game] max_players = 6)"]


def test_six_players_at_razz_need_no_board(tmp_path, capsys):
    text = STUD.replace('variant = "stud"', 'variant = "razz"').replace("ante = 1 ", "max_players = 6\nante = 1 ")
    text = "\n".join(line for line in text.splitlines() if not line.startswith("board ="))
    path = tmp_path / "table.toml"
    path.write_text(text, encoding="utf-8")
    assert load_config(path).game.max_players == 6


def test_nine_players_and_a_double_board_are_refused(tmp_path, capsys):
    text = STUD.replace("ante = 1 ", "max_players = 9\ndouble_board = true\nante = 1 ")
    problems = check_config_fails(text, tmp_path, capsys)
    assert [p.split(": ", 2)[1:] for p in problems] == [
        ["game.double_board", "stud is a stud game: it has no board to double (set double_board = false)"],
        ["game.max_players", "expected players from 2 to 8 (a stud game deals seven cards to each: at most 8 players "
                             "at stud), got 9"]]


STUD_CHIPS = (CONFIG / "table-stud-chips.toml").read_text(encoding="utf-8").replace(
    'registry = "chips-demo.toml"', f'registry = "{CONFIG / "chips-demo.toml"}"')  # (read from a copy elsewhere)


def test_the_example_stud_chip_table_reads_the_antes_the_bring_in_and_the_two_bets():
    config = load_config(CONFIG / "table-stud-chips.toml")
    setup = config.betting_setup()
    assert (setup.variant, setup.ante, setup.bring_in, setup.bet_limits) == ("STUD", 5, 10, (25, 50))
    assert (setup.small_blind, setup.big_blind) == (0, 0)  # no blinds in stud


def test_a_stud_chip_table_without_its_stakes_or_with_blinds_is_refused_naming_each_key(tmp_path, capsys):
    text = STUD_CHIPS.replace("bring_in = 10 ", "small_blind = 5\nbring_in = 25 ").replace("big_bet = 50 ", "")
    problems = check_config_fails(text, tmp_path, capsys)
    assert problems == [
        f"  {tmp_path}/table.toml:{line_of(text, 'small_blind')}: game.small_blind: stud has no blinds: antes, a "
        "bring-in, a small bet and a big bet (ante, bring_in, small_bet, big_bet)",
        f"  {tmp_path}/table.toml:{line_of(text, '[game]')}: game: a stud table with [chips] needs its stakes: missing "
        "big_bet (e.g. ante = 1, bring_in = 2, small_bet = 5, big_bet = 10)"]
    text = STUD_CHIPS.replace("bring_in = 10 ", "bring_in = 25 ").replace("variant = \"stud\"", "variant = \"razz\"")
    assert check_config_fails(text, tmp_path, capsys) == [
        f"  {tmp_path}/table.toml:{line_of(text, 'bring_in')}: game.bring_in: the bring-in (25) must be less than the "
        "small bet (25): a bring-in of a full bet is the completion"]


def test_a_stud_stake_at_a_flop_game_is_refused(tmp_path, capsys):
    chips = (CONFIG / "table-chips.toml").read_text(encoding="utf-8").replace("ante = 0 ", "bring_in = 10\nante = 0 ")
    problems = check_config_fails(chips.replace('registry = "chips-demo.toml"',
                                                f'registry = "{CONFIG / "chips-demo.toml"}"'), tmp_path, capsys)
    assert [p.split(": ", 2)[1:] for p in problems] == [
        ["game.bring_in", "a stud game's stake: nlhe has blinds (remove it, or set variant = \"stud\", \"stud8\" or "
                          "\"razz\")"]]


def test_the_stud_example_of_docs_chips_md_is_the_example_tables():
    import re  # noqa: PLC0415
    import tomllib  # noqa: PLC0415

    doc = (CONFIG.parent / "docs" / "chips.md").read_text(encoding="utf-8")
    section = doc[doc.index("## Stud: Seven Card Stud"):]
    example = tomllib.loads(re.search(r"```toml\n(.*?)```", section, re.S).group(1))
    table = tomllib.loads(STUD_CHIPS)
    assert example["game"] == {key: table["game"][key] for key in example["game"]}
    assert example["chips"] == {"registry": "chips-demo.toml", "active_set": table["chips"]["active_set"]}
