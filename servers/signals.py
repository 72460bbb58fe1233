"""What the servers app announces about a server. The annotations app marks each on the charts
(annotations/receivers.py); the servers app itself knows nothing of annotations."""

import django.dispatch

# server, ts, changes: [(name, old, new)], setters: {name: "user@host"}
variables_changed = django.dispatch.Signal()
# server, started_at, polled_at, uptime_before_s, uptime_after_s
server_restarted = django.dispatch.Signal()


def first_response(responses: list[tuple[object, object]]):
    """What the first receiver that answered returned (the annotation it made), or None."""
    return next((value for _, value in responses if value is not None), None)
# server, ts: a sample of a poll made on demand is stored (poll_once: the command, the demo).
# Burst triggers listen (incidents/receivers.py), so the poll path knows nothing of them.
sample_polled = django.dispatch.Signal()
# servers, now, histories ({server id: alerting.evaluation.History}): alert evaluation has looked
# at these servers' latest samples (every 10 s, a batch at a time). Burst triggers listen too:
# checking them there, not after each batched poll, keeps the poll path free of history reads.
servers_evaluated = django.dispatch.Signal()
