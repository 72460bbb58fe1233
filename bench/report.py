"""The generated part of docs/benchmarks.md: the table between the bench:results markers."""

from __future__ import annotations

from pathlib import Path

START, END = "<!-- bench:results -->", "<!-- /bench:results -->"


def _f(value, digits: int = 0) -> str:
    if value is None:
        return "n/a"
    return f"{value:,.{digits}f}"


def _mark(figures: dict, key: str) -> str:
    met = figures["targets"].get(key, {}).get("met")
    return {True: "met", False: "**missed**", None: "n/a"}[met]


def _before(f: dict, kind: str) -> str:
    """The server page as before the second page-speed round, from the same run, and the ratio."""
    p50, p95 = f.get(f"server_page_30d_before_{kind}_p50_ms"), f.get(f"server_page_30d_before_{kind}_p95_ms")
    if p50 is None or p95 is None:
        return ""
    now50, now95 = f[f"server_page_30d_{kind}_p50_ms"], f[f"server_page_30d_{kind}_p95_ms"]
    return (f"page before this round: {_f(p50)} / {_f(p95)} → {p50 / now50:.2f}× / {p95 / now95:.2f}× "
            f"faster now; ")


def table(f: dict) -> str:
    rows = [
        ("`ingest_samples_per_s` (batches of 5,000)", _f(f.get("ingest_samples_per_s")),
         f"`copy_samples_per_s` {_f(f.get('copy_samples_per_s'))} → {f.get('ingest_vs_copy', 0):.0%} of COPY",
         "≥ 50 % of COPY", _mark(f, "ingest_vs_copy")),
        ("ingest, batches of 200 (execute_values path)", _f(f.get("ingest_small_batch_samples_per_s")),
         "same COPY", "", ""),
        ("`series_p95_ms` (12 metrics × 30 days × 10 s, points=1500)", _f(f.get("series_p95_ms"), 1),
         f"raw rows only: {_f(f.get('series_raw_only_median_ms'))} ms (median)", "≤ 300 ms", _mark(f, "series_p95_ms")),
        ("series read from the 15-minute rollup (p95 / p50)",
         f"{_f(f.get('series_from_15m_p95_ms'), 1)} / {_f(f.get('series_from_15m_p50_ms'), 1)}",
         f"from the 1-minute rollup: {_f(f.get('series_from_1m_p95_ms'), 1)} / "
         f"{_f(f.get('series_from_1m_p50_ms'), 1)} ms → {_f(f.get('series_15m_speedup_p95'), 2)}× at p95", "", ""),
        ("server page interactive, 30 days, cold p50 / p95 (ms)",
         f"{_f(f.get('server_page_30d_cold_p50_ms'))} / {_f(f.get('server_page_30d_cold_p95_ms'))}",
         f"{_before(f, 'cold')}same page with the full plotly.js: {_f(f.get('server_page_30d_full_plotly_cold_p50_ms'))} / "
         f"{_f(f.get('server_page_30d_full_plotly_cold_p95_ms'))}; blank page + plotly.js basic: "
         f"{_f(f.get('plotly_only_page_cold_p50_ms'))} / {_f(f.get('plotly_only_page_cold_p95_ms'))}, + full: "
         f"{_f(f.get('plotly_full_only_page_cold_p50_ms'))} / {_f(f.get('plotly_full_only_page_cold_p95_ms'))}",
         "≤ 1,500 ms", _mark(f, "server_page_30d_cold_p95_ms")),
        ("server page interactive, 30 days, warm p50 / p95 (ms)",
         f"{_f(f.get('server_page_30d_warm_p50_ms'))} / {_f(f.get('server_page_30d_warm_p95_ms'))}",
         f"{_before(f, 'warm')}full plotly.js: {_f(f.get('server_page_30d_full_plotly_warm_p50_ms'))} / "
         f"{_f(f.get('server_page_30d_full_plotly_warm_p95_ms'))}; plotly.js basic alone: "
         f"{_f(f.get('plotly_only_page_warm_p50_ms'))} / {_f(f.get('plotly_only_page_warm_p95_ms'))}; "
         f"series API alone in the browser: {_f(f.get('series_api_in_browser_p50_ms'))} / "
         f"{_f(f.get('series_api_in_browser_p95_ms'))}", "≤ 1,500 ms", _mark(f, "server_page_30d_warm_p95_ms")),
        ("overview page loaded, {} servers, cold / warm p95 (ms)".format(f.get("overview_servers")),
         f"{_f(f.get('overview_page_cold_p95_ms'))} / {_f(f.get('overview_page_warm_p95_ms'))}",
         f"p50 {_f(f.get('overview_page_cold_p50_ms'))} / {_f(f.get('overview_page_warm_p50_ms'))}; "
         f"server-side render p95 {_f(f.get('overview_p95_ms'))}", "≤ 1,500 ms",
         f"{_mark(f, 'overview_page_cold_p95_ms')} / {_mark(f, 'overview_page_warm_p95_ms')}"),
        ("`overview_p95_ms` (server list page, {} servers)".format(f.get("overview_servers")),
         _f(f.get("overview_p95_ms"), 1), f"`/api/v1/servers`: {_f(f.get('servers_api_p95_ms'), 1)} ms p95",
         "≤ 500 ms", _mark(f, "overview_p95_ms")),
        ("`bytes_per_value` (InnoDB sample table incl. indexes)", _f(f.get("bytes_per_value"), 1),
         f"{_f(f.get('bytes_per_row'))} B/row, {_f(f.get('values_per_row'), 1)} values/row" + (
             f"; before (0007 layout, same method, same day): {_f(f['bytes_per_value_before'], 1)} B, "
             f"{_f(f.get('bytes_per_row_before'))} B/row" if f.get("bytes_per_value_before") else ""),
         "≤ 10 B", _mark(f, "bytes_per_value")),
        ("`polls_per_s` (one worker process, {} threads, {} servers)".format(
            int(f.get("poll_threads") or 0), _f(f.get("poll_servers"))),
         _f(f.get("polls_per_s"), 1),
         f"bare reads (same queries, open connections, same threads) {_f(f.get('bare_reads_per_s'), 1)}/s; one "
         f"poll per message {_f(f.get('single_polls_per_s'), 1)}/s; with SET traffic "
         f"{_f(f.get('set_traffic_polls_per_s'), 1)}/s; busy server {_f(f.get('busy_polls_per_s'), 1)}/s",
         "≥ 300", _mark(f, "polls_per_s")),
        ("`worker_cpu_ms_per_poll` ({} polls per message, as the fan-out sends them at scale)".format(
            int(f.get("polls_per_task") or 1)), _f(f.get("worker_cpu_ms_per_poll"), 2),
         f"`bare_read_cpu_ms_per_poll` {_f(f.get('bare_read_cpu_ms_per_poll'), 2)} → "
         f"**{_f(f.get('poll_vs_bare_read_cpu'), 2)}×**; one poll per message "
         f"{_f(f.get('single_worker_cpu_ms_per_poll'), 2)} ms ({_f(f.get('single_poll_vs_bare_read_cpu'), 2)}×); "
         f"host CPU (all processes) {_f(f.get('host_cpu_ms_per_poll'), 2)} ms per poll; variables read by "
         f"{_f(100 * (f.get('variables_read_fraction') or 0), 0)} % of polls (status text "
         f"{_f(f.get('status_bytes'))} B)",
         "≤ 1.5 ms, ≤ 2× bare", f"{_mark(f, 'worker_cpu_ms_per_poll')} / {_mark(f, 'poll_vs_bare_read_cpu')}"),
        ("worker CPU per poll with SET traffic (every poll reads the variables)",
         _f(f.get("set_traffic_worker_cpu_ms_per_poll"), 2),
         f"bare reads {_f(f.get('set_traffic_bare_read_cpu_ms_per_poll'), 2)} → "
         f"**{_f(f.get('set_traffic_poll_vs_bare_read_cpu'), 2)}×**", "≤ 1.5 ms, ≤ 2× bare",
         f"{_mark(f, 'set_traffic_worker_cpu_ms_per_poll')} / {_mark(f, 'set_traffic_poll_vs_bare_read_cpu')}"),
        ("worker CPU per poll, busy server ({} B status text, 60 open transactions)".format(
            _f(f.get("busy_status_bytes"))), _f(f.get("busy_worker_cpu_ms_per_poll"), 2),
         f"bare reads {_f(f.get('busy_bare_read_cpu_ms_per_poll'), 2)} → "
         f"**{_f(f.get('busy_poll_vs_bare_read_cpu'), 2)}×**", "≤ 1.5 ms, ≤ 2× bare",
         f"{_mark(f, 'busy_worker_cpu_ms_per_poll')} / {_mark(f, 'busy_poll_vs_bare_read_cpu')}"),
        ("the same in one thread (no interpreter lock to contend for): idle server / busy server",
         f"{_f(f.get('one_thread_worker_cpu_ms_per_poll'), 2)} / {_f(f.get('busy_one_thread_worker_cpu_ms_per_poll'), 2)}",
         f"bare reads {_f(f.get('one_thread_bare_read_cpu_ms_per_poll'), 2)} / "
         f"{_f(f.get('busy_one_thread_bare_read_cpu_ms_per_poll'), 2)} → "
         f"**{_f(f.get('one_thread_poll_vs_bare_read_cpu'), 2)}× / {_f(f.get('busy_one_thread_poll_vs_bare_read_cpu'), 2)}×**"
         "; in four threads the contention moves both sides by up to ±30 % from run to run", "≤ 2× bare",
         f"{_mark(f, 'one_thread_poll_vs_bare_read_cpu')} / {_mark(f, 'busy_one_thread_poll_vs_bare_read_cpu')}"),
        ("`schedule_polls_ms_at_5000_servers` (one tick, 10 s interval)", _f(f.get("schedule_polls_ms_at_5000_servers"), 1),
         f"{_f(f.get('schedule_polls_enqueued_per_tick_at_5000_servers'))} polls due per tick; at 500 servers "
         f"{_f(f.get('schedule_polls_ms_at_500_servers'), 1)} ms; per enqueued poll "
         f"{_f(f.get('schedule_polls_us_per_enqueued_poll_at_5000_servers'))} vs "
         f"{_f(f.get('schedule_polls_us_per_enqueued_poll_at_500_servers'))} µs; roster read from PostgreSQL "
         f"(on a change or once a minute) {_f(f.get('schedule_polls_sync_ms_at_5000_servers'))} ms", "", ""),
        ("`alert_eval_ms_per_server_at_3000` (one pass of the built-in rules, 15 min of 10 s samples each)",
         _f(f.get("alert_eval_ms_per_server_at_3000"), 2),
         f"reading the same histories alone {_f(f.get('alert_read_ms_per_server_at_3000'), 2)} ms → "
         f"**{_f(f.get('alert_eval_vs_history_read'), 2)}×**; at 500 servers "
         f"{_f(f.get('alert_eval_ms_per_server_at_500'), 2)} ms; CPU {_f(f.get('alert_eval_cpu_ms_per_server_at_3000'), 2)} "
         f"ms; a pass at 10,000 servers {_f(f.get('alert_eval_s_per_pass_at_10000'), 1)} s "
         f"(`alert_eval_s_per_pass_at_10000`)", "≤ 10 s at 10,000 (beat's tick)",
         _mark(f, "alert_eval_s_per_pass_at_10000")),
        ("`parse_us_per_status` (mean over {} statuses, complete parse)".format(f.get("parse_statuses")),
         _f(f.get("parse_us_per_status")),
         f"naive line scan {_f(f.get('parse_baseline_us_per_status'))} µs; every number found and converted "
         f"(one findall, no structure) {_f(f.get('parse_every_number_us_per_status'))} µs; 10-30 KB statuses: "
         f"{_f(f.get('parse_typical_us_per_status'))} vs {_f(f.get('parse_typical_baseline_us_per_status'))} µs",
         "≤ 150 µs", _mark(f, "parse_us_per_status")),
        ("30 days × 10 s history for one server (generate + rollups)", f"{_f(f.get('history_30d_s'), 1)} s",
         f"{_f(f.get('history_30d_rows'))} rows", "", ""),
    ]
    lines = ["| figure | value | baseline, same run | target | |", "| --- | ---: | --- | --- | --- |"]
    lines += [f"| {a} | {b} | {c} | {d} | {e} |" for a, b, c, d, e in rows]
    lines.append("")
    worst = max((f.get(k) or 0 for k in ("worker_cpu_ms_per_poll", "set_traffic_worker_cpu_ms_per_poll",
                                         "busy_worker_cpu_ms_per_poll")), default=0) or None
    lines.append(
        f"Capacity measured this way: one worker process spends {_f(f.get('worker_cpu_ms_per_poll'), 2)} ms of "
        f"CPU per poll on the idle server and up to {_f(worst, 2)} ms on a busy one, so with enough polls in "
        f"flight (threads) one core sustains **{_f(1000 / worst if worst else None)} polls/s = "
        f"{_f(10000 / worst if worst else None)} servers at a 10 s interval** against remote servers at the worst "
        f"of the three; here it measured {_f(f.get('polls_per_s'))} polls/s with the monitored MariaDB on the same "
        f"{f.get('cpus')} CPUs (bare reads alone: {_f(f.get('bare_reads_per_s'))}/s). "
        f"This whole host, if CPU-bound at {_f(f.get('host_cpu_ms_per_poll'), 2)} ms of CPU per poll (MariaDB and "
        f"PostgreSQL included), **{_f(f.get('capacity_servers_at_10s_host'))} servers at 10 s**. Ingest at "
        f"{_f(f.get('ingest_samples_per_s'))} samples/s is not the limit."
    )
    lines.append("")
    pages = (f" Page-speed figures re-measured alone (`python -m bench.run --only pages`) at {f['pages_date']}."
             if f.get("pages_date") else "")
    if f.get("parse_date"):
        pages += f" Parser figures re-measured alone (`python -m bench.run --only parse`) at {f['parse_date']}."
    if f.get("storage_date"):
        pages += (f" Storage figures (bytes per value, 30-day history) re-measured alone "
                  f"(`python -m bench.storage_only --merge`) at {f['storage_date']}.")
    lines.append(f"Run of {f.get('date')}, Python {f.get('python')}, {f.get('machine')}, {f.get('cpus')} CPUs, "
                 f"{_f(f.get('bench_seconds'))} s in all.{pages} Raw figures: `bench/results/latest.json`.")
    return "\n".join(lines)


def write_doc(path: Path, figures: dict) -> None:
    write_section(path, START, END, table(figures))


def write_section(path: Path, start: str, end: str, body: str) -> None:
    """Replace the text between two markers (appended when missing), leaving the rest as written."""
    text = path.read_text() if path.exists() else "# Benchmarks\n"
    if start not in text:
        text += f"\n{start}\n{end}\n"
    head, rest = text.split(start, 1)
    tail = rest.split(end, 1)[1] if end in rest else ""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"{head}{start}\n{body}\n{end}{tail}")


SOAK_START, SOAK_END = "<!-- bench:soak -->", "<!-- /bench:soak -->"
_MIB = 1024 * 1024


def soak_table(result: dict) -> str:
    v = result["verdict"]
    yes = {True: "yes", False: "**no**"}
    rows = [
        ("broker queue length (tasks)", _f(v["queue_length"]["first"]), _f(v["queue_length"]["last"]),
         _f(v["queue_length"]["slope_per_min"], 2), yes[v["queue_length"]["flat"]]),
        ("worker RSS, all processes (MiB)", _f(v["worker_rss_bytes"]["first"] / _MIB, 1),
         _f(v["worker_rss_bytes"]["last"] / _MIB, 1), _f(v["worker_rss_bytes"]["slope_per_min"] / _MIB, 2),
         yes[v["worker_rss_bytes"]["flat"]]),
        ("PostgreSQL database size (MiB)", _f(v["db_bytes"]["first"] / _MIB, 1), _f(v["db_bytes"]["last"] / _MIB, 1),
         _f(v["db_bytes"]["slope_per_min"] / _MIB, 2),
         f"{yes[v['db_bytes']['flat']]}: {_f(v['db_bytes']['bytes_per_sample_first_half'])} → "
         f"{_f(v['db_bytes']['bytes_per_sample_second_half'])} B per sample"),
        ("samples stored", _f(v["samples"]["first"]), _f(v["samples"]["last"]), _f(v["samples"]["slope_per_min"]),
         f"{yes[v['samples']['flat']]}: {_f(v['samples']['per_min_first_half'])} → "
         f"{_f(v['samples']['per_min_second_half'])}/min; kept up with {_f(v['samples']['expected_per_min'])}/min: "
         f"{yes[v['samples']['kept_up']]}"),
    ]
    lines = [f"Soak of {result['date']}: {result['servers']} servers every {result['interval_s']} s for "
             f"{_f(result['minutes'])} min, one Celery worker ({result.get('worker_pool', 'prefork')}, concurrency {result['worker_concurrency']}) "
             f"and beat's fan-out; sampled every {result['samples_every_s']} s. Raw series: `bench/results/soak.json`.",
             "", "| series | first | last | slope per minute | flat |", "| --- | ---: | ---: | ---: | --- |"]
    lines += [f"| {a} | {b} | {c} | {d} | {e} |" for a, b, c, d, e in rows]
    return "\n".join(lines)
