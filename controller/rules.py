"""House rule profiles: the settings where the rule books the table follows disagree.

Every field names the rule it comes from (``RuleProfile.sources``), so an event can say which rule it applied.
One profile per house document in ``shared/rules/``:

* ``tda``: Poker TDA rules (German translation, ``poker-tda-rules.de.txt``), rule numbers as printed there.
* ``casinos_austria``: Casinos Austria cash game rules (``casinos-austria-cash-game-rules.en.txt``), cited
  ``CA GR n`` (GENERAL RULES), ``CA Stakes n``, ``CA Actions n``.
* ``poker_play``: Poker-Play.com house rules (``poker-play-house-rules.en.txt``), cited ``PP <section> n``.
* ``allin_club``: ALLIN club rules, Slovakia (``allin-club-rules.sk.txt``), cited ``AC n``.
* ``club_tournament_de``: German club tournament rules (``club-tournament-rules.de.txt``), cited ``DE n``. They say
  nothing about most betting details; where they are silent the profile follows the TDA and says so.

The engine (``controller.betting``) reads only the profile; it never branches on a profile's name.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Mapping, Sequence

from controller.floor import NEXT_HAND, NEXT_HAND_ACTION

# Odd chip: who gets the chip that cannot be split.
ODD_CHIP_FIRST_LEFT_OF_BUTTON = "first_left_of_button"
ODD_CHIP_CLOSEST_TO_BUTTON = "closest_to_button"

# Down to which unit a pot is split.
SPLIT_SMALLEST_CHIP = "smallest_chip"
SPLIT_SMALL_BLIND_OR_ANTE = "small_blind_or_ante"

# A spoken amount that can mean two things ("five" at 200/400).
UNCLEAR_HIGHEST_REASONABLE = "highest_reasonable"
UNCLEAR_LOWEST = "lowest"

# When a misdeal can no longer be called (blinds and antes never count).
SUBSTANTIAL_TWO_ACTIONS_ONE_CHIP_OR_THREE = "two_actions_one_with_chips_or_three"  # TDA 36 as example 1-A counts it
SUBSTANTIAL_TWO_CHIP_OR_THREE_ACTIONS = "two_chip_actions_or_three_actions"  # AC 31: two players each put chips in
SUBSTANTIAL_TWO_CHIP_ACTIONS_PREFLOP = "two_chip_actions_never_after_flop"
SUBSTANTIAL_TWO_PLAYERS_AFTER_BLINDS = "two_players_after_blinds"

# Several chips pushed silently while facing a bet.
MULTI_CHIP_REMOVE_SMALLEST = "remove_smallest_chip"
MULTI_CHIP_SAME_DENOMINATION = "same_denomination_only"
MULTI_CHIP_FIFTY_PERCENT_ONLY = "fifty_percent_only"

# In turn, silently fewer chips than the call (not all-in).
INCOMPLETE_CALL_TDA_51 = "tda_51"
INCOMPLETE_CALL_COMPLETE_OR_FORFEIT = "complete_or_forfeit"
INCOMPLETE_CALL_MUST_COMPLETE = "must_complete"

# Limit: when the raise cap is lifted.
LIMIT_UNCAPPED_HEADS_UP_BEFORE_CAP = "heads_up_before_cap"
LIMIT_UNCAPPED_EVENT_HEADS_UP = "event_heads_up_only"

# Actions out of turn.
OOT_BINDING_UNLESS_CHANGED = "binding_unless_changed"
OOT_DECLARATION_DISMISSED = "declaration_dismissed_no_raise"  # PP Betting 10: an action, not a word, bars a raise

# A hole card the dealer exposes during the deal that is not the first or second card of the deal.
EXPOSED_BURN_AFTER_DEAL = "burn_card_replaced_after_deal"  # it is the flop's burn; a replacement after the deal
EXPOSED_REPLACE_NOW = "replaced_at_once"  # not used: the player gets the next card instead

# The flop was turned without a burn card before it.
MISSING_FLOP_BURN_MIX_AND_PICK = "mix_and_pick"  # no action yet: the floor picks the burn among the three
MISSING_FLOP_BURN_PLAY_ON = "play_on"  # the round is played on as dealt


# A player shows his own hole card during the play (after the deal).
SHOWN_CARD_PLAYS = "plays"  # PP Irregularities 12-14: a card the player flashes himself still plays
SHOWN_CARD_PASSIVE = "passive"  # CA Actions 10: the hand may only check, call or fold from then on
SHOWN_CARD_PASSIVE_NEXT_ACTION = "passive_next_action"  # AC 50: its next action only check, call or fold
SHOWN_CARD_FOLDS = "folds"  # DE 3: premature showing counts as a fold

# Where the button goes when the small and the big blind of a hand both bust.
BLINDS_BUST_DEAD_BUTTON = "dead_button"  # AC 27: the big blind is posted by who owes it, the button may be dead
BLINDS_BUST_BUTTON_STAYS = "button_stays"  # DE 9: the button stays where it was

# Chips pushed that do not (all) play.
UNPLAYABLE_EVERY_CHIP_PLAYS = "every_chip_plays"
UNPLAYABLE_BELOW_FORCED_BET_CHIP = "below_forced_bet_chip"  # PP Betting 7: smaller than the blinds' and antes' chip
UNPLAYABLE_NOT_DIVISIBLE = "divisible_by_small_blind_or_ante"  # CA GR 8, CA Stakes 1: the spike goes back

# How long a pot the table could not award, or saw pushed to the wrong seat, waits for the floor (the lapses of
# controller.floor): until substantial action in a later hand (TDA 20-6), or until the next hand begins.
POT_DISPUTES_NEXT_HAND_ACTION = NEXT_HAND_ACTION
POT_DISPUTES_NEXT_HAND = NEXT_HAND

# Stud games: which cards give a tied winner the odd chip (controller.stud).
STUD_ODD_CHIP_FIVE_CARD_HAND = "highest_of_five_card_hand"  # TDA 20-2: the winning five-card hand's highest card
STUD_ODD_CHIP_ALL_CARDS = "all_cards"  # PP Ties 5b: all the player's cards; the lowest card in low games


@dataclass(frozen=True)
class RuleProfile:
    """One house's settings. ``sources`` maps each field name to the rule(s) it follows."""

    name: str
    document: str
    odd_chip: str
    split_unit: str
    unclear_amount: str
    substantial_action: str
    multiple_chip_rule: str
    incomplete_call: str
    limit_raise_cap: int  # raises after the bet, per betting round (hold'em has four rounds)
    limit_raise_cap_two_rounds: int  # games with only two betting rounds (not used by hold'em)
    limit_heads_up: str
    out_of_turn: str
    exposed_hole_card: str  # EXPOSED_*: a later hole card exposed by the dealer during the deal
    missing_flop_burn: str  # MISSING_FLOP_BURN_*: a flop turned without a burn card
    unplayable_chips: str  # UNPLAYABLE_*: chips of a push that do not play
    pot_disputes: str  # POT_DISPUTES_*: how long a pot error waits for the floor
    shown_hole_card: str  # SHOWN_CARD_*: a player shows his own hole card after the deal
    blinds_bust: str  # BLINDS_BUST_*: the button after both blinds of a hand busted
    run_it_minimum_pot: int  # chips in the middle before the players may agree to run the board twice (0: any pot)
    stud_odd_chip: str  # STUD_ODD_CHIP_*: the cards that decide a tied stud hand's odd chip
    open_pair_big_bet: bool  # stud high: an open pair on fourth street allows the big bet
    sources: Mapping[str, str] = field(default_factory=dict)

    def cite(self, field_name: str) -> str:
        """The rule reference for one setting, e.g. ``cite("odd_chip") == "TDA 20-1"``."""
        return self.sources.get(field_name, "")


def _profile(**kwargs: object) -> RuleProfile:
    sources = kwargs.pop("sources")
    assert isinstance(sources, dict)
    names = {f.name for f in fields(RuleProfile)} - {"name", "document", "sources"}
    missing = names - set(sources)
    assert not missing, f"every setting cites its source; missing: {sorted(missing)}"
    return RuleProfile(**kwargs, sources=MappingProxyType(sources))  # type: ignore[arg-type]


TDA = _profile(
    name="tda",
    document="poker-tda-rules.de.txt",
    odd_chip=ODD_CHIP_FIRST_LEFT_OF_BUTTON,
    split_unit=SPLIT_SMALLEST_CHIP,
    unclear_amount=UNCLEAR_HIGHEST_REASONABLE,
    substantial_action=SUBSTANTIAL_TWO_ACTIONS_ONE_CHIP_OR_THREE,
    multiple_chip_rule=MULTI_CHIP_REMOVE_SMALLEST,
    incomplete_call=INCOMPLETE_CALL_TDA_51,
    limit_raise_cap=3,
    limit_raise_cap_two_rounds=3,
    limit_heads_up=LIMIT_UNCAPPED_EVENT_HEADS_UP,
    out_of_turn=OOT_BINDING_UNLESS_CHANGED,
    exposed_hole_card=EXPOSED_BURN_AFTER_DEAL,
    missing_flop_burn=MISSING_FLOP_BURN_MIX_AND_PICK,
    unplayable_chips=UNPLAYABLE_EVERY_CHIP_PLAYS,
    pot_disputes=POT_DISPUTES_NEXT_HAND_ACTION,
    shown_hole_card=SHOWN_CARD_PLAYS,
    blinds_bust=BLINDS_BUST_DEAD_BUTTON,
    run_it_minimum_pot=0,
    stud_odd_chip=STUD_ODD_CHIP_FIVE_CARD_HAND,
    open_pair_big_bet=True,
    sources={
        "odd_chip": "TDA 20-1",
        "split_unit": "TDA 20",
        "unclear_amount": "TDA 54 (unclear betting: highest reasonable amount <= pot)",
        "substantial_action": "TDA 36 (as TDA example 1-A counts it: two actions, one of them with chips, or any "
        "three; blinds do not count)",
        "multiple_chip_rule": "TDA 45",
        "incomplete_call": "TDA 51",
        "limit_raise_cap": "TDA 48 (house cap; 3 raises as in CA Actions 3)",
        "limit_raise_cap_two_rounds": "TDA 48 (house cap)",
        "limit_heads_up": "TDA 48 (capped even heads-up until the event is down to 2 players)",
        "out_of_turn": "TDA 53",
        "exposed_hole_card": "DE 3 (the burn card for the flop, shown to all; a new card after the deal)",
        "missing_flop_burn": "TDA 39-2",
        "unplayable_chips": "TDA 20 (the smallest denomination still in play)",
        "shown_hole_card": "PP Irregularities 12-14 (a card the player flashes himself plays)",
        "blinds_bust": "AC 27 (a dead button; the big blind posted by who owes it)",
        "run_it_minimum_pot": "",  # no book but CA sets a minimum: any pot
        "pot_disputes": "TDA 20-6 (errors in calculating or awarding the pot can be disputed until substantial "
        "action has taken place in the next hand)",
        "stud_odd_chip": "TDA 20-2 (the highest card by suit of the winning five-card hand, in Stud, Razz and "
        "either half of Stud/8)",
        "open_pair_big_bet": "",
    },
)

CASINOS_AUSTRIA = _profile(
    name="casinos_austria",
    document="casinos-austria-cash-game-rules.en.txt",
    odd_chip=ODD_CHIP_CLOSEST_TO_BUTTON,
    split_unit=SPLIT_SMALL_BLIND_OR_ANTE,
    unclear_amount=UNCLEAR_HIGHEST_REASONABLE,
    substantial_action=SUBSTANTIAL_TWO_CHIP_ACTIONS_PREFLOP,
    multiple_chip_rule=MULTI_CHIP_SAME_DENOMINATION,
    incomplete_call=INCOMPLETE_CALL_COMPLETE_OR_FORFEIT,
    limit_raise_cap=3,
    limit_raise_cap_two_rounds=3,
    limit_heads_up=LIMIT_UNCAPPED_HEADS_UP_BEFORE_CAP,
    out_of_turn=OOT_BINDING_UNLESS_CHANGED,
    exposed_hole_card=EXPOSED_BURN_AFTER_DEAL,
    missing_flop_burn=MISSING_FLOP_BURN_MIX_AND_PICK,
    unplayable_chips=UNPLAYABLE_NOT_DIVISIBLE,
    pot_disputes=POT_DISPUTES_NEXT_HAND,
    shown_hole_card=SHOWN_CARD_PASSIVE,
    blinds_bust=BLINDS_BUST_DEAD_BUTTON,
    run_it_minimum_pot=500,
    stud_odd_chip=STUD_ODD_CHIP_FIVE_CARD_HAND,
    open_pair_big_bet=True,
    sources={
        "odd_chip": "CA GR 8 (closest to the button in the betting order; CA Actions 8f gives run-it-twice odd chips "
        "to the worse position instead)",
        "split_unit": "CA GR 8 (split only down to the small blind or ante)",
        "unclear_amount": "CA GR 4 (non-standard announcements at the player's risk), TDA 54 (unclear betting: "
        "highest reasonable amount <= pot)",
        "substantial_action": "CA GR 9 (two active chip actions; never after the flop)",
        "multiple_chip_rule": "CA Actions 4 (several chips of the same value)",
        "incomplete_call": "CA Actions 2 (complete the bet or forfeit bets and pot; no raise)",
        "limit_raise_cap": "CA Actions 3 (three raises per betting round in split limit)",
        "limit_raise_cap_two_rounds": "CA Actions 3",
        "limit_heads_up": "CA Actions 3 (two players left before the third raise: unlimited)",
        "out_of_turn": "CA Actions 2",
        "exposed_hole_card": "CA GR 9 (the first or second card exposed), DE 3 (the burn card for the flop, shown to "
        "all; a new card after the deal)",
        "missing_flop_burn": "TDA 39-2",
        "unplayable_chips": "CA GR 8, CA Stakes 1 (bets divisible by the ante or small blind, by the big blind "
        "where the small blind does not divide it; the spike is reimbursed)",
        "shown_hole_card": "CA Actions 10 (\"If a player shows one or more of his hole cards before the end of the "
        "hand or the showdown, his hand is passive\")",
        "blinds_bust": "CA Stakes 4 (every blind is collected, never missed), AC 27 (a dead button)",
        "run_it_minimum_pot": "CA Actions 8c (\"there is at least € 500 in the pot\"; a chip counted as one euro)",
        "pot_disputes": "CA Actions 9 (a complaint must be made before the next game has started; no correction "
        "after)",
        "stud_odd_chip": "CA GR 8 (\"the player with the highest card, including suit priority\"; the cards "
        "of the hand, as TDA 20-2 reads it)",
        "open_pair_big_bet": "CA Actions 3c (\"although a pair is open\": the upper limit on fourth street)",
    },
)

POKER_PLAY = _profile(
    name="poker_play",
    document="poker-play-house-rules.en.txt",
    odd_chip=ODD_CHIP_FIRST_LEFT_OF_BUTTON,
    split_unit=SPLIT_SMALLEST_CHIP,
    unclear_amount=UNCLEAR_HIGHEST_REASONABLE,
    substantial_action=SUBSTANTIAL_TWO_PLAYERS_AFTER_BLINDS,
    multiple_chip_rule=MULTI_CHIP_FIFTY_PERCENT_ONLY,
    incomplete_call=INCOMPLETE_CALL_MUST_COMPLETE,
    limit_raise_cap=3,
    limit_raise_cap_two_rounds=4,
    limit_heads_up=LIMIT_UNCAPPED_HEADS_UP_BEFORE_CAP,
    out_of_turn=OOT_DECLARATION_DISMISSED,
    exposed_hole_card=EXPOSED_REPLACE_NOW,
    missing_flop_burn=MISSING_FLOP_BURN_MIX_AND_PICK,
    unplayable_chips=UNPLAYABLE_BELOW_FORCED_BET_CHIP,
    pot_disputes=POT_DISPUTES_NEXT_HAND_ACTION,
    shown_hole_card=SHOWN_CARD_PLAYS,
    blinds_bust=BLINDS_BUST_DEAD_BUTTON,
    run_it_minimum_pot=0,
    stud_odd_chip=STUD_ODD_CHIP_ALL_CARDS,
    open_pair_big_bet=True,
    sources={
        "odd_chip": "PP Ties 5a, PP Ties 4 (at most one odd chip per player)",
        "split_unit": "PP Ties 3",
        "unclear_amount": "PP Betting 8, TDA 54 (unclear betting: highest reasonable amount <= pot)",
        "substantial_action": "PP Misdeals 2",
        "multiple_chip_rule": "PP Betting 14 (a full bet plus half a bet or more is a raise)",
        "incomplete_call": "PP Betting 16 (improper amounts brought up to proper size)",
        "limit_raise_cap": "PP Betting 3a (bet and three raises with three or more betting rounds)",
        "limit_raise_cap_two_rounds": "PP Betting 3b (bet and four raises with two betting rounds)",
        "limit_heads_up": "PP Betting 4 (heads-up unlimited unless capped before)",
        "out_of_turn": "PP Betting 10 (a verbal declaration out of turn dismissed without penalty; who acts out of "
        "turn may not raise on the next turn)",
        "exposed_hole_card": "PP Irregularities 12-13 (an exposed card is not dealt into the hand; no choice to keep "
        "it)",
        "missing_flop_burn": "TDA 39-2",
        "unplayable_chips": "PP Betting 7 (chips smaller than the smallest chip of the antes and blinds do not "
        "play, even in quantity)",
        "shown_hole_card": "PP Irregularities 12-14 (a card the player flashes himself plays)",
        "blinds_bust": "AC 27 (a dead button; the big blind posted by who owes it)",
        "run_it_minimum_pot": "",
        "pot_disputes": "PP Showdown 3 (errors in paying out the pot are to be reported), TDA 20-6 (until "
        "substantial action in the next hand)",
        "stud_odd_chip": "PP Ties 5b (\"All cards are factored into this determination - Not just the five "
        "cards of the hand\"; the lowest card in low games)",
        "open_pair_big_bet": "",
    },
)

ALLIN_CLUB = _profile(
    name="allin_club",
    document="allin-club-rules.sk.txt",
    odd_chip=ODD_CHIP_FIRST_LEFT_OF_BUTTON,
    split_unit=SPLIT_SMALLEST_CHIP,
    unclear_amount=UNCLEAR_LOWEST,
    substantial_action=SUBSTANTIAL_TWO_CHIP_OR_THREE_ACTIONS,
    multiple_chip_rule=MULTI_CHIP_SAME_DENOMINATION,
    incomplete_call=INCOMPLETE_CALL_MUST_COMPLETE,
    limit_raise_cap=3,
    limit_raise_cap_two_rounds=3,
    limit_heads_up=LIMIT_UNCAPPED_EVENT_HEADS_UP,
    out_of_turn=OOT_BINDING_UNLESS_CHANGED,
    exposed_hole_card=EXPOSED_BURN_AFTER_DEAL,
    missing_flop_burn=MISSING_FLOP_BURN_MIX_AND_PICK,
    unplayable_chips=UNPLAYABLE_EVERY_CHIP_PLAYS,
    pot_disputes=POT_DISPUTES_NEXT_HAND,
    shown_hole_card=SHOWN_CARD_PASSIVE_NEXT_ACTION,
    blinds_bust=BLINDS_BUST_DEAD_BUTTON,
    run_it_minimum_pot=0,
    stud_odd_chip=STUD_ODD_CHIP_FIVE_CARD_HAND,
    open_pair_big_bet=True,
    sources={
        "odd_chip": "AC 15",
        "split_unit": "AC 15, TDA 20 (the smallest denomination still in play)",
        "unclear_amount": "AC 43 (the lowest interpretation)",
        "substantial_action": "AC 31 (two players each putting chips in, or any three actions)",
        "multiple_chip_rule": "AC 38 (chips of the same value; mixed chips go by AC 36)",
        "incomplete_call": "AC 40 (accepted action: the correct amount must be completed)",
        "limit_raise_cap": "AC 39 (no cap in NL/PL), TDA 48 (house cap)",
        "limit_raise_cap_two_rounds": "TDA 48 (house cap)",
        "limit_heads_up": "TDA 48 (capped even heads-up until the event is down to 2 players)",
        "out_of_turn": "AC 34",
        "exposed_hole_card": "AC 30 (the first two cards exposed), DE 3 (the burn card for the flop, shown to "
        "all; a new card after the deal)",
        "missing_flop_burn": "TDA 39-2",
        "unplayable_chips": "AC 19 (the chip race colours up the smallest chips)",
        "shown_hole_card": "AC 50 (the hand is never dead; its next action passive: \"pri nasledujúcej akcii už "
        "len pasívne vyjadrenie – iba CHECK, CALL nebo FOLD\")",
        "blinds_bust": "AC 27 (the big blind posted by who owes it; the small blind and the button may fall on empty "
        "seats)",
        "run_it_minimum_pot": "",
        "pot_disputes": "AC 17 (disputed pots: the right to dispute ends when a new hand begins)",
        "stud_odd_chip": "TDA 20-2",
        "open_pair_big_bet": "",
    },
)

CLUB_TOURNAMENT_DE = _profile(
    name="club_tournament_de",
    document="club-tournament-rules.de.txt",
    odd_chip=ODD_CHIP_FIRST_LEFT_OF_BUTTON,
    split_unit=SPLIT_SMALLEST_CHIP,
    unclear_amount=UNCLEAR_HIGHEST_REASONABLE,
    substantial_action=SUBSTANTIAL_TWO_ACTIONS_ONE_CHIP_OR_THREE,
    multiple_chip_rule=MULTI_CHIP_REMOVE_SMALLEST,
    incomplete_call=INCOMPLETE_CALL_TDA_51,
    limit_raise_cap=3,
    limit_raise_cap_two_rounds=3,
    limit_heads_up=LIMIT_UNCAPPED_EVENT_HEADS_UP,
    out_of_turn=OOT_BINDING_UNLESS_CHANGED,
    exposed_hole_card=EXPOSED_BURN_AFTER_DEAL,
    missing_flop_burn=MISSING_FLOP_BURN_PLAY_ON,
    unplayable_chips=UNPLAYABLE_EVERY_CHIP_PLAYS,
    pot_disputes=POT_DISPUTES_NEXT_HAND_ACTION,
    shown_hole_card=SHOWN_CARD_FOLDS,
    blinds_bust=BLINDS_BUST_BUTTON_STAYS,
    run_it_minimum_pot=0,
    stud_odd_chip=STUD_ODD_CHIP_FIVE_CARD_HAND,
    open_pair_big_bet=True,
    sources={
        "odd_chip": "DE 14, TDA 20-1",
        "split_unit": "DE 10 (side pots), TDA 20",
        "unclear_amount": "DE 14, TDA 54",
        "substantial_action": "DE 3, TDA 36 (as TDA example 1-A counts it)",
        "multiple_chip_rule": "DE 8, TDA 45",
        "incomplete_call": "DE 14, TDA 51",
        "limit_raise_cap": "DE 1 (no limit games by default; TDA 48)",
        "limit_raise_cap_two_rounds": "DE 1 (TDA 48)",
        "limit_heads_up": "DE 13 (TDA 48)",
        "out_of_turn": "DE 14, TDA 53",
        "exposed_hole_card": "DE 3 (the burn card for the flop, shown to all; a new card after the deal)",
        "missing_flop_burn": "DE 3 (a forgotten burn: the round is played on)",
        "unplayable_chips": "DE 14, TDA 20",
        "shown_hole_card": "DE 3 (\"Vorzeitiges Aufdecken gilt als gepasst\")",
        "blinds_bust": "DE 9 (small and big blind out: the button stays where it was in the new round)",
        "run_it_minimum_pot": "",
        "pot_disputes": "DE 14, TDA 20-6",
        "stud_odd_chip": "TDA 20-2",
        "open_pair_big_bet": "",
    },
)

PROFILES: Mapping[str, RuleProfile] = MappingProxyType(
    {p.name: p for p in (TDA, CASINOS_AUSTRIA, POKER_PLAY, ALLIN_CLUB, CLUB_TOURNAMENT_DE)}
)


def profile(name: str) -> RuleProfile:
    """The named profile; ``KeyError`` lists the known names."""
    try:
        return PROFILES[name]
    except KeyError:
        raise KeyError(f"unknown rule profile {name!r}; known: {', '.join(PROFILES)}") from None


def is_substantial(kind: str, actions: Sequence[tuple[int, bool]]) -> bool:
    """Whether ``actions`` (seat, whether it put chips in) for each action, blinds and antes left out, are
    substantial action by the house's definition ``kind`` (``RuleProfile.substantial_action``).

    TDA 36 as TDA example 1-A counts it ("Platz 3 (UTG) passt, Platz 4 bezahlt und komplettiert damit wesentliche
    Handlungen"): two actions, at least one of them with chips, or any three. AC 31: "akékoľvek dve akcie, ktoré
    urobia dvaja hráči, keď každý do potu vloží žetóny, alebo akékoľvek tri akcie". CA GR 9: "two or more active
    actions (bet, call, raise, re-raise, all-in,...)" (after the flop always: the caller knows the street). PP
    Misdeals 2: "two players after the blinds have acted on their hands"."""
    with_chips = [seat for seat, chips in actions if chips]
    if kind == SUBSTANTIAL_TWO_CHIP_ACTIONS_PREFLOP:
        return len(with_chips) >= 2
    if kind == SUBSTANTIAL_TWO_PLAYERS_AFTER_BLINDS:
        return len({seat for seat, _ in actions}) >= 2
    if kind == SUBSTANTIAL_TWO_ACTIONS_ONE_CHIP_OR_THREE:
        return (len(actions) >= 2 and bool(with_chips)) or len(actions) >= 3
    return len(set(with_chips)) >= 2 or len(actions) >= 3


def resolve_unclear_amount(candidates: Sequence[int], pot: int, rules: RuleProfile) -> tuple[int, str]:
    """Pick the amount of a declaration that can mean several amounts ("five" → 500 or 5,000).

    TDA 54: the highest reasonable amount that is not more than the pot before the bet (the pot counts all
    earlier bets, collected or not). AC 43: the lowest interpretation. Returns the amount and the rule.
    """
    options = sorted(set(int(c) for c in candidates))
    if not options:
        raise ValueError("no candidate amounts")
    if rules.unclear_amount == UNCLEAR_LOWEST:
        return options[0], rules.cite("unclear_amount")
    within_pot = [c for c in options if c <= pot]
    return (within_pot[-1] if within_pot else options[0]), rules.cite("unclear_amount")
