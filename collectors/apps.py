from django.apps import AppConfig
from django.db.models.signals import post_delete, post_save


class CollectorsConfig(AppConfig):
    """Polling, capture import/export and the outage spool. No models: an app so that its
    management commands (poll_once, capture, import_capture, ...) are found, and so that a saved
    or deleted server reaches the fan-out's roster (collectors.scheduling) on the next tick."""

    name = "collectors"
    verbose_name = "collectors"

    def ready(self) -> None:
        from servers.models import Server

        post_save.connect(_roster_changed, sender=Server, dispatch_uid="collectors-roster-save")
        post_delete.connect(_roster_changed, sender=Server, dispatch_uid="collectors-roster-delete")


def _roster_changed(**kwargs) -> None:
    from collectors.scheduling import mark_roster_dirty

    mark_roster_dirty()
