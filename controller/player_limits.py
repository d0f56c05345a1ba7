"""How many players a variant may deal in: CA GR 15, the only rule book that says.

CA GR 15.1, "Pot Limit Omaha standard variant with "Run It Twice"": "5 players maximum 7 cards", "6 players maximum
6 cards", "7 players maximum 5 cards", "8 players maximum 5 cards". CA GR 15.2, "Pot Limit Omaha in the variants
"Bomb Pot" and/or "Doubleboard" (if there are too many players, the small blind sits out)": "5 players maximum 7
cards", "6 players maximum 6 cards", "7 players maximum 5 cards", "8 players maximum 4 cards", "9 players maximum 4
cards (at NLH cash game tables with Bomb Pot)". Read the other way round: the most players for each number of hole
cards. Four-card Omaha and hold'em are limited by the table's ten seats on a single board.
"""

from __future__ import annotations

TABLE_MAX = 10
STANDARD = {7: 5, 6: 6, 5: 8}  # CA GR 15.1: hole cards → players at most
BOMB_POT_OR_DOUBLE_BOARD = {7: 5, 6: 6, 5: 7, 4: 9}  # CA GR 15.2


def max_players(hole_cards: int, double_board: bool = False, bomb_pot: bool = False) -> int:
    """The most players a deal of ``hole_cards`` each may have (CA GR 15.1; 15.2 with a double board or a bomb pot)."""
    table = BOMB_POT_OR_DOUBLE_BOARD if double_board or bomb_pot else STANDARD
    return table.get(hole_cards, TABLE_MAX)


def limit_rule(double_board: bool = False, bomb_pot: bool = False) -> str:
    return "CA GR 15.2" if double_board or bomb_pot else "CA GR 15.1"

