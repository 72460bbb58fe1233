"""Rules, silences and channels are edited here; the delivery log is read-only."""

from django.contrib import admin

from alerting.models import AlertRule, NotificationChannel, NotificationDelivery, Silence


@admin.register(AlertRule)
class AlertRuleAdmin(admin.ModelAdmin):
    list_display = ["name", "metric", "op", "threshold", "for_s", "keep_firing_s", "severity", "enabled", "builtin"]
    list_filter = ["severity", "enabled", "builtin"]
    filter_horizontal = ["servers"]


@admin.register(Silence)
class SilenceAdmin(admin.ModelAdmin):
    list_display = ["rule_name", "server", "tag", "severity", "starts_at", "ends_at", "author", "comment"]


@admin.register(NotificationChannel)
class NotificationChannelAdmin(admin.ModelAdmin):
    list_display = ["name", "kind", "min_severity", "send_resolved", "enabled"]


@admin.register(NotificationDelivery)
class NotificationDeliveryAdmin(admin.ModelAdmin):
    list_display = ["created_at", "channel", "server", "kind", "status", "attempts", "response_code"]
    readonly_fields = [f.name for f in NotificationDelivery._meta.fields]
