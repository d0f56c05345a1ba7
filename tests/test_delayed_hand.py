"""delayed/hand: the retained copy of what the delayed feed has released of the hand being played back, from which a
broadcast overlay takes back the events it missed (a broker outage, a subscription made late) or, opened during a
playback, the hand so far.

First the pipeline against a recording sink (what the message holds, how often it goes, across a restart), then
the real thing: the daemon's publisher and a real Mosquitto without persistence, a subscriber acting as the page
that misses part of the hand, a broker restart, and the hand whole again from delayed/hand. The page itself, in a
browser, is in tests/test_overlay_browser.py.
"""

import dataclasses
import json
import threading
import time

import pytest

from conftest import ROOT, Recorder
from rfid_table.config.table import MqttSettings, load_config
from rfid_table.devtools.simulate import SimOptions, SimulatedTable
from rfid_table.ops.broker import PrivateBroker
from rfid_table.mqtt import make_client
from rfid_table.service.contract import Topics
from rfid_table.service.journal import Journal
from rfid_table.service.publisher import MqttPublisher
from test_delayed_feed import RecordingSink as DelayedFeedSink, play


@pytest.fixture
def chips_config(mqtt_settings):
    """The shipped table with a chip set (so a hand ends with a showdown), pointed at the test broker."""
    return dataclasses.replace(load_config(ROOT / "config" / "table-chips.toml"), mqtt=mqtt_settings)


class RecordingSink(DelayedFeedSink):
    """Takes every delayed event at once and records each delayed/hand with the table time it was handed over."""

    def __init__(self):
        super().__init__()
        self.hands: list = []  # (published at, events, released)
        self.released_before: list = []  # each delayed/hand's, in the same order

    def publish_delayed_hand(self, events, released, released_before):
        self.hands.append((self.now, list(events), released))
        self.released_before.append(released_before)


def released_so_far(sink, at):
    """The delayed feed's events released up to table time ``at``, from the hand before the newest one on."""
    events = [e for when, e in sink.delayed if when <= at]
    starts = [i for i, e in enumerate(events) if e.type == "hand_started"]
    return events[starts[-2]:] if len(starts) >= 2 else events


@pytest.mark.parametrize("release", ["hand", "time"])
def test_delayed_hand_holds_what_the_feed_released_of_the_hand_being_played_back(chips_config, tmp_path, release):
    config = dataclasses.replace(chips_config, broadcast_delay_s=5.0, broadcast_release=release)
    sink = RecordingSink()
    play(config, tmp_path / "journal.db", sink, hands=3, seed=4, start=1000.0, linger_s=20.0)
    assert len({e.hand for _, e in sink.delayed if e.type == "hand_started"}) == 3
    for at, events, released in sink.hands:
        assert [e.seq for e in events] == [e.seq for e in released_so_far(sink, at)], f"at {at}"
        # stamped when the newest hand's start went out: the table time here, as the events' own t
        newest = [e for e in events if e.type == "hand_started"][-1:] or events[:1]
        released_at = {e.seq: when for when, e in sink.delayed}
        assert released == released_at[newest[0].seq]
    # and when the hand before's start went out, once there is one: an overlay opened while that hand is still
    # played back joins it there
    for (at, events, _), released_before in zip(sink.hands, sink.released_before):
        starts = [e for e in events if e.type == "hand_started"]
        before = starts[0] if len(starts) == 2 and events[0] is starts[0] else None
        assert released_before == (released_at[before.seq] if before else None), f"at {at}"
    assert any(b is not None for b in sink.released_before)
    # at most one a second (table time)
    times = [at for at, _, _ in sink.hands]
    assert all(b - a >= 1.0 - 1e-9 for a, b in zip(times, times[1:]))
    # Each hand is there whole, result included, until the hand after the next one starts: a page that was away
    # over the start of the next hand still finds the end of its own.
    for hand in (1, 2):
        whole = [e.seq for _, e in sink.delayed if e.hand == hand]
        last = [events for _, events, _ in sink.hands if any(e.hand == hand for e in events)][-1]
        assert set(whole) <= {e.seq for e in last} and {"showdown", "hand_ended"} <= {e.type for e in last
                                                                                      if e.hand == hand}
    # and the newest one says what the feed has released by the end
    assert sink.hands[-1][1] == released_so_far(sink, float("inf"))


def test_after_a_restart_delayed_hand_comes_back_from_the_journal(chips_config, tmp_path):
    config = dataclasses.replace(chips_config, broadcast_delay_s=8.0, broadcast_release="hand")
    first = RecordingSink()
    # Stop 3 s after the second hand ended: hand 1 is out, what overlays play back; hand 2 still waits.
    t = play(config, tmp_path / "journal.db", first, hands=2, seed=9, start=1000.0, linger_s=3.0)
    assert {e.hand for _, e in first.delayed} == {None, 1}  # (an event before the first hand)
    assert first.hands[-1][1] == released_so_far(first, float("inf"))
    second = RecordingSink()
    play(config, tmp_path / "journal.db", second, hands=0, seed=10, start=t + 1, linger_s=1.0)  # hand 2 not due
    # The broker (without persistence) may have lost it: the restarted daemon sends it again, from the journal,
    # without the release time it no longer knows.
    _at, events, released = second.hands[0]
    assert [e.seq for e in events] == [e.seq for e in released_so_far(first, float("inf"))]
    assert [e.payload(True) for e in events] == [e.payload(True) for e in released_so_far(first, float("inf"))]
    assert released is None and second.released_before[0] is None


def test_a_table_that_stops_leaves_delayed_hand_with_the_last_seconds_release_too(chips_config, tmp_path):
    """delayed/hand goes out at most once a second, so what the feed released in the last second before a stop
    was in none of them; at the stop (``rfid-table run``'s shutdown, the simulator's end) it goes out whole."""
    config = dataclasses.replace(chips_config, broadcast_delay_s=2.0, broadcast_release="time")
    sink = RecordingSink()
    journal = Journal(tmp_path / "journal.db", feeds=("public", "secure", "delayed"))
    journal.open()
    table = SimulatedTable(config, SimOptions(hands=2, seed=4, speed=0, pace_s=0.5, link="direct"), sink, journal)
    table.pipeline.restore(1000.0)
    t = 1000.0
    # Into the second hand, up to a cycle whose release came after the last delayed/hand: the table stops there.
    while not (sink.hands and any(e.hand == 2 for _, e in sink.delayed)
               and sink.delayed[-1][1].seq > sink.hands[-1][1][-1].seq):
        assert table.advance(t), "the hands ended before such a cycle"
        sink.now = t
        table.step(t)
        t += table.cycle_s
    missing = [e.seq for _, e in sink.delayed if e.seq > sink.hands[-1][1][-1].seq]
    table.pipeline.finish_delayed_hand()
    journal.close()
    assert sink.hands[-1][1] == released_so_far(sink, float("inf"))  # the missing ones included
    assert set(missing) <= {e.seq for e in sink.hands[-1][1]}
    table.pipeline.finish_delayed_hand()  # nothing new released: nothing sent again
    assert len([h for h in sink.hands if h[1][-1].seq == sink.delayed[-1][1].seq]) == 1


# ---- through the real broker -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def own_broker():
    """A broker of this module's own, since it is restarted (config/mosquitto/private.conf: no persistence)."""
    with PrivateBroker() as running:
        yield running


class Page:
    """A subscriber that does what the delayed overlay does with its feeds: a clean session on every connection,
    delayed/events and delayed/hand, events merged by seq (a copy seen already dropped)."""

    def __init__(self, broker, base: str):
        self.broker, self.base = broker, base
        self.events: dict[int, dict] = {}
        self.hands: list[dict] = []  # the delayed/hand messages of the current connection
        self.lock = threading.Lock()
        self.client = None

    def connect(self) -> None:
        subscribed = threading.Event()
        with self.lock:
            self.hands = []
        self.client = make_client(MqttSettings(host=self.broker.host, port=self.broker.port),
                                  f"page-{time.monotonic_ns()}")
        self.client.on_connect = lambda c, u, f, rc, p: c.subscribe(
            [(f"{self.base}/delayed/hand", 1), (f"{self.base}/delayed/events", 1)])
        self.client.on_subscribe = lambda *args: subscribed.set()
        self.client.on_message = self._message
        self.client.connect(self.broker.host, self.broker.port)
        self.client.loop_start()
        assert subscribed.wait(10)

    def _message(self, client, userdata, message) -> None:
        body = json.loads(message.payload)
        with self.lock:
            if message.topic.endswith("/delayed/hand"):
                self.hands.append(body)
                for event in body["events"]:
                    self.events.setdefault(event["seq"], event)
            else:
                self.events.setdefault(body["seq"], body)

    def seqs(self) -> list[int]:
        with self.lock:
            return sorted(self.events)

    def disconnect(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def test_a_page_that_missed_events_or_came_late_gets_the_whole_hand_after_a_broker_restart(own_broker, tmp_path):
    settings = MqttSettings(host=own_broker.host, port=own_broker.port)
    config = dataclasses.replace(load_config(ROOT / "config" / "table-chips.toml"), mqtt=settings, broadcast_delay_s=2.0, broadcast_release="hand")
    base = Topics.for_table(settings.topic_prefix, config.table_id).base
    journal = Journal(tmp_path / "journal.db", feeds=("public", "secure", "delayed"))
    assert journal.open().ok
    publisher = MqttPublisher(settings, config.table_id, epoch=journal.epoch)
    table = SimulatedTable(config, SimOptions(hands=1, seed=5, speed=0, pace_s=0.5, link="direct"), publisher,
                           journal)
    t = time.time()
    table.pipeline.restore(t)
    feed = Recorder(settings, f"{base}/delayed/events")  # what the delayed feed sent, in full
    page = Page(own_broker, base)
    page.connect()
    assert publisher.start()

    dealing = True

    def run_until(condition, what: str, limit_s: float = 60.0) -> None:
        nonlocal t, dealing
        deadline = time.monotonic() + limit_s
        while not condition():
            assert time.monotonic() < deadline, f"not within {limit_s} s: {what}"
            dealing = dealing and table.advance(t)  # once the hand is over the clock goes on, for the delay
            table.step(t)
            publisher.service(0.001)
            t += table.cycle_s

    try:
        # The page sees the start of the hand's playback, then is away while the rest goes out.
        run_until(lambda: len(page.seqs()) >= 5 and any(e["type"] == "hand_started" for e in feed.json("")),
                  "the first events of the hand on delayed/events")
        page.disconnect()
        seen = page.seqs()
        run_until(lambda: any(e["type"] == "hand_ended" for e in feed.json("")), "the whole hand released")  # its last event
        released = [e for e in feed.json("") if e["hand"] == 1]
        assert set(range(released[0]["seq"], released[-1]["seq"] + 1)) - set(seen), "the page missed nothing"
        # The broker restarts without persistence: its retained messages are gone, the daemon sends delayed/hand
        # again when it is back.
        own_broker.stop()
        run_until(lambda: not publisher.connected, "the publisher noticed", 20)
        own_broker.start()
        run_until(lambda: publisher.connected, "the publisher reconnected", 30)
        late = Page(own_broker, base)  # a page opened only now
        late.connect()
        page.connect()  # the first page back, with a clean session
        run_until(lambda: page.hands and late.hands, "delayed/hand on both pages", 20)
        for who in (page, late):
            got = {seq: who.events[seq] for seq in who.seqs() if who.events[seq]["hand"] == 1}
            assert list(got.values()) == released  # the whole hand, as delayed/events carried it
            assert {"showdown", "hand_ended"} <= {e["type"] for e in got.values()}
        hand = late.hands[0]
        assert hand["hand"] == 1 and hand["seq"] == hand["events"][-1]["seq"] and hand["epoch"] == journal.epoch
        assert isinstance(hand["released"], float) and hand["released"] >= released[0]["t"]
        late.disconnect()
    finally:
        feed.close()
        if page.client is not None:
            page.disconnect()
        publisher.stop()
        journal.close()
