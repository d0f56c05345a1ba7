"""A decision of the oracle tests played on both sides: in pokerkit's state and in the betting engine
(``BettingHand``), the engine's declaration paid with the chips it owes (the betting oracle's chips)."""

from __future__ import annotations

from test_betting_oracle import chips_for


def call_or_check(state, hand, seat: int) -> None:
    """pokerkit checks or calls; the engine the same: a call declared and its chips pushed, or a check."""
    called = state.check_or_call().amount
    if called:
        assert hand.declare(seat, "call").ok and hand.push(seat, chips_for(called)).ok
    else:
        assert hand.check(seat).ok


def bet_or_raise_to(state, hand, seat: int, amount: int) -> None:
    """pokerkit bets, completes or raises to ``amount``; the engine bets (no bet yet) or raises to it, and the seat
    pushes the chips it adds."""
    before = hand.bets[seat]
    kind = "bet" if hand.current_bet == 0 else "raise"
    state.complete_bet_or_raise_to(amount)
    assert hand.declare(seat, kind, amount).ok and hand.push(seat, chips_for(amount - before)).ok


def seat_to_act(state, hand, seat_of: dict[int, int]) -> int | None:
    """The seat pokerkit asks to act, the engine brought to pokerkit's street and asking that seat for the same
    call; None where pokerkit asks for a decision nobody can make differently (checked in pokerkit alone)."""
    while hand.street_index < state.street_index and hand.status == "betting":
        assert hand.end_street().ok
    seat = seat_of[state.actor_index]
    if hand.to_act() is None:
        assert state.checking_or_calling_amount == 0
        state.check_or_call()
        return None
    assert hand.to_act() == seat and hand.to_call(seat) == state.checking_or_calling_amount, (seat, hand.variant.code)
    return seat
