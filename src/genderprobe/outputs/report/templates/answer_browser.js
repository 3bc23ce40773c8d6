(function () {
  "use strict";
  // The answer browser (genderprobe/outputs/report/answer_browser.py). Every answer is put on the
  // page with textContent, never as markup: what a model wrote stays text.
  var root = document.getElementById("answer-browser");
  var source = document.getElementById("answer-data");
  if (!root || !source) { return; }
  var data = JSON.parse(source.textContent);
  var PAGE = 50;
  var facets = data.facets, rows = data.rows, texts = data.texts, runs = data.runs;
  var picked = facets.map(function () { return -1; });
  var query = "", page = 0, matching = [];
  var lowered = [];  // each row's prompt, answer and reasoning in lower case, made on the first search
  var list = document.getElementById("ab-list");
  var FLAGS = {reading: "--reading", read_by: "--read-by", gender: "--gender", chose: "--chose",
               readers: "--readers"};
  var RUN_FACETS = {probe: "probe", model: "model", run: "label"};

  function text(i) { return i === undefined ? "" : texts[i]; }
  function number(n) { return n.toLocaleString("en-US"); }
  function haystack(n) {
    if (lowered[n] === undefined) {
      var r = rows[n];
      lowered[n] = (text(r.p) + "\n" + text(r.a) + "\n" + text(r.t)).toLowerCase();
    }
    return lowered[n];
  }
  function quote(s) {  // as Python's shlex.quote
    return /^[A-Za-z0-9_@%+=:,.\/-]+$/.test(s) ? s : "'" + s.replace(/'/g, "'\"'\"'") + "'";
  }
  function el(tag, cls, content) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (content !== undefined) { e.textContent = content; }
    return e;
  }

  function filter() {
    var counts = facets.map(function (f) { return f.values.map(function () { return 0; }); });
    matching = [];
    for (var n = 0; n < rows.length; n++) {
      if (query && haystack(n).indexOf(query) < 0) { continue; }
      var f = rows[n].f, missed = -1, misses = 0;
      for (var k = 0; k < facets.length && misses < 2; k++) {
        if (picked[k] >= 0 && f[k] !== picked[k]) { misses++; missed = k; }
      }
      if (misses === 0) {
        matching.push(n);
        for (k = 0; k < facets.length; k++) { if (f[k] >= 0) { counts[k][f[k]]++; } }
      } else if (misses === 1 && f[missed] >= 0) {
        counts[missed][f[missed]]++;  // what picking this value instead would show
      }
    }
    return counts;
  }

  function showCounts(counts) {
    root.querySelectorAll(".ab-chip").forEach(function (b) {
      var k = +b.dataset.facet, v = +b.dataset.value;
      b.querySelector(".ab-n").textContent = number(counts[k][v]);
      b.setAttribute("aria-pressed", picked[k] === v ? "true" : "false");
    });
    root.querySelectorAll("select.ab-select").forEach(function (s) {
      var k = +s.dataset.facet;
      Array.prototype.forEach.call(s.options, function (o) {
        var v = +o.value;
        if (v >= 0) { o.textContent = facets[k].values[v] + " (" + number(counts[k][v]) + ")"; }
      });
      s.value = String(picked[k]);
    });
  }

  function command() {
    var folders = [], flags = [];
    runs.forEach(function (run) {
      var wanted = facets.every(function (f, k) {
        return !(f.key in RUN_FACETS) || picked[k] < 0 || f.values[picked[k]] === run[RUN_FACETS[f.key]];
      });
      if (wanted && run.shown) { folders.push(run.folder); }
    });
    if (!folders.length || folders.indexOf(null) >= 0) { return ""; }
    facets.forEach(function (f, k) {
      if (picked[k] < 0 || f.key in RUN_FACETS) { return; }
      var value = f.values[picked[k]];
      if (f.key.indexOf("group:") === 0) { flags.push("--group", quote(f.key.slice(6) + "=" + value)); }
      else { flags.push(FLAGS[f.key], quote(value)); }
    });
    if (query) { flags.push("--search", quote(query)); }
    return ["genderprobe", "answers"].concat(folders.map(quote), flags).join(" ");
  }

  function card(n) {
    var r = rows[n], li = el("li", "ab-row"), head = el("div", "ab-head");
    li.dataset.row = n;
    facets.forEach(function (f, k) {
      if (r.f[k] < 0) { return; }
      var value = f.values[r.f[k]];
      li.dataset[f.key.replace(/[^a-z]/g, "")] = value;
      if (f.key === "reading") { head.appendChild(el("span", "ab-reading", value)); }
      else if (f.key === "read_by") { if (value === "judge") { head.appendChild(el("span", "ab-judge", "read by the judge")); } }
      else if (!(f.key in RUN_FACETS)) { head.appendChild(el("span", "ab-tag", f.label + ": " + value)); }
    });
    if (runs.length > 1) { head.appendChild(el("span", "ab-run", runs[r.u].label)); }
    if (r.id) { head.appendChild(el("span", "ab-id", r.id)); }
    li.appendChild(head);
    var asked = el("div", "ab-asked"), said = el("div", "ab-said");
    asked.appendChild(el("div", "label", "prompt"));
    asked.appendChild(el("pre", "prompt", text(r.p)));
    said.appendChild(el("div", "label", "answer"));
    said.appendChild(el("pre", "answer", text(r.a) || "(no answer)"));
    if (r.t !== undefined) {
      var d = el("details", "ab-reasoning");
      d.appendChild(el("summary", "", "reasoning, set aside before reading (" + number(text(r.t).length) + " characters)"));
      d.appendChild(el("pre", "reasoning", text(r.t)));
      said.appendChild(d);
    }
    var two = runs[r.u].readers;  // [the paper's rule, the careful reader, the one the metrics use]
    if (two) {
      said.appendChild(el("p", "ab-readers" + (r.r ? " differ" : ""), r.r
        ? "The readers differ: " + r.r.map(function (x) { return x[0] + " read " + x[1]; }).join("; ")
          + " (the metrics use " + two[2] + ")."
        : "Both readers (" + two[0] + " and " + two[1] + ") read it alike."));
    }
    if (r.j !== undefined) { said.appendChild(el("p", "ab-judge-reply", "The reader judge replied: " + text(r.j))); }
    if (r.e !== undefined) { said.appendChild(el("pre", "ab-error", text(r.e))); }
    li.appendChild(asked);
    li.appendChild(said);
    return li;
  }

  function draw() {
    var counts = filter();
    showCounts(counts);
    var pages = Math.max(1, Math.ceil(matching.length / PAGE));
    page = Math.min(page, pages - 1);
    var first = page * PAGE, shown = matching.slice(first, first + PAGE), items = document.createDocumentFragment();
    shown.forEach(function (n) { items.appendChild(card(n)); });
    list.replaceChildren(items);
    root.dataset.matching = String(matching.length);
    document.getElementById("ab-count").dataset.query = query;
    document.getElementById("ab-count").textContent = matching.length
      ? "Answers " + number(first + 1) + "–" + number(first + shown.length) + " of the " + number(matching.length)
        + " that match, of " + number(rows.length) + " in this report."
      : "No answer in this report matches.";
    document.getElementById("ab-page").textContent = "page " + number(page + 1) + " of " + number(pages);
    document.getElementById("ab-prev").disabled = page === 0;
    document.getElementById("ab-next").disabled = page >= pages - 1;
    var cmd = command(), out = document.getElementById("ab-command");
    out.textContent = cmd;
    out.parentNode.hidden = !cmd;
  }

  root.addEventListener("click", function (event) {
    var chip = event.target.closest(".ab-chip");
    if (chip) {
      var k = +chip.dataset.facet, v = +chip.dataset.value;
      picked[k] = picked[k] === v ? -1 : v;  // a second click lets the facet go
      page = 0;
      draw();
    }
  });
  root.addEventListener("change", function (event) {
    if (event.target.matches("select.ab-select")) {
      picked[+event.target.dataset.facet] = +event.target.value;
      page = 0;
      draw();
    }
  });
  var typing;
  document.getElementById("ab-search").addEventListener("input", function (event) {
    clearTimeout(typing);
    typing = setTimeout(function () {
      query = event.target.value.trim().toLowerCase();
      page = 0;
      draw();
    }, 120);
  });
  document.getElementById("ab-clear").addEventListener("click", function () {
    picked = picked.map(function () { return -1; });
    query = "";
    document.getElementById("ab-search").value = "";
    page = 0;
    draw();
  });
  document.getElementById("ab-prev").addEventListener("click", function () { page--; draw(); });
  document.getElementById("ab-next").addEventListener("click", function () { page++; draw(); });
  draw();
  root.hidden = false;
  root.dataset.ready = String(Math.round(performance.now()));
})();
