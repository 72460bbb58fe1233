#!/usr/bin/env python
"""Print the README's corpus table: for each flavour/version in tests/fixtures/innodb_status,
how many samples, and which sections and key values the parser reads from them."""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from collectors.parsers.innodb_status import parse_innodb_status  # noqa: E402

SECTIONS = ("semaphores", "deadlock", "foreign_key_error", "transactions", "file_io", "insert_buffer",
            "log", "buffer_pool", "row_operations")
SHORT = {"semaphores": "sem", "deadlock": "dl", "foreign_key_error": "fk", "transactions": "trx",
         "file_io": "io", "insert_buffer": "ibuf", "log": "log", "buffer_pool": "bp", "row_operations": "rows"}


def main() -> None:
    groups: dict[str, list] = defaultdict(list)
    for path in sorted((ROOT / "tests/fixtures/innodb_status").glob("*.txt")):
        key = path.stem.split("--")[0]
        groups[key].append(parse_innodb_status(path.read_bytes().decode("utf-8", "replace")))
    print("| flavour-version | samples | complete | sections read | checkpoint age | HLL | latch waits | unparsed lines |")
    print("| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: |")
    for key in sorted(groups, key=_version_key):
        records = groups[key]
        present = [SHORT[s] for s in SECTIONS if any(getattr(r, s) is not None for r in records)]
        print(f"| {key} | {len(records)} | {sum(r.complete for r in records)} | {' '.join(present)} | "
              f"{_count(records, lambda r: r.log and r.log.checkpoint_age_bytes)} | "
              f"{_count(records, lambda r: r.transactions and r.transactions.history_list_length)} | "
              f"{sum(len(r.semaphores.waits) for r in records if r.semaphores)} | "
              f"{sum(len(r.unparsed_lines) for r in records)} |")


def _count(records, getter) -> str:
    return f"{sum(getter(r) is not None and getter(r) is not False for r in records)}/{len(records)}"


def _version_key(key: str):
    flavor, _, version = key.partition("-")
    return (flavor, [int(n) for n in re.findall(r"\d+", version)[:3]])


if __name__ == "__main__":
    main()
