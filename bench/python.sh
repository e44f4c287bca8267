#!/usr/bin/env bash
# gguf_digest.label (the Python wheel) against the gguf-digest command on
# the 2 GiB bench model, warm, side by side (docs/BENCHMARKS.md, issue #17).
#
#   bash bench/python.sh [MODEL]
#
# Builds the release binary and the wheel, installs the wheel into a venv
# (WHEEL_VENV, default /tmp/gguf-digest-bench/wheel-venv), then runs
# bench/python_label.py. MODEL defaults to bench/compare.sh's 2 GiB model.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
model="${1:-/tmp/gguf-digest-bench/models/equal-2048M.gguf}"
venv="${WHEEL_VENV:-/tmp/gguf-digest-bench/wheel-venv}"
[ -f "$model" ] || { echo "python.sh: $model missing (bash bench/compare.sh writes it)"; exit 2; }
(cd "$repo" && cargo build --release --quiet)
wheels="$(mktemp -d)"
trap 'rm -rf "$wheels"' EXIT
python3 -m pip wheel --quiet --no-deps --wheel-dir "$wheels" "$repo"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --force-reinstall "$wheels"/gguf_digest-*.whl
"$venv/bin/python" "$repo/bench/python_label.py" "$(bash "$repo/scripts/target-dir.sh")/release/gguf-digest" "$model" --rounds "${ROUNDS:-9}"
