from django import forms
from django.contrib import admin

from dashboard.models import ApiToken, CollectorRun, Server
from dashboard.roles import can_admin


class ServerForm(forms.ModelForm):
    # Write-only: the stored password is never rendered back into the page.
    password = forms.CharField(
        required=False,
        widget=forms.PasswordInput(render_value=False),
        help_text="Leave empty to keep the stored password.",
    )

    class Meta:
        model = Server
        fields = ["name", "host", "port", "user", "password", "poll_interval_s", "enabled", "tags", "host_agent"]

    def save(self, commit=True):
        server = super().save(commit=False)
        if self.cleaned_data.get("password"):
            server.set_password(self.cleaned_data["password"])
        if commit:
            server.save()
        return server


@admin.register(Server)
class ServerAdmin(admin.ModelAdmin):
    form = ServerForm
    list_display = ["name", "host", "port", "flavor", "version", "enabled", "last_poll_status", "last_sample_at"]
    list_filter = ["enabled", "flavor", "last_poll_status"]
    search_fields = ["name", "host"]


@admin.register(CollectorRun)
class CollectorRunAdmin(admin.ModelAdmin):
    list_display = ["server", "kind", "started_at", "status", "error_kind", "duration_ms"]
    list_filter = ["status", "error_kind", "kind"]


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ["prefix", "user", "name", "created_at", "last_used_at", "revoked_at"]
    readonly_fields = ["prefix", "key_hash", "created_at", "last_used_at"]


# --- alerting (issue 8): rules are edited here; silences and channels too ---
from dashboard.models import AlertRule, NotificationChannel, NotificationDelivery, Silence  # noqa: E402


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


def _admin_role_only(request) -> bool:
    # Servers, alert rules and users are edited here: that is the admin role, not mere staff.
    return request.user.is_active and can_admin(request.user)


admin.site.has_permission = _admin_role_only
