"""Which board a card on a board antenna belongs to: runs (CA Actions 8) and the double board (CA GR 14.1)."""

from __future__ import annotations

from controller.board_runs import BoardRuns


def deal(runs: BoardRuns, first: list[str], zone: str, card: str) -> int:
    """Put ``card`` where the table would: the first board, or a later one; returns the board's number."""
    board = runs.board_for(zone, len(first))
    if board is None:
        first.append(card)
        return 1
    runs.put(board, zone, card)
    return board.number


def test_runs_on_one_antenna_follow_each_other():
    runs, first = BoardRuns(), ["Ah", "Kh", "Qh"]
    runs.agree(3, len(first))
    assert runs.shared == 3
    placed = [deal(runs, first, "board", c) for c in ("2c", "3c", "4c", "5c", "6c", "7c")]
    assert placed == [1, 1, 2, 2, 3, 3]
    assert runs.boards(first) == [["Ah", "Kh", "Qh", "2c", "3c"], ["Ah", "Kh", "Qh", "4c", "5c"],
                                  ["Ah", "Kh", "Qh", "6c", "7c"]]


def test_a_second_antenna_takes_the_second_run_while_the_first_is_completed():
    runs, first = BoardRuns(), []
    runs.agree(2, 0)
    order = [("board", "2c"), ("board2", "9d"), ("board", "3c"), ("board2", "Td"), ("board", "4c"), ("board2", "Jd"),
             ("board", "5c"), ("board2", "Qd"), ("board", "6c"), ("board2", "Kd")]
    assert [deal(runs, first, zone, card) for zone, card in order] == [1, 2] * 5
    assert runs.boards(first)[1] == ["9d", "Td", "Jd", "Qd", "Kd"]


def test_a_double_board_on_one_antenna_deals_each_street_first_on_board_one():
    runs, first = BoardRuns(double_board=True), []
    cards = "2c 3c 4c 9d Td Jd 5c Qd 6c Kd".split()  # flop 1, flop 2, turn 1, turn 2, river 1, river 2
    assert [deal(runs, first, "board", c) for c in cards] == [1, 1, 1, 2, 2, 2, 1, 2, 1, 2]
    assert runs.boards(first) == [["2c", "3c", "4c", "5c", "6c"], ["9d", "Td", "Jd", "Qd", "Kd"]]


def test_agreements_that_cannot_be():
    runs = BoardRuns()
    assert "not 4 times" in runs.refusal(4, 0)
    assert "board is complete" in runs.refusal(2, 5)
    assert runs.refusal(2, 3) is None
    runs.agree(2, 3)
    assert "already" in runs.refusal(3, 3)
    assert "double board" in BoardRuns(double_board=True).refusal(2, 0)
