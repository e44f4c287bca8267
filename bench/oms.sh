#!/usr/bin/env bash
# OpenSSF model signature verification: `gguf-digest verify` against
# model_signing's own `model_signing verify key` (PyPI model-signing 1.1.1)
# on the same signature of the same directory, side by side (issue #26,
# "Speed": target <= 0.6x). The directory: 8 files of 256 MiB (2 GiB) of
# random bytes, signed once by model_signing with an EC P-256 key (files
# serialization, its CLI's default); the files are read once before the
# timed rounds (page cache warm, as in CI after a download), and the two
# commands alternate round by round.
#
#   bash bench/oms.sh            8 x 256 MiB, 5 rounds each
#   bash bench/oms.sh --quick    8 x 16 MiB, 3 rounds (a smoke run)
#
# Environment: GGUF_DIGEST_BENCH_DIR (scratch, default /tmp/gguf-digest-bench;
# never the repository), GGUF_DIGEST_VENV (default ~/.cache/gguf-digest/venv,
# made by scripts/setup-python.sh), BENCH_REPS (rounds), GGUF_DIGEST_BIN (the
# binary; default: cargo's release build, built when missing).
# Prints a Markdown table: median wall time of each, and the ratio.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mib=256
reps="${BENCH_REPS:-5}"
if [ "${1:-}" = "--quick" ]; then mib=16; reps="${BENCH_REPS:-3}"; fi
venv="${GGUF_DIGEST_VENV:-$HOME/.cache/gguf-digest/venv}"
work="${GGUF_DIGEST_BENCH_DIR:-/tmp/gguf-digest-bench}/oms-$mib"
bin="${GGUF_DIGEST_BIN:-$(bash "$here/scripts/target-dir.sh")/release/gguf-digest}"

[ -x "$venv/bin/model_signing" ] || bash "$here/scripts/setup-python.sh"
[ -x "$bin" ] || (cd "$here" && cargo build --release --bin gguf-digest)

mkdir -p "$work/model"
for i in 1 2 3 4 5 6 7 8; do
    f="$work/model/part-$i.bin"
    [ -s "$f" ] || openssl rand -out "$f" $((mib * 1024 * 1024))
done
[ -s "$work/key.pem" ] || {
    openssl ecparam -name prime256v1 -genkey -noout -out "$work/key.pem"
    openssl ec -in "$work/key.pem" -pubout -out "$work/key.pub" 2>/dev/null
}
[ -s "$work/model.sig" ] || "$venv/bin/model_signing" sign key --private_key "$work/key.pem" \
    --signature "$work/model.sig" "$work/model" >/dev/null
# Warmed as every other benchmark warms its files (bench/pagecache.py: the
# cached pages dropped, then the file read once), not by a `cat` right after
# writing: pages left from writing the files made every mapped read fault
# in 4 KiB pieces (0.25 s of system time more for the same 2 GiB).
python3 "$here/bench/pagecache.py" warm "$work"/model/* >/dev/null

ours=("$bin" verify "$work/model.sig" --root "$work/model" --key "$work/key.pub" --quiet)
theirs=("$venv/bin/model_signing" verify key --public_key "$work/key.pub" --signature "$work/model.sig" "$work/model")
"${ours[@]}" >/dev/null
"${theirs[@]}" >/dev/null

now() { date +%s.%N; }
run() {
    local t0 t1
    t0=$(now)
    "$@" >/dev/null 2>&1
    t1=$(now)
    awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}'
}
a=() b=()
for _ in $(seq "$reps"); do
    a+=("$(run "${ours[@]}")")
    b+=("$(run "${theirs[@]}")")
done
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
ma=$(median "${a[@]}")
mb=$(median "${b[@]}")
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores; $reps rounds each"
echo
echo "| 8 files, $((mib * 8)) MiB, warm | median wall time (s) |"
echo "|---|---:|"
printf '| `gguf-digest verify --key` | %.3f |\n' "$ma"
printf '| `model_signing verify key` (1.1.1) | %.3f |\n' "$mb"
printf '| ratio (gguf-digest / model_signing) | %.2fx |\n' "$(awk -v a="$ma" -v b="$mb" 'BEGIN {print a / b}')"
