"""A refused command leaves the table as it was: no event, no number used, nothing waiting for the floor, not even the
table's time — so the journal, which keeps only what was applied, replays to the same table, and the floor sees no
gap in the numbering and no ruling it was never told of. Every command of the published schema is refused here in a
state that does not allow it (or is shown to be allowed in every state)."""

from __future__ import annotations

import pytest

from controller.cards import FULL_DECK
from controller.chip_betting import BettingSetup
from controller.command_events import NewHandCalled
from controller.commands import Command, CommandTable, Handler
from controller.game import GameController
from controller.levels import Level
from controller.outbox import EmittedWhileChecking, Outbox
from controller.table import TableSetup
from rfid_table.service.checkpoint import state_of
from rfid_table.service.commands import COMMANDS
from rfid_table.service.journal import Journal
from rfid_table.service.replay import replay
from sim.replay import card_uid, chip_uid, table_zones
from sim.table_driver import Input, TableDriver, actions, debounce_by_pile, of

DECK = {card_uid(i): card for i, card in enumerate(FULL_DECK)}
RACK = {value: [chip_uid(d, n) for n in range(40)] for d, value in enumerate((25, 100, 500))}
CHIPS = {uid: value for value, uids in RACK.items() for uid in uids}
ZONES = table_zones(6)
NO_TOURNAMENT = "this table plays no tournament: the configuration has no [tournament] level schedule"


class Table(TableDriver):
    """Six seats, three players (seats 1 to 3, the button on 3: seat 1 the small blind, seat 2 the big blind, seat 3
    first to act), at most five dealt in; chips of 25, 100 and 500 where the table reads them (blinds 25/100)."""

    def __init__(self, chips: bool = True, levels: tuple[Level, ...] = (), on_input=None):
        setup = TableSetup("refusals", 6, DECK, decks={"A": DECK}, deck_id="A", players=(1, 2, 3), button=3,
                           max_players=5, levels=levels)
        betting = BettingSetup(small_blind=25, big_blind=100, chips=CHIPS) if chips else None
        super().__init__(GameController(setup, betting), ZONES, debounce=debounce_by_pile(ZONES), deck=DECK,
                         rack=RACK, on_input=on_input)
        self.reads_chips = chips

    def idle(self, stacks: dict[str, int] | None = None) -> Table:
        """Between hands, the stacks counted."""
        if self.reads_chips:
            self.command("set_stacks", stacks=stacks or {"1": 5000, "2": 5000, "3": 5000})
        self.run(0.2)
        return self

    def named(self) -> Table:
        """Between hands, a player named at seat 1."""
        self.idle()
        body = {"command": "seat_player", "role": "floor", "user": "ann", "seat": 1, "name": "Ann", "player_id": "p1"}
        assert self.controller.handle_command(body, self.t)[1] is None
        return self

    def dealt(self, stacks: dict[str, int] | None = None) -> Table:
        """The blinds posted and two cards dealt to each player: seat 3 is to act."""
        self.idle(stacks)
        if self.reads_chips:
            self.chips(1, 25, seconds=0.2)
            self.chips(2, 100, seconds=0.2)
        cards = iter(FULL_DECK[::-1])
        for _ in range(2):
            for seat in (1, 2, 3):
                self.put(next(cards), f"seat{seat}.cards", seconds=0.2)
        self.run(0.6)
        return self

    def settling(self) -> Table:
        """Seat 1 pushes chips out of turn (seat 3 is to act), and they have not settled yet."""
        self.dealt()
        self.place(*self.take_chips(100), zone="seat1.bets")
        self.run(0.2)
        return self

    def broke(self) -> Table:
        """Seat 1 has no chips and was dealt in: the betting cannot begin, the floor is told (betting_unread)."""
        self.dealt(stacks={"1": 0, "2": 5000, "3": 5000})
        return self


def state(controller: GameController) -> tuple:
    """What a refusal must leave as it was: the numbering, what waits for the floor, the snapshot (which carries the
    table's time) and the checkpoint a hand's end would journal (the controller pickled whole, byte for byte)."""
    return controller.seq, controller.floor_pending(), controller.snapshot(secure=True), state_of(controller)


def refused(table: Table, command: str, **fields) -> str:
    """``command`` sent to the table five seconds after its last input: refused, and nothing changed."""
    before = state(table.controller)
    events, refusal = table.controller.handle_command({"command": command, "role": "floor", "user": "ann", **fields},
                                                      table.t + 5.0)
    assert refusal is not None and events == []
    assert state(table.controller) == before
    return refusal


CASES = [  # (command, its fields, the table, its state, the reply's error)
    ("select_deck", {"deck": "A"}, "chips", "dealt", "a hand is running: the deck can be changed between hands"),
    ("declare", {"seat": 1, "declaration": "call"}, "chips", "idle",
     "the betting has not started (the deal is not complete)"),
    ("declare", {"seat": 5, "declaration": "call"}, "chips", "dealt", "seat 5 is not in the hand"),
    ("declare", {"seat": 1, "declaration": "call"}, "chips", "broke",
     "the betting has not started (the deal is not complete)"),
    ("declare", {"seat": 1, "declaration": "call"}, "cards", "idle", "no hand is running"),
    ("declare", {"seat": 5, "declaration": "fold"}, "cards", "dealt", "seat 5 is not in the hand"),
    ("misdeal", {}, "chips", "idle", "no hand is running"),
    ("exposed_card", {"seat": 1}, "chips", "idle", "no hand is running"),
    ("exposed_card", {"seat": 5}, "cards", "dealt", "seat 5 holds no card"),
    ("confirm", {"irregularity": 99}, "chips", "dealt", "no irregularity 99 waits for the floor"),
    ("override", {"irregularity": 99}, "cards", "dealt", "no irregularity 99 waits for the floor"),
    ("floor_pick", {"irregularity": 99, "card": "As"}, "chips", "dealt", "no irregularity 99 waits for the floor"),
    ("seats", {"seats": [1, 2, 3, 4, 5, 6]}, "chips", "idle",
     "6 players: at most 5 may be dealt in at this table (CA GR 15.1)"),
    ("set_stacks", {"stacks": {"1": 1000}}, "cards", "idle", "set_stacks is not available on this table"),
    ("undo", {}, "chips", "idle", "no betting is running: nothing to undo"),
    ("undo", {}, "chips", "dealt",
     "nothing to undo in this betting round (forced bets, folds and closed rounds are the floor's)"),
    ("undo", {}, "chips", "settling",
     "nothing to undo in this betting round (forced bets, folds and closed rounds are the floor's)"),
    ("undo", {}, "cards", "dealt", "this table does not read the chips: there is no betting action to undo"),
    ("start_clock", {}, "chips", "idle", "no player is to act: the clock starts on the player whose turn it is"),
    ("start_clock", {"seat": 1}, "chips", "dealt", "seat 1 is not to act (seat 3 is)"),
    ("start_clock", {}, "cards", "dealt", "this table does not read the betting, so it does not know whose turn it "
                                          "is: name the seat (start_clock with seat)"),
    ("start_clock", {"seat": 5}, "cards", "dealt", "seat 5 has no live hand"),
    ("stop_clock", {}, "chips", "dealt", "the clock is not running"),
    ("time_bank", {"seat": 1}, "chips", "dealt", "it is not seat 1's turn (seat 3 is to act)"),
    ("seat_player", {"seat": 2, "name": "Bo", "player_id": "p1"}, "chips", "named",
     "player p1 already sits at seat 1: clear_seat it first"),
    ("clear_seat", {"seat": 4}, "chips", "idle", "seat 4 has no player to clear"),
    ("set_level", {}, "chips", "idle", NO_TOURNAMENT),
    ("set_level", {"level": 3}, "tournament", "idle", "level 3 is not in the schedule (levels 1 to 2)"),
    ("set_game", {"game": "plo4"}, "chips", "idle",
     "this table deals one game only: the configuration's [game] rotation names the games it may deal"),
    ("bomb_pot", {"amount": 100}, "chips", "dealt",
     "the deal has begun: a bomb pot or flip is agreed before the deal (CA GR 14.2, 14.3)"),
    ("run_it", {"times": 2}, "chips", "idle", "no hand is running"),
    ("run_it", {"times": 2}, "chips", "dealt",
     "players can still act: a hand is run twice only when no more action is possible (CA Actions 8a)"),
]
ALWAYS_ALLOWED = {"ping": {}, "set_button": {"seat": 2}, "new_hand": {}, "floor_call": {"seat": 2}}


def table_in(kind: str, state_name: str) -> Table:
    table = {"chips": lambda: Table(), "cards": lambda: Table(chips=False),
             "tournament": lambda: Table(levels=(Level(25, 100), Level(50, 200)))}[kind]()
    return getattr(table, state_name)()


@pytest.mark.parametrize("command, fields, kind, state_name, reason", CASES,
                         ids=[f"{c[0]}-{c[2]}-{c[3]}-{i}" for i, c in enumerate(CASES)])
def test_a_refused_command_changes_nothing(command, fields, kind, state_name, reason):
    assert refused(table_in(kind, state_name), command, **fields) == reason


@pytest.mark.parametrize("state_name", ["idle", "dealt"])
@pytest.mark.parametrize("name", sorted(ALWAYS_ALLOWED))
def test_the_commands_no_state_refuses_are_taken_between_hands_and_during_one(name, state_name):
    table = table_in("chips", state_name)
    _, refusal = table.try_command(name, **ALWAYS_ALLOWED[name])
    assert refusal is None


def test_every_command_of_the_schema_is_refused_above_or_allowed_in_every_state():
    assert {case[0] for case in CASES} | set(ALWAYS_ALLOWED) == set(COMMANDS)
    assert Table().controller.commands.names() == sorted(COMMANDS)  # a table with chips has an owner for each


def test_declarations_refused_while_the_betting_cannot_begin_leave_the_floor_its_one_ruling():
    """Seat 1 was dealt in with no chips: the betting cannot begin, and the floor is told once (betting_unread).
    Declarations entered meanwhile are refused without using a number or queueing a ruling of their own, so a
    confirm of a number no event announced is refused too, and the ruling the floor saw is the one it answers."""
    table = Table().broke()
    [unread] = of(table.events, "bet_ruling", "betting_unread")
    assert table.controller.floor_pending() == [unread.seq] == [table.controller.seq]
    for _ in range(3):
        _, refusal = table.try_command("declare", seat=2, declaration="call")
        assert refusal == "the betting has not started (the deal is not complete)"
    assert table.controller.seq == unread.seq and table.controller.floor_pending() == [unread.seq]
    _, refusal = table.try_command("confirm", irregularity=unread.seq + 1)
    assert refusal == f"no irregularity {unread.seq + 1} waits for the floor"
    [ruling] = table.command("confirm", irregularity=unread.seq)
    assert (ruling.seq, ruling.public["irregularity"]) == (unread.seq + 1, unread.seq)


def test_a_declaration_for_a_seat_not_dealt_in_is_refused_and_the_seats_in_the_hand_declare():
    table = Table().dealt()
    _, refusal = table.try_command("declare", seat=4, declaration="raise")
    assert refusal == "seat 4 is not in the hand"
    assert [e.type for e in table.command("declare", seat=3, declaration="fold")] == ["declaration", "action"]


def test_an_undo_while_the_call_still_settles_reads_the_call_then_takes_it_back():
    table = Table().dealt()
    table.place(*table.take_chips(100), zone="seat3.bets")
    table.run(0.2)  # not settled yet: the undo reads it first, it is the latest action
    undone, refusal = table.try_command("undo", role="dealer")
    assert refusal is None
    assert [e.type for e in undone][-2:] == ["action", "action_undone"]
    assert undone[-1].public["undone"][0]["action"] == "call"


def test_an_undo_refused_while_chips_settle_leaves_them_to_be_read_as_before():
    table = Table().settling()
    assert "nothing to undo" in refused(table, "undo")
    produced = table.run(1.0)  # seat 1's chips, out of turn, settle as they would have
    assert [e.public["code"] for e in of(produced, "bet_ruling")] == ["held_out_of_turn"]


def test_the_journal_of_a_table_with_refused_commands_replays_to_the_same_table(tmp_path):
    """The journal keeps what was applied; refused commands are not in it. Replayed, it must give the same events,
    numbered the same, and the same table; every ruling waiting for the floor was announced by a published event."""
    inputs: list = []
    published: set[int] = set()
    table: Table

    def journaled(step: Input) -> None:  # as the daemon journals
        if step.kind == "zone":
            inputs.append(("zone", step.t, {"kind": step.body.kind, "zone": step.body.zone, "uid": step.body.uid}))
        elif step.kind == "command" and step.refusal is None:
            inputs.append(("command", step.t, step.body))
        elif step.kind == "tick" and (step.produced or table.controller.tick_changed):
            inputs.append(("tick", step.t, {}))
        published.update(e.seq for e in step.produced)
        assert set(table.controller.floor_pending()) <= published

    table = Table(on_input=journaled)
    table.broke()
    for name, fields in (("declare", {"seat": 1, "declaration": "call"}), ("undo", {}), ("run_it", {"times": 2}),
                         ("confirm", {"irregularity": table.controller.seq + 1}), ("bomb_pot", {"amount": 100})):
        assert table.try_command(name, **fields)[1] is not None
        table.run(0.3)
    table.command("set_stacks", stacks={"1": 2000})
    table.chips(3, 100)  # the betting begins with the stacks put right: seat 3 calls
    assert actions(table.events)[-1] == (3, "call", 100)
    journal = Journal(tmp_path / "j.db")
    assert journal.open().ok
    journal.record(inputs, table.events)
    restored = GameController(table.controller.setup, table.controller.betting.setup)
    result = replay(journal, restored)
    journal.close()
    assert result.mismatches == []
    # (but the time: the ticks that changed nothing since the last input are not journaled, as in the daemon)
    assert {**restored.snapshot(secure=True), "t": None} == {**table.controller.snapshot(secure=True), "t": None}


def test_a_check_that_emits_or_a_refusal_after_an_emission_fails_loudly():
    """The outbox makes the mistake impossible: a check has no side effect, and a refusal never follows an event."""
    out = Outbox()

    def noisy_check(command: Command, t: float):
        out.publish(NewHandCalled("floor/ann"))

    commands = CommandTable(out, {"ping": Handler(noisy_check, lambda command, t: [])})
    with pytest.raises(EmittedWhileChecking):
        commands.check(Command("ping", "floor", "ann"), 1.0)
    out.begin(2.0)
    out.publish(NewHandCalled("floor/ann"))
    with pytest.raises(EmittedWhileChecking):
        commands.check(Command("misdeal", "floor", "ann"), 2.0)  # refused (not available) with an event untaken
    assert out.seq == 1


def test_a_command_owned_by_two_parts_is_a_mistake_found_when_the_table_is_built():
    handler = Handler(lambda command, t: None, lambda command, t: [])
    with pytest.raises(ValueError, match="declare has two owners"):
        CommandTable(Outbox(), {"declare": handler}, {"declare": handler})
