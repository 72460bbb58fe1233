"""`/metrics`: innowatch's own health and every server's latest InnoDB figures in Prometheus'
text format (prometheus_client), for the site's Prometheus and Grafana.

Figures are read at scrape time from what innowatch stores (the web process counts nothing
itself, and the polls run in other processes): the latest sample of each server, its thresholds
and runway exactly as the overview computes them, the polls of the last 15 minutes, and the
broker's queue and the outage spool in Redis. Needs a login or a Bearer token like every API."""

from __future__ import annotations

import datetime as dt
import math

import redis
from django.conf import settings
from django.db.models import Q
from django.http import HttpResponse, JsonResponse
from django.utils import timezone
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from accounts.authentication import user_from_bearer
from alerting import health
from collectors import spool
from dashboard.overview import overview_rows
from servers.models import CollectorRun, PollMinute, Server
from timeseries.models import InnodbSample

RECENT = dt.timedelta(minutes=15)
FLUSH_PATHS = {"adaptive": "flush_adaptive_pages", "background": "flush_background_pages", "lru": "flush_lru_pages",
               "sync": "flush_sync_pages"}


def _gauge(name: str, doc: str, labels=("server",)) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, doc, labels=list(labels))


def _add(family: GaugeMetricFamily, labels: list[str], value) -> None:
    if value is not None and math.isfinite(float(value)):
        family.add_metric(labels, float(value))


class InnowatchCollector:
    """A prometheus_client collector built per scrape from the database and Redis."""

    def __init__(self, now: dt.datetime):
        self.now = now

    def collect(self):
        servers = list(Server.objects.filter(imported=False, synthetic=False))
        yield from self._innodb(servers)
        yield from self._counters(servers)
        yield from self._polls(servers)
        yield from self._queues()
        yield from self._alert_evaluation()

    def _alert_evaluation(self):
        run = health.last_evaluation()
        families = {
            "duration_s": GaugeMetricFamily("innowatch_alert_evaluation_seconds",
                                            "how long the latest alert evaluation took"),
            "age_s": GaugeMetricFamily("innowatch_alert_evaluation_age_seconds",
                                       "seconds since the latest alert evaluation finished (absent: none this hour)"),
            "servers": GaugeMetricFamily("innowatch_alert_evaluation_servers",
                                         "servers the latest alert evaluation covered"),
        }
        if run is not None:
            families["duration_s"].add_metric([], run["duration_s"])
            families["age_s"].add_metric([], max(0.0, self.now.timestamp() - run["finished_s"]))
            families["servers"].add_metric([], run["servers"])
        yield from families.values()

    def _innodb(self, servers):
        families = {
            "age": _gauge("innowatch_innodb_checkpoint_age_bytes", "LSN minus last checkpoint, latest sample"),
            "async": _gauge("innowatch_innodb_checkpoint_async_bytes", "checkpoint age where async flushing starts"),
            "sync": _gauge("innowatch_innodb_checkpoint_sync_bytes",
                           "checkpoint age where user threads stall (MariaDB 10.5+: max checkpoint age)"),
            "pct": _gauge("innowatch_innodb_checkpoint_age_pct_of_async", "checkpoint age as % of the async point"),
            "runway": _gauge("innowatch_innodb_runway_minutes",
                             "minutes to the stall point at the current net redo rate (absent: not growing)"),
            "hll": _gauge("innowatch_innodb_history_list_length", "history list length, latest sample"),
            "dirty": _gauge("innowatch_innodb_pages_dirty", "modified pages in the buffer pool"),
            "dirty_pct": _gauge("innowatch_innodb_dirty_pct", "dirty pages as % of data + free pages"),
            "age_s": _gauge("innowatch_sample_age_seconds", "seconds since the latest good sample"),
        }
        for row in overview_rows(servers, self.now):
            name, latest, limits = [row.server.name], row.latest, row.limits
            _add(families["age"], name, latest.checkpoint_age_bytes)
            _add(families["async"], name, limits.async_bytes)
            _add(families["sync"], name, limits.stall_bytes)
            _add(families["pct"], name, row.pct_of_async)
            _add(families["runway"], name, row.runway_min)
            _add(families["hll"], name, latest.history_list_length)
            _add(families["dirty"], name, latest.pages_dirty)
            _add(families["dirty_pct"], name, row.dirty_pct)
            _add(families["age_s"], name, row.sample_age_s)
        yield from families.values()

    def _counters(self, servers):
        """The latest sample's cumulative counters, as counters: Prometheus' rate() gives flush
        rates at its own resolution and copes with a server restart's reset, as with mysqld_exporter."""
        flushed = CounterMetricFamily("innowatch_innodb_pages_flushed", "Innodb_buffer_pool_pages_flushed",
                                      labels=["server"])
        by_path = CounterMetricFamily("innowatch_innodb_flushed_pages_by_path",
                                      "pages flushed by the page cleaner's path (INNODB_METRICS, where enabled)",
                                      labels=["server", "path"])
        redo = CounterMetricFamily("innowatch_innodb_redo_written_bytes", "the log sequence number: redo written",
                                   labels=["server"])
        names = {s.pk: s.name for s in servers}
        latest = (InnodbSample.objects.filter(server_id__in=names, ts__gte=self.now - RECENT, ts__lte=self.now)
                  .order_by("server_id", "-ts").distinct("server_id")
                  .values("server_id", "innodb_buffer_pool_pages_flushed", "lsn", *FLUSH_PATHS.values()))
        for row in latest:
            name = names[row["server_id"]]
            if row["innodb_buffer_pool_pages_flushed"] is not None:
                flushed.add_metric([name], row["innodb_buffer_pool_pages_flushed"])
            if row["lsn"] is not None:
                redo.add_metric([name], row["lsn"])
            for path, column in FLUSH_PATHS.items():
                if row[column] is not None:
                    by_path.add_metric([name, path], row[column])
        yield flushed
        yield by_path
        yield redo

    def _polls(self, servers):
        since = self.now - RECENT
        polls = _gauge("innowatch_polls_last_15m", "polls of the last 15 minutes, by outcome",
                       labels=("server", "status"))
        failing = _gauge("innowatch_poll_failing", "1 when the latest poll failed, else 0")
        duration = _gauge("innowatch_poll_duration_ms", "poll duration over the last 15 minutes",
                          labels=("server", "quantile"))
        names = {s.pk: s.name for s in servers}
        # Every poll is counted per minute (PollMinute); runs are kept only for failures and changes.
        minutes = list(PollMinute.objects.filter(minute__gte=since.replace(second=0, microsecond=0),
                                                 server_id__in=names)
                       .values_list("server_id", "polls", "failures", "warnings", "durations_ms"))
        counts: dict[tuple[int, str], int] = {}
        durations: dict[int, list[float]] = {}
        for server_id, n, failed, warned, ms in minutes:
            for status, value in (("ok", n - failed - warned), ("failed", failed), ("warning", warned)):
                counts[(server_id, status)] = counts.get((server_id, status), 0) + value
            durations.setdefault(server_id, []).extend(ms)
        for (server_id, status), n in counts.items():
            polls.add_metric([names[server_id], status], n)
        for server_id, values in durations.items():
            values.sort()
            for q in (0.5, 0.95):
                if values:
                    duration.add_metric([names[server_id], str(q)], values[min(len(values) - 1, int(q * len(values)))])
        for server in servers:
            bad = server.last_poll_status not in (Server.PollStatus.OK, Server.PollStatus.NEVER)
            failing.add_metric([server.name], 1.0 if bad else 0.0)
        yield polls
        yield duration
        yield failing
        unfinished = CollectorRun.objects.filter(started_at__gte=since).filter(Q(finished_at__isnull=True)).count()
        stuck = GaugeMetricFamily("innowatch_polls_unfinished_last_15m", "polls started but not finished")
        stuck.add_metric([], unfinished)
        yield stuck

    def _queues(self):
        client = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2)
        up = GaugeMetricFamily("innowatch_redis_up", "1 when Redis (broker and spool) answers")
        try:
            queue = client.llen(settings.CELERY_TASK_DEFAULT_QUEUE)
            spooled = client.llen(spool.KEY)
            oldest = client.lindex(spool.KEY, -1)
        except redis.RedisError:
            up.add_metric([], 0.0)
            yield up
            return
        up.add_metric([], 1.0)
        yield up
        depth = GaugeMetricFamily("innowatch_queue_length", "tasks waiting in the Celery queue")
        depth.add_metric([], queue)
        yield depth
        held = GaugeMetricFamily("innowatch_spool_depth", "readings waiting in the outage spool for PostgreSQL")
        held.add_metric([], spooled)
        yield held
        lag = GaugeMetricFamily("innowatch_spool_lag_seconds", "age of the oldest spooled reading (ingest lag)")
        lag.add_metric([], spool.entry_age_s(oldest, self.now) if oldest else 0.0)
        yield lag


def metrics(request):
    """The exposition. Prometheus sends `Authorization: Bearer <token>` (`authorization` in its
    scrape config); a browser with a login works too."""
    user = user_from_bearer(request) if "Authorization" in request.headers else request.user
    if user is None or not user.is_authenticated:
        return JsonResponse({"error": "authentication required: log in or send Authorization: Bearer <token>"},
                            status=401)
    registry = CollectorRegistry(auto_describe=False)
    registry.register(InnowatchCollector(timezone.now()))
    return HttpResponse(generate_latest(registry), content_type=CONTENT_TYPE_LATEST)
