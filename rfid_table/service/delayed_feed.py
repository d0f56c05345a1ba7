"""The delayed feed for the broadcast: ``delayed/events`` released from the journal once the delay is over, and the
retained ``delayed/hand`` that lets an overlay play the hand back whole.

A part of the pipeline's delivery (:mod:`rfid_table.service.delivery`), only with a journal and a delay: the feed is
released from what the journal holds, so a restart neither repeats nor loses it.
"""

from __future__ import annotations

from controller import DomainEvent
from rfid_table.service.journal import Journal
from rfid_table.service.sink import Sink


class DelayedHand:
    """What ``delayed/hand`` holds: the delayed feed's events from the newest released ``hand_started`` on, and the
    hand before it (its end may have gone out moments before the next hand's start, and a late result of it comes
    after that start). A broadcast overlay that missed some of them (a broker outage, a subscription made late) or
    opens during the playback takes it and plays the hand back whole.

    In memory, as they are released (a hand is 100 to 200 events), and read back from the journal after a restart.
    At most LIMIT: after a long stretch without a hand only the newest stay.
    """

    LIMIT = 1000

    def __init__(self) -> None:
        self.events: list[DomainEvent] = []
        self.released: float | None = None  # the stamp at which the newest hand's start went out; None: not known
        self.released_before: float | None = None  # ... and the hand before's, when events begin with its start
        self.changed = False  # since it was last published
        self.restored = False
        self._newest = 0  # where the newest hand starts in events

    def restore(self, journal: Journal, upto: int) -> None:
        """At the first release after a start: the hands as the feed had released them up to ``upto`` (the
        journal's mark: what the broker acknowledged; the rest is released again), their release time unknown."""
        self.restored = True
        if upto > 0:
            read = journal.events_after(max(0, upto - self.LIMIT), limit=self.LIMIT)
            self.add([e.domain_event() for e in read if e.seq <= upto], None)

    def add(self, events: list[DomainEvent], stamp: float | None) -> None:
        for event in events:
            if event.type == "hand_started":
                del self.events[:self._newest]  # the hand before the one before goes
                begins_a_hand = bool(self.events) and self.events[0].type == "hand_started"
                self.released_before = self.released if begins_a_hand else None
                self._newest, self.released = len(self.events), stamp
            elif not self.events:
                self.released = stamp
            self.events.append(event)
        overflow = len(self.events) - self.LIMIT
        if overflow > 0:
            del self.events[:overflow]
            self._newest = max(0, self._newest - overflow)
            self.released_before = None  # the hand before's start is cut off
        self.changed = self.changed or bool(events)


class DelayedFeed:
    """Releases every journaled event whose delay is over to the sink's delayed feed, in order, and keeps
    ``delayed/hand`` up to date.

    The journal's mark for the ``delayed`` feed says what the broker has acknowledged, so after a restart the release
    goes on where it stopped and never early. ``release`` = ``time``: an event goes out ``delay_s`` after it
    happened; ``hand``: a hand's events go out together, ``delay_s`` after the hand ended (events outside any hand,
    like a reader going down, follow the time rule).

    ``board_offset_s`` (with ``time`` only: the configuration refuses it with ``hand``) holds each ``board_card``
    back that much longer, to match a video whose board shot comes later. The feed stays in ``seq`` order: an event
    after a board card waits for it.
    """

    # delayed/hand is sent again with the newest released events at most this often (table time): with release =
    # "time" the feed releases one event at a time, and each message carries the whole hand so far.
    HAND_INTERVAL_S = 1.0
    LOOK_AHEAD = 500  # events whose times are read at once to find the due ones

    def __init__(self, journal: Journal, sink: Sink, delay_s: float, release: str, board_offset_s: float = 0.0):
        self.journal = journal
        self.sink = sink
        self.delay_s = delay_s
        self.release_by = release
        self.board_offset_s = board_offset_s
        self.hand = DelayedHand()
        self._upto = 0  # the last seq handed to the delayed feed (the journal keeps what was acked)
        self._release_at = float("-inf")  # table time before which no delayed event can be due
        self._hand_sent_at = float("-inf")  # table time delayed/hand was last published

    def release(self, now: float, stamp: float) -> None:
        """Hand the sink every journaled event whose delay is over by ``now`` (``stamp``: the cycle's wall stamp, for
        delayed/hand)."""
        if now < self._release_at:
            return
        start = max(self._upto, self.journal.delivered("delayed"))
        if not self.hand.restored:
            self.hand.restore(self.journal, start)
        due = self._due(now, start)
        if due:
            events = [e.domain_event() for e in self.journal.events_after(start, limit=due)]
            taken = self.sink.publish_delayed(events)
            taken = len(events) if taken is None else taken
            if taken:
                self._upto = events[taken - 1].seq
                self.hand.add(events[:taken], stamp)
            if taken < len(events):
                self._release_at = now  # the publisher's pace: the rest in the next cycles

    def _due(self, now: float, start: int) -> int:
        """How many events after seq ``start`` are due, from their times alone (their bodies are read, and decoded,
        only when they go); sets when to look again."""
        due = 0
        ended_at: dict[int, float | None] = {}
        times = self.journal.event_times_after(start, limit=self.LOOK_AHEAD)
        # Nothing journaled can come due before the delay has passed from now (an event not yet journaled, or a
        # hand that has not ended yet, happens from now on): look again then, unless something says sooner.
        self._release_at = now + self.delay_s
        for _seq, t, hand, kind in times:
            if self.release_by == "hand" and hand is not None:
                if hand not in ended_at:
                    ended_at[hand] = self.journal.hand_ended_at(hand)
                at = ended_at[hand]
            else:
                at = t + self.board_offset_s if kind == "board_card" else t
            if at is None:
                break  # the hand is still running
            if at > now - self.delay_s:
                self._release_at = at + self.delay_s
                break
            due += 1
        else:
            if len(times) == self.LOOK_AHEAD:
                self._release_at = now  # more may be due: the next cycle goes on
        return due

    def publish_hand(self, now: float) -> None:
        """delayed/hand with what the feed has released since it was last sent, at most every HAND_INTERVAL_S (the
        publisher keeps the latest for a broker that is away)."""
        if now - self._hand_sent_at >= self.HAND_INTERVAL_S and self._send_hand():
            self._hand_sent_at = now

    def finish(self) -> None:
        """At shutdown: delayed/hand with all the feed has released, the last second's release too."""
        self._send_hand()

    def _send_hand(self) -> bool:
        hand = self.hand
        if not hand.changed:
            return False
        hand.changed = False
        self.sink.publish_delayed_hand(list(hand.events), hand.released, hand.released_before)
        return True


class NoDelayedFeed:
    """No delay (or no journal to release it from): nothing goes out delayed."""

    def release(self, now: float, stamp: float) -> None:
        pass

    def publish_hand(self, now: float) -> None:
        pass

    def finish(self) -> None:
        pass
