"""The Celery app and the one place every periodic schedule lives.

Each entry carries `expires` of about one period: a late run of a periodic task is worth less
than the next one, so a backlog after an outage drains instead of piling up.
"""

import os

from celery import Celery
from celery.signals import worker_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dashboard.settings")

# The tasks beat starts that are not polls (settings.INNOWATCH_PERIODIC_QUEUE).
PERIODIC_TASKS = frozenset({"alerting.evaluate_alerts", "timeseries.build_rollups", "timeseries.maintain_partitions",
                            "collectors.drain_spool", "incidents.sweep_bursts"})


def route_periodic_tasks(name, args, kwargs, options, task=None, **kw):
    """Celery router: the periodic tasks to INNOWATCH_PERIODIC_QUEUE when it is set (read at
    send time, so a settings override reaches it); everything else as it was."""
    from django.conf import settings

    queue = getattr(settings, "INNOWATCH_PERIODIC_QUEUE", "")
    return {"queue": queue} if queue and name in PERIODIC_TASKS else None


app = Celery("innowatch")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["collectors", "timeseries"])
app.autodiscover_tasks(["alerting"], related_name="evaluation")
app.autodiscover_tasks(["alerting"], related_name="notify")
app.autodiscover_tasks(["collectors"], related_name="spool")
app.autodiscover_tasks(["incidents"], related_name="bursts")

app.conf.beat_schedule = {
    "schedule-polls": {
        "task": "collectors.schedule_polls",
        "schedule": 1.0,
        "options": {"expires": 1.0},
    },
    "heartbeat": {
        "task": "collectors.heartbeat",
        "schedule": 10.0,
        "options": {"expires": 10.0},
    },
    "maintain-partitions": {
        "task": "timeseries.maintain_partitions",
        "schedule": 3600.0,
        "options": {"expires": 600.0},
    },
    "build-rollups": {
        "task": "timeseries.build_rollups",
        "schedule": 60.0,
        "options": {"expires": 60.0},
    },
    "evaluate-alerts": {
        "task": "alerting.evaluate_alerts",
        "schedule": 10.0,
        "options": {"expires": 10.0},
    },
    # Bursts whose one-second chain broke are closed; bursts past their retention dropped.
    "sweep-bursts": {
        "task": "incidents.sweep_bursts",
        "schedule": 60.0,
        "options": {"expires": 60.0},
    },
    # Readings spooled in Redis while PostgreSQL was unavailable (collectors/spool.py).
    "drain-spool": {
        "task": "collectors.drain_spool",
        "schedule": 10.0,
        "options": {"expires": 10.0},
    },
}


@worker_init.connect
def _refuse_to_start_with_wrong_key(**kwargs):
    """A worker with the wrong encryption key would fail every poll: stop it at startup instead."""
    from servers.checks import stored_secrets_readable

    problem = stored_secrets_readable()
    if problem:
        raise SystemExit(f"innowatch worker not started: {problem}")
