import os

from django.core.management.base import BaseCommand

from servers import local_setup


class Command(BaseCommand):
    help = "Create the admin user and register the local MariaDB/MySQL through a monitoring account."

    def add_arguments(self, parser):
        parser.add_argument("--skip-mysql", action="store_true", help="Only create the admin user.")

    def handle(self, *args, skip_mysql, **options):
        username = os.environ.get("INNOWATCH_ADMIN_USER", "admin")
        result = local_setup.ensure_admin(username, os.environ.get("INNOWATCH_ADMIN_PASSWORD"))
        if result.generated_password:
            self.stdout.write(self.style.WARNING(
                f"Created admin user {username!r} with password {result.generated_password!r} "
                "(shown once; set INNOWATCH_ADMIN_PASSWORD to choose it, or run manage.py changepassword)."
            ))
        elif result.created:
            self.stdout.write(f"Created admin user {username!r}.")
        if skip_mysql:
            return
        admin = local_setup.admin_conn_kwargs_from_env()
        user = os.environ.get("INNOWATCH_LOCAL_MONITOR_USER", "innowatch")
        password = os.environ["INNOWATCH_LOCAL_MONITOR_PASSWORD"]
        local_setup.ensure_monitor_account(admin, user, password)
        server, created = local_setup.ensure_local_server(
            os.environ.get("INNOWATCH_LOCAL_SERVER_NAME", "local-mariadb"),
            admin["host"], admin["port"], user, password,
        )
        self.stdout.write(f"{'Registered' if created else 'Local server is'} {server.name} "
                          f"({server.host}:{server.port}, user {user}, grants {local_setup.MONITOR_GRANTS}).")
