"""Open Hand History (OHH, spec 1.4.6 of hh-specs.handhistory.org): one finished hand as a JSON object.

``{"ohh": {spec_version, site_name, network_name, internal_version, game_number, start_date_utc, table_name,
game_type, bet_limit, table_size, currency, dealer_seat, small_blind_amount, big_blind_amount, ante_amount,
players[], rounds[], pots[]}}``, as the spec's published examples write it:

* ``players``: ``id`` (0, 1, ... in seat order), ``seat``, ``name``, ``display``, ``starting_stack``;
* ``rounds``: ``Preflop`` (the forced bets, a ``Dealt Cards`` action per player, with the cards where this copy
  may show them, then the betting), ``Flop``/``Turn``/``River`` with the ``cards`` each turned, and ``Showdown``
  with a ``Shows Cards`` action per seat that showed and ``Mucks Cards`` for one that gave up unseen.
  ``action_number`` counts the actions of the whole hand; ``amount`` is what the action put in (a raise's chips,
  not its total), ``is_allin`` is on every chip action;
* a hand with several boards (run twice or three times, CA Actions 8; a double board, CA GR 14.1) has the flag
  ``Run_It_Twice``: the streets dealt before the runs once, then each run's streets as rounds of their own (no
  actions); a double board has a round per board for each street, the betting on the first board's;
* ``pots``: ``number`` (0 is the main pot), ``amount``, ``rake`` 0, ``player_wins`` (``player_id``,
  ``win_amount``, ``contributed_rake`` 0). An uncalled bet that went back is in no pot.

Stud games: ``game_type`` ``Stud``, ``StudHiLo`` or ``Razz``, ``bring_in_amount`` and no blinds; the rounds are
``Third Street`` to ``Seventh Street``, each opening with a ``Dealt Cards`` action per seat still in (its new cards,
where this copy may show them), the bring-in ``Post Bring In``, the completion a ``Bet``. Where the deck ran short,
``Seventh Street`` carries the one community card as a flop game's round carries its board (``cards``), dealt to
nobody.

``start_date_utc`` is left out when the start is not known (the feed's copy: the controller keeps no clock; the
event's ``t`` says when the hand ended). ``rfid-table export`` writes it from the journal. Chip amounts are whole
chips (``currency`` ``"Chips"``); the table has no rake.
"""

from __future__ import annotations

from typing import Any

from controller.betting import FIXED_LIMIT, POT_LIMIT
from controller.histories import BOARD_COUNTS, STREETS, HandRecord

SPEC_VERSION = "1.4.6"
NETWORK = "rfid-table"
ACTION_NAMES = {"ante": "Post Ante", "small_blind": "Post SB", "big_blind": "Post BB", "straddle": "Straddle",
                "fold": "Fold", "check": "Check", "call": "Call", "bet": "Bet", "raise": "Raise"}
FORCED_KINDS = ("ante", "small_blind", "big_blind", "straddle")


STUD_TYPES = {"stud": "Stud", "stud8": "StudHiLo", "razz": "Razz"}
STUD_ROUNDS = ("Third Street", "Fourth Street", "Fifth Street", "Sixth Street", "Seventh Street")


def to_ohh(record: HandRecord, site_name: str = "rfid-table", internal_version: str = "0.1.0") -> dict[str, Any]:
    """The hand as an OHH object (``json.dumps`` it for a ``.ohh`` file)."""
    hand = record.hand
    seats = record.seats
    ids = {seat: i for i, seat in enumerate(seats)}
    starting = record.starting_stacks()
    variant = hand.variant
    bet_type = "FL" if variant.structure == FIXED_LIMIT else "PL" if variant.structure == POT_LIMIT else "NL"
    out: dict[str, Any] = {
        "spec_version": SPEC_VERSION,
        "site_name": site_name,
        "network_name": NETWORK,
        "internal_version": internal_version,
        "tournament": False,
        "game_number": record.game_number,
    }
    if record.started is not None:
        out["start_date_utc"] = record.started.strftime("%Y-%m-%dT%H:%M:%S")
    out.update({
        "table_name": record.table_name,
        # OHH's types: Omaha hi-lo is "OmahaHiLo"; the spec has none for hold'em hi-lo (written "Holdem")
        "game_type": STUD_TYPES[variant.stud] if variant.stud else
        ("OmahaHiLo" if variant.hi_lo else "Omaha") if variant.omaha else "Holdem",
        "bet_limit": {"bet_type": bet_type, "bet_cap": 0},
        "table_size": record.table_size,
        "currency": "Chips",
        "dealer_seat": hand.button,
        "small_blind_amount": hand.small_blind,
        "big_blind_amount": hand.big_blind,
        "ante_amount": hand.ante or hand.big_blind_ante,
        "players": [{"id": ids[s], "seat": s, "name": record.name(s), "display": f"Seat {s}",
                     "starting_stack": starting[s]} for s in seats],
    })
    number = 0

    def action(seat: int, name: str, **fields: Any) -> dict[str, Any]:
        nonlocal number
        number += 1
        return {"action_number": number, "player_id": ids[seat], "action": name, **fields}

    actions = record.actions()
    if variant.stud:
        del out["small_blind_amount"], out["big_blind_amount"], out["dealer_seat"]
        out["bring_in_amount"] = hand.bring_in
        out["rounds"], out["pots"] = _stud_rounds(record, action), _pots(record, ids)
        return {"ohh": out}
    forced = [a for a in actions if a.kind in FORCED_KINDS]
    rounds: list[dict[str, Any]] = [{"id": 0, "street": "Preflop", "actions": []}]
    for a in forced:
        rounds[0]["actions"].append(action(a.seat, ACTION_NAMES[a.kind], amount=a.added, is_allin=a.all_in))
    for s in hand.order:
        cards = record.cards(s)
        rounds[0]["actions"].append(action(s, "Dealt Cards", **({"cards": cards} if cards else {})))
    played = record.streets_played()
    several = record.several_boards
    shared = record.shared_board() if several and not record.double_board else None
    for index, street in enumerate(STREETS[:played]):
        if index and (shared is None or BOARD_COUNTS[index] <= shared):
            first = len(rounds)
            for b in record.boards if record.double_board and several else [record.board]:  # a round per board
                rounds.append({"id": len(rounds), "street": street.capitalize(),
                               "cards": list(b[BOARD_COUNTS[index - 1]:BOARD_COUNTS[index]]), "actions": []})
            betting = rounds[first]["actions"]  # the street's betting goes on the first board's round
        else:
            betting = rounds[-1]["actions"]
        for a in actions:
            if a.street != street or a.kind in FORCED_KINDS:
                continue
            fields: dict[str, Any] = {}
            if a.kind in ("call", "bet", "raise"):
                fields = {"amount": a.added, "is_allin": a.all_in}
            betting.append(action(a.seat, ACTION_NAMES[a.kind], **fields))
    if shared is not None:  # the runs, one after the other, from the first street they did not share
        for b in record.boards:
            for index in range(1, 4):
                if BOARD_COUNTS[index] > shared:
                    rounds.append({"id": len(rounds), "street": STREETS[index].capitalize(),
                                   "cards": list(b[BOARD_COUNTS[index - 1]:BOARD_COUNTS[index]]), "actions": []})
    if several:
        out["flags"] = ["Run_It_Twice"]  # the spec: "Two [or more] sets of board cards are used in the play of the
        # same hand. This flag should also be used for hands that are run three times or more."
    if record.showdown:
        rounds.append({"id": len(rounds), "street": "Showdown", "actions": []})
        for s in record.showdown:
            shown = {"cards": record.cards(s)} if record.cards(s) else {}
            rounds[-1]["actions"].append(action(s, "Shows Cards" if s in record.shown else "Mucks Cards", **shown))
    out["rounds"] = rounds
    out["pots"] = _pots(record, ids)
    return {"ohh": out}


def _pots(record: HandRecord, ids: dict[int, int]) -> list[dict[str, Any]]:
    return [{"number": i, "amount": amount, "rake": 0,
             "player_wins": [{"player_id": ids[s], "win_amount": share, "contributed_rake": 0}
                             for s, share in sorted(shares.items()) if share]}
            for i, (amount, shares) in enumerate(record.pots)]


def _stud_rounds(record: HandRecord, action: Any) -> list[dict[str, Any]]:
    """A stud hand's rounds: the antes and each street's cards and betting, then the showdown."""
    hand = record.hand
    streets = hand.variant.streets
    folded = record.folded_on()
    actions = record.actions()
    rounds: list[dict[str, Any]] = []
    for index, street in enumerate(streets[:record.streets_played()]):
        betting: list[dict[str, Any]] = []
        shared = index == len(streets) - 1 and bool(record.board)  # the deck ran short: one community card
        rounds.append({"id": len(rounds), "street": STUD_ROUNDS[index], **({"cards": list(record.board)} if shared
                                                                            else {}), "actions": betting})
        if index == 0:
            betting += [action(a.seat, "Post Ante", amount=a.added, is_allin=a.all_in) for a in actions
                        if a.kind == "ante"]
        for s in hand.order:
            if s in folded and streets.index(folded[s]) < index:
                continue
            dealt = list(record.hole_cards.get(s, ()))
            new = [c for c in (dealt[:3] if index == 0 else dealt[index + 2:index + 3]) if c]
            if not shared:  # (a community card is the round's, dealt to nobody)
                betting.append(action(s, "Dealt Cards", **({"cards": new} if new else {})))
        for a in actions:
            if a.street != street or a.kind == "ante":
                continue
            name = {"bring_in": "Post Bring In", "complete": "Bet"}.get(a.kind) or ACTION_NAMES[a.kind]
            fields: dict[str, Any] = {}
            if a.kind in ("call", "bet", "raise", "bring_in", "complete"):
                fields = {"amount": a.added, "is_allin": a.all_in}
            betting.append(action(a.seat, name, **fields))
    if record.showdown:
        rounds.append({"id": len(rounds), "street": "Showdown", "actions": []})
        for s in record.showdown:
            shown = {"cards": record.cards(s)} if record.cards(s) else {}
            rounds[-1]["actions"].append(action(s, "Shows Cards" if s in record.shown else "Mucks Cards", **shown))
    return rounds
