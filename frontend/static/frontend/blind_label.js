// Blind labelling by keyboard: a key presses the button or ticks the box that names it in
// aria-keyshortcuts, and sends the label at once; keys typed into the note stay text.
(function () {
  "use strict";
  var form = document.getElementById("blind-label");
  if (!form) { return; }
  var skip = document.getElementById("skip");
  var sent = false;
  // A page brought back from the history cache may be labelled again.
  window.addEventListener("pageshow", function () { sent = false; });

  function typing(target) {
    if (!target || !target.tagName) { return false; }
    var tag = target.tagName.toLowerCase();
    if (tag === "textarea" || tag === "select" || target.isContentEditable) { return true; }
    return tag === "input" && ["checkbox", "radio", "button", "submit"].indexOf(target.type) < 0;
  }

  function named(selector, key) {
    var found = null;
    form.querySelectorAll(selector).forEach(function (element) {
      if (element.getAttribute("aria-keyshortcuts") === key) { found = element; }
    });
    return found;
  }

  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && typing(event.target)) {
      event.target.blur();
      return;
    }
    if (sent || event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) {
      return;
    }
    var button = named("button[aria-keyshortcuts]", event.key);
    if (button) {
      event.preventDefault();
      sent = true;
      if (form.requestSubmit) { form.requestSubmit(button); } else { button.click(); }
      return;
    }
    var box = named("input[type=checkbox][aria-keyshortcuts]", event.key);
    if (box) {
      event.preventDefault();
      box.checked = !box.checked;
      return;
    }
    if (skip && event.key === skip.getAttribute("aria-keyshortcuts")) {
      event.preventDefault();
      sent = true;
      window.location.assign(skip.href);
    }
  });
})();
