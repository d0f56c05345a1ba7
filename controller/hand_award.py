"""The end of a hand read from the chips (``award_hand``): the pots awarded with the hole cards and the boards
(``controller.showdown``), the ``showdown`` event, the hand written as a PHH hand history with its OHH and
PokerStars copies, and the pot the dealer pushed to the stack zones checked against the award."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from controller import ohh, phh as phhlib, pokerstars
from controller.betting import BettingHand
from controller.events import HandEnded
from controller.histories import HandRecord, board_shares, game_number, tabled
from controller.showdown import PotHalf, award

if TYPE_CHECKING:
    from controller.hand_reading import HandReading


def award_hand(reading: HandReading, hand: BettingHand, ended: HandEnded) -> dict[int, int] | None:
    """Award the pots of ``hand`` (its betting over) as the card controller ended it (``ended``) and publish
    the showdown and the hand history. Returns the stacks to carry to the next hand (the finishing stacks of the
    seats the floor did not count during the hand), or None when the stacks are not known or the award could not
    be read."""
    table, events = reading.table, reading.events
    board = list(ended.board)
    hole = {s: list(cards) for s, cards in ended.hole_cards}
    for s, cards in reading.hole.items():
        hole.setdefault(s, [c for c in cards if c])
    boards, runs, run_pots = _boards(reading, board, ended)
    double = table.setup.double_board and len(boards) >= 2
    try:
        result = award(hand, {s: hole[s] for s in hand.live_seats if s in hole}, boards=boards, runs=runs,
                       run_pots=run_pots, double_board=double)
    except (ValueError, KeyError) as exc:
        events.ruling("showdown_unread", None, str(exc), [], True)
        return None
    finishing = dict(result.finishing_stacks)
    known = reading.known_stacks
    several = {"boards": boards, "runs": runs} if len(boards) > 1 else {}
    events.emit("showdown", {
        "order": list(result.showdown_order),
        "pots": [{"index": p.index, "amount": p.amount, "eligible": list(p.eligible), "winners": list(p.winners),
                  "shares": {str(s): v for s, v in p.shares.items()}, "odd_chips": list(p.odd_chips),
                  "rules": list(p.rules),
                  **({"boards": [{"board": b + 1, "shares": {str(s): v for s, v in shares.items()},
                                  **({"halves": _halves(part.halves)} if part.halves else {})}
                                 for (b, shares), part in zip(board_shares(p), p.boards)]} if p.boards else {}),
                  **({"halves": _halves(p.halves)} if p.halves else {})}
                 for p in result.pots],
        **several,
        "payouts": {str(s): v for s, v in result.payouts.items() if v},
        "winners": sorted(s for s, v in result.payouts.items() if v),  # the seats that took chips
        "finishing_stacks": {str(s): v for s, v in finishing.items()} if known else None,
    }, {"hands": {str(s): hole.get(s, []) for s in result.showdown_order}} if len(hand.live_seats) > 1 else None)
    shown = list(result.showdown_order) if len(hand.live_seats) > 1 else []
    stacks = finishing if known else None
    names = {seat: player["name"] for seat, player in reading.players.items()}
    players: dict[str, Any] = {"players": [names.get(s, f"Seat {s}") for s in hand.order]} if names else {}
    setup = table.setup
    record = HandRecord(hand, hole, boards[0], tabled(hand, shown, ended.folded_seats, result.payouts),
                        [(p.amount, p.shares) for p in result.pots], setup.table_id or "table",
                        game_number(setup.table_id, reading.started_t), table.seats,
                        names=names, boards=boards if len(boards) > 1 else (), runs=runs, double_board=double,
                        pot_boards=[board_shares(p) for p in result.pots],
                        pot_halves=[[h.shares for h in p.halves] or [p.shares] for p in result.pots]
                        if any(p.halves for p in result.pots) else (),
                        board_halves=[[[h.shares for h in part.halves] for part in p.boards] for p in result.pots])
    if len(boards) > 1:  # PHH (pokerkit 0.7.7) has no notation for runouts or boards: user-defined fields
        players["_boards"] = ["".join(b) for b in boards]
        players["_runs"] = runs
    copies = {"ohh_complete": ohh.to_ohh(record), "pokerstars_complete": pokerstars.to_pokerstars(record)}
    try:
        full = phhlib.to_phh(hand, hole, board, shown, stacks, **players)
        masked = phhlib.to_phh(hand, None, board, [], stacks, **players)
    except ValueError as exc:  # a variant PHH has no code for
        events.emit("hand_history", {"format": "phh", "phh": None, "reason": str(exc)}, copies)
    else:
        events.emit("hand_history", {"format": "phh", "phh": phhlib.dumps(masked)},
                    {"phh_complete": phhlib.dumps(full), **copies})
    pushed = reading.settling.pushed
    if pushed:  # stack zones saw where the pot went: it must be where the award says
        for s in sorted(set(pushed) | {s for s, v in result.payouts.items() if v}):
            expected, seen = result.payouts.get(s, 0), pushed.get(s, 0)
            if expected != seen:
                events.chip_count("award", s, expected, seen, ["CA Actions 7", "TDA 20-5"])
    if not known:
        return None
    return {s: v for s, v in finishing.items() if s not in reading.counted}


def _halves(halves: Sequence[PotHalf]) -> list[dict[str, Any]]:
    """A hi-lo pot's halves (or a board's part of it) as the showdown event has them, the high half first."""
    return [{"side": h.side, "amount": h.amount, "winners": list(h.winners),
             "shares": {str(s): v for s, v in h.shares.items()}, "odd_chips": list(h.odd_chips)} for h in halves]


def _boards(reading: HandReading, board: list[str], ended: HandEnded
            ) -> tuple[list[list[str]], int, tuple[int, ...] | None]:
    """The hand's boards, run by run (the card controller's ``boards`` at the hand's end, or the board cards it
    reported), how many runs were dealt, and the pots the runs cover. Agreed runs the dealer did not deal do
    not count: the pots go by the boards on the table."""
    double_board = reading.table.setup.double_board
    if len(ended.boards) > 1:
        boards = [list(b) for b in ended.boards]
    else:
        shared = 0 if double_board else reading.runs_from  # a double board shares no card with the first
        later = [list(reading.board[:shared]) + cards for _n, cards in sorted(reading.later_boards.items())]
        boards = [board] + later
    per_run = 2 if double_board and len(boards) >= 2 else 1
    runs = len(boards) // per_run
    boards = boards[: runs * per_run]
    agreed = reading.runs
    return boards, runs, agreed[1] if agreed is not None and runs > 1 else None
