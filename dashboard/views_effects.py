"""The effect page of one annotation: the table and both windows overlaid at the change."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import get_object_or_404, render

from annotations import effects
from annotations.models import Annotation


@login_required
def annotation_effect(request, annotation_id: int):
    annotation = get_object_or_404(Annotation.objects.select_related("server", "author"), pk=annotation_id)
    if annotation.server is None:
        raise Http404("this annotation covers several servers")
    error, report, traces = "", None, {}
    try:
        window = effects.parse_duration(request.GET.get("window"), effects.DEFAULT_WINDOW, "window")
        settle = effects.parse_duration(request.GET.get("settle"), effects.DEFAULT_SETTLE, "settle")
        windows = effects.annotation_windows(annotation, window, settle)
        report, before, after = effects.effect_report(annotation.server, windows)
        traces = effects.chart_traces(before, after, windows.change)
    except effects.EffectError as exc:
        error = str(exc)
    rows = [{"name": name, **m} for name, m in (report or {}).get("metrics", {}).items()]
    return render(request, "dashboard/effect.html", {
        "annotation": annotation, "report": report, "rows": rows, "traces": traces, "error": error,
        "window": request.GET.get("window", "30m"), "settle": request.GET.get("settle", "2m"),
    })
