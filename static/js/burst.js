// Burst page: step through the raw readings of each second. Everything the server printed reaches
// the page through textContent only.
(function () {
  "use strict";
  const cfg = JSON.parse(document.getElementById("page-config").textContent).burst;
  const el = (id) => document.getElementById(id);
  const slider = el("step"), what = el("step-what"), text = el("step-text"), label = el("step-label");
  const cache = new Map();
  if (!cfg.seconds.length) { label.textContent = "No second was read."; return; }

  async function second(seq) {
    if (!cache.has(seq)) {
      cache.set(seq, fetch(cfg.second_url + seq, { credentials: "same-origin" }).then((r) => {
        if (!r.ok) throw new Error(String(r.status));
        return r.json();
      }));
    }
    return cache.get(seq);
  }
  function rowsText(rows) {
    return rows.map((r) => Object.entries(r).map(([k, v]) => k + ": " + (v === null ? "NULL" : v)).join("\n")).join("\n\n");
  }
  function render(d) {
    const kind = what.value;
    if (kind === "innodb_status") return d.innodb_status;
    if (kind === "global_status") return Object.entries(d.global_status).map(([k, v]) => k + "\t" + v).join("\n");
    if (kind === "processlist") return rowsText(d.processlist) || "(no sessions)";
    if (kind === "innodb_trx") return rowsText(d.innodb_trx) || "(no open transaction)";
    return d.diskstats || "(not read: this worker cannot read the server's disks)";
  }
  async function show() {
    const seq = cfg.seconds[Math.min(parseInt(slider.value, 10) || 0, cfg.seconds.length - 1)];
    try {
      const d = await second(seq);
      if (cfg.seconds[parseInt(slider.value, 10)] !== seq) return;  // moved on meanwhile
      label.textContent = "second " + d.seq + " · " + d.ts.replace("T", " ").slice(0, 23) + " UTC" +
        (d.threads_running === null ? "" : " · " + d.threads_running + " threads running");
      text.textContent = render(d);
      document.body.dataset.stepShown = String(d.seq);
    } catch (e) {
      label.textContent = "second " + seq + " could not be read (" + e.message + ")";
    }
  }
  // The slider moves over the seconds actually read (a failed read leaves a gap in seq).
  const start = cfg.seconds.indexOf(parseInt(slider.value, 10));
  slider.max = String(cfg.seconds.length - 1);
  slider.value = String(start < 0 ? 0 : start);
  slider.addEventListener("input", show);
  what.addEventListener("change", show);
  el("step-prev").addEventListener("click", () => { slider.value = String(Math.max(0, +slider.value - 1)); show(); });
  el("step-next").addEventListener("click", () => { slider.value = String(Math.min(cfg.seconds.length - 1, +slider.value + 1)); show(); });
  show();
})();
