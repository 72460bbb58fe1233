"""Evaluate the alert rules over stored history, with the same code as live evaluation."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError
from django.utils.dateparse import parse_datetime

from alerting.evaluation import backtest
from servers.models import Server


def _when(text: str):
    value = parse_datetime(text)
    if value is None:
        raise CommandError(f"not an ISO date-time: {text!r}")
    if value.tzinfo is None:
        raise CommandError(f"give a time zone (e.g. Z or +00:00): {text!r}")
    return value


class Command(BaseCommand):
    help = "List when each alert rule would have fired and resolved on a server's stored history."

    def add_arguments(self, parser):
        parser.add_argument("--server", required=True)
        parser.add_argument("--start", required=True, help="ISO 8601 with zone")
        parser.add_argument("--end", required=True, help="ISO 8601 with zone")
        parser.add_argument("--step", type=float, default=10.0, help="evaluation interval, seconds")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **opts):
        server = Server.objects.filter(name=opts["server"]).first()
        if server is None:
            raise CommandError(f"no server named {opts['server']!r}")
        start, end = _when(opts["start"]), _when(opts["end"])
        if end <= start or opts["step"] <= 0:
            raise CommandError("need --start < --end and --step > 0")
        incidents = backtest(server, start, end, step_s=opts["step"])
        if opts["json"]:
            self.stdout.write(json.dumps(incidents))
            return
        for row in incidents:
            self.stdout.write(f"{row['fired_at']}  →  {row['resolved_at'] or 'still firing'}  "
                              f"{row['severity']:8}  {row['rule']}")
        self.stdout.write(f"{len(incidents)} incident(s)")
