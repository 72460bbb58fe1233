"""When a burst starts: per-server trigger conditions that must hold for a few polls (pt-stalk's
--cycles), a cool-down after each burst (pt-stalk's --sleep), and a cap on bursts at once.

The conditions read the values alert evaluation computes (alerting.evaluation.History), at each
of the last `cycles` stored samples, so "held for N polls" needs no state of its own."""

from __future__ import annotations

import datetime as dt
import functools
import logging
from dataclasses import dataclass

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from alerting.evaluation import History
from annotations.models import Annotation
from incidents.models import Burst, TriggerConfig
from servers.models import Server

log = logging.getLogger(__name__)
HISTORY_S = 600.0  # enough for runway (5 min) and HLL growth (10 min) at the newest sample


@dataclass(frozen=True)
class Condition:
    field: str  # TriggerConfig threshold
    metric: str  # alerting value
    above: bool  # fires above the threshold (else below)
    text: str


CONDITIONS = (
    Condition("checkpoint_age_pct_of_async", "checkpoint_age_pct_of_async", True,
              "checkpoint age {value:.0f} % of the async point (trigger {threshold:g} %)"),
    Condition("runway_minutes", "runway_minutes", False,
              "runway {value:.1f} min to the sync point (trigger {threshold:g} min)"),
    Condition("semaphore_wait_s", "semaphore_longest_wait_s", True,
              "a latch wait of {value:.0f} s (trigger {threshold:g} s)"),
    Condition("threads_running", "threads_running", True,
              "{value:.0f} threads running (trigger {threshold:g})"),
    Condition("hll_growth_per_h", "hll_growth_per_h", True,
              "history list growing {value:,.0f}/h (trigger {threshold:,g}/h)"),
)


def config_for(server: Server) -> TriggerConfig:
    """The server's trigger settings; the defaults (unsaved) when it has none."""
    return TriggerConfig.objects.filter(server=server).first() or TriggerConfig(server=server)


def configs_for(servers: list[Server]) -> dict[int, TriggerConfig]:
    """config_for of many servers, in one query."""
    saved = {c.server_id: c for c in TriggerConfig.objects.filter(server__in=[s.pk for s in servers])}
    return {s.pk: saved.get(s.pk) or TriggerConfig(server=s) for s in servers}


def held_condition(server: Server, config: TriggerConfig, now: dt.datetime,
                   history: History | None = None) -> tuple[Condition, float] | None:
    """The first condition true at each of the last `config.cycles` samples, with its latest value
    (from `history` when the alert evaluation loaded it: it ends at `now` and reaches further back)."""
    cycles = max(1, config.cycles)
    history = history or History.load(server, now.timestamp() - HISTORY_S, now.timestamp())
    stamps = [s["ts"] for s in history.samples][-cycles:]
    if len(stamps) < cycles:
        return None
    values_at = functools.cache(history.values_at)  # each poll's values built once for every condition
    for condition in CONDITIONS:
        threshold = getattr(config, condition.field)
        if threshold is None:
            continue
        # Newest poll first: a condition that does not hold now needs no look further back, and
        # the values at older polls (a window's fits each) are computed only when it does.
        held = []
        for t in reversed(stamps):
            value = values_at(t).get(condition.metric)
            if not _beyond(value, threshold, condition.above):
                break
            held.append(value)
        else:
            return condition, held[0]
    return None


def _beyond(value: float | None, threshold: float, above: bool) -> bool:
    if value is None:
        return False
    return value > threshold if above else value < threshold


def check_server(server: Server, now: dt.datetime | None = None, history: History | None = None,
                 config: TriggerConfig | None = None) -> Burst | None:
    """After an alert evaluation (or a poll on demand): start a burst if a condition held for its
    polls and the server is out of its cool-down. `config`: the server's settings, when the
    caller read them already (configs_for)."""
    now = now or timezone.now()
    config = config or config_for(server)
    if not config.enabled or server.imported:
        return None
    found = held_condition(server, config, now, history)
    if found is None:
        return None
    condition, value = found
    if in_cooldown(server, config, now):
        log.info("burst of %s not started: in cool-down (%s)", server.name, condition.field)
        return None
    reason = condition.text.format(value=value, threshold=getattr(config, condition.field))
    reason += f", held for {config.cycles} polls"
    return start_burst(server, condition.field, reason, config.duration_s, now=now)


def in_cooldown(server: Server, config: TriggerConfig, now: dt.datetime) -> bool:
    last = Burst.objects.filter(server=server).order_by("-started_at").first()
    if last is None:
        return False
    if last.status == Burst.Status.RUNNING:
        return True
    ended = last.finished_at or last.ends_at
    return now < ended + dt.timedelta(seconds=config.cooldown_s)


class BurstRefused(Exception):
    """Why a burst was not started (one already running on the server, or the cap is reached)."""


def start_burst(server: Server, trigger: str, reason: str, duration_s: int, *, user=None,
                now: dt.datetime | None = None) -> Burst | None:
    """Create the burst and its region annotation, and send its first second. None (logged) when
    refused; `start_manual` raises instead."""
    try:
        return _start(server, trigger, reason, duration_s, user, now or timezone.now())
    except BurstRefused as exc:
        log.warning("burst of %s not started: %s", server.name, exc)
        return None


def start_manual(server: Server, user, duration_s: int | None = None) -> Burst:
    duration = duration_s or config_for(server).duration_s
    who = getattr(user, "username", "") or "the API"
    return _start(server, "manual", f"capture asked for by {who}", duration, user, timezone.now())


MAX_DURATION_S = 3600
START_LOCK = 0x1B0_0457  # pg_advisory_xact_lock key of burst starts


def _start(server: Server, trigger: str, reason: str, duration_s: int, user, now: dt.datetime) -> Burst:
    from incidents import bursts  # the tasks module imports this one

    duration_s = max(1, min(int(duration_s), MAX_DURATION_S))
    with transaction.atomic():
        # One lock serialises every start (held to the commit), so the cap and "one per server" hold.
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [START_LOCK])
        running = list(Burst.objects.filter(status=Burst.Status.RUNNING))
        if any(b.server_id == server.pk for b in running):
            raise BurstRefused("a burst of this server is already running")
        if len(running) >= settings.INNOWATCH_BURST_MAX_CONCURRENT:
            raise BurstRefused(f"{len(running)} bursts already running (INNOWATCH_BURST_MAX_CONCURRENT)")
        ends_at = now + dt.timedelta(seconds=duration_s)
        annotation = Annotation.objects.create(
            server=server, time=now, time_end=ends_at, kind=Annotation.Kind.MANUAL, tags=["burst"],
            text=f"One-second capture: {reason}")
        burst = Burst.objects.create(server=server, trigger=trigger, reason=reason, requested_by=user,
                                     started_at=now, ends_at=ends_at, annotation=annotation)
        transaction.on_commit(lambda: bursts.send_first(burst))
    return burst
