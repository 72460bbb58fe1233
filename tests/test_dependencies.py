"""The packages depend on each other one way only (DESIGN §1, STYLE §1):

    dashboard (project + UI)  →  alerting → annotations → timeseries → servers → accounts
                                                                  ↘ analysis (pure)
    collectors  →  servers, timeseries, analysis;  collectors/parsers: standard library only
    incidents   →  collectors, alerting and everything below them

Nothing imports `dashboard`: it is the top. A module that reaches up a layer, or into dashboard,
fails here with the file and line, so a circle can never start."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
OURS = {"accounts", "servers", "timeseries", "annotations", "alerting", "collectors", "incidents", "analysis",
        "dashboard"}
FRAMEWORKS = {"django", "celery", "plotly", "psycopg2", "MySQLdb", "redis", "rest_framework"}

# package -> the packages of ours it may import (besides itself)
ALLOWED = {
    "accounts": {"analysis"},
    "servers": {"accounts", "analysis"},
    "timeseries": {"servers", "accounts", "analysis"},
    "annotations": {"timeseries", "servers", "accounts", "analysis"},
    "alerting": {"annotations", "timeseries", "servers", "accounts", "analysis"},
    "collectors": {"servers", "timeseries", "analysis"},
    # bursts read through the collectors and trigger on what alert evaluation computes
    "incidents": {"collectors", "alerting", "annotations", "timeseries", "servers", "accounts", "analysis"},
    "analysis": set(),
    "dashboard": OURS,
}
# Narrower rules for pure code, by folder: (forbidden top-level modules)
PURE = {
    "collectors/parsers": FRAMEWORKS | OURS - {"collectors"} | {"numpy", "scipy", "statsmodels"},
    "analysis": FRAMEWORKS | OURS - {"analysis"},
}


def imported_modules(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, module) for every absolute import, including those inside functions."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
    return found


def violations(package: str, relative_path: str, source: str) -> list[str]:
    """What the module at `relative_path` (inside `package`) imports that it may not."""
    allowed = ALLOWED[package] | {package}
    pure = next((banned for folder, banned in PURE.items() if relative_path.startswith(folder + "/")), None)
    bad = []
    for line, name in imported_modules(ast.parse(source)):
        root = name.split(".")[0]
        if root in OURS and root not in allowed:
            bad.append(f"{relative_path}:{line} imports {name} ({package} may not depend on {root})")
        elif pure is not None and root in pure and not name.startswith("collectors.parsers"):
            bad.append(f"{relative_path}:{line} imports {name} (pure code)")
    return bad


def _modules() -> list[tuple[str, Path]]:
    return [(package, path) for package in sorted(ALLOWED) for path in sorted((ROOT / package).rglob("*.py"))
            if "migrations" not in path.parts or package != "dashboard"]


MODULES = _modules()


@pytest.mark.parametrize("package,path", MODULES, ids=[str(p.relative_to(ROOT)) for _, p in MODULES])
def test_module_imports_only_downward(package: str, path: Path) -> None:
    bad = violations(package, str(path.relative_to(ROOT)), path.read_text(encoding="utf-8"))
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("package,source,culprit", [
    ("collectors", "from dashboard import views\n", "dashboard"),
    ("collectors", "def poll():\n    from dashboard.celery import app\n", "dashboard"),
    ("collectors", "import annotations.models\n", "annotations"),
    ("servers", "from timeseries.models import InnodbSample\n", "timeseries"),
    ("timeseries", "from alerting import evaluation\n", "alerting"),
    ("analysis", "import django.db\n", "django"),
    ("analysis", "from servers.models import Server\n", "servers"),
])
def test_the_check_catches_an_upward_import(package: str, source: str, culprit: str) -> None:
    path = f"{package}/parsers/x.py" if package == "collectors" and culprit == "django" else f"{package}/x.py"
    bad = violations(package, path, source)
    assert bad and culprit in bad[0]


def test_parsers_import_only_the_standard_library() -> None:
    assert violations("collectors", "collectors/parsers/x.py", "import numpy\n")
    assert violations("collectors", "collectors/parsers/x.py", "from django.db import models\n")
    assert not violations("collectors", "collectors/parsers/x.py", "import re\nfrom collectors.parsers import base\n")


def test_analysis_may_use_the_numeric_libraries() -> None:
    assert not violations("analysis", "analysis/x.py", "import numpy as np\nimport statsmodels.api as sm\n")


def _module_graph() -> dict[str, set[str]]:
    """module -> the modules of ours it imports (anywhere in the file, functions included)."""
    files = {}
    for package in ALLOWED:
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
            files[name] = path
    graph = {}
    for name, path in files.items():
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets |= {f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in files else node.module
                            for a in node.names}
            elif isinstance(node, ast.Import):
                targets |= {a.name for a in node.names}
        graph[name] = {t for t in targets if t in files and t != name}
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))
    return cycles


def test_no_module_imports_itself_through_others() -> None:
    assert import_cycles(_module_graph()) == []


def test_the_cycle_check_finds_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert import_cycles(graph) == [["a", "b", "c"]]
