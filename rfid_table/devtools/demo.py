"""``rfid-table demo``: a private broker, the simulated table and the live view in one terminal."""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from rfid_table.ops.broker import BrokerError, PrivateBroker
from rfid_table.config.table import MqttSettings, load_config
from rfid_table.ops.watch import watch
from rfid_table.package_data import CONFIG_DIR

DEMO_DEVICES_PER_HAND = 0.05  # chance per seat and hand
DEMO_ABSENCES_PER_HAND = 0.02
DEMO_FLOOR_ANSWER_S = 6.0  # the floor comes to the table and confirms what waits for it
DEMO_DELAY_S = 20  # the broadcast delay (table seconds): the overlay comes alive within a minute


def demo(config_path: str | None, hands: int, speed: float, seed: int | None, dealer_errors: float = 0.0) -> int:
    config_path = config_path or str(CONFIG_DIR / "table-chips.toml")
    config = load_config(config_path)
    try:
        broker = PrivateBroker().start()
    except BrokerError as exc:
        print(f"rfid-table demo: {exc}", file=sys.stderr)
        return 1
    # A log of its own: two demos on one machine must not write into one file.
    handle, name = tempfile.mkstemp(prefix="rfid-table-demo-", suffix=".log")
    os.close(handle)
    log = Path(name)
    command = [sys.executable, "-m", "rfid_table.cli", "sim", "--config", config_path, "--host", broker.host,
               "--port", str(broker.port), "--hands", str(hands), "--speed", str(speed),
               # players now and then on the phone or away from the seat, for the conduct rules to judge
               "--devices-per-hand", str(DEMO_DEVICES_PER_HAND), "--absences-per-hand", str(DEMO_ABSENCES_PER_HAND),
               # and a dealer who now and then exposes a card, for the rules and the floor to answer
               "--dealer-errors", str(dealer_errors), "--floor-answers", str(DEMO_FLOOR_ANSWER_S)]
    if seed is not None:
        command += ["--seed", str(seed)]
    journal_dir = tempfile.TemporaryDirectory(prefix="rfid-table-demo-")  # the delayed feed is released from it
    command += ["--journal", str(Path(journal_dir.name) / "demo.journal"), "--delay", str(DEMO_DELAY_S)]
    print(f"private broker on {broker.host}:{broker.port}; simulated table log: {log}")
    print(f"broadcast overlay (hole cards {DEMO_DELAY_S} s of table time late; open in a browser or an OBS browser "
          "source):\n"
          f"  {broker.overlay_url(config.table_id, speed=str(speed))}\n  public, without delay: "
          f"{broker.overlay_url(config.table_id, mode='public')}")
    with open(log, "w") as log_file:
        sim = subprocess.Popen(command, stdout=log_file, stderr=subprocess.STDOUT)
    try:
        settings = MqttSettings(host=broker.host, port=broker.port, topic_prefix=config.mqtt.topic_prefix)
        return watch(settings, config.table_id, secure=True, plain=False,
                     exit_after_hands=hands or None, timeout_s=None)
    finally:
        sim.terminate()
        try:
            sim.wait(10)
        except subprocess.TimeoutExpired:
            sim.kill()
        broker.stop()
        journal_dir.cleanup()
        print(f"demo stopped; the simulated table's log is in {log}")
