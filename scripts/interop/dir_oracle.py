"""An independent oracle for the directory label (directory-skeleton-v1).

usage: dir_oracle.py [--components] [--json] DIR...

Written from the contract alone (shared/spec/directory-skeleton-v1.md, with
canonical-skeleton-v1.md's notation: H = SHA-256, LE_u32 / LE_u64
little-endian), sharing no code with the Rust side. This file itself uses
the standard library only; the weights components come from the other
independent oracles of this folder:

  * safetensors models: st_oracle.py (from safetensors-skeleton-v1.md,
    standard library only);
  * GGUF models: ollama_oracle.py's GGUF skeleton (from
    canonical-skeleton-v1.md; gguf-py's GGUFReader only splits a file into
    its fields), imported lazily, so a directory without a `.gguf` file
    needs no gguf-py. Shard sets are joined here, by §5 of that contract;
  * PyTorch checkpoints (revision 3): pt_oracle.py (from docs/SPEC.md Part
    V, standard library only), imported lazily;
  * ONNX models: onnx_oracle.py (from docs/SPEC.md Part VI, standard
    library only), imported lazily; the external data files a model names
    are recorded as it resolves them.

What it implements, section by section:

  §2  the walk: the root is the real path of the argument; `.git`,
      `.github`, `.gitattributes`, `.gitignore` are skipped directly in the
      root only (revision 2: below it they are content), with everything
      below them, `.cache` at the top only when it is a real directory; links are followed one step at a time (each step lands
      inside the root, or, for a Hugging Face snapshot root, inside `<repo>`
      or the shared store; every directory a target passes through is a
      real directory; a link seen twice or more than 40 steps is a loop;
      the end is a regular file inside the root, or below `<repo>/blobs/`,
      or inside the shared store after a step that landed on a link directly
      in `<repo>/blobs/`); FIFOs, sockets, devices, links to directories,
      dangling links and a root with no file are errors.
  §3  grouping by raw-byte names per directory, case-sensitively: indexes
      first (their listed files belong to them alone, must be content files
      of the same directory, at most one index each; every shard-named file
      of the index's prefix and `P.safetensors` must be listed, and
      `P.safetensors` beside its index must be the index's only file:
      revision 2), then
      safetensors shard sets / single files, then GGUF sets / single files,
      then every other file as FILE. A file an index lists is taken out of
      every other grouping, whatever its suffix (the contract says "whatever
      its own name's prefix"; this oracle reads that for the suffix too).
  rev. 3 (docs/SPEC.md Part IV D2 rule 3, written from SPEC alone):
      `pytorch_model.bin`, `pytorch_model-NNNNN-of-MMMMM.bin` and
      `pytorch_model.bin.index.json` of one directory are one PTCH model
      named `d/pytorch_model`, grouped by the safetensors rules above (`.bin`
      for `.safetensors`: the index first, the files it lists its own,
      `pytorch_model.bin` beside it listed alone); its digest pt_oracle.py's
      label (of the file, the shard set, or the index), and a failure an
      error. Every other `P.bin`, `P.pt`, `P.pth` (case-sensitive; a file no
      index took) is a candidate: PTCH named `d/P.<ext>` with the label of
      that one file alone when pt_oracle.py accepts it, else FILE with
      pt_oracle.py's refusal as its note; one holding a Git LFS pointer, or
      that cannot be read, is an error. `*.ckpt` is a FILE.
  X8  (docs/SPEC.md Part VI): each `P.onnx` is an ONNX model named by its
      relative path, its digest onnx_oracle.py's label; the files its
      tensors' external data name (relative to its directory) are its own,
      taken out of every other grouping. Errors: a named file that is no
      file of the directory (missing, or below a skipped entry); a file
      named by two ONNX models, or by one and an index; a `.onnx` file
      named as external data.
  §4  the skeleton: "MDIR" || LE_u32(1) || LE_u64(C) || for each component
      in ascending (kind, name): kind || H(name) || digest.

Readings of the contract where the text leaves room (checked against the
crate by tests/interop/dir.rs; the first two are where the
crate reads it otherwise, kept there as contested trees):

  * a link whose target leaves the root and comes back into it
    (`../root/x`) lands inside the root, and "a step is checked where it
    lands": accepted (the crate refuses a walk that leaves the root);
  * an index whose weight_map is empty is, by safetensors §5, a model of no
    file: labelled, as st_oracle.py and `gguf-digest INDEX` label it (the
    crate's grouping refuses it);
  * a file an index lists leaves every other grouping, whatever its suffix;
  * an index listed by an index is an error (it could never be read as a
    safetensors file anyway).

Prints `<label>  <DIR>` per DIR, like sha256sum; --components adds one line
per component `  <kind> <digest hex> <name>` (name with non-UTF-8 bytes
escaped); --json prints instead one JSON line {"dirs": [{"path", "label",
"components": [{"kind", "name", "name_hex", "digest", "files"}]}]}. A
directory the contract rejects exits 2 with one line on stderr naming it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import stat
import struct
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import st_oracle  # noqa: E402
from st_oracle import Rejected  # noqa: E402

MAGIC = b"MDIR"
VERSION = 1
MAX_STEPS = 40
SKIPPED = {b".git", b".github", b".gitattributes", b".gitignore"}
SHARED_MARKER = b".huggingface-shared-blobs"
ST_SUFFIX = b".safetensors"
INDEX_SUFFIX = b".safetensors.index.json"
GGUF_SUFFIX = b".gguf"
# Revision 3 (D2 rule 3): the checkpoint `pytorch_model` and its index, and
# the other checkpoint candidates by suffix (not `.ckpt`); X8: ONNX models.
PT_PREFIX = b"pytorch_model"
PT_SUFFIX = b".bin"
PT_INDEX_SUFFIX = b".bin.index.json"
PT_CANDIDATE_SUFFIXES = (b".bin", b".pt", b".pth")
ONNX_SUFFIX = b".onnx"
LFS_PREFIX = b"version https://git-lfs.github.com/spec/v1"
CHUNK = 1 << 20


def H(b: bytes) -> bytes:
    return hashlib.sha256(b).digest()


def show(b: bytes) -> str:
    return b.decode("utf-8", errors="backslashreplace")


# ---- §2: the walk ----


def is_under(path: bytes, top: bytes) -> bool:
    """`path` is `top` or below it (both absolute, normalised, real dirs)."""
    return path == top or path.startswith(top.rstrip(b"/") + b"/")


@dataclass
class Areas:
    """Where a chain may land and end, for one root."""

    root: bytes
    repo: bytes | None = None  # a snapshot's <repo>
    store: bytes | None = None  # the cache-wide shared blob store

    @property
    def blobs(self) -> bytes | None:
        return self.repo + b"/blobs" if self.repo else None

    def may_land(self, p: bytes) -> bool:
        return (
            is_under(p, self.root)
            or (self.repo is not None and is_under(p, self.repo))
            or (self.store is not None and is_under(p, self.store))
        )


def areas_of(root: bytes) -> Areas:
    a = Areas(root)
    parent = os.path.dirname(root)
    if os.path.basename(parent) != b"snapshots":
        return a
    repo = os.path.dirname(parent)
    try:
        if not stat.S_ISDIR(os.lstat(repo + b"/blobs").st_mode):
            return a
    except OSError:
        return a
    a.repo = repo
    store = os.path.dirname(repo) + b"/blobs"
    try:
        if stat.S_ISDIR(os.lstat(store).st_mode) and stat.S_ISREG(os.lstat(store + b"/" + SHARED_MARKER).st_mode):
            a.store = store
    except OSError:
        pass
    return a


def step(link: bytes, what: str) -> bytes:
    """Where one link lands: its target walked component by component from
    the link's directory; every directory passed through must be a real
    directory (a link reached through a directory link is an error)."""
    target = os.readlink(link)
    at = b"/" if target.startswith(b"/") else os.path.dirname(link)
    parts = [p for p in target.split(b"/") if p not in (b"", b".")]
    if not parts:
        raise Rejected(f"{what}: link to a directory")
    for p in parts[:-1]:
        if p == b"..":
            at = os.path.dirname(at)
            continue
        at = os.path.join(at, p)
        try:
            st = os.lstat(at)
        except OSError as e:
            raise Rejected(f"{what}: dangling link (through {show(at)}: {e.strerror})") from e
        if not stat.S_ISDIR(st.st_mode):
            raise Rejected(f"{what}: its target passes through {show(at)}, not a real directory")
    last = parts[-1]
    return os.path.dirname(at) if last == b".." else os.path.join(at, last)


def resolve(link: bytes, areas: Areas, what: str) -> bytes:
    """The regular file a link's chain ends in, checked by §2."""
    seen = {link}
    via_repo_blob = False
    at = link
    for _ in range(MAX_STEPS):
        at = step(at, what)
        if not areas.may_land(at):
            raise Rejected(f"{what}: a link step leaves the root ({show(at)})")
        try:
            st = os.lstat(at)
        except OSError as e:
            raise Rejected(f"{what}: dangling link ({show(at)})") from e
        if stat.S_ISLNK(st.st_mode):
            if at in seen:
                raise Rejected(f"{what}: link loop")
            seen.add(at)
            if areas.blobs is not None and os.path.dirname(at) == areas.blobs:
                via_repo_blob = True
            continue
        if stat.S_ISDIR(st.st_mode):
            raise Rejected(f"{what}: link to a directory")
        if not stat.S_ISREG(st.st_mode):
            raise Rejected(f"{what}: link to something that is not a regular file")
        if is_under(at, areas.root):
            return at
        if areas.blobs is not None and is_under(at, areas.blobs) and at != areas.blobs:
            return at
        if via_repo_blob and areas.store is not None and is_under(at, areas.store) and at != areas.store:
            return at
        raise Rejected(f"{what}: link ends outside the root ({show(at)})")
    raise Rejected(f"{what}: link loop (more than {MAX_STEPS} steps)")


def walk(arg: Path) -> tuple[bytes, dict[bytes, bytes]]:
    """(root, {relative path: the real path of its regular file})."""
    root = os.path.realpath(os.fsencode(arg))
    if not os.path.isdir(root):
        raise Rejected(f"{arg}: not a directory")
    areas = areas_of(root)
    files: dict[bytes, bytes] = {}

    def visit(real_dir: bytes, rel_dir: bytes) -> None:
        with os.scandir(real_dir) as it:
            names = sorted(e.name for e in it)
        for name in names:
            if not rel_dir and name in SKIPPED:
                continue
            p = os.path.join(real_dir, name)
            rel = rel_dir + b"/" + name if rel_dir else name
            st = os.lstat(p)
            if not rel_dir and name == b".cache" and stat.S_ISDIR(st.st_mode):
                continue
            what = f"{arg}: {show(rel)}"
            if stat.S_ISDIR(st.st_mode):
                visit(p, rel)
            elif stat.S_ISREG(st.st_mode):
                files[rel] = p
            elif stat.S_ISLNK(st.st_mode):
                files[rel] = resolve(p, areas, what)
            else:
                raise Rejected(f"{what}: not a file, directory or link (FIFO, socket or device)")

    visit(root, b"")
    if not files:
        raise Rejected(f"{arg}: a directory with no file")
    return root, files


# ---- §3: components ----

SHARD = re.compile(rb"^(?P<p>.*)-(?P<n>[0-9]{5})-of-(?P<m>[0-9]{5})$", re.DOTALL)


def stem_of(stem: bytes) -> tuple[bytes, int, int] | None:
    """(P, N, M) for a shard-named stem, else None (a single file)."""
    m = SHARD.match(stem)
    if m and 1 <= int(m["n"]) <= int(m["m"]):
        return m["p"], int(m["n"]), int(m["m"])
    return None


def join(d: bytes, name: bytes) -> bytes:
    return d + b"/" + name if d else name


@dataclass
class Component:
    kind: bytes
    name: bytes
    files: list[bytes]  # relative paths; for a model the index or shard 1 first
    index: bytes | None = None
    digest: bytes = b""
    extra: dict[str, Any] = field(default_factory=dict)


def index_names(path: Path, what: str) -> list[bytes]:
    """The distinct plain file names an index's weight_map lists."""
    if path.stat().st_size > st_oracle.MAX_HEADER:
        raise Rejected(f"{what}: over {st_oracle.MAX_HEADER} bytes")
    doc = st_oracle.parse_json(path.read_bytes(), what)
    wm = doc.get("weight_map")
    if not isinstance(wm, dict):
        raise Rejected(f"{what}: no weight_map object")
    out: dict[bytes, None] = {}
    for f in wm.values():
        out[st_oracle.utf8(st_oracle.plain_name(f, Path(what)))] = None
    return list(out)


def weights_models(
    d: bytes, names: list[bytes], root: bytes, arg: Path, taken: dict[bytes, bytes], comps: list[Component]
) -> None:
    """D2 rules 1 to 3 in one directory `d`: the indexes first (safetensors'
    `P.safetensors.index.json`, and `pytorch_model.bin.index.json`), then
    the shard sets and single files of safetensors, GGUF and the checkpoint
    `pytorch_model` ("grouped exactly as rule 1 groups a safetensors model,
    `.bin` for `.safetensors`"). `taken` gets every file an index lists."""
    names_set = set(names)
    # (index suffix, weights suffix, kind, the one prefix the rule takes or None for any)
    rules = ((INDEX_SUFFIX, ST_SUFFIX, b"SFTN", None), (PT_INDEX_SUFFIX, PT_SUFFIX, b"PTCH", PT_PREFIX))
    index_of: dict[tuple[bytes, bytes], bytes] = {}  # (kind, P) -> index name
    all_indexes: list[bytes] = []
    for index_suffix, suffix, kind, only in rules:
        indexes = sorted(n for n in names if n.endswith(index_suffix) and (only is None or n == only + index_suffix))
        all_indexes += indexes
        for ix in indexes:
            p = ix[: -len(index_suffix)]
            index_of[(kind, p)] = ix
            what = f"{arg}: {show(join(d, ix))}"
            listed = index_names(Path(os.fsdecode(os.path.join(root, join(d, ix)))), what)
            for f in listed:
                if f not in names_set:
                    raise Rejected(f"{what}: lists {show(f)}, not a content file of its directory")
                if f in taken:
                    raise Rejected(f"{what}: {show(f)} is listed by {show(taken[f])} too")
                taken[f] = ix
            # Revision 2: P.safetensors (P.bin) beside its index is the index's
            # only file (transformers loads it alone and never reads the index).
            single = p + suffix
            if single in names_set and listed != [single]:
                raise Rejected(
                    f"{arg}: {show(join(d, p))}: {show(single)} lies beside its index, which must then list it alone"
                )
            comps.append(Component(kind, join(d, p), [join(d, ix)] + [join(d, f) for f in listed], join(d, ix)))
    for ix in all_indexes:
        if ix in taken:
            raise Rejected(f"{arg}: {show(join(d, ix))}: an index listed as a weights file")
    # Files not listed by an index: safetensors, GGUF, pytorch_model.
    for suffix, kind, only in ((ST_SUFFIX, b"SFTN", None), (GGUF_SUFFIX, b"GGUF", None), (PT_SUFFIX, b"PTCH", PT_PREFIX)):
        singles: dict[bytes, bytes] = {}
        sets: dict[bytes, dict[int, dict[int, bytes]]] = {}
        for n in sorted(names):
            if not n.endswith(suffix):
                continue
            s = stem_of(n[: -len(suffix)])
            p = s[0] if s else n[: -len(suffix)]
            if only is not None and p != only:
                continue
            if kind != b"GGUF" and (kind, p) in index_of:
                if n not in taken or taken[n] != index_of[(kind, p)]:
                    raise Rejected(
                        f"{arg}: {show(join(d, p))}: {show(n)} is not one of the files of {show(index_of[(kind, p)])}"
                    )
                continue
            if n in taken:
                continue
            if s:
                sets.setdefault(p, {}).setdefault(s[2], {})[s[1]] = n
            else:
                singles[p] = n
        for p in sorted(set(singles) | set(sets)):
            name = join(d, p)
            counts = sets.get(p, {})
            if p in singles and counts:
                raise Rejected(f"{arg}: {show(name)}: a single file beside shards")
            if len(counts) > 1:
                raise Rejected(f"{arg}: {show(name)}: shards of two counts {sorted(counts)}")
            if p in singles:
                comps.append(Component(kind, name, [join(d, singles[p])]))
                continue
            ((m, shards),) = counts.items()
            missing = [i for i in range(1, m + 1) if i not in shards]
            if missing:
                raise Rejected(f"{arg}: {show(name)}: shard {missing[0]} of {m} missing")
            comps.append(Component(kind, name, [join(d, shards[i]) for i in range(1, m + 1)], extra={"count": m}))
    for ix in all_indexes:
        taken.setdefault(ix, ix)


def onnx_model(model: bytes, rel_dir: bytes, what: str) -> tuple[bytes, list[bytes]]:
    """X8: an ONNX model's digest (onnx_oracle.py's label, Part VI) and the
    relative paths (below `rel_dir`) of the external data files it names (X6)."""
    import onnx_oracle  # standard library only; imported when a directory holds a .onnx

    locations: list[bytes] = []

    class Recording(onnx_oracle.Oracle):
        def resolve(self, t: Any, loc: bytes) -> str:
            found = super().resolve(t, loc)
            locations.append(loc)
            return found

    try:
        skeleton = Recording(Path(os.fsdecode(model))).skeleton()
    except (onnx_oracle.OnnxError, OSError) as e:
        raise Rejected(f"{what}: {e}{looks_lfs([Path(os.fsdecode(model))])}") from e
    return H(skeleton), list(dict.fromkeys(join(rel_dir, loc) for loc in locations))


def group(root: bytes, files: dict[bytes, bytes], arg: Path) -> list[Component]:
    by_dir: dict[bytes, list[bytes]] = {}
    for rel in files:
        d, _, name = rel.rpartition(b"/")
        by_dir.setdefault(d, []).append(name)
    comps: list[Component] = []
    # X8: every P.onnx is a model, its external data files its own (and no
    # component of their own), wherever below the model's directory they lie.
    owner: dict[bytes, bytes] = {}  # relative path -> the ONNX model naming it
    for rel in sorted(files):
        if not rel.endswith(ONNX_SUFFIX):
            continue
        d = rel.rpartition(b"/")[0]
        what = f"{arg}: {show(rel)}"
        label, externals = onnx_model(os.path.join(root, rel), d, what)
        for f in externals:
            if f not in files:
                raise Rejected(f"{what}: its external file {show(f)} is not a file of the directory (missing, or skipped)")
            if f in owner and owner[f] != rel:
                raise Rejected(f"{what}: its external file {show(f)} is named by {show(owner[f])} too")
            if f.endswith(ONNX_SUFFIX):
                raise Rejected(f"{what}: its external file {show(f)} is an ONNX model")
            owner[f] = rel
        comps.append(Component(b"ONNX", rel, [rel] + externals, digest=label))
    for d, all_names in sorted(by_dir.items()):
        names = [n for n in all_names if join(d, n) not in owner]
        taken: dict[bytes, bytes] = {}  # name -> the index that lists it
        weights_models(d, names, root, arg, taken, comps)
        for n in sorted(all_names):
            f = join(d, n)
            if f in owner and n in taken:
                raise Rejected(f"{arg}: {show(f)}: named by the ONNX model {show(owner[f])} and by {show(taken[n])}")
        for n in sorted(names):
            if n in taken or n.endswith(ST_SUFFIX) or n.endswith(GGUF_SUFFIX) or n.endswith(ONNX_SUFFIX):
                continue
            s = stem_of(n[: -len(PT_SUFFIX)]) if n.endswith(PT_SUFFIX) else None
            if n.endswith(PT_SUFFIX) and (n == PT_PREFIX + PT_SUFFIX or (s is not None and s[0] == PT_PREFIX)):
                continue
            if n.endswith(PT_CANDIDATE_SUFFIXES):
                # D2 rule 3: a candidate, PTCH when Part V takes it as one
                # file, else FILE with why (decided when digested).
                comps.append(Component(b"PTCH?", join(d, n), [join(d, n)]))
                continue
            comps.append(Component(b"FILE", join(d, n), [join(d, n)]))
    return comps


# ---- digests ----


def file_sha256(path: bytes) -> bytes:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while b := f.read(CHUNK):
            h.update(b)
    return h.digest()


def looks_lfs(paths: list[Path]) -> str:
    for p in paths:
        try:
            with open(p, "rb") as f:
                if f.read(len(LFS_PREFIX)) == LFS_PREFIX:
                    return f" ({p.name} looks like a Git LFS pointer: `git lfs pull` fetches the file)"
        except OSError:
            pass
    return ""


def gguf_set_skeleton(paths: list[Path], name: str) -> bytes:
    """canonical-skeleton-v1 §5: the logical model of a complete set."""
    import ollama_oracle as oo  # gguf-py inside, only when a directory holds GGUF

    m = len(paths)
    kvs: dict[bytes, tuple[int, bytes]] = {}
    tensors: dict[bytes, tuple[dict[str, Any], Path, str]] = {}
    tcounts = []
    for i, p in enumerate(paths):
        shard = oo.gguf_model(p, shard=True)
        sp = shard["split"]
        if sp.get(b"split.count") != m or sp.get(b"split.no") != i:
            raise Rejected(f"{p}: split.no {sp.get(b'split.no')} / split.count {sp.get(b'split.count')} disagree with its name")
        if b"split.tensors.count" in sp:
            tcounts.append((p, sp[b"split.tensors.count"]))
        for k, v in shard["kvs"].items():
            if kvs.setdefault(k, v) != v:
                raise Rejected(f"{name}: key {k!r} differs between shards")
        for t in shard["tensors"]:
            if t["name"] in tensors:
                raise Rejected(f"{name}: tensor {t['name']!r} in two shards")
            tensors[t["name"]] = (t, p, shard["order"])
    for p, c in tcounts:
        if c != len(tensors):
            raise Rejected(f"{p}: split.tensors.count {c}, the set holds {len(tensors)}")
    a = 32
    if b"general.alignment" in kvs:
        vtype, canon = kvs[b"general.alignment"]
        (a,) = struct.unpack("<I", canon) if vtype == 4 else (0,)
        if vtype != 4 or a == 0 or a & (a - 1):
            raise Rejected(f"{name}: general.alignment must be a non-zero power of two UINT32")
    out = [b"GGUF", oo.le32(3), oo.le64(len(tensors)), oo.le64(len(kvs)), oo.le64(a)]
    for k in sorted(kvs):
        vtype, canon = kvs[k]
        out.append(H(k) + oo.le32(vtype) + canon)
    offset = 0
    for tn in sorted(tensors):
        t, p, order = tensors[tn]
        out.append(H(tn) + oo.le32(len(t["shape"])) + b"".join(oo.le64(x) for x in t["shape"]))
        out.append(oo.le32(t["type"]) + oo.le64(offset) + oo.tensor_digest(p, t, order))
        offset = oo.align(offset + t["nbytes"], a)
    return b"".join(out)


PT_REFUSALS = (ValueError, RecursionError, NotImplementedError, zipfile.BadZipFile)


def pt_label(path: Path, one_file: bool) -> bytes:
    """pt_oracle.py's label (Part V): of the model `path` names (a file, its
    first shard, its index: P8), or, `one_file`, of that one file alone."""
    import pt_oracle  # standard library only; imported when a directory holds a checkpoint

    if not one_file:
        return bytes.fromhex(pt_oracle.label_path(path))
    ck = pt_oracle.read_file(path)
    root = pt_oracle.Encoder(ck).value(ck.root, 0, ())
    return H(pt_oracle.MAGIC + pt_oracle.le_u32(pt_oracle.VERSION) + root)


def pt_candidate(c: Component, root: bytes, files: dict[bytes, bytes], arg: Path) -> None:
    """D2 rule 3's other `.bin`, `.pt`, `.pth`: PTCH with its label when Part
    V accepts it as one file, else FILE with why; a Git LFS pointer or a
    file that cannot be read is an error."""
    import pt_oracle

    path = Path(os.fsdecode(os.path.join(root, c.files[0])))
    lfs = looks_lfs([path])
    if lfs:
        raise Rejected(f"{arg}: {show(c.name)}: a checkpoint's name{lfs}")
    try:
        c.digest = pt_label(path, one_file=True)
        c.kind = b"PTCH"
    except OSError as e:
        raise Rejected(f"{arg}: {show(c.name)}: {e}") from e
    except (pt_oracle.Rejected, *PT_REFUSALS) as e:
        c.kind = b"FILE"
        c.extra["note"] = str(e)
        c.digest = file_sha256(files[c.files[0]])


def digest(c: Component, root: bytes, files: dict[bytes, bytes], arg: Path) -> bytes:
    paths = [Path(os.fsdecode(os.path.join(root, f))) for f in c.files]
    if c.kind == b"FILE":
        return file_sha256(files[c.files[0]])
    if c.kind == b"PTCH?":
        pt_candidate(c, root, files, arg)
        return c.digest
    if c.kind == b"PTCH":
        import pt_oracle

        try:
            return pt_label(paths[0], one_file=False)
        except (pt_oracle.Rejected, OSError, *PT_REFUSALS) as e:
            raise Rejected(f"{arg}: {show(c.name)}: {e}{looks_lfs(paths)}") from e
    if c.kind == b"ONNX":
        return c.digest  # onnx_model labelled it while grouping
    try:
        if c.kind == b"SFTN":
            if c.index is not None:
                sk = st_oracle.skeleton(st_oracle.from_index(paths[0]))
            else:
                sk = st_oracle.skeleton([st_oracle.parse_file(p) for p in paths])
        elif len(paths) == 1:
            import ollama_oracle as oo

            sk, _ = oo.gguf_label(paths[0])
        else:
            sk = gguf_set_skeleton(paths, show(c.name))
    except Rejected as e:
        raise Rejected(f"{arg}: {show(c.name)}: {e}{looks_lfs(paths)}") from e
    except OSError as e:
        raise Rejected(f"{arg}: {show(c.name)}: {e}{looks_lfs(paths)}") from e
    return H(sk)


# ---- §4: the skeleton ----


def label_dir(arg: Path | str) -> dict[str, Any]:
    """{"path", "label", "skeleton" (bytes), "components": [...]}."""
    arg = Path(arg)
    root, files = walk(arg)
    comps = group(root, files, arg)
    for c in comps:
        c.digest = digest(c, root, files, arg)
    comps.sort(key=lambda c: (c.kind, c.name))
    keys = [(c.kind, c.name) for c in comps]
    if len(set(keys)) != len(keys):
        raise Rejected(f"{arg}: two components of one kind and name")
    sk = [MAGIC, struct.pack("<I", VERSION), struct.pack("<Q", len(comps))]
    sk += [c.kind + H(c.name) + c.digest for c in comps]
    skeleton = b"".join(sk)
    return {
        "path": str(arg),
        "label": hashlib.sha256(skeleton).hexdigest(),
        "skeleton": skeleton,
        "components": [
            {
                "kind": c.kind.decode(),
                "name": show(c.name),
                "name_hex": c.name.hex(),
                "digest": c.digest.hex(),
                "files": [show(f) for f in c.files],
                **({"note": c.extra["note"]} if "note" in c.extra else {}),
            }
            for c in comps
        ],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dirs", nargs="+", type=Path)
    ap.add_argument("--components", action="store_true", help="also print every component")
    ap.add_argument("--json", action="store_true", help="print one JSON line instead")
    args = ap.parse_args()
    out = []
    for d in args.dirs:
        try:
            r = label_dir(d)
        except (Rejected, OSError) as e:
            print(f"dir_oracle: {e}", file=sys.stderr)
            sys.exit(2)
        if args.json:
            out.append({k: v for k, v in r.items() if k != "skeleton"})
            continue
        print(f"{r['label']}  {d}")
        if args.components:
            for c in r["components"]:
                print(f"  {c['kind']} {c['digest']} {c['name']}")
                if "note" in c:
                    print(f"    note: {c['note']}")
    if args.json:
        print(json.dumps({"dirs": out}))


if __name__ == "__main__":
    main()
