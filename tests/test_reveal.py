"""The live feed's reveal policies ([broadcast] reveal): a broadcast without delay sees a hole card on live/events
only when the house's policy shows it, and nowhere else; never a hand that went to the muck unshown.

Seeded hands on the simulated chip table (uncontested pots, showdowns, an all-in), through the daemon's publisher and
a real Mosquitto; the secure feed of the same run is the truth the live feed is judged against, event by event. The
simulated dealer never mucks a hand at the showdown: that case is played by hand at the end.
"""

import dataclasses
import json
import subprocess
from collections import defaultdict

import pytest

from conftest import ROOT
from controller import DomainEvent
from rfid_table.config.table import load_config
from rfid_table.devtools.simulate import SimOptions, SimulatedTable
from rfid_table.service.daemon import StopFlag
from rfid_table.service.journal import Journal
from rfid_table.service.live_feed import LiveFeed
from rfid_table.service.publisher import MqttPublisher
from rfid_table.service.timebase import TableClock
from test_broker_security import MAIN, NOT_AUTHORIZED, P, connect, marker, ok, room, workdir  # noqa: F401 (fixtures)
from test_schemas import problems

HANDS = 8  # at seed 1 with six players: three uncontested pots, four showdowns, one of them after an all-in


def play(config, recorder_factory, journal_path, runs: list[tuple[int, int]]):
    """Play each run's hands (hands, seed) at full speed, as the daemon does with its journal, restarted between runs;
    the secure, public and live events a subscriber received, by type of feed."""
    base = f"rfid-table/{config.table_id}"
    recorder = recorder_factory(f"{base}/#")
    for hands, seed in runs:
        journal = Journal(journal_path, feeds=("public", "secure", "delayed"))
        assert journal.open().ok
        publisher = MqttPublisher(config.mqtt, config.table_id, epoch=journal.epoch)
        table = SimulatedTable(config, SimOptions(hands=hands, seed=seed, speed=0, pace_s=0.5, link="direct",
                                                  players=6), publisher, journal)
        clock = TableClock()
        clock.resume(journal)  # as `rfid-table sim --journal` and the daemon start
        table.pipeline.restore(clock.now())
        assert publisher.start(), "the publisher could not reach the test broker"
        table.run(StopFlag(), publisher, clock)
        publisher.stop()
        journal.close()
    recorder.sync()
    feeds = {feed: recorder.json(f"/{feed}/events") for feed in ("secure", "public", "live")}
    feeds["raw live"] = [(t, p.decode()) for t, p, _ in recorder.messages if t.endswith("/live/events")]
    for message in feeds["live"]:
        assert not problems("event.live.schema.json", message) + problems("event.public.schema.json", message["event"])
    # a live message is its public event and what the policy shows beside it: flattened here for the checks below
    feeds["live"] = [{**m["event"], **({"revealed": m["revealed"]} if "revealed" in m else {})} for m in feeds["live"]]
    feeds["live"] = [e for e in feeds["live"] if e["epoch"] == publisher.epoch]
    for feed in ("secure", "public"):  # what the restart sent again (at least once): its copies are dropped by seq
        feeds[feed] = sorted({e["seq"]: e for e in reversed(feeds[feed]) if e["epoch"] == publisher.epoch}.values(),
                             key=lambda e: e["seq"])
    return feeds


@pytest.fixture
def chips_config(mqtt_settings):
    return dataclasses.replace(load_config(ROOT / "config" / "table-chips.toml"), mqtt=mqtt_settings,
                               table_id="reveal-1")


def test_never_is_the_default_and_publishes_no_live_feed(chips_config, recorder_factory, tmp_path):
    assert chips_config.broadcast_reveal == "never"
    feeds = play(chips_config, recorder_factory, tmp_path / "journal.db", [(2, 3)])
    assert [e["type"] for e in feeds["secure"]].count("hand_ended") == 2
    assert feeds["live"] == []


class Hand:
    """One hand as the secure feed tells it: the truth for the live feed."""

    def __init__(self, events: list[dict]):
        self.events = events
        self.hole: dict[int, list[str]] = defaultdict(list)
        self.folded_at: dict[int, int] = {}  # seat → seq of the fold event (its cards reached the muck)
        self.all_in_at: int | None = None  # seq of the first all-in action
        for e in events:
            if e["type"] == "card_dealt":
                self.hole[e["seat"]].append(e["card"])
            elif e["type"] == "fold":
                self.folded_at.setdefault(e["seat"], e["seq"])
            elif e["type"] == "action" and e["all_in"] and self.all_in_at is None:
                self.all_in_at = e["seq"]
        self.ended = next(e for e in events if e["type"] == "hand_ended")
        self.showdown = next((e for e in events if e["type"] == "showdown"), None)

    def actions_after(self, seq: int) -> list[dict]:
        return [e for e in self.events if e["type"] == "action" and e["seq"] > seq]


@pytest.mark.slow
@pytest.mark.parametrize("policy", ["showdown", "all_in", "hand_end"])
def test_the_live_feed_shows_hole_cards_only_when_the_policy_does(chips_config, recorder_factory, tmp_path, policy):
    # the table restarts once, between hands: the policy reads the journal back and the numbering goes on
    feeds = play(dataclasses.replace(chips_config, broadcast_reveal=policy), recorder_factory, tmp_path / "journal.db",
                 [(HANDS, 1), (1, 2)])
    secure, public, live = feeds["secure"], feeds["public"], feeds["live"]
    assert [e["type"] for e in secure].count("hand_ended") == HANDS + 1
    # The same events as the public feed, in the same order; a live payload is the public one but for `revealed`.
    assert [e["seq"] for e in live] == [e["seq"] for e in public] == [e["seq"] for e in secure]
    for shown, plain in zip(live, public):
        assert {k: v for k, v in shown.items() if k != "revealed"} == plain

    by_hand = defaultdict(list)
    for event in secure:
        by_hand[event["hand"]].append(event)
    hands = {number: Hand(events) for number, events in by_hand.items() if number is not None}
    kinds = defaultdict(int)  # the type of event each hand's first reveal came on
    for event in live:
        if "revealed" not in event:
            continue
        hand = hands[event["hand"]]
        revealed = {int(seat): cards for seat, cards in event["revealed"].items()}
        first = all("revealed" not in e for e in live if e["hand"] == event["hand"] and e["seq"] < event["seq"])
        if first:
            kinds[event["type"]] += 1
        for seat, cards in revealed.items():
            assert cards == hand.hole[seat], f"seq {event['seq']}: seat {seat} shown with cards it was not dealt"
            mucked = hand.folded_at.get(seat)
            if event["type"] in ("pots", "run_it_agreed"):  # all_in: the players table their hands (TDA)
                assert policy == "all_in", f"seq {event['seq']}: {policy} showed cards at an all-in"
                assert hand.all_in_at is not None and hand.all_in_at < event["seq"]
                assert not hand.actions_after(event["seq"]), f"seq {event['seq']}: shown, and the betting went on"
                assert mucked is None or mucked > event["seq"], f"seq {event['seq']}: a mucked hand shown"
            else:
                assert event["type"] in ("showdown", "hand_ended"), f"seq {event['seq']}: shown on {event['type']}"
                # a hand shown earlier at the all-in is shown again; otherwise never a hand that reached the muck
                tabled_at_all_in = policy == "all_in" and any(
                    "revealed" in e and str(seat) in e["revealed"] and e["type"] in ("pots", "run_it_agreed")
                    for e in live if e["hand"] == event["hand"])
                assert mucked is None or tabled_at_all_in, f"seq {event['seq']}: seat {seat}'s mucked hand shown"
                at_showdown = hand.showdown is not None and str(seat) in hand.showdown.get("hands", {})
                ended_live = seat in hand.ended["live_seats"]
                assert at_showdown or tabled_at_all_in or (policy == "hand_end" and ended_live), (
                    f"seq {event['seq']}: seat {seat} shown by {policy} neither at the showdown nor at its end")
    # Each policy showed something, where it shows it.
    assert kinds["showdown"] > 0
    if policy == "all_in":
        assert kinds["pots"] + kinds["run_it_agreed"] > 0, "no all-in showed the hands before the showdown"
    else:
        assert kinds["pots"] + kinds["run_it_agreed"] == 0
    uncontested = [n for n, h in hands.items() if len(h.ended["live_seats"]) == 1]
    shown_uncontested = [n for n in uncontested
                         if any("revealed" in e for e in live if e["hand"] == n and e["type"] == "hand_ended")]
    assert uncontested
    if policy == "hand_end":
        assert shown_uncontested == uncontested  # the uncontested winner's cards, at the end
    elif policy == "showdown":
        assert shown_uncontested == []

    # The overlay's live mode (?mode=live) shows the hands the feed showed: here the last hand that showed some, as
    # the page has it once that hand's hand_ended arrived.
    last = max(e["hand"] for e in live if "revealed" in e)
    end = next(i for i, e in enumerate(live) if e["hand"] == last and e["type"] == "hand_ended")
    raw = [(topic, text) for topic, text in feeds["raw live"] if f'"epoch":"{live[0]["epoch"]}"' in text][:end + 1]
    done = subprocess.run(["node", str(ROOT / "tests" / "overlay_live_harness.js"), str(ROOT / "overlay" / "overlay.js"),
                           chips_config.table_id], input=json.dumps(raw), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    page = json.loads(done.stdout)
    shown = {int(seat): cards for seat, cards in live[end]["revealed"].items()}
    assert page["hand"] == last
    assert {int(seat): cards for seat, cards in page["seats"].items() if cards} == shown



def test_a_folded_hand_and_a_hand_mucked_at_the_showdown_are_never_shown():
    """What the simulated dealer never does, played by hand: seat 3 folds, seat 1 is all-in and seat 2 calls with
    chips behind (no more betting), and at the showdown seat 2's cards go to the muck before seat 1 takes the pot."""
    hole = {1: ["As", "Kd"], 2: ["7h", "7c"], 3: ["2c", "3d"]}
    stream = [("hand_started", {}, {})]
    stream += [("card_dealt", {"seat": seat, "count": n + 1}, {"card": cards[n]})
               for n in (0, 1) for seat, cards in hole.items()]
    stream += [("betting_started", {"seats": [1, 2, 3]}, {}),
               ("action", {"seat": 3, "action": "fold", "all_in": False}, {}),
               ("fold", {"seat": 3}, {"cards": hole[3]}),
               ("action", {"seat": 1, "action": "all_in", "all_in": True}, {}),
               ("action", {"seat": 2, "action": "call", "all_in": False}, {}),
               ("pots", {"street": "preflop"}, {}),
               ("fold", {"seat": 2}, {"cards": hole[2]}),  # mucked at the showdown
               ("showdown", {"order": [1, 2], "winners": [1]}, {"hands": {"1": hole[1], "2": hole[2]}}),
               ("hand_ended", {"live_seats": [1], "folded_seats": [2, 3]}, {"hole_cards": {"1": hole[1]}})]
    events = [DomainEvent(seq, kind, float(seq), 1, public, secret)
              for seq, (kind, public, secret) in enumerate(stream, 1)]
    shown = {}
    for policy in ("showdown", "all_in", "hand_end"):
        messages = LiveFeed(policy).payloads(events)
        assert [m["event"] for m in messages] == [e.payload(secure=False) for e in events]
        shown[policy] = {m["event"]["type"]: m["revealed"] for m in messages if "revealed" in m}
    assert shown["showdown"] == shown["hand_end"] == {"showdown": {"1": hole[1]}, "hand_ended": {"1": hole[1]}}
    tabled = {"1": hole[1], "2": hole[2]}  # at the all-in both hands are tabled: the later muck cannot take it back
    assert shown["all_in"] == {"pots": tabled, "hand_ended": tabled}
    # After a restart the policy reads the journal's newest events back first: it goes on as if it never stopped.
    for policy in ("showdown", "all_in", "hand_end"):
        whole = LiveFeed(policy).payloads(events)
        for stop in range(1, len(events)):
            restarted = LiveFeed(policy)
            restarted.prime(events[:stop])
            assert restarted.payloads(events[stop:]) == whole[stop:], (policy, stop)


def test_the_live_feed_reaches_overlays_and_the_floor_only(room, connect):
    """The card room's ACL (broker-setup): live/events is the broadcast's. The overlay and the floor read it; a public
    client and a dealer display do not, whatever the policy shows; only the table writes it."""
    table = connect("table-main-1")
    topic = f"{P}/{MAIN}/live/events"
    readers = {user: connect(user) for user in ("obs-1", "floor-1", "web-1", "dealer-main-1")}
    for reader in readers.values():
        reader.subscribe(f"{P}/{MAIN}/#")
    assert ok(table.publish(topic, b'{"event": {"seq": 1}, "revealed": {"4": ["8s", "6s"]}}'))
    marker(table, *readers.values())
    got = {user: [t for t, *_ in r.messages if "/live/" in t] for user, r in readers.items()}
    assert got == {"obs-1": [topic], "floor-1": [topic], "web-1": [], "dealer-main-1": []}
    for rogue in ("obs-1", "web-1", "dealer-main-1", "floor-1"):
        assert readers[rogue].publish(topic, b"rogue").value == NOT_AUTHORIZED, rogue
