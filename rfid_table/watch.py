"""``rfid-table watch``: a live view of a table in the terminal, drawn from what the broker carries.

It subscribes to the table's public topics, and to the secure ones when asked; if the broker refuses the
secure subscription (credentials without that right), it says so and shows the public view.
"""

import json
import re
import sys
import threading
import time
from collections import deque

import paho.mqtt.client as mqtt

from rfid_table.config import MqttSettings
from rfid_table.publisher import QOS, Topics, make_client

ANSI = re.compile(r"\033\[[0-9;]*m")
SUIT_SYMBOLS = {"s": "♠", "h": "♥", "d": "♦", "c": "♣"}


def show_card(card: str, colour: bool) -> str:
    text = card[0] + SUIT_SYMBOLS.get(card[1], card[1])
    if colour and card[1] in "hd":
        return f"\033[31m{text}\033[0m"
    return text


def describe_event(event: dict) -> str:
    kind = event.get("type")
    seat = event.get("seat")
    if kind == "card_dealt":
        card = f" {event['card']}" if "card" in event else ""
        return f"seat {seat} dealt card {event.get('count')}{card}"
    if kind == "board_card":
        return f"{event.get('street')}: {event.get('card')}"
    if kind == "burn":
        return "burn" + (f" {event['card']}" if "card" in event else "")
    if kind == "fold":
        return f"seat {seat} folds" + (f" {' '.join(event['cards'])}" if "cards" in event else "")
    if kind == "hand_started":
        return "new hand"
    if kind == "hand_ended":
        return f"hand over: live seats {event.get('live_seats')}"
    if kind == "irregular_card":
        card = f" {event['card']}" if "card" in event else ""
        return f"IRREGULAR {event.get('code')} at {event.get('zone')}{card}"
    if kind == "unknown_tag":
        return f"UNKNOWN TAG {event.get('uid')} at {event.get('zone')}"
    floor = " (floor)" if event.get("needs_floor") else ""
    if kind == "device_breach":
        return f"DEVICE seat {seat} {event.get('device')} {event.get('state')}: {event.get('ruling')}{floor}"
    if kind == "device_seen":
        return f"seat {seat} {event.get('device')} {event.get('state')} ({event.get('reason')})"
    if kind == "absent_at_deal":
        return f"ABSENT AT DEAL seat {seat}: {event.get('ruling')}{floor}"
    if kind == "seat_left":
        return f"seat {seat} LEFT during the hand: {event.get('ruling')}{floor}"
    if kind == "seat_returned":
        return f"seat {seat} back after {event.get('away_s')} s"
    if kind == "seat_presence":
        return f"seat {seat} {'seated' if event.get('present') else 'away'}"
    if kind in ("clock_due", "clock_started", "clock_stopped"):
        return f"{kind.replace('_', ' ')} on seat {seat}" + (f" by {event['by']}" if "by" in event else "")
    if kind == "clock_tick":
        return f"clock seat {seat}: {event.get('remaining_s'):g} s ({event.get('phase')})"
    if kind == "time_bank_used":
        return f"seat {seat} time bank +{event.get('added_s'):g} s"
    if kind == "clock_expired":
        return f"CLOCK EXPIRED seat {seat}: {event.get('ruling')}{floor}"
    if kind == "action":
        amount = f" to {event['to']}" if event.get("action") not in ("check", "fold") else ""
        return f"seat {seat} {event.get('action')}{amount}" + (" (all-in)" if event.get("all_in") else "")
    if kind == "action_undone":
        undone = ", ".join(f"seat {a['seat']} {a['action']}" for a in event.get("undone", []))
        return f"UNDONE by {event.get('by')}: {undone or event.get('declaration')}; seat {event.get('next')} to act"
    if kind in ("bet_ruling", "chip_count"):
        return f"{kind.upper()} {event.get('code')}" + (f" seat {seat}" if seat else "") + floor
    if kind == "pots":
        return f"pots after the {event.get('street')}: {event.get('total')}"
    if kind == "showdown":
        return f"showdown: paid {event.get('payouts')}"
    if kind == "misdeal":
        return f"MISDEAL ({event.get('reason')}): deal again, the button stays on seat {event.get('button')}"
    if kind == "chips_returned":
        kept = event.get("left_in_place") or {}
        return "wagers returned" + (f", left in place: {kept}" if kept else "")
    if kind == "floor_ruling":
        return f"FLOOR {event.get('decision')} {event.get('code')}: {event.get('result')}"
    return str(kind)


def seat_conduct(snap: dict, seat: int) -> str:
    """What the seat sensors and the action clock say of a seat (empty on tables without them)."""
    marks = []
    for state in (snap.get("conduct") or {}).get("seats", []):
        if state.get("seat") == seat:
            if state.get("present") is False:
                marks.append("away")
            if state.get("devices"):
                marks.append("device: " + ",".join(state["devices"]))
    clock = snap.get("clock") or {}
    if clock.get("seat") == seat and clock.get("phase") == "thinking":
        marks.append("to act")
    elif clock.get("seat") == seat and clock.get("phase") not in (None, "idle"):
        left = clock.get("remaining_s")
        marks.append(f"clock {clock['phase']}" + (f" {left:g} s" if left is not None else ""))
    return "".join(f"  [{m}]" for m in marks)


class TableView:
    """What the watcher knows of the table, updated from MQTT messages (any thread)."""

    def __init__(self, topics: Topics, want_secure: bool):
        self.topics = topics
        self.want_secure = want_secure
        self.secure_refused = False
        self.status = "unknown"
        self.snapshot: dict | None = None
        self.secure_snapshot: dict | None = None
        self.events: deque[dict] = deque(maxlen=8)
        self.hands_ended = 0
        self.last_seq: int | None = None
        self.gaps = 0
        self.changed = threading.Event()
        self.lock = threading.Lock()

    def on_message(self, topic: str, payload: bytes) -> None:
        with self.lock:
            if topic == self.topics.status:
                self.status = payload.decode(errors="replace")
            else:
                body = json.loads(payload)
                if topic == self.topics.snapshot(False):
                    self.snapshot = body
                elif topic == self.topics.snapshot(True):
                    self.secure_snapshot = body
                elif topic == self.events_topic():
                    self._add_event(body)
            self.changed.set()

    def caught_up(self) -> bool:
        """The snapshot includes every event seen (snapshots trail the event stream by up to 0.25 s)."""
        with self.lock:
            snap = self.secure_snapshot if self.want_secure and not self.secure_refused else self.snapshot
            snap = snap or self.snapshot
            return snap is not None and self.last_seq is not None and snap.get("seq", 0) >= self.last_seq

    def events_topic(self) -> str:
        return self.topics.events(self.want_secure and not self.secure_refused)

    def _add_event(self, event: dict) -> None:
        if event.get("replay"):
            return  # sent late from the journal after an outage: history, not news
        seq = event.get("seq")
        if self.last_seq is not None and isinstance(seq, int) and seq > self.last_seq + 1:
            self.gaps += 1
        self.last_seq = seq
        self.events.appendleft(event)
        if event.get("type") == "hand_ended":
            self.hands_ended += 1

    def render(self, colour: bool) -> str:
        with self.lock:
            secure = self.want_secure and not self.secure_refused and self.secure_snapshot is not None
            snap = self.secure_snapshot if secure else self.snapshot
            lines = [f"Table {self.topics.base}   status: {self.status}"]
            if self.want_secure and self.secure_refused:
                lines.append("hole cards hidden: the broker refused the secure feed for these credentials")
            elif not self.want_secure:
                lines.append("public view (hole cards hidden; --secure shows them where allowed)")
            if snap is None:
                lines.append("waiting for the table's snapshot …")
                return "\n".join(lines)
            board = [show_card(c, colour) for c in snap.get("board", [])]
            board += ["··"] * (5 - len(board))
            lines.append(f"hand {snap.get('hand') or '-'}   {snap.get('phase')}   seq {snap.get('seq')}"
                         + (f"   gaps seen: {self.gaps}" if self.gaps else ""))
            lines.append(f"board  {' '.join(board)}     burns {snap.get('burns', 0)}   muck {snap.get('mucked', 0)}")
            for seat in snap.get("seats", []):
                count = seat.get("cards", 0)
                if not count:
                    cards = "--"
                elif "hole_cards" in seat:
                    cards = " ".join(show_card(c, colour) for c in seat["hole_cards"])
                else:
                    cards = " ".join(["##"] * count)
                state = "folded" if seat.get("folded") else ("in hand" if count else "")
                state += seat_conduct(snap, seat["seat"])
                padding = " " * max(0, 14 - len(ANSI.sub("", cards)))  # colour codes take no room on screen
                lines.append(f"seat {seat['seat']:>2}  {cards}{padding} {state}")
            lines.append("last events:")
            lines.extend(f"  #{e.get('seq')} {describe_event(e)}" for e in self.events)
            return "\n".join(lines)


def watch(settings: MqttSettings, table_id: str, secure: bool, plain: bool, exit_after_hands: int | None,
          timeout_s: float | None, out=sys.stdout) -> int:
    topics = Topics.for_table(settings.topic_prefix, table_id)
    view = TableView(topics, secure)
    client = make_client(settings, f"rfid-table-watch-{table_id}-{time.monotonic_ns() % 100000}")
    connected = threading.Event()

    def on_connect(client, userdata, flags, reason_code, properties):
        if reason_code.is_failure:
            print(f"the broker refused the connection: {reason_code}", file=sys.stderr)
            return
        wanted = [(topics.status, QOS), (topics.snapshot(False), QOS), (topics.events(False), QOS)]
        if secure:
            wanted += [(topics.snapshot(True), QOS), (topics.events(True), QOS)]
        client.subscribe(wanted)
        connected.set()

    def on_subscribe(client, userdata, mid, reason_codes, properties):
        if secure and any(code.is_failure for code in reason_codes[3:]):
            view.secure_refused = True
        view.changed.set()  # draw at once: subscribed, waiting for the table

    client.on_connect = on_connect
    client.on_subscribe = on_subscribe
    client.on_message = lambda c, u, msg: view.on_message(msg.topic, msg.payload)
    client.connect_async(settings.host, settings.port, keepalive=settings.keepalive)
    client.loop_start()
    colour = not plain and out.isatty()
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    try:
        while deadline is None or time.monotonic() < deadline:
            if not view.changed.wait(0.5):
                if not connected.is_set() and not plain:
                    out.write(f"\033[H\033[2Jconnecting to {settings.host}:{settings.port} …\n")
                    out.flush()
                continue
            view.changed.clear()
            frame = view.render(colour)
            out.write(frame + "\n\n" if plain else "\033[H\033[2J" + frame + "\n")
            out.flush()
            if exit_after_hands is not None and view.hands_ended >= exit_after_hands and view.caught_up():
                break
            time.sleep(0.05)  # at most ~20 frames a second
    except KeyboardInterrupt:
        pass
    finally:
        client.disconnect()
        client.loop_stop()
    return 0
