"""The soak's report: the checking subscriber's verdict per table, the tables' rusage and the broker's and the
machine's samples made into one figure per key (:data:`REPORT_FIELDS`, in the order printed), with the problems
found; ``ok`` only when nothing was lost and every check passed.
"""

import os

from rfid_table.devtools.soak_sampler import Sampler
from rfid_table.devtools.soak_world import Table

KEEP_UP = 0.95  # a table keeps up when its table clock ran at least this share of --speed
CLK_TCK = os.sysconf("SC_CLK_TCK")

# Every key of the report, in the order printed (tests/test_soak.py checks them all).
REPORT_FIELDS = (
    "ok", "tables", "link", "speed", "seed", "duration_s", "wall_s", "broker_queue_limit",
    "events_total", "events_in_window", "events_per_s", "events_per_s_per_table", "hands_completed",
    "messages_received", "subscriber_messages_per_s",
    "broker_messages_in_per_s", "broker_messages_out_per_s", "broker_kb_in_per_s", "broker_kb_out_per_s",
    "broker_dropped",
    "lost_events", "lost_public", "lost_secure", "duplicates", "out_of_order", "feed_mismatches",
    "unended_hands", "epoch_changes", "tail_check", "unverified_tail_events",
    "tables_online", "tables_offline", "table_failures",
    "achieved_speed_min", "achieved_speed_mean", "behind_s_max", "kept_up",
    "tables_cpu_percent", "table_cpu_percent_mean", "table_cpu_percent_max", "table_rss_mb_max",
    "broker_cpu_percent", "broker_rss_start_mb", "broker_rss_end_mb", "broker_rss_peak_mb",
    "subscriber_cpu_percent", "machine_cpu_percent", "cores", "problems",
)


def _rate(samples: list[tuple[float, int]], start: float, end: float) -> float | None:
    """Per second of a cumulative $SYS counter, from its updates during [start, end] (every 10 s or so)."""
    inside = [(t, v) for t, v in samples if start <= t <= end + 1.0]
    if len(inside) < 2:
        inside = samples[-2:] if len(samples) >= 2 else []
    if len(inside) < 2 or inside[-1][0] - inside[0][0] <= 0:
        return None
    return (inside[-1][1] - inside[0][1]) / (inside[-1][0] - inside[0][0])


def build_report(args, tables: list[Table], result: dict, sampler: Sampler, times: tuple, problems: list[str],
                 logs: dict[str, str]) -> dict:
    run_start, window_start, stop_at, end = times
    duration = max(stop_at - window_start, 1e-9)
    per = result["tables"]
    n = len(tables)
    total = lambda key: sum(t[key] for t in per.values())  # noqa: E731

    for tid, t in per.items():
        if t["lost_events"]:
            problems.append(f"{tid}: {t['lost_events']} event(s) lost (public {t['lost_public']}, secure "
                            f"{t['lost_secure']}), first missing seqs {t['first_missing']}")
        if t["feed_mismatches"]:
            problems.append(f"{tid}: {t['feed_mismatches']} event(s) differ between the feeds, e.g. "
                            f"{t['mismatch_examples'][:1]}")
        if t["unended_hands"]:
            problems.append(f"{tid}: hand(s) {t['unended_hands'][:10]} started without an end (or ended "
                            "without a start)")
        if t["epoch_changes"]:
            problems.append(f"{tid}: {t['epoch_changes']} message(s) of another epoch (the table restarted?)")
        if t["events"] == 0:
            problems.append(f"{tid}: no event received")
    for table in tables:
        if table.exit_code != 0:
            problems.append(f"{table.table_id} exited with status {table.exit_code}: "
                            f"{logs.get(table.table_id, '').strip()[-300:]}")
        elif logs.get(table.table_id, "").strip():  # the tables log at WARNING: anything there is worth a look
            lines = logs[table.table_id].strip().splitlines()
            problems.append(f"note: {table.table_id} logged {len(lines)} line(s), the last: {lines[-1][:200]}")
    offline = sum(t["offline"] for t in per.values())
    if offline < n:
        problems.append(f"only {offline} of {n} tables said offline at the end")
    if result["bad"]:
        problems.append(f"{result['bad']} undecodable message(s)")
    dropped = [v for _, v in result["sys"].get("publish/messages/dropped", [])]
    broker_dropped = (dropped[-1] - dropped[0]) if len(dropped) >= 2 else (dropped[-1] if dropped else None)
    if broker_dropped:
        problems.append(f"the broker dropped {broker_dropped} message(s) ($SYS/broker/publish/messages/dropped)")

    speeds = [t["achieved_speed"] for t in per.values() if t["achieved_speed"] is not None]
    kept_up = (bool(speeds) and min(speeds) >= KEEP_UP * args.speed) if args.speed > 0 else None
    cpu_percent = [100 * t.cpu_s / max((t.exited or end) - t.started, 1e-9) for t in tables]

    window = sampler.between(window_start, stop_at)
    broker_cpu = rss_start = rss_end = rss_peak = machine = None
    with_broker = [s for s in window if s.broker_ticks is not None]
    if len(with_broker) >= 2:
        first, last = with_broker[0], with_broker[-1]
        broker_cpu = 100 * (last.broker_ticks - first.broker_ticks) / CLK_TCK / max(last.t - first.t, 1e-9)
    all_broker = [s for s in sampler.samples if s.rss_kb]
    if all_broker:
        rss_start, rss_end = all_broker[0].rss_kb / 1024, all_broker[-1].rss_kb / 1024
        rss_peak = max(max(s.hwm_kb or 0, s.rss_kb) for s in all_broker) / 1024
    if len(window) >= 2:
        share = (window[-1].busy - window[0].busy) / max(window[-1].total - window[0].total, 1)
        machine = 100 * share * (os.cpu_count() or 1)  # like the other CPU figures: 100 = one core busy
    marks = result["marks"]
    subscriber_cpu = None
    if "start" in marks and "stop" in marks:
        (t0, c0), (t1, c1) = marks["start"], marks["stop"]
        subscriber_cpu = 100 * (c1 - c0) / max(t1 - t0, 1e-9)

    def sys_rate(counter: str, unit: float = 1.0) -> float | None:
        rate = _rate(result["sys"].get(counter, []), window_start, stop_at)
        return None if rate is None else rate / unit

    r2 = lambda x: None if x is None else round(x, 2)  # noqa: E731
    lost = total("lost_events")
    report = {
        "tables": n,
        "link": args.link,
        "speed": args.speed,
        "seed": args.seed,
        "duration_s": round(duration, 1),
        "wall_s": round(end - run_start, 1),
        "broker_queue_limit": None,
        "events_total": total("events"),
        "events_in_window": result["events_in_window"],
        "events_per_s": r2(result["events_in_window"] / duration),
        "events_per_s_per_table": r2(result["events_in_window"] / duration / n),
        "hands_completed": total("hands_completed"),
        "messages_received": result["received"],
        "subscriber_messages_per_s": r2(result["messages_in_window"] / duration),
        "broker_messages_in_per_s": r2(sys_rate("messages/received")),
        "broker_messages_out_per_s": r2(sys_rate("messages/sent")),
        "broker_kb_in_per_s": r2(sys_rate("publish/bytes/received", 1024)),
        "broker_kb_out_per_s": r2(sys_rate("publish/bytes/sent", 1024)),
        "broker_dropped": broker_dropped,
        "lost_events": lost,
        "lost_public": total("lost_public"),
        "lost_secure": total("lost_secure"),
        "duplicates": total("duplicates"),
        "out_of_order": total("out_of_order"),
        "feed_mismatches": total("feed_mismatches"),
        "unended_hands": sum(len(t["unended_hands"]) for t in per.values()),
        "epoch_changes": total("epoch_changes"),
        "tail_check": "journal" if args.journal_dir else "snapshot",
        "unverified_tail_events": total("unverified_tail"),
        "tables_online": sum(t["online"] for t in per.values()),
        "tables_offline": offline,
        "table_failures": sum(t.exit_code != 0 for t in tables),
        "achieved_speed_min": r2(min(speeds)) if speeds else None,
        "achieved_speed_mean": r2(sum(speeds) / len(speeds)) if speeds else None,
        "behind_s_max": r2(max(t["behind_s"] for t in per.values())),
        "kept_up": kept_up,
        "tables_cpu_percent": r2(100 * sum(t.cpu_s for t in tables) / max(end - run_start, 1e-9)),
        "table_cpu_percent_mean": r2(sum(cpu_percent) / n),
        "table_cpu_percent_max": r2(max(cpu_percent)),
        "table_rss_mb_max": r2(max(t.maxrss_kb for t in tables) / 1024),
        "broker_cpu_percent": r2(broker_cpu),
        "broker_rss_start_mb": r2(rss_start),
        "broker_rss_end_mb": r2(rss_end),
        "broker_rss_peak_mb": r2(rss_peak),
        "subscriber_cpu_percent": r2(subscriber_cpu),
        "machine_cpu_percent": r2(machine),
        "cores": os.cpu_count(),
    }
    if kept_up is False:
        problems.append(f"note: the slowest table ran at {min(speeds):.2f}x of {args.speed:g}x: the machine "
                        "cannot keep this many tables at this speed (nothing is lost for it, but the load is "
                        "lower than asked)")
    failures = [p for p in problems if not p.startswith("note:")]
    report["ok"] = lost == 0 and not failures
    report["problems"] = problems
    if getattr(args, "details", False):
        report["per_table"] = per
    return {key: report[key] for key in REPORT_FIELDS} | ({"per_table": per} if "per_table" in report else {})
