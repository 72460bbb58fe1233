// Effect page: one small chart per metric, the before and after windows on one x axis
// (seconds relative to the change), and what the before window predicted for the after window
// (its level and trend carried over). Data comes from json_script; text is set with textContent.
(function () {
  "use strict";
  var holder = document.getElementById("effect-charts");
  var data = document.getElementById("effect-data");
  if (!holder || !data || typeof Plotly === "undefined") { return; }
  var traces = JSON.parse(data.textContent);
  Object.keys(traces).forEach(function (name) {
    var box = document.createElement("div");
    box.className = "effect-chart";
    box.dataset.metric = name;
    holder.appendChild(box);
    var t = traces[name];
    Plotly.newPlot(box, [
      { x: t.before.x, y: t.before.y, name: "before", mode: "lines", line: { color: "#888" } },
      { x: t.after.x, y: t.after.y, name: "after", mode: "lines", line: { color: "#1f77b4" } },
      { x: t.expected.x, y: t.expected.y, name: "predicted by the before window", mode: "lines",
        line: { color: "#888", dash: "dash" } }
    ], {
      title: { text: name },
      height: 260,
      margin: { l: 60, r: 20, t: 40, b: 40 },
      xaxis: { title: { text: "seconds relative to the change" }, zeroline: true },
      shapes: [{ type: "line", x0: 0, x1: 0, yref: "paper", y0: 0, y1: 1, line: { dash: "dot", color: "#c00" } }]
    }, { displaylogo: false, responsive: true });
  });
})();
