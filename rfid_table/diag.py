"""Diagnostics for technicians: what every reader and antenna is doing, live.

The daemon collects per-antenna read rates, tags present per zone, antenna faults and the link's frame
counters, and publishes them once a second (retained) on ``<prefix>/<table>/public/diag``: counts only, no tag
identities, so it may go to anyone who may see the public feed. ``rfid-table diag`` draws them.
"""

import json
import sys
import threading
import time
from collections import Counter

from rfid_table.broker_login import LinkState, connect_viewer, refused_text
from rfid_table.config import MqttSettings
from rfid_table.contract import QOS, Topics
from rfid_table.mqtt_client import make_client


COMMAND_OUTCOMES = ("accepted", "not_allowed", "malformed", "retained", "rate_limited")


class DiagnosticsCollector:
    """Counts what the pipeline sees between two reports."""

    INTERVAL_S = 1.0

    def __init__(self) -> None:
        self._reads: Counter = Counter()  # (reader, antenna) → reads since the last report
        self._cycles: Counter = Counter()  # reader → cycles since the last report
        self._since: float | None = None
        # Totals since the start, not per interval: a refusal or a failure seen once must stay visible.
        self.commands: Counter = Counter()  # accepted, not_allowed (by the state), malformed, retained, rate_limited
        self.input_errors: Counter = Counter()  # input kind → inputs whose handling raised (skipped)
        self.last_input_error: str | None = None

    def count_command(self, outcome: str) -> None:
        self.commands[outcome] += 1

    def count_input_error(self, kind: str, error: str) -> None:
        self.input_errors[kind] += 1
        self.last_input_error = f"{kind}: {error}"

    def count_cycle(self, cycle) -> None:
        self._cycles[cycle.reader] += 1
        reads = self._reads
        for read in cycle.reads:
            reads[(cycle.reader, read.antenna)] += read.read_count

    def report(self, now: float, readers: list, tracker, controller, gpio=None, delivery: dict | None = None
               ) -> dict | None:
        """The report for the interval ending ``now``, or None before the interval is over. ``gpio``: the table's
        GPIO (``rfid_table.table_gpio.TableGpio``), whose port expanders are reported when it has any. ``delivery``:
        what the broker refused (``MqttPublisher.delivery_report``)."""
        if self._since is None:
            self._since = now
            return None
        elapsed = now - self._since
        if elapsed < self.INTERVAL_S:
            return None
        report: dict = {"t": round(now, 3), "readers": {}, "zones": {}, "unmapped_reads": tracker.unmapped_reads}
        for reader in readers:
            link = getattr(reader, "link", None)
            entry: dict = {"link": "simulated (in-process)" if link is None else link.stats.state,
                           "cycles_per_s": round(self._cycles[reader.name] / elapsed, 1),
                           "reads_per_s": {str(antenna): round(count / elapsed, 1)
                                           for (name, antenna), count in sorted(self._reads.items())
                                           if name == reader.name},
                           "faulted_antennas": sorted(getattr(reader, "faulted_antennas", ()))}
            if link is not None:
                stats = link.stats
                entry["frames"] = {"ok": stats.frames_ok, "rejected": stats.frames_rejected,
                                   "crc_errors": stats.crc_errors, "cobs_errors": stats.cobs_errors,
                                   "malformed": stats.malformed, "lost": stats.frames_lost,
                                   "duplicates": stats.duplicates, "retransmits": stats.retransmits}
                entry["reconnects"] = stats.reconnects
                entry["transport"] = stats.transport
                entry["last_error"] = stats.last_error
                if link.identity is not None:
                    entry["reader_serial"] = link.identity.serial
            report["readers"][reader.name] = entry
        report["zones"] = {zone: len(tags) for zone, tags in sorted(tracker.present().items())}
        report["hand"] = controller.hand or None
        report["commands"] = {outcome: self.commands[outcome] for outcome in COMMAND_OUTCOMES}
        report["input_errors"] = dict(sorted(self.input_errors.items()))
        report["last_input_error"] = self.last_input_error
        if delivery is not None:
            report["broker_refused"] = delivery
        expanders = gpio.pin_map.expanders if gpio is not None else ()
        if expanders:  # a seat sensor board that stops answering leaves the conduct rules blind: say so
            faults = getattr(gpio.backend, "faults", {})
            report["gpio"] = {"expanders": {e.name: f"down: {faults[e.name]}" if e.name in faults else "ok"
                                            for e in expanders}}
        self._reads.clear()
        self._cycles.clear()
        self._since = now
        return report


def render(report: dict | None, status: str) -> str:
    lines = [f"table status: {status}"]
    if report is None:
        return "\n".join(lines + ["waiting for the daemon's diagnostics …"])
    lines.append(f"hand {report.get('hand') or '-'}   reads on unassigned antennas: {report.get('unmapped_reads', 0)}")
    journal = report.get("journal") or {}
    if journal.get("state", "ok") != "ok":
        lines.append(f"JOURNAL CANNOT BE WRITTEN: {journal.get('error')}; {journal.get('waiting_events', 0)} events "
                     "wait, nothing is published until it can (free space on its disk)")
    for name, reader in report.get("readers", {}).items():
        lines.append(f"reader {name}: link {reader.get('link')}   {reader.get('transport', '')}   "
                     f"{reader.get('cycles_per_s', 0)} cycles/s   reconnects {reader.get('reconnects', 0)}")
        frames = reader.get("frames")
        if frames:
            lines.append("  frames: " + "  ".join(f"{k} {v}" for k, v in frames.items()))
        if reader.get("last_error"):
            lines.append(f"  last error: {reader['last_error']}")
        faulted = reader.get("faulted_antennas") or []
        rates = reader.get("reads_per_s", {})
        lines.append("  antenna reads/s: " + ("  ".join(f"{a}:{r:g}" for a, r in rates.items()) or "none")
                     + (f"   FAULTED: {', '.join(map(str, faulted))}" if faulted else ""))
    commands = report.get("commands")
    if commands:
        lines.append("commands: " + "  ".join(f"{outcome.replace('_', ' ')} {n}" for outcome, n in commands.items()))
    if report.get("input_errors"):
        lines.append("INPUTS SKIPPED (their handling failed): " + "  ".join(
            f"{kind} {n}" for kind, n in report["input_errors"].items()) + f"   last: {report.get('last_input_error')}")
    refused = report.get("broker_refused") or {}
    if refused.get("topics"):
        lines.append(f"BROKER REFUSES: {refused['events_waiting']} events wait undelivered   " + "  ".join(
            f"{topic}: {reason}" for topic, reason in refused["topics"].items()))
    for name, state in (report.get("gpio") or {}).get("expanders", {}).items():
        lines.append(f"GPIO expander {name}: {state}")
    lines.append("tags present: " + "  ".join(f"{zone} {n}" for zone, n in report.get("zones", {}).items() if n)
                 or "tags present: none")
    return "\n".join(lines)


def waiting_text(link: LinkState, status: str | None, subscribed: bool, topics: Topics) -> str | None:
    """What diag waits for while no report has come, or None."""
    line = link.waiting_for()
    if line:
        return line
    if not subscribed:
        return f"connected to {link.host}:{link.port}; subscribing …"
    if status == "offline":
        return f"the table {topics.base} is offline (its daemon stopped or lost the broker); waiting for it"
    return (f"waiting for the daemon's diagnostics on {topics.diagnostics}: nothing published yet. Is the table's "
            "daemon running against this broker, with this table id and topic prefix?")


def diag(settings: MqttSettings, table_id: str, plain: bool, timeout_s: float | None, out=sys.stdout,
         err=sys.stderr) -> int:
    topics = Topics.for_table(settings.topic_prefix, table_id)
    state = {"report": None, "status": None, "subscribed": False}
    link = LinkState(settings.host, settings.port)
    changed = threading.Event()
    stop = threading.Event()

    def on_message(client, userdata, message):
        if message.topic == topics.status:
            state["status"] = message.payload.decode(errors="replace")
        else:
            try:
                state["report"] = json.loads(message.payload)
            except ValueError:
                return
        changed.set()

    def on_connect(client, userdata, flags, reason_code, properties):
        if reason_code.is_failure:
            link.refused = refused_text(reason_code)
            stop.set()
        else:
            link.connected = True
            client.subscribe([(topics.status, QOS), (topics.diagnostics, QOS)])
        changed.set()

    def on_subscribe(client, userdata, mid, reason_codes, properties):
        state["subscribed"] = True
        changed.set()

    def on_disconnect(client, userdata, flags, reason_code, properties):
        link.connected = False
        if not stop.is_set():
            link.unreachable = f"lost the connection ({reason_code}); reconnecting"
        changed.set()

    client = make_client(settings, f"rfid-table-diag-{table_id}-{time.monotonic_ns() % 100000}")
    client.on_connect = on_connect
    client.on_subscribe = on_subscribe
    client.on_disconnect = on_disconnect
    client.on_message = on_message
    connect_viewer(client, settings, link, changed, stop)
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    last = None
    try:
        while not stop.is_set() and (deadline is None or time.monotonic() < deadline):
            if changed.wait(0.5):
                changed.clear()
                if stop.is_set():
                    break
                waiting = waiting_text(link, state["status"], state["subscribed"], topics)
                frame = render(state["report"], state["status"] or "unknown")
                if state["report"] is None and waiting:
                    frame = f"table status: {state['status'] or 'unknown'}\n{waiting}"
                elif waiting:
                    frame += "\n" + waiting
                if plain and frame == last:
                    continue
                last = frame
                out.write(frame + "\n\n" if plain else "\033[H\033[2J" + frame + "\n")
                out.flush()
    except KeyboardInterrupt:
        pass
    finally:
        stop.set()
        client.disconnect()
        client.loop_stop()
    return link.exit_status("diag", settings.username, err)
