// The workers that score pairs, shared by the single-review page (app.js) and the chair's page
// (chair.js): the lead (model status, detection) plus helpers that score a share of each round
// for it. One per core, at most 4 (each holds its own copy of the model); ?workers=N overrides
// it (1 = no helpers).
export const WORKERS = (() => {
  const asked = Number(new URLSearchParams(location.search).get("workers"));
  if (Number.isInteger(asked) && asked >= 1) return Math.min(asked, 8);
  return Math.max(1, Math.min(navigator.hardwareConcurrency || 1, 4));
})();

// Starts the lead worker (it loads the model from `base`) and its helpers. `onMessage` gets the
// lead's messages, `onError` an error event if the lead itself cannot run.
export function startTeam(base, onMessage, onError) {
  const workerUrl = new URL("worker.js", import.meta.url);
  const lead = new Worker(workerUrl, { type: "module" });
  lead.onmessage = (ev) => onMessage(ev.data);
  lead.onerror = (ev) => { ev.preventDefault(); onError(ev); };
  lead.postMessage({ type: "init", base });
  // Helpers talk to the lead over their own channels; the page only starts and stops them. A
  // helper that fails to load is simply not used.
  const helpers = [];
  for (let i = 1; i < WORKERS; i++) {
    const h = new Worker(workerUrl, { type: "module" });
    // A helper that dies must not leave the lead waiting for its share.
    const index = i - 1;
    h.onerror = (ev) => { ev.preventDefault(); lead.postMessage({ type: "helper-lost", index }); };
    const ch = new MessageChannel();
    h.postMessage({ type: "helper", base, port: ch.port1 }, [ch.port1]);
    lead.postMessage({ type: "attach", port: ch.port2 }, [ch.port2]);
    helpers.push(h);
  }
  return { lead, helpers, terminate() { lead.terminate(); for (const h of helpers) h.terminate(); } };
}

// The model card both pages show (#model-status, #model-progress, #model-name, #version): the
// lead worker's "model-progress" and "ready" messages.
export function showModelProgress(msg) {
  const p = document.getElementById("model-progress");
  document.getElementById("model-status").textContent = `Model: ${msg.stage}…`;
  if (msg.total > 0) { p.max = msg.total; p.value = msg.loaded; } else p.removeAttribute("value");
}
export function showModelReady(msg) {
  document.getElementById("model-status").textContent =
    `Model ready: ${msg.model.name} (SHA-256 ${msg.model.sha256.slice(0, 16)}…, ` +
    `${(msg.model.bytes / 1e6).toFixed(1)} MB, from ${msg.model.source === "cache" ? "this browser's cache" : "this site"}).`;
  document.getElementById("model-progress").hidden = true;
  document.getElementById("model-name").textContent = msg.model.name;
  document.getElementById("version").textContent = msg.version;
  document.body.dataset.modelReady = "true";
}
