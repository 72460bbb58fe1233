"""Time parse_innodb_status over every fixture, with a naive baseline in the same run.

    python bench/bench_parse.py --out bench/results/parse.json [--repeats 30] [--innotop /usr/bin/innotop]
                                [--before GIT_REVISION]

The baseline is text.splitlines() plus one regex search per line: the least any line-based
parser must do, so ``ratio`` (ours / baseline) is comparable across machines. A second reference,
``every_number``, finds every number in the text with one C-level findall and converts each to
int: no structure at all, but each number read once, which a complete parse must also do. When innotop is
installed (Debian package ``innotop``), its Perl InnoDBParser is timed over the same fixtures in
the same run by bench/innotop_parse.pl (full lock parsing on, as our parse is complete), and
compared with ours over the statuses it can parse. Times are process CPU time, best of 3 rounds:
the benchmark machine is shared, and wall-clock time there measures the neighbours. ``--before``
also times the parser as it was at a git revision, in the same run, for a before/after ratio.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from collectors.parsers.innodb_status import PARSER_VERSION, parse_innodb_status  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures" / "innodb_status"
_NAIVE = re.compile(r"(\d+)")
_NUMBER = re.compile(r"\d+")


def naive(text: str) -> int:
    return sum(1 for line in text.splitlines() if _NAIVE.search(line))


def every_number(text: str) -> int:
    return len(list(map(int, _NUMBER.findall(text))))


def per_text_us(fns: list, texts: list[str], repeats: int) -> list[list[float]]:
    """Best-of-3 mean µs per call of each function for each text.

    The functions take turns on each text, so a burst of load from the neighbours lands on all
    of them alike and the ratios stay fair; best-of filters the rest of the scheduler noise.
    """
    out: list[list[float]] = [[] for _ in fns]
    for text in texts:
        best = [float("inf")] * len(fns)
        for _ in range(3):
            for k, fn in enumerate(fns):
                start = time.process_time()
                for _ in range(repeats):
                    fn(text)
                best[k] = min(best[k], (time.process_time() - start) / repeats)
        for k, value in enumerate(best):
            out[k].append(value * 1e6)
    return out


def summary(times: list[float], total_bytes: int) -> dict[str, float]:
    ordered = sorted(times)
    return {"mean_us": statistics.mean(times), "p50_us": statistics.median(times),
            "p95_us": ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))],
            "mb_per_s": total_bytes / (sum(times) / 1e6) / 1e6}


def parser_at(revision: str):
    """parse_innodb_status as it was at a git revision (the module is standard-library only)."""
    source = subprocess.run(["git", "-C", str(ROOT), "show", f"{revision}:collectors/parsers/innodb_status.py"],
                            capture_output=True, text=True, check=True).stdout
    spec = importlib.util.spec_from_loader(f"innodb_status_at_{revision}", loader=None)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[module.__name__] = module  # dataclasses look their module up while building
    exec(compile(source, f"{revision}:innodb_status.py", "exec"), module.__dict__)  # noqa: S102
    return module.parse_innodb_status


def innotop_us(innotop: str, paths: list[Path], repeats: int) -> tuple[dict[str, float], dict[str, str]]:
    """µs per status of innotop's parser for each fixture it parses, and why it failed on the others."""
    script = ROOT / "bench" / "innotop_parse.pl"
    command = ["perl", str(script), "--innotop", innotop, "--repeats", str(repeats), *map(str, paths)]
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    times: dict[str, float] = {}
    failed: dict[str, str] = {}
    for line in output.splitlines():
        if line.startswith("failed "):
            error, _, path = line[7:].rpartition(" ")
            failed[Path(path).name] = error.strip()
        elif not line.startswith("mean "):
            value, _, path = line.partition(" ")
            times[Path(path).name] = float(value)
    return times, failed


def peer(name: str, times: dict[str, float], failed: dict[str, str], ours: dict[str, float],
         sizes: dict[str, int]) -> dict[str, object]:
    common = [n for n in times if n in ours]
    peer_mean = statistics.mean(times[n] for n in common)
    ours_mean = statistics.mean(ours[n] for n in common)
    return {"name": name, "statuses_parsed": len(common), "failed": failed,
            "summary": summary([times[n] for n in common], sum(sizes[n] for n in common)), "ours_mean_us_same_statuses": ours_mean,
            "ours_over_peer": ours_mean / peer_mean, "peer_over_ours": peer_mean / ours_mean}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "parse.json")
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--innotop", default=shutil.which("innotop") or "",
                        help="innotop script whose InnoDBParser to time ('' to skip)")
    parser.add_argument("--before", default="", help="git revision whose parser to time too")
    args = parser.parse_args()
    paths = sorted(FIXTURES.glob("*.txt"))
    texts = [p.read_text(errors="replace") for p in paths]
    total = sum(len(t.encode()) for t in texts)
    fns = [parse_innodb_status, naive, every_number] + ([parser_at(args.before)] if args.before else [])
    ours, base, numbers, *before_times = per_text_us(fns, texts, args.repeats)
    typical = [i for i, t in enumerate(texts) if 10_000 <= len(t) <= 30_000]
    result = {
        "parser_version": PARSER_VERSION, "python": platform.python_version(), "machine": platform.machine(),
        "statuses": len(texts), "total_bytes": total, "repeats": args.repeats,
        "parser": summary(ours, total), "naive_baseline": summary(base, total),
        "every_number": summary(numbers, total),
        "ratio_mean": statistics.mean(ours) / statistics.mean(base),
        "typical_10_30kb": {"count": len(typical), "parser_mean_us": statistics.mean(ours[i] for i in typical),
                            "baseline_mean_us": statistics.mean(base[i] for i in typical)} if typical else None,
        "per_fixture_us": {p.name: round(t, 1) for p, t in zip(paths, ours)},
        "peers": [],
    }
    if args.before:
        before = before_times[0]
        result["before"] = {"revision": args.before, "parser": summary(before, total),
                            "before_over_now": statistics.mean(before) / statistics.mean(ours)}
    if args.innotop and shutil.which("perl"):
        times, failed = innotop_us(args.innotop, paths, args.repeats)
        result["peers"].append(peer("innotop InnoDBParser (Perl, full=1)", times, failed,
                                    {p.name: t for p, t in zip(paths, ours)},
                                    {p.name: len(t.encode()) for p, t in zip(paths, texts)}))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    p, b = result["parser"], result["naive_baseline"]
    print(f"parser: mean {p['mean_us']:.0f} µs, p50 {p['p50_us']:.0f}, p95 {p['p95_us']:.0f}, {p['mb_per_s']:.1f} MB/s; "
          f"baseline mean {b['mean_us']:.0f} µs; ratio {result['ratio_mean']:.2f}; every number found and "
          f"converted {result['every_number']['mean_us']:.0f} µs; {len(texts)} statuses, {total} bytes")
    if "before" in result:
        b = result["before"]["parser"]
        print(f"before ({args.before}): mean {b['mean_us']:.0f} µs, p50 {b['p50_us']:.0f}, p95 {b['p95_us']:.0f}; "
              f"now {result['before']['before_over_now']:.1f}x faster")
    for entry in result["peers"]:
        print(f"{entry['name']}: mean {entry['summary']['mean_us']:.0f} µs over {entry['statuses_parsed']} statuses "
              f"(ours {entry['ours_mean_us_same_statuses']:.0f} µs on the same: {entry['peer_over_ours']:.1f}x faster); "
              f"failed on {len(entry['failed'])}")


if __name__ == "__main__":
    main()
