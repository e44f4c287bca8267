#!/usr/bin/env bash
# Peak memory against metadata size (issue #23, item 5):
#
#   bash bench/memory.sh [GGUF_DIGEST_BINARY] [--tensors N] [--st-tensors M] [--reps R]
#
# A GGUF of 10^6 tensor infos (43 MB of metadata, one F32 element each) and
# a safetensors file of 400,000 tensors (a 29 MB header), written once into the
# scratch dir (bench/memory.py); then the peak RSS (`/usr/bin/time -f %M`,
# median of 3 runs) of the label, `--json` and `statement --leaves` of each,
# as a multiple of the metadata bytes; then the label of the file out of
# the page cache, with --no-mmap, and of standard input. Targets: label
# <= 5 x, --json <= 8 x.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bin=""
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then bin="$1"; shift; fi
gd=$(built_binary "$bin")
echo "load $(cut -d' ' -f1 /proc/loadavg); $(nproc) cores; $("$gd" --version)"
python3 "$here/memory.py" "$gd" "$scratch/models" "$@"
