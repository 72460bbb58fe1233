// Server page: list, add, edit and delete annotations through /api/v1/annotations.
// Shift-click on any chart fills the time field. Annotation text is user and server data:
// it only ever reaches the DOM through textContent.
(function () {
  "use strict";
  const panel = document.getElementById("annotations-panel");
  if (!panel) return;
  const form = document.getElementById("annotation-form");
  const errorBox = document.getElementById("annotation-error");
  const tbody = document.querySelector("#annotation-list tbody");
  const api = panel.dataset.api, serverId = panel.dataset.serverId;
  const csrf = form.querySelector("input[name=csrfmiddlewaretoken]").value;

  function localInput(date) {  // a datetime-local value in the viewer's zone
    return new Date(date.getTime() - date.getTimezoneOffset() * 60000).toISOString().slice(0, 19);
  }
  function iso(value) { return value ? new Date(value).toISOString() : null; }
  async function call(method, url, body) {
    const response = await fetch(url, {
      method, credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrf },
      body: body ? JSON.stringify(body) : undefined,
    });
    const data = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(data.error || String(response.status));
    return data;
  }
  function cell(row, text) { const td = row.insertCell(); td.textContent = text; return td; }
  function button(td, label, handler) {
    const b = document.createElement("button");
    b.type = "button"; b.textContent = label; b.addEventListener("click", handler);
    td.appendChild(b);
  }
  function render(list) {
    tbody.replaceChildren();
    list.slice().reverse().forEach((a) => {
      const row = tbody.insertRow();
      row.dataset.id = a.id;
      cell(row, new Date(a.time).toLocaleString());
      cell(row, a.kind);
      cell(row, a.text);
      cell(row, a.author || "innowatch");
      const actions = row.insertCell();
      if (a.server) {
        const link = document.createElement("a");
        link.href = panel.dataset.effectUrl.replace("/0/", "/" + a.id + "/");
        link.textContent = "effect";
        actions.appendChild(link);
      }
      button(actions, "edit", () => edit(a));
      button(actions, "delete", () => remove(a));
    });
  }
  async function load() {
    try { render(await call("GET", api + "?server=" + serverId)); }
    catch (e) { errorBox.textContent = e.message; }
  }
  function changed() {  // charts.js redraws its annotation markers on this event
    document.dispatchEvent(new CustomEvent("innowatch:annotations-changed"));
    load();
  }
  async function edit(a) {
    const text = window.prompt("Annotation text", a.text);
    if (text === null) return;
    try { await call("PATCH", api + "/" + a.id, { text }); changed(); }
    catch (e) { errorBox.textContent = e.message; }
  }
  async function remove(a) {
    if (!window.confirm("Delete this annotation?")) return;
    try { await call("DELETE", api + "/" + a.id); changed(); }
    catch (e) { errorBox.textContent = e.message; }
  }
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    errorBox.textContent = "";
    const f = new FormData(form);
    try {
      await call("POST", api, { time: iso(f.get("time")), time_end: iso(f.get("time_end")), text: f.get("text"),
        tags: f.get("tags") || [], kind: f.get("kind"), server: Number(serverId) });
      form.querySelector("input[name=text]").value = "";
      changed();
    } catch (e) { errorBox.textContent = e.message; }
  });
  form.querySelector("input[name=time]").value = localInput(new Date());
  // Charts are drawn asynchronously: bind shift-click once each Plotly div exists.
  function bindCharts() {
    document.querySelectorAll(".js-plotly-plot").forEach((div) => {
      if (div.dataset.annotateBound) return;
      div.dataset.annotateBound = "1";
      div.on("plotly_click", (ev) => {
        if (!ev.event || !ev.event.shiftKey || !ev.points || !ev.points[0]) return;
        const x = ev.points[0].x;  // the axis shows the viewer's zone (or UTC): keep its wall time
        form.querySelector("input[name=time]").value = String(x).replace(" ", "T").slice(0, 19);
        form.querySelector("input[name=text]").focus();
      });
    });
  }
  setInterval(bindCharts, 1000);
  load();
})();
