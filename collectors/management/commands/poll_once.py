from django.core.management.base import BaseCommand, CommandError

from collectors.tasks import poll_once
from servers.models import Server


class Command(BaseCommand):
    help = "Poll one server now, in this process, and print how the poll went."

    def add_arguments(self, parser):
        parser.add_argument("--server", required=True, help="Server name")

    def handle(self, *args, server, **options):
        target = Server.objects.filter(name=server).first()
        if target is None:
            raise CommandError(f"no server named {server!r}")
        run = poll_once(target)
        self.stdout.write(f"{target.name}: {run.status} {run.error_kind} {run.error}".rstrip())
