#!/usr/bin/env python3
"""Puts model files into a known page-cache state and reports that state.

  pagecache.py warm FILE...        drop the file's cached pages, then read it once
                                   sequentially (as `cat` does); read-ahead fills
                                   the cache with large folios
  pagecache.py fragment FILE...    drop the cached pages, then read the file back
                                   4 KiB at a time with read-ahead off: the cache
                                   holds it in 4 KiB pages only
  pagecache.py state [--out JSONL --group NAME] FILE...
                                   print (and append) how much of each file is
                                   cached, and how much of that in 2 MiB folios

Why it matters: a reader that maps the file (gguf-digest) pays one page-table
entry and, later, one TLB miss per 4 KiB page, but one per 2 MiB where the
page cache holds the file in 2 MiB folios: the kernel then maps a whole folio
with one PMD entry. How a file is held depends on its history (how it was
written, how it was read back, what reclaim took from it), so the benchmark
sets it explicitly instead of timing whatever the last run left behind.
`state` measures it: it maps the file, touches one byte in every cached 2 MiB
region (never a page that is not cached, so it causes no I/O) and reads
`FilePmdMapped` for that mapping from /proc/self/smaps.

Python standard library only (ctypes for mmap/mincore/posix_fadvise).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import re
import sys

PAGE = os.sysconf("SC_PAGE_SIZE")
PMD = 2 << 20
PROT_READ = 1
MAP_SHARED = 1
MAP_FAILED = ctypes.c_void_p(-1).value

libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]


def evict(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        # Dirty pages (a model just written) are not dropped; write them first.
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def warm(path: str) -> None:
    evict(path)
    with open(path, "rb", buffering=0) as f:
        # 128 KiB reads, as cat makes them.
        while f.read(128 << 10):
            pass


def fragment(path: str) -> None:
    evict(path)
    fd = os.open(path, os.O_RDONLY)
    try:
        # With read-ahead off every 4 KiB read brings in one 4 KiB page.
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
        size = os.fstat(fd).st_size
        for off in range(0, size, PAGE):
            os.pread(fd, PAGE, off)
    finally:
        os.close(fd)


def state(path: str) -> dict:
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        addr = libc.mmap(None, size, PROT_READ, MAP_SHARED, fd, 0)
        if addr in (None, MAP_FAILED):
            raise OSError(ctypes.get_errno(), f"mmap {path}")
    finally:
        os.close(fd)
    try:
        pages = (size + PAGE - 1) // PAGE
        vec = ctypes.create_string_buffer(pages)
        if libc.mincore(addr, size, vec) != 0:
            raise OSError(ctypes.get_errno(), f"mincore {path}")
        cached = vec.raw
        resident = sum(b & 1 for b in cached) * PAGE
        # One touch per cached 2 MiB region maps a 2 MiB folio whole.
        first = (-addr) % PMD
        for off in [0] + list(range(first, size, PMD)):
            if off < size and cached[off // PAGE] & 1:
                ctypes.string_at(addr + off, 1)
        pmd = 0
        with open("/proc/self/smaps") as f:
            inside = False
            for line in f:
                header = re.match(r"([0-9a-f]+)-[0-9a-f]+ ", line)
                if header:
                    inside = int(header.group(1), 16) == addr
                elif inside and line.startswith("FilePmdMapped:"):
                    pmd = int(line.split()[1]) * 1024
    finally:
        libc.munmap(addr, size)
    return {"size": size, "resident": min(resident, size), "pmd": pmd}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("action", choices=["warm", "fragment", "state"])
    p.add_argument("--out")
    p.add_argument("--group")
    p.add_argument("files", nargs="+")
    a = p.parse_args()
    for path in a.files:
        path = os.path.realpath(path)
        if a.action == "warm":
            warm(path)
        elif a.action == "fragment":
            fragment(path)
        s = state(path)
        print(f"  {os.path.basename(path)}: {s['resident'] / s['size']:.1%} cached,"
              f" {s['pmd'] / max(1, s['resident']):.1%} of that in 2 MiB folios")
        if a.out and a.group:
            with open(a.out, "a") as f:
                f.write(json.dumps({"group": a.group, "file": path, **s}) + "\n")


if __name__ == "__main__":
    sys.exit(main())
