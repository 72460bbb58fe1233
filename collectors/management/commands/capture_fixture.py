from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from collectors.reparse import capture_fixture
from collectors.sources import SourceError
from servers.models import Server


class Command(BaseCommand):
    help = "Save a server's live SHOW ENGINE INNODB STATUS as a parser test fixture."

    def add_arguments(self, parser):
        parser.add_argument("--server", required=True)
        parser.add_argument("--case", default="capture", help="What the sample shows, e.g. flush-storm")
        parser.add_argument("--dir", default=str(Path(settings.BASE_DIR) / "tests" / "fixtures" / "innodb_status"))

    def handle(self, *args, server, case, dir, **options):
        target = Server.objects.filter(name=server).first()
        if target is None:
            raise CommandError(f"no server named {server!r}")
        try:
            path = capture_fixture(target, case, Path(dir))
        except SourceError as exc:
            raise CommandError(f"{exc.kind}: {exc}") from None
        self.stdout.write(str(path))
