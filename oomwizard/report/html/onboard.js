/* oomwizard offline site: search on the browse page, copy buttons. No network, no other script.
   The index (search-index.js) sets window.OOMWIZARD_INDEX before this file runs. */
(function () {
  "use strict";
  var INDEX = window.OOMWIZARD_INDEX || { signatures: [], scenarios: {}, aliases: {} };
  var PASTE_MIN = INDEX.paste_min_chars || 24;

  function compile(list) {
    var out = [];
    for (var i = 0; i < list.length; i++) {
      try {
        out.push({ re: new RegExp(list[i].src, "i"), sig: list[i] });
      } catch (e) {
        /* a pattern this browser cannot read is left out; the word search still works */
      }
    }
    return out;
  }
  var SIGS = compile(INDEX.signatures || []);

  function byDiagnosis(text) {
    var best = {};
    var flat = text.replace(/\s+/g, " ");
    for (var i = 0; i < SIGS.length; i++) {
      var s = SIGS[i].sig;
      var lower = flat.toLowerCase();
      var hit = !s.triggers.length;
      for (var j = 0; j < s.triggers.length && !hit; j++) {
        hit = lower.indexOf(s.triggers[j].toLowerCase()) !== -1;
      }
      if (hit && SIGS[i].re.test(flat)) {
        if (!(s.scenario in best) || best[s.scenario] < s.score) best[s.scenario] = s.score;
      }
    }
    return Object.keys(best).sort(function (a, b) { return best[b] - best[a]; });
  }

  function byWords(text) {
    var words = text.toLowerCase().split(/\s+/).filter(Boolean);
    var hay = INDEX.scenarios || {};
    return Object.keys(hay).filter(function (id) {
      return words.every(function (w) {
        var alts = [w].concat((INDEX.aliases[w] || []).map(function (a) { return a.toLowerCase(); }));
        return alts.some(function (a) { return hay[id].indexOf(a) !== -1; });
      });
    });
  }

  function search(text) {
    var q = text.trim();
    if (!q) return { how: "all", ids: null };
    if (q.length >= PASTE_MIN || q.indexOf("\n") !== -1) {
      var found = byDiagnosis(q);
      if (found.length) return { how: "diagnosis", ids: found };
    }
    return { how: "words", ids: byWords(q) };
  }
  window.oomwizardSearch = search;

  function setupBrowse() {
    var box = document.getElementById("browse-filter");
    var list = document.getElementById("scenario-list");
    if (!box || !list) return;
    var count = document.getElementById("browse-count");
    var items = Array.prototype.slice.call(list.querySelectorAll("li.scenario"));
    var original = items.slice();
    function apply() {
      var res = search(box.value);
      var shown = 0;
      if (res.ids === null) {
        original.forEach(function (li) { li.hidden = false; list.appendChild(li); });
        shown = original.length;
      } else {
        var order = {};
        res.ids.forEach(function (id, n) { order[id] = n; });
        original.forEach(function (li) { li.hidden = !(li.id in order); });
        original.slice().sort(function (a, b) {
          return (a.id in order ? order[a.id] : 1e9) - (b.id in order ? order[b.id] : 1e9);
        }).forEach(function (li) { list.appendChild(li); });
        shown = res.ids.length;
      }
      list.setAttribute("data-how", res.how);
      if (count) {
        count.textContent = count.getAttribute("data-template").replace("{n}", shown).replace("{total}", original.length) +
          (res.how === "diagnosis" ? " · " + count.getAttribute("data-diagnosis") : "");
      }
    }
    box.addEventListener("input", apply);
    var params = new URLSearchParams(window.location.search);
    if (params.get("q")) box.value = params.get("q");
    apply();
  }

  function copyText(text, button) {
    function done() {
      var label = button.textContent;
      button.textContent = button.getAttribute("data-done");
      setTimeout(function () { button.textContent = label; }, 1500);
    }
    function fallback() {
      var area = document.createElement("textarea");
      area.value = text;
      document.body.appendChild(area);
      area.select();
      try { document.execCommand("copy"); } catch (e) { /* nothing more to try offline */ }
      document.body.removeChild(area);
      done();
    }
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, fallback);
    } else {
      fallback();
    }
  }

  function setupCopy() {
    var label = document.body.getAttribute("data-copy") || "Copy";
    var copied = document.body.getAttribute("data-copied") || "Copied";
    Array.prototype.forEach.call(document.querySelectorAll("pre.cmd, pre.copy"), function (pre) {
      var button = document.createElement("button");
      button.type = "button";
      button.className = "copy-button";
      button.textContent = label;
      button.setAttribute("data-done", copied);
      button.addEventListener("click", function () { copyText(pre.querySelector("code").textContent, button); });
      pre.insertBefore(button, pre.firstChild);
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    setupBrowse();
    setupCopy();
  });
})();
