"""Playing cards as the table names them: rank then suit, e.g. ``As``, ``Td``, ``2c``."""

RANKS = "23456789TJQKA"
SUITS = "shdc"  # spades, hearts, diamonds, clubs
FULL_DECK = tuple(rank + suit for suit in SUITS for rank in RANKS)


def parse_card(text: str) -> str:
    """Return the canonical name of a card, or raise ValueError saying what is wrong.

    Accepts ``10`` for ten and any letter case (``ah`` → ``Ah``), so registries typed by hand work.
    """
    if not isinstance(text, str):
        raise ValueError(f"a card is a string like 'As' or 'Td', not {type(text).__name__}")
    raw = text.strip()
    if raw[:2] == "10":
        raw = "T" + raw[2:]
    if len(raw) != 2 or raw[0].upper() not in RANKS or raw[1].lower() not in SUITS:
        raise ValueError(f"{text!r} is not a card: expected a rank of {RANKS} and a suit of {SUITS}, like 'As' or 'Td'")
    return raw[0].upper() + raw[1].lower()
