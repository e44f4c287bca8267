#!/usr/bin/env bash
# Runs every fuzz target in turn, one process each, at low priority, and
# prints libFuzzer's final statistics. Usage (from anywhere):
#
#   fuzz/campaign.sh [SECONDS_PER_TARGET] [TARGET...]
#
# Defaults: 600 seconds each, targets parse, payloads, label, json,
# st_header and st_index. Needs
# cargo-fuzz and a nightly toolchain, or RUSTC_BOOTSTRAP=1 on stable (see
# docs/FUZZING.md). Logs go to fuzz/target/logs/<target>.log; crashes to
# fuzz/artifacts/<target>/.
set -euo pipefail
cd "$(dirname "$0")"
secs=${1:-600}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(parse payloads label json st_header st_index)

# Nightly when rustup has it; otherwise stable with the nightly-only flags allowed.
if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    cargo=(cargo +nightly)
else
    cargo=(cargo)
    export RUSTC_BOOTSTRAP=1
fi

[ -d corpus/parse ] || "${cargo[@]}" run --release --example gen-seeds
mkdir -p target/logs
for t in "${targets[@]}"; do
    echo "== $t: ${secs}s"
    # -s none: no sanitizer (safe Rust; ASan would also claim SIGBUS, which
    # the map guard handles itself). -a: debug assertions, so integer
    # overflow panics. Single allocations over 256 MiB count as crashes: no
    # input here is larger than 64 KiB, so one would be a declared size trusted.
    nice -n 10 "${cargo[@]}" fuzz run -s none -a "$t" -- \
        -max_total_time="$secs" -dict=gguf.dict -max_len=65536 -timeout=10 \
        -rss_limit_mb=1024 -malloc_limit_mb=256 -print_final_stats=1 \
        > "target/logs/$t.log" 2>&1 || echo "!! $t stopped with a finding: see target/logs/$t.log and artifacts/$t/"
    grep -E '^(stat::|Done|#[0-9]+ *DONE)|SUMMARY|panicked' "target/logs/$t.log" || true
    rm -rf /dev/shm/gguf-digest-fuzz-* 2>/dev/null || true
done
