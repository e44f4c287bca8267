#!/usr/bin/env python3
"""Peak memory against metadata size (issue #23, item 5): bench/memory.sh runs it.

  memory.py BINARY SCRATCH [--tensors N] [--st-tensors M] [--reps R] [--only gguf|safetensors]

Writes, into SCRATCH (never the repository), a GGUF of N tensor infos
(default 10**6; names `blk.NNNNNNN`, one dim, F32 of one element, so
the metadata is almost all tensor infos: 43 bytes each) and a safetensors
file of M tensors (default 400,000, below the strict JSON reader's 4 million
values; one F32 element each; a header of ~65 bytes a tensor),
then runs BINARY under `/usr/bin/time -f %M` for the label, `--json` and
`statement --leaves` (output to /dev/null, the file in the page cache),
the label of the file out of the page cache (read front to back), with
`--no-mmap`, and of standard input, and prints the peak RSS of each, the
median of R runs, as a multiple of the file's metadata bytes (GGUF: header, KVs and tensor infos; safetensors:
the 8-byte length and the JSON header). Standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import struct
import subprocess
import sys

GGML_F32 = 0
ALIGN = 32


def gguf_str(s: bytes) -> bytes:
    return struct.pack("<Q", len(s)) + s


def write_gguf(path: str, n: int) -> int:
    """N tensors of one F32 each, default alignment; returns the metadata bytes."""
    if os.path.exists(path):
        with open(path, "rb") as f:
            head = f.read(24)
        if len(head) == 24 and struct.unpack("<Q", head[8:16])[0] == n:
            return metadata_end_gguf(path, n)
    parts = [b"GGUF" + struct.pack("<IQQ", 3, n, 1)]
    parts.append(gguf_str(b"general.architecture") + struct.pack("<I", 8) + gguf_str(b"llama"))
    info = struct.Struct("<Q11sIQIQ")
    for i in range(n):
        parts.append(info.pack(11, b"blk.%07d" % i, 1, 1, GGML_F32, i * ALIGN))
    meta = b"".join(parts)
    pad = -len(meta) % ALIGN
    tmp = path + ".part"
    with open(tmp, "wb") as f:
        f.write(meta + b"\0" * pad)
        # One element of 4 bytes per tensor, each padded to the alignment.
        f.write((b"\x00\x00\x80\x3f" + b"\0" * (ALIGN - 4)) * n)
    os.replace(tmp, path)
    return len(meta)


def metadata_end_gguf(path: str, n: int) -> int:
    # Header 24, the one KV, then n infos of 8 + 11 + 4 + 8 + 4 + 8 bytes.
    kv = 8 + len(b"general.architecture") + 4 + 8 + len(b"llama")
    return 24 + kv + n * 43


def write_safetensors(path: str, n: int) -> int:
    """N tensors of one F32 each; returns the metadata bytes (8 + header)."""
    if os.path.exists(path):
        with open(path, "rb") as f:
            (hlen,) = struct.unpack("<Q", f.read(8))
        return 8 + hlen
    header = {"__metadata__": {"format": "pt"}}
    for i in range(n):
        header[f"blk.{i:07d}"] = {"dtype": "F32", "shape": [1], "data_offsets": [4 * i, 4 * i + 4]}
    text = json.dumps(header, separators=(",", ":")).encode()
    tmp = path + ".part"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        f.write(b"\x00\x00\x80\x3f" * n)
    os.replace(tmp, path)
    return 8 + len(text)


def evict(path: str) -> None:
    """Drops the file's pages from the page cache (no privilege needed)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def warm(path: str) -> None:
    """Reads the file once, so that a run finds it in the page cache."""
    with open(path, "rb") as f:
        while f.read(1 << 24):
            pass


def peak_kib(cmd: list[str], stdin: str | None = None) -> int:
    """Peak RSS of one run in KiB, from GNU time's %M; the run must succeed."""
    with open(stdin or os.devnull, "rb") as inp:
        r = subprocess.run(
            ["/usr/bin/time", "-f", "%M", *cmd],
            stdin=inp,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            check=False,
        )
    lines = r.stderr.decode(errors="replace").strip().splitlines()
    if r.returncode != 0 or not lines:
        sys.exit(f"memory.py: {' '.join(cmd)} failed ({r.returncode}): {r.stderr.decode(errors='replace')}")
    return int(lines[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("scratch")
    ap.add_argument("--tensors", type=int, default=10**6)
    ap.add_argument("--st-tensors", type=int, default=400_000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--only", choices=["gguf", "safetensors"])
    a = ap.parse_args()
    os.makedirs(a.scratch, exist_ok=True)
    models = []
    if a.only in (None, "gguf"):
        p = os.path.join(a.scratch, f"many-{a.tensors}.gguf")
        models.append(("gguf", p, write_gguf(p, a.tensors)))
    if a.only in (None, "safetensors"):
        p = os.path.join(a.scratch, f"many-{a.st_tensors}.safetensors")
        models.append(("safetensors", p, write_safetensors(p, a.st_tensors)))
    print(f"binary {a.binary}; GGUF {a.tensors:,} tensors, safetensors {a.st_tensors:,}; median of {a.reps} runs")
    print("\n| file | metadata (MB) | command | peak RSS (MB) | × metadata |")
    print("|---|---|---|---|---|")
    for fmt, path, meta in models:
        # (what, arguments, the file's state, standard input)
        runs = [
            ("label", [path], "warm", None),
            ("--json", ["--json", path], "warm", None),
            ("statement --leaves", ["statement", "--leaves", path], "warm", None),
            ("label, not in the page cache", [path], "cold", None),
            ("label --no-mmap", ["--no-mmap", path], "warm", None),
            ("label of standard input", ["-"], "warm", path),
        ]
        for what, args, state, stdin in runs:
            kibs = []
            for _ in range(a.reps):
                evict(path) if state == "cold" else warm(path)
                kibs.append(peak_kib([a.binary, *args], stdin))
            rss = statistics.median(kibs) * 1024
            print(f"| {fmt} | {meta / 1e6:.1f} | `{what}` | {rss / 1e6:.0f} | {rss / meta:.2f} |")
            sys.stdout.flush()
        warm(path)


if __name__ == "__main__":
    main()
