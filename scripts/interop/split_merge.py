"""Interop (d): split a GGUF model into shards the way llama.cpp's gguf-split
does (`--split`), then merge the shards back (`--merge`), both written by
gguf-py's GGUFWriter.

usage: split_merge.py SRC OUT_DIR --shards N

gguf-split's layout, reproduced exactly:
  * files `<prefix>-%05d-of-%05d.gguf` (GGUFWriter's SHARD_NAME_FORMAT);
  * the first shard holds every KV of SRC, in SRC's order, then
    split.no (UINT16), split.count (UINT16), split.tensors.count (INT32);
    every other shard holds only those three keys;
  * tensors in SRC's order, cut into N runs of ceil(T/N); shapes as ggml
    stores them (ggml_n_dims: trailing 1s dropped); data padded to 32;
  * the merged file holds the first shard's KVs (so SRC's, then the three
    split keys) with split.no = 0, split.count = 0 and split.tensors.count
    = T, and the tensors of every shard in order.
All of it is read back with GGUFReader and checked here.

Prints {"shards": [paths], "merged": path, "tensor_count": T} as JSON.
"""

from __future__ import annotations

import argparse
import math
import re
from pathlib import Path

from common import (
    GGUFReader,
    GGUFValue,
    GGUFValueType,
    add_reader_tensor,
    assert_same_kvs,
    canonical_np_shape,
    emit,
    fail,
    field_value,
    finish,
    kv_fields,
    new_writer,
)

SPLIT_KEYS = ["split.no", "split.count", "split.tensors.count"]
SPLIT_TYPES = [["UINT16"], ["UINT16"], ["INT32"]]
GGUF_SPLIT_ALIGNMENT = 32  # gguf-split pads shard data to GGUF_DEFAULT_ALIGNMENT


def split_values(reader: GGUFReader) -> list[int]:
    f = kv_fields(reader)
    return [f[k].contents() for k in SPLIT_KEYS]


def check_split_keys(reader: GGUFReader, path: Path, want: list[int]) -> None:
    f = kv_fields(reader)
    types = [[t.name for t in f[k].types] if k in f else None for k in SPLIT_KEYS]
    if types != SPLIT_TYPES:
        fail(f"{path.name}: split key types {types}, expected {SPLIT_TYPES}")
    if split_values(reader) != want:
        fail(f"{path.name}: split values {split_values(reader)}, expected {want}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("out_dir")
    ap.add_argument("--shards", type=int, default=3)
    ap.add_argument("--prefix", default="smollm2")
    args = ap.parse_args()

    src = GGUFReader(args.src)
    if src.alignment != GGUF_SPLIT_ALIGNMENT:
        fail(f"source alignment {src.alignment}: gguf-split would not keep it (spec section 8)")
    n_tensors = len(src.tensors)
    per_shard = math.ceil(n_tensors / args.shards)
    out_dir = Path(args.out_dir)
    src_kvs = kv_fields(src)
    if any(k.startswith("split.") for k in src_kvs):
        fail("source is already a shard")

    # --split. GGUFWriter's own sharding adds exactly gguf-split's three keys,
    # typed as gguf-split types them, after the KVs of the first shard.
    kvs = {k: field_value(f) for k, f in src_kvs.items()}
    w = new_writer(out_dir / f"{args.prefix}.gguf", kvs, split_max_tensors=per_shard)
    for t in src.tensors:
        add_reader_tensor(w, t, canonical_np_shape(t.shape.tolist()))
    if len(w.tensors) != args.shards:
        fail(f"GGUFWriter planned {len(w.tensors)} shards, expected {args.shards}")
    shard_paths = w.format_shard_names(out_dir / f"{args.prefix}.gguf")
    finish(w)

    pattern = re.compile(rf"^{re.escape(args.prefix)}-(\d{{5}})-of-(\d{{5}})\.gguf$")
    shards = []
    for i, p in enumerate(shard_paths):
        m = pattern.match(p.name)
        if not m or int(m.group(1)) != i + 1 or int(m.group(2)) != args.shards:
            fail(f"shard {i} is named {p.name}")
        r = GGUFReader(p)
        keys = list(kv_fields(r))
        want_keys = (list(src_kvs) if i == 0 else []) + SPLIT_KEYS
        if keys != want_keys:
            fail(f"{p.name}: keys {keys[-5:]}..., expected {want_keys[-5:]}...")
        check_split_keys(r, p, [i, args.shards, n_tensors])
        shards.append(r)
    # Without the split keys, the first shard's KVs are the source's, byte for byte.
    assert_same_kvs(src_kvs, kv_fields(shards[0], split_keys=False))
    names = [t.name for r in shards for t in r.tensors]
    if names != [t.name for t in src.tensors]:
        fail("shards do not hold the source's tensors in order")

    # --merge: the first shard's KVs with split.count set to 0, every tensor.
    merged_kvs = {k: field_value(f) for k, f in kv_fields(shards[0]).items()}
    merged_kvs["split.count"] = GGUFValue(value=0, type=GGUFValueType.UINT16)
    merged_path = out_dir / f"{args.prefix}-merged.gguf"
    w = new_writer(merged_path, merged_kvs)
    for r in shards:
        for t in r.tensors:
            add_reader_tensor(w, t)
    finish(w)

    merged = GGUFReader(merged_path)
    keys = list(kv_fields(merged))
    if keys != list(src_kvs) + SPLIT_KEYS:
        fail(f"merged: keys end {keys[-5:]}")
    check_split_keys(merged, merged_path, [0, 0, n_tensors])
    if [t.name for t in merged.tensors] != [t.name for t in src.tensors]:
        fail("merged: tensors not in the source's order")
    for a, b in zip(src.tensors, merged.tensors):
        if a.tensor_type != b.tensor_type or a.data.tobytes() != b.data.tobytes():
            fail(f"merged: tensor {a.name!r} differs")
    assert_same_kvs(src_kvs, kv_fields(merged, split_keys=False))

    emit({"shards": [str(p) for p in shard_paths], "merged": str(merged_path), "tensor_count": n_tensors})


if __name__ == "__main__":
    main()
