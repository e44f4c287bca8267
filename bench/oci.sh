#!/usr/bin/env bash
# An OCI blob's digest from the label's own reads (issue #36 part 2,
# docs/adr/0046): a TinyLlama-shaped 2 GiB F16 GGUF (vocabulary 32000, 2048
# wide, 22 layers, ffn 5632: a 125 MiB token embedding first, a 125 MiB output
# last) pushed as a Docker Model Runner artifact to Debian's docker-registry
# (storage in /dev/shm) and labelled as `oci://127.0.0.1:PORT/bench/tinyllama:f16`.
# For each binary: the bytes of the weights blob the registry sent (its access
# log), as a fraction of the blob, and the wall time, interleaved round by round
# (bench/measure.py).
#
#   bash bench/oci.sh BINARY [BASE_BINARY]      (built with --features remote)
#
# Needs /usr/bin/docker-registry and the venv of scripts/setup-python.sh (oras).
# Environment: BENCH_REPS (default 5), GGUF_DIGEST_BENCH_DIR (default
# /dev/shm/gguf-digest-oci), OCI_THREADS="2" to pass -j.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: bash bench/oci.sh BINARY [BASE_BINARY]" >&2; exit 2; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bins=("$(realpath "$1")")
[ $# -lt 2 ] || bins+=("$(realpath "$2")")
reps="${BENCH_REPS:-5}"
dir="${GGUF_DIGEST_BENCH_DIR:-/dev/shm/gguf-digest-oci}"
venv="${GGUF_DIGEST_VENV:-$HOME/.cache/gguf-digest/venv}"
mkdir -p "$dir"
model="$dir/tinyllama-f16.gguf"
[ -f "$model" ] || python3 - "$here" "$model" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from make_models import GGML_F16, Tensor, general_kvs, write_gguf
n_vocab, n_embd, n_ff, n_layer, n_kv = 32000, 2048, 5632, 22, 256
t = [Tensor("token_embd.weight", [n_embd, n_vocab], GGML_F16)]
for i in range(n_layer):
    t += [Tensor(f"blk.{i}.attn_norm.weight", [n_embd]),
          Tensor(f"blk.{i}.attn_q.weight", [n_embd, n_embd], GGML_F16),
          Tensor(f"blk.{i}.attn_k.weight", [n_embd, n_kv], GGML_F16),
          Tensor(f"blk.{i}.attn_v.weight", [n_embd, n_kv], GGML_F16),
          Tensor(f"blk.{i}.attn_output.weight", [n_embd, n_embd], GGML_F16),
          Tensor(f"blk.{i}.ffn_norm.weight", [n_embd]),
          Tensor(f"blk.{i}.ffn_gate.weight", [n_embd, n_ff], GGML_F16),
          Tensor(f"blk.{i}.ffn_up.weight", [n_embd, n_ff], GGML_F16),
          Tensor(f"blk.{i}.ffn_down.weight", [n_ff, n_embd], GGML_F16)]
t += [Tensor("output_norm.weight", [n_embd]), Tensor("output.weight", [n_embd, n_vocab], GGML_F16)]
write_gguf(sys.argv[2], general_kvs("llama", "bench-tinyllama-shaped"), t, seed=11)
PY
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
rm -rf "$dir/storage"
cat > "$dir/registry.yml" <<CONF
version: 0.1
log:
  level: error
  accesslog:
    disabled: false
storage:
  filesystem:
    rootdirectory: $dir/storage
http:
  addr: 127.0.0.1:$port
CONF
log="$dir/access.log"
/usr/bin/docker-registry serve "$dir/registry.yml" > "$log" 2>&1 &
registry=$!
trap 'kill "$registry" 2>/dev/null || true' EXIT
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/v2/" && break; sleep 0.1; done
pushed=$("$venv/bin/python" "$here/../scripts/interop/oci_push.py" dmr --registry "127.0.0.1:$port" \
    --ref bench/tinyllama:f16 --gguf "$model")
blob=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["layers"][0])' "$pushed")
ref="oci://127.0.0.1:$port/bench/tinyllama:f16"
threads=()
[ -z "${OCI_THREADS:-}" ] || threads=(-j "$OCI_THREADS")
size=$(stat -c %s "$model")
want=$("${bins[0]}" "$model" | cut -d' ' -f1)
echo "oci bench: $(du -h "$model" | cut -f1) model ($size bytes), blob $blob; load $(cut -d' ' -f1 /proc/loadavg)"
# The bytes of the blob sent by the registry to one run of each binary.
served() {
    python3 - "$log" "$blob" "$1" <<'PY'
import sys
log, blob, skip = sys.argv[1], sys.argv[2], int(sys.argv[3])
total = 0
with open(log, "rb") as f:
    f.seek(skip)
    for line in f.read().decode(errors="replace").splitlines():
        parts = line.split('"')
        if len(parts) > 2 and parts[1].startswith("GET ") and f"/blobs/{blob} " in parts[1]:
            fields = parts[2].split()
            total += int(fields[1]) if len(fields) > 1 and fields[1].isdigit() else 0
print(total)
PY
}
for b in "${bins[@]}"; do
    start=$(stat -c %s "$log")
    got=$("$b" --allow-http "${threads[@]}" "$ref" | cut -d' ' -f1)
    [ "$got" = "$want" ] || { echo "$b: label $got, not the file's $want" >&2; exit 1; }
    sleep 0.5
    n=$(served "$start")
    python3 -c "import sys; n, s = int(sys.argv[1]), int(sys.argv[2]); print(f'{sys.argv[3]}: {n} bytes of the blob served, {n / s:.3f} x the blob, read twice {max(n - s, 0) / s:.1%}')" "$n" "$size" "$b"
done
cmds=()
for ((i = 0; i < ${#bins[@]}; i++)); do cmds+=("run $i: ${bins[$i]}" "${bins[$i]} --allow-http ${threads[*]} $ref"); done
python3 "$here/measure.py" --out "$dir/oci-$(date +%Y%m%d-%H%M%S).jsonl" --group oci --reps "$reps" -- "${cmds[@]}"
