"""Safetensors test models written by Hugging Face's own software.

usage: st_write.py dtypes OUT_DIR [--seed N]
       st_write.py layouts OUT_DIR [--seed N]
       st_write.py minilm SRC OUT_DIR

Every file is written by PyPI's `safetensors` (safetensors.numpy.save_file;
for the dtypes numpy has not, safetensors.serialize_file with TensorSpecs
of the framework names ml_dtypes and torch use, e.g. "bfloat16"), every
shard cut by PyPI's `huggingface_hub` (split_state_dict_into_shards_factory)
and saved the way its save_torch_state_dict saves them: shards carry
{"format": "pt"}, the user's metadata and total_size go to the index
`model.safetensors.index.json` (json.dump, indent=2), shards are named
`model-00001-of-00003.safetensors`. huggingface_hub's source is checked for
those lines, so a release that changes them fails here. Every file is read
back with safetensors (deserialize, safe_open) and compared.

  dtypes   every dtype the safetensors package can write (bool, u8, i8, i16,
           u16, f16, i32, u32, f32, i64, u64, f64, c64 from numpy; bf16, the
           five f8s and f4 through TensorSpec; not F6_E2M3 / F6_E3M2, which
           it cannot write), zero-size tensors, scalars, non-ASCII and escaped
           tensor names and metadata; and pairs of files that differ in one
           thing only (a shape [4, 1] vs [4], a metadata value, a data byte, a
           dtype, a name).
  layouts  one state dict in many layouts: save_torch_state_dict's single
           file, the dict in reverse key order, headers rewritten (more
           trailing spaces; leading whitespace; tensors and data in another
           order with \\u escapes and indentation; an unknown member),
           2 and 3 shards and one tensor per shard with the index; the index
           with "format" repeated; a Hugging Face cache (blobs and snapshot
           symlinks) of the single file and of the 3 shards. Also a 3-shard
           set without its index (user metadata lost: another label), one
           whose shards carry different metadata (two groups), and one whose
           index contradicts its shards (an error).
  minilm   SRC (all-MiniLM-L6-v2's model.safetensors) cut by huggingface_hub
           into 2 and 4 shards, and a cache holding SRC, and both cuts, as
           three revisions.

Prints one JSON line:
  {"cases":   [{"path", "label", "group", "what"}],  the oracle's label for
                                                      each path (a directory:
                                                      of the model inside)
   "differ":  [[path, path, why]],                   labels that must differ
   "later_without_index": [{"path", "first"}],       exit 2, naming first
   "rejected": [{"path", "says"}],                   exit 2, stderr says
   "notes":   {...}}
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import json
import os
import shutil
import struct
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import huggingface_hub
import safetensors
import safetensors.numpy
from huggingface_hub import constants as hf_constants
from huggingface_hub import scan_cache_dir, split_state_dict_into_shards_factory, try_to_load_from_cache
from huggingface_hub.serialization import save_torch_state_dict
from safetensors import TensorSpec, safe_open, serialize_file

sys.path.insert(0, str(Path(__file__).parent))
from st_oracle import Rejected, label_model  # noqa: E402

MINILM_LABEL = "73ffb962031e50303e5683b8b65097f0c2053add9e57893bb3d75fd06c96d88a"
MINILM_TENSORS = 104
# save_torch_state_dict's lines that save_state_dict() below does with numpy
# (it needs torch itself).
HF_SAVE_LINES = [
    'per_file_metadata = {"format": "pt"}',
    "if not state_dict_split.is_sharded:",
    "per_file_metadata.update(metadata)",
    'index_path = filename_pattern.format(suffix="") + ".index.json"',
    '"metadata": {**state_dict_split.metadata, **metadata},',
    '"weight_map": state_dict_split.tensor_to_filename,',
    "json.dump(index, f, indent=2)",
]


def fail(msg: str) -> None:
    print(f"interop script error: {msg}", file=sys.stderr)
    sys.exit(1)


# ---- tensors ----


@dataclass
class Raw:
    """A tensor of a dtype numpy has not: the framework's dtype name (what
    TensorSpec takes), the storage shape and its bytes."""

    dtype: str
    shape: tuple[int, ...]
    data: np.ndarray  # uint8, the bytes as stored

    @property
    def nbytes(self) -> int:
        return self.data.nbytes


Tensor = np.ndarray | Raw


def nbytes(t: Tensor) -> int:
    return t.nbytes


def save(state: dict[str, Tensor], path: Path, metadata: dict[str, str] | None = None) -> None:
    """safetensors.numpy.save_file, or serialize_file when a tensor is Raw."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if all(isinstance(t, np.ndarray) for t in state.values()):
        safetensors.numpy.save_file(state, path, metadata=metadata)
        return
    specs = {}
    for name, t in state.items():
        if isinstance(t, Raw):
            specs[name] = TensorSpec(dtype=t.dtype, shape=list(t.shape), data_ptr=t.data.ctypes.data, data_len=t.nbytes)
        else:
            a = t if t.flags.c_contiguous else t.copy()  # ascontiguousarray makes a scalar 1-d
            specs[name] = TensorSpec(dtype=a.dtype.name, shape=list(a.shape), data_ptr=a.ctypes.data, data_len=a.nbytes)
    # `state` holds every buffer alive across the call, as TensorSpec requires.
    serialize_file(specs, path, metadata=metadata)


def read_back(path: Path) -> tuple[dict[str, tuple[str, list[int], bytes]], dict[str, str]]:
    """What safetensors itself reads: {name: (dtype, shape, bytes)} and metadata."""
    tensors = {
        k: (v["dtype"], list(v["shape"]), bytes(v["data"])) for k, v in safetensors.deserialize(path.read_bytes())
    }
    with safe_open(path, framework="np") as f:
        metadata = f.metadata() or {}
    return tensors, metadata


def expected_view(state: dict[str, Tensor]) -> dict[str, tuple[list[int], bytes]]:
    """Shape (as numpy gives it; Raw F4 shapes are checked apart) and bytes."""
    return {k: (list(t.shape), (t.data if isinstance(t, Raw) else t).tobytes()) for k, t in state.items()}


def check_file(path: Path, state: dict[str, Tensor], metadata: dict[str, str]) -> dict[str, str]:
    """Reads `path` back with safetensors; it holds `state` and `metadata`.
    Returns {name: dtype code} as safetensors reports it."""
    got, got_meta = read_back(path)
    if got_meta != metadata:
        fail(f"{path.name}: metadata {got_meta!r}, wrote {metadata!r}")
    if set(got) != set(state):
        fail(f"{path.name}: tensors {sorted(set(got) ^ set(state))!r} differ")
    for name, (shape, data) in expected_view(state).items():
        dtype, gshape, gdata = got[name]
        t = state[name]
        if isinstance(t, Raw) and t.dtype == "float4_e2m1fn_x2":
            shape = [*shape[:-1], 2 * shape[-1]] if shape else shape  # two F4 per byte
        if gshape != shape or gdata != data:
            fail(f"{path.name}: tensor {name!r} reads back as {dtype} {gshape}, {len(gdata)} bytes")
    return {k: v[0] for k, v in got.items()}


# ---- huggingface_hub's sharding ----


def check_hf_source() -> None:
    src = inspect.getsource(save_torch_state_dict)
    for line in HF_SAVE_LINES:
        if line not in src:
            fail(f"huggingface_hub {huggingface_hub.__version__}'s save_torch_state_dict no longer has {line!r}")
    if hf_constants.SAFETENSORS_WEIGHTS_FILE_PATTERN != "model{suffix}.safetensors":
        fail(f"huggingface_hub's file pattern is {hf_constants.SAFETENSORS_WEIGHTS_FILE_PATTERN!r}")


def split(state: dict[str, Tensor], max_shard_size: int) -> Any:
    return split_state_dict_into_shards_factory(
        state,
        get_storage_size=nbytes,
        filename_pattern=hf_constants.SAFETENSORS_WEIGHTS_FILE_PATTERN,
        max_shard_size=max_shard_size,
    )


def shard_size_for(state: dict[str, Tensor], n: int) -> int:
    """A max_shard_size for which huggingface_hub cuts `state` into n shards."""
    # Not simply total / n: a tensor over the limit gets a shard of its own
    # (all-MiniLM-L6-v2's word embeddings are half the model).
    total = sum(nbytes(t) for t in state.values())
    for step in range(400):
        size = max(1, total * (step + 1) // 400)
        if len(split(state, size).filename_to_tensors) == n:
            return size
    fail(f"no max_shard_size gives {n} shards")
    raise AssertionError  # unreachable


def save_state_dict(
    state: dict[str, Tensor], out_dir: Path, max_shard_size: int, metadata: dict[str, str]
) -> list[Path]:
    """save_torch_state_dict(state, out_dir, max_shard_size=..., metadata=...)
    line for line (HF_SAVE_LINES), with numpy arrays. Returns the files
    written: the shards, then the index if any."""
    out_dir.mkdir(parents=True, exist_ok=True)
    sd_split = split(state, max_shard_size)
    per_file_metadata = {"format": "pt"}
    if not sd_split.is_sharded:
        per_file_metadata.update(metadata)
    written = []
    for filename, names in sd_split.filename_to_tensors.items():
        shard = {n: state[n] for n in names}
        save(shard, out_dir / filename, metadata=per_file_metadata)
        check_file(out_dir / filename, shard, per_file_metadata)
        written.append(out_dir / filename)
    if sd_split.is_sharded:
        index_path = out_dir / (hf_constants.SAFETENSORS_WEIGHTS_FILE_PATTERN.format(suffix="") + ".index.json")
        index = {"metadata": {**sd_split.metadata, **metadata}, "weight_map": sd_split.tensor_to_filename}
        with open(index_path, "w") as f:
            json.dump(index, f, indent=2)
        written.append(index_path)
        n = len(sd_split.filename_to_tensors)
        for i, p in enumerate(written[:-1]):
            if p.name != f"model-{i + 1:05d}-of-{n:05d}.safetensors":
                fail(f"shard {i} is named {p.name}")
    return written


# ---- header rewrites (what the contract says is not content) ----


def split_file(path: Path) -> tuple[dict[str, Any], bytes]:
    b = path.read_bytes()
    (n,) = struct.unpack_from("<Q", b)
    return json.loads(b[8 : 8 + n]), b[8 + n :]


def write_raw(path: Path, header: bytes, data: bytes) -> None:
    path.write_bytes(struct.pack("<Q", len(header)) + header + data)


def rewrite(src: Path, dst: Path, how: str, rng: np.random.Generator) -> None:
    header, data = split_file(src)
    meta = header.pop("__metadata__", None)
    names = list(header)
    if how == "padded":
        # More of safetensors' own trailing spaces; offsets untouched.
        raw = json.dumps(
            {"__metadata__": meta, **header} if meta else header, ensure_ascii=False, separators=(",", ":")
        )
        write_raw(dst, raw.encode() + b" " * 77, data)
        return
    if how == "leading-whitespace":
        raw = json.dumps({**header, "__metadata__": meta} if meta else header, ensure_ascii=False)
        write_raw(dst, b"\n\t \r\n" + raw.encode() + b"\n", data)
        return
    if how == "extra-member":
        for i, n in enumerate(names):
            header[n] = {"note": f"ignored {i}", **header[n], "x-extra": [1, {"k": None}]}
        write_raw(dst, json.dumps({**header, "__metadata__": meta} if meta else header).encode(), data)
        return
    if how != "relayout":
        fail(f"no rewrite {how!r}")
    # Data in reverse name order, keys shuffled, every non-ASCII character
    # escaped (surrogate pairs beyond the BMP), indented, padded with spaces.
    new_data = bytearray()
    new_header: dict[str, Any] = {}
    for n in sorted(names, reverse=True):
        begin, end = header[n]["data_offsets"]
        new_header[n] = {
            "shape": header[n]["shape"],
            "data_offsets": [len(new_data), len(new_data) + end - begin],
            "dtype": header[n]["dtype"],
        }
        new_data += data[begin:end]
    order = [names[i] for i in rng.permutation(len(names))]
    out = {n: new_header[n] for n in order}
    if meta is not None:
        out = {
            **dict(list(out.items())[: len(out) // 2]),
            "__metadata__": dict(reversed(meta.items())),
            **dict(list(out.items())[len(out) // 2 :]),
        }
    raw = json.dumps(out, ensure_ascii=True, indent=1).encode()
    write_raw(dst, raw + b" " * (64 - len(raw) % 64 + 13), bytes(new_data))


# ---- a Hugging Face cache ----


def git_blob_sha1(b: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(b) + b).hexdigest()


def file_sha256(p: Path) -> str:
    h = hashlib.sha256()
    with open(p, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def copy_blob(src: Path, dst: Path) -> None:
    """Copied, never hard-linked: a link changes the shared inode's ctime,
    which gguf-digest's file-changed guard rightly reports in a test hashing
    the same model at that moment."""
    if not dst.exists():
        shutil.copyfile(src, dst)


def cache_snapshot(cache: Path, repo_id: str, files: list[Path], revision_seed: str, ref: str | None) -> Path:
    """The layout hf_hub_download leaves: models--org--name/blobs/<etag>
    (sha256 for LFS files, the git blob sha1 for small ones like the index),
    snapshots/<commit>/<file> -> ../../blobs/<etag>, refs/<ref> = commit.
    Checked with huggingface_hub's scan_cache_dir and try_to_load_from_cache.
    Returns the snapshot directory."""
    repo = cache / ("models" + hf_constants.REPO_ID_SEPARATOR + repo_id.replace("/", hf_constants.REPO_ID_SEPARATOR))
    commit = hashlib.sha1(revision_seed.encode()).hexdigest()
    snap = repo / "snapshots" / commit
    (repo / "blobs").mkdir(parents=True, exist_ok=True)
    snap.mkdir(parents=True, exist_ok=True)
    for f in files:
        etag = file_sha256(f) if f.name.endswith(".safetensors") else git_blob_sha1(f.read_bytes())
        blob = repo / "blobs" / etag
        copy_blob(f, blob)
        os.symlink(os.path.relpath(blob, snap), snap / f.name)
    if ref:
        (repo / "refs").mkdir(exist_ok=True)
        (repo / "refs" / ref).write_text(commit)
    for f in files:
        got = try_to_load_from_cache(repo_id, f.name, cache_dir=cache, revision=commit)
        if not isinstance(got, str) or Path(got) != snap / f.name:
            fail(f"huggingface_hub does not find {f.name} of {repo_id}@{commit} in the cache: {got!r}")
    info = scan_cache_dir(cache)
    if info.warnings:
        fail(f"huggingface_hub's scan_cache_dir warns: {info.warnings}")
    repos = {r.repo_id: r for r in info.repos}
    revs = {r.commit_hash: r for r in repos[repo_id].revisions}
    if {f.file_name for f in revs[commit].files} != {f.name for f in files}:
        fail(f"scan_cache_dir sees other files in {snap}")
    return snap


# ---- the cases ----


class Cases:
    def __init__(self) -> None:
        self.cases: list[dict[str, Any]] = []
        self.differ: list[list[str]] = []
        self.later: list[dict[str, str]] = []
        self.rejected: list[dict[str, str]] = []
        self.notes: dict[str, Any] = {}
        self._labels: dict[str, str] = {}

    def label(self, path: Path) -> str:
        """The oracle's label; for a directory, of the model inside it."""
        target = path
        if path.is_dir():
            idx = list(path.glob("*.safetensors.index.json"))
            target = idx[0] if idx else next(path.glob("*.safetensors"))
        key = str(target)
        if key not in self._labels:
            self._labels[key] = label_model(target)["label"]
        return self._labels[key]

    def add(self, path: Path, group: str, what: str) -> str:
        label = self.label(path)
        self.cases.append({"path": str(path), "label": label, "group": group, "what": what})
        return label

    def emit(self) -> None:
        # Every group is one label by the oracle too.
        groups: dict[str, set[str]] = {}
        for c in self.cases:
            groups.setdefault(c["group"], set()).add(c["label"])
        for g, labels in groups.items():
            if len(labels) != 1:
                bad = [(c["what"], c["label"][:12]) for c in self.cases if c["group"] == g]
                fail(f"group {g}: the oracle gives {len(labels)} labels: {bad}")
        for a, b, why in self.differ:
            if self.label(Path(a)) == self.label(Path(b)):
                fail(f"{why}: the oracle gives one label to {a} and {b}")
        for r in self.later + self.rejected:
            try:
                label_model(r["path"])
            except Rejected as e:
                want = r.get("first") or r["says"]
                if want not in str(e):
                    fail(f"the oracle rejects {r['path']} without naming {want}: {e}")
            else:
                fail(f"the oracle labels {r['path']}, which should be an error")
        print(
            json.dumps(
                {
                    "cases": self.cases,
                    "differ": self.differ,
                    "later_without_index": self.later,
                    "rejected": self.rejected,
                    "notes": self.notes,
                }
            )
        )


def rand_bytes(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.integers(0, 256, size=n, dtype=np.uint8)


def rand_array(rng: np.random.Generator, dtype: Any, shape: tuple[int, ...]) -> np.ndarray:
    """Random bit patterns of `dtype` (NaNs included: bytes are bytes);
    bools 0 or 1."""
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    n = int(np.prod(shape, dtype=np.int64))
    return rand_bytes(rng, n * dt.itemsize).view(dt).reshape(shape)


NUMPY_DTYPES = [
    ("bool", np.bool_, "BOOL"),
    ("u8", np.uint8, "U8"),
    ("i8", np.int8, "I8"),
    ("i16", np.int16, "I16"),
    ("u16", np.uint16, "U16"),
    ("f16", np.float16, "F16"),
    ("i32", np.int32, "I32"),
    ("u32", np.uint32, "U32"),
    ("f32", np.float32, "F32"),
    ("i64", np.int64, "I64"),
    ("u64", np.uint64, "U64"),
    ("f64", np.float64, "F64"),
    ("c64", np.complex64, "C64"),
]
# (framework name TensorSpec takes, code in the header, bytes per stored element)
RAW_DTYPES = [
    ("bfloat16", "BF16", 2),
    ("float8_e4m3fn", "F8_E4M3", 1),
    ("float8_e5m2", "F8_E5M2", 1),
    ("float8_e8m0fnu", "F8_E8M0", 1),
    ("float8_e4m3fnuz", "F8_E4M3FNUZ", 1),
    ("float8_e5m2fnuz", "F8_E5M2FNUZ", 1),
    ("float4_e2m1fn_x2", "F4", 1),  # two F4 per byte; the header doubles the last dim
]
ODD_NAMES = [
    "",
    "é.ünïcödé.weight",
    "模型.权重",
    "😀.emoji_beyond_the_bmp",
    "～.fullwidth_tilde",  # U+FF5E: after U+1F600 in UTF-16 order, before it in UTF-8
    'quote"back\\slash\nnewline\ttab',
    "nul\u0000inside",
    "\u007fdel",
]
ODD_METADATA = {
    "format": "np",
    "ünï": "cödé ✓",
    "😀": "～",
    "～": "😀",
    "empty": "",
    "": "empty key",
    "escapes": 'q"b\\n\nt\tc\u0001',
}


def raw(rng: np.random.Generator, fw: str, size: int, shape: tuple[int, ...]) -> Raw:
    n = int(np.prod(shape, dtype=np.int64)) * size
    return Raw(fw, shape, rand_bytes(rng, n))


def cmd_dtypes(out: Path, seed: int) -> None:
    rng = np.random.default_rng(seed)
    c = Cases()
    # numpy's dtypes, through safetensors.numpy.save_file.
    st: dict[str, Tensor] = {}
    for short, dt, _ in NUMPY_DTYPES:
        st[f"{short}.matrix"] = rand_array(rng, dt, (3, 5))
        st[f"{short}.scalar"] = rand_array(rng, dt, ())
        st[f"{short}.empty"] = rand_array(rng, dt, (0, 4))
    st["f32.column"] = rand_array(rng, np.float32, (4, 1))
    st["f32.row"] = rand_array(rng, np.float32, (1, 4))
    st["f32.five_d"] = rand_array(rng, np.float32, (2, 1, 3, 1, 2))
    st["u8.empty_middle"] = rand_array(rng, np.uint8, (3, 0, 2))
    for i, name in enumerate(ODD_NAMES):
        st[name] = rand_array(rng, np.int16, (i + 1,))
    p = out / "numpy-dtypes.safetensors"
    save(st, p, ODD_METADATA)
    codes = check_file(p, st, ODD_METADATA)
    for short, _, code in NUMPY_DTYPES:
        if codes[f"{short}.matrix"] != code:
            fail(f"{short} was written as {codes[f'{short}.matrix']}, expected {code}")
    c.add(p, "numpy-dtypes", "numpy dtypes, scalars, empty tensors, odd names and metadata (save_file)")

    # The others, through TensorSpec.
    rt: dict[str, Tensor] = {}
    for fw, code, size in RAW_DTYPES:
        rt[f"{code}.matrix"] = raw(rng, fw, size, (3, 4))
        rt[f"{code}.empty"] = raw(rng, fw, size, (2, 0))
        if code != "F4":
            rt[f"{code}.scalar"] = raw(rng, fw, size, ())
    rt["F32.plain"] = rand_array(rng, np.float32, (2, 2))
    for name in ODD_NAMES[1:4]:
        rt[name] = raw(rng, "bfloat16", 2, (2,))
    p = out / "raw-dtypes.safetensors"
    save(rt, p, {"format": "pt", "kind": "raw ✓"})
    codes = check_file(p, rt, {"format": "pt", "kind": "raw ✓"})
    for _, code, _ in RAW_DTYPES:
        if codes[f"{code}.matrix"] != code:
            fail(f"{code} was written as {codes[f'{code}.matrix']}")
    c.add(p, "raw-dtypes", "bf16, f8 x5, f4 (serialize_file), scalars, empty tensors")

    # One tensor per dtype and file, without metadata: a label per dtype.
    for _, dt, code in NUMPY_DTYPES:
        p = out / "one" / f"{code}.safetensors"
        one = {"w": rand_array(rng, dt, (2, 3))}
        save(one, p)
        check_file(p, one, {})
        c.add(p, f"one-{code}", f"one {code} tensor")
    for fw, code, size in RAW_DTYPES:
        p = out / "one" / f"{code}.safetensors"
        one = {"w": raw(rng, fw, size, (2, 3))}
        save(one, p)
        check_file(p, one, {})
        c.add(p, f"one-{code}", f"one {code} tensor")
    p = out / "empty-model.safetensors"
    save({}, p)
    check_file(p, {}, {})
    c.add(p, "empty", "no tensors, no metadata")

    # Pairs that differ in one thing.
    base = {"a": rand_array(rng, np.float32, (4, 1)), "b": rand_array(rng, np.uint8, (6,))}
    variants = {
        "base": (base, {"format": "pt"}),
        "shape-4": ({**base, "a": base["a"].reshape(4)}, {"format": "pt"}),
        "meta-value": (base, {"format": "tf"}),
        "meta-absent": (base, None),
        "data-byte": ({**base, "b": base["b"] ^ np.array([0, 0, 0, 1, 0, 0], np.uint8)}, {"format": "pt"}),
        "dtype-i8": ({**base, "b": base["b"].view(np.int8)}, {"format": "pt"}),
        "renamed": ({"a": base["a"], "c": base["b"]}, {"format": "pt"}),
    }
    paths = {}
    for name, (state, meta) in variants.items():
        paths[name] = out / "pairs" / f"{name}.safetensors"
        save(state, paths[name], meta)
        check_file(paths[name], state, meta or {})
        c.add(paths[name], f"pair-{name}", f"pair: {name}")
    for name in variants:
        if name != "base":
            c.differ.append([str(paths["base"]), str(paths[name]), f"{name} vs base"])
    p = out / "pairs" / "meta-empty.safetensors"
    save(base, p, {})
    c.add(p, "pair-meta-absent", "pair: {} metadata, the same as none")
    c.notes["numpy_dtypes"] = [code for _, _, code in NUMPY_DTYPES]
    c.notes["raw_dtypes"] = [code for _, code, _ in RAW_DTYPES]
    c.emit()


def layouts_state(rng: np.random.Generator) -> dict[str, Tensor]:
    """A small model: several dtypes, sizes from 0 to 6 KiB, odd names."""
    s: dict[str, Tensor] = {
        "model.embed.weight": rand_array(rng, np.float32, (48, 32)),
        "model.layers.0.attn.q.weight": raw(rng, "bfloat16", 2, (32, 32)),
        "model.layers.0.attn.k.weight": raw(rng, "bfloat16", 2, (16, 32)),
        "model.layers.0.mlp.up.weight": rand_array(rng, np.float16, (64, 32)),
        "model.layers.0.mlp.up.scale": raw(rng, "float8_e4m3fn", 1, (64, 1)),
        "model.layers.0.norm.weight": rand_array(rng, np.float32, (32,)),
        "model.layers.0.norm.bias": rand_array(rng, np.float32, (32, 1)),
        "model.position_ids": np.arange(40, dtype=np.int64).reshape(1, 40),
        "model.mask": rand_array(rng, np.bool_, (7, 3)),
        "model.step": np.array(12345, dtype=np.int64),
        "model.empty": rand_array(rng, np.float32, (0, 32)),
        "é.ünïcödé": rand_array(rng, np.uint8, (33,)),
        "😀.emoji": rand_array(rng, np.int32, (5, 5)),
        "～.tilde": rand_array(rng, np.uint16, (9,)),
        "lm_head.weight": rand_array(rng, np.float32, (48, 32)),
    }
    return s


USER_METADATA = {"model_type": "interop-tiny", "ünïcödé": "värde ✓ 😀", "quote": 'a "b" \\c\nd'}


def cmd_layouts(out: Path, seed: int) -> None:
    check_hf_source()
    rng = np.random.default_rng(seed)
    c = Cases()
    state = layouts_state(rng)
    everything = {"format": "pt", **USER_METADATA}
    total = sum(nbytes(t) for t in state.values())

    # save_torch_state_dict's one file: everything in its header.
    single = save_state_dict(state, out / "single", total + 1, USER_METADATA)
    if [p.name for p in single] != ["model.safetensors"]:
        fail(f"one shard was written as {[p.name for p in single]}")
    single = single[0]
    c.add(single, "state", "save_torch_state_dict's single file")

    p = out / "reversed-keys.safetensors"
    save(dict(reversed(list(state.items()))), p, everything)
    check_file(p, state, everything)
    c.add(p, "state", "the state dict in reverse key order")
    c.notes["reverse_key_order_same_bytes"] = p.read_bytes() == single.read_bytes()
    # The package writes __metadata__ in HashMap order: the same call twice
    # need not give the same bytes.
    again = out / "single-again.safetensors"
    save(state, again, everything)
    c.add(again, "state", "the single file written again")
    c.notes["same_call_same_bytes"] = again.read_bytes() == single.read_bytes()

    for how in ["padded", "leading-whitespace", "relayout", "extra-member"]:
        p = out / f"{how}.safetensors"
        rewrite(single, p, how, rng)
        check_file(p, state, everything)  # safetensors itself reads it as the same model
        c.add(p, "state", f"header rewritten: {how}")
    if split_file(out / "relayout.safetensors")[1] == split_file(single)[1]:
        fail("relayout did not move the data")

    cuts = {}
    for name, n in [("shards-2", 2), ("shards-3", 3)]:
        cuts[name] = save_state_dict(state, out / name, shard_size_for(state, n), USER_METADATA)
    cuts["per-tensor"] = save_state_dict(state, out / "per-tensor", 1, USER_METADATA)
    c.notes["per_tensor_shards"] = len(cuts["per-tensor"]) - 1
    for name, files in cuts.items():
        shards, index = files[:-1], files[-1]
        c.add(shards[0], "state", f"{name}: the first shard")
        c.add(index, "state", f"{name}: the index")
        c.add(shards[-1], "state", f"{name}: the last shard, the index beside it")

    # The index repeating a shard's metadata with the same value: counted once.
    d = out / "index-repeats-format"
    files = save_state_dict(state, d, shard_size_for(state, 2), USER_METADATA)
    doc = json.loads(files[-1].read_text())
    doc["metadata"]["format"] = "pt"
    files[-1].write_text(json.dumps(doc, indent=2))
    c.add(files[-1], "state", "index with format: pt, as its shards")

    # Revision 2 of safetensors §5: the index transformers writes since
    # mid-2025 (integer total_parameters and total_size), and derived members
    # of any other value, never enter the label; metadata null is none.
    params = sum(int(np.prod(t.shape, dtype=np.int64)) for t in state.values())
    for name, derived in (
        ("index-transformers", {"total_parameters": params, "total_size": total}),
        ("index-derived-other", {"total_parameters": "4B", "total_size": None}),
    ):
        files = save_state_dict(state, out / name, shard_size_for(state, 2), USER_METADATA)
        doc = json.loads(files[-1].read_text())
        doc["metadata"].update(derived)
        files[-1].write_text(json.dumps(doc, indent=2))
        c.add(files[-1], "state", f"index with metadata {json.dumps(derived)}")
    files = save_state_dict(state, out / "index-null", shard_size_for(state, 2), {})
    doc = json.loads(files[-1].read_text())
    doc["metadata"] = None
    files[-1].write_text(json.dumps(doc, indent=2))
    c.add(files[-1], "index-null", "index with metadata null")
    pt = out / "format-pt.safetensors"
    save(state, pt, {"format": "pt"})
    c.add(pt, "index-null", "the same tensors, one file, metadata format: pt (as its shards)")
    # Revision 2 of §3: "__metadata__": null, which safetensors reads as none.
    plain = out / "no-metadata.safetensors"
    save(state, plain, None)
    c.add(plain, "no-metadata", "the same tensors, one file, no __metadata__")
    header, data = split_file(plain)
    header = {"__metadata__": None, **header}
    text = json.dumps(header, separators=(",", ":")).encode()
    p = out / "metadata-null.safetensors"
    write_raw(p, text + b" " * (-len(text) % 8), data)
    check_file(p, state, {})  # safetensors itself reads it: no metadata
    c.add(p, "no-metadata", "__metadata__: null")

    # The index contradicting its shards: an error.
    d = out / "index-contradicts"
    files = save_state_dict(state, d, shard_size_for(state, 2), USER_METADATA)
    doc = json.loads(files[-1].read_text())
    doc["metadata"]["format"] = "tf"
    files[-1].write_text(json.dumps(doc, indent=2))
    c.rejected.append({"path": str(files[-1]), "says": "format"})

    # The 3 shards without their index: the user metadata is gone.
    d = out / "shards-3-no-index"
    d.mkdir()
    shards = []
    for f in cuts["shards-3"][:-1]:
        shutil.copyfile(f, d / f.name)
        shards.append(d / f.name)
    c.add(shards[0], "no-index", "shards-3 without the index: the first shard")
    c.differ.append([str(single), str(shards[0]), "the metadata left with the index"])
    for later in shards[1:]:
        c.later.append({"path": str(later), "first": shards[0].name})

    # Shards of one set with different metadata: two groups.
    d = out / "two-groups"
    names = list(state)
    half = len(names) // 2
    for i, (part, meta) in enumerate(
        [(names[:half], {"format": "pt", "quant": "a"}), (names[half:], {"format": "pt"})]
    ):
        f = d / f"model-{i + 1:05d}-of-00002.safetensors"
        save({n: state[n] for n in part}, f, meta)
        check_file(f, {n: state[n] for n in part}, meta)
    first = d / "model-00001-of-00002.safetensors"
    c.add(first, "two-groups", "2 shards, no index, each with its own metadata")
    if label_model(first)["groups"] != 2:
        fail("two-groups: the oracle does not see 2 groups")

    # A Hugging Face cache.
    cache = out / "hub"
    snap = cache_snapshot(cache, "interop/tiny", [single], "tiny-single", "main")
    # A directory argument gets the directory label (docs/adr/0023), not
    # the weights': its files are labelled here, the directory elsewhere.
    c.add(snap / "model.safetensors", "state", "hub cache: the single file's symlink")
    snap = cache_snapshot(cache, "interop/tiny-sharded", cuts["shards-3"], "tiny-sharded-3", "main")
    c.add(snap / "model-00001-of-00003.safetensors", "state", "hub cache: the first shard's symlink")
    c.add(snap / "model.safetensors.index.json", "state", "hub cache: the index's symlink")
    c.notes["huggingface_hub"] = huggingface_hub.__version__
    c.notes["safetensors"] = safetensors.__version__
    c.emit()


def cmd_minilm(src: Path, out: Path) -> None:
    check_hf_source()
    c = Cases()
    if c.add(src, "minilm", "all-MiniLM-L6-v2 as shipped") != MINILM_LABEL:
        fail(f"the oracle labels {src} {c.label(src)}, the issue says {MINILM_LABEL}")
    # The state dict in the file's own order, as torch's state_dict() was.
    with safe_open(src, framework="np") as f:
        order = list(f.offset_keys())
        metadata = f.metadata()
        state = {k: f.get_tensor(k) for k in order}
    if len(state) != MINILM_TENSORS or metadata != {"format": "pt"}:
        fail(f"{src}: {len(state)} tensors, metadata {metadata!r}")
    cache = out / "hub"
    repo = "sentence-transformers/all-MiniLM-L6-v2"
    snap = cache_snapshot(cache, repo, [src], "minilm-as-shipped", "main")
    c.add(snap / "model.safetensors", "minilm", "hub cache: its symlink")
    for n in (2, 4):
        files = save_state_dict(state, out / f"minilm-{n}", shard_size_for(state, n), {})
        if len(files) != n + 1:
            fail(f"{n} shards: wrote {[f.name for f in files]}")
        c.add(files[0], "minilm", f"{n} shards: the first")
        c.add(files[-1], "minilm", f"{n} shards: the index")
        c.add(files[-2], "minilm", f"{n} shards: the last, the index beside it")
        snap = cache_snapshot(cache, repo, files, f"minilm-{n}-shards", None)
        c.add(snap / files[0].name, "minilm", f"hub cache: the first of {n} shards' symlink")
        c.add(snap / files[-1].name, "minilm", f"hub cache: the index of {n} shards' symlink")
    c.notes["minilm"] = str(src)
    c.emit()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("dtypes", "layouts"):
        s = sub.add_parser(name)
        s.add_argument("out_dir", type=Path)
        s.add_argument("--seed", type=int, default=7)
    s = sub.add_parser("minilm")
    s.add_argument("src", type=Path)
    s.add_argument("out_dir", type=Path)
    args = ap.parse_args()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    if args.cmd == "dtypes":
        cmd_dtypes(args.out_dir, args.seed)
    elif args.cmd == "layouts":
        cmd_layouts(args.out_dir, args.seed)
    else:
        cmd_minilm(args.src, args.out_dir)


if __name__ == "__main__":
    main()
