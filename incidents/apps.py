from django.apps import AppConfig


class IncidentsConfig(AppConfig):
    """Triggered one-second captures (bursts) of a server in trouble, and their incident pages."""

    name = "incidents"
    verbose_name = "incidents"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from alerting import evaluation, notify
        from incidents import receivers  # noqa: F401  (each stored poll is checked against the triggers)
        from incidents.receivers import burst_evidence
        from incidents.triggers import CONDITIONS

        # the triggers read these from the histories alert evaluation loads
        evaluation.RECEIVER_METRICS.update(condition.metric for condition in CONDITIONS)

        if burst_evidence not in notify.EVIDENCE_LINKS:
            notify.EVIDENCE_LINKS.append(burst_evidence)
