// Server page: every chart on one time axis. Zoom one and all follow, then all are refetched at
// the finer resolution. Data comes from the series API; the chart specs (series, limits, bands)
// come from the page config that dashboard/charts.py builds. Text from monitored servers or
// annotations only ever reaches the DOM through textContent or Plotly's escaped hover text.
(function () {
  "use strict";
  const cfg = JSON.parse(document.getElementById("page-config").textContent);
  const el = (id) => document.getElementById(id);
  const rangeSelect = el("range"), utcBox = el("utc"), autoBox = el("auto-refresh");
  const charts = cfg.charts.map((spec) => ({ spec, div: el(spec.id) })).filter((c) => c.div);
  const state = { mode: "relative", seconds: 3600, start: 0, end: 0, utc: false };
  let annotations = [];
  let blockers = [];  // oldest-read-view holders over the range, as intervals
  let steps = {};  // purge variables over the range, as steps from the variable history
  let syncing = 0;
  let timer = null;
  let generation = 0;
  // The template loads this file before plotly.js, so the data requests below go out while the
  // browser is still parsing and compiling plotly.js (0.2-0.4 s cold); drawing waits for both.
  const plotlyReady = window.Plotly || document.readyState !== "loading" ? Promise.resolve()
    : new Promise((resolve) => document.addEventListener("DOMContentLoaded", resolve, { once: true }));

  // --- time: Plotly date axes are zone-less, so we shift instants into the zone shown. Trace x
  // values are shifted epoch-ms numbers (no date string to format, nor for Plotly to parse, per
  // point); ranges, shapes and labels are zone-less strings.
  function offsetMs(ms) { return state.utc ? 0 : new Date(ms).getTimezoneOffset() * 60000; }
  function toX(ms) { return ms - offsetMs(ms); }
  function toAxis(ms) { return new Date(toX(ms)).toISOString().slice(0, 23).replace("T", " "); }
  function fromAxis(value) {  // an axis value (shifted ms or zone-less string) back to an instant
    if (typeof value === "number") return value + offsetMs(value);
    const m = String(value).match(/^(\d{4})-(\d\d)-(\d\d)(?:[ T](\d\d)(?::(\d\d)(?::(\d\d)(\.\d+)?)?)?)?/);
    if (!m) return NaN;
    const ms = Date.UTC(+m[1], +m[2] - 1, +m[3], +(m[4] || 0), +(m[5] || 0), +(m[6] || 0),
      Math.round(parseFloat(m[7] || "0") * 1000));
    return ms + offsetMs(ms);
  }
  function currentRange() {
    if (state.mode === "relative") {
      const end = Date.now();
      return [end - state.seconds * 1000, end];
    }
    return [state.start, state.end];
  }
  function fmtRange(r) {
    const f = (ms) => toAxis(ms).slice(0, 19) + (state.utc ? " UTC" : "");
    return f(r[0]) + " – " + f(r[1]);
  }

  // --- data ---
  async function getJSON(url) {
    const response = await fetch(url, { credentials: "same-origin" });
    if (!response.ok) throw new Error(String(response.status));
    return response.json();
  }
  function seriesUrl(metrics, range, points) {
    return cfg.series_url + "?metrics=" + encodeURIComponent(metrics.join(",")) +
      "&start=" + new Date(range[0]).toISOString() + "&end=" + new Date(range[1]).toISOString() +
      "&points=" + points;
  }
  function chartMetrics(spec) {
    const names = spec.series.map((s) => s.metric);
    (spec.derived || []).forEach((d) => names.push(...d.inputs));
    return Array.from(new Set(names));
  }
  // Gauges share one request (one scan of the range), sent first: most charts need one (a series
  // or a derived input), and the server's workers answer in the order asked. Each chart with rates
  // gets its own request, and a chart that needs no gauge draws as soon as its own data is in.
  function fetchAll(range, points) {
    const gauges = new Set(), own = new Map();
    charts.forEach(({ spec }) => {
      const names = chartMetrics(spec);
      const mine = names.filter((m) => spec.separate_fetch || cfg.kinds[m] !== "gauge");
      names.filter((m) => !mine.includes(m)).forEach((m) => gauges.add(m));
      own.set(spec.id, mine);
    });
    const shared = gauges.size ? getJSON(seriesUrl(Array.from(gauges), range, points)) : null;
    const none = Promise.resolve({ metrics: {} });
    return charts.map(({ spec }) => {
      const mine = own.get(spec.id);
      const needsShared = shared && chartMetrics(spec).length > mine.length;
      return Promise.all([needsShared ? shared : none, mine.length ? getJSON(seriesUrl(mine, range, points)) : none])
        .then(([a, b]) => Object.assign({}, a.metrics, b.metrics));
    });
  }
  async function fetchAnnotations(range) {
    const url = cfg.annotations_url + "?server=" + cfg.server_id + "&start=" + new Date(range[0]).toISOString() +
      "&end=" + new Date(range[1]).toISOString();
    try {
      const body = await getJSON(url);
      const list = Array.isArray(body) ? body : (body.annotations || body.results || []);
      return list.map((a) => ({
        t0: Date.parse(a.time || a.ts || a.start || a.at),
        t1: a.time_end || a.end ? Date.parse(a.time_end || a.end) : null,
        text: String(a.text || ""), kind: String(a.kind || ""),
      })).filter((a) => !isNaN(a.t0));
    } catch (e) {
      return [];  // no annotations endpoint yet (404), or it failed: charts still draw
    }
  }

  // --- figures ---
  const PALETTE = ["#0969da", "#1a7f37", "#8250df", "#bc4c00", "#bf3989", "#57606a"];
  const BAND = "rgba(9,105,218,0.15)";
  const escapeText = (s) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  function seriesTraces(s, data, first, color) {
    if (!data || !data.t || data.t.length === 0) return [];
    const scale = s.scale || 1, axis = s.axis || "y";
    const x = data.t.map(toX);
    const sc = (arr) => arr.map((v) => (v === null ? null : v * scale));
    const out = [];
    if (first) {  // min–max band: a one-bucket spike stays visible however long the range
      out.push({ x, y: sc(data.max), yaxis: axis, mode: "lines", line: { width: 0 }, showlegend: false, hoverinfo: "skip" });
      out.push({ x, y: sc(data.min), yaxis: axis, mode: "lines", line: { width: 0 }, fill: "tonexty",
        fillcolor: BAND, showlegend: false, hoverinfo: "skip" });
    }
    out.push({ x, y: sc(data.avg), yaxis: axis, name: s.label, mode: "lines", line: { width: 1.5, color } });
    return out;
  }
  // Runway at each bucket: least-squares growth of checkpoint age over the trailing window
  // (at least 5 minutes and 5 buckets), as analysis.checkpoint.runway_minutes does for "now".
  const RUNWAY_CAP_MIN = 240;
  function runwayTrace(d, metrics) {
    const s = metrics[d.inputs[0]], stall = cfg.limits.stall_bytes;
    if (!s || !s.t.length || !stall) return [];
    const step = s.t.length > 1 ? (s.t[s.t.length - 1] - s.t[0]) / (s.t.length - 1) : 0;
    const windowMs = Math.max(300000, 5 * step);
    const x = [], y = [];
    let lo = 0;
    for (let i = 0; i < s.t.length; i++) {
      while (s.t[i] - s.t[lo] > windowMs) lo++;
      let n = 0, mt = 0, mv = 0;
      for (let j = lo; j <= i; j++) if (s.avg[j] !== null) { n++; mt += s.t[j]; mv += s.avg[j]; }
      let runway = null;
      if (s.avg[i] !== null && s.avg[i] >= stall) runway = 0;
      else if (n >= 2) {
        mt /= n; mv /= n;
        let sxy = 0, sxx = 0;
        for (let j = lo; j <= i; j++) if (s.avg[j] !== null) { sxy += (s.t[j] - mt) * (s.avg[j] - mv); sxx += (s.t[j] - mt) ** 2; }
        const perMs = sxx > 0 ? sxy / sxx : 0;
        if (perMs > 0 && s.avg[i] !== null) runway = (stall - s.avg[i]) / perMs / 60000;
      }
      x.push(toX(s.t[i])); y.push(runway !== null && runway <= RUNWAY_CAP_MIN ? runway : null);
    }
    return [{ x, y, yaxis: d.axis || "y", name: d.label, mode: "lines", connectgaps: false,
      line: { width: 1.2, color: "#d1242f", dash: "dot" } }];
  }
  function derivedTrace(d, metrics) {
    if (d.name === "runway_min") return runwayTrace(d, metrics);
    const [num, a, b] = d.inputs.map((n) => metrics[n]);
    if (!num || !a || !num.t.length) return [];
    const byT = (s) => new Map((s ? s.t : []).map((t, i) => [t, s.avg[i]]));
    const A = byT(a), B = byT(b);
    const x = [], y = [];
    num.t.forEach((t, i) => {
      const base = (A.get(t) || 0) + (B.get(t) || 0);
      if (base > 0 && num.avg[i] !== null) { x.push(toX(t)); y.push(100 * num.avg[i] / base); }
    });
    return [{ x, y, yaxis: d.axis || "y", name: d.label, mode: "lines", line: { width: 1.5, dash: "dot", color: PALETTE[4] } }];
  }
  // Variables as step lines ("hv": the value holds until the poll that saw the change).
  function stepTraces(spec) {
    return (spec.variable_steps || []).flatMap((v, i) => {
      const s = steps[v.name];
      if (!s || s.value.every((x) => x === null)) return [];
      return [{ x: s.t.map(toX), y: s.value, yaxis: v.axis || "y", name: v.label, mode: "lines",
        line: { shape: "hv", width: 2, color: PALETTE[(i + 2) % PALETTE.length] } }];
    });
  }
  const NOTES = {
    innodb_max_purge_lag: (v) => v === 0 ? "innodb_max_purge_lag 0: DML never delayed"
      : "innodb_max_purge_lag " + v + " undo log units: above it each row operation waits (HLL/lag − 0.5) × 10 ms",
    // trx_purge_dml_delay clamps the delay to this cap (5.6+, MariaDB): at 0 nothing is delayed.
    innodb_max_purge_lag_delay: (v) => v === 0 ? "innodb_max_purge_lag_delay 0 µs: the delay is capped at 0, DML never delayed"
      : "innodb_max_purge_lag_delay " + v + " µs: the longest delay per row operation",
  };
  function variableNotes(spec) {
    const lines = (spec.variable_notes || []).concat((spec.variable_steps || []).map((v) => v.name)).map((name) => {
      const s = steps[name];
      const last = s ? s.value[s.value.length - 1] : null;
      if (last === null || last === undefined) return s ? name + ": not on this version" : null;
      return NOTES[name] ? NOTES[name](last) : null;
    }).filter((t) => t);
    // Above the plot area (layout() gives these charts a taller top margin), clear of the step lines.
    return lines.length ? [{ xref: "paper", yref: "paper", x: 0, y: 1, xanchor: "left", yanchor: "bottom", align: "left",
      showarrow: false, text: lines.map(escapeText).join("<br>"), font: { size: 10, color: "#57606a" } }] : [];
  }
  function annotationTrace(spec) {
    if (!annotations.length) return [];
    return [{
      x: annotations.map((a) => toX(a.t0)), y: annotations.map(() => 0.97), yaxis: "y3",
      mode: "markers", marker: { symbol: "triangle-down", size: 11, color: "#8250df" },
      name: "annotations", showlegend: false, hoverinfo: "text",
      hovertext: annotations.map((a) => escapeText((a.kind ? a.kind + ": " : "") + a.text)),
      meta: "annotations",
    }];
  }
  function shapes(spec, range) {
    const out = [];
    (spec.bands || []).forEach((b) => out.push({ type: "rect", xref: "paper", x0: 0, x1: 1, yref: "y", y0: b.y0, y1: b.y1,
      fillcolor: b.color, opacity: 0.1, line: { width: 0 }, layer: "below" }));
    (spec.lines || []).forEach((l) => out.push({ type: "line", xref: "paper", x0: 0, x1: 1, yref: l.axis || "y",
      y0: l.y, y1: l.y, line: { color: l.color, width: 1.2, dash: l.dash } }));
    if (spec.blocker_bands) {
      blockers.forEach((b) => out.push({ type: "rect", xref: "x", yref: "paper", x0: toAxis(b.t0), x1: toAxis(Math.max(b.t1, b.t0 + 1000)),
        y0: 0, y1: 1, fillcolor: "#d1242f", opacity: 0.12, line: { width: 0 }, layer: "below" }));
    }
    annotations.forEach((a) => {
      const t1 = a.t1 && a.t1 > a.t0 ? a.t1 : a.t0;
      out.push({ type: t1 > a.t0 ? "rect" : "line", xref: "x", yref: "paper", x0: toAxis(a.t0), x1: toAxis(t1), y0: 0, y1: 1,
        fillcolor: "#8250df", opacity: t1 > a.t0 ? 0.08 : 0.6, line: { color: "#8250df", width: 1, dash: "dot" } });
    });
    return out;
  }
  function lineLabels(spec) {
    return (spec.lines || []).map((l) => ({ xref: "paper", x: 1, xanchor: "right", yref: l.axis || "y", y: l.y,
      yanchor: "bottom", text: l.label, showarrow: false, font: { size: 10, color: l.color } }));
  }
  function layout(spec, range) {
    const hasY2 = spec.series.some((s) => s.axis === "y2") || (spec.derived || []).length > 0 ||
      (spec.variable_steps || []).some((v) => v.axis === "y2") ||
      (spec.lines || []).some((l) => l.axis === "y2");
    // Drawing time: tick labels may overflow (the default measures every label to hide
    // those past the div; the margins leave them room), and the bottom margin already holds one row of
    // legend (the legend would push it there, and Plotly would lay the chart out a second time).
    // The chart's title and its axes' units are the HTML heading above the div (server.html): Plotly
    // measures and lays out no title text, and the plot area keeps its size (the div is 24 px shorter).
    const out = {
      height: 256,
      margin: { l: 52, r: hasY2 ? 48 : 15, t: 10, b: 72 }, hovermode: "x unified",
      xaxis: { type: "date", range: [toAxis(range[0]), toAxis(range[1])], ticklabeloverflow: "allow" },
      yaxis: { rangemode: "tozero", ticklabeloverflow: "allow" },
      yaxis3: { overlaying: "y", range: [0, 1], visible: false, fixedrange: true },
      legend: { orientation: "h", y: -0.18 }, shapes: shapes(spec, range),
      annotations: lineLabels(spec).concat(variableNotes(spec)),
    };
    if ((spec.variable_notes || []).length) out.margin.t = 34;
    if (hasY2) out.yaxis2 = { overlaying: "y", side: "right", rangemode: "tozero", ticklabeloverflow: "allow" };
    return out;
  }
  async function drawChart(chart, metricsPromise, range, gen) {
    const { spec, div } = chart;
    let metrics;
    try {
      metrics = await metricsPromise;
    } catch (e) {
      if (gen === generation) { div.textContent = "Could not load data (" + e.message + ")"; div.dataset.drawn = "0"; }
      return;
    }
    if (gen !== generation) return;  // a newer range was asked for meanwhile
    let data = [];
    spec.series.forEach((s, i) => {
      if (s.optional && !(metrics[s.metric] && metrics[s.metric].t.length)) return;
      data = data.concat(seriesTraces(s, metrics[s.metric], i === 0, PALETTE[i % PALETTE.length]));
    });
    (spec.derived || []).forEach((d) => { data = data.concat(derivedTrace(d, metrics)); });
    data = data.concat(stepTraces(spec));
    const empty = data.length === 0;
    data = data.concat(annotationTrace(spec));
    const figureLayout = layout(spec, range);
    if (empty) figureLayout.annotations.push({ xref: "paper", yref: "paper", x: 0.5, y: 0.5, showarrow: false,
      text: "no data in this range", font: { color: "#57606a" } });
    await plotlyReady;
    if (gen !== generation) return;
    syncing++;
    try {
      await Plotly.react(div, data, figureLayout, { responsive: true, displayModeBar: false, doubleClick: "autosize" });
    } finally { syncing--; }
    const first = spec.series.length ? metrics[spec.series[0].metric] : null;
    div.dataset.drawn = String(data.length);
    div.dataset.points = String(first && first.t ? first.t.length : 0);
    div.dataset.range = Math.round(range[0]) + "," + Math.round(range[1]);
    if (!div.dataset.bound) bind(div);
  }

  // --- one time axis ---
  function bind(div) {
    div.dataset.bound = "1";
    div.on("plotly_relayout", (ev) => {
      if (syncing) return;
      let r = ev["xaxis.range"];
      if (!r && ev["xaxis.range[0]"] !== undefined) r = [ev["xaxis.range[0]"], ev["xaxis.range[1]"]];
      if (r) zoomTo(fromAxis(r[0]), fromAxis(r[1]), div);
      else if (ev["xaxis.autorange"]) resetZoom();
    });
    div.on("plotly_click", (ev) => {
      const p = ev.points && ev.points[0];
      if (!p || (ev.event && ev.event.shiftKey)) return;  // shift-click annotates (annotations.js)
      const at = new Date(fromAxis(p.x)).toISOString();
      window.open(cfg.raw_url + "?at=" + encodeURIComponent(at), "_blank", "noopener");
    });
  }
  async function zoomTo(start, end, source) {
    if (!(end > start)) return;
    state.mode = "zoom"; state.start = start; state.end = end;
    const axisRange = { "xaxis.range": [toAxis(start), toAxis(end)] };
    syncing++;
    try {  // instant feedback on every chart, then the finer data
      await Promise.all(charts.filter((c) => c.div !== source && c.div.dataset.bound).map((c) => Plotly.relayout(c.div, axisRange)));
    } finally { syncing--; }
    refresh();
  }
  function resetZoom() {
    if (rangeSelect.value === "custom") applyCustom(); else { state.mode = "relative"; refresh(); }
  }

  // --- latches table ---
  async function drawLatches(range) {
    const tbody = el("latch-table").tBodies[0];
    let body;
    try {
      body = await getJSON(cfg.latches_url + "?start=" + new Date(range[0]).toISOString() + "&end=" + new Date(range[1]).toISOString());
    } catch (e) { return; }
    tbody.replaceChildren();
    const rows = body.latches || [];
    if (!rows.length) {
      const tr = tbody.insertRow(), td = tr.insertCell();
      td.colSpan = 5; td.className = "muted"; td.textContent = "No thread waited on a latch in this range.";
    }
    rows.forEach((r) => {
      const tr = tbody.insertRow();
      const cells = [(r.created_file || "?") + ":" + (r.created_line === null ? "?" : r.created_line), r.latch || "",
        r.waits, r.samples, r.longest_s === null ? "" : Number(r.longest_s).toFixed(0)];
      cells.forEach((v, i) => { const td = tr.insertCell(); td.textContent = String(v); if (i > 1) td.className = "num"; });
    });
  }

  // --- what holds purge back ---
  async function fetchBlockers(range) {
    try {
      const rows = await getJSON(cfg.blockers_url + "?start=" + new Date(range[0]).toISOString() + "&end=" + new Date(range[1]).toISOString());
      return rows.map((r) => ({ ...r, t0: Date.parse(r.first_seen), t1: Date.parse(r.last_seen) }));
    } catch (e) { return []; }
  }
  async function fetchSteps(range) {
    const names = new Set();
    charts.forEach(({ spec }) => (spec.variable_steps || []).map((v) => v.name).concat(spec.variable_notes || [])
      .forEach((n) => names.add(n)));
    if (!names.size) return {};
    try {
      const body = await getJSON(cfg.steps_url + "?names=" + encodeURIComponent(Array.from(names).join(",")) +
        "&start=" + new Date(range[0]).toISOString() + "&end=" + new Date(range[1]).toISOString());
      return body.variables || {};
    } catch (e) { return {}; }
  }
  function drawBlockers() {
    if (!el("blocker-table")) return;  // a page without the table (a burst's) still draws the bands
    const tbody = el("blocker-table").tBodies[0];
    tbody.replaceChildren();
    if (!blockers.length) {
      const tr = tbody.insertRow(), td = tr.insertCell();
      td.colSpan = 7; td.className = "muted"; td.textContent = "No read view was held 10 s or more in this range.";
    }
    const NOT_SHOWN = "not shown by this version";
    const num = (v) => (v === null || v === undefined ? "–" : String(v));
    blockers.forEach((b) => {
      const tr = tbody.insertRow();
      const who = b.user || b.host ? (b.user || "?") + "@" + (b.host || "?") : NOT_SHOWN;
      const cells = [b.thread_id === null ? NOT_SHOWN : b.thread_id, who,
        toAxis(b.t0).slice(0, 19) + " – " + toAxis(b.t1).slice(11, 19), num(b.max_age_s), b.trx_id || "",
        num(b.rows_locked) + " / " + num(b.rows_modified), b.statement || ""];
      cells.forEach((v, i) => { const td = tr.insertCell(); td.textContent = String(v); if (i === 3 || i === 5) td.className = "num"; });
    });
  }

  // --- refresh loop ---
  async function refresh() {
    const gen = ++generation;
    const range = currentRange();
    el("range-label").textContent = fmtRange(range);
    const width = charts.length ? charts[0].div.clientWidth || 800 : 800;
    const points = Math.max(100, Math.min(1500, Math.floor(width)));
    const annotationsDone = fetchAnnotations(range).then((a) => { if (gen === generation) annotations = a; });
    const blockersDone = fetchBlockers(range).then((b) => { if (gen === generation) { blockers = b; drawBlockers(); } });
    const stepsDone = fetchSteps(range).then((s) => { if (gen === generation) steps = s; });
    const metricPromises = fetchAll(range, points);
    await Promise.all([annotationsDone, blockersDone, stepsDone]);
    await Promise.all(charts.map((c, i) => drawChart(c, metricPromises[i], range, gen)));
    drawLatches(range);
    if (gen === generation) document.body.dataset.chartsReady = "1";
  }
  function schedule() {
    clearInterval(timer);
    timer = null;
    if (document.hidden || !autoBox.checked) return;
    const every = Math.max(10, cfg.poll_interval_s) * 1000;
    timer = setInterval(() => { if (state.mode === "relative") refresh(); }, every);
  }
  function localInput(ms) { return toAxis(ms).slice(0, 19).replace(" ", "T"); }
  function applyCustom() {
    const start = fromAxis(el("range-start").value), end = fromAxis(el("range-end").value);
    if (!(end > start)) { el("range-label").textContent = "The start must be before the end."; return; }
    state.mode = "absolute"; state.start = start; state.end = end;
    refresh();
  }

  rangeSelect.addEventListener("change", () => {
    const custom = rangeSelect.value === "custom";
    el("custom-range").hidden = !custom;
    if (custom) {
      const r = currentRange();
      el("range-start").value = localInput(r[0]); el("range-end").value = localInput(r[1]);
      return;
    }
    state.mode = "relative"; state.seconds = parseInt(rangeSelect.value, 10);
    refresh();
  });
  el("range-apply").addEventListener("click", applyCustom);
  utcBox.addEventListener("change", () => {
    const r = currentRange();
    state.utc = utcBox.checked;
    if (state.mode !== "relative") { state.start = r[0]; state.end = r[1]; }
    refresh();
  });
  autoBox.addEventListener("change", schedule);
  // annotations.js (or anything else that changes what the charts show) asks for a redraw.
  document.addEventListener("innowatch:annotations-changed", () => refresh());
  document.addEventListener("visibilitychange", () => {
    if (!document.hidden && state.mode === "relative" && autoBox.checked) refresh();
    schedule();
  });
  // ?range=<seconds> (one of the menu's choices) opens the page on that range: shareable links, the bench.
  const asked = new URLSearchParams(location.search).get("range");
  if (asked && Array.from(rangeSelect.options).some((o) => o.value === asked)) rangeSelect.value = asked;
  state.seconds = parseInt(rangeSelect.value, 10) || 3600;
  // ?start=<ISO>&end=<ISO> opens the page on that window (the links in alert notifications).
  const from = Date.parse(new URLSearchParams(location.search).get("start") || "");
  const to = Date.parse(new URLSearchParams(location.search).get("end") || "");
  if (from < to) { state.mode = "zoom"; state.start = from; state.end = to; }
  // A page about one stretch of time (a burst's) opens on it and stays there.
  if (cfg.fixed_range) { state.mode = "absolute"; state.start = cfg.fixed_range[0]; state.end = cfg.fixed_range[1]; autoBox.checked = false; }
  refresh();
  schedule();
})();
