import os

from django.core.management.base import BaseCommand, CommandError

from dashboard import demo
from servers import local_setup
from servers.models import Server


class Command(BaseCommand):
    help = ("Run sysbench on the local MariaDB, switch adaptive flushing ON and raise io_capacity on a "
            "schedule, and print the detected changes with their effect reports. Restores the settings.")

    def add_arguments(self, parser):
        parser.add_argument("--server", default=os.environ.get("INNOWATCH_LOCAL_SERVER_NAME", "local-mariadb"))
        parser.add_argument("--phase-seconds", type=float, default=120, help="Length of each of the 3 phases")
        parser.add_argument("--interval", type=float, default=2, help="Seconds between polls")

    def handle(self, *args, server, phase_seconds, interval, **options):
        target = Server.objects.filter(name=server).first()
        if target is None:
            raise CommandError(f"no server named {server!r}; run `manage.py setup_local` first")
        def say(line: str) -> None:
            self.stdout.write(line)
            self.stdout.flush()  # progress shows as it happens, also when piped to a file

        lines = demo.run_demo(target, local_setup.admin_conn_kwargs_from_env(), phase_s=phase_seconds,
                              interval_s=interval, say=say)
        self.stdout.write("\n".join(["", "Detected changes and their effects:", *lines]))
