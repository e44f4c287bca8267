"""Ollama model stores, written the way Ollama writes them (test data for the
Ollama label, shared/spec/ollama-skeleton-v1.md).

usage: ollama_store.py gguf --root R --name NAME (--model FILE.gguf |
                            --shards FIRST-SHARD.gguf) [--rewrite MODE]
                            [--template T] [--system S] [--params JSON]
                            [--license L ...] [--messages JSON]
                            [--projector F] [--adapter F] [--draft F]
                            [--renderer R] [--parser P] [--requires V]
                            [--capabilities a,b] [--config-extra JSON]
                            [--rootfs] [--no-uploads]
       ollama_store.py tensors --root R --name NAME [--experts seed|stacked]
                            [--alt-layout] [--seed N] [--template T] ...

What is emulated, and where it is in Ollama's source (github:ollama/ollama,
read, never copied):

  * the store: R/blobs/sha256-<hex> (lower-case hex), R/manifests/<host>/
    <namespace>/<model>/<tag> with ParseName's defaults registry.ollama.ai /
    library / latest, case kept, and Ollama's name validity rules
    (types/model/name.go, manifest/);
  * the manifest and the config blob as Go's encoding/json writes them
    (struct member order, omitempty, compact, `<>&` escaped; the GGUF path's
    json.Encoder adds a newline, the safetensors path's json.Marshal does not);
  * `gguf`: `ollama create` of a GGUF file (server/create.go). The uploaded
    file stays in blobs/ as an orphan (the client uploads it before create;
    only a server restart prunes it; --no-uploads leaves it out). The model
    layer's blob is, by --rewrite:
      llama-quantize  (default; Ollama >= 0.30) `llama-quantize COPY`: the
                      first file's KVs in file order without split.no /
                      split.count / split.tensors.count, then
                      general.quantization_version = 2 and general.file_type
                      moved (or added) to the end as UINT32; strings cut at a
                      NUL byte; tensors of every shard ordered by (layer
                      number of `blk.N.`, -1 without, then name bytes), dims
                      as ggml_n_dims stores them, everything aligned to 32.
                      A gguf-split set becomes one merged blob.
      ollama          Ollama's own Go writer fs/ggml.WriteGGUF (split sets
                      holding Ollama's compatibility tensors, the projector
                      patch, quantization before 0.30): KVs sorted, keys
                      outside <arch>./general./adapter./tokenizer. prefixed
                      with `<arch>.`, general.parameter_count (UINT64) added,
                      tensors by (block number, non-block last, then name).
      none            Ollama < 0.30: the uploaded file, unchanged (one file
                      only).
    Projector, adapter and draft files are stored as uploaded (layer `from`
    = file name), as Ollama does for a single draft file.
  * `tensors`: `ollama create --experimental` of a safetensors model
    (x/create): one blob per tensor keyed by its name (Go writer: sorted
    header keys, padded to 8 with spaces), an int4 and an int8 blob holding
    {name}, {name}.scale and {name}.bias with __metadata__ quant_type /
    group_size (as MLX saves them; group size 64 for both, Ollama's value
    since 2026-03), a packed expert blob named by its group prefix (per-expert
    tensors as seed 003 shows, or stacked [experts, ...] tensors as Ollama's
    HEAD writes them), the model directory's *.json files as
    application/vnd.ollama.image.json layers named by file name, and the
    safetensors ConfigV2. --alt-layout writes the same tensors and metadata
    with other header order, padding and data order (same label).

Prints one JSON line: {"kind", "root", "name", "manifest", "config_blob",
"blobs": [{"path", "digest", "size", "media_type", "name"?}], ...}; for
`gguf` also "model_blob", "uploads", "rewrite", "label_source" (the file
whose GGUF label the model component must equal, or null) and
"content_changes" (why it would not; label_source is the model file, or
the first shard, whose label is the set's); for `tensors` also "tensor_blobs",
"json_files" and "tensor_count".
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import struct
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from common import (  # noqa: E402
    GGUFReader,
    GGUFValue,
    GGUFValueType,
    canonical_np_shape,
    emit,
    fail,
    field_value,
    finish,
    kv_fields,
    new_writer,
    tensor_array,
)

MANIFEST_MEDIA_TYPE = "application/vnd.docker.distribution.manifest.v2+json"
CONFIG_MEDIA_TYPE = "application/vnd.docker.container.image.v1+json"
MT = "application/vnd.ollama.image."
SPLIT_KEYS = ["split.no", "split.count", "split.tensors.count"]
GGML_QNT_VERSION = 2
LLAMA_FTYPE_GUESSED = 1024
GGUF_DEFAULT_ALIGNMENT = 32
SHARD_NAME = re.compile(r"^(.*)-(\d{5})-of-(\d{5})\.gguf$")
SAFETENSORS_MIN_OLLAMA = "0.19.0"


# ---- Go's encoding/json ----


def go_json(value: Any) -> bytes:
    """json.Marshal's bytes: compact, `<`, `>`, `&`, U+2028 and U+2029
    escaped. Dicts keep their order (build them in struct order; sort the
    keys of what Go holds as a map with go_map)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for c, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(c, esc)
    return text.encode("utf-8")


def go_map(d: dict[str, Any]) -> dict[str, Any]:
    """A Go map marshals with its keys sorted by bytes."""
    return {k: d[k] for k in sorted(d, key=lambda k: k.encode("utf-8"))}


def go_encode(value: Any) -> bytes:
    """json.NewEncoder(w).Encode(v): Marshal plus a newline."""
    return go_json(value) + b"\n"


# ---- names (types/model/name.go) ----

DEFAULT_HOST, DEFAULT_NAMESPACE, DEFAULT_TAG = "registry.ollama.ai", "library", "latest"
MISSING = "!MISSING!"


def _cut_promised(s: str, sep: str) -> tuple[str, str, bool]:
    i = s.rfind(sep)
    if i < 0:
        return s, "", False
    return s[:i] or MISSING, s[i + len(sep) :] or MISSING, True


def parse_name(s: str) -> tuple[str, str, str, str]:
    """ParseName: (host, namespace, model, tag) with the defaults merged."""
    host = namespace = tag = ""
    if s.rfind(":") > s.rfind("/"):
        s, tag, _ = _cut_promised(s, ":")
    s, model, promised = _cut_promised(s, "/")
    if not promised:
        model = s
    else:
        s, namespace, promised = _cut_promised(s, "/")
        if not promised:
            namespace = s
        else:
            _, sep, rest = s.partition("://")
            host = rest if sep else s
    return host or DEFAULT_HOST, namespace or DEFAULT_NAMESPACE, model, tag or DEFAULT_TAG


def _valid_part(kind: str, s: str) -> bool:
    limit = 350 if kind == "host" else 80
    if not 1 <= len(s) <= limit or not s.isascii():
        return False
    for i, c in enumerate(s):
        word = c.isalnum() or c == "_"
        if i == 0:
            if not word:
                return False
        elif not (word or c == "-" or (c == "." and kind != "namespace") or (c == ":" and kind == "host")):
            return False
    return True


def manifest_path(root: Path, name: str) -> tuple[Path, str]:
    parts = parse_name(name)
    for kind, p in zip(("host", "namespace", "model", "tag"), parts):
        if not _valid_part(kind, p):
            fail(f"{name!r}: Ollama would refuse the name ({kind} {p!r})")
    return root.joinpath("manifests", *parts), "/".join(parts[:3]) + ":" + parts[3]


# ---- blobs and layers (manifest/) ----


def sha256_file(p: Path) -> str:
    h = hashlib.sha256()
    with open(p, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


class Store:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.blobs = root / "blobs"
        self.blobs.mkdir(parents=True, exist_ok=True)
        self.written: list[dict[str, Any]] = []

    def _place(self, tmp: Path, hexd: str) -> Path:
        final = self.blobs / f"sha256-{hexd}"
        if final.exists():
            tmp.unlink()
        else:
            os.replace(tmp, final)
            final.chmod(0o644)
        return final

    def from_bytes(self, data: bytes, media_type: str, name: str | None = None) -> dict[str, Any]:
        fd, tmp = tempfile.mkstemp(prefix="sha256-", dir=self.blobs)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        return self._layer(self._place(Path(tmp), hashlib.sha256(data).hexdigest()), media_type, name)

    def from_file(self, path: Path, media_type: str, name: str | None = None, keep: bool = False) -> dict[str, Any]:
        """A blob holding the bytes of `path` (moved when it is a temporary
        file of ours, else copied). Never hard-linked: a link (and the chmod
        after it) changes the shared inode's ctime, which gguf-digest's
        file-changed guard rightly reports in a test hashing the same model
        at that moment."""
        hexd = sha256_file(path)
        final = self.blobs / f"sha256-{hexd}"
        if keep:
            if not final.exists():
                shutil.copyfile(path, final)
                final.chmod(0o644)
        else:
            final = self._place(path, hexd)
        return self._layer(final, media_type, name)

    def _layer(self, blob: Path, media_type: str, name: str | None) -> dict[str, Any]:
        layer: dict[str, Any] = {
            "mediaType": media_type,
            "digest": "sha256:" + blob.name.removeprefix("sha256-"),
            "size": blob.stat().st_size,
        }
        if name:
            layer["name"] = name
        self.written.append({"path": str(blob), "digest": layer["digest"], "size": layer["size"],
                             "media_type": media_type, **({"name": name} if name else {})})
        return layer

    def temp_path(self, prefix: str) -> Path:
        fd, tmp = tempfile.mkstemp(prefix=prefix, dir=self.blobs)
        os.close(fd)
        return Path(tmp)

    def write_manifest(self, name: str, config: dict[str, Any], layers: list[dict[str, Any]]) -> tuple[Path, str]:
        path, full = manifest_path(self.root, name)
        path.parent.mkdir(parents=True, exist_ok=True)
        doc = {"schemaVersion": 2, "mediaType": MANIFEST_MEDIA_TYPE, "config": config, "layers": layers}
        path.write_bytes(go_encode(doc))
        return path, full


def ordered_layer(layer: dict[str, Any], from_: str | None = None) -> dict[str, Any]:
    """manifest.Layer's member order: mediaType, digest, size, from, name."""
    out = {k: layer[k] for k in ("mediaType", "digest", "size")}
    if from_:
        out["from"] = from_
    if layer.get("name"):
        out["name"] = layer["name"]
    return out


def modelfile_layers(store: Store, args: argparse.Namespace, params_map: bool = True) -> list[dict[str, Any]]:
    """TEMPLATE, SYSTEM, LICENSE, PARAMETER and MESSAGE layers, in the order
    createModel appends them (server/create.go; x/create/client/create.go has
    the same order without messages)."""
    layers = []
    if args.template:
        layers.append(store.from_bytes(args.template.encode(), MT + "template"))
    if args.system:
        layers.append(store.from_bytes(args.system.encode(), MT + "system"))
    for lic in args.license or []:
        if lic:
            layers.append(store.from_bytes(lic.encode(), MT + "license"))
    if args.params:
        params = json.loads(args.params)
        if not isinstance(params, dict):
            fail("--params must be a JSON object")
        if params:
            layers.append(store.from_bytes(go_encode(go_map(params)), MT + "params"))
    if getattr(args, "messages", None):
        msgs = json.loads(args.messages)
        layers.append(store.from_bytes(go_encode([{"role": m["role"], "content": m["content"]} for m in msgs]),
                                       MT + "messages"))
    return layers


def config_v2(fields: dict[str, Any], args: argparse.Namespace, layers: list[dict[str, Any]], newline: bool) -> bytes:
    """ConfigV2 (types/model/config.go) in member order, omitempty applied."""
    doc: dict[str, Any] = {
        "model_format": fields.get("model_format", ""),
        "model_family": fields.get("model_family", ""),
        "model_families": fields.get("model_families"),
        "model_type": fields.get("model_type", ""),
        "file_type": fields.get("file_type", ""),
    }
    for key in ("renderer", "parser", "requires", "remote_host", "remote_model"):
        v = fields.get(key) or getattr(args, key, None)
        if v:
            doc[key] = v
    caps = fields.get("capabilities")
    if caps is None and getattr(args, "capabilities", None):
        caps = [c for c in args.capabilities.split(",") if c]
    if caps:
        doc["capabilities"] = caps
    if fields.get("draft"):
        doc["draft"] = fields["draft"]
    doc["architecture"] = fields.get("architecture", "")
    doc["os"] = fields.get("os", "")
    if getattr(args, "rootfs", False):
        doc["rootfs"] = {"type": "layers", "diff_ids": [layer["digest"] for layer in layers]}
    if getattr(args, "config_extra", None):
        extra = json.loads(args.config_extra)
        if not isinstance(extra, dict):
            fail("--config-extra must be a JSON object")
        doc.update(extra)
    return go_encode(doc) if newline else go_json(doc)


# ---- GGUF: what `ollama create` does to the file ----


def human_number(b: int) -> str:
    """format.HumanNumber."""
    if b >= 1_000_000_000:
        n = b / 1_000_000_000
        return f"{n:.0f}B" if n == int(n) else f"{n:.1f}B"
    if b >= 1_000_000:
        n = b / 1_000_000
        return f"{n:.0f}M" if n == int(n) else f"{n:.2f}M"
    if b >= 1_000:
        return f"{b / 1000:.0f}K"
    return str(b)


FILE_TYPE_NAMES = {
    0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1", 10: "Q2_K", 11: "Q3_K_S",
    12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M", 16: "Q5_K_S", 17: "Q5_K_M", 18: "Q6_K",
    19: "IQ2_XXS", 20: "IQ2_XS", 21: "Q2_K_S", 22: "IQ3_XS", 23: "IQ3_XXS", 24: "IQ1_S", 25: "IQ4_NL",
    26: "IQ3_S", 27: "IQ3_M", 28: "IQ2_S", 29: "IQ2_M", 30: "IQ4_XS", 31: "IQ1_M", 32: "BF16",
    36: "TQ1_0", 37: "TQ2_0", 38: "MXFP4_MOE", 39: "NVFP4", 40: "Q1_0",
}
# llama_model_loader's guess from the most common tensor type (ggml type -> ftype).
GUESS_FTYPE = {0: 0, 1: 1, 30: 32, 2: 2, 3: 3, 6: 8, 7: 9, 8: 7, 10: 10, 11: 12, 12: 15, 13: 17, 14: 18,
               16: 19, 17: 20, 22: 28, 18: 23, 19: 24, 29: 31, 20: 25, 23: 30, 21: 26, 34: 36, 35: 37, 39: 38}


def file_type_name(ft: int) -> str:
    """FileType.String(): general.file_type 0 reads as unknown (kv.Uint > 0)."""
    return FILE_TYPE_NAMES.get(ft, "unknown") if ft > 0 else "unknown"


def shard_files(first: Path) -> list[Path]:
    m = SHARD_NAME.match(first.name)
    if not m or m.group(2) != "00001":
        fail(f"{first}: not the first shard of a -NNNNN-of-MMMMM.gguf set")
    n = int(m.group(3))
    files = [first.with_name(f"{m.group(1)}-{i:05d}-of-{n:05d}.gguf") for i in range(1, n + 1)]
    for f in files:
        if not f.is_file():
            fail(f"missing shard {f}")
    return files


def split_value(reader: GGUFReader, key: str) -> int | None:
    f = reader.fields.get(key)
    if f is None:
        return None
    return int(f.parts[-1][0])


def string_has_nul(value: GGUFValue) -> bool:
    if value.type == GGUFValueType.STRING:
        return b"\0" in value.value
    if value.type == GGUFValueType.ARRAY and value.sub_type == GGUFValueType.STRING:
        return any(b"\0" in v for v in value.value)
    return False


def cut_at_nul(value: GGUFValue) -> GGUFValue:
    if value.type == GGUFValueType.STRING:
        return GGUFValue(value.value.split(b"\0", 1)[0], value.type)
    if value.type == GGUFValueType.ARRAY and value.sub_type == GGUFValueType.STRING:
        return GGUFValue([v.split(b"\0", 1)[0] for v in value.value], value.type, value.sub_type)
    return value


def bool_bytes_ok(field: Any) -> bool:
    types = field.types
    if GGUFValueType.BOOL not in types:
        return True
    return all(int(field.parts[i].view(np.uint8)[0]) in (0, 1) for i in field.data)


def llama_layer(name: str) -> int:
    """sscanf(name, "blk.%d.", &layer), -1 when it does not convert."""
    m = re.match(r"blk\.\s*([+-]?\d+)", name)
    return int(m.group(1)) if m else -1


def go_block(name: str) -> int:
    """fmt.Sscanf(name, "blk.%d.", &n): MaxInt unless all of it matches."""
    m = re.match(r"blk\.([+-]?\d+)\.", name)
    return int(m.group(1)) if m else sys.maxsize


def element_count(t: Any) -> int:
    n = 1
    for d in t.shape.tolist():
        n *= int(d)
    return n


def guess_ftype(readers: list[GGUFReader]) -> int:
    counts: dict[int, int] = {}
    for r in readers:
        for t in r.tensors:
            counts[int(t.tensor_type)] = counts.get(int(t.tensor_type), 0) + 1
    best = max(counts, key=lambda k: counts[k]) if counts else 0
    return GUESS_FTYPE.get(best, 0) | LLAMA_FTYPE_GUESSED


def rewrite_llama_quantize(readers: list[GGUFReader], out: Path) -> list[str]:
    """llama-quantize ... COPY. Returns what changed in content."""
    first = readers[0]
    changes = []
    fields = kv_fields(first)
    align = fields.get("general.alignment")
    if align is not None and int(align.parts[-1][0]) != GGUF_DEFAULT_ALIGNMENT:
        fail("general.alignment is not 32: llama-quantize would write an inconsistent file (its ctx keeps 32)")
    kvs: dict[str, GGUFValue] = {}
    for key, f in fields.items():
        if key in SPLIT_KEYS:
            continue
        if GGUFValueType.ARRAY in f.types[1:]:
            fail(f"KV {key!r} is a nested array: llama-quantize aborts")
        v = field_value(f)
        if string_has_nul(v):
            changes.append(f"{key}: string cut at its NUL byte")
            v = cut_at_nul(v)
        if not bool_bytes_ok(f):
            changes.append(f"{key}: BOOL byte rewritten as 1")
        kvs[key] = v
    qv = kvs.pop("general.quantization_version", None)
    if qv is None:
        changes.append("general.quantization_version added")
    elif qv.type != GGUFValueType.UINT32 or qv.value != GGML_QNT_VERSION:
        changes.append("general.quantization_version rewritten as UINT32 2")
    kvs["general.quantization_version"] = GGUFValue(GGML_QNT_VERSION, GGUFValueType.UINT32)
    ft = kvs.pop("general.file_type", None)
    if ft is None:
        value = guess_ftype(readers)
        changes.append(f"general.file_type added ({value}, llama.cpp's guess | LLAMA_FTYPE_GUESSED)")
    elif ft.type != GGUFValueType.UINT32:
        fail("general.file_type is not UINT32: llama.cpp refuses it")
    else:
        value = ft.value
    kvs["general.file_type"] = GGUFValue(value, GGUFValueType.UINT32)
    for r in readers[1:]:
        for key in kv_fields(r, split_keys=False):
            if key not in fields:
                changes.append(f"{key}: only in a later shard, dropped")
    tensors = [t for r in readers for t in r.tensors]
    tensors.sort(key=lambda t: (llama_layer(t.name), t.name.encode("utf-8")))
    w = new_writer(out, kvs)
    for t in tensors:
        w.add_tensor(t.name, tensor_array(t, canonical_np_shape(t.shape.tolist())), raw_dtype=t.tensor_type)
    finish(w)
    return changes


GO_SCALARS = {GGUFValueType.INT32, GGUFValueType.INT64, GGUFValueType.UINT32, GGUFValueType.UINT64,
              GGUFValueType.FLOAT32, GGUFValueType.BOOL, GGUFValueType.STRING}
GO_ARRAYS = {GGUFValueType.INT32, GGUFValueType.INT64, GGUFValueType.UINT32, GGUFValueType.FLOAT32,
             GGUFValueType.STRING, GGUFValueType.BOOL}


def rewrite_ollama(readers: list[GGUFReader], out: Path) -> list[str]:
    """fs/ggml.WriteGGUF of the decoded first file (plus every shard's
    tensors). Returns what changed in content."""
    first = readers[0]
    fields = kv_fields(first)
    arch_f = fields.get("general.architecture")
    arch = bytes(arch_f.parts[-1]).decode() if arch_f is not None else ""
    if not arch:
        fail("architecture not set: WriteGGUF refuses the file")
    changes = []
    kv: dict[str, GGUFValue] = {}
    for key, f in fields.items():
        if len(readers) > 1 and (key in SPLIT_KEYS or key in [f"{arch}.{k}" for k in SPLIT_KEYS]):
            continue
        v = field_value(f)
        if v.type == GGUFValueType.ARRAY:
            if v.sub_type not in GO_ARRAYS:
                fail(f"KV {key!r}: array of {v.sub_type.name}: WriteGGUF fails with 'improper type'")
        elif v.type not in GO_SCALARS:
            fail(f"KV {key!r}: {v.type.name}: WriteGGUF fails with 'improper type'")
        kv[key] = v
    params = sum(element_count(t) for t in first.tensors)
    old = kv.get("general.parameter_count")
    if old is None or old.type != GGUFValueType.UINT64 or old.value != params:
        changes.append(f"general.parameter_count set to {params} (UINT64)")
    kv["general.parameter_count"] = GGUFValue(params, GGUFValueType.UINT64)
    ordered: dict[str, GGUFValue] = {}
    for key in sorted(kv, key=lambda k: k.encode("utf-8")):
        out_key = key
        if not any(key.startswith(p) for p in (f"{arch}.", "general.", "adapter.", "tokenizer.")):
            out_key = f"{arch}.{key}"
            changes.append(f"{key} renamed {out_key}")
        if out_key in ordered:
            fail(f"{out_key} written twice")
        ordered[out_key] = kv[key]
    align = kv.get("general.alignment")
    alignment = int(align.value) if align is not None and align.type == GGUFValueType.UINT32 else 32
    tensors = [t for r in readers for t in r.tensors]
    tensors.sort(key=lambda t: (go_block(t.name), t.name.encode("utf-8")))
    w = new_writer(out, ordered)
    w.data_alignment = alignment
    for t in tensors:
        w.add_tensor(t.name, tensor_array(t), raw_dtype=t.tensor_type)
    finish(w)
    return changes


def cmd_gguf(args: argparse.Namespace) -> None:
    root = Path(args.root)
    store = Store(root)
    files = shard_files(Path(args.shards)) if args.shards else [Path(args.model)]
    model = files[0]
    readers = [GGUFReader(str(f)) for f in files]
    uploads = []
    if not args.no_uploads:
        for f in files:
            uploads.append(store.from_file(f, MT + "model", keep=True))
        store.written.clear()
    count = split_value(readers[0], "split.count") or 0
    if args.shards and count <= 1:
        fail(f"{files[0]}: split.count {count}, not a shard set")
    if not args.shards and count > 1:
        fail(f"{model}: split.count {count}: pass the first shard with --shards")
    for i, r in enumerate(readers):
        if args.shards and split_value(r, "split.no") != i:
            fail(f"{files[i]}: split.no is not {i}")

    label_source: str | None = str(files[0])
    if args.rewrite == "none":
        if args.shards:
            fail("--rewrite none: Ollama < 0.30 did not merge shards")
        model_layer = ordered_layer(store.from_file(model, MT + "model", keep=True), from_=model.name)
        changes: list[str] = []
        result_reader = readers[0]
    else:
        tmp = store.temp_path("COPY" if args.rewrite == "llama-quantize" else "split-copy")
        if args.rewrite == "llama-quantize":
            changes = rewrite_llama_quantize(readers, tmp)
        else:
            changes = rewrite_ollama(readers, tmp)
        result_reader = GGUFReader(str(tmp))
        model_layer = ordered_layer(store.from_file(tmp, MT + "model"))
    if changes:
        label_source = None
    model_blob = store.written[-1]["path"]

    # The config as createModel fills it from the (rewritten) model layer.
    rfields = kv_fields(result_reader)
    arch = bytes(rfields["general.architecture"].parts[-1]).decode() if "general.architecture" in rfields else "unknown"
    params = sum(element_count(t) for t in result_reader.tensors)
    ft_field = rfields.get("general.file_type")
    ft = int(ft_field.parts[-1][0]) if ft_field is not None and ft_field.types == [GGUFValueType.UINT32] else 0
    fields: dict[str, Any] = {
        "model_format": "gguf",
        "model_family": arch,
        "model_families": [arch],
        "model_type": human_number(params),
        "file_type": file_type_name(ft),
        "architecture": "amd64",
        "os": "linux",
    }

    # Model and projector files travel together in Files, sorted by name;
    # adapters, then drafts, follow.
    weights = [(model.name, model_layer)]
    if args.projector:
        p = Path(args.projector)
        weights.append((p.name, ordered_layer(store.from_file(p, MT + "projector", keep=True), from_=p.name)))
    if not args.shards:
        weights.sort(key=lambda x: x[0])
    layers = [layer for _, layer in weights]
    if args.adapter:
        a = Path(args.adapter)
        layers.append(ordered_layer(store.from_file(a, MT + "adapter", keep=True), from_=a.name))
    if args.draft:
        d = Path(args.draft)
        layers.append(ordered_layer(store.from_file(d, MT + "draft", keep=True), from_=d.name))
        dr = GGUFReader(str(d))
        darch = bytes(dr.fields["general.architecture"].parts[-1]).decode() if "general.architecture" in dr.fields else "unknown"
        fields["draft"] = {"model_format": "gguf", "architecture": darch}
    layers += [ordered_layer(layer) for layer in modelfile_layers(store, args)]
    config = config_v2(fields, args, layers, newline=True)
    config_layer = ordered_layer(store.from_bytes(config, CONFIG_MEDIA_TYPE))
    config_blob = store.written[-1]["path"]
    path, full = store.write_manifest(args.name, config_layer, layers)
    emit(
        {
            "kind": "gguf",
            "root": str(root),
            "name": full,
            "manifest": str(path),
            "config_blob": config_blob,
            "model_blob": model_blob,
            "blobs": store.written,
            "uploads": [u["digest"] for u in uploads],
            "rewrite": args.rewrite,
            "label_source": label_source,
            "model": args.model,
            "shards": [str(f) for f in files] if args.shards else None,
            "content_changes": changes,
        }
    )


# ---- safetensors tensor blobs (x/create) ----

QUANT = {"int4": (64, 4), "int8": (64, 8)}  # x/quant/quant.go: group size, bits (affine)


def bf16(a: np.ndarray) -> np.ndarray:
    """float32 -> bfloat16 bits (round to nearest even), as uint16."""
    u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return r


class T:
    """One tensor of a blob: safetensors dtype name, shape, raw bytes."""

    def __init__(self, name: str, dtype: str, shape: list[int], data: bytes) -> None:
        self.name, self.dtype, self.shape, self.data = name, dtype, shape, data


def quantize_affine(name: str, w: np.ndarray, kind: str) -> list[T]:
    """{name} (U32, packed low bits first), {name}.scale and {name}.bias
    (BF16, one per group), the layout MLX's affine quantize gives."""
    group, bits = QUANT[kind]
    rows, cols = w.shape
    if cols % group:
        fail(f"{name}: {cols} columns are not a multiple of the group size {group}")
    g = w.reshape(rows, cols // group, group).astype(np.float32)
    lo, hi = g.min(axis=2), g.max(axis=2)
    levels = (1 << bits) - 1
    scale = np.where(hi > lo, (hi - lo) / levels, 1.0).astype(np.float32)
    q = np.clip(np.rint((g - lo[..., None]) / scale[..., None]), 0, levels).astype(np.uint32).reshape(rows, cols)
    per = 32 // bits
    q = q.reshape(rows, cols // per, per)
    packed = np.zeros((rows, cols // per), dtype=np.uint32)
    for i in range(per):
        packed |= q[:, :, i] << np.uint32(i * bits)
    return [
        T(name, "U32", [rows, cols // per], packed.astype("<u4").tobytes()),
        T(name + ".scale", "BF16", [rows, cols // group], bf16(scale).astype("<u2").tobytes()),
        T(name + ".bias", "BF16", [rows, cols // group], bf16(lo).astype("<u2").tobytes()),
    ]


def safetensors_bytes(tensors: list[T], metadata: dict[str, str] | None, *, writer: str, alt: bool) -> bytes:
    """A safetensors file. writer "go": BuildPackedSafetensorsReaderWithMetadata
    (header keys sorted by json.Marshal, data in list order, spaces to a
    multiple of 8); writer "mlx": save_safetensors (sorted header, data in
    the arrays map's order). alt: another valid layout of the same content
    (data reversed, keys reversed, metadata moved, more padding)."""
    order = list(reversed(tensors)) if (writer == "mlx") != alt else list(tensors)
    header: dict[str, Any] = {}
    offset = 0
    for t in order:
        header[t.name] = {"dtype": t.dtype, "shape": t.shape, "data_offsets": [offset, offset + len(t.data)]}
        offset += len(t.data)
    if metadata:
        header["__metadata__"] = go_map(metadata)
    keys = sorted(header, key=lambda k: k.encode("utf-8"))
    if alt:
        keys.reverse()
    raw = go_json({k: header[k] for k in keys})
    pad = (8 - len(raw) % 8) % 8 + (16 if alt else 0)
    raw += b" " * pad
    return struct.pack("<Q", len(raw)) + raw + b"".join(t.data for t in order)


def model_tensors(rng: np.random.Generator, experts: str) -> tuple[list[dict[str, Any]], int]:
    """The synthetic model's blobs in x/create's plan order: plain tensors
    sorted by name, then expert groups. Each blob: name, writer, tensors,
    metadata."""
    H, V, I, E = 64, 96, 128, 2

    def f32(*shape: int) -> np.ndarray:
        return rng.standard_normal(shape).astype(np.float32)

    def plain(name: str, a: np.ndarray, dtype: str = "BF16") -> dict[str, Any]:
        data = bf16(a).astype("<u2").tobytes() if dtype == "BF16" else a.astype("<f4").tobytes()
        return {"name": name, "writer": "go", "tensors": [T(name, dtype, list(a.shape), data)], "metadata": None}

    def quant(name: str, a: np.ndarray, kind: str) -> dict[str, Any]:
        group, _ = QUANT[kind]
        return {"name": name, "writer": "mlx", "tensors": quantize_affine(name, a, kind),
                "metadata": {"quant_type": kind, "group_size": str(group)}}

    blobs = [
        quant("lm_head.weight", f32(V, H), "int8"),  # lm_head: 8-bit
        plain("model.embed_tokens.weight", f32(V, H)),  # embeddings are never quantized
        plain("model.layers.0.input_layernorm.weight", f32(H)),
        quant("model.layers.0.self_attn.k_proj.weight", f32(H, H), "int8"),  # int4 request: k_proj -> int8
        quant("model.layers.0.self_attn.q_proj.weight", f32(H, H), "int4"),
        plain("model.norm.weight", f32(H), "F32"),
    ]
    blobs.sort(key=lambda b: b["name"].encode())
    prefix = "model.layers.1.mlp.experts"
    shapes = {"down_proj": (H, I), "gate_proj": (I, H), "up_proj": (I, H)}
    tensors = []
    if experts == "seed":
        for e in range(E):
            for proj, shape in shapes.items():
                tensors.append(T(f"{prefix}.{e}.{proj}.weight", "BF16", list(shape),
                                 bf16(f32(*shape)).astype("<u2").tobytes()))
    else:
        for proj, shape in shapes.items():
            stacked = np.stack([f32(*shape) for _ in range(E)])
            tensors.append(T(f"{prefix}.{proj}.weight", "BF16", list(stacked.shape),
                             bf16(stacked).astype("<u2").tobytes()))
    blobs.append({"name": prefix, "writer": "go", "tensors": tensors, "metadata": None})
    return blobs, sum(len(b["tensors"]) for b in blobs)


JSON_FILES = {
    "config.json": {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_local_experts": 2,
        "vocab_size": 96,
        "rms_norm_eps": 1e-05,
        "rope_theta": 10000.0,
        "torch_dtype": "bfloat16",
    },
    "generation_config.json": {"bos_token_id": 1, "eos_token_id": 2, "temperature": 0.7},
    "tokenizer.json": {"version": "1.0", "model": {"type": "BPE", "vocab": {"<s>": 1, "</s>": 2}, "merges": []}},
    "tokenizer_config.json": {"bos_token": "<s>", "eos_token": "</s>", "chat_template": "{{ messages }}"},
}


def cmd_tensors(args: argparse.Namespace) -> None:
    root = Path(args.root)
    store = Store(root)
    rng = np.random.default_rng(args.seed)
    blobs, count = model_tensors(rng, args.experts)
    tensor_layers = []
    tensor_blobs = []
    for b in blobs:
        data = safetensors_bytes(b["tensors"], b["metadata"], writer=b["writer"], alt=args.alt_layout)
        tensor_layers.append(ordered_layer(store.from_bytes(data, MT + "tensor", b["name"])))
        tensor_blobs.append(store.written[-1]["path"])
    json_layers = []
    json_files = []
    for fname in sorted(JSON_FILES):
        text = json.dumps(JSON_FILES[fname], indent=2) + "\n"
        json_layers.append(ordered_layer(store.from_bytes(text.encode(), MT + "json", fname)))
        json_files.append(store.written[-1]["path"])
    layers = tensor_layers + json_layers + [ordered_layer(x) for x in modelfile_layers(store, args)]
    fields = {"model_format": "safetensors", "file_type": "int4", "requires": args.requires or SAFETENSORS_MIN_OLLAMA,
              "capabilities": [c for c in (args.capabilities or "completion").split(",") if c]}
    config = config_v2(fields, args, layers, newline=False)
    config_layer = ordered_layer(store.from_bytes(config, CONFIG_MEDIA_TYPE))
    config_blob = store.written[-1]["path"]
    path, full = store.write_manifest(args.name, config_layer, layers)
    emit(
        {
            "kind": "tensors",
            "root": str(root),
            "name": full,
            "manifest": str(path),
            "config_blob": config_blob,
            "blobs": store.written,
            "tensor_blobs": tensor_blobs,
            "json_files": json_files,
            "tensor_count": count,
            "experts": args.experts,
            "alt_layout": args.alt_layout,
        }
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gguf")
    t = sub.add_parser("tensors")
    for p in (g, t):
        p.add_argument("--root", required=True)
        p.add_argument("--name", required=True)
        p.add_argument("--template")
        p.add_argument("--system")
        p.add_argument("--params", help="JSON object (PARAMETER lines as api.FormatParams types them)")
        p.add_argument("--license", action="append", help="repeatable: one license layer each")
        p.add_argument("--renderer")
        p.add_argument("--parser")
        p.add_argument("--requires")
        p.add_argument("--capabilities", help="comma-separated, as create's Info[capabilities]")
        p.add_argument("--config-extra", help="JSON object appended to the config (e.g. a member a later Ollama adds)")
        p.add_argument("--rootfs", action="store_true", help="add rootfs.diff_ids, as Ollama < 0.32.8 did")
    g.add_argument("--model", help="the GGUF file (with --shards: optional, the unsplit original, reported only)")
    g.add_argument("--shards", help="the first shard of a gguf-split set: the input, merged into one blob")
    g.add_argument("--rewrite", choices=["llama-quantize", "ollama", "none"], default="llama-quantize")
    g.add_argument("--messages", help='JSON array of {"role", "content"}')
    g.add_argument("--projector")
    g.add_argument("--adapter")
    g.add_argument("--draft")
    g.add_argument("--no-uploads", action="store_true", help="leave out the orphaned uploaded originals")
    t.add_argument("--experts", choices=["seed", "stacked"], default="seed")
    t.add_argument("--alt-layout", action="store_true")
    t.add_argument("--seed", type=int, default=3)
    args = ap.parse_args()
    if args.cmd == "gguf":
        if not args.model and not args.shards:
            ap.error("gguf needs --model or --shards")
        cmd_gguf(args)
    else:
        cmd_tensors(args)


if __name__ == "__main__":
    main()
