import datetime as dt

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from annotations.models import Annotation
from servers.models import Server


class Command(BaseCommand):
    help = 'Mark a moment on the charts: annotate --server NAME "text" [--tags a,b] [--kind deploy].'

    def add_arguments(self, parser):
        parser.add_argument("text")
        parser.add_argument("--server", help="Server name (default: every server)")
        parser.add_argument("--tags", default="", help="Comma-separated tags")
        parser.add_argument("--kind", default=Annotation.Kind.MANUAL, choices=Annotation.Kind.values)
        parser.add_argument("--time", help="ISO 8601 date-time (default: now)")

    def handle(self, *args, text, server, tags, kind, time, **options):
        target = None
        if server:
            target = Server.objects.filter(name=server).first()
            if target is None:
                raise CommandError(f"no server named {server!r}")
        when = timezone.now()
        if time:
            when = parse_datetime(time)
            if when is None:
                raise CommandError(f"--time {time!r} is not an ISO 8601 date-time")
            if timezone.is_naive(when):
                when = timezone.make_aware(when, dt.UTC)
        annotation = Annotation.objects.create(
            time=when, text=text, server=target, kind=kind,
            tags=[t.strip() for t in tags.split(",") if t.strip()],
        )
        self.stdout.write(f"annotation {annotation.pk} at {annotation.time.isoformat()}")
