// The wasm shim itself, as the site ships it (scripts/build-site.sh's pkg/), run in Node: the
// embedded default model loads, a detection returns the report object whose fields are exactly the
// `Report` interface of the TypeScript section and exposes the sample review, and bad inputs come back
// as errors with the core's message, not traps. The browser test
// drives the same module through the page; this checks the bindings alone.
//
// It runs on the site's own build rather than a wasm-bindgen-test build: that second release wasm32
// link cost CI minutes and tested a module nobody ships.
// Usage: node --test detector-wasm/tests/node.mjs   (SEMTRACE_SITE=DIR, default target/site)
import { test, before } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { pathToFileURL, fileURLToPath } from "node:url";
import { dirname, join, resolve } from "node:path";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const SITE = resolve(process.env.SEMTRACE_SITE ?? join(ROOT, "target/site"));
const read = (p) => readFileSync(join(ROOT, p));
const BUNDLE = read("tests/fixtures/sample-bundle.json").toString("utf8");
const REVIEW = read("tests/fixtures/sample-review.md");
const MODEL = "models/semtrace-nli-minilm";
// The TypeScript section is a `typescript_custom_section` const of the shim's source; the site is
// built with --no-typescript, so the interfaces are read from the source the module was built from.
const LIB = read("detector-wasm/src/lib.rs").toString("utf8");

let m;
before(async () => {
  m = await import(pathToFileURL(join(SITE, "pkg/semtrace_detector_wasm.js")).href);
  m.initSync({ module: readFileSync(join(SITE, "pkg/semtrace_detector_wasm_bg.wasm")) });
});

function tsTypes() {
  const open = 'const TS_TYPES: &str = r#"';
  const start = LIB.indexOf(open);
  assert.ok(start >= 0, "the TypeScript section");
  const body = LIB.slice(start + open.length);
  return body.slice(0, body.indexOf('"#;'));
}

/** The field names of `export interface NAME { ... }` in the TypeScript section. */
function interfaceFields(name) {
  const ts = tsTypes();
  const start = ts.indexOf(`export interface ${name} {`);
  assert.ok(start >= 0, `no interface ${name}`);
  const rest = ts.slice(start);
  const body = rest.slice(rest.indexOf("{") + 1, rest.indexOf("}"));
  return new Set(
    body
      .split(";")
      .map((f) => f.split(":")[0].trim().replace(/\?$/, ""))
      .filter((f) => f.length > 0),
  );
}

const keys = (o) => new Set(Object.keys(o));

test("sha256 matches the FIPS vector", () => {
  assert.equal(
    m.sha256Hex(new TextEncoder().encode("abc")),
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
  );
});

test("bundle summary has the declared fields", () => {
  const s = m.inspectBundle(BUNDLE);
  assert.deepEqual(keys(s), interfaceFields("BundleSummary"));
  assert.equal(s.k, 12);
  assert.equal(s.slots.length, 12);
  assert.equal(s.windowSentences, 2);
});

test("bad inputs are errors with the core message", () => {
  assert.throws(() => m.inspectBundle('{"format": "semtrace-bundle"'), (e) => e.message.includes("bundle"));
  assert.throws(() => m.adjustPValues(new Float64Array([0.5, 1.5])), { message: "not a p-value: 1.5" });
  assert.throws(
    () => new m.Detector(MODEL.split("/")[1], new TextEncoder().encode("not a model"), read(`${MODEL}/tokenizer.json`),
      read(`${MODEL}/config.json`).toString("utf8")),
    (e) => e instanceof Error && e.message.length > 0,
  );
});

test("holm and bh adjust a known vector", () => {
  const a = m.adjustPValues(new Float64Array([0.01, 0.04, 0.03]));
  // Holm: 0.01·3, max(0.03·2, 0.03), max(0.04·1, 0.06); BH: min over ranks of p·m/rank.
  assert.equal(a.holm.length, 3);
  assert.equal(a.bh.length, 3);
  [0.03, 0.06, 0.06].forEach((want, i) => assert.ok(Math.abs(a.holm[i] - want) < 1e-12, `holm ${a.holm}`));
  [0.03, 0.04, 0.04].forEach((want, i) => assert.ok(Math.abs(a.bh[i] - want) < 1e-12, `bh ${a.bh}`));
});

/** The site's copy of the default model: what the page loads (build-site.sh copies it with a manifest). */
function siteDetector() {
  return new m.Detector(
    "semtrace-nli-minilm",
    readFileSync(join(SITE, "model/model.onnx")),
    readFileSync(join(SITE, "model/tokenizer.json")),
    readFileSync(join(SITE, "model/config.json"), "utf8"),
  );
}

test("the default model detects the sample review", () => {
  const d = siteDetector();
  const bundle = JSON.parse(BUNDLE);
  assert.equal(d.sha256, bundle.model.sha256);
  const opts = (decoder) => ({ decoder, reviewName: "r.md" });
  // The fast decoder only: the browser test holds the page's fast and exhaustive reports equal to
  // the CLI's, and the native tests hold the two decoders to each other. Here the bindings matter.
  const r = d.detect(BUNDLE, REVIEW, opts("fast"), undefined);
  const declared = interfaceFields("Report");
  // Optional fields (recipients, recipient, safeguard) are absent when unused; nothing undeclared
  // is present.
  const undeclared = [...keys(r)].filter((k) => !declared.has(k));
  assert.deepEqual(undeclared, [], "undeclared fields");
  for (const required of ["verdict", "p_value", "positions", "windows", "model", "decoder"]) {
    assert.ok(required in r, required);
  }
  assert.equal(r.review, "r.md");
  assert.equal(r.decoder, "fast");
  assert.ok(r.windows.length > 0);
  assert.ok(r.pairs_scored > 0 && r.pairs_scored <= 24 * r.windows.length, `${r.pairs_scored} pairs`);
  assert.equal(r.positions.length, 12);
  assert.deepEqual(keys(r.positions[0]), interfaceFields("PositionReport"));
  // The sample review states the copy's facts: the fixture is exposed by every decoder.
  assert.equal(r.verdict, "exposed");
  // A binary file is an error with the core's message, not a trap.
  assert.throws(
    () => d.detect(BUNDLE, new TextEncoder().encode("review\0text"), opts("exhaustive"), undefined),
    (e) => e.message.includes("NUL bytes"),
  );
  // An unknown decoder name is refused by the core's enum, which names the accepted values.
  assert.throws(() => d.detect(BUNDLE, REVIEW, opts("slow"), undefined), {
    message: 'unknown decoder "slow" (exhaustive or fast)',
  });
});

test("a plan driven round by round announces the report's verdict once it is settled", () => {
  const d = siteDetector();
  // The page's loop (web/worker.js), one worker.
  const plan = d.plan(BUNDLE, REVIEW, { decoder: "fast" });
  const settled = [];
  for (;;) {
    const { premises, hypotheses } = plan.pending();
    if (!premises.length) break;
    assert.equal(plan.settledVerdict() === undefined || settled.length > 0, true, "announced only after scores");
    plan.supply(d.scorePairs(premises, hypotheses, undefined));
    const v = plan.settledVerdict();
    if (v !== undefined) settled.push(v);
  }
  const r = plan.report();
  assert.equal(r.verdict, "exposed");
  // Rounds 4–5 fire for an exposed review and leave no decision open, so the verdict is settled by
  // the last round at the latest, and every announcement is the report's verdict.
  assert.ok(settled.length > 0, "never settled");
  assert.ok(settled.every((v) => v === r.verdict), `${settled}`);
  assert.throws(() => plan.settledVerdict(), (e) => e.message.includes("already gave its report"));
  plan.free();
});
