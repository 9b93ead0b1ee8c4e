// Inference off the main thread: loads the wasm detector and the model once, then answers
// detect requests. Cancelling terminates this worker (wasm cannot be interrupted mid-call);
// the page then starts a fresh one, which reloads the model from Cache Storage.
import init, { Detector, inspectBundle, sha256Hex, takePanicMessage, version } from "./pkg/semtrace_detector_wasm.js";

const CACHE = "semtrace-model-v1";
let detector = null;
let wasmReady = false;

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

async function load(base) {
  await init({ module_or_path: new URL("pkg/semtrace_detector_wasm_bg.wasm", base) });
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
  post({
    type: "ready",
    model: { name: detector.modelName, sha256: detector.sha256, source: onnx.source, bytes: onnx.bytes.length },
    loadMs: performance.now() - t0,
    version: version(),
  });
}

// Messages are handled one at a time, in order: a bundle sent while the model loads waits for it.
let chain = Promise.resolve();
self.onmessage = (ev) => { chain = chain.then(() => handle(ev.data)); };

async function handle(msg) {
  try {
    if (msg.type === "init") {
      await load(msg.base);
    } else if (msg.type === "inspect") {
      if (!wasmReady) throw new Error("the detector did not start");
      post({ type: "bundle", id: msg.id, summary: inspectBundle(msg.bundleJson) });
    } else if (msg.type === "detect") {
      if (!detector) throw new Error("the model is not loaded");
      const t0 = performance.now();
      let last = 0;
      const report = detector.detect(msg.bundleJson, new Uint8Array(msg.review), msg.options, (done, total) => {
        const now = performance.now();
        // Throttle messages; always send the final one.
        if (done === total || now - last > 50) { last = now; post({ type: "progress", id: msg.id, done, total }); }
      });
      post({ type: "result", id: msg.id, report, ms: performance.now() - t0 });
    }
  } catch (err) {
    post({ type: "error", id: msg.id, stage: msg.type, message: describe(err) });
  }
}
