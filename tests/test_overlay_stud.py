"""The overlay at a stud table, in headless Chromium: a stud hi-lo hand dealt through the simulated antennas, its
events as the table publishes them (public and, for the delayed feed, secure) sent by a plain MQTT client, as
tests/test_overlay_hilo.py does. A public page shows each seat's up cards at once and backs for its down cards, the
street and the bring-in; a delayed page shows the down cards too, marked as down, the low half's equity, and at the
showdown each hand's high and low."""

import pytest

from browser import needs_chromium
from rfid_table.service.equity_worker import GameKind, compute, equity_event, stud_spot_of
from test_overlay_hostile import EPOCH, Pages, browser, fits, snapshot, table  # noqa: F401
from test_stud_table import street, table as stud_table, third_street

pytestmark = needs_chromium

NAMES = {1: "Anna", 2: "Bo", 3: "Cem"}
# a seat's cards as drawn, left to right: a face ("Jh"; "Jh down" for a down card shown), or "back"
CARDS = """((n) => [...document.querySelectorAll(`#seats .seat[data-seat='${n}'] .cards .card`)].map((c) =>
  c.dataset.card ? c.dataset.card + (c.classList.contains('down') ? ' down' : '') : 'back'))"""
TEXT = "((sel) => [...document.querySelectorAll(sel)].map((e) => e.textContent))"


@pytest.fixture
def pages(browser, broker, table):  # noqa: F811
    opened = Pages(browser, broker, table.id)
    yield opened
    opened.close()


def stud8_hand() -> tuple[list[dict], list[dict], int, dict]:
    """A stud8 hand as the table publishes it: (public payloads, secure payloads, the seq after sixth street's
    equity, the public snapshot then). Anna makes the wheel (a straight, and the best low); Bo a flush and no low;
    Cem folds on fourth."""
    t = stud_table(players=(1, 2, 3), game="stud8")
    third_street(t, {1: "As 2d 9c", 2: "Qh Kh 8h", 3: "6s 7s Tc"})
    street(t, "Ac", {1: "Jh", 2: "Kc", 3: "2c"})
    for card in ("6s", "7s", "Tc", "2c"):
        t.put(card, "muck")
    street(t, "Ad", {1: "3s", 2: "7h"})
    street(t, "Ah", {1: "5d", 2: "Ks"})
    # the equity the table publishes once sixth street is out (the worker's computation, numbered by the table)
    body = compute(stud_spot_of(t.controller.snapshot(secure=True)), GameKind(7, False, True, "stud8"))
    equity = equity_event(t.controller, t.events[-1].t, body)
    t.events.append(equity)
    sixth = {**t.controller.snapshot(secure=False), "epoch": EPOCH}
    for entry in sixth["seats"]:
        entry["player"] = {"name": NAMES[entry["seat"]]} if entry["seat"] in NAMES else None
    street(t, "9d", {1: "4c", 2: "2h"}, up=False)
    t.clear()
    t.run(2.5)
    public, secure = t.published(), t.published(secure=True)
    for payload in public + secure:
        payload["epoch"] = EPOCH
        if payload["type"] == "hand_started":
            payload["game"] = "stud8"  # (a table configured with its game names it: the driver's table has none)
    assert [p["seq"] for p in public] == list(range(1, len(public) + 1))  # gapless, as the page expects
    assert all(fits("event.public", p) for p in public) and all(fits("event.secure", p) for p in secure)
    return public, secure, equity.seq, sixth


def test_a_stud_hand_shows_up_cards_at_once_and_down_cards_after_the_delay(table, pages):  # noqa: F811
    public, secure, equity_seq, sixth = stud8_hand()
    (bring_in,) = [p for p in public if p["type"] == "bring_in"]
    assert bring_in["seat"] == 2  # Bo's door card, the eight of hearts, is the lowest (PP Ties 1)
    table.send("public/snapshot", {**snapshot(0, NAMES), "game": "stud8"}, retain=True)
    live, delayed = pages.open(mode="public"), pages.open(speed="20")

    def send_public(upto):  # the public feed up to and including the event of seq ``upto``
        for p in [p for p in public if sent[0] < p["seq"] <= upto]:
            table.send("public/events", p)
        sent[0] = upto

    sent = [0]
    send_public(bring_in["seq"])
    pages.wait(lambda: pages.js(live, f"{TEXT}('#street')") == ["3rd street"], "no street on the public page")
    assert pages.js(live, f"{TEXT}('.seat .bring-in')") == ["BRING-IN"]
    assert pages.js(live, f"{TEXT}('.seat[data-seat=\"2\"] .bring-in')") == ["BRING-IN"]
    assert pages.js(live, f"{CARDS}(1)") == ["back", "back", "9c"]
    send_public(equity_seq)
    pages.wait(lambda: pages.js(live, f"{TEXT}('#street')") == ["6th street"], "sixth street not shown")
    assert pages.js(live, f"{CARDS}(1)") == ["back", "back", "9c", "Jh", "3s", "5d"]
    assert pages.js(live, f"{CARDS}(2)") == ["back", "back", "8h", "Kc", "7h", "Ks"]
    assert pages.js(live, f"{TEXT}('.seat .bring-in')") == []  # third street's alone
    assert pages.js(live, "document.querySelector('.seat[data-seat=\"3\"]').classList.contains('folded')")
    # a page opened now takes the up cards from the public snapshot
    table.send("public/snapshot", sixth, retain=True)
    joined = pages.open(mode="public")
    pages.wait(lambda: pages.js(joined, f"{CARDS}(2)") == ["back", "back", "8h", "Kc", "7h", "Ks"],
               f"the snapshot's up cards not drawn: {pages.js(joined, f'{CARDS}(2)')}")
    assert pages.js(joined, f"{TEXT}('#street')") == ["6th street"]
    send_public(public[-1]["seq"])
    pages.wait(lambda: pages.js(live, f"{CARDS}(1)") == ["back", "back", "9c", "Jh", "3s", "5d", "back"],
               "seventh street's down card not drawn as a back")
    # no down card ever reached the public page, in the page or in its state
    down = {"As", "2d", "4c", "Qh", "Kh", "2h", "6s", "7s"}
    assert not down & set(pages.view(live)["stateCards"]) and pages.view(live)["stateEquity"] == 0

    for p in secure:  # the delayed feed: the same hand, down cards and equity included, once the delay is over
        table.send("delayed/events", p)
    (equity,) = [p for p in secure if p["type"] == "equity"]
    assert equity["street"] == "sixth"
    low = {h["seat"]: h["low_win"] for h in equity["hands"]}
    pages.wait(lambda: pages.js(delayed, f"{TEXT}('.seat[data-seat=\"1\"] .equity .low')") ==
               [f"low {low[1] * 100:.1f}%"], "the low half's equity not shown", timeout_s=20)
    pages.wait(lambda: pages.js(delayed, "window.overlayState.result"), "no showdown played back", timeout_s=20)
    assert pages.js(delayed, f"{CARDS}(1)") == ["As down", "2d down", "9c", "Jh", "3s", "5d", "4c down"]
    assert pages.js(delayed, f"{CARDS}(2)") == ["Qh down", "Kh down", "8h", "Kc", "7h", "Ks", "2h down"]
    assert pages.js(delayed, f"{TEXT}('#street')") == ["7th street"]
    assert pages.js(delayed, f"{TEXT}('.seat .made')") == ["Straight, five high · 5-4-3-2-A low",
                                                          "Flush, king high"]
