// The editor's page of a simdex server: check a text, compare it with the
// stored documents the check finds, store or delete documents, and an
// overview of the index. It talks only to the server that served it.
"use strict";

const $ = (id) => document.getElementById(id);

// el builds an element: attrs are properties (class, title, dataset...),
// children are nodes or strings (always inserted as text).
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "dataset") Object.assign(e.dataset, v);
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e[k] = v;
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    e.append(c instanceof Node ? c : String(c));
  }
  return e;
}

// ---- API calls and keys ----

const KEY_STORAGE = "simdex.apiKey";
let apiKey = sessionStorage.getItem(KEY_STORAGE) || "";

class APIError extends Error {
  constructor(status, problem) {
    const p = problem || {};
    super(p.detail ? `${p.title || "Error"}: ${p.detail}` : (p.title || `HTTP ${status}`));
    this.status = status;
    this.problem = p;
  }
}

// docPath is the URL path of a document id (ids may hold '/').
function docPath(id) {
  return "/v1/documents/" + id.split("/").map(encodeURIComponent).join("/");
}

// api sends one call. A 401 or 403 asks for an API key and sends the call
// again with it; cancelling the question fails the call.
async function api(method, path, body, opts) {
  const raw = opts && opts.raw;
  for (let attempt = 0; ; attempt++) {
    const headers = {};
    if (body !== undefined) headers["Content-Type"] = "application/json";
    if (apiKey) headers["Authorization"] = "Bearer " + apiKey;
    const resp = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    if ((resp.status === 401 || resp.status === 403) && attempt < 3) {
      const reason = apiKey
        ? `The server refused the key (${resp.status}) for ${method} ${path}.`
        : `The server asks for an API key for ${method} ${path}.`;
      const key = await askKey(reason);
      if (key !== null) {
        setKey(key);
        continue;
      }
    }
    if (resp.status === 204) return null;
    const type = resp.headers.get("Content-Type") || "";
    if (!resp.ok) {
      let problem = null;
      if (type.includes("json")) {
        try { problem = await resp.json(); } catch (_) { /* not JSON after all */ }
      }
      throw new APIError(resp.status, problem);
    }
    if (raw) return resp.text();
    return type.includes("json") ? resp.json() : resp.text();
  }
}

function setKey(key) {
  apiKey = key;
  if (key) sessionStorage.setItem(KEY_STORAGE, key);
  else sessionStorage.removeItem(KEY_STORAGE);
  $("key-label").textContent = key ? "API key set" : "No API key";
  $("key-forget").hidden = !key;
}

let keyWaiter = null;

// askKey shows the key dialog; it resolves to the key, or null when
// cancelled.
function askKey(reason) {
  if (keyWaiter) return keyWaiter.promise;
  const d = $("key-dialog");
  $("key-dialog-reason").textContent = reason;
  $("key-input").value = "";
  let resolve;
  const promise = new Promise((r) => { resolve = r; });
  keyWaiter = { promise, resolve };
  d.showModal();
  $("key-input").focus();
  return promise;
}

function closeKey(value) {
  const d = $("key-dialog");
  if (d.open) d.close();
  if (keyWaiter) {
    const w = keyWaiter;
    keyWaiter = null;
    w.resolve(value);
  }
}

// ---- formatting ----

const nf = new Intl.NumberFormat("en");
const fmtNum = (n) => (n === undefined || n === null ? "–" : nf.format(n));
const fmtScore = (x) => (x === undefined || x === null ? "–" : Number(x).toFixed(3));

function fmtTime(t) {
  if (!t) return "–";
  const d = new Date(t);
  return isNaN(d) ? t : d.toISOString().replace("T", " ").replace(/:\d\d(\.\d+)?Z$/, " UTC");
}

function fmtBytes(n) {
  if (n === undefined || n === null) return "–";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return (i === 0 ? n : n.toFixed(1)) + " " + units[i];
}

const RELATIONS = {
  near_identical: "near-identical",
  query_is_excerpt: "this text is an excerpt of the stored one",
  stored_is_excerpt: "the stored text is an excerpt of this one",
  overlap: "overlap",
};

function status(msg, kind) {
  const s = $("status");
  s.textContent = msg;
  s.className = "status" + (kind ? " " + kind : "");
}

// busy disables a button while fn runs and reports its error.
async function busy(button, fn) {
  button.disabled = true;
  try {
    await fn();
  } catch (err) {
    status(err.message || String(err), "error");
  } finally {
    button.disabled = false;
  }
}

// armed turns a destructive button into its own confirmation: the first
// click arms it (for a few seconds), the second acts.
function armed(button, label, fn) {
  if (!button.classList.contains("armed")) {
    button.classList.add("armed");
    button.dataset.label = button.textContent;
    button.textContent = label;
    button.armTimer = setTimeout(() => disarm(button), 6000);
    return;
  }
  disarm(button);
  busy(button, fn);
}

function disarm(button) {
  clearTimeout(button.armTimer);
  button.classList.remove("armed");
  if (button.dataset.label) button.textContent = button.dataset.label;
}

// ---- the editor ----

function queryInput() {
  return { title: $("title").value, text: $("text").value };
}

// lastQuery is the text the shown check ran on: a comparison uses it, so
// the marks match the answer even after the text box was edited.
let lastQuery = null;

async function check() {
  const q = queryInput();
  if (!q.text.trim()) {
    status("Paste a text to check.", "error");
    return;
  }
  status("Checking…");
  const res = await api("POST", "/v1/check", { ...q, policy: $("policy").value });
  lastQuery = q;
  renderCheck(res);
  const first = (res.duplicates && res.duplicates[0]) || (res.related && res.related[0]);
  const n = (res.duplicates || []).length;
  status(n ? `${n} near-duplicate${n > 1 ? "s" : ""} stored.` : "No stored near-duplicate.", "ok");
  if (first) await compare(first.id);
  else $("compare").hidden = true;
}

function hitRows(hits, kind) {
  return hits.map((h) => el("tr", { dataset: { id: h.id, kind } },
    el("td", {}, el("code", {}, h.id)),
    el("td", { title: RELATIONS[h.relation] || "" }, h.relation),
    el("td", { class: "num" }, fmtScore(h.resemblance)),
    el("td", { class: "num" }, fmtScore(h.query_containment)),
    el("td", { class: "num" }, fmtScore(h.stored_containment)),
    el("td", {}, h.clause || "–"),
    el("td", { class: "num" }, h.distance),
    el("td", {}, fmtTime(h.time)),
    el("td", { class: "nowrap" }, el("button", { type: "button", class: "compare-btn", onclick: () => busy($("check-btn"), () => compare(h.id)) }, "Compare")),
  ));
}

function hitTable(title, hits, kind) {
  if (!hits || hits.length === 0) return null;
  const templ = hits.filter((h) => h.template && h.template.length);
  return el("div", { class: "hits " + kind },
    el("h3", { class: "hits-title" }, title),
    el("div", { class: "table-wrap" }, el("table", { id: kind + "-table" },
      el("thead", {}, el("tr", {}, [["id"], ["relation"], ["resemblance"], ["in stored", "share of this text's features in the stored one"],
        ["in this", "share of the stored text's features in this one"], ["clause"], ["distance"], ["time"], [""]].map(([t, title]) => el("th", { title }, t)))),
      el("tbody", {}, hitRows(hits, kind)))),
    templ.length ? el("p", { class: "muted" }, templ.map((h) => `${h.id} shares ${h.template.length} template line${h.template.length > 1 ? "s" : ""} with this text. `)) : null,
  );
}

function renderCheck(res) {
  const box = $("check-result");
  box.replaceChildren();
  $("doc-result").replaceChildren();
  const dup = res.duplicate;
  box.append(...[
    el("h2", {}, "Check"),
    el("div", { class: "summary" },
      el("span", { class: "badge " + (dup ? "dup" : "unique"), id: "check-verdict" }, dup ? (res.exact_duplicate ? "exact duplicate" : "duplicate") : "no duplicate"),
      el("span", {}, "fingerprint ", el("code", {}, res.fingerprint)),
      res.features ? el("span", {}, `${fmtNum(res.features)} features`) : null,
      el("span", {}, `k ${res.k}`),
      el("span", {}, `policy ${res.policy}`),
      el("span", {}, `${fmtNum(res.candidates)} candidates`),
      res.matching ? el("span", { title: "A text of a few content words is matched near-exactly only" }, `matching: ${res.matching}`) : null,
      res.truncated ? el("span", {}, "(more duplicates than the limit)") : null,
    ),
    res.template && res.template.length
      ? el("div", { id: "check-template" },
        el("h3", {}, "Template sentences (left out of every comparison)"),
        el("ul", { class: "template" }, res.template.map((t) => el("li", {}, t))))
      : null,
    hitTable("Near-duplicates", res.duplicates, "duplicates") || el("p", { class: "muted" }, "No near-duplicate under this policy."),
    hitTable("Related (a relation this policy does not count)", res.related, "related"),
  ].filter(Boolean));
}

// segmentNodes renders a side's text: each segment a span of its kind.
function segmentNodes(side) {
  if (!side.segments) return [side.text || ""];
  return side.segments.map((s) => {
    if (!s.kind) return s.text;
    const cls = ["seg", s.kind];
    if (s.class) cls.push("c-" + s.class);
    const title = s.kind === "template" ? "template: left out of the comparison"
      : s.kind === "same" ? "the same in both" : `${s.kind === "only" ? "only on this side" : "changed"}: ${s.class}`;
    return el("span", { class: cls.join(" "), title, dataset: s.step === undefined ? {} : { step: s.step } }, s.text);
  });
}

// link highlights, on hover, the aligned stretch of the other text.
function link(container, other) {
  container.addEventListener("mouseover", (ev) => {
    const step = ev.target.dataset && ev.target.dataset.step;
    document.querySelectorAll(".seg.linked").forEach((e) => e.classList.remove("linked"));
    if (step === undefined) return;
    for (const e of [container, other]) {
      e.querySelectorAll(`.seg[data-step="${step}"]`).forEach((s) => s.classList.add("linked"));
    }
  });
}

async function compare(id) {
  const q = lastQuery || queryInput();
  const res = await api("POST", "/v1/explain", { id, query: q, policy: $("policy").value });
  renderCompare(res);
}

function renderCompare(res) {
  const box = $("compare");
  box.hidden = false;
  $("compare-title").textContent = `Side by side: this text and ${res.id}`;
  $("stored-heading").replaceChildren("Stored ", el("code", {}, res.id), " ", el("small", {}, `(${fmtTime(res.time)})`));
  const v = $("compare-verdict");
  v.replaceChildren(
    el("span", { class: "badge " + (res.duplicate ? "dup" : "unique"), id: "compare-relation" }, res.relation || "–"),
    el("span", {}, res.duplicate ? `a duplicate under policy ${res.policy}` : `not a duplicate under policy ${res.policy}`),
    el("span", {}, `resemblance ${fmtScore(res.resemblance)}`),
    el("span", {}, `query in stored ${fmtScore(res.query_containment)}`),
    el("span", {}, `stored in query ${fmtScore(res.stored_containment)}`),
    el("span", {}, `clause ${res.clause || "–"}`),
    el("span", {}, `distance ${res.distance}`),
  );
  if (res.alignment) {
    const a = res.alignment;
    v.append(el("span", { id: "compare-alignment" },
      `aligned words ${a.common}; differences: ${a.changed} content, ${a.typos} typos, ${a.numbers} numbers, ${a.sentences} sentences or lines, ${a.moved} moved`));
  }
  if (res.template && res.template.length) {
    v.append(el("span", {}, `${res.template.length} template sentence${res.template.length > 1 ? "s" : ""} left out`));
  }
  const note = $("compare-note");
  note.hidden = !res.note;
  note.textContent = res.note ? (res.aligned ? res.note : "No side-by-side marking: " + res.note + ".") : "";
  const qt = $("query-text"), st = $("stored-text");
  qt.replaceChildren(...segmentNodes(res.query || {}));
  st.replaceChildren(...(res.stored.text_kept ? segmentNodes(res.stored) : [el("span", { class: "muted" }, "(the stored text is not available)")]));
  box.scrollIntoView({ block: "nearest" });
}

// clearCheck removes a check's answer and comparison, which no longer
// belong to what the page shows next.
function clearCheck() {
  $("check-result").replaceChildren();
  $("compare").hidden = true;
}

async function store() {
  const q = queryInput();
  const id = $("doc-id").value.trim();
  if (!id) { status("Give the document an id to store it.", "error"); return; }
  if (!q.text.trim()) { status("Paste a text to store.", "error"); return; }
  const mode = $("mode").value;
  status("Storing…");
  const res = await api("POST", "/v1/documents", { id, ...q, mode });
  clearCheck();
  const box = $("doc-result");
  const dups = res.duplicates || [];
  box.replaceChildren(el("div", { id: "store-result" },
    el("h2", {}, "Store"),
    el("div", { class: "summary" },
      el("span", { class: "badge " + (res.stored ? "unique" : "dup") }, res.stored ? (res.replaced ? "stored (replaced)" : "stored") : "not stored"),
      el("span", {}, el("code", {}, res.id)),
      el("span", {}, "fingerprint ", el("code", {}, res.fingerprint)),
      res.duplicate_of ? el("span", {}, "a duplicate of ", el("code", {}, res.duplicate_of)) : null,
    ),
    dups.length ? el("p", {}, `Near-duplicates found: ${dups.map((d) => `${d.id} (distance ${d.distance})`).join(", ")}`) : null,
    res.duplicate_of ? el("button", { type: "button", onclick: () => busy($("store-btn"), () => { lastQuery = q; return compare(res.duplicate_of); }) }, "Compare with " + res.duplicate_of) : null,
  ));
  status(res.stored ? `Stored ${res.id}.` : `Not stored: ${res.id} duplicates ${res.duplicate_of}.`, res.stored ? "ok" : "");
  $("lookup-id").value = res.stored ? res.id : res.duplicate_of || res.id;
}

async function lookup() {
  const id = $("lookup-id").value.trim();
  if (!id) { status("Give an id to look up.", "error"); return; }
  status("Looking up…");
  const [doc, ex] = await Promise.all([api("GET", docPath(id)), api("POST", "/v1/explain", { id })]);
  clearCheck();
  const attrs = Object.entries(doc.attrs || {});
  $("doc-result").replaceChildren(el("div", { id: "lookup-result" },
    el("h2", {}, "Stored document"),
    el("dl", { class: "meta" },
      el("dt", {}, "id"), el("dd", {}, el("code", {}, doc.id)),
      el("dt", {}, "time"), el("dd", {}, fmtTime(doc.time)),
      el("dt", {}, "fingerprint"), el("dd", {}, el("code", {}, doc.fingerprint)),
      doc.title_fingerprint ? [el("dt", {}, "title fingerprint"), el("dd", {}, el("code", {}, doc.title_fingerprint))] : null,
      doc.exact_hash ? [el("dt", {}, "exact hash"), el("dd", {}, el("code", {}, doc.exact_hash))] : null,
      el("dt", {}, "characters"), el("dd", {}, fmtNum(ex.stored.chars)),
      attrs.map(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]),
    ),
    ex.stored.text_kept
      ? [el("h3", {}, "Stored text (normalized)"), el("div", { class: "doc-text", id: "lookup-text" }, ex.stored.text),
        el("div", { class: "row" },
          el("button", { type: "button", onclick: () => { $("text").value = ex.stored.text; $("title").value = ""; status("The stored text is in the text box: check it, or compare."); } }, "Use as query text"),
          $("text").value.trim() ? el("button", { type: "button", onclick: () => busy($("lookup-btn"), () => { lastQuery = queryInput(); return compare(id); }) }, "Compare with the text box") : null)]
      : el("p", { class: "note", id: "lookup-note" }, "The stored text is not available: " + ex.note + "."),
  ));
  status(`Found ${doc.id}.`, "ok");
}

async function del() {
  const id = $("lookup-id").value.trim();
  if (!id) { status("Give the id of the document to delete.", "error"); return; }
  await api("DELETE", docPath(id));
  clearCheck();
  $("doc-result").replaceChildren(el("p", { id: "delete-result" }, "Deleted ", el("code", {}, id), "."));
  status(`Deleted ${id}.`, "ok");
}

// ---- the overview ----

// parseMetrics reads the Prometheus text format into {name: [{labels, value}]}.
function parseMetrics(text) {
  const out = {};
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const m = /^([A-Za-z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels = {};
    for (const l of (m[2] || "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    (out[m[1]] = out[m[1]] || []).push({ labels, value: Number(m[3]) });
  }
  return out;
}

function sumMetric(ms, name, keep) {
  return (ms[name] || []).filter((s) => !keep || keep(s.labels)).reduce((a, s) => a + s.value, 0);
}

let lastSample = null;
let overviewTimer = null;

async function refreshOverview() {
  const [stats, metricsText, ready] = await Promise.all([
    api("GET", "/v1/stats?rows=10"),
    api("GET", "/metrics", undefined, { raw: true }),
    api("GET", "/readyz").catch((err) => ({ status: "not ready", store: err.message })),
  ]);
  const ms = parseMetrics(metricsText);
  const now = Date.now();
  const sample = {
    t: now,
    inserts: sumMetric(ms, "simdex_inserts_total"),
    stored: sumMetric(ms, "simdex_inserts_total", (l) => l.outcome === "stored" || l.outcome === "replaced"),
    checks: sumMetric(ms, "simdex_http_request_duration_seconds_count", (l) => l.route === "/v1/check" || l.route === "/v1/check/batch"),
  };
  let insertRate = "measuring…", checkRate = "measuring…";
  if (lastSample && now > lastSample.t) {
    const dt = (now - lastSample.t) / 1000;
    insertRate = ((sample.inserts - lastSample.inserts) / dt).toFixed(2) + " /s";
    checkRate = ((sample.checks - lastSample.checks) / dt).toFixed(2) + " /s";
  }
  lastSample = sample;
  const card = (id, k, v, s) => el("div", { class: "card", id }, el("div", { class: "k" }, k), el("div", { class: "v" }, v), s ? el("div", { class: "s" }, s) : null);
  $("overview-cards").replaceChildren(
    card("card-documents", "documents", fmtNum(stats.documents)),
    card("card-fingerprints", "fingerprints", fmtNum(stats.fingerprints)),
    card("card-inserts", "insert rate", insertRate, `${fmtNum(sample.inserts)} offered, ${fmtNum(sample.stored)} stored since start`),
    card("card-checks", "check rate", checkRate, `${fmtNum(sample.checks)} check requests since start`),
    card("card-layout", "layout", `b ${stats.layout.b} · k ${stats.layout.k}`, `${stats.layout.tables} tables, recipe ${stats.recipe}`),
    card("card-index", "index rows", fmtNum(stats.index_rows), fmtBytes(stats.index_bytes)),
    card("card-store", "store", ready.store || "–", ready.status),
  );
  $("fullest-rows").tBodies[0].replaceChildren(...stats.fullest_rows.map((r) =>
    el("tr", {}, el("td", { class: "num" }, r.table), el("td", {}, el("code", {}, r.prefix)), el("td", { class: "num" }, fmtNum(r.fingerprints)))));
  if (stats.fullest_rows.length === 0) {
    $("fullest-rows").tBodies[0].append(el("tr", {}, el("td", { colSpan: 3, class: "muted" }, "The index is empty.")));
  }
  $("overview-updated").textContent = "updated " + new Date(now).toLocaleTimeString();
}

function seenUser() {
  const u = $("seen-user").value.trim();
  if (!u) throw new Error("Give a user id.");
  return u;
}

const seenPath = (u) => "/v1/users/" + encodeURIComponent(u) + "/seen";

async function seenSummary() {
  const u = seenUser();
  const res = await api("GET", seenPath(u));
  $("seen-result").replaceChildren(el("dl", { class: "meta", id: "seen-summary" },
    el("dt", {}, "user"), el("dd", {}, el("code", {}, res.user)),
    el("dt", {}, "items seen"), el("dd", {}, fmtNum(res.items)),
    el("dt", {}, "stored bytes"), el("dd", {}, fmtBytes(res.bytes)),
    el("dt", {}, "kept for"), el("dd", {}, res.retention || "–"),
  ), el("p", { class: "muted" }, "Item ids are kept as hashes: check the ids you want to know about below."));
}

async function seenCheck() {
  const u = seenUser();
  const ids = $("seen-ids").value.split("\n").map((s) => s.trim()).filter(Boolean);
  if (ids.length === 0) throw new Error("Give the item ids to check, one a line.");
  const res = await api("POST", seenPath(u) + "/check", { ids });
  $("seen-result").replaceChildren(el("table", { id: "seen-table" },
    el("thead", {}, el("tr", {}, el("th", {}, "item"), el("th", {}, "seen"))),
    el("tbody", {}, ids.map((id, i) => el("tr", {}, el("td", {}, el("code", {}, id)), el("td", {}, res.seen[i] ? "seen" : "not seen"))))));
}

async function seenForget() {
  const u = seenUser();
  await api("DELETE", seenPath(u));
  $("seen-result").replaceChildren(el("p", {}, "Forgot every item of ", el("code", {}, u), "."));
}

// seenGuard shows a seen call's error in the seen panel.
function seenGuard(fn) {
  return async () => {
    try {
      await fn();
    } catch (err) {
      $("seen-result").replaceChildren(el("p", { class: "error" }, err.message || String(err)));
    }
  };
}

// ---- tabs and wiring ----

function showTab(name) {
  for (const t of ["editor", "overview"]) {
    const on = t === name;
    $("tab-" + t).setAttribute("aria-selected", String(on));
    $("view-" + t).hidden = !on;
  }
  clearInterval(overviewTimer);
  overviewTimer = null;
  if (name === "overview") {
    const tick = () => refreshOverview().catch((err) => { $("overview-updated").textContent = err.message; });
    tick();
    overviewTimer = setInterval(tick, 5000);
  }
  if (location.hash !== "#" + name) history.replaceState(null, "", "#" + name);
}

document.addEventListener("DOMContentLoaded", () => {
  setKey(apiKey);
  $("tab-editor").addEventListener("click", () => showTab("editor"));
  $("tab-overview").addEventListener("click", () => showTab("overview"));
  $("check-btn").addEventListener("click", () => busy($("check-btn"), check));
  $("store-btn").addEventListener("click", () => busy($("store-btn"), store));
  $("lookup-btn").addEventListener("click", () => busy($("lookup-btn"), lookup));
  $("delete-btn").addEventListener("click", () => armed($("delete-btn"), "Delete for good?", del));
  $("text").addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) busy($("check-btn"), check);
  });
  link($("query-text"), $("stored-text"));
  link($("stored-text"), $("query-text"));
  $("overview-refresh").addEventListener("click", () => busy($("overview-refresh"), refreshOverview));
  $("seen-summary-btn").addEventListener("click", () => busy($("seen-summary-btn"), seenGuard(seenSummary)));
  $("seen-check-btn").addEventListener("click", () => busy($("seen-check-btn"), seenGuard(seenCheck)));
  $("seen-forget-btn").addEventListener("click", () => armed($("seen-forget-btn"), "Forget for good?", seenGuard(seenForget)));
  $("key-set").addEventListener("click", () => askKey("Set the API key this page sends.").then((k) => { if (k !== null) setKey(k); }));
  $("key-forget").addEventListener("click", () => setKey(""));
  $("key-ok").addEventListener("click", () => closeKey($("key-input").value.trim()));
  $("key-cancel").addEventListener("click", () => closeKey(null));
  $("key-input").addEventListener("keydown", (ev) => { if (ev.key === "Enter") closeKey($("key-input").value.trim()); });
  $("key-dialog").addEventListener("cancel", (ev) => { ev.preventDefault(); closeKey(null); });
  showTab(location.hash === "#overview" ? "overview" : "editor");
});
