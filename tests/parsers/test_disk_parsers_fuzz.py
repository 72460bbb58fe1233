"""Fuzzing the disk-side and pt-stalk parsers: whatever the text, they return a result or raise
ParseError, never anything else (a worker must not crash on a truncated or garbled capture)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from collectors.parsers import ParseError
from collectors.parsers.diskstats import parse_proc_diskstats, parse_pt_diskstats_samples
from collectors.parsers.iostat import parse_iostat
from collectors.parsers.pt_stalk import parse_server_time, parse_status_tables, parse_variables

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
DISK_SAMPLES = sorted((FIXTURES / "diskstats").glob("*.txt"))
IOSTAT_SAMPLES = sorted((FIXTURES / "iostat").glob("*.txt"))
PT_STALK = sorted((FIXTURES / "pt_stalk").glob("*/*"))
PARSERS = {
    "proc_diskstats": parse_proc_diskstats,
    "pt_diskstats": parse_pt_diskstats_samples,
    "iostat": parse_iostat,
    "pt_stalk_tables": parse_status_tables,
    "pt_stalk_variables": parse_variables,
}
FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def only_parse_error(parser, text: str) -> None:
    try:
        parser(text)
    except ParseError:
        pass


def mutate(text: str, rnd: random.Random) -> str:
    lines = text.splitlines(keepends=True)
    if not lines:
        return text
    op = rnd.choice(["cut", "dup", "drop", "swap", "garble", "truncate-line"])
    i = rnd.randrange(len(lines))
    if op == "cut":
        return "".join(lines[:i])
    if op == "dup":
        return "".join(lines[:i] + [lines[i]] * rnd.randint(2, 5) + lines[i:])
    if op == "drop":
        return "".join(lines[:i] + lines[i + 1:])
    if op == "swap":
        j = rnd.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
        return "".join(lines)
    if op == "garble":
        chars = list(lines[i])
        for _ in range(rnd.randint(1, 8)):
            if chars:
                chars[rnd.randrange(len(chars))] = rnd.choice("x-1.,:%\t 9\x00é")
        lines[i] = "".join(chars)
        return "".join(lines)
    lines[i] = lines[i][: rnd.randrange(len(lines[i]) + 1)]
    return "".join(lines)


def real_samples_for(name: str) -> list[Path]:
    if name in ("proc_diskstats", "pt_diskstats"):
        return DISK_SAMPLES
    if name == "iostat":
        return IOSTAT_SAMPLES
    return PT_STALK


def test_the_fuzzed_samples_exist():
    assert DISK_SAMPLES and IOSTAT_SAMPLES and PT_STALK


@pytest.mark.parametrize("name", sorted(PARSERS))
@FUZZ
@given(seed=st.integers(0, 2**32 - 1), rounds=st.integers(1, 4))
def test_mutated_real_samples_give_a_result_or_parse_error(name, seed, rounds):
    rnd = random.Random(seed)
    text = rnd.choice(real_samples_for(name)).read_bytes().decode("utf-8", "replace")
    for _ in range(rounds):
        text = mutate(text, rnd)
    only_parse_error(PARSERS[name], text)


@pytest.mark.parametrize("name", sorted(PARSERS))
@FUZZ
@given(text=st.text(max_size=2000))
def test_arbitrary_text_gives_a_result_or_parse_error(name, text):
    only_parse_error(PARSERS[name], text)


@FUZZ
@given(text=st.one_of(st.none(), st.text(max_size=200)))
def test_server_time_of_any_header_is_a_time_or_none(text):
    parse_server_time(text)  # returns None for anything it cannot read; must not raise


def test_numbers_too_large_for_any_counter_do_not_crash_the_diskstats_parser():
    line = "   8       0 sda " + " ".join(["9" * 400] * 11) + "\n"
    only_parse_error(parse_proc_diskstats, line)
