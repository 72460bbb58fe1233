"""Page speed: time until the server page is interactive (every chart drawn:
body[data-charts-ready='1']) over 30 days of 10 s samples, and until the overview of 200 servers
has loaded, in headless Chromium against a real gunicorn serving the bench database.

Cold = a fresh browser context (empty HTTP cache, plotly.js downloaded again); warm = a reload in
the same context. Baselines from the same run: a blank page that only loads the vendored
plotly.js, the series API requests the page makes, fetched alone from the same browser, and the
page as it was before the second round of page-speed work (charts.js and the template as at
BEFORE_COMMIT, in a copy of the tree served by a second gunicorn on the same database). The
server-page variants are loaded in turn, one of each per round, so load from elsewhere on the
machine falls on all of them alike.
Times are from navigation start (performance.now() in the page) to the ready condition.
"""

from __future__ import annotations

import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
USER, PASSWORD = "bench-pages", "bench-pages-password-1"
THIRTY_DAYS_S = 30 * 86400
# The page before x became epoch-ms numbers and charts.js moved ahead of plotly.js.
BEFORE_COMMIT = "1248c7304136c546b65f9095e19d2f9f5ee079d5"
BEFORE_FILES = ("static/js/charts.js", "templates/dashboard/server.html")


def p95(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(tree: Path = ROOT) -> tuple[subprocess.Popen, str]:
    """gunicorn on the bench database (the environment set by bench.benchdb), two workers as `make run`."""
    port = _free_port()
    env = dict(os.environ, DJANGO_ALLOWED_HOSTS="127.0.0.1,localhost")
    cmd = [str(Path(sys.executable).with_name("gunicorn")), "dashboard.wsgi:application",
           "--bind", f"127.0.0.1:{port}", "--workers", "2", "--log-level", "warning"]
    proc = subprocess.Popen(cmd, cwd=tree, env=env, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return proc, base
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError("gunicorn did not start")


def stop_server(proc: subprocess.Popen) -> None:
    os.killpg(proc.pid, 15)
    proc.wait(timeout=30)


def _bench_user() -> None:
    from django.contrib.auth import get_user_model

    user, _ = get_user_model().objects.get_or_create(username=USER, defaults={"is_superuser": True, "is_staff": True})
    user.set_password(PASSWORD)
    user.save()


def _login_state(browser, base: str) -> dict:
    context = browser.new_context()
    page = context.new_page()
    page.goto(f"{base}/login/")
    page.fill("input[name=username]", USER)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_load_state("load")
    state = context.storage_state()
    context.close()
    return state


def _since_navigation(page) -> float:
    return page.evaluate("performance.now()")


def _server_page(page, url: str) -> float:
    page.goto(url, wait_until="commit")
    page.wait_for_selector("body[data-charts-ready='1']", state="attached", timeout=60000)
    return _since_navigation(page)


def _overview(page, url: str) -> float:
    page.goto(url, wait_until="load")
    return _since_navigation(page)


def _plotly_only(page, base: str, script: str) -> float:
    page.goto(f"{base}/static/vendor/", wait_until="commit")  # an origin for the script (404 is fine)
    began = time.perf_counter()
    page.set_content(f'<script src="{base}/static/{script}"></script>', wait_until="load")
    page.wait_for_function("window.Plotly !== undefined")
    return (time.perf_counter() - began) * 1000


def _page_plotly() -> str:
    """The plotly.js bundle the server page loads (vendor/plotly-basic-… since the page-speed work)."""
    import re

    html = (ROOT / "templates" / "dashboard" / "server.html").read_text()
    return re.search(r"static '(vendor/plotly[^']*\.js)'", html).group(1)


def _series_alone(page, url: str) -> float:
    return page.evaluate(
        "async (u) => { const t = performance.now(); const r = await fetch(u); await r.json();"
        " return performance.now() - t; }", url)


ERRORS: list[str] = []


def before_tree() -> Path:
    """A copy of the tree with the server page's files as at BEFORE_COMMIT (charts.js and the template,
    whose script order changed), to be served by its own gunicorn: same code, same database."""
    tree = Path(tempfile.mkdtemp(prefix="innowatch-page-before-"))
    shutil.copytree(ROOT, tree, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns(".git", ".venv", "node_modules", "staticfiles", "docs", "results"))
    for path in BEFORE_FILES:
        old = subprocess.run(["git", "show", f"{BEFORE_COMMIT}:{path}"], cwd=ROOT, check=True, capture_output=True)
        (tree / path).write_bytes(old.stdout)
    return tree


def swap_variant(glob: str, url: str):
    """Serve another file in place of a script (the same page with the full plotly.js bundle)."""
    # Playwright passes (route, request) to a two-argument handler: bind the URL by closure.
    return lambda context: context.route(glob, lambda route: route.continue_(url=url))


def _measure(browser, state: dict, load, loads: int) -> tuple[list, list]:
    """`loads` cold loads (each in a fresh context) and a warm reload after each."""
    return _measure_in_turn(browser, state, loads, {"page": (load, None)})["page"]


def _measure_in_turn(browser, state: dict, loads: int, variants: dict) -> dict[str, tuple[list, list]]:
    """Per variant (name: (load, context setup or None)), `loads` cold loads, each in a fresh
    context, and a warm reload after each; one load of each variant per round, in reverse order every
    other round so that none always follows the same one."""
    runs: dict[str, tuple[list, list]] = {name: ([], []) for name in variants}
    for round_ in range(loads):
        order = list(variants.items())
        for name, (load, setup) in order[::-1] if round_ % 2 else order:
            context = browser.new_context(storage_state=state, viewport={"width": 1400, "height": 900})
            if setup:
                setup(context)
            page = context.new_page()
            page.on("pageerror", lambda e: ERRORS.append(str(e)))
            runs[name][0].append(load(page))
            runs[name][1].append(load(page))
            context.close()
    return runs


def _summary(prefix: str, cold: list[float], warm: list[float]) -> dict:
    return {f"{prefix}_cold_p50_ms": statistics.median(cold), f"{prefix}_cold_p95_ms": p95(cold),
            f"{prefix}_warm_p50_ms": statistics.median(warm), f"{prefix}_warm_p95_ms": p95(warm)}


def page_figures(server_id: int, series_metrics: list[str], start, end, loads: int = 7) -> dict:
    from playwright.sync_api import sync_playwright

    _bench_user()
    proc, base = start_server()
    before_dir = before_tree()
    before_proc, before_base = start_server(before_dir)
    out: dict = {"page_loads": loads, "server_page_before_commit": BEFORE_COMMIT}
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
            state = _login_state(browser, base)
            path = f"/servers/{server_id}/?range={THIRTY_DAYS_S}"
            now_page, before_page = (lambda p: _server_page(p, base + path)), (lambda p: _server_page(p, before_base + path))
            # Before the first page-speed round the page loaded the full bundle: the same page with it
            # swapped in (through a route, which turns off the HTTP cache: its "warm" reloads download again).
            runs = _measure_in_turn(browser, state, loads, {
                "server_page_30d": (now_page, None),
                "server_page_30d_before": (before_page, None),
                "server_page_30d_full_plotly": (now_page, swap_variant("**/vendor/plotly-basic-*.min.js",
                                                                       f"{base}/static/vendor/plotly-3.3.1.min.js")),
            })
            for name, (cold, warm) in runs.items():
                out.update(_summary(name, cold, warm))
                out[f"{name}_cold_samples_ms"] = [round(t) for t in cold]
                out[f"{name}_warm_samples_ms"] = [round(t) for t in warm]
            out.update(_summary("overview_page", *_measure(browser, state, lambda p: _overview(p, base + "/"), loads)))
            page_js = _page_plotly()
            out["server_page_plotly"] = page_js
            out.update(_summary("plotly_only_page", *_measure(browser, state,
                                                              lambda p: _plotly_only(p, base, page_js), loads)))
            full_js = "vendor/plotly-3.3.1.min.js"  # the full bundle, for comparison
            out.update(_summary("plotly_full_only_page", *_measure(browser, state,
                                                                   lambda p: _plotly_only(p, base, full_js), loads)))
            series_url = (f"{base}/api/v1/servers/{server_id}/series?metrics={','.join(series_metrics)}"
                          f"&start={start.isoformat().replace('+00:00', 'Z')}"
                          f"&end={end.isoformat().replace('+00:00', 'Z')}&points=1500")
            context = browser.new_context(storage_state=state)
            page = context.new_page()
            page.goto(f"{base}/login/")
            times = [_series_alone(page, series_url) for _ in range(loads)]
            context.close()
            out["series_api_in_browser_p50_ms"] = statistics.median(times)
            out["series_api_in_browser_p95_ms"] = p95(times)
            browser.close()
        out["page_errors"] = ERRORS[:5]
    finally:
        stop_server(proc)
        stop_server(before_proc)
        shutil.rmtree(before_dir, ignore_errors=True)
    return out
