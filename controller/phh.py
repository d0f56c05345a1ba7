"""PHH hand histories (phh-std, TOML) to and from the betting engine.

Players are named ``p1``..``pN`` in PHH order: ``p1`` is the first seat left of the button, ``pN`` the button.
Three or more players: ``p1`` posts the small blind, ``p2`` the big blind. Heads-up: ``p1`` (the seat left of the
button) posts the big blind and ``p2`` (the button) the small blind — PHH and pokerkit still write
``blinds_or_straddles = [SB, BB]`` and swap the two heads-up, and a big-blind ante stays at index 1 (the big blind's
in both cases). The table seats are kept in the optional ``seats`` field (``seats[k-1]`` is ``pk``'s table seat), so
``BettingHand.order`` and the PHH player order are the same list.

Actions: ``d dh p1 AcAd`` (hole cards, ``????`` when unknown), ``d db Jc3d5c`` (board), ``p1 f`` (fold), ``p1 cc``
(check or call), ``p1 cbr 300`` (bet or raise *to* 300), ``p1 sm AcAd`` (show; ``p1 sm`` mucks). Blinds, straddles and
antes are implied by ``antes`` and ``blinds_or_straddles`` and are not written as actions.

Stud games (pokerkit's ``F7S``, ``F7S/8``, ``FR``): ``p1`` is the first seat left of the dealer; ``antes``,
``bring_in``, ``small_bet`` and ``big_bet``, no blinds. Each street's cards are dealt before its actions, to every
seat still in: ``d dh p1 ????7h`` on third street (two down, one up), one card each street after (``d dh p1 Kd``;
the seventh down, ``??`` when unknown; where the deck ran short, seventh street's one community card is ``d db
Kd`` instead). ``p1 pb`` posts the bring-in; a completion, bet or raise is ``cbr``.
Who brings it in and who acts first on each street are not written: they follow from the up cards
(``controller.stud``), as pokerkit finds them.

Reading uses the standard library's ``tomllib``; writing is a small TOML writer for PHH's flat fields.
"""

from __future__ import annotations

import json
import re
import tomllib
from typing import Any, Mapping, Sequence

from controller import stud
from controller.betting import (FIXED_LIMIT, FLHE, FLHE8, FLO8, NLHE, PLO, PLO8, RAZZ, STUD, STUD8, BettingHand,
                                Ruling, Straddle)
from controller.rules import TDA, RuleProfile

# pokerkit's codes (FO/8: fixed-limit Omaha hi-lo; F7S, F7S/8, FR: Seven Card Stud, Stud hi-lo, Razz)
PHH_VARIANTS = {"NT": NLHE, "PO": PLO, "FT": FLHE, "FO/8": FLO8, "F7S": STUD, "F7S/8": STUD8, "FR": RAZZ}
# Hi-lo games pokerkit 0.7.7 has no code for: written under the table's own code ("PLO8", "FLHE8"), which the
# table's replay and exports read and pokerkit does not.
TABLE_CODES = {v.code: v for v in (PLO8, FLHE8)}
_BOARD_COUNTS = (0, 3, 4, 5)
_PLAIN_TEXT = re.compile(r"[ !#-\[\]-~]*")  # printable ASCII but the quote and the backslash: JSON escapes nothing


def to_phh(
    hand: BettingHand,
    hole_cards: Mapping[int, Sequence[str]] | None = None,
    board: Sequence[str] = (),
    shown: Sequence[int] = (),
    finishing_stacks: Mapping[int, int] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """The hand as a PHH dictionary (``dumps`` turns it into TOML). ``shown``: seats that showed, in order. A stud
    hand's ``hole_cards`` are each seat's cards in the order dealt, ``""`` or ``??`` for a card this copy does not
    show (``board``: none)."""
    if hand.variant.stud:
        return _stud_to_phh(hand, hole_cards or {}, board, shown, finishing_stacks, **extra)
    variant = hand.variant.phh_code or (hand.variant.code if hand.variant.code in TABLE_CODES else None)
    if variant is None or (variant == "PO" and hand.variant.hole_cards != 4):
        raise ValueError(f"PHH has no variant code for {hand.variant.code}")
    order = hand.order
    player = {seat: f"p{i + 1}" for i, seat in enumerate(order)}
    n = len(order)
    if hand.big_blind_ante:
        antes = [0] * n
        antes[1] = hand.big_blind_ante
        trimming = False
    else:
        antes = [hand.ante] * n
        trimming = bool(hand.ante)
    blinds = [0] * n
    for a in hand.actions:
        if a.kind in ("post_sb", "post_bb", "straddle"):
            nominal = {"post_sb": hand.small_blind, "post_bb": hand.big_blind}.get(a.kind, a.to_amount)
            blinds[order.index(a.seat)] = nominal
    if n == 2 and not hand.bomb_pot:  # a bomb pot has no blinds, heads-up neither
        blinds = [hand.small_blind, hand.big_blind]
    starting = starting_stacks(hand)
    out: dict[str, Any] = {"variant": variant, "ante_trimming_status": trimming, "antes": antes,
                           "blinds_or_straddles": blinds}
    if hand.variant.structure == FIXED_LIMIT:
        out["small_bet"], out["big_bet"] = hand.limit_bets
    else:
        out["min_bet"] = hand.big_blind
    out["starting_stacks"] = [starting[s] for s in order]
    actions = []
    for s in order:
        cards = "".join(hole_cards[s]) if hole_cards and s in hole_cards else "??" * hand.variant.hole_cards
        actions.append(f"d dh {player[s]} {cards}")
    street = 0
    for a in hand.actions:
        if a.kind in ("post_sb", "post_bb", "straddle", "ante"):
            continue
        street_index = ("preflop", "flop", "turn", "river").index(a.street)
        while street < street_index:
            street += 1
            actions.append(_board_action(board, street))
        if a.kind == "fold":
            actions.append(f"{player[a.seat]} f")
        elif a.base in ("check", "call"):
            actions.append(f"{player[a.seat]} cc")
        else:
            actions.append(f"{player[a.seat]} cbr {a.to_amount}")
    if len(hand.live_seats) > 1:
        while street < 3 and len(board) >= _BOARD_COUNTS[street + 1]:
            street += 1
            actions.append(_board_action(board, street))
        for s in shown:
            cards = "".join(hole_cards[s]) if hole_cards and s in hole_cards else ""
            actions.append(f"{player[s]} sm {cards}".rstrip())
    out["actions"] = actions
    out["seats"] = list(order)
    out["seat_count"] = max(10, max(order))
    if finishing_stacks is not None:
        out["finishing_stacks"] = [finishing_stacks[s] for s in order]
    if hand.bomb_pot:  # user-defined fields (pokerkit ignores them): what the antes alone do not say
        out["_bomb_pot"] = hand.bomb_pot
        out["_small_blind"] = hand.small_blind
        if hand.flip:
            out["_flip"] = True
    out.update(extra)
    return out


def _stud_to_phh(hand: BettingHand, hole_cards: Mapping[int, Sequence[str]], board: Sequence[str],
                 shown: Sequence[int], finishing_stacks: Mapping[int, int] | None, **extra: Any) -> dict[str, Any]:
    order = hand.order
    player = {seat: f"p{i + 1}" for i, seat in enumerate(order)}
    starting = starting_stacks(hand)
    out: dict[str, Any] = {"variant": hand.variant.phh_code, "ante_trimming_status": bool(hand.ante),
                           "antes": [hand.ante] * len(order), "bring_in": hand.bring_in,
                           "small_bet": hand.limit_bets[0], "big_bet": hand.limit_bets[1],
                           "starting_stacks": [starting[s] for s in order]}
    folded_on = {a.seat: hand.variant.streets.index(a.street) for a in hand.actions if a.kind == "fold"}

    def deal(street: int) -> list[str]:
        if street == 4 and board:  # the deck ran short: seventh street is one community card (d db)
            return [f"d db {''.join(board)}"]
        lines = []
        for s in order:
            if folded_on.get(s, 99) < street:
                continue
            cards = [c or "??" for c in hole_cards.get(s, ())]  # "" or "??": a card this copy does not show
            part = cards[0:3] if street == 0 else cards[street + 2:street + 3]
            part += ["??"] * ((3 if street == 0 else 1) - len(part))
            lines.append(f"d dh {player[s]} {''.join(part)}")
        return lines

    actions = deal(0)
    street = 0
    for a in hand.actions:
        if a.kind == "ante":
            continue
        street_index = hand.variant.streets.index(a.street)
        while street < street_index:
            street += 1
            actions += deal(street)
        if a.kind == "fold":
            actions.append(f"{player[a.seat]} f")
        elif a.kind == "bring_in":
            actions.append(f"{player[a.seat]} pb")
        elif a.base in ("check", "call"):
            actions.append(f"{player[a.seat]} cc")
        else:
            actions.append(f"{player[a.seat]} cbr {a.to_amount}")
    if len(hand.live_seats) > 1:
        while street < len(hand.variant.streets) - 1:
            street += 1
            actions += deal(street)
        for s in shown:
            cards = "".join(c or "??" for c in hole_cards[s]) if s in hole_cards else ""
            actions.append(f"{player[s]} sm {cards}".rstrip())
    out["actions"] = actions
    out["seats"] = list(order)
    out["seat_count"] = max(10, max(order))
    if finishing_stacks is not None:
        out["finishing_stacks"] = [finishing_stacks[s] for s in order]
    out.update(extra)
    return out


def starting_stacks(hand: BettingHand) -> dict[int, int]:
    """Stacks before the forced bets: what the seat has now plus everything it put in (less nothing returned)."""
    out = {}
    for s in hand.order:
        dead = hand.dead_money if s == hand.bb_seat else 0
        out[s] = hand.stacks[s] + hand.seat_state(s)["committed"] + dead
    return out


def _board_action(board: Sequence[str], street: int) -> str:
    lo, hi = _BOARD_COUNTS[street - 1], _BOARD_COUNTS[street]
    cards = list(board[lo:hi])
    return "d db " + ("".join(cards) if len(cards) == hi - lo else "??" * (hi - lo))


def dumps(phh: Mapping[str, Any]) -> str:
    """PHH's flat fields as TOML."""
    lines = []
    for key, value in phh.items():
        lines.append(f"{key} = {_toml_value(value)}")
    return "\n".join(lines) + "\n"


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        # what JSON writes: the string in quotes, as it is where it has nothing to escape (an action, a card)
        return f'"{value}"' if _PLAIN_TEXT.fullmatch(value) else json.dumps(value)
    if isinstance(value, (list, tuple)):
        if value and isinstance(value[0], str):
            return "[\n" + "".join(f"  {_toml_value(v)},\n" for v in value) + "]"
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"PHH writer: unsupported value {value!r}")


def loads(text: str) -> dict[str, Any]:
    """A PHH hand history's fields. A text exactly as :func:`dumps` writes it (the table's own histories, read
    back by the replay and the exports) is read without the TOML parser, which took as long as replaying the hand."""
    written = _read_written(text)
    return written if written is not None else tomllib.loads(text)


def _read_written(text: str) -> dict[str, Any] | None:
    """The fields of ``text`` if it is byte for byte what :func:`dumps` writes for them (so TOML reads the same
    fields from it); None for any other text. Its values are written as JSON writes them (integers, true and false,
    strings, lists), so the lines are put together as one JSON object and read at once."""
    members: list[str] = []
    lines = text.split("\n")
    i = 0
    try:
        while i < len(lines):
            line = lines[i]
            i += 1
            if not line:
                continue
            key, sep, raw = line.partition(" = ")
            if not sep:
                return None
            if raw == "[":  # a list of strings, one a line, each followed by a comma
                items = []
                while lines[i] != "]":
                    items.append(lines[i][2:-1])
                    i += 1
                i += 1
                raw = "[" + ",".join(items) + "]"
            members.append(json.dumps(key) + ":" + raw)
        fields = json.loads("{" + ",".join(members) + "}")
        if len(fields) != len(members):  # a key given twice: TOML's error to report
            return None
        return fields if dumps(fields) == text else None
    except (ValueError, IndexError, TypeError):
        return None


def replay(phh: Mapping[str, Any], rules: RuleProfile = TDA) -> tuple[BettingHand, dict[int, list[str]], list[str],
                                                                     list[int]]:
    """Drive a ``BettingHand`` with a PHH hand (exact amounts, declared). Returns the hand, the hole cards by seat,
    the board and the seats that showed. Raises ``ValueError`` if the engine refuses an action."""
    variant = PHH_VARIANTS.get(phh["variant"]) or TABLE_CODES.get(phh["variant"])
    if variant is None:
        raise ValueError(f"variant {phh['variant']!r} is not supported "
                         f"(supported: {', '.join([*PHH_VARIANTS, *TABLE_CODES])})")
    if variant.stud:
        return _replay_stud(phh, variant, rules)
    stacks_list = list(phh["starting_stacks"])
    n = len(stacks_list)
    seats = list(phh.get("seats") or range(1, n + 1))
    button = seats[-1]
    blinds = list(phh["blinds_or_straddles"]) + [0] * n
    antes = phh.get("antes", 0)
    antes = list(antes) if isinstance(antes, list) else [antes] * n
    ante = big_blind_ante = 0
    nonzero = [i for i, a in enumerate(antes) if a]
    if nonzero == [1] and not phh.get("ante_trimming_status", False) and n > 2 or (n == 2 and nonzero == [1]):
        big_blind_ante = antes[1]
    elif nonzero and len(set(antes)) == 1:
        ante = antes[0]
    elif nonzero:
        raise ValueError("only equal antes or a big-blind ante are supported")
    straddles = []
    previous = 1
    for k in range(2, n):
        if blinds[k]:
            kind = "live" if k == previous + 1 else ("button" if k == n - 1 else "mississippi")
            straddles.append(Straddle(blinds[k], kind, seats[k]))
            previous = k
    kwargs: dict[str, Any] = {}
    if variant.structure == FIXED_LIMIT:
        kwargs["bets"] = (phh["small_bet"], phh["big_bet"])
    if phh.get("_bomb_pot"):  # every player's agreed amount as an ante, no blinds (CA GR 14.2, 14.3)
        kwargs.update(bomb_pot=phh["_bomb_pot"], flip=bool(phh.get("_flip")))
        ante = 0
        blinds[0], blinds[1] = phh.get("_small_blind", phh["min_bet"] // 2), phh["min_bet"]
    hand = BettingHand(variant, seats, button, dict(zip(seats, stacks_list)), (blinds[0], blinds[1]), ante=ante,
                       big_blind_ante=big_blind_ante, straddles=straddles, rules=rules, **kwargs)
    if hand.order != seats:
        raise ValueError(f"seats {seats} are not clockwise from the button")
    seat_of = {f"p{i + 1}": s for i, s in enumerate(seats)}
    hole: dict[int, list[str]] = {s: [] for s in seats}
    board: list[str] = []
    shown: list[int] = []
    for raw in phh["actions"]:
        words = raw.split("#")[0].split()
        if not words:
            continue
        if words[0] == "d":
            if words[1] == "dh":
                hole[seat_of[words[2]]] = parse_cards(words[3]) if len(words) > 3 else []
            elif words[1] == "db":
                _end_streets(hand, _BOARD_COUNTS.index(len(board) + len(parse_cards(words[2]))))
                board += parse_cards(words[2])
            continue
        seat = seat_of[words[0]]
        verb = words[1]
        if verb == "f":
            _check(hand.fold(seat), raw)
        elif verb == "cc" and hand.to_call(seat) == 0 and hand.to_act() is None:
            continue  # nothing to decide: a street without betting (a bomb pot's pre-flop) is checked by rule
        elif verb in ("cc", "cbr"):
            _play_chips(hand, seat, words, raw)
        elif verb == "sm":
            if len(words) > 2 and words[2] != "-":
                hole[seat] = parse_cards(words[2])
                shown.append(seat)
        else:
            raise ValueError(f"unsupported PHH action {raw!r}")
    while hand.status == "betting" and hand.round_complete():
        _check(hand.end_street(), "end of hand")
    return hand, hole, board, shown


def _replay_stud(phh: Mapping[str, Any], variant: Any, rules: RuleProfile
                 ) -> tuple[BettingHand, dict[int, list[str]], list[str], list[int]]:
    """A stud hand: the streets open from the up cards dealt (``controller.stud``), as pokerkit opens them."""
    stacks_list = list(phh["starting_stacks"])
    n = len(stacks_list)
    seats = list(phh.get("seats") or range(1, n + 1))
    antes = phh.get("antes", 0)
    antes = list(antes) if isinstance(antes, list) else [antes] * n
    if len(set(antes)) > 1:
        raise ValueError("a stud hand's antes are the same for every seat")
    hand = BettingHand(variant, seats, seats[-1], dict(zip(seats, stacks_list)), (0, 0), ante=antes[0] if antes else 0,
                       bets=(phh["small_bet"], phh["big_bet"]), bring_in=phh["bring_in"], rules=rules)
    if hand.order != seats:
        raise ValueError(f"seats {seats} are not clockwise from the dealer")
    seat_of = {f"p{i + 1}": s for i, s in enumerate(seats)}
    dealt: dict[int, list[str]] = {s: [] for s in seats}  # in the order dealt, "??" where unknown
    community: list[str] = []  # seventh street's one card for every seat, where the deck ran short
    shown: list[int] = []

    def open_streets() -> None:
        while hand.status == "betting":
            if hand.awaiting_opener:
                live = hand.live_seats
                k = hand.street_index
                if any(len(dealt[s]) + len(community) < 3 + k for s in live):
                    return  # the street's cards are not all dealt yet
                if k == 0:
                    first = stud.bring_in_seat({s: dealt[s][2] for s in live}, variant.stud)
                else:
                    first = stud.first_to_act({s: dealt[s][2:3 + min(k, 3)] for s in live}, variant.stud, seats)
                _check(hand.start_street(first), f"open {hand.street}")
            elif hand.round_complete():
                _check(hand.end_street(), "end of street")
            else:
                return

    for raw in phh["actions"]:
        words = raw.split("#")[0].split()
        if not words:
            continue
        if words[0] == "d":
            if words[1] == "dh":
                seat = seat_of[words[2]]
                text = words[3] if len(words) > 3 else ""
                dealt[seat] += [text[i:i + 2] for i in range(0, len(text), 2)]
            elif words[1] == "db":
                community += parse_cards(words[2]) if len(words) > 2 else []
            continue
        open_streets()
        seat = seat_of[words[0]]
        verb = words[1]
        if verb == "f":
            _check(hand.fold(seat), raw)
        elif verb == "pb":
            _check(hand.declare(seat, "bring_in"), raw)
            if hand.seat_state(seat)["owed"]:
                _check(hand.push(seat, [hand.seat_state(seat)["owed"]]), raw)
        elif verb in ("cc", "cbr"):
            _play_chips(hand, seat, words, raw)
        elif verb == "sm":
            if len(words) > 2 and words[2] != "-":
                dealt[seat] = parse_cards(words[2])
                shown.append(seat)
        else:
            raise ValueError(f"unsupported PHH action {raw!r}")
    open_streets()
    hole = {s: [c for c in cards if c != "??"] for s, cards in dealt.items()}
    return hand, hole, community, shown


def _end_streets(hand: BettingHand, street_index: int) -> None:
    while hand.status == "betting" and hand.street_index < street_index:
        _check(hand.end_street(), f"collect before street {street_index}")


def parse_cards(text: str) -> list[str]:
    """The cards of a PHH card string (``AsKd``), without the unknown ones (``????``)."""
    cards = [text[i : i + 2] for i in range(0, len(text), 2)]
    return [c for c in cards if c != "??"]


def _play_chips(hand: BettingHand, seat: int, words: list[str], raw: str) -> None:
    """A PHH ``cc`` (check or call) or ``cbr`` (bet or raise to an amount), played as the chips a player pushes."""
    if words[1] == "cc":
        call = hand.to_call(seat)
        if call == 0:
            _check(hand.check(seat), raw)
        else:
            _check(hand.declare(seat, "call"), raw)
            _check(hand.push(seat, [call]), raw)
        return
    amount = int(words[2])
    before = hand.bets[seat]
    _check(hand.declare(seat, "bet" if hand.current_bet == 0 else "raise", amount), raw)
    if hand.seat_state(seat)["owed"]:
        _check(hand.push(seat, [amount - before]), raw)


def _check(ruling: Ruling, what: str) -> None:
    if not ruling.ok:
        raise ValueError(f"{what}: {ruling.code}: {ruling.message}")
