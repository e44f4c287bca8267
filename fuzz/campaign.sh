#!/usr/bin/env bash
# Runs every fuzz target in turn, one process each, at the lowest priority,
# and prints libFuzzer's final statistics and each corpus's size. Usage
# (from anywhere):
#
#   fuzz/campaign.sh [SECONDS_PER_TARGET] [TARGET...]
#
# Defaults: 600 seconds each, every target (the list below, as in
# Cargo.toml). Needs cargo-fuzz (`cargo install cargo-fuzz --locked`). It
# builds with the default toolchain: without a sanitizer (-s none) cargo-fuzz
# passes only flags a stable rustc takes. FUZZ_TOOLCHAIN=nightly uses
# `cargo +nightly` instead.
# Logs go to fuzz/target/logs/<target>.log; crashes to fuzz/artifacts/<target>/.
set -euo pipefail
cd "$(dirname "$0")"
secs=${1:-600}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(parse payloads label json st_header st_index
    ollama_manifest ollama_config envelope statement dir_group oms pt_pickle pt_zip)

cargo=(cargo)
[ -z "${FUZZ_TOOLCHAIN:-}" ] || cargo=(cargo "+$FUZZ_TOOLCHAIN")

# The seeds follow the test suite's writers: written again each time (the
# inputs the fuzzer added to a corpus stay).
nice -n 19 "${cargo[@]}" run --release --example gen-seeds
# The PyTorch targets' seeds are written by torch.save (Debian's python3-torch).
if [[ " ${targets[*]} " == *" pt_"* ]]; then
    nice -n 19 /usr/bin/python3 pt_seeds.py || echo "!! pt_seeds.py failed (no torch?): the pt_* corpora keep what they hold"
fi
mkdir -p target/logs
for t in "${targets[@]}"; do
    case $t in
        parse | payloads | label) dict=(-dict=gguf.dict) ;;
        pt_pickle | pt_zip) dict=(-dict=pt.dict) ;;
        # Names from its own vocabularies: no dictionary.
        dir_group) dict=() ;;
        *) dict=(-dict=json.dict) ;;
    esac
    echo "== $t: ${secs}s, $(date -u +%FT%TZ)"
    # -s none: no sanitizer (safe Rust; ASan would also claim SIGBUS, which
    # the map guard handles itself). -a: debug assertions, so integer
    # overflow panics. Single allocations over 256 MiB count as crashes: no
    # input here is larger than 64 KiB, so one would be a declared size trusted.
    nice -n 19 "${cargo[@]}" fuzz run -s none -a "$t" -- \
        -max_total_time="$secs" "${dict[@]}" -max_len=65536 -timeout=10 \
        -rss_limit_mb=1024 -malloc_limit_mb=256 -print_final_stats=1 \
        > "target/logs/$t.log" 2>&1 || echo "!! $t stopped with a finding: see target/logs/$t.log and artifacts/$t/"
    grep -E '^(stat::|Done|#[0-9]+ *DONE)|SUMMARY|panicked' "target/logs/$t.log" || true
    find "corpus/$t" -type f -printf '%s\n' | awk '{ n++; b += $1 } END { printf "corpus: %d inputs, %d bytes\n", n, b }'
    rm -rf /dev/shm/gguf-digest-fuzz-* 2>/dev/null || true
done
