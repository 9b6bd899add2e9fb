// jury report site: sorting tables and filtering a model's answers. No inline handlers.
"use strict";
(function () {
  function sortValue(row, index, numeric) {
    var cell = row.cells[index];
    var raw = cell ? (cell.getAttribute("data-sort-value") !== null ? cell.getAttribute("data-sort-value") : cell.textContent) : "";
    if (!numeric) { return raw.trim().toLowerCase(); }
    var x = parseFloat(raw);
    return isNaN(x) ? -Infinity : x;
  }
  function columnIndex(th) {
    var index = 0;
    var cell = th.previousElementSibling;
    while (cell) { index += cell.colSpan || 1; cell = cell.previousElementSibling; }
    return index;
  }
  function sortBy(table, th, numeric) {
    var body = table.tBodies[0];
    var index = columnIndex(th);
    var descending = th.getAttribute("aria-sort") === "descending" ? false : (th.getAttribute("aria-sort") === "ascending" ? true : numeric);
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = sortValue(a, index, numeric), y = sortValue(b, index, numeric);
      if (x < y) { return descending ? 1 : -1; }
      if (x > y) { return descending ? -1 : 1; }
      return 0;
    });
    rows.forEach(function (r) { body.appendChild(r); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", descending ? "descending" : "ascending");
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
    Array.prototype.forEach.call(table.querySelectorAll("thead button[data-sort]"), function (button) {
      button.addEventListener("click", function () {
        sortBy(table, button.closest("th"), button.getAttribute("data-sort") === "num");
      });
    });
  });

  var select = document.getElementById("show");
  var answers = document.getElementById("answers");
  if (select && answers) {
    var shown = document.getElementById("shown");
    var apply = function (tag) {
      var n = 0;
      Array.prototype.forEach.call(answers.tBodies[0].rows, function (row) {
        var tags = (row.getAttribute("data-tags") || "").split(" ");
        var keep = tags.indexOf(tag) >= 0;
        row.classList.toggle("hidden", !keep);
        if (keep) { n += 1; }
      });
      if (shown) { shown.textContent = n + " answer" + (n === 1 ? "" : "s"); }
    };
    var fromHash = function () {
      var m = /(?:^#|&)show=([A-Za-z_]+)/.exec(window.location.hash);
      var tag = m ? m[1] : "all";
      if (!select.querySelector('option[value="' + tag + '"]')) {
        var option = document.createElement("option");
        option.value = tag;
        option.textContent = tag.replace(/_/g, " ") + " (0)";
        select.appendChild(option);
      }
      select.value = tag;
      apply(tag);
    };
    select.addEventListener("change", function () {
      window.history.replaceState(null, "", "#show=" + select.value);
      apply(select.value);
    });
    window.addEventListener("hashchange", fromHash);
    fromHash();
  }
})();
