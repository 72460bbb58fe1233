"""First-run setup on this machine: the admin user, and the local MariaDB as a monitored server
through a least-privilege account. Idempotent: running it again changes nothing that exists."""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass

import MySQLdb
from django.contrib.auth import get_user_model

from servers.models import Server

MONITOR_GRANTS = "PROCESS, REPLICATION CLIENT"


@dataclass(frozen=True)
class AdminResult:
    username: str
    created: bool
    generated_password: str | None


def ensure_admin(username: str, password: str | None) -> AdminResult:
    User = get_user_model()
    if User.objects.filter(username=username).exists():
        return AdminResult(username, False, None)
    generated = None
    if not password:
        generated = password = secrets.token_urlsafe(12)
    User.objects.create_superuser(username=username, email="", password=password)
    return AdminResult(username, True, generated)


def ensure_monitor_account(admin_conn_kwargs: dict, user: str, password: str) -> None:
    """Create (or re-key) the monitoring account: it can read status, never data."""
    conn = MySQLdb.connect(**admin_conn_kwargs)
    try:
        cur = conn.cursor()
        for host in ("localhost", "127.0.0.1", "::1"):
            cur.execute("CREATE USER IF NOT EXISTS %s@%s IDENTIFIED BY %s", (user, host, password))
            cur.execute("ALTER USER %s@%s IDENTIFIED BY %s", (user, host, password))
            cur.execute(f"GRANT {MONITOR_GRANTS} ON *.* TO %s@%s", (user, host))
            # performance_schema.variables_info names who set a variable (MySQL 8.0+).
            cur.execute("GRANT SELECT ON performance_schema.* TO %s@%s", (user, host))
    finally:
        conn.close()


def ensure_local_server(name: str, host: str, port: int, user: str, password: str) -> tuple[Server, bool]:
    server, created = Server.objects.get_or_create(
        name=name, defaults={"host": host, "port": port, "user": user, "tags": ["local"]}
    )
    if server.user != user or server.host != host or server.port != port or not _password_matches(server, password):
        server.host, server.port, server.user = host, port, user
        server.set_password(password)
        server.save()
    elif created:
        server.set_password(password)
        server.save()
    return server, created


def _password_matches(server: Server, password: str) -> bool:
    try:
        return server.get_password() == password
    except Exception:
        return False


def admin_conn_kwargs_from_env() -> dict:
    return {
        "host": os.environ.get("INNOWATCH_LOCAL_MYSQL_HOST", "127.0.0.1"),
        "port": int(os.environ.get("INNOWATCH_LOCAL_MYSQL_PORT", "3306")),
        "user": os.environ.get("INNOWATCH_LOCAL_MYSQL_ADMIN_USER", "root"),
        "password": os.environ.get("INNOWATCH_LOCAL_MYSQL_ADMIN_PASSWORD", ""),
        "connect_timeout": 5,
    }
