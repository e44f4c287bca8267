#!/usr/bin/env bash
# Ollama: many small blobs must cost about what one file of the same size
# costs (issue #14: <= 1.2 x).
#
#   bash bench/ollama.sh [GGUF_DIGEST_BINARY]
#
# Makes (bench/make_models.py, in the scratch dir, never the repo) an Ollama
# store whose model `many` is 1,000 tensor blobs of BLOB_MIB MiB (default 4;
# one F32 tensor each), and one safetensors file of 1,000 tensors of the
# same sizes; times
# `gguf-digest ollama:many` against `gguf-digest FILE` at -j1 and -j2, page
# cache warmed, medians of BENCH_REPS (default 9) interleaved rounds.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gd=$(built_binary "${1:-}")
reps="${BENCH_REPS:-9}"
mib="${BLOB_MIB:-4}"
store="$scratch/ollama-store-1000x${mib}M"
single="$scratch/models/st-1000x${mib}M.safetensors"
[ -d "$store/manifests" ] || python3 "$here/make_models.py" ollama-tensors "$store" --bytes $((mib * 1000 << 20)) --blobs 1000
[ -f "$single" ] || python3 "$here/make_models.py" safetensors "$single" --bytes $((mib * 1000 << 20)) --tensors 1000
export OLLAMA_MODELS="$store"
results="$scratch/ollama-$(date +%Y%m%d-%H%M%S).jsonl"
"$gd" ollama:many "$single"
python3 "$here/pagecache.py" warm "$single" "$store"/blobs/* > /dev/null
for j in 1 2; do
    python3 "$here/measure.py" --out "$results" --group "j$j" --reps "$reps" -- \
        "1000 blobs" "$gd -j$j ollama:many" "one file" "$gd -j$j $single"
done
python3 - "$results" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
g = {}
for r in rows:
    g.setdefault(r["group"], {})[r["name"]] = r
print("\n| threads | 1,000 blobs (s) | one file (s) | blobs / file | peak RSS blobs / file (MiB) |")
print("|---|---|---|---|---|")
for k, d in g.items():
    b, f = d["1000 blobs"], d["one file"]
    print(f"| {k} | {b['median']:.3f} | {f['median']:.3f} | {b['median'] / f['median']:.2f} "
          f"| {b['max_rss_kb'] / 1024:.1f} / {f['max_rss_kb'] / 1024:.1f} |")
PY
