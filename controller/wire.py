"""The wire form of every record the controller publishes (``controller.events``): the type, the public payload and
the secret one of its ``DomainEvent`` (controller.domain), as the schemas (schemas/) describe them. The one place
that knows the shape of an event on the wire: the parts make records, the outbox numbers them and asks here.

Key order is part of the form: the journal and the seeded event streams compare payloads byte for byte.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Sequence

from controller.command_events import (BombPotAgreed, ButtonSet, Declaration, FloorCalled, GameSet, NewHandCalled,
                                       PlayerSeated, RunItAgreed, SeatCleared, SeatsSet, StacksSet)
from controller.conduct_events import (RULING_TEXT, AbsentAtDeal, ClockDue, ClockExpired, ClockStarted, ClockStopped,
                                       ClockTick, DeviceBreach, DeviceBreachEnded, DeviceSeen, SeatLeft, SeatPresence,
                                       SeatReturned, SeatRuling, TimeBankUsed)
from controller.dealing import WARNING, plain
from controller.events import (ActionTaken, ActionUndone, AntennaChanged, BetRuling, BettingStarted, BoardCard,
                               BoardCorrected, Burn, CardDealt, CardsNeverSeen, ChipCount, ChipsReturned, DeckSelected,
                               FloorRuling, Folded, ForeignChip, HandAudit, HandEnded, HandHistory, HandStarted,
                               IrregularCard, IrregularityResolved, Misdeal, PotsCollected, ReaderLinkChanged, Showdown,
                               StudOpener, UnknownTag)
from controller.levels import LevelSet, describe
from controller.runouts import board_shares

if TYPE_CHECKING:
    from controller.showdown import PotAward, PotHalf

Payload = dict[str, Any]
Wire = tuple[str, Payload, Payload]  # type, public, secret


def _hand_started(e: HandStarted) -> Wire:
    return "hand_started", {"game": e.game.name, **e.game.stakes_in_play()} if e.game.name else {}, {}


def _hand_ended(e: HandEnded) -> Wire:
    if e.misdeal:  # a void hand: no seat is live in it, nobody folded in it (docs/mqtt.md, "A hand's end")
        return "hand_ended", {"board": [], "live_seats": [], "folded_seats": [], "misdeal": True}, {"hole_cards": {}}
    public: Payload = {"board": list(e.board)}
    if len(e.boards) > 1:
        public["boards"] = [list(board) for board in e.boards]
    public["live_seats"] = list(e.live_seats)
    public["folded_seats"] = list(e.folded_seats)
    public["misdeal"] = False
    return "hand_ended", public, {"hole_cards": {str(seat): list(cards) for seat, cards in e.hole_cards}}


def _misdeal(e: Misdeal) -> Wire:
    public: Payload = {"reason": e.reason, "rules": list(e.rules), "irregularity": e.irregularity,
                       "button": e.button}
    if e.by is not None:
        public["by"] = e.by
    if e.note:
        public["note"] = e.note
    return "misdeal", public, {}


def _card_dealt(e: CardDealt) -> Wire:
    if e.up is None:
        return "card_dealt", {"seat": e.seat, "count": e.count}, {"card": e.card}
    # stud: an up card is public at the table, a down card secret like any hole card
    public: Payload = {"seat": e.seat, "count": e.count, "street": e.street, "up": e.up}
    if e.up:
        return "card_dealt", {**public, "card": e.card}, {}
    return "card_dealt", public, {"card": e.card}


def _board_card(e: BoardCard) -> Wire:
    public: Payload = {"card": e.card, "street": e.street, "position": e.position}
    if e.board_number is not None:
        public["board_number"] = e.board_number
    if e.reshuffled:
        public["reshuffled"] = True
    return "board_card", public, {}


def _stud_opener(e: StudOpener) -> Wire:
    if e.card is not None:  # third street: who brings it in
        return "bring_in", {"seat": e.seat, "card": e.card, "street": e.street, "rule": e.rule}, {}
    return "first_to_act", {"street": e.street, "seat": e.seat, "rule": e.rule}, {}


def _burn(e: Burn) -> Wire:
    return "burn", {"count": e.count}, {"card": e.card}


def _folded(e: Folded) -> Wire:
    return "fold", {"seat": e.seat}, {"cards": list(e.cards)}


def _board_corrected(e: BoardCorrected) -> Wire:
    public: Payload = {"irregularity": e.irregularity, "code": e.code, "board": list(e.board)}
    if e.by is not None:
        public["by"] = e.by
    return "board_corrected", public, {"card": e.burn}


def _irregular_card(e: IrregularCard) -> Wire:
    public = {**e.details, "seats": list(e.seats), "severity": e.severity, "ruling": e.ruling, "rules": list(e.rules),
              "needs_floor": e.needs_floor, "profile": e.profile}
    return "irregular_card", plain(public), dict(e.secret)


def _irregularity_resolved(e: IrregularityResolved) -> Wire:
    public: Payload = {"irregularity": e.irregularity, "code": e.code, "resolution": e.resolution}
    if e.seats is not None:
        public["seats"] = list(e.seats)
    return "irregularity_resolved", public, {}


def _floor_ruling(e: FloorRuling) -> Wire:
    public: Payload = {"irregularity": e.irregularity, "code": e.code,
                       "decision": "confirmed" if e.confirmed else "overridden", "result": e.result}
    if e.seats is not None:
        public["seats"] = list(e.seats)
    if e.note:
        public["note"] = e.note
    public["by"] = e.by
    return "floor_ruling", public, {}


def _hand_audit(e: HandAudit) -> Wire:
    return "hand_audit", {"seen": e.seen, "places": dict(e.counts), "missing": len(e.missing), "seats": list(e.seats),
                          "irregularities": list(e.irregularities), "severity": WARNING, "ruling": "new_deck",
                          "rules": list(e.rules)}, {"cards": {**e.places, "missing": list(e.missing)}}


def _cards_never_seen(e: CardsNeverSeen) -> Wire:
    return "deck_audit", {"audit_hands": e.audit_hands, "distinct_cards": e.distinct_cards, "missing": list(e.missing),
                          "severity": WARNING, "ruling": "new_deck", "rules": list(e.rules)}, {}


def _deck_selected(e: DeckSelected) -> Wire:
    return "deck_selected", {"deck": e.deck, "by": e.by}, {}


def _reader_link(e: ReaderLinkChanged) -> Wire:
    return "reader_link", {"reader": e.reader, "state": e.state, **e.detail}, {}


def _antenna(e: AntennaChanged) -> Wire:
    return "antenna", {"reader": e.reader, "state": e.state, **e.detail}, {}


def _unknown_tag(e: UnknownTag) -> Wire:
    public: Payload = {"zone": e.zone, "uid": e.uid}
    if e.summarised > 1:
        public["summarised"] = e.summarised
    return "unknown_tag", public, {}


def _betting_started(e: BettingStarted) -> Wire:
    return "betting_started", {
        "button": e.button, "seats": list(e.seats), "small_blind": e.small_blind, "big_blind": e.big_blind,
        "ante": e.ante, "big_blind_ante": e.big_blind_ante, "level": e.level,
        "bomb_pot": {"amount": e.bomb_pot[0], "flip": e.bomb_pot[1]} if e.bomb_pot is not None else None,
        "stacks": {str(seat): stack for seat, stack in e.stacks} if e.stacks is not None else None,
        "rules": e.rules, **({"bring_in": e.stud[0], "small_bet": e.stud[1], "big_bet": e.stud[2]} if e.stud else {})
    }, {}


def _action(e: ActionTaken) -> Wire:
    action = e.action
    public: Payload = {"seat": action.seat, "action": action.kind, "street": action.street, "to": action.to_amount,
                       "added": action.added, "all_in": action.all_in, "rules": list(action.rules)}
    if action.kind == "all_in":
        public["as"] = action.base
    if action.returned:
        public["returned"] = action.returned
    if action.owed:
        public["owed"] = action.owed
    if action.note:
        public["note"] = action.note
    public["pot"] = e.pot
    public["next"] = e.next
    return "action", public, {}


def _bet_ruling(e: BetRuling) -> Wire:
    public: Payload = {"code": e.code, "seat": e.seat, "message": e.message, "rules": list(e.rules),
                       "needs_floor": e.needs_floor}
    for key in ("chips", "withdrawn"):
        value = getattr(e, key)
        if value is not None:
            public[key] = list(value)
    if e.stands is not None:
        public["stands"] = e.stands
    if e.returned is not None:
        public["returned"] = e.returned
    return "bet_ruling", public, {}


def _chip_count(e: ChipCount) -> Wire:
    return "chip_count", {"code": e.code, "seat": e.seat, "expected": e.expected, "seen": e.seen,
                          "rules": list(e.rules), "needs_floor": e.needs_floor}, {}


def _action_undone(e: ActionUndone) -> Wire:
    return "action_undone", {"seat": e.seat, "undone": [{"seq": seq, "seat": a.seat, "action": a.kind,
                                                         "to": a.to_amount} for seq, a in e.undone],
                             "declaration": e.declaration, "street": e.street, "pot": e.pot, "next": e.next,
                             "by": e.by}, {}


def _pots_collected(e: PotsCollected) -> Wire:
    c = e.collection
    return "pots", {"street": c.street, "collected": {str(s): v for s, v in c.into_pot.items()},
                    "returned": {str(s): v for s, v in c.returned.items()},
                    "pots": [{"amount": p.amount, "eligible": list(p.eligible)} for p in c.pots],
                    "total": sum(p.amount for p in c.pots)}, {}


def _chips_returned(e: ChipsReturned) -> Wire:
    return "chips_returned", {"complete": e.complete, "returned": dict(e.returned),
                              "left_in_place": dict(e.left_in_place)}, {}


def _foreign_chip(e: ForeignChip) -> Wire:
    return "foreign_chip", {"zone": e.zone, "uid": e.uid, "chip_set": e.chip_set,
                            "reason": "chip of another set" if e.chip_set else "tag not in any chip set"}, {}


def _showdown(e: Showdown) -> Wire:
    public: Payload = {"order": list(e.order), "pots": [_pot_awarded(p) for p in e.pots]}
    if len(e.boards) > 1:
        public["boards"] = [list(board) for board in e.boards]
        public["runs"] = e.runs
    public["payouts"] = {str(seat): v for seat, v in e.payouts}
    public["winners"] = list(e.winners)
    public["finishing_stacks"] = ({str(seat): v for seat, v in e.finishing_stacks}
                                  if e.finishing_stacks is not None else None)
    secret = {"hands": {str(seat): list(cards) for seat, cards in e.hands}} if e.hands is not None else {}
    return "showdown", public, secret


def _pot_awarded(p: PotAward) -> Payload:
    public: Payload = {"index": p.index, "amount": p.amount, "eligible": list(p.eligible), "winners": list(p.winners),
                       "shares": {str(s): v for s, v in p.shares.items()}, "odd_chips": list(p.odd_chips),
                       "rules": list(p.rules)}
    if p.boards:
        public["boards"] = [{"board": b + 1, "shares": {str(s): v for s, v in shares.items()},
                             **({"halves": _halves(part.halves)} if part.halves else {})}
                            for (b, shares), part in zip(board_shares(p), p.boards)]
    if p.halves:
        public["halves"] = _halves(p.halves)
    return public


def _halves(halves: Sequence[PotHalf]) -> list[Payload]:
    """A hi-lo pot's halves (or a board's part of it), the high half first."""
    return [{"side": h.side, "amount": h.amount, "winners": list(h.winners),
             "shares": {str(s): v for s, v in h.shares.items()}, "odd_chips": list(h.odd_chips)} for h in halves]


def _hand_history(e: HandHistory) -> Wire:
    public: Payload = {"format": "phh", "phh": e.phh}
    if e.reason is not None:
        public["reason"] = e.reason
    secret: Payload = {"phh_complete": e.complete} if e.complete is not None else {}
    secret.update(ohh_complete=e.ohh, pokerstars_complete=e.pokerstars)
    return "hand_history", public, secret


# ---- the conduct rules and the action clock (controller.conduct_events; docs/conduct.md) ----------------------

def _ruled(r: SeatRuling) -> Payload:
    """A ruling of the house's conduct profile, as every event that rules on a seat's hand gives it."""
    return {"rule": r.rule, "ruling": r.ruling, "ruling_text": RULING_TEXT[r.ruling], "needs_floor": r.needs_floor,
            "profile": r.profile}


def _device_breach(e: DeviceBreach) -> Wire:
    return "device_breach", {"seat": e.ruled.seat, "device": e.device, "state": "started", "since": e.since,
                             "device_since": e.device_since, **_ruled(e.ruled)}, {}


def _device_breach_ended(e: DeviceBreachEnded) -> Wire:
    public: Payload = {"seat": e.ruled.seat, "device": e.device, "state": "ended", "reason": e.reason,
                       "since": e.since, "duration_s": e.duration_s, **_ruled(e.ruled)}
    if e.device_s is not None:
        public["device_s"] = e.device_s
    return "device_breach", public, {}


def _device_seen(e: DeviceSeen) -> Wire:
    public: Payload = {"seat": e.seat, "device": e.device, "state": e.state, "reason": e.reason}
    if e.duration_s is not None:
        public["duration_s"] = e.duration_s
    public.update(rule=e.rule, note=e.note, needs_floor=False)
    return "device_seen", public, {}


def _absent_at_deal(e: AbsentAtDeal) -> Wire:
    return "absent_at_deal", {"seat": e.ruled.seat, "deal_t": e.deal_t, "away_since": e.away_since,
                              **_ruled(e.ruled), "blinds": e.blinds, "blinds_rule": e.blinds_rule}, {}


def _seat_left(e: SeatLeft) -> Wire:
    return "seat_left", {"seat": e.ruled.seat, **_ruled(e.ruled), "blinds": e.blinds,
                         "blinds_rule": e.blinds_rule}, {}


def _seat_returned(e: SeatReturned) -> Wire:
    return "seat_returned", {"seat": e.seat, "away_s": e.away_s}, {}


def _seat_presence(e: SeatPresence) -> Wire:
    return "seat_presence", {"seat": e.seat, "present": e.present, "duration_s": e.duration_s}, {}


def _clock_due(e: ClockDue) -> Wire:
    return "clock_due", {"seat": e.seat, "waited_s": e.waited_s, "rule": e.rule}, {}


def _clock_started(e: ClockStarted) -> Wire:
    return "clock_started", {"seat": e.seat, "by": e.by, "minute_s": e.minute_s, "count_s": e.count_s,
                             "waited_s": e.waited_s, "rule": e.rule}, {}


def _clock_tick(e: ClockTick) -> Wire:
    return "clock_tick", {"seat": e.seat, "phase": e.phase, "remaining_s": e.remaining_s}, {}


def _time_bank_used(e: TimeBankUsed) -> Wire:
    return "time_bank_used", {"seat": e.seat, "added_s": e.added_s, "phase": e.phase, "remaining_s": e.remaining_s,
                              "banks_left": e.banks_left, "rule": e.rule}, {}


def _clock_stopped(e: ClockStopped) -> Wire:
    public: Payload = {"seat": e.seat, "reason": e.reason, "phase": e.phase, "remaining_s": e.remaining_s}
    if e.by is not None:
        public["by"] = e.by
    return "clock_stopped", public, {}


def _clock_expired(e: ClockExpired) -> Wire:
    return "clock_expired", {"seat": e.ruled.seat, **_ruled(e.ruled), "started_by": e.started_by,
                             "facing_bet": e.facing_bet}, {}


# ---- the floor's and the dealer's commands (controller.command_events) ---------------------------------------------

def _player_seated(e: PlayerSeated) -> Wire:
    public: Payload = {"seat": e.seat, "name": e.name}
    if e.player_id is not None:
        public["player_id"] = e.player_id
    public["by"] = e.by
    return "player_seated", public, {}


def _seat_cleared(e: SeatCleared) -> Wire:
    return "seat_cleared", {"seat": e.seat, "name": e.name, "by": e.by}, {}


def _button_set(e: ButtonSet) -> Wire:
    return "button_set", {"seat": e.seat, "applies_to_hand": e.applies_to_hand, "by": e.by}, {}


def _seats_set(e: SeatsSet) -> Wire:
    return "seats_set", {"seats": list(e.seats), "applies_to_hand": e.applies_to_hand, "by": e.by}, {}


def _run_it_agreed(e: RunItAgreed) -> Wire:
    return "run_it_agreed", {"runs": e.runs, "pots": list(e.pots) if e.pots is not None else None, "shared": e.shared,
                             "by": e.by, "rules": list(e.rules)}, {}


def _new_hand_called(e: NewHandCalled) -> Wire:
    return "new_hand", {"by": e.by}, {}


def _floor_called(e: FloorCalled) -> Wire:
    public: Payload = {"seat": e.seat} if e.seat is not None else {}
    if e.note:
        public["note"] = e.note
    public["by"] = e.by
    return "floor_call", public, {}


def _level_set(e: LevelSet) -> Wire:
    public: Payload = {**describe(e.number, e.level), "applies_to_hand": e.applies_to_hand, "running": e.running}
    if e.by is not None:
        public["by"] = e.by
    return "level_set", public, {}


def _game_set(e: GameSet) -> Wire:
    return "game_set", {"game": e.game.name, **e.game.stakes_in_play(), "applies_to_hand": e.applies_to_hand,
                        "by": e.by}, {}


def _stacks_set(e: StacksSet) -> Wire:
    return "stacks_set", {"stacks": {str(seat): v for seat, v in e.stacks}, "by": e.by}, {}


def _declaration(e: Declaration) -> Wire:
    public: Payload = {"seat": e.seat, "declaration": e.declaration}
    if e.amount is not None:
        public["amount"] = e.amount
    public["by"] = e.by
    return "declaration", public, {}


def _bomb_pot_agreed(e: BombPotAgreed) -> Wire:
    public: Payload = {"amount": e.amount, "flip": e.flip, "applies_to_hand": e.applies_to_hand}
    if e.sits_out is not None:
        public["sits_out"] = e.sits_out
    public["by"] = e.by
    return "bomb_pot_agreed", public, {}


_FORMS: dict[type, Callable[[Any], Wire]] = {
    BettingStarted: _betting_started, ActionTaken: _action, BetRuling: _bet_ruling, ChipCount: _chip_count,
    IrregularCard: _irregular_card, IrregularityResolved: _irregularity_resolved, FloorRuling: _floor_ruling,
    HandAudit: _hand_audit, CardsNeverSeen: _cards_never_seen, DeckSelected: _deck_selected,
    ReaderLinkChanged: _reader_link, AntennaChanged: _antenna, UnknownTag: _unknown_tag,
    HandStarted: _hand_started, HandEnded: _hand_ended, Misdeal: _misdeal, CardDealt: _card_dealt,
    BoardCard: _board_card, StudOpener: _stud_opener, Burn: _burn, Folded: _folded, BoardCorrected: _board_corrected,
    DeviceBreach: _device_breach, DeviceBreachEnded: _device_breach_ended, DeviceSeen: _device_seen,
    AbsentAtDeal: _absent_at_deal, SeatLeft: _seat_left, SeatReturned: _seat_returned, SeatPresence: _seat_presence,
    ClockDue: _clock_due, ClockStarted: _clock_started, ClockTick: _clock_tick, TimeBankUsed: _time_bank_used,
    ClockStopped: _clock_stopped, ClockExpired: _clock_expired,
    PlayerSeated: _player_seated, SeatCleared: _seat_cleared, BombPotAgreed: _bomb_pot_agreed, LevelSet: _level_set,
    ButtonSet: _button_set, SeatsSet: _seats_set, RunItAgreed: _run_it_agreed, NewHandCalled: _new_hand_called,
    FloorCalled: _floor_called, GameSet: _game_set, StacksSet: _stacks_set, Declaration: _declaration,
    ActionUndone: _action_undone, PotsCollected: _pots_collected, ChipsReturned: _chips_returned,
    ForeignChip: _foreign_chip, Showdown: _showdown, HandHistory: _hand_history,
}


def wire(record: object) -> Wire:
    """The type and payloads ``record`` is published with."""
    return _FORMS[type(record)](record)
