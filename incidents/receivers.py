"""A server's burst triggers are checked when alert evaluation has looked at it (every 10 s, for
every polled server, a batch at a time) and after an on-demand poll (poll_once)."""

from __future__ import annotations

import logging

from django.conf import settings
from django.dispatch import receiver

from servers.signals import sample_polled, servers_evaluated

log = logging.getLogger(__name__)


def _check(server, now=None, history=None, config=None) -> None:
    from incidents.triggers import check_server

    try:
        check_server(server, now, history, config)
    except Exception:  # a trigger problem must never fail the poll or the evaluation that asked
        log.exception("burst trigger check of %s failed", server.name)


@receiver(sample_polled, dispatch_uid="incidents.check_triggers")
def check_triggers(sender, server, ts, **kwargs) -> None:
    _check(server)


@receiver(servers_evaluated, dispatch_uid="incidents.check_triggers_on_evaluation")
def check_triggers_on_evaluation(sender, servers, now, histories=None, **kwargs) -> None:
    from incidents.triggers import configs_for

    try:
        configs = configs_for(servers)
    except Exception:
        log.exception("burst trigger settings of %d servers not read", len(servers))
        return
    for server in servers:
        _check(server, now, (histories or {}).get(server.pk), configs[server.pk])


def burst_evidence(server, now) -> tuple[str, str] | None:
    """An alert that fires while its server is being captured links to the capture."""
    from incidents.models import Burst

    burst = Burst.objects.filter(server=server, started_at__lte=now, ends_at__gte=now).order_by("-started_at").first()
    if burst is None or (burst.finished_at is not None and burst.finished_at < now):
        return None
    return "one-second capture", f"{settings.INNOWATCH_BASE_URL.rstrip('/')}/bursts/{burst.pk}/"
