from django.apps import AppConfig


class DashboardConfig(AppConfig):
    """The project: settings, URLs, the Celery app, and the UI pages."""

    name = "dashboard"
    verbose_name = "innowatch"
    default_auto_field = "django.db.models.BigAutoField"
