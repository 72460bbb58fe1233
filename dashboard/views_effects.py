"""The effect page of one annotation: the table and both windows overlaid at the change."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import get_object_or_404, render

from analysis.effect import display_value, metric_label
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
        report, before, after, expected = effects.effect_report(annotation.server, windows)
        traces = effects.chart_traces(before, after, windows.change, expected)
    except effects.EffectError as exc:
        error = str(exc)
    rows = [_row(name, m) for name, m in (report or {}).get("metrics", {}).items()]
    return render(request, "dashboard/effect.html", {
        "annotation": annotation, "report": report, "rows": rows, "traces": traces, "error": error,
        "window": request.GET.get("window", "30m"), "settle": request.GET.get("settle", "2m"),
    })


VERDICT_WORDS = {"effect": "effect", "no_effect": "no effect", "trend": "continues its trend",
                 "not_attributable": "moved, not because of this change", "inconclusive": "inconclusive"}


def _row(name: str, m: dict) -> dict:
    """A table row in the metric's own units (MB, pages/s, entries), not raw numbers."""
    scale = max(abs(m["before"]["mean"] or 0.0), abs(m["after"]["mean"] or 0.0))
    show = lambda value: display_value(name, value, scale) if value is not None else ""  # noqa: E731
    return {"name": name, "label": metric_label(name), "before_mean": show(m["before"]["mean"]),
            "before_p95": show(m["before"]["p95"]), "after_mean": show(m["after"]["mean"]),
            "after_p95": show(m["after"]["p95"]), "expected": show(m["expected"]),
            "change_pct": m["change_pct"], "vs_expected_pct": m["change_vs_expected_pct"],
            "verdict": m["verdict"], "verdict_words": VERDICT_WORDS.get(m["verdict"], m["verdict"]),
            "reason": m["reason"], "p_value": m["p_value"]}
