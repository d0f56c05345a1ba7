"""``rfid-table bench``: latency and memory of the whole chain, through a real broker.

* ``baseline_*``: a bare paho publish → broker → paho subscriber round trip, measured in the same run with
  the same pacing and payload handling — the floor no daemon can beat on this machine.
* ``e2e_*``: from a tag read entering the HAL to the matching event arriving at a subscriber, through the
  zone tracker, the controller, the publisher and the broker.
* ``rss_mb``: peak resident memory of ``rfid-table sim`` playing hands against the broker.
"""

import json
import math
import multiprocessing
import os
import subprocess
import sys
import time
from collections.abc import Callable

from rfid_table.broker import PROJECT_ROOT, PrivateBroker
from rfid_table.config import MqttSettings, load_config
from rfid_table.publisher import QOS, MqttPublisher, Topics, make_client
from rfid_table.simulate import SimOptions, SimulatedTable

E2E_SPEED = 50  # table time per wall time in the end-to-end run: a reader cycle every 1 ms of wall time
E2E_PACE_S = 0.1  # a dealer's action every 25-200 ms of table time


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _receive(settings: MqttSettings, topic: str, ready, results) -> None:
    """The subscriber, in its own process as a real one would be: stamps each message's arrival by ``seq``.

    ``time.perf_counter`` is CLOCK_MONOTONIC on Linux, shared by all processes, so stamps compare across them.
    """
    arrived: dict[int, float] = {}
    client = make_client(settings, f"rfid-table-bench-sub-{os.getpid()}")
    client.on_connect = lambda c, u, f, rc, p: c.subscribe(topic, qos=QOS)
    client.on_subscribe = lambda c, u, mid, rcs, p: ready.send(True)

    def on_message(c, u, message) -> None:
        now = time.perf_counter()
        arrived.setdefault(json.loads(message.payload)["seq"], now)

    client.on_message = on_message
    client.connect(settings.host, settings.port)
    client.loop_start()
    expected = results.recv()  # the sender says how many it sent, then we wait for them
    deadline = time.monotonic() + 30
    while len(arrived) < expected and time.monotonic() < deadline:
        time.sleep(0.01)
    client.disconnect()
    client.loop_stop()
    results.send(arrived)


class _Receiver:
    def __init__(self, settings: MqttSettings, topic: str):
        ctx = multiprocessing.get_context("spawn")
        ready_recv, ready_send = ctx.Pipe(duplex=False)
        self._results, theirs = ctx.Pipe()
        self._process = ctx.Process(target=_receive, args=(settings, topic, ready_send, theirs), daemon=True)
        self._process.start()
        if not ready_recv.poll(20):
            raise RuntimeError("the bench subscriber could not subscribe")
        ready_recv.recv()

    def collect(self, expected: int) -> dict[int, float]:
        self._results.send(expected)
        arrived = self._results.recv()
        self._process.join(5)
        return arrived


def _latencies_ms(sent: dict[int, float], arrived: dict[int, float]) -> list[float]:
    return [(arrived[seq] - t0) * 1000 for seq, t0 in sent.items() if seq in arrived]


def measure_baseline(settings: MqttSettings, send_times: list[float]) -> list[float]:
    """Bare paho round trips, one message at each of ``send_times`` (seconds from the start).

    The baseline replays the end-to-end run's timing: latency on an idle machine depends on how often messages
    come (a broker and a subscriber woken every millisecond answer faster than ones woken every ten), so both
    sides of the ratio must see the same rhythm.
    """
    topic = f"rfid-table-bench/{os.getpid()}/baseline"
    receiver = _Receiver(settings, topic)
    sender = make_client(settings, f"rfid-table-bench-pub-{os.getpid()}")
    sender.connect(settings.host, settings.port)
    sender.loop_start()
    sent: dict[int, float] = {}
    start = time.perf_counter()
    for seq, offset in enumerate(send_times, start=1):
        delay = start + offset - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        payload = json.dumps({"seq": seq, "type": "baseline"}, separators=(",", ":")).encode()
        sent[seq] = time.perf_counter()
        sender.publish(topic, payload, qos=QOS)
    arrived = receiver.collect(len(sent))
    sender.disconnect()
    sender.loop_stop()
    return _latencies_ms(sent, arrived)


def measure_end_to_end(config_path: str, settings: MqttSettings, min_events: int,
                       progress: Callable[[str], None]) -> tuple[list[float], list[float]]:
    """Latencies of ≥ ``min_events`` events, and when each was read (seconds from the start)."""
    config = load_config(config_path)
    config = type(config)(**{**config.__dict__, "mqtt": settings})
    topics = Topics.for_table(settings.topic_prefix, config.table_id)
    receiver = _Receiver(settings, topics.events(secure=False))
    publisher = MqttPublisher(settings, config.table_id, epoch="bench")
    publisher.start()
    table = SimulatedTable(config, SimOptions(hands=None, seed=1, pace_s=E2E_PACE_S, link="direct"), publisher)
    sent: dict[int, float] = {}
    # Like the daemon, the loop gives the time between reader cycles to the publisher instead of spinning;
    # table time runs E2E_SPEED times faster than real time so that 5,000 events take seconds, not hours.
    start_table = t = time.time()
    start_wall = time.monotonic()
    while len(sent) < min_events:
        table.advance(t)
        read_at = time.perf_counter()  # the cycle's tag reads enter the HAL in this step
        events = table.pipeline.step(t)
        for event in events:
            sent[event.seq] = read_at
        if events and len(sent) % 1000 < len(events):
            progress(f"  end to end: {len(sent)}/{min_events} events")
        t += table.cycle_s
        publisher.service(max(0.0, start_wall + (t - start_table) / E2E_SPEED - time.monotonic()))
    arrived = receiver.collect(len(sent))
    publisher.stop()
    first = min(sent.values())
    return _latencies_ms(sent, arrived), sorted(t0 - first for t0 in sent.values())


def measure_rss_mb(config_path: str, settings: MqttSettings, hands: int) -> float:
    """Peak RSS of the simulated table's daemon process, from the kernel's own accounting (wait4)."""
    command = [sys.executable, "-m", "rfid_table.cli", "--log-level", "WARNING", "sim", "--config", config_path,
               "--host", settings.host, "--port", str(settings.port), "--hands", str(hands), "--speed", "0",
               "--seed", "7", "--pace", "0.5"]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    _pid, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"the simulated table exited with {proc.returncode}")
    return usage.ru_maxrss / 1024  # kilobytes on Linux


def bench(args) -> int:
    config_path = str(PROJECT_ROOT / "config" / "table-10.toml")
    broker = None
    if args.broker:
        host, _, port = args.broker.rpartition(":")
        settings = MqttSettings(host=host or "127.0.0.1", port=int(port))
    else:
        broker = PrivateBroker().start()
        settings = MqttSettings(host=broker.host, port=broker.port)
    progress = _progress
    try:
        progress(f"end to end: tag read → HAL → controller → publisher → broker → subscriber, ≥{args.events} events")
        e2e, send_times = measure_end_to_end(config_path, settings, args.events, progress)
        progress(f"baseline: {len(send_times)} bare publish → broker → subscriber round trips, same timing")
        baseline = measure_baseline(settings, send_times)
        progress(f"memory: rfid-table sim playing {args.rss_hands} hands over the emulated reader link")
        rss = measure_rss_mb(config_path, settings, args.rss_hands)
    finally:
        if broker is not None:
            broker.stop()
    result = {
        "e2e_events": len(e2e),
        "e2e_p50_ms": round(percentile(e2e, 50), 3),
        "e2e_p99_ms": round(percentile(e2e, 99), 3),
        "baseline_messages": len(baseline),
        "baseline_p50_ms": round(percentile(baseline, 50), 3),
        "baseline_p99_ms": round(percentile(baseline, 99), 3),
        "rss_mb": round(rss, 1),
    }
    result["e2e_p99_over_baseline_p99"] = round(result["e2e_p99_ms"] / result["baseline_p99_ms"], 2)
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:>28}  {value}")
    return 0
