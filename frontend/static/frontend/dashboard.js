// Dashboard: live grading progress and service status, from the same JSON the API serves.
(function () {
  "use strict";
  var health = document.getElementById("health");
  if (health) {
    fetch(health.dataset.url, { credentials: "same-origin" })
      .then(function (r) { return r.json(); })
      .then(function (body) {
        var parts = Object.keys(body.checks).map(function (name) {
          var check = body.checks[name];
          return name + ": " + (check.ok ? "ok" : "FAILING (" + check.detail + ")");
        });
        health.textContent = (body.status === "ok" ? "All good. " : "Attention: ") + parts.join("; ");
      })
      .catch(function () { health.textContent = "Status unavailable."; });
  }
  var table = document.getElementById("progress");
  if (!table) { return; }
  function refresh() {
    fetch(table.dataset.url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) { return r.json(); })
      .then(function (body) {
        var busy = false;
        body.runs.forEach(function (run) {
          var row = table.querySelector('tr[data-run="' + run.run + '"]');
          if (!row) { return; }
          var bar = row.querySelector("progress");
          bar.max = run.total; bar.value = run.done; bar.textContent = run.done + "/" + run.total;
          row.querySelector(".count").textContent = run.done + "/" + run.total;
          var status = row.querySelector(".run-status .status");
          status.textContent = run.status;
          status.className = "status status-" + run.status;
          row.querySelector(".run-status .failure-reason").textContent =
            run.failure_reason ? ": " + run.failure_reason : "";
          if (run.status === "queued" || run.status === "grading") { busy = true; }
        });
        window.setTimeout(refresh, busy ? 2000 : 10000);
      })
      .catch(function () { window.setTimeout(refresh, 10000); });
  }
  refresh();
})();
