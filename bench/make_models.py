#!/usr/bin/env python3
"""Writes the synthetic GGUF models that bench/compare.sh times.

Standard library only (struct, os, random), so the benchmark needs no
package to make its inputs. Every file is GGUF v3, little-endian, default
alignment 32.

  equal  OUT --bytes N [--tensors 64]   N bytes of tensor data in equal F32 tensors
  gemma  OUT --bytes N [--vocab 262144] one token embedding of ~72% of N, many small
                                        layer tensors, and a gemma-sized vocabulary
  skewed OUT --bytes N                  one tensor of ~80% of N plus 15 small ones
                                        (a file that alone keeps only one core busy)
  ollama-tensors ROOT --bytes N [--blobs 1000]   an Ollama store with model many:latest of
                                        N bytes in 1000 tensor blobs (one tensor each)
  safetensors OUT --bytes N [--tensors 64]   a safetensors file of equal F32 tensors
                                        (odd header length: unaligned data)
  snapshot CACHE --bytes N [--shards 4] [--files DIR]   a Hugging Face cache holding
                                        models--bench--ckpt: N bytes of F32 tensors cut into
                                        shards with an index, and DIR's other files (a
                                        tokenizer, configs); blobs named by SHA-256 (weights)
                                        and Git SHA-1 (the rest), linked from the snapshot
  twin   SRC OUT                        SRC's KVs byte for byte and its tensor infos
                                        with every tensor shrunk to one F32 element:
                                        the same metadata work, (almost) no data

The tensor bytes are pseudo-random (seeded, so reruns write the same files):
SHA-256 speed does not depend on content, but no tool should get to skip work
on a run of zeros, and the page cache should hold real pages.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import struct
import sys

GGUF_MAGIC = b"GGUF"
ALIGN = 32

# GGUF value type ids.
T_UINT8, T_INT8, T_UINT16, T_INT16, T_UINT32, T_INT32, T_FLOAT32, T_BOOL = range(8)
T_STRING, T_ARRAY, T_UINT64, T_INT64, T_FLOAT64 = 8, 9, 10, 11, 12
SCALAR_SIZE = {
    T_UINT8: 1, T_INT8: 1, T_UINT16: 2, T_INT16: 2, T_UINT32: 4, T_INT32: 4,
    T_FLOAT32: 4, T_BOOL: 1, T_UINT64: 8, T_INT64: 8, T_FLOAT64: 8,
}

# ggml type ids and their element sizes (only the unquantised ones are written).
GGML_F32, GGML_F16 = 0, 1
ELEM_SIZE = {GGML_F32: 4, GGML_F16: 2}

# Data is written from one random pool at shifting offsets: generating
# gigabytes of fresh randomness would make the generator, not the disk, the
# slow part.
POOL_SIZE = 8 << 20
WRITE_SIZE = 4 << 20


def gguf_str(s: bytes) -> bytes:
    return struct.pack("<Q", len(s)) + s


def kv_string(key: str, value: str) -> bytes:
    return gguf_str(key.encode()) + struct.pack("<I", T_STRING) + gguf_str(value.encode())


def kv_u32(key: str, value: int) -> bytes:
    return gguf_str(key.encode()) + struct.pack("<II", T_UINT32, value)


def kv_f32(key: str, value: float) -> bytes:
    return gguf_str(key.encode()) + struct.pack("<If", T_FLOAT32, value)


def kv_array(key: str, elem_type: int, items: list, fmt: str | None = None) -> bytes:
    head = gguf_str(key.encode()) + struct.pack("<IIQ", T_ARRAY, elem_type, len(items))
    if elem_type == T_STRING:
        return head + b"".join(gguf_str(s) for s in items)
    assert fmt is not None
    return head + struct.pack(f"<{len(items)}{fmt}", *items)


def align_up(n: int, a: int = ALIGN) -> int:
    return (n + a - 1) // a * a


class Tensor:
    def __init__(self, name: str, dims: list[int], ggml_type: int = GGML_F32):
        self.name, self.dims, self.ggml_type = name, dims, ggml_type
        count = 1
        for d in dims:
            count *= d
        self.nbytes = count * ELEM_SIZE[ggml_type]


def write_gguf(path: str, kvs: list[bytes], tensors: list[Tensor], seed: int) -> None:
    """Writes header, KVs, tensor infos, padding, then every tensor's data."""
    offsets, running = [], 0
    for t in tensors:
        offsets.append(running)
        running = align_up(running + t.nbytes)
    header = bytearray(GGUF_MAGIC + struct.pack("<IQQ", 3, len(tensors), len(kvs)))
    for kv in kvs:
        header += kv
    for t, off in zip(tensors, offsets):
        header += gguf_str(t.name.encode()) + struct.pack("<I", len(t.dims))
        header += struct.pack(f"<{len(t.dims)}Q", *t.dims)
        header += struct.pack("<IQ", t.ggml_type, off)
    header += b"\0" * (align_up(len(header)) - len(header))
    rng = random.Random(seed)
    pool = rng.randbytes(POOL_SIZE)
    tmp = path + ".part"
    with open(tmp, "wb") as f:
        f.write(header)
        for t, off in zip(tensors, offsets):
            left = t.nbytes
            while left:
                n = min(left, WRITE_SIZE)
                start = rng.randrange(POOL_SIZE - n + 1)
                f.write(pool[start : start + n])
                left -= n
            pad = align_up(off + t.nbytes) - (off + t.nbytes)
            f.write(b"\0" * pad)
    # Rename last: an interrupted run never leaves a truncated model that a
    # later run would mistake for a finished one.
    os.replace(tmp, path)


def general_kvs(arch: str, name: str) -> list[bytes]:
    return [
        kv_string("general.architecture", arch),
        kv_string("general.name", name),
        kv_u32("general.file_type", 0),
    ]


def make_equal(path: str, nbytes: int, n_tensors: int) -> None:
    # Rows of 4096 F32 values: shapes like real projection matrices.
    rows = max(1, nbytes // n_tensors // (4096 * 4))
    tensors = [Tensor(f"blk.{i}.ffn_up.weight", [4096, rows]) for i in range(n_tensors)]
    write_gguf(path, general_kvs("llama", "bench-equal"), tensors, seed=1)


def vocab_kvs(n_vocab: int) -> list[bytes]:
    # Token pieces of 1 to 16 bytes (mean ~7, like a SentencePiece vocabulary),
    # all distinct; scores and types as gemma's tokenizer stores them.
    rng = random.Random(7)
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    tokens = []
    for i in range(n_vocab):
        word = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 10)))
        tokens.append(f"\u2581{word}{i:x}".encode())
    scores = [-float(i) for i in range(n_vocab)]
    types = [1] * n_vocab
    return [
        kv_string("tokenizer.ggml.model", "llama"),
        kv_string("tokenizer.ggml.pre", "default"),
        kv_array("tokenizer.ggml.tokens", T_STRING, tokens),
        kv_array("tokenizer.ggml.scores", T_FLOAT32, scores, "f"),
        kv_array("tokenizer.ggml.token_type", T_INT32, types, "i"),
        kv_u32("tokenizer.ggml.bos_token_id", 2),
        kv_u32("tokenizer.ggml.eos_token_id", 1),
    ]


def make_gemma(path: str, nbytes: int, n_vocab: int) -> None:
    # Gemma 3's shape: a token embedding of n_vocab rows holding ~72% of the
    # data, then n_layer blocks of seven F16 matrices and four F32 norms.
    n_layer = 26
    n_embd = max(32, int(0.72 * nbytes / (n_vocab * 2)) // 32 * 32)
    tensors = [Tensor("token_embd.weight", [n_embd, n_vocab], GGML_F16)]
    rest = nbytes - tensors[0].nbytes
    per_matrix = max(n_embd * 2, rest // (n_layer * 7))
    cols = max(1, per_matrix // (n_embd * 2))
    for i in range(n_layer):
        for m in ("attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"):
            tensors.append(Tensor(f"blk.{i}.{m}.weight", [n_embd, cols], GGML_F16))
        for m in ("attn_norm", "ffn_norm", "post_attention_norm", "post_ffw_norm"):
            tensors.append(Tensor(f"blk.{i}.{m}.weight", [n_embd]))
    tensors.append(Tensor("output_norm.weight", [n_embd]))
    kvs = general_kvs("gemma3", "bench-gemma-like")
    kvs += [
        kv_u32("gemma3.context_length", 32768),
        kv_u32("gemma3.embedding_length", n_embd),
        kv_u32("gemma3.block_count", n_layer),
        kv_f32("gemma3.attention.layer_norm_rms_epsilon", 1e-6),
    ]
    kvs += vocab_kvs(n_vocab)
    write_gguf(path, kvs, tensors, seed=2)


def make_skewed(path: str, nbytes: int, seed: int) -> None:
    big = Tensor("token_embd.weight", [4096, max(1, int(0.8 * nbytes) // (4096 * 4))])
    rows = max(1, (nbytes - big.nbytes) // 15 // (4096 * 4))
    tensors = [big] + [Tensor(f"blk.{i}.ffn_up.weight", [4096, rows]) for i in range(15)]
    write_gguf(path, general_kvs("llama", f"bench-skewed-{seed}"), tensors, seed=100 + seed)


class Reader:
    """Just enough of a GGUF v2/v3 little-endian reader to copy metadata."""

    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            sys.exit("make_models.py: metadata runs past the bytes read")
        b = self.data[self.pos : self.pos + n]
        self.pos += n
        return b

    def u32(self) -> int:
        return struct.unpack("<I", self.take(4))[0]

    def u64(self) -> int:
        return struct.unpack("<Q", self.take(8))[0]

    def string(self) -> bytes:
        return self.take(self.u64())

    def skip_value(self, vtype: int) -> int | None:
        """Skips one value; returns it if it is a UINT32 (for general.alignment)."""
        if vtype == T_STRING:
            self.string()
        elif vtype == T_ARRAY:
            elem, count = self.u32(), self.u64()
            if elem in SCALAR_SIZE:
                self.take(SCALAR_SIZE[elem] * count)
            else:
                for _ in range(count):
                    self.skip_value(elem)
        elif vtype == T_UINT32:
            return self.u32()
        else:
            self.take(SCALAR_SIZE[vtype])
        return None


def make_twin(src: str, path: str) -> None:
    with open(src, "rb") as f:
        # Metadata of real models is a few MiB at most; 64 MiB is plenty.
        data = f.read(64 << 20)
    r = Reader(data)
    if r.take(4) != GGUF_MAGIC:
        sys.exit(f"make_models.py: {src} is not a little-endian GGUF file")
    version = r.u32()
    n_tensors, n_kvs = r.u64(), r.u64()
    kv_start = r.pos
    alignment = ALIGN
    for _ in range(n_kvs):
        key = r.string()
        vtype = r.u32()
        value = r.skip_value(vtype)
        if key == b"general.alignment" and value is not None:
            alignment = value
    kv_bytes = data[kv_start : r.pos]
    infos = bytearray()
    for i in range(n_tensors):
        name = r.string()
        n_dims = r.u32()
        r.take(8 * n_dims + 4 + 8)
        # Same name and rank, one F32 element: the parser does the same work.
        infos += gguf_str(name) + struct.pack("<I", n_dims) + struct.pack(f"<{n_dims}Q", *([1] * n_dims))
        infos += struct.pack("<IQ", GGML_F32, i * align_up(4, alignment))
    header = GGUF_MAGIC + struct.pack("<IQQ", version, n_tensors, n_kvs) + kv_bytes + infos
    header += b"\0" * (align_up(len(header), alignment) - len(header))
    body = b"".join(struct.pack("<f", 1.0) + b"\0" * (align_up(4, alignment) - 4) for _ in range(n_tensors))
    with open(path + ".part", "wb") as f:
        f.write(header + body)
    os.replace(path + ".part", path)


def make_safetensors(path: str, nbytes: int, n_tensors: int, seed: int = 0) -> None:
    """A safetensors file of `n_tensors` equal F32 tensors holding about
    `nbytes` in all, with `{"format": "pt"}` metadata. The header is padded
    to an odd length, so no tensor's data starts on an aligned address:
    the worst case for a reader that maps the file."""
    per = max(nbytes // n_tensors // 4, 0)
    header, offset = {"__metadata__": {"format": "pt"}}, 0
    for i in range(n_tensors):
        header[f"model.layers.{i}.weight"] = {"dtype": "F32", "shape": [per], "data_offsets": [offset, offset + 4 * per]}
        offset += 4 * per
    text = json.dumps(header, separators=(",", ":")).encode()
    if len(text) % 2 == 0:
        text += b" "
    rng = random.Random(seed)
    pool = rng.randbytes(POOL_SIZE)
    tmp = path + ".part"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        left = offset
        while left:
            n = min(left, WRITE_SIZE)
            start = rng.randrange(POOL_SIZE - n + 1)
            f.write(pool[start : start + n])
            left -= n
    os.replace(tmp, path)


def make_snapshot(cache: str, nbytes: int, n_shards: int, files: str | None, seed: int = 0) -> None:
    """A snapshot as huggingface_hub lays it out: `models--bench--ckpt/`
    with `blobs/`, `refs/main` and `snapshots/<rev>/` whose entries link
    to the blobs. Weights: `n_shards` safetensors shards of 16 F32 tensors
    each and their index; with `files`, every other file below that folder
    too (the model's tokenizer and configs)."""
    import hashlib

    repo = os.path.join(cache, "models--bench--ckpt")
    rev = "0123456789abcdef0123456789abcdef01234567"
    snap = os.path.join(repo, "snapshots", rev)
    blobs = os.path.join(repo, "blobs")
    os.makedirs(snap, exist_ok=True)
    os.makedirs(blobs, exist_ok=True)
    os.makedirs(os.path.join(repo, "refs"), exist_ok=True)
    with open(os.path.join(repo, "refs", "main"), "w") as f:
        f.write(rev)

    def put(rel: str, write, lfs: bool) -> None:
        tmp = os.path.join(blobs, "incoming.part")
        with open(tmp, "wb") as f:
            write(f)
        h = hashlib.sha256() if lfs else hashlib.sha1(b"blob %d\0" % os.path.getsize(tmp))
        with open(tmp, "rb") as f:
            for piece in iter(lambda: f.read(1 << 22), b""):
                h.update(piece)
        os.replace(tmp, os.path.join(blobs, h.hexdigest()))
        link = os.path.join(snap, rel)
        os.makedirs(os.path.dirname(link), exist_ok=True)
        if os.path.lexists(link):
            os.remove(link)
        os.symlink(os.path.relpath(os.path.join(blobs, h.hexdigest()), os.path.dirname(link)), link)

    rng = random.Random(seed)
    pool = rng.randbytes(POOL_SIZE)
    per_shard = 16
    per = max(nbytes // (n_shards * per_shard) // 4, 1)
    weight_map = {}
    for s in range(n_shards):
        name = f"model-{s + 1:05d}-of-{n_shards:05d}.safetensors"
        header, offset = {"__metadata__": {"format": "pt"}}, 0
        for i in range(per_shard):
            t = f"model.layers.{s * per_shard + i}.weight"
            header[t] = {"dtype": "F32", "shape": [per], "data_offsets": [offset, offset + 4 * per]}
            weight_map[t] = name
            offset += 4 * per
        text = json.dumps(header, separators=(",", ":")).encode()

        def write(f, text=text, left=offset):
            f.write(struct.pack("<Q", len(text)) + text)
            while left:
                n = min(left, WRITE_SIZE)
                start = rng.randrange(POOL_SIZE - n + 1)
                f.write(pool[start : start + n])
                left -= n

        put(name, write, True)
    index = json.dumps({"metadata": {"total_size": nbytes}, "weight_map": weight_map}, indent=2).encode()
    put("model.safetensors.index.json", lambda f: f.write(index), False)
    for top, _, names in os.walk(files or []):
        for n in names:
            if n.endswith(".safetensors"):
                continue
            src = os.path.join(top, n)
            rel = os.path.relpath(src, files)
            data = open(src, "rb").read()
            put(rel, lambda f, data=data: f.write(data), False)


def make_ollama_tensors(root: str, nbytes: int, n_blobs: int, seed: int = 0) -> None:
    """An Ollama store at `root` with model `many:latest`: `n_blobs` tensor
    blobs (one safetensors file of one F32 tensor each, as Ollama stores new
    models) holding about `nbytes` in all, a config, and the manifest."""
    import hashlib

    per = max(nbytes // n_blobs // 4, 1)
    os.makedirs(os.path.join(root, "blobs"), exist_ok=True)
    rng = random.Random(seed)
    pool = rng.randbytes(POOL_SIZE)
    layers = []

    def blob(data: bytes, media: str, name: str | None = None) -> dict:
        h = hashlib.sha256(data).hexdigest()
        with open(os.path.join(root, "blobs", f"sha256-{h}"), "wb") as f:
            f.write(data)
        layer = {"mediaType": media, "digest": f"sha256:{h}", "size": len(data)}
        if name:
            layer["name"] = name
        return layer

    for i in range(n_blobs):
        name = f"model.layers.{i}.weight"
        header = json.dumps({name: {"dtype": "F32", "shape": [per], "data_offsets": [0, 4 * per]}}).encode()
        start = rng.randrange(POOL_SIZE - 4 * per + 1) if 4 * per <= POOL_SIZE else 0
        data = (pool * (1 + 4 * per // POOL_SIZE))[start : start + 4 * per]
        layers.append(blob(struct.pack("<Q", len(header)) + header + data, "application/vnd.ollama.image.tensor", name))
    config = blob(json.dumps({"model_format": "safetensors"}).encode(), "application/vnd.docker.container.image.v1+json")
    manifest = {"schemaVersion": 2, "config": config, "layers": layers}
    d = os.path.join(root, "manifests", "registry.ollama.ai", "library", "many")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "latest"), "w") as f:
        json.dump(manifest, f)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="kind", required=True)
    e = sub.add_parser("equal")
    e.add_argument("out")
    e.add_argument("--bytes", type=int, required=True)
    e.add_argument("--tensors", type=int, default=64)
    g = sub.add_parser("gemma")
    g.add_argument("out")
    g.add_argument("--bytes", type=int, required=True)
    g.add_argument("--vocab", type=int, default=262144)
    s = sub.add_parser("skewed")
    s.add_argument("out")
    s.add_argument("--bytes", type=int, required=True)
    s.add_argument("--seed", type=int, default=0)
    st = sub.add_parser("safetensors")
    st.add_argument("out")
    st.add_argument("--bytes", type=int, required=True)
    st.add_argument("--tensors", type=int, default=64)
    ol = sub.add_parser("ollama-tensors")
    ol.add_argument("root")
    ol.add_argument("--bytes", type=int, required=True)
    ol.add_argument("--blobs", type=int, default=1000)
    sn = sub.add_parser("snapshot")
    sn.add_argument("cache")
    sn.add_argument("--bytes", type=int, required=True)
    sn.add_argument("--shards", type=int, default=4)
    sn.add_argument("--files")
    t = sub.add_parser("twin")
    t.add_argument("src")
    t.add_argument("out")
    a = p.parse_args()
    if a.kind == "equal":
        make_equal(a.out, a.bytes, a.tensors)
    elif a.kind == "gemma":
        make_gemma(a.out, a.bytes, a.vocab)
    elif a.kind == "skewed":
        make_skewed(a.out, a.bytes, a.seed)
    elif a.kind == "safetensors":
        make_safetensors(a.out, a.bytes, a.tensors)
    elif a.kind == "snapshot":
        make_snapshot(a.cache, a.bytes, a.shards, a.files)
    elif a.kind == "ollama-tensors":
        make_ollama_tensors(a.root, a.bytes, a.blobs)
    else:
        make_twin(a.src, a.out)


if __name__ == "__main__":
    main()
