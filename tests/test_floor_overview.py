"""The floor's overview of every table (console/overview.html) in headless Chromium, against retained secure snapshots
on the test's Mosquitto: each table with its game (from its latest hand_history), level, hand and players, a badge
where something waits for the floor (red where the game stops) or the table is offline, and a link to its console.
"""

import json
import time
from urllib.parse import urlencode

import pytest

from browser import Chromium, needs_chromium
from test_overlay_browser import plain_table
from test_overlay_hostile import snapshot

pytestmark = needs_chromium

CARDS = """(() => [...document.querySelectorAll('#tables .table')].map((el) => ({
  table: el.dataset.table, classes: [...el.classList].filter((c) => c !== 'table').sort(),
  badges: [...el.querySelectorAll('.badge')].map((b) => b.textContent),
  game: el.querySelector('.game').textContent, hand: el.querySelector('.hand').textContent,
  players: el.querySelector('.players').textContent, link: el.getAttribute('href')})))()"""


@pytest.fixture
def browser(tmp_path):
    chromium = Chromium(tmp_path / "chromium-profile")
    yield chromium
    chromium.close()


def test_the_overview_shows_every_table_and_what_waits_for_the_floor(broker, browser):
    prefix = f"overview-{time.monotonic_ns()}"  # this test's tables alone
    client = plain_table(broker, "overview")
    published: list[str] = []

    def send(topic: str, body, retain: bool = True) -> None:
        payload = body if isinstance(body, bytes) else json.dumps(body).encode()
        client.publish(f"{prefix}/{topic}", payload, qos=1, retain=retain).wait_for_publish(10)
        if retain:
            published.append(f"{prefix}/{topic}")

    main = dict(snapshot(40, {1: "Anna", 2: "Bo"}, board=["Ah", "Kd", "2c"]), table="main-1",
                level={"level": 3, "small_blind": 100, "big_blind": 200, "ante": 25},
                irregularities=[{"irregularity": 7, "hand": 1, "code": "card_exposed", "type": "irregular_card",
                                 "severity": "stop", "seats": [2]}])
    quiet = dict(snapshot(3, {4: "Cem"}), table="side-2")
    send("main-1/secure/snapshot", main)
    send("side-2/secure/snapshot", quiet)
    send("side-2/status", b"offline")
    send("broken-3/secure/snapshot", {"seq": "not a number"})  # dropped, with one warning
    try:
        query = urlencode({"prefix": prefix, **dict(zip(("username", "password"), broker.overlay_login or ()))})
        page = browser.open_connected(f"http://{broker.host}:{broker.ws_port}/console/overview.html?{query}")
        # the game comes with the table's next hand_history (the snapshot does not carry it)
        send("main-1/secure/events", {"seq": 41, "type": "hand_history", "t": time.time(), "hand": 1, "epoch": "e",
                                      "ohh_complete": {"ohh": {"game_type": "Holdem", "bet_limit": {"bet_type": "NL"}}}},
             retain=False)
        deadline = time.monotonic() + 10
        while (cards := browser.evaluate(page, CARDS)) and not (len(cards) == 2 and "NL" in cards[0]["game"]):
            assert time.monotonic() < deadline, cards
            time.sleep(0.05)
        assert cards == [
            {"table": "main-1", "classes": ["stop", "waits"], "badges": ["1 waits for the floor"],
             "game": "NL Holdem · Level 3: 100/200, ante 25", "hand": "Hand 1, flop",
             "players": "2 players: 1 Anna, 2 Bo", "link": f"index.html?table=main-1&prefix={prefix}"},
            {"table": "side-2", "classes": ["offline"], "badges": ["offline"], "game": "game not known yet",
             "hand": "No hand yet", "players": "1 player: 4 Cem", "link": f"index.html?table=side-2&prefix={prefix}"}]
        assert browser.evaluate(page, "Object.keys(state.dropped)") == ["snapshot: seq"]
        # the floor answers: the next snapshot has nothing waiting, and the badge goes
        send("main-1/secure/snapshot", dict(main, seq=42, irregularities=[]))
        while browser.evaluate(page, CARDS)[0]["badges"]:
            assert time.monotonic() < deadline + 10, browser.evaluate(page, CARDS)
            time.sleep(0.05)
    finally:
        for topic in published:
            client.publish(topic, b"", qos=1, retain=True).wait_for_publish(10)
        client.disconnect()
        client.loop_stop()
