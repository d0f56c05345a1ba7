"""``rfid-table replay``: play PHH hand histories on the simulated table and write back what the table read.

Each hand history becomes physical table activity (see ``sim.replay``): cards dealt to the seat antennas, burns and
board cards, each bet pushed as chips of the table's chip set into the betting zone, bets collected into the pot,
folds to the muck. The real controller reads it through the simulated readers (with RF noise when ``--noise`` is
given) and its hand history is written to ``OUT/<same file name>``. A summary follows. The exit status is 2 for bad
input — bad arguments, a file missing or unreadable, a hand history that cannot be played (named with its file and,
where it has one, its line) —, else 1 if any hand was read back differently from its history, else 0.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
import tomllib
from pathlib import Path

from controller.rules import PROFILES

EXIT_DIFFERENCES, EXIT_USAGE = 1, 2
FIXED_LIMIT = "FT"


def input_problem(history: dict, text: str, path: Path) -> str | None:
    """Why a hand history cannot be played, as ``FILE[:LINE]: reason``; None when it can be."""
    from controller import phh as phhlib  # noqa: PLC0415
    from sim.stud_hands import PHH_GAMES as STUD_CODES, hand_from_phh  # noqa: PLC0415

    stud = history.get("variant") in STUD_CODES  # dealt on a stud table
    needed = ("variant", "bring_in", "small_bet", "big_bet") if stud else ("variant", "blinds_or_straddles")
    missing = [key for key in (*needed, "starting_stacks", "actions") if key not in history]
    if history.get("variant") == FIXED_LIMIT:
        missing += [key for key in ("small_bet", "big_bet") if key not in history]
    if missing:
        return f"{path}: not a playable PHH hand: no {', '.join(missing)}" + (
            " (a fixed-limit hand needs small_bet and big_bet)" if history.get("variant") == FIXED_LIMIT else
            " (a stud hand needs bring_in, small_bet and big_bet)" if stud else "")
    try:
        phhlib.replay(history)
        if stud:  # the table deals every up card: none may be hidden
            hand_from_phh(history, random.Random(0))
    except (ValueError, KeyError, TypeError, IndexError) as exc:
        reason = str(exc) if not isinstance(exc, KeyError) else f"no {exc.args[0]}"
        return f"{path}{_line_of(reason, history, text)}: the hand history cannot be played: {reason}"
    return None


def _toml_line(exc: Exception, text: str) -> str:
    """``:N`` of a TOML error (the parser names it in its message; the end of the document is its last line)."""
    found = re.search(r"at line (\d+)", str(exc))
    if found:
        return f":{found.group(1)}"
    return f":{max(1, len(text.splitlines()))}" if "end of document" in str(exc) else ""


def _line_of(reason: str, history: dict, text: str) -> str:
    """``:N`` for the line of the action the reason quotes (or of the first action it names), else ''."""
    quoted = re.findall(r"'([^']+)'", reason)
    for action in quoted + [a for a in history.get("actions", []) if isinstance(a, str) and a in reason]:
        for number, line in enumerate(text.splitlines(), start=1):
            if f'"{action}"' in line or f"'{action}'" in line:
                return f":{number}"
    return ""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", metavar="IN.phh", help="hand histories (phh-std TOML, one hand each)")
    parser.add_argument("--out", required=True, metavar="DIR", help="where the reconstructed hands are written")
    parser.add_argument("--noise", type=float, default=0.0, metavar="P",
                        help="RF noise: misses, cross reads and edge placements with probability P (0 to 0.5)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the noise and of the cards a history hides")
    parser.add_argument("--rules", default="tda", choices=sorted(PROFILES), help="house rule profile (default tda)")


def run(args: argparse.Namespace, out=sys.stdout, err=sys.stderr) -> int:
    from controller import phh as phhlib  # noqa: PLC0415 (only the replay needs the simulator)
    from sim.replay import ReplayTable  # noqa: PLC0415

    if not 0.0 <= args.noise <= 0.5:
        print(f"rfid-table replay: --noise must be between 0 and 0.5, not {args.noise}", file=err)
        return EXIT_USAGE
    out_dir = Path(args.out)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        print(f"rfid-table replay: cannot create --out {out_dir}: {exc.strerror}", file=err)
        return EXIT_USAGE
    table = ReplayTable(noise=args.noise, seed=args.seed, rules=args.rules)
    started = time.monotonic()
    exact, failed, bad_input = 0, [], []
    total = len(args.files)
    for number, name in enumerate(args.files, start=1):
        path = Path(name)
        try:
            text = path.read_text(encoding="utf-8")
            history = phhlib.loads(text)
        except OSError as exc:
            bad_input.append(f"{path}: cannot read: {exc.strerror}")
            continue
        except UnicodeDecodeError as exc:
            bad_input.append(f"{path}: not UTF-8 text (byte offset {exc.start})")
            continue
        except tomllib.TOMLDecodeError as exc:
            bad_input.append(f"{path}{_toml_line(exc, text)}: not a PHH file: {exc}")
            continue
        problem = input_problem(history, text, path)
        if problem:
            bad_input.append(problem)
            continue
        result = table.replay(history, path.name)
        if result.reconstructed_text:
            (out_dir / path.name).write_text(result.reconstructed_text, encoding="utf-8")
        if result.ok:
            exact += 1
        else:
            failed.append(f"{path}: read back differently: {result.reason}")
        if total >= 50 and (number % 50 == 0 or number == total):  # a long run shows it is moving
            print(f"  {number}/{total} hands replayed", file=err, flush=True)
    elapsed = time.monotonic() - started
    for line in bad_input:
        print(line, file=err)
    for line in failed:
        print(line, file=out)
    played = exact + len(failed)
    noise = f" with RF noise {args.noise}" if args.noise else ""
    summary = f"{total} hands{noise}: {exact} reconstructed exactly, {len(failed)} differ, {len(bad_input)} bad input"
    if played:
        rate = f", {played / elapsed:.0f} hands/s" if elapsed > 0 else ""
        summary += f" ({elapsed:.1f} s{rate}); written to {out_dir}"
    print(summary, file=out)
    if bad_input:
        return EXIT_USAGE
    return EXIT_DIFFERENCES if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="rfid-table replay", description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
