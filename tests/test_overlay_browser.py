"""The broadcast overlay in a real browser: headless Chromium loads overlay/ from the private Mosquitto's WebSocket
listener (http_dir), against `rfid-table sim` with a short broadcast delay, and the test reads the page over the
DevTools protocol.

Delayed mode: names, stacks, board, pot and the winner as the table had them; hole cards only after the delay,
never before; equity shown. Public mode, open during the whole session: never a hole card, never equity. A
screenshot of the delayed page is written to $TEST_ARTIFACTS_DIR (default: test-output/ in the checkout).

The card-room broker's WebSocket listener serves the same page once broker-setup has installed it, and the page
logs in there with the overlay user's credentials from its address (a wrong password shows nothing).

Chromium is driven as tests/browser.py does.
"""

import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from browser import Chromium, OBSERVE, needs_chromium
from conftest import ROOT
from rfid_table.ops import broker_setup
from rfid_table.ops.broker import PrivateBroker
from rfid_table.config.table import MqttSettings
from rfid_table.mqtt import make_client


TABLE = "main-2"  # config/table-chips.toml: cards and chips
DELAY_S = 3.0
HANDS = 1  # the hand whose delayed playback the page must show to its result
NAMES = {1: "Anna Müller", 2: "Bo Li", 3: "Chris O'Neil"}
ARTIFACTS = Path(os.environ.get("TEST_ARTIFACTS_DIR") or ROOT / "test-output")


class Feed:
    """The secure events as they left the table, with the wall time each was received here."""

    def __init__(self, broker):
        self.events: list[tuple[float, dict]] = []
        self.lock = threading.Lock()
        self.client = make_client(MqttSettings(host=broker.host, port=broker.port), f"overlay-test-{os.getpid()}")
        self.client.reconnect_delay_set(min_delay=1, max_delay=1)  # back within a second of the broker's restart
        self.online = threading.Event()
        self.client.on_connect = lambda c, u, f, rc, p: c.subscribe([(f"rfid-table/{TABLE}/secure/events", 1),
                                                                     (f"rfid-table/{TABLE}/status", 1)])
        self.client.on_message = self._message
        self.client.connect(broker.host, broker.port)
        self.client.loop_start()

    def _message(self, client, userdata, message) -> None:
        if message.topic.endswith("/status"):
            if message.payload == b"online":
                self.online.set()
            return
        with self.lock:
            self.events.append((time.time(), json.loads(message.payload)))

    def of(self, kind: str) -> list[tuple[float, dict]]:
        with self.lock:
            return [(at, e) for at, e in self.events if e["type"] == kind]

    def gap(self) -> None:
        """A public event far ahead of the table's: to a subscriber, events were missed (the table's own gaps
        after an outage are filled by paho's resending, so they do not come on demand)."""
        assert self.client.is_connected() or self._reconnected(), "the test's client did not reconnect"
        with self.lock:
            last = self.events[-1][1]
        body = {"seq": last["seq"] + 50, "type": "journal", "t": last["t"], "hand": last["hand"], "state": "ok",
                "rows": 1, "undelivered": 0, "limit": 1000, "epoch": last["epoch"]}
        self.client.publish(f"rfid-table/{TABLE}/public/events", json.dumps(body).encode(), qos=1)

    def _reconnected(self) -> bool:
        deadline = time.monotonic() + 15
        while not self.client.is_connected() and time.monotonic() < deadline:
            time.sleep(0.1)
        return self.client.is_connected()

    def seat_players(self) -> None:
        """The floor names the players, once the table listens for commands."""
        assert self.online.wait(20), "the simulated table did not come online"
        for seat, name in NAMES.items():
            body = {"id": f"n{seat}", "command": "seat_player", "seat": seat, "name": name}
            self.client.publish(f"rfid-table/{TABLE}/commands/floor/test", json.dumps(body).encode(), qos=1)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def plain_table(broker, table_id: str):
    """A plain MQTT client, connected, that publishes for ``table_id`` what the daemon would."""
    table = make_client(MqttSettings(host=broker.host, port=broker.port), f"table-{table_id}")
    table.connect(broker.host, broker.port)
    table.loop_start()
    return table


@pytest.fixture(scope="module")
def broker():
    """A broker of this module's own: the session is cut off from it for a moment."""
    with PrivateBroker() as running:
        yield running


@pytest.fixture(scope="module")
def session(broker, tmp_path_factory):
    """One simulated session watched by a delayed page and a public page at once; the broker stops for a few
    seconds during the first hand's playback and comes back on the same ports."""
    work = tmp_path_factory.mktemp("overlay")
    feed = Feed(broker)
    sim = subprocess.Popen(
        [sys.executable, "-m", "rfid_table.cli", "sim", "--config", str(ROOT / "config" / "table-chips.toml"),
         "--host", broker.host, "--port", str(broker.port), "--hands", "0", "--speed", "1", "--pace", "0.2",
         "--players", "3", "--link", "direct", "--seed", "5", "--journal", str(work / "sim.journal"),
         "--delay", str(DELAY_S)],
        stdout=open(work / "sim.log", "wb"), stderr=subprocess.STDOUT)
    browser = Chromium(work / "chromium-profile")
    observed: dict[str, list[dict]] = {"delayed": [], "public": [], "late": []}
    shot = ARTIFACTS / "overlay-delayed.png"
    try:
        feed.seat_players()
        pages = {"delayed": browser.open(broker.overlay_url(TABLE)),
                 "public": browser.open(broker.overlay_url(TABLE, mode="public"))}
        shot_taken = outage = False
        late_opened = None  # when the late page was opened
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            for mode, page in pages.items():
                observed[mode].append(browser.evaluate(page, OBSERVE))
            last = observed["delayed"][-1]
            if outage and late_opened is None and last["hand"] == HANDS and len(last["board"]) >= 3:
                # Midway through the playback, after the outage, a delayed page opens: it must show the hand so
                # far at once (the whole hand was released long ago) and play it to its result.
                late_opened = {"at": time.time(), "board": last["board"]}
                pages["late"] = browser.open(broker.overlay_url(TABLE))
            if not outage and last["hand"] == HANDS:  # the playback has begun: the broker goes away
                outage = True
                broker.stop()
                views = {mode: browser.evaluate(page, OBSERVE) for mode, page in pages.items()}
                while any(v["connected"] for v in views.values()) and time.monotonic() < deadline:
                    time.sleep(0.2)
                    views = {mode: browser.evaluate(page, OBSERVE) for mode, page in pages.items()}
                time.sleep(2.0)
                broker.start()
                for mode, view in views.items():
                    observed[mode].append(view)
                # the gap only shows to a page that is back: wait for both to have subscribed again
                while time.monotonic() < deadline:
                    views = {mode: browser.evaluate(page, OBSERVE) for mode, page in pages.items()}
                    if all(v["connected"] and v["connects"] >= 2 for v in views.values()):
                        break
                    time.sleep(0.2)
                feed.gap()
            if not shot_taken and sum(1 for s in last["seats"] if s["cards"] and s["equity"]) >= 2 \
                    and len(last["board"]) >= 3:
                ARTIFACTS.mkdir(parents=True, exist_ok=True)
                browser.screenshot(pages["delayed"], shot)
                print(f"\noverlay screenshot: {shot}")
                shot_taken = True
            # each page has shown the result (the page opened late may get there a moment after the other, which
            # by then may show the next hand)
            if shot_taken and at_its_result(observed["delayed"]) and at_its_result(observed["late"]):
                break
            time.sleep(0.2)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)  # what the pages showed, and what the table sent, for a look
        (ARTIFACTS / "overlay-observed.json").write_text(json.dumps(
            {"observed": observed, "secure_events": [{"received": at, **e} for at, e in feed.events]}, indent=1))
        assert sim.poll() is None, (work / "sim.log").read_text()[-2000:]
        yield {"observed": observed, "feed": feed, "shot": shot if shot_taken else None, "log": work / "sim.log",
               "late_opened": late_opened}
    finally:
        browser.close()
        sim.terminate()
        sim.wait(10)
        feed.close()


def at_its_result(views: list[dict]) -> dict | None:
    """The last of ``views`` showing hand HANDS at its result, or None."""
    return next((v for v in reversed(views) if v["hand"] == v["winnerHand"] == HANDS and v["winner"]), None)


def timeline(views: list[dict]) -> list[tuple]:
    """What a page showed, each change once: (seconds since the first view, hand, board cards, winner's hand,
    connected)."""
    changes = []
    for v in views:
        shown = (v["hand"], len(v["board"]), v["winnerHand"], v["connected"])
        if not changes or changes[-1][1:] != shown:
            changes.append((round(v["now"] - views[0]["now"], 2), *shown))
    return changes


def the_hand_played_back_to_its_result(views: list[dict], feed) -> dict:
    """``views`` show hand HANDS as the table ended it: the board, the stacks after the showdown, a winner named.
    Returns that view."""
    view = at_its_result(views)
    assert view, f"hand {HANDS} never played back to its result: {timeline(views)}"
    ended = next(e for _, e in feed.of("hand_ended") if e["hand"] == HANDS)
    assert view["board"] == ended["board"]
    showdown = next(e for _, e in feed.of("showdown") if e["hand"] == HANDS)
    stacks = {str(s["seat"]): s["stack"].replace(",", "") for s in view["seats"]}
    assert stacks == {seat: str(v) for seat, v in showdown["finishing_stacks"].items()}
    assert any(name in view["winner"] for name in NAMES.values())
    return view


@needs_chromium
def test_the_delayed_page_shows_names_stacks_board_pot_cards_and_equity_after_the_delay(session):
    observed, feed = session["observed"]["delayed"], session["feed"]
    # Board, stacks and winner as the table had them at the end of the hand played back; the pot too.
    result = the_hand_played_back_to_its_result(observed, feed)
    pots = [e for _, e in feed.of("pots") if e["hand"] == HANDS]
    assert result["pot"].replace(",", "") == str(pots[-1]["total"])
    assert session["shot"] is not None and session["shot"].stat().st_size > 10_000
    # Names, from the floor's seat_player commands.
    assert {s["seat"]: s["name"] for s in result["seats"]} == NAMES
    # Hole cards: shown, and never before the delay since the table dealt them.
    dealt_at = {}
    for at, event in feed.of("card_dealt"):
        dealt_at.setdefault(event["card"], at)
    shown = 0
    for view in observed:
        for seat in view["seats"]:
            for card in seat["cards"]:
                shown += 1
                assert view["now"] - dealt_at[card] >= DELAY_S - 0.3, \
                    f"{card} shown {view['now'] - dealt_at[card]:.2f} s after it was dealt"
    assert shown
    # The broker went away and came back: the page noticed, reconnected by itself and went on.
    assert any(not v["connected"] for v in observed) and result["connected"] and result["connects"] >= 2
    assert observed[-1]["connected"]
    # Equity, with the numbers of the table's equity events.
    assert any(sum(1 for s in v["seats"] if s["equity"]) >= 2 for v in observed)
    assert feed.of("equity")


@needs_chromium
def test_a_delayed_page_opened_during_the_playback_shows_the_hand_so_far_and_its_result(session):
    """It takes delayed/hand (retained): the hand's events released before it opened never come again on
    delayed/events."""
    opened, feed = session["late_opened"], session["feed"]
    assert opened is not None, "the playback never reached the flop after the outage"
    observed = session["observed"]["late"]
    # within a few seconds, the hand where the page that was there all along is: the flop at least
    soon = [v for v in observed if v["now"] - opened["at"] < 5 and v["hand"] == HANDS]
    assert soon and any(len(v["board"]) >= 3 and v["board"][:3] == opened["board"][:3] for v in soon), \
        f"the late page showed {[(v['hand'], v['board']) for v in observed[:20]]}, the first page {opened['board']}"
    assert any(s["cards"] for v in soon for s in v["seats"])  # the hole cards, released long ago
    result = the_hand_played_back_to_its_result(observed, feed)
    assert {s["seat"]: s["name"] for s in result["seats"]} == NAMES
    dealt_at = {}
    for at, event in feed.of("card_dealt"):
        dealt_at.setdefault(event["card"], at)
    for view in observed:  # (it opened long after the delay: this only says it shows nothing else)
        for card in (c for s in view["seats"] for c in s["cards"]):
            assert view["now"] - dealt_at[card] >= DELAY_S - 0.3


@needs_chromium
def test_the_public_page_never_shows_a_hole_card_or_equity(session):
    observed = session["observed"]["public"]
    assert len(observed) > 20
    for view in observed:
        assert not [c for s in view["seats"] for c in s["cards"]], view
        assert not view["stateCards"] and not view["stateEquity"] and not any(s["equity"] for s in view["seats"])
    assert any(len(v["board"]) == 5 for v in observed) and any(s["backs"] for v in observed for s in v["seats"])
    assert {s["name"] for s in observed[-1]["seats"]} >= set(NAMES.values())
    assert any(v["pot"] not in ("0", "–") for v in observed)
    # Through the outage it reconnected; after a seq gap it took the snapshot again and went on with the table.
    assert any(not v["connected"] for v in observed) and observed[-1]["connects"] >= 2
    after = [i for i, v in enumerate(observed) if v["resyncs"]]
    assert after, "no resynchronisation after the seq gap"
    assert len({(v["hand"], tuple(v["board"]), v["pot"]) for v in observed[after[0]:]}) > 1  # still live


@needs_chromium
def test_a_delayed_page_that_was_away_takes_the_events_it_missed_from_delayed_hand(broker, tmp_path):
    """The page is cut off (another client takes its client id) while the table releases events; back, with a
    clean session, it gets none of them on delayed/events, but the retained delayed/hand has them: it shows the
    hand whole. The table here is a plain client publishing what the daemon would."""
    table_id = "away-1"
    base = f"rfid-table/{table_id}"
    table = plain_table(broker, table_id)
    now = time.time()
    released = now - 1.0
    events = [{"type": "hand_started"}, {"type": "card_dealt", "seat": 1, "count": 1, "card": "Ah"},
              {"type": "card_dealt", "seat": 2, "count": 1, "card": "Kd"},
              {"type": "card_dealt", "seat": 1, "count": 2, "card": "Qs"},
              {"type": "card_dealt", "seat": 2, "count": 2, "card": "Jc"},
              {"type": "board_card", "card": "2d", "street": "flop", "position": 1},
              {"type": "board_card", "card": "3d", "street": "flop", "position": 2},
              {"type": "board_card", "card": "4d", "street": "flop", "position": 3},
              {"type": "board_card", "card": "5d", "street": "turn", "position": 4}]
    events = [{"seq": seq, "t": released - 5 + seq * 0.01, "hand": 1, "epoch": "e-away", **e}
              for seq, e in enumerate(events, start=1)]

    def release(first: int, last: int) -> None:
        """seq ``first`` to ``last`` on delayed/events."""
        for event in events[first - 1:last]:
            table.publish(f"{base}/delayed/events", json.dumps(event).encode(), qos=1).wait_for_publish(10)

    def hand_so_far(upto: int) -> None:
        """delayed/hand (retained) with seq 1 to ``upto``."""
        hand = {"epoch": "e-away", "hand": 1, "seq": upto, "released": released, "events": events[:upto]}
        table.publish(f"{base}/delayed/hand", json.dumps(hand).encode(), qos=1, retain=True).wait_for_publish(10)

    def cut_off() -> None:
        """Another client takes the page's client id until the table has released more."""
        nonlocal impostor
        impostor = make_client(MqttSettings(host=broker.host, port=broker.port),
                               browser.evaluate(page, "client.options.clientId"))
        impostor.connect(broker.host, broker.port)
        impostor.loop_start()
        wait(lambda v: not v["connected"], "the page was not cut off")

    browser = Chromium(tmp_path / "chromium-profile")
    impostor = None
    try:
        page = browser.open(broker.overlay_url(table_id))

        def view() -> dict:
            return browser.evaluate(page, OBSERVE)

        def wait(condition, what: str) -> dict:
            deadline = time.monotonic() + 15
            while not condition(seen := view()):
                assert time.monotonic() < deadline, f"{what}: {seen}"
                time.sleep(0.05)
            return seen

        wait(lambda v: v["connected"], "the page did not connect")
        # A page that joins a hand after its start (its subscription may even come after this release): seq 1 and 2
        # only ever reach it in delayed/hand, and it waits for them rather than play seq 3 first.
        release(3, 3)
        hand_so_far(3)
        wait(lambda v: {s["seat"]: s["cards"] for s in v["seats"]} == {1: ["Ah"], 2: ["Kd"]}, "the first cards")
        cut_off()
        release(4, 5)  # while it is away (it tries again every 2 s)
        hand_so_far(5)
        impostor.disconnect()
        impostor.loop_stop()
        back = wait(lambda v: v["connected"] and v["connects"] >= 2, "the page did not come back")
        release(6, 6)  # and the next one live
        hand_so_far(6)
        shown = wait(lambda v: v["board"] == ["2d"], "the board card after the return")
        assert {s["seat"]: s["cards"] for s in shown["seats"]} == {1: ["Ah", "Qs"], 2: ["Kd", "Jc"]}, (back, shown)
        assert shown["hand"] == 1
        # Away again, and back before delayed/hand was sent anew (the table sends it at most once a second): the
        # next live event shows a gap; the page resynchronises, waits at the gap, and the new delayed/hand fills it.
        cut_off()
        release(7, 8)
        impostor.disconnect()
        impostor.loop_stop()
        wait(lambda v: v["connected"] and v["connects"] >= 3, "the page did not come back again")
        release(9, 9)
        wait(lambda v: v["resyncs"] >= 1, "no resynchronisation after the gap")
        hand_so_far(9)
        shown = wait(lambda v: v["board"] == ["2d", "3d", "4d", "5d"], "the flop and turn after the gap")
        assert {s["seat"]: s["cards"] for s in shown["seats"]} == {1: ["Ah", "Qs"], 2: ["Kd", "Jc"]}
    finally:
        browser.close()
        if impostor is not None:
            impostor.disconnect()
            impostor.loop_stop()
        table.publish(f"{base}/delayed/hand", b"", qos=1, retain=True).wait_for_publish(10)
        table.disconnect()
        table.loop_stop()


@needs_chromium
def test_a_page_opened_while_the_hand_before_is_still_played_back_joins_that_hand(broker, tmp_path):
    """A hand released whole when it ends is played back at the pace it was dealt, so the next hand is often
    released while a page that was there all along still plays the one before. A page opened then (an OBS source
    reloaded) shows that hand where the other page is, its result, and then the next one, rather than skip to it;
    and the page there all along, had it missed the next hand's events (away when they went out), keeps its pace.
    The table here is a plain client publishing delayed/hand as the daemon would, once the first page is open (the
    time Chromium takes to start does not count): hand 1 released 7 s ago (the playback is past the turn, the river
    comes in 5 s), then hand 2, released 3 s ago."""
    table_id = "before-1"
    base = f"rfid-table/{table_id}"
    table = plain_table(broker, table_id)
    browser = Chromium(tmp_path / "chromium-profile")
    try:
        there = browser.open_connected(broker.overlay_url(table_id))
        delay_s, now = 10.0, time.time()
        start1 = now - 30.1  # hand 1 dealt from here, ended 13.1 s later, released delay_s after that: now - 7
        start2 = start1 + 14  # hand 2: 3 s long, released now - 3.1
        hand1 = [(0, {"type": "hand_started"}), (0.1, {"type": "card_dealt", "seat": 1, "count": 1, "card": "Ah"}),
                 (0.2, {"type": "card_dealt", "seat": 2, "count": 1, "card": "Kd"}),
                 (0.3, {"type": "card_dealt", "seat": 1, "count": 2, "card": "Qs"}),
                 (0.4, {"type": "card_dealt", "seat": 2, "count": 2, "card": "Jc"}),
                 (3.0, {"type": "board_card", "card": "2d", "street": "flop", "position": 1}),
                 (3.1, {"type": "board_card", "card": "3d", "street": "flop", "position": 2}),
                 (3.2, {"type": "board_card", "card": "4c", "street": "flop", "position": 3}),
                 (6.0, {"type": "board_card", "card": "5h", "street": "turn", "position": 4}),
                 (12.0, {"type": "board_card", "card": "9s", "street": "river", "position": 5}),
                 (13.0, {"type": "showdown", "payouts": {"1": 400}, "finishing_stacks": {"1": 1200, "2": 800}}),
                 (13.1, {"type": "hand_ended", "board": ["2d", "3d", "4c", "5h", "9s"]})]
        hand2 = [(0, {"type": "hand_started"}), (0.1, {"type": "card_dealt", "seat": 1, "count": 1, "card": "7c"}),
                 (0.2, {"type": "card_dealt", "seat": 2, "count": 1, "card": "8c"}), (3.0, {"type": "hand_ended"})]
        dealt = [(1, start1 + at, body) for at, body in hand1] + [(2, start2 + at, body) for at, body in hand2]
        events = [{"seq": seq, "t": t, "hand": hand, "epoch": "e-before", **body}
                  for seq, (hand, t, body) in enumerate(dealt, start=1)]

        def held(upto: int, released: float, released_before: float | None) -> None:
            body = {"epoch": "e-before", "hand": events[upto - 1]["hand"], "seq": upto, "released": released,
                    "released_before": released_before, "events": events[:upto]}
            table.publish(f"{base}/delayed/hand", json.dumps(body).encode(), qos=1, retain=True).wait_for_publish(10)

        held(len(hand1), start1 + 13.1 + delay_s, None)  # hand 1, released 7 s ago
        deadline = time.monotonic() + 15
        while browser.evaluate(there, "state.hand") != 1:
            assert time.monotonic() < deadline, "the page did not take hand 1"
            time.sleep(0.05)
        held(len(events), start2 + 3.0 + delay_s, start1 + 13.1 + delay_s)  # and hand 2
        opened = browser.open(broker.overlay_url(table_id))
        views = {"there": [], "opened": []}
        deadline = time.monotonic() + 25
        while time.monotonic() < deadline and not all(v and v[-1]["hand"] == 2 for v in views.values()):
            for name, page in (("there", there), ("opened", opened)):
                views[name].append(browser.evaluate(page, OBSERVE))
            time.sleep(0.1)
        first = next((v for v in views["opened"] if v["hand"] is not None), None)
        assert first is not None and first["hand"] == 1 and first["board"][:4] == ["2d", "3d", "4c", "5h"], \
            f"{first and first['now'] - now:.1f} s after hand 1's publish the page opened showed {first}"
        assert {s["seat"]: s["cards"] for s in first["seats"]} == {1: ["Ah", "Qs"], 2: ["Kd", "Jc"]}
        # the river on time (5 s after the publish) on the page there all along, and on the other with it
        river = {name: next(v["now"] for v in seen if len(v["board"]) == 5) for name, seen in views.items()}
        assert 3.5 <= river["there"] - now <= 8.0, f"the river came {river['there'] - now:.1f} s after the publish"
        assert abs(river["opened"] - max(river["there"], first["now"])) < 1.0, (river, first["now"])
        for name, seen in views.items():
            result = next(v for v in seen if v["winnerHand"] == 1)
            assert result["hand"] == 1 and "wins 400" in result["winner"], name
            assert seen[-1]["hand"] == 2, f"hand 2 never came to the page {name}: {seen[-1]}"
            shown_from = next(v["now"] for v in seen if v["hand"] == 2)
            assert shown_from - result["now"] >= 2.5, name  # the result stayed on screen first (4 s; 1 without)
    finally:
        browser.close()
        table.publish(f"{base}/delayed/hand", b"", qos=1, retain=True).wait_for_publish(10)
        table.disconnect()
        table.loop_stop()


@needs_chromium
def test_a_page_whose_first_event_is_outside_a_hand_plays_the_next_hand_at_its_pace(broker, tmp_path):
    """A page opened before the first deal gets, first, what happens outside any hand (the floor seats a player):
    nothing was missed there, so the hand released after it plays at the pace it was dealt, without waiting for
    events that never were. The table here is a plain client publishing what the daemon would."""
    table_id = "first-1"
    base = f"rfid-table/{table_id}"
    table = plain_table(broker, table_id)
    browser = Chromium(tmp_path / "chromium-profile")
    try:
        page = browser.open_connected(broker.overlay_url(table_id))
        now = time.time()
        released = [(0.0, None, {"type": "player_seated", "seat": 1, "name": "Anna Müller"}),
                    (0.5, 1, {"type": "hand_started"}),
                    (0.6, 1, {"type": "card_dealt", "seat": 1, "count": 1, "card": "Ah"})]
        for seq, (at, hand, body) in enumerate(released, start=1):
            event = {"seq": seq, "t": now - 3.0 + at, "hand": hand, "epoch": "e-first", **body}
            table.publish(f"{base}/delayed/events", json.dumps(event).encode(), qos=1).wait_for_publish(10)
        deadline = time.monotonic() + 15
        while not (seen := browser.evaluate(page, OBSERVE))["seats"] or not seen["seats"][0]["cards"]:
            assert time.monotonic() < deadline, f"the card never came: {seen}"
            time.sleep(0.05)
        assert seen["seats"][0]["name"] == "Anna Müller" and seen["seats"][0]["cards"] == ["Ah"]
        # dealt 0.6 s after the player was seated; the page waited 5 s at the first event when it took it for a
        # hand joined in the middle
        assert seen["now"] - now < 3.0, f"the first card came {seen['now'] - now:.1f} s after its release"
    finally:
        browser.close()
        table.disconnect()
        table.loop_stop()


PASSWORDS = {"obs-1": "overlay-secret", "table-main-1": "table-secret"}


@pytest.fixture(scope="module")
def card_room():
    """The card room's broker (cardroom.conf) with the files broker-setup makes: a table and an overlay user, and
    the certificate of its TLS listeners (made without being asked)."""
    # Not pytest's tmp_path: as root, mosquitto drops to the user 'mosquitto', who cannot enter that tree.
    work = Path(tempfile.mkdtemp(prefix="rfid-table-overlay-room-"))
    os.chmod(work, 0o755)
    try:
        directory = work / "cardroom"
        argv = ["--dir", str(directory), "--table", "main-1", "--user", "overlay:obs-1"]
        for user, password in PASSWORDS.items():
            argv += ["--password", f"{user}={password}"]
        with redirect_stdout(io.StringIO()):
            assert broker_setup.main(argv) == 0
        with broker_setup.CardRoomBroker(directory) as room:
            yield room
    finally:
        shutil.rmtree(work, ignore_errors=True)


@pytest.fixture
def trusting_chromium(card_room, tmp_path):
    """Chromium that accepts the card room broker's certificate, as a broadcast machine that trusts its ca.crt does:
    that certificate's key is pinned (--ignore-certificate-errors-spki-list, honoured with --user-data-dir); any
    other certificate is still checked."""
    spki = subprocess.run(f"openssl x509 -in {card_room.directory / 'server.crt'} -noout -pubkey | openssl pkey "
                          "-pubin -outform der | openssl dgst -sha256 -binary | base64", shell=True, check=True,
                          capture_output=True, text=True).stdout.strip()
    browser = Chromium(tmp_path / "chromium-profile", extra_args=(f"--ignore-certificate-errors-spki-list={spki}",))
    yield browser
    browser.close()


def test_the_card_room_broker_serves_the_page_on_its_websocket_listener(card_room):
    """broker-setup copies overlay/ where cardroom.conf's http_dir points: a crew needs only the broker's address.
    The page comes over https, with the certificate broker-setup made."""
    import ssl  # noqa: PLC0415 (these card-room tests alone speak TLS)

    trusted = ssl.create_default_context(cafile=str(card_room.directory / "ca.crt"))
    for name in ("index.html", "overlay.js", "vendor/mqtt.min.js"):
        with urllib.request.urlopen(f"https://127.0.0.1:{card_room.ws_port}/{name}?table=main-1", timeout=10,
                                    context=trusted) as got:
            assert got.status == 200 and got.read() == (ROOT / "overlay" / name).read_bytes(), name
    with pytest.raises(urllib.error.HTTPError):  # nothing outside the page's directory
        urllib.request.urlopen(f"https://127.0.0.1:{card_room.ws_port}/../passwd", timeout=10, context=trusted)


@needs_chromium
def test_the_page_logs_in_as_the_overlay_user_from_its_address(card_room, trusting_chromium):
    """Over wss:// only. The page is opened as a local file, with the broker's wss:// address, as a broadcast machine
    does with Mosquitto 2.0.11 (Debian 12): its WebSocket listener offers HTTP/2 over TLS and then cannot serve the
    page with it (Chromium, OBS's browser included: ERR_HTTP2_PROTOCOL_ERROR), docs/broker.md. A local file's
    address, password included, never leaves the machine."""
    table = make_client(MqttSettings(host="127.0.0.1", port=card_room.mqtt_port, username="table-main-1",
                                     password=PASSWORDS["table-main-1"]), "table-main-1")
    table.connect("127.0.0.1", card_room.mqtt_port)
    table.loop_start()
    base = "rfid-table/main-1"
    snapshot = {"table": "main-1", "seq": 7, "t": 1000.0, "hand": None, "phase": "waiting", "epoch": "e1",
                "seats": [{"seat": 1, "cards": 0, "folded": False, "player": {"name": "Anna Müller"}},
                          {"seat": 2, "cards": 0, "folded": False, "player": {"name": "Bo Li"}}],
                "board": [], "betting": None}
    table.publish(f"{base}/public/snapshot", json.dumps(snapshot).encode(), qos=1, retain=True).wait_for_publish(10)
    browser = trusting_chromium
    try:
        page = (card_room.directory / "overlay" / "index.html").as_uri()  # the copy broker-setup installed
        url = f"{page}?table=main-1&broker=wss://127.0.0.1:{card_room.ws_port}/&username=obs-1"
        good = browser.open(url + f"&password={PASSWORDS['obs-1']}")
        wrong = browser.open(url + "&password=guess")

        def view(page):
            return browser.evaluate(page, OBSERVE)

        deadline = time.monotonic() + 15
        while {s["name"] for s in view(good)["seats"]} != {"Anna Müller", "Bo Li"} and time.monotonic() < deadline:
            time.sleep(0.1)
        assert view(good)["connected"] and {s["name"] for s in view(good)["seats"]} == {"Anna Müller", "Bo Li"}
        # what the delayed feed brings (the table writes it after the delay) reaches the overlay user's page
        now = time.time()
        for seq, event in enumerate([{"type": "hand_started"}, {"type": "card_dealt", "seat": 1, "count": 1,
                                                                  "card": "Ah"}], start=8):
            body = {"seq": seq, "t": now, "hand": 1, "epoch": "e1", **event}
            table.publish(f"{base}/delayed/events", json.dumps(body).encode(), qos=1).wait_for_publish(10)
        while not view(good)["seats"][0]["cards"] and time.monotonic() < deadline:
            time.sleep(0.1)
        assert view(good)["seats"][0]["cards"] == ["Ah"]
        # a wrong password in the address: refused, nothing shown
        bad = view(wrong)
        assert not bad["connected"] and not bad["seats"] and bad["connects"] == 0
    finally:
        table.disconnect()
        table.loop_stop()
