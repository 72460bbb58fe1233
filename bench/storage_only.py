"""`python -m bench.storage_only`: the bytes-per-value figure alone, with where the bytes go.

Same method as `make bench` (30 days × 10 s of one server's history from dashboard/history.py, then
bench/storage.py's bytes_per_value), in its own database `innowatch_bench_storage` so it never
collides with a page-speed or full run using innowatch_bench. `--merge` writes the storage figures
(and `bytes_per_value_before` = the figure it replaces, or --before-value) into bench/results/latest.json, keeping the
rest; the docs table is then regenerated from that file.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import benchdb  # noqa: E402

DB_NAME = "innowatch_bench_storage"
KEYS = ("history_30d_rows", "sample_rows", "sample_table_bytes", "values_per_row", "bytes_per_row", "bytes_per_value")


def measure() -> dict:
    benchdb.use_bench_database(DB_NAME)
    import django

    django.setup()
    benchdb.migrate()
    from bench import storage
    from dashboard.history import generate_history

    now = dt.datetime.now(dt.UTC).replace(second=0, microsecond=0)
    result = generate_history(1, 30, 10, now - dt.timedelta(days=30), prefix="bench30d")
    out = {"history_30d_rows": result["rows"], **storage.bytes_per_value()}
    out["breakdown"] = storage.breakdown()
    return out


def merge(latest: dict, figures: dict, before_value: float | None = None, before_row: float | None = None) -> dict:
    """latest.json's figures with the storage ones replaced, the figure they replace kept as `_before`."""
    from bench.run import targets

    extra = {"bytes_per_value_before": before_value or latest.get("bytes_per_value"),
             "bytes_per_row_before": before_row or latest.get("bytes_per_row"),
             "storage_breakdown": figures["breakdown"], "storage_date": figures["date"],
             "storage_seconds": figures["seconds"]}
    latest = {**latest, **{k: figures[k] for k in KEYS}}
    # Beside the storage figures, so a merge touches only those lines of the file.
    merged = {}
    for key, value in latest.items():
        if key not in extra:
            merged[key] = value
        if key == "bytes_per_value":
            merged.update(extra)
    merged["targets"] = targets(merged)
    return merged


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--merge", action="store_true", help="merge the figures into bench/results/latest.json")
    parser.add_argument("--before-value", type=float, help="the before figure (default: latest.json's)")
    parser.add_argument("--before-row", type=float, help="bytes per row before (default: latest.json's)")
    parser.add_argument("--figures", type=Path, help="merge these saved figures instead of measuring")
    args = parser.parse_args()
    if args.figures:
        figures = json.loads(args.figures.read_text())
    else:
        began = time.perf_counter()
        figures = measure()
        figures["date"] = dt.datetime.now(dt.UTC).replace(second=0, microsecond=0).isoformat()
        figures["seconds"] = time.perf_counter() - began
    print(json.dumps(figures, indent=1, default=str))
    if args.merge:
        from bench.report import write_doc
        from bench.run import DOC, RESULTS

        path = RESULTS / "latest.json"
        latest = merge(json.loads(path.read_text()), figures, args.before_value, args.before_row)
        path.write_text(json.dumps(latest, indent=1, default=str) + "\n")
        write_doc(DOC, latest)


if __name__ == "__main__":
    main()
