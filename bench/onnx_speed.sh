#!/usr/bin/env bash
# ONNX speed and memory (issue #35): a 2 GiB model with external data,
# side by side with sha256sum of its files.
#
#   bash bench/onnx_speed.sh [GGUF_DIGEST_BINARY]
#
# The model (bench/onnx_make.py: model.onnx of 64 `Add` nodes, 64 F32
# tensors of 32 MiB in weights.bin) is written in /dev/shm (so it is warm:
# tmpfs) and deleted at the end. gguf-digest -j1/-j2 against `sha256sum` of
# both files, medians of BENCH_REPS rounds (default 7) interleaved
# (bench/measure.py), peak RSS of every command, the load average before and
# after. Targets: -j2 <= 0.55 x sha256sum; peak RSS bounded by the graph,
# not the weights (the same at 256 MiB and 2 GiB).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gd=$(built_binary "${1:-}")
reps="${BENCH_REPS:-7}"
bash "$root/scripts/setup-python.sh" >&2
work=$(mktemp -d /dev/shm/gguf-digest-onnx-bench-XXXXXX)
trap 'rm -rf "$work"' EXIT
results="$scratch/onnx-$(date +%Y%m%d-%H%M%S).jsonl"
echo "gguf-digest $gd; results in $results; load before $(cut -d' ' -f1-3 /proc/loadavg)"
for spec in "onnx-256m:256" "onnx-2g:2048"; do
    IFS=: read -r name mib <<< "$spec"
    d="$work/$name"
    "$venv/bin/python" "$here/onnx_make.py" "$d" --bytes $((mib << 20)) --tensors 64
    "$gd" "$d/model.onnx"
    python3 "$here/measure.py" --out "$results" --group "$name" --reps "$reps" -- \
        "gguf-digest -j1" "$gd -j1 $d/model.onnx" "gguf-digest -j2" "$gd -j2 $d/model.onnx" \
        "sha256sum" "sha256sum $d/model.onnx $d/weights.bin"
    rm -rf "$d"
done
echo "load after $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$results" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
groups = {}
for r in rows:
    groups.setdefault(r["group"], {})[r["name"]] = r
print("\n| model | gguf-digest -j1 (s, CPU s) | -j2 | sha256sum | -j1 / sha256sum (CPU) | -j2 / sha256sum (CPU) | peak RSS -j1 / -j2 / sha256sum (MiB) | load after |")
print("|---|---|---|---|---|---|---|---|")
for g, d in groups.items():
    j1, j2, s = d["gguf-digest -j1"], d["gguf-digest -j2"], d["sha256sum"]
    t = lambda r: f"{r['median']:.3f} ({r['cpu_median']:.2f})"  # noqa: E731
    q = lambda r: f"{r['median'] / s['median']:.2f} ({r['cpu_median'] / s['cpu_median']:.2f})"  # noqa: E731
    print(f"| {g} | {t(j1)} | {t(j2)} | {t(s)} | {q(j1)} | {q(j2)} "
          f"| {j1['max_rss_kb'] / 1024:.1f} / {j2['max_rss_kb'] / 1024:.1f} / {s['max_rss_kb'] / 1024:.1f} | {s['load1_after']} |")
PY
