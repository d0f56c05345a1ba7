"""``rfid-table demo``: a private broker, the simulated table and the live view in one terminal.

However the demo ends (Ctrl-C, SIGTERM, SIGHUP from a closed terminal or a lost SSH session, the hands played,
the simulated table stopping on its own, an error), it stops its broker and its simulated table and removes their
temporary files. Only the simulated table's log stays, named at the start and at the end.
"""

import _thread
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from controller.rotation import HORSE
from rfid_table.ops.broker import BrokerError, PrivateBroker
from rfid_table.config.checker import ConfigError, parse_toml
from rfid_table.config.table import EX_CONFIG, STUD_VARIANTS, VARIANTS, MqttSettings, load_config
from rfid_table.ops.watch import watch
from rfid_table.package_data import CONFIG_DIR

# Chances per seat and hand, as at a live ten-seat game dealing about 30 hands an hour: a phone comes out about three
# times an hour at the table (3 / 30 hands / 10 seats), and each player steps away about every hour and a half.
DEMO_DEVICES_PER_HAND = 0.01
DEMO_ABSENCES_PER_HAND = 0.02
DEMO_FLOOR_ANSWER_S = 6.0  # the floor comes to the table and confirms what waits for it
DEMO_DELAY_S = 20  # the broadcast delay (table seconds): the overlay comes alive within a minute
LAST_HAND_SHOWN_S = 10.0  # once the simulated table has played its hands, the live view's time to show the last
ENDING_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
# A stud table in the demo seats six: with seven or eight players the deck can run short on seventh street, and the
# equity cannot weigh a community card still to come.
DEMO_STUD_PLAYERS = 6


class GameError(ValueError):
    """A ``--game`` that names no game the table can deal."""


def demo_games(game: str) -> tuple[str, ...]:
    """``--game``: one game (``stud``), ``horse``, or games dealt in turn (``nlhe,plo4``). Raises GameError naming
    what is wrong."""
    games = HORSE if game == "horse" else tuple(g.strip() for g in game.split(",") if g.strip())
    unknown = [g for g in games if g not in VARIANTS]
    if not games or unknown:
        raise GameError(f"--game {game!r}: {', '.join(unknown) or 'no game'} is not a game; one of "
                        f"{', '.join(VARIANTS)}, 'horse', or several of them separated by commas")
    return games


def demo_table(games: tuple[str, ...]) -> Path:
    """The example table that deals ``games`` reading the cards and the chips: the chips table for the flop games,
    the stud chips table for one stud game, the HORSE chips table (the stud games' own stakes) for a rotation with a
    stud game."""
    if not any(g in STUD_VARIANTS for g in games):
        return CONFIG_DIR / "table-chips.toml"
    return CONFIG_DIR / ("table-stud-chips.toml" if len(games) == 1 else "table-horse-chips.toml")


def table_with_games(base: Path, games: tuple[str, ...], work: Path) -> Path:
    """A copy of the table configuration ``base`` in ``work`` that deals ``games`` (its [game] variant, and a
    rotation for several; the stakes of a game it does not deal left out), with its chip registry beside it, as
    ``rfid-table sim`` reads it."""
    text = base.read_text(encoding="utf-8")
    for dropped in re.findall(r"(?m)^\[game\.stakes\.(\w+)\]", text):
        if dropped not in games or len(games) == 1:  # (a game alone is played at [game]'s stakes)
            text = re.sub(rf"(?ms)^\[game\.stakes\.{dropped}\][^\n]*\n.*?(?=^\[|\Z)", "", text)
    section = re.search(r"(?m)^\[game\][^\n]*\n", text)
    if section is None:
        raise GameError(f"{base} has no [game] section to deal {', '.join(games)} in")
    body_start = section.end()
    next_section = re.search(r"(?m)^\[", text[body_start:])
    body_end = body_start + next_section.start() if next_section else len(text)
    body = re.sub(r"(?m)^(variant|rotation|hands_per_game|change)\s*=.*\n", "", text[body_start:body_end])
    chosen = f'variant = "{games[0]}"\n'
    if len(games) > 1:
        chosen += "rotation = [" + ", ".join(f'"{g}"' for g in games) + "]\n"
    copy = work / base.name
    copy.write_text(text[:body_start] + chosen + body + text[body_end:], encoding="utf-8")
    registry = parse_toml(str(base), text).get("chips", {}).get("registry")
    if isinstance(registry, str) and not Path(registry).is_absolute() and (base.parent / registry).is_file():
        shutil.copy(base.parent / registry, work / registry)  # (a relative path is read from the file's directory)
    return copy


class Ending:
    """What ends the demo. SIGTERM and SIGHUP end the live view as Ctrl-C does (KeyboardInterrupt in the main
    thread). Once the demo is stopping, a signal is only noted, so that the cleanup runs to its end; the handlers
    stay so until the process exits."""

    def __init__(self) -> None:
        self.reason: int | str | None = None  # a signal number, or "sim" (the simulated table stopped)
        self.stopping = False  # a plain attribute: setting it is no call, so no signal handler runs before it
        for sig in ENDING_SIGNALS:
            signal.signal(sig, self._on_signal)

    def _on_signal(self, signum, frame) -> None:
        if self.reason is None:
            self.reason = signum
        if not self.stopping:
            raise KeyboardInterrupt

    def end_for(self, reason: str) -> None:
        """From another thread: end the live view."""
        if self.reason is None:
            self.reason = reason
        if not self.stopping:
            _thread.interrupt_main(signal.SIGINT)  # runs _on_signal in the main thread


def _follow_sim(sim: subprocess.Popen, ending: Ending, hands: int) -> None:
    """Ends the demo when the simulated table stops: at once if it failed or was to play on, else once the live
    view has had time to show the last hand (it ends by itself when it has)."""
    status = sim.wait()
    if status == 0 and hands:
        deadline = time.monotonic() + LAST_HAND_SHOWN_S
        while not ending.stopping and time.monotonic() < deadline:
            time.sleep(0.1)
    ending.end_for("sim")


def _say(text: str, file=sys.stdout) -> None:
    try:
        print(text, file=file, flush=True)
    except OSError:  # the terminal is gone (SIGHUP): nobody to tell
        pass


def demo(config_path: str | None, hands: int, speed: float, seed: int | None, dealer_errors: float = 0.0,
         game: str | None = None) -> int:
    """``game``: the game to deal (``--game``), on the example table that deals it with its chips
    (:func:`demo_table`), or on ``config_path``."""
    games_dir: tempfile.TemporaryDirectory | None = None
    table = config_path
    try:
        games = demo_games(game) if game else ()
        if table is None:
            table = str(demo_table(games))
        config_path = table
        if games:
            games_dir = tempfile.TemporaryDirectory(prefix="rfid-table-demo-game-")
            config_path = str(table_with_games(Path(table), games, Path(games_dir.name)))
        config = load_config(config_path)
    except (GameError, ConfigError) as exc:
        if games_dir is not None:
            games_dir.cleanup()
        if isinstance(exc, GameError) or not games:
            _say(f"rfid-table demo: {exc}", sys.stderr)
        else:  # the copy that deals the game is gone: its problems by key, the table named
            _say("\n  ".join([f"rfid-table demo: {table} cannot deal {game}:",
                               *(f"{p.key}: {p.message}" for p in exc.problems)]), sys.stderr)
        return EX_CONFIG
    ending = Ending()
    broker: PrivateBroker | None = None
    sim: subprocess.Popen | None = None
    work: tempfile.TemporaryDirectory | None = None
    log: Path | None = None
    status = 0
    try:
        try:
            broker = PrivateBroker()
            broker.start()
            # A log of its own: two demos on one machine must not write into one file. It stays after the demo.
            handle, name = tempfile.mkstemp(prefix="rfid-table-demo-", suffix=".log")
            os.close(handle)
            log = Path(name)
            # The journal (the delayed feed is released from it), and the simulated table's temporary files: its
            # TMPDIR is here too, so nothing it makes outlives the demo, even if it is killed.
            work = tempfile.TemporaryDirectory(prefix="rfid-table-demo-")
            command = [sys.executable, "-m", "rfid_table.cli", "sim", "--config", config_path, "--host", broker.host,
                       "--port", str(broker.port), "--hands", str(hands), "--speed", str(speed),
                       # players now and then on the phone or away from the seat, for the conduct rules to judge
                       "--devices-per-hand", str(DEMO_DEVICES_PER_HAND),
                       "--absences-per-hand", str(DEMO_ABSENCES_PER_HAND),
                       # and a dealer who now and then exposes a card, for the rules and the floor to answer
                       "--dealer-errors", str(dealer_errors), "--floor-answers", str(DEMO_FLOOR_ANSWER_S),
                       "--journal", str(Path(work.name) / "demo.journal"), "--delay", str(DEMO_DELAY_S)]
            if seed is not None:
                command += ["--seed", str(seed)]
            if any(g in STUD_VARIANTS for g in config.game.rotation or (config.game.variant,)):
                command += ["--players", str(min(DEMO_STUD_PLAYERS, config.seats))]
            overlay = broker.overlay_url(config.table_id, speed=str(speed))
            console = broker.console_url(config.table_id, role="floor")
            print(f"private broker on {broker.host}:{broker.port}; simulated table log: {log}")
            print(f"broadcast overlay (hole cards {DEMO_DELAY_S} s of table time late; open in a browser or an OBS "
                  f"browser source):\n  {overlay}\n  public, without delay: "
                  f"{broker.overlay_url(config.table_id, mode='public')}\n"
                  "floor's console (a tablet or a browser: answer what waits for the floor, seat players, send "
                  f"commands; docs/console.md):\n  {console}", flush=True)
            # The live view covers what was printed (a terminal's alternate screen): the two addresses one opens
            # stay in its first lines, whole, and the list of events gives way on a small terminal.
            header = [f"overlay, hole cards {DEMO_DELAY_S} s late: {overlay}", f"floor's console: {console}",
                      f"MQTT broker for your own client (examples/): {broker.host} {broker.port}"]
            with open(log, "w") as log_file:
                # A session of its own: a closed terminal's SIGHUP, or Ctrl-C, reaches the demo alone, which stops
                # the table with SIGTERM (it then closes its journal and its links).
                sim = subprocess.Popen(command, stdout=log_file, stderr=subprocess.STDOUT, start_new_session=True,
                                       env={**os.environ, "TMPDIR": work.name})
            threading.Thread(target=_follow_sim, args=(sim, ending, hands), name="demo-sim", daemon=True).start()
            settings = MqttSettings(host=broker.host, port=broker.port, topic_prefix=config.mqtt.topic_prefix)
            status = watch(settings, config.table_id, secure=True, plain=False,
                           exit_after_hands=hands or None, timeout_s=None, header=header)
        except KeyboardInterrupt:  # a signal outside the live view (which takes it as its end)
            pass
        except OSError:
            if not isinstance(ending.reason, int):
                raise
            # ended by a signal: the live view could not clear the screen of a terminal that is gone (SIGHUP)
        except BrokerError as exc:
            _say(f"rfid-table demo: {exc}", sys.stderr)
            status = 1
    finally:
        ending.stopping = True
        sim_status = sim.poll() if sim is not None else None  # set if the table stopped before being asked to
        if sim is not None and sim_status is None:
            sim.terminate()
            try:
                sim.wait(10)
            except subprocess.TimeoutExpired:
                sim.kill()
                sim.wait()
        if broker is not None:
            broker.close()
        if work is not None:
            work.cleanup()
        if games_dir is not None:
            games_dir.cleanup()
    if sim_status or (sim_status == 0 and not hands):  # it failed, or stopped while it was to play on
        how = f"killed by {signal.Signals(-sim_status).name}" if sim_status < 0 else f"exit status {sim_status}"
        _say(f"rfid-table demo: the simulated table stopped ({how}); see its log", sys.stderr)
        status = status or 1
    if log is not None:
        _say(f"demo stopped; the simulated table's log is in {log}")
    if ending.reason in (signal.SIGTERM, signal.SIGHUP):
        return 128 + ending.reason  # as a shell reports a command ended by that signal
    return status
