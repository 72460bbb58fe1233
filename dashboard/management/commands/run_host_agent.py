from django.core.management.base import BaseCommand, CommandError

from dashboard.celery import app


class Command(BaseCommand):
    help = ("Run the host agent on a database host: a Celery worker that consumes only the queue "
            "host.<name>, where the fan-out sends the disk polls of servers whose host_agent is <name>. "
            "Same as `celery -A dashboard worker -Q host.<name>`; it needs this project's settings "
            "(PostgreSQL and Redis reachable) on that host.")

    def add_arguments(self, parser):
        parser.add_argument("--name", required=True, help="the host_agent name set on the servers")
        parser.add_argument("--loglevel", default="info")

    def handle(self, *args, name, loglevel, **options):
        if not name.replace("-", "").replace("_", "").replace(".", "").isalnum():
            raise CommandError("--name: letters, digits, '-', '_' and '.' only")
        app.worker_main(["worker", "-Q", f"host.{name}", "-n", f"agent-{name}@%h", "--concurrency", "1",
                         "--loglevel", loglevel])
