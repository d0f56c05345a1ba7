"""The broadcast overlay against hostile and malformed feeds: headless Chromium loads the page from a real Mosquitto,
and a plain MQTT client publishes on the table's topics what a table would, and what none should.

Markup in a card, a seat or a name never runs (no element the page does not make appears, no script flag is set);
a payload of the wrong shape is dropped with one console warning and the next valid message is drawn, also after a
retained bad message that a page gets when it connects; and a seq far ahead is not taken for the table's, so the
table's later events are not dropped as seen (docs/overlay.md, "What the page takes from the feeds").
"""

import itertools
import json
import os
import time

import pytest
from jsonschema import Draft202012Validator

from conftest import ROOT
from browser import Chromium, OBSERVE, needs_chromium
from test_overlay_browser import plain_table

pytestmark = needs_chromium

TITLE = "rfid-table overlay"
EPOCH = "e-hostile"
# Markup that would set a flag and change the title if it became elements; a name fits in 32 characters.
MARKUP = "<img src=x onerror=\"window.__pwned=1;document.title='pwned'\">"
NAME_MARKUP = "<img src=x onerror=__pwned=1>"
SCHEMAS = {name: Draft202012Validator(json.loads((ROOT / "schemas" / f"{name}.schema.json").read_text()))
           for name in ("snapshot.public", "event.public", "event.secure", "hand.delayed")}

# Set up in every page before its own scripts: the console's warnings, and any element the overlay does not make
# (tags it never uses, a script without src, an on* attribute), even one removed again by the next redraw.
WATCH = """(() => {
  const watch = window.__watch = {warnings: [], foreign: []};
  const warn = console.warn.bind(console);
  console.warn = (...args) => { watch.warnings.push(args.map(String).join(' ')); warn(...args); };
  const tags = new Set(['HTML', 'HEAD', 'META', 'TITLE', 'STYLE', 'BODY', 'DIV', 'SPAN', 'SMALL', 'SCRIPT']);
  const check = (el) => {
    if (!tags.has(el.tagName) || (el.tagName === 'SCRIPT' && !el.src) ||
        [...el.attributes].some((a) => a.name.toLowerCase().startsWith('on'))) {
      watch.foreign.push(el.outerHTML.slice(0, 200));
    }
  };
  new MutationObserver((records) => {
    for (const r of records) {
      for (const n of r.addedNodes) if (n.nodeType === 1) [n, ...n.querySelectorAll('*')].forEach(check);
    }
  }).observe(document, {childList: true, subtree: true});
})();"""

HARM = "({foreign: window.__watch.foreign, pwned: window.__pwned ?? null, title: document.title})"


def fits(schema: str, body) -> bool:
    return SCHEMAS[schema].is_valid(body)


def event(seq: int, kind: str, hand: int | None = 1, **fields) -> dict:
    return {"seq": seq, "type": kind, "t": time.time(), "hand": hand, "epoch": EPOCH, **fields}


def seated(seq: int, seat: int, name: str) -> dict:
    return event(seq, "player_seated", hand=None, seat=seat, name=name, by="floor/test")


def board_card(seq: int, position: int, card: str) -> dict:
    street = "flop" if position <= 3 else "turn" if position == 4 else "river"
    return event(seq, "board_card", card=card, street=street, position=position)


def snapshot(seq: int, names: dict[int, str], board: list = ()) -> dict:
    return {"table": "t", "seq": seq, "t": time.time(), "hand": 1 if board else None,
            "phase": "flop" if board else "waiting", "epoch": EPOCH,
            "seats": [{"seat": n, "cards": 0, "folded": False, "player": {"name": name}} for n, name in names.items()],
            "board": list(board), "burns": 0, "mucked": 0, "readers": {}, "deck": "A", "button": 1, "players": None,
            "misdeal": False, "irregularities": [], "betting": None}


def delayed_hand(events: list[dict]) -> dict:
    return {"epoch": EPOCH, "hand": 1, "seq": events[-1]["seq"] if events else 0, "released": time.time(),
            "released_before": None, "events": events}


class Table:
    """A plain MQTT client publishing for one table id; what it retained is cleared at the end."""

    def __init__(self, broker, table_id: str):
        self.id = table_id
        self.base = f"rfid-table/{table_id}"
        self.client = plain_table(broker, table_id)
        self.retained: set[str] = set()

    def send(self, topic: str, body, retain: bool = False) -> None:
        payload = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.client.publish(f"{self.base}/{topic}", payload, qos=1, retain=retain).wait_for_publish(10)
        if retain:
            self.retained.add(topic)

    def close(self) -> None:
        for topic in self.retained:
            self.client.publish(f"{self.base}/{topic}", b"", qos=1, retain=True).wait_for_publish(10)
        self.client.disconnect()
        self.client.loop_stop()


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    chromium = Chromium(tmp_path_factory.mktemp("hostile") / "chromium-profile")
    yield chromium
    chromium.close()


TABLE_IDS = (f"hostile-{os.getpid()}-{n}" for n in itertools.count(1))  # a table of its own for each test


@pytest.fixture
def table(broker):
    opened = Table(broker, next(TABLE_IDS))
    yield opened
    opened.close()


class Pages:
    """Overlay pages opened with WATCH in place, closed at the end."""

    def __init__(self, browser, broker, table_id: str):
        self.browser, self.broker, self.table_id = browser, broker, table_id
        self.sessions: list[str] = []

    def open(self, **query: str) -> str:
        session = self.browser.open_connected(self.broker.overlay_url(self.table_id, **query), before_load=WATCH)
        self.sessions.append(session)
        return session

    def js(self, session: str, expression: str):
        return self.browser.evaluate(session, expression)

    def view(self, session: str) -> dict:
        return self.js(session, OBSERVE)

    @staticmethod
    def wait(condition, what: str, timeout_s: float = 10) -> None:
        deadline = time.monotonic() + timeout_s
        while not condition():
            assert time.monotonic() < deadline, what
            time.sleep(0.05)

    def shown(self, session: str, what: str, condition, timeout_s: float = 10) -> dict:
        """Wait until the page's view (OBSERVE) satisfies ``condition``; returns that view."""
        deadline = time.monotonic() + timeout_s
        while not condition(view := self.view(session)):
            assert time.monotonic() < deadline, f"{what}: {view}"
            time.sleep(0.05)
        return view

    def harmless(self, session: str) -> None:
        harm = self.js(session, HARM)
        assert not harm["foreign"] and harm["pwned"] is None and harm["title"] == TITLE, harm

    def close(self) -> None:
        for session in self.sessions:
            self.browser.close_tab(session)


@pytest.fixture
def pages(browser, broker, table):
    opened = Pages(browser, broker, table.id)
    yield opened
    opened.close()


def names(view: dict) -> dict[int, str]:
    return {s["seat"]: s["name"] for s in view["seats"]}


def status_shown(pages: Pages, page: str, offline: bool) -> None:
    """Wait until the page shows (or no longer shows) "table offline": the status topic is a sync point, what was
    published before it has been handled."""
    pages.wait(lambda: (pages.js(page, "document.getElementById('status').textContent") == "table offline") == offline,
               f"the status tag did not {'show' if offline else 'drop'} 'table offline'")


# ---- markup never runs ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("topic", ["public/snapshot", "public/events", "delayed/events", "delayed/hand"])
def test_markup_in_a_feed_never_runs_and_names_show_as_text(topic, table, pages):
    """A card given as an array with markup in it, a seat given as markup, a name with markup: the page makes no
    element of them and runs nothing; the name (any text is one) shows as it is. The first bad snapshot or
    delayed/hand is retained: it reaches the page when it connects."""
    hand_start = event(1, "hand_started")
    card_array = [MARKUP, "h"]
    retained = topic in ("public/snapshot", "delayed/hand")
    if topic == "public/snapshot":
        bad = [dict(snapshot(5, {1: "Anna"}), board=[card_array]),
               dict(snapshot(5, {}), seats=[{"seat": MARKUP, "cards": 1, "folded": False, "player": {"name": "x"}}])]
        sent = bad
        valid = [snapshot(6, {1: "Anna", 2: NAME_MARKUP}, board=["Ah", "Kd", "2c"])]
        expect = {"names": {1: "Anna", 2: NAME_MARKUP}, "board": ["Ah", "Kd", "2c"], "cards": {}}
    elif topic == "public/events":
        bad = [event(2, "card_dealt", seat=MARKUP, count=1), dict(board_card(2, 1, "Ah"), card=card_array)]
        sent = [hand_start, *bad]
        valid = [board_card(2, 1, "Ah"), seated(3, 2, NAME_MARKUP)]
        expect = {"names": {2: NAME_MARKUP}, "board": ["Ah"], "cards": {}}
    else:
        bad = [event(2, "card_dealt", seat=1, count=1, card=card_array),
               event(2, "card_dealt", seat=MARKUP, count=1, card="Ah"),
               event(2, "fold", seat=1, cards=[card_array])]
        valid = [event(2, "card_dealt", seat=1, count=1, card="Ah"), seated(3, 2, NAME_MARKUP)]
        if topic == "delayed/events":
            sent = [hand_start, *bad]
        else:  # each in a delayed/hand of its own, after the hand's valid start
            sent, valid = [delayed_hand([hand_start, body]) for body in bad], [delayed_hand([hand_start, *valid])]
        expect = {"names": {1: "Seat 1", 2: NAME_MARKUP}, "board": [], "cards": {1: ["Ah"]}}
    assert not any(fits(schema, body) for body in bad for schema in SCHEMAS), "a hostile payload fits a schema"
    if retained:
        table.send(topic, sent.pop(0), retain=True)
    page = pages.open(**({"mode": "public"} if topic.startswith("public") else {}))
    for body in sent:
        table.send(topic, body, retain=retained)
    # what came before the status has been handled once the status shows: nothing was made of it
    table.send("status", b"offline")
    status_shown(pages, page, offline=True)
    pages.harmless(page)
    for body in valid:
        table.send(topic, body, retain=retained)
    view = pages.shown(page, "the valid message after the hostile ones was not drawn",
                       lambda v: names(v) == expect["names"] and v["board"] == expect["board"])
    pages.harmless(page)
    assert {s["seat"]: s["cards"] for s in view["seats"] if s["cards"]} == expect["cards"]


# ---- a bad message stops nothing --------------------------------------------------------------------------------

BAD_JSON = [b"null", b"not json {", b"[]", b'"text"', b"42", b"{}"]
MALFORMED = {
    "public/snapshot": BAD_JSON + [json.dumps(dict(snapshot(9, {1: "A"}), **change)).encode() for change in (
        {"seats": "abc"}, {"seats": [None]}, {"seq": "9"}, {"board": "AhKd"}, {"betting": {"pot": "x"}},
        {"seats": [{"seat": 1, "cards": 0, "folded": False, "player": "Anna"}]}, {"epoch": None})],
    "public/events": BAD_JSON + [json.dumps(body).encode() for body in (
        event(1, "stacks_set", hand=None, stacks=None, by="floor/test"), event(1, "card_dealt", seat=None, count=1),
        event(1, "board_card", card="Ah", street="flop", position=9), dict(seated(1, 1, "A"), seq=1.5),
        dict(seated(1, 1, "A"), t="now"), dict(seated(1, 1, "A"), type=5),
        event(1, "pots", street="flop", collected={}, returned={}, pots=None, total=0),
        event(1, "showdown", order=[], pots=[], payouts=[], finishing_stacks=None))],
    "delayed/events": BAD_JSON + [json.dumps(body).encode() for body in (
        event(1, "equity", street="flop", exact=True, runouts=1, stderr=0, dead=[], hands="abc"),
        event(1, "hand_ended", board=[], live_seats=None, folded_seats=[], hole_cards={"1": "AhKd"}),
        dict(seated(1, 1, "A"), epoch=None), event(1, "stacks_set", hand=None, stacks=None, by="floor/test"))],
    "delayed/hand": BAD_JSON + [json.dumps(dict(delayed_hand([]), **change)).encode() for change in (
        {"events": "abc"}, {"events": None}, {"epoch": None}, {"released": "soon"})],
    "status": [b"maybe", b"\xff\xfe", b'{"online": true}'],
}


def valid_after(topic: str) -> tuple[dict, list, object]:
    """The page's query, what the table sends next on ``topic``, and what the page then shows."""
    if topic == "public/snapshot":
        return {"mode": "public"}, [snapshot(9, {1: "Anna"})], lambda v: names(v) == {1: "Anna"}
    if topic == "public/events":
        return {"mode": "public"}, [seated(1, 1, "Anna")], lambda v: names(v) == {1: "Anna"}
    if topic == "delayed/events":
        return {}, [seated(1, 1, "Anna")], lambda v: names(v) == {1: "Anna"}
    if topic == "delayed/hand":
        events = [event(1, "hand_started"), event(2, "card_dealt", seat=1, count=1, card="Ah")]
        return {}, [delayed_hand(events)], lambda v: [s["cards"] for s in v["seats"]] == [["Ah"]]
    return {}, [b"offline"], lambda v: True


@pytest.mark.parametrize("topic", sorted(MALFORMED))
def test_a_malformed_message_is_dropped_with_one_warning_and_the_next_is_drawn(topic, table, pages):
    """null, wrong types, the wrong kind of JSON or none: each is dropped, the console says so once per topic and
    kind however often it comes (here each comes three times), and the table's next valid message is drawn."""
    query, valid, drawn = valid_after(topic)
    page = pages.open(**query)
    for payload in MALFORMED[topic]:
        if payload[:1] == b"{" and topic != "status":
            assert not any(fits(schema, json.loads(payload)) for schema in SCHEMAS), payload
        for _ in range(3):
            table.send(topic, payload)
    for body in valid:
        table.send(topic, body)
    if topic == "status":
        status_shown(pages, page, offline=True)
    else:
        pages.shown(page, f"after malformed messages on {topic}, a valid one was not drawn", drawn)
    warnings = pages.js(page, "window.__watch.warnings")
    dropped = pages.js(page, "overlayState.dropped")
    assert sum(dropped.values()) == 3 * len(MALFORMED[topic]), dropped
    assert not [key for key in dropped if key.endswith(": failed")], dropped  # each by the checks, none by a crash
    assert len(warnings) == len(dropped), (warnings, dropped)  # one per topic and kind
    assert all(topic in w for w in warnings), warnings
    pages.harmless(page)


def test_a_retained_bad_message_does_not_freeze_a_page_opened_after_it(table, pages):
    """A page gets the retained snapshot, delayed/hand and status when it connects: bad ones there are dropped at
    every connection, and what the table sends next is drawn."""
    table.send("public/snapshot", b"null", retain=True)
    table.send("delayed/hand", dict(delayed_hand([]), events="abc"), retain=True)
    table.send("status", b"<b>offline</b>", retain=True)
    opened = {"public": pages.open(mode="public"), "delayed": pages.open()}
    table.send("public/snapshot", snapshot(3, {1: "Anna", 2: "Bo"}), retain=True)
    table.send("status", b"offline", retain=True)
    for mode, page in opened.items():
        view = pages.shown(page, f"the {mode} page stayed frozen by the retained bad messages",
                           lambda v: names(v) == {1: "Anna", 2: "Bo"})
        assert view["connected"]
        status_shown(pages, page, offline=True)
        assert set(pages.js(page, "overlayState.dropped")) == (
            {"rfid-table/" + pages.table_id + t for t in ("/public/snapshot: snapshot", "/status: status")}
            | ({f"rfid-table/{pages.table_id}/delayed/hand: delayed hand"} if mode == "delayed" else set()))
    # and the table's next delayed hand plays on the delayed page
    events = [event(1, "hand_started"), event(2, "card_dealt", seat=1, count=1, card="Ah")]
    table.send("delayed/hand", delayed_hand(events), retain=True)
    pages.shown(opened["delayed"], "the table's delayed hand after the bad one was not played",
                lambda v: {s["seat"]: s["cards"] for s in v["seats"]}.get(1) == ["Ah"])


# ---- a seq far ahead --------------------------------------------------------------------------------------------

def test_an_event_with_a_seq_far_ahead_does_not_make_the_page_drop_the_next(table, pages):
    """One event with seq 10^15, valid in every other way: the page drops it and resynchronises, and the table's
    next events are drawn. It never shows the stray event, nor keeps it to play. (Nor one with seq 10^20, which the
    schema allows too but no browser can count exactly.)"""
    public, delayed = pages.open(mode="public"), pages.open()
    table.send("public/snapshot", snapshot(10, {1: "Anna"}))
    strays = [seated(10 ** 15, 2, "Stray"), seated(10 ** 20, 3, "Stray")]
    assert all(fits("event.public", e) and fits("event.secure", e) for e in strays)  # any integer from 1 is a seq
    for topic in ("public/events", "delayed/events"):
        table.send(topic, event(11, "hand_started"))
        table.send(topic, board_card(12, 1, "Ah"))
        for stray in strays:
            table.send(topic, stray)
        for seq, card in ((13, "Kd"), (14, "2c"), (15, "7s")):
            table.send(topic, board_card(seq, seq - 11, card))
    for page in (public, delayed):
        view = pages.shown(page, "the events after the stray seq were dropped",
                           lambda v: v["board"] == ["Ah", "Kd", "2c", "7s"])
        assert names(view) == {1: "Anna"}
        assert pages.js(page, "overlayState.lastSeq") == 15
    assert pages.js(delayed, "queue.length") == 0  # nothing held back to play later either


def test_a_retained_snapshot_with_a_seq_far_ahead_gives_way_to_the_tables_next(table, pages):
    """A stray retained snapshot with seq 10^15 reaches a page at its connection: the table's own next snapshot,
    far behind it, replaces it, and the events after that are drawn."""
    table.send("public/snapshot", snapshot(10 ** 15, {1: "Stray"}), retain=True)
    page = pages.open(mode="public")
    pages.shown(page, "the retained snapshot was not taken", lambda v: names(v) == {1: "Stray"})
    table.send("public/snapshot", snapshot(20, {1: "Anna"}), retain=True)
    for seq, card in ((21, "Ah"), (22, "Kd"), (23, "2c")):
        table.send("public/events", board_card(seq, seq - 20, card))
    view = pages.shown(page, "the table's events after the stray snapshot were dropped",
                       lambda v: v["board"] == ["Ah", "Kd", "2c"])
    assert names(view) == {1: "Anna"} and pages.js(page, "overlayState.lastSeq") == 23
