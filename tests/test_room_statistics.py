"""The room's store and players' statistics against hands worked out by hand.

Three hands between three players (blinds 50/100), each written as the table's hand_history event carries it
(Open Hand History), stored in a real PostgreSQL; the statistics follow the trackers' definitions (docs/room.md):
VPIP and PFR over the hands with a preflop decision (a walk has none), the aggression factor postflop
(bets + raises) / calls, WTSD over the hands that saw the flop, won at showdown over the showdowns.
"""

from __future__ import annotations

import time

import pytest

pytest.importorskip("psycopg", reason="psycopg 3 is not installed (pip install psycopg)")

from rfid_table.room.records import BadEvent, hand_from_event, seating_from_event
from rfid_table.room.store import Store
from tests.postgres_fixture import postgres, room_db  # noqa: F401  (fixtures)

DAY = 86_400
NOW = time.time()


def history(hand: int, seq: int, t: float, stacks: dict[int, int], rounds: list, pots: list) -> dict:
    """A hand_history event's secure payload with its OHH object. ``rounds``: (street, board cards, actions as
    (seat, action, amount)); ``pots``: (amount, {seat: won})."""
    ids = {seat: i for i, seat in enumerate(sorted(stacks))}
    number = 0
    out_rounds = []
    for i, (street, cards, actions) in enumerate(rounds):
        acts = []
        for seat, action, amount in actions:
            number += 1
            acts.append({"action_number": number, "player_id": ids[seat], "action": action,
                         **({"amount": amount, "is_allin": False} if amount else {})})
        out_rounds.append({"id": i, "street": street, **({"cards": cards} if cards else {}), "actions": acts})
    ohh = {"spec_version": "1.4.6", "game_number": f"99{hand:011d}", "table_name": "main-1", "game_type": "Holdem",
           "bet_limit": {"bet_type": "NL", "bet_cap": 0}, "table_size": 10, "currency": "Chips", "dealer_seat": 3,
           "small_blind_amount": 50, "big_blind_amount": 100, "ante_amount": 0,
           "players": [{"id": ids[s], "seat": s, "name": f"seat{s}", "display": f"Seat {s}", "starting_stack": st}
                       for s, st in sorted(stacks.items())],
           "rounds": out_rounds,
           "pots": [{"number": n, "amount": amount, "rake": 0,
                     "player_wins": [{"player_id": ids[s], "win_amount": w, "contributed_rake": 0}
                                     for s, w in wins.items()]} for n, (amount, wins) in enumerate(pots)]}
    return {"seq": seq, "type": "hand_history", "t": t, "hand": hand, "epoch": "e1", "format": "phh",
            "ohh_complete": {"ohh": ohh}, "pokerstars_complete": "PokerStars Hand #...", "phh_complete": None}


STACKS = {1: 10_000, 2: 10_000, 3: 10_000}
FLOP, TURN, RIVER = ["Ah", "7c", "2d"], ["9s"], ["Kd"]

# Hand 1 (two days ago; seat 1 small blind, seat 2 big blind): seat 3 raises to 300, seat 1 folds, seat 2 calls;
# flop: seat 2 checks, seat 3 bets 400, seat 2 calls; turn: both check; river: seat 2 bets 500, seat 3 folds
# (the 500 goes back to seat 2, uncalled). Seat 2 wins 1450.
HAND_1 = history(1, 20, NOW - 2 * DAY, STACKS, [
    ("Preflop", None, [(1, "Post SB", 50), (2, "Post BB", 100), (1, "Dealt Cards", 0), (2, "Dealt Cards", 0),
                       (3, "Dealt Cards", 0), (3, "Raise", 300), (1, "Fold", 0), (2, "Call", 200)]),
    ("Flop", FLOP, [(2, "Check", 0), (3, "Bet", 400), (2, "Call", 400)]),
    ("Turn", TURN, [(2, "Check", 0), (3, "Check", 0)]),
    ("River", RIVER, [(2, "Bet", 500), (3, "Fold", 0)]),
], [(1450, {2: 1450})])

# Hand 2 (today; seat 2 small blind, seat 3 big blind): seat 1 calls, seat 2 folds, seat 3 checks; flop: seat 3
# bets 100, seat 1 raises to 400, seat 3 calls 300 more; turn and river checked; seat 1 wins the showdown.
HAND_2 = history(2, 50, NOW - 60, STACKS, [
    ("Preflop", None, [(2, "Post SB", 50), (3, "Post BB", 100), (1, "Dealt Cards", 0), (2, "Dealt Cards", 0),
                       (3, "Dealt Cards", 0), (1, "Call", 100), (2, "Fold", 0), (3, "Check", 0)]),
    ("Flop", FLOP, [(3, "Bet", 100), (1, "Raise", 400), (3, "Call", 300)]),
    ("Turn", TURN, [(3, "Check", 0), (1, "Check", 0)]),
    ("River", RIVER, [(3, "Check", 0), (1, "Check", 0)]),
    ("Showdown", None, [(3, "Shows Cards", 0), (1, "Shows Cards", 0)]),
], [(1050, {1: 1050})])

# Hand 3 (today; seat 3 small blind, seat 1 big blind): seats 2 and 3 fold, a walk for seat 1 (its 100 less the
# small blind's 50 goes back uncalled).
HAND_3 = history(3, 80, NOW - 30, STACKS, [
    ("Preflop", None, [(3, "Post SB", 50), (1, "Post BB", 100), (1, "Dealt Cards", 0), (2, "Dealt Cards", 0),
                       (3, "Dealt Cards", 0), (2, "Fold", 0), (3, "Fold", 0)]),
], [(100, {1: 100})])


def seated(seq: int, seat: int, player_id: str | None, t: float = NOW - 3 * DAY) -> dict:
    kind = "player_seated" if player_id else "seat_cleared"
    return {"seq": seq, "type": kind, "t": t, "hand": None, "epoch": "e1", "seat": seat,
            **({"name": player_id.upper(), "player_id": player_id} if player_id else {"name": "x"})}


# Players a, b, c at seats 1, 2, 3; before hand 3, player c stands up and sits down again: a new session.
SEATINGS = [seated(1, 1, "p-a"), seated(2, 2, "p-b"), seated(3, 3, "p-c"), seated(60, 3, None),
            seated(61, 3, "p-c")]


@pytest.fixture
def store(room_db):
    with Store(room_db) as store:
        store.migrate()
        yield store


def stored(store: Store) -> None:
    # hands before the seatings, in no order: a hand's players are found by seq whatever came first
    for event in (HAND_3, HAND_1, HAND_2):
        assert store.store_hand(hand_from_event("main-1", event))
    for event in reversed(SEATINGS):
        store.store_seating(seating_from_event("main-1", event))


def test_statistics_of_three_hands_worked_out_by_hand(store):
    stored(store)
    stats = store.statistics()
    assert stats["p-a"]["all"] == {"hands": 3, "vpip_pct": 50.0, "pfr_pct": 0.0, "aggression_factor": None,
                                   "wtsd_pct": 100.0, "wsd_pct": 100.0, "net": 550}
    assert stats["p-b"]["all"] == {"hands": 3, "vpip_pct": 33.3, "pfr_pct": 0.0, "aggression_factor": 1.0,
                                   "wtsd_pct": 0.0, "wsd_pct": None, "net": 700}
    assert stats["p-c"]["all"] == {"hands": 3, "vpip_pct": 33.3, "pfr_pct": 33.3, "aggression_factor": 2.0,
                                   "wtsd_pct": 50.0, "wsd_pct": 0.0, "net": -1250}
    # today: hands 2 and 3
    assert stats["p-a"]["day"]["hands"] == 2 and stats["p-a"]["day"]["net"] == 600
    assert stats["p-c"]["day"]["net"] == -550
    # player c's latest session began with its second seating: hand 3 only
    assert stats["p-c"]["session"] == {"hands": 1, "vpip_pct": 0.0, "pfr_pct": 0.0, "aggression_factor": None,
                                       "wtsd_pct": None, "wsd_pct": None, "net": -50, "table": "main-1"}
    assert stats["p-a"]["session"]["hands"] == 3
    # the stacks after each one's latest hand (hand 3: a walk for seat 1, seat 3's small blind lost)
    assert {player: stats[player]["chips"] for player in stats} == {"p-a": 10_050, "p-b": 10_000, "p-c": 9_950}


def test_a_database_of_the_first_version_gives_the_same_statistics_after_migration_003(room_db):
    """003 finds a player's hands from the player's seatings; 002 worked out every hand's player: the same rows."""
    from rfid_table.room.store import migrations  # noqa: PLC0415

    with Store(room_db) as store:
        with store.db.transaction():  # the room as 002 left it, with its hands
            store.db.execute("CREATE TABLE schema_migrations (number integer PRIMARY KEY, name text NOT NULL, "
                             "applied_at timestamptz NOT NULL DEFAULT now())")
            for number, name, sql in migrations()[:2]:
                store.db.execute(sql)
                store.db.execute("INSERT INTO schema_migrations (number, name) VALUES (%s, %s)", (number, name))
        stored(store)
        query = "SELECT * FROM player_statistics ORDER BY scope, player_id, day, session_seq"
        before = store.db.execute(query).fetchall()
        assert store.migrate() == ["003_statistics_by_player.sql"]
        assert store.db.execute(query).fetchall() == before and len(before) == 3 + 6 + 4  # all, 2 days each, sessions


def test_a_hand_delivered_twice_is_stored_once(store):
    assert store.store_hand(hand_from_event("main-1", HAND_1))
    assert not store.store_hand(hand_from_event("main-1", HAND_1))
    assert not store.store_hand(hand_from_event("main-1", {**HAND_1, "replay": True}))
    assert store.hand_count() == 1
    counts = store.conn.execute("SELECT (SELECT count(*) FROM actions) AS a, (SELECT count(*) FROM hand_players) AS p,"
                                " (SELECT count(*) FROM cards) AS c").fetchone()
    assert counts == {"a": 15, "p": 3, "c": 5}


def test_migrations_are_recorded_and_applied_once(store):
    assert store.applied() == ["001_hands.sql", "002_statistics.sql", "003_statistics_by_player.sql"]
    assert store.migrate() == []


def test_a_history_without_the_secure_copy_is_refused_with_what_is_missing():
    public = {k: v for k, v in HAND_1.items() if k != "ohh_complete"}
    with pytest.raises(BadEvent, match=r"table main-1, hand_history seq 20: no 'ohh_complete'"):
        hand_from_event("main-1", public)
    broken = {**HAND_1, "ohh_complete": {"ohh": {**HAND_1["ohh_complete"]["ohh"], "pots": [{"number": 0,
              "amount": 999, "player_wins": []}]}}}
    with pytest.raises(BadEvent, match=r"the pots \(999\) are not what the players put in \(1450\)"):
        hand_from_event("main-1", broken)
