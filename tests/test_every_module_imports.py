"""Every module of the product and the benchmarks imports in a fresh interpreter, in name order
(the order no test run follows): a stale import after a move, or a circle through a library's
settings, shows here instead of in a user's `make bench` or a management command."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("accounts", "servers", "timeseries", "annotations", "alerting", "collectors", "analysis", "dashboard",
            "bench")

SCRIPT = """
import importlib, os, pathlib, sys, warnings
warnings.simplefilter("ignore")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dashboard.settings_test")
import django
django.setup()
failed = []
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
    except SystemExit:
        pass
    except Exception as exc:
        failed.append(f"{name}: {exc!r}"[:300])
print("\\n".join(failed))
sys.exit(1 if failed else 0)
"""


def _modules() -> list[str]:
    names = []
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" in path.parts and path.stem[:1].isdigit():
                continue
            names.append(".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"))
    return sorted(names)


def test_every_module_imports_in_a_fresh_interpreter():
    done = subprocess.run([sys.executable, "-c", SCRIPT, *_modules()], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
