from django import forms
from django.contrib import admin

from servers.models import CollectorRun, Server


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
