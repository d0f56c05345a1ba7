"""``rfid-table room``: run the room's store (the default), check its file, export hands (docs/room.md)."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from datetime import date
from pathlib import Path

from rfid_table.config.checker import ConfigError
from rfid_table.config.table import EX_CONFIG
from rfid_table.room.config import RoomConfig

EX_USAGE = 64
EX_UNAVAILABLE = 69
EX_CANTCREAT = 73


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rfid-table room",
                                     description="the card room: every table's hands in PostgreSQL, players' "
                                                 "statistics on the broker (docs/room.md)")
    parser.add_argument("--config", help="the room's file (ROOM.toml)")
    parser.add_argument("--client-id", help="this instance's MQTT client id (default: from the room's id and the host "
                                            "name); each instance of a room needs its own")
    parser.add_argument("--retire", action="store_true",
                        help="take this client id out of the room for good: store what its session holds, leave the "
                             "share, end the session (docs/room.md, Stopping an instance for good)")
    parser.add_argument("--log-level", default="INFO", help="DEBUG, INFO, WARNING or ERROR (default INFO)")
    sub = parser.add_subparsers(dest="action")
    p = sub.add_parser("check-config", help="check a room's file: every problem with its line (exit 78 when bad)")
    p.add_argument("file")
    p = sub.add_parser("export", help="write stored hands as Open Hand History or PokerStars text")
    p.add_argument("--config", dest="export_config", required=True, help="the room's file (for its database)")
    p.add_argument("--format", required=True, choices=("ohh", "pokerstars"))
    p.add_argument("--player", help="only the hands of this player_id")
    p.add_argument("--table", help="only the hands of this table")
    p.add_argument("--day", help="only the hands that ended on this day (YYYY-MM-DD, in the room's time zone)")
    p.add_argument("--all-cards", action="store_true",
                   help="every hole card the table read, folded hands too (as confidential as the secure feed)")
    p.add_argument("--out", help="the file to write (default: standard output)")
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.action == "check-config":
        return check_room_file(args.file)
    if args.action == "export":
        return _export(args)
    if not args.config:
        print("rfid-table room: --config ROOM.toml is needed to run the room", file=sys.stderr)
        return EX_USAGE
    return _run(args)


def _load(path: str) -> RoomConfig | None:
    from rfid_table.room.config import load_room_config  # noqa: PLC0415

    try:
        return load_room_config(path)
    except ConfigError as exc:
        print(f"bad room configuration ({len(exc.problems)} problem{'s' if len(exc.problems) != 1 else ''}):",
              file=sys.stderr)
        for problem in exc.problems:
            print("  " + problem.render(exc.path), file=sys.stderr)
        return None


def check_room_file(path: str) -> int:
    """``rfid-table check-config ROOM.toml`` (and ``rfid-table room check-config``): every problem with its line."""
    config = _load(path)
    if config is None:
        return EX_CONFIG
    print(f"{path}: OK — room {config.room_id}: the tables' {config.feed} events under "
          f"{config.mqtt.topic_prefix}/ on {config.mqtt.host}:{config.mqtt.port}, shared as "
          f"{config.subscription}; hands into PostgreSQL ({config.dsn}); statistics "
          f"{'to ' + config.room_stats_topic if config.publish_stats else 'not published'}; days in {config.time_zone}")
    return 0


def _run(args: argparse.Namespace) -> int:
    from rfid_table.room.service import RoomService  # noqa: PLC0415

    config = _load(args.config)
    if config is None:
        return EX_CONFIG
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    return RoomService(config, args.client_id or config.client_id(), stop, retire=args.retire).run()


def _export(args: argparse.Namespace) -> int:
    import psycopg  # noqa: PLC0415

    from rfid_table.room.export import render_hands  # noqa: PLC0415
    from rfid_table.room.store import Store  # noqa: PLC0415

    config = _load(args.export_config)
    if config is None:
        return EX_CONFIG
    if args.day is not None:
        try:
            date.fromisoformat(args.day)
        except ValueError:
            print(f"rfid-table room export: --day {args.day!r} is no date (YYYY-MM-DD)", file=sys.stderr)
            return EX_USAGE
    try:
        with Store(config.dsn, config.time_zone) as store:
            text, count = render_hands(store.hands_for_export(args.player, args.table, args.day), args.format,
                                       args.all_cards)
    except psycopg.OperationalError as exc:
        print(f"rfid-table room export: the database cannot be read: {str(exc).strip()}", file=sys.stderr)
        return EX_UNAVAILABLE
    if args.out:
        try:
            Path(args.out).write_text(text, encoding="utf-8")
        except OSError as exc:
            print(f"rfid-table room export: cannot write {args.out}: {exc.strerror}", file=sys.stderr)
            return EX_CANTCREAT
    else:
        sys.stdout.write(text)
    print(f"{count} hand{'s' if count != 1 else ''} as {args.format}", file=sys.stderr)
    return 0
