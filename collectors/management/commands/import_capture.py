from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from collectors.imports import import_capture


class Command(BaseCommand):
    help = ("Import a capture (a JSON-lines file written by `capture`, or a pt-stalk folder) with its own "
            "timestamps. A server name that does not exist yet becomes an imported server.")

    def add_arguments(self, parser):
        parser.add_argument("path")
        parser.add_argument("--server", required=True)
        parser.add_argument("--tz", default="UTC",
                            help="time zone of the capture host's clock (pt-stalk writes local times)")

    def handle(self, *args, path, server, tz, **options):
        if not Path(path).exists():
            raise CommandError(f"{path}: no such file or folder")
        result = import_capture(Path(path), server, tz)
        verb = "created imported server" if result.created else "into server"
        self.stdout.write(f"{verb} {result.server.name}: {result.samples} samples, "
                          f"{result.disk_rows} disk rows, {result.annotations} detected changes")
        for warning in result.warnings[:20]:
            self.stderr.write(f"warning: {warning}")
