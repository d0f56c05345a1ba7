"""The overlay's broadcast extras in headless Chromium: per player the statistics the room service publishes (the
ones the page's address names), the last action in words, and the made hand's name at the showdown.

The statistics come from the real room service (a private PostgreSQL, the test's broker): a table's seatings and a
hand_history on its secure feed, stored and published as docs/room.md says; the numbers expected are worked out by
hand from that hand (tests/test_room_statistics.py tells it). The table's public feed is played by a plain MQTT
client, as tests/test_overlay_hostile.py does. A delayed page holds statistics that count a hand it has not played
back yet (they would tell its result): that is checked with retained messages in the room's documented format.
"""

import json
import logging
import threading
import time
from urllib.parse import urlencode

import pytest

from browser import needs_chromium
from test_overlay_hostile import EPOCH, Pages, Table, browser, delayed_hand, event, snapshot, status_shown  # noqa: F401

pytestmark = needs_chromium

NAMES = {1: "Anna", 2: "Bo", 3: "Cem"}
EXTRAS = """(() => [...document.querySelectorAll('#seats .seat')].map((el) => {
  const text = (sel) => { const f = el.querySelector(sel); return f ? f.textContent : null; };
  return {seat: Number(el.dataset.seat), action: text('.last-action'), made: text('.made'),
          stats: [...el.querySelectorAll('.stats .stat')].map((s) => s.textContent)};
}))()"""


@pytest.fixture
def table(broker):
    opened = Table(broker, f"stats-{time.monotonic_ns()}")
    yield opened
    opened.close()


@pytest.fixture
def pages(browser, broker, table):  # noqa: F811
    opened = Pages(browser, broker, table.id)
    yield opened
    opened.close()


def extras(pages: Pages, session: str) -> dict[int, dict]:
    return {s["seat"]: s for s in pages.js(session, EXTRAS)}


def shown(pages: Pages, session: str, what: str, condition, timeout_s: float = 20) -> dict[int, dict]:
    deadline = time.monotonic() + timeout_s
    while not condition(view := extras(pages, session)):
        assert time.monotonic() < deadline, f"{what}: {view}"
        time.sleep(0.05)
    return view


class LogWatch(logging.Handler):
    def __init__(self, words: str, seen: threading.Event):
        super().__init__()
        self.words, self.seen = words, seen

    def emit(self, record: logging.LogRecord) -> None:
        if self.words in record.getMessage():
            self.seen.set()


@pytest.fixture
def room_service(broker, tmp_path):
    """The room service on the test's broker and a private PostgreSQL, running in a thread until the test ends."""
    pytest.importorskip("psycopg", reason="psycopg 3 is not installed (pip install psycopg)")
    from rfid_table.room.config import load_room_config  # noqa: PLC0415
    from rfid_table.room.service import RoomService  # noqa: PLC0415
    from tests.postgres_fixture import private_postgres  # noqa: PLC0415

    with private_postgres() as server:
        path = tmp_path / "room.toml"
        path.write_text(f'[room]\nid = "stats-room"\n[mqtt]\nhost = "{broker.host}"\nport = {broker.port}\n'
                        f'session_expiry_s = 60\n[database]\ndsn = "{server.database("overlay")}"\n', encoding="utf-8")
        stop, subscribed = threading.Event(), threading.Event()
        service = RoomService(load_room_config(path), f"room-overlay-{time.monotonic_ns()}", stop)
        log = logging.getLogger("rfid_table.room")
        watch, level = LogWatch("subscribed to", subscribed), log.level
        log.addHandler(watch)
        log.setLevel(logging.INFO)
        runner = threading.Thread(target=service.run, daemon=True)
        runner.start()
        try:
            assert subscribed.wait(60), "the room service did not subscribe"
            yield service
        finally:
            stop.set()
            runner.join(30)
            log.removeHandler(watch)
            log.setLevel(level)


def test_the_page_shows_the_rooms_statistics_and_the_last_action_in_words(table, pages, room_service):
    from tests.test_room_statistics import HAND_1  # noqa: PLC0415

    # the room: the floor's seatings and hand 1 on the table's secure feed
    for seat, name in NAMES.items():
        table.send("secure/events", {"seq": seat, "type": "player_seated", "t": HAND_1["t"] - 60, "epoch": "e1",
                                     "seat": seat, "player_id": f"p-{name.lower()}", "name": name})
    table.send("secure/events", HAND_1)
    # the page: public mode, the statistics named in its address, in the order named
    table.send("public/snapshot", snapshot(1, NAMES), retain=True)
    page = pages.open(mode="public", stats="vpip,pfr,af,net,hands,bogus", room="stats-room")
    # Hand 1 (blinds 50/100): seat 1 folded its small blind to seat 3's raise, seat 2 called from the big blind;
    # seat 3 bet the flop and seat 2 called; seat 2 bet the river, seat 3 folded. VPIP and PFR count the preflop,
    # AF the bets and raises after it over the calls (none: "–"), net what came back less what went in.
    view = shown(pages, page, "the room's statistics", lambda v: all(v.get(n, {}).get("stats") for n in NAMES))
    assert {n: view[n]["stats"] for n in NAMES} == {
        1: ["VPIP 0%", "PFR 0%", "AF –", "NET -50", "HANDS 1"],
        2: ["VPIP 100%", "PFR 0%", "AF 1.0", "NET +750", "HANDS 1"],
        3: ["VPIP 100%", "PFR 100%", "AF –", "NET -700", "HANDS 1"]}

    # the next hand, live: each seat's last action in words, until the round's bets are collected
    seq = iter(range(2, 100))  # (the snapshot's seq is 1: no gap)
    table.send("public/events", event(next(seq), "hand_started", hand=2))
    table.send("public/events", event(next(seq), "betting_started", hand=2, button=1,
                                      stacks={"1": 9_950, "2": 10_750, "3": 9_300}))
    for seat, action, to, added, all_in in ((3, "raise", 2_500, 2_500, False), (1, "fold", 50, 0, False),
                                            (2, "call", 2_500, 2_400, False)):
        table.send("public/events", event(next(seq), "action", hand=2, seat=seat, action=action, to=to, added=added,
                                          all_in=all_in, pot=5_050, next=None))
    view = shown(pages, page, "the actions in words", lambda v: v[2]["action"] is not None)
    assert [view[n]["action"] for n in NAMES] == ["FOLD", "CALL 2,500", "RAISE 2,500"]
    table.send("public/events", event(next(seq), "pots", hand=2, pots=[{"amount": 5_050}], total=5_050))
    view = shown(pages, page, "the actions cleared with the round", lambda v: v[3]["action"] is None)
    assert [view[n]["action"] for n in NAMES] == [None, None, None]
    for position, card in enumerate(("Kh", "6d", "2c", "9s", "3h"), start=1):
        table.send("public/events", event(next(seq), "board_card", hand=2, card=card, position=position,
                                          street="flop" if position <= 3 else "turn" if position == 4 else "river"))
    table.send("public/events", event(next(seq), "action", hand=2, seat=2, action="check", to=0, added=0,
                                      all_in=False, pot=5_050, next=3))
    table.send("public/events", event(next(seq), "action", hand=2, seat=3, action="all_in", to=6_800, added=6_800,
                                      all_in=True, pot=11_850, next=2))
    view = shown(pages, page, "check and all in", lambda v: v[3]["action"] is not None)
    assert (view[2]["action"], view[3]["action"]) == ("CHECK", "ALL IN")


@pytest.mark.parametrize(("hole", "board", "name"), [
    (["Ah", "Kh"], ["Qh", "Jh", "Th", "2c", "3d"], "Royal flush"),
    (["9c", "8c"], ["7c", "6c", "5c", "Ad", "Ah"], "Straight flush, nine high"),
    (["Ah", "2d"], ["3c", "4s", "5h", "Kd", "Kh"], "Straight, five high"),
    (["Kh", "Kd"], ["Ks", "6c", "6d", "2h", "2s"], "Full house, kings full of sixes"),
    (["7h", "7d"], ["7s", "7c", "Ah", "2d", "3c"], "Four of a kind, sevens"),
    (["Ah", "3h"], ["9h", "6h", "2h", "Kd", "Kc"], "Flush, ace high"),
    (["Qh", "Qd"], ["Qs", "9c", "4d", "2h", "7s"], "Three of a kind, queens"),
    (["Ah", "Kd"], ["9c", "7s", "4d", "3h", "2s"], "High card, ace"),
    (["Th", "Td"], ["Tc", "9s", "9d", "9h", "2c"], "Full house, tens full of nines"),
    # Omaha: two of the four hole cards and three of the board; four hearts in the hand and two on the board are no
    # flush, and a board pair with the hand's pair of aces makes two pair, not three of a kind
    (["Ah", "Kh", "Qh", "Jh"], ["2h", "3h", "8c", "8d", "4s"], "Pair of eights"),
    (["Ac", "Ad", "Kc", "Qd"], ["As", "9h", "9c", "2d", "3s"], "Full house, aces full of nines"),
])
def test_made_hands_are_named_as_a_commentator_says_them(pages, hole, board, name):
    page = pages.open(mode="public")
    assert pages.js(page, f"madeHand({hole!r}, {board!r})") == name


def test_a_delayed_page_names_the_made_hands_and_holds_statistics_until_it_has_played_back_their_hand(table, pages):
    """The statistics in the room's format (docs/room.md), counting hand 1, come while the page plays hand 1 back:
    they show once the playback has shown its result, with the made hands named from the cards the feed shows."""
    table.send("public/snapshot", snapshot(1, NAMES), retain=True)
    hole = {1: ["Ks", "6s"], 2: ["Ac", "Ad"], 3: ["7h", "2h"]}
    seq = iter(range(1, 100))
    hand = [event(next(seq), "hand_started"),
            event(next(seq), "betting_started", button=3, stacks={"1": 5_000, "2": 5_000, "3": 5_000})]
    hand += [event(next(seq), "card_dealt", seat=n, count=i + 1, card=c) for n, cards in hole.items()
             for i, c in enumerate(cards)]
    hand += [event(next(seq), "action", seat=3, action="fold", to=0, added=0, all_in=False, pot=150, next=1),
             event(next(seq), "action", seat=1, action="raise", to=300, added=250, all_in=False, pot=400, next=2)]
    hand += [event(next(seq), "board_card", card=c, position=i, street="flop" if i <= 3 else "turn" if i == 4
                   else "river") for i, c in enumerate(("Kh", "6d", "2c", "9s", "3h"), start=1)]
    table.send("delayed/hand", delayed_hand(hand), retain=True)
    page = pages.open(stats="hands,net", stats_over="session")
    shown(pages, page, "the raise played back", lambda v: v.get(1, {}).get("action") == "RAISE 300")
    block = {"hands": 12, "vpip_pct": 50.0, "pfr_pct": 25.0, "aggression_factor": 2.0, "wtsd_pct": 30.0,
             "wsd_pct": 50.0, "net": 1_250}
    stats_topic = f"rfid-table-room/any-room/tables/{table.id}/stats"
    table.client.publish(stats_topic, json.dumps(
        {"table": table.id, "hand": 1, "epoch": EPOCH, "t": time.time(),
         "seats": [{"seat": 1, "player_id": "p-anna", "name": "Anna", "all": {**block, "hands": 90},
                    "day": block, "session": block, "chips": 5_600}]}), qos=1, retain=True).wait_for_publish(10)
    try:
        table.send("status", b"offline")
        status_shown(pages, page, offline=True)  # the statistics came before: handled, and held
        view = extras(pages, page)
        assert view[1]["stats"] == [] and view[1]["made"] is None
        table.send("delayed/events", event(next(seq), "showdown", payouts={"1": 600}, hands={"1": hole[1],
                                                                                            "2": hole[2]}))
        view = shown(pages, page, "the statistics after the result", lambda v: v[1]["stats"])
        assert view[1]["stats"] == ["HANDS 12", "NET +1,250"]
        assert (view[1]["made"], view[2]["made"], view[3]["made"]) == ("Two pair, kings and sixes", "Pair of aces",
                                                                      None)  # seat 3 folded
    finally:
        table.client.publish(stats_topic, b"", qos=1, retain=True).wait_for_publish(10)


LEADERBOARD = """(() => [...document.querySelectorAll('#board:not([hidden]) .row, #ticker:not([hidden]) .item')].map(
  (el) => [...el.children].map((c) => c.textContent).join(' '))
)()"""


def test_the_leaderboard_and_the_ticker_rank_the_rooms_players(browser, broker, table):  # noqa: F811
    """The room's statistics (docs/room.md: every player who played today, with the chips after their latest hand and
    their results), retained: the board ranks the chip counts, the ticker the day's net results."""
    room = f"lb-{time.monotonic_ns()}"
    day = lambda net: {"hands": 30, "vpip_pct": 20.0, "pfr_pct": 10.0, "aggression_factor": 1.5,  # noqa: E731
                       "wtsd_pct": 25.0, "wsd_pct": 50.0, "net": net}
    players = {"p-17": {"name": "Anna Müller", "chips": 28_450, "day": day(18_450), "all": day(40_000)},
               "p-18": {"name": "Bo", "chips": 9_000, "day": day(-1_000), "all": day(-1_000)},
               "p-19": {"name": "Cem", "chips": 31_200, "day": day(1_200), "all": day(1_200)},
               "p-20": {"name": None, "chips": 500, "day": day(-9_500), "all": day(-9_500)},
               "p-21": {"name": "Dora", "chips": None, "day": day(0), "all": day(0)}}
    topic = f"rfid-table-room/{room}/stats"
    table.client.publish(topic, json.dumps({"room": room, "t": time.time(), "players": players}), qos=1,
                         retain=True).wait_for_publish(10)
    login = dict(zip(("username", "password"), broker.overlay_login or ()))
    url = f"http://{broker.host}:{broker.ws_port}/leaderboard.html?"
    sessions = []
    try:
        sessions.append(browser.open_connected(url + urlencode({"room": room, "top": 3, **login})))
        sessions.append(browser.open_connected(url + urlencode({"room": room, "by": "net", "view": "ticker", **login})))
        for session, expected in zip(sessions, (
                ["1 Cem 31,200", "2 Anna Müller 28,450", "3 Bo 9,000"],
                ["1. Anna Müller +18,450", "2. Cem +1,200", "3. Dora 0", "4. Bo -1,000", "5. p-20 -9,500"])):
            deadline = time.monotonic() + 10
            while (rows := browser.evaluate(session, LEADERBOARD)) != expected:
                assert time.monotonic() < deadline, rows
                time.sleep(0.05)
        assert browser.evaluate(sessions[1], "document.querySelector('#ticker .title').textContent") == "Results"
    finally:
        for session in sessions:
            browser.close_tab(session)
        table.client.publish(topic, b"", qos=1, retain=True).wait_for_publish(10)
