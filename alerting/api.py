"""GET /api/v1/alerts: firing and pending alerts now, and recent history."""

from __future__ import annotations

import datetime as dt

from django.http import JsonResponse
from django.views.decorators.http import require_GET

from accounts.auth import api_auth
from alerting.models import AlertEvent, AlertState

HISTORY_LIMIT = 200


def _epoch_iso(value):
    return None if value is None else dt.datetime.fromtimestamp(value, tz=dt.UTC).isoformat()


def state_json(row: AlertState) -> dict:
    return {
        "rule": row.rule.name,
        "severity": row.rule.severity,
        "server": row.server.name,
        "state": row.state,
        "value": row.last_value,
        "active_since": _epoch_iso(row.active_since),
        "firing_since": _epoch_iso(row.firing_since),
        "acknowledged_at": row.acknowledged_at.isoformat() if row.acknowledged_at else None,
        "ack_note": row.ack_note,
    }


def event_json(event: AlertEvent) -> dict:
    return {"rule": event.rule.name, "severity": event.severity, "server": event.server.name,
            "state": event.state, "ts": event.ts.isoformat(), "value": event.value, "silenced": event.silenced}


def current_states(state: str, server: str | None = None):
    rows = AlertState.objects.select_related("rule", "server").filter(state=state)
    if server:
        rows = rows.filter(server__name=server)
    return rows.order_by("server__name", "rule__name")


@api_auth
@require_GET
def alerts(request):
    server = request.GET.get("server") or None
    history = AlertEvent.objects.select_related("rule", "server").order_by("-ts", "-pk")
    if server:
        history = history.filter(server__name=server)
    return JsonResponse({
        "firing": [state_json(r) for r in current_states(AlertState.State.FIRING, server)],
        "pending": [state_json(r) for r in current_states(AlertState.State.PENDING, server)],
        "history": [event_json(e) for e in history[:HISTORY_LIMIT]],
    })
