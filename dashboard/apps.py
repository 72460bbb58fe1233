from django.apps import AppConfig


class DashboardConfig(AppConfig):
    name = "dashboard"
    verbose_name = "innowatch"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from dashboard import checks  # noqa: F401  (registers the system checks)
