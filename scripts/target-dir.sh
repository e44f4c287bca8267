#!/usr/bin/env bash
# Prints the directory cargo builds this workspace into: `target/` unless
# CARGO_TARGET_DIR, a .cargo/config.toml's build.target-dir or the like
# says otherwise, as `cargo metadata` reports it (issue #31, item 19: a
# script that names target/ itself fails for every user who sets one).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])'
