"""collectors/parsers/ and analysis/ stay pure: no framework, driver or numeric-library imports."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN = {"django", "celery", "plotly", "psycopg2", "MySQLdb", "numpy", "scipy"}
PURE_DIRS = {"collectors/parsers": FORBIDDEN, "analysis": FORBIDDEN | {"collectors"}}


def _imported_modules(tree: ast.AST) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
    return found


def _cases() -> list[tuple[Path, frozenset[str]]]:
    return [
        (path, frozenset(banned))
        for folder, banned in PURE_DIRS.items()
        if (ROOT / folder).is_dir()
        for path in sorted((ROOT / folder).rglob("*.py"))
    ]


CASES = _cases()


@pytest.mark.parametrize(
    "path,banned", CASES, ids=[str(path.relative_to(ROOT)) for path, _ in CASES]
)
def test_pure_module_imports_nothing_forbidden(path: Path, banned: frozenset[str]) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    bad = [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for line, name in _imported_modules(tree)
        if name.split(".")[0] in banned
    ]
    assert not bad, "\n".join(bad)


def test_purity_check_catches_forbidden_imports() -> None:
    tree = ast.parse("import numpy as np\nfrom django.db import models\nfrom . import x\n")
    roots = {name.split(".")[0] for _, name in _imported_modules(tree)}
    assert {"numpy", "django"} <= roots
