"use strict";
(function () {
  var q = document.getElementById("q");
  var state = document.getElementById("state");
  var servers = null;
  function apply() {
    if (!servers) return;
    var text = q.value.toLowerCase();
    var want = state.value;
    servers.forEach(function (s) {
      var row = document.getElementById("s-" + s.slug);
      if (!row) return;
      var hit = (!text || s.name.toLowerCase().indexOf(text) >= 0 || s.id.toLowerCase().indexOf(text) >= 0) &&
        (!want || s.state === want);
      row.hidden = !hit;
    });
  }
  fetch("api/servers.json")
    .then(function (r) { return r.json(); })
    .then(function (d) { servers = d; apply(); })
    .catch(function () {});
  q.addEventListener("input", apply);
  state.addEventListener("change", apply);
  document.getElementById("filter").addEventListener("submit", function (e) { e.preventDefault(); });
})();
