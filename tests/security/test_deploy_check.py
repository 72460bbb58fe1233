"""`manage.py check --deploy` is clean with the production settings the README documents."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRODUCTION = {
    "DJANGO_DEBUG": "false",
    "DJANGO_SECURE_COOKIES": "true",
    "DJANGO_SECURE_SSL_REDIRECT": "true",
    "DJANGO_SECURE_HSTS_SECONDS": "31536000",
    "DJANGO_SECRET_KEY": "x" * 10 + "a-long-random-production-secret-key-with-enough-entropy-1234567890",
    "DJANGO_SETTINGS_MODULE": "dashboard.settings",
}


def run_deploy_check(extra: dict[str, str]) -> subprocess.CompletedProcess:
    env = {**os.environ, **PRODUCTION, **extra}
    # The browser fixture sets this for Playwright's event loop; production never has it.
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    return subprocess.run([sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_deploy_check_is_clean_with_production_settings():
    result = run_deploy_check({})
    assert result.returncode == 0, result.stdout + result.stderr


def test_deploy_check_complains_without_them():
    result = run_deploy_check({"DJANGO_SECURE_COOKIES": "false", "DJANGO_SECURE_HSTS_SECONDS": "0"})
    assert result.returncode != 0 and "SESSION_COOKIE_SECURE" in result.stdout + result.stderr
