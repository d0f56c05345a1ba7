"""``rfid-table sim`` deals each stud game on the example stud table (cards only, eight players): through the
readers, the zone tracker and the daemon's pipeline, every hand is read without an irregularity, its bring-in and
its later streets announced, and the public feed never names a down card."""

from __future__ import annotations

import json

import pytest

from rfid_table.devtools.streams import play


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
