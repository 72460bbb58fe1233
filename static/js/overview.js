// Overview: click a column header to sort by the row's data attributes (again to reverse).
(function () {
  "use strict";
  const table = document.getElementById("servers");
  if (!table) return;
  const body = table.tBodies[0];
  const headers = Array.from(table.querySelectorAll("th[data-sort]"));

  function sortBy(th, ascending) {
    const key = th.dataset.sort;
    const numeric = th.dataset.type === "num";
    const rows = Array.from(body.rows).filter((r) => r.dataset[key] !== undefined);
    rows.sort((a, b) => {
      const x = a.dataset[key], y = b.dataset[key];
      const cmp = numeric ? parseFloat(x) - parseFloat(y) : x.localeCompare(y);
      return ascending ? cmp : -cmp;
    });
    rows.forEach((r) => body.appendChild(r));
    headers.forEach((h) => h.removeAttribute("aria-sort"));
    th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
  }

  // Live: every 30 s while the tab is visible, swap in the freshly rendered rows (our own
  // escaped template, parsed inert by DOMParser) and keep the DBA's chosen sort.
  const REFRESH_MS = 30000;
  async function refreshRows() {
    if (document.hidden) return;
    try {
      const response = await fetch(location.href, { credentials: "same-origin" });
      if (!response.ok) return;
      const doc = new DOMParser().parseFromString(await response.text(), "text/html");
      const fresh = doc.querySelector("#servers tbody");
      if (!fresh) return;
      body.replaceChildren(...Array.from(fresh.childNodes).map((n) => document.importNode(n, true)));
      const sorted = headers.find((h) => h.hasAttribute("aria-sort"));
      if (sorted) sortBy(sorted, sorted.getAttribute("aria-sort") === "ascending");
      table.dataset.refreshedAt = String(Date.now());
    } catch (e) { /* offline for a moment: the next tick tries again */ }
  }
  setInterval(refreshRows, REFRESH_MS);
  document.addEventListener("visibilitychange", () => { if (!document.hidden) refreshRows(); });

  headers.forEach((th) => {
    th.tabIndex = 0;
    const toggle = () => {
      // Bigger is worse for most columns: sort those descending first.
      const first = ["rank", "name", "runway"].includes(th.dataset.sort) ? "ascending" : "descending";
      const current = th.getAttribute("aria-sort");
      sortBy(th, current ? current !== "ascending" : first === "ascending");
    };
    th.addEventListener("click", toggle);
    th.addEventListener("keydown", (e) => { if (e.key === "Enter") toggle(); });
  });
})();
