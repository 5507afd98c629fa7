// Sortable result tables. Without this script the tables stay as the server ranked them.
// Each header of a table.sortable becomes a button; aria-sort follows the sort and a
// polite live region says what happened.
(function () {
  "use strict";

  function sortValue(cell, type) {
    var raw = cell.getAttribute("data-sort-value");
    if (raw === null) raw = cell.textContent.trim();
    if (type === "number") {
      var number = parseFloat(raw);
      return isNaN(number) ? null : number;
    }
    return raw.toLowerCase();
  }

  function compare(a, b, direction) {
    // Cells without a value go last whichever the direction.
    if (a === null && b === null) return 0;
    if (a === null) return 1;
    if (b === null) return -1;
    var order = a < b ? -1 : a > b ? 1 : 0;
    return direction === "ascending" ? order : -order;
  }

  function sortTable(table, index, direction) {
    var headers = table.tHead.rows[0].cells;
    var header = headers[index];
    var type = header.getAttribute("data-type");
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows).map(function (row, position) {
      return { row: row, position: position, value: sortValue(row.cells[index], type) };
    });
    rows.sort(function (a, b) {
      return compare(a.value, b.value, direction) || a.position - b.position;
    });
    rows.forEach(function (item) { body.appendChild(item.row); });
    Array.prototype.forEach.call(headers, function (other) {
      if (other === header) other.setAttribute("aria-sort", direction);
      else other.removeAttribute("aria-sort");
    });
    var status = document.getElementById(table.getAttribute("data-status"));
    if (status) {
      status.textContent = "Sorted by " + header.getAttribute("data-label") + ", " +
        direction + ".";
    }
  }

  function enhance(table) {
    var headers = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(headers, function (header, index) {
      var button = document.createElement("button");
      button.type = "button";
      button.className = "sort";
      while (header.firstChild) button.appendChild(header.firstChild);
      var indicator = document.createElement("span");
      indicator.className = "sort-indicator";
      indicator.setAttribute("aria-hidden", "true");
      button.appendChild(indicator);
      header.appendChild(button);
      button.addEventListener("click", function () {
        var current = header.getAttribute("aria-sort");
        var direction = current === "ascending" ? "descending"
          : current === "descending" ? "ascending"
          : header.getAttribute("data-first-sort") || "ascending";
        sortTable(table, index, direction);
      });
    });
  }

  function start() {
    Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), enhance);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
