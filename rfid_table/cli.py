"""The ``rfid-table`` command: its arguments, and which part runs each subcommand.

The daemon's loop is :mod:`rfid_table.service.run`; the operator's tools are in :mod:`rfid_table.ops`, the
developer's in :mod:`rfid_table.devtools`; each is imported only when its subcommand runs.
"""

import argparse
import dataclasses
import logging
import sys
from pathlib import Path

from rfid_table.ops.broker_login import PASSWORD_ENV, PASSWORD_HELP
from rfid_table.config.table import EX_CONFIG, ConfigError, TableConfig, load_config

DEMO_DEALER_ERRORS = 0.2  # a misdeal or an exposed card every couple of minutes of the demo

NEW_JOURNAL_HELP = ("an empty file at the journal's path becomes a new journal (without it the daemon refuses an "
                    "empty journal: the hand it held is gone, and someone should know why)")

def _load_or_exit(path: str) -> TableConfig:
    try:
        return load_config(path)
    except ConfigError as exc:
        print(f"bad configuration ({len(exc.problems)} problem{'s' if len(exc.problems) != 1 else ''}):",
              file=sys.stderr)
        for problem in exc.problems:
            print("  " + problem.render(exc.path), file=sys.stderr)
        raise SystemExit(EX_CONFIG)


def _with_broker(config: TableConfig, args: argparse.Namespace) -> TableConfig:
    changes = {k: v for k, v in (("host", args.host), ("port", args.port)) if v is not None}
    return dataclasses.replace(config, mqtt=dataclasses.replace(config.mqtt, **changes)) if changes else config


def cmd_check_config(args: argparse.Namespace) -> int:
    from rfid_table.ops.register_config import config_summary  # noqa: PLC0415

    kind = _file_kind(args.file)
    if kind == "chips":
        return _check_chip_registry(args.file)
    if kind == "room":
        from rfid_table.room.cli import check_room_file  # noqa: PLC0415

        return check_room_file(args.file)
    config = _load_or_exit(args.file)
    print(config_summary(args.file, config))
    return 0


def _file_kind(path: str) -> str:
    """``chips``: a file of [sets.ID] tables only, what register-chips writes; ``room``: a room's file ([room] and
    no [table]); ``table`` otherwise. Read with the configuration's own bounded reader, so a hostile file is refused
    here as it is there."""
    from rfid_table.config.checker import parse_toml, read_config_text  # noqa: PLC0415

    try:
        doc = parse_toml(path, read_config_text(path))
    except ConfigError:
        return "table"  # the table configuration's own checks say what is wrong with it
    if doc and set(doc) == {"sets"}:
        return "chips"
    return "room" if "room" in doc and "table" not in doc else "table"


def _check_chip_registry(path: str) -> int:
    from rfid_table.config.registry import load_chip_registry  # noqa: PLC0415

    how = (f"a table uses it with [chips] registry = \"{Path(path).name}\" and active_set = \"ID\"; "
           "'rfid-table check-config TABLE.toml' checks it together with that table's decks")
    try:
        registry = load_chip_registry(path)
    except ConfigError as exc:
        print(f"{path}: a chip registry (not a table configuration), with {len(exc.problems)} problem"
              f"{'s' if len(exc.problems) != 1 else ''}:", file=sys.stderr)
        for problem in exc.problems:
            print("  " + problem.render(exc.path), file=sys.stderr)
        print(f"  ({how})", file=sys.stderr)
        return EX_CONFIG
    sets = ", ".join(f"{set_id} ({len(chips)} chips)" for set_id, chips in registry.sets.items())
    print(f"{path}: OK — a chip registry (not a table configuration): set(s) {sets}.\n  {how[0].upper()}{how[1:]}.")
    return 0


def cmd_sim(args: argparse.Namespace) -> int:
    from rfid_table.devtools.simulate import run_simulated  # noqa: PLC0415

    return run_simulated(_with_broker(_load_or_exit(args.config), args), args)


def cmd_run(args: argparse.Namespace) -> int:
    from rfid_table.service.run import run_table  # noqa: PLC0415

    return run_table(_with_broker(_load_or_exit(args.config), args), args.config, args.journal, args.new_journal)


def cmd_diag(args: argparse.Namespace) -> int:
    from rfid_table.ops.diag import diag

    config = _with_broker(_load_or_exit(args.config), args)
    settings = _with_login(config.mqtt, args, "diag")
    return diag(settings, config.table_id, args.plain, args.timeout)


def _with_login(settings, args: argparse.Namespace, command: str):
    """The broker settings with the login of the command line (--username, --password-file, the environment)."""
    from rfid_table.ops.broker_login import LoginError, with_login  # noqa: PLC0415

    try:
        settings = with_login(settings, args.username, args.password_file)
    except LoginError as exc:
        print(f"rfid-table {command}: {exc}", file=sys.stderr)
        raise SystemExit(2)
    if getattr(args, "password", None) is not None:
        print(f"rfid-table {command}: --password is visible to every user of this machine (ps); use "
              f"--password-file or ${PASSWORD_ENV}", file=sys.stderr)
        settings = dataclasses.replace(settings, password=args.password)
    return settings


def cmd_watch(args: argparse.Namespace) -> int:
    from rfid_table.config.table import MqttSettings
    from rfid_table.ops.command import invocation
    from rfid_table.ops.watch import watch

    if args.config:
        config = _with_broker(_load_or_exit(args.config), args)
        settings, table_id = config.mqtt, args.table or config.table_id
    else:
        if not args.table:
            print("rfid-table watch: give --config FILE or --table ID", file=sys.stderr)
            return 2
        settings, table_id = MqttSettings(host=args.host or "localhost", port=args.port or 1883), args.table
    settings = _with_login(settings, args, "watch")
    return watch(settings, table_id, args.secure, args.plain, args.exit_after_hands, args.timeout,
                 answer_with=invocation(args))


def cmd_command(args: argparse.Namespace) -> int:
    from rfid_table.ops.command import run

    return run(args)


def cmd_demo(args: argparse.Namespace) -> int:
    from rfid_table.devtools.demo import demo

    return demo(args.config, args.hands, args.speed, args.seed, args.dealer_errors, args.game)


def cmd_bench(args: argparse.Namespace) -> int:
    from rfid_table.devtools.bench import bench

    return bench(args)


def cmd_reader_emulator(args: argparse.Namespace) -> int:
    from rfid_table.devtools.reader_emulator import run

    return run(args.kind, args.pty, args.tcp, args.tags, args.antennas)


def cmd_replay(args: argparse.Namespace) -> int:
    from rfid_table.devtools import replay  # noqa: PLC0415 (the replay loads the simulator only when asked)

    return replay.run(args)


def cmd_export(args: argparse.Namespace) -> int:
    from rfid_table.ops import export  # noqa: PLC0415

    return export.run(args)


def _registration_simulation(args: argparse.Namespace):
    """``--simulate``: the developer's tools' simulated field and technicians, for the operator's registration."""
    if not args.simulate:
        return None
    from rfid_table.devtools.register_sim import SimulatedRegistration  # noqa: PLC0415 (only when asked)

    return SimulatedRegistration


def cmd_register_deck(args: argparse.Namespace) -> int:
    from rfid_table.ops.register import register_deck_command

    return register_deck_command(args, _registration_simulation(args))


def cmd_register_chips(args: argparse.Namespace) -> int:
    from rfid_table.ops.register import register_chips_command

    return register_chips_command(args, _registration_simulation(args))


def package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version  # noqa: PLC0415

    try:
        return version("rfid-table")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "(not installed)"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rfid-table", description="RFID poker table controller")
    parser.add_argument("--log-level", default="INFO", help="DEBUG, INFO, WARNING or ERROR (default INFO)")
    parser.add_argument("--version", action="version", version=f"%(prog)s {package_version()}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("check-config", help="validate a table configuration, a chip registry or a room's file "
                                            "(exit 78 when it is bad)")
    p.add_argument("file")
    p.set_defaults(func=cmd_check_config)

    def broker_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("--host", help="broker host (overrides [mqtt] host)")
        p.add_argument("--port", type=int, help="broker port (overrides [mqtt] port)")

    def login_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("--username", help="log in to the broker as this user (overrides [mqtt] username)")
        p.add_argument("--password-file", metavar="FILE",
                       help=f"read the password from the first line of FILE (otherwise ${PASSWORD_ENV}, or the "
                            "configuration's [mqtt] password)")

    p = sub.add_parser("sim", help="run the daemon on a simulated table")
    p.add_argument("--config", required=True, help="table configuration (TOML)")
    p.add_argument("--hands", type=int, default=10, help="hands to play; 0 plays until stopped (default 10)")
    p.add_argument("--seed", type=int, default=None, help="random seed: the same seed plays the same hands")
    p.add_argument("--speed", type=float, default=1.0, help="times real time; 0 = as fast as possible (default 1)")
    p.add_argument("--pace", type=float, default=1.0, help="seconds a typical action takes (default 1)")
    p.add_argument("--players", type=int, default=None, help="occupied seats 1..N (default: every seat)")
    p.add_argument("--players-style", choices=("plausible", "random"), default="plausible",
                   help="on a chip table, how the players bet: plausible, from their cards and position (default), "
                        "or random, with many all-ins and side pots (stress runs)")
    p.add_argument("--link", choices=("pty", "direct", "firmware", "metratec", "feig", "pn5180"), default="pty",
                   help="pty: the reader firmware emulated on a pseudo-terminal, read through pyserial like real "
                        "hardware (default); direct: the HAL reads the simulated table in-process; firmware: the "
                        "real reader firmware (firmware/) in the MicroPython unix port on modelled PN5180 front "
                        "ends, on a pseudo-terminal (real time only; needs the micropython binary); metratec, "
                        "feig: an emulator of that maker's reader on a pseudo-terminal, read by the backend a table "
                        "of such readers uses (real time only); pn5180: the Pi's PN5180 backend (the firmware's "
                        "driver in process) on modelled front ends behind stand-ins for spidev and the pins (real "
                        "time only)")
    p.add_argument("--noise", type=float, default=0.0, metavar="P",
                   help="realistic RF noise: missed reads, cross reads, flicker at zone edges with probability P, "
                        "and a stack read limit (e.g. 0.05)")
    p.add_argument("--missed-read", type=float, default=None, metavar="P",
                   help="chance that a tag on an antenna is not read in a cycle (overrides the --noise mix)")
    p.add_argument("--cross-read", type=float, default=None, metavar="P",
                   help="chance that the neighbouring antenna also reads a tag, more weakly")
    p.add_argument("--flicker", type=float, default=None, metavar="P",
                   help="share of cards and chips placed at a zone edge, read only in some cycles")
    p.add_argument("--stack-limit", type=int, default=None, metavar="N",
                   help="tags one antenna reads per cycle at most (stacks are read in turns)")
    p.add_argument("--faults", type=float, default=0.0, metavar="PER_MINUTE",
                   help="inject link faults (bit flips, dropped, duplicated, truncated frames, garbage) at this rate")
    p.add_argument("--journal", default=None, help="SQLite journal: every event is stored before it is published, "
                                                    "and a restart continues the hand from it")
    p.add_argument("--new-journal", action="store_true", help=NEW_JOURNAL_HELP)
    p.add_argument("--delay", type=float, default=None, metavar="S",
                   help="the broadcast delay in seconds, instead of [broadcast] delay_s (needs --journal)")
    p.add_argument("--devices-per-hour", type=float, default=0.0, metavar="R",
                   help="seat sensors on the simulated GPIO: a player uses an electronic device R times per hour "
                        "(per occupied seat; the device rule of the house profile judges it)")
    p.add_argument("--devices-per-hand", type=float, default=0.0, metavar="P",
                   help="chance per seat and hand that a device is used during the hand")
    p.add_argument("--absences-per-hour", type=float, default=0.0, metavar="R",
                   help="a player leaves the seat for a while R times per hour (the presence rule judges it)")
    p.add_argument("--absences-per-hand", type=float, default=0.0, metavar="P",
                   help="chance per seat and hand that the player leaves during the hand")
    p.add_argument("--dealer-errors", type=float, default=0.0, metavar="P",
                   help="chance per deal that the simulated dealer makes a dealing error: an exposed card (the first "
                        "or second one a misdeal), and on tables without chips also extra or misplaced cards and a "
                        "board turned too early (default 0)")
    p.add_argument("--run-it-twice", type=float, default=0.0, metavar="P",
                   help="on a table with chips: chance that players all-in with board cards to come agree to run it "
                        "twice (the floor's run_it; CA Actions 8; default 0)")
    p.add_argument("--floor-answers", type=float, default=None, metavar="SECONDS",
                   help="a simulated floor answers each ruling that waits for it this long after it was reported: "
                        "it confirms the dealing rulings and overrides the seat sensors' (default: nobody answers "
                        "but a floor console)")
    broker_options(p)
    p.set_defaults(func=cmd_sim)

    p = sub.add_parser("run", help="run the daemon on the table's readers")
    p.add_argument("--config", required=True)
    p.add_argument("--journal", default=None, help="journal file (default: [journal] path of the configuration)")
    p.add_argument("--new-journal", action="store_true", help=NEW_JOURNAL_HELP)
    broker_options(p)
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("diag", help="live diagnostics of a running table: links, antennas, frame counters",
                       epilog=PASSWORD_HELP)
    p.add_argument("--config", required=True, help="table configuration (TOML): the broker, the login and the "
                                                   "table id from it")
    broker_options(p)
    login_options(p)
    p.add_argument("--plain", action="store_true", help="print reports one after another (no screen redraw)")
    p.add_argument("--timeout", type=float, default=None, help="stop after this many seconds")
    p.set_defaults(func=cmd_diag)

    p = sub.add_parser("watch", help="live view of a table in the terminal", epilog=PASSWORD_HELP)
    p.add_argument("--config", help="table configuration: broker and table id from it")
    p.add_argument("--table", help="table id (default: from --config)")
    broker_options(p)
    p.add_argument("--secure", action="store_true", help="also show hole cards, where the credentials allow")
    login_options(p)
    p.add_argument("--password", help="the password on the command line, where ps shows it to every user of the "
                                      "machine: prefer --password-file or $RFID_TABLE_PASSWORD")
    p.add_argument("--plain", action="store_true", help="print frames one after another (no screen redraw)")
    p.add_argument("--exit-after-hands", type=int, default=None, help="stop after this many hands ended")
    p.add_argument("--timeout", type=float, default=None, help="stop after this many seconds")
    p.set_defaults(func=cmd_watch)

    p = sub.add_parser("command", help="send the table one command, print its reply (exit 0 accepted, 1 refused)")
    from rfid_table.ops.command import add_arguments as command_arguments  # noqa: PLC0415

    command_arguments(p)
    p.set_defaults(func=cmd_command)

    p = sub.add_parser("demo", help="private broker + simulated table + live view, in one terminal")
    p.add_argument("--config", default=None, help="table configuration (default: config/table-chips.toml)")
    p.add_argument("--hands", type=int, default=0, help="hands to play; 0 plays until Ctrl-C (default)")
    p.add_argument("--speed", type=float, default=2.0, help="times real time (default 2)")
    p.add_argument("--seed", type=int, default=None,
                   help="random seed of the simulated table: the same seed plays the same hands (default: random)")
    p.add_argument("--dealer-errors", type=float, default=DEMO_DEALER_ERRORS, metavar="P",
                   help=f"chance per deal that the simulated dealer makes a dealing error (default {DEMO_DEALER_ERRORS})")
    p.add_argument("--game", default=None, metavar="GAME",
                   help="the game to deal: one (stud, razz, plo4 ...), horse, or several in turn (nlhe,plo4); a stud "
                        "game on the example stud table (default: the configuration's)")
    p.set_defaults(func=cmd_demo)

    def registration_options(p: argparse.ArgumentParser, what: str) -> None:
        p.add_argument("--zone", help=f"read the {what} on this zone's antenna (e.g. muck)")
        p.add_argument("--reader", help="the reader of the registration antenna (default: the table's only reader)")
        p.add_argument("--antenna", type=int, help="the registration antenna's number on that reader")
        p.add_argument("--simulate", action="store_true",
                       help=f"for a reader with backend \"sim\": a virtual technician places new {what}")
        p.add_argument("--pace", type=float, default=0.3,
                       help="--simulate: seconds between the virtual technician's moves; 0 = as fast as possible")
        p.add_argument("--seed", type=int, default=None, help="--simulate: the same seed makes the same tags")

    p = sub.add_parser("register-deck", help="register a deck's 52 card tags into a table configuration, one "
                                             "card at a time on a reader antenna, or as a stack checked against the "
                                             "deck maker's list (see docs/registration.md)")
    p.add_argument("config", help="table configuration (TOML): the deck is written into it, the rest kept as is")
    p.add_argument("--deck", required=True, help="deck id, e.g. B: written as [decks.B]")
    p.add_argument("--replace", action="store_true", help="register a deck of that id again, replacing it")
    p.add_argument("--registry", default=None, help="chip registry (TOML): refuse tags registered as chips too")
    p.add_argument("--from-file", default=None, metavar="LIST",
                   help="the deck maker's list of UID,card (CSV or TOML): place the deck as a stack, in any order; "
                        "it is written once every listed tag has been read")
    registration_options(p, "cards")
    p.set_defaults(func=cmd_register_deck)

    p = sub.add_parser("register-chips", help="register chip tags with their denomination into a chip registry, "
                                              "from a reader antenna or a manufacturer's list")
    p.add_argument("registry", help="chip registry (TOML); made if it does not exist")
    p.add_argument("--set", required=True, help="chip set id, e.g. main: written as [sets.main]")
    p.add_argument("--denomination", type=int, default=None,
                   help="value of the chips about to be placed (with --from-file: of rows without one)")
    p.add_argument("--count", type=int, default=None,
                   help="stop after this many new chips (otherwise type 'done' and Enter)")
    p.add_argument("--config", default=None,
                   help="table configuration: its readers, and its decks (a card's tag is refused)")
    p.add_argument("--from-file", default=None, metavar="FILE",
                   help="import a list instead of reading tags: CSV rows of UID,denomination, or TOML UID = value")
    registration_options(p, "chips")
    p.set_defaults(func=cmd_register_chips)

    p = sub.add_parser("replay", help="play PHH hand histories on the simulated table and write what it read")
    from rfid_table.devtools.replay import add_arguments as replay_arguments  # noqa: PLC0415

    replay_arguments(p)
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser("export", help="write a journal's hands as Open Hand History or PokerStars-style text")
    from rfid_table.ops.export import add_arguments as export_arguments  # noqa: PLC0415

    export_arguments(p)
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("broker-setup", add_help=False,
                       help="make the card room's Mosquitto users, ACL and TLS files (see docs/broker.md)")
    p.add_argument("options", nargs=argparse.REMAINDER, help="see rfid-table broker-setup --help")

    p = sub.add_parser("room", add_help=False,
                       help="the card room: every table's hands in PostgreSQL, players' statistics (see docs/room.md)")
    p.add_argument("options", nargs=argparse.REMAINDER, help="see rfid-table room --help")

    p = sub.add_parser("reader-emulator", help="emulate a reader one buys (Metratec, Feig) for a client to talk to; "
                                               "prints the pty path or TCP port first")
    p.add_argument("--kind", required=True, choices=("metratec", "feig"), help="the reader's maker")
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--pty", action="store_true", help="on a pseudo-terminal, as a USB serial reader")
    where.add_argument("--tcp", type=int, metavar="PORT", help="on 127.0.0.1:PORT, as a network reader (0: a free "
                                                                "port; metratec only)")
    p.add_argument("--tags", metavar="FILE", help="TOML: [antennas] with each antenna number mapped to the tag "
                                                   "UIDs lying on it, e.g. 1 = [\"E004015000000001\"]")
    p.add_argument("--antennas", type=int, default=None, metavar="N",
                   help="antennas of the emulated reader (default: the highest in FILE, at least 4)")
    p.set_defaults(func=cmd_reader_emulator)

    p = sub.add_parser("bench", help="measure latency and memory through a real broker")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--events", type=int, default=5000, help="end-to-end events to measure (default 5000)")
    p.add_argument("--rss-hands", type=int, default=50, help="hands the memory measurement plays (default 50)")
    p.add_argument("--table-hands", type=int, default=6,
                   help="hands the full-table part deals (default 6, about 170 card events; 0 skips it)")
    p.add_argument("--journal-events", type=int, default=5000,
                   help="events of each durable-throughput run (default 5000)")
    p.add_argument("--recovery-events", type=int, default=10_000,
                   help="events journaled before the restart whose time is measured (default 10000)")
    p.add_argument("--replay-hands", type=int, default=400,
                   help="random hands the replay part reads back (default 400)")
    p.add_argument("--fsync-ms", type=float, default=5.0,
                   help="the slow disk's delay of every fsync, injected with strace (default 5, like an SD card; "
                        "0 skips the slow-disk runs and keeps the full-table part's journal on this machine's disk)")
    p.add_argument("--table-journal-dir", default=None, metavar="DIR",
                   help="keep the full-table part's journal in DIR, on that disk as it is (on a Pi: its SD card, "
                        "for example /var/lib/rfid-table); by default a RAM directory whose every fsync is "
                        "--fsync-ms late, a steady disk that other processes' writes do not stall")
    p.add_argument("--broker", default=None, help="HOST:PORT of a broker to use instead of a private one")
    p.add_argument("--reader-model", action="store_true",
                   help="also the reader firmware's figures on the modelled PN5180 (docs/hardware.md; a few minutes, "
                        "needs the micropython binary)")
    p.add_argument("--bought-readers", action="store_true",
                   help="also the readers one buys (Metratec, Feig) on their emulators: each example table's pass and "
                        "a dealt card's time to the subscriber (docs/bench.md; about a minute and a half)")
    p.add_argument("--felt", type=int, default=0, metavar="HANDS",
                   help="also HANDS hands on a full table mid-hand on the modelled PN5180: a dealt card, a bet of 1, "
                        "5 and 20 chips, a fold and the pot, from the felt to the subscriber (docs/bench.md; about "
                        "a minute a hand, needs the micropython binary; with --bought-readers also on their emulators)")
    p.set_defaults(func=cmd_bench)

    p = sub.add_parser("soak", add_help=False,
                       help="N simulated tables against one broker for M minutes: nothing may be lost; throughput, "
                            "CPU and broker memory (see docs/soak.md)")
    p.add_argument("options", nargs=argparse.REMAINDER, help="see rfid-table soak --help")
    return parser


EX_OUTPUT_CLOSED = 141  # 128 + SIGPIPE: what a shell reports for a tool whose reader went away (`| head`)


def main(argv: list[str] | None = None) -> int:
    """Run a command. When the reader of its output goes away (``rfid-table diag --plain | head``) it ends quietly
    with status 141, as a C tool killed by SIGPIPE does: a script with ``set -o pipefail`` sees the same as for any
    other tool, and a cut-short output is never reported as success."""
    try:
        try:
            return _run_command(sys.argv[1:] if argv is None else argv)
        finally:
            sys.stdout.flush()  # a reader that left is found here, not in the interpreter's last flush
    except BrokenPipeError:
        if not _output_closed():
            raise  # a pipe to another process broke: not the reader of the output
        import os  # noqa: PLC0415

        # The interpreter flushes stdout once more at exit: into nothing, so that it cannot fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EX_OUTPUT_CLOSED


def _output_closed() -> bool:
    """Whether nobody reads stdout any more (a pipe whose reader exited reports an error to poll)."""
    import select  # noqa: PLC0415

    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))
    except (OSError, ValueError):  # stdout closed or detached
        return True


def _run_command(argv: list[str]) -> int:
    if argv[:1] == ["broker-setup"]:  # its own options, its own parser
        from rfid_table.ops import broker_setup

        return broker_setup.main(argv[1:])
    if argv[:1] == ["room"]:  # its own options, its own parser
        from rfid_table.room import cli as room_cli

        return room_cli.main(argv[1:])
    if argv[:1] == ["soak"]:  # its own options, its own parser
        from rfid_table.devtools import soak

        return soak.main(argv[1:])
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
