"""The card controller's picture as plain data: the snapshot the daemon publishes (hole and burn cards, and the cards a
pick of the burn card is made from, only on the secure branch) and the checkpoint a hand's end leaves for the next
hand (``rfid_table.service.checkpoint``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from controller.table import TableController


def checkpoint_state(table: TableController) -> dict[str, Any]:
    """What carries over from one hand to the next, as JSON (the hand's own state starts afresh)."""
    return {"seq": table.seq, "hand": table.hand, "now": table.now, "button": table.button,
            "next_button": table.next_button,
            "last_deal": None if table.last_deal is None else [table.last_deal[0], list(table.last_deal[1]),
                                                               table.last_deal[2]],
            "no_small_blind": table.no_small_blind,
            "eligible": None if table.eligible is None else list(table.eligible),
            "next_players": None if table.next_players is None else list(table.next_players),
            "deck_id": table.deck_id, "on_table": table.on_table(),
            "readers": {name: {"link": state["link"], "faulted_antennas": list(state["faulted_antennas"])}
                        for name, state in table.readers.items()}}


def snapshot(table: TableController, secure: bool) -> dict[str, Any]:
    """The table as it is now; hole and burn cards only when ``secure``."""
    seats = []
    up = table.hand_cards.up_cards if table.stud_game is not None else None  # a stud hand's cards lying face up
    for n, place in table.seats.items():
        entry: dict[str, Any] = {"seat": n, "cards": len(place.cards), "folded": place.folded}
        if up is not None:  # public at the table
            entry["up_cards"] = [card for card in place.cards if card in up]
        if secure:
            entry["hole_cards"] = list(place.cards)
        seats.append(entry)
    deal = table.deal
    players = deal.order if table.in_hand and deal.order is not None else table.eligible
    snap: dict[str, Any] = {
        "table": table.setup.table_id,
        "seq": table.seq,
        "t": round(table.now, 3),
        "hand": table.hand if table.hand else None,
        "phase": table.phase(),
        "seats": seats,
        "board": list(table.board),
        "burns": len(table.burns),
        "mucked": len(table.mucked),
        "readers": {name: dict(state) for name, state in table.readers.items()},
        "deck": table.deck_id,
        "button": deal.button if table.in_hand else table.button,
        "players": sorted(players) if players is not None else None,
        "misdeal": table.void,
        # everything that waits for the floor, the cards' and the rest of the table's, oldest first
        "irregularities": [w.secure() if secure else w.public() for w in table.floor.waiting()],
    }
    boards = table.boards
    if len(boards) > 1:  # a hand run twice or three times, a double board: every board, run by run
        snap["boards"] = boards
    if secure:
        snap["burn_cards"] = list(table.burns)
    return snap
