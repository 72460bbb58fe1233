from django.apps import AppConfig


class ServersConfig(AppConfig):
    """Monitored servers, their credentials and variable history."""

    name = "servers"
    verbose_name = "servers"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from servers import checks  # noqa: F401  (registers the system checks)
