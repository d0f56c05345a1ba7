"""The seeded streams that show a change left the table's behaviour alone (rfid_table.devtools.streams): the same
code writes the same bytes, and a scenario covers what it says (dealer errors and the floor's answers, HORSE's games
and button)."""

import json

from rfid_table.devtools.streams import main


def test_the_same_code_writes_the_same_streams_byte_for_byte(tmp_path):
    for run in ("a", "b"):
        assert main(["--out", str(tmp_path / run), "--hands", "3", "--only", "table-chips-tda-e0.3-s1"]) == 0
    first, second = (tmp_path / "a" / "table-chips-tda-e0.3-s1.jsonl"), (tmp_path / "b" / "table-chips-tda-e0.3-s1.jsonl")
    assert first.read_bytes() == second.read_bytes()
    assert (tmp_path / "a" / "digest.txt").read_text() == (tmp_path / "b" / "digest.txt").read_text()
    text = first.read_text()
    assert '"action"' in text and '"hand_ended"' in text and '"floor_ruling"' in text


def test_the_horse_stream_goes_through_every_game_and_the_frozen_button(tmp_path):
    assert main(["--out", str(tmp_path), "--only", "table-horse-chips"]) == 0
    events = [json.loads(line) for line in (tmp_path / "table-horse-chips-s1.jsonl").read_text().splitlines()[:-1]]
    games = [public["game"] for _seq, kind, _t, _hand, public, _secret in events if kind == "hand_started"]
    assert games == ["flhe", "flhe", "razz", "razz", "stud", "stud", "flo8", "flo8", "stud8", "stud8", "flhe", "flhe"]
    buttons = [public["button"] for _seq, kind, _t, _hand, public, _secret in events if kind == "betting_started"]
    flop_buttons = [button for game, button in zip(games, buttons) if game in ("flhe", "flo8")]
    assert flop_buttons == [1, 2, 3, 4, 5, 6]  # TDA 4: the button stays where it is through each stud round
