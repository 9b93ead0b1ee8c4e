// Which review goes with which bundle on the chair's page. Pure functions over file paths and
// parsed contents (no DOM), so node tests them directly (tests/js/pairing-test.mjs).
//
// Rules, in order:
//  1. A manifest (a .jsonl file of {"review", "bundle", "recipient"?} lines, the format of
//     `semtrace detect --manifest`) decides alone: paths are relative to the manifest's folder
//     and found among the dropped files by path, else by a unique path suffix.
//  2. Without one, by name: a review pairs with the bundle whose file stem starts its own stem
//     ("paper12.json" takes "paper12.txt", "paper12-r2.md", "paper12_reviewer-b.txt"; the
//     longest such stem wins). A stem of "bundle" (what `semtrace build` writes) pairs by folder only.
//  3. Else by folder: the only bundle in the review's folder, or in the nearest folder above it.
//  4. Else, when exactly one bundle was dropped, that one.

export const REVIEW_EXT = [".txt", ".md", ".markdown"];
export const MANIFEST_EXT = [".jsonl"];

// "a/./b/../c.txt" -> "a/c.txt"; backslashes as separators; no leading "./" or "/".
export function normalizePath(p) {
  const out = [];
  for (const part of String(p).replace(/\\/g, "/").split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") { if (out.length && out[out.length - 1] !== "..") out.pop(); else out.push(".."); continue; }
    out.push(part);
  }
  return out.join("/");
}

const dirOf = (p) => (p.includes("/") ? p.slice(0, p.lastIndexOf("/")) : "");
const baseOf = (p) => p.slice(p.lastIndexOf("/") + 1);
const extOf = (p) => { const b = baseOf(p); const i = b.lastIndexOf("."); return i > 0 ? b.slice(i).toLowerCase() : ""; };
export function stemOf(p) {
  const b = baseOf(p);
  const lower = b.toLowerCase();
  if (lower.endsWith(".bundle.json")) return b.slice(0, -".bundle.json".length);
  const i = b.lastIndexOf(".");
  return i > 0 ? b.slice(0, i) : b;
}

// What a dropped file is, from its name (bundles are recognised by content, see isBundle).
export function kindByName(path) {
  const e = extOf(path);
  if (REVIEW_EXT.includes(e)) return "review";
  if (MANIFEST_EXT.includes(e)) return "manifest";
  if (e === ".json") return "json";
  return "other";
}

// A parsed JSON value that is a SemTrace bundle (the core validates it fully later).
export const isBundle = (v) => v !== null && typeof v === "object" && v.format === "semtrace-bundle";

// The review stem continues the bundle stem at a separator ("paper12" in "paper12-r2").
function stemPrefix(bundleStem, reviewStem) {
  const b = bundleStem.toLowerCase();
  const r = reviewStem.toLowerCase();
  return r === b || (r.startsWith(b) && "-_. ".includes(r[b.length]));
}

// Finds a manifest path among the dropped files: exact (after normalisation, relative to the
// manifest's folder), else the unique file whose path ends with it, else the unique file of that
// name. Returns {path} or {error}.
function resolve(entry, manifestDir, paths) {
  const want = normalizePath(manifestDir ? `${manifestDir}/${entry}` : entry);
  if (paths.has(want)) return { path: want };
  const rel = normalizePath(entry).replace(/^(\.\.\/)+/, "");
  const bySuffix = [...paths].filter((p) => p === rel || p.endsWith(`/${rel}`));
  if (bySuffix.length === 1) return { path: bySuffix[0] };
  if (bySuffix.length > 1) return { error: `"${entry}" matches ${bySuffix.length} dropped files (${bySuffix.join(", ")})` };
  const byName = [...paths].filter((p) => baseOf(p) === baseOf(rel));
  if (byName.length === 1) return { path: byName[0] };
  if (byName.length > 1) return { error: `"${entry}" matches ${byName.length} dropped files named ${baseOf(rel)}` };
  return { error: `"${entry}" points to no dropped file` };
}

// Pairs by a manifest. `manifest` = {path, text}; `reviews`, `bundles`: arrays of paths.
// Returns {jobs: [{review, bundle, recipient?, line}], problems: [string]}: a line that cannot be
// used is a problem and is skipped, the others still run.
export function pairByManifest(manifest, reviews, bundles) {
  const jobs = [];
  const problems = [];
  const dir = dirOf(normalizePath(manifest.path));
  const reviewSet = new Set(reviews);
  const bundleSet = new Set(bundles);
  const seen = new Map(); // review path -> {line, bundle}
  const lines = manifest.text.split(/\r?\n/);
  lines.forEach((raw, i) => {
    if (!raw.trim()) return;
    const at = `${baseOf(manifest.path)} line ${i + 1}`;
    let v;
    try { v = JSON.parse(raw); } catch (e) { problems.push(`${at}: not JSON (${e.message})`); return; }
    if (!v || typeof v.review !== "string") { problems.push(`${at}: no "review" string`); return; }
    if (typeof v.bundle !== "string") { problems.push(`${at}: no "bundle" string`); return; }
    const r = resolve(v.review, dir, reviewSet);
    if (r.error) { problems.push(`${at}: review ${r.error}`); return; }
    const b = resolve(v.bundle, dir, bundleSet);
    if (b.error) { problems.push(`${at}: bundle ${b.error}`); return; }
    const before = seen.get(r.path);
    if (before) {
      problems.push(before.bundle === b.path
        ? `${at}: review ${r.path} is listed twice (line ${before.line} too)`
        : `${at}: review ${r.path} has two bundles (${before.bundle} on line ${before.line}, ${b.path} here); a review is tested against one copy`);
      return;
    }
    seen.set(r.path, { line: i + 1, bundle: b.path });
    const job = { review: r.path, bundle: b.path, line: i + 1 };
    if (typeof v.recipient === "string") job.recipient = v.recipient;
    jobs.push(job);
  });
  if (!jobs.length && !problems.length) problems.push(`${baseOf(manifest.path)} lists no reviews`);
  return { jobs, problems };
}

// Pairs by name, then folder, then the only bundle (rules 2–4). Returns {jobs, problems}.
export function pairByName(reviews, bundles) {
  const jobs = [];
  const problems = [];
  const named = bundles.filter((b) => stemOf(b).toLowerCase() !== "bundle");
  const byDir = new Map();
  for (const b of bundles) {
    const d = dirOf(b);
    byDir.set(d, [...(byDir.get(d) || []), b]);
  }
  for (const r of [...reviews].sort()) {
    const stem = stemOf(r);
    const hits = named.filter((b) => stemPrefix(stemOf(b), stem));
    if (hits.length) {
      const longest = Math.max(...hits.map((b) => stemOf(b).length));
      const best = hits.filter((b) => stemOf(b).length === longest);
      // Same stem in two folders: the one nearest the review wins, else it is ambiguous.
      const near = best.length > 1 ? best.filter((b) => dirOf(b) === dirOf(r)) : best;
      if (near.length === 1) { jobs.push({ review: r, bundle: near[0], by: "name" }); continue; }
      problems.push(`${r}: its name fits ${best.length} bundles (${best.join(", ")}); use a manifest`);
      continue;
    }
    let d = dirOf(r);
    let found = null;
    for (;;) {
      const here = byDir.get(d) || [];
      if (here.length === 1) { found = here[0]; break; }
      if (here.length > 1) break;
      if (!d) break;
      d = dirOf(d);
    }
    if (found) { jobs.push({ review: r, bundle: found, by: "folder" }); continue; }
    if (bundles.length === 1) { jobs.push({ review: r, bundle: bundles[0], by: "only bundle" }); continue; }
    problems.push(bundles.length
      ? `${r}: no bundle fits its name or folder (several bundles here); name it after its bundle ("paper12-r1.txt" for "paper12.json") or use a manifest`
      : `${r}: no bundle was dropped`);
  }
  return { jobs, problems };
}

// The whole decision over a dropped set: `files` = [{path, kind}] with kind "review", "bundle",
// "manifest", or anything else (ignored with a note); `manifests` = [{path, text}].
export function pairFiles(files, manifests) {
  const reviews = files.filter((f) => f.kind === "review").map((f) => f.path);
  const bundles = files.filter((f) => f.kind === "bundle").map((f) => f.path);
  const notes = [];
  let result;
  if (manifests.length > 1) {
    return { jobs: [], problems: [`${manifests.length} manifests dropped (${manifests.map((m) => m.path).join(", ")}); drop one venue at a time`], notes };
  }
  if (manifests.length === 1) {
    result = pairByManifest(manifests[0], reviews, bundles);
    const used = new Set(result.jobs.map((j) => j.review));
    const unused = reviews.filter((r) => !used.has(r));
    if (unused.length) notes.push(`${unused.length} review file(s) not in the manifest, not checked: ${unused.slice(0, 5).join(", ")}${unused.length > 5 ? ", …" : ""}`);
  } else {
    result = pairByName(reviews, bundles);
  }
  const usedBundles = new Set(result.jobs.map((j) => j.bundle));
  const idle = bundles.filter((b) => !usedBundles.has(b));
  if (idle.length) notes.push(`${idle.length} bundle(s) with no review: ${idle.slice(0, 5).join(", ")}${idle.length > 5 ? ", …" : ""}`);
  const other = files.filter((f) => !["review", "bundle", "manifest"].includes(f.kind));
  if (other.length) notes.push(`${other.length} other file(s) ignored: ${other.slice(0, 5).map((f) => f.path).join(", ")}${other.length > 5 ? ", …" : ""}`);
  if (!reviews.length && !manifests.length) result.problems.push("no review files (.txt, .md) among the dropped files");
  return { ...result, notes };
}
