"""manage.py generate_history --servers N --days D --interval S [--start ISO]: synthetic history."""

from django.core.management.base import BaseCommand, CommandError
from django.utils.dateparse import parse_datetime

from dashboard.history import generate_history


class Command(BaseCommand):
    help = "Write synthetic sample history (servers marked synthetic) for benchmarks and demos."

    def add_arguments(self, parser):
        parser.add_argument("--servers", type=int, default=1)
        parser.add_argument("--days", type=float, default=1.0)
        parser.add_argument("--interval", type=int, default=10, help="seconds between samples")
        parser.add_argument("--start", help="ISO 8601 start (default: so that the history ends now)")
        parser.add_argument("--prefix", default="synthetic", help="server name prefix")

    def handle(self, *args, servers, days, interval, start, prefix, **options):
        if servers < 1 or days <= 0 or interval < 1:
            raise CommandError("--servers, --days and --interval must be positive")
        start_at = None
        if start:
            start_at = parse_datetime(start)
            if start_at is None or start_at.tzinfo is None:
                raise CommandError(
                    f"--start {start!r} is not an ISO 8601 date-time with a zone (e.g. 2026-11-01T00:00:00Z)"
                )
        result = generate_history(servers, days, interval, start_at, prefix=prefix, log=self.stdout.write)
        rate = result["rows"] / result["seconds"] if result["seconds"] else 0
        self.stdout.write(f"wrote {result['rows']} samples from {result['start']:%Y-%m-%d %H:%M} to "
                          f"{result['end']:%Y-%m-%d %H:%M} in {result['seconds']:.1f} s ({rate:,.0f} samples/s)")
