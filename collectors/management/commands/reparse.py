from django.core.management.base import BaseCommand, CommandError
from django.utils.dateparse import parse_datetime

from collectors.reparse import reparse
from servers.models import Server


class Command(BaseCommand):
    help = "Re-parse a server's stored raw status text with the current parser (after a parser fix)."

    def add_arguments(self, parser):
        parser.add_argument("--server", required=True)
        parser.add_argument("--since", required=True, help="ISO 8601 time, e.g. 2026-11-01T00:00:00Z")
        parser.add_argument("--until", help="ISO 8601 time (default: now)")

    def handle(self, *args, server, since, until, **options):
        target = Server.objects.filter(name=server).first()
        if target is None:
            raise CommandError(f"no server named {server!r}")
        start = parse_datetime(since)
        end = parse_datetime(until) if until else None
        if start is None or (until and end is None):
            raise CommandError("--since/--until must be ISO 8601 date-times")
        updated, failed = reparse(target, start, end)
        self.stdout.write(f"re-parsed {updated} sample(s); {failed} could not be parsed")
