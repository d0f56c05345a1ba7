"""What the room stores, read from a table's events: pure functions, no database, no network.

A table publishes a ``hand_history`` event at the end of every hand with chips; its secure part (on
``secure/events``, and on ``delayed/events`` after the broadcast delay) carries the hand as Open Hand History
(``ohh_complete``), PokerStars text and PHH (docs/histories.md). :func:`hand_from_event` turns one into the rows
of the store. ``player_seated``/``seat_cleared`` become seatings, ``hand_started`` a hand's start.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

CHIP_ACTIONS = ("Post Ante", "Post SB", "Post BB", "Straddle", "Call", "Bet", "Raise")


class BadEvent(ValueError):
    """An event the room cannot store; the message names what is wrong."""


@dataclass(frozen=True)
class StoredPlayer:
    seat: int
    name: str
    starting_stack: int
    put_in: int
    won: int


@dataclass(frozen=True)
class SeatFacts:
    """What the players' statistics count of one seat's play in a hand (docs/room.md, "Statistics")."""

    seat: int
    acted_preflop: bool  # a preflop decision of its own (a walk's big blind has none)
    vpip: bool  # called, bet or raised preflop (blinds, antes and straddles are forced, not voluntary)
    pfr: bool  # bet or raised preflop
    postflop_aggressive: int  # bets and raises on the flop, turn and river
    postflop_calls: int
    saw_flop: bool  # a flop was turned and the seat had not folded before it
    showdown: bool  # showed or mucked at the showdown


PREFLOP_DECISIONS = ("Fold", "Check", "Call", "Bet", "Raise")
POSTFLOP = ("Flop", "Turn", "River")


def seat_facts(seat: int, actions: list[tuple[int, str, int, str, int, bool]], flop_turned: bool) -> SeatFacts:
    own = [(street, action) for _, street, s, action, _, _ in actions if s == seat]
    preflop = [action for street, action in own if street == "Preflop"]
    return SeatFacts(
        seat=seat,
        acted_preflop=any(a in PREFLOP_DECISIONS for a in preflop),
        vpip=any(a in ("Call", "Bet", "Raise") for a in preflop),
        pfr=any(a in ("Bet", "Raise") for a in preflop),
        postflop_aggressive=sum(1 for street, a in own if street in POSTFLOP and a in ("Bet", "Raise")),
        postflop_calls=sum(1 for street, a in own if street in POSTFLOP and a == "Call"),
        saw_flop=flop_turned and "Fold" not in preflop,
        showdown=any(street == "Showdown" for street, _ in own))


@dataclass(frozen=True)
class StoredHand:
    table_id: str
    epoch: str
    hand: int
    seq: int
    ended_at: float
    game_number: str
    game_type: str
    bet_type: str
    small_blind: int
    big_blind: int
    ante: int
    button: int | None
    table_size: int
    several_boards: bool
    ohh: dict[str, Any]
    phh: str | None
    pokerstars: str
    players: list[StoredPlayer] = field(default_factory=list)
    actions: list[tuple[int, str, int, str, int, bool]] = field(default_factory=list)  # number, street, seat, ...
    cards: list[tuple[int | None, int | None, int, str]] = field(default_factory=list)  # seat, board, position, card
    pots: list[tuple[int, int]] = field(default_factory=list)  # number, amount
    results: list[tuple[int, int, int]] = field(default_factory=list)  # pot, seat, amount
    facts: list[SeatFacts] = field(default_factory=list)


@dataclass(frozen=True)
class Seating:
    table_id: str
    epoch: str
    seq: int
    seat: int
    player_id: str | None
    name: str | None
    at: float


@dataclass(frozen=True)
class HandStart:
    table_id: str
    epoch: str
    hand: int
    at: float


def _need(payload: dict, key: str, kind: type | tuple, where: str) -> Any:
    value = payload.get(key)
    if not isinstance(value, kind) or isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple)
                                                                               else (kind,)):
        raise BadEvent(f"{where}: '{key}' is missing or not {getattr(kind, '__name__', kind)}")
    return value


def hand_from_event(table_id: str, event: dict) -> StoredHand:
    """The rows of one ``hand_history`` event (its secure payload). The OHH object is read as the table wrote it
    (controller/ohh.py): its players, the rounds' actions and cards, the pots and what each paid. Anything else
    is a :class:`BadEvent` naming the table, the event's seq and what is wrong."""
    try:
        return _hand(table_id, event)
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        if isinstance(exc, BadEvent):
            raise
        raise BadEvent(f"table {table_id}, hand_history seq {event.get('seq')}: an OHH copy not as the table "
                       f"writes it ({type(exc).__name__}: {exc})") from None


def _hand(table_id: str, event: dict) -> StoredHand:
    where = f"table {table_id}, hand_history seq {event.get('seq')}"
    epoch = _need(event, "epoch", str, where)
    seq = _need(event, "seq", int, where)
    hand = _need(event, "hand", int, where)
    t = _need(event, "t", (int, float), where)
    wrapper = event.get("ohh_complete")
    if not isinstance(wrapper, dict) or not isinstance(wrapper.get("ohh"), dict):
        raise BadEvent(f"{where}: no 'ohh_complete' (the room reads the secure or delayed feed, which carries it)")
    ohh = wrapper["ohh"]
    pokerstars = _need(event, "pokerstars_complete", str, where)
    ids: dict[int, int] = {}
    players_in: list[dict] = _need(ohh, "players", list, where + ", ohh")
    for p in players_in:
        ids[_need(p, "id", int, where + ", ohh player")] = _need(p, "seat", int, where + ", ohh player")
    actions: list[tuple[int, str, int, str, int, bool]] = []
    cards: list[tuple[int | None, int | None, int, str]] = []
    put_in = {seat: 0 for seat in ids.values()}
    board_of_street: dict[str, int] = {}
    for rnd in _need(ohh, "rounds", list, where + ", ohh"):
        street = _need(rnd, "street", str, where + ", ohh round")
        if rnd.get("cards"):  # a street's board cards; a later round of the same street is the next board
            board = board_of_street[street] = board_of_street.get(street, 0) + 1
            first = {"Flop": 1, "Turn": 4, "River": 5}.get(street, 1)
            cards += [(None, board, first + i, card) for i, card in enumerate(rnd["cards"])]
        for a in rnd.get("actions", ()):
            seat = ids.get(a.get("player_id"))
            if seat is None:
                raise BadEvent(f"{where}: action {a.get('action_number')} names no player of the hand")
            amount = a.get("amount", 0) or 0
            actions.append((_need(a, "action_number", int, where), street, seat, _need(a, "action", str, where),
                            amount, bool(a.get("is_allin", False))))
            if a["action"] in CHIP_ACTIONS:
                put_in[seat] += amount
            if a["action"] == "Dealt Cards" and a.get("cards"):
                cards += [(seat, None, i + 1, card) for i, card in enumerate(a["cards"])]
    # An uncalled bet went back to its maker and is in no pot: what a seat put in above every other seat's total.
    for seat, total in put_in.items():
        others = max((v for s, v in put_in.items() if s != seat), default=0)
        put_in[seat] = min(total, others) if total > others else total
    pots, results = [], []
    won = {seat: 0 for seat in ids.values()}
    for pot in ohh.get("pots", ()):
        number = _need(pot, "number", int, where + ", ohh pot")
        pots.append((number, _need(pot, "amount", int, where + ", ohh pot")))
        for win in pot.get("player_wins", ()):
            seat = ids.get(win.get("player_id"))
            if seat is None:
                raise BadEvent(f"{where}: pot {number} pays no player of the hand")
            results.append((number, seat, win["win_amount"]))
            won[seat] += win["win_amount"]
    if sum(put_in.values()) != sum(amount for _, amount in pots):
        raise BadEvent(f"{where}: the pots ({sum(a for _, a in pots)}) are not what the players put in "
                       f"({sum(put_in.values())})")
    limit = ohh.get("bet_limit") or {}
    return StoredHand(
        table_id=table_id, epoch=epoch, hand=hand, seq=seq, ended_at=float(t),
        game_number=str(ohh.get("game_number", "")), game_type=str(ohh.get("game_type", "")),
        bet_type=str(limit.get("bet_type", "")), small_blind=int(ohh.get("small_blind_amount", 0)),
        big_blind=int(ohh.get("big_blind_amount", 0)), ante=int(ohh.get("ante_amount", 0) or 0),
        button=ohh.get("dealer_seat"), table_size=int(ohh.get("table_size", 10)),
        several_boards="Run_It_Twice" in ohh.get("flags", ()), ohh=ohh, phh=event.get("phh_complete"),
        pokerstars=pokerstars,
        players=[StoredPlayer(p["seat"], str(p.get("name", f"seat{p['seat']}")), int(p.get("starting_stack", 0)),
                              put_in[p["seat"]], won[p["seat"]]) for p in players_in],
        actions=actions, cards=cards, pots=pots, results=results,
        facts=[seat_facts(p["seat"], actions, any(b == 1 and pos == 3 for seat, b, pos, _ in cards if seat is None))
               for p in players_in])


def seating_from_event(table_id: str, event: dict) -> Seating:
    where = f"table {table_id}, {event.get('type')} seq {event.get('seq')}"
    seated = event.get("type") == "player_seated"
    return Seating(table_id, _need(event, "epoch", str, where), _need(event, "seq", int, where),
                   _need(event, "seat", int, where), event.get("player_id") if seated else None,
                   event.get("name") if seated else None, float(_need(event, "t", (int, float), where)))


def start_from_event(table_id: str, event: dict) -> HandStart:
    where = f"table {table_id}, hand_started seq {event.get('seq')}"
    return HandStart(table_id, _need(event, "epoch", str, where), _need(event, "hand", int, where),
                     float(_need(event, "t", (int, float), where)))
