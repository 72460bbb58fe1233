"""Alert evaluation: metric values at a time, the pure lifecycle step, silences, grouping.

Live evaluation (``evaluate_alerts_now``) and the backtest (``backtest``) both compute metric
values with :meth:`History.values_at` and advance states with ``analysis.alert_rules.step``,
so a backtest over stored history shows what live evaluation would have done on the same grid.
"""

from __future__ import annotations

import bisect
import datetime as dt
import logging
import math
import operator
import time
from dataclasses import dataclass, field

from celery import shared_task
from django.db import connection, transaction
from django.db.models.fields.json import KT
from django.db.models.functions import JSONObject
from django.utils import timezone

from alerting import health
from alerting.models import AlertEvent, AlertRule, AlertState, Silence
from analysis import checkpoint
from analysis.alert_rules import AlertState as PureState
from analysis.alert_rules import RuleSpec, Transition, evaluate_series, step, worst_value
from analysis.rates import counter_rates
from analysis.trend import slope_per_s
from annotations.models import Annotation
from servers.models import CollectorRun, Server
from servers.signals import servers_evaluated
from timeseries.metrics import HLL_SLOPE_WINDOW_S, METRICS
from timeseries.models import InnodbSample

log = logging.getLogger(__name__)
WINDOW_S = 900.0  # how much history one evaluation reads
RUNWAY_WINDOW_S = 300.0
HLL_WINDOW_S = float(HLL_SLOPE_WINDOW_S)  # the series API's hll_growth_per_h fits the same window
# The growth "now" for the rate-aware rule: long enough to smooth one burst, short enough that a
# released snapshot (the history list falls to nothing in a second) stops the alarm at once.
HLL_RATE_WINDOW_S = 120.0
HLL_HIGH_ENTRIES = 1_000_000  # the hll-high rule's level
DERIVED = {
    "checkpoint_age_pct_of_async": "% of the async flush point",
    "checkpoint_age_pct_of_sync": "% of the sync flush point (MariaDB 10.5+: max checkpoint age)",
    "runway_minutes": "minutes until the sync point at the current net redo rate",
    "hll_growth_per_h": "history list length growth per hour (least squares, 10 min)",
    "hll_minutes_to_high": "minutes until the history list reaches 1,000,000 at its growth of the last 2 min",
    "sample_age_s": "seconds since the last good sample",
    "poll_failing": "1 when the latest poll failed, else 0",
}
# The sample columns each derived metric is computed from (the stored ones name theirs in METRICS).
_CHECKPOINT_COLUMNS = ("checkpoint_age_bytes", "max_checkpoint_age_bytes", "status_checkpoint_max_age")
_DERIVED_COLUMNS = {
    "checkpoint_age_pct_of_async": _CHECKPOINT_COLUMNS,
    "checkpoint_age_pct_of_sync": _CHECKPOINT_COLUMNS,
    "runway_minutes": _CHECKPOINT_COLUMNS,
    "hll_growth_per_h": ("history_list_length",),
    "hll_minutes_to_high": ("history_list_length",),
    "sample_age_s": (),
    "poll_failing": (),
}
# The metrics that receivers of `servers_evaluated` read from the histories it hands them, beside
# the rules' (the burst triggers add theirs when their app is ready).
RECEIVER_METRICS: set[str] = set()


def metric_columns(metrics) -> list[str]:
    """The sample columns `metrics` are computed from; the checkpoint thresholds' always."""
    columns = set(_CHECKPOINT_COLUMNS)
    for name in metrics:
        if name in _DERIVED_COLUMNS:
            columns.update(_DERIVED_COLUMNS[name])
        elif name in METRICS:
            columns.update(c for c in (METRICS[name].column, METRICS[name].minus) if c)
    return sorted(columns)


_COLUMNS = metric_columns([*METRICS, *DERIVED])


def evaluated_columns(rules: list[AlertRule]) -> list[str]:
    """The columns a pass of `rules` reads: theirs and the receivers' (the built-in rules and
    the burst triggers: 8 of the 37 all metrics need)."""
    return metric_columns({rule.metric for rule in rules} | RECEIVER_METRICS)


def metric_choices() -> list[str]:
    return sorted(METRICS) + sorted(set(DERIVED) - set(METRICS))


def rule_spec(rule: AlertRule) -> RuleSpec:
    return RuleSpec(name=rule.name, metric=rule.metric, op=rule.op, threshold=rule.threshold,
                    for_s=rule.for_s, keep_firing_s=rule.keep_firing_s, severity=rule.severity)


def applies_to(rule: AlertRule, server: Server) -> bool:
    """Listed servers and tagged servers; a rule scoped to neither covers every server."""
    return _in_scope({s.pk for s in rule.servers.all()}, set(rule.tags), server)


def _in_scope(server_ids: set[int], tags: set[str], server: Server) -> bool:
    if not server_ids and not tags:
        return True
    return server.pk in server_ids or bool(tags & set(server.tags))


@dataclass
class History:
    """Samples and poll outcomes of one server, oldest first, with the server's facts."""

    server: Server
    samples: list[dict]
    runs: list[tuple[float, bool]]  # (started, failed)
    _sample_ts: list[float] = field(init=False)
    _run_ts: list[float] = field(init=False)
    _thresholds: dict = field(init=False, default_factory=dict)
    _sample_values: dict[int, dict] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self._sample_ts = [s["ts"] for s in self.samples]
        self._run_ts = [t for t, _ in self.runs]

    @classmethod
    def load(cls, server: Server, start_s: float, end_s: float) -> History:
        """Rows in (start, end], plus the last one before: enough for ages and rates."""
        return cls.load_many([server], start_s, end_s)[server.pk]

    @classmethod
    def load_many(cls, servers: list[Server], start_s: float, end_s: float,
                  columns: list[str] | None = None) -> dict[int, History]:
        """`load` for many servers in four queries, whatever their number: one server at a time,
        the round trips were most of an evaluation of thousands of servers. `columns`
        (metric_columns): only what some metrics need; the others' values are then None."""
        ids = [s.pk for s in servers]
        start, end = _dt(start_s), _dt(end_s)
        columns = columns or _COLUMNS
        samples: dict[int, list[dict]] = {pk: [] for pk in ids}
        for server_id, ts, *values in _before_and_inside(InnodbSample._meta.db_table, "ts", ", ".join(columns),
                                                          ids, start, end):
            row = dict(zip(columns, values, strict=True))
            row["ts"] = ts.timestamp()
            samples[server_id].append(row)
        runs: dict[int, list[tuple[float, bool]]] = {pk: [] for pk in ids}
        for server_id, started, status in _before_and_inside(CollectorRun._meta.db_table, "started_at", "status",
                                                             ids, start, end, "AND kind = %s",
                                                             [CollectorRun.Kind.INNODB_STATUS]):
            runs[server_id].append((started.timestamp(), status == CollectorRun.Status.FAILED))
        return {s.pk: cls(s, samples[s.pk], runs[s.pk]) for s in servers}

    def thresholds(self, sample: dict) -> checkpoint.Thresholds | None:
        key = (sample.get("max_checkpoint_age_bytes"), sample.get("status_checkpoint_max_age"))
        if key not in self._thresholds:
            self._thresholds[key] = server_thresholds(self.server, *key)
        return self._thresholds[key]

    def values_at(self, now_s: float) -> dict[str, float | None]:
        """Every metric a rule can name, as live evaluation at ``now_s`` would see it."""
        values: dict[str, float | None] = dict.fromkeys(metric_choices())
        j = bisect.bisect_right(self._run_ts, now_s)
        if j:
            values["poll_failing"] = 1.0 if self.runs[j - 1][1] else 0.0
        i = bisect.bisect_right(self._sample_ts, now_s)
        if not i:
            return values
        last = self.samples[i - 1]
        values["sample_age_s"] = now_s - last["ts"]
        if now_s - last["ts"] > max(3 * float(self.server.poll_interval_s), 30.0):
            return values  # stale: no gauge stands for "now"; states hold
        values.update(self._at_sample(i))
        return values

    def _at_sample(self, i: int) -> dict[str, float | None]:
        """The metrics the samples up to the i-th (exclusive) give, over the window that ends at
        the newest of them: the same whatever the time of asking, so computed once (the burst
        triggers ask again at the sample the evaluation just used)."""
        if i not in self._sample_values:
            lo = bisect.bisect_right(self._sample_ts, self._sample_ts[i - 1] - WINDOW_S)
            window = self.samples[lo:i]
            self._sample_values[i] = {**self._stored(window, float(self.server.poll_interval_s)),
                                      **self._derived(window)}
        return self._sample_values[i]

    def _stored(self, window: list[dict], interval: float) -> dict[str, float | None]:
        last, out = window[-1], {}
        prev = window[-2] if len(window) > 1 else None
        for metric in METRICS.values():
            value = last.get(metric.column)
            if metric.kind == "slope":
                continue  # fitted over a window: _derived
            if metric.minus:
                other = last.get(metric.minus)
                out[metric.name] = None if value is None or other is None else float(value - other)
                continue
            if metric.kind == "gauge":
                out[metric.name] = None if value is None else float(value)
                continue
            out[metric.name] = None
            if prev is not None and value is not None and prev.get(metric.column) is not None:
                rates = counter_rates([(prev["ts"], prev[metric.column]), (last["ts"], value)],
                                      max_gap_s=3 * interval)
                per_s = rates[-1].per_s if rates else None
                out[metric.name] = None if per_s is None else per_s * metric.scale
        return out

    def _derived(self, window: list[dict]) -> dict[str, float | None]:
        last, out = window[-1], {}
        now_s = last["ts"]
        age = last.get("checkpoint_age_bytes")
        limits = self.thresholds(last)
        stall = (limits.sync_bytes or limits.max_bytes) if limits else None
        if age is not None and limits is not None:
            out["checkpoint_age_pct_of_async"] = 100.0 * age / limits.async_bytes
            out["checkpoint_age_pct_of_sync"] = 100.0 * age / stall if stall else None
        ages = [(s["ts"], s.get("checkpoint_age_bytes")) for s in window]
        ages = [(t, a) for t, a in ages if t >= now_s - RUNWAY_WINDOW_S]
        runway = checkpoint.runway_minutes(ages, stall, window_s=RUNWAY_WINDOW_S)
        if runway is None and age is not None and stall:
            runway = math.inf  # not growing: no stall ahead, so a runway alert can resolve
        out["runway_minutes"] = runway
        hll = [(s["ts"], float(s["history_list_length"])) for s in window
               if s.get("history_list_length") is not None and s["ts"] >= now_s - HLL_WINDOW_S]
        slope = slope_per_s(hll)
        out["hll_growth_per_h"] = None if slope is None else slope * 3600.0
        out["hll_minutes_to_high"] = minutes_to_level(
            [(t, v) for t, v in hll if t >= now_s - HLL_RATE_WINDOW_S], HLL_HIGH_ENTRIES)
        return out


def _before_and_inside(table: str, ts_column: str, columns: str, ids: list[int], start: dt.datetime,
                       end: dt.datetime, condition: str = "", condition_args: list = ()) -> list:
    """(server_id, time, *columns) rows: each server's last row at or before `start` (an index
    probe per server, LATERAL), then its rows in (start, end], ordered by server and time."""
    select = f"server_id, {ts_column}, {columns}"
    before_sql = (f"SELECT r.* FROM unnest(%s::int[]) AS ids(id) CROSS JOIN LATERAL (SELECT {select} "
                  f'FROM "{table}" WHERE server_id = ids.id {condition} AND {ts_column} <= %s '
                  f"ORDER BY {ts_column} DESC LIMIT 1) r")
    inside_sql = (f'SELECT {select} FROM "{table}" WHERE server_id = ANY(%s) {condition} '
                  f"AND {ts_column} > %s AND {ts_column} <= %s ORDER BY server_id, {ts_column}")
    with connection.cursor() as cur:
        cur.execute(before_sql, [ids, *condition_args, start])
        before = {row[0]: row for row in cur.fetchall()}
        cur.execute(inside_sql, [ids, *condition_args, start, end])
        inside = cur.fetchall()
    rows, k = [], 0
    for server_id in sorted(set(ids)):
        if server_id in before:
            rows.append(before[server_id])
        while k < len(inside) and inside[k][0] == server_id:
            rows.append(inside[k])
            k += 1
    return rows


def minutes_to_level(points: list[tuple[float, float]], level: float) -> float | None:
    """Minutes until the series reaches `level` at its least-squares growth; inf when it is not
    growing (so an alert on it resolves), 0 past the level, None without enough points."""
    slope = slope_per_s(points)
    if slope is None:
        return None
    current = points[-1][1]
    if current >= level:
        return 0.0
    return math.inf if slope <= 0 else (level - current) / slope / 60.0


# The variables the checkpoint thresholds are computed from (analysis.checkpoint).
THRESHOLD_VARIABLES = ("innodb_redo_log_capacity_resized", "innodb_redo_log_capacity", "innodb_log_file_size",
                       "innodb_log_files_in_group", "innodb_page_size")


def with_threshold_variables(servers):
    """`servers` (a queryset) without their ~650 variables, carrying the few the thresholds need
    as `threshold_variables`: decoding every variable of every server was a fifth of a pass."""
    picked = JSONObject(**{name: KT(f"variables__{name}") for name in THRESHOLD_VARIABLES})
    return servers.defer("variables").annotate(threshold_variables=picked)


def threshold_variables(server: Server) -> dict[str, str]:
    """THRESHOLD_VARIABLES of `server`, by lower-case name, from its annotation when it was read
    `with_threshold_variables`."""
    picked = getattr(server, "threshold_variables", None)
    if picked is not None:
        return {name: value for name, value in picked.items() if value is not None}
    variables = {k.lower(): v for k, v in (server.variables or {}).items()}
    return {name: variables[name] for name in THRESHOLD_VARIABLES if name in variables}


def server_thresholds(server: Server, printed_max: int | None, status_max: int | None):
    """analysis.checkpoint thresholds from the server's variables, flavour and stated values."""
    if not server.version:
        return None
    try:
        flavor = server.flavor if server.flavor in ("mysql", "percona", "mariadb") else \
            checkpoint.detect_flavor(server.version, server.version_comment)
        variables = threshold_variables(server)
        capacity = checkpoint.redo_capacity_bytes(flavor, server.version, variables)
        files = int(variables.get("innodb_log_files_in_group") or 2)
        page = int(variables.get("innodb_page_size") or 16384)
        return checkpoint.checkpoint_thresholds(
            flavor, server.version, capacity, printed_max_checkpoint_age=printed_max,
            status_checkpoint_max_age=status_max, log_files_in_group=files, page_size=page)
    except ValueError:
        return None


def _dt(epoch_s: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(epoch_s, tz=dt.UTC)


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


# --- silences and maintenance ---------------------------------------------------------------


@dataclass
class Mutes:
    """The maintenance windows and silences in force at a time, read once for a whole evaluation."""

    maintenance: list[Annotation]
    silences: list[Silence]

    @classmethod
    def at(cls, now: dt.datetime) -> Mutes:
        maintenance = Annotation.objects.filter(kind="maintenance", time__lte=now, time_end__gte=now)
        return cls(list(maintenance), list(Silence.objects.filter(starts_at__lte=now, ends_at__gt=now)))

    def in_maintenance(self, server: Server) -> bool:
        # Scope: this server, a tag it carries, or everything (no server, no tag).
        return any(a.server_id == server.pk or (a.server_id is None and (not a.scope_tag or a.scope_tag in server.tags))
                   for a in self.maintenance)

    def matcher(self, server: Server):
        """A predicate rule -> muted, for alerts of `server`."""
        if self.in_maintenance(server):
            return lambda rule: True
        silences = [s for s in self.silences
                    if s.server_id in (None, server.pk) and (s.tag == "" or s.tag in server.tags)]

        def muted(rule: AlertRule) -> bool:
            return any((not s.rule_name or s.rule_name == rule.name)
                       and (not s.severity or s.severity == rule.severity) for s in silences)

        return muted


def silence_matcher(server: Server, now: dt.datetime):
    """A predicate rule -> muted, for alerts of ``server`` at ``now``."""
    return Mutes.at(now).matcher(server)


# --- live evaluation ------------------------------------------------------------------------


@dataclass
class Notice:
    kind: str  # firing / resolved
    rule: AlertRule
    state: AlertState
    event: AlertEvent | None
    # The incident's times: a resolved state has forgotten them, the notice has not.
    active_since: float | None = None
    firing_since: float | None = None


def _to_pure(row: AlertState) -> PureState:
    return PureState(state=row.state, active_since=row.active_since, firing_since=row.firing_since,
                     false_since=row.false_since, last_ts=row.last_ts)


def _apply(row: AlertState, st: PureState) -> None:
    row.state, row.active_since, row.firing_since = st.state, st.active_since, st.firing_since
    row.false_since, row.last_ts = st.false_since, st.last_ts


def _notice_kind(row: AlertState, transition: Transition | None, muted: bool) -> str | None:
    """Firing once per incident (late if it was silenced); resolved only after a firing notice."""
    if transition is not None and transition.state == "resolved":
        was_told = row.notified == "firing"
        row.notified = ""
        return "resolved" if was_told else None
    if row.state == "firing" and row.notified != "firing" and not muted:
        row.notified = "firing"
        return "firing"
    return None


_STATE_FIELDS = (("state", "text"), ("active_since", "float8"), ("firing_since", "float8"),
                 ("false_since", "float8"), ("last_ts", "float8"), ("last_value", "float8"), ("peak_value", "float8"),
                 ("notified", "text"), ("acknowledged_at", "timestamptz"), ("acknowledged_by_id", "int"),
                 ("ack_note", "text"))


def _save_states(rows: list[AlertState]) -> None:
    """UPDATE ... FROM (VALUES ...): Django's bulk_update builds a CASE per field and row, which
    costs more than the statements it saves."""
    if not rows:
        return
    from psycopg2.extras import execute_values

    names = [name for name, _ in _STATE_FIELDS]
    template = "(%s, " + ", ".join(f"%s::{kind}" for _, kind in _STATE_FIELDS) + ")"
    with connection.cursor() as cur:
        execute_values(cur.cursor, (
            f'UPDATE "{AlertState._meta.db_table}" AS s SET '
            + ", ".join(f"{name} = v.{name}" for name in names)
            + f" FROM (VALUES %s) AS v(id, {', '.join(names)}) WHERE s.id = v.id"),
            [(row.pk, *(getattr(row, name) for name in names)) for row in rows], template=template)


def evaluate_server(server: Server, rules: list[AlertRule], values: dict, now: dt.datetime,
                    mutes: Mutes | None = None) -> list[Notice]:
    return evaluate_servers([(server, rules, values)], now, mutes)


def evaluate_servers(items: list[tuple[Server, list[AlertRule], dict]], now: dt.datetime,
                     mutes: Mutes | None = None) -> list[Notice]:
    """One tick of each (server, its rules, its metric values), in one transaction: the rule
    states are read (locked) and written in one statement each, whatever the number of servers."""
    now_s = now.timestamp()
    mutes = mutes or Mutes.at(now)
    notices = []
    items = [item for item in items if item[1]]
    if not items:
        return notices
    with transaction.atomic():
        rows = _locked_states(items)
        read = {key: _stored_state(row) for key, row in rows.items()}
        for server, rules, values in items:
            muted = mutes.matcher(server)
            told = []
            for rule in rules:
                row = rows[(server.pk, rule.pk)]
                was_inactive = row.state == AlertState.State.INACTIVE
                incident = (row.active_since, row.firing_since)
                new, transition = step(rule_spec(rule), _to_pure(row), now_s, values.get(rule.metric))
                _apply(row, new)
                row.last_value = _finite(values.get(rule.metric))
                if row.state != AlertState.State.INACTIVE or (transition and transition.state == "resolved"):
                    row.peak_value = worst_value(rule.op, None if was_inactive else row.peak_value, row.last_value)
                event = _record(rule, server, row, transition, muted(rule))
                kind = _notice_kind(row, transition, muted(rule))
                if kind:
                    if kind == "firing":
                        incident = (row.active_since, row.firing_since)
                    told.append(Notice(kind, rule, row, event, *incident))
            if told:
                from alerting import notify

                notify.queue_group(server, told, now, values)
            notices += told
        # One statement for all the servers' rules: at thousands of servers, one per rule (then
        # one per server) was most of an evaluation's time.
        _save_states([row for key, row in rows.items() if _needs_write(read[key], row)])
    return notices


_stored_state = operator.attrgetter(*(name for name, _ in _STATE_FIELDS))  # a row's fields as _save_states writes them


# An inactive rule that stays inactive changes only its time and value, which no page shows (they
# list pending and firing alerts): most rules of most servers, so not rewritten every tick.
_QUIET = [k for k, (name, _) in enumerate(_STATE_FIELDS) if name not in ("last_ts", "last_value")]
_STATE_AT = [name for name, _ in _STATE_FIELDS].index("state")


def _needs_write(before: tuple, row: AlertState) -> bool:
    after = _stored_state(row)
    if row.state == AlertState.State.INACTIVE and before[_STATE_AT] == AlertState.State.INACTIVE:
        return any(before[k] != after[k] for k in _QUIET)
    return before != after


def _locked_states(items: list[tuple[Server, list[AlertRule], dict]]) -> dict[tuple[int, int], AlertState]:
    """The (server, rule) states of `items`, created when missing, locked to the commit (two
    overlapping evaluations cannot both announce the same transition)."""
    wanted = {(server.pk, rule.pk) for server, rules, _ in items for rule in rules}
    server_ids = {server.pk for server, _, _ in items}
    rule_ids = {pk for _, pk in wanted}

    def read() -> dict[tuple[int, int], AlertState]:
        found = AlertState.objects.select_for_update().filter(server__in=server_ids, rule__in=rule_ids)
        return {(s.server_id, s.rule_id): s for s in found if (s.server_id, s.rule_id) in wanted}

    rows = read()
    missing = wanted - rows.keys()
    if missing:
        AlertState.objects.bulk_create([AlertState(server_id=s, rule_id=r) for s, r in missing], ignore_conflicts=True)
        rows = read()
    return rows


def _record(rule, server, row, transition: Transition | None, silenced: bool) -> AlertEvent | None:
    if transition is None:
        return None
    if transition.state == "firing":
        row.acknowledged_at, row.acknowledged_by, row.ack_note = None, None, ""
    return AlertEvent.objects.create(rule=rule, server=server, ts=_dt(transition.ts), state=transition.state,
                                     value=_finite(transition.value), severity=rule.severity, silenced=silenced)


def enabled_rules() -> list[AlertRule]:
    return list(AlertRule.objects.filter(enabled=True).prefetch_related("servers"))


def evaluate_server_now(server: Server, rules: list[AlertRule], now: dt.datetime,
                        history: History | None = None) -> list[Notice]:
    """One evaluation tick of `server` against those of `rules` that apply to it, on its stored
    history (`history` when the caller loaded it already)."""
    applicable = [r for r in rules if applies_to(r, server)]
    if not applicable:
        return []
    history = history or History.load(server, now.timestamp() - WINDOW_S, now.timestamp())
    return evaluate_server(server, applicable, history.values_at(now.timestamp()), now)


# Small enough that a batch's rows (~1 MB of Python objects at 15 min × 10 s of the rules' columns)
# stay small: each of a threaded worker's malloc arenas keeps the largest batch it ever held (100
# servers of every column, ~15 MB, took the soak's worker from 380 to 680 MB); large enough that
# four queries serve many servers.
SERVERS_PER_BATCH = 25


def evaluate_alerts_now(now: dt.datetime | None = None) -> list[Notice]:
    """One evaluation tick over every enabled, polled server, `SERVERS_PER_BATCH` at a time: their
    history in four queries, their rule states in one transaction."""
    now = now or timezone.now()
    rules = enabled_rules()
    scopes = [(rule, {s.pk for s in rule.servers.all()}, set(rule.tags)) for rule in rules]
    columns = evaluated_columns(rules)
    mutes = Mutes.at(now)
    notices: list[Notice] = []
    started = time.monotonic()
    servers = 0
    # Imported and synthetic servers hold history only: stale by design, backtest them instead.
    polled = with_threshold_variables(Server.objects.filter(enabled=True, imported=False, synthetic=False)).order_by("pk")
    for batch in _batches(polled.iterator(chunk_size=SERVERS_PER_BATCH), SERVERS_PER_BATCH):
        servers += len(batch)
        try:
            notices += _evaluate_batch(batch, scopes, columns, now, mutes)
        except Exception:  # one bad batch must not leave the others unevaluated
            log.exception("alert evaluation of servers %s..%s failed", batch[0].pk, batch[-1].pk)
    health.record_evaluation(time.time(), time.monotonic() - started, servers, len(notices))
    return notices


def _evaluate_batch(batch: list[Server], scopes, columns: list[str], now: dt.datetime, mutes: Mutes) -> list[Notice]:
    # Loaded once for the rules and the burst triggers (servers_evaluated), which look at less.
    histories = History.load_many(batch, now.timestamp() - WINDOW_S, now.timestamp(), columns)
    items = []
    for server in batch:
        applicable = [rule for rule, ids, tags in scopes if _in_scope(ids, tags, server)]
        if applicable:
            items.append((server, applicable, histories[server.pk].values_at(now.timestamp())))
    notices = evaluate_servers(items, now, mutes)
    servers_evaluated.send_robust(Server, servers=batch, now=now, histories=histories)
    return notices


def _batches(iterable, size: int):
    batch = []
    for item in iterable:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


EVALUATING_KEY = "iw:alerts:evaluating"
EVALUATING_TTL_S = 600


# The time limit is the lock's, not the 10 s tick's: a cut-short evaluation would never reach the
# servers at the end of a large fleet.
@shared_task(name="alerting.evaluate_alerts", ignore_result=True, soft_time_limit=EVALUATING_TTL_S - 60)
def evaluate_alerts() -> None:
    """The beat's tick (every 10 s). An evaluation that takes longer (a large fleet; the thread
    pool ignores time limits) is not joined by the next: they would pile up in the worker's
    threads, each holding its servers' history. /metrics shows the evaluation's age and duration."""
    import redis

    try:
        lock = health.redis_client().lock(EVALUATING_KEY, timeout=EVALUATING_TTL_S, blocking=False)
        acquired = lock.acquire()
    except redis.RedisError:
        lock, acquired = None, True  # no Redis to coordinate with: evaluate, as before
    if not acquired:
        log.warning("alert evaluation skipped: the previous one is still running")
        return
    try:
        evaluate_alerts_now()
    finally:
        if lock is not None:
            try:
                lock.release()
            except redis.RedisError:
                pass  # expired or Redis gone: the timeout frees it


def acknowledge(state: AlertState, user, note: str, now: dt.datetime | None = None) -> None:
    """Mark a firing alert acknowledged and leave an annotation on the charts saying who and why."""
    now = now or timezone.now()
    state.acknowledged_at, state.acknowledged_by, state.ack_note = now, user, note
    state.save(update_fields=["acknowledged_at", "acknowledged_by", "ack_note"])
    Annotation.objects.create(time=now, server=state.server, kind=Annotation.Kind.ALERT, author=user,
                              text=f"acknowledged {state.rule.name}: {note}", tags=["alert", state.rule.name])


# --- backtest -------------------------------------------------------------------------------


def backtest(server: Server, start: dt.datetime, end: dt.datetime, step_s: float = 10.0,
             rules: list[AlertRule] | None = None) -> list[dict]:
    """When each rule would have fired and resolved, ticking every ``step_s`` from ``start``."""
    if rules is None:
        rules = [r for r in AlertRule.objects.filter(enabled=True).prefetch_related("servers")
                 if applies_to(r, server)]
    start_s, end_s = start.timestamp(), end.timestamp()
    history = History.load(server, start_s - WINDOW_S, end_s)
    ticks = [start_s + k * step_s for k in range(int((end_s - start_s) // step_s) + 1)]
    values = [history.values_at(t) for t in ticks]
    out = []
    for rule in rules:
        transitions = evaluate_series(rule_spec(rule), [(t, v.get(rule.metric)) for t, v in zip(ticks, values)])
        out += _incidents(rule, transitions)
    return sorted(out, key=lambda r: (r["fired_at"], r["rule"]))


def _incidents(rule: AlertRule, transitions: list[Transition]) -> list[dict]:
    out, fired = [], None
    for tr in transitions:
        if tr.state == "firing":
            fired = tr.ts
        elif tr.state == "resolved" and fired is not None:
            out.append(_incident(rule, fired, tr.ts))
            fired = None
    if fired is not None:
        out.append(_incident(rule, fired, None))
    return out


def _incident(rule: AlertRule, fired: float, resolved: float | None) -> dict:
    return {"rule": rule.name, "severity": rule.severity, "fired_at": _dt(fired).isoformat(),
            "resolved_at": _dt(resolved).isoformat() if resolved is not None else None}
