// The chair's page: many reviews and bundles at once. Files are read here and handed to the
// worker (worker.js) one review at a time; the venue's corrections (Holm, Benjamini–Hochberg) come
// from the same core functions `semtrace detect --manifest` uses. Nothing is sent anywhere else.
import { showModelProgress, showModelReady, startTeam } from "./team.js";
import { isBundle, kindByName, pairFiles } from "./pairing.js";

const $ = (id) => document.getElementById(id);
const base = new URL(".", import.meta.url).href;
const MAX_REVIEW_BYTES = 1 << 20; // the core's limit for one review
const MAX_BUNDLE_BYTES = 16 << 20;
const MAX_FILES = 20000;

const state = {
  team: null,
  model: null,
  files: new Map(), // path -> File
  bundles: new Map(), // path -> {text, parsed, summary, error}
  jobs: [], // from pairing: {review, bundle, recipient?, line?, by?}
  rows: [], // one per job: {job, status, report?, error?, holm?, bh?}
  running: false,
  waiting: new Map(), // request id -> {resolve, reject, onProgress}
  nextId: 1,
  loadGeneration: 0,
  complete: false, // every runnable review was checked (the corrections cover the whole set)
};

function showMessage(text, kind = "error") {
  const m = $("message");
  m.textContent = text;
  m.className = kind === "info" ? "message info" : "message";
  m.hidden = !text;
}
const fmtP = (p) => (typeof p !== "number" ? "—" : p < 1e-4 ? p.toExponential(2) : p.toFixed(4));

// ---------------------------------------------------------------- the workers
function startWorkers() {
  state.model = null;
  $("model-status").textContent = "Loading the NLI model…";
  $("model-progress").hidden = false;
  $("model-progress").removeAttribute("value");
  state.team = startTeam(base, onWorkerMessage, (ev) => {
    $("model-status").textContent = "The detector could not start.";
    showMessage(`The detector worker failed: ${ev.message || "unknown error"}. This browser may lack WebAssembly or module workers.`);
  });
  updateButtons();
}

// One request to the lead worker; it answers in order, each answer carrying the request's id.
function request(msg, transfer = [], onProgress = null) {
  const id = state.nextId++;
  return new Promise((resolve, reject) => {
    state.waiting.set(id, { resolve, reject, onProgress });
    state.team.lead.postMessage({ ...msg, id }, transfer);
  });
}

function onWorkerMessage(msg) {
  const w = msg.id !== undefined ? state.waiting.get(msg.id) : null;
  switch (msg.type) {
    case "model-progress":
      showModelProgress(msg);
      break;
    case "ready":
      state.model = msg.model;
      showModelReady(msg);
      renderRows();
      updateButtons();
      break;
    case "progress":
      if (w && w.onProgress) w.onProgress(msg.done, msg.total);
      break;
    case "bundle":
    case "result":
    case "adjusted":
      if (w) { state.waiting.delete(msg.id); w.resolve(msg); }
      break;
    case "error":
      if (msg.stage === "init") {
        $("model-status").textContent = "The model could not be loaded.";
        $("model-progress").hidden = true;
        document.body.dataset.modelReady = "false";
        showMessage(`The NLI model could not be loaded: ${msg.message}\nReload the page to try again.`);
      }
      if (w) { state.waiting.delete(msg.id); w.reject(new Error(msg.message)); }
      break;
  }
}

function updateButtons() {
  const runnable = state.rows.some((r) => r.status === "pending");
  $("run").disabled = !(state.model && runnable && !state.running);
  $("cancel").disabled = !state.running;
}

// ---------------------------------------------------------------- reading the dropped files
// Directory entries must be taken inside the drop event; the walk itself is asynchronous.
function entriesOf(dataTransfer) {
  return [...(dataTransfer.items || [])].map((i) => (i.webkitGetAsEntry ? i.webkitGetAsEntry() : null)).filter(Boolean);
}

async function walkEntries(entries) {
  const out = [];
  async function walk(entry, prefix) {
    if (out.length > MAX_FILES) return;
    if (entry.isFile) {
      out.push({ path: prefix + entry.name, file: await new Promise((res, rej) => entry.file(res, rej)) });
    } else if (entry.isDirectory) {
      const reader = entry.createReader();
      for (;;) {
        const batch = await new Promise((res, rej) => reader.readEntries(res, rej));
        if (!batch.length) break;
        for (const e of batch) await walk(e, `${prefix}${entry.name}/`);
      }
    }
  }
  for (const e of entries) await walk(e, "");
  return out;
}

async function loadFiles(list) {
  const generation = ++state.loadGeneration;
  // "paired" marks a finished pairing (read by tests and scripts); a new drop clears it at once.
  delete document.body.dataset.paired;
  showMessage("");
  $("results").hidden = true;
  // Hidden files (".DS_Store", editor backups) are never reviews.
  list = list.filter((f) => !f.path.split("/").some((part) => part.startsWith(".")));
  if (list.length > MAX_FILES) {
    showMessage(`${list.length} files dropped; this page takes at most ${MAX_FILES} at once (use semtrace detect --manifest for more).`);
    return;
  }
  state.files = new Map(list.map((f) => [f.path, f.file]));
  state.bundles = new Map();
  const classified = [];
  const manifests = [];
  const problems = [];
  for (const { path, file } of list) {
    let kind = kindByName(path);
    if (kind === "json") {
      kind = "other";
      if (file.size > MAX_BUNDLE_BYTES) { problems.push(`${path}: ${(file.size / 1e6).toFixed(1)} MB, far too large for a bundle`); continue; }
      const text = await file.text();
      let parsed = null;
      try { parsed = JSON.parse(text); } catch { /* not JSON: listed as another file */ }
      if (isBundle(parsed)) { kind = "bundle"; state.bundles.set(path, { text, parsed, summary: null, error: null }); }
    } else if (kind === "manifest") {
      manifests.push({ path, text: await file.text() });
    }
    classified.push({ path, kind });
  }
  if (generation !== state.loadGeneration) return; // a newer drop replaced this one
  const pairing = pairFiles(classified, manifests);
  state.jobs = pairing.jobs;
  state.rows = pairing.jobs.map((job) => ({ job, status: "pending" }));
  renderPairing(pairing, [...problems, ...pairing.problems]);
  // Every bundle in use is validated by the core before anything runs.
  const used = new Set(pairing.jobs.map((j) => j.bundle));
  for (const path of used) {
    const b = state.bundles.get(path);
    try { b.summary = (await request({ type: "inspect", bundleJson: b.text })).summary; } catch (e) { b.error = e.message; }
  }
  if (generation !== state.loadGeneration) return;
  for (const row of state.rows) preflight(row);
  renderRows();
  $("results").hidden = !state.rows.length;
  document.body.dataset.paired = String(state.rows.length);
  updateButtons();
}

// What can be told about a job before decoding: a broken bundle, another model, a copy that
// cannot be named here.
function preflight(row) {
  const b = state.bundles.get(row.job.bundle);
  if (b.error) return fail(row, `bundle ${row.job.bundle} cannot be used: ${b.error}`);
  if (row.job.recipient !== undefined && !(b.parsed.recipients || []).length) {
    return fail(row, `recipient "${row.job.recipient}" asked for, but bundle ${row.job.bundle} lists no recipients`);
  }
  const file = state.files.get(row.job.review);
  if (file.size > MAX_REVIEW_BYTES) return fail(row, `${file.size} bytes, more than the ${MAX_REVIEW_BYTES} byte limit for one review`);
  if (!file.size) return fail(row, "the review file is empty");
  if (state.model && b.summary && b.summary.modelSha256.toLowerCase() !== state.model.sha256.toLowerCase()) {
    return fail(row, `bundle built for the model "${b.summary.modelName}" (SHA-256 ${b.summary.modelSha256.slice(0, 12)}…), ` +
      `not this page's ${state.model.name}: use semtrace detect with that model`);
  }
}
function fail(row, message) { row.status = "error"; row.error = message; }

function renderPairing(pairing, problems) {
  const el = $("pairing");
  el.replaceChildren();
  const by = {};
  for (const j of pairing.jobs) { const k = j.line ? "manifest" : j.by; by[k] = (by[k] || 0) + 1; }
  const p = document.createElement("p");
  const bundles = new Set(pairing.jobs.map((j) => j.bundle)).size;
  p.textContent = `${pairing.jobs.length} review(s) paired with ${bundles} bundle(s)` +
    (pairing.jobs.length ? ` (${Object.entries(by).map(([k, n]) => `${n} by ${k}`).join(", ")})` : "") + ".";
  el.append(p);
  const list = (items, cls, title) => {
    if (!items.length) return;
    const h = document.createElement("p");
    h.textContent = title;
    h.className = cls;
    const ul = document.createElement("ul");
    ul.className = cls;
    for (const t of items) { const li = document.createElement("li"); li.textContent = t; ul.append(li); }
    el.append(h, ul);
  };
  list(problems, "bad", "Not checked:");
  list(pairing.notes, "muted", "Notes:");
  el.hidden = false;
  el.dataset.problems = String(problems.length);
}

// ---------------------------------------------------------------- running
async function run() {
  if (state.running) return;
  state.running = true;
  showMessage("");
  for (const row of state.rows) if (row.status === "pending") preflight(row);
  updateButtons();
  const todo = state.rows.filter((r) => r.status === "pending");
  const bar = $("run-progress");
  bar.hidden = false;
  bar.max = todo.length || 1;
  bar.value = 0;
  const t0 = performance.now();
  const options = { decoder: $("decoder").value };
  for (const [i, row] of todo.entries()) {
    if (!state.running) break;
    const label = `Review ${i + 1} of ${todo.length} (${row.job.review})`;
    $("run-status").textContent = `${label}…`;
    row.status = "running";
    renderRows();
    try {
      const bytes = new Uint8Array(await state.files.get(row.job.review).arrayBuffer());
      row.bytes = bytes;
      const copy = bytes.slice().buffer;
      const msg = await request(
        { type: "detect", bundleJson: state.bundles.get(row.job.bundle).text, review: copy, options: { ...options, reviewName: row.job.review } },
        [copy],
        (done, total) => {
          bar.value = i + done / Math.max(1, total);
          $("run-status").textContent = `${label}: ${done} of ${total} pairs…`;
        },
      );
      row.report = msg.report;
      row.status = "done";
    } catch (e) {
      if (!state.running) break; // cancelled: the worker was stopped under this request
      fail(row, e.message);
    }
    bar.value = i + 1;
    renderRows();
  }
  const finished = state.running;
  state.running = false;
  bar.hidden = true;
  const done = state.rows.filter((r) => r.status === "done").length;
  $("run-status").textContent = finished
    ? `Checked ${done} review(s) in ${((performance.now() - t0) / 1000).toFixed(1)} s.`
    : `Cancelled after ${done} review(s).`;
  await adjust(finished);
  updateButtons();
}

function cancel() {
  if (!state.running) return;
  state.running = false;
  state.team.terminate();
  for (const w of state.waiting.values()) w.reject(new Error("cancelled"));
  state.waiting.clear();
  for (const row of state.rows) if (row.status === "running") row.status = "pending";
  // run() sees the rejected request, stops, and corrects over the reviews that finished.
  startWorkers();
}

// Holm and Benjamini–Hochberg over every review checked, by the core (as the CLI computes them).
async function adjust(complete) {
  state.complete = complete;
  const done = state.rows.filter((r) => r.status === "done");
  for (const r of state.rows) { delete r.holm; delete r.bh; }
  if (done.length) {
    try {
      const a = await request({ type: "adjust", pValues: done.map((r) => r.report.p_value) });
      done.forEach((r, i) => { r.holm = a.holm[i]; r.bh = a.bh[i]; });
      const img = $("histogram");
      if (img.src.startsWith("blob:")) URL.revokeObjectURL(img.src);
      img.src = URL.createObjectURL(new Blob([a.svg], { type: "image/svg+xml" }));
      img.hidden = false;
    } catch (e) {
      showMessage(`The corrections could not be computed: ${e.message}`);
    }
  }
  renderRows();
  renderSummary(complete);
  renderDownload();
  document.body.dataset.chairDone = String(state.nextId);
}

// ---------------------------------------------------------------- results
const VERDICT = { exposed: "exposed", not_exposed: "not exposed", ineligible: "ineligible" };
const limits = () => ({ fwer: Number($("fwer").value) || 0.01, fdr: Number($("fdr").value) || 0.05 });

function flags(row) {
  const { fwer, fdr } = limits();
  return { fwer: row.holm !== undefined && row.holm <= fwer, fdr: row.bh !== undefined && row.bh <= fdr };
}

function td(text, cls) {
  const c = document.createElement("td");
  c.textContent = text;
  if (cls) c.className = cls;
  return c;
}

function renderRows() {
  const tbody = $("results-table").querySelector("tbody");
  tbody.replaceChildren();
  state.rows.forEach((row, i) => {
    const tr = document.createElement("tr");
    tr.dataset.review = row.job.review;
    tr.dataset.status = row.status;
    const th = document.createElement("th");
    th.scope = "row";
    th.textContent = row.job.line ? `${i + 1} (line ${row.job.line})` : String(i + 1);
    const b = state.bundles.get(row.job.bundle);
    const paper = b?.summary ? `${b.summary.title} (${row.job.bundle})` : row.job.bundle;
    tr.append(th, td(row.job.review), td(paper));
    const r = row.report;
    if (row.status === "done") {
      tr.dataset.verdict = r.verdict;
      const f = flags(row);
      tr.append(td(VERDICT[r.verdict] || r.verdict, `verdict-cell ${r.verdict}`), td(String(r.observed)), td(String(r.matched)),
        td(fmtP(r.p_value)), td(fmtP(row.holm)), td(fmtP(row.bh)),
        td([f.fwer ? "FWER" : "", f.fdr ? "FDR" : ""].filter(Boolean).join(" + ") || "—", f.fwer || f.fdr ? "bad" : ""));
      const cell = document.createElement("td");
      const btn = document.createElement("button");
      btn.type = "button";
      btn.className = "link";
      btn.textContent = "facts and passages";
      btn.setAttribute("aria-expanded", "false");
      btn.setAttribute("aria-label", `facts and passages of ${row.job.review}`);
      cell.append(btn);
      tr.append(cell);
      tbody.append(tr);
      const ev = document.createElement("tr");
      ev.className = "evidence-row";
      ev.hidden = true;
      const c = document.createElement("td");
      c.colSpan = 11;
      ev.append(c);
      btn.addEventListener("click", () => {
        ev.hidden = !ev.hidden;
        btn.setAttribute("aria-expanded", String(!ev.hidden));
        if (!ev.hidden && !c.firstChild) c.append(evidenceTable(row));
      });
      tbody.append(ev);
      return;
    }
    const text = { pending: "waiting", running: "checking…", error: `not checked: ${row.error}` }[row.status];
    const cell = td(text, row.status === "error" ? "bad" : "muted");
    cell.colSpan = 8;
    tr.append(cell);
    tbody.append(tr);
  });
}

// For each position: the fact the review was read as stating, beside the review passage that
// stated it; for a mismatch also the fact this copy asked for; for a `both` erasure both.
function evidenceTable(row) {
  const r = row.report;
  const facts = (i) => state.bundles.get(row.job.bundle).parsed.positions[i].facts;
  const win = (w) => (w === null || w === undefined ? "—" : `“${r.windows[w]?.text ?? ""}”`);
  const table = document.createElement("table");
  table.className = "evidence";
  const head = document.createElement("thead");
  head.innerHTML = "<tr><th scope=\"col\">#</th><th scope=\"col\">Slot</th><th scope=\"col\">Decision</th>" +
    "<th scope=\"col\">Match</th><th scope=\"col\">Fact</th><th scope=\"col\">Review passage</th></tr>";
  const body = document.createElement("tbody");
  for (const p of r.positions) {
    const f = facts(p.index);
    const tr = document.createElement("tr");
    tr.dataset.position = p.index;
    const th = document.createElement("th");
    th.scope = "row";
    th.textContent = p.index + 1;
    let decision, fact, passage;
    if (p.decision === "0" || p.decision === "1") {
      const d = Number(p.decision);
      decision = `states fact ${d} (${fmtS(d === 0 ? p.s0 : p.s1)})`;
      fact = f[d].text + (p.matches === false ? `\n(this copy asked for: ${f[p.assigned].text})` : "");
      passage = win(p.evidence_window);
    } else {
      decision = `erased: ${p.erasure} (${fmtS(p.s0)} / ${fmtS(p.s1)})`;
      fact = p.erasure === "absent" ? "neither fact is stated" : `fact 0: ${f[0].text}\nfact 1: ${f[1].text}`;
      passage = p.erasure === "absent" ? "—" : `${win(p.best_windows[0])}\n${win(p.best_windows[1])}`;
    }
    tr.append(th, td(p.slot), td(decision),
      td(p.matches === null || p.matches === undefined ? "—" : p.matches ? "yes" : "no", p.matches === true ? "ok" : p.matches === false ? "bad" : ""),
      td(fact, "fact"), td(passage, "passage"));
    body.append(tr);
  }
  table.append(head, body);
  return table;
}
const fmtS = (s) => (typeof s === "number" ? s.toFixed(2) : "—");

function renderSummary(complete) {
  const done = state.rows.filter((r) => r.status === "done");
  const errors = state.rows.filter((r) => r.status === "error").length;
  const { fwer, fdr } = limits();
  const nf = done.filter((r) => flags(r).fwer).length;
  const nq = done.filter((r) => flags(r).fdr).length;
  const exposed = done.filter((r) => r.report.verdict === "exposed").length;
  $("results-summary").textContent =
    `${done.length} review(s) checked${errors ? `, ${errors} could not be (see their rows; they are not in the corrections)` : ""}` +
    `${complete ? "" : `; the corrections are over the ${done.length} finished review(s) only`}. ` +
    `Flagged at family-wise error rate ${fwer} (Holm): ${nf}; at false discovery rate ${fdr} (Benjamini–Hochberg): ${nq}. ` +
    `Exposed at each bundle's own α, uncorrected: ${exposed}.`;
  $("results").dataset.flaggedFwer = String(nf);
  $("results").dataset.flaggedFdr = String(nq);
  $("results").hidden = false;
}

// The rows as `semtrace detect --manifest` writes venue.jsonl (without the manifest's hash).
function renderDownload() {
  const lines = state.rows.filter((r) => r.status === "done").map((row) => {
    const r = row.report;
    const f = flags(row);
    const out = { line: row.job.line ?? null, review: row.job.review, bundle: row.job.bundle };
    if (row.job.recipient !== undefined) out.recipient = row.job.recipient;
    Object.assign(out, { document: state.bundles.get(row.job.bundle).parsed.document.title });
    if (r.recipient) out.copy = r.recipient;
    Object.assign(out, {
      verdict: r.verdict, k: r.k, observed: r.observed, matched: r.matched, eligible: r.eligible,
      p_value: r.p_value, p_value_exact: r.p_value_exact, decoder: r.decoder,
      holm_p: row.holm, bh_q: row.bh, flag_fwer: f.fwer, flag_fdr: f.fdr,
    });
    return JSON.stringify(out);
  });
  const a = $("download-jsonl");
  if (a.href.startsWith("blob:")) URL.revokeObjectURL(a.href);
  a.href = URL.createObjectURL(new Blob([lines.join("\n") + (lines.length ? "\n" : "")], { type: "application/x-ndjson" }));
}

// ---------------------------------------------------------------- wiring
const zone = $("files-drop");
zone.addEventListener("dragover", (e) => { e.preventDefault(); zone.classList.add("dragover"); });
zone.addEventListener("dragleave", () => zone.classList.remove("dragover"));
zone.addEventListener("drop", (e) => {
  e.preventDefault();
  zone.classList.remove("dragover");
  const entries = entriesOf(e.dataTransfer);
  const plain = [...(e.dataTransfer.files || [])].map((f) => ({ path: f.name, file: f }));
  (entries.length ? walkEntries(entries) : Promise.resolve(plain)).then(loadFiles, (err) => showMessage(`The dropped files could not be read: ${err.message}`));
});
window.addEventListener("dragover", (e) => e.preventDefault());
window.addEventListener("drop", (e) => e.preventDefault());
for (const id of ["files", "folder"]) {
  $(id).addEventListener("change", (e) => {
    const list = [...(e.target.files || [])].map((f) => ({ path: f.webkitRelativePath || f.name, file: f }));
    if (list.length) loadFiles(list);
  });
}
for (const id of ["fwer", "fdr"]) {
  $(id).addEventListener("change", () => { if (state.rows.some((r) => r.status === "done")) { renderRows(); renderSummary(state.complete); renderDownload(); } });
}
$("run").addEventListener("click", run);
$("cancel").addEventListener("click", cancel);

if (typeof WebAssembly !== "object") {
  showMessage("This browser does not support WebAssembly, which the detector needs.");
} else {
  startWorkers();
}
