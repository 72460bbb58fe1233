// Server page, "what if" panel: POST /api/v1/servers/<id>/what-if and draw measured, replayed
// (variables in force) and what-if checkpoint age on one chart against the async points.
// Server-supplied text only reaches the DOM through textContent.
(function () {
  "use strict";
  const panel = document.getElementById("whatif-panel");
  if (!panel) return;
  const form = document.getElementById("whatif-form");
  const errorBox = document.getElementById("whatif-error");
  const csrf = form.querySelector("input[name=csrfmiddlewaretoken]").value;
  const VARS = ["innodb_io_capacity", "innodb_io_capacity_max", "innodb_adaptive_flushing",
                "innodb_max_dirty_pages_pct_lwm"];

  function iso(value) { return value ? new Date(value).toISOString() : undefined; }
  function body() {
    const f = new FormData(form), overrides = {};
    VARS.forEach((name) => { if (f.get(name)) overrides[name] = f.get(name); });
    if (f.get("redo_mb")) overrides[panel.dataset.redoVar || "innodb_log_file_size"] = Math.round(f.get("redo_mb") * 1048576);
    return { start: iso(f.get("start")), end: iso(f.get("end")), overrides };
  }
  function mb(list) { return list.map((v) => v / 1e6); }
  function draw(d) {
    const x = d.t.map((ms) => new Date(ms));
    const line = (y, name, color, dash) => ({ x, y: mb(y), name, type: "scatter", mode: "lines",
                                             line: { color, dash: dash || "solid", width: 2 } });
    const level = (bytes, name, color) => ({ x: [x[0], x[x.length - 1]], y: [bytes / 1e6, bytes / 1e6], name,
                                             type: "scatter", mode: "lines", line: { color, dash: "dot", width: 1 } });
    const traces = [
      line(d.measured.checkpoint_age_bytes, "measured", "#1f77b4"),
      line(d.replayed.checkpoint_age_bytes, "replayed (in force)", "#7f7f7f", "dash"),
      line(d.what_if.checkpoint_age_bytes, "what if", "#d62728"),
      level(d.thresholds.in_force.async_bytes, "async point (in force)", "#ff7f0e"),
    ];
    if (d.thresholds.what_if.async_bytes !== d.thresholds.in_force.async_bytes) {
      traces.push(level(d.thresholds.what_if.async_bytes, "async point (what if)", "#9467bd"));
    }
    const layout = { margin: { t: 10, r: 10, b: 40, l: 60 }, height: 320, yaxis: { title: { text: "checkpoint age (MB)" } },
                     legend: { orientation: "h" } };
    window.Plotly.react("whatif-chart", traces, layout, { displaylogo: false, responsive: true });
    drawFlushing(d, x);
  }
  // Pages flushed per second (measured total, what-if by path) and dirty pages on the right axis.
  function drawFlushing(d, x) {
    const colors = { background: "#2ca02c", adaptive: "#d62728", async: "#ff7f0e", sync: "#8c564b" };
    const traces = [{ x, y: d.measured.flush_per_s.total, name: "flushed/s measured", type: "scatter",
                      mode: "lines", line: { color: "#1f77b4", width: 1 } }];
    Object.keys(colors).forEach((path) => {
      const y = d.what_if.flush_per_s[path];
      if (y.some((v) => v > 0)) {
        traces.push({ x, y, name: "what if: " + path, type: "scatter", mode: "lines", line: { color: colors[path], width: 1 } });
      }
    });
    traces.push({ x, y: d.measured.pages_dirty, name: "dirty measured", yaxis: "y2", type: "scatter", mode: "lines",
                  line: { color: "#1f77b4", dash: "dot", width: 1 } });
    traces.push({ x, y: d.what_if.pages_dirty, name: "dirty what if", yaxis: "y2", type: "scatter", mode: "lines",
                  line: { color: "#d62728", dash: "dot", width: 1 } });
    const layout = { margin: { t: 10, r: 60, b: 40, l: 60 }, height: 260, legend: { orientation: "h" },
                     yaxis: { title: { text: "pages flushed/s" } },
                     yaxis2: { title: { text: "dirty pages" }, overlaying: "y", side: "right" } };
    window.Plotly.react("whatif-flush-chart", traces, layout, { displaylogo: false, responsive: true });
  }
  function pct(v) { return v === null || v === undefined ? "n/a" : (v > 0 ? "+" : "") + v.toFixed(0) + " %"; }
  function show(d) {
    document.getElementById("whatif-verdict").textContent = d.verdict;
    document.getElementById("whatif-fit").textContent =
      "Replay with the variables in force vs measured checkpoint age: mean " + pct(d.fit.mean_error_pct) +
      ", p95 " + pct(d.fit.p95_error_pct) + " (" + new Date(d.start).toLocaleString() + " – " +
      new Date(d.end).toLocaleString() + ")" + (d.warnings.length ? ". " + d.warnings.join("; ") : "");
    draw(d);
  }
  async function run(event) {
    if (event) event.preventDefault();
    errorBox.hidden = true;
    try {
      const response = await fetch(panel.dataset.api, {
        method: "POST", credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRFToken": csrf },
        body: JSON.stringify(body()),
      });
      const data = await response.json().catch(() => ({}));
      if (!response.ok) throw new Error(data.error || String(response.status));
      show(data);
      redoSizing(data.end);
    } catch (err) {
      errorBox.textContent = "What if: " + err.message;
      errorBox.hidden = false;
    }
  }
  form.addEventListener("submit", run);

  // Redo sizing over the 7 days up to the end of the replayed range, in one sentence.
  async function redoSizing(endIso) {
    const box = document.getElementById("whatif-redo");
    const end = new Date(endIso), start = new Date(end.getTime() - 7 * 86400000);
    const url = panel.dataset.redoApi + "?start=" + encodeURIComponent(start.toISOString()) +
                "&end=" + encodeURIComponent(end.toISOString());
    const response = await fetch(url, { credentials: "same-origin" });
    const d = await response.json().catch(() => ({}));
    if (!response.ok) { box.textContent = "Redo sizing: " + (d.error || response.status); return; }
    const mib = (b) => (b / 1048576).toFixed(0) + " MB";
    const held = d.minutes_held === null ? "no writes" : d.minutes_held.toFixed(1) + " minutes";
    const smallest = d.smallest_capacity_below_async_bytes === null ? "none up to 512 GB"
      : mib(d.smallest_capacity_below_async_bytes);
    box.textContent = "Redo sizing (7 days to the end of the range): the " + mib(d.capacity_bytes) + " log holds " + held +
      " of the busiest hour's writes (from " + new Date(d.busiest_hour_start).toLocaleString() +
      "); smallest size that keeps that hour below the async point with these flushing settings: " +
      smallest + "; resize: " + d.resize + ".";
  }
})();
