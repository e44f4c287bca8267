#!/usr/bin/env bash
# The --json writer: the hand-written one, the product's (serde_json's
# formatter and Serialize values), and each entry a Serialize impl over
# iterators (issue #32 item 8, docs/adr/0045-json-writer.md), side by side:
#
#   bash bench/json.sh [N]        (default 10^6 tensors)
#
# Builds bench/json (a crate of its own, release), checks that the three
# ways write the same bytes, then times each way's document of one model of N
# tensors (GGUF and safetensors shapes) interleaved (bench/measure.py: wall
# time and peak RSS of each process; stdout discarded), BENCH_REPS rounds
# (default 7). Each process also prints to stderr the time of the writing
# alone (the model is built first, the same way for both).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
n="${1:-1000000}"
reps="${BENCH_REPS:-7}"
(cd "$here/json" && CARGO_INCREMENTAL=0 cargo build --release --quiet) >&2
jb="$here/json/target/release/json-bench"
"$jb" check 200001
results="$scratch/json-$(date +%Y%m%d-%H%M%S).jsonl"
echo "json-bench $jb; $n tensors; results in $results; load $(cut -d' ' -f1 /proc/loadavg)"
for shape in gguf safetensors; do
    python3 "$here/measure.py" --out "$results" --group "json-$shape" --reps "$reps" -- \
        handwritten "$jb handwritten $shape $n" \
        writer "$jb writer $shape $n" serde "$jb serde $shape $n"
done
echo "load at the end $(cut -d' ' -f1 /proc/loadavg)"
python3 - "$results" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
groups = {}
for r in rows:
    groups.setdefault(r["group"], {})[r["name"]] = r
print("\n| shape | way | wall median (s) | / handwritten | CPU median (s) | / handwritten | peak RSS (MiB) |")
print("|---|---|---|---|---|---|---|")
for g, d in groups.items():
    h = d["handwritten"]
    for way in ("handwritten", "writer", "serde"):
        r = d[way]
        print(f"| {g} | {way} | {r['median']:.3f} | {r['median'] / h['median']:.3f} "
              f"| {r['cpu_median']:.3f} | {r['cpu_median'] / h['cpu_median']:.3f} | {r['max_rss_kb'] / 1024:.1f} |")
PY
