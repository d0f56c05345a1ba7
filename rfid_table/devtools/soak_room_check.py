"""The room soak's verdict: the tables' own journals are the truth, and the room's database must match them.

Every hand a journal holds a ``hand_history`` of must be stored once, and nothing else. The players' statistics are
worked out here again from the journals' events (``betting_started``, ``action``, ``action_undone``,
``board_card``, ``showdown``, ``player_seated``, ``seat_cleared``), with docs/room.md's definitions and without the
room's code (rfid_table/room/records.py reads the published OHH copy, the SQL views sum it): the two must give the
same counts, percentages and net result per player, over all time, per day and per session.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field, fields
from datetime import date, datetime, timezone
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

FORCED = ("post_sb", "post_bb", "straddle", "ante")
POSTFLOP = ("flop", "turn", "river")


@dataclass
class Counts:
    """What the statistics count for one player over a scope (the names of the view player_statistics)."""

    hands: int = 0
    preflop_decisions: int = 0
    vpip_hands: int = 0
    pfr_hands: int = 0
    postflop_bets_raises: int = 0
    postflop_calls: int = 0
    saw_flop: int = 0
    went_to_showdown: int = 0
    won_at_showdown: int = 0
    net: int = 0

    def add(self, other: "Counts") -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def percentages(self) -> dict[str, Decimal | None]:
        """As docs/room.md gives them (rounded half away from zero, as PostgreSQL's round does)."""
        def ratio(part: int, whole: int, scale: int, places: str) -> Decimal | None:
            if not whole:
                return None
            return (Decimal(part * scale) / Decimal(whole)).quantize(Decimal(places), rounding=ROUND_HALF_UP)
        return {"vpip_pct": ratio(self.vpip_hands, self.preflop_decisions, 100, "0.1"),
                "pfr_pct": ratio(self.pfr_hands, self.preflop_decisions, 100, "0.1"),
                "aggression_factor": ratio(self.postflop_bets_raises, self.postflop_calls, 1, "0.01"),
                "wtsd_pct": ratio(self.went_to_showdown, self.saw_flop, 100, "0.1"),
                "wsd_pct": ratio(self.won_at_showdown, self.went_to_showdown, 100, "0.1")}


@dataclass
class Truth:
    hands: set[tuple[str, str, int]] = field(default_factory=set)  # (table, epoch, hand) with a hand_history
    all: dict[str, Counts] = field(default_factory=dict)  # player_id → counts over every hand
    sessions: dict[tuple[str, str, str, int], Counts] = field(default_factory=dict)  # (player, table, epoch, seq)
    days: dict[tuple[str, date], Counts] = field(default_factory=dict)  # (player, the hand's day in UTC)
    unverifiable: list[str] = field(default_factory=list)  # hands whose statistics the journal cannot give


def _events(path: Path) -> tuple[str, list[tuple[int, str, int | None, float, dict, dict]]]:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        epoch = db.execute("SELECT value FROM meta WHERE key = 'epoch'").fetchone()[0]
        # an event's published t is its wall-clock stamp where it has one (controller/domain.py)
        rows = db.execute("SELECT seq, type, hand, coalesce(wall, t), public, secret FROM events ORDER BY seq")
        events = [(seq, kind, hand, t, json.loads(public), json.loads(secret or "{}"))
                  for seq, kind, hand, t, public, secret in rows]
    finally:
        db.close()
    return epoch, events


def _seat_counts(seat: int, actions: list[dict], flop_turned: bool, showdown: list[int], payouts: dict,
                 net: int) -> Counts:
    """One seat's part of one hand. An all-in is what it amounts to: a raise (a bet on an open street) when it
    goes above what was to call, a call otherwise."""
    counts = Counts(hands=1, net=net)
    folded_preflop = False
    for a in actions:
        if a["seat"] != seat or a["action"] in FORCED:
            continue
        kind = a["kind"]
        if a["street"] == "preflop":
            counts.preflop_decisions = 1
            counts.vpip_hands |= kind in ("call", "bet", "raise")
            counts.pfr_hands |= kind in ("bet", "raise")
            folded_preflop |= kind == "fold"
        elif a["street"] in POSTFLOP:
            counts.postflop_bets_raises += kind in ("bet", "raise")
            counts.postflop_calls += kind == "call"
    counts.saw_flop = int(flop_turned and not folded_preflop)
    at_showdown = len(showdown) > 1 and seat in showdown
    counts.went_to_showdown = int(bool(counts.saw_flop) and at_showdown)
    counts.won_at_showdown = int(bool(counts.went_to_showdown) and payouts.get(str(seat), 0) > 0)
    return counts


def _with_kinds(actions: list[dict]) -> list[dict]:
    """Each action with ``kind``: fold, check, call, bet, raise, or forced; an all-in read against the bet to call
    on its street (the forced bets, an ante aside, make the preflop's)."""
    out = []
    street, level = None, 0
    for a in actions:
        if a["street"] != street:
            street, level = a["street"], 0
        to = a.get("to") or 0
        kind = a["action"]
        if kind in FORCED:
            kind = "forced"
            if a["action"] != "ante":
                level = max(level, to)
        elif kind == "all_in":
            kind = ("bet" if level == 0 else "raise") if to > level else "call"
            level = max(level, to)
        elif kind in ("bet", "raise"):
            level = max(level, to)
        out.append({**a, "kind": kind})
    return out


def truth_from_journals(journals: dict[str, Path]) -> Truth:
    """``journals``: table id → its journal file."""
    truth = Truth()
    for table_id, path in sorted(journals.items()):
        epoch, events = _events(path)
        seating: dict[int, tuple[str | None, int]] = {}  # seat → (player_id or None, the seating's seq)
        hands: dict[int, dict[str, Any]] = {}
        for seq, kind, hand, t, public, secret in events:
            if kind in ("player_seated", "seat_cleared"):
                seating[public["seat"]] = (public.get("player_id") if kind == "player_seated" else None, seq)
                continue
            if hand is None:
                continue
            h = hands.setdefault(hand, {"actions": [], "flop": False})
            if kind == "betting_started":
                h.update(seats=public["seats"], stacks=public.get("stacks"), actions=[], flop=False)
            elif kind == "action":
                h["actions"].append({**public, "seq": seq})
            elif kind == "action_undone":
                undone = {u["seq"] for u in public.get("undone", ())}
                h["actions"] = [a for a in h["actions"] if a["seq"] not in undone]
            elif kind == "board_card" and public.get("street") == "flop" and public.get("position") == 3 \
                    and public.get("board_number", 1) == 1:
                h["flop"] = True
            elif kind == "showdown":
                h["showdown"] = public
            elif kind == "hand_history":
                truth.hands.add((table_id, epoch, hand))
                # the player of a seat: its last seating before the hand's history (docs/room.md)
                h["players"] = dict(seating)
                h["day"] = datetime.fromtimestamp(round(t, 3), timezone.utc).date()  # the soak's room is in UTC
        for hand, h in hands.items():
            if "players" not in h:
                continue
            if "seats" not in h or "showdown" not in h or not h.get("stacks"):
                truth.unverifiable.append(f"{table_id} hand {hand}: no betting_started with stacks or no showdown")
                continue
            actions = _with_kinds(h["actions"])
            showdown = h["showdown"]
            for seat in h["seats"]:
                player, seating_seq = h["players"].get(seat, (None, 0))
                if player is None:
                    continue
                net = showdown["finishing_stacks"][str(seat)] - h["stacks"][str(seat)]
                counts = _seat_counts(seat, actions, h["flop"], showdown.get("order", []), showdown.get("payouts", {}),
                                      net)
                truth.all.setdefault(player, Counts()).add(counts)
                truth.sessions.setdefault((player, table_id, epoch, seating_seq), Counts()).add(counts)
                truth.days.setdefault((player, h["day"]), Counts()).add(counts)
    return truth


STATISTICS = [f.name for f in fields(Counts)] + ["vpip_pct", "pfr_pct", "aggression_factor", "wtsd_pct", "wsd_pct"]


def _expected(counts: Counts) -> dict[str, Any]:
    return {**{f.name: getattr(counts, f.name) for f in fields(Counts)}, **counts.percentages()}


def compare(dsn: str, truth: Truth) -> dict[str, Any]:
    """The room's database against the journals: the hands (each once, none else) and every statistic of every
    player over all time and per session. Returns the counts and the first differences found."""
    import psycopg  # noqa: PLC0415
    from psycopg.rows import dict_row  # noqa: PLC0415

    with psycopg.connect(dsn, row_factory=dict_row) as conn:
        rows = conn.execute("SELECT table_id, epoch, hand, count(*) AS n FROM hands GROUP BY 1, 2, 3").fetchall()
        stats = conn.execute("SELECT * FROM player_statistics").fetchall()
    stored = {(r["table_id"], r["epoch"], r["hand"]): r["n"] for r in rows}
    problems: list[str] = []
    missing = sorted(truth.hands - set(stored))
    extra = sorted(set(stored) - truth.hands)
    twice = sorted(k for k, n in stored.items() if n > 1)
    if missing:
        problems.append(f"{len(missing)} hand(s) of the journals not stored, e.g. {missing[:3]}")
    if extra:
        problems.append(f"{len(extra)} stored hand(s) in no journal, e.g. {extra[:3]}")
    if twice:
        problems.append(f"{len(twice)} hand(s) stored more than once, e.g. {twice[:3]}")
    room_all = {r["player_id"]: r for r in stats if r["scope"] == "all"}
    room_sessions = {(r["player_id"], r["table_id"], r["epoch"], r["session_seq"]): r
                     for r in stats if r["scope"] == "session"}
    room_days = {(r["player_id"], r["day"]): r for r in stats if r["scope"] == "day"}
    compared = 0
    differences: list[str] = []
    for scope, ours, theirs in (("all", truth.all, room_all), ("session", truth.sessions, room_sessions),
                                ("day", truth.days, room_days)):
        for key in sorted(set(ours) - set(theirs), key=str):
            differences.append(f"{scope} {key}: in the journals, not in the room's statistics")
        for key in sorted(set(theirs) - set(ours), key=str):
            differences.append(f"{scope} {key}: in the room's statistics, not in the journals")
        for key in sorted(set(ours) & set(theirs), key=str):
            expected = _expected(ours[key])
            for name in STATISTICS:
                compared += 1
                got = theirs[key][name]
                if (Decimal(got) if got is not None else None) != expected[name]:
                    differences.append(f"{scope} {key} {name}: room {got}, journals {expected[name]}")
    if differences:
        problems.append(f"{len(differences)} statistic(s) differ from the journals', e.g. {differences[:3]}")
    if truth.unverifiable:
        problems.append(f"{len(truth.unverifiable)} hand(s) whose statistics the journals cannot give, e.g. "
                        f"{truth.unverifiable[:3]}")
    return {"hands_in_journals": len(truth.hands), "hands_stored": sum(stored.values()),
            "hands_missing": len(missing), "hands_extra": len(extra), "hands_stored_twice": len(twice),
            "players": len(truth.all), "sessions": len(truth.sessions), "days": len(truth.days),
            "statistics_compared": compared,
            "statistics_differing": len(differences), "problems": problems}
