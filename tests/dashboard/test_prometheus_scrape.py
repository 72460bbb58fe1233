"""A real Prometheus (Debian's package, installed by `make test`) scrapes `/metrics` with a Bearer
token, and a query for the local server's checkpoint age returns what the API gives."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import urllib.parse
import urllib.request

import pytest

from tests.conftest import free_port
from tests.dashboard.test_prometheus_metrics import sampled  # noqa: F401  (the fixture)

PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"
pytestmark = pytest.mark.django_db(transaction=True)


def _query(port: int, expr: str) -> list:
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.load(response)["data"]["result"]


def test_prometheus_scrapes_the_checkpoint_age_the_api_gives(live_server, api_token, sampled, tmp_path):  # noqa: F811
    if not shutil.which("prometheus"):
        pytest.fail("prometheus is not installed: `make test` installs Debian's prometheus package")
    target = live_server.url.removeprefix("http://")
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global: {scrape_interval: 1s}\n"
        "scrape_configs:\n"
        "  - job_name: innowatch\n"
        "    metrics_path: /metrics\n"
        f"    authorization: {{type: Bearer, credentials: {api_token}}}\n"
        f"    static_configs: [{{targets: ['{target}']}}]\n")
    port = free_port()
    process = subprocess.Popen([PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'data'}",
                                f"--web.listen-address=127.0.0.1:{port}"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline, result = time.monotonic() + 40, []
        while time.monotonic() < deadline and not result:
            time.sleep(1)
            try:
                result = _query(port, f'innowatch_innodb_checkpoint_age_bytes{{server="{sampled.name}"}}')
            except OSError:
                continue
        assert result, "Prometheus never scraped the checkpoint age"
        scraped = float(result[0]["value"][1])
        from django.test import Client

        api = Client().get(f"/api/v1/servers/{sampled.pk}/series", {"metrics": "checkpoint_age_bytes"},
                           HTTP_AUTHORIZATION=f"Bearer {api_token}").json()
        assert scraped == api["metrics"]["checkpoint_age_bytes"]["max"][-1] == 20_000_002
        assert _query(port, "up")[0]["value"][1] == "1"
    finally:
        process.terminate()
        process.wait(timeout=20)
