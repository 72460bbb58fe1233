"""I/O only: read a monitored server and return raw text and rows with the time they were taken.

No Django models here. Errors are classified (`SourceError.kind`) so that every failed poll is
recorded with a reason a DBA can act on: unreachable, auth, privilege, timeout, error.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import MySQLdb

from collectors.pool import ConnectionPool

# InnoDB flushing by type, and purge progress; MySQL calls the on/off column STATUS, MariaDB
# calls it ENABLED. Disabled counters are left out (most purge ones are off by default).
INNODB_METRICS = (
    "buffer_flush_adaptive_total_pages",
    "buffer_flush_background_total_pages",
    "buffer_LRU_batch_flush_total_pages",
    "buffer_flush_sync_total_pages",
    "buffer_flush_sync_waits",
    "purge_invoked",
    "purge_undo_log_pages",
    "purge_del_mark_records",
    "purge_upd_exist_or_extern_records",
    "trx_rseg_history_len",
    "purge_dml_delay_usec",  # a value, not a counter: the delay InnoDB now puts on each row change
)

# Open transactions with their sessions, oldest first. `t.*` rather than a column list: the
# columns differ by version (the MySQL 5.1 plugin has no trx_rows_locked / trx_rows_modified), and
# naming a missing one fails the whole query; what is absent is reported from the result's columns.
# The age is the server's own arithmetic: trx_started is in the server's time zone, unknown here.
INNODB_TRX_QUERY = (
    "SELECT t.*, TIMESTAMPDIFF(SECOND, t.trx_started, NOW()) AS trx_age_s, "
    "p.USER AS user, p.HOST AS host, p.COMMAND AS command, p.TIME AS time, p.INFO AS info "
    "FROM information_schema.INNODB_TRX t "
    "LEFT JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id "
    "ORDER BY t.trx_started, t.trx_id"
)
# What the purge view needs from each row; a server without one of them is told, not guessed at.
INNODB_TRX_WANTED = ("trx_rows_locked", "trx_rows_modified", "trx_query", "trx_mysql_thread_id")

# MySQL client error codes -> what the DBA should read.
_ERROR_KINDS = {
    1045: "auth",  # Access denied for user
    1044: "auth",
    1227: "privilege",  # Access denied; you need (at least one of) the PROCESS privilege(s)
    1142: "privilege",
    2002: "unreachable",  # Can't connect through socket
    2003: "unreachable",  # Can't connect to server on host (refused, no route)
    2005: "unreachable",  # Unknown server host
    2006: "unreachable",  # Server has gone away
    2013: "timeout",  # Lost connection during query (our read_timeout)
    1040: "unreachable",  # Too many connections
}


# Whether to read the variables: yes/no, or decided from the GLOBAL STATUS read just before.
VariablesWanted = bool | Callable[[dict[str, str]], bool]


class SourceError(Exception):
    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class ConnectionParams:
    host: str
    port: int
    user: str
    password: str = field(repr=False)
    timeout_s: float = 5.0


@dataclass(frozen=True)
class ServerReading:
    captured_at: dt.datetime
    innodb_status: str
    global_status: dict[str, str]
    variables: dict[str, str] | None
    innodb_metrics: dict[str, int]
    version: str
    version_comment: str
    round_trip_ms: float
    # name -> "user@host (SOURCE)" from performance_schema.variables_info (MySQL/Percona 8.0+).
    variable_setters: dict[str, str] | None = None
    # When each kind was read ("innodb_status", "global_status", "variables", "innodb_metrics",
    # "innodb_trx"), UTC: the queries run one after another, milliseconds apart.
    read_at: dict[str, dt.datetime] = field(default_factory=dict)
    # INNODB_TRX joined with PROCESSLIST, one dict per open transaction (read_server(with_trx=True)).
    innodb_trx: list[dict] | None = None
    # What INNODB_TRX could not give on this server/account (privilege, table, columns), or None.
    innodb_trx_missing: str | None = None


def flavor_of(version: str, version_comment: str) -> str:
    if "mariadb" in version.lower():
        return "mariadb"
    if "percona" in version_comment.lower() or "percona" in version.lower():
        return "percona"
    return "mysql"


def connect(params: ConnectionParams):
    try:
        # connect_timeout counts whole seconds; read_timeout bounds each query (a hung server).
        timeout = max(1, int(round(params.timeout_s)))
        return MySQLdb.connect(
            host=params.host,
            port=params.port,
            user=params.user,
            password=params.password,
            connect_timeout=timeout,
            read_timeout=timeout,
            write_timeout=timeout,
            charset="utf8mb4",
            # The server's default: no SET autocommit sent, so the server's count of SET
            # statements (poll_state.set_statements) moves only once (SET NAMES) per connection.
            autocommit=True,
        )
    except MySQLdb.Error as exc:
        raise classify(exc) from None


def classify(exc: Exception) -> SourceError:
    code = exc.args[0] if getattr(exc, "args", None) and isinstance(exc.args[0], int) else None
    message = str(exc.args[1]) if code is not None and len(exc.args) > 1 else str(exc)
    kind = _ERROR_KINDS.get(code, "error")
    if kind == "unreachable" and "timed out" in message.lower():
        kind = "timeout"
    return SourceError(kind, f"{code}: {message}" if code is not None else message)


def read_server(params: ConnectionParams, *, with_variables: VariablesWanted = True, with_trx: bool = False,
                trx_limit: int | None = None, pool: ConnectionPool | None = None) -> ServerReading:
    """One poll on a connection from `pool` (a fresh one, closed afterwards, without a pool)."""
    def read(conn) -> ServerReading:
        return read_on(conn, with_variables=with_variables, with_trx=with_trx, trx_limit=trx_limit)

    if pool is None:
        conn = connect(params)
        try:
            return read(conn)
        finally:
            conn.close()
    return pool.run(params, read)


def read_on(conn, *, with_variables: VariablesWanted = True, with_trx: bool = False,
            trx_limit: int | None = None) -> ServerReading:
    """One poll of one server on an open connection: INNODB STATUS, GLOBAL STATUS (and
    VARIABLES) read back to back, so the counters and the status text describe the same moment.
    `with_variables` may be a function of the GLOBAL STATUS just read (collectors.poll_state
    reads variables when a SET statement has run since the last read).
    Each kind's own read time is kept in `read_at` (`captured_at` is the status text's). `with_trx`
    adds the open transactions, the `trx_limit` oldest only when given (a poll needs the oldest few)."""
    try:
        cur = conn.cursor()
        read_at = {}
        started = time.perf_counter()
        captured_at = read_at["innodb_status"] = dt.datetime.now(dt.UTC)
        cur.execute("SHOW ENGINE INNODB STATUS")
        row = cur.fetchone()
        round_trip_ms = (time.perf_counter() - started) * 1000
        status_text = _text(row[2]) if row else ""
        read_at["global_status"] = dt.datetime.now(dt.UTC)
        cur.execute("SHOW GLOBAL STATUS")
        global_status = _name_values(cur.fetchall())
        variables = None
        if callable(with_variables):
            with_variables = with_variables(global_status)
        if with_variables:
            read_at["variables"] = dt.datetime.now(dt.UTC)
            cur.execute("SHOW GLOBAL VARIABLES")
            variables = _name_values(cur.fetchall())
        version, comment = server_version(conn, cur)
        read_at["innodb_metrics"] = dt.datetime.now(dt.UTC)
        metrics = _read_innodb_metrics(cur)
        setters = _read_variable_setters(cur, version, comment) if with_variables else None
        trx = trx_missing = None
        if with_trx:
            read_at["innodb_trx"] = dt.datetime.now(dt.UTC)
            trx, trx_missing = read_innodb_trx(cur, trx_limit)
        return ServerReading(
            captured_at, status_text, global_status, variables, metrics, version, comment, round_trip_ms,
            setters, read_at, trx, trx_missing,
        )
    except MySQLdb.Error as exc:
        raise classify(exc) from None


def server_version(conn, cur) -> tuple[str, str]:
    """VERSION() and @@version_comment, read once per connection: a server cannot change its
    version without a restart, and a restart drops the connection."""
    known = getattr(conn, "_iw_version", None)
    if known is None:
        cur.execute("SELECT VERSION(), @@version_comment")
        known = tuple(_text(v) for v in cur.fetchone())
        conn._iw_version = known
    return known


def _read_innodb_metrics(cur) -> dict[str, int]:
    placeholders = ",".join(["%s"] * len(INNODB_METRICS))
    try:
        cur.execute(
            f"SELECT * FROM information_schema.INNODB_METRICS WHERE NAME IN ({placeholders})",
            INNODB_METRICS,
        )
    except MySQLdb.Error:
        return {}  # not readable on this server/account: flushing by type is simply absent
    columns = [d[0].upper() for d in cur.description]
    name_i, count_i = columns.index("NAME"), columns.index("COUNT")
    enabled_i = next((columns.index(c) for c in ("STATUS", "ENABLED") if c in columns), None)
    result = {}
    for row in cur.fetchall():
        enabled = row[enabled_i] if enabled_i is not None else 1
        # A disabled counter reads 0, which would chart as "no flushing": leave it out.
        if str(enabled).lower() in {"1", "enabled"}:
            result[_text(row[name_i])] = int(row[count_i])
    return result


def read_innodb_trx(cur, limit: int | None = None) -> tuple[list[dict] | None, str | None]:
    """(rows, what is missing): INNODB_TRX joined with PROCESSLIST, oldest first, one query.
    Rows are None when the table cannot be read, with the reason in the DBA's terms."""
    sql = INNODB_TRX_QUERY + (f" LIMIT {int(limit)}" if limit else "")
    try:
        cur.execute(sql)
    except MySQLdb.Error as exc:
        return None, _trx_unreadable(exc)
    names = [d[0].lower() for d in cur.description]
    rows = [{name: _json_value(value) for name, value in zip(names, row)} for row in cur.fetchall()]
    absent = [c for c in INNODB_TRX_WANTED if c not in names]
    return rows, (f"INFORMATION_SCHEMA.INNODB_TRX has no {', '.join(absent)} on this version" if absent else None)


def _trx_unreadable(exc: Exception) -> str:
    error = classify(exc)
    code = exc.args[0] if exc.args else None
    if error.kind in {"privilege", "auth"}:
        return f"INFORMATION_SCHEMA.INNODB_TRX not readable: the monitoring account needs PROCESS ({error})"
    if code in {1109, 1146}:  # unknown table: MySQL 5.1 without the InnoDB plugin, plugin not loaded
        return f"INFORMATION_SCHEMA.INNODB_TRX does not exist on this server ({error})"
    return f"INFORMATION_SCHEMA.INNODB_TRX not read ({error})"


def read_processlist(params: ConnectionParams) -> tuple[dt.datetime, list[dict]]:
    """SHOW FULL PROCESSLIST as dicts (lower-case column names) and the time it was read."""
    conn = connect(params)
    try:
        cur = conn.cursor()
        captured_at = dt.datetime.now(dt.UTC)
        cur.execute("SHOW FULL PROCESSLIST")
        names = [d[0].lower() for d in cur.description]
        return captured_at, [{n: _json_value(v) for n, v in zip(names, row)} for row in cur.fetchall()]
    except MySQLdb.Error as exc:
        raise classify(exc) from None
    finally:
        conn.close()


def _json_value(value):
    if isinstance(value, dt.datetime):
        return value.isoformat()  # server local time, as INNODB_TRX shows it
    if isinstance(value, int | float) or value is None:
        return value
    return _text(value)


def _has_variables_info(version: str, version_comment: str) -> bool:
    """performance_schema.variables_info (with SET_USER) exists on MySQL/Percona 8.0+ only."""
    if flavor_of(version, version_comment) == "mariadb":
        return False
    try:
        return int(version.split(".", 1)[0]) >= 8
    except ValueError:
        return False


def _read_variable_setters(cur, version: str, version_comment: str) -> dict[str, str] | None:
    """Who set each non-default variable, where the server says and our account may read it."""
    if not _has_variables_info(version, version_comment):
        return None
    try:
        cur.execute(
            "SELECT VARIABLE_NAME, VARIABLE_SOURCE, SET_USER, SET_HOST FROM performance_schema.variables_info "
            "WHERE VARIABLE_SOURCE <> 'COMPILED'"
        )
        rows = cur.fetchall()
    except MySQLdb.Error:
        return None  # performance_schema off or not granted: the change is still recorded
    return {_text(name): _setter(_text(source), _text(user), _text(host)) for name, source, user, host in rows}


def _setter(source: str, user: str, host: str) -> str:
    who = f"{user}@{host}" if user else ""
    return f"{who} ({source})" if who else source


def _name_values(rows) -> dict[str, str]:
    """SHOW STATUS / VARIABLES rows as {name: value}. mysqlclient already decodes text columns,
    so the per-value conversion (bytes from a binary column, NULL) runs only when one is there."""
    result = dict(rows)
    if set(map(type, result)) == {str} and set(map(type, result.values())) <= {str}:
        return result
    return {_text(k): _text(v) for k, v in rows}


def _text(value) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return "" if value is None else str(value)


# The worker process's connections to monitored servers (collectors/pool.py).
POOL = ConnectionPool(connect)
