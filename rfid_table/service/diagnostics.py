"""What the daemon counts for the diagnostics report: per-antenna read rates, tags present per zone, antenna
faults, the links' frame counters, commands and inputs refused.

The pipeline publishes the report once a second (retained) on ``<prefix>/<table>/public/diag``; ``rfid-table
diag`` (:mod:`rfid_table.ops.diag`) draws it.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from rfid_table.service.contract import without_controls

if TYPE_CHECKING:
    from controller.game import GameController
    from hal.events import InventoryCycle
    from hal.reader_backend import ReaderBackend
    from hal.zones import ZoneTracker
    from rfid_table.service.table_gpio import TableGpio


COMMAND_OUTCOMES = ("accepted", "not_allowed", "malformed", "retained", "rate_limited")


class DiagnosticsCollector:
    """Counts what the pipeline sees between two reports."""

    INTERVAL_S = 1.0

    def __init__(self) -> None:
        self._reads: Counter = Counter()  # (reader, antenna) → reads since the last report
        self._cycles: Counter = Counter()  # reader → cycles since the last report
        self._since: float | None = None
        # reader → (time of its latest cycle, the time between its two latest): a reader whose pass takes longer
        # than a report's interval shows its pass here, where its cycles per second read 0
        self._passes: dict[str, tuple[float, float | None]] = {}
        # Totals since the start, not per interval: a refusal or a failure seen once must stay visible.
        self.commands: Counter = Counter()  # accepted, not_allowed (by the state), malformed, retained, rate_limited
        self.input_errors: Counter = Counter()  # input kind → inputs whose handling raised (skipped)
        self.last_input_error: str | None = None

    def count_command(self, outcome: str) -> None:
        self.commands[outcome] += 1

    def count_input_error(self, kind: str, error: str) -> None:
        self.input_errors[kind] += 1
        self.last_input_error = f"{kind}: {error}"

    def count_cycle(self, cycle: InventoryCycle) -> None:
        self._cycles[cycle.reader] += 1
        last = self._passes.get(cycle.reader)
        self._passes[cycle.reader] = (cycle.t, cycle.t - last[0] if last is not None else None)
        reads = self._reads
        for read in cycle.reads:
            reads[(cycle.reader, read.antenna)] += read.read_count

    def report(self, now: float, readers: list[ReaderBackend], tracker: ZoneTracker, controller: GameController,
               gpio: TableGpio | None = None, delivery: dict | None = None) -> dict | None:
        """The report for the interval ending ``now``, or None before the interval is over. ``gpio``: the table's
        GPIO (``rfid_table.service.table_gpio.TableGpio``), whose port expanders are reported when it has any. ``delivery``:
        what the broker refused (``MqttPublisher.delivery_report``)."""
        if self._since is None:
            self._since = now
            return None
        elapsed = now - self._since
        if elapsed < self.INTERVAL_S:
            return None
        report: dict = {"t": round(now, 3), "readers": {}, "zones": {}, "unmapped_reads": tracker.unmapped_reads}
        for reader in readers:
            link = reader.link
            entry: dict = {"link": reader.link_state,
                           "cycles_per_s": round(self._cycles[reader.name] / elapsed, 1),
                           "reads_per_s": {str(antenna): round(count / elapsed, 1)
                                           for (name, antenna), count in sorted(self._reads.items())
                                           if name == reader.name},
                           "faulted_antennas": sorted(reader.faulted_antennas)}
            last_pass = self._passes.get(reader.name, (0.0, None))[1]
            if last_pass is not None:
                entry["pass_ms"] = round(last_pass * 1000)
            if link is not None:
                stats = link.stats
                entry["frames"] = {"ok": stats.frames_ok, "rejected": stats.frames_rejected,
                                   "crc_errors": stats.crc_errors, "cobs_errors": stats.cobs_errors,
                                   "oversize": stats.oversize, "runts": stats.runts, "malformed": stats.malformed,
                                   "unknown_type": stats.unknown_type, "bytes_discarded": stats.bytes_discarded,
                                   "lost": stats.frames_lost, "duplicates": stats.duplicates,
                                   "retransmits": stats.retransmits, "stale_replies": stats.stale_replies}
                rejection = stats.last_rejection
                entry["last_rejection"] = None if rejection is None else {
                    "counter": rejection.counter, "reason": without_controls(rejection.reason),
                    "offset": rejection.stream_offset, "length": rejection.encoded_length}
                entry["reconnects"] = stats.reconnects
                entry["reader_resets"] = stats.reader_resets
                entry["commands_failed"] = stats.commands_failed
                entry["transport"] = without_controls(stats.transport)
                entry["last_error"] = None if stats.last_error is None else without_controls(stats.last_error)
                entry["refused"] = None if stats.refused is None else without_controls(stats.refused)
                entry["cycles_given_up"] = reader.cycles_given_up
                entry["last_given_up"] = reader.last_given_up
                entry["delivering"] = reader.delivering
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
        if gpio is not None and gpio.pin_map.expanders:
            # a seat sensor board that stops answering leaves the conduct rules blind: say so
            expanders = gpio.pin_map.expanders
            faults = gpio.expander_faults()
            report["gpio"] = {"expanders": {e.name: f"down: {faults[e.name]}" if e.name in faults else "ok"
                                            for e in expanders}}
        self._reads.clear()
        self._cycles.clear()
        self._since = now
        return report
