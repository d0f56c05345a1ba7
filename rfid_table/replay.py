"""``rfid-table replay``: play PHH hand histories on the simulated table and write back what the table read.

Each hand history becomes physical table activity (see ``sim.replay``): cards dealt to the seat antennas, burns and
board cards, each bet pushed as chips of the table's chip set into the betting zone, bets collected into the pot,
folds to the muck. The real controller reads it through the simulated readers (with RF noise when ``--noise`` is
given) and its hand history is written to ``OUT/<same file name>``. A summary follows; the exit status is 1 if any
hand could not be reconstructed exactly, 2 for bad arguments or unreadable files.
"""

from __future__ import annotations

import argparse
import sys
import time
import tomllib
from pathlib import Path

from controller.rules import PROFILES

EXIT_DIFFERENCES, EXIT_USAGE = 1, 2


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
    exact, failed, unreadable = 0, [], []
    total = len(args.files)
    for number, name in enumerate(args.files, start=1):
        path = Path(name)
        try:
            history = phhlib.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            unreadable.append(f"{path}: cannot read: {exc.strerror}")
            continue
        except UnicodeDecodeError as exc:
            unreadable.append(f"{path}: not UTF-8 text (byte offset {exc.start})")
            continue
        except tomllib.TOMLDecodeError as exc:
            unreadable.append(f"{path}: not a PHH file: {exc}")
            continue
        missing = [key for key in ("variant", "blinds_or_straddles", "starting_stacks", "actions") if key not in history]
        if missing:
            unreadable.append(f"{path}: not a PHH hand: no {', '.join(missing)}")
            continue
        result = table.replay(history, path.name)
        if result.reconstructed_text:
            (out_dir / path.name).write_text(result.reconstructed_text, encoding="utf-8")
        if result.ok:
            exact += 1
        else:
            failed.append(f"{path}: {result.reason}")
        if total >= 50 and (number % 50 == 0 or number == total):  # a long run shows it is moving
            print(f"  {number}/{total} hands replayed", file=err, flush=True)
    elapsed = time.monotonic() - started
    for line in unreadable + failed:
        print(line, file=out)
    rate = f", {total / elapsed:.0f} hands/s" if elapsed > 0 else ""
    noise = f" with RF noise {args.noise}" if args.noise else ""
    print(f"{total} hands{noise}: {exact} reconstructed exactly, {len(failed)} differ, {len(unreadable)} unreadable"
          f" ({elapsed:.1f} s{rate}); written to {out_dir}", file=out)
    if unreadable and not exact and not failed:
        return EXIT_USAGE
    return EXIT_DIFFERENCES if failed or unreadable else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="rfid-table replay", description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
