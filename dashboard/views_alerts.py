"""Alert pages: firing/pending now, rules, history, silences; operators silence and acknowledge."""

from __future__ import annotations

import datetime as dt

from django import forms
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from accounts.roles import OPERATOR, can_operate, require_role
from alerting import evaluation as alerting
from alerting.models import AlertEvent, AlertRule, AlertState, Silence
from alerting.notify import cause_for
from dashboard.views_incidents import attach_bursts
from servers.models import Server


class SilenceForm(forms.ModelForm):
    class Meta:
        model = Silence
        fields = ["rule_name", "server", "tag", "severity", "starts_at", "ends_at", "comment"]
        widgets = {"comment": forms.Textarea(attrs={"rows": 2})}

    def clean(self):
        data = super().clean()
        if data.get("starts_at") and data.get("ends_at") and data["ends_at"] <= data["starts_at"]:
            raise forms.ValidationError("The silence must end after it starts.")
        return data


@login_required
def firing(request):
    rows = list(AlertState.objects.select_related("rule", "server", "acknowledged_by").exclude(
        state=AlertState.State.INACTIVE).order_by("-state", "server__name", "rule__name"))
    now = timezone.now()
    for row in rows:  # what the notification named: the oldest-view holder, the longest latch wait
        row.cause = cause_for(row.server, row.rule.metric, now)
    # A burst running when the alert went off holds the one-second evidence.
    attach_bursts(rows, lambda r: r.server_id, lambda r: _when(r.firing_since or r.active_since))
    return render(request, "dashboard/alerts.html", {"rows": rows, "can_operate": can_operate(request.user)})


@require_role(OPERATOR)
@require_POST
def acknowledge(request, state_id: int):
    row = get_object_or_404(AlertState.objects.select_related("rule", "server"), pk=state_id)
    note = request.POST.get("note", "").strip()[:2000]
    alerting.acknowledge(row, request.user, note)
    return redirect("alerts")


@login_required
def rules(request):
    rows = AlertRule.objects.prefetch_related("servers").order_by("name")
    return render(request, "dashboard/alerts_rules.html", {"rules": rows, "derived": alerting.DERIVED})


@login_required
def history(request):
    events = AlertEvent.objects.select_related("rule", "server").order_by("-ts", "-pk")
    server = request.GET.get("server")
    if server:
        events = events.filter(server__name=server)
    events = list(events[:500])
    attach_bursts(events, lambda e: e.server_id, lambda e: e.ts)
    return render(request, "dashboard/alerts_history.html",
                  {"events": events, "servers": Server.objects.all(), "server": server})


def _when(epoch_s: float | None) -> dt.datetime | None:
    return None if epoch_s is None else dt.datetime.fromtimestamp(epoch_s, dt.UTC)


@login_required
def silences(request):
    now = timezone.now()
    form = SilenceForm(initial={"starts_at": now, "ends_at": now + dt.timedelta(hours=2)})
    if request.method == "POST":
        if not can_operate(request.user):
            raise PermissionDenied("silences need the operator role")
        form = SilenceForm(request.POST)
        if form.is_valid():
            silence = form.save(commit=False)
            silence.author = request.user
            silence.save()
            return redirect("alert-silences")
    rows = Silence.objects.select_related("server", "author").order_by("-starts_at")[:200]
    return render(request, "dashboard/alerts_silences.html",
                  {"form": form, "silences": rows, "now": now, "can_operate": can_operate(request.user)})


@require_role(OPERATOR)
@require_POST
def expire_silence(request, silence_id: int):
    silence = get_object_or_404(Silence, pk=silence_id)
    now = timezone.now()
    if silence.ends_at > now:
        silence.ends_at = max(now, silence.starts_at)
        silence.save(update_fields=["ends_at"])
    return redirect("alert-silences")
