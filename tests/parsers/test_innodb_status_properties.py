"""Property tests: whatever the input, a partial record or ParseError, never another exception."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parent))

from _corpus import CASES, read_fixture  # noqa: E402

from collectors.parsers.innodb_status import InnodbStatus, ParseError, parse_innodb_status  # noqa: E402

TEXTS = [read_fixture(p) for p in CASES if p.stat().st_size < 70_000]
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.large_base_example])


def _parse_or_reject(text: str) -> InnodbStatus | None:
    try:
        return parse_innodb_status(text)
    except ParseError:
        return None


def test_every_fixture_cut_at_every_line_gives_a_record_or_parse_error():
    for text in TEXTS[::3]:
        lines = text.split("\n")
        for cut in range(len(lines)):
            record = _parse_or_reject("\n".join(lines[:cut]))
            if record is not None and cut < len(lines) - 4:
                assert not record.complete or "END OF INNODB MONITOR OUTPUT" in "\n".join(lines[:cut])


def _sections(text: str) -> list[str]:
    return text.split("\n---")


@SETTINGS
@given(st.sampled_from(TEXTS), st.randoms(use_true_random=False))
def test_sections_reordered_or_dropped_never_crash(text, rnd):
    parts = _sections(text)
    rnd.shuffle(parts)
    kept = [p for p in parts if rnd.random() > 0.3]
    _parse_or_reject("\n---".join(kept))


@SETTINGS
@given(st.sampled_from(TEXTS), st.randoms(use_true_random=False))
def test_duplicated_lines_never_crash(text, rnd):
    lines = text.split("\n")
    out = []
    for line in lines:
        out.append(line)
        if rnd.random() < 0.2:
            out.append(line)
    _parse_or_reject("\n".join(out))


@SETTINGS
@given(st.sampled_from(TEXTS), st.text(max_size=200), st.integers(min_value=0))
def test_garbage_inside_never_crashes(text, garbage, at):
    at %= max(len(text), 1)
    _parse_or_reject(text[:at] + garbage + text[at:])


@SETTINGS
@given(st.binary(max_size=2000))
def test_random_bytes_never_crash(data):
    _parse_or_reject(data.decode("latin-1"))


@SETTINGS
@given(st.text(alphabet=st.sampled_from(list("-=\n 0123456789LOGSEMAPHORESTRANCIx:,")), max_size=500))
def test_random_text_made_of_status_characters_never_crashes(text):
    _parse_or_reject(text)


def test_a_one_megabyte_deadlock_section_is_kept_and_parsed():
    text = next(t for t in TEXTS if "LATEST DETECTED DEADLOCK" not in t and "------------\nTRANSACTIONS" in t)
    huge = "------------------------\nLATEST DETECTED DEADLOCK\n------------------------\n" + (
        "*** (1) TRANSACTION:\nTRANSACTION 5, ACTIVE 1 sec\nMySQL thread id 4, query id 9 localhost root\n"
        + "UPDATE t SET a = 1 WHERE b = 'x'\n" * 32_000
    )
    at = text.find("------------\nTRANSACTIONS")
    record = parse_innodb_status(text[:at] + huge + text[at:])
    assert record.deadlock is not None and len(record.deadlock.text) > 1_000_000


def _best_of(repeats: int, fn) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def test_parse_time_grows_linearly_with_the_size_of_the_text():
    # ten times the transactions: must cost about ten times as much, not a hundred
    base = next(t for t in TEXTS if "---TRANSACTION" in t)
    head, _, tail = base.partition("---TRANSACTION")
    block = "---TRANSACTION" + tail.split("--------\nFILE I/O")[0]
    rest = tail[len(block) - len("---TRANSACTION"):]
    small = head + block * 20 + rest
    large = head + block * 200 + rest
    t_small = _best_of(5, lambda: parse_innodb_status(small))
    t_large = _best_of(5, lambda: parse_innodb_status(large))
    assert t_large < 25 * t_small


@pytest.mark.parametrize("digit", ["²", "٣", "１"])  # a superscript, an Arabic-Indic and a full-width digit
def test_unicode_digits_where_numbers_belong_never_crash(digit):
    # str.isdigit() accepts "²" but int() rejects it; each of these lines once reached int().
    text = read_fixture(next(p for p in CASES if "I/O thread 0 state" in read_fixture(p)))
    text = text.replace("I/O thread 0 state", f"I/O thread {digit} state")
    text = text.replace("Trx id counter ", f"Trx id counter {digit}", 1)
    text += f"\n---TRANSACTION 0 7, ACTIVE 3 sec, thread declared inside InnoDB {digit}\n"
    assert _parse_or_reject(text) is not None
