#!/usr/bin/env bash
# The whole test suite, from a fresh clone: test environment, formatting, lints, the fuzz targets
# type-checked (not run), the wasm32 build of the core, the static site of the browser detector,
# then every test of the workspace (unit, schema, engine-vs-reference, CLI end to end).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=${CARGO_TERM_COLOR:-never}
# Each step prints the seconds since the start, so a slow CI run shows where its time went.
step() { echo "== $* [t+${SECONDS}s]"; }

step "test environment (scripts/setup-test-env.sh)"
scripts/setup-test-env.sh
rustup target list --installed 2>/dev/null | grep -q wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown

step "cargo fmt --check"
cargo fmt --all -- --check
step "cargo clippy -D warnings"
cargo clippy --workspace --all-targets -- -D warnings
step "the fuzz targets compile (fuzz/ is its own workspace; checked on stable, run by scripts/fuzz.sh)"
# libfuzzer-sys's build script compiles libFuzzer (C++) even for a check. Not --locked: fuzz/Cargo.lock
# follows the workspace's dependencies, and a workspace change that forgets it must not fail the suite.
cargo check --manifest-path fuzz/Cargo.toml --bins
step "the browser detector depends on core + infer only: no build/eval crate, no CLI, PDF, HTTP or async crates"
wasm_deps=$(cargo tree -p semtrace-detector-wasm --target wasm32-unknown-unknown -e normal --prefix none)
for needed in semtrace-core semtrace-infer; do
  echo "$wasm_deps" | grep -q "^$needed " || { echo "cargo tree gave no $needed"; exit 1; }
done
forbidden=$(echo "$wasm_deps" | awk '{print $1}' | sort -u \
  | grep -E '^(semtrace|semtrace-build|semtrace-eval|lopdf|pdf-extract|reqwest|hyper|rustls|tokio|clap)$' || true)
[ -z "$forbidden" ] || { echo "detector-wasm depends on: $forbidden"; exit 1; }
step "the crates below the CLI depend only downward: core on no other semtrace crate, infer/build/eval on core alone, source on build, pipeline on core/build/source, protect on core/source (no ML runtime, CLI, HTTP or async crates)"
core_deps=$(cargo tree -p semtrace-core -e normal --prefix none | awk '{print $1}' | grep '^semtrace' | sort -u)
[ "$core_deps" = "semtrace-core" ] || { echo "semtrace-core depends on: $core_deps"; exit 1; }
for upper in semtrace-infer semtrace-build semtrace-eval; do
  deps=$(cargo tree -p "$upper" -e normal --prefix none | awk '{print $1}' | grep '^semtrace' | grep -vx "$upper" | sort -u)
  [ "$deps" = "semtrace-core" ] || { echo "$upper depends on: $deps"; exit 1; }
done
source_deps=$(cargo tree -p semtrace-source -e normal --prefix none | awk '{print $1}' | grep '^semtrace' | grep -vx semtrace-source | sort -u | tr '\n' ' ')
[ "$source_deps" = "semtrace-build semtrace-core " ] || { echo "semtrace-source depends on: $source_deps"; exit 1; }
pipeline_deps=$(cargo tree -p semtrace-pipeline -e normal --prefix none | awk '{print $1}' | grep '^semtrace' | grep -vx semtrace-pipeline | sort -u | tr '\n' ' ')
[ "$pipeline_deps" = "semtrace-build semtrace-core semtrace-source " ] || { echo "semtrace-pipeline depends on: $pipeline_deps"; exit 1; }
# protect names core and source only (build comes through source, whose check is above).
protect_deps=$(cargo tree -p semtrace-protect -e normal --depth 1 --prefix none | awk '{print $1}' | grep '^semtrace' | grep -vx semtrace-protect | sort -u | tr '\n' ' ')
[ "$protect_deps" = "semtrace-core semtrace-source " ] || { echo "semtrace-protect depends on: $protect_deps"; exit 1; }
protect_forbidden=$(cargo tree -p semtrace-protect -e normal --prefix none | awk '{print $1}' | sort -u \
  | grep -E '^(tract-onnx|tract-core|tokenizers|clap|tokio|reqwest|hyper)$' || true)
[ -z "$protect_forbidden" ] || { echo "semtrace-protect depends on: $protect_forbidden"; exit 1; }
core_ml=$(cargo tree -p semtrace-core -e normal --prefix none | awk '{print $1}' | grep -E '^(tract-onnx|tract-core|tokenizers)$' || true)
[ -z "$core_ml" ] || { echo "semtrace-core depends on an ML runtime: $core_ml"; exit 1; }
step "build the CLI the end-to-end tests run"
cargo build -p semtrace
# The site build is also the wasm32 build of core, infer and the shim (release, as shipped).
step "build the browser detector site (target/site): the wasm32 build of core, infer and the shim"
scripts/build-site.sh target/site
step "the wasm shim's own tests, in Node, on the site's build"
SEMTRACE_SITE="$PWD/target/site" node --test detector-wasm/tests/node.mjs
step "tests"
cargo test --workspace --no-fail-fast
step "done"
