"""An independent oracle for the Ollama model label (ollama-skeleton-v1).

usage: ollama_oracle.py [--root R] [--json] [--skeleton-hex] [--audit] NAME...
       ollama_oracle.py --gguf [--json] [--skeleton-hex] FILE...

Written from the contracts alone (shared/spec/ollama-skeleton-v1.md, with
canonical-skeleton-v1.md for the GGUF weights and safetensors-skeleton-v1.md
for the tensor blobs; H = SHA-256, LE_u32 / LE_u64 little-endian), sharing no
code with the Rust side:

  * names resolve as the contract says (Ollama's ParseName: defaults
    registry.ollama.ai / library / latest; a part must be a plain path
    component) under --root, else $OLLAMA_MODELS, else ~/.ollama/models;
    the manifest and config are read with the contract's JSON rules, the
    config's numbers kept as the tokens written (json's parse_int /
    parse_float hooks hand over the text);
  * GGUF weights: the GGUF skeleton implemented here, from
    canonical-skeleton-v1.md, with gguf-py's GGUFReader used only to split
    the file into its fields (KV value parts, tensor infos, data start); the
    checks and the canonical encoding are this file's. A blob is labelled as
    one file (split.count above 1 is an error);
  * safetensors weights: scripts/interop/st_oracle.py (itself written from
    safetensors-skeleton-v1.md) over the tensor layers' blobs;
  * every other layer: the SHA-256 of its blob, checked against its digest.

Prints `<label>  <NAME>` per NAME, like sha256sum (--gguf: `<label>  <FILE>`);
--skeleton-hex adds a line `skeleton <hex>`; --json prints instead one JSON
line {"models": [{"name", "manifest", "label", "components": [{"media_type",
"name", "kind", "digest", "layers"}]}]} (--gguf: {"files": [{"path", "label",
"kv_count", "tensor_count", "alignment"}]}). --audit also checks the weights
blobs against their layer digests. A store or file the contract rejects exits
2 with one line on stderr.

Limits of GGUFReader that this oracle inherits (reported as rejections):
keys and tensor names must be UTF-8, and ggml type ids must be in gguf-py
0.19's enum (40 NVFP4 and later are not).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import stat
import struct
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import st_oracle  # noqa: E402
from st_oracle import Rejected  # noqa: E402

U64_MAX = 2**64 - 1
I64_MAX = 2**63 - 1
MAX_JSON = 16 * 1024 * 1024
CHUNK = 1 << 20
MT = "application/vnd.ollama.image."
GGUF_WEIGHTS = {MT + "model", MT + "projector", MT + "adapter", MT + "draft"}
TENSOR = MT + "tensor"
DEFAULTS = ("registry.ollama.ai", "library", None, "latest")


def H(b: bytes) -> bytes:
    return hashlib.sha256(b).digest()


def le32(x: int) -> bytes:
    return struct.pack("<I", x)


def le64(x: int) -> bytes:
    if not 0 <= x <= U64_MAX:
        raise Rejected(f"{x} does not fit in u64")
    return struct.pack("<Q", x)


def align(x: int, a: int) -> int:
    return x + (a - x % a) % a


def file_sha256(path: Path) -> bytes:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK):
            h.update(chunk)
    return h.digest()


# ======================================================================
# GGUF: canonical-skeleton-v1
# ======================================================================

# §2: ggml type id -> (block size, type size).
GGML_TYPES = {
    0: (1, 4), 1: (1, 2), 2: (32, 18), 3: (32, 20), 6: (32, 22), 7: (32, 24), 8: (32, 34), 9: (32, 36),
    10: (256, 84), 11: (256, 110), 12: (256, 144), 13: (256, 176), 14: (256, 210), 15: (256, 292),
    16: (256, 66), 17: (256, 74), 18: (256, 98), 19: (256, 50), 20: (32, 18), 21: (256, 110), 22: (256, 82),
    23: (256, 136), 24: (1, 1), 25: (1, 2), 26: (1, 4), 27: (1, 8), 28: (1, 8), 29: (256, 56), 30: (1, 2),
    34: (256, 54), 35: (256, 66), 39: (32, 17), 40: (64, 36), 41: (128, 18), 42: (64, 18),
}
# §6: big-endian tensor data -> little-endian. Element word size, or the
# offsets of 2-byte halves inside each block.
BE_WORDS = {0: 4, 26: 4, 1: 2, 30: 2, 25: 2, 28: 8, 27: 8, 24: 1, 39: 1, 40: 1}
BE_HALVES = {2: [0], 8: [0], 12: [0, 2], 14: [208]}
# Value types: fixed sizes; 8 STRING and 9 ARRAY are variable.
VALUE_SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
STRING, ARRAY, BOOL = 8, 9, 7
SPLIT_INT_TYPES = {0, 1, 2, 3, 4, 5, 10, 11}
MAX_ARRAY_DEPTH = 8


def le_bytes(part: np.ndarray) -> bytes:
    """A GGUFReader part's value in little-endian (it is a view in the
    file's byte order)."""
    a = np.asarray(part)
    if a.dtype.itemsize > 1 and a.dtype.byteorder not in ("<", "|") and not (
        a.dtype.byteorder == "=" and sys.byteorder == "little"
    ):
        a = a.astype(a.dtype.newbyteorder("<"))
    return a.tobytes()


def part_int(part: np.ndarray) -> int:
    return int(np.asarray(part).reshape(-1)[0])


class KvWalker:
    """Re-encodes a KV's value parts (GGUFReader's flattening) canonically."""

    def __init__(self, parts: list[np.ndarray], what: str) -> None:
        self.parts, self.i, self.what = parts, 0, what

    def take(self) -> np.ndarray:
        if self.i >= len(self.parts):
            raise Rejected(f"{self.what}: value ends early")
        p = self.parts[self.i]
        self.i += 1
        return p

    def wire(self, vtype: int, depth: int) -> bytes:
        """The value's little-endian wire bytes (what follows its type)."""
        if vtype in VALUE_SIZES:
            p = self.take()
            b = le_bytes(p)
            if len(b) != VALUE_SIZES[vtype]:
                raise Rejected(f"{self.what}: value of type {vtype} has {len(b)} bytes")
            if vtype == BOOL and b not in (b"\x00", b"\x01"):
                raise Rejected(f"{self.what}: BOOL byte {b[0]} is neither 0 nor 1")
            return b
        if vtype == STRING:
            n = part_int(self.take())
            data = np.asarray(self.take()).tobytes()
            if len(data) != n:
                raise Rejected(f"{self.what}: string of {n} bytes holds {len(data)}")
            return le64(n) + data
        if vtype == ARRAY:
            if depth + 1 > MAX_ARRAY_DEPTH:
                raise Rejected(f"{self.what}: array nested at depth {depth + 1} (at most {MAX_ARRAY_DEPTH})")
            etype = part_int(self.take())
            count = part_int(self.take())
            if not 0 <= etype <= 12:
                raise Rejected(f"{self.what}: array element type {etype} is not a GGUF value type")
            body = b"".join(self.wire(etype, depth + 1) for _ in range(count))
            return le32(etype) + le64(count) + body
        raise Rejected(f"{self.what}: value type {vtype} is not a GGUF value type")

    def canonical(self, vtype: int) -> bytes:
        """§2 canonical_value."""
        if vtype in VALUE_SIZES:
            out = self.wire(vtype, 0)
        elif vtype == STRING:
            n = part_int(self.take())
            data = np.asarray(self.take()).tobytes()
            if len(data) != n:
                raise Rejected(f"{self.what}: string of {n} bytes holds {len(data)}")
            out = le64(n) + H(data)
        elif vtype == ARRAY:
            etype = part_int(self.take())
            count = part_int(self.take())
            if not 0 <= etype <= 12:
                raise Rejected(f"{self.what}: array element type {etype} is not a GGUF value type")
            payload = b"".join(self.wire(etype, 1) for _ in range(count))
            out = le32(etype) + le64(count) + H(payload)
        else:
            raise Rejected(f"{self.what}: value type {vtype} is not a GGUF value type")
        if self.i != len(self.parts):
            raise Rejected(f"{self.what}: {len(self.parts) - self.i} value parts left over")
        return out


def gguf_byte_order(path: Path) -> str:
    with open(path, "rb") as f:
        head = f.read(8)
    if len(head) < 8 or head[:4] != b"GGUF":
        raise Rejected(f"{path}: not a GGUF file (magic)")
    (le,) = struct.unpack("<I", head[4:])
    (be,) = struct.unpack(">I", head[4:])
    if le in (2, 3):
        return "little"
    if be in (2, 3):
        return "big"
    if 1 in (le, be):
        raise Rejected(f"{path}: GGUF version 1 (32-bit counts) is not supported")
    raise Rejected(f"{path}: version field {le:#x} is 2 or 3 in neither byte order")


def be_to_le(data: bytes, type_id: int, what: str) -> bytes:
    if type_id in BE_WORDS:
        w = BE_WORDS[type_id]
        if w == 1:
            return data
        return np.frombuffer(data, dtype=np.dtype(f">u{w}")).astype(f"<u{w}").tobytes()
    if type_id in BE_HALVES:
        _, size = GGML_TYPES[type_id]
        blocks = np.frombuffer(data, dtype=np.uint8).reshape(-1, size).copy()
        for off in BE_HALVES[type_id]:
            blocks[:, [off, off + 1]] = blocks[:, [off + 1, off]]
        return blocks.tobytes()
    raise Rejected(f"{what}: type {type_id} has no big-endian conversion")


def gguf_model(path: Path, shard: bool = False) -> dict[str, Any]:
    """Everything the skeleton needs from one GGUF file, checked (§3-§6).
    With `shard`, a file whose split.count is above 1 is accepted (the
    caller joins the set, dir_oracle.py) and its integer split keys are
    returned under "split"."""
    from gguf import GGUFReader  # gguf-py, for splitting the file into fields only

    order = gguf_byte_order(path)
    size = path.stat().st_size
    try:
        reader = GGUFReader(str(path))
    except (ValueError, KeyError, IndexError, TypeError, OverflowError) as e:
        raise Rejected(f"{path}: GGUFReader refuses it: {e}") from e
    kvs: dict[bytes, tuple[int, bytes]] = {}
    split: dict[bytes, int] = {}
    for name, field in reader.fields.items():
        if name.startswith("GGUF."):
            continue
        key = np.asarray(field.parts[1]).tobytes()
        if not key:
            raise Rejected(f"{path}: an empty key")
        if key in kvs or key in split:
            raise Rejected(f"{path}: key {key!r} repeated")
        vtype = part_int(field.parts[2])
        what = f"{path}: key {key.decode(errors='replace')!r}"
        canon = KvWalker(list(field.parts[3:]), what).canonical(vtype)
        if key.startswith(b"split."):
            if key in (b"split.no", b"split.count", b"split.tensors.count"):
                if vtype not in SPLIT_INT_TYPES:
                    raise Rejected(f"{what}: type {vtype} is not an integer type")
                v = int.from_bytes(canon, "little", signed=vtype in (1, 3, 5, 11))
                split[key] = v
            else:
                split[key] = 0
            continue
        kvs[key] = (vtype, canon)
    if split.get(b"split.count", 0) > 1 and not shard:
        raise Rejected(f"{path}: split.count {split[b'split.count']}: a shard, not a whole model")
    alignment = 32
    if b"general.alignment" in kvs:
        vtype, canon = kvs[b"general.alignment"]
        (a,) = struct.unpack("<I", canon) if vtype == 4 else (0,)
        if vtype != 4 or a == 0 or a & (a - 1):
            raise Rejected(f"{path}: general.alignment must be a non-zero power of two UINT32")
        alignment = a
    data_start = align(int(reader.data_offset), alignment)
    tensors = []
    for t in reader.tensors:
        _nl, name_p, nd_p, dims_p, type_p, off_p = t.field.parts
        name = np.asarray(name_p).tobytes()
        what = f"{path}: tensor {name.decode(errors='replace')!r}"
        n_dims = part_int(nd_p)
        if n_dims > 4:
            raise Rejected(f"{what}: {n_dims} dims (at most 4)")
        dims = [int(d) for d in np.asarray(dims_p).astype("<u8").reshape(-1)][:n_dims] if n_dims else []
        type_id = part_int(type_p)
        if type_id not in GGML_TYPES:
            raise Rejected(f"{what}: ggml type {type_id} has no size")
        block, tsize = GGML_TYPES[type_id]
        prod = 1
        for d in dims:
            if d > I64_MAX:
                raise Rejected(f"{what}: dim {d} overflows i64")
            prod *= d
            if prod > I64_MAX:
                raise Rejected(f"{what}: element count overflows i64")
        full = (dims + [1, 1, 1, 1])[:4]
        if full[0] % block:
            raise Rejected(f"{what}: dim 0 ({full[0]}) is not a multiple of the block size {block}")
        nbytes = (full[0] // block) * tsize
        for d in full[1:]:
            nbytes *= d
            if nbytes > I64_MAX:
                raise Rejected(f"{what}: size overflows i64")
        shape = list(full)
        while len(shape) > 1 and shape[-1] == 1:
            shape.pop()
        offset = part_int(off_p)
        end = data_start + offset + nbytes
        if end > size:
            raise Rejected(f"{what}: data ends at {end}, past the end of the file ({size})")
        tensors.append({"name": name, "shape": shape, "type": type_id, "offset": offset, "nbytes": nbytes,
                        "pos": data_start + offset, "what": what})
    at = 0
    for t in sorted((t for t in tensors if t["nbytes"]), key=lambda t: (t["offset"], t["nbytes"])):
        if t["offset"] < at:
            raise Rejected(f"{t['what']}: its data overlaps another tensor's")
        at = t["offset"] + t["nbytes"]
    if order == "big":
        for t in tensors:
            if t["type"] not in BE_WORDS and t["type"] not in BE_HALVES:
                raise Rejected(f"{t['what']}: big-endian tensor of type {t['type']} cannot be converted")
    return {"path": path, "order": order, "kvs": kvs, "tensors": tensors, "alignment": alignment, "split": split}


def tensor_digest(path: Path, t: dict[str, Any], order: str) -> bytes:
    h = hashlib.sha256()
    block, tsize = GGML_TYPES[t["type"]]
    step = max(tsize, (CHUNK // tsize) * tsize)
    with open(path, "rb") as f:
        f.seek(t["pos"])
        left = t["nbytes"]
        while left:
            b = f.read(min(left, step))
            if not b:
                raise Rejected(f"{t['what']}: file ended early")
            if order == "big":
                b = be_to_le(b, t["type"], t["what"])
            h.update(b)
            left -= len(b)
    return h.digest()


def gguf_skeleton(m: dict[str, Any]) -> bytes:
    out = [b"GGUF", le32(3), le64(len(m["tensors"])), le64(len(m["kvs"])), le64(m["alignment"])]
    for key in sorted(m["kvs"]):
        vtype, canon = m["kvs"][key]
        out.append(H(key) + le32(vtype) + canon)
    offset = 0
    for t in sorted(m["tensors"], key=lambda t: t["name"]):
        out.append(H(t["name"]) + le32(len(t["shape"])) + b"".join(le64(d) for d in t["shape"]))
        out.append(le32(t["type"]) + le64(offset) + tensor_digest(m["path"], t, m["order"]))
        offset = align(offset + t["nbytes"], m["alignment"])
        if offset > U64_MAX:
            raise Rejected(f"{t['what']}: running offset overflows u64")
    return b"".join(out)


def gguf_label(path: Path) -> tuple[bytes, dict[str, Any]]:
    m = gguf_model(path)
    sk = gguf_skeleton(m)
    return sk, {"kv_count": len(m["kvs"]), "tensor_count": len(m["tensors"]), "alignment": m["alignment"]}


# ======================================================================
# JSON with the contract's rules; numbers kept as written
# ======================================================================


Num = st_oracle.Num


def parse_json(raw: bytes, what: str) -> dict[str, Any]:
    """st_oracle's strict JSON (the same rules), numbers kept as written."""
    if len(raw) > MAX_JSON:
        raise Rejected(f"{what}: {len(raw)} bytes, over {MAX_JSON}")
    return st_oracle.parse_json(raw, what, numbers_as_written=True)


# ======================================================================
# Config: J(c)
# ======================================================================

DERIVED = {
    "model_format", "model_family", "model_families", "model_type", "file_type", "architecture", "os", "rootfs",
    "context_length", "embedding_length", "base_name", "capabilities_explicit",
}
STRING_OR_NULL = ("renderer", "parser", "requires", "remote_host", "remote_model")


def is_zero(v: Any) -> bool:
    if v is None or v is False:
        return True
    if isinstance(v, Num):
        mantissa = v.lower().split("e", 1)[0]
        return all(c == "0" for c in mantissa if c.isdigit())
    if isinstance(v, str):
        return v == ""
    if isinstance(v, (list, dict)):
        return len(v) == 0
    return False


def prune(v: Any) -> Any:
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            px = prune(x)
            if not is_zero(px):
                out[k] = px
        return out
    if isinstance(v, list):
        return [prune(x) for x in v]
    return v


def J(v: Any) -> bytes:
    if isinstance(v, dict):
        items = sorted((st_oracle.utf8(k), x) for k, x in v.items())
        return b"o" + le64(len(items)) + b"".join(H(k) + J(x) for k, x in items)
    if isinstance(v, list):
        return b"a" + le64(len(v)) + b"".join(J(x) for x in v)
    if isinstance(v, Num):
        t = v.encode("ascii")
        return b"n" + le64(len(t)) + t
    if isinstance(v, str):
        return b"s" + H(st_oracle.utf8(v))
    if v is True:
        return b"t"
    if v is False:
        return b"f"
    if v is None:
        return b"z"
    raise Rejected(f"config: unexpected value {v!r}")


def config_content(doc: dict[str, Any]) -> dict[str, Any]:
    for k in STRING_OR_NULL:
        if k in doc and doc[k] is not None and (not isinstance(doc[k], str) or isinstance(doc[k], Num)):
            raise Rejected(f"config: {k} is neither a string nor null")
    explicit = doc.get("capabilities_explicit") is True
    c = {k: v for k, v in doc.items() if k not in DERIVED and not (k == "capabilities" and not explicit)}
    return prune(c)


# ======================================================================
# The store
# ======================================================================


def parse_name(s: str) -> tuple[str, str, str, str]:
    """ParseName with the defaults; a part a separator promised but left
    empty is an error."""
    host = namespace = tag = None

    def cut(s: str, sep: str) -> tuple[str, str] | None:
        i = s.rfind(sep)
        if i < 0:
            return None
        return s[:i], s[i + len(sep) :]

    if s.rfind(":") > s.rfind("/"):
        s, tag = cut(s, ":")  # type: ignore[misc]
        if not s or not tag:
            raise Rejected("name: an empty part around ':'")
    c = cut(s, "/")
    if c is None:
        model = s
    else:
        s, model = c
        if not s or not model:
            raise Rejected("name: an empty part around '/'")
        c = cut(s, "/")
        if c is None:
            namespace = s
        else:
            s, namespace = c
            if not s or not namespace:
                raise Rejected("name: an empty part around '/'")
            scheme, sep, rest = s.partition("://")
            host = rest if sep else s
    parts = (host or DEFAULTS[0], namespace or DEFAULTS[1], model, tag or DEFAULTS[3])
    for p in parts:
        if p in ("", ".", "..") or any(ch in p for ch in "/\\\0"):
            raise Rejected(f"name: part {p!r} is not a plain path component")
    return parts


def default_root() -> Path:
    env = os.environ.get("OLLAMA_MODELS", "")
    return Path(env) if env else Path.home() / ".ollama" / "models"


def blob_path(root: Path, digest: Any, size: Any, what: str) -> Path:
    if not isinstance(digest, str) or isinstance(digest, Num):
        raise Rejected(f"{what}: digest is not a string")
    algo, sep, hexd = digest.partition(":")
    if algo != "sha256" or not sep or len(hexd) != 64 or any(c not in "0123456789abcdefABCDEF" for c in hexd):
        raise Rejected(f"{what}: digest {digest!r} is not sha256:<64 hex>")
    p = root / "blobs" / f"sha256-{hexd.lower()}"
    try:
        st = p.stat()
    except OSError as e:
        raise Rejected(f"{what}: blob {p}: {e.strerror}") from e
    if not stat.S_ISREG(st.st_mode):
        raise Rejected(f"{what}: blob {p} is not a regular file")
    if st.st_size != size:
        raise Rejected(f"{what}: blob {p} has {st.st_size} bytes, the layer says {size}")
    return p


def layer_fields(layer: Any, what: str) -> tuple[str, str, int, str]:
    if not isinstance(layer, dict):
        raise Rejected(f"{what}: not an object")
    mt, digest, size, name = layer.get("mediaType"), layer.get("digest"), layer.get("size"), layer.get("name", "")
    if not isinstance(mt, str) or isinstance(mt, Num):
        raise Rejected(f"{what}: mediaType is not a string")
    if not isinstance(size, Num) or not re.fullmatch(r"0|[1-9][0-9]*", size):
        raise Rejected(f"{what}: size is not an integer >= 0 (written without fraction or exponent)")
    if not isinstance(name, str) or isinstance(name, Num):
        raise Rejected(f"{what}: name is not a string")
    return mt, digest, int(size), name


def hex_of(digest: str) -> str:
    return digest.partition(":")[2].lower()


def label_name(root: Path, name: str, audit: bool = False) -> dict[str, Any]:
    parts = parse_name(name)
    mpath = root.joinpath("manifests", *parts)
    try:
        if mpath.stat().st_size > MAX_JSON:
            raise Rejected(f"{mpath}: over {MAX_JSON} bytes")
        raw = mpath.read_bytes()
    except OSError as e:
        raise Rejected(f"{name}: manifest {mpath}: {e.strerror}") from e
    doc = parse_json(raw, f"{mpath}")
    sv = doc.get("schemaVersion")
    if not isinstance(sv, Num) or sv != "2":
        raise Rejected(f"{mpath}: schemaVersion is not 2")
    layers = doc.get("layers")
    if not isinstance(layers, list):
        raise Rejected(f"{mpath}: no layers array")
    if "config" not in doc:
        raise Rejected(f"{mpath}: no config layer")
    comps: list[dict[str, Any]] = []

    # Config (§3.3).
    cmt, cdig, csize, _ = layer_fields(doc["config"], f"{mpath}: config")
    cpath = blob_path(root, cdig, csize, f"{mpath}: config")
    if csize > MAX_JSON:
        raise Rejected(f"{cpath}: config over {MAX_JSON} bytes")
    craw = cpath.read_bytes()
    if hashlib.sha256(craw).hexdigest() != hex_of(cdig):
        raise Rejected(f"{cpath}: config bytes do not match digest {cdig} (the store is damaged)")
    content = config_content(parse_json(craw, f"{cpath}: config"))
    comps.append({"media_type": cmt, "name": "", "kind": "config", "digest": H(J(content)), "layers": [cdig],
                  "content": content})

    tensor_blobs: list[tuple[Path, str]] = []
    for i, layer in enumerate(layers):
        what = f"{mpath}: layer {i}"
        mt, dig, size, lname = layer_fields(layer, what)
        path = blob_path(root, dig, size, what)
        if mt == TENSOR:
            tensor_blobs.append((path, dig))
            continue
        kind = "blob"
        if mt in GGUF_WEIGHTS:
            with open(path, "rb") as f:
                magic = f.read(4)
            if magic == b"GGUF":
                sk, _info = gguf_label(path)
                comps.append({"media_type": mt, "name": lname, "kind": "gguf", "digest": H(sk), "layers": [dig]})
                if audit and file_sha256(path).hex() != hex_of(dig):
                    raise Rejected(f"{path}: bytes do not match digest {dig} (audit)")
                continue
        d = file_sha256(path)
        if d.hex() != hex_of(dig):
            raise Rejected(f"{path}: bytes do not match digest {dig} (the store is damaged)")
        comps.append({"media_type": mt, "name": lname, "kind": kind, "digest": d, "layers": [dig]})

    if tensor_blobs:
        files = [st_oracle.parse_file(p) for p, _ in tensor_blobs]
        sk = st_oracle.skeleton(files)
        comps.append({"media_type": TENSOR, "name": "", "kind": "safetensors", "digest": H(sk),
                      "layers": [d for _, d in tensor_blobs]})
        if audit:
            for p, d in tensor_blobs:
                if file_sha256(p).hex() != hex_of(d):
                    raise Rejected(f"{p}: bytes do not match digest {d} (audit)")

    comps.sort(key=lambda c: (c["media_type"].encode(), c["name"].encode(), c["digest"]))
    skel = [b"OLMA", le32(1), le64(len(comps))]
    skel += [H(c["media_type"].encode()) + H(c["name"].encode()) + c["digest"] for c in comps]
    sk = b"".join(skel)
    return {"name": name, "manifest": str(mpath), "label": hashlib.sha256(sk).hexdigest(), "skeleton": sk,
            "components": comps}


def json_ready(v: Any) -> Any:
    if isinstance(v, Num):
        return {"number": str(v)}
    if isinstance(v, dict):
        return {k: json_ready(x) for k, x in v.items()}
    if isinstance(v, list):
        return [json_ready(x) for x in v]
    return v


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="+")
    ap.add_argument("--root", type=Path, help="the store (default: $OLLAMA_MODELS, else ~/.ollama/models)")
    ap.add_argument("--gguf", action="store_true", help="label plain GGUF files instead (one file each)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--skeleton-hex", action="store_true")
    ap.add_argument("--audit", action="store_true", help="also check weights blobs against their digests")
    args = ap.parse_args()
    root = args.root or default_root()
    out: list[dict[str, Any]] = []
    for n in args.names:
        try:
            if args.gguf:
                sk, info = gguf_label(Path(n))
                m = {"path": n, "label": hashlib.sha256(sk).hexdigest(), "skeleton": sk, **info}
            else:
                m = label_name(root, n, audit=args.audit)
        except (Rejected, OSError) as e:
            print(f"ollama_oracle: {e}", file=sys.stderr)
            sys.exit(2)
        if args.json:
            entry = {k: v for k, v in m.items() if k != "skeleton"}
            if "components" in entry:
                entry["components"] = [
                    {**{k: v for k, v in c.items() if k != "content"}, "digest": c["digest"].hex(),
                     **({"content": json_ready(c["content"])} if "content" in c else {})}
                    for c in m["components"]
                ]
            if args.skeleton_hex:
                entry["skeleton"] = m["skeleton"].hex()
            out.append(entry)
            continue
        print(f"{m['label']}  {n}")
        if args.skeleton_hex:
            print(f"skeleton {m['skeleton'].hex()}")
    if args.json:
        print(json.dumps({"files" if args.gguf else "models": out}))


if __name__ == "__main__":
    main()
