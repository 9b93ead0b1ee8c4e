// Drives the built site in Debian's headless chromium (playwright-core, never a downloaded browser)
// and prints one JSON object with what the page showed. Usage: node browser-detect.mjs CONFIG.json
//
// CONFIG: { site, chromium, playwright, base ("/semtrace/"), artifacts, timeoutMs,
//           detect: [{ name, bundle, review, decoder, repeat, query }],   // full runs, report JSON read back;
//                                                   // query: appended to the page URL ("?workers=2")
//           bad: { corruptBundle, bundle, otherModelBundle },     // bad-input messages
//           stall: { bundle, review },   // a 2-worker run whose helper is wedged (busy) mid-page
//           chair: { folder, files: [paths] } }   // the chair's page: a folder chosen, then loose files with a manifest
// The static server is our own (node:http) so every request the page makes is seen and logged.
import { readFileSync, writeFileSync, mkdirSync, statSync } from "node:fs";
import { createServer } from "node:http";
import path from "node:path";
import { pathToFileURL } from "node:url";

console.log = (...a) => console.error(...a); // stdout is for the result JSON
const cfg = JSON.parse(readFileSync(process.argv[2], "utf8"));
const { chromium } = await import(pathToFileURL(path.join(cfg.playwright, "index.mjs")).href);
const BASE = cfg.base || "/semtrace/";
const TIMEOUT = cfg.timeoutMs || 600000;
const MIME = {
  ".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8",
  ".wasm": "application/wasm", ".json": "application/json", ".onnx": "application/octet-stream", ".png": "image/png",
};

const served = []; // every request the server saw: method, url, body
const server = createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    served.push({ method: req.method, url: req.url, body: Buffer.concat(chunks).toString("utf8") });
    const u = new URL(req.url, "http://x");
    if (!u.pathname.startsWith(BASE)) { res.writeHead(404).end("outside the site"); return; }
    let rel = decodeURIComponent(u.pathname.slice(BASE.length)) || "index.html";
    if (rel.endsWith("/")) rel += "index.html";
    const file = path.resolve(cfg.site, rel);
    if (!file.startsWith(path.resolve(cfg.site) + path.sep)) { res.writeHead(403).end(); return; }
    try {
      if (!statSync(file).isFile()) throw new Error("not a file");
      res.writeHead(200, { "content-type": MIME[path.extname(file)] || "application/octet-stream" });
      res.end(readFileSync(file));
    } catch {
      res.writeHead(404).end("not found");
    }
  });
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const origin = `http://127.0.0.1:${server.address().port}`;
const url = origin + BASE;

const browser = await chromium.launch({
  executablePath: cfg.chromium || "/usr/bin/chromium",
  headless: true,
  // Without the background-networking flags chromium tries to reach Google's hosts at start.
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"],
});

const requests = []; // every request the pages made, as the browser saw them
const consoleErrors = [];
async function newPage(ctxOpts = {}) {
  const ctx = await browser.newContext({ viewport: { width: 1366, height: 900 }, ...ctxOpts });
  const page = await ctx.newPage();
  page.on("request", (r) => requests.push({ url: r.url(), method: r.method(), postData: r.postData() || "" }));
  page.on("console", (m) => { if (m.type() === "error") consoleErrors.push(m.text()); });
  page.on("pageerror", (e) => consoleErrors.push(String(e)));
  return { ctx, page };
}

async function waitModel(page) {
  await page.waitForFunction(() => document.body.dataset.modelReady !== undefined, null, { timeout: TIMEOUT });
  return page.evaluate(() => ({ ready: document.body.dataset.modelReady, status: document.getElementById("model-status").textContent }));
}
const message = (page) => page.evaluate(() => { const m = document.getElementById("message"); return m.hidden ? "" : m.textContent; });
async function waitMessage(page) {
  await page.waitForFunction(() => !document.getElementById("message").hidden, null, { timeout: TIMEOUT });
  return message(page);
}

// axe-core's WCAG 2.1 A/AA rules on the result view, and the page's CSP seen refusing a fetch to
// another origin. axe is served from the page's own origin (a test-only route), which CSP allows.
async function accessibilityAndCsp(page) {
  await page.route("**/__test/axe.js", (r) =>
    r.fulfill({ status: 200, contentType: "text/javascript", body: readFileSync(cfg.axe) }));
  await page.addScriptTag({ url: url + "__test/axe.js" });
  const violations = await page.evaluate(async () => {
    const r = await window.axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] } });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.slice(0, 3).map((n) => n.target.join(" ")) }));
  });
  const csp = await page.evaluate(async () => {
    const seen = new Promise((res) => document.addEventListener("securitypolicyviolation", (e) => res(e.effectiveDirective), { once: true }));
    let fetched = false;
    try { await fetch("http://127.0.0.2:9/csp-probe"); fetched = true; } catch { /* refused */ }
    const directive = await Promise.race([seen, new Promise((r) => setTimeout(() => r(null), 3000))]);
    return { directive, fetched };
  });
  // Keyboard: Tab from the top reaches the bundle picker, the review box and the run button in order.
  await page.focus("body");
  const order = [];
  for (let i = 0; i < 12; i++) {
    await page.keyboard.press("Tab");
    order.push(await page.evaluate(() => document.activeElement?.id || document.activeElement?.tagName));
  }
  return { violations, csp, tabOrder: order };
}

const out = { origin, url, detect: [], bad: {} };
mkdirSync(cfg.artifacts, { recursive: true });

for (const run of cfg.detect || []) {
  const { ctx, page } = await newPage();
  const t0 = Date.now();
  await page.goto(url + (run.query || "")); // e.g. "?workers=2"
  const model = await waitModel(page);
  if (model.ready !== "true") { out.detect.push({ name: run.name, error: await message(page), model }); await ctx.close(); continue; }
  // With ?workers=N, wait until the N workers hold their models, so that the first run uses them all.
  const want = Number(new URLSearchParams(run.query || "").get("workers") || 1);
  if (want > 1) {
    await page.waitForFunction((n) => Number(document.body.dataset.workersReady || 1) >= n, want, { timeout: TIMEOUT });
  }
  const loadMs = Date.now() - t0;
  await page.setInputFiles("#bundle-file", run.bundle);
  await page.waitForSelector("#bundle-summary:not([hidden])", { timeout: TIMEOUT });
  await page.setInputFiles("#review-file", run.review); // the file path of the page: read, decoded, put in the textarea
  await page.waitForFunction(() => document.getElementById("review-text").value.length > 0);
  await page.selectOption("#decoder", run.decoder || "exhaustive");
  const times = [];
  let report = null;
  for (let i = 0; i < (run.repeat || 1); i++) {
    const before = await page.evaluate(() => document.body.dataset.resultReady || "");
    await page.click("#run");
    await page.waitForFunction((b) => (document.body.dataset.resultReady || "") !== b || !document.getElementById("message").hidden,
      before, { timeout: TIMEOUT });
    const msg = await message(page);
    if (msg && !(await page.isVisible("#result"))) { report = null; out.detect.push({ name: run.name, error: msg }); break; }
    report = JSON.parse(await page.textContent("#report-json"));
    // The page's own measurement (worker-side, model already loaded), as shown in the stats.
    times.push(await page.evaluate(() => {
      const m = /Done in ([0-9.]+) s/.exec(document.getElementById("run-status").textContent);
      return m ? Number(m[1]) : null;
    }));
  }
  if (report) {
    const shot = path.join(cfg.artifacts, `browser-${run.name}.png`);
    await page.screenshot({ path: shot, fullPage: true });
    const marks = await page.$$eval("#review-view mark", (ms) => ms.length);
    const rows = await page.$$eval("#positions tbody tr", (rs) => rs.length);
    const verdictText = await page.textContent("#verdict");
    const workers = await page.evaluate(() => Number(document.body.dataset.workers || 0));
    // WebAssembly linear memory of the workers that scored the last run, summed.
    const wasmMemory = await page.evaluate(() => Number(document.body.dataset.wasmMemory || 0));
    // The verdict the page announced as settled before the last round, and the pairs scored then.
    const settled = await page.evaluate(() => ({
      verdict: document.body.dataset.settledVerdict || null,
      pairs: document.body.dataset.settledPairs ? Number(document.body.dataset.settledPairs) : null,
    }));
    out.detect.push({ name: run.name, report, times, loadMs, screenshot: shot, marks, rows, verdictText, model, workers, wasmMemory, settled });
    if (cfg.axe && !out.axe) out.axe = await accessibilityAndCsp(page);
  }
  await ctx.close();
}

if (cfg.stall) {
  // A helper that stops answering without an error event: the lead must take its share back and
  // finish the run alone. The helper is wedged for real, by a busy loop evaluated in its scope.
  const { ctx, page } = await newPage();
  await page.goto(url + "?workers=2");
  await waitModel(page);
  await page.waitForFunction(() => Number(document.body.dataset.workersReady || 1) >= 2, null, { timeout: TIMEOUT });
  let helper = null;
  const roles = [];
  for (const w of page.workers()) {
    const role = await w.evaluate(() => self.semtraceRole).catch((e) => `error: ${e.message}`);
    roles.push(role);
    if (role === "helper") helper = w;
  }
  const stall = { found: !!helper, roles };
  if (helper) {
    helper.evaluate(() => { const end = Date.now() + 180000; while (Date.now() < end) { /* wedged */ } }).catch(() => {});
    await page.setInputFiles("#bundle-file", cfg.stall.bundle);
    await page.waitForSelector("#bundle-summary:not([hidden])", { timeout: TIMEOUT });
    await page.setInputFiles("#review-file", cfg.stall.review);
    await page.waitForFunction(() => document.getElementById("review-text").value.length > 0);
    await page.selectOption("#decoder", "fast");
    const t0 = Date.now();
    await page.click("#run");
    await page.waitForFunction(() => (document.body.dataset.resultReady || "") !== "" || !document.getElementById("message").hidden,
      null, { timeout: TIMEOUT });
    stall.ms = Date.now() - t0;
    stall.message = await message(page);
    stall.report = (await page.isVisible("#result")) ? JSON.parse(await page.textContent("#report-json")) : null;
    stall.workers = await page.evaluate(() => Number(document.body.dataset.workers || 0));
    stall.workersReady = await page.evaluate(() => Number(document.body.dataset.workersReady || 0));
  }
  out.stall = stall;
  await ctx.close();
}

// The chair's page: rows of the results table as the page shows them, one evidence table opened.
async function chairRun(page, choose) {
  const before = await page.evaluate(() => document.body.dataset.chairDone || "");
  await choose();
  await page.waitForFunction(() => document.body.dataset.paired !== undefined, null, { timeout: TIMEOUT });
  const paired = await page.evaluate(() => ({
    rows: Number(document.body.dataset.paired),
    problems: Number(document.getElementById("pairing").dataset.problems || 0),
    text: document.getElementById("pairing").textContent,
  }));
  if (!(await page.isDisabled("#run"))) {
    await page.click("#run");
    await page.waitForFunction((b) => (document.body.dataset.chairDone || "") !== b, before, { timeout: TIMEOUT });
  }
  const rows = await page.$$eval("#results-table tbody tr:not(.evidence-row)", (rs) => rs.map((r) => ({
    review: r.dataset.review, status: r.dataset.status, verdict: r.dataset.verdict || null,
    cells: [...r.querySelectorAll("td")].map((c) => c.textContent),
  })));
  const summary = await page.textContent("#results-summary");
  return { paired, rows, summary };
}

if (cfg.chair) {
  const { ctx, page } = await newPage({ acceptDownloads: true });
  await page.goto(url + "chair.html");
  const model = await waitModel(page);
  const chair = { model };
  chair.folder = await chairRun(page, () => page.setInputFiles("#folder", cfg.chair.folder));
  // The first checked row's evidence: each position's fact beside the passage that stated it.
  const button = page.locator("#results-table tbody tr[data-status=done] button").first();
  if (await button.count()) {
    await button.click();
    chair.evidence = await page.$$eval("#results-table tr.evidence-row:not([hidden]) table.evidence tbody tr", (rs) =>
      rs.map((r) => [...r.querySelectorAll("th, td")].map((c) => c.textContent)));
  }
  const [download] = await Promise.all([page.waitForEvent("download"), page.click("#download-jsonl")]);
  chair.jsonl = readFileSync(await download.path(), "utf8");
  const shot = path.join(cfg.artifacts, "browser-chair.png");
  await page.screenshot({ path: shot, fullPage: true });
  chair.screenshot = shot;
  if (cfg.axe) {
    await page.route("**/__test/axe.js", (r) =>
      r.fulfill({ status: 200, contentType: "text/javascript", body: readFileSync(cfg.axe) }));
    await page.addScriptTag({ url: url + "__test/axe.js" });
    chair.violations = await page.evaluate(async () => {
      const r = await window.axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] } });
      return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.slice(0, 3).map((n) => n.target.join(" ")) }));
    });
  }
  // Loose files with a manifest: the manifest decides, a line pointing to nothing is listed.
  chair.manifest = await chairRun(page, () => page.setInputFiles("#files", cfg.chair.files));
  out.chair = chair;
  await ctx.close();
}

if (cfg.bad) {
  const b = cfg.bad;
  // A corrupt bundle.
  {
    const { ctx, page } = await newPage();
    await page.goto(url);
    await waitModel(page);
    await page.setInputFiles("#bundle-file", b.corruptBundle);
    out.bad.corruptBundle = await waitMessage(page);
    out.bad.corruptBundleRunDisabled = await page.isDisabled("#run");
    // A bundle for another model: refused before any inference.
    await page.setInputFiles("#bundle-file", b.otherModelBundle);
    await page.waitForSelector("#bundle-summary:not([hidden])", { timeout: TIMEOUT });
    await page.waitForFunction(() => /built for the model/.test(document.getElementById("message").textContent), null, { timeout: TIMEOUT });
    out.bad.otherModelBundle = await message(page);
    out.bad.otherModelRunDisabled = await page.isDisabled("#run");
    // The right bundle and an empty review.
    await page.setInputFiles("#bundle-file", b.bundle);
    await page.waitForFunction(() => !document.getElementById("run").disabled, null, { timeout: TIMEOUT });
    await page.fill("#review-text", "   \n  ");
    await page.click("#run");
    out.bad.emptyReview = await waitMessage(page);
    out.bad.emptyReviewShowsResult = await page.isVisible("#result");
    if (b.cancelReview) {
      // Cancel mid-run: the worker is replaced and the model comes back from Cache Storage; the
      // next run then completes.
      await page.setInputFiles("#review-file", b.cancelReview);
      await page.selectOption("#decoder", "exhaustive");
      await page.click("#run");
      await page.waitForFunction(() => document.getElementById("run-progress").value > 0, null, { timeout: TIMEOUT });
      await page.click("#cancel");
      const cancelled = await page.textContent("#run-status");
      await page.waitForFunction(() => /^Model ready/.test(document.getElementById("model-status").textContent), null, { timeout: TIMEOUT });
      const status = await page.textContent("#model-status");
      await page.selectOption("#decoder", "fast");
      await page.click("#run");
      await page.waitForSelector("#result:not([hidden])", { timeout: TIMEOUT });
      out.bad.cancel = { cancelled, status, after: JSON.parse(await page.textContent("#report-json")).decoder };
    }
    await ctx.close();
  }
  // A wrong model file: the request for the site's model.onnx is answered by a Playwright route
  // stub with bytes that are not the manifest's (the site itself serves the right file), as a
  // stale cache or a broken deployment would.
  {
    const { ctx, page } = await newPage();
    await page.route("**/model/model.onnx", (route) =>
      route.fulfill({ status: 200, contentType: "application/octet-stream", body: Buffer.from("this is not the model") }));
    await page.goto(url);
    const model = await waitModel(page);
    out.bad.wrongModel = { ready: model.ready, status: model.status, message: await message(page) };
    const shot = path.join(cfg.artifacts, "browser-wrong-model.png");
    await page.screenshot({ path: shot, fullPage: true });
    await ctx.close();
  }
}

out.requests = requests;
out.served = served;
out.consoleErrors = consoleErrors;
await browser.close();
server.close();
process.stdout.write(JSON.stringify(out));
