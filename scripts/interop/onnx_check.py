"""Checks onnx_oracle.py (docs/SPEC.md Part VI) against models the real onnx
package writes.

usage: onnx_check.py [--limit N] [--quiet] [MODEL.onnx ...]

For every backend test model shipped in the onnx wheel (onnx/backend/test/data),
for a handful of models built here with onnx.helper, and for the MODEL.onnx
files given, it writes the same model

  (a) inline, every tensor in raw_data (numpy_helper.from_array),
  (b) every tensor in its typed field (helper.make_tensor(..., vals=list)),
  (c) with initializers, metadata_props, opset_import and attributes reordered,
  (d) with external data (onnx.save_model(save_as_external_data=True), one file
      for all tensors and one file per tensor, size_threshold 0 and 1024),

and requires one oracle label across them; then requires another label for
each of: one element changed, an attribute changed, a node's input renamed, an
opset version changed, a metadata value changed. Last it crafts the refusals
of X2/X5/X6 and requires each refused with its reason. Prints counts; exits 1
on any mismatch. Needs onnx (1.22.0) and numpy; nothing is written outside a
temporary directory.
"""

from __future__ import annotations

import copy
import glob
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, str(Path(__file__).resolve().parent))
import onnx_oracle as oracle  # noqa: E402

FAILS: list[str] = []


def fail(msg: str) -> None:
    FAILS.append(msg)
    print("FAIL", msg, file=sys.stderr)


def all_tensors(m: onnx.ModelProto):
    """Every TensorProto of the model: initializers and attribute tensors, in subgraphs and functions too."""
    def graph(g):
        yield from g.initializer
        for s in g.sparse_initializer:
            yield s.values
            yield s.indices
        for n in g.node:
            yield from node(n)

    def node(n):
        for a in n.attribute:
            if a.HasField("t"):
                yield a.t
            yield from a.tensors
            if a.HasField("g"):
                yield from graph(a.g)
            for sg in a.graphs:
                yield from graph(sg)
            if a.HasField("sparse_tensor"):
                yield a.sparse_tensor.values
                yield a.sparse_tensor.indices

    yield from graph(m.graph)
    for f in m.functions:
        for n in f.node:
            yield from node(n)


def to_raw(m):
    m = copy.deepcopy(m)
    for t in all_tensors(m):
        if t.data_type == TensorProto.STRING or t.data_location == TensorProto.EXTERNAL:
            continue
        arr = numpy_helper.to_array(t)
        new = numpy_helper.from_array(arr, t.name)
        new.doc_string = t.doc_string
        new.metadata_props.extend(t.metadata_props)
        t.CopyFrom(new)
    return m


def to_typed(m):
    m = copy.deepcopy(m)
    for t in all_tensors(m):
        if t.data_location == TensorProto.EXTERNAL:
            continue
        arr = numpy_helper.to_array(t)
        vals = arr.flatten().tolist() if t.data_type != TensorProto.STRING else list(arr.flatten())
        new = helper.make_tensor(t.name, t.data_type, list(t.dims), vals, raw=False)
        new.doc_string = t.doc_string
        new.metadata_props.extend(t.metadata_props)
        t.CopyFrom(new)
    return m


def reorder(m):
    m = copy.deepcopy(m)

    def rev(field):
        items = [copy.deepcopy(x) for x in field]
        del field[:]
        field.extend(reversed(items))

    def graph(g):
        rev(g.initializer)
        rev(g.sparse_initializer)
        rev(g.value_info)
        rev(g.metadata_props)
        for n in g.node:
            rev(n.attribute)
            rev(n.metadata_props)
            for a in n.attribute:
                if a.HasField("g"):
                    graph(a.g)
                for sg in a.graphs:
                    graph(sg)

    graph(m.graph)
    rev(m.metadata_props)
    rev(m.opset_import)
    rev(m.functions)
    for f in m.functions:
        rev(f.opset_import)
    for t in all_tensors(m):
        rev(t.metadata_props)
    return m


def save(m, path: Path, **kw) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save_model(m, str(path), **kw)
    return path


def lab(path) -> str | Exception:
    try:
        return oracle.label(path)
    except oracle.OnnxError as e:
        return e


def variants(m, tmp: Path) -> list[tuple[str, Path]]:
    out = []
    out.append(("as loaded", save(m, tmp / "orig" / "m.onnx")))
    for name, fn in (("raw_data", to_raw), ("typed", to_typed), ("reordered", reorder)):
        try:
            out.append((name, save(fn(m), tmp / name / "m.onnx")))
        except Exception as e:  # noqa: BLE001  a conversion onnx itself cannot make
            out.append((f"{name} (onnx could not: {type(e).__name__})", None))
    for one in (True, False):
        for thr in (0, 1024):
            d = tmp / f"ext_{one}_{thr}"
            try:
                out.append((f"external one_file={one} threshold={thr}",
                            save(copy.deepcopy(m), d / "m.onnx", save_as_external_data=True,
                                 all_tensors_to_one_file=one, location="w.bin" if one else None,
                                 size_threshold=thr, convert_attribute=True)))
            except Exception as e:  # noqa: BLE001
                out.append((f"external (onnx could not: {type(e).__name__}: {e})", None))
    return out


def mutations(m) -> list[tuple[str, onnx.ModelProto]]:
    out = []
    # one element changed
    mm = to_raw(m)
    for t in all_tensors(mm):
        if t.data_type in (TensorProto.STRING,) or not t.raw_data:
            continue
        b = bytearray(t.raw_data)
        if t.data_type == TensorProto.BOOL:
            b[0] ^= 1
        else:
            b[0] ^= 0x01 if t.data_type not in (21, 22, 23, 25, 26) else 0x01
        t.raw_data = bytes(b)
        out.append(("one element changed", mm))
        break
    mm = copy.deepcopy(m)
    for n in mm.graph.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.INT:
                a.i += 1
            elif a.type == onnx.AttributeProto.FLOAT:
                a.f += 1.0
            elif a.type == onnx.AttributeProto.INTS and a.ints:
                a.ints[0] += 1
            elif a.type == onnx.AttributeProto.STRING:
                a.s += b"x"
            else:
                continue
            out.append(("an attribute changed", mm))
            break
        else:
            continue
        break
    mm = copy.deepcopy(m)
    for n in mm.graph.node:
        if n.input and n.input[0]:
            n.input[0] = n.input[0] + "_renamed"
            out.append(("a node's input renamed", mm))
            break
    mm = copy.deepcopy(m)
    if mm.opset_import:
        mm.opset_import[0].version += 1
        out.append(("an opset version changed", mm))
    mm = copy.deepcopy(m)
    mm.metadata_props.add(key="k", value="v1")
    m2 = copy.deepcopy(mm)
    m2.metadata_props[-1].value = "v2"
    out.append(("a metadata value changed (base)", mm))
    out.append(("a metadata value changed", m2))
    return out


def check_model(name: str, m, tmp: Path, stats: Counter, quiet: bool) -> None:
    vs = variants(m, tmp)
    labels = {}
    for vname, p in vs:
        if p is None:
            stats["variant onnx could not write: " + vname.split("(")[-1].rstrip(")")] += 1
            continue
        labels[vname] = lab(p)
    base = labels.get("as loaded")
    if isinstance(base, Exception):
        stats["refused"] += 1
        stats["refused: " + oracle_reason(base)] += 1
        if not quiet:
            print(f"REFUSED {name}: {base}")
        for vname, lv in labels.items():
            if not isinstance(lv, Exception):
                fail(f"{name}: refused as loaded but labelled as {vname}")
        return
    stats["labelled"] += 1
    for vname, lv in labels.items():
        if lv != base:
            fail(f"{name}: {vname} gives {lv}, as loaded {base}")
        else:
            stats["variant agreed: " + vname.split(" one_file")[0]] += 1
    meta_base = None
    for mname, mm in mutations(m):
        p = save(mm, tmp / "mut" / "m.onnx")
        lv = lab(p)
        if isinstance(lv, Exception):
            fail(f"{name}: {mname}: refused: {lv}")
            continue
        if mname.endswith("(base)"):
            meta_base = lv
            if lv == base:
                fail(f"{name}: adding a metadata entry kept the label")
            continue
        ref = meta_base if mname == "a metadata value changed" else base
        if lv == ref:
            fail(f"{name}: {mname}: the label did not change")
        else:
            stats["mutation changed the label: " + mname] += 1


def oracle_reason(e: Exception) -> str:
    import re
    s = str(e).split(": ", 1)[-1]
    s = re.sub(r"'[^']*'", "'…'", s)
    s = re.sub(r"\[\d+\]", "[i]", s)
    return re.sub(r"-?\d+", "N", s)


# ---------------------------------------------------------------- constructed models

def identity_model(with_w: bool = False) -> onnx.ModelProto:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])
    inits = [numpy_helper.from_array(np.array([1.0, 2.0], dtype=np.float32), "w")] if with_w else []
    g = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g", [x], [y], initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    m.ClearField("producer_name")
    return m


def rich_model() -> onnx.ModelProto:
    rng = np.random.default_rng(7)
    inits = [
        numpy_helper.from_array(rng.standard_normal((3, 4)).astype(np.float32), "f32"),
        numpy_helper.from_array(rng.standard_normal((5,)).astype(np.float16), "f16"),
        numpy_helper.from_array(rng.standard_normal((2, 3)).astype(np.float64), "f64"),
        numpy_helper.from_array(rng.integers(-9, 9, (7,)).astype(np.int64), "i64"),
        numpy_helper.from_array(rng.integers(-9, 9, (7,)).astype(np.int8), "i8"),
        numpy_helper.from_array(rng.integers(0, 9, (3,)).astype(np.uint32), "u32"),
        numpy_helper.from_array(rng.integers(0, 9, (3,)).astype(np.uint16), "u16"),
        numpy_helper.from_array(np.array([True, False, True]), "b"),
        numpy_helper.from_array((rng.standard_normal(3) + 1j * rng.standard_normal(3)).astype(np.complex64), "c64"),
        helper.make_tensor("str", TensorProto.STRING, [2], [b"ab", b""]),
        helper.make_tensor("u4", TensorProto.UINT4, [5], [1, 2, 3, 4, 15]),
        helper.make_tensor("i4", TensorProto.INT4, [3], [-1, 2, -8]),
        helper.make_tensor("bf16", TensorProto.BFLOAT16, [2], [1.5, -2.0]),
        helper.make_tensor("f8", TensorProto.FLOAT8E4M3FN, [2], [1.5, -2.0]),
        helper.make_tensor("scalar", TensorProto.FLOAT, [], [3.0]),
        helper.make_tensor("empty", TensorProto.FLOAT, [0, 3], []),
    ]
    then_g = helper.make_graph([helper.make_node("Identity", ["f32"], ["o1"])], "then", [],
                               [helper.make_tensor_value_info("o1", TensorProto.FLOAT, [3, 4])])
    else_g = helper.make_graph([helper.make_node("Constant", [], ["o2"], value=helper.make_tensor(
        "k", TensorProto.FLOAT, [3, 4], list(range(12))))], "else", [],
        [helper.make_tensor_value_info("o2", TensorProto.FLOAT, [3, 4])])
    nodes = [
        helper.make_node("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g),
        helper.make_node("Cast", ["y"], ["z"], to=TensorProto.DOUBLE, name="cast"),
        helper.make_node("Transpose", ["z"], ["t"], perm=[1, 0], name="tr"),
        helper.make_node("LeakyRelu", ["t"], ["u"], alpha=0.25),
    ]
    g = helper.make_graph(nodes, "rich", [helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
                          [helper.make_tensor_value_info("u", TensorProto.DOUBLE, ["N", 3])], initializer=inits,
                          value_info=[helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
                                      helper.make_tensor_value_info("z", TensorProto.DOUBLE, [3, 4])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("ai.onnx.ml", 3),
                                            helper.make_opsetid("com.example", 1)], ir_version=10)
    helper.set_model_props(m, {"author": "x", "license": "mit", "zz": "last"})
    return m


def quantised_model() -> onnx.ModelProto:
    w = helper.make_tensor("w", TensorProto.INT4, [4, 3], [(-8 + i) % 16 - 8 for i in range(12)])
    s = numpy_helper.from_array(np.array([0.5, 0.25, 0.125, 1.0], dtype=np.float32), "s")
    node = helper.make_node("DequantizeLinear", ["w", "s"], ["y"], axis=0)
    g = helper.make_graph([node], "q", [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 3])],
                          initializer=[w, s])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)


def sparse_model() -> onnx.ModelProto:
    vals = numpy_helper.from_array(np.array([1.0, 2.0], dtype=np.float32), "sp")
    idx = numpy_helper.from_array(np.array([1, 5], dtype=np.int64), "sp_idx")
    sp = helper.make_sparse_tensor(vals, idx, [8])
    node = helper.make_node("Identity", ["sp"], ["y"])
    g = helper.make_graph([node], "s", [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [8])],
                          initializer=[numpy_helper.from_array(np.ones(3, np.float32), "dense")],
                          sparse_initializer=[sp])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


# ---------------------------------------------------------------- refusals

def refusals(tmp: Path, stats: Counter) -> None:
    def expect(name: str, path: Path, needle: str) -> None:
        r = lab(path)
        if not isinstance(r, Exception):
            fail(f"refusal {name}: labelled {r}")
        elif needle not in str(r):
            fail(f"refusal {name}: refused for another reason: {r}")
        else:
            stats["refusal as expected"] += 1
            print(f"refused as expected: {name}: {r}")

    def write(m, sub: str) -> Path:
        return save(m, tmp / "ref" / sub / "m.onnx")

    base = identity_model(True)
    m = copy.deepcopy(base)
    m.graph.initializer[0].float_data.extend([1.0, 2.0])
    expect("raw_data and float_data", write(m, "both"), "raw_data beside float_data")

    m = copy.deepcopy(base)
    m.graph.initializer.add().CopyFrom(m.graph.initializer[0])
    expect("two initializers of one name", write(m, "dup"), "two entries with the key b'w'")

    m = copy.deepcopy(base)
    m.graph.initializer[0].segment.begin = 0
    m.graph.initializer[0].segment.end = 2
    expect("a segment", write(m, "seg"), "a segment")

    # external data: craft the entries by hand around one real file
    def ext(sub: str, loc: str, offset: str | None = None, length: str | None = None, file_bytes: bytes = b"\0" * 8):
        d = tmp / "ref" / sub
        d.mkdir(parents=True, exist_ok=True)
        (d / "w.bin").write_bytes(file_bytes)
        m = copy.deepcopy(base)
        t = m.graph.initializer[0]
        t.ClearField("raw_data")
        t.data_location = TensorProto.EXTERNAL
        t.external_data.add(key="location", value=loc)
        if offset is not None:
            t.external_data.add(key="offset", value=offset)
        if length is not None:
            t.external_data.add(key="length", value=length)
        return save(m, d / "m.onnx")

    good = ext("ext_ok", "w.bin")
    r = lab(good)
    if isinstance(r, Exception):
        fail(f"a valid external tensor refused: {r}")
    outside = tmp / "ref" / "outside.bin"
    outside.write_bytes(b"\0" * 8)
    expect("external location absolute", ext("ext_abs", str(outside)), "not a relative name")
    expect("external location with ..", ext("ext_dots", "../outside.bin"), "not a relative name")
    p = ext("ext_link", "link.bin")
    os.symlink("../outside.bin", p.parent / "link.bin")
    expect("external location out through a symlink", p, "leads outside")
    p = ext("ext_link_in", "link.bin")
    os.symlink("w.bin", p.parent / "link.bin")
    r = lab(p)
    if isinstance(r, Exception):
        fail(f"a symlink inside the directory refused: {r}")
    expect("external range past the end", ext("ext_past", "w.bin", "4", "8"), "past the end")
    expect("external length not the byte count", ext("ext_len", "w.bin", "0", "4"), "external length 4")
    expect("external offset not a decimal", ext("ext_dec", "w.bin", "+0"), "is not a decimal")

    # nesting: a TypeProto of sequences, deeper than 100 levels
    m = copy.deepcopy(base)
    tp = m.graph.value_info.add(name="deep").type
    for _ in range(120):
        tp = tp.sequence_type.elem_type
    tp.tensor_type.elem_type = TensorProto.FLOAT
    expect("nesting deeper than the bound", write(m, "deep"), "nested more than 100 deep")

    raw = base.SerializeToString()
    d = tmp / "ref" / "wire"
    d.mkdir(parents=True, exist_ok=True)
    (d / "unknown.onnx").write_bytes(raw + b"\x48\x01")  # ModelProto field 9, varint
    expect("a field number the schema lacks", d / "unknown.onnx", "field number 9 is not in ModelProto")
    (d / "twice.onnx").write_bytes(raw + b"\x08\x08")  # ir_version again
    expect("a non-repeated field written twice", d / "twice.onnx", "non-repeated field written in two records")
    (d / "group.onnx").write_bytes(raw + b"\x4b")  # field 9, wire type 3
    expect("a group", d / "group.onnx", "wire type 3")
    (d / "trunc.onnx").write_bytes(raw[:-1])
    expect("a truncated file", d / "trunc.onnx", "")
    (d / "ir2.onnx").write_bytes(b"\x08\x02" + raw[2:])
    expect("ir_version 2", d / "ir2.onnx", "only IR versions 3 to 13")

    # the label ignores varint widths and packed-or-not: craft both
    # (ir_version 8 as 0x88 0x00: a two-byte varint of 8)
    (d / "wide.onnx").write_bytes(b"\x08\x88\x00" + raw[2:])
    if lab(d / "wide.onnx") != oracle.label(write(base, "base")):
        fail("a wide varint changed the label")
    else:
        stats["wide varint: same label"] += 1


def varint(v: int) -> bytes:
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def rec(num: int, wt: int, payload: bytes) -> bytes:
    """One protobuf record; payload is the value's bytes (a varint already encoded for wire type 0)."""
    if wt == 2:
        return varint(num << 3 | 2) + varint(len(payload)) + payload
    return varint(num << 3 | wt) + payload


# The two worked examples proposed for SPEC Part VI: the model bytes onnx
# 1.22.0 writes for identity_model() and identity_model(True), and their labels.
WORKED = [
    ("08083a370a100a017812017922084964656e746974791201675a0f0a0178120a0a08080112040a020801620f0a0179120a0a"
     "08080112040a02080142040a00100d",
     "a242726d5e573fa75a3f6d8310aede416088f3543de16a8433be96529f3dbd07"),
    ("08083a4a0a100a017812017922084964656e746974791201672a11080210014201774a080000803f000000405a0f0a017812"
     "0a0a08080112040a020801620f0a0179120a0a08080112040a02080142040a00100d",
     "e8dd38d6e7341d5c5f8e40b8d849c33e069a6e43f35e32da354b94ca2cbcbb4e"),
]


def worked(tmp: Path, stats: Counter) -> None:
    for i, (with_w, (hexbytes, want)) in enumerate(zip((False, True), WORKED)):
        b = identity_model(with_w).SerializeToString()
        if b.hex() != hexbytes:
            fail(f"worked example {i + 1}: onnx writes {b.hex()}")
        p = tmp / f"worked{i + 1}.onnx"
        p.write_bytes(bytes.fromhex(hexbytes))
        got = lab(p)
        if got != want:
            fail(f"worked example {i + 1}: label {got}, want {want}")
        else:
            stats["worked example: label as proposed"] += 1


def crafted(tmp: Path, stats: Counter) -> None:
    """Encodings onnx's writer never makes, crafted byte by byte: one label for all of them."""
    import struct

    base = identity_model()  # no initializer: one is appended as raw records
    graph = base.graph.SerializeToString()
    head = rec(1, 0, varint(8))
    tail = rec(8, 2, rec(1, 2, b"") + rec(2, 0, varint(13)))

    def model(tensor: bytes, graph_extra: bytes = b"") -> bytes:
        return head + rec(7, 2, graph + rec(5, 2, tensor) + graph_extra) + tail

    f1, f2 = struct.pack("<f", 1.0), struct.pack("<f", 2.0)
    name, dt = rec(8, 2, b"w"), rec(2, 0, varint(1))
    same = {
        "raw, dims unpacked": rec(1, 0, varint(2)) + dt + name + rec(9, 2, f1 + f2),
        "raw, dims packed": rec(1, 2, varint(2)) + dt + name + rec(9, 2, f1 + f2),
        "raw, fields reversed": rec(9, 2, f1 + f2) + name + dt + rec(1, 0, varint(2)),
        "raw, wide varints": rec(1, 0, b"\x82\x80\x00") + rec(2, 0, b"\x81\x00") + name + rec(9, 2, f1 + f2),
        "float_data packed": rec(1, 0, varint(2)) + dt + name + rec(4, 2, f1 + f2),
        "float_data unpacked": rec(1, 0, varint(2)) + dt + name + rec(4, 5, f1) + rec(4, 5, f2),
        "float_data mixed": rec(1, 0, varint(2)) + dt + name + rec(4, 5, f1) + rec(4, 2, f2),
        "float_data, data_location 0 written": rec(1, 0, varint(2)) + dt + name + rec(4, 2, f1 + f2) + rec(14, 0, varint(0)),
    }
    d = tmp / "crafted"
    d.mkdir(parents=True, exist_ok=True)
    labels = {}
    for k, tb in same.items():
        p = d / (k.replace(" ", "_").replace(",", "") + ".onnx")
        p.write_bytes(model(tb))
        labels[k] = lab(p)
    ref = oracle.label(save(identity_model(True), d / "ref" / "m.onnx"))
    for k, v in labels.items():
        if v != ref:
            fail(f"crafted {k}: {v}, onnx's own writing {ref}")
        else:
            stats["crafted encoding: same label"] += 1

    ok_tensor = same["raw, dims unpacked"]
    dim = rec(1, 0, varint(1)) + rec(2, 2, b"N")  # dim_value and dim_param
    both_dim = rec(1, 2, rec(1, 0, varint(1)) + rec(2, 2, rec(1, 2, dim)))  # TypeProto.tensor_type
    bad = {
        "a message written as two records": (head + rec(7, 2, graph) + rec(7, 2, rec(5, 2, ok_tensor)) + tail,
                                             "non-repeated field written in two records"),
        "a oneof with both members": (model(ok_tensor, rec(13, 2, rec(1, 2, b"v") + rec(2, 2, both_dim))),
                                      "two members of oneof"),
        "raw_data empty beside an empty packed float_data": (model(rec(1, 0, varint(2)) + dt + name + rec(9, 2, b"")
                                                                   + rec(4, 2, b"")), "raw_data beside float_data"),
        "a packed record not ending on a value": (model(rec(1, 0, varint(2)) + dt + name + rec(4, 2, f1 + b"\0")),
                                                  "packed record"),
        "an 11-byte varint": (b"\x08" + b"\x80" * 10 + b"\x01" + model(ok_tensor)[2:], "varint"),
        "int32 data_type out of range": (model(rec(1, 0, varint(2)) + rec(2, 0, varint((1 << 64) - (1 << 40)))
                                               + name + rec(9, 2, f1 + f2)), "does not fit int32"),
        "an enum value the schema lacks": (model(ok_tensor + rec(14, 0, varint(2))), "not a value of enum"),
        "a negative dim": (model(rec(1, 0, varint((1 << 64) - 1)) + dt + name), "negative dim"),
        "a BOOL byte 2": (model(rec(1, 0, varint(1)) + rec(2, 0, varint(9)) + name + rec(9, 2, b"\x02")), "BOOL"),
        "INT4 padding bits set": (model(rec(1, 0, varint(1)) + rec(2, 0, varint(22)) + name + rec(9, 2, b"\x31")),
                                  "bits after the last packed element"),
        "data_type 0": (model(rec(1, 0, varint(1)) + name + rec(9, 2, b"\0")), "data_type 0"),
        "STRING in raw_data": (model(rec(1, 0, varint(1)) + rec(2, 0, varint(8)) + name + rec(9, 2, b"\0")),
                               "STRING tensor in raw_data"),
        "n > 0 and no data": (model(rec(1, 0, varint(2)) + dt + name), "no data"),
        "a sparse initializer named as a dense one": (model(ok_tensor, rec(15, 2, rec(1, 2, ok_tensor) + rec(
            2, 2, rec(1, 0, varint(2)) + rec(2, 0, varint(7)) + rec(7, 2, varint(0) + varint(1))) + rec(3, 0, varint(2)))),
            "sparse initializer named as a dense one"),
    }
    for k, (b, needle) in bad.items():
        p = d / (k.replace(" ", "_") + ".onnx")
        p.write_bytes(b)
        r = lab(p)
        if not isinstance(r, Exception):
            fail(f"crafted refusal {k}: labelled {r}")
        elif needle not in str(r):
            fail(f"crafted refusal {k}: refused for another reason: {r}")
        else:
            stats["refusal as expected"] += 1
            print(f"refused as expected: {k}: {str(r)[:300]}")


def main(argv: list[str]) -> int:
    quiet = "--quiet" in argv
    limit = None
    files = []
    it = iter(a for a in argv if a != "--quiet")
    for a in it:
        if a == "--limit":
            limit = int(next(it))
        else:
            files.append(a)
    stats: Counter = Counter()
    data = Path(onnx.__file__).parent / "backend" / "test" / "data"
    backend = sorted(glob.glob(str(data / "**" / "*.onnx"), recursive=True))[:limit]
    with tempfile.TemporaryDirectory() as td:
        tmp = Path(td)
        built = {"identity": identity_model(), "identity_w": identity_model(True), "rich": rich_model(),
                 "quantised": quantised_model(), "sparse": sparse_model()}
        for name, m in built.items():
            check_model(name, m, tmp / "built" / name, stats, quiet)
        refusals(tmp, stats)
        crafted(tmp, stats)
        worked(tmp, stats)
        for f in files:
            try:
                m = onnx.load(f)
            except Exception as e:  # noqa: BLE001
                print(f"onnx cannot load {f}: {e}")
                continue
            print(f"{oracle.label(f) if not isinstance(lab(f), Exception) else lab(f)}  {f}")
            check_model(f, m, tmp / "given", stats, quiet)
        for i, f in enumerate(backend):
            m = onnx.load(f, load_external_data=False)
            check_model(os.path.relpath(f, data), m, tmp / "b", stats, quiet)
            if i % 200 == 199:
                print(f"... {i + 1} backend models", file=sys.stderr, flush=True)
    print(f"backend models: {len(backend)} (onnx {onnx.__version__})")
    for k, v in sorted(stats.items()):
        print(f"{v:6d}  {k}")
    print(f"{len(FAILS)} failures")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
