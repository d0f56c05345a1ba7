"""``rfid-table soak``: the checker's verdicts on made-up feeds, and a 12-second soak of 3 tables end to end."""

import gc
import json
import os
import signal
import subprocess
import sys
import time
import warnings

import pytest

from rfid_table.devtools import soak
from rfid_table.devtools.soak_checker import Checker
from rfid_table.devtools.soak_report import REPORT_FIELDS

PREFIX = "rfid-table"


def _feed(checker: Checker, table: str, events: list[dict], feeds=("secure", "public"), epoch: str = "e1") -> None:
    for event in events:
        for feed in feeds:
            body = {"epoch": epoch, "hand": event.get("hand", 1), "t": event.get("t", 1000.0 + event["seq"]),
                    **event}
            if feed == "public":  # the public copy is the secure one without its secrets
                body.pop("card", None)
            checker.on_message(f"{PREFIX}/{table}/{feed}/events", json.dumps(body).encode(), False)


def _hand(first_seq: int, hand: int) -> list[dict]:
    return [{"seq": first_seq, "type": "hand_started", "hand": hand},
            {"seq": first_seq + 1, "type": "card_dealt", "hand": hand, "seat": 1, "card": "As"},
            {"seq": first_seq + 2, "type": "hand_ended", "hand": hand}]


def _result(checker: Checker, tails=None) -> dict:
    return checker.result(tails or {}, (0.0, time.time() + 1))["tables"]


def test_a_complete_stream_passes():
    checker = Checker(PREFIX, {"soak-00": 1}, speed=5)
    _feed(checker, "soak-00", _hand(1, 1) + _hand(4, 2) + [{"seq": 7, "type": "hand_started", "hand": 3}])
    table = _result(checker)["soak-00"]
    assert table["events"] == 7
    assert table["lost_events"] == table["duplicates"] == table["feed_mismatches"] == 0
    assert table["unended_hands"] == []  # hand 3 was still running when the table stopped
    assert table["hands_completed"] == 2


def test_a_gap_on_one_feed_is_a_loss():
    checker = Checker(PREFIX, {"soak-00": 1}, speed=5)
    events = _hand(1, 1) + _hand(4, 2)
    _feed(checker, "soak-00", events, feeds=("secure",))
    _feed(checker, "soak-00", [e for e in events if e["seq"] != 5], feeds=("public",))
    table = _result(checker)["soak-00"]
    assert (table["lost_events"], table["lost_public"], table["lost_secure"]) == (1, 1, 0)
    assert table["first_missing"] == [5]


def test_a_missing_start_and_a_missing_tail_are_losses():
    checker = Checker(PREFIX, {"soak-00": 1}, speed=5)
    _feed(checker, "soak-00", _hand(1, 1)[1:])  # seq 1 never came
    assert _result(checker)["soak-00"]["first_missing"] == [1]
    checker = Checker(PREFIX, {"soak-00": 1}, speed=5)
    _feed(checker, "soak-00", _hand(1, 1))
    # the journal says the table published up to seq 5: 4 and 5 never arrived on either feed
    table = _result(checker, tails={"soak-00": 5})["soak-00"]
    assert (table["lost_events"], table["lost_public"], table["lost_secure"]) == (2, 2, 2)


def test_duplicates_are_counted_not_lost():
    checker = Checker(PREFIX, {"soak-00": 1}, speed=5)
    events = _hand(1, 1)
    _feed(checker, "soak-00", events)
    _feed(checker, "soak-00", events[1:2])  # at least once: a redelivery
    table = _result(checker)["soak-00"]
    assert table["duplicates"] == 2 and table["lost_events"] == 0 and table["events"] == 3


def test_feeds_that_differ_are_reported():
    checker = Checker(PREFIX, {"soak-00": 1}, speed=5)
    _feed(checker, "soak-00", [{"seq": 1, "type": "hand_started"}], feeds=("secure",))
    _feed(checker, "soak-00", [{"seq": 1, "type": "hand_ended"}], feeds=("public",))
    assert _result(checker)["soak-00"]["feed_mismatches"] == 1


def test_a_hand_without_its_end_is_reported():
    checker = Checker(PREFIX, {"soak-00": 1}, speed=5)
    _feed(checker, "soak-00", _hand(1, 1)[:2] + _hand(4, 2))  # hand 1 never ended, hand 2 did
    assert _result(checker)["soak-00"]["unended_hands"] == [1]


def test_a_journal_restart_starts_where_the_broker_had_acknowledged():
    checker = Checker(PREFIX, {"soak-00": 11}, speed=5)  # seqs up to 10 were delivered in an earlier run
    _feed(checker, "soak-00", [{"seq": 11, "type": "hand_ended", "hand": 4}] + _hand(12, 5))
    table = _result(checker, tails={"soak-00": 14})["soak-00"]
    assert table["lost_events"] == 0 and table["unended_hands"] == []


def test_the_table_clock_falling_behind_is_measured():
    checker = Checker(PREFIX, {"soak-00": 1}, speed=5)
    checker.on_message(f"{PREFIX}/soak-00/secure/events",
                       json.dumps({"seq": 1, "type": "x", "t": 1000.0, "hand": None, "epoch": "e"}).encode(), False)
    table = checker.tables["soak-00"]
    table.arr_first -= 10.0  # the first event came 10 s ago; 25 s of table time have passed since: 2.5x of 5x
    checker.on_message(f"{PREFIX}/soak-00/secure/events",
                       json.dumps({"seq": 2, "type": "x", "t": 1025.0, "hand": None, "epoch": "e"}).encode(), False)
    result = _result(checker)["soak-00"]
    assert result["achieved_speed"] == pytest.approx(2.5, rel=0.01)
    assert result["behind_s"] == pytest.approx(5.0, abs=0.1)


def test_configs_get_distinct_table_ids(tmp_path):
    made = soak.make_configs(12, tmp_path, list(soak.TEMPLATES))
    assert [table_id for table_id, _ in made] == [f"soak-{i:02d}" for i in range(12)]
    from rfid_table.config.table import load_config

    assert {load_config(path).seats for _, path in made} == {6, 10}


@pytest.mark.slow
def test_soak_of_three_tables_for_twelve_seconds_loses_nothing(capsys, tmp_path):
    started = time.monotonic()
    status = soak.main(["--tables", "3", "--minutes", "0.2", "--json", "--journal-dir", str(tmp_path)])
    report = json.loads(capsys.readouterr().out)
    assert status == 0, report["problems"]
    assert set(REPORT_FIELDS) <= report.keys()
    assert report["ok"] is True
    assert report["tables"] == report["tables_online"] == report["tables_offline"] == 3
    assert report["lost_events"] == report["lost_public"] == report["lost_secure"] == 0
    assert report["feed_mismatches"] == report["unended_hands"] == report["table_failures"] == 0
    assert report["tail_check"] == "journal" and report["unverified_tail_events"] == 0
    assert report["events_per_s"] > 0 and report["events_per_s_per_table"] > 0
    assert report["messages_received"] >= 2 * report["events_total"]
    assert report["hands_completed"] > 0
    assert report["duration_s"] >= 11.5
    for key in ("broker_cpu_percent", "broker_rss_peak_mb", "subscriber_cpu_percent", "tables_cpu_percent",
                "machine_cpu_percent", "broker_messages_in_per_s", "broker_kb_in_per_s"):
        assert report[key] is not None and report[key] > 0, key
    assert report["broker_rss_peak_mb"] >= report["broker_rss_end_mb"] > 0
    assert time.monotonic() - started < 30


# ---- the table processes ---------------------------------------------------------------------------------


def _table(tmp_path, script: str, niceness: int = 0) -> soak.Table:
    """A stand-in for a table's process (``script`` run by this Python), started as the soak starts its tables."""
    table = soak.Table("soak-00", tmp_path / "soak-00.toml", None, tmp_path / "soak-00.log")
    table.pid = soak._spawn_table([sys.executable, "-c", script], table.stderr, niceness)
    return table


def _wait_for_text(path, text: str, timeout_s: float = 20.0) -> str:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        written = path.read_text() if path.exists() else ""
        if text in written:
            return written
        time.sleep(0.02)
    raise AssertionError(f"{path} never said {text!r}: {written!r}")


def test_a_table_process_is_reaped_once_by_the_soak_with_its_exit_code_and_rusage(tmp_path):
    script = ("import os, sys\nsum(range(3_000_000))\n"
              "print('session', os.getsid(0) == os.getpid(), 'nice', os.nice(0), file=sys.stderr)\nsys.exit(3)")
    gc.collect()  # what earlier tests of this worker left unclosed is not this test's
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = _table(tmp_path, script, niceness=5)
        assert soak._reap(table, block=True)
        gc.collect()  # nothing of the table's process is left to wait for it again
    assert [str(w.message) for w in caught] == []
    assert table.exit_code == 3 and table.exited is not None
    assert table.cpu_s > 0 and table.maxrss_kb > 0  # the table's own rusage, from os.wait4
    assert table.stderr.read_text().split() == ["session", "True", "nice", str(min(19, os.nice(0) + 5))]
    with pytest.raises(ChildProcessError):
        os.waitpid(table.pid, os.WNOHANG)  # reaped: the pid is no longer a child of the soak
    assert soak._reap(table, block=True) and table.exit_code == 3  # asked again: the record answers
    assert soak._stop_tables([table], timeout_s=0.1) == []  # an exited table is not signalled


def test_a_table_that_ignores_sigterm_is_killed_and_reaped(tmp_path):
    table = _table(tmp_path, "import signal, sys, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                             "print('ready', file=sys.stderr, flush=True)\ntime.sleep(600)")
    _wait_for_text(table.stderr, "ready")
    problems = soak._stop_tables([table], timeout_s=1.0)
    assert problems == ["soak-00 did not stop within 1 s of SIGTERM; killed"]
    assert table.exit_code == -signal.SIGKILL and table.exited is not None


def test_the_tables_get_sigterm_when_the_soak_itself_dies(tmp_path):
    table_log = tmp_path / "table.log"
    table_script = ("import signal, sys, time\n"
                    "signal.signal(signal.SIGTERM, lambda *_: (print('sigterm', file=sys.stderr, flush=True),"
                    " sys.exit(0)))\n"
                    "print('ready', file=sys.stderr, flush=True)\ntime.sleep(600)")
    soak_script = (f"import os, sys, time\nfrom pathlib import Path\nfrom rfid_table.devtools import soak\n"
                   f"log = Path({str(table_log)!r})\n"
                   f"soak._spawn_table([sys.executable, '-c', {table_script!r}], log, 0)\n"
                   "while 'ready' not in (log.read_text() if log.exists() else ''):\n    time.sleep(0.02)\n"
                   "os._exit(0)  # killed before it could stop its tables\n")
    subprocess.run([sys.executable, "-c", soak_script], check=True, timeout=60)
    assert _wait_for_text(table_log, "sigterm").split() == ["ready", "sigterm"]
