"""``rfid-table room export``: a selection of the stored hands (a player, a table, a day) as Open Hand History or
PokerStars text, written by the table's own formatters (``controller/ohh.py``, ``controller/pokerstars.py``).

Each hand is rebuilt from its stored PHH record as ``rfid-table export`` rebuilds it from a journal, with the pots
and the shown hands of its stored OHH copy and the start the room saw (``hand_started``), so the file is dated and
shows only what the table showed (``all_cards``: every hole card read, as confidential as the secure feed). A hand
the engine cannot rebuild (a variant PHH has no code for, several boards) is written as the table's own copy.
"""

from __future__ import annotations

import json
from datetime import timezone
from typing import Any, Iterable

from controller import phh as phhlib
from controller.histories import HandRecord
from controller.ohh import to_ohh
from controller.pokerstars import to_pokerstars

FORMATS = ("ohh", "pokerstars")


def render_hands(rows: Iterable[dict[str, Any]], fmt: str, all_cards: bool = False) -> tuple[str, int]:
    """The file's text and the number of hands in it."""
    texts = [_render(row, fmt, all_cards) for row in rows]
    separator = "\n\n" if fmt == "pokerstars" else "\n"
    return separator.join(texts), len(texts)


def _render(row: dict[str, Any], fmt: str, all_cards: bool) -> str:
    record = _record(row, all_cards)
    if record is None:  # the table's own copy, as published
        if fmt == "pokerstars":
            return row["pokerstars"]
        ohh = dict(row["ohh"])
        if row.get("started_at") is not None:
            ohh["start_date_utc"] = row["started_at"].astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
        return json.dumps({"ohh": ohh}, separators=(",", ":")) + "\n"
    if fmt == "pokerstars":
        return to_pokerstars(record)
    return json.dumps(to_ohh(record, internal_version=row["ohh"].get("internal_version", "0.1.0")),
                      separators=(",", ":")) + "\n"


def _record(row: dict[str, Any], all_cards: bool) -> HandRecord | None:
    if row["phh"] is None or row["several_boards"]:
        return None
    ohh = row["ohh"]
    try:
        phh = phhlib.loads(row["phh"])
        hand, hole, board, _showdown = phhlib.replay(phh)
    except (ValueError, KeyError, TypeError):
        return None
    seat_of = {p["id"]: p["seat"] for p in ohh["players"]}
    shown = [seat_of[a["player_id"]] for r in ohh["rounds"] if r["street"] == "Showdown"
             for a in r["actions"] if a["action"] == "Shows Cards"]
    pots = [(p["amount"], {seat_of[w["player_id"]]: w["win_amount"] for w in p["player_wins"]}) for p in ohh["pots"]]
    names = dict(zip(phh.get("seats", hand.order), phh.get("players", ())))
    if not all_cards:
        hole = {s: cards for s, cards in hole.items() if s in shown}
    started = row["started_at"].astimezone(timezone.utc) if row.get("started_at") is not None else None
    return HandRecord(hand, hole, board, shown, pots, ohh.get("table_name") or row["table_id"], row["game_number"],
                      ohh.get("table_size", 10), started, names)
