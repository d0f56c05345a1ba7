"""The broadcast overlay lays out 2 to 10 seats inside its 1920×1080 frame, in delayed and in public mode.

Headless Chromium loads the page from a real Mosquitto, and a plain MQTT client publishes the fullest hand a table
can show: every seat named with 32 characters, all in, with hole cards, an equity bar with a tie and outs, and a
share of the pot; the board run three times and side pots. Every seat, and everything in it, must lie inside the
frame, clear of the other seats and of the board and the pot.
"""

import itertools
import os
import time

import pytest

from browser import Chromium, needs_chromium
from test_overlay_hostile import Table, delayed_hand, event, snapshot

pytestmark = needs_chromium

FRAME = (1920, 1080)
NAME = "Maximilian Alexander Grünberg-Xu"  # 32 characters, the longest name a feed may give
BOARDS = [["Ah", "Kd", "2c", "7s", "9h"], ["Ah", "Kd", "2c", "Qs", "3d"], ["Ah", "Kd", "2c", "8c", "8d"]]
HOLE = [rank + suit for suit in "shdc" for rank in "3456TJQ"]  # none on a board
TABLE_IDS = (f"layout-{os.getpid()}-{n}" for n in itertools.count(1))

# Where each seat's box, and every box in it, lies; the board and pot's panel and the winner's banner.
BOXES = """(() => {
  const box = (el) => { const r = el.getBoundingClientRect();
                        return {left: r.left, top: r.top, right: r.right, bottom: r.bottom}; };
  const shown = (el, seat) => {  // what of an element shows: its box within each ancestor that clips it
    const b = box(el);
    for (let up = el.parentElement; up && up !== seat; up = up.parentElement) {
      if (getComputedStyle(up).overflow === 'visible') continue;
      const c = box(up);
      Object.assign(b, {left: Math.max(b.left, c.left), top: Math.max(b.top, c.top),
                        right: Math.min(b.right, c.right), bottom: Math.min(b.bottom, c.bottom)});
    }
    return b;
  };
  const seats = [...document.querySelectorAll('#seats .seat')].map((el) => ({
    seat: Number(el.dataset.seat), box: box(el), inner: [...el.querySelectorAll('*')].map((e) => shown(e, el)),
    cards: el.querySelectorAll('.cards .card').length, equity: !!el.querySelector('.equity .pct'),
    won: !!el.querySelector('.won')}));
  return {seats, table: box(document.getElementById('table')), winner: box(document.getElementById('winner')),
          later: document.querySelectorAll('#later-boards .later-board').length,
          frame: [window.innerWidth, window.innerHeight]};
})()"""


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    chromium = Chromium(tmp_path_factory.mktemp("layout") / "chromium-profile")
    yield chromium
    chromium.close()


@pytest.fixture
def table(broker):
    opened = Table(broker, next(TABLE_IDS))
    yield opened
    opened.close()


def fullest_hand(seats: list[int], hole_cards: int) -> tuple[list[dict], dict]:
    """The delayed feed's events of a hand that shows everything at every seat, and the public snapshot of it."""
    cards = {n: [HOLE[(i * hole_cards + k) % len(HOLE)] for k in range(hole_cards)] for i, n in enumerate(seats)}
    pot = 1_234_500 * len(seats)
    seq = itertools.count(1)
    events = [event(next(seq), "hand_started")]
    events += [event(next(seq), "player_seated", hand=None, seat=n, name=NAME, by="floor/test") for n in seats]
    events.append(event(next(seq), "betting_started", button=seats[-1], stacks={str(n): 1_234_500 for n in seats}))
    events += [event(next(seq), "card_dealt", seat=n, count=i + 1, card=c)
               for n in seats for i, c in enumerate(cards[n])]
    events += [event(next(seq), "action", seat=n, action="all_in", to=1_234_500, added=1_234_500, all_in=True, pot=pot,
                     next=None) for n in seats]
    events.append(event(next(seq), "equity", street="preflop", exact=False, runouts=10000, stderr=0.005, dead=[],
                        hands=[{"seat": n, "win": 0.0991, "tie": 0.0123, "outs": HOLE[:9]} for n in seats]))
    events.append(event(next(seq), "hand_ended", board=BOARDS[0], boards=BOARDS, live_seats=seats,
                        hole_cards={str(n): cards[n] for n in seats}))
    events.append(event(next(seq), "showdown", payouts={str(n): pot // len(seats) for n in seats},
                        finishing_stacks={str(n): pot // len(seats) for n in seats}))
    public = dict(snapshot(100, {n: NAME for n in seats}, board=BOARDS[0]), boards=BOARDS, button=seats[-1],
                  betting={"pot": pot, "pots": [{"amount": pot // 3}] * 3, "bets": {str(n): 1_234_500 for n in seats},
                           "stacks": {str(n): 0 for n in seats}, "all_in": seats, "to_act": None})
    for entry in public["seats"]:
        entry["cards"] = hole_cards
    return events, public


def laid_out(browser, session: str, seats: int, delayed: bool) -> dict:
    """The page's boxes once it shows every seat whole (cards and winnings, and in delayed mode equity)."""
    deadline = time.monotonic() + 10
    while True:
        view = browser.evaluate(session, BOXES)
        whole = len(view["seats"]) == seats and view["later"] == 2 and all(
            s["cards"] and s["won"] and (s["equity"] or not delayed) for s in view["seats"])
        if whole:
            return view
        assert time.monotonic() < deadline, f"the page did not show {seats} seats whole: {view['seats']}"
        time.sleep(0.05)


def within(box: dict, outer: dict) -> bool:
    return box["left"] >= outer["left"] and box["top"] >= outer["top"] and box["right"] <= outer["right"] and \
        box["bottom"] <= outer["bottom"]


def inside(box: dict, frame: tuple[int, int]) -> bool:
    return within(box, {"left": 0, "top": 0, "right": frame[0], "bottom": frame[1]})


def overlap(a: dict, b: dict) -> bool:
    return a["left"] < b["right"] and b["left"] < a["right"] and a["top"] < b["bottom"] and b["top"] < a["bottom"]


@pytest.mark.parametrize(("count", "hole_cards"), [(n, 2) for n in range(2, 11)] + [(5, 7), (10, 4)],
                         ids=[f"{n}-seats" for n in range(2, 11)] + ["5-seats-omaha-7", "10-seats-omaha-4"])
def test_every_seat_lies_inside_the_frame_clear_of_the_others_and_of_the_board(count, hole_cards, browser, broker,
                                                                                table):
    seats = list(range(1, count + 1))
    events, public = fullest_hand(seats, hole_cards)
    table.send("delayed/hand", delayed_hand(events), retain=True)
    table.send("public/snapshot", public, retain=True)
    sessions = {mode: browser.open_connected(broker.overlay_url(table.id, **query))
                for mode, query in (("delayed", {}), ("public", {"mode": "public"}))}
    table.send("public/events", event(101, "showdown", payouts={str(n): 1_000 for n in seats}))
    try:
        for mode, session in sessions.items():
            view = laid_out(browser, session, count, delayed=mode == "delayed")
            assert view["frame"] == list(FRAME)
            assert [s["seat"] for s in view["seats"]] == seats
            for s in view["seats"]:
                assert inside(s["box"], FRAME), (mode, s["seat"], s["box"])
                spilt = [b for b in s["inner"] if not within(b, s["box"])]
                assert not spilt, (mode, s["seat"], "something spills out of its box", spilt)
                assert not overlap(s["box"], view["table"]), (mode, s["seat"], "over the board and the pot")
                assert not overlap(s["box"], view["winner"]), (mode, s["seat"], "under the winner's banner")
            for a, b in itertools.combinations(view["seats"], 2):
                assert not overlap(a["box"], b["box"]), (mode, a["seat"], b["seat"])
            assert inside(view["table"], FRAME) and inside(view["winner"], FRAME), mode
    finally:
        for session in sessions.values():
            browser.close_tab(session)
