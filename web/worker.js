// Inference off the main thread: loads the wasm detector and the model once, then answers
// detect requests. Cancelling terminates this worker (wasm cannot be interrupted mid-call);
// the page then starts a fresh one, which reloads the model from Cache Storage.
//
// The same script runs as a helper: it loads its own copy of the model and scores the pairs the
// lead worker sends it over a MessageChannel. The lead drives the core's step-wise decoding
// (DetectionPlan) and deals each round's batches out to itself and its ready helpers, so every
// batch — and so every score — is what one worker alone would compute.
import init, { Detector, adjustPValues, inspectBundle, pValueHistogramSvg, sha256Hex, takePanicMessage, version } from "./pkg/semtrace_detector_wasm.js";

const CACHE = "semtrace-model-v1";
let detector = null;
let wasmReady = false;
let wasmMemory = null; // this worker's linear memory (model weights, plans, activations)
const memoryBytes = () => (wasmMemory ? wasmMemory.buffer.byteLength : 0);
// Lead only: helpers attached by the page, {port, ready, waiting: Map(id -> {resolve, reject})}.
const helpers = [];
let nextRequest = 1;

function post(msg) { self.postMessage(msg); }

// A wasm trap surfaces as a RuntimeError; the panic hook kept the real message.
function describe(err) {
  const panic = (() => { try { return takePanicMessage(); } catch { return null; } })();
  if (panic) return `internal error: ${panic}`;
  if (err instanceof Error) return err.message;
  return String(err);
}

async function readBody(resp, label, expected) {
  const total = Number(resp.headers.get("content-length")) || expected || 0;
  if (!resp.body) return new Uint8Array(await resp.arrayBuffer());
  const reader = resp.body.getReader();
  const chunks = [];
  let loaded = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    loaded += value.length;
    post({ type: "model-progress", stage: `downloading ${label}`, loaded, total });
  }
  const out = new Uint8Array(loaded);
  let at = 0;
  for (const c of chunks) { out.set(c, at); at += c.length; }
  return out;
}

// One model file: from Cache Storage when its SHA-256 still matches the manifest, else from the
// site (and then cached). A mismatch after a fresh download is an error, never silently used.
async function modelFile(base, entry, label) {
  const url = new URL(entry.path, base).href;
  const cache = self.caches ? await self.caches.open(CACHE).catch(() => null) : null;
  if (cache) {
    const hit = await cache.match(url);
    if (hit) {
      const bytes = new Uint8Array(await hit.arrayBuffer());
      if (sha256Hex(bytes) === entry.sha256) return { bytes, source: "cache" };
      await cache.delete(url);
    }
  }
  const resp = await fetch(url, { cache: "no-cache" });
  if (!resp.ok) throw new Error(`could not fetch ${label} (${entry.path}): HTTP ${resp.status}`);
  const bytes = await readBody(resp, label, entry.bytes);
  post({ type: "model-progress", stage: `verifying ${label}`, loaded: 0, total: 0 });
  const got = sha256Hex(bytes);
  if (got !== entry.sha256) {
    throw new Error(`${label} (${entry.path}) does not match this site's model manifest: SHA-256 ${got}, expected ${entry.sha256}. ` +
      `The site is incompletely deployed or the file is corrupt; the detector will not use it.`);
  }
  if (cache) {
    await cache.put(url, new Response(bytes, { headers: { "content-type": "application/octet-stream" } })).catch(() => {});
  }
  return { bytes, source: "network" };
}

async function load(base, announce = true) {
  const exports = await init({ module_or_path: new URL("pkg/semtrace_detector_wasm_bg.wasm", base) });
  wasmMemory = exports.memory || null;
  wasmReady = true;
  const mresp = await fetch(new URL("model/manifest.json", base), { cache: "no-cache" });
  if (!mresp.ok) throw new Error(`could not fetch the model manifest (model/manifest.json): HTTP ${mresp.status}`);
  let manifest;
  try { manifest = await mresp.json(); } catch (e) { throw new Error(`model/manifest.json is not valid JSON: ${e.message}`); }
  const modelBase = new URL("model/", base);
  const files = manifest.files || {};
  for (const k of ["onnx", "tokenizer", "config"]) {
    if (!files[k] || !files[k].path || !files[k].sha256) throw new Error(`model/manifest.json lacks the ${k} file entry`);
  }
  const onnx = await modelFile(modelBase, files.onnx, "model");
  const tok = await modelFile(modelBase, files.tokenizer, "tokenizer");
  const cfg = await modelFile(modelBase, files.config, "model config");
  post({ type: "model-progress", stage: "preparing the model", loaded: 0, total: 0 });
  const t0 = performance.now();
  detector = new Detector(manifest.name, onnx.bytes, tok.bytes, new TextDecoder().decode(cfg.bytes));
  if (!announce) return;
  post({
    type: "ready",
    model: { name: detector.modelName, sha256: detector.sha256, source: onnx.source, bytes: onnx.bytes.length },
    loadMs: performance.now() - t0,
    version: version(),
  });
}

// Messages are handled one at a time, in order: a bundle sent while the model loads waits for it.
let chain = Promise.resolve();
self.onmessage = (ev) => {
  // Not queued: the detection it concerns is what the queue is waiting on.
  if (ev.data.type === "helper-lost") return dropHelper(ev.data.index);
  chain = chain.then(() => handle(ev.data));
};

// ---------------------------------------------------------------- helper side
function serveAsHelper(msg) {
  self.semtraceRole = "helper"; // lets a test driver tell the workers apart
  const port = msg.port;
  const loaded = load(msg.base, false);
  loaded.then(() => port.postMessage({ type: "ready" }), (err) => port.postMessage({ type: "failed", message: describe(err) }));
  let queue = loaded;
  port.onmessage = (ev) => {
    const req = ev.data;
    queue = queue.then(() => {
      const probs = detector.scorePairs(req.premises, req.hypotheses);
      port.postMessage({ type: "scores", id: req.id, probs: probs.buffer, memory: memoryBytes() }, [probs.buffer]);
    }).catch((err) => port.postMessage({ type: "error", id: req.id, message: describe(err) }));
  };
}

// ---------------------------------------------------------------- lead side
function attach(port) {
  const h = { port, ready: false, waiting: new Map(), memory: 0 };
  port.onmessage = (ev) => {
    const m = ev.data;
    if (m.type === "ready") { h.ready = true; announceTeam(); }
    else if (m.type === "failed") { h.ready = false; announceTeam(); }
    else {
      const w = h.waiting.get(m.id);
      if (!w) return;
      h.waiting.delete(m.id);
      if (m.type === "scores") { h.memory = m.memory || 0; w.resolve(new Float32Array(m.probs)); }
      else { h.ready = false; w.reject(new Error(m.message)); }
    }
  };
  helpers.push(h);
}

// The page shows how many workers a run would use now (this one plus the ready helpers).
function announceTeam() {
  post({ type: "team", ready: 1 + helpers.filter((h) => h.ready).length, of: 1 + helpers.length });
}

// Its pending shares fail over to this worker (see detectShared), and it gets no more.
function dropHelper(index) {
  const h = helpers[index];
  if (!h) return;
  h.ready = false;
  announceTeam();
  for (const w of h.waiting.values()) w.reject(new Error("helper worker stopped"));
  h.waiting.clear();
}

function askHelper(h, premises, hypotheses) {
  const id = nextRequest++;
  return new Promise((resolve, reject) => {
    h.waiting.set(id, { resolve, reject });
    h.port.postMessage({ type: "score", id, premises, hypotheses });
  });
}

// A wedged helper sends no error event. One that has not answered long after this worker
// finished its own, equal share is taken as lost, and its share is scored here.
const STALL_MIN_MS = 10000;
const STALL_FACTOR = 10;

function withDeadline(h, promise, ms) {
  let timer;
  const stalled = new Promise((_, reject) => {
    timer = setTimeout(() => { dropHelper(helpers.indexOf(h)); reject(new Error("helper worker stalled")); }, ms);
  });
  return Promise.race([promise, stalled]).finally(() => clearTimeout(timer));
}

// One detection shared with the ready helpers; the report is the one `detector.detect` gives.
// Returns it with the number of workers still sharing the work at the end.
async function detectShared(msg, onProgress, onSettled) {
  const plan = detector.plan(msg.bundleJson, new Uint8Array(msg.review), msg.options);
  let team = helpers.filter((h) => h.ready);
  try {
    const batch = Math.max(1, detector.chunkSize);
    let before = 0;
    let settled;
    for (;;) {
      const { premises, hypotheses } = plan.pending();
      const total = premises.length;
      if (!total) break;
      // A helper lost in an earlier round gets no share of this one.
      team = team.filter((h) => h.ready);
      const n = team.length + 1;
      // Batch b of the length-sorted round goes to worker b % n (0 = this one): equal loads.
      const parts = Array.from({ length: n }, () => ({ idx: [], premises: [], hypotheses: [] }));
      for (let b = 0; b * batch < total; b++) {
        const part = parts[b % n];
        for (let i = b * batch; i < Math.min(total, (b + 1) * batch); i++) {
          part.idx.push(i);
          part.premises.push(premises[i]);
          part.hypotheses.push(hypotheses[i]);
        }
      }
      const asked = team.map((h, k) => {
        const part = parts[k + 1];
        return part.idx.length ? askHelper(h, part.premises, part.hypotheses) : Promise.resolve(new Float32Array(0));
      });
      // The helpers run meanwhile; progress assumes they keep this worker's pace.
      const t0 = performance.now();
      const own = detector.scorePairs(parts[0].premises, parts[0].hypotheses, (done, of) => {
        onProgress(before + Math.round((total * done) / Math.max(1, of)), before + total);
      });
      const deadline = Math.max(STALL_MIN_MS, STALL_FACTOR * (performance.now() - t0));
      // A helper that fails or stalls leaves its share to this worker.
      const helped = await Promise.all(asked.map((p, k) => withDeadline(team[k], p, deadline)
        .catch(() => detector.scorePairs(parts[k + 1].premises, parts[k + 1].hypotheses))));
      const got = [own, ...helped];
      const probs = new Float32Array(total);
      parts.forEach((part, k) => part.idx.forEach((i, j) => { probs[i] = got[k][j]; }));
      plan.supply(probs);
      before += total;
      onProgress(before, before);
      // Once the scores so far fix the verdict, say so; the remaining rounds settle the evidence.
      if (!settled) {
        settled = plan.settledVerdict();
        if (settled) onSettled(settled, before);
      }
    }
    return { report: plan.report(), workers: 1 + team.filter((h) => h.ready).length };
  } finally {
    plan.free();
  }
}

async function handle(msg) {
  try {
    if (msg.type === "helper") {
      serveAsHelper(msg);
    } else if (msg.type === "attach") {
      attach(msg.port);
    } else if (msg.type === "init") {
      self.semtraceRole = "lead";
      await load(msg.base);
    } else if (msg.type === "inspect") {
      if (!wasmReady) throw new Error("the detector did not start");
      post({ type: "bundle", id: msg.id, summary: inspectBundle(msg.bundleJson) });
    } else if (msg.type === "adjust") {
      // The venue's corrections over many reviews (the chair page), computed by the core as the CLI does.
      if (!wasmReady) throw new Error("the detector did not start");
      const a = adjustPValues(msg.pValues);
      post({ type: "adjusted", id: msg.id, holm: a.holm, bh: a.bh, svg: pValueHistogramSvg(msg.pValues, 20) });
    } else if (msg.type === "detect") {
      if (!detector) throw new Error("the model is not loaded");
      const t0 = performance.now();
      let last = 0;
      const progress = (done, total) => {
        const now = performance.now();
        // Throttle messages; always send the final one.
        if (done === total || now - last > 50) { last = now; post({ type: "progress", id: msg.id, done, total }); }
      };
      const team = helpers.filter((h) => h.ready);
      // Alone, the whole plan runs inside the module: driving it round by round from here was ~9%
      // slower (docs/performance/2026-11-29-settled-verdict.md), so only a shared run announces a
      // settled verdict before the last round.
      const settled = (verdict, done) => post({ type: "settled", id: msg.id, verdict, done });
      const { report, workers } = team.length
        ? await detectShared(msg, progress, settled)
        : { report: detector.detect(msg.bundleJson, new Uint8Array(msg.review), msg.options, progress), workers: 1 };
      // Linear memory never shrinks, so this is each worker's peak so far (helpers: at their last reply).
      const memory = memoryBytes() + team.filter((h) => h.ready).reduce((sum, h) => sum + h.memory, 0);
      post({ type: "result", id: msg.id, report, ms: performance.now() - t0, workers, memory });
    }
  } catch (err) {
    post({ type: "error", id: msg.id, stage: msg.type, message: describe(err) });
  }
}
