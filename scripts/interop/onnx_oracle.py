"""An independent reading of docs/SPEC.md Part VI (the ONNX label, v1).

usage: onnx_oracle.py MODEL.onnx              prints "<label>  <path>"
       onnx_oracle.py --skeleton MODEL.onnx   writes the skeleton bytes to stdout

Written from Part VI (and the notation of section 2) alone, without the crate's
code or its ADR, so the two can check each other. It reads the protobuf wire
itself (X2) instead of using the onnx or protobuf packages: the point is a
second reading of the wire rules, not protobuf's. Every refusal is an
OnnxError naming the field path and the byte offset; the command exits 1
with it on stderr.
"""

from __future__ import annotations

import hashlib
import os
import stat
import struct
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.setrecursionlimit(20000)

MAX_DEPTH = 100
MAX_FIELD = (1 << 29) - 1
I32_MIN, I32_MAX = -(1 << 31), (1 << 31) - 1
U64 = (1 << 64) - 1
MIB = 1 << 20


class OnnxError(Exception):
    """A refusal: the message names the path, the field path and the offset."""


def H(b: bytes) -> bytes:
    return hashlib.sha256(b).digest()


def le_i64(v: int) -> bytes:
    return struct.pack("<q", v)


def le_u64(v: int) -> bytes:
    return struct.pack("<Q", v)


def le_u32(v: int) -> bytes:
    return struct.pack("<I", v)


# ---------------------------------------------------------------- schema (X4)
# kind: int32 int64 uint64 float double string bytes enum:<Name> msg:<Name>
# rep: repeated; how: None | ("sorted", keyfields) ; oneof: group name

@dataclass(frozen=True)
class F:
    name: str
    kind: str
    rep: bool = False
    sorted_by: tuple[str, ...] | None = None
    oneof: str | None = None


S = "string"
SCHEMA: dict[str, dict[int, F]] = {
    "ModelProto": {
        1: F("ir_version", "int64"), 2: F("producer_name", S), 3: F("producer_version", S),
        4: F("domain", S), 5: F("model_version", "int64"), 6: F("doc_string", S),
        7: F("graph", "msg:GraphProto"),
        8: F("opset_import", "msg:OperatorSetIdProto", True, ("domain",)),
        14: F("metadata_props", "msg:StringStringEntryProto", True, ("key",)),
        20: F("training_info", "msg:TrainingInfoProto", True),
        25: F("functions", "msg:FunctionProto", True, ("domain", "name", "overload")),
        26: F("configuration", "msg:DeviceConfigurationProto", True),
    },
    "OperatorSetIdProto": {1: F("domain", S), 2: F("version", "int64")},
    "StringStringEntryProto": {1: F("key", S), 2: F("value", S)},
    "GraphProto": {
        1: F("node", "msg:NodeProto", True), 2: F("name", S),
        5: F("initializer", "msg:TensorProto", True, ("name",)),
        10: F("doc_string", S),
        11: F("input", "msg:ValueInfoProto", True), 12: F("output", "msg:ValueInfoProto", True),
        13: F("value_info", "msg:ValueInfoProto", True, ("name",)),
        14: F("quantization_annotation", "msg:TensorAnnotation", True),
        15: F("sparse_initializer", "msg:SparseTensorProto", True, ("values.name",)),
        16: F("metadata_props", "msg:StringStringEntryProto", True, ("key",)),
    },
    "NodeProto": {
        1: F("input", S, True), 2: F("output", S, True), 3: F("name", S), 4: F("op_type", S),
        5: F("attribute", "msg:AttributeProto", True, ("name",)), 6: F("doc_string", S),
        7: F("domain", S), 8: F("overload", S),
        9: F("metadata_props", "msg:StringStringEntryProto", True, ("key",)),
        10: F("device_configurations", "msg:NodeDeviceConfigurationProto", True),
    },
    "AttributeProto": {
        1: F("name", S), 2: F("f", "float"), 3: F("i", "int64"), 4: F("s", "bytes"),
        5: F("t", "msg:TensorProto"), 6: F("g", "msg:GraphProto"),
        7: F("floats", "float", True), 8: F("ints", "int64", True), 9: F("strings", "bytes", True),
        10: F("tensors", "msg:TensorProto", True), 11: F("graphs", "msg:GraphProto", True),
        13: F("doc_string", S), 14: F("tp", "msg:TypeProto"),
        15: F("type_protos", "msg:TypeProto", True), 20: F("type", "enum:AttributeType"),
        21: F("ref_attr_name", S), 22: F("sparse_tensor", "msg:SparseTensorProto"),
        23: F("sparse_tensors", "msg:SparseTensorProto", True),
    },
    "ValueInfoProto": {
        1: F("name", S), 2: F("type", "msg:TypeProto"), 3: F("doc_string", S),
        4: F("metadata_props", "msg:StringStringEntryProto", True, ("key",)),
    },
    "TensorProto": {
        1: F("dims", "int64", True), 2: F("data_type", "int32"),
        3: F("segment", "msg:Segment"),
        4: F("float_data", "float", True), 5: F("int32_data", "int32", True),
        6: F("string_data", "bytes", True), 7: F("int64_data", "int64", True),
        8: F("name", S), 9: F("raw_data", "bytes"), 10: F("double_data", "double", True),
        11: F("uint64_data", "uint64", True), 12: F("doc_string", S),
        13: F("external_data", "msg:StringStringEntryProto", True),
        14: F("data_location", "enum:DataLocation"),
        16: F("metadata_props", "msg:StringStringEntryProto", True, ("key",)),
    },
    "Segment": {1: F("begin", "int64"), 2: F("end", "int64")},
    "SparseTensorProto": {
        1: F("values", "msg:TensorProto"), 2: F("indices", "msg:TensorProto"),
        3: F("dims", "int64", True),
    },
    "TypeProto": {
        1: F("tensor_type", "msg:TypeProto.Tensor", oneof="value"),
        4: F("sequence_type", "msg:TypeProto.Sequence", oneof="value"),
        5: F("map_type", "msg:TypeProto.Map", oneof="value"),
        6: F("denotation", S),
        7: F("opaque_type", "msg:TypeProto.Opaque", oneof="value"),
        8: F("sparse_tensor_type", "msg:TypeProto.SparseTensor", oneof="value"),
        9: F("optional_type", "msg:TypeProto.Optional", oneof="value"),
    },
    "TypeProto.Tensor": {1: F("elem_type", "int32"), 2: F("shape", "msg:TensorShapeProto")},
    "TypeProto.SparseTensor": {1: F("elem_type", "int32"), 2: F("shape", "msg:TensorShapeProto")},
    "TypeProto.Sequence": {1: F("elem_type", "msg:TypeProto")},
    "TypeProto.Optional": {1: F("elem_type", "msg:TypeProto")},
    "TypeProto.Map": {1: F("key_type", "int32"), 2: F("value_type", "msg:TypeProto")},
    "TypeProto.Opaque": {1: F("domain", S), 2: F("name", S)},
    "TensorShapeProto": {1: F("dim", "msg:TensorShapeProto.Dimension", True)},
    "TensorShapeProto.Dimension": {
        1: F("dim_value", "int64", oneof="value"), 2: F("dim_param", S, oneof="value"),
        3: F("denotation", S),
    },
    "TensorAnnotation": {
        1: F("tensor_name", S),
        2: F("quant_parameter_tensor_names", "msg:StringStringEntryProto", True),
    },
    "TrainingInfoProto": {
        1: F("initialization", "msg:GraphProto"), 2: F("algorithm", "msg:GraphProto"),
        3: F("initialization_binding", "msg:StringStringEntryProto", True),
        4: F("update_binding", "msg:StringStringEntryProto", True),
    },
    "FunctionProto": {
        1: F("name", S), 4: F("input", S, True), 5: F("output", S, True),
        6: F("attribute", S, True), 7: F("node", "msg:NodeProto", True), 8: F("doc_string", S),
        9: F("opset_import", "msg:OperatorSetIdProto", True, ("domain",)), 10: F("domain", S),
        11: F("attribute_proto", "msg:AttributeProto", True, ("name",)),
        12: F("value_info", "msg:ValueInfoProto", True, ("name",)), 13: F("overload", S),
        14: F("metadata_props", "msg:StringStringEntryProto", True, ("key",)),
    },
    "DeviceConfigurationProto": {1: F("name", S), 2: F("num_devices", "int32"), 3: F("device", S, True)},
    "NodeDeviceConfigurationProto": {
        1: F("configuration_id", S),
        2: F("sharding_spec", "msg:ShardingSpecProto", True), 3: F("pipeline_stage", "int32"),
    },
    "ShardingSpecProto": {
        1: F("tensor_name", S), 2: F("device", "int64", True),
        3: F("index_to_device_group_map", "msg:IntIntListEntryProto", True),
        4: F("sharded_dim", "msg:ShardedDimProto", True),
    },
    "IntIntListEntryProto": {1: F("key", "int64"), 2: F("value", "int64", True)},
    "ShardedDimProto": {1: F("axis", "int64"), 2: F("simple_sharding", "msg:SimpleShardedDimProto", True)},
    "SimpleShardedDimProto": {
        1: F("dim_value", "int64", oneof="dim"), 2: F("dim_param", S, oneof="dim"),
        3: F("num_shards", "int64"),
    },
}

ENUMS = {
    "AttributeType": {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14},
    "DataLocation": {0, 1},
}

# X2: only these repeated numeric fields take the packed form (all of them do).
WIRE_OF = {"int32": 0, "int64": 0, "uint64": 0, "float": 5, "double": 1, "string": 2, "bytes": 2}


def wire_of(kind: str) -> int:
    if kind.startswith("enum:"):
        return 0
    if kind.startswith("msg:"):
        return 2
    return WIRE_OF[kind]


# ---------------------------------------------------------------- the wire (X2)

@dataclass
class Msg:
    """A parsed message: per field number the values in record order."""
    name: str
    path: str
    offset: int
    values: dict[int, list] = field(default_factory=dict)
    written: set[int] = field(default_factory=set)
    offsets: dict[int, int] = field(default_factory=dict)

    def get(self, num: int, default=None):
        v = self.values.get(num)
        return v[0] if v else default

    def rep(self, num: int) -> list:
        return self.values.get(num, [])


class Reader:
    def __init__(self, data: bytes, where: str):
        self.data = data
        self.where = where
        self.tensors: list[Msg] = []

    def err(self, path: str, off: int, what: str) -> OnnxError:
        return OnnxError(f"{self.where}: {path or 'ModelProto'}: byte {off}: {what}")

    def varint(self, pos: int, end: int, path: str) -> tuple[int, int]:
        start = pos
        v = 0
        for i in range(10):
            if pos >= end:
                raise self.err(path, start, "a varint runs past the end of its message")
            b = self.data[pos]
            pos += 1
            if i == 9 and b > 1:
                raise self.err(path, start, "a varint does not fit 64 bits")
            v |= (b & 0x7F) << (7 * i)
            if not b & 0x80:
                return v, pos
        raise self.err(path, start, "a varint longer than 10 bytes")  # unreachable

    def parse(self, mname: str, start: int, end: int, path: str, depth: int) -> Msg:
        if depth > MAX_DEPTH:
            raise self.err(path, start, f"a message nested more than {MAX_DEPTH} deep")
        schema = SCHEMA[mname]
        msg = Msg(mname, path, start)
        counts: dict[int, int] = {}
        oneof_seen: dict[str, int] = {}
        pos = start
        while pos < end:
            rec = pos
            tag, pos = self.varint(pos, end, path)
            num, wt = tag >> 3, tag & 7
            if wt in (3, 4, 6, 7):
                raise self.err(path, rec, f"wire type {wt} (field {num})")
            if num == 0 or num > MAX_FIELD:
                raise self.err(path, rec, f"field number {num}")
            f = schema.get(num)
            if f is None:
                raise self.err(path, rec, f"field number {num} is not in {mname}")
            fpath = f"{path}.{f.name}" if path else f.name
            # read the raw value
            if wt == 0:
                val, pos = self.varint(pos, end, fpath)
                payload = None
            elif wt == 1:
                if end - pos < 8:
                    raise self.err(fpath, rec, "a 64-bit value runs past the end of its message")
                val, pos = self.data[pos:pos + 8], pos + 8
                payload = None
            elif wt == 5:
                if end - pos < 4:
                    raise self.err(fpath, rec, "a 32-bit value runs past the end of its message")
                val, pos = self.data[pos:pos + 4], pos + 4
                payload = None
            else:  # 2
                n, pos = self.varint(pos, end, fpath)
                if n > end - pos:
                    raise self.err(fpath, rec, f"a length-delimited value of {n} bytes, {end - pos} left")
                payload = (pos, pos + n)
                pos += n
            want = wire_of(f.kind)
            numeric = not f.kind.startswith("msg:") and f.kind not in ("string", "bytes")
            packed = f.rep and numeric and wt == 2
            if wt != want and not packed:
                raise self.err(fpath, rec, f"wire type {wt}, the field's type {f.kind} takes {want}")
            if not f.rep:
                if counts.get(num):
                    raise self.err(fpath, rec, "a non-repeated field written in two records")
                if f.oneof is not None:
                    if f.oneof in oneof_seen:
                        other = schema[oneof_seen[f.oneof]].name
                        raise self.err(fpath, rec, f"two members of oneof {f.oneof} written ({other}, {f.name})")
                    oneof_seen[f.oneof] = num
            idx = counts.get(num, 0)
            counts[num] = idx + 1
            msg.written.add(num)
            msg.offsets.setdefault(num, rec)
            lst = msg.values.setdefault(num, [])
            if f.kind.startswith("msg:"):
                sub = f.kind[4:]
                spath = f"{fpath}[{idx}]" if f.rep else fpath
                assert payload is not None
                m = self.parse(sub, payload[0], payload[1], spath, depth + 1)
                if sub == "TensorProto":
                    self.tensors.append(m)
                lst.append(m)
            elif f.kind in ("string", "bytes"):
                assert payload is not None
                lst.append(self.data[payload[0]:payload[1]])
            elif packed:
                assert payload is not None
                p, pe = payload
                while p < pe:
                    p, v = self.scalar(f, p, pe, fpath)
                    lst.append(v)
            else:
                lst.append(self.check_scalar(f, val, fpath, rec))
        if pos != end:
            raise self.err(path, pos, "a record runs past the end of its message")
        return msg

    def scalar(self, f: F, p: int, pe: int, fpath: str):
        """One value of a packed record."""
        if f.kind in ("float",):
            if pe - p < 4:
                raise self.err(fpath, p, "a packed record does not end on a value's end")
            return p + 4, self.data[p:p + 4]
        if f.kind == "double":
            if pe - p < 8:
                raise self.err(fpath, p, "a packed record does not end on a value's end")
            return p + 8, self.data[p:p + 8]
        v, q = self.varint(p, pe, fpath)
        return q, self.check_scalar(f, v, fpath, p)

    def check_scalar(self, f: F, v, fpath: str, off: int):
        k = f.kind
        if k in ("float", "double"):
            return v
        if k == "uint64":
            return v
        s = v - (1 << 64) if v >= (1 << 63) else v
        if k == "int64":
            return s
        if k == "int32" or k.startswith("enum:"):
            if not I32_MIN <= s <= I32_MAX:
                raise self.err(fpath, off, f"{s} does not fit int32")
            if k.startswith("enum:") and s not in ENUMS[k[5:]]:
                raise self.err(fpath, off, f"{s} is not a value of enum {k[5:]}")
            return s
        raise AssertionError(k)


# ---------------------------------------------------------------- elements (X5)

# data_type: (dtype, element bytes or ("pack", per byte) or "string", typed field, lo, hi, struct)
DT = {
    1: ("F32", 4, 4, None), 2: ("U8", 1, 5, (0, 255)), 3: ("I8", 1, 5, (-128, 127)),
    4: ("U16", 2, 5, (0, 65535)), 5: ("I16", 2, 5, (-32768, 32767)), 6: ("I32", 4, 5, None),
    7: ("I64", 8, 7, None), 8: ("STRING", "s", 6, None), 9: ("BOOL", 1, 5, (0, 1)),
    10: ("F16", 2, 5, (0, 65535)), 11: ("F64", 8, 10, None), 12: ("U32", 4, 11, (0, (1 << 32) - 1)),
    13: ("U64", 8, 11, None), 14: ("C64", 8, 4, None), 15: ("C128", 16, 10, None),
    16: ("BF16", 2, 5, (0, 65535)),
    17: ("F8_E4M3", 1, 5, (0, 255)), 18: ("F8_E4M3FNUZ", 1, 5, (0, 255)),
    19: ("F8_E5M2", 1, 5, (0, 255)), 20: ("F8_E5M2FNUZ", 1, 5, (0, 255)),
    21: ("U4", ("pack", 2), 5, (0, 255)), 22: ("I4", ("pack", 2), 5, (0, 255)),
    23: ("F4", ("pack", 2), 5, (0, 255)), 24: ("F8_E8M0", 1, 5, (0, 255)),
    25: ("U2", ("pack", 4), 5, (0, 255)), 26: ("I2", ("pack", 4), 5, (0, 255)),
}
TYPED = (4, 5, 6, 7, 10, 11)
TYPED_NAMES = {4: "float_data", 5: "int32_data", 6: "string_data", 7: "int64_data",
               10: "double_data", 11: "uint64_data"}


@dataclass
class Plan:
    """How one tensor's elements are read: decided and checked before any hashing."""
    dtype: str
    nbytes: int          # element bytes (for STRING: the encoded bytes)
    source: str          # raw | typed | external | empty
    ext: tuple[str, int, int] | None = None   # resolved file, offset, length
    n: int = 0           # element count


I63 = (1 << 63) - 1


def mul(a: int, b: int, what) -> int:
    # X5: every product formed, left to right, is at most 2^63 - 1.
    r = a * b
    if r > I63:
        raise what()
    return r


class Oracle:
    def __init__(self, model: Path):
        self.model = model
        self.data = model.read_bytes()
        self.rd = Reader(self.data, str(model))
        self.root = Path(os.path.realpath(os.path.dirname(os.path.abspath(model))))
        self.ext_files: dict[str, int] = {}
        self.plans: dict[int, Plan] = {}

    def terr(self, t: Msg, what: str) -> OnnxError:
        name = t.get(8, b"").decode("utf-8", "replace")
        return OnnxError(f"{self.model}: {t.path}: byte {t.offset}: tensor {name!r}: {what}")

    # --- X5
    def plan(self, t: Msg) -> Plan:
        if 3 in t.written:
            raise self.terr(t, "a segment: v1 labels whole tensors only")
        dt = t.get(2, 0)
        if dt not in DT:
            raise self.terr(t, f"data_type {dt} is not in the table")
        dtype, width, typed, rng = DT[dt]
        dims = t.rep(1)
        for d in dims:
            if d < 0:
                raise self.terr(t, f"a negative dim {d}")
        n = 1
        if 0 in dims:
            n = 0  # X5: a zero dim makes n = 0, and no product is formed
        else:
            for d in dims:
                n = mul(n, d, lambda: self.terr(t, "the element count is above 2^63 - 1"))
        if isinstance(width, tuple):
            per = width[1]
            want_bytes = (n + per - 1) // per
            if want_bytes > I63:
                raise self.terr(t, "the byte count is above 2^63 - 1")
            want_values = want_bytes
        elif width == "s":
            want_bytes = None
            want_values = n
        else:
            want_bytes = mul(n, width, lambda: self.terr(t, "the byte count is above 2^63 - 1"))
            want_values = 2 * n if dt in (14, 15) else n
        has_raw = 9 in t.written
        typed_written = [k for k in TYPED if k in t.written]
        loc = t.get(14, 0)
        has_ext_list = 13 in t.written
        if loc == 1 and not has_ext_list:
            raise self.terr(t, "data_location EXTERNAL without external_data")
        if has_ext_list and loc != 1:
            raise self.terr(t, "external_data written while data_location is not EXTERNAL")
        external = loc == 1
        if has_raw and typed_written:
            raise self.terr(t, f"raw_data beside {TYPED_NAMES[typed_written[0]]}")
        if has_raw and external:
            raise self.terr(t, "raw_data beside external data")
        if external and typed_written:
            # not listed in X5 explicitly: "exactly one of these holds them"
            raise self.terr(t, f"external data beside {TYPED_NAMES[typed_written[0]]}")
        for k in typed_written:
            if k != typed:
                raise self.terr(t, f"{TYPED_NAMES[k]} written for a {dtype} tensor (it takes {TYPED_NAMES[typed]})")
        if has_raw:
            if dt == 8:
                raise self.terr(t, "a STRING tensor in raw_data")
            raw = t.get(9)
            if len(raw) != want_bytes:
                raise self.terr(t, f"raw_data holds {len(raw)} bytes, {n} elements of {dtype} take {want_bytes}")
            self.check_bits(t, dt, n, raw)
            return Plan(dtype, want_bytes, "raw", n=n)
        if typed_written:
            vals = t.rep(typed)
            if len(vals) != want_values:
                raise self.terr(t, f"{TYPED_NAMES[typed]} holds {len(vals)} values, {dtype} with {n} elements takes {want_values}")
            if rng is not None:
                lo, hi = rng
                for i, v in enumerate(vals):
                    if not lo <= v <= hi:
                        raise self.terr(t, f"{TYPED_NAMES[typed]}[{i}] = {v} is outside {lo} … {hi}")
            if dt == 8:
                nb = 0
                for v in vals:
                    nb += 8 + len(v)
                return Plan(dtype, nb, "typed", n=n)
            if isinstance(width, tuple):
                self.check_bits(t, dt, n, bytes(vals))
            return Plan(dtype, want_bytes, "typed", n=n)
        if external:
            f, off, length = self.external(t)
            if dt == 8:
                raise self.terr(t, "a STRING tensor in external data")  # no byte count in X5's table
            if length != want_bytes:
                raise self.terr(t, f"external length {length}, {n} elements of {dtype} take {want_bytes}")
            return Plan(dtype, want_bytes, "external", (f, off, length), n=n)
        if n > 0:
            raise self.terr(t, f"{n} elements and no data")
        return Plan(dtype, 0, "empty")

    def check_bits(self, t: Msg, dt: int, n: int, b: bytes) -> None:
        if dt == 9:
            for i, x in enumerate(b):
                if x > 1:
                    raise self.terr(t, f"BOOL element {i} is {x}")
        if dt in (21, 22, 23, 25, 26) and b:
            per = 2 if dt <= 23 else 4
            used = n % per
            if used:
                bits = used * (8 // per)
                if b[-1] >> bits:
                    raise self.terr(t, "bits after the last packed element are not 0")

    # --- X6
    def external(self, t: Msg) -> tuple[str, int, int]:
        entries: dict[bytes, bytes] = {}
        for e in t.rep(13):
            k, v = e.get(1, b""), e.get(2, b"")
            if k not in (b"location", b"offset", b"length", b"checksum", b"basepath"):
                raise self.terr(t, f"external_data key {k!r}")
            if k in entries:
                raise self.terr(t, f"external_data key {k.decode()} twice")
            entries[k] = v
        if b"location" not in entries:
            raise self.terr(t, "external_data without location")
        loc = entries[b"location"]
        path = self.resolve(t, loc)
        size = os.stat(path).st_size
        off = self.decimal(t, entries, b"offset", 0)
        if off > size:
            raise self.terr(t, f"external offset {off} past the end of {loc!r} ({size} bytes)")
        length = self.decimal(t, entries, b"length", size - off)
        if off + length > size:
            raise self.terr(t, f"external range {off} + {length} past the end of {loc!r} ({size} bytes)")
        self.ext_files[path] = size
        return path, off, length

    def decimal(self, t: Msg, entries, key: bytes, default: int) -> int:
        if key not in entries:
            return default
        v = entries[key]
        if not v or len(v) > 20 or not all(0x30 <= c <= 0x39 for c in v):
            raise self.terr(t, f"external {key.decode()} {v!r} is not a decimal")
        x = int(v)
        if x > U64:
            raise self.terr(t, f"external {key.decode()} {v!r} does not fit 64 bits")
        return x

    def resolve(self, t: Msg, loc: bytes) -> str:
        comps = loc.split(b"/")
        if loc.startswith(b"/") or any(c in (b"", b".", b"..") or b"\\" in c or b"\0" in c for c in comps):
            raise self.terr(t, f"external location {loc!r} is not a relative name beneath the model's directory")
        allowed = [str(self.root)]
        # A Hugging Face cache snapshot (<repo>/snapshots/<rev>): its blobs too.
        r = self.root
        if r.parent.name == "snapshots" and (r.parent.parent / "blobs").is_dir() and not (r.parent.parent / "blobs").is_symlink():
            repo = r.parent.parent
            allowed.append(str(repo / "blobs"))
            shared = repo.parent / "blobs"
            if (shared / ".huggingface-shared-blobs").is_file():
                allowed.append(str(shared))

        def inside(p: str) -> bool:
            return any(p == a or p.startswith(a + os.sep) for a in allowed)

        cur = str(self.root)
        for i, c in enumerate(comps):
            nxt = os.path.join(cur, os.fsdecode(c))
            last = i == len(comps) - 1
            if not last:
                st = os.lstat(nxt) if os.path.lexists(nxt) else None
                if st is None or not stat.S_ISDIR(st.st_mode):
                    raise self.terr(t, f"external location {loc!r}: {os.fsdecode(c)!r} is not a directory (a link on the way is refused)")
                cur = nxt
                continue
            p = nxt
            seen = set()
            for _ in range(41):
                if not os.path.lexists(p):
                    raise self.terr(t, f"external location {loc!r}: no such file")
                st = os.lstat(p)
                if stat.S_ISLNK(st.st_mode):
                    if p in seen or len(seen) >= 40:
                        raise self.terr(t, f"external location {loc!r}: a link loop")
                    seen.add(p)
                    tgt = os.readlink(p)
                    land = os.path.normpath(os.path.join(os.path.dirname(p), tgt))
                    if not inside(land) or os.path.realpath(os.path.dirname(land)) != os.path.dirname(land):
                        raise self.terr(t, f"external location {loc!r} leads outside the model's directory through a link")
                    p = land
                    continue
                if not stat.S_ISREG(st.st_mode):
                    raise self.terr(t, f"external location {loc!r} is not a regular file")
                return p
            raise self.terr(t, f"external location {loc!r}: a link loop")
        raise AssertionError

    # --- hashing
    def elements_hash(self, t: Msg) -> bytes:
        p = self.plans[id(t)]
        dt = t.get(2)
        h = hashlib.sha256()
        if p.source == "raw":
            h.update(t.get(9))
        elif p.source == "external":
            f, off, length = p.ext
            with open(f, "rb") as fh:
                fh.seek(off)
                left = length
                while left:
                    chunk = fh.read(min(left, 1 << 20))
                    if not chunk:
                        raise self.terr(t, f"external file {f} shrank while read")
                    if dt == 9 and chunk.translate(None, b"\x00\x01"):
                        raise self.terr(t, "a BOOL element is not 0 or 1")
                    h.update(chunk)
                    left -= len(chunk)
                    if not left and chunk:
                        self.check_bits(t, dt, p.n, chunk[-1:])
        elif p.source == "typed":
            vals = t.rep(DT[dt][2])
            width = DT[dt][1]
            if dt == 8:
                for v in vals:
                    h.update(le_u64(len(v)) + v)
            elif dt in (1, 14):
                h.update(b"".join(vals))
            elif dt in (11, 15):
                h.update(b"".join(vals))
            elif dt in (7,):
                h.update(b"".join(struct.pack("<q", v) for v in vals))
            elif dt == 12:
                h.update(b"".join(struct.pack("<I", v) for v in vals))
            elif dt == 13:
                h.update(b"".join(struct.pack("<Q", v) for v in vals))
            elif dt == 6:
                h.update(b"".join(struct.pack("<i", v) for v in vals))
            else:  # 1- or 2-byte int32_data types; bits for floats; packed bytes
                w = 1 if isinstance(width, tuple) else width
                h.update(b"".join((v & ((1 << (8 * w)) - 1)).to_bytes(w, "little") for v in vals))
        return h.digest()

    def check_work(self) -> None:
        bound = 16 * (len(self.data) + sum(self.ext_files.values())) + MIB
        total = 0
        for t in self.rd.tensors:
            total += self.plans[id(t)].nbytes
            if total > bound:
                raise self.terr(t, f"the elements of all tensors exceed the work bound ({bound} bytes)")

    # --- X3 / X4
    def enc(self, m: Msg) -> bytes:
        if m.name == "TensorProto":
            return self.enc_tensor(m)
        if m.name == "SparseTensorProto":
            return self.enc_sparse(m)
        schema = SCHEMA[m.name]
        out = bytearray()
        done_oneofs = set()
        for num in sorted(schema):
            f = schema[num]
            if f.oneof is not None:
                if f.oneof in done_oneofs:
                    continue
                done_oneofs.add(f.oneof)
                members = [k for k, g in schema.items() if g.oneof == f.oneof and k in m.written]
                if not members:
                    out += le_u32(0)
                    continue
                k = members[0]
                g = schema[k]
                out += le_u32(k)
                out += self.enc_msg(m.get(k)) if g.kind.startswith("msg:") else self.enc_scalar(g, m.get(k))
                continue
            if f.kind.startswith("msg:"):
                if f.rep:
                    items = m.rep(num)
                    if f.sorted_by:
                        keyed = [(self.key(x, f.sorted_by), x) for x in items]
                        keyed.sort(key=lambda kx: kx[0])
                        for a, b in zip(keyed, keyed[1:]):
                            if a[0] == b[0]:
                                raise OnnxError(f"{self.model}: {m.path or 'ModelProto'}.{f.name}: two entries with the key {a[0][0] if len(a[0]) == 1 else a[0]!r}")
                        items = [x for _, x in keyed]
                    out += le_u64(len(items))
                    for x in items:
                        out += self.enc_msg(x)
                else:
                    x = m.get(num)
                    if x is None:
                        if m.name == "ModelProto" and num == 7:
                            raise OnnxError(f"{self.model}: ModelProto: no graph")
                        out += b"\x00"
                    else:
                        out += b"\x01" + self.enc_msg(x)
            elif f.rep:
                vals = m.rep(num)
                out += le_u64(len(vals))
                for v in vals:
                    out += self.enc_scalar(f, v)
            else:
                out += self.enc_scalar(f, m.get(num))
        if m.name == "GraphProto":
            dense = {t.get(8, b"") for t in m.rep(5)}
            for s in m.rep(15):
                v = s.get(1)
                if v is not None and v.get(8, b"") in dense:
                    raise OnnxError(f"{self.model}: {s.path}: a sparse initializer named as a dense one ({v.get(8, b'')!r})")
        return bytes(out)

    def enc_msg(self, m: Msg) -> bytes:
        return self.enc(m)

    @staticmethod
    def enc_scalar(f: F, v) -> bytes:
        k = f.kind
        if k in ("string", "bytes"):
            return H(v if v is not None else b"")
        if k == "float":
            return v if v is not None else b"\0\0\0\0"
        if k == "double":
            return v if v is not None else b"\0" * 8
        if k == "uint64":
            return le_u64(v or 0)
        return le_i64(v or 0)

    def key(self, m: Msg, fields: tuple[str, ...]) -> tuple[bytes, ...]:
        out = []
        for fname in fields:
            if fname == "values.name":
                v = m.get(1)
                out.append(v.get(8, b"") if v is not None else b"")
                continue
            num = next(k for k, f in SCHEMA[m.name].items() if f.name == fname)
            out.append(m.get(num, b""))
        return tuple(out)

    def enc_tensor(self, t: Msg) -> bytes:
        p = self.plans[id(t)]
        dt = p.dtype.encode()
        dims = t.rep(1)
        props = t.rep(16)
        keyed = sorted(((x.get(1, b""), x) for x in props), key=lambda kx: kx[0])
        for a, b in zip(keyed, keyed[1:]):
            if a[0] == b[0]:
                raise self.terr(t, f"two metadata_props with the key {a[0]!r}")
        out = bytearray(H(t.get(8, b"")) + le_u32(len(dt)) + dt + le_u64(len(dims)))
        for d in dims:
            out += le_u64(d)
        out += H(t.get(12, b""))
        out += le_u64(len(keyed))
        for _, x in keyed:
            out += self.enc(x)
        out += self.elements_hash(t)
        return bytes(out)

    def enc_sparse(self, s: Msg) -> bytes:
        v, i = s.get(1), s.get(2)
        if v is None or i is None:
            raise OnnxError(f"{self.model}: {s.path}: byte {s.offset}: a sparse tensor without values or indices")
        dims = s.rep(3)
        out = bytearray(self.enc(v) + self.enc(i) + le_u64(len(dims)))
        for d in dims:
            if d < 0:
                # X3.2 writes sparse dims as LE_u64 without saying a negative one is an error
                raise OnnxError(f"{self.model}: {s.path}.dims: a negative dim {d}")
            out += le_u64(d)
        return bytes(out)

    def skeleton(self) -> bytes:
        model = self.rd.parse("ModelProto", 0, len(self.data), "", 1)
        irv = model.get(1, 0)
        if not 3 <= irv <= 13:
            raise OnnxError(f"{self.model}: ModelProto.ir_version: {irv if 1 in model.written else 'absent'}: only IR versions 3 to 13 are read")
        if model.get(7) is None:
            raise OnnxError(f"{self.model}: ModelProto: no graph")
        for t in self.rd.tensors:
            self.plans[id(t)] = self.plan(t)
        self.check_work()
        return b"ONNX" + le_u32(1) + self.enc(model)


def label(path: str | Path) -> str:
    return hashlib.sha256(Oracle(Path(path)).skeleton()).hexdigest()


def skeleton(path: str | Path) -> bytes:
    return Oracle(Path(path)).skeleton()


def main(argv: list[str]) -> int:
    skel = "--skeleton" in argv
    args = [a for a in argv if a != "--skeleton"]
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        s = skeleton(args[0])
    except OnnxError as e:
        print(f"onnx_oracle: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"onnx_oracle: {args[0]}: {e}", file=sys.stderr)
        return 1
    if skel:
        sys.stdout.buffer.write(s)
    else:
        print(f"{hashlib.sha256(s).hexdigest()}  {args[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
