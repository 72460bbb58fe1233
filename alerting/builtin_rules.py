"""The built-in alert rules (DESIGN §5), installed once by a migration and editable afterwards."""

BUILTIN = [
    # name, metric, op, threshold, for_s, keep_firing_s, severity, description
    # `for` stays short on checkpoint age: at a few MB/s of redo a small log goes from 80% of the
    # async point to the stall in well under a minute; keep-firing absorbs the flapping instead.
    ("checkpoint-age-near-async", "checkpoint_age_pct_of_async", ">", 80, 15, 120, "warning",
     "Checkpoint age above 80% of the server's async flush point: flushing is falling behind."),
    ("checkpoint-age-near-sync", "checkpoint_age_pct_of_sync", ">", 95, 0, 120, "critical",
     "Checkpoint age above 95% of the sync point: user threads are about to stall."),
    ("runway-short", "runway_minutes", "<", 15, 30, 120, "critical",
     "At the current net redo rate the sync point is reached in under 15 minutes."),
    ("hll-high", "history_list_length", ">", 1_000_000, 300, 300, "warning",
     "History list length above 1,000,000: purge is far behind."),
    ("hll-growing", "hll_growth_per_h", ">", 0, 1800, 300, "warning",
     "History list length has grown for 30 minutes."),
    # A held snapshot under a busy write load adds thousands of entries a second: waiting 30 minutes
    # for hll-growing is too late. This one looks at how soon hll-high would be reached.
    ("hll-high-within-the-hour", "hll_minutes_to_high", "<", 60, 60, 60, "warning",
     "At the history list's growth of the last 2 minutes it reaches 1,000,000 within the hour: "
     "something (an old read view) holds purge back."),
    ("semaphore-wait-long", "semaphore_longest_wait_s", ">", 60, 0, 60, "critical",
     "A thread has waited on a latch for more than 60 s."),
    ("sync-flush-waits", "flush_sync_waits_per_s", ">", 0, 0, 60, "critical",
     "User threads waited for a sync flush."),
    ("trx-old", "trx_oldest_active_s", ">", 3600, 0, 60, "warning",
     "A transaction has been active for more than an hour."),
    ("collection-failing", "poll_failing", ">=", 1, 30, 0, "warning",
     "The collector's polls of this server fail."),
    ("collection-stale", "sample_age_s", ">", 60, 0, 0, "warning",
     "No good sample for more than 60 s."),
]



def install(alert_rule_model=None) -> None:
    """Create the built-in rules that are missing; existing rules (maybe edited) are left alone."""
    if alert_rule_model is None:
        from alerting.models import AlertRule as alert_rule_model
    for name, metric, op, threshold, for_s, keep_s, severity, description in BUILTIN:
        alert_rule_model.objects.get_or_create(
            name=name,
            defaults=dict(metric=metric, op=op, threshold=threshold, for_s=for_s, keep_firing_s=keep_s,
                          severity=severity, description=description, builtin=True),
        )
