// Unit tests of the chair page's pairing rules (web/pairing.js), run by node (no browser needed):
// `node tests/js/pairing-test.mjs` exits non-zero on the first failed assertion.
import assert from "node:assert/strict";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const { normalizePath, stemOf, kindByName, isBundle, pairFiles } = await import(
  pathToFileURL(path.join(here, "../../web/pairing.js")).href
);
const files = (reviews, bundles, other = []) => [
  ...reviews.map((p) => ({ path: p, kind: "review" })),
  ...bundles.map((p) => ({ path: p, kind: "bundle" })),
  ...other.map((p) => ({ path: p, kind: "other" })),
];
const pairs = (r) => r.jobs.map((j) => `${j.review} -> ${j.bundle}`).sort();
let n = 0;
const test = (name, f) => { f(); n++; };

test("paths and names", () => {
  assert.equal(normalizePath("./a//b/../c.txt"), "a/c.txt");
  assert.equal(normalizePath("a\\b.txt"), "a/b.txt");
  assert.equal(stemOf("x/paper12.bundle.json"), "paper12");
  assert.equal(stemOf("x/paper12-r2.md"), "paper12-r2");
  assert.equal(kindByName("a/B.MD"), "review");
  assert.equal(kindByName("venue.jsonl"), "manifest");
  assert.equal(kindByName("a.pdf"), "other");
  assert.ok(isBundle({ format: "semtrace-bundle" }));
  assert.ok(!isBundle({ format: "other" }) && !isBundle(null) && !isBundle([]));
});

test("by name: the longest bundle stem that starts the review's, at a separator", () => {
  const r = pairFiles(files(["v/paper1-r1.txt", "v/paper1_r2.md", "v/paper12.txt", "v/paper1.txt", "v/paper123x.txt"],
    ["v/paper1.json", "v/paper12.bundle.json"]), []);
  assert.deepEqual(pairs(r), [
    "v/paper1-r1.txt -> v/paper1.json", "v/paper1.txt -> v/paper1.json",
    "v/paper12.txt -> v/paper12.bundle.json", "v/paper1_r2.md -> v/paper1.json",
  ].sort());
  // "paper123x" continues "paper12" without a separator: not that bundle, and two bundles are
  // dropped in its folder, so it stays unpaired with a reason.
  assert.equal(r.problems.length, 1);
  assert.match(r.problems[0], /paper123x\.txt: no bundle fits/);
});

test("by folder: build's out/bundle.json takes the reviews beside and below it", () => {
  const r = pairFiles(files(["a/r1.txt", "a/reviews/r2.txt", "b/r3.md"], ["a/bundle.json", "b/bundle.json"]), []);
  assert.deepEqual(pairs(r), ["a/r1.txt -> a/bundle.json", "a/reviews/r2.txt -> a/bundle.json", "b/r3.md -> b/bundle.json"]);
  assert.deepEqual(r.problems, []);
});

test("one bundle takes every review; nothing dropped is explained", () => {
  const r = pairFiles(files(["x/one.txt", "y/two.txt"], ["z/sample.json"], ["paper.pdf"]), []);
  assert.deepEqual(pairs(r), ["x/one.txt -> z/sample.json", "y/two.txt -> z/sample.json"]);
  assert.match(r.notes.join("\n"), /1 other file\(s\) ignored: paper\.pdf/);
  const none = pairFiles(files([], ["z/sample.json"]), []);
  assert.match(none.problems.join("\n"), /no review files/);
  const noBundle = pairFiles(files(["r.txt"], []), []);
  assert.match(noBundle.problems.join("\n"), /r\.txt: no bundle was dropped/);
});

test("same stem in two folders: the review's own folder decides, else it is ambiguous", () => {
  const r = pairFiles(files(["a/p.txt", "c/p-r1.txt"], ["a/p.json", "b/p.json"]), []);
  assert.deepEqual(pairs(r), ["a/p.txt -> a/p.json"]);
  assert.match(r.problems.join("\n"), /c\/p-r1\.txt: its name fits 2 bundles/);
});

test("a manifest decides alone, relative to its folder, with the CLI's errors", () => {
  const manifest = {
    path: "venue/venue.jsonl",
    text: [
      JSON.stringify({ review: "reviews/r1.txt", bundle: "bundles/p1.json" }),
      JSON.stringify({ review: "r2.txt", bundle: "../venue/bundles/p2.json", recipient: "Reviewer B" }),
      JSON.stringify({ review: "missing.txt", bundle: "bundles/p1.json" }),
      JSON.stringify({ review: "reviews/r1.txt", bundle: "bundles/p2.json" }),
      JSON.stringify({ review: "reviews/r3.txt", bundle: "bundles/p9.json" }),
      "{not json",
      JSON.stringify({ bundle: "bundles/p1.json" }),
      "",
    ].join("\n"),
  };
  const r = pairFiles(files(["venue/reviews/r1.txt", "venue/reviews/r2.txt", "venue/reviews/r3.txt", "venue/extra.md"],
    ["venue/bundles/p1.json", "venue/bundles/p2.json"]), [manifest]);
  assert.deepEqual(r.jobs, [
    { review: "venue/reviews/r1.txt", bundle: "venue/bundles/p1.json", line: 1 },
    { review: "venue/reviews/r2.txt", bundle: "venue/bundles/p2.json", line: 2, recipient: "Reviewer B" },
  ]);
  const p = r.problems.join("\n");
  assert.match(p, /line 3: review "missing\.txt" points to no dropped file/);
  assert.match(p, /line 4: review venue\/reviews\/r1\.txt has two bundles/);
  assert.match(p, /line 5: bundle "bundles\/p9\.json" points to no dropped file/);
  assert.match(p, /line 6: not JSON/);
  assert.match(p, /line 7: no "review" string/);
  assert.equal(r.problems.length, 5);
  assert.match(r.notes.join("\n"), /2 review file\(s\) not in the manifest, not checked/);
  const two = pairFiles(files(["r.txt"], ["b.json"]), [manifest, { path: "other.jsonl", text: "" }]);
  assert.equal(two.jobs.length, 0);
  assert.match(two.problems[0], /2 manifests dropped/);
  const empty = pairFiles(files(["r.txt"], ["b.json"]), [{ path: "v.jsonl", text: "\n\n" }]);
  assert.match(empty.problems[0], /lists no reviews/);
});

console.log(JSON.stringify({ ok: true, tests: n }));
