"""``rfid-table replay`` plays stud hand histories (F7S, F7S/8, FR) on the simulated stud table that reads its chips.

pokerkit plays seeded random hands of Seven Card Stud, Stud hi-lo and Razz and writes them as PHH; the command deals
each on the table (down and up cards on their antennas, the antes, the bring-in and every bet as chips) and writes
what the table read. The table's history must give pokerkit's actions, cards and finishing stacks.
"""

from __future__ import annotations

import argparse
import io
import random
import warnings

import pytest

pokerkit = pytest.importorskip("pokerkit")

from controller import phh  # noqa: E402
from controller.cards import FULL_DECK  # noqa: E402
from rfid_table.devtools import replay  # noqa: E402
from sim.replay import ReplayTable, core_actions  # noqa: E402

GAMES = {"F7S": pokerkit.FixedLimitSevenCardStud, "F7S/8": pokerkit.FixedLimitSevenCardStudHighLowSplitEightOrBetter,
         "FR": pokerkit.FixedLimitRazz}
AUTOMATIONS = (pokerkit.Automation.ANTE_POSTING, pokerkit.Automation.BET_COLLECTION,
               pokerkit.Automation.BLIND_OR_STRADDLE_POSTING, pokerkit.Automation.CARD_BURNING,
               pokerkit.Automation.HOLE_CARDS_SHOWING_OR_MUCKING, pokerkit.Automation.HAND_KILLING,
               pokerkit.Automation.CHIPS_PUSHING, pokerkit.Automation.CHIPS_PULLING)


def pokerkit_stud_hand(rng: random.Random, code: str) -> str:
    """One random hand of ``code`` played by pokerkit among three to six players on random seats of an eight-seat
    table, as PHH text with pokerkit's finishing stacks."""
    n = rng.randint(3, 6)
    seats = sorted(rng.sample(range(1, 9), n))
    game = GAMES[code](AUTOMATIONS, True, 5, 10, 20, 40)
    state = game([rng.choice([120, 400, 1000]) for _ in seats], n)
    deck = list(FULL_DECK)
    rng.shuffle(deck)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        while state.status:
            if state.can_deal_hole():
                state.deal_hole(deck.pop())
            elif state.actor_index is not None:
                roll = rng.random()
                if state.can_post_bring_in():  # brought in, or completed
                    state.post_bring_in() if roll < 0.7 else state.complete_bet_or_raise_to()
                elif state.can_complete_bet_or_raise_to() and roll < 0.25 and all(state.stacks):
                    state.complete_bet_or_raise_to()
                elif state.checking_or_calling_amount == 0 or roll < 0.85 or not state.can_fold():
                    state.check_or_call()
                else:
                    state.fold()
            else:
                raise AssertionError("pokerkit waits for something this generator does not do")
    text = pokerkit.HandHistory.from_game_state(game, state, seats=seats).dumps()
    return text.rstrip("\n") + f"\nfinishing_stacks = {list(state.stacks)}\n"


def run_replay(*argv) -> tuple[int, str, str]:
    """``rfid-table replay ARGV`` in process: its exit status, what it printed and what it reported."""
    parser = argparse.ArgumentParser()
    replay.add_arguments(parser)
    out, err = io.StringIO(), io.StringIO()
    return replay.run(parser.parse_args(list(map(str, argv))), out, err), out.getvalue(), err.getvalue()


def test_replay_reads_pokerkits_stud_hands_back_from_the_chips_and_cards(tmp_path):
    rng = random.Random(20261203)
    files = []
    for number in range(6):
        code = list(GAMES)[number % 3]
        path = tmp_path / f"hand{number}.phh"
        path.write_text(pokerkit_stud_hand(rng, code), encoding="utf-8")
        files.append(path)
    # a down card the history hides: the table deals one in its place and reads every card it was told
    hidden = phh.loads(files[0].read_text())
    first = hidden["actions"][0]
    hidden["actions"][0] = first[:8] + "??" + first[10:]
    hidden["actions"] = [a for a in hidden["actions"] if " sm " not in a]
    hidden.pop("finishing_stacks")  # (without its shown cards the hand's award is the table's own)
    (tmp_path / "hidden.phh").write_text(phh.dumps(hidden), encoding="utf-8")
    files.append(tmp_path / "hidden.phh")

    status, out, err = run_replay(*files, "--out", tmp_path / "out")

    assert status == 0, out + err
    assert "7 hands: 7 reconstructed exactly, 0 differ, 0 bad input" in out
    for path in files:
        theirs, ours = phh.loads(path.read_text()), phh.loads((tmp_path / "out" / path.name).read_text())
        assert ours["variant"] == theirs["variant"] and ours["bring_in"] == 10
        assert core_actions(ours["actions"]) == core_actions(theirs["actions"]), path.name
        assert ours["finishing_stacks"] == theirs.get("finishing_stacks", ours["finishing_stacks"]), path.name
    played = phh.loads((tmp_path / "out" / "hand0.phh").read_text())["actions"]
    assert played[0][8:10] != "??" and played[0][10:14] == first[10:14]  # read, the hidden card's neighbours kept
    assert {phh.loads(path.read_text())["variant"] for path in files} == set(GAMES)
    table = ReplayTable()  # dealt as a dealer deals: no irregularity for the floor
    assert [e.public for path in files[:3] for e in table.replay(phh.loads(path.read_text())).events
            if e.type == "irregular_card"] == []
    assert sum(" cbr " in a for path in files for a in phh.loads(path.read_text())["actions"]) >= 3


def test_a_stud_hand_whose_up_card_is_hidden_is_bad_input_named_with_its_file(tmp_path):
    text = pokerkit_stud_hand(random.Random(7), "F7S")
    history = phh.loads(text)
    history["actions"][0] = history["actions"][0][:12] + "??"  # the door card
    (tmp_path / "door.phh").write_text(phh.dumps(history), encoding="utf-8")

    status, out, err = run_replay(tmp_path / "door.phh", "--out", tmp_path / "out")

    assert status == replay.EXIT_USAGE, out + err
    assert "door.phh: the hand history cannot be played: '??' is not a card" in err


def test_stud_hands_read_back_the_same_with_rf_noise(tmp_path):
    rng = random.Random(99)
    files = []
    for number, code in enumerate(("F7S/8", "FR")):  # (the noisy reading of a hand takes ten times as long)
        files.append(tmp_path / f"noisy{number}.phh")
        files[-1].write_text(pokerkit_stud_hand(rng, code), encoding="utf-8")

    status, out, err = run_replay(*files, "--out", tmp_path / "out", "--noise", "0.05", "--seed", "1")

    assert status == 0, out + err
    assert "2 hands with RF noise 0.05: 2 reconstructed exactly, 0 differ, 0 bad input" in out
