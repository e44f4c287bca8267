"""Interop (c): a synthetic model written by gguf-py's GGUFWriter with
tensors of types F32, F16, BF16, Q4_0, Q8_0, Q4_K and Q6_K (seeded random
bytes, whole blocks; BF16 and the quantized types handed over as raw bytes
with raw_dtype) and KVs of every GGUF value type: each scalar type, STRING,
arrays of each scalar type, of strings and of bools, and nested arrays
(arrays of arrays of INT32, of UINT8, of STRING, and three deep).

usage: write_all_types.py OUT [--seed N] [--alignment N] [--large]

With --large it also writes Q4_0, Q8_0, Q4_K and Q6_K tensors of 9 to 17
MiB: larger than gguf-digest's 8 MiB map window, with blocks (18, 34, 144,
210 bytes) that do not divide it, so big-endian blocks straddle windows.

The written file is read back with GGUFReader and checked here: every KV has
the intended value type (and array element types, at every depth), and
every tensor the intended type, dims and bytes. These are the types
gguf-py's gguf-convert-endian can byte-swap, so the Rust test can then
convert a copy to big-endian with it.

Prints {"kv_types": {key: [types...]}, "tensors": {name: type}} as JSON.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from common import (
    GGMLQuantizationType,
    GGUFReader,
    GGUFValueType,
    GGUFWriter,
    emit,
    fail,
    kv_fields,
)
from gguf.constants import GGML_QUANT_SIZES

T = GGUFValueType
Q = GGMLQuantizationType

# (name, type, numpy shape in elements). Row lengths are whole blocks.
TENSORS = [
    ("f32.matrix", Q.F32, (3, 8)),
    ("f32.trailing_one", Q.F32, (1, 4)),  # dims [4, 1]: one shape with [4]
    ("f32.four_d", Q.F32, (2, 1, 3, 2)),
    ("f16.weight", Q.F16, (2, 16)),
    ("bf16.weight", Q.BF16, (4, 16)),
    ("q4_0.weight", Q.Q4_0, (2, 64)),
    ("q8_0.weight", Q.Q8_0, (3, 64)),
    ("q4_k.weight", Q.Q4_K, (2, 256)),
    ("q6_k.weight", Q.Q6_K, (1, 512)),
]

MIB = 1 << 20
# (name, type, shape): each over 8 MiB, a whole number of blocks.
LARGE_TENSORS = [
    ("large.q4_0", Q.Q4_0, (1, 32 * (9 * MIB // 18 + 1))),
    ("large.q8_0", Q.Q8_0, (1, 32 * (9 * MIB // 34 + 1))),
    ("large.q4_k", Q.Q4_K, (2, 256 * (5 * MIB // 144 + 1))),
    ("large.q6_k", Q.Q6_K, (1, 256 * (17 * MIB // 210 + 1))),
]


def tensor_data(rng: np.random.Generator, qtype: GGMLQuantizationType, shape: tuple[int, ...]) -> np.ndarray:
    """Random bytes of the right size, as the array add_tensor expects."""
    if qtype == Q.F32:
        return rng.standard_normal(shape).astype(np.float32)
    if qtype == Q.F16:
        # Random bit patterns (NaNs and all): bytes are bytes.
        return rng.integers(0, 2**16, size=shape, dtype=np.uint16).view(np.float16)
    block, size = GGML_QUANT_SIZES[qtype]
    if shape[-1] % block:
        fail(f"{qtype.name}: row of {shape[-1]} is not whole blocks of {block}")
    byte_shape = (*shape[:-1], shape[-1] // block * size)
    return rng.integers(0, 256, size=byte_shape, dtype=np.uint8)


def kv_table() -> list[tuple[str, object, GGUFValueType, GGUFValueType | None, list[str]]]:
    """(key, value, type, array element type, expected GGUFReader types)."""
    a = T.ARRAY
    return [
        ("t.uint8", 200, T.UINT8, None, ["UINT8"]),
        ("t.int8", -100, T.INT8, None, ["INT8"]),
        ("t.uint16", 65000, T.UINT16, None, ["UINT16"]),
        ("t.int16", -32000, T.INT16, None, ["INT16"]),
        ("t.uint32", 4_000_000_000, T.UINT32, None, ["UINT32"]),
        ("t.int32", -2_000_000_000, T.INT32, None, ["INT32"]),
        ("t.float32", 3.14159, T.FLOAT32, None, ["FLOAT32"]),
        ("t.float32.neg_zero", -0.0, T.FLOAT32, None, ["FLOAT32"]),
        ("t.float32.inf", math.inf, T.FLOAT32, None, ["FLOAT32"]),
        ("t.bool.true", True, T.BOOL, None, ["BOOL"]),
        ("t.bool.false", False, T.BOOL, None, ["BOOL"]),
        ("t.string", "héllo, wörld ✓", T.STRING, None, ["STRING"]),
        ("t.string.empty", "", T.STRING, None, ["STRING"]),
        ("t.uint64", 2**64 - 1, T.UINT64, None, ["UINT64"]),
        ("t.int64", -(2**63), T.INT64, None, ["INT64"]),
        ("t.float64", -1.0e300, T.FLOAT64, None, ["FLOAT64"]),
        ("t.array.uint8", [0, 1, 255], a, T.UINT8, ["ARRAY", "UINT8"]),
        ("t.array.int8", [-128, 0, 127], a, T.INT8, ["ARRAY", "INT8"]),
        ("t.array.uint16", [1, 65535], a, T.UINT16, ["ARRAY", "UINT16"]),
        ("t.array.int16", [-32768, 32767], a, T.INT16, ["ARRAY", "INT16"]),
        ("t.array.uint32", [7, 4_294_967_295], a, T.UINT32, ["ARRAY", "UINT32"]),
        ("t.array.int32", [-1, 2, -3], a, T.INT32, ["ARRAY", "INT32"]),
        ("t.array.float32", [0.5, -2.25, 1e-3], a, T.FLOAT32, ["ARRAY", "FLOAT32"]),
        ("t.array.uint64", [2**64 - 1, 0], a, T.UINT64, ["ARRAY", "UINT64"]),
        ("t.array.int64", [-(2**63), 2**63 - 1], a, T.INT64, ["ARRAY", "INT64"]),
        ("t.array.float64", [math.pi, -0.0], a, T.FLOAT64, ["ARRAY", "FLOAT64"]),
        ("t.array.bool", [True, False, True], a, T.BOOL, ["ARRAY", "BOOL"]),
        ("t.array.string", ["alpha", "", "γάμμα"], a, T.STRING, ["ARRAY", "STRING"]),
        # Nested arrays: GGUFWriter infers the inner element type per item
        # (int -> INT32, bytes -> UINT8, str -> STRING, list -> ARRAY, float -> FLOAT32).
        ("t.nested.int32", [[1, 2, 3], [4, 5]], a, T.ARRAY, ["ARRAY", "ARRAY", "INT32"]),
        ("t.nested.uint8", [b"\x00\x01\xff", b"\x7f"], a, T.ARRAY, ["ARRAY", "ARRAY", "UINT8"]),
        ("t.nested.string", [["a", "bc"], ["def"]], a, T.ARRAY, ["ARRAY", "ARRAY", "STRING"]),
        ("t.nested.deep", [[[1.5, 2.5]], [[-3.5]]], a, T.ARRAY, ["ARRAY", "ARRAY", "ARRAY", "FLOAT32"]),
    ]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--alignment", type=int, default=64)
    ap.add_argument("--large", action="store_true", help="add tensors over 8 MiB")
    args = ap.parse_args()
    tensor_table = TENSORS + (LARGE_TENSORS if args.large else [])

    rng = np.random.default_rng(args.seed)
    w = GGUFWriter(args.out, arch="interop")
    w.add_custom_alignment(args.alignment)
    table = kv_table()
    for key, value, vtype, sub_type, _ in table:
        # add_key_value, not add_string/add_array: those silently drop empty values.
        w.add_key_value(key, value, vtype, sub_type=sub_type)
    expected_data = {}
    for name, qtype, shape in tensor_table:
        data = tensor_data(rng, qtype, shape)
        expected_data[name] = data.tobytes()
        if qtype in (Q.F32, Q.F16):
            w.add_tensor(name, data)
        else:
            w.add_tensor(name, data, raw_dtype=qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()

    r = GGUFReader(args.out)
    fields = kv_fields(r)
    expected_types = {k: t for k, _, _, _, t in table}
    expected_types["general.architecture"] = ["STRING"]
    expected_types["general.alignment"] = ["UINT32"]
    got_types = {k: [t.name for t in f.types] for k, f in fields.items()}
    if got_types != expected_types:
        diff = {k: (expected_types.get(k), got_types.get(k)) for k in set(expected_types) | set(got_types)}
        fail(f"KV types differ: { {k: v for k, v in diff.items() if v[0] != v[1]} }")
    if r.alignment != args.alignment:
        fail(f"alignment {r.alignment}, expected {args.alignment}")
    # Spot-check a few values through GGUFReader's own decoding.
    checks = {"t.int64": -(2**63), "t.uint64": 2**64 - 1, "t.string": "héllo, wörld ✓", "t.string.empty": ""}
    for key, want in checks.items():
        if fields[key].contents() != want:
            fail(f"{key}: read back {fields[key].contents()!r}, wrote {want!r}")
    tensors = {}
    for t in r.tensors:
        name = t.name
        spec = {n: (q, s) for n, q, s in tensor_table}.get(name)
        if spec is None:
            fail(f"unexpected tensor {name!r}")
        qtype, shape = spec
        if t.tensor_type != qtype:
            fail(f"{name}: type {t.tensor_type.name}, expected {qtype.name}")
        if t.shape.tolist() != list(reversed(shape)):
            fail(f"{name}: dims {t.shape.tolist()}, expected {list(reversed(shape))}")
        if t.data.tobytes() != expected_data[name]:
            fail(f"{name}: data differs from what was written")
        tensors[name] = qtype.name
    if len(tensors) != len(tensor_table):
        fail(f"read back {len(tensors)} tensors, wrote {len(tensor_table)}")

    emit({"kv_types": got_types, "tensors": tensors})


if __name__ == "__main__":
    main()
