# Sourced by the bench scripts (ab.sh, safetensors.sh, ollama.sh): where
# things are, and the one check that keeps gigabytes out of the repository.
#
#   here     this folder (bench/)      root     the repository
#   scratch  $GGUF_DIGEST_BENCH_DIR or /tmp/gguf-digest-bench, made, absolute
#   venv     $GGUF_DIGEST_VENV or ~/.cache/gguf-digest/venv
#   built_binary [PATH]   PATH as an absolute path; without one, the build
#                         of this tree, rebuilt first so it is never stale
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
scratch="${GGUF_DIGEST_BENCH_DIR:-/tmp/gguf-digest-bench}"
venv="${GGUF_DIGEST_VENV:-$HOME/.cache/gguf-digest/venv}"
mkdir -p "$scratch/models"
scratch="$(cd "$scratch" && pwd)"
case "$scratch/" in
    "$root"/*) echo "$(basename "$0"): scratch dir $scratch is inside the repository" >&2; exit 2 ;;
esac

built_binary() { # [path]
    if [ -n "${1:-}" ]; then
        realpath "$1"
    else
        (cd "$root" && cargo build --release --quiet) >&2
        echo "$(bash "$root/scripts/target-dir.sh")/release/gguf-digest"
    fi
}
