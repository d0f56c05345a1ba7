"""Equity for the broadcast, computed off the hot path in a process of its own.

After every card or fold that changes the spot (hole cards complete, flop, turn, river, a fold; in the stud games
each street dealt), the daemon hands the spot — live seats' hole cards (a stud seat's cards, down and up), the board
(stud: the community card of a short deck), the dead cards (folded hands, burns) — to a worker process and goes
on with the next cycle at once; the result comes back a few cycles later. In another process, a computation
(milliseconds on the flop, about a tenth of a second preflop here, several times that on a Pi) never holds the
daemon's interpreter, so it never delays a card event. A result for a spot that has moved on is dropped: a newer
one is on its way.

A result enters the table as a journaled ``equity`` input; the ``equity`` event it makes is numbered in the table's
sequence like the ``journal`` event, so a restart replays it with the same seq and the stream stays gapless.
Its numbers are secret: on ``public/events`` the event carries only its street (they would reveal the hole
cards); ``secure/events`` has them, and ``delayed/events`` once the broadcast delay is over.
"""

from __future__ import annotations

import logging
import multiprocessing
import time
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any, NamedTuple, Sequence

from controller.betting import VARIANTS
from controller.domain import DomainEvent
from controller.rotation import Game
from controller.stud import GAMES as STUD_GAMES

log = logging.getLogger(__name__)

# the deal's events after which the spot may have changed (the snapshot is read only then)
SPOT_EVENTS = frozenset(("hand_started", "card_dealt", "board_card", "burn", "fold", "hand_ended", "misdeal",
                         "board_corrected", "irregularity_resolved", "floor_ruling", "action"))


class GameKind(NamedTuple):
    """What the equity of a hand's game depends on (sent to the worker with each spot)."""

    hole_cards: int  # a flop game's hole cards (a stud game: 7)
    omaha: bool  # exactly two hole and three board cards
    hi_lo: bool  # split high and low: each seat's low equity too
    stud: str | None = None  # stud, stud8 or razz: each seat's own cards to come, no board; None: a flop game


def spot_of(snapshot: dict, hole_cards: int) -> tuple | None:
    """The spot to compute from a secure snapshot, as a hashable key: (hand, ((seat, cards), ...), board, dead);
    None when there is nothing to compute (no hand, the deal not complete, one live seat, a flop being turned,
    a void hand)."""
    if snapshot.get("phase") in (None, "waiting") or snapshot.get("misdeal"):
        return None
    board = tuple(snapshot["board"])
    if len(board) not in (0, 3, 4, 5):
        return None
    dealt = {s["seat"]: s for s in snapshot["seats"] if s["cards"]}
    players = snapshot.get("players") or sorted(dealt)
    if any(len(s["hole_cards"]) != hole_cards for s in dealt.values()) or any(p not in dealt for p in players):
        return None  # still dealing (or a seat holds a wrong number of cards: the floor sorts it out first)
    # a hand the betting folded (a dead hand ruled by the floor or the clock) may still lie at the seat
    betting_folded = set((snapshot.get("betting") or {}).get("folded") or ())
    folded = {n for n, s in dealt.items() if s["folded"] or n in betting_folded}
    live = tuple((n, tuple(s["hole_cards"])) for n, s in sorted(dealt.items()) if n not in folded)
    if len(live) < 2:
        return None
    dead = tuple(sorted([c for n, s in dealt.items() if n in folded for c in s["hole_cards"]]
                        + list(snapshot.get("burn_cards", ()))))
    return snapshot["hand"], live, board, dead


def stud_spot_of(snapshot: dict) -> tuple | None:
    """A stud hand's spot, as :func:`spot_of`'s, and the burns still to come before seventh street's cards (they
    tell whether the deck runs short): (hand, ((seat, cards so far), ...), community card, dead, burns to come); None
    while a street is being dealt (the live seats hold different numbers of cards), before third street is out, with
    one live seat, and in a void hand. The dead cards are every card the table read out of the live hands: the
    folded seats' (up and down) and the burns, as in the flop games. The board is empty but on seventh street of a
    short deck, where its one card belongs to every live hand."""
    if snapshot.get("phase") in (None, "waiting") or snapshot.get("misdeal"):
        return None
    board = tuple(snapshot["board"])
    dealt = {s["seat"]: s for s in snapshot["seats"] if s["cards"]}
    players = snapshot.get("players") or sorted(dealt)
    if any(p not in dealt for p in players) or len(board) > 1:
        return None
    betting_folded = set((snapshot.get("betting") or {}).get("folded") or ())
    folded = {n for n, s in dealt.items() if s["folded"] or n in betting_folded}
    live = tuple((n, tuple(s["hole_cards"])) for n, s in sorted(dealt.items()) if n not in folded)
    counts = {len(cards) for _n, cards in live}
    if len(live) < 2 or len(counts) != 1:
        return None  # one live seat, or a street half dealt
    (count,) = counts
    if not 3 <= count + len(board) <= 7 or (board and count != 6):
        return None  # third street not out yet; or a card too many (the floor sorts it out first)
    burns = list(snapshot.get("burn_cards", ()))
    dead = tuple(sorted([c for n, s in dealt.items() if n in folded for c in s["hole_cards"]] + burns))
    # a burn before each street, third street's too: one read beyond those is the next street's, already out
    burns_to_come = 0 if board else max(0, 7 - count - max(0, len(burns) - (count - 2)))
    return snapshot["hand"], live, board, dead, burns_to_come


def compute(spot: tuple, kind: GameKind) -> dict:
    """The ``equity`` input's body for a spot of a game of this ``kind``: ``public`` and ``secret`` parts of the
    event."""
    # (the worker process imports the computation; the daemon need not)
    from controller.equity import equity, stud_equity  # noqa: PLC0415

    _hand, live, board, dead = spot[:4]
    started = time.perf_counter()
    if kind.stud is not None:
        result = stud_equity(dict(live), kind.stud, dead, community=board, burns_to_come=spot[4]).as_dict()
    else:
        result = equity(dict(live), board, dead, omaha=kind.omaha, hi_lo=kind.hi_lo).as_dict()
    street = result.pop("street")
    result["dead"] = list(dead)
    return {"public": {"street": street}, "secret": result, "ms": round((time.perf_counter() - started) * 1000, 2)}


def _serve(connection: Connection) -> None:
    """The worker process: compute the newest spot sent (with its game's kind), send back (spot, body or error)."""
    while True:
        try:
            spot, kind = connection.recv()
            while connection.poll():  # only the newest spot matters: the older ones are already stale
                spot, kind = connection.recv()
        except (EOFError, OSError):
            return  # the daemon is gone
        try:
            body = compute(spot, kind)
        except ValueError as exc:  # a card twice (an irregular deal): say why, compute nothing
            body = {"error": str(exc)}
        try:
            connection.send((spot, body))
        except (BrokenPipeError, OSError):
            return


def equity_event(controller: Any, t: float, body: dict) -> DomainEvent:
    """The ``equity`` event of an ``equity`` input, numbered like the controller's own events (replay makes it
    again with the same seq)."""
    return controller.numbered_event("equity", t, dict(body["public"]), dict(body["secret"]))


class EquityWorker:
    """The daemon's side: offers the spot after each cycle that may have changed it (once the cycle's events are
    out), and turns results for the current spot into ``equity`` inputs. The process starts with the first spot."""

    def __init__(self, hole_cards: int, omaha: bool, hi_lo: bool = False, games: Sequence[Game] = ()):
        """The table's game: its ``hole_cards``, whether it is ``omaha`` and ``hi_lo`` (split high and low: each
        hand's low equity too). ``games``: the table's (a rotation's, or its one game), each hand computed as the
        game the snapshot names; a stud game is known by its name."""
        self.hole_cards = hole_cards
        self.omaha = omaha
        self.hi_lo = hi_lo
        self.games = {game.name: game for game in games}
        self._process: BaseProcess | None = None
        self._connection: Connection | None = None
        self._spot: tuple | None = None  # the spot now
        self._sent: tuple | None = None  # the last spot handed to the worker
        self._done: tuple | None = None  # the last spot whose equity went out
        self._changed = False  # the last cycle may have changed the spot
        self._ready: dict[tuple, dict] = {}  # results received, by spot, not yet journaled
        self._awaiting = False  # a spot was sent whose answer has not come back: the pipe is worth a look
        self.last_ms: float | None = None  # the worker's time for the last result

    def _start(self) -> None:
        # spawn, not fork: the child must not inherit the daemon's sockets, serial ports or SQLite handles
        context = multiprocessing.get_context("spawn")
        self._connection, child = context.Pipe()
        process = context.Process(target=_serve, args=(child,), name="rfid-table-equity", daemon=True)
        process.start()
        self._process = process
        child.close()

    def collect(self, controller: Any, now: float, events: list[DomainEvent]) -> tuple[tuple, DomainEvent] | None:
        """After a cycle's inputs (``events``: what they caused): the worker's result for the spot as it still is,
        as an ``equity`` input and its event, for the cycle's record. A cycle whose events may have changed the spot
        gives none: its result waits for :meth:`offer` to tell the spot now, and goes out in the next cycle if it
        still fits."""
        while self._awaiting and self._connection is not None and self._connection.poll():
            try:
                spot, body = self._connection.recv()
            except (EOFError, OSError):
                self._connection = self._process = None
                break
            self._ready[spot] = body
            self._awaiting = spot != self._sent  # the worker answers the newest spot it was sent last
        if any(e.type in SPOT_EVENTS for e in events):
            self._changed = True
            return None
        body = self._ready.pop(self._spot, None) if self._spot is not None and self._spot != self._done else None
        if body is None:
            return None
        self._done = spot = self._spot
        if "error" in body:  # a card twice (an irregular deal): nothing to compute
            log.warning("no equity for hand %s: %s", spot[0] if spot else None, body["error"])
            return None
        self.last_ms = body.pop("ms", None)
        return ("equity", now, body), equity_event(controller, now, body)

    def offer(self, controller: Any) -> None:
        """After the cycle went out: the spot, if the cycle may have changed it, to the worker."""
        if not self._changed:
            return
        self._changed = False
        snapshot = controller.snapshot(secure=True)
        kind = self._game(snapshot.get("game"))
        self._spot = stud_spot_of(snapshot) if kind.stud is not None else spot_of(snapshot, kind.hole_cards)
        self._ready = {spot: body for spot, body in self._ready.items() if spot == self._spot}  # the rest is stale
        if self._spot is None or self._spot in (self._sent, self._done):
            return
        if self._process is None or not self._process.is_alive():
            if self._process is not None:
                log.warning("the equity worker stopped (exit code %s); starting it again", self._process.exitcode)
            self._start()
        assert self._connection is not None, "started with its pipe"
        self._connection.send((self._spot, kind))
        self._sent = self._spot
        self._awaiting = True

    def _game(self, name: str | None) -> GameKind:
        """The kind of the game a snapshot names; the table's for its one game (a snapshot names none then)."""
        if name is None and len(self.games) == 1:
            (name,) = self.games
        if name in STUD_GAMES:
            return GameKind(7, False, name == "stud8", name)
        game = self.games.get(name or "")
        variant = VARIANTS.get(game.engine) if game is not None else None
        if variant is None:
            return GameKind(self.hole_cards, self.omaha, self.hi_lo)
        return GameKind(variant.hole_cards, variant.omaha, variant.hi_lo)

    @property
    def pending(self) -> bool:
        """The spot now was handed to the worker and its equity has not gone out yet."""
        return self._spot is not None and self._sent == self._spot and self._done != self._spot

    def wait(self, timeout_s: float) -> bool:
        """Wait until a result can be taken (or ``timeout_s`` passed); for tests and the benchmark."""
        return self._connection is not None and self._connection.poll(timeout_s)

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
        if self._process is not None:
            self._process.join(2)
            if self._process.is_alive():
                self._process.terminate()


def measure_equity(spots: int = 40, preflop_spots: int = 10, seed: int = 20261201) -> dict[str, float]:
    """``rfid-table bench``: p99 of one equity computation (what the worker process does per spot), for 2, 6 and
    9 live seats on the flop and preflop, on random Hold'em spots with two dead cards (fewer preflop: each one is
    10,000 boards, and the benchmark must stay short)."""
    import random  # noqa: PLC0415

    from controller.cards import FULL_DECK  # noqa: PLC0415

    rng = random.Random(seed)
    holdem = GameKind(2, False, False)
    compute((1, ((1, ("As", "Ad")), (2, ("Kc", "Kd"))), ("2c", "7h", "9s"), ()), holdem)  # evaluator loaded
    result = {}
    for street, board_cards in (("flop", 3), ("preflop", 0)):
        for seats in (2, 6, 9):
            times = []
            for _ in range(spots if board_cards else preflop_spots):
                deck = list(FULL_DECK)
                rng.shuffle(deck)
                live = tuple((s, (deck.pop(), deck.pop())) for s in range(1, seats + 1))
                board = tuple(deck.pop() for _ in range(board_cards))
                times.append(compute((1, live, board, (deck.pop(), deck.pop())), holdem)["ms"])
            times.sort()
            result[f"equity_ms_p99_{street}_{seats}"] = times[min(len(times) - 1, int(0.99 * len(times)))]
    return result
