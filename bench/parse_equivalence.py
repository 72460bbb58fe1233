"""Does a parser change change what is parsed? The working parser against the one at a git revision.

    python bench/parse_equivalence.py --against REVISION [--seed N] [--quick]

Both parse every fixture, its CRLF and leading-newline variants, the text cut, with one line
dropped and with one line cut in half at ~300 points per fixture, 60 random line mutations per
fixture (a line duplicated, digits garbled, text appended, a leading space, two lines swapped,
a space doubled) and every 100th status of the MariaDB capture; the records, as status_to_dict,
must be equal. A ParseError must be one on both sides. An exception other than ParseError from
the revision is counted and shown (the working parser must not raise one: it is re-raised).
Exit status 1 when any output differs. A speed-up must leave this at zero differences.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_parse import parser_at  # noqa: E402
from collectors.parsers import innodb_status as working  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures"


def parsed(module: ModuleType, text: str) -> Any:
    try:
        return module.status_to_dict(module.parse_innodb_status(text))
    except module.ParseError:
        return ("ParseError",)
    except Exception as error:
        if module is working:
            raise
        return ("raised", repr(error))


def corpus() -> list[tuple[str, str]]:
    texts = [(p.name, p.read_text(errors="replace")) for p in sorted((FIXTURES / "innodb_status").glob("*.txt"))]
    for capture in sorted((FIXTURES / "captures").glob("*.jsonl.gz")):
        with gzip.open(capture, "rt") as lines:
            statuses = [entry.get("text") or "" for entry in map(json.loads, lines)]
        texts += [(f"{capture.name}#{k}", t) for k, t in enumerate(statuses[::100]) if "INNODB MONITOR" in t]
    return texts


def variants(name: str, text: str, rng: random.Random, quick: bool):
    yield name, text
    yield f"{name} crlf", text.replace("\n", "\r\n")
    yield f"{name} leading newline", "\n" + text
    if quick:
        return
    lines = text.split("\n")
    for i in range(0, len(lines), max(1, len(lines) // 300)):
        yield f"{name} cut at {i}", "\n".join(lines[:i])
        yield f"{name} line {i} dropped", "\n".join(lines[:i] + lines[i + 1:])
        yield f"{name} cut in line {i}", "\n".join(lines[:i]) + "\n" + lines[i][: len(lines[i]) // 2]
    for _ in range(60):
        mutated = list(lines)
        i = rng.randrange(len(mutated))
        kind = rng.randrange(6)
        if kind == 0:
            mutated.insert(i, mutated[rng.randrange(len(mutated))])
        elif kind == 1:
            mutated[i] = "".join(c if not c.isdigit() or rng.random() < 0.7 else rng.choice("0123456789x ")
                                 for c in mutated[i])
        elif kind == 2:
            mutated[i] += rng.choice([" ", "  x", ",", "\t", " 12"])
        elif kind == 3:
            mutated[i] = " " + mutated[i]
        elif kind == 4:
            j = rng.randrange(len(mutated))
            mutated[i], mutated[j] = mutated[j], mutated[i]
        else:
            mutated[i] = mutated[i].replace(" ", "  ", 1)
        yield f"{name} mutation {kind} at line {i}", "\n".join(mutated)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--against", required=True, help="git revision of the reference parser")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="the fixtures and their variants only")
    args = parser.parse_args()
    reference = sys.modules[parser_at(args.against).__module__]
    rng = random.Random(args.seed)
    checked = differ = raised = 0
    for name, text in corpus():
        for what, variant in variants(name, text, rng, args.quick):
            checked += 1
            before, now = parsed(reference, variant), parsed(working, variant)
            if isinstance(before, tuple) and before[0] == "raised":
                raised += 1
                print(f"{args.against} raised on {what}: {before[1][:120]}")
            elif before != now:
                differ += 1
                if differ <= 5:
                    keys = [k for k in before if before[k] != now.get(k)] if isinstance(before, dict) else []
                    print(f"differs: {what} {keys or (str(before)[:80], str(now)[:80])}")
    print(f"{checked} texts, {differ} differ, {args.against} raised on {raised}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
