"""The PyTorch label computed from what real PyTorch loads (oracle 2).

usage: pt_torch_oracle.py [--json] PATH...

Each PATH (a checkpoint, a shard `P-NNNNN-of-MMMMM.bin` or a
`*.bin.index.json`) is loaded by `torch.load(f, weights_only=True,
map_location="cpu")` -- PyTorch's own restricted unpickler, nothing of this
project -- and the label of docs/SPEC.md Part V (P7) is computed from the
objects it built: every tensor's elements are
`tensor.contiguous()`'s bytes (little-endian on this machine), whatever the
file's layout, strides, sharing or byte order. It shares no code with the
crate or with pt_oracle.py.

Runs with the Python that has torch (Debian's python3-torch by default,
see scripts/setup-python.sh), not the venv's. Prints `<label>  <path>` per
PATH; with --json one JSON line {"models": [{"path", "label"} or {"path",
"error"}], "torch": version}; a file torch refuses is an "error" there.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import pickle
import re
import struct
import sys
from pathlib import Path
from typing import Any

import torch

DTYPE = {
    torch.float64: "F64",
    torch.float32: "F32",
    torch.float16: "F16",
    torch.bfloat16: "BF16",
    torch.int64: "I64",
    torch.int32: "I32",
    torch.int16: "I16",
    torch.int8: "I8",
    torch.uint8: "U8",
    torch.bool: "BOOL",
    torch.complex64: "C64",
    torch.complex128: "C128",
}
for _name, _label in [
    ("float8_e4m3fn", "F8_E4M3"),
    ("float8_e5m2", "F8_E5M2"),
    ("float8_e4m3fnuz", "F8_E4M3FNUZ"),
    ("float8_e5m2fnuz", "F8_E5M2FNUZ"),
    ("float8_e8m0fnu", "F8_E8M0"),
    ("uint16", "U16"),
    ("uint32", "U32"),
    ("uint64", "U64"),
]:
    if hasattr(torch, _name):
        DTYPE[getattr(torch, _name)] = _label

SHARD = re.compile(r"^(?P<prefix>.*)-(?P<no>\d{5})-of-(?P<count>\d{5})\.bin$", re.DOTALL)


def H(b: bytes) -> bytes:
    return hashlib.sha256(b).digest()


def u32(x: int) -> bytes:
    return struct.pack("<I", x)


def u64(x: int) -> bytes:
    return struct.pack("<Q", x)


def element_bytes(t: torch.Tensor) -> bytes:
    """The tensor's elements in row-major order, little-endian."""
    assert sys.byteorder == "little"
    flat = t.detach().contiguous().reshape(-1)
    if flat.dtype in (torch.complex64, torch.complex128):
        flat = torch.view_as_real(flat).reshape(-1)
    return flat.view(torch.uint8).numpy().tobytes()


class Labeller:
    def __init__(self) -> None:
        self.digests: dict[int, bytes] = {}
        self.keep: list[Any] = []  # ids stay valid while labelling

    def value(self, v: Any, path: frozenset[int]) -> bytes:
        if v is None:
            return b"\x00"
        if v is False:
            return b"\x01"
        if v is True:
            return b"\x02"
        if type(v) is int:
            if v == 0:
                return b"\x03" + u32(0)
            n = ((v if v > 0 else ~v).bit_length() + 8) // 8
            return b"\x03" + u32(n) + v.to_bytes(n, "little", signed=True)
        if type(v) is float:
            return b"\x04" + struct.pack("<d", v)
        if type(v) is complex:
            return b"\x05" + struct.pack("<dd", v.real, v.imag)
        if type(v) is str:
            return b"\x06" + H(v.encode("utf-8", "surrogatepass"))
        if type(v) in (bytes, bytearray):
            return b"\x07" + H(bytes(v))
        if isinstance(v, torch.dtype):
            return b"\x0f" + H(DTYPE[v].encode())
        if isinstance(v, torch.device):
            return b"\x10" + self.value(v.type, path) + self.value(v.index, path)
        if isinstance(v, torch.Tensor):
            return self.tensor(v, path)
        if id(v) in path:
            raise ValueError("a structure that contains itself")
        inner = path | {id(v)}
        if isinstance(v, tuple):  # torch.Size too
            return b"\x08" + u64(len(v)) + b"".join(self.value(x, inner) for x in v)
        if type(v) is list:
            return b"\x09" + u64(len(v)) + b"".join(self.value(x, inner) for x in v)
        if type(v) in (set, frozenset):
            return b"\x0a" + u64(len(v)) + b"".join(sorted(self.value(x, inner) for x in v))
        if type(v) in (dict, collections.OrderedDict, collections.Counter):
            plain = self.mapping(v, inner)
            attrs = getattr(v, "__dict__", None)
            if not attrs:
                return plain
            return b"\x0c" + plain + self.mapping(attrs, inner)
        raise ValueError(f"a {type(v).__name__} left in the tree")

    def mapping(self, m: Any, path: frozenset[int]) -> bytes:
        for k in m:
            if type(k) not in (str, int):
                raise ValueError(f"mapping key {k!r}")
        entries = sorted((self.value(k, path), self.value(x, path)) for k, x in m.items())
        return b"\x0b" + u64(len(entries)) + b"".join(k + x for k, x in entries)

    def tensor(self, t: torch.Tensor, path: frozenset[int]) -> bytes:
        if t.layout != torch.strided or t.is_quantized or t.device.type != "cpu":
            raise ValueError(f"not a dense CPU tensor: {t.layout}")
        d = self.digests.get(id(t))
        if d is None:
            d = H(element_bytes(t))
            self.digests[id(t)] = d
            self.keep.append(t)
        name = DTYPE[t.dtype].encode()
        plain = b"\x0d" + u32(len(name)) + name + u32(t.dim()) + b"".join(u64(s) for s in t.shape) + d
        attrs = t.__dict__
        if not attrs:
            return plain
        return b"\x0e" + plain + self.mapping(attrs, path)


# What `torch.load(weights_only=True)` lets a pickle name (PyTorch 2.6's
# default list, as far as a state dict uses it); only for the fallback below.
ALLOWED = {
    ("collections", "OrderedDict"),
    ("collections", "Counter"),
    ("torch._utils", "_rebuild_tensor"),
    ("torch._utils", "_rebuild_tensor_v2"),
    ("torch._utils", "_rebuild_tensor_v3"),
    ("torch._utils", "_rebuild_parameter"),
    ("torch._utils", "_rebuild_parameter_with_state"),
    ("torch._tensor", "_rebuild_from_type_v2"),
    ("torch", "Tensor"),
    ("torch.nn.parameter", "Parameter"),
    ("torch", "Size"),
    ("torch", "device"),
    ("_codecs", "encode"),
    *(("torch", n) for n in dir(torch) if n.endswith("Storage")),
    *(("torch", str(d).split(".", 1)[1]) for d in DTYPE),
    *((m, n) for m in ("builtins", "__builtin__") for n in ("set", "bytearray", "complex")),
}


class _RestrictedUnpickler(pickle.Unpickler):
    """Python's own unpickler, importing nothing but ALLOWED."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in ALLOWED:
            raise pickle.UnpicklingError(f"global {module}.{name} is not allowed")
        return super().find_class(module, name)


class _RestrictedPickle:
    """A `pickle_module` for torch.load: Python's pickle, restricted."""

    __name__ = "restricted_pickle"
    Unpickler = _RestrictedUnpickler

    @staticmethod
    def load(f: Any, **kw: Any) -> Any:
        return _RestrictedUnpickler(f, **kw).load()


FALLBACKS: list[str] = []


def torchscript(path: Path) -> bool:
    """torch's own test for a TorchScript archive (torch.load hands those to
    torch.jit.load, which the label refuses)."""
    ser = torch.serialization
    with open(path, "rb") as f:
        if not ser._is_zipfile(f):
            return False
        with ser._open_zipfile_reader(f) as z:
            return bool(ser._is_torchscript_zip(z))


def restricted_load(path: Path) -> Any:
    """What torch.load does with a `pickle_module`, called directly:
    PyTorch 1.13's torch.load replaces any pickle_module by `pickle` itself
    when weights_only is off (so passing one there would run the file)."""
    ser = torch.serialization
    with open(path, "rb") as f:
        if ser._is_zipfile(f):
            with ser._open_zipfile_reader(f) as z:
                return ser._load(z, "cpu", _RestrictedPickle, encoding="utf-8")
        return ser._legacy_load(f, "cpu", _RestrictedPickle, encoding="utf-8")


def load(path: Path) -> Any:
    """torch.load(weights_only=True). PyTorch before 2.0 (Debian 12 ships
    1.13) has no BINFLOAT in its weights-only unpickler, so a checkpoint
    holding a float fails there with "Unsupported operand 71"; only then,
    and only on such a torch, torch's own loader runs with Python's
    unpickler restricted to the same globals (ALLOWED), and the file is
    recorded in FALLBACKS."""
    if torchscript(path):
        raise ValueError("a TorchScript archive (torch.load would hand it to torch.jit.load)")
    try:
        with open(path, "rb") as f:
            return torch.load(f, weights_only=True, map_location="cpu")
    except pickle.UnpicklingError as e:
        old = int(torch.__version__.split(".")[0]) < 2
        if not (old and "Unsupported operand 71" in str(e)):
            raise
    FALLBACKS.append(str(path))
    return restricted_load(path)


def root_of(path: Path) -> Any:
    """The object of a file, or the union of a shard set's mappings."""
    name = path.name
    files = None
    if name.endswith(".bin.index.json"):
        wm = json.loads(path.read_text())["weight_map"]
        files = [path.parent / f for f in dict.fromkeys(wm.values())]
    elif (m := SHARD.match(name)) is not None:
        index = path.parent / (m["prefix"] + ".bin.index.json")
        if index.exists():
            return root_of(index)
        n = int(m["count"])
        files = [path.parent / f"{m['prefix']}-{i:05d}-of-{n:05d}.bin" for i in range(1, n + 1)]
    if files is None:
        return load(path)
    union: dict[str, Any] = {}
    for f in files:
        part = load(f)
        if type(part) not in (dict, collections.OrderedDict) or getattr(part, "__dict__", None):
            raise ValueError(f"{f}: a shard's root is not a plain mapping")
        for k, v in part.items():
            if k in union:
                raise ValueError(f"{f}: key {k!r} in two shards")
            union[k] = v
    return union


def label_path(path: Path | str) -> str:
    root = root_of(Path(path))
    return hashlib.sha256(b"PTCH" + u32(1) + Labeller().value(root, frozenset())).hexdigest()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="+", type=Path)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    models = []
    for p in args.paths:
        try:
            label = label_path(p)
        except Exception as e:  # noqa: BLE001  (torch refuses with many types)
            if not args.json:
                print(f"pt_torch_oracle: {p}: {e}", file=sys.stderr)
                sys.exit(2)
            models.append({"path": str(p), "error": f"{type(e).__name__}: {str(e)[:300]}"})
            continue
        if args.json:
            models.append({"path": str(p), "label": label})
        else:
            print(f"{label}  {p}")
    if args.json:
        print(json.dumps({"models": models, "torch": torch.__version__, "fallbacks": FALLBACKS}))


if __name__ == "__main__":
    main()
