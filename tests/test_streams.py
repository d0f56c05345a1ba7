"""The seeded streams that show a change left the table's behaviour alone (rfid_table.devtools.streams): the same
code writes the same bytes, and a scenario covers what it says (dealer errors and the floor's answers)."""

from rfid_table.devtools.streams import main


def test_the_same_code_writes_the_same_streams_byte_for_byte(tmp_path):
    for run in ("a", "b"):
        assert main(["--out", str(tmp_path / run), "--hands", "3", "--only", "table-chips-tda-e0.3-s1"]) == 0
    first, second = (tmp_path / "a" / "table-chips-tda-e0.3-s1.jsonl"), (tmp_path / "b" / "table-chips-tda-e0.3-s1.jsonl")
    assert first.read_bytes() == second.read_bytes()
    assert (tmp_path / "a" / "digest.txt").read_text() == (tmp_path / "b" / "digest.txt").read_text()
    text = first.read_text()
    assert '"action"' in text and '"hand_ended"' in text and '"floor_ruling"' in text
