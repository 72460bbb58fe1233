"""Notifications: one grouped message per server per evaluation, through Apprise (Slack, PagerDuty,
Opsgenie, Teams, email, ...) and signed webhooks in Alertmanager's format.

Each message to each channel is a ``NotificationDelivery`` row; ``deliver_notification`` sends
it and retries with exponential backoff (Celery retry), recording attempts, response code and
error, so a flaky receiver delays a page instead of losing it.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import hmac
import json
import math
import urllib.error
import urllib.parse
import urllib.request

import apprise
from celery import shared_task
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from alerting.models import AlertRule, NotificationChannel, NotificationDelivery
from timeseries.models import ReadViewHolder, SemaphoreWaitSample

_RANK = {AlertRule.Severity.INFO: 0, AlertRule.Severity.WARNING: 1, AlertRule.Severity.CRITICAL: 2}
MAX_RETRIES = 6
WEBHOOK_TIMEOUT_S = 10


class DeliveryError(Exception):
    def __init__(self, message: str, response_code: int | None = None):
        super().__init__(message)
        self.response_code = response_code


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if hours else f"{minutes} min {secs} s" if minutes else f"{secs} s"


def _shown(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.1f}"


def _line(notice, now=None) -> str:
    """`[FIRING] ckpt (critical): checkpoint_age_pct_of_async = 92.0 (> 80)`; a resolved one adds
    how long it lasted and its peak."""
    rule, value = notice.rule, notice.state.last_value
    line = (f"[{notice.kind.upper()}] {rule.name} ({rule.severity}): {rule.metric} = {_shown(value)} "
            f"({rule.op} {rule.threshold:g})")
    since = getattr(notice, "firing_since", None)
    if notice.kind == "resolved" and since and now is not None:
        line += f", lasted {_duration(now.timestamp() - since)}"
    peak = getattr(notice.state, "peak_value", None)
    if notice.kind == "resolved" and peak is not None:
        line += f", peak {_shown(peak)}"
    return line


# Rules about the checkpoint age: their messages say how long until InnoDB stalls writes.
RUNWAY_METRICS = ("checkpoint_age_pct_of_async", "checkpoint_age_pct_of_sync", "checkpoint_age_bytes",
                  "runway_minutes")


def runway_line(notices, values: dict | None) -> str | None:
    """"runway: 12 min to the sync point at the current net redo rate" for checkpoint-age alerts."""
    if not values or not any(n.rule.metric in RUNWAY_METRICS and n.kind == "firing" for n in notices):
        return None
    runway = values.get("runway_minutes")
    if runway is None:
        return None
    if not math.isfinite(runway):
        return "runway: the checkpoint age is not growing (no stall ahead at the current redo rate)"
    return f"runway: {runway:,.1f} min to the sync point at the current net redo rate"


LATCH_METRICS = ("semaphore_longest_wait_s", "semaphore_waits")


def latch_cause(server, now) -> dict | None:
    """The longest latch wait at the server's latest poll, named by where the latch was created."""
    wait = (SemaphoreWaitSample.objects.filter(server=server, ts__gte=_latest_polls_since(server, now), ts__lte=now)
            .order_by("-ts", "-seconds").first())
    if wait is None:
        return None
    text = (f"longest latch wait: thread {wait.thread_id} waited {wait.seconds:.0f} s at {wait.file}:{wait.line}"
            f" on {wait.latch or 'a latch'} created at {wait.created_file or '?'}:{wait.created_line or '?'}")
    return {"text": text, "thread_id": wait.thread_id, "seconds": wait.seconds, "waited_at": f"{wait.file}:{wait.line}",
            "created_at": f"{wait.created_file}:{wait.created_line}", "latch": wait.latch or None}


HLL_METRICS = ("history_list_length", "hll_growth_per_h", "hll_minutes_to_high")


def _latest_polls_since(server, now) -> dt.datetime:
    """The start of "the server's latest polls": three intervals and a little slack back."""
    return now - dt.timedelta(seconds=3 * max(server.poll_interval_s, 1) + 5)


def purge_cause(server, now) -> dict | None:
    """The oldest read view's holder at the server's latest polls: who holds purge back."""
    holder = (ReadViewHolder.objects.filter(server=server, ts__gte=_latest_polls_since(server, now), ts__lte=now,
                                            rank=0)
              .order_by("-ts").first())
    if holder is None:
        return None
    who = f"{holder.user or '?'}@{holder.host or '?'}"
    text = (f"oldest read view: thread {holder.thread_id} {who}, open {holder.age_s} s"
            + (f", statement: {holder.statement[:200]}" if holder.statement else ""))
    return {"text": text, "thread_id": holder.thread_id, "user": holder.user or None, "host": holder.host or None,
            "trx_id": holder.trx_id or None, "age_s": holder.age_s, "statement": holder.statement or None,
            "seen_at": holder.ts.isoformat()}


def cause_for(server, metric: str, now) -> dict | None:
    """The likely cause the dashboard knows for an alert on `metric`, or None."""
    if metric in HLL_METRICS:
        return purge_cause(server, now)
    if metric in LATCH_METRICS:
        return latch_cause(server, now)
    return None


# Apps above alerting add evidence to every message: each callable (server, now) gives a
# (label, URL) or None; the incidents app adds the one-second capture running at the time.
EVIDENCE_LINKS: list = []


def _evidence(server, now) -> list[dict]:
    found = (link(server, now) for link in EVIDENCE_LINKS)
    return [{"label": label, "url": url} for label, url in (f for f in found if f)]


def build_message(server, notices, now, values: dict | None = None) -> tuple[str, str, dict]:
    """Subject, plain text and the JSON payload (Slack-compatible ``text``) for one group: each
    alert's value against its threshold, the runway for checkpoint-age alerts (``values``: the
    evaluation's figures), the likely cause the dashboard knows (the oldest read view's holder,
    the longest latch wait) and a link to the server page over the alert's time range."""
    kinds = sorted({n.kind for n in notices})
    kind = kinds[0] if len(kinds) == 1 else "mixed"
    worst = max((n.rule.severity for n in notices), key=lambda s: _RANK[s])
    subject = f"[innowatch {kind.upper()}] {server.name}: " + ", ".join(n.rule.name for n in notices)
    lines = [f"{server.name} — {len(notices)} alert(s), {worst}"] + [_line(n, now) for n in notices]
    cause = next((c for c in (cause_for(server, n.rule.metric, now) for n in notices) if c), None)
    runway = runway_line(notices, values)
    if runway is not None:
        lines.append(runway)
    if cause is not None:
        lines.append("likely cause: " + cause["text"])
    evidence = _evidence(server, now)
    lines += [f"{e['label']}: {e['url']}" for e in evidence]
    link = _incident_url(server, notices, now)
    text = "\n".join(lines) + f"\n{link}"
    payload = {"text": text, "server": server.name, "severity": worst, "at": now.isoformat(), "url": link}
    if evidence:
        payload["evidence"] = evidence
    if cause is not None:
        payload["cause"] = cause
    if values and values.get("runway_minutes") is not None and runway is not None:
        payload["runway_minutes"] = values["runway_minutes"] if math.isfinite(values["runway_minutes"]) else None
    payload.update(alertmanager_fields(server, notices, kind, now, text))
    return subject[:300], text, payload


def _server_url(server) -> str:
    return f"{settings.INNOWATCH_BASE_URL.rstrip('/')}/servers/{server.pk}/"


# How much of the charts around an incident the link shows: the build-up before, the aftermath after.
LINK_BEFORE = dt.timedelta(minutes=30)
LINK_AFTER = dt.timedelta(minutes=30)


def _incident_url(server, notices, now) -> str:
    """The server page opened on the incident: from a while before the earliest alert of the
    group became active to a while after now."""
    starts = [getattr(n, "active_since", None) or getattr(n, "firing_since", None) for n in notices]
    since = min((s for s in starts if s), default=now.timestamp())
    start = dt.datetime.fromtimestamp(since, dt.UTC) - LINK_BEFORE
    query = urllib.parse.urlencode({"start": start.isoformat(timespec="seconds"),
                                    "end": (now + LINK_AFTER).isoformat(timespec="seconds")})
    return f"{_server_url(server)}?{query}"


def alertmanager_fields(server, notices, kind: str, now, text: str) -> dict:
    """What Alertmanager's webhook receivers read (version 4), beside innowatch's own fields, so a
    receiver built for Alertmanager takes innowatch's messages as they are. Each alert keeps
    innowatch's fields and gains Alertmanager's (status, labels, annotations, startsAt, endsAt,
    generatorURL, fingerprint)."""
    status = "firing" if any(n.kind == "firing" for n in notices) else "resolved"
    alerts = []
    for n, mine in zip(notices, _own_alerts(notices)):
        labels = {"alertname": n.rule.name, "server": server.name, "severity": n.rule.severity,
                  "metric": n.rule.metric}
        since = getattr(n, "firing_since", None) or getattr(n, "active_since", None)
        started = dt.datetime.fromtimestamp(since, dt.UTC).isoformat() if since else now.isoformat()
        alerts.append({**mine, "status": n.kind if n.kind in ("firing", "resolved") else "firing",
                       "labels": labels,
                       "annotations": {"summary": _line(n), "description": n.rule.description or ""},
                       "startsAt": started, "endsAt": now.isoformat() if n.kind == "resolved" else "0001-01-01T00:00:00Z",
                       "generatorURL": _server_url(server),
                       "fingerprint": hashlib.sha256(f"{server.pk}:{n.rule.pk}".encode()).hexdigest()[:16]})
    common = {"server": server.name}
    return {"version": "4", "groupKey": f"innowatch:{server.name}", "truncatedAlerts": 0, "kind": kind,
            "status": status, "receiver": "innowatch", "groupLabels": common, "commonLabels": common,
            "commonAnnotations": {"summary": text.splitlines()[0]}, "externalURL": _server_url(server),
            "alerts": alerts}


def _own_alerts(notices) -> list[dict]:
    return [{"rule": n.rule.name, "state": n.kind, "severity": n.rule.severity, "metric": n.rule.metric,
             "value": n.state.last_value, "op": n.rule.op, "threshold": n.rule.threshold} for n in notices]


def _wanted(channel: NotificationChannel, notice) -> bool:
    if _RANK[notice.rule.severity] < _RANK[channel.min_severity]:
        return False
    return notice.kind == "firing" or channel.send_resolved


def queue_group(server, notices, now, values: dict | None = None) -> list[NotificationDelivery]:
    """Record one delivery per channel for this group; send after the evaluation commits."""
    deliveries = []
    for channel in NotificationChannel.objects.filter(enabled=True):
        chosen = [n for n in notices if _wanted(channel, n)]
        if not chosen:
            continue
        subject, _, payload = build_message(server, chosen, now, values)
        delivery = NotificationDelivery.objects.create(
            channel=channel, server=server, kind=payload["status"], subject=subject, payload=payload
        )
        delivery.events.set([n.event for n in chosen if n.event is not None])
        transaction.on_commit(functools.partial(deliver_notification.delay, delivery.pk))
        deliveries.append(delivery)
    return deliveries


SIGNATURE_HEADER = "X-Innowatch-Signature"
TIMESTAMP_HEADER = "X-Innowatch-Timestamp"


def signature(secret: str, timestamp: str, body: bytes) -> str:
    """HMAC-SHA256 over "<timestamp>.<body>" (the timestamp stops a captured message being replayed
    later), as "sha256=<hex>"; a receiver recomputes it with the channel's secret."""
    return "sha256=" + hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()


def send_webhook(url: str, payload: dict, secret: str = "") -> int:
    if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
        raise DeliveryError(f"webhook URL must be http(s), not {url.split(':', 1)[0]!r}")
    body = json.dumps(payload).encode()
    headers = {"Content-Type": "application/json", "User-Agent": "innowatch"}
    if secret:
        timestamp = str(int(timezone.now().timestamp()))
        headers |= {TIMESTAMP_HEADER: timestamp, SIGNATURE_HEADER: signature(secret, timestamp, body)}
    request = urllib.request.Request(url, data=body, method="POST", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=WEBHOOK_TIMEOUT_S) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        raise DeliveryError(f"HTTP {exc.code} {exc.reason}", exc.code) from exc
    except (urllib.error.URLError, OSError) as exc:
        raise DeliveryError(f"webhook unreachable: {exc}") from exc


def email_url(addresses: str) -> str:
    """The Apprise mailto URL for an email channel: Django's SMTP settings (EMAIL_HOST, EMAIL_PORT,
    EMAIL_HOST_USER/PASSWORD, EMAIL_USE_TLS/SSL, DEFAULT_FROM_EMAIL) and the channel's addresses."""
    recipients = [a.strip() for a in addresses.split(",") if a.strip()]
    if not recipients:
        raise DeliveryError("the email channel has no address")
    secure = settings.EMAIL_USE_SSL or settings.EMAIL_USE_TLS
    auth = ""
    if settings.EMAIL_HOST_USER:
        auth = (urllib.parse.quote(settings.EMAIL_HOST_USER, safe="") + ":"
                + urllib.parse.quote(settings.EMAIL_HOST_PASSWORD or "", safe="") + "@")
    query = {"smtp": settings.EMAIL_HOST, "from": settings.DEFAULT_FROM_EMAIL, "to": ",".join(recipients)}
    if secure:
        query["mode"] = "ssl" if settings.EMAIL_USE_SSL else "starttls"
    host = f"{settings.EMAIL_HOST}:{settings.EMAIL_PORT}"
    return f"{'mailtos' if secure else 'mailto'}://{auth}{host}?{urllib.parse.urlencode(query)}"


def apprise_problem(url: str) -> str | None:
    """Why Apprise cannot use `url` (None when it can)."""
    if not apprise.Apprise().add(url):
        return ("Apprise does not recognise this URL: see https://github.com/caronc/apprise/wiki for the form "
                "of each service (slack://, pagerduty://, opsgenie://, msteams://, ntfy://, mailto://, json://, ...)")
    return None


def send_apprise(url: str, subject: str, text: str, severity: str) -> None:
    notifier = apprise.Apprise()
    if not notifier.add(url):
        raise DeliveryError("the channel's Apprise URL is not valid")
    kind = {"critical": apprise.NotifyType.FAILURE, "warning": apprise.NotifyType.WARNING}.get(
        severity, apprise.NotifyType.INFO)
    if not notifier.notify(title=subject, body=text, notify_type=kind):
        raise DeliveryError("Apprise could not deliver (the service refused or did not answer)")


def send(delivery: NotificationDelivery) -> int | None:
    channel = delivery.channel
    if channel.kind == NotificationChannel.Kind.APPRISE:
        send_apprise(channel.apprise_url(), delivery.subject, delivery.payload.get("text", ""),
                     delivery.payload.get("severity", "warning"))
        return None
    if channel.kind == NotificationChannel.Kind.WEBHOOK:
        return send_webhook(channel.target, delivery.payload, channel.signing_secret())
    # Email goes through Apprise too, to the SMTP server of Django's settings.
    send_apprise(email_url(channel.target), delivery.subject, delivery.payload.get("text", ""),
                 delivery.payload.get("severity", "warning"))
    return None


def retry_delay_s(retries: int) -> float:
    return getattr(settings, "INNOWATCH_NOTIFY_RETRY_BASE_S", 10.0) * 2**retries


@shared_task(bind=True, name="alerting.deliver_notification", ignore_result=True, max_retries=MAX_RETRIES)
def deliver_notification(self, delivery_id: int) -> None:
    delivery = NotificationDelivery.objects.select_related("channel").get(pk=delivery_id)
    if delivery.status == NotificationDelivery.Status.SENT:
        return  # a redelivered task must not send twice
    delivery.attempts += 1
    try:
        delivery.response_code = send(delivery)
    except DeliveryError as exc:
        delivery.response_code, delivery.error = exc.response_code, str(exc)[:2000]
        if self.request.retries >= self.max_retries:
            delivery.status = NotificationDelivery.Status.FAILED
            delivery.save()
            return
        delivery.save()
        raise self.retry(countdown=retry_delay_s(self.request.retries)) from exc
    delivery.status, delivery.error, delivery.sent_at = NotificationDelivery.Status.SENT, "", timezone.now()
    delivery.save()
