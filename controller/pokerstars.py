"""PokerStars-style hand-history text: what PokerTracker and Hold'em Manager import.

Written line for line as PokerStars writes a hand (play chips, so amounts have no currency sign)::

    PokerStars Hand #0217961180819:  Hold'em No Limit (50/100) - 2026/12/01 9:26:03 UTC [2026/12/01 4:26:03 ET]
    Table 'main-2' 10-max Seat #3 is the button
    Seat 1: seat1 (10000 in chips)
    ...
    seat4: posts small blind 50
    seat5: posts big blind 100
    *** HOLE CARDS ***
    Dealt to seat1 [Ah Kd]
    seat6: raises 200 to 300
    seat1: calls 300
    ...
    *** FLOP *** [2s 6d 6h]
    *** TURN *** [2s 6d 6h] [8c]
    *** RIVER *** [2s 6d 6h 8c] [Kd]
    *** SHOW DOWN ***
    seat6: shows [Jd Js] (two pair, Jacks and Sixes)
    seat6 collected 1350 from pot
    *** SUMMARY ***
    Total pot 1350 | Rake 0
    Board [2s 6d 6h 8c Kd]
    Seat 1: seat1 showed [Ah Kd] and lost with a pair of Sixes

Antes are ``posts the ante``; raises are ``raises <by> to <total>``; an uncalled bet is ``Uncalled bet (N) returned
to``; with side pots the collections say ``from main pot`` and ``from side pot`` (``side pot-1``, ``-2`` when there
are several) and the summary lists each pot. A hi-lo pot is collected a line per half, the high half first, on each
board of a hand run twice too. Shown hands carry PokerStars' description (``a pair of Aces``). A copy
that reveals only the hands shown at the showdown reads like an observer's history: their cards are in the
``shows`` lines. One that reveals more (the secure feed's, ``--all-cards``) has a ``Dealt to`` line for every seat
whose cards it carries (PokerStars writes one for its user only; trackers read several). Without a start time
(the feed's copy: the controller keeps no clock) the header has no date; ``rfid-table export`` writes it from the
journal, in UTC and in ET as PokerStars' own clients do.

Stud games in PokerStars' stud layout (``7 Card Stud Limit``, ``7 Card Stud Hi/Lo Limit``, ``Razz Limit``): no
button, the antes, then ``*** 3rd STREET ***`` to ``*** 6th STREET ***`` and ``*** RIVER ***`` (seventh street),
each opening with a ``Dealt to`` line per seat still in: the cards it had, then the new one (``Dealt to seat1 [9h 2c
Kd] [5s]``; down cards only where the copy may show them). ``brings in for 2``, ``completes it to 4``; a shown razz
hand's words are its low (``Lo: 7,5,4,2,A``). Where the deck ran short, the one community card is written as the
flop games write a street's board card, ``*** RIVER *** [Ks]``, with no ``Dealt to`` lines, and in the summary's
``Board [Ks]``; a shown hand lists the player's own six cards, its words count the community card.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from itertools import combinations
from typing import Mapping, Sequence

from controller.betting import FIXED_LIMIT, POT_LIMIT, Variant
from controller.cards import parse_card
from controller.histories import BOARD_COUNTS, ORDINALS, STREETS, HandRecord
from controller.showdown import evaluator_id, id_evaluators, low_rank, razz_rank

RANK_ORDER = "23456789TJQKA"
RANK_NAMES = dict(zip(RANK_ORDER, ("Deuce", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine", "Ten", "Jack",
                                   "Queen", "King", "Ace")))


def to_pokerstars(record: HandRecord) -> str:
    """The hand as PokerStars hand-history text (one hand, ending in a newline)."""
    if record.hand.variant.stud:
        return _stud_text(record)
    hand = record.hand
    name = record.name
    lines = [_header(record), f"Table '{record.table_name}' {record.table_size}-max Seat #{hand.button} is the button"]
    starting = record.starting_stacks()
    for s in record.seats:
        lines.append(f"Seat {s}: {name(s)} ({starting[s]} in chips)")
    actions = record.actions()
    posts = {"ante": "posts the ante", "small_blind": "posts small blind", "big_blind": "posts big blind",
             "straddle": "posts straddle"}
    forced = [a for a in actions if a.kind in posts]
    for a in sorted(forced, key=lambda a: a.kind != "ante"):  # PokerStars lists the antes before the blinds
        lines.append(f"{name(a.seat)}: {posts[a.kind]} {a.added}{' and is all-in' if a.all_in else ''}")
    lines.append("*** HOLE CARDS ***")
    known = [s for s in hand.order if record.cards(s)]
    if any(s not in record.shown for s in known):  # otherwise an observer's history: the cards are where they showed
        for s in known:
            lines.append(f"Dealt to {name(s)} [{' '.join(record.cards(s))}]")
    uncalled = record.uncalled()
    played = record.streets_played()
    several = record.several_boards
    shared = record.shared_board() if several and not record.double_board else None
    for index, street in enumerate(STREETS[:played]):
        if index and (shared is None or BOARD_COUNTS[index] <= shared):
            if record.double_board and several:  # both boards' cards of the street, then its betting
                lines += [_street_line(b, index, ORDINALS[i]) for i, b in enumerate(record.boards)]
            else:
                lines.append(_street_line(record.board, index))
        facing = 0
        for a in actions:
            if a.street != street:
                continue
            if a.kind in posts:
                facing = max(facing, a.to)
                continue
            all_in = " and is all-in" if a.all_in else ""
            lines.append(f"{name(a.seat)}: {_verb(a.kind, a.added, a.to, facing)}{all_in}")
            facing = max(facing, a.to)
        for seat, amount in uncalled.get(street, {}).items():
            lines.append(f"Uncalled bet ({amount}) returned to {name(seat)}")
    if shared is not None:  # the runs, one after the other, from the first street they did not share
        for i, b in enumerate(record.boards):
            lines += [_street_line(b, index, ORDINALS[i]) for index in range(1, 4) if BOARD_COUNTS[index] > shared]
    won = record.winnings()
    boards = list(record.boards) if several else [record.board]
    descriptions = [{s: _described(hand.variant, record.cards(s), b) for s in record.shown
                     if record.cards(s) and len(b) == 5} for b in boards]
    labels = _pot_labels(len(record.pots))
    if record.showdown:
        for i, b in enumerate(boards):
            lines.append(f"*** {ORDINALS[i]} SHOW DOWN ***" if several else "*** SHOW DOWN ***")
            for s in record.showdown:
                if s in descriptions[i]:
                    lines.append(f"{name(s)}: shows [{' '.join(record.cards(s))}] ({descriptions[i][s]})")
                elif not i:
                    lines.append(f"{name(s)}: mucks hand")
            if several:
                lines += _collected(record, _board_collections(record, i), labels)
    if not several and record.pot_halves:  # hi-lo: a line per half, the high half first (PokerStars' layout)
        lines += _collected(record, [(i, shares) for i, halves in enumerate(record.pot_halves)
                                     for shares in reversed(halves)], labels)  # (written from the last)
    elif not several:
        lines += _collected(record, list(enumerate(shares for _amount, shares in record.pots)), labels)
    if not record.showdown:
        for s in sorted(won, key=hand.order.index):
            lines.append(f"{name(s)}: doesn't show hand")
    lines.append("*** SUMMARY ***")
    pots = "".join(f" {label.capitalize()} {amount}." for label, (amount, _) in zip(labels, record.pots))
    lines.append(f"Total pot {record.total_pot}{pots if len(record.pots) > 1 else ''} | Rake 0")
    if several:
        if not record.double_board:
            lines.append("Hand was run twice" if record.runs == 2 else f"Hand was run {_times(record.runs)} times")
        lines += [f"{ORDINALS[i]} Board [{' '.join(b)}]" for i, b in enumerate(boards)]
    else:
        shown_board = record.board[: (0, 3, 4, 5)[played - 1]]
        if shown_board:
            lines.append(f"Board [{' '.join(shown_board)}]")
    folded = record.folded_on()
    put_in = {a.seat for a in actions if a.kind in ("call", "bet", "raise", "small_blind", "big_blind", "straddle")}
    won_on = [_won_on(record, i) for i in range(len(boards))]
    for s in record.seats:
        lines.append(f"Seat {s}: {name(s)}{_position(record, s)} "
                     f"{_result(record, s, folded, put_in, won, descriptions, won_on)}")
    return "\n".join(lines) + "\n"


STUD_GAMES = {"stud": "7 Card Stud", "stud8": "7 Card Stud Hi/Lo", "razz": "Razz"}
STUD_STREET_NAMES = ("3rd STREET", "4th STREET", "5th STREET", "6th STREET", "RIVER")
STUD_FOLDED_ON = ("3rd Street", "4th Street", "5th Street", "6th Street", "River")


def _stud_text(record: HandRecord) -> str:
    hand = record.hand
    name = record.name
    stakes = "/".join(map(str, hand.limit_bets))
    header = f"PokerStars Hand #{record.game_number}:  {STUD_GAMES[hand.variant.stud]} Limit ({stakes})"
    if record.started is not None:
        header += f" - {_stamp(record.started, 'UTC')}"
        eastern = _eastern(record.started)
        if eastern is not None:
            header += f" [{_stamp(eastern, 'ET')}]"
    lines = [header, f"Table '{record.table_name}' {record.table_size}-max"]
    starting = record.starting_stacks()
    for s in record.seats:
        lines.append(f"Seat {s}: {name(s)} ({starting[s]} in chips)")
    actions = record.actions()
    for a in actions:
        if a.kind == "ante":
            lines.append(f"{name(a.seat)}: posts the ante {a.added}{' and is all-in' if a.all_in else ''}")
    folded = record.folded_on()
    uncalled = record.uncalled()
    streets = hand.variant.streets
    for index, street in enumerate(streets[:record.streets_played()]):
        community = f" [{' '.join(record.board)}]" if index == len(streets) - 1 and record.board else ""
        lines.append(f"*** {STUD_STREET_NAMES[index]} ***{community}")  # (the deck ran short: a shared card)
        for s in hand.order:
            if s in folded and streets.index(folded[s]) < index:
                continue
            dealt = list(record.hole_cards.get(s, ()))
            before = [c for c in dealt[:index + 2] if c]
            new = [c for c in dealt[index + 2:index + 3] if c] if index else [c for c in dealt[:3] if c]
            if index == 0 and new:
                lines.append(f"Dealt to {name(s)} [{' '.join(new)}]")
            elif new:
                lines.append(f"Dealt to {name(s)} " + (f"[{' '.join(before)}] " if before else "") + f"[{new[0]}]")
        facing = 0
        for a in actions:
            if a.street != street or a.kind == "ante":
                continue
            all_in = " and is all-in" if a.all_in else ""
            if a.kind == "bring_in":
                lines.append(f"{name(a.seat)}: brings in for {a.added}{all_in}")
            elif a.kind == "complete":
                lines.append(f"{name(a.seat)}: completes it to {a.to}{all_in}")
            else:
                lines.append(f"{name(a.seat)}: {_verb(a.kind, a.added, a.to, facing)}{all_in}")
            facing = max(facing, a.to)
        for seat, amount in uncalled.get(street, {}).items():
            lines.append(f"Uncalled bet ({amount}) returned to {name(seat)}")
    won = record.winnings()
    described = {s: _described_stud(hand.variant, [*record.cards(s), *record.board]) for s in record.shown
                 if len(record.cards(s)) + len(record.board) >= 5}
    labels = _pot_labels(len(record.pots))
    if record.showdown:
        lines.append("*** SHOW DOWN ***")
        for s in record.showdown:
            if s in described:
                lines.append(f"{name(s)}: shows [{' '.join(record.cards(s))}] ({described[s]})")
            else:
                lines.append(f"{name(s)}: mucks hand")
    if record.pot_halves:
        lines += _collected(record, [(i, shares) for i, halves in enumerate(record.pot_halves)
                                     for shares in reversed(halves)], labels)
    else:
        lines += _collected(record, list(enumerate(shares for _amount, shares in record.pots)), labels)
    if not record.showdown:
        for s in sorted(won, key=hand.order.index):
            lines.append(f"{name(s)}: doesn't show hand")
    lines.append("*** SUMMARY ***")
    pots = "".join(f" {label.capitalize()} {amount}." for label, (amount, _) in zip(labels, record.pots))
    lines.append(f"Total pot {record.total_pot}{pots if len(record.pots) > 1 else ''} | Rake 0")
    if record.board:
        lines.append(f"Board [{' '.join(record.board)}]")
    put_in = {a.seat for a in actions if a.kind in ("call", "bet", "raise", "complete", "bring_in")}
    for s in record.seats:
        if s in folded:
            result = f"folded on the {STUD_FOLDED_ON[streets.index(folded[s])]}" + ("" if s in put_in else " (didn't bet)")
        elif s in described:
            cards = " ".join(record.cards(s))
            result = (f"showed [{cards}] and won ({won[s]}) with {described[s]}" if won.get(s) else
                      f"showed [{cards}] and lost with {described[s]}")
        elif won.get(s):
            result = f"collected ({won[s]})"
        else:
            held = record.cards(s)
            result = f"mucked [{' '.join(held)}]" if held else "mucked"
        lines.append(f"Seat {s}: {name(s)} {result}")
    return "\n".join(lines) + "\n"


def _described_stud(variant: Variant, cards: Sequence[str]) -> str:
    """A shown stud hand's words: the high hand; in razz its low, in stud8 both as the hi-lo games write them."""
    if variant.stud == "razz":
        value = razz_rank(list(cards))
        ranks = [(value >> shift) & 15 for shift in (16, 12, 8, 4, 0)]
        return "Lo: " + ",".join({1: "A", 10: "T", 11: "J", 12: "Q", 13: "K"}.get(r, str(r)) for r in ranks if r)
    return _described(variant, cards, [])


def _header(record: HandRecord) -> str:
    hand = record.hand
    structure = hand.variant.structure
    limit = "Limit" if structure == FIXED_LIMIT else "Pot Limit" if structure == POT_LIMIT else "No Limit"
    split = " Hi/Lo" if hand.variant.hi_lo else ""  # "Omaha Hi/Lo Limit", "Omaha Hi/Lo Pot Limit"
    if hand.variant.omaha:
        count = "" if hand.variant.hole_cards == 4 else f"{hand.variant.hole_cards} Card "
        game = f"{count}Omaha{split} {limit}"
    else:
        game = f"Hold'em{split} {limit}"
    stakes = "/".join(map(str, hand.limit_bets if structure == FIXED_LIMIT else (hand.small_blind, hand.big_blind)))
    line = f"PokerStars Hand #{record.game_number}:  {game} ({stakes})"
    if record.started is not None:
        line += f" - {_stamp(record.started, 'UTC')}"
        eastern = _eastern(record.started)
        if eastern is not None:
            line += f" [{_stamp(eastern, 'ET')}]"
    return line


def _street_line(board: Sequence[str], index: int, ordinal: str = "") -> str:
    """``*** FLOP *** [..]``, ``*** TURN *** [flop] [turn]`` ...; a run's or a second board's with its ordinal
    (``*** SECOND TURN ***``), as PokerStars writes a hand run twice."""
    street = f"{ordinal} {STREETS[index].upper()}".strip()
    cards = board[BOARD_COUNTS[index - 1]:BOARD_COUNTS[index]]
    if index == 1:
        return f"*** {street} *** [{' '.join(cards)}]"
    return f"*** {street} *** [{' '.join(board[:BOARD_COUNTS[index - 1]])}] [{' '.join(cards)}]"


def _collected(record: HandRecord, collections: Sequence[tuple[int, Mapping[int, int]]], labels: list[str]
               ) -> list[str]:
    lines = []
    for index, shares in reversed(collections):  # PokerStars pays the last side pot first
        for s, share in shares.items():
            if share:
                lines.append(f"{record.name(s)} collected {share} from {labels[index]}")
    return lines


def _board_collections(record: HandRecord, board: int) -> list[tuple[int, Mapping[int, int]]]:
    """What each pot paid out on ``board``, as ``_collected`` takes it: in a hi-lo game half by half, a line each,
    the high half first, as PokerStars writes a hand run twice ("Player0 collected $40.75 from pot", then the low
    half's lines); a seat that won both halves, or tied one, has a line for each. The units left over by the
    division between the boards, which the board's shares count, are on the seat's first half."""
    out: list[tuple[int, Mapping[int, int]]] = []
    for index, shares in record.board_collections(board):
        halves = [dict(h) for h in _halves_on(record, index, board)]
        if not halves:
            out.append((index, shares))
            continue
        for seat, total in shares.items():
            extra = total - sum(h.get(seat, 0) for h in halves)
            if extra:
                half = next((h for h in halves if seat in h), halves[0])
                half[seat] = half.get(seat, 0) + extra
        out += [(index, h) for h in reversed(halves)]  # (``_collected`` writes from the last)
    return out


def _halves_on(record: HandRecord, pot: int, board: int) -> Sequence[Mapping[int, int]]:
    """A hi-lo pot's halves on ``board``, the high half first (none: not a split game)."""
    parts = record.pot_boards[pot] if pot < len(record.pot_boards) else ()
    if not parts:  # a pot that played the first board only
        return record.pot_halves[pot] if board == 0 and pot < len(record.pot_halves) else ()
    halves = record.board_halves[pot] if pot < len(record.board_halves) else ()
    return next((halves[i] for i, (b, _s) in enumerate(parts) if b == board and i < len(halves)), ())


def _won_on(record: HandRecord, board: int) -> dict[int, int]:
    won: dict[int, int] = {}
    for _index, shares in record.board_collections(board):
        for s, v in shares.items():
            if v:
                won[s] = won.get(s, 0) + v
    return won


def _times(runs: int) -> str:
    return {3: "three", 4: "four"}.get(runs, str(runs))


def _stamp(moment: datetime, zone: str) -> str:
    return f"{moment:%Y/%m/%d} {moment.hour}:{moment:%M:%S} {zone}"


def _eastern(moment: datetime) -> datetime | None:
    try:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError  # noqa: PLC0415 (a machine may lack the zone data)
    except ImportError:  # pragma: no cover
        return None
    try:
        return moment.astimezone(ZoneInfo("America/New_York"))
    except ZoneInfoNotFoundError:
        return None


def _verb(kind: str, added: int, to: int, facing: int) -> str:
    if kind == "fold":
        return "folds"
    if kind == "check":
        return "checks"
    if kind == "call":
        return f"calls {added}"
    if kind == "bet":
        return f"bets {to}"
    return f"raises {to - facing} to {to}"


def _pot_labels(count: int) -> list[str]:
    if count == 1:
        return ["pot"]
    if count == 2:
        return ["main pot", "side pot"]
    return ["main pot"] + [f"side pot-{i}" for i in range(1, count)]


def _position(record: HandRecord, seat: int) -> str:
    hand = record.hand
    out = " (button)" if seat == hand.button else ""
    if seat == hand.sb_seat:
        out += " (small blind)"
    elif seat == hand.bb_seat:
        out += " (big blind)"
    return out


def _result(record: HandRecord, seat: int, folded: dict[int, str], put_in: set[int], won: dict[int, int],
            descriptions: list[dict[int, str]], won_on: list[dict[int, int]]) -> str:
    if seat in folded:
        street = folded[seat]
        if street == "preflop":
            return "folded before Flop" + ("" if seat in put_in else " (didn't bet)")
        return f"folded on the {street.capitalize()}"
    if seat in descriptions[0]:
        cards = " ".join(record.cards(seat))
        if len(descriptions) > 1:  # one result per board: "and won (X) with ..., and lost with ..."
            results = [f"and won ({won_on[i][seat]}) with {d[seat]}" if won_on[i].get(seat) else
                       f"and lost with {d[seat]}" for i, d in enumerate(descriptions)]
            return f"showed [{cards}] " + ", ".join(results)
        if won.get(seat):
            return f"showed [{cards}] and won ({won[seat]}) with {descriptions[0][seat]}"
        return f"showed [{cards}] and lost with {descriptions[0][seat]}"
    if won.get(seat):
        return f"collected ({won[seat]})"
    held = record.cards(seat)
    return f"mucked [{' '.join(held)}]" if held else "mucked"


# ---- what PokerStars says a shown hand is ----------------------------------------------------------------


def _described(variant: Variant, hole: Sequence[str], board: Sequence[str]) -> str:
    """A shown hand's words; in a hi-lo game both ways as PokerStars writes them: ``HI: a pair of Kings; LO:
    7,6,5,3,A`` (``HI: ...`` alone without a low)."""
    high = describe(variant.omaha, hole, board)
    if not variant.hi_lo:
        return high
    low = low_rank(variant, hole, board)
    if low is None:
        return f"HI: {high}"
    ranks = [(low >> shift) & 15 for shift in (16, 12, 8, 4, 0)]  # the five low ranks, the highest first
    return f"HI: {high}; LO: {','.join('A' if r == 1 else str(r) for r in ranks)}"


def describe(omaha: bool, hole: Sequence[str], board: Sequence[str]) -> str:
    """PokerStars' words for the best five-card hand (``two pair, Aces and Kings``). Omaha uses exactly two hole
    cards and three of the board."""
    hole, board = [parse_card(c) for c in hole], [parse_card(c) for c in board]  # checked once, not per candidate
    if len(set(hole + board)) != len(hole) + len(board):
        raise ValueError(f"duplicate card among {hole + board}")
    evaluate_cards, evaluate_omaha = id_evaluators(omaha)
    # The evaluator ranks the cards' ids (evaluator_id); the words are made from the cards' names.
    name_of = {evaluator_id(c): c for c in hole + board}
    hole_ids, board_ids = [evaluator_id(c) for c in hole], [evaluator_id(c) for c in board]
    if not omaha:
        # The evaluator's rank of the seven cards is that of the best five, and hands of one rank have the same
        # ranks and flush, so the same words: each rank is put into words once (every shown hand asks this).
        rank = evaluate_cards(*hole_ids, *board_ids)
        words = _WORDS_OF_RANK.get(rank)
        if words is None:
            five = next(five for five in combinations(hole_ids + board_ids, 5) if evaluate_cards(*five) == rank)
            words = _WORDS_OF_RANK[rank] = _words([name_of[i] for i in five])
        return words
    candidates = [h + b for h in combinations(hole_ids, 2) for b in combinations(board_ids, 3)]
    if len(board) == 5 and len(hole) >= 4 and evaluate_omaha is not None:
        # Omaha's evaluator (there is one: the game is Omaha) ranks the best two and three at once, the same way
        rank = min(evaluate_omaha(*board_ids, *four) for four in combinations(hole_ids, 4))
        words = _WORDS_OF_RANK.get(rank)
        if words is None:
            five = next(five for five in candidates if evaluate_cards(*five) == rank)
            words = _WORDS_OF_RANK[rank] = _words([name_of[i] for i in five])
        return words
    # Every candidate is five checked cards, so the evaluator ranks them directly.
    return _words([name_of[i] for i in min(candidates, key=lambda five: evaluate_cards(*five))])


_WORDS_OF_RANK: dict[int, str] = {}  # the evaluator's rank of a five-card hand (1 to 7462) → its words


def _plural(rank: str) -> str:
    word = RANK_NAMES[rank]
    return word + ("es" if word.endswith("x") else "s")


def _words(five: Sequence[str]) -> str:
    ranks = sorted((c[0] for c in five), key=RANK_ORDER.index, reverse=True)
    counts = Counter(ranks)
    by_count = sorted(counts, key=lambda r: (counts[r], RANK_ORDER.index(r)), reverse=True)
    flush = len({c[1] for c in five}) == 1
    values = sorted({RANK_ORDER.index(r) for r in ranks})
    straight_high = None
    if len(values) == 5 and values[-1] - values[0] == 4:
        straight_high = values[-1]
    elif values == [0, 1, 2, 3, 12]:  # the wheel: Ace to Five
        straight_high = 3
    if straight_high is not None:
        low = RANK_NAMES["A"] if straight_high == 3 else RANK_NAMES[RANK_ORDER[straight_high - 4]]
        high = RANK_NAMES[RANK_ORDER[straight_high]]
        if flush:
            return "a Royal Flush" if straight_high == 12 else f"a straight flush, {low} to {high}"
        return f"a straight, {low} to {high}"
    first, second = counts[by_count[0]], counts[by_count[1]]
    if first == 4:
        return f"four of a kind, {_plural(by_count[0])}"
    if first == 3 and second == 2:
        return f"a full house, {_plural(by_count[0])} full of {_plural(by_count[1])}"
    if flush:
        return f"a flush, {RANK_NAMES[ranks[0]]} high"
    if first == 3:
        return f"three of a kind, {_plural(by_count[0])}"
    if first == 2 and second == 2:
        return f"two pair, {_plural(by_count[0])} and {_plural(by_count[1])}"
    if first == 2:
        return f"a pair of {_plural(by_count[0])}"
    return f"high card {RANK_NAMES[ranks[0]]}"

