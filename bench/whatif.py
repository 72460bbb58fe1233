"""Time a what-if replay of 24 h of 10 s samples (8,640 polls), as the API runs it: the workload
fit, the replay with the variables in force and the replay with an override.

    python bench/whatif.py --out bench/results/whatif.json

The load is the real redo and dirty-page series of tests/fixtures/captures/mariadb-10.11--redo-log-resize
(one reading a second), read every 10 s and repeated to fill 24 h, so the page cleaner meets the
adaptive lwm, the async point and a drained log as a real day would. The baseline, timed in the same
run, is a least-squares fit plus mean and p95 over the same arrays (numpy, one pass each): the least
any what-if must do to report its fit. Process CPU time, best of 3 rounds (the machine is shared).
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from analysis import checkpoint  # noqa: E402
from analysis.page_cleaner import FlushSettings  # noqa: E402
from analysis.whatif import Measured, calibrate, replay  # noqa: E402

CAPTURE = ROOT / "tests" / "fixtures" / "captures" / "mariadb-10.11--redo-log-resize.jsonl.gz"
POLLS = 8640


def _day() -> Measured:
    from collectors.parsers.innodb_status import parse_innodb_status

    lsn, age, dirty, flushed = [], [], [], []
    with gzip.open(CAPTURE, "rt") as lines:
        for line in lines:
            item = json.loads(line)
            if item["kind"] == "innodb_status":
                log = parse_innodb_status(item["text"])
                lsn.append(log.log.lsn)
                age.append(log.log.lsn - log.log.checkpoint_lsn)
                dirty.append(log.buffer_pool.pages_dirty)
                flushed.append(log.buffer_pool.pages_written)
    step = 10
    redo, writes = np.diff(lsn)[::1], np.diff(flushed)
    idx = np.arange(POLLS * step) % len(redo)
    cum_lsn = lsn[0] + np.concatenate([[0], np.cumsum(redo[idx])])[::step]
    cum_flushed = flushed[0] + np.concatenate([[0], np.cumsum(writes[idx])])[::step]
    d = np.array(dirty, dtype=float)[np.arange(POLLS * step + 1) % len(dirty)][::step]
    a = np.array(age, dtype=float)[np.arange(POLLS * step + 1) % len(age)][::step]
    t = 1.7e9 + np.arange(len(cum_lsn)) * 10.0
    return Measured(t, cum_lsn.astype(float), a, d, cum_flushed.astype(float))


def _settings(size: int) -> FlushSettings:
    th = checkpoint.checkpoint_thresholds("mariadb", "10.11.19", size, adaptive_flushing_lwm_pct=10)
    return FlushSettings("mariadb", 100, 2000, False, th.async_bytes, th.max_bytes, th.log_capacity_bytes, 64896,
                         max_dirty_pages_pct_lwm=0.001)


def _cpu(fn) -> float:
    best = float("inf")
    for _ in range(3):
        began = time.process_time()
        fn()
        best = min(best, time.process_time() - began)
    return best


def figures() -> dict:
    day = _day()

    def whatif():
        workload = calibrate(day)
        replay(day, _settings(48 << 20), workload)
        replay(day, _settings(128 << 20), workload)

    def baseline():
        np.polyfit(day.dirty_pages, np.gradient(day.lsn), 1)
        np.mean(day.age_bytes), np.percentile(day.age_bytes, 95)

    ours, base = _cpu(whatif), _cpu(baseline)
    return {"whatif_polls": len(day.t_s), "whatif_replay_24h_s": round(ours, 3),
            "whatif_baseline_s": round(base, 5), "whatif_ratio": round(ours / base, 1)}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "whatif.json")
    result = figures()
    parser.parse_args().out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result))
