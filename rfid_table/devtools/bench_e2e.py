"""The end-to-end part of ``rfid-table bench``: from a tag read entering the HAL to the matching event arriving at a
subscriber in a process of its own, through the zone tracker, the controller, the publisher and a real broker
(``e2e_*``); and the floor no daemon can beat on this machine, bare paho round trips through the same broker at the
same moments (``baseline_*``).
"""

import gc
import json
import multiprocessing
import os
import time
from collections.abc import Callable

from rfid_table.service import systemd
from rfid_table.config.table import MqttSettings, load_config
from rfid_table.service.contract import QOS, Topics
from rfid_table.mqtt import make_client
from rfid_table.service.publisher import MqttPublisher
from rfid_table.devtools.simulate import SimOptions, SimulatedTable

# Table time per wall time in the end-to-end run: a reader cycle every 2.5 ms of wall time. At 50 (every 1 ms)
# the pipeline alone kept 28 % of a core busy in this process beside the broker and the subscriber on two cores, and
# its tail measured that crowding more than the chain (docs/bench.md, "The end-to-end run's pace").
E2E_SPEED = 20
E2E_PACE_S = 0.1  # a dealer's action every 25-200 ms of table time


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


def measure_baseline(settings: MqttSettings, send_times: list[float],
                     progress: Callable[[str], None] = lambda message: None) -> list[float]:
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
        if seq % 1000 == 0:
            progress(f"  baseline: {seq}/{len(send_times)} round trips")
    arrived = receiver.collect(len(sent))
    sender.disconnect()
    sender.loop_stop()
    return _latencies_ms(sent, arrived)


def measure_end_to_end(config_path: str, settings: MqttSettings, min_events: int,
                       progress: Callable[[str], None]) -> tuple[list[float], list[float]]:
    """Latencies of ≥ ``min_events`` events, and when each was read (seconds from the start)."""
    config = load_config(config_path)
    # Without the broadcast's equity: at E2E_SPEED times real time its worker would recompute after every card
    # E2E_SPEED times as often as at a table, a second process as busy as a core beside the broker and the
    # subscriber (its own cost is the equity part's); the full-table part runs it at the table's pace.
    config = type(config)(**{**config.__dict__, "mqtt": settings, "broadcast_equity": False})
    topics = Topics.for_table(settings.topic_prefix, config.table_id)
    receiver = _Receiver(settings, topics.events(secure=False))
    publisher = MqttPublisher(settings, config.table_id, epoch="bench")
    publisher.start()
    table = SimulatedTable(config, SimOptions(hands=None, seed=1, pace_s=E2E_PACE_S, link="direct",
                                              players_style="random"), publisher)  # on a chip table, as measured before
    thresholds = gc.get_threshold()
    systemd.settle_heap_for_steady_loop()  # as the daemon does once started
    sent: dict[int, float] = {}
    # Like the daemon, the loop gives the time between reader cycles to the publisher instead of spinning;
    # table time runs E2E_SPEED times faster than real time so that 5,000 events take half a minute, not hours.
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
    table.close()
    publisher.stop()
    gc.unfreeze()  # the other measurements run with the interpreter's own settings
    gc.set_threshold(*thresholds)
    first = min(sent.values())
    return _latencies_ms(sent, arrived), sorted(t0 - first for t0 in sent.values())
