from django.apps import AppConfig


class CollectorsConfig(AppConfig):
    """Polling, capture import/export and the outage spool. No models: an app only so that its
    management commands (poll_once, capture, import_capture, ...) are found."""

    name = "collectors"
    verbose_name = "collectors"
