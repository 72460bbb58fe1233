"""The soak's verdict (bench/soak.py): what counts as flat, and one short real run (slow)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench.soak import judge

MIB = 1024 * 1024


def _rows(queue, rss_mib, per_min=1200, bytes_per_sample=3000):
    rows = []
    for i, (q, r) in enumerate(zip(queue, rss_mib, strict=True)):
        samples = int(per_min * 0.5 * (i + 1))
        rows.append({"minute": 0.5 * (i + 1), "queue_length": q, "worker_rss_bytes": r * MIB,
                     "db_bytes": 10 * MIB + samples * bytes_per_sample, "samples": samples})
    return rows


def test_a_bounded_queue_and_steady_memory_are_judged_flat():
    verdict = judge(_rows([12, 20, 8, 15, 11, 18, 9, 14], [250, 258, 258, 258, 259, 258, 259, 259]), 20, 1)
    assert all(v["flat"] for v in verdict.values())
    assert verdict["samples"]["kept_up"]


def test_a_growing_queue_is_not_flat():
    verdict = judge(_rows([10, 40, 70, 100, 130, 160, 190, 220], [250] * 8), 20, 1)
    assert not verdict["queue_length"]["flat"]


def test_a_worker_that_leaks_memory_is_not_flat():
    verdict = judge(_rows([10] * 8, [250, 252, 254, 256, 258, 260, 262, 264]), 20, 1)
    assert not verdict["worker_rss_bytes"]["flat"]


def test_a_sample_rate_below_the_servers_interval_is_reported_as_not_keeping_up():
    verdict = judge(_rows([10] * 8, [250] * 8, per_min=500), 20, 1)
    assert verdict["samples"]["flat"] and not verdict["samples"]["kept_up"]


@pytest.mark.slow
def test_a_one_minute_soak_polls_through_a_real_worker_and_writes_its_verdict(tmp_path):
    out = tmp_path / "soak.json"
    root = Path(__file__).resolve().parents[2]
    subprocess.run([sys.executable, "-m", "bench.soak", "--minutes", "1", "--servers", "5", "--interval", "1", "--out", str(out),
                    "--no-doc"], cwd=root, check=True, timeout=300)
    result = json.loads(out.read_text())
    assert result["series"][-1]["samples"] > result["series"][0]["samples"] > 0
    assert result["series"][-1]["failed_runs"] == 0
    # Two readings a minute: enough to see the queue drained and samples flowing at the servers'
    # rate. Memory and database size need the 10-minute soak of `make bench` to be judged (in its
    # first minute the worker's RSS still grows ~4 MiB/min while pools and caches fill).
    assert result["verdict"]["queue_length"]["flat"] and result["verdict"]["samples"]["flat"]
    assert set(result["verdict"]) == {"queue_length", "worker_rss_bytes", "db_bytes", "samples"}
