"""An independent oracle for the PyTorch checkpoint label (pytorch-skeleton-v1).

usage: pt_oracle.py [--json] PATH...

Written from docs/SPEC.md Part V (and the contract it restates) alone, with
the standard library only: no code of the Rust side, no torch, and no
`pickle.load` -- every pickle is walked opcode by opcode by the small
interpreter below, which builds plain data and never imports or calls what
a pickle names. `zipfile` lists the archive (it is not the crate's reader);
the checks Part V's P2 adds on top (one folder, stored entries, local
headers agreeing with the directory, no overlap, no duplicate names) are
made here by hand.

Each PATH is a checkpoint file (zip or legacy format), a shard
`P-NNNNN-of-MMMMM.bin` (the model of `P.bin.index.json` beside it, else of
the whole shard set, given by its first shard) or a `*.bin.index.json`.

Prints `<label>  <path>` per PATH, like sha256sum; with --json, one JSON
line {"models": [{"path", "label"} or {"path", "error"}]} (a refused file is
reported there, not fatal). Without --json a refused file exits 2 with one
line on stderr.

The other interop scripts import label_path() from here.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import struct
import sys
import zipfile

# SPEC Part V (P2) reads a zip by its records' names, offsets, sizes and
# methods; no "version needed to extract" field is a rule of it, and
# torch.load's reader ignores it. zipfile refuses a central-directory entry
# claiming a version above 6.3: lift that, so this oracle holds SPEC's rules
# and no more (found by tests/mutation/pt_mutation.rs).
zipfile.MAX_EXTRACT_VERSION = 0xFFFF
from array import array
from pathlib import Path
from typing import Any, Iterator

MAGIC = b"PTCH"
VERSION = 1
LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
MAX_OPS = 1 << 24
MAX_VALUES = 1 << 26
MAX_DEPTH = 1000
MAX_RANK = 64
INDEX_SUFFIX = ".bin.index.json"
SHARD_NAME = re.compile(r"^(?P<prefix>.*)-(?P<no>\d{5})-of-(?P<count>\d{5})\.bin$", re.DOTALL)

# P6: storage class -> (dtype, bytes); torch dtype name -> (dtype, bytes).
STORAGES = {
    "DoubleStorage": ("F64", 8),
    "FloatStorage": ("F32", 4),
    "HalfStorage": ("F16", 2),
    "BFloat16Storage": ("BF16", 2),
    "LongStorage": ("I64", 8),
    "IntStorage": ("I32", 4),
    "ShortStorage": ("I16", 2),
    "CharStorage": ("I8", 1),
    "ByteStorage": ("U8", 1),
    "BoolStorage": ("BOOL", 1),
    "ComplexFloatStorage": ("C64", 8),
    "ComplexDoubleStorage": ("C128", 16),
}
DTYPES = {
    "float64": ("F64", 8),
    "float32": ("F32", 4),
    "float16": ("F16", 2),
    "bfloat16": ("BF16", 2),
    "int64": ("I64", 8),
    "int32": ("I32", 4),
    "int16": ("I16", 2),
    "int8": ("I8", 1),
    "uint8": ("U8", 1),
    "bool": ("BOOL", 1),
    "complex64": ("C64", 8),
    "complex128": ("C128", 16),
    "float8_e4m3fn": ("F8_E4M3", 1),
    "float8_e5m2": ("F8_E5M2", 1),
    "float8_e4m3fnuz": ("F8_E4M3FNUZ", 1),
    "float8_e5m2fnuz": ("F8_E5M2FNUZ", 1),
    "float8_e8m0fnu": ("F8_E8M0", 1),
    "uint16": ("U16", 2),
    "uint32": ("U32", 4),
    "uint64": ("U64", 8),
}
REBUILDS = {"_rebuild_tensor", "_rebuild_tensor_v2", "_rebuild_tensor_v3", "_rebuild_parameter", "_rebuild_parameter_with_state"}


class Rejected(Exception):
    """The contract refuses the input; the message says why."""


def H(b: bytes) -> bytes:
    return hashlib.sha256(b).digest()


def le_u32(x: int) -> bytes:
    return struct.pack("<I", x)


def le_u64(x: int) -> bytes:
    return struct.pack("<Q", x)


# ---- the data a pickle builds ----


class Str:
    """A pickle string: the bytes it holds (P7: "s's bytes")."""

    __slots__ = ("b",)

    def __init__(self, b: bytes) -> None:
        self.b = b

    def text(self) -> str:
        return self.b.decode("utf-8", "surrogatepass")


class Float:
    """A float as its 8 little-endian bytes (bits kept)."""

    __slots__ = ("le",)

    def __init__(self, le: bytes) -> None:
        self.le = le

    def value(self) -> float:
        return struct.unpack("<d", self.le)[0]


class Complex:
    __slots__ = ("re", "im")

    def __init__(self, re_: Float, im: Float) -> None:
        self.re, self.im = re_, im


class Bytes:
    __slots__ = ("b",)

    def __init__(self, b: bytes) -> None:
        self.b = b


class Mapping:
    """dict, OrderedDict and Counter alike: entries in insertion order."""

    def __init__(self, made_by: str) -> None:
        self.items: list[tuple[Any, Any]] = []
        self.made_by = made_by  # "dict", "OrderedDict", "Counter"
        self.built = False
        self.attrs: Mapping | None = None


class List:
    def __init__(self) -> None:
        self.items: list[Any] = []


class Tuple:
    def __init__(self, items: list[Any]) -> None:
        self.items = items


class SetV:
    def __init__(self, items: list[Any]) -> None:
        self.items = items


class Dtype:
    __slots__ = ("name", "size")

    def __init__(self, name: str, size: int) -> None:
        self.name, self.size = name, size


class Device:
    __slots__ = ("type", "index")

    def __init__(self, type_: Str, index: int | None) -> None:
        self.type, self.index = type_, index


class Global:
    """A name GLOBAL pushed (accepted ones only)."""

    __slots__ = ("module", "name")

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name

    def __repr__(self) -> str:
        return f"{self.module}.{self.name}"


class Storage:
    __slots__ = ("key", "cls", "numel", "elem")

    def __init__(self, key: str, cls: str, numel: int, elem: int) -> None:
        self.key, self.cls, self.numel, self.elem = key, cls, numel, elem


class Tensor:
    def __init__(self, storage: Storage, offset: int, size: list[int], stride: list[int], dtype: str, esize: int) -> None:
        self.storage, self.offset, self.size, self.stride = storage, offset, size, stride
        self.dtype, self.esize = dtype, esize
        self.attrs: Mapping | None = None


class Mark:
    pass


MARK = Mark()

ACCEPTED_GLOBALS = {
    ("collections", "OrderedDict"),
    ("collections", "Counter"),
    *(("torch._utils", f) for f in REBUILDS),
    ("torch._tensor", "_rebuild_from_type_v2"),
    ("torch", "Tensor"),
    ("torch.nn.parameter", "Parameter"),
    *(("torch", s) for s in STORAGES),
    ("torch", "UntypedStorage"),
    ("torch.storage", "UntypedStorage"),
    ("torch", "Size"),
    *(("torch", d) for d in DTYPES),
    ("torch", "device"),
    ("_codecs", "encode"),
    *((m, n) for m in ("builtins", "__builtin__") for n in ("bytearray", "set", "complex")),
}


def is_str(v: Any) -> bool:
    return isinstance(v, Str)


def is_int(v: Any) -> bool:
    return type(v) is int


def is_mapping(v: Any) -> bool:
    return isinstance(v, Mapping)


def empty_mapping(v: Any) -> bool:
    return isinstance(v, Mapping) and not v.items and v.attrs is None


def int_tuple(v: Any, what: str) -> list[int]:
    if not isinstance(v, Tuple) or not all(is_int(x) for x in v.items):
        raise Rejected(f"{what} is not a tuple of ints")
    return list(v.items)


# ---- the pickle interpreter (P4) ----


def utf8_surrogatepass(b: bytes, at: int) -> Str:
    try:
        b.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError as e:
        raise Rejected(f"byte {at}: BINUNICODE is not UTF-8 ({e})") from e
    return Str(b)


class Pickle:
    """Runs one pickle from data[pos:] as data; `storage(pid, at)` resolves
    a persistent id tuple."""

    def __init__(self, data: bytes, pos: int, base: int, storage: Any) -> None:
        self.d, self.p, self.base, self.storage = data, pos, base, storage

    def need(self, n: int, at: int) -> bytes:
        if n > len(self.d) - self.p:
            raise Rejected(f"byte {self.base + at}: the pickle ends before its STOP")
        b = self.d[self.p : self.p + n]
        self.p += n
        return b

    def run(self) -> tuple[Any, int]:
        """(the object, the offset after STOP)."""
        stack: list[Any] = []
        marks: list[int] = []
        memo: dict[int, Any] = {}
        ops = 0

        def pop(at: int) -> Any:
            if len(stack) <= (marks[-1] if marks else 0):
                raise Rejected(f"byte {self.base + at}: stack underflow")
            return stack.pop()

        def pop_mark(at: int) -> list[Any]:
            if not marks:
                raise Rejected(f"byte {self.base + at}: no MARK")
            m = marks.pop()
            items = stack[m:]
            del stack[m:]
            return items

        while True:
            at = self.p
            ops += 1
            if ops > MAX_OPS:
                raise Rejected(f"byte {self.base + at}: more than 2^24 opcodes")
            op = self.need(1, at)[0]
            c = chr(op)
            if op == 0x80:  # PROTO
                v = self.need(1, at)[0]
                if v > 2:
                    raise Rejected(f"byte {self.base + at}: pickle protocol {v} (PROTO > 2)")
            elif c == ".":  # STOP
                if marks:
                    raise Rejected(f"byte {self.base + at}: MARK left at STOP")
                if len(stack) != 1:
                    raise Rejected(f"byte {self.base + at}: {len(stack)} objects on the stack at STOP")
                return stack[0], self.p
            elif c == "(":
                marks.append(len(stack))
            elif c == "N":
                stack.append(None)
            elif op == 0x88:
                stack.append(True)
            elif op == 0x89:
                stack.append(False)
            elif c == "J":
                stack.append(struct.unpack("<i", self.need(4, at))[0])
            elif c == "K":
                stack.append(self.need(1, at)[0])
            elif c == "M":
                stack.append(struct.unpack("<H", self.need(2, at))[0])
            elif op == 0x8A:  # LONG1
                n = self.need(1, at)[0]
                stack.append(int.from_bytes(self.need(n, at), "little", signed=True))
            elif c == "G":
                stack.append(Float(self.need(8, at)[::-1]))
            elif c == "X":
                (n,) = struct.unpack("<I", self.need(4, at))
                stack.append(utf8_surrogatepass(self.need(n, at), self.base + at))
            elif c == "U":
                n = self.need(1, at)[0]
                b = self.need(n, at)
                try:
                    b.decode("utf-8", "strict")
                except UnicodeDecodeError as e:
                    raise Rejected(f"byte {self.base + at}: SHORT_BINSTRING is not UTF-8") from e
                stack.append(Str(b))
            elif c == ")":
                stack.append(Tuple([]))
            elif c == "t":
                stack.append(Tuple(pop_mark(at)))
            elif op in (0x85, 0x86, 0x87):
                n = op - 0x84
                items = [pop(at) for _ in range(n)][::-1]
                stack.append(Tuple(items))
            elif c == "]":
                stack.append(List())
            elif c == "a":
                v = pop(at)
                lst = pop(at)
                if not isinstance(lst, List):
                    raise Rejected(f"byte {self.base + at}: APPEND onto a non-list")
                lst.items.append(v)
                stack.append(lst)
            elif c == "e":
                items = pop_mark(at)
                lst = pop(at)
                if not isinstance(lst, List):
                    raise Rejected(f"byte {self.base + at}: APPENDS onto a non-list")
                lst.items.extend(items)
                stack.append(lst)
            elif c == "}":
                stack.append(Mapping("dict"))
            elif c == "s":
                v = pop(at)
                k = pop(at)
                m = pop(at)
                if not is_mapping(m):
                    raise Rejected(f"byte {self.base + at}: SETITEM into a non-mapping")
                m.items.append((k, v))
                stack.append(m)
            elif c == "u":
                items = pop_mark(at)
                if len(items) % 2:
                    raise Rejected(f"byte {self.base + at}: SETITEMS with an odd count")
                m = pop(at)
                if not is_mapping(m):
                    raise Rejected(f"byte {self.base + at}: SETITEMS into a non-mapping")
                m.items.extend(zip(items[0::2], items[1::2]))
                stack.append(m)
            elif op == 0x8F:
                stack.append(SetV([]))
            elif c in "qr":
                i = self.need(1, at)[0] if c == "q" else struct.unpack("<I", self.need(4, at))[0]
                if len(stack) <= (marks[-1] if marks else 0):
                    raise Rejected(f"byte {self.base + at}: PUT on an empty stack")
                memo[i] = stack[-1]
            elif c in "hj":
                i = self.need(1, at)[0] if c == "h" else struct.unpack("<I", self.need(4, at))[0]
                if i not in memo:
                    raise Rejected(f"byte {self.base + at}: GET of memo {i}, never put")
                stack.append(memo[i])
            elif c == "c":
                mod = self.line(at)
                name = self.line(at)
                if (mod, name) not in ACCEPTED_GLOBALS:
                    raise Rejected(f"byte {self.base + at}: global {mod}.{name}: loading the file would import and call it")
                if mod == "torch" and name in DTYPES:
                    stack.append(Dtype(*DTYPES[name]))
                else:
                    stack.append(Global(mod, name))
            elif c == "R":
                args = pop(at)
                fn = pop(at)
                stack.append(self.call(fn, args, at))
            elif op == 0x81:  # NEWOBJ
                args = pop(at)
                cls = pop(at)
                if not (isinstance(cls, Global) and (cls.module, cls.name) == ("torch.nn.parameter", "Parameter")):
                    raise Rejected(f"byte {self.base + at}: NEWOBJ of {cls!r}, not Parameter")
                ok = isinstance(args, Tuple) and (
                    (len(args.items) == 1 and isinstance(args.items[0], Tensor))
                    or (len(args.items) == 2 and isinstance(args.items[0], Tensor) and type(args.items[1]) is bool)
                )
                if not ok:
                    raise Rejected(f"byte {self.base + at}: NEWOBJ Parameter with other arguments")
                stack.append(args.items[0])
            elif c == "b":  # BUILD
                state = pop(at)
                obj = pop(at)
                if not (is_mapping(obj) and obj.made_by == "OrderedDict") or obj.built:
                    raise Rejected(f"byte {self.base + at}: BUILD of something not a fresh OrderedDict")
                obj.built = True
                if not is_mapping(state) or not all(is_str(k) for k, _ in state.items):
                    raise Rejected(f"byte {self.base + at}: BUILD state is not a mapping of strings")
                if state.items or state.attrs is not None:
                    obj.attrs = state
                stack.append(obj)
            elif c == "Q":  # BINPERSID
                pid = pop(at)
                stack.append(self.storage(pid, self.base + at))
            else:
                raise Rejected(f"byte {self.base + at}: opcode {op:#04x} ({c!r}) is not accepted")

    def line(self, at: int) -> str:
        end = self.d.find(b"\n", self.p, self.p + 257)
        if end < 0:
            raise Rejected(f"byte {self.base + at}: GLOBAL line longer than 256 bytes or unterminated")
        b = self.d[self.p : end]
        self.p = end + 1
        return b.decode("utf-8", "replace")

    def call(self, fn: Any, args: Any, at: int) -> Any:
        where = f"byte {self.base + at}"
        if not isinstance(fn, Global):
            raise Rejected(f"{where}: REDUCE of something not a global")
        if not isinstance(args, Tuple):
            raise Rejected(f"{where}: REDUCE {fn!r} with arguments that are not a tuple")
        a = args.items
        key = (fn.module, fn.name)
        bad = Rejected(f"{where}: {fn!r} called with other arguments")
        if key == ("collections", "OrderedDict"):
            m = Mapping("OrderedDict")
            if len(a) == 1 and isinstance(a[0], List):
                for pair in a[0].items:
                    items = pair.items if isinstance(pair, (List, Tuple)) else None
                    if items is None or len(items) != 2:
                        raise bad
                    m.items.append((items[0], items[1]))
            elif a:
                raise bad
            return m
        if key == ("collections", "Counter"):
            m = Mapping("Counter")
            if len(a) == 1 and is_mapping(a[0]):
                m.items.extend(a[0].items)
            elif a:
                raise bad
            return m
        if fn.module == "torch._utils" and fn.name in REBUILDS:
            return self.rebuild(fn.name, a, where)
        if key == ("torch._tensor", "_rebuild_from_type_v2"):
            if len(a) != 4:
                raise bad
            func, typ, fargs, state = a
            if not (isinstance(func, Global) and func.module == "torch._utils" and func.name in REBUILDS):
                raise bad
            if not (isinstance(typ, Global) and (typ.module, typ.name) in (("torch", "Tensor"), ("torch.nn.parameter", "Parameter"))):
                raise bad
            if not isinstance(fargs, Tuple):
                raise bad
            t = self.rebuild(func.name, fargs.items, where)
            return with_state(t, state, where)
        if key == ("torch", "Size"):
            if len(a) != 1:
                raise bad
            int_tuple(a[0], f"{where}: torch.Size's argument")
            return a[0]
        if key == ("torch", "device"):
            if len(a) == 1 and is_str(a[0]):
                s = a[0].text()
                m = re.fullmatch(r"([^:]*):(0|[1-9][0-9]*)", s)
                if m:
                    return Device(Str(m[1].encode()), int(m[2]))
                if ":" in s:
                    raise bad
                return Device(a[0], None)
            if len(a) == 2 and is_str(a[0]) and is_int(a[1]) and a[1] >= 0 and b":" not in a[0].b:
                return Device(a[0], a[1])
            raise bad
        if key == ("_codecs", "encode"):
            if len(a) == 2 and is_str(a[0]) and is_str(a[1]) and a[1].b == b"latin1":
                try:
                    return Bytes(a[0].text().encode("latin1"))
                except UnicodeEncodeError as e:
                    raise bad from e
            raise bad
        if fn.module in ("builtins", "__builtin__"):
            if fn.name == "bytearray":
                if not a:
                    return Bytes(b"")
                if len(a) == 1 and isinstance(a[0], Bytes):
                    return Bytes(a[0].b)
                if len(a) == 2 and is_str(a[0]) and is_str(a[1]) and a[1].b in (b"latin-1", b"latin1"):
                    try:
                        return Bytes(a[0].text().encode("latin1"))
                    except UnicodeEncodeError as e:
                        raise bad from e
                raise bad
            if fn.name == "set":
                if not a:
                    return SetV([])
                if len(a) == 1 and isinstance(a[0], List):
                    return SetV(list(a[0].items))
                raise bad
            if fn.name == "complex":
                if len(a) == 2 and all(isinstance(x, Float) for x in a):
                    return Complex(a[0], a[1])
                raise bad
        raise Rejected(f"{where}: {fn!r} cannot be called")

    def rebuild(self, name: str, a: list[Any], where: str) -> Tensor:
        bad = Rejected(f"{where}: torch._utils.{name} called with other arguments")
        if name in ("_rebuild_parameter", "_rebuild_parameter_with_state"):
            n = 3 if name == "_rebuild_parameter" else 4
            if len(a) != n or not isinstance(a[0], Tensor) or type(a[1]) is not bool:
                raise bad
            if not (a[2] is None or empty_mapping(a[2])):
                raise Rejected(f"{where}: {name}: backward_hooks not empty")
            return a[0] if n == 3 else with_state(a[0], a[3], where)
        if name == "_rebuild_tensor":
            if len(a) != 4:
                raise bad
            storage, offset, size, stride = a
            dtype = None
        elif name == "_rebuild_tensor_v2":
            if len(a) not in (6, 7):
                raise bad
            storage, offset, size, stride, rg, hooks = a[:6]
            dtype = None
            meta = a[6] if len(a) == 7 else None
        else:
            if len(a) not in (7, 8):
                raise bad
            storage, offset, size, stride, rg, hooks, dtype = a[:7]
            meta = a[7] if len(a) == 8 else None
            if not isinstance(dtype, Dtype):
                raise bad
        if name != "_rebuild_tensor":
            if type(rg) is not bool:
                raise Rejected(f"{where}: {name}: requires_grad is not a bool")
            if not (hooks is None or empty_mapping(hooks)):
                raise Rejected(f"{where}: {name}: backward_hooks not empty")
            if meta is not None and not empty_mapping(meta):
                raise Rejected(f"{where}: {name}: metadata not empty")
        if not isinstance(storage, Storage):
            raise bad
        if not is_int(offset) or offset < 0:
            raise bad
        size_l = int_tuple(size, f"{where}: size")
        stride_l = int_tuple(stride, f"{where}: stride")
        if len(size_l) != len(stride_l) or len(size_l) > MAX_RANK or any(x < 0 for x in size_l + stride_l):
            raise bad
        storage_bytes = storage.numel * storage.elem
        if dtype is None:
            if storage.cls not in STORAGES:
                raise Rejected(f"{where}: {name} of an untyped storage")
            dt, es = STORAGES[storage.cls]
        else:
            dt, es = dtype.name, dtype.size
            if storage_bytes % es:
                raise Rejected(f"{where}: {dt} does not divide the storage's {storage_bytes} bytes")
        count = storage_bytes // es
        if all(s > 0 for s in size_l):
            last = offset + sum((s - 1) * st for s, st in zip(size_l, stride_l))
            if last >= count:
                raise Rejected(f"{where}: tensor reads element {last} of a storage of {count}")
        return Tensor(storage, offset, size_l, stride_l, dt, es)


def with_state(t: Tensor, state: Any, where: str) -> Tensor:
    if state is None:
        return t
    if not is_mapping(state) or not all(is_str(k) for k, _ in state.items):
        raise Rejected(f"{where}: a tensor's state is not a mapping of strings")
    if state.items or state.attrs is not None:
        # A fresh tensor each time: the same rebuilt tensor is not shared here.
        t2 = Tensor(t.storage, t.offset, t.size, t.stride, t.dtype, t.esize)
        t2.attrs = state
        return t2
    return t


# ---- reading files (P1-P3) ----


class Checkpoint:
    """The root object and the storages' bytes by key."""

    def __init__(self, root: Any, data: dict[str, bytes], big: bool) -> None:
        self.root, self.data, self.big = root, data, big


def persistent_id(pid: Any, at: int, legacy: bool, used: dict[str, Storage]) -> Storage:
    n = 6 if legacy else 5
    items = pid.items if isinstance(pid, Tuple) else None
    if items is None or len(items) != n:
        raise Rejected(f"byte {at}: a persistent id that is not a {n}-tuple")
    tag, cls, key, loc, numel = items[:5]
    if not (is_str(tag) and tag.b == b"storage"):
        raise Rejected(f"byte {at}: a persistent id not tagged 'storage'")
    if not isinstance(cls, Global) or not (
        (cls.module == "torch" and cls.name in STORAGES) or cls.name == "UntypedStorage"
    ):
        raise Rejected(f"byte {at}: a persistent id whose class is not a storage class")
    if not is_str(key) or not is_str(loc) or not is_int(numel) or numel < 0:
        raise Rejected(f"byte {at}: a persistent id of another shape")
    if legacy and items[5] is not None:
        raise Rejected(f"byte {at}: a legacy persistent id with a view")
    k = key.text()
    elem = STORAGES[cls.name][1] if cls.name in STORAGES else 1
    s = used.get(k)
    if s is None:
        s = used[k] = Storage(k, cls.name, numel, elem)
    elif s.cls != cls.name or s.numel != numel:
        raise Rejected(f"byte {at}: storage {k!r} used with another class or count")
    return s


def read_zip(path: Path, raw: bytes) -> Checkpoint:
    try:
        z = zipfile.ZipFile(path)
    except zipfile.BadZipFile as e:
        raise Rejected(f"{path}: not a zip archive ({e})") from e
    infos = z.infolist()
    names = [i.filename for i in infos]
    if len(set(names)) != len(names):
        raise Rejected(f"{path}: two entries share a name")
    folders = {n.split("/", 1)[0] for n in names}
    if len(folders) != 1 or any("/" not in n or not n.split("/", 1)[1] for n in names):
        raise Rejected(f"{path}: entries not all in one folder")
    (a,) = folders
    if f"{a}/constants.pkl" in names or any(n.startswith(f"{a}/code/") for n in names):
        raise Rejected(f"{path}: a TorchScript archive (torch.jit.save): loading it runs its code")
    extents = []
    records: dict[str, bytes] = {}
    for i in infos:
        if i.flag_bits & 1:
            raise Rejected(f"{path}: {i.filename} is encrypted")
        if i.compress_type != 0:
            raise Rejected(f"{path}: {i.filename} is compressed (method {i.compress_type})")
        if i.compress_size != i.file_size:
            raise Rejected(f"{path}: {i.filename}: sizes differ")
        o = i.header_offset
        h = raw[o : o + 30]
        if len(h) < 30 or h[:4] != b"PK\x03\x04":
            raise Rejected(f"{path}: {i.filename}: no local header at {o}")
        flags, method = struct.unpack_from("<HH", h, 6)
        csize, usize, nlen, xlen = struct.unpack_from("<IIHH", h, 18)
        if raw[o + 30 : o + 30 + nlen] != i.orig_filename.encode("utf-8" if i.flag_bits & 0x800 else "cp437"):
            raise Rejected(f"{path}: {i.filename}: local header names another entry")
        if method != 0:
            raise Rejected(f"{path}: {i.filename}: local header method {method}")
        if not (flags & 8 and csize == usize == 0):
            if csize == 0xFFFFFFFF or usize == 0xFFFFFFFF:
                pass  # Zip64 local sizes: zipfile checked the directory's.
            elif (csize, usize) != (i.compress_size, i.file_size):
                raise Rejected(f"{path}: {i.filename}: local header sizes differ from the directory's")
        start = o + 30 + nlen + xlen
        end = start + i.file_size
        if end > len(raw):
            raise Rejected(f"{path}: {i.filename}: data past the end of the file")
        extents.append((o, end, i.filename))
        records[i.filename] = raw[start:end]
    extents.sort()
    for (_, e1, n1), (s2, _, n2) in zip(extents, extents[1:]):
        if s2 < e1:
            raise Rejected(f"{path}: entries {n1} and {n2} overlap")
    pkl = records.get(f"{a}/data.pkl")
    if pkl is None:
        raise Rejected(f"{path}: no {a}/data.pkl")
    bo = records.get(f"{a}/byteorder", b"little")
    if bo not in (b"little", b"big"):
        raise Rejected(f"{path}: byteorder is {bo!r}")
    used: dict[str, Storage] = {}
    data: dict[str, bytes] = {}
    # Offsets in errors are the file's: data.pkl's data starts after its local header.
    pkl_info = next(i for i in infos if i.filename == f"{a}/data.pkl")
    nlen, xlen = struct.unpack_from("<HH", raw, pkl_info.header_offset + 26)
    pkl_at = pkl_info.header_offset + 30 + nlen + xlen

    def storage(pid: Any, at: int) -> Storage:
        s = persistent_id(pid, at, False, used)
        rec = records.get(f"{a}/data/{s.key}")
        if rec is None:
            raise Rejected(f"{path}: storage {s.key!r} has no record")
        if len(rec) != s.numel * s.elem:
            raise Rejected(f"{path}: storage {s.key!r}: {len(rec)} bytes, not {s.numel} x {s.elem}")
        data[s.key] = rec
        return s

    root, end = Pickle(pkl, 0, pkl_at, storage).run()
    if end != len(pkl):
        raise Rejected(f"{path}: bytes after data.pkl's STOP")
    return Checkpoint(root, data, bo == b"big")


def read_legacy(path: Path, raw: bytes) -> Checkpoint:
    pos = 0

    def no_storage(pid: Any, at: int) -> Any:
        raise Rejected(f"{path}: byte {at}: a persistent id outside the root pickle")

    magic, pos = Pickle(raw, pos, 0, no_storage).run()
    if magic != LEGACY_MAGIC:
        raise Rejected(f"{path}: not the legacy magic number")
    proto, pos = Pickle(raw, pos, 0, no_storage).run()
    if proto != 1001:
        raise Rejected(f"{path}: legacy protocol {proto!r}, not 1001")
    sys_info, pos = Pickle(raw, pos, 0, no_storage).run()
    if not is_mapping(sys_info):
        raise Rejected(f"{path}: sys_info is not a mapping")
    used: dict[str, Storage] = {}
    root, pos = Pickle(raw, pos, 0, lambda pid, at: persistent_id(pid, at, True, used)).run()
    keys, pos = Pickle(raw, pos, 0, no_storage).run()
    if not isinstance(keys, List) or not all(is_str(k) for k in keys.items):
        raise Rejected(f"{path}: the storage key list is not a list of strings")
    listed = [k.text() for k in keys.items]
    if sorted(listed) != sorted(used) or len(set(listed)) != len(listed):
        raise Rejected(f"{path}: the storage key list is not exactly the keys the pickle uses")
    data: dict[str, bytes] = {}
    for k in listed:
        if len(raw) - pos < 8:
            raise Rejected(f"{path}: storage {k!r}: file ends before its count")
        (n,) = struct.unpack_from("<q", raw, pos)
        pos += 8
        s = used[k]
        if n < 0 or n != s.numel:
            raise Rejected(f"{path}: storage {k!r}: count {n}, the pickle says {s.numel}")
        nb = n * s.elem
        if nb > len(raw) - pos:
            raise Rejected(f"{path}: storage {k!r}: file ends inside it")
        data[k] = raw[pos : pos + nb]
        pos += nb
    if pos != len(raw):
        raise Rejected(f"{path}: {len(raw) - pos} bytes after the last storage")
    return Checkpoint(root, data, False)


def read_file(path: Path) -> Checkpoint:
    raw = path.read_bytes()
    if raw[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return read_zip(path, raw)
    if raw[:4] == b"\x80\x02\x8a\x0a":
        return read_legacy(path, raw)
    if raw[257:262] == b"ustar":
        raise Rejected(f"{path}: the older tar format")
    if raw.startswith(b"version https://git-lfs.github.com/spec/v1"):
        raise Rejected(f"{path}: a Git LFS pointer")
    raise Rejected(f"{path}: not a PyTorch checkpoint")


# ---- values (P5, P7) ----


def elements(t: Tensor, ck: Checkpoint) -> Iterator[bytes]:
    """The tensor's elements in row-major order, little-endian, in runs."""
    buf = ck.data[t.storage.key]
    if any(s == 0 for s in t.size):
        return
    es = t.esize
    k = len(t.size)
    run = 1
    while k > 0 and (t.stride[k - 1] == run or t.size[k - 1] == 1):
        run *= t.size[k - 1]
        k -= 1
    outer = [range(s) for s in t.size[:k]]

    def fix(b: bytes) -> bytes:
        if t.dtype == "BOOL" and b.strip(b"\x00\x01"):
            raise Rejected("a BOOL tensor holds a byte other than 0 and 1")
        if not ck.big or es == 1:
            return b
        part = es // 2 if t.dtype in ("C64", "C128") else es
        a = array({2: "H", 4: "I", 8: "Q"}[part], b)
        a.byteswap()
        return a.tobytes()

    def walk(dim: int, start: int) -> Iterator[bytes]:
        if dim == k:
            yield fix(buf[start * es : (start + run) * es])
            return
        for i in outer[dim]:
            yield from walk(dim + 1, start + i * t.stride[dim])

    yield from walk(0, t.offset)


class Encoder:
    def __init__(self, ck: Checkpoint) -> None:
        self.ck = ck
        self.values = 0
        self.tensor_bytes = 0
        self.seen_tensors: dict[int, bytes] = {}
        # P5's work bound: 16 x the distinct storages' bytes + 1 MiB.
        self.budget = 16 * sum(len(b) for b in ck.data.values()) + (1 << 20)

    def value(self, v: Any, depth: int, path: tuple[int, ...]) -> bytes:
        self.values += 1
        if self.values > MAX_VALUES:
            raise Rejected("more than 2^26 values in the tree")
        if v is None:
            return b"\x00"
        if v is False:
            return b"\x01"
        if v is True:
            return b"\x02"
        if is_int(v):
            if v == 0:
                return b"\x03" + le_u32(0)
            bits = (v if v > 0 else ~v).bit_length() + 1
            n = (bits + 7) // 8
            return b"\x03" + le_u32(n) + v.to_bytes(n, "little", signed=True)
        if isinstance(v, Float):
            return b"\x04" + v.le
        if isinstance(v, Complex):
            return b"\x05" + v.re.le + v.im.le
        if isinstance(v, Str):
            return b"\x06" + H(v.b)
        if isinstance(v, Bytes):
            return b"\x07" + H(v.b)
        if isinstance(v, Dtype):
            return b"\x0f" + H(v.name.encode())
        if isinstance(v, Device):
            return b"\x10" + self.value(v.type, depth, path) + self.value(v.index, depth, path)
        if isinstance(v, Tensor):
            return self.tensor(v, depth, path)
        if isinstance(v, (Tuple, List, SetV, Mapping)):
            if id(v) in path:
                raise Rejected("a structure that contains itself")
            if depth + 1 > MAX_DEPTH:
                raise Rejected("containers nested deeper than 1000")
            inner = path + (id(v),)
            d = depth + 1
            if isinstance(v, Tuple):
                return b"\x08" + le_u64(len(v.items)) + b"".join(self.value(x, d, inner) for x in v.items)
            if isinstance(v, List):
                return b"\x09" + le_u64(len(v.items)) + b"".join(self.value(x, d, inner) for x in v.items)
            if isinstance(v, SetV):
                enc = sorted(self.value(x, d, inner) for x in v.items)
                if len(set(enc)) != len(enc) or numbers_collide(v.items):
                    raise Rejected("a set with two equal items")
                return b"\x0a" + le_u64(len(enc)) + b"".join(enc)
            plain = self.mapping(v, d, inner)
            if v.attrs is None:
                return plain
            return b"\x0c" + plain + self.mapping(v.attrs, d, inner)
        raise Rejected(f"a {type(v).__name__} ({v!r}) left in the tree")

    def mapping(self, m: Mapping, depth: int, path: tuple[int, ...]) -> bytes:
        entries = []
        for k, val in m.items:
            if not (is_str(k) or is_int(k)):
                raise Rejected(f"a mapping key that is not a string or int: {k!r}")
            entries.append((self.value(k, depth, path), k, val))
        entries.sort(key=lambda e: e[0])
        for a, b in zip(entries, entries[1:]):
            if a[0] == b[0]:
                raise Rejected("a mapping key set twice")
        out = [b"\x0b", le_u64(len(entries))]
        for ek, _, val in entries:
            out.append(ek)
            out.append(self.value(val, depth, path))
        return b"".join(out)

    def tensor(self, t: Tensor, depth: int, path: tuple[int, ...]) -> bytes:
        digest = self.seen_tensors.get(id(t))
        if digest is None:
            n = 1
            for s in t.size:
                n *= s
            self.tensor_bytes += n * t.esize
            if self.tensor_bytes > self.budget:
                raise Rejected("tensors read more than 16 x the storages + 1 MiB")
            h = hashlib.sha256()
            for b in elements(t, self.ck):
                h.update(b)
            digest = h.digest()
            self.seen_tensors[id(t)] = digest
        dt = t.dtype.encode()
        plain = b"\x0d" + le_u32(len(dt)) + dt + le_u32(len(t.size)) + b"".join(le_u64(s) for s in t.size) + digest
        if t.attrs is None:
            return plain
        if depth + 1 > MAX_DEPTH:
            raise Rejected("containers nested deeper than 1000")
        return b"\x0e" + plain + self.mapping(t.attrs, depth + 1, path)


def numbers_collide(items: list[Any]) -> bool:
    """Two set items Python would merge as equal numbers (1, 1.0, True)."""

    def num(v: Any) -> Any:
        if type(v) in (bool, int):
            return v
        if isinstance(v, Float):
            return v.value()
        if isinstance(v, Complex):
            return complex(v.re.value(), v.im.value())
        if isinstance(v, Tuple):
            return tuple(num(x) for x in v.items)
        return ("other", id(v))

    nums = [num(x) for x in items if type(x) in (bool, int) or isinstance(x, (Float, Complex, Tuple))]
    for i, a in enumerate(nums):
        for b in nums[i + 1 :]:
            try:
                if a == b:
                    return True
            except TypeError:
                pass
    return False


# ---- models (P8) ----


def shard_set(path: Path) -> list[Path] | None:
    name = path.name
    if name.endswith(INDEX_SUFFIX):
        return from_index(path)
    m = SHARD_NAME.match(name)
    if not m or not 1 <= int(m["no"]) <= int(m["count"]):
        return None
    index = path.parent / (m["prefix"] + INDEX_SUFFIX)
    if index.exists():
        files = from_index(index)
        if path.name not in [f.name for f in files]:
            raise Rejected(f"{path}: not one of the files of {index.name}")
        return files
    count = int(m["count"])
    shards = [path.parent / f"{m['prefix']}-{i:05d}-of-{count:05d}.bin" for i in range(1, count + 1)]
    if int(m["no"]) != 1:
        raise Rejected(f"{path}: a later shard; give the first, {shards[0].name}")
    return shards


INDEXES: dict[Path, dict[str, str]] = {}


def from_index(index: Path) -> list[Path]:
    doc = json.loads(index.read_bytes())
    wm = doc.get("weight_map")
    if not isinstance(wm, dict):
        raise Rejected(f"{index}: no weight_map")
    meta = doc.get("metadata", {})
    if not isinstance(meta, dict):
        raise Rejected(f"{index}: metadata is not an object")
    for k, v in meta.items():
        # Derived, never content: any JSON value, as safetensors-skeleton-v1
        # §5 (revision 2) reads them.
        if k not in ("total_size", "total_parameters"):
            raise Rejected(f"{index}: metadata member {k!r}")
    for f in wm.values():
        if not isinstance(f, str) or f in ("", ".", "..") or any(c in f for c in "/\\\0"):
            raise Rejected(f"{index}: weight_map names {f!r}, not a plain file name")
    INDEXES[index] = wm
    return [index.parent / f for f in dict.fromkeys(wm.values())]


def label_path(path: Path | str) -> str:
    path = Path(path)
    files = shard_set(path)
    if files is None:
        ck = read_file(path)
        return hashlib.sha256(MAGIC + le_u32(VERSION) + Encoder(ck).value(ck.root, 0, ())).hexdigest()
    index = next((i for i in INDEXES if path == i or (i.parent == path.parent and path.name in INDEXES[i].values())), None)
    wm = INDEXES.get(index) if index is not None else None
    # The union of the shards' mappings: each shard's entries encoded with
    # its own storages, then sorted together.
    entries: dict[bytes, tuple[str, bytes]] = {}
    values = 0
    for f in files:
        ck = read_file(f)
        m = ck.root
        if not is_mapping(m) or m.attrs is not None or not all(is_str(k) for k, _ in m.items):
            raise Rejected(f"{f}: a shard's root is not a mapping of strings without attributes")
        enc = Encoder(ck)
        enc.values = values + 1
        for k, v in m.items:
            ek = enc.value(k, 1, (id(m),))
            if ek in entries:
                raise Rejected(f"{f}: key {k.text()!r} is in {entries[ek][0]} and {f.name}")
            if wm is not None and wm.get(k.text()) != f.name:
                raise Rejected(f"{f}: key {k.text()!r} is not listed with this file")
            entries[ek] = (f.name, enc.value(v, 1, (id(m),)))
        values = enc.values
    # Every shard key is listed with its own file (above); equal counts make
    # every listed key present too.
    if wm is not None and len(wm) != len(entries):
        raise Rejected(f"{index}: lists {len(wm)} keys, the shards hold {len(entries)}")
    body = b"".join(ek + ev for ek, (_, ev) in sorted(entries.items()))
    root = b"\x0b" + le_u64(len(entries)) + body
    return hashlib.sha256(MAGIC + le_u32(VERSION) + root).hexdigest()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="+", type=Path)
    ap.add_argument("--json", action="store_true", help="print one JSON line instead")
    args = ap.parse_args()
    models = []
    for p in args.paths:
        try:
            label = label_path(p)
        except (Rejected, OSError, ValueError, RecursionError, NotImplementedError, zipfile.BadZipFile) as e:
            if not args.json:
                print(f"pt_oracle: {e}", file=sys.stderr)
                sys.exit(2)
            models.append({"path": str(p), "error": str(e)})
            continue
        if args.json:
            models.append({"path": str(p), "label": label})
        else:
            print(f"{label}  {p}")
    if args.json:
        print(json.dumps({"models": models}))


if __name__ == "__main__":
    main()
