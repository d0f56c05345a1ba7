"""Seeded tables' event streams, written whole, to show that a change of the code left the table's behaviour alone.

Run it before and after a change that should alter nothing a subscriber sees, and compare::

    python -m rfid_table.devtools.streams --out /tmp/before      # on the old code
    python -m rfid_table.devtools.streams --out /tmp/after       # on the new code
    diff -r /tmp/before /tmp/after && echo "the same, byte for byte"

Each scenario is a simulated table (in process, as fast as it goes) with a seeded dealer and players: every example
table (cards only, chips, a tournament), every house profile, with and without dealer errors, players now and then on
the phone or away, a simulated floor answering what waits for it, a run it twice now and then, every variant of the
chips table, each stud game read from the chips on the stud table, and HORSE read from the chips. Its file holds every
event as published on the secure branch (seq, type, table time, hand, public fields, secrets), one JSON line each, and
the last secure snapshot; ``digest.txt`` sums them up, one line a scenario.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from controller.rules import PROFILES
from rfid_table.config.table import ENGINE_VARIANTS, STUD_VARIANTS, TableConfig, load_config
from rfid_table.package_data import CONFIG_DIR
from rfid_table.service.sink import Sink

if TYPE_CHECKING:
    from rfid_table.devtools.simulate import SimulatedTable

HANDS = 12
SEEDS = (1, 2)


class Recorder(Sink):
    """The pipeline's sink: every event as it would be published, and the latest snapshot."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.snapshot: dict | None = None

    def publish_events(self, events) -> None:
        for e in events:
            self.lines.append(json.dumps([e.seq, e.type, round(e.t, 6), e.hand, e.public, e.secret], sort_keys=True))

    def publish_snapshots(self, public_snapshot, secure_snapshot) -> None:
        self.snapshot = secure_snapshot

    def take_acknowledged(self):
        return {}

    def take_commands(self):
        return []

    def publish_reply(self, role, user, body):
        pass

    def publish_diagnostics(self, report):
        pass

    def publish_delayed(self, events):
        return 0


def scenarios() -> list[tuple[str, str, dict, dict]]:
    """(name, configuration file, changes to its [game], simulation options) of every scenario."""
    out = []
    for file in ("table-10.toml", "table-6max.toml", "table-chips.toml", "table-tournament.toml"):
        for profile in PROFILES:
            for errors in (0.0, 0.3):
                for seed in SEEDS:
                    options = {"seed": seed, "dealer_errors": errors, "floor_answer_s": 2.0,
                               "devices_per_hand": 0.05, "absences_per_hand": 0.03}
                    if "chips" in file or "tournament" in file:
                        options["run_it_twice"] = 0.2
                    out.append((f"{file[:-5]}-{profile}-e{errors:g}-s{seed}", file, {"rules": profile}, options))
    for variant in ENGINE_VARIANTS:
        if variant != "nlhe" and variant not in STUD_VARIANTS:  # (a stud game needs a stud table's zones)
            out.append((f"table-chips-{variant}-s1", "table-chips.toml", {"variant": variant},
                        {"seed": 1, "dealer_errors": 0.2, "floor_answer_s": 2.0, "players": 6}))  # a deck for all
    for variant in STUD_VARIANTS:  # the stud games read from the chips, on the stud table (eight players)
        out.append((f"table-stud-chips-{variant}-s1", "table-stud-chips.toml", {"variant": variant},
                    {"seed": 1, "floor_answer_s": 2.0}))
    # HORSE read from the chips, each game at its own stakes, two hands a game: every game change, the button frozen
    # through the stud round (TDA 4) and the flop games starting from it again
    out.append(("table-horse-chips-s1", "table-horse-chips.toml", {"hands_per_game": 2},
                {"seed": 1, "floor_answer_s": 2.0, "players": 6}))
    return out


def play(file: str, game: dict, options: dict, hands: int) -> Recorder:
    """One scenario: the example table ``file`` with ``game``'s changes to its [game], played with ``options``."""
    config = load_config(CONFIG_DIR / file)
    config = dataclasses.replace(config, game=dataclasses.replace(config.game, **game))
    # the chip tables' players bet at random, as when the streams were first written: a stream compares with older ones
    recorded, _table = play_table(config, {"players_style": "random", **options}, hands)
    return recorded


def play_table(config: TableConfig, options: dict, hands: int, sink: Recorder | None = None
               ) -> tuple[Recorder, SimulatedTable]:
    """``hands`` hands of ``config``'s table, simulated with ``options`` of ``SimOptions`` (seed, dealer errors, ...)
    in process on the table clock from 1000 s, as fast as it goes: what it published (into ``sink``, a new
    ``Recorder`` by default), and the closed table (its dealer tells what it did)."""
    from rfid_table.devtools.simulate import SimOptions, SimulatedTable  # noqa: PLC0415 (the simulator, on demand)
    # no equity: its worker is a process of its own, whose results come when they come
    config = dataclasses.replace(config, broadcast_equity=False)
    sink = sink if sink is not None else Recorder()
    table = SimulatedTable(config, SimOptions(hands=hands, speed=0, pace_s=0.5, link="direct", **options), sink)
    t = 1000.0
    try:
        while table.advance(t) and t < 1000.0 + hands * 600:
            table.step(t, wall=1_790_000_000.0 + t)
            t = round(t + table.cycle_s, 6)
    finally:
        table.close()
    if table.pipeline.controller is not None:
        sink.snapshot = table.pipeline.controller.snapshot(secure=True)
    return sink, table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rfid_table.devtools.streams", description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, help="directory for the streams (made if missing)")
    parser.add_argument("--hands", type=int, default=HANDS, help=f"hands per scenario (default {HANDS})")
    parser.add_argument("--only", default="", help="only the scenarios whose name contains this")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    chosen = [s for s in scenarios() if args.only in s[0]]
    digest = []
    started = time.monotonic()
    for number, (name, file, game, options) in enumerate(chosen, start=1):
        recorded = play(file, game, options, args.hands)
        text = "\n".join(recorded.lines) + "\n" + json.dumps(recorded.snapshot, sort_keys=True) + "\n"
        (out / f"{name}.jsonl").write_text(text)
        digest.append(f"{name} {len(recorded.lines)} {hashlib.sha256(text.encode()).hexdigest()[:16]}")
        print(f"[{number}/{len(chosen)}] {digest[-1]}  ({time.monotonic() - started:.0f} s)", file=sys.stderr)
    (out / "digest.txt").write_text("\n".join(digest) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
