"""The end of a hand read from the chips (``award_hand``): the pots awarded with the hole cards and the boards
(``controller.showdown``), the ``showdown`` event, the hand written as a PHH hand history with its OHH and
PokerStars copies, and the pot the dealer pushed to the stack zones checked against the award."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from controller import ohh, phh as phhlib, pokerstars
from controller.betting import BettingHand
from controller.events import HandEnded, HandHistory, Showdown
from controller.histories import HandRecord, game_number, tabled
from controller.runouts import board_shares
from controller.showdown import award

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
    paid = tuple((s, v) for s, v in result.payouts.items() if v)  # the seats that took chips
    shown_down = len(hand.live_seats) > 1  # one live seat won uncontested: its cards are not shown
    events.publish(Showdown(result.showdown_order, tuple(sorted(s for s, _v in paid)), result.pots, paid,
                            finishing_stacks=tuple(finishing.items()) if known else None,
                            boards=tuple(tuple(b) for b in boards), runs=runs,
                            hands=tuple((s, tuple(hole.get(s, []))) for s in result.showdown_order)
                            if shown_down else None))
    shown = list(result.showdown_order) if shown_down else []
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
    copies = ohh.to_ohh(record), pokerstars.to_pokerstars(record)
    try:
        full = phhlib.to_phh(hand, hole, board, shown, stacks, **players)
        masked = phhlib.to_phh(hand, None, board, [], stacks, **players)
    except ValueError as exc:  # a variant PHH has no code for
        events.publish(HandHistory(None, None, *copies, reason=str(exc)))
    else:
        events.publish(HandHistory(phhlib.dumps(masked), phhlib.dumps(full), *copies))
    pushed = reading.settling.pushed
    if pushed:  # stack zones saw where the pot went: it must be where the award says
        for s in sorted(set(pushed) | {s for s, v in result.payouts.items() if v}):
            expected, seen = result.payouts.get(s, 0), pushed.get(s, 0)
            if expected != seen:
                events.chip_count("award", s, expected, seen, ["CA Actions 7", "TDA 20-5"])
    if not known:
        return None
    return {s: v for s, v in finishing.items() if s not in reading.counted}


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
