"""Each live poll's stored sample is checked against the server's burst triggers."""

from __future__ import annotations

import logging

from django.dispatch import receiver

from servers.signals import sample_polled

log = logging.getLogger(__name__)


@receiver(sample_polled, dispatch_uid="incidents.check_triggers")
def check_triggers(sender, server, ts, **kwargs) -> None:
    from incidents.triggers import check_server

    try:
        check_server(server)
    except Exception:  # a trigger problem must never fail the poll that stored the sample
        log.exception("burst trigger check of %s failed", server.name)
