// The page: inputs, progress, result view. All inference happens in worker.js; nothing is sent
// anywhere but to that worker. Relative URLs only, so the site works under any sub-path.
import { showModelProgress, showModelReady, startTeam } from "./team.js";

const $ = (id) => document.getElementById(id);
const MAX_REVIEW_BYTES = 1 << 20; // the core's limit; checked here too so a huge file never lands in the textarea
const base = new URL(".", import.meta.url).href;

const state = {
  worker: null,
  team: null, // the lead worker and its helpers
  model: null, // {name, sha256, source}
  bundleJson: null,
  bundle: null, // parsed JSON (facts for the table)
  summary: null, // from the core's validation
  running: null, // {id, bytes, t0}
  nextId: 1,
};

function showMessage(text, kind = "error") {
  const m = $("message");
  m.textContent = text;
  m.className = kind === "info" ? "message info" : "message";
  m.hidden = !text;
}
const clearMessage = () => showMessage("");

function fmt(x, digits = 3) {
  return typeof x === "number" ? x.toFixed(digits) : String(x);
}
function fmtP(p) {
  return p < 1e-4 ? p.toExponential(2) : p.toFixed(4);
}

function updateRunButton() {
  const ready = state.model && state.summary && !state.running && modelMatchesBundle();
  $("run").disabled = !ready;
  $("cancel").disabled = !state.running;
}

function modelMatchesBundle() {
  return !state.summary || !state.model || state.summary.modelSha256.toLowerCase() === state.model.sha256.toLowerCase();
}

function checkModelAgainstBundle() {
  if (!state.summary || !state.model) return;
  if (!modelMatchesBundle()) {
    showMessage(
      `This bundle was built for the model "${state.summary.modelName}" (SHA-256 ${state.summary.modelSha256}), ` +
        `but this page's model is "${state.model.name}" (SHA-256 ${state.model.sha256}). ` +
        `The bundle's thresholds only hold for its own model, so this page will not check reviews against it. ` +
        `Use the command line (semtrace detect with that model), or a bundle built with this model.`,
    );
  }
}

// ---------------------------------------------------------------- worker lifecycle
function startWorker() {
  state.model = null;
  document.body.dataset.workersReady = "1";
  $("model-status").textContent = "Loading the NLI model…";
  $("model-progress").hidden = false;
  $("model-progress").removeAttribute("value");
  const team = startTeam(base, onWorkerMessage, (ev) => {
    failRun();
    $("model-status").textContent = "The detector could not start.";
    showMessage(`The detector worker failed: ${ev.message || "unknown error"}. This browser may lack WebAssembly or module workers.`);
  });
  state.team = team;
  state.worker = team.lead;
  if (state.bundleJson) inspect(state.bundleJson);
  updateRunButton();
}

function onWorkerMessage(msg) {
  switch (msg.type) {
    case "model-progress":
      showModelProgress(msg);
      break;
    case "ready":
      state.model = msg.model;
      showModelReady(msg);
      checkModelAgainstBundle();
      updateRunButton();
      break;
    case "team":
      // Helpers join as their own copies of the model load; a run uses the workers ready at its start.
      document.body.dataset.workersReady = String(msg.ready);
      break;
    case "bundle":
      state.summary = msg.summary;
      renderBundleSummary();
      clearMessage();
      checkModelAgainstBundle();
      updateRunButton();
      break;
    case "progress":
      if (state.running && msg.id === state.running.id) {
        const p = $("run-progress");
        p.max = msg.total || 1;
        p.value = msg.done;
        const known = state.running.settled ? `Verdict: ${VERDICT_TEXT[state.running.settled]}. Settling the evidence: ` : "";
        $("run-status").textContent = `${known}Scored ${msg.done} of ${msg.total} (window, fact) pairs…`;
      }
      break;
    case "settled":
      // The scores so far fix the verdict whatever the remaining pairs give; the rest only
      // settles which positions carry it.
      if (state.running && msg.id === state.running.id) {
        state.running.settled = msg.verdict;
        document.body.dataset.settledVerdict = msg.verdict;
        document.body.dataset.settledPairs = String(msg.done);
        $("run-status").textContent = `Verdict: ${VERDICT_TEXT[msg.verdict]}. Settling the evidence…`;
      }
      break;
    case "result":
      if (state.running && msg.id === state.running.id) {
        const bytes = state.running.bytes;
        state.running = null;
        $("run-progress").hidden = true;
        const by = msg.workers > 1 ? ` by ${msg.workers} workers` : "";
        $("run-status").textContent =
          `Done in ${(msg.ms / 1000).toFixed(2)} s: ${msg.report.pairs_scored} pairs over ${msg.report.windows.length} windows${by}.`;
        document.body.dataset.workers = String(msg.workers || 1);
        document.body.dataset.wasmMemory = String(msg.memory || 0);
        renderReport(msg.report, bytes, msg.ms);
        updateRunButton();
      }
      break;
    case "error":
      if (msg.stage === "init") {
        $("model-status").textContent = "The model could not be loaded.";
        $("model-progress").hidden = true;
        document.body.dataset.modelReady = "false";
        showMessage(`The NLI model could not be loaded: ${msg.message}\nReload the page to try again.`);
      } else if (msg.stage === "inspect") {
        state.summary = null;
        state.bundle = null;
        state.bundleJson = null;
        $("bundle-summary").hidden = true;
        showMessage(`This bundle cannot be used: ${msg.message}`);
      } else {
        failRun();
        showMessage(`The review could not be checked: ${msg.message}`);
      }
      updateRunButton();
      break;
  }
}

function failRun() {
  state.running = null;
  $("run-progress").hidden = true;
  $("run-status").textContent = "";
  updateRunButton();
}

// ---------------------------------------------------------------- inputs
function inspect(json) {
  state.worker.postMessage({ type: "inspect", id: state.nextId++, bundleJson: json });
}

async function loadBundleFile(file) {
  clearMessage();
  $("result").hidden = true;
  state.summary = null;
  updateRunButton();
  if (file.size > 16 << 20) {
    showMessage(`${file.name} is ${(file.size / 1e6).toFixed(1)} MB: far too large for a signature bundle (is this the right file?).`);
    return;
  }
  const text = await file.text();
  try {
    state.bundle = JSON.parse(text);
  } catch (e) {
    state.bundle = null;
    state.bundleJson = null;
    $("bundle-summary").hidden = true;
    showMessage(`${file.name} is not a SemTrace bundle: it is not valid JSON (${e.message}).`);
    return;
  }
  state.bundleJson = text;
  state.bundleName = file.name;
  inspect(text);
}

function renderBundleSummary() {
  const s = state.summary;
  const el = $("bundle-summary");
  el.replaceChildren();
  const p = document.createElement("p");
  p.textContent = `${state.bundleName}: "${s.title}" — K = ${s.k} positions, format ${s.formatVersion}, ` +
    `model ${s.modelName}, α = ${s.alpha}.`;
  el.append(p);
  el.hidden = false;
}

async function loadReviewFile(file) {
  clearMessage();
  if (file.size > MAX_REVIEW_BYTES) {
    showMessage(`${file.name} is ${file.size} bytes, more than the ${MAX_REVIEW_BYTES} byte limit for one review (is this the right file?).`);
    return;
  }
  const buf = new Uint8Array(await file.arrayBuffer());
  let text;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(buf);
  } catch {
    showMessage(`${file.name} is not UTF-8 text; save the review as plain text (.txt or .md) and try again.`);
    return;
  }
  if (text.includes("\u0000")) {
    showMessage(`${file.name} contains NUL bytes: a binary file, not review text.`);
    return;
  }
  $("review-text").value = text;
  updateReviewCount();
}

function updateReviewCount() {
  const t = $("review-text").value.trim();
  const words = t ? t.split(/\s+/).length : 0;
  $("review-count").textContent = words ? `${words} words` : "";
}

function run() {
  clearMessage();
  const text = $("review-text").value;
  if (!text.trim()) {
    showMessage("The review is empty: paste the review text or choose a .txt/.md file first.");
    return;
  }
  const bytes = new TextEncoder().encode(text);
  if (bytes.length > MAX_REVIEW_BYTES) {
    showMessage(`The review is ${bytes.length} bytes, more than the ${MAX_REVIEW_BYTES} byte limit for one review.`);
    return;
  }
  if (!state.summary) { showMessage("Choose a signature bundle first."); return; }
  if (!state.model) { showMessage("The model is still loading; try again in a moment."); return; }
  const id = state.nextId++;
  state.running = { id, bytes };
  delete document.body.dataset.settledVerdict;
  delete document.body.dataset.settledPairs;
  $("result").hidden = true;
  const p = $("run-progress");
  p.hidden = false;
  p.max = 1;
  p.value = 0;
  $("run-status").textContent = "Starting…";
  const copy = bytes.slice().buffer; // transferred to the worker; keep our own copy for highlighting
  state.worker.postMessage(
    { type: "detect", id, bundleJson: state.bundleJson, review: copy, options: { decoder: $("decoder").value, safeguard: $("safeguard").value } },
    [copy],
  );
  updateRunButton();
}

function cancel() {
  if (!state.running) return;
  state.team.terminate();
  state.running = null;
  $("run-progress").hidden = true;
  $("run-status").textContent = "Cancelled. Reloading the model (from this browser's cache)…";
  startWorker();
}

// ---------------------------------------------------------------- result view
const VERDICT_TEXT = {
  exposed: "Exposed — the review carries this copy's codeword",
  not_exposed: "Not exposed — the matches are compatible with chance",
  ineligible: "Ineligible — too few positions observed to decide",
};

function renderReport(r, bytes, ms) {
  const v = $("verdict");
  v.textContent = VERDICT_TEXT[r.verdict] || r.verdict;
  v.className = `verdict ${r.verdict}`;
  v.dataset.verdict = r.verdict;

  const oMin = state.bundle?.decoding?.o_min;
  const stats = [
    ["Score S = 2M − O", r.score],
    ["Observed O", oMin !== undefined ? `${r.observed} (min ${oMin})` : r.observed],
    ["Matched M", r.matched],
    ["Mismatched", r.mismatched],
    ["p-value", r.p_value_exact ? `${fmtP(r.p_value)} (exact)` : `${fmtP(r.p_value)} (assumes a fair coin: bundle older than 1.2)`],
    ["α", r.alpha],
    ["Exposed needs", r.matches_needed != null ? `M ≥ ${r.matches_needed} of O = ${r.observed}` : `more than O = ${r.observed} observed`],
    ["Smallest p (all K match)", fmtP(r.min_p_value)],
    ["Positions K", r.k],
    ["Windows", r.windows_total > r.windows.length ? `${r.windows.length} of ${r.windows_total}` : r.windows.length],
    ["Pairs scored", r.pairs_scored],
    ["Decoder", r.safeguard ? `${r.decoder}, safeguard ${r.safeguard}` : r.decoder],
    ["Time", `${(ms / 1000).toFixed(2)} s`],
  ];
  if (r.recipients && r.recipients.length) {
    // Per-reviewer copies: every copy's codeword on the same decisions, Holm over the copies.
    stats.push(["Copies tested (Holm)", r.recipients.length]);
    stats.push([r.verdict === "exposed" ? "Copy that leaked" : "Best-fitting copy", `digest ${r.recipient}`]);
    for (const c of r.recipients) {
      stats.push([`copy ${c.digest.slice(0, 12)}…`, `M = ${c.matched}, p = ${fmtP(c.p_value)}, Holm p = ${fmtP(c.holm_p)}`]);
    }
  }
  const dl = $("stats");
  dl.replaceChildren();
  for (const [k, val] of stats) {
    const d = document.createElement("div");
    const dt = document.createElement("dt");
    dt.textContent = k;
    const dd = document.createElement("dd");
    dd.textContent = String(val);
    d.append(dt, dd);
    dl.append(d);
  }
  if (!r.model.hash_matches) {
    showMessage("Warning: the model differs from the bundle's (mismatch overridden); the result is not comparable.", "info");
  }

  renderPositions(r);
  renderReview(r, bytes);
  const json = JSON.stringify(r, null, 2);
  $("report-json").textContent = json;
  const a = $("report-download");
  if (a.href.startsWith("blob:")) URL.revokeObjectURL(a.href);
  a.href = URL.createObjectURL(new Blob([json + "\n"], { type: "application/json" }));
  $("result").hidden = false;
  document.body.dataset.resultReady = String(state.nextId);
  $("result-h").scrollIntoView({ block: "start" });
}

function cell(text, cls) {
  const td = document.createElement("td");
  td.textContent = text;
  if (cls) td.className = cls;
  return td;
}

function renderPositions(r) {
  const tbody = $("positions").querySelector("tbody");
  tbody.replaceChildren();
  for (const p of r.positions) {
    const tr = document.createElement("tr");
    tr.id = `pos-${p.index}`;
    tr.dataset.position = p.index;
    const facts = state.bundle?.positions?.[p.index]?.facts;
    const th = document.createElement("th");
    th.scope = "row";
    th.textContent = p.index + 1;
    tr.append(th, cell(p.slot), cell(String(p.assigned)), cell(fmt(p.s0)), cell(fmt(p.s1)), cell(p.decision));
    tr.append(cell(p.erasure ?? "—"));
    tr.append(p.matches === null || p.matches === undefined ? cell("—") : cell(p.matches ? "yes" : "no", p.matches ? "ok" : "bad"));
    const w = document.createElement("td");
    if (p.evidence_window !== null && p.evidence_window !== undefined) {
      const b = document.createElement("button");
      b.type = "button";
      b.className = "link";
      b.textContent = `window ${p.evidence_window + 1}`;
      // The accessible name starts with the visible text (WCAG 2.5.3).
      b.setAttribute("aria-label", `${b.textContent}: the review passage that carried position ${p.index + 1}`);
      b.addEventListener("click", (e) => { e.stopPropagation(); jumpToWindow(p.index); });
      w.append(b);
      tr.classList.add("decided");
      tr.addEventListener("click", () => jumpToWindow(p.index));
    } else w.textContent = "—";
    tr.append(w);
    if (facts) tr.title = `fact 0: ${facts[0].text}\nfact 1: ${facts[1].text}`;
    tr.addEventListener("mouseenter", () => linkPosition(p.index, true));
    tr.addEventListener("mouseleave", () => linkPosition(p.index, false));
    tr.addEventListener("focusin", () => linkPosition(p.index, true));
    tr.addEventListener("focusout", () => linkPosition(p.index, false));
    tbody.append(tr);
  }
}

function linkPosition(index, on) {
  for (const m of document.querySelectorAll(`#review-view mark`)) {
    if (m.dataset.positions.split(" ").includes(String(index))) m.classList.toggle("active", on);
  }
  $(`pos-${index}`)?.classList.toggle("linked", on);
}

function jumpToWindow(index) {
  const m = [...document.querySelectorAll("#review-view mark")].find((x) => x.dataset.positions.split(" ").includes(String(index)));
  if (m) { m.scrollIntoView({ block: "center" }); m.focus({ preventScroll: true }); }
}

// The review with each decided position's evidence window marked. Windows overlap (stride one
// sentence), so the text is cut at every window edge and each piece lists the positions covering it.
function renderReview(r, bytes) {
  const view = $("review-view");
  view.replaceChildren();
  const spans = [];
  for (const p of r.positions) {
    if (p.evidence_window === null || p.evidence_window === undefined) continue;
    const w = r.windows[p.evidence_window];
    if (w) spans.push({ start: w.start, end: w.end, pos: p.index });
  }
  const cuts = new Set([0, bytes.length]);
  for (const s of spans) { cuts.add(s.start); cuts.add(s.end); }
  const edges = [...cuts].sort((a, b) => a - b);
  const dec = new TextDecoder();
  const firstEnd = new Map(); // position → end of its span: the superscript goes at the span's end
  for (const s of spans) firstEnd.set(s.pos, s.end);
  for (let i = 0; i + 1 < edges.length; i++) {
    const [a, b] = [edges[i], edges[i + 1]];
    const text = dec.decode(bytes.subarray(a, b));
    const covering = spans.filter((s) => s.start <= a && s.end >= b).map((s) => s.pos);
    if (!covering.length) { view.append(text); continue; }
    const m = document.createElement("mark");
    m.textContent = text;
    m.dataset.positions = covering.join(" ");
    m.tabIndex = 0;
    m.setAttribute("aria-label", `Evidence for position${covering.length > 1 ? "s" : ""} ${covering.map((x) => x + 1).join(", ")}: ${text}`);
    const ends = covering.filter((pos) => firstEnd.get(pos) === b);
    if (ends.length) {
      const sup = document.createElement("sup");
      sup.textContent = ends.map((x) => x + 1).join(",");
      m.append(sup);
    }
    const on = (flag) => covering.forEach((pos) => linkPosition(pos, flag));
    m.addEventListener("mouseenter", () => on(true));
    m.addEventListener("mouseleave", () => on(false));
    m.addEventListener("focus", () => on(true));
    m.addEventListener("blur", () => on(false));
    m.addEventListener("click", () => $(`pos-${covering[0]}`)?.scrollIntoView({ block: "center" }));
    m.addEventListener("keydown", (e) => { if (e.key === "Enter") $(`pos-${covering[0]}`)?.scrollIntoView({ block: "center" }); });
    view.append(m);
  }
}

// ---------------------------------------------------------------- wiring
function dropZone(el, onFile) {
  el.addEventListener("dragover", (e) => { e.preventDefault(); el.classList.add("dragover"); });
  el.addEventListener("dragleave", () => el.classList.remove("dragover"));
  el.addEventListener("drop", (e) => {
    e.preventDefault();
    el.classList.remove("dragover");
    const f = e.dataTransfer?.files?.[0];
    if (f) onFile(f);
  });
}

// A file dropped outside a zone must not make the browser navigate away from the page.
window.addEventListener("dragover", (e) => e.preventDefault());
window.addEventListener("drop", (e) => e.preventDefault());

$("bundle-file").addEventListener("change", (e) => { const f = e.target.files?.[0]; if (f) loadBundleFile(f); });
$("review-file").addEventListener("change", (e) => { const f = e.target.files?.[0]; if (f) loadReviewFile(f); });
$("review-text").addEventListener("input", updateReviewCount);
dropZone($("bundle-drop"), loadBundleFile);
dropZone($("review-drop"), loadReviewFile);
$("run").addEventListener("click", run);
$("cancel").addEventListener("click", cancel);

if (typeof WebAssembly !== "object") {
  showMessage("This browser does not support WebAssembly, which the detector needs.");
} else {
  startWorker();
}
