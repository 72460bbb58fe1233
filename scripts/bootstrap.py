#!/usr/bin/env python
"""Steps `make run` and `make test` take before Django can start (standard library + psycopg2).

  bootstrap.py env   write .env with fresh secrets if it does not exist (never overwrites)
  bootstrap.py db    create the PostgreSQL role and database if missing
"""

from __future__ import annotations

import base64
import os
import secrets
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def write_env(path: Path = ROOT / ".env") -> None:
    if path.exists():
        return
    fernet_key = base64.urlsafe_b64encode(secrets.token_bytes(32)).decode()
    path.write_text(
        "# Written by `make` on first run; see .env.example for every setting.\n"
        f"DJANGO_SECRET_KEY={secrets.token_urlsafe(50)}\n"
        f"INNOWATCH_ENCRYPTION_KEY={fernet_key}\n"
        f"INNOWATCH_LOCAL_MONITOR_PASSWORD={secrets.token_urlsafe(18)}\n"
    )
    path.chmod(0o600)
    print(f"wrote {path} with fresh secrets")


def _load_env() -> None:
    env = ROOT / ".env"
    if env.exists():
        for line in env.read_text().splitlines():
            if "=" in line and not line.lstrip().startswith("#"):
                key, _, value = line.partition("=")
                os.environ.setdefault(key.strip(), value.strip())


def create_database() -> None:
    import psycopg2
    from psycopg2 import sql

    _load_env()
    name = os.environ.get("INNOWATCH_DB_NAME", "innowatch")
    role = os.environ.get("INNOWATCH_DB_USER", "innowatch")
    password = os.environ.get("INNOWATCH_DB_PASSWORD", "")
    conn = psycopg2.connect(
        host=os.environ.get("INNOWATCH_DB_HOST", "127.0.0.1"),
        port=int(os.environ.get("INNOWATCH_DB_PORT", "5432")),
        user=os.environ.get("INNOWATCH_PG_SUPERUSER", "postgres"),
        password=os.environ.get("INNOWATCH_PG_SUPERUSER_PASSWORD", ""),
        dbname="postgres",
        connect_timeout=5,
    )
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [role])
    if cur.fetchone() is None:
        # CREATEDB: the test runner creates and drops its own test database.
        cur.execute(sql.SQL("CREATE ROLE {} LOGIN CREATEDB PASSWORD %s").format(sql.Identifier(role)), [password or None])
        print(f"created PostgreSQL role {role}")
    cur.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name])
    if cur.fetchone() is None:
        cur.execute(sql.SQL("CREATE DATABASE {} OWNER {}").format(sql.Identifier(name), sql.Identifier(role)))
        print(f"created PostgreSQL database {name}")
    conn.close()


if __name__ == "__main__":
    step = sys.argv[1] if len(sys.argv) > 1 else ""
    if step == "env":
        write_env()
    elif step == "db":
        create_database()
    else:
        sys.exit(__doc__)
