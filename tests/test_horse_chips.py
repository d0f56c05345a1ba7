"""A HORSE table that reads its chips (config/table-horse-chips.toml): ``rfid-table sim`` deals each game of the
rotation at its own stakes, and the table reads every hand's betting from the chips: the flop games' blinds, the
stud games' antes, bring-in and bets, the button frozen through the stud round (TDA 4)."""

from __future__ import annotations

import dataclasses
import json

from controller.game import GameController
from rfid_table.config.table import load_config
from rfid_table.devtools.streams import Recorder, play_table
from rfid_table.package_data import CONFIG_DIR

HORSE_TWICE_EACH = ["flhe", "flhe", "razz", "razz", "stud", "stud", "flo8", "flo8", "stud8", "stud8"]


def test_a_horse_rotation_is_read_from_the_chips_each_game_at_its_stakes():
    config = load_config(CONFIG_DIR / "table-horse-chips.toml")
    config = dataclasses.replace(config, game=dataclasses.replace(config.game, hands_per_game=2))
    sink, table = play_table(config, {"seed": 3, "players": 6}, 10)

    events = [dict(zip(("seq", "type", "t", "hand", "public", "secret"), json.loads(line))) for line in sink.lines]
    kinds = [e["type"] for e in events]
    assert kinds.count("hand_ended") == kinds.count("hand_history") == 10
    assert "bet_ruling" not in kinds and "chip_count" not in kinds and "betting_unread" not in kinds
    games = {e["hand"]: e["public"]["game"] for e in events if e["type"] == "hand_started"}
    assert list(games.values()) == HORSE_TWICE_EACH
    started = {e["hand"]: e["public"] for e in events if e["type"] == "betting_started"}
    for hand, game in games.items():
        forced = {(e["public"]["action"], e["public"]["added"]) for e in events
                  if e["hand"] == hand and e["type"] == "action" and e["public"]["action"] in (
                      "ante", "post_sb", "post_bb", "bring_in")}
        if game in ("flhe", "flo8"):
            assert forced == {("post_sb", 25), ("post_bb", 50)}, (hand, game)
            assert (started[hand]["small_blind"], started[hand]["big_blind"]) == (25, 50)
        else:
            assert ("ante", 10) in forced and {a for a, _ in forced} <= {"ante", "bring_in"}, (hand, game)
            assert (started[hand]["ante"], started[hand]["bring_in"], started[hand]["small_bet"],
                    started[hand]["big_bet"]) == (10, 15, 50, 100)
    # TDA 4: the button moves after each flop hand, then stays through the stud round: Omaha hi-lo's first hand
    # has the button next after limit hold'em's last
    flop_buttons = [started[hand]["button"] for hand, game in games.items() if game in ("flhe", "flo8")]
    assert flop_buttons == [1, 2, 3, 4]
    last = [e["public"] for e in events if e["type"] == "showdown"][-1]
    assert {int(s): v for s, v in last["finishing_stacks"].items()} == table.dealer.stacks


class LateSubscriber(Recorder):
    """What a subscriber that joins while a hand is bet reads first: the retained public snapshot, one per hand (the
    first published once the hand's betting has begun)."""

    def __init__(self) -> None:
        super().__init__()
        self.joined: dict[int, dict] = {}

    def publish_snapshots(self, public_snapshot, secure_snapshot) -> None:
        super().publish_snapshots(public_snapshot, secure_snapshot)
        hand = public_snapshot["hand"]
        if public_snapshot.get("betting") and hand not in self.joined:
            self.joined[hand] = public_snapshot


def test_a_subscriber_joining_mid_hand_reads_the_stakes_in_play_from_the_snapshot():
    """The stakes of config/table-horse-chips.toml: limit hold'em at blinds of 25 and 50, razz at an ante of 10, a
    bring-in of 15 and bets of 50 and 100."""
    from test_schemas import problems  # noqa: PLC0415 (the contract's validators)

    config = load_config(CONFIG_DIR / "table-horse-chips.toml")
    config = dataclasses.replace(config, game=dataclasses.replace(config.game, hands_per_game=1))
    late, _table = play_table(config, {"seed": 3, "players": 6}, 2, LateSubscriber())
    holdem, razz = late.joined[1], late.joined[2]
    assert (holdem["game"], holdem["phase"]) == ("flhe", "preflop")
    assert holdem["stakes"] == {"small_blind": 25, "big_blind": 50, "ante": 0, "big_blind_ante": 0}
    assert (razz["game"], razz["phase"]) == ("razz", "third")
    assert razz["stakes"] == {"ante": 10, "bring_in": 15, "small_bet": 50, "big_bet": 100}
    for snapshot in (holdem, razz):
        assert not problems("snapshot.public.schema.json", {**snapshot, "epoch": "horse"})  # (as the broker has it)


def test_a_table_that_deals_one_game_without_chips_shows_its_configured_stakes():
    """config/table-10.toml: no-limit hold'em at blinds of 50 and 100, the cards read, not the chips."""
    config = load_config(CONFIG_DIR / "table-10.toml")
    controller = GameController(config.table_setup(), config.betting_setup(), config.audit_hands)
    assert controller.betting is None
    assert controller.snapshot(secure=False)["stakes"] == {"small_blind": 50, "big_blind": 100, "ante": 0,
                                                           "big_blind_ante": 0}
