"""An independent oracle for the safetensors label (safetensors-skeleton-v1).

usage: st_oracle.py [--skeleton-hex] [--json] PATH...

Written from the contract alone (shared/spec/safetensors-skeleton-v1.md,
with canonical-skeleton-v1.md's notation: H = SHA-256, LE_u32 / LE_u64
little-endian), with the standard library only: no code of the Rust side,
no safetensors package. Each PATH is one of

  * a `.safetensors` file: a model of one file, or, when named
    `<prefix>-NNNNN-of-MMMMM.safetensors`, a shard: the model of
    `<prefix>.safetensors.index.json` beside it if there is one (the file
    must be one of its files), else the files `<prefix>-00001-of-MMMMM` ...
    `<prefix>-MMMMM-of-MMMMM`, of which PATH must be the first (§5);
  * a `*.safetensors.index.json`: the model of its `weight_map` (§5), each
    file's metadata merged with the index's `metadata` minus `total_size`
    and `total_parameters` (revision 2: derived, any JSON value; a
    `metadata` or `__metadata__` of `null` is none).

Prints `<label>  <path>` per PATH, like sha256sum; with --skeleton-hex, a
second line `skeleton <hex>`; with --json, instead one JSON line
{"models": [{"path", "label", "tensors", "groups", "files"}]}. A file the
contract rejects (in the checks this oracle makes: the ones that decide a
label) exits 2 with one line on stderr.

The other interop scripts import label_model() from here.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import struct
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MAX_HEADER = 100_000_000
# An index's metadata members derived from the tensors (§5, revision 2).
DERIVED = ("total_size", "total_parameters")
MAX_DEPTH = 64
U64_MAX = 2**64 - 1
MAGIC = b"SFTN"
VERSION = 1
JSON_WS = b" \t\r\n"
INDEX_SUFFIX = ".safetensors.index.json"
SHARD_NAME = re.compile(r"^(?P<prefix>.*)-(?P<no>\d{5})-of-(?P<count>\d{5})\.safetensors$", re.DOTALL)
CHUNK = 1 << 20

# §2, the dtype table: bits per element, in one place.
DTYPE_BITS = {
    "F4": 4,
    "F6_E2M3": 6,
    "F6_E3M2": 6,
    "BOOL": 8,
    "U8": 8,
    "I8": 8,
    "F8_E5M2": 8,
    "F8_E4M3": 8,
    "F8_E8M0": 8,
    "F8_E4M3FNUZ": 8,
    "F8_E5M2FNUZ": 8,
    "I16": 16,
    "U16": 16,
    "F16": 16,
    "BF16": 16,
    "I32": 32,
    "U32": 32,
    "F32": 32,
    "C64": 64,
    "F64": 64,
    "I64": 64,
    "U64": 64,
}


class Rejected(Exception):
    """The contract rejects the input; the message names file and subject."""


def H(b: bytes) -> bytes:
    return hashlib.sha256(b).digest()


def le_u32(x: int) -> bytes:
    return struct.pack("<I", x)


def le_u64(x: int) -> bytes:
    if not 0 <= x <= U64_MAX:
        raise Rejected(f"{x} does not fit in u64")
    return struct.pack("<Q", x)


def utf8(s: str) -> bytes:
    """A JSON string's unescaped UTF-8 bytes. A lone surrogate (from an
    unpaired \\uD800-style escape) has none: the contract rejects it."""
    try:
        return s.encode("utf-8")
    except UnicodeEncodeError as e:
        raise Rejected(f"string {s!r} holds an unpaired surrogate escape") from e


# ---- JSON, with the contract's rules on top of RFC 8259 (§3) ----


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[bytes, Any] = {}
    for k, _ in pairs:
        kb = utf8(k)
        if kb in seen:
            raise Rejected(f"key {k!r} appears twice in one object")
        seen[kb] = True
    return dict(pairs)


def _no_constant(name: str) -> Any:
    raise Rejected(f"{name} is not JSON")


def _depth(v: Any) -> int:
    """Nesting depth of containers: the top-level object is 1."""
    if isinstance(v, dict):
        return 1 + max((_depth(x) for x in v.values()), default=0)
    if isinstance(v, list):
        return 1 + max((_depth(x) for x in v), default=0)
    return 0


def _check_strings(v: Any) -> None:
    if isinstance(v, str):
        utf8(v)
    elif isinstance(v, dict):
        for k, x in v.items():
            utf8(k)
            _check_strings(x)
    elif isinstance(v, list):
        for x in v:
            _check_strings(x)


class Num(str):
    """A JSON number kept as its token (parse_json(..., numbers_as_written=True))."""


def parse_json(raw: bytes, what: str, numbers_as_written: bool = False) -> dict[str, Any]:
    """One JSON object, JSON whitespace around it allowed and nothing else.
    With numbers_as_written, every number is a Num holding its token."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise Rejected(f"{what}: not UTF-8 ({e})") from e
    stripped = text.strip(JSON_WS.decode())
    if not stripped:
        raise Rejected(f"{what}: empty")
    try:
        # Python's json is recursive; a header nested past the limit is
        # refused by the depth check (or by Python's own recursion limit).
        hooks = {"parse_int": Num, "parse_float": Num} if numbers_as_written else {}
        v = json.loads(stripped, object_pairs_hook=_no_duplicates, parse_constant=_no_constant, **hooks)
    except RecursionError as e:
        raise Rejected(f"{what}: nested too deep") from e
    except json.JSONDecodeError as e:
        raise Rejected(f"{what}: not one JSON value ({e})") from e
    if not isinstance(v, dict):
        raise Rejected(f"{what}: not a JSON object")
    if _depth(v) > MAX_DEPTH:
        raise Rejected(f"{what}: nested deeper than {MAX_DEPTH}")
    _check_strings(v)
    return v


def _u64(v: Any, what: str) -> int:
    # json gives int only for integers written without fraction or exponent.
    if type(v) is not int or not 0 <= v <= U64_MAX:
        raise Rejected(f"{what}: {v!r} is not an integer in 0..2^64-1")
    return v


# ---- one file (§3) ----


@dataclass
class Tensor:
    name: bytes
    dtype: str
    shape: list[int]
    begin: int
    end: int
    path: Path
    data_start: int  # 8 + N

    @property
    def nbytes(self) -> int:
        return self.end - self.begin


@dataclass
class StFile:
    path: Path
    data_start: int
    metadata: dict[bytes, bytes]
    tensors: list[Tensor] = field(default_factory=list)


def nbytes(dtype: str, shape: list[int], what: str) -> int:
    bits = DTYPE_BITS.get(dtype)
    if bits is None:
        raise Rejected(f"{what}: unknown dtype {dtype!r}")
    n = 1
    for d in shape:
        n *= d
        if n > U64_MAX:
            raise Rejected(f"{what}: element count overflows u64")
    total = n * bits
    if total > U64_MAX:
        raise Rejected(f"{what}: size in bits overflows u64")
    if total % 8:
        raise Rejected(f"{what}: {n} elements of {bits} bits are not whole bytes")
    return total // 8


def parse_file(path: Path) -> StFile:
    size = path.stat().st_size
    with open(path, "rb") as f:
        head = f.read(8)
        if len(head) < 8:
            raise Rejected(f"{path}: shorter than 8 bytes")
        (n,) = struct.unpack("<Q", head)
        if n > MAX_HEADER:
            raise Rejected(f"{path}: header length {n} over {MAX_HEADER}")
        if 8 + n > size:
            raise Rejected(f"{path}: header length {n} past the end of the file ({size} bytes)")
        raw = f.read(n)
    header = parse_json(raw, f"{path}: header")
    data_start = 8 + n
    data_len = size - data_start
    metadata: dict[bytes, bytes] = {}
    if "__metadata__" in header:
        m = header.pop("__metadata__")
        if m is None:  # §3, revision 2: null is no metadata
            m = {}
        if not isinstance(m, dict) or not all(isinstance(v, str) for v in m.values()):
            raise Rejected(f"{path}: __metadata__ is not an object of strings")
        metadata = {utf8(k): utf8(v) for k, v in m.items()}
    out = StFile(path, data_start, metadata)
    for name, info in header.items():
        what = f"{path}: tensor {name!r}"
        if not isinstance(info, dict):
            raise Rejected(f"{what}: not an object")
        dtype, shape, offsets = info.get("dtype"), info.get("shape"), info.get("data_offsets")
        if not isinstance(dtype, str):
            raise Rejected(f"{what}: dtype is not a string")
        if not isinstance(shape, list):
            raise Rejected(f"{what}: shape is not an array")
        shape = [_u64(d, f"{what}: shape") for d in shape]
        if not isinstance(offsets, list) or len(offsets) != 2:
            raise Rejected(f"{what}: data_offsets is not two integers")
        begin, end = (_u64(o, f"{what}: data_offsets") for o in offsets)
        if begin > end:
            raise Rejected(f"{what}: data_offsets [{begin}, {end}] run backwards")
        want = nbytes(dtype, shape, what)
        if end - begin != want:
            raise Rejected(f"{what}: {end - begin} bytes, its dtype and shape make {want}")
        out.tensors.append(Tensor(utf8(name), dtype, shape, begin, end, path, data_start))
    # The ranges tile the data region exactly.
    at = 0
    for t in sorted(out.tensors, key=lambda t: (t.begin, t.end)):
        if t.begin != at:
            kind = "a hole" if t.begin > at else "an overlap"
            raise Rejected(f"{path}: tensor {t.name!r}: {kind} before data offset {t.begin}")
        at = t.end
    if at != data_len:
        raise Rejected(f"{path}: tensors end at {at}, the data region has {data_len} bytes")
    return out


# ---- models of several files (§4, §5) ----


def plain_name(name: Any, index: Path) -> str:
    if not isinstance(name, str) or name in ("", ".", "..") or any(c in name for c in "/\\\0"):
        raise Rejected(f"{index}: weight_map names {name!r}, not a plain file name")
    return name


def from_index(index: Path) -> list[StFile]:
    if index.stat().st_size > MAX_HEADER:
        raise Rejected(f"{index}: over {MAX_HEADER} bytes")
    doc = parse_json(index.read_bytes(), f"{index}")
    wm = doc.get("weight_map")
    if not isinstance(wm, dict):
        raise Rejected(f"{index}: no weight_map object")
    extra: dict[bytes, bytes] = {}
    # §5, revision 2: `metadata: null` is none; `total_size` and
    # `total_parameters` are derived, any JSON value, never content.
    if doc.get("metadata") is not None:
        m = doc["metadata"]
        if not isinstance(m, dict):
            raise Rejected(f"{index}: metadata is not an object")
        for k, v in m.items():
            if k in DERIVED:
                continue
            if not isinstance(v, str):
                raise Rejected(f"{index}: metadata {k!r} is not a string")
            extra[utf8(k)] = utf8(v)
    names = {utf8(t): plain_name(f, index) for t, f in wm.items()}
    files = []
    for fname in dict.fromkeys(names.values()):
        st = parse_file(index.parent / fname)
        for k, v in extra.items():
            if st.metadata.get(k, v) != v:
                raise Rejected(f"{index}: metadata {k!r} differs from {fname}'s")
            st.metadata[k] = v
        have = {t.name for t in st.tensors}
        for t in have:
            if names.get(t) != fname:
                raise Rejected(f"{fname}: tensor {t!r} is not listed with this file in {index.name}")
        for t, f in names.items():
            if f == fname and t not in have:
                raise Rejected(f"{index.name}: tensor {t!r} is not in {fname}")
        files.append(st)
    return files


def model_files(path: Path) -> list[StFile]:
    """The files of the model PATH names, each with its applicable metadata."""
    name = path.name
    if name.endswith(INDEX_SUFFIX):
        return from_index(path)
    m = SHARD_NAME.match(name)
    if m and 1 <= int(m["no"]) <= int(m["count"]):
        index = path.parent / (m["prefix"] + INDEX_SUFFIX)
        if index.exists():
            files = from_index(index)
            if not any(os.path.samefile(f.path, path) for f in files):
                raise Rejected(f"{path}: not one of the files of {index.name}")
            return files
        count = int(m["count"])
        shards = [path.parent / f"{m['prefix']}-{i:05d}-of-{count:05d}.safetensors" for i in range(1, count + 1)]
        if int(m["no"]) != 1:
            raise Rejected(f"{path}: a later shard; give the first, {shards[0].name}")
        return [parse_file(p) for p in shards]
    return [parse_file(path)]


# ---- the skeleton (§2, §4) ----


def group_bytes(metadata: dict[bytes, bytes]) -> bytes:
    out = [le_u64(len(metadata))]
    for k in sorted(metadata):
        v = metadata[k]
        out.append(H(k) + le_u64(len(v)) + H(v))
    return b"".join(out)


def tensor_sha256(t: Tensor) -> bytes:
    h = hashlib.sha256()
    with open(t.path, "rb") as f:
        f.seek(t.data_start + t.begin)
        left = t.nbytes
        while left:
            b = f.read(min(left, CHUNK))
            if not b:
                raise Rejected(f"{t.path}: tensor {t.name!r}: file ended early")
            h.update(b)
            left -= len(b)
    return h.digest()


def skeleton(files: list[StFile]) -> bytes:
    groups: dict[bytes, bytes] = {}  # g -> group
    tensors: dict[bytes, tuple[Tensor, bytes]] = {}
    for st in files:
        group = group_bytes(st.metadata)
        g = H(group)
        groups[g] = group
        for t in st.tensors:
            if t.name in tensors:
                raise Rejected(f"tensor {t.name!r} is in {tensors[t.name][0].path.name} and {st.path.name}")
            tensors[t.name] = (t, g)
    out = [MAGIC, le_u32(VERSION), le_u64(len(tensors)), le_u64(len(groups))]
    out += [groups[g] for g in sorted(groups)]
    offset = 0
    for name in sorted(tensors):
        t, g = tensors[name]
        dtype = t.dtype.encode("ascii")
        out.append(H(name) + le_u32(len(dtype)) + dtype + le_u32(len(t.shape)))
        out += [le_u64(d) for d in t.shape]
        out.append(le_u64(offset) + tensor_sha256(t) + g)
        offset += t.nbytes
    return b"".join(out)


def label_model(path: Path | str) -> dict[str, Any]:
    """{"path", "label", "skeleton" (bytes), "tensors", "groups", "files"}."""
    path = Path(path)
    files = model_files(path)
    sk = skeleton(files)
    (t,) = struct.unpack_from("<Q", sk, 8)
    (g,) = struct.unpack_from("<Q", sk, 16)
    return {
        "path": str(path),
        "label": hashlib.sha256(sk).hexdigest(),
        "skeleton": sk,
        "tensors": t,
        "groups": g,
        "files": [str(f.path) for f in files],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="+", type=Path)
    ap.add_argument("--skeleton-hex", action="store_true", help="also print the skeleton in hex")
    ap.add_argument("--json", action="store_true", help="print one JSON line instead")
    args = ap.parse_args()
    models = []
    for p in args.paths:
        try:
            m = label_model(p)
        except (Rejected, OSError) as e:
            print(f"st_oracle: {e}", file=sys.stderr)
            sys.exit(2)
        if args.json:
            models.append({k: v for k, v in m.items() if k != "skeleton"})
            if args.skeleton_hex:
                models[-1]["skeleton"] = m["skeleton"].hex()
            continue
        print(f"{m['label']}  {p}")
        if args.skeleton_hex:
            print(f"skeleton {m['skeleton'].hex()}")
    if args.json:
        print(json.dumps({"models": models}))


if __name__ == "__main__":
    main()
