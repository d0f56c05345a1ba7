"""The room's PostgreSQL store (psycopg 3): its migrations, one transaction per hand, the statistics' queries.

Migrations are the numbered SQL files of ``rfid_table/room/migrations/`` (``001_hands.sql``, ...), applied in
order, each in its own transaction with a row in ``schema_migrations``; a file applied before is never applied
again. Several room instances may start at once: an advisory lock lets one migrate while the others wait.

Every write is idempotent: a hand is keyed by (table, epoch, hand number), a seating by (table, epoch, seq), a
hand's start by (table, epoch, hand); a copy delivered again is skipped by ``ON CONFLICT DO NOTHING``.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from importlib import resources
from typing import Any, Iterator

import psycopg
from psycopg.rows import dict_row

from rfid_table.room.records import HandStart, Seating, StoredHand

MIGRATION_LOCK = 0x726F6F6D  # "room": the advisory lock held while migrating

STAT_COLUMNS = ("hands", "vpip_pct", "pfr_pct", "aggression_factor", "wtsd_pct", "wsd_pct", "net")


def migrations() -> list[tuple[int, str, str]]:
    """(number, file name, SQL) of every migration shipped with the package, in order."""
    found = []
    for entry in resources.files("rfid_table.room.migrations").iterdir():
        name = entry.name
        if name.endswith(".sql") and name[:3].isdigit():
            found.append((int(name[:3]), name, entry.read_text(encoding="utf-8")))
    return sorted(found)


def _stamp(t: float) -> datetime:
    return datetime.fromtimestamp(t, timezone.utc)


class Store:
    """One connection to the room's database. ``time_zone`` is the room's: a day of the statistics is a day there."""

    def __init__(self, dsn: str, time_zone: str = "UTC", connect_timeout_s: int = 5):
        self.dsn = dsn
        self.time_zone = time_zone
        self.connect_timeout_s = connect_timeout_s
        self.conn: psycopg.Connection[dict[str, Any]] | None = None

    def connect(self) -> "Store":
        self.close()
        # autocommit: each transaction() block is a transaction of its own, and a read holds none open
        self.conn = psycopg.connect(self.dsn, autocommit=True, connect_timeout=self.connect_timeout_s, row_factory=dict_row,
                                    options=f"-c TimeZone={self.time_zone}")
        return self

    @property
    def db(self) -> psycopg.Connection[dict[str, Any]]:
        """The open connection (an OperationalError when there is none: the service then connects again)."""
        if self.conn is None:
            raise psycopg.OperationalError("not connected to the database")
        return self.conn

    def _one(self, query: str, params: Any = None) -> dict[str, Any]:
        row = self.db.execute(query, params).fetchone()
        assert row is not None, query  # an aggregate or an INSERT ... RETURNING of a row inserted
        return row

    def close(self) -> None:
        if self.conn is not None:
            try:
                self.db.close()
            finally:
                self.conn = None

    def __enter__(self) -> "Store":
        return self.connect() if self.conn is None else self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- migrations -------------------------------------------------------------------------------------

    def migrate(self) -> list[str]:
        """Apply the migrations not applied yet; the names of those applied now."""
        conn = self.db
        applied_now = []
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            conn.execute("CREATE TABLE IF NOT EXISTS schema_migrations (number integer PRIMARY KEY, "
                         "name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())")
            done = {row["number"] for row in conn.execute("SELECT number FROM schema_migrations")}
            for number, name, sql in migrations():
                if number in done:
                    continue
                with conn.transaction():
                    conn.execute(sql)
                    conn.execute("INSERT INTO schema_migrations (number, name) VALUES (%s, %s)", (number, name))
                applied_now.append(name)
        return applied_now

    def applied(self) -> list[str]:
        return [row["name"] for row in self.db.execute("SELECT name FROM schema_migrations ORDER BY number")]

    # ---- writes -----------------------------------------------------------------------------------------

    def store_hand(self, hand: StoredHand) -> bool:
        """Store a hand and its rows in one transaction; False when it was stored before (nothing written)."""
        conn = self.db
        with conn.transaction():
            row = conn.execute(
                "INSERT INTO hands (table_id, epoch, hand, seq, ended_at, game_number, game_type, bet_type, "
                "small_blind, big_blind, ante, button, table_size, several_boards, ohh, phh, pokerstars) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
                "ON CONFLICT (table_id, epoch, hand) DO NOTHING RETURNING id",
                (hand.table_id, hand.epoch, hand.hand, hand.seq, _stamp(hand.ended_at), hand.game_number,
                 hand.game_type, hand.bet_type, hand.small_blind, hand.big_blind, hand.ante, hand.button,
                 hand.table_size, hand.several_boards, json.dumps(hand.ohh), hand.phh, hand.pokerstars)).fetchone()
            if row is None:
                return False
            hand_id = row["id"]
            with conn.cursor() as cur:
                cur.executemany("INSERT INTO hand_players (hand_id, seat, name, starting_stack, put_in, won) "
                                "VALUES (%s, %s, %s, %s, %s, %s)",
                                [(hand_id, p.seat, p.name, p.starting_stack, p.put_in, p.won) for p in hand.players])
                cur.executemany("INSERT INTO actions (hand_id, number, street, seat, action, amount, is_allin) "
                                "VALUES (%s, %s, %s, %s, %s, %s, %s)", [(hand_id, *a) for a in hand.actions])
                cur.executemany("INSERT INTO cards (hand_id, seat, board, position, card) VALUES (%s, %s, %s, %s, %s)",
                                [(hand_id, *c) for c in hand.cards])
                cur.executemany("INSERT INTO pots (hand_id, number, amount) VALUES (%s, %s, %s)",
                                [(hand_id, *p) for p in hand.pots])
                cur.executemany("INSERT INTO results (hand_id, pot, seat, amount) VALUES (%s, %s, %s, %s)",
                                [(hand_id, *r) for r in hand.results])
                cur.executemany("INSERT INTO seat_facts (hand_id, seat, acted_preflop, vpip, pfr, postflop_aggressive, "
                                "postflop_calls, saw_flop, showdown) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                                [(hand_id, f.seat, f.acted_preflop, f.vpip, f.pfr, f.postflop_aggressive,
                                  f.postflop_calls, f.saw_flop, f.showdown) for f in hand.facts])
        return True

    def store_seating(self, seating: Seating) -> bool:
        with self.db.transaction():
            return self.db.execute(
                "INSERT INTO seatings (table_id, epoch, seq, seat, player_id, name, at) VALUES (%s, %s, %s, %s, %s, "
                "%s, %s) ON CONFLICT DO NOTHING",
                (seating.table_id, seating.epoch, seating.seq, seating.seat, seating.player_id, seating.name,
                 _stamp(seating.at))).rowcount == 1

    def store_start(self, start: HandStart) -> bool:
        with self.db.transaction():
            return self.db.execute(
                "INSERT INTO hand_starts (table_id, epoch, hand, started_at) VALUES (%s, %s, %s, %s) "
                "ON CONFLICT DO NOTHING", (start.table_id, start.epoch, start.hand, _stamp(start.at))).rowcount == 1

    # ---- reads ------------------------------------------------------------------------------------------

    def hand_count(self) -> int:
        return int(self._one("SELECT count(*) AS n FROM hands")["n"])

    def statistics(self, player_ids: list[str] | None = None) -> dict[str, dict[str, Any]]:
        """Per player: ``all`` (all time), ``day`` (today, in the room's time zone) and ``session`` (the latest
        session), each with the columns of :data:`STAT_COLUMNS`; and ``chips``, the stack after the player's latest
        hand (a tournament's chip count)."""
        where, params = ("AND player_id = ANY(%s)", [player_ids]) if player_ids is not None else ("", [])
        # player_statistics_of sums only these players' hands (migration 003): not the whole room's at every hand
        rows = self.db.execute(
            "SELECT * FROM player_statistics_of(%s::text[]) WHERE (scope = 'all' OR (scope = 'day' AND day = "
            "(now() AT TIME ZONE current_setting('TimeZone'))::date) OR scope = 'session') "
            "ORDER BY player_id, scope, session_seq", [player_ids]).fetchall()
        latest_session: dict[str, Any] = {}
        out: dict[str, dict[str, Any]] = {}
        for row in rows:
            player = out.setdefault(row["player_id"], {})
            values = {k: _number(row[k]) for k in STAT_COLUMNS}
            if row["scope"] == "session":
                if row["player_id"] not in latest_session or row["last_hand_at"] >= latest_session[row["player_id"]]:
                    latest_session[row["player_id"]] = row["last_hand_at"]
                    player["session"] = {**values, "table": row["table_id"]}
            else:
                player[row["scope"]] = values
        for row in self.db.execute(
                "SELECT DISTINCT ON (player_id) player_id, starting_stack - put_in + won AS chips "
                f"FROM hand_player_facts WHERE player_id IS NOT NULL {where} "
                "ORDER BY player_id, ended_at DESC, hand_id DESC", params):
            out.setdefault(row["player_id"], {})["chips"] = int(row["chips"])
        return out

    def players_today(self) -> list[str]:
        """The players dealt into a hand that ended today (in the room's time zone): found from today's hands (an
        index), so the room's statistics sum the day's players' hands, not every player's since the start."""
        rows = self.db.execute("SELECT DISTINCT player_id FROM hand_player_facts WHERE player_id IS NOT NULL "
                               "AND ended_at >= date_trunc('day', now())").fetchall()
        return [r["player_id"] for r in rows]

    def names(self) -> dict[str, str]:
        """Each player's name as the floor gave it at the player's latest seating (for the room's leaderboard)."""
        rows = self.db.execute(
            "SELECT DISTINCT ON (player_id) player_id, name FROM seatings WHERE player_id IS NOT NULL "
            "ORDER BY player_id, at DESC, seq DESC").fetchall()
        return {r["player_id"]: r["name"] for r in rows if r["name"]}

    def seated(self, table_id: str, epoch: str) -> dict[int, dict[str, str]]:
        """The players seated at a table (in the numbering ``epoch`` of its events) after its newest seatings: seat →
        player_id and name."""
        rows = self.db.execute(
            "SELECT DISTINCT ON (seat) seat, player_id, name FROM seatings WHERE table_id = %s AND epoch = %s "
            "ORDER BY seat, seq DESC", (table_id, epoch)).fetchall()
        return {r["seat"]: {"player_id": r["player_id"], "name": r["name"]} for r in rows if r["player_id"]}

    def hands_for_export(self, player_id: str | None = None, table_id: str | None = None,
                         day: str | None = None) -> Iterator[dict[str, Any]]:
        """The stored hands of a selection, oldest first, with their start where the room saw it."""
        conditions, params = [], []
        if player_id is not None:
            conditions.append("h.id IN (SELECT hand_id FROM hand_player_facts WHERE player_id = %s)")
            params.append(player_id)
        if table_id is not None:
            conditions.append("h.table_id = %s")
            params.append(table_id)
        if day is not None:
            conditions.append("(h.ended_at AT TIME ZONE current_setting('TimeZone'))::date = %s::date")
            params.append(day)
        where = ("WHERE " + " AND ".join(conditions)) if conditions else ""
        yield from self.db.execute(
            "SELECT h.*, s.started_at FROM hands h LEFT JOIN hand_starts s USING (table_id, epoch, hand) "
            f"{where} ORDER BY h.ended_at, h.table_id, h.hand", params)

    def size_bytes(self) -> int:
        return int(self._one("SELECT pg_database_size(current_database()) AS n")["n"])


def _number(value: Any) -> Any:
    """A statistic as JSON carries it: numerics as floats, counts as integers, None as null."""
    if value is None or isinstance(value, int):
        return value
    return float(value)
