"""The overlay at a hi-lo table, in headless Chromium: the winner banner names both halves of a split pot, a scoop of
both, and a hand without a low. The table's public feed is played by a plain MQTT client, as
tests/test_overlay_hostile.py does, with showdown events that fit the published schema."""

import pytest

from browser import needs_chromium
from test_overlay_hostile import Pages, browser, event, fits, snapshot, table  # noqa: F401

pytestmark = needs_chromium

NAMES = {1: "Anna", 2: "Bo", 3: "Cem"}
WINNER = "document.getElementById('winner').hidden ? null : document.getElementById('winner').textContent"


@pytest.fixture
def pages(browser, broker, table):  # noqa: F811
    opened = Pages(browser, broker, table.id)
    yield opened
    opened.close()


def pot(amount: int, *halves: tuple[str, dict[str, int]]) -> dict:
    """A showdown pot split in ``halves`` (side, shares), the high half first."""
    shares = {}
    for _side, half in halves:
        for seat, v in half.items():
            shares[seat] = shares.get(seat, 0) + v
    return {"index": 0, "amount": amount, "eligible": [1, 2, 3], "winners": sorted(int(s) for s in shares),
            "shares": shares, "odd_chips": [], "rules": ["TDA 20-3"],
            "halves": [{"side": side, "amount": sum(half.values()), "winners": sorted(int(s) for s in half),
                        "shares": half, "odd_chips": []} for side, half in halves]}


def banner(table, pages: Pages, page: str, seq: int, pots: list[dict]) -> str:  # noqa: F811
    """The banner once a hand's showdown with these pots came on the public feed."""
    payouts: dict[str, int] = {}
    for p in pots:
        for seat, v in p["shares"].items():
            payouts[seat] = payouts.get(seat, 0) + v
    table.send("public/events", event(seq, "hand_started", hand=seq, game="plo8"))
    showdown = event(seq + 1, "showdown", hand=seq, order=[1, 2, 3], pots=pots, payouts=payouts,
                     winners=sorted(map(int, payouts)), finishing_stacks=None)
    assert fits("event.public", showdown), showdown
    table.send("public/events", showdown)
    pages.wait(lambda: (pages.js(page, WINNER) or "").count("wins") == len(payouts),
               f"no winner banner: {pages.js(page, 'window.__watch.warnings')}")
    return pages.js(page, WINNER)


def test_the_winner_banner_names_both_halves_of_a_split_pot(table, pages):  # noqa: F811
    """Cem's high half and Bo's low half of one pot; then a hand Anna scoops, high and low; then a hand without a
    low, whose high hand takes the pot; then a hand run twice, each run's half split high and low on its own."""
    table.send("public/snapshot", snapshot(1, NAMES), retain=True)
    page = pages.open(mode="public")
    assert banner(table, pages, page, 2, [pot(300, ("high", {"3": 150}), ("low", {"2": 150}))]) == \
        "Cem wins 150 (high) · Bo wins 150 (low)"
    assert banner(table, pages, page, 4, [pot(301, ("high", {"1": 151}), ("low", {"1": 150}))]) == \
        "Anna wins 301 (high 151, low 150)"
    assert banner(table, pages, page, 6, [pot(300, ("high", {"2": 300}))]) == "Bo wins 300 (high) · no low"
    ran_twice = pot(300, ("high", {"3": 75, "1": 75}), ("low", {"2": 150}))
    first, second = pot(150, ("high", {"3": 75}), ("low", {"2": 75})), pot(150, ("high", {"1": 75}), ("low", {"2": 75}))
    del ran_twice["halves"]
    ran_twice["boards"] = [{"board": 1, "shares": first["shares"], "halves": first["halves"]},
                           {"board": 2, "shares": second["shares"], "halves": second["halves"]}]
    assert banner(table, pages, page, 8, [ran_twice]) == \
        "Anna wins 75 (high) · Cem wins 75 (high) · Bo wins 150 (low)"
