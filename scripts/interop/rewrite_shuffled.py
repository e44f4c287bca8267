"""Interop (b): rewrite a GGUF model with gguf-py's GGUFWriter, tensors and
KVs in a shuffled (seeded) order, plus a second copy with one KV changed.

usage: rewrite_shuffled.py SRC OUT_SAME OUT_CHANGED [--seed N]

Both outputs are read back with GGUFReader and checked here: the same KV
keys with the same value types and value bytes as SRC (except the changed
key in OUT_CHANGED, same type, other value), the same tensors with the same
types, dims and data, and really in another order than SRC.

Prints {"changed_key", "kv_order", "tensor_order", "src_kv_order",
"src_tensor_order"} as JSON.
"""

from __future__ import annotations

import argparse
import random
import struct
from pathlib import Path

from common import (
    GGUFReader,
    GGUFValue,
    GGUFValueType,
    add_reader_tensor,
    assert_same_kvs,
    emit,
    fail,
    field_value,
    finish,
    kv_fields,
    new_writer,
)

# A UINT32 KV every llama model has; its value changes by one.
CHANGED_KEY = "tokenizer.ggml.padding_token_id"


def write_copy(reader: GGUFReader, path: Path, kvs: dict[str, GGUFValue], tensor_order: list[int]) -> None:
    w = new_writer(path, kvs)
    for i in tensor_order:
        add_reader_tensor(w, reader.tensors[i])
    finish(w)


def check_tensors(src: GGUFReader, new: GGUFReader) -> None:
    a = {t.name: t for t in src.tensors}
    b = {t.name: t for t in new.tensors}
    if set(a) != set(b):
        fail(f"tensor sets differ: {sorted(set(a) ^ set(b))[:5]}")
    for name, ta in a.items():
        tb = b[name]
        if ta.tensor_type != tb.tensor_type:
            fail(f"tensor {name!r}: type {ta.tensor_type.name} became {tb.tensor_type.name}")
        if ta.shape.tolist() != tb.shape.tolist():
            fail(f"tensor {name!r}: dims {ta.shape.tolist()} became {tb.shape.tolist()}")
        if ta.data.tobytes() != tb.data.tobytes():
            fail(f"tensor {name!r}: data differs")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("out_same")
    ap.add_argument("out_changed")
    ap.add_argument("--seed", type=int, default=20251121)
    args = ap.parse_args()

    src = GGUFReader(args.src)
    rng = random.Random(args.seed)
    src_kv_order = list(kv_fields(src))
    kv_order = src_kv_order[:]
    while kv_order == src_kv_order:
        rng.shuffle(kv_order)
    src_tensor_order = list(range(len(src.tensors)))
    tensor_order = src_tensor_order[:]
    while tensor_order == src_tensor_order:
        rng.shuffle(tensor_order)
    if CHANGED_KEY not in src_kv_order:
        fail(f"source has no {CHANGED_KEY}")

    fields = kv_fields(src)
    kvs = {key: field_value(fields[key]) for key in kv_order}
    write_copy(src, Path(args.out_same), kvs, tensor_order)
    old_value = kvs[CHANGED_KEY]
    if old_value.type != GGUFValueType.UINT32:
        fail(f"{CHANGED_KEY} is {old_value.type.name}, expected UINT32")
    kvs[CHANGED_KEY] = GGUFValue(value=(old_value.value + 1) % 2**32, type=old_value.type)
    write_copy(src, Path(args.out_changed), kvs, tensor_order)

    same = GGUFReader(args.out_same)
    assert_same_kvs(kv_fields(src), kv_fields(same))
    if list(kv_fields(same)) != kv_order:
        fail("GGUFWriter did not keep the shuffled KV order")
    if [t.name for t in same.tensors] != [src.tensors[i].name for i in tensor_order]:
        fail("GGUFWriter did not keep the shuffled tensor order")
    check_tensors(src, same)

    changed = GGUFReader(args.out_changed)
    assert_same_kvs(kv_fields(src), kv_fields(changed), changed={CHANGED_KEY})
    old = struct.unpack("<I", kv_fields(src)[CHANGED_KEY].parts[-1].tobytes())[0]
    new = struct.unpack("<I", kv_fields(changed)[CHANGED_KEY].parts[-1].tobytes())[0]
    if new != (old + 1) % 2**32:
        fail(f"{CHANGED_KEY}: {old} became {new}, expected {old + 1}")

    emit(
        {
            "changed_key": CHANGED_KEY,
            "kv_order": kv_order,
            "tensor_order": [src.tensors[i].name for i in tensor_order],
            "src_kv_order": src_kv_order,
            "src_tensor_order": [t.name for t in src.tensors],
        }
    )


if __name__ == "__main__":
    main()
