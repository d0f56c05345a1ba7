"""Diagnostics for technicians: what every reader and antenna is doing, live.

The daemon collects per-antenna read rates, tags present per zone, antenna faults and the link's frame
counters (:mod:`rfid_table.service.diagnostics`), and publishes them once a second (retained) on
``<prefix>/<table>/public/diag``: counts only, no tag identities, so it may go to anyone who may see the public
feed. ``rfid-table diag`` draws them.
"""

import json
import sys
import threading
import time

from rfid_table.ops.broker_login import LinkState, connect_viewer, refused_text
from rfid_table.config.table import MqttSettings
from rfid_table.service.contract import QOS, Topics, without_controls
from rfid_table.mqtt import make_client


def render(report: dict | None, status: str) -> str:
    lines = [f"table status: {status}"]
    if report is None:
        return "\n".join(lines + ["waiting for the daemon's diagnostics …"])
    lines.append(f"hand {report.get('hand') or '-'}   reads on unassigned antennas: {report.get('unmapped_reads', 0)}")
    journal = report.get("journal") or {}
    if journal.get("state", "ok") != "ok":
        lines.append(f"JOURNAL CANNOT BE WRITTEN: {journal.get('error')}; {journal.get('waiting_events', 0)} events "
                     "wait, nothing is published until it can (free space on its disk)")
    elif "commits" in journal:
        lines.append(f"journal: {journal['commits']} commits in the last second, the slowest {journal['commit_max_ms']:g} ms"
                     + (f"   SLOW COMMITS (100 ms or more) since the start: {journal['slow_commits']}: check the disk"
                        if journal.get("slow_commits") else ""))
    for name, reader in report.get("readers", {}).items():
        pace = f"   a pass {reader['pass_ms']} ms" if reader.get("pass_ms") is not None else ""
        lines.append(f"reader {name}: link {reader.get('link')}   {reader.get('transport', '')}   "
                     f"{reader.get('cycles_per_s', 0)} cycles/s{pace}   reconnects {reader.get('reconnects', 0)}")
        if reader.get("reader_serial"):
            lines.append(f"  reader serial {reader['reader_serial']}")
        if reader.get("refused"):
            lines.append(f"  REFUSED AT THE HANDSHAKE (tried again with backoff): {reader['refused']}")
        if reader.get("delivering") is False:
            lines.append(f"  CYCLES GIVEN UP: the table does not see this reader's cards: {reader.get('last_given_up')}")
        frames = reader.get("frames")
        if frames:
            lines.append("  frames: " + "  ".join(f"{k.replace('_', ' ')} {v}" for k, v in frames.items())
                         + f"   cycles given up {reader.get('cycles_given_up', 0)}"
                         + f"   reader reboots {reader.get('reader_resets', 0)}"
                         + f"   commands failed {reader.get('commands_failed', 0)}")
        rejection = reader.get("last_rejection")
        if rejection:
            lines.append(f"  last frame rejected ({rejection.get('counter')}): {rejection.get('reason')} at byte "
                         f"{rejection.get('offset')}, {rejection.get('length')} bytes")
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
    # what comes over the network must not drive the terminal
    return "\n".join(without_controls(line) for line in lines)


def waiting_text(link: LinkState, status: str | None, subscribed: bool, topics: Topics,
                 reported: bool = False) -> str | None:
    """What diag waits for (``reported``: a report has come already, which says the rest), or None."""
    line = link.waiting_for()
    if line:
        return line
    if not subscribed:
        return f"connected to {link.host}:{link.port}; subscribing …"
    if status == "offline":
        return f"the table {topics.base} is offline (its daemon stopped or lost the broker); waiting for it"
    if reported:
        return None
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
            link.connected, link.unreachable = True, None  # a reconnection: nothing is amiss any more
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
                waiting = waiting_text(link, state["status"], state["subscribed"], topics,
                                       reported=state["report"] is not None)
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
