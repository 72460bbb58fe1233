import os

from django.core.management.base import BaseCommand, CommandError

from dashboard import demo, demo_purge
from servers import local_setup
from servers.models import Server


class Command(BaseCommand):
    help = ("Run sysbench on the local MariaDB, switch adaptive flushing ON and raise io_capacity on a "
            "schedule, then the purge act (throttled purge, more purge threads, a held snapshot), and print "
            "the detected changes with their effect reports and who held purge back. Restores the settings.")

    def add_arguments(self, parser):
        parser.add_argument("--server", default=os.environ.get("INNOWATCH_LOCAL_SERVER_NAME", "local-mariadb"))
        parser.add_argument("--phase-seconds", type=float, default=120, help="Length of each of the 3 phases")
        parser.add_argument("--interval", type=float, default=2, help="Seconds between polls")
        parser.add_argument("--acts", default="flushing,purge", help="Which acts: flushing, purge, or both")
        parser.add_argument("--purge-phase-seconds", type=float, default=60,
                            help="Purge act: seconds throttled, then seconds with more purge threads")
        parser.add_argument("--hold-seconds", type=float, default=120, help="Purge act: how long the snapshot is held")

    def handle(self, *args, server, phase_seconds, interval, acts, purge_phase_seconds, hold_seconds, **options):
        target = Server.objects.filter(name=server).first()
        if target is None:
            raise CommandError(f"no server named {server!r}; run `manage.py setup_local` first")
        def say(line: str) -> None:
            self.stdout.write(line)
            self.stdout.flush()  # progress shows as it happens, also when piped to a file

        admin = local_setup.admin_conn_kwargs_from_env()
        wanted = {a.strip() for a in acts.split(",")}
        if "flushing" in wanted:
            lines = demo.run_demo(target, admin, phase_s=phase_seconds, interval_s=interval, say=say)
            self.stdout.write("\n".join(["", "Detected changes and their effects:", *lines, ""]))
        if "purge" in wanted:
            lines = demo_purge.run_purge_act(target, admin, phase_s=purge_phase_seconds, hold_s=hold_seconds,
                                             interval_s=interval, say=say)
            self.stdout.write("\n".join(["", "Purge: who held it back, and the purge-threads change:", *lines]))
