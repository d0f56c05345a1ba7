"""Crash recovery end to end: `rfid-table run` killed with SIGKILL at 35 random points during simulated play.

``KILL_RECOVERY_KILLS=100`` kills it 100 times instead (README, "Tests"): the longer hunt, about three times as long.

The simulated dealer is not journaled: `rfid-table sim` restarted on its journal deals from the first hand of its
seed again while the restored controller continues the hand in progress. So the table outside the daemon lives in
this process and survives every kill: the reader firmware emulator on a pseudo-terminal and the seeded dealer
moving tagged cards on it, both stepped by one thread so that the dealer's timing is counted in the reader's
inventory cycles, and the daemon under test is `rfid-table run` reading that reader like hardware. The dealer
plays while the daemon runs and waits while it is down (nobody deals at a table whose system is restarting); see
:class:`World` for the two things it waits for besides.

The reference is one uninterrupted `rfid-table sim` of the same seed (the same dealer, in-process readers), through
the same broker. The daemon under test is killed at random points — while Python starts, as soon as its journal is
open (restoring), at any moment of play, and the moment the subscriber gets an event — and restarted on the same
journal each time until the last hand is over. Then:

* nothing committed is lost: what the journal held at every kill is, unchanged, the start of the final journal,
  and every journaled event reached the subscriber on both feeds exactly as journaled (de-duplicated by seq;
  every copy of a seq is the same event);
* the hand in progress is restored: each restarted daemon's first snapshot is the table its journal describes;
* the published game is the reference's, event for event (seq and the wall-clock ``t`` aside: every start of the
  daemon journals and publishes a ``reader_link`` "up" event, which shifts the numbering by one per start).
"""

import json
import math
import os
import random
import select
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import TABLE_6
from rfid_table.config.table import load_config
from rfid_table.service.journal import Journal
from sim.dealer import DealerSettings, SimDealer
from sim.field import TableField
from sim.firmware import FirmwareEmulator

COMMAND = Path(sys.executable).with_name("rfid-table")
RFID_TABLE = [str(COMMAND)] if COMMAND.exists() else [sys.executable, "-m", "rfid_table.cli"]

SEED = 20240917
HANDS = 3
PLAYERS = [1, 2, 3, 4]
PACE_S = 0.5  # seconds a typical dealer action takes (SimOptions.pace_s): deals come 3 reader cycles apart
FOLD_CHANCE = 0.3  # SimOptions' default, which the reference run uses
# Enough for every stage below to be drawn several times with this seed, and for kills in every hand.
KILLS = int(os.environ.get("KILL_RECOVERY_KILLS", "35"))
# How the kill points are drawn: (stage, weight).
#   starting:  a random delay after the process is spawned, up to how long a start takes (interpreter, imports,
#              configuration, journal self-check, replay, connecting);
#   restoring: the moment the daemon logs that its journal passed the self-check (replay and backlog follow);
#   playing:   once this start's reader link is up and published, the dealer deals and the kill comes at a random
#              point of the dealer's clock (uniform over twice the average share of the whole deal per start);
#   published: once this start's reader link is up, the dealer deals and the kill comes the moment the subscriber
#              gets an event this start published: the broker has it, the journal's delivery mark most likely
#              not yet, so the next start must send it again.
KILL_STAGES = (("starting", 20), ("restoring", 15), ("playing", 50), ("published", 15))
# The playing and published kills cover this share of the whole deal on average; the last start plays the rest.
COVERAGE = 0.9
TIMEOUT_S = 20.0  # any single wait; far beyond what a healthy run needs

UNSTABLE = ("seq", "t", "epoch")  # numbering and wall-clock fields: not part of the game
DELIVERY = ("replay",)  # set on a copy sent again from the journal


# ---- files --------------------------------------------------------------------------------------------------


def table_file(directory: Path, table_id: str, journal: Path, serial_port: str | None = None) -> Path:
    """The shipped six-max table with its own id and journal, and optionally a serial reader instead of sim."""
    text = TABLE_6.read_text()
    replacements = [('id = "sixmax-1"', f'id = "{table_id}"'),
                    ('path = "/var/lib/rfid-table/sixmax-1.journal"', f'path = "{journal}"'),
                    # equity results arrive from a process of their own, when they are ready: a run with them is
                    # not the same twice, and this test compares a killed run with an uninterrupted one
                    ('release = "hand"', 'release = "hand"\nequity = false')]
    if serial_port is not None:
        replacements.append(('backend = "sim"', f'backend = "serial"\nport = "{serial_port}"'))
    for old, new in replacements:
        assert text.count(old) == 1, f"{TABLE_6} no longer has {old!r}"
        text = text.replace(old, new)
    path = directory / f"{table_id}.toml"
    path.write_text(text)
    return path


def read_journal(path: Path, scratch: Path) -> tuple[str | None, list[dict], list[dict], dict[str, int]]:
    """(epoch, secure payloads, public payloads, delivery marks of the event feeds) of every event committed to the
    journal at ``path``, the payloads as the daemon publishes them.

    Read from a copy of the database and its write-ahead log, so that the files stay exactly as the kill left
    them for the next start to recover. The copy must pass the journal's own self-check.
    """
    scratch.mkdir(exist_ok=True)
    copy = scratch / "journal.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{copy}{suffix}").unlink(missing_ok=True)
    if not path.exists():
        return None, [], [], {}
    for suffix in ("", "-wal"):
        if Path(f"{path}{suffix}").exists():
            shutil.copyfile(f"{path}{suffix}", f"{copy}{suffix}")
    journal = Journal(copy)
    check = journal.open()
    try:
        assert check.ok, f"the journal failed its self-check after a kill: {check}"
        epoch = journal.epoch
        events = journal.events_after(0, limit=10**6)
        return (epoch, [{**e.payload(secure=True), "epoch": epoch} for e in events],
                [{**e.payload(secure=False), "epoch": epoch} for e in events],
                {feed: journal.delivered(feed) for feed in ("public", "secure")})
    finally:
        journal.close()


# ---- what the subscriber received ---------------------------------------------------------------------------


class Received:
    """The recorder's messages, parsed once each, in the order they arrived."""

    def __init__(self, recorder):
        self.recorder = recorder
        self.lock = threading.Lock()
        self.messages: list[tuple[str, object]] = []  # (topic suffix, payload: JSON or raw bytes)
        self.hands_ended: set[int] = set()
        self.cards_seen: set[tuple[int, str]] = set()  # (hand, card) named by a published secure event

    def update(self) -> int:
        """Parse what arrived since the last call; returns how many messages there are now."""
        with self.lock:
            with self.recorder.lock:
                new = self.recorder.messages[len(self.messages):]
            for topic, payload, _retained in new:
                suffix = topic.split("/", 2)[2]
                try:
                    body = json.loads(payload)
                except ValueError:
                    body = payload  # status: online / offline
                self.messages.append((suffix, body))
                if suffix == "secure/events":
                    if body["type"] == "hand_ended":
                        self.hands_ended.add(body["hand"])
                    for card in body.get("cards", [body["card"]] if "card" in body else []):
                        self.cards_seen.add((body["hand"], card))
            return len(self.messages)

    def since(self, index: int) -> list[tuple[str, object]]:
        self.update()
        with self.lock:
            return self.messages[index:]

    def hand_over(self, hand: int) -> bool:
        self.update()
        with self.lock:
            return hand in self.hands_ended

    def card_seen(self, hand: int, card: str) -> bool:
        self.update()
        with self.lock:
            return (hand, card) in self.cards_seen

    def wait_for(self, predicate, timeout_s: float = TIMEOUT_S, poll_s: float = 0.005) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if predicate():
                return True
            time.sleep(poll_s)
        return False

    def events(self, feed: str) -> dict[int, dict]:
        """Seq → event of a feed, de-duplicated; every copy of a seq must be the same event (a copy sent again
        from the journal may say so with ``replay``: how it was delivered, not what happened)."""
        by_seq: dict[int, dict] = {}
        for suffix, body in self.since(0):
            if suffix == f"{feed}/events":
                body = {k: v for k, v in body.items() if k not in DELIVERY}
                kept = by_seq.setdefault(body["seq"], body)
                assert kept == body, f"two different {feed} events with seq {body['seq']}: {kept} and {body}"
        return by_seq

    def copies(self, feed: str) -> int:
        """Event messages received on a feed, copies included."""
        return sum(suffix == f"{feed}/events" for suffix, _ in self.since(0))


# ---- the table outside the daemon ---------------------------------------------------------------------------


class World:
    """The reader firmware emulator and the dealer, stepped by one thread.

    The dealer's clock counts the emulator's inventory cycles while it plays; a move is due ``delay_s`` after the
    previous one, rounded up to whole cycles, as in the simulated table. Two things hold a due move back (and the
    clock with it):

    * the first card of a hand waits until the end of the previous hand is published. A restarted daemon starts
      from the cards its journal says are on the table and learns that the dealer gathered them only after the
      absence time; a card dealt before then would join the old hand. The events are the same whichever way the
      hand ends: after ``clear_after_s`` of a clear table, or when the next hand's first card lands on it;
    * a card waits until the last card that makes an event (a deal, a burn, a board card, a folding player's
      first card into the muck) has been published. A card that was not yet debounced when the daemon died is
      read again after the restart; had a second card been placed meanwhile, the restarted daemon would see both
      from its first cycles on and could not know which came first (the first reads died with the killed process,
      and nothing was committed about them), so the dealer does not do that.
    """

    def __init__(self, config, link_path: Path, received: Received):
        reader = config.readers["main"]
        self.cycle_s = reader.cycle_s
        self.field = TableField(config.zones)
        self.deck = config.decks[config.active_deck]
        self.emulator = FirmwareEmulator(self.field, reader="main", antenna_count=reader.antennas,
                                         cycle_s=self.cycle_s, link_path=link_path)
        self.dealer = SimDealer(self.field, self.deck,
                                DealerSettings(PLAYERS, config.game.hole_cards, PACE_S, FOLD_CHANCE), SEED)
        self.received = received
        self._moves = self.dealer.hands(HANDS)
        self._lock = threading.Lock()
        self._playing = False
        self._stop = threading.Event()
        self.clock = 0  # cycles played, not counting those a due move was held back
        self.applied = 0
        self.held_cycles = 0
        self._awaited: tuple[int, str] | None = None  # (hand, card) of the last card that makes an event
        self._folded: set[str] = set()  # seat zones with a card in the muck, this hand
        self._fetch()
        self.finished = threading.Event()
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="world", daemon=True)
        self._thread.start()

    @property
    def path(self) -> str:
        return self.emulator.path

    def play(self) -> None:
        with self._lock:
            self._playing = True

    def pause(self) -> None:
        with self._lock:  # a move being applied finishes first
            self._playing = False

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self.emulator.close()

    def _fetch(self) -> None:
        hands = self.dealer.hands_dealt
        self._next = next(self._moves, None)
        # The generator enters the next hand (and counts it) when its first move is fetched.
        self._first_of_hand = self._next is not None and self.dealer.hands_dealt > hands
        if self._next is not None:
            self._due = self.clock + max(1, math.ceil(self._next.delay_s / self.cycle_s - 1e-9))

    def _held(self) -> bool:
        hand = self.dealer.hands_dealt
        if self._first_of_hand and hand > 1 and not self.received.hand_over(hand - 1):
            return True
        return self._awaited is not None and not self.received.card_seen(*self._awaited)

    def _advance(self) -> None:
        while self._next is not None and self.clock >= self._due and not self._held():
            if self._first_of_hand:
                self._folded.clear()
            before = {uid: self.field.zone_of(uid) for uid in self.deck}
            self._next.apply()
            self.applied += 1
            for uid, was in before.items():
                zone = self.field.zone_of(uid)
                if zone is None or zone == was:
                    continue
                if zone == "muck":
                    if was in self._folded:
                        continue  # the folding player's second card: no event
                    self._folded.add(was)
                self._awaited = (self.dealer.hands_dealt, self.deck[uid])
            self._fetch()
        if self._next is None:
            self.finished.set()

    def _run(self) -> None:
        try:
            last = self.emulator.stats.cycles
            while not self._stop.is_set():
                self.emulator.step(time.monotonic())
                with self._lock:
                    cycles = self.emulator.stats.cycles
                    if self._playing and cycles != last:
                        if self._next is not None and self.clock >= self._due and self._held():
                            self.held_cycles += cycles - last  # the clock waits too
                        else:
                            self.clock += cycles - last
                            self._advance()
                    last = cycles
                try:
                    select.select([self.emulator.master_fd], [], [], 0.002)
                except (OSError, ValueError, TypeError):
                    time.sleep(0.002)
        except BaseException as exc:  # the test checks it
            self.error = exc


def dealer_seconds(config) -> float:
    """How long the dealer's whole run takes (the moves do not depend on what the readers see)."""
    dealer = SimDealer(TableField(config.zones), config.decks[config.active_deck],
                       DealerSettings(PLAYERS, config.game.hole_cards, PACE_S, FOLD_CHANCE), SEED)
    return sum(move.delay_s for move in dealer.hands(HANDS))


# ---- the state a snapshot must show --------------------------------------------------------------------------


def table_state(events: list[dict]) -> dict:
    """The hand, phase, board, burns, hole cards and folds that a stream of secure events describes."""
    state = {"hand": None, "phase": "waiting", "board": [], "burn_cards": [], "hole_cards": {}, "folded": []}
    for e in events:
        kind = e["type"]
        if kind == "hand_started":
            state = {"hand": e["hand"], "phase": "preflop", "board": [], "burn_cards": [], "hole_cards": {},
                     "folded": []}
        elif kind == "card_dealt":
            state["hole_cards"].setdefault(e["seat"], []).append(e["card"])
        elif kind == "board_card":
            state["board"].append(e["card"])
            state["phase"] = e["street"]
        elif kind == "burn":
            state["burn_cards"].append(e["card"])
        elif kind == "fold":
            state["folded"] = sorted(state["folded"] + [e["seat"]])
        elif kind == "hand_ended":
            state["phase"] = "waiting"
    return state


def snapshot_state(snapshot: dict) -> dict:
    return {"hand": snapshot["hand"], "phase": snapshot["phase"], "board": snapshot["board"],
            "burn_cards": snapshot["burn_cards"],
            "hole_cards": {s["seat"]: s["hole_cards"] for s in snapshot["seats"] if s["hole_cards"]},
            "folded": sorted(s["seat"] for s in snapshot["seats"] if s["folded"])}


def game(events: list[dict]) -> list[dict]:
    """The game itself: every event but the reader link's, without numbering and wall-clock fields."""
    return [{k: v for k, v in e.items() if k not in UNSTABLE} for e in events if e["type"] != "reader_link"]


# ---- the daemon ---------------------------------------------------------------------------------------------


class Life:
    """One start of the daemon, its log in a file."""

    def __init__(self, number: int, config_file: Path, broker, log_dir: Path, received: Received,
                 after_seq: int):
        self.number = number
        self.after_seq = after_seq  # the journal's last seq when it started: newer events are this start's
        self.first_message = received.update()
        self.log_path = log_dir / f"start-{number:03}.log"
        with open(self.log_path, "w") as log:
            self.spawned = time.monotonic()
            self.process = subprocess.Popen(RFID_TABLE + ["run", "--config", str(config_file), "--host", broker.host,
                                                          "--port", str(broker.port)],
                                            stdout=subprocess.DEVNULL, stderr=log)
        self.received = received
        self.end_message: int | None = None  # where the next start's messages begin
        self.up_after: float | None = None  # seconds from spawn until this start's reader link was published

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def messages(self) -> list[tuple[str, object]]:
        messages = self.received.since(self.first_message)
        return messages if self.end_message is None else messages[:self.end_message - self.first_message]

    def reading(self) -> bool:
        """This start's reader link is up and its event published (a seq beyond what the journal held)."""
        return any(s == "secure/events" and b["type"] == "reader_link" and b["state"] == "up"
                   and b["seq"] > self.after_seq for s, b in self.messages())

    def published_game_event(self) -> bool:
        """The subscriber got a game event this start journaled."""
        return any(s == "secure/events" and b["type"] != "reader_link" and b["seq"] > self.after_seq
                   for s, b in self.messages())

    def wait_reading(self) -> None:
        assert self.received.wait_for(lambda: self.reading() or self.process.poll() is not None), \
            f"start {self.number}: the reader link never came up\n{self.log()[-3000:]}"
        assert self.process.poll() is None, f"start {self.number} exited with {self.process.returncode}:\n" \
                                            f"{self.log()[-3000:]}"
        self.up_after = time.monotonic() - self.spawned

    def stage(self) -> str:
        """How far this start got, from its log and what it published."""
        text = self.log()
        if self.reading():
            return "playing"
        if "connected to broker" in text:
            return "connected"
        if "journal OK" in text:
            return "restoring"
        return "starting"

    def kill(self) -> str:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)
        assert self.process.returncode == -signal.SIGKILL, f"start {self.number} had already exited:\n{self.log()}"
        return self.stage()

    def first_snapshot(self) -> dict | None:
        """The first secure snapshot this start published (after its own "online")."""
        online = False
        for suffix, body in self.messages():
            if suffix == "status":
                online = online or body == b"online"
            elif suffix == "secure/snapshot" and online:
                return body
        return None


@pytest.mark.parametrize("kill_count", [KILLS], ids=lambda count: f"{count}_kills")
def test_killed_during_play_the_daemon_loses_nothing_and_publishes_the_uninterrupted_history(
        tmp_path, broker, recorder_factory, kill_count):
    started = time.monotonic()
    rng = random.Random(SEED)
    config = load_config(TABLE_6)
    scratch = tmp_path / "scratch"

    # ---- the reference: one uninterrupted simulated run of the same seed, through the same broker ----
    reference_received = Received(recorder_factory("rfid-table/kill-reference/#"))
    reference_journal = tmp_path / "reference.journal"
    reference_file = table_file(tmp_path, "kill-reference", reference_journal)
    sim = subprocess.run(RFID_TABLE + ["sim", "--config", str(reference_file),
                                       "--journal", str(reference_journal), "--link", "direct", "--speed", "0",
                                       "--seed", str(SEED), "--hands", str(HANDS), "--players", str(len(PLAYERS)),
                                       "--pace", str(PACE_S), "--host", broker.host, "--port", str(broker.port)],
                         capture_output=True, text=True, timeout=60)
    assert sim.returncode == 0, sim.stderr[-3000:]
    _, reference_journaled, _, _ = read_journal(reference_journal, scratch)
    assert reference_received.wait_for(lambda: len(reference_received.events("secure")) >= len(reference_journaled))
    reference_by_seq = reference_received.events("secure")
    reference = [reference_by_seq[seq] for seq in sorted(reference_by_seq)]
    assert reference == reference_journaled
    assert [e["seq"] for e in reference] == list(range(1, len(reference) + 1))
    assert [e["type"] for e in reference].count("hand_ended") == HANDS

    # ---- the same play, the daemon killed and restarted ----
    received = Received(recorder_factory("rfid-table/kill-run/#"))
    world = World(config, tmp_path / "reader-main", received)
    journal_path = tmp_path / "table.journal"
    config_file = table_file(tmp_path, "kill-run", journal_path, serial_port=world.path)
    log_dir = tmp_path / "logs"
    log_dir.mkdir()
    stages, weights = zip(*KILL_STAGES)
    playing_kills = kill_count * (dict(KILL_STAGES)["playing"] + dict(KILL_STAGES)["published"]) / sum(weights)
    # Dealer cycles per playing start, on average: the playing kills fall at random points of the whole deal.
    play_cycles = COVERAGE * dealer_seconds(config) / world.cycle_s / max(playing_kills, 1)
    start_s = [0.4]  # measured: from spawning the daemon to its reader link being published
    lives: list[Life] = []
    kills: list[tuple[str, str, list[dict]]] = []  # (stage drawn, stage reached, journal right after the kill)
    last_seq = 0
    life = None
    try:
        for number in range(kill_count + 1):
            life = Life(number, config_file, broker, log_dir, received, after_seq=last_seq)
            if lives:
                lives[-1].end_message = life.first_message
            lives.append(life)
            if number == kill_count:
                break  # the last start plays to the end
            stage = rng.choices(stages, weights)[0]
            if stage == "starting":
                time.sleep(rng.uniform(0, statistics.median(start_s)))
            elif stage == "restoring":
                assert received.wait_for(lambda: "journal OK" in life.log() or life.process.poll() is not None), \
                    f"start {number} never opened its journal:\n{life.log()[-3000:]}"
            elif stage == "playing":
                life.wait_reading()
                start_s.append(life.up_after)
                target = world.clock + rng.uniform(0, 2 * play_cycles)
                world.play()
                assert received.wait_for(lambda: world.clock >= target or world.finished.is_set()
                                         or life.process.poll() is not None or world.error is not None), \
                    f"start {number}: the dealer made no progress (held by what the table did not publish)\n" \
                    f"{life.log()[-3000:]}"
                world.pause()
            elif stage == "published":
                life.wait_reading()
                start_s.append(life.up_after)
                world.play()
                assert received.wait_for(lambda: life.published_game_event() or received.hand_over(HANDS)
                                         or life.process.poll() is not None or world.error is not None,
                                         poll_s=0.001), \
                    f"start {number}: no event published\n{life.log()[-3000:]}"
                world.pause()
            reached = life.kill()
            _, journaled, _, _ = read_journal(journal_path, scratch)
            assert len(journaled) >= last_seq, f"kill {number}: the journal lost events"
            kills.append((stage, reached, journaled))
            last_seq = len(journaled)
            assert world.error is None, world.error

        life.wait_reading()
        world.play()
        assert received.wait_for(lambda: received.hand_over(HANDS), 10 * dealer_seconds(config)), \
            f"hand {HANDS} never ended:\n{life.log()[-3000:]}"
        life.process.send_signal(signal.SIGTERM)
        assert life.process.wait(20) == 0, life.log()[-3000:]
        assert world.error is None, world.error
    finally:
        world.pause()
        if life is not None and life.process.poll() is None:
            life.process.kill()
            life.process.wait(10)
        world.close()

    epoch, journaled, journaled_public, delivered = read_journal(journal_path, scratch)
    secure_by_seq, public_by_seq = received.events("secure"), received.events("public")
    history = [secure_by_seq[seq] for seq in sorted(secure_by_seq)]

    # Nothing committed is lost: what the journal held at each kill is, unchanged, the start of the final journal,
    # and the subscriber got every journaled event on both feeds, exactly as journaled, under one epoch.
    for number, (_stage, _reached, at_kill) in enumerate(kills):
        assert journaled[:len(at_kill)] == at_kill, f"kill {number}: committed events changed or went missing"
    assert sorted(secure_by_seq) == list(range(1, len(journaled) + 1)), "secure events missing"
    assert sorted(public_by_seq) == list(range(1, len(journaled) + 1)), "public events missing"
    assert history == journaled
    assert [public_by_seq[seq] for seq in sorted(public_by_seq)] == journaled_public
    # ... and after the clean stop the journal owes the broker nothing, the events sent again included.
    assert delivered == {"public": len(journaled), "secure": len(journaled)}
    assert received.copies("secure") > len(journaled), "no kill fell between a publication and its delivery mark"

    # The published game is the uninterrupted run's, event for event; the only additions are the reader link
    # coming up at each start that got that far.
    assert game(history) == game(reference)
    links = [e for e in history if e["type"] == "reader_link"]
    playing = sum(reached == "playing" for _, reached, _ in kills)
    assert len(links) >= playing + 1
    assert len(journaled) == len(reference) + len(links)
    assert journaled[-1]["seq"] == reference[-1]["seq"] + len(links)

    # The hand in progress is restored: every restarted daemon's first snapshot is the table its journal holds —
    # the same hand, with the cards of the event history up to the snapshot's seq.
    checked = mid_hand = between_hands = as_journaled = 0
    for life, (_stage, _reached, before) in zip(lives[1:], kills):
        snapshot = life.first_snapshot()
        if snapshot is None:
            continue  # killed before it published one
        was, last = table_state(before), before[-1]["seq"] if before else 0
        where = f"start {life.number}: first snapshot {snapshot_state(snapshot)}, journal at the kill {was}"
        if "another version of the program" in life.log():  # the controller's code changed since the checkpoint
            where += " (restored from the checkpoint's explicit state)"
        assert snapshot["epoch"] == epoch, where
        assert snapshot["seq"] >= last, where
        assert snapshot_state(snapshot) == table_state(history[:snapshot["seq"]]), where
        new_hand = any(e["type"] == "hand_started" for e in history[last:snapshot["seq"]])
        assert snapshot["hand"] == was["hand"] or new_hand, where  # the hand in progress, not a fresh table
        checked += 1
        mid_hand += was["phase"] != "waiting"
        between_hands += was["phase"] == "waiting" and was["hand"] is not None  # the ended hand on show
        as_journaled += snapshot_state(snapshot) == was
    assert checked >= kill_count // 2 and mid_hand >= kill_count // 3, (checked, mid_hand)

    # The kills were spread over the whole run: every hand, and both before and during play.
    at_hand = {table_state(at_kill)["hand"] for _, _, at_kill in kills}
    assert set(range(1, HANDS + 1)) <= at_hand, at_hand
    drawn = {stage: sum(d == stage for d, _, _ in kills) for stage in stages}
    assert min(drawn.values()) >= 2, drawn  # every way of killing, more than once
    reached_counts = {stage: sum(r == stage for _, r, _ in kills) for stage in ("starting", "restoring", "connected",
                                                                                 "playing")}
    assert reached_counts["starting"] >= 2 and reached_counts["restoring"] + reached_counts["connected"] >= 2
    assert playing >= kill_count // 2

    twice = received.copies("secure") - len(journaled)
    print(f"\n{len(kills)} kills (drawn: {drawn}; stage reached: {reached_counts}), {len(lives) - 1} restarts; "
          f"{len(game(reference))} game events compared with the reference; {len(journaled)} journaled events "
          f"({len(links)} reader-link) checked on both feeds, {twice} of them received twice; first snapshots "
          f"checked after {checked} restarts ({mid_hand} mid-hand, {between_hands} between hands, {as_journaled} "
          f"showing exactly the table "
          f"journaled at the kill); the dealer waited {world.held_cycles} cycles for the table; "
          f"{time.monotonic() - started:.1f} s")

