from django.apps import AppConfig


class AlertingConfig(AppConfig):
    """Alert rules, states, silences and notifications."""

    name = "alerting"
    verbose_name = "alerting"
    default_auto_field = "django.db.models.BigAutoField"
