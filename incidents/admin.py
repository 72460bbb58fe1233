from django.contrib import admin

from incidents.models import Burst, TriggerConfig


@admin.register(TriggerConfig)
class TriggerConfigAdmin(admin.ModelAdmin):
    """Per-server burst triggers; a server without a row uses the model's defaults."""

    list_display = ["server", "enabled", "checkpoint_age_pct_of_async", "runway_minutes", "semaphore_wait_s",
                    "threads_running", "hll_growth_per_h", "cycles", "cooldown_s", "duration_s"]


@admin.register(Burst)
class BurstAdmin(admin.ModelAdmin):
    list_display = ["server", "started_at", "trigger", "status", "seconds_read", "size_bytes"]
    list_filter = ["status", "trigger"]
    readonly_fields = [f.name for f in Burst._meta.fields]
