"""Rules, silences and channels are edited here; the delivery log is read-only."""

import urllib.parse

from django import forms
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


class NotificationChannelForm(forms.ModelForm):
    # Write-only, like a server's password: the stored secret is never rendered back.
    signing_secret = forms.CharField(
        required=False, widget=forms.PasswordInput(render_value=False),
        help_text="Webhooks: HMAC-SHA256 key for the X-Innowatch-Signature header. Leave empty to keep the stored one.")

    class Meta:
        model = NotificationChannel
        fields = ["name", "kind", "target", "signing_secret", "min_severity", "send_resolved", "enabled"]

    def clean_target(self):
        target = self.cleaned_data["target"].strip()
        if self.cleaned_data.get("kind") == NotificationChannel.Kind.WEBHOOK:
            parts = urllib.parse.urlsplit(target)
            if parts.scheme not in ("http", "https") or not parts.netloc:
                raise forms.ValidationError("A webhook needs an http:// or https:// URL with a host.")
        return target

    def save(self, commit=True):
        channel = super().save(commit=False)
        if self.cleaned_data.get("signing_secret"):
            channel.set_signing_secret(self.cleaned_data["signing_secret"])
        if commit:
            channel.save()
        return channel


@admin.register(NotificationChannel)
class NotificationChannelAdmin(admin.ModelAdmin):
    form = NotificationChannelForm
    list_display = ["name", "kind", "min_severity", "send_resolved", "enabled"]


@admin.register(NotificationDelivery)
class NotificationDeliveryAdmin(admin.ModelAdmin):
    list_display = ["created_at", "channel", "server", "kind", "status", "attempts", "response_code"]
    readonly_fields = [f.name for f in NotificationDelivery._meta.fields]
