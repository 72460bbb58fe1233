"""Rules, silences and channels are edited here; the delivery log is read-only."""

import urllib.parse

from django import forms
from django.contrib import admin

from alerting.models import AlertRule, NotificationChannel, NotificationDelivery, Silence, masked_url
from alerting.notify import DeliveryError, apprise_problem, send


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
    apprise_url = forms.CharField(
        required=False, widget=forms.PasswordInput(render_value=False),
        help_text="Apprise channels: e.g. slack://TokenA/TokenB/TokenC, pagerduty://IntegrationKey@ApiKey, "
                  "mailto://user:pass@example.com. Stored encrypted, never shown back; leave empty to keep it.")
    signing_secret = forms.CharField(
        required=False, widget=forms.PasswordInput(render_value=False),
        help_text="Webhooks: HMAC-SHA256 key for the X-Innowatch-Signature header. Leave empty to keep the stored one.")

    class Meta:
        model = NotificationChannel
        fields = ["name", "kind", "target", "apprise_url", "signing_secret", "min_severity", "send_resolved",
                  "enabled"]

    def clean_target(self):
        target = self.cleaned_data["target"].strip()
        if self.cleaned_data.get("kind") == NotificationChannel.Kind.WEBHOOK:
            parts = urllib.parse.urlsplit(target)
            if parts.scheme not in ("http", "https") or not parts.netloc:
                raise forms.ValidationError("A webhook needs an http:// or https:// URL with a host.")
        return target

    def clean_apprise_url(self):
        url = self.cleaned_data["apprise_url"].strip()
        if self.cleaned_data.get("kind") == NotificationChannel.Kind.APPRISE:
            if not url and not (self.instance and self.instance.apprise_url_encrypted):
                raise forms.ValidationError("An Apprise channel needs its URL.")
            if url and (problem := apprise_problem(url)):
                raise forms.ValidationError(problem)
        return url

    def save(self, commit=True):
        channel = super().save(commit=False)
        if self.cleaned_data.get("apprise_url"):
            channel.set_apprise_url(self.cleaned_data["apprise_url"])
            channel.target = masked_url(self.cleaned_data["apprise_url"])
        if self.cleaned_data.get("signing_secret"):
            channel.set_signing_secret(self.cleaned_data["signing_secret"])
        if commit:
            channel.save()
        return channel


@admin.action(description="Send a test notification")
def send_test_notification(modeladmin, request, queryset):
    for channel in queryset:
        delivery = NotificationDelivery(channel=channel, kind="test", subject=f"[innowatch TEST] {channel.name}",
                                        payload={"text": "A test notification from innowatch.", "severity": "info",
                                                 "status": "test"})
        try:
            send(delivery)
        except DeliveryError as exc:
            modeladmin.message_user(request, f"{channel.name}: not delivered: {exc}", level="error")
        else:
            modeladmin.message_user(request, f"{channel.name}: test notification sent")


@admin.register(NotificationChannel)
class NotificationChannelAdmin(admin.ModelAdmin):
    form = NotificationChannelForm
    list_display = ["name", "kind", "target", "min_severity", "send_resolved", "enabled"]
    actions = [send_test_notification]


@admin.register(NotificationDelivery)
class NotificationDeliveryAdmin(admin.ModelAdmin):
    list_display = ["created_at", "channel", "server", "kind", "status", "attempts", "response_code"]
    readonly_fields = [f.name for f in NotificationDelivery._meta.fields]
