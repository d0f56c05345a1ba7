"""A simulated dealer and players who bet with chips: a stream of physical moves of cards and chips.

For tables with a chip set. Each hand: the button moves, the players' stacks carry over (a player who went broke
buys in again; a player whose stack grew past ``max_buy_ins`` buy-ins racks up and leaves, and a newcomer buys in
for the seat, so the chips in play stay within what the table's chip set can make however long the table runs),
the floor enters the stacks, the players bet (``sim.players``: plausibly, from their cards and position, or at
random for stress runs), and ``sim.replay.HandScript`` turns it into moves: blinds and antes as chips, cards dealt
one by one, bets pushed into the betting zones, folds to the muck, bets swept into the pot, burns and board cards,
and the table cleared; the dealer shuffles, at least as long as the table takes to see the hand over,
before the next hand's blinds. One seeded generator: a seed replays a run.

The simulated floor enters the stacks its players hold. Stacks a floor enters at the table (``floor_counted``) are
what those players hold from then on: the simulated floor enters them as counted, and never what it had before.
"""

from __future__ import annotations

import random
from typing import Callable, Iterator, Mapping, Sequence

from controller.betting import VARIANTS, BettingHand
from controller.cards import FULL_DECK
from controller.rotation import Rotation, RotationSetup
from controller.rules import EXPOSED_BURN_AFTER_DEAL
from sim.dealer import FLOOR_S, InjectedError, Move
from sim.field import TableField
from sim.players import PLAUSIBLE, PLAYERS_STYLES, RANDOM, play
from sim.replay import HandScript
from sim.stud_hands import chip_steps, engine_stud_hand

TABLE_CLEAR = "the dealer shuffles; the table is clear"  # the last move of each hand
TOP_UP_SHARE = 0.4  # a player who looks at their cards buys in again below this share of the buy-in


class BettingDealer:
    def __init__(self, field: TableField, deck: Mapping[str, str], chips: Mapping[str, int], players: Sequence[int],
                 *, variant: str = "NLHE", blinds: tuple[int, int] = (1, 2), ante: int = 0,
                 buy_in_bb: int = 100, max_buy_ins: int = 5, command: Callable[[dict], None], pace_s: float = 1.0,
                 seed: int | None = None, error_rate: float = 0.0,
                 exposed_procedure: str = EXPOSED_BURN_AFTER_DEAL, run_it_twice: float = 0.0,
                 hand_over_s: float = 0.0, read_s: float = 0.0, deal_s: float | None = None,
                 players_style: str = PLAUSIBLE, games: RotationSetup | None = None,
                 stud: tuple[int, int, int] | None = None, rules: str = "tda"):
        """``games``: a mixed game's rotation by hands (``controller.rotation``): each hand is dealt and bet as the
        game the table deals it (the dealer keeps the count as the table does); without it, ``variant`` only.
        ``stud``: a stud game's bring-in, small bet and big bet (``variant`` a stud game, no blinds): each hand is
        played at random by the betting engine and dealt with its chips by ``sim.stud_hands``; ``rules``: the
        house's profile (an open pair on fourth street)."""
        self.field = field
        self.uid_of_card = {card: uid for uid, card in deck.items()}
        rack: dict[int, list[str]] = {}
        for uid, value in sorted(chips.items()):
            rack.setdefault(value, []).append(uid)
        # Players bet round amounts: in units of the largest chip not above the small blind (25 at 50/100).
        self.unit = max((v for v in rack if v <= blinds[0]), default=min(rack))
        self.rng = random.Random(seed)
        # read_s: how long the table takes to read a bet (``table_read_s``); nobody acts on a bet sooner.
        # deal_s: between two cards pitched (by default, in step with the pace of the betting)
        self.script = HandScript(field, self.uid_of_card, rack, command, self.rng, pace_s=pace_s,
                                 deal_s=pace_s * 0.3 if deal_s is None else deal_s, read_s=read_s)
        self.players = sorted(players)
        self.variant = VARIANTS[variant]
        self.rotation = Rotation(games) if games is not None else None
        self.blinds = blinds
        self.ante = ante
        self.stud = stud
        self.rules = rules
        # a stud player buys in for as many small bets as a flop game's player for big blinds
        self.buy_in = (stud[1] if stud is not None else blinds[1]) * buy_in_bb
        # Rebuys add chips to the table and nothing takes them away: without a ceiling, one stack would grow until
        # a single all-in needs more chips than the set has. Half the set's value over the seats leaves room for
        # every bet and its change.
        rack_value = sum(value * len(uids) for value, uids in rack.items())
        self.max_stack = max(self.buy_in, min(self.buy_in * max_buy_ins, rack_value // (2 * len(self.players))))
        self.stacks = {seat: self.buy_in for seat in self.players}
        self.button = self.players[-1]
        self.hands_dealt = 0
        if not 0.0 <= error_rate <= 1.0:
            raise ValueError(f"the dealer's error rate is a chance per deal from 0 to 1, not {error_rate}")
        # The dealer's errors: an exposed card in the deal at this chance per deal, half of them the first or second
        # card (a misdeal). A generator of their own: a run without errors is the same as ever for a seed.
        self.error_rate = error_rate
        self.exposed_procedure = exposed_procedure
        self.error_rng = random.Random(None if seed is None else f"dealing-errors/{seed}")
        self.errors: list[InjectedError] = []
        # Players all-in with board cards to come agree to run it twice (CA Actions 8) at this chance; a generator
        # of their own, so that a run without it deals as ever for a seed.
        if not 0.0 <= run_it_twice <= 1.0:
            raise ValueError(f"the chance to run it twice is from 0 to 1, not {run_it_twice}")
        self.run_it_twice = run_it_twice
        self.runs_rng = random.Random(None if seed is None else f"run-it-twice/{seed}")
        self.runs_agreed = 0
        # How long the table takes to see the hand over once the cards are gathered (``table_hand_over_s``). The
        # dealer shuffles before the next blinds go in, and a real shuffle lasts longer than that; at a brisk
        # pace the simulated one must too, or the next hand's blinds are read as bets of the last one.
        if hand_over_s < 0:
            raise ValueError(f"the time the table takes to end a hand is seconds from 0, not {hand_over_s}")
        self.hand_over_s = hand_over_s
        if players_style not in PLAYERS_STYLES:
            raise ValueError(f"the players' style is one of {', '.join(PLAYERS_STYLES)}, not {players_style!r}")
        self.players_style = players_style
        # Players at a live game top up a short stack between hands; random players play on until broke.
        least = (stud[1] if stud is not None else blinds[1]) + ante  # what a hand can ask of a player at once
        self.top_up_below = least if players_style == RANDOM else max(least, int(self.buy_in * TOP_UP_SHARE))
        self._counted: dict[int, int] = {}  # stacks a floor entered since the last hand was dealt
        self.last_hand: BettingHand | None = None  # the betting of the hand under way (for sim.players.figures)

    def floor_counted(self, stacks: Mapping[int, int]) -> None:
        """A floor at the table entered these stacks (``set_stacks``): from the next hand on, the players hold
        them. A count during a hand stands after it, as the table keeps it over the hand's result."""
        self._counted.update({seat: amount for seat, amount in stacks.items() if seat in self.stacks})

    def hand(self) -> Iterator[Move]:
        game = None
        if self.rotation is not None:  # the game the table deals this hand (a misdeal's deal again is the same hand)
            game = self.rotation.hand_started()
            self.rotation.hand_ended(misdeal=False)
            self.variant = VARIANTS[game.engine]
        if game is None or game.button:  # through a stud round the button stays where it is (TDA 4)
            self.button = next((p for p in self.players if p > self.button), self.players[0])
        self.hands_dealt += 1
        self.stacks.update(self._counted)  # what the floor counted, then broke or past the ceiling as ever
        self._counted = {}
        for seat, stack in self.stacks.items():
            if stack < self.top_up_below:
                self.stacks[seat] = self.buy_in  # broke, or short: buys in again
            elif stack > self.max_stack:
                self.stacks[seat] = self.buy_in  # racks up and leaves; a newcomer takes the seat
                yield Move(0.0, f"seat {seat} racks up {stack} and leaves; a new player buys in for {self.buy_in}",
                           lambda: None)
        if self.stud is not None:
            yield from self._stud_hand((self.ante, *self.stud))
            return
        if game is not None and not game.button:  # a stud game of the rotation, at its own stakes
            assert game.stakes is not None, "a stud game of a rotation has its own stakes (check-config)"
            stakes = game.stakes
            yield from self._stud_hand((stakes.ante, stakes.bring_in, stakes.small_bet, stakes.big_bet))
            return
        blinds, ante = self.blinds, self.ante
        if game is not None and game.stakes is not None:  # the game's own blinds and ante ([game.stakes.<game>])
            blinds, ante = (game.stakes.small_blind, game.stakes.big_blind), game.stakes.ante
        hand = BettingHand(self.variant, self.players, self.button, self.stacks, blinds, ante=ante)
        deck = list(FULL_DECK)
        if self.players_style == RANDOM:  # blind to the cards, before the shuffle as ever: a seed plays as it did
            play(hand, RANDOM, self.rng, self.unit, {}, [])
        self.rng.shuffle(deck)
        hole = {s: [deck.pop() for _ in range(self.variant.hole_cards)] for s in hand.order}
        board = [deck.pop() for _ in range(5)]
        if self.players_style != RANDOM:  # players who look at their cards
            play(hand, self.players_style, self.rng, self.unit, hole, board)
        self.last_hand = hand
        from controller.showdown import award  # noqa: PLC0415

        later = self._second_run(hand, board, deck)
        if later:
            result = award(hand, hole, boards=[board, *later], runs=1 + len(later))
        else:
            result = award(hand, hole if hand.status == "showdown" else None, board)
        self.script.reset()
        exposed_at = None
        if self.error_rate and self.error_rng.random() < self.error_rate:
            cards = len(hand.order) * self.variant.hole_cards
            exposed_at = self.error_rng.randrange(2) if self.error_rng.random() < 0.5 else \
                self.error_rng.randrange(2, cards)
            seat = hand.order[exposed_at % len(hand.order)]
            self.errors.append(InjectedError(self.hands_dealt, "exposed_card", seat, f"position {exposed_at + 1}",
                                             void=exposed_at <= 1))
            if exposed_at <= 1:
                self.hands_dealt += 1  # the deal again is a hand of its own for the table
        steps = self.script.steps(hand, hole, board, exposed_at=exposed_at, exposed_procedure=self.exposed_procedure,
                                  floor_s=FLOOR_S * 1.5, later_boards=later)
        self.stacks = dict(result.finishing_stacks)
        previous = 0.0
        for step in steps:
            yield Move(step.at - previous, step.describe, step.apply)
            previous = step.at
        yield Move(max(self.script.pace_s * 2.5, self.hand_over_s), TABLE_CLEAR, lambda: None)

    def _stud_hand(self, stakes: tuple[int, int, int, int]) -> Iterator[Move]:
        """A stud hand (``sim.stud_hands``) at ``stakes`` (ante, bring-in, small bet, big bet): played at random by
        the engine from the seats in order (TDA 4: the stud round deals from the same seat), dealt with its chips;
        then the pot pushed and the table cleared."""
        seats = sorted(self.players)
        hand = engine_stud_hand(self.rng, self.variant.stud, seats, dict(self.stacks), stakes, self.rules)
        self.script.reset()
        steps = chip_steps(hand, self.field, self.uid_of_card, self.script.free, self.script.command,
                           pace_s=self.script.deal_s, push_s=self.script.act_s)
        self.stacks = {s: self.stacks[s] + hand.payoffs[s] for s in seats}
        for wait, describe, apply in steps:
            yield Move(wait, describe, apply)
        yield Move(self.script.act_s, "the pot is pushed, the cards are gathered", self.field.clear)
        yield Move(max(self.script.pace_s * 2.5, self.hand_over_s), TABLE_CLEAR, lambda: None)

    def _second_run(self, hand: BettingHand, board: list[str], deck: list[str]) -> list[list[str]]:
        """The second board when the players, all-in with board cards still to come, agree to run it twice."""
        if not self.run_it_twice or hand.status != "showdown" or len(hand.live_seats) < 2:
            return []
        if sum(1 for s in hand.live_seats if not hand.is_all_in(s)) > 1:
            return []
        streets = ("preflop", "flop", "turn", "river")
        shared = (0, 3, 4, 5)[max(streets.index(a.street) for a in hand.actions)]
        if shared == 5 or self.runs_rng.random() >= self.run_it_twice:
            return []
        self.runs_agreed += 1
        return [board[:shared] + [deck.pop() for _ in range(5 - shared)]]

    def hands(self, count: int | None) -> Iterator[Move]:
        played = 0
        while count is None or played < count:
            yield from self.hand()
            played += 1
