#!/usr/bin/env bash
# Natural-mention priors (issue 23, item 4), from the repository root:
#   bash training/priors.sh [N_PAPERS]
# 1. label: the release builder runs on N train-pool papers (default 70, seeded order) with their real
#    reviews as controls; the approved facts, their mention features and q per review are appended to
#    training/data/priors/labels.jsonl (resumable; review text stays in ../shared and training/work).
# 2. fit: logistic model + co-mention gamma -> crates/build/src/mention_model.json (embedded by the
#    builder) and the held-out calibration in training/data/priors/calibration.md.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-70}
cargo build --release -p semtrace
python3 training/priors_label.py --papers "$N"
PY=training/.venv/bin/python
[ -x "$PY" ] || PY=python3  # needs numpy only
$PY training/fit_priors.py
