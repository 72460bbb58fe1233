"""Connections to monitored servers, kept open per worker process and reused between polls.

A fresh connection costs a TCP handshake, the MySQL handshake and authentication: on the local
MariaDB about as much worker CPU as the poll's own reads. The pool keeps one idle connection per
(host, port, user, password) for `idle_timeout_s` (longer than a poll interval, shorter than the
server's `wait_timeout`), at most `max_idle` in all. A connection that fails is closed, never
reused; a reused one that the server dropped meanwhile (`wait_timeout`, a restart) is retried once
on a fresh connection. A changed password is a different key: the old connections are closed at
once, so a revoked credential stops being used on the next poll.

No Django here (sources.py's layer); thread-safe, for a worker running polls in threads.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections.abc import Callable
from typing import Any

# Errors after which the same call on a fresh connection may succeed: the server closed an idle
# connection (2006 "gone away", 2013 "lost connection") or was restarted.
_STALE_CONNECTION_CODES = frozenset({2006, 2013, 4031})
# Polls of one server rarely overlap; where many entries point at one server (a proxy, the bench's
# servers that are all the local MariaDB), more are kept so that overlapping polls stay warm.
MAX_IDLE_PER_SERVER = 2


def _code(exc: BaseException) -> int | None:
    args = getattr(exc, "args", ())
    return args[0] if args and isinstance(args[0], int) else None


class ConnectionPool:
    def __init__(self, connect: Callable[[Any], Any], *, max_idle: int = 512, idle_timeout_s: float = 60.0,
                 max_idle_per_server: int = MAX_IDLE_PER_SERVER):
        self._connect = connect
        self.max_idle = max_idle
        self.max_idle_per_server = max_idle_per_server
        self.idle_timeout_s = idle_timeout_s
        self._idle: dict[tuple, list[tuple[float, Any]]] = {}
        self._lock = threading.Lock()
        self.opened = 0  # connections made, for the bench and tests
        self._swept_at = 0.0
        os.register_at_fork(after_in_child=self.forget_all)

    @staticmethod
    def key(params) -> tuple:
        secret = hashlib.sha256(params.password.encode()).hexdigest()[:16]
        return params.host, params.port, params.user, secret

    def run(self, params, work: Callable[[Any], Any]) -> Any:
        """`work(conn)` on a pooled connection to `params`; the connection goes back afterwards
        unless `work` raised. A reused connection that turns out dead is replaced once."""
        key = self.key(params)
        conn = self._take(key)
        if conn is not None:
            try:
                result = work(conn)
            except Exception as exc:
                _close(conn)
                if _code(exc.__cause__ or exc) not in _STALE_CONNECTION_CODES and not _stale(exc):
                    raise
            else:
                self._give_back(key, conn)
                return result
        conn = self._open(params)
        try:
            result = work(conn)
        except BaseException:
            _close(conn)
            raise
        self._give_back(key, conn)
        return result

    def _open(self, params):
        conn = self._connect(params)
        self.opened += 1
        return conn

    def _take(self, key: tuple):
        now = time.monotonic()
        with self._lock:
            self._drop_other_credentials(key)
            idle = self._idle.get(key)
            while idle:
                since, conn = idle.pop()
                if now - since <= self.idle_timeout_s:
                    return conn
                _close(conn)
        return None

    def _drop_other_credentials(self, key: tuple) -> None:
        for other in [k for k in self._idle if k[:3] == key[:3] and k != key]:
            for _, conn in self._idle.pop(other):
                _close(conn)

    def _give_back(self, key: tuple, conn) -> None:
        now = time.monotonic()
        with self._lock:
            idle = self._idle.setdefault(key, [])
            if len(idle) >= self.max_idle_per_server:
                _close(conn)  # polls of one server overlapped: no need to keep every connection
            else:
                idle.append((now, conn))
            self._evict(now)

    def _evict(self, now: float) -> None:
        """Close connections idle too long (swept once a second), then the oldest past `max_idle`."""
        count = sum(len(idle) for idle in self._idle.values())
        if count <= self.max_idle and now - self._swept_at < 1.0:
            return
        self._swept_at = now
        entries = sorted(((since, key, conn) for key, idle in self._idle.items() for since, conn in idle),
                         key=lambda e: e[0], reverse=True)
        keep = [e for e in entries if now - e[0] <= self.idle_timeout_s][: self.max_idle]
        kept = {id(conn) for _, _, conn in keep}
        for _, _, conn in entries:
            if id(conn) not in kept:
                _close(conn)
        self._idle = {}
        for since, key, conn in reversed(keep):
            self._idle.setdefault(key, []).append((since, conn))

    def idle_count(self) -> int:
        with self._lock:
            return sum(len(v) for v in self._idle.values())

    def forget_all(self) -> None:
        """In a forked child: the parent's sockets are not ours to use or to close (COM_QUIT)."""
        self._idle = {}
        self._lock = threading.Lock()

    def close_all(self) -> None:
        with self._lock:
            for idle in self._idle.values():
                for _, conn in idle:
                    _close(conn)
            self._idle = {}


def _stale(exc: BaseException) -> bool:
    """A classified SourceError whose message carries a stale-connection code ("2006: ...")."""
    head = str(exc).split(":", 1)[0]
    return head.isdigit() and int(head) in _STALE_CONNECTION_CODES


def _close(conn) -> None:
    try:
        conn.close()
    except Exception:  # already closed or broken: nothing left to release
        pass
