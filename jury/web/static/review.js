// Keys 1-5 press the decision buttons; "n" follows the link to the next item.
// Typing in a text field is left alone.
document.addEventListener("keydown", function (e) {
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  var t = e.target;
  if (t && t.closest && t.closest("textarea, input, select")) return;
  var el = document.querySelector('[data-key="' + e.key + '"]');
  if (el) { e.preventDefault(); el.click(); }
});
