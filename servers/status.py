"""A server's state in one word, as the overview, the server page and the API show it."""

from __future__ import annotations

import datetime as dt

from servers.models import Server


def server_status(server: Server, now: dt.datetime | None = None) -> str:
    """One word: ok / stale / unreachable / never / imported (alert states come from alerting)."""
    if server.imported:
        return "imported"
    if server.last_poll_status not in (Server.PollStatus.OK, Server.PollStatus.NEVER):
        return "unreachable" if server.last_poll_status == Server.PollStatus.UNREACHABLE else server.last_poll_status
    if server.last_sample_at is None:
        return "never"
    return "stale" if server.is_stale(now) else "ok"
