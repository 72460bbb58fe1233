"""The bench database `innowatch_bench`: recreated and migrated by each run, never the user's `innowatch`."""

from __future__ import annotations

import os

BENCH_DB = "innowatch_bench"


def use_bench_database(name: str = BENCH_DB, keep: bool = False) -> bool:
    """Point Django at database `name` (innowatch_bench), dropped and created afresh unless `keep`
    (then created only when missing); call before django.setup(). Returns whether it was kept."""
    import psycopg2

    os.environ["INNOWATCH_DB_NAME"] = name
    # Always the production settings: started from pytest, settings_test (its own queue and
    # Redis DB) would otherwise reach the worker and beat the bench starts, and they would not meet.
    os.environ["DJANGO_SETTINGS_MODULE"] = "dashboard.settings"
    params = {
        "host": os.environ.get("INNOWATCH_DB_HOST", "127.0.0.1"),
        "port": int(os.environ.get("INNOWATCH_DB_PORT", "5432")),
        "user": os.environ.get("INNOWATCH_DB_USER", "innowatch"),
        "password": os.environ.get("INNOWATCH_DB_PASSWORD", ""),
        "dbname": "postgres",
    }
    conn = psycopg2.connect(**params)
    conn.autocommit = True
    with conn.cursor() as cur:
        cur.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,))
        kept = keep and cur.fetchone() is not None
        if not kept:
            cur.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            cur.execute(f"CREATE DATABASE {name}")
    conn.close()
    return kept


def migrate() -> None:
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False, skip_checks=True)
