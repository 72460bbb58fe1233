import sys
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from collectors import capture, disk_tasks, sources
from servers.models import Server


class Command(BaseCommand):
    help = ("Record a live server to a JSON-lines capture file (InnoDB status, global status, variables; "
            "/proc/diskstats and iostat when the server runs on this host). Read back with import_capture.")

    def add_arguments(self, parser):
        parser.add_argument("--server", required=True, help="name of a registered server")
        parser.add_argument("--seconds", type=float, default=60)
        parser.add_argument("--interval", type=float, default=1, help="seconds between readings")
        parser.add_argument("--out", required=True, help="the .jsonl file to write ('-' for stdout)")
        parser.add_argument("--store", action="store_true",
                            help="also store each reading as a poll of the server (its charts fill as usual)")

    def handle(self, *args, server, seconds, interval, out, store, **options):
        target = Server.objects.filter(name=server, imported=False).first()
        if target is None:
            raise CommandError(f"no live server named {server!r}")
        if seconds <= 0 or interval <= 0:
            raise CommandError("--seconds and --interval must be positive")
        params = sources.ConnectionParams(target.host, target.port, target.user, target.get_password(),
                                          settings.INNOWATCH_POLL_TIMEOUT_S)
        local = not target.host_agent and disk_tasks.disk_queue_for(target) == ""
        hook = capture.store_as_poll(target) if store else None
        stream = sys.stdout if out == "-" else Path(out).open("w", encoding="utf-8")
        try:
            count = capture.capture(params, stream, seconds=seconds, interval_s=interval, local_host=local,
                                    on_reading=hook)
        except sources.SourceError as exc:
            raise CommandError(f"{exc.kind}: {exc}") from None
        finally:
            if stream is not sys.stdout:
                stream.close()
        self.stderr.write(f"{count} readings of {target.name} written to {out}")
