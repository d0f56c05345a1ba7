"""The live feed for a broadcast without delay: ``live/events``, the public events with the hole cards the house's
reveal policy (``[broadcast] reveal``) lets a viewer see, at the moment it lets them (docs/mqtt.md, "The live feed").

This is the one place where a hole card may enter a feed without delay. Every other part builds a no-delay payload
from an event's public part alone. A ``live/events`` message is that public payload as ``event``, and beside it,
where the policy shows hole cards, ``revealed``: made only by :meth:`LiveFeed.payloads`, which reads the events'
secret parts and applies the policy:

* ``showdown``: the hands shown at the showdown, as the ``showdown`` event names them, less every seat whose cards
  reached the muck (the table cannot see a card face up: a hand mucked is taken as mucked unshown).
* ``all_in``: as ``showdown``, and on a table with chips, once a player is all-in and no more betting is possible,
  every live hand at the street's ``pots`` (or the players' ``run_it_agreed``): the rules have them tabled then
  (TDA all-in rule, AC 11, DE 3). A seat an irregular card named in the hand waits for the showdown: its cards may
  not be the ones dealt to it.
* ``hand_end``: as ``showdown``, and at ``hand_ended`` the hands still live when the hand ended (an uncontested
  winner's too). Never a folded or mucked hand: the broadcast standard shows one only if the house allows, which
  the table cannot know of a player; the delayed feed carries every hand.

The policy reads the events in their order, once each, and keeps what it needs of the hand being played (and the
hand before, whose result may come after the next hand's start): no field of another part, no clock.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from controller import DomainEvent
from rfid_table.config.table import REVEAL_POLICIES


@dataclass
class _Hand:
    """What the policy knows of one hand, from its events."""

    hole: dict[int, list[str]] = field(default_factory=dict)  # seat → the cards dealt to it (``card_dealt``)
    mucked: set[int] = field(default_factory=set)  # seats whose cards reached the muck (``fold``)
    out_of_place: set[int] = field(default_factory=set)  # seats named by an irregular card: their cards moved
    betting: set[int] = field(default_factory=set)  # seats in the betting (``betting_started``), less its folds
    all_in: dict[int, int] = field(default_factory=dict)  # seq of an all-in action → its seat
    revealed: dict[int, list[str]] = field(default_factory=dict)  # seat → hole cards shown so far


class LiveFeed:
    """Turns the table's events, in order, into the ``live/events`` payloads of a reveal ``policy``."""

    def __init__(self, policy: str):
        if policy not in REVEAL_POLICIES or policy == "never":
            raise ValueError(f"no live feed for reveal policy {policy!r} (one of: {', '.join(REVEAL_POLICIES[1:])})")
        self.policy = policy
        self._hands: dict[int, _Hand] = {}  # the newest two hands

    def prime(self, events: list[DomainEvent]) -> None:
        """Read events already published (at a start, the journal's newest): what they showed stays shown, and a
        hand under way goes on from them."""
        for event in events:
            self._reveal(event)

    def payloads(self, events: list[DomainEvent]) -> list[dict]:
        """Each event's message: its public payload as ``event``, and ``revealed`` (seat → hole cards) where the
        policy shows cards."""
        bodies = []
        for event in events:
            body: dict = {"event": event.payload(secure=False)}
            revealed = self._reveal(event)
            if revealed:
                body["revealed"] = {str(seat): list(cards) for seat, cards in sorted(revealed.items())}
            bodies.append(body)
        return bodies

    # ---- the policy ------------------------------------------------------------------------------------------

    def _hand(self, number: int) -> _Hand:
        if number not in self._hands:
            self._hands[number] = _Hand()
            for old in [n for n in self._hands if n < number - 1]:
                del self._hands[old]
        return self._hands[number]

    def _reveal(self, event: DomainEvent) -> dict[int, list[str]]:
        """Note what ``event`` says of its hand; the hand's hole cards shown so far when this event shows more (or
        ends the hand with some shown), else nothing."""
        kind, public, secret = event.type, event.public, event.secret
        if event.hand is None:
            return {}
        if kind == "hand_started":  # (a hand's number is not used twice in an epoch; a fresh start all the same)
            self._hands.pop(event.hand, None)
        hand = self._hand(event.hand)
        before = len(hand.revealed)
        if kind == "card_dealt" and ("card" in secret or "card" in public):  # (a stud up card's is public)
            hand.hole.setdefault(public["seat"], []).append(secret["card"] if "card" in secret else public["card"])
        elif kind == "fold":
            hand.mucked.add(public["seat"])
            hand.betting.discard(public["seat"])
        elif kind == "irregular_card":
            hand.out_of_place.update(public.get("seats", ()))
        elif kind == "betting_started":
            hand.betting = set(public["seats"])
        elif kind == "action":
            if public["action"] == "fold":
                hand.betting.discard(public["seat"])
            elif public["all_in"]:
                hand.all_in[event.seq] = public["seat"]
        elif kind == "action_undone":
            for undone in public["undone"]:
                hand.all_in.pop(undone["seq"], None)
                if undone["action"] == "fold":
                    hand.betting.add(undone["seat"])
        elif kind in ("pots", "run_it_agreed") and self.policy == "all_in" and self._betting_over(hand):
            self._show(hand, {seat: hand.hole.get(seat, []) for seat in hand.betting
                              if seat not in hand.out_of_place})
        elif kind == "showdown":
            self._show(hand, {int(seat): cards for seat, cards in secret.get("hands", {}).items()})
        elif kind == "hand_ended":
            if self.policy == "hand_end":
                self._show(hand, {int(seat): cards for seat, cards in secret.get("hole_cards", {}).items()})
            return dict(hand.revealed)  # the hand's shown cards once more, at its end, for a page opened late
        return dict(hand.revealed) if len(hand.revealed) > before else {}

    @staticmethod
    def _betting_over(hand: _Hand) -> bool:
        """A player is all-in and no more betting is possible: two or more live hands, at most one with chips."""
        all_in = set(hand.all_in.values()) & hand.betting
        return bool(all_in) and len(hand.betting) >= 2 and len(hand.betting - all_in) <= 1

    @staticmethod
    def _show(hand: _Hand, cards: dict[int, list[str]]) -> None:
        """Show ``cards``, but never a mucked hand's (a seat without a card read shows nothing)."""
        for seat, held in cards.items():
            if seat not in hand.mucked and held and seat not in hand.revealed:
                hand.revealed[seat] = list(held)
