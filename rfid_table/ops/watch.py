"""``rfid-table watch``: the live view a floor person keeps open, drawn from what the broker carries.

It shows the table (each seat's cards, stack and bet, the button and the blinds, whose action it is and the
action clock), the pot and its side pots, the board, a panel of what waits for the floor — each item stays until
the floor answers it or it lapses (most with their hand), as the table drops it too — with the ``rfid-table
command`` lines that answer each item, to copy and run, and the last events in words.

It subscribes to the table's public topics, and to the secure ones with ``--secure``. The broker may refuse the
secure subscription, or accept it and deliver nothing (Mosquitto checks read rights at delivery): either way the
view says that hole cards are withheld for these credentials once the public snapshot has come and the secure
one has not.

Drawn with rich (https://github.com/Textualize/rich): pure Python (it runs wherever the daemon does, the
Raspberry Pi included, and Debian ships it as python3-rich), well kept, and it lays out tables and panels,
colours and the redraw of a live screen, and renders the same frame as plain text for ``--plain`` and logs.
"""

from __future__ import annotations

import io
import json
import sys
import threading
import time
from collections import deque

from rich import box
from rich.cells import chop_cells
from rich.console import Console, Group
from rich.live import Live
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from rfid_table.ops.broker_login import LinkState, connect_viewer, refused_text
from rfid_table.ops.command import command_line
from rfid_table.config.table import MqttSettings
from rfid_table.service.contract import QOS, Topics, without_controls
from rfid_table.mqtt import make_client

SUIT_SYMBOLS = {"s": "♠", "h": "♥", "d": "♦", "c": "♣"}
SECURE_GRACE_S = 3.0  # retained snapshots arrive together at subscription: the secure one this late is withheld
EVENT_LINES = 10
PLAYER_NAME_WIDTH = 16  # of the 32 characters a name may have: the seats table still fits 80 columns
# The commands that answer an item, when neither its event nor the snapshot lists them (``answers``): a ruling
# confirmed or overridden, the floor's pick of a burn card (TDA 39) picked or overridden.
DEFAULT_ANSWERS = ("confirm", "override")
ANSWERS = {"floor_picks_burn": ("floor_pick", "override")}


def show_card(card: str) -> Text:
    text = card[0] + SUIT_SYMBOLS.get(card[1], card[1]) if len(card) == 2 else card
    return Text(text, style="bold red" if card[1:] in ("h", "d") else "bold")


def chips(amount) -> str:
    return f"{amount:,}" if isinstance(amount, int) else str(amount)


def words(code) -> str:
    return str(code).replace("_", " ") if code else ""


def seats_text(event: dict) -> str:
    seats = event.get("seats") or ([event["seat"]] if event.get("seat") else [])
    return ", ".join(str(s) for s in seats) or "-"


def describe_event(event: dict) -> str:
    """One event in words, as the floor reads it (None-free, no internal names)."""
    kind = event.get("type")
    seat = event.get("seat")
    floor = " — waits for the floor" if event.get("needs_floor") else ""
    ruling = event.get("ruling_text") or words(event.get("ruling"))
    by = f" by {event['by']}" if event.get("by") else ""  # who asked, where a command or a button did it
    if kind == "card_dealt":
        return f"seat {seat} gets card {event.get('count')}" + (f" ({event['card']})" if "card" in event else "")
    if kind == "board_card":
        board = f"board {event['board_number']} " if event.get("board_number") else ""  # a later run, board 2
        again = " (reshuffled)" if event.get("reshuffled") else ""
        return f"{board}{event.get('street')}: {event.get('card')}{again}"
    if kind == "run_it_agreed":
        pots = "every pot" if event.get("pots") is None else "pots " + ", ".join(map(str, event["pots"]))
        return f"run it {'twice' if event.get('runs') == 2 else 'three times'} for {pots} ({event.get('by')})"
    if kind == "burn":
        return "burn card" + (f" ({event['card']})" if "card" in event else "")
    if kind == "fold":
        return f"seat {seat} folds" + (f" ({' '.join(event['cards'])})" if "cards" in event else "")
    if kind == "hand_started":
        return f"hand {event.get('hand')} starts"
    if kind == "hand_ended":
        live = event.get("live_seats") or []
        return f"hand {event.get('hand')} over" + (f": seats {', '.join(map(str, live))} still in" if live else "")
    if kind == "betting_started":
        return (f"betting opens: button seat {event.get('button')}, blinds {chips(event.get('small_blind'))}/"
                f"{chips(event.get('big_blind'))}" + (f", ante {chips(event['ante'])}" if event.get("ante") else ""))
    if kind == "stacks_set":
        return f"the floor counted the stacks of {len(event.get('stacks') or {})} seats"
    if kind == "irregular_card":
        where = f" at seat {seat}" if seat else (f" on the {event['zone']}" if event.get("zone") else "")
        severity = f" ({event['severity']})" if event.get("severity") else ""
        return f"IRREGULARITY {words(event.get('code'))}{where}{severity}: {ruling or 'for the record'}{floor}"
    if kind == "unknown_tag":
        return f"unknown tag on {event.get('zone')}"
    if kind == "device_breach":
        return f"seat {seat}: {event.get('device')} {event.get('state')} — {ruling}{floor}"
    if kind == "device_seen":
        return f"seat {seat}: {event.get('device')} {event.get('state')} ({words(event.get('reason'))})"
    if kind == "absent_at_deal":
        return f"seat {seat} away at the deal — {ruling}{floor}"
    if kind == "seat_left":
        return f"seat {seat} left during the hand — {ruling}{floor}"
    if kind == "seat_returned":
        return f"seat {seat} back after {event.get('away_s')} s"
    if kind == "seat_presence":
        return f"seat {seat} {'sits down' if event.get('present') else 'is away'}"
    if kind in ("clock_due", "clock_started", "clock_stopped"):
        return f"{words(kind)} on seat {seat}{by}"
    if kind == "clock_tick":
        return f"clock on seat {seat}: {event.get('remaining_s'):g} s left"
    if kind == "time_bank_used":
        return f"seat {seat} uses a time bank (+{event.get('added_s'):g} s)"
    if kind == "clock_expired":
        return f"CLOCK EXPIRED on seat {seat} — {ruling}{floor}"
    if kind == "action":
        action = event.get("action")
        if action == "post_sb":
            return f"seat {seat} posts the small blind {chips(event.get('added'))}"
        if action == "post_bb":
            return f"seat {seat} posts the big blind {chips(event.get('added'))}"
        if action in ("check", "fold"):
            return f"seat {seat} {action}s"
        verb = {"call": "calls", "bet": "bets", "raise": "raises to", "all_in": "is all-in for",
                "straddle": "straddles", "ante": "antes", "complete": "completes to"}.get(action, words(action))
        amount = event.get("added") if action == "call" else event.get("to")
        return f"seat {seat} {verb} {chips(amount)}" + (" (all-in)" if event.get("all_in") and action != "all_in"
                                                         else "")
    if kind == "action_undone":
        undone = ", ".join(f"seat {a['seat']} {words(a['action'])}" for a in event.get("undone", []))
        return f"undone by {event.get('by')}: {undone or words(event.get('declaration'))}; seat {event.get('next')} to act"
    if kind in ("bet_ruling", "chip_count"):
        return (f"{'bet ruling' if kind == 'bet_ruling' else 'chip count'}: {words(event.get('code'))}"
                + (f" at seat {seat}" if seat else "") + (f" — {ruling}" if ruling else "") + floor)
    if kind == "pots":
        pots = event.get("pots") or []
        side = f" ({len(pots) - 1} side pot{'s' if len(pots) > 2 else ''})" if len(pots) > 1 else ""
        return f"bets collected after the {event.get('street')}: pot {chips(event.get('total'))}{side}"
    if kind == "showdown":
        paid = ", ".join(f"seat {s} wins {chips(v)}" for s, v in (event.get("payouts") or {}).items() if v)
        return f"showdown: {paid or 'nothing paid'}"
    if kind == "pot_awarded":
        return f"pot awarded: {chips(event.get('amount'))}"
    if kind == "misdeal":
        return f"MISDEAL ({words(event.get('reason'))}): deal again, the button stays on seat {event.get('button')}"
    if kind == "chips_returned":
        kept = event.get("left_in_place") or {}
        return "the bets go back to the players" + (
            f", left in place at seats {', '.join(map(str, kept))}" if kept else "")
    if kind == "floor_ruling":
        return f"FLOOR {event.get('decision')} {words(event.get('code'))} (#{event.get('irregularity')}): " \
               f"{words(event.get('result'))}"
    if kind == "irregularity_resolved":
        return f"{words(event.get('code'))} (#{event.get('irregularity')}) settled: {words(event.get('resolution'))}"
    if kind == "floor_call":
        return "the dealer calls the floor" + (f" to seat {seat}" if seat else "") + (
            f": {event['note']}" if event.get("note") else "")
    if kind in ("button_set", "seats_set", "new_hand"):
        return {"button_set": f"button set on seat {seat}", "seats_set": f"seats set: {', '.join(map(str, event.get('seats') or []))}",
                "new_hand": "new hand called"}[kind] + by
    if kind == "reader_link":
        state = event.get("state")
        detail = f" ({event['reason']})" if event.get("reason") else ""
        return {"up": f"reader {event.get('reader')} up", "down": f"READER {event.get('reader')} DOWN{detail}",
                "incompatible": f"reader {event.get('reader')} refused: incompatible firmware{detail}",
                "reset": f"reader {event.get('reader')} rebooted{detail}"}.get(state, f"reader {event.get('reader')} {state}")
    if kind == "player_seated":
        return f"seat {seat}: {without_controls(str(event.get('name')))} sits down" + (
            f" (by {event['by']})" if event.get("by") else "")
    if kind == "seat_cleared":
        return f"seat {seat}: {without_controls(str(event.get('name') or 'the player'))} leaves the table" + (
            f" (by {event['by']})" if event.get("by") else "")
    if kind == "deck_selected":
        return f"deck {event.get('deck')} selected{by}"
    if kind == "foreign_chip":
        return f"a chip that does not count on {event.get('zone')}: {event.get('reason')}"
    if kind == "hand_audit":
        return f"{event.get('missing')} card(s) of the hand missing — {ruling}"
    if kind == "deck_audit":
        missing = event.get("missing") or []
        return f"{len(missing)} card(s) of the deck not seen in {event.get('audit_hands')} hands — {ruling}"
    if kind == "board_corrected":
        return f"board corrected by the floor: {' '.join(event.get('board') or [])}"
    return words(kind)


# Events the live view leaves out of the list: drawn elsewhere (the table, the clock) or the machine's record.
QUIET_EVENTS = {"hand_history", "clock_tick", "card_dealt"}


def floor_item(event: dict) -> dict:
    """An entry of the floor panel from an event that waits for the floor (or the snapshot's entry of one)."""
    if event.get("type") == "irregular_card":
        what = words(event.get("code")) + (f" ({event['severity']})" if event.get("severity") else "")
    elif event.get("type") in ("bet_ruling", "chip_count"):
        what = f"{words(event.get('type'))}: {words(event.get('code'))}"
    else:
        what = describe_event({**event, "needs_floor": False}).split(" — ")[0]
    ruling = event.get("ruling_text") or words(event.get("ruling"))
    seq = event.get("seq")
    answers = answers_of(event)
    return {"seq": seq, "hand": event.get("hand"), "seats": seats_text(event), "what": what,
            "ruling": ruling or "the floor decides", "answers": answers, "answer": answer_text(answers, seq),
            "listed": event.get("type") == "irregular_card", "lapses": event.get("lapses")}


def answers_of(item: dict) -> tuple[str, ...]:
    """The commands that answer an item: its own list, else what its ruling calls for."""
    listed = item.get("answers")
    if isinstance(listed, list) and listed and all(isinstance(a, str) for a in listed):
        return tuple(listed)
    return ANSWERS.get(item.get("ruling"), DEFAULT_ANSWERS)


def answer_text(answers: tuple[str, ...], seq) -> str:
    """The panel's short form: "confirm or override #41"."""
    names = [a + " (or a card on the burn zone)" if a == "floor_pick" else a for a in answers]
    return f"{' or '.join(names)} #{seq}"


class TableView:
    """What the watcher knows of the table, updated from MQTT messages (paho's thread), drawn by the main one."""

    def __init__(self, topics: Topics, want_secure: bool, link: LinkState | None = None,
                 answer_with: list[str] | None = None, answer_overflow: str = "ellipsis",
                 header: list[str] | None = None):
        self.topics = topics
        self.header = header or []  # lines drawn above the table in every frame (the demo's addresses)
        self.want_secure = want_secure
        self.link = link or LinkState("?", 0)
        # how the lines that answer the floor's items start: ``rfid-table command`` and the options that reach
        # this table (ops.command.invocation)
        self.answer_with = answer_with or ["rfid-table", "command", "--table", topics.base.rsplit("/", 1)[-1]]
        # a line cut by a narrow terminal ends in "…", which no run takes for a value: it fails, never answers
        # another item
        self.answer_overflow = answer_overflow
        self.full_queue = False  # the snapshots list every waiting item of every kind (their entries say answers)
        self.secure_refused = False  # the broker refused the secure subscription outright
        self.subscribed_at: float | None = None
        self.status: str | None = None
        self.snapshot: dict | None = None
        self.public_snapshot_at: float | None = None
        self.secure_snapshot: dict | None = None
        self.secure_seen = False  # anything at all from secure/
        self.events: deque[tuple[int | None, str]] = deque(maxlen=EVENT_LINES)
        self.floor: dict[int, dict] = {}  # seq → what waits for the floor
        # item → the seq of the event that answered it or ended its hand: a snapshot older than that still lists it
        self.settled: dict[int, int] = {}
        self.blinds: dict[int, str] = {}  # seat → "SB" / "BB" in the current hand
        self.folds: set[tuple] = set()  # (hand, seat) already told
        self.hands_ended = 0
        self.last_seq: int | None = None
        self.gaps = 0
        self.changed = threading.Event()
        self.lock = threading.Lock()

    # ---- input ------------------------------------------------------------------------------------------

    def on_message(self, topic: str, payload: bytes) -> None:
        with self.lock:
            if topic == self.topics.status:
                self.status = payload.decode(errors="replace")
            else:
                try:
                    body = json.loads(payload)
                except ValueError:
                    return
                if topic in (self.topics.snapshot(False), self.topics.snapshot(True)) and isinstance(body, dict):
                    self._note_snapshot(body)
                if topic == self.topics.snapshot(False):
                    self.snapshot = body
                    if self.public_snapshot_at is None:
                        self.public_snapshot_at = time.monotonic()
                elif topic == self.topics.snapshot(True):
                    self.secure_snapshot, self.secure_seen = body, True
                elif topic == self.topics.events(True):
                    self.secure_seen = True
                    if self.secure_view():
                        self._add_event(body)
                elif topic == self.topics.events(False) and not self.secure_view():
                    self._add_event(body)
            self.changed.set()

    def secure_view(self) -> bool:
        """Drawing from the secure feed: asked for, and the broker delivers it."""
        return self.want_secure and not self.secure_refused and self.secure_seen

    def secure_withheld(self, now: float) -> bool:
        """Asked for the secure feed and the broker refused it, or accepted the subscription and delivers nothing
        (the public snapshot came long enough ago, the secure one never did)."""
        if not self.want_secure or self.secure_seen:
            return False
        return self.secure_refused or (self.public_snapshot_at is not None
                                       and now - self.public_snapshot_at >= SECURE_GRACE_S)

    def _add_event(self, event: dict) -> None:
        if event.get("replay"):
            return  # sent late from the journal after an outage: history, not news
        seq = event.get("seq")
        if isinstance(seq, int):
            if self.last_seq is not None and seq <= self.last_seq:
                return  # a copy delivered twice
            if self.last_seq is not None and seq > self.last_seq + 1 and self.secure_view() == (
                    self.want_secure and not self.secure_refused):
                self.gaps += 1
            self.last_seq = seq
        kind = event.get("type")
        if kind == "hand_started":
            self.blinds, self.folds = {}, set()
        elif kind == "hand_ended":
            self.hands_ended += 1
            # what the floor did not answer lapses with its hand (the table drops it too), unless the snapshot
            # said it outlives the hand; one that does after all is listed by a later snapshot again
            for ident, item in list(self.floor.items()):
                if item["hand"] == event.get("hand") and item["lapses"] in (None, "hand_end"):
                    del self.floor[ident]
                    self.settled[ident] = seq if isinstance(seq, int) else 0
        elif kind == "action" and event.get("action") in ("post_sb", "post_bb"):
            self.blinds[event.get("seat")] = "SB" if event["action"] == "post_sb" else "BB"
        if event.get("needs_floor") and isinstance(seq, int):
            self.floor[seq] = floor_item(event)
        answered = event.get("irregularity")
        if kind in ("floor_ruling", "irregularity_resolved", "misdeal", "board_corrected") and \
                isinstance(answered, int):
            self.floor.pop(answered, None)
            self.settled[answered] = seq if isinstance(seq, int) else 0
        if kind == "fold" or (kind == "action" and event.get("action") == "fold"):
            key = (event.get("hand"), event.get("seat"))
            if key in self.folds:
                return  # the cards in the muck and the betting's fold are one fold
            self.folds.add(key)
        if kind not in QUIET_EVENTS:
            self.events.appendleft((seq, describe_event(event)))

    def _note_snapshot(self, snapshot: dict) -> None:
        """What a snapshot says of the items the events brought: the commands that answer them, when they lapse."""
        for entry in snapshot.get("irregularities") or []:
            if not isinstance(entry, dict):
                continue
            self.full_queue = self.full_queue or "answers" in entry
            item = self.floor.get(entry.get("irregularity"))
            if item is not None:
                answers = answers_of(entry)
                item.update(answers=answers, answer=answer_text(answers, item["seq"]), lapses=entry.get("lapses"))

    def caught_up(self) -> bool:
        """The snapshot includes every event seen (snapshots trail the event stream by up to 0.25 s)."""
        with self.lock:
            snap = self._snap()
            return snap is not None and self.last_seq is not None and snap.get("seq", 0) >= self.last_seq

    def _snap(self) -> dict | None:
        return self.secure_snapshot if self.secure_view() and self.secure_snapshot is not None else self.snapshot

    # ---- drawing ----------------------------------------------------------------------------------------

    def waiting_for(self) -> str | None:
        """What the view waits for while it has nothing to draw, or None."""
        line = self.link.waiting_for()
        if line:
            return line
        if self.subscribed_at is None:
            return f"connected to {self.link.host}:{self.link.port}; subscribing …"
        if self.snapshot is None:
            if self.status == "offline":
                return (f"the table {self.topics.base} is offline (its daemon stopped or lost the broker); "
                        "waiting for it to come back")
            return (f"waiting for the table {self.topics.base}: nothing published yet. Is its daemon running "
                    "against this broker, with this table id and topic prefix?")
        return None

    def render(self, now: float | None = None, fit: Console | None = None):
        """The frame. ``fit``: the console of a screen it must fit, whose height the list of last events gives way
        to: the header, the table and what waits for the floor stay on screen."""
        now = time.monotonic() if now is None else now
        with self.lock:
            # Whole, so that a link can be copied: cut at the screen's width (rich would first break the line at
            # the space before a link, taking a row more)
            parts: list = [Text(row) for line in self.header
                           for row in (chop_cells(line, fit.size.width) if fit is not None else [line])]
            header = Text(f"Table {self.topics.base}", style="bold")
            header.append(f"   status: {self.status or 'unknown'}")
            parts.append(header)
            if self.want_secure and self.secure_withheld(now):
                parts.append(Text("hole cards withheld: the broker delivers nothing from the secure feed to these "
                                  "credentials (public view)", style="bold yellow"))
            elif not self.want_secure:
                parts.append(Text("public view (hole cards hidden; --secure shows them where allowed)"))
            waiting = self.waiting_for()
            snap = self._snap()
            if waiting and snap is None:
                parts.append(Text(waiting, style="yellow"))
                return Group(*parts)
            if waiting:
                parts.append(Text(waiting, style="yellow"))
            parts += self._table(snap)
            waiting = self._waiting(snap)
            parts.append(self._floor_panel(waiting))
            parts += self._answer_lines(waiting)
            events = [Text(f"  #{seq} {text}") for seq, text in self.events]
            if fit is not None:
                used = len(fit.render_lines(Group(*parts), fit.options, pad=False))
                events = events[:max(0, fit.size.height - used - 1)]  # the title takes a line
            if events or fit is None:
                parts.append(Text("last events:", style="bold"))
            parts += events
            return Group(*parts)

    def _table(self, snap: dict) -> list:
        betting = snap.get("betting") or {}
        clock = snap.get("clock") or {}
        hand = snap.get("hand")
        phase = betting.get("street") if betting and betting.get("street") not in (None, "showdown") else \
            snap.get("phase")
        line = Text(f"hand {hand or '-'}   {phase}   button seat {snap.get('button') or '-'}   seq {snap.get('seq')}")
        if self.gaps:
            line.append(f"   gaps seen: {self.gaps}", style="yellow")
        board = Text("board  ")
        for card in snap.get("board", []):
            board.append_text(show_card(card))
            board.append(" ")
        board.append("·· " * (5 - len(snap.get("board", []))))
        board.append(f"   burns {snap.get('burns', 0)}   muck {snap.get('mucked', 0)}")
        out = [line, board]
        for number, cards in enumerate(snap.get("boards", [])[1:], start=2):  # a later run, a second board
            later = Text(f"board {number}")
            for card in cards:
                later.append(" ")
                later.append_text(show_card(card))
            later.append(" ··" * (5 - len(cards)))
            out.append(later)
        if betting:
            pots = betting.get("pots") or []
            pot = Text(f"pot {chips(betting.get('pot', 0))}", style="bold")
            if len(pots) > 1:
                pot.append("   main " + chips(pots[0]["amount"]))
                for i, side in enumerate(pots[1:], start=1):
                    pot.append(f"   side {i} {chips(side['amount'])} (seats {', '.join(map(str, side['eligible']))})")
            if betting.get("current_bet"):
                pot.append(f"   to call {chips(betting['current_bet'])}")
            out.append(pot)
        if clock.get("seat") and clock.get("phase") not in (None, "idle"):
            left = clock.get("remaining_s")
            out.append(Text(f"clock on seat {clock['seat']}: {clock['phase']}"
                            + (f", {left:g} s left" if left is not None else ""), style="bold magenta"))
        table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
        for name, justify in (("seat", "right"), ("player", "left"), ("", "left"), ("cards", "left"),
                              ("stack", "right"), ("bet", "right"), ("state", "left")):
            # a long name is cut, not the cards or the stack beside it
            table.add_column(name, justify=justify, no_wrap=True,
                             **({"max_width": PLAYER_NAME_WIDTH, "overflow": "ellipsis"} if name == "player" else {}))
        players = set(snap.get("players") or [])
        stacks = betting.get("stacks") or {}
        bets = betting.get("bets") or {}
        all_in = set(betting.get("all_in") or [])
        to_act = betting.get("to_act")
        conduct = {s["seat"]: s for s in (snap.get("conduct") or {}).get("seats", [])}
        for seat in snap.get("seats", []):
            n = seat["seat"]
            marks = " ".join(m for m in ("D" if snap.get("button") == n else "", self.blinds.get(n, "")) if m)
            count = seat.get("cards", 0)
            if n not in players and not count:
                cards, state = Text("empty", style="dim"), ""
            elif not count:
                cards = Text("not dealt" if hand and snap.get("phase") != "waiting" else "-", style="dim")
                state = ""
            else:
                cards = Text()
                for card in seat.get("hole_cards") or ["##"] * count:
                    cards.append_text(show_card(card) if card != "##" else Text("##"))
                    cards.append(" ")
                state = "folded" if seat.get("folded") else ("all-in" if n in all_in else "in hand")
            if to_act == n:
                state = "TO ACT" + (f" ({clock['remaining_s']:g} s)" if clock.get("seat") == n and
                                    clock.get("remaining_s") is not None else "")
            sensors = conduct.get(n) or {}
            if sensors.get("present") is False:
                state += " · away"
            if sensors.get("devices"):
                state += " · device: " + ",".join(sensors["devices"])
            player = seat.get("player") if isinstance(seat.get("player"), dict) else {}
            # the name the floor entered (seat_player); over the network, so no control characters, no markup
            name = Text(without_controls(str(player.get("name") or "")))
            table.add_row(str(n), name, marks, cards, chips(stacks[str(n)]) if str(n) in stacks else "",
                          chips(bets[str(n)]) if str(n) in bets else "",
                          Text(state, style="bold green" if state.startswith("TO ACT") else ""))
        out.append(table)
        return out

    def _waiting(self, snap: dict) -> dict[int, dict]:
        """What waits for the floor: what the events said, put right by the snapshot."""
        listed = {item.get("irregularity"): item for item in snap.get("irregularities") or []
                  if isinstance(item, dict)}
        seq = snap.get("seq")
        if isinstance(seq, int):
            # answered while this view was away (a reconnection: the broker keeps no events for it): a snapshot
            # that includes the item's event and no longer lists it; the snapshots list the dealing's items, and
            # every item once their entries say what answers them
            for gone in [s for s, item in self.floor.items() if s <= seq and s not in listed
                         and (item["listed"] or self.full_queue)]:
                del self.floor[gone]
        newer = isinstance(seq, int)
        for ident, settled_at in list(self.settled.items()):
            if newer and seq >= settled_at:  # the snapshot knows what settled it: it says whether it still waits
                del self.settled[ident]
        waiting = dict(self.floor)
        for ident, item in listed.items():  # pending when the view started, or known only there
            if isinstance(ident, int) and ident not in waiting and ident not in self.settled:
                waiting[ident] = floor_item({**item, "seq": ident, "type": "irregular_card"})
        return waiting

    def _answer_lines(self, waiting: dict[int, dict]) -> list:
        """The ``rfid-table command`` lines that answer each item, to copy and run: on lines of their own, outside
        the panel's frame, so that a line copied whole is the command alone."""
        if not waiting:
            return []
        cut = " (widen the terminal if one ends in …)" if self.answer_overflow == "ellipsis" else ""
        lines: list = [Text(f"to answer, copy a line and run it{cut}:")]
        for seq in sorted(waiting):
            for name in waiting[seq]["answers"]:
                lines.append(Text("  " + command_line(self.answer_with, name, irregularity=seq), no_wrap=True,
                                  overflow=self.answer_overflow))
        return lines

    def _floor_panel(self, waiting: dict[int, dict]) -> Panel:
        if not waiting:
            return Panel(Text("nothing waits for the floor", style="dim"), title="floor", box=box.ROUNDED,
                         title_align="left")
        table = Table(box=None, pad_edge=False, show_header=True, header_style="bold")
        for name in ("seq", "hand", "seat", "what happened", "proposed ruling", "answer with"):
            table.add_column(name, overflow="fold")
        for seq in sorted(waiting):
            item = waiting[seq]
            table.add_row(f"#{seq}", str(item["hand"] or "-"), item["seats"], item["what"], item["ruling"],
                          item["answer"])
        return Panel(table, title=f"floor: {len(waiting)} waiting", box=box.HEAVY, border_style="bold red",
                     title_align="left")


def frame_text(renderable, width: int = 110) -> str:
    """A frame as plain text (``--plain``): no colours, no blank lines (a blank line ends a frame)."""
    console = Console(file=io.StringIO(), width=width, color_system=None, force_terminal=False, no_color=True,
                      highlight=False)
    console.print(renderable, crop=False)  # the lines that answer the floor are printed whole, to be copied
    lines = [line.rstrip() for line in console.file.getvalue().splitlines()]
    return "\n".join(line for line in lines if line)


def watch(settings: MqttSettings, table_id: str, secure: bool, plain: bool, exit_after_hands: int | None,
          timeout_s: float | None, out=sys.stdout, err=sys.stderr, answer_with: list[str] | None = None,
          header: list[str] | None = None) -> int:
    """``answer_with``: how the lines that answer the floor start, ``rfid-table command`` with the options this
    view was given (``rfid_table.ops.command.invocation``); by default the table id alone. ``header``: lines
    drawn above the table in every frame."""
    topics = Topics.for_table(settings.topic_prefix, table_id)
    link = LinkState(settings.host, settings.port)
    view = TableView(topics, secure, link, answer_with, "ignore" if plain else "ellipsis", header)
    client = make_client(settings, f"rfid-table-watch-{table_id}-{time.monotonic_ns() % 100000}")
    stop = threading.Event()

    def on_connect(client, userdata, flags, reason_code, properties):
        if reason_code.is_failure:
            link.refused = refused_text(reason_code)
            stop.set()
            view.changed.set()
            return
        link.connected, link.unreachable = True, None  # a reconnection: nothing is amiss any more
        wanted = [(topics.status, QOS), (topics.snapshot(False), QOS), (topics.events(False), QOS)]
        if secure:
            wanted += [(topics.snapshot(True), QOS), (topics.events(True), QOS)]
        client.subscribe(wanted)
        view.changed.set()

    def on_disconnect(client, userdata, flags, reason_code, properties):
        link.connected = False
        if not stop.is_set():
            link.unreachable = f"lost the connection ({reason_code}); reconnecting"
        view.changed.set()

    def on_subscribe(client, userdata, mid, reason_codes, properties):
        if secure and any(code.is_failure for code in reason_codes[3:]):
            view.secure_refused = True
        view.subscribed_at = time.monotonic()
        view.changed.set()  # draw at once: subscribed, waiting for the table

    client.on_connect = on_connect
    client.on_disconnect = on_disconnect
    client.on_subscribe = on_subscribe
    client.on_message = lambda c, u, msg: view.on_message(msg.topic, msg.payload)
    connect_viewer(client, settings, link, view.changed, stop)
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    live = fit = None
    if not plain:
        console = Console(file=out)
        live = Live(console=console, auto_refresh=False, screen=out.isatty(), redirect_stderr=False)
        live.start()
        fit = console if out.isatty() else None  # a screen crops what it cannot hold
    last_plain = None
    try:
        while not stop.is_set() and (deadline is None or time.monotonic() < deadline):
            # Wake for news, and at least once a second: the clock runs and the secure feed may be overdue.
            view.changed.wait(1.0)
            view.changed.clear()
            if stop.is_set():
                break
            # decided before drawing, so that the last frame drawn holds everything the decision saw
            done = exit_after_hands is not None and view.hands_ended >= exit_after_hands and view.caught_up()
            frame = view.render(fit=fit)
            if live is not None:
                live.update(frame, refresh=True)
            else:
                text = frame_text(frame)
                if text != last_plain:
                    out.write(text + "\n\n")
                    out.flush()
                    last_plain = text
            if done:
                break
            time.sleep(0.05)  # at most ~20 frames a second
    except KeyboardInterrupt:
        pass
    finally:
        stop.set()
        if live is not None:
            live.stop()
        client.disconnect()
        client.loop_stop()
    return link.exit_status("watch", settings.username, err)
