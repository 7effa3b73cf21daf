// Times on the admin page in the zone the reader picks: the browser's own until they pick another
// (kept in this browser). The server writes each moment as <time datetime="...Z"> with its UTC
// text and a "... UTC" title; this rewrites the text into the zone, on load and in every part
// htmx swaps in. The zone also goes to the server in the cookie quickact_tz, so the stats count
// days in it.
(function () {
  "use strict";
  var KEY = "quickact.admin.tz";
  var browserZone = "UTC";
  try { browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC"; } catch (e) { /* keep UTC */ }

  function isZone(name) {
    try { new Intl.DateTimeFormat("en-US", { timeZone: name }); return true; } catch (e) { return false; }
  }

  function chosenZone() {
    var saved = null;
    try { saved = window.localStorage.getItem(KEY); } catch (e) { /* storage off */ }
    return saved && isZone(saved) ? saved : browserZone;
  }

  // 2026-02-07 09:00:03, in zone.
  function format(date, zone) {
    var parts = {};
    new Intl.DateTimeFormat("en-CA", {
      timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit",
      hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23"
    }).formatToParts(date).forEach(function (part) { parts[part.type] = part.value; });
    return parts.year + "-" + parts.month + "-" + parts.day + " " + parts.hour + ":" + parts.minute + ":" + parts.second;
  }

  function render(root) {
    var zone = chosenZone();
    root.querySelectorAll("time[datetime]").forEach(function (element) {
      var date = new Date(element.getAttribute("datetime"));
      if (!isNaN(date.getTime())) { element.textContent = format(date, zone); }
    });
  }

  function remember(zone) {
    // Zone names are letters, digits and / _ - +: fit for a cookie as they are.
    document.cookie = "quickact_tz=" + zone + "; Path=/admin; SameSite=Strict; Max-Age=31536000";
  }

  function fillPicker(picker) {
    var zone = chosenZone();
    var names = ["UTC"];
    try { names = names.concat(Intl.supportedValuesOf("timeZone").filter(function (n) { return n !== "UTC"; })); } catch (e) { /* older browsers: UTC and the browser's */ }
    if (names.indexOf(browserZone) < 0) { names.push(browserZone); }
    picker.textContent = "";
    names.forEach(function (name) {
      var option = document.createElement("option");
      option.value = name;
      option.textContent = name === browserZone ? name + " (this browser)" : name;
      option.selected = name === zone;
      picker.appendChild(option);
    });
    picker.addEventListener("change", function () {
      try {
        if (picker.value === browserZone) { window.localStorage.removeItem(KEY); } else { window.localStorage.setItem(KEY, picker.value); }
      } catch (e) { /* storage off: this page only */ }
      remember(picker.value);
      render(document);
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    remember(chosenZone());
    var picker = document.getElementById("tz-picker");
    if (picker) { fillPicker(picker); }
    render(document);
    if (window.htmx) { window.htmx.onLoad(function (element) { render(element); }); }
  });
})();
