"""A server's variables over a time range as step series, from the variable history
(servers.changes): the value in force at the start, then one step per recorded change. What the
purge panel draws for innodb_purge_threads, innodb_purge_batch_size and innodb_max_purge_lag."""

from __future__ import annotations

import datetime as dt

from servers.changes import variables_at
from servers.models import Server, VariableChange

# The variables the charts may ask for: purge and its DML delay (numbers, or absent).
STEP_VARIABLES = ("innodb_purge_threads", "innodb_purge_batch_size", "innodb_max_purge_lag",
                  "innodb_max_purge_lag_delay", "innodb_purge_rseg_truncate_frequency")
MAX_STEPS = 5000


def _number(value: str | None) -> float | None:
    try:
        return None if value is None else float(value)
    except ValueError:
        return None


def _ms(ts: dt.datetime) -> int:
    return int(ts.timestamp() * 1000)


def variable_steps(server: Server, names: list[str], start: dt.datetime, end: dt.datetime) -> dict[str, dict]:
    """{name: {"t": [epoch ms], "value": [number or None]}}: the value at `start`, each change in
    (start, end], and the last value again at `end` so the step reaches the edge. A variable the
    server does not have (older versions) reads None throughout: "not on this version"."""
    at_start = variables_at(server, start)
    changes = (VariableChange.objects.filter(server=server, name__in=names, ts__gt=start, ts__lte=end)
               .order_by("ts", "pk").values_list("name", "ts", "new_value")[:MAX_STEPS])
    out = {n: {"t": [_ms(start)], "value": [_number(at_start.get(n))]} for n in names}
    for name, ts, value in changes:
        out[name]["t"].append(_ms(ts))
        out[name]["value"].append(_number(value))
    for steps in out.values():
        steps["t"].append(_ms(end))
        steps["value"].append(steps["value"][-1])
    return out
