"""The static assets pidkit serves itself (no CDN, no external request): the back office's one small
script, ``/static/office.js``, loaded by every back-office page (the CSP allows scripts from this site
only, and no inline script).

It only improves pages that work without it: a "Copy" button beside each read-only value of a
``.copyable`` field (the ARK, its resolution and ``?info`` URLs — without the script they are
selectable text), announced through a ``role=status`` region; and a form's submit button with
``data-busy`` shows that text and is disabled while a long request (an import) runs.

>>> OFFICE_JS.count("<script")
0
"""

from __future__ import annotations

from typing import Final

from fastapi import APIRouter
from fastapi.responses import Response

__all__ = ["OFFICE_JS", "OFFICE_JS_PATH", "router"]

router = APIRouter(include_in_schema=False)

#: Where the back office's script is served.
OFFICE_JS_PATH: Final = "/static/office.js"

#: The back office's script (progressive enhancement only).
OFFICE_JS: Final = """\
"use strict";
(function () {
  function announce(region, text) {
    region.textContent = "";
    window.setTimeout(function () { region.textContent = text; }, 50);
  }
  function copyText(input) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(input.value);
    }
    input.focus();
    input.select();
    var ok = false;
    try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
    return ok ? Promise.resolve() : Promise.reject(new Error("copy refused"));
  }
  function addCopyButtons() {
    var fields = document.querySelectorAll(".copyable input[readonly]");
    if (!fields.length) { return; }
    var region = document.createElement("p");
    region.className = "hint";
    region.setAttribute("role", "status");
    fields[0].closest("section").appendChild(region);
    Array.prototype.forEach.call(fields, function (input) {
      var label = document.querySelector('label[for="' + input.id + '"]');
      var name = label ? label.textContent : "value";
      var button = document.createElement("button");
      button.type = "button";
      button.className = "quiet copy";
      button.textContent = "Copy";
      button.setAttribute("aria-label", "Copy " + name);
      button.addEventListener("click", function () {
        copyText(input).then(function () {
          announce(region, name + " copied.");
        }, function () {
          input.select();
          announce(region, "Press Ctrl+C (or Cmd+C) to copy the selected " + name + ".");
        });
      });
      input.insertAdjacentElement("afterend", button);
    });
  }
  function busyButtons() {
    Array.prototype.forEach.call(document.querySelectorAll("button[data-busy]"), function (button) {
      var form = button.form;
      if (!form) { return; }
      form.addEventListener("submit", function () {
        window.setTimeout(function () {
          button.textContent = button.getAttribute("data-busy");
          button.disabled = true;
        }, 0);
      });
    });
  }
  function follow() {
    // a page of work in progress ([data-follow]: a count, a <progress>, a "Check again" link) is read
    // again every second and updated in place; when the work has ended, the page is loaded anew
    var box = document.querySelector("[data-follow]");
    if (!box || !window.fetch || !window.DOMParser) { return; }
    function tick() {
      fetch(window.location.href, {credentials: "same-origin", cache: "no-store"}).then(function (r) {
        return r.text();
      }).then(function (text) {
        var now = new DOMParser().parseFromString(text, "text/html").querySelector("[data-follow]");
        if (!now) { window.location.reload(); return; }
        ["[data-count]", "progress"].forEach(function (sel) {
          var mine = box.querySelector(sel), theirs = now.querySelector(sel);
          if (!mine || !theirs) { return; }
          if (sel === "progress") { mine.max = theirs.max; mine.value = theirs.value; }
          mine.textContent = theirs.textContent;
        });
        window.setTimeout(tick, 1000);
      }, function () { window.setTimeout(tick, 5000); });
    }
    window.setTimeout(tick, 1000);
  }
  function ready() { addCopyButtons(); busyButtons(); follow(); }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", ready);
  } else {
    ready();
  }
})();
"""


@router.get(OFFICE_JS_PATH)
def office_js() -> Response:
    """The back office's script (cached for a day; ``nosniff``)."""
    return Response(OFFICE_JS, media_type="text/javascript; charset=utf-8",
                    headers={"Cache-Control": "public, max-age=86400", "X-Content-Type-Options": "nosniff"})
