#!/usr/bin/env bash
# Remote inputs (issue #36 "Speed", docs/adr/0044): a 2 GiB GGUF labelled over
# HTTP from a local nginx against `curl -s URL | sha256sum` (one stream read
# and hashed) and against the transfer alone (`curl -s -o /dev/null URL`),
# warm (the file sits in /dev/shm); then the same object through moto's S3
# server against curl of it. Interleaved round by round (bench/measure.py), so
# the ratios hold on a shared machine; peak RSS from /usr/bin/time.
#
#   bash bench/remote.sh BINARY      (built with --features remote)
#
# Needs Debian's nginx (nginx-light) and curl; the S3 part needs the venv of
# scripts/setup-python.sh (moto[server], boto3) and is skipped without it.
# Environment: BENCH_REPS (default 5), GGUF_DIGEST_BENCH_DIR (default
# /dev/shm/gguf-digest-remote), REMOTE_MIB (default 2048), REMOTE_CONNECTIONS="2 4 16" to add
# rows at other connection counts, REMOTE_PARTS="1 8 16" rows at other part sizes in MiB
# (GGUF_DIGEST_BENCH_PART_MIB, a knob for this bench only), REMOTE_THREADS="2" rows at other -j,
# REMOTE_BASE=OTHER_BINARY a row of another build (say main's) side by side, REMOTE_SKIP_SHA=1 to
# leave out the slow curl|sha256sum row, REMOTE_S3=1 to add S3 (moto serves a 2 GiB object slowly: minutes a round).
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: bash bench/remote.sh BINARY" >&2; exit 2; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bin=$(realpath "$1")
reps="${BENCH_REPS:-5}"
dir="${GGUF_DIGEST_BENCH_DIR:-/dev/shm/gguf-digest-remote}"
venv="${GGUF_DIGEST_VENV:-$HOME/.cache/gguf-digest/venv}"
mkdir -p "$dir/www" "$dir/nginx"
model="$dir/www/model.gguf"
[ -f "$model" ] || python3 "$here/make_models.py" equal "$model" --bytes $((${REMOTE_MIB:-2048} << 20))
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
port=$(free_port)
cat > "$dir/nginx/nginx.conf" <<CONF
daemon off; master_process off; worker_processes 1; pid $dir/nginx/nginx.pid; error_log $dir/nginx/error.log;
events { worker_connections 256; }
http { access_log off; sendfile on; client_body_temp_path $dir/nginx/b; proxy_temp_path $dir/nginx/p;
 fastcgi_temp_path $dir/nginx/f; uwsgi_temp_path $dir/nginx/u; scgi_temp_path $dir/nginx/s;
 server { listen 127.0.0.1:$port; root $dir/www; } }
CONF
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
"$nginx_bin" -c "$dir/nginx/nginx.conf" -e "$dir/nginx/error.log" &
nginx_pid=$!
pids=("$nginx_pid")
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done
url="http://127.0.0.1:$port/model.gguf"
out="$dir/remote-$(date +%Y%m%d-%H%M%S).jsonl"
echo "remote bench: $bin; $(du -h "$model" | cut -f1) model; load $(cut -d' ' -f1 /proc/loadavg); results in $out"
[ "$("$bin" --allow-http "$url" | cut -d' ' -f1)" = "$("$bin" "$model" | cut -d' ' -f1)" ] || { echo "labels differ over HTTP" >&2; exit 1; }
more=()
for c in ${REMOTE_CONNECTIONS:-}; do more+=("gguf-digest --connections $c" "$bin --allow-http --connections $c $url"); done
for p in ${REMOTE_PARTS:-}; do more+=("gguf-digest part $p MiB" "env GGUF_DIGEST_BENCH_PART_MIB=$p $bin --allow-http $url"); done
for j in ${REMOTE_THREADS:-}; do more+=("gguf-digest -j $j" "$bin --allow-http -j $j $url"); done
[ -z "${REMOTE_BASE:-}" ] || more+=("base" "$(realpath "$REMOTE_BASE") --allow-http $url")
[ "${REMOTE_SKIP_SHA:-0}" = 1 ] || more+=("curl|sha256sum" "sh -c 'curl -s $url | sha256sum'")
python3 "$here/measure.py" --out "$out" --group http --reps "$reps" -- \
    "gguf-digest" "$bin --allow-http $url" \
    "${more[@]}" \
    "curl -o /dev/null" "curl -s -o /dev/null $url"
if [ "${REMOTE_S3:-0}" = 1 ] && "$venv/bin/python" -c 'import moto, boto3' 2>/dev/null; then
    s3port=$(free_port)
    "$venv/bin/python" -m moto.server -H 127.0.0.1 -p "$s3port" > "$dir/moto.log" 2>&1 &
    pids+=("$!")
    for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$s3port/" && break; sleep 0.2; done
    AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing-secret AWS_REGION=us-east-1 "$venv/bin/python" - "$s3port" "$model" <<'PY'
import sys, boto3
s3 = boto3.client("s3", endpoint_url=f"http://127.0.0.1:{sys.argv[1]}", region_name="us-east-1")
s3.create_bucket(Bucket="bench")
s3.upload_file(sys.argv[2], "bench", "model.gguf")
PY
    export AWS_ENDPOINT="http://127.0.0.1:$s3port" AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing-secret AWS_REGION=us-east-1
    s3url="http://127.0.0.1:$s3port/bench/model.gguf"
    python3 "$here/measure.py" --out "$out" --group s3 --reps "$reps" -- \
        "gguf-digest" "$bin --allow-http s3://bench/model.gguf" \
        "curl|sha256sum" "sh -c 'curl -s $s3url | sha256sum'" \
        "curl -o /dev/null" "curl -s -o /dev/null $s3url"
fi
python3 - "$out" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
for group in dict.fromkeys(r["group"] for r in rows):
    by = {r["name"]: r for r in rows if r["group"] == group}
    for name, ours in by.items():
        if not name.startswith(("gguf-digest", "base")):
            continue
        for other in ("curl|sha256sum", "curl -o /dev/null"):
            if other not in by:
                continue
            o = by[other]
            print(f"{group}: {name} / {other}: wall {ours['median'] / o['median']:.2f}, "
                  f"CPU {ours['cpu_median'] / max(o['cpu_median'], 0.01):.2f}; {name} peak RSS {ours['max_rss_kb'] / 1024:.1f} MiB")
PY
