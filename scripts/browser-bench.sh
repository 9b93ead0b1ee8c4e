#!/usr/bin/env bash
# Per-review detection time in the browser (wasm in Debian's headless chromium, one thread, model
# already loaded) next to native (`semtrace bench --agreement`, 1 thread and all cores), for the same
# real reviews (~1,000 words, from ../shared/corpus/reviews) and the same bundle; both decoders.
# Usage: scripts/browser-bench.sh [N_REVIEWS (default 5)]   BUNDLE=... to use another bundle;
#        DECODERS=fast to time only the fast decoder in the browser (exhaustive runs take minutes each);
#        WORKERS="1 2" the page's worker counts to time (default: 1 and 2; each worker holds a model).
# The mean lines also give the largest WebAssembly linear memory of the workers, summed over workers.
# Prints a table; raw figures in target/bench/browser/{native-1,native-all,browser}.json.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-5}
BUNDLE=${BUNDLE:-tests/fixtures/sample-bundle.json}
OUT=target/bench/browser
REVIEWS=${REVIEWS:-../shared/corpus/reviews/neurips2025-dev.jsonl}
mkdir -p "$OUT/reviews"

scripts/setup-test-env.sh >/dev/null
[ -f target/site/pkg/semtrace_detector_wasm_bg.wasm ] && [ "${REBUILD_SITE:-0}" != 1 ] || scripts/build-site.sh target/site
cargo build -q --release -p semtrace
BIN=target/release/semtrace

# The N reviews closest to 1,000 words.
rm -f "$OUT"/reviews/*.md
python3 - "$REVIEWS" "$N" "$OUT/reviews" <<'PY'
import json, sys
src, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
texts = [r["review_text"] for line in open(src) if line.strip() for r in json.loads(line).get("reviews", []) if r.get("review_text")]
texts.sort(key=lambda t: (abs(len(t.split()) - 1000), t))
for i, t in enumerate(texts[:n]):
    open(f"{out}/{i + 1:02d}.md", "w").write(t)
PY

echo "native (1 thread, then all cores)..." >&2
"$BIN" bench --agreement --bundle "$BUNDLE" --reviews "$OUT/reviews" --limit "$N" --json --threads 1 > "$OUT/native-1.json"
"$BIN" bench --agreement --bundle "$BUNDLE" --reviews "$OUT/reviews" --limit "$N" --json > "$OUT/native-all.json"

echo "browser (headless chromium)..." >&2
python3 - "$OUT" "$BUNDLE" "$N" "${DECODERS:-exhaustive fast}" "${WORKERS:-1 2}" > "$OUT/browser-config.json" <<'PY'
import json, os, sys
out, bundle, n, decoders, workers = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4].split(), sys.argv[5].split()
runs = [{"name": f"{d}-{i + 1:02d}-w{w}", "bundle": os.path.abspath(bundle),
         "review": os.path.abspath(f"{out}/reviews/{i + 1:02d}.md"), "decoder": d, "repeat": 2,
         "query": f"?workers={w}"}
        for i in range(n) for d in ("exhaustive", "fast") if d in decoders for w in workers]
print(json.dumps({"site": os.path.abspath("target/site"), "chromium": "/usr/bin/chromium",
                  "playwright": os.path.abspath("target/test-env/node/node_modules/playwright-core"),
                  "base": "/semtrace/", "artifacts": os.path.abspath(f"{out}/shots"), "detect": runs}))
PY
node tests/js/browser-detect.mjs "$OUT/browser-config.json" > "$OUT/browser.json"

python3 - "$OUT" "${WORKERS:-1 2}" <<'PY'
import json, sys
out, workers = sys.argv[1], sys.argv[2].split()
n1 = json.load(open(f"{out}/native-1.json"))["rows"]
na = json.load(open(f"{out}/native-all.json"))["rows"]
br = {r["name"]: r for r in json.load(open(f"{out}/browser.json"))["detect"]}
head = " | ".join(f"{'browser ' + w + 'w 1st':>14} {'warm':>6}" for w in workers)
print(f"{'review':>6} {'words':>5} | {'decoder':10} {'pairs':>5} | {'native 1t':>9} {'native all':>10} | {head} | same as native")
sums = {}
f = lambda v: f"{v:.2f}" if v is not None else "–"
for i, (a, b) in enumerate(zip(n1, na)):
    for d in ("exhaustive", "fast"):
        pairs = a[f"pairs_{d}"]
        sums.setdefault((d, "n1"), []).append(a[f"secs_{d}"])
        sums.setdefault((d, "na"), []).append(b[f"secs_{d}"])
        cells, same = [], []
        for w in workers:
            r = br.get(f"{d}-{i + 1:02d}-w{w}", {})
            t = r.get("times") or [None, None]
            rep = r.get("report") or {}
            if rep:
                same.append(rep.get("pairs_scored") == pairs and rep.get("verdict") == a[f"verdict_{d}"]
                            and r.get("workers") == int(w))
            for k, v in ((f"b1-{w}", t[0]), (f"bw-{w}", t[-1]), (f"mem-{w}", r.get("wasmMemory") or None)):
                if v is not None:
                    sums.setdefault((d, k), []).append(v)
            cells.append(f"{f(t[0]):>14} {f(t[-1]):>6}")
        verdict = ("yes" if all(same) else "NO") if same else "–"
        print(f"{i + 1:>6} {a['words']:>5} | {d:10} {pairs:>5} | {f(a[f'secs_{d}']):>9} {f(b[f'secs_{d}']):>10} | {' | '.join(cells)} | {verdict}")
for d in ("exhaustive", "fast"):
    m = lambda k: (lambda v: f"{sum(v) / len(v):.2f}" if v else "–")(sums.get((d, k), []))
    mb = lambda k: (lambda v: f"{max(v) / 2**20:.0f} MiB" if v else "–")(sums.get((d, k), []))
    br_means = "; ".join(f"browser {w} worker(s) first run {m('b1-' + w)} s, warm {m('bw-' + w)} s, "
                         f"wasm memory {mb('mem-' + w)}" for w in workers)
    print(f"mean {d:10}: native 1 thread {m('n1')} s, all cores {m('na')} s; {br_means}")
PY
