"""Writes one checkpoint in many layouts with real PyTorch.

usage: pt_layouts.py OUT_DIR FIXTURE...

Runs with the Python that has torch (scripts/setup-python.sh). Each FIXTURE
(a checkpoint torch.load(weights_only=True) reads) is loaded and written
again, in OUT_DIR/<n>/, as:

  * `zip.pt`: `torch.save` (the zip format, its own folder name, keys 0..N);
  * `legacy.pt`: `torch.save(_use_new_zipfile_serialization=False)`;
  * `refolder.pt`: zip.pt's records under another folder name, in reverse
    order, with an extra record and a zip comment (Python's zipfile, no
    data descriptors);
  * `bigendian.pt`: zip.pt with `byteorder` = `big` and every storage's
    elements byte-reversed (a complex element's halves each), as
    `torch.save` writes on a big-endian machine;
  * `views.pt`: every tensor replaced by a view with the same elements: a
    transpose of a transposed copy (rank >= 2) at a non-zero offset into a
    larger storage;
  * `shared.pt`: every tensor of one dtype a slice of one shared storage,
    at increasing offsets;
  * when the root is a mapping of strings to tensors: `plain.pt`, the same
    entries in a plain dict (no `_metadata` attribute, so a label of its
    own), and that dict cut by `torch.save` into 2 and 3 shards
    `pytorch_model-NNNNN-of-MMMMM.bin` with `pytorch_model.bin.index.json`
    as `transformers` writes them (`metadata.total_size`, `weight_map`).

Also writes `tied/pytorch_model.bin`: a small model with tied input and
output embeddings saved as `transformers` saves a state dict (a plain dict,
both names on one tensor, so one storage), and its 2-shard cut.

Prints one JSON line {"cases": [{"path", "group", "what", "torch_reads"}],
"torch": version}: the cases of one group must all have one label;
`torch_reads` is false where this torch cannot read the layout (big-endian
archives need torch >= 2.1).
"""

from __future__ import annotations

import collections
import json
import pickle
import shutil
import sys
import zipfile
from array import array
from pathlib import Path
from typing import Any, Callable

import torch

ELEM = {
    "DoubleStorage": 8, "FloatStorage": 4, "HalfStorage": 2, "BFloat16Storage": 2,
    "LongStorage": 8, "IntStorage": 4, "ShortStorage": 2, "CharStorage": 1,
    "ByteStorage": 1, "BoolStorage": 1, "ComplexFloatStorage": 8, "ComplexDoubleStorage": 16,
}  # fmt: skip
COMPLEX = {"ComplexFloatStorage", "ComplexDoubleStorage"}


def torch_version() -> tuple[int, int]:
    major, minor = torch.__version__.split(".")[:2]
    return int(major), int(minor)


def load(path: Path) -> Any:
    sys.path.insert(0, str(Path(__file__).parent))
    import pt_torch_oracle  # its load(): weights_only, with 1.13's BINFLOAT fallback

    return pt_torch_oracle.load(path)


def remap(v: Any, f: Callable[[torch.Tensor], torch.Tensor], memo: dict[int, Any]) -> Any:
    """v with every tensor replaced by f(tensor); mapping kinds, their
    attributes and sharing (a tensor reached twice) kept."""
    if id(v) in memo:
        return memo[id(v)]
    if isinstance(v, torch.Tensor):
        out: Any = f(v)
    elif type(v) in (dict, collections.OrderedDict, collections.Counter):
        out = type(v)()
        for k, x in v.items():
            out[k] = remap(x, f, memo)
        if getattr(v, "__dict__", None):
            out.__dict__.update(v.__dict__)
    elif type(v) is list:
        out = [remap(x, f, memo) for x in v]
    elif type(v) is tuple:
        out = tuple(remap(x, f, memo) for x in v)
    else:
        return v
    memo[id(v)] = out
    return out


def as_view(t: torch.Tensor) -> torch.Tensor:
    t = t.detach()
    base = torch.zeros(t.numel() + 3, dtype=t.dtype)
    if t.dim() >= 2:
        x = t.transpose(-1, -2).contiguous()
        base[3:].view(x.shape).copy_(x)
        v = base[3:].view(x.shape).transpose(-1, -2)
    else:
        base[3:].copy_(t.reshape(-1))
        v = base[3:].view(t.shape)
    assert torch.equal(v, t) or (t.is_floating_point() and torch.equal(v.isnan(), t.isnan()))
    return v


def shared(root: Any) -> Any:
    tensors: list[torch.Tensor] = []
    remap(root, lambda t: tensors.append(t) or t, {})
    bases: dict[torch.dtype, torch.Tensor] = {}
    at: dict[torch.dtype, int] = {}
    for t in tensors:
        at[t.dtype] = at.get(t.dtype, 1) + t.numel()
    for dt, n in at.items():
        bases[dt] = torch.zeros(n, dtype=dt)
        at[dt] = 1

    def place(t: torch.Tensor) -> torch.Tensor:
        i = at[t.dtype]
        at[t.dtype] = i + t.numel()
        s = bases[t.dtype][i : i + t.numel()].view(t.shape)
        s.copy_(t.detach())
        return s

    return remap(root, place, {})


def storage_classes(pkl: bytes) -> dict[str, str]:
    """Storage key -> storage class, from the persistent ids of a data.pkl
    this script's torch.save wrote (trusted): unpickled with every global
    replaced by an inert stand-in, so nothing is imported or called."""

    class Inert:
        def __init__(self, *a: Any, **k: Any) -> None:
            pass

        def __setitem__(self, k: Any, v: Any) -> None:
            pass

        def __setstate__(self, s: Any) -> None:
            pass

    class Name(str):
        pass

    found: dict[str, str] = {}

    class Scan(pickle.Unpickler):
        def find_class(self, module: str, name: str) -> Any:
            return Name(name) if name.endswith("Storage") else Inert

        def persistent_load(self, pid: Any) -> Any:
            found[pid[2]] = str(pid[1])
            return None

    Scan(__import__("io").BytesIO(pkl)).load()
    return found


def rewrite(src: Path, dst: Path, folder: str | None = None, reverse: bool = False, big: bool = False) -> None:
    with zipfile.ZipFile(src) as z:
        entries = [(i.filename, z.read(i.filename)) for i in z.infolist()]
    old = entries[0][0].split("/", 1)[0]
    new = folder or old
    kinds = storage_classes(dict(entries)[f"{old}/data.pkl"]) if big else {}
    out = []
    for name, data in entries:
        rest = name.split("/", 1)[1]
        if big and rest == "byteorder":
            data = b"big"
        elif big and rest.startswith("data/"):
            cls = kinds[rest[5:]]
            part = ELEM[cls] // (2 if cls in COMPLEX else 1)
            if part > 1:
                a = array({2: "H", 4: "I", 8: "Q"}[part], data)
                a.byteswap()
                data = a.tobytes()
        out.append((f"{new}/{rest}", data))
    if big and not any(n.endswith("/byteorder") for n, _ in out):
        out.append((f"{new}/byteorder", b"big"))
    if folder:
        out.append((f"{new}/extra/notes.txt", b"a record torch.load does not read\n"))
    if reverse:
        out.reverse()
    with zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as z:
        for name, data in out:
            z.writestr(name, data)
        if folder:
            z.comment = b"re-zipped by pt_layouts.py"


def shards(d: dict[str, torch.Tensor], out: Path, n: int) -> Path:
    """d cut into n shards with transformers' names and index."""
    out.mkdir(parents=True, exist_ok=True)
    keys = list(d)
    per = -(-len(keys) // n)
    weight_map = {}
    total = 0
    for i in range(n):
        name = f"pytorch_model-{i + 1:05d}-of-{n:05d}.bin"
        part = {k: d[k] for k in keys[i * per : (i + 1) * per]}
        torch.save(part, out / name)
        for k, t in part.items():
            weight_map[k] = name
            total += t.numel() * t.element_size()
    index = out / "pytorch_model.bin.index.json"
    index.write_text(json.dumps({"metadata": {"total_size": total}, "weight_map": weight_map}, indent=2))
    return index


def tied_model() -> dict[str, torch.Tensor]:
    """A tiny causal LM's state dict with tied embeddings, as transformers
    hands it to torch.save (a plain dict)."""
    torch.manual_seed(34)
    emb = torch.nn.Embedding(64, 16)
    block = torch.nn.Sequential(torch.nn.LayerNorm(16), torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 16))
    head = torch.nn.Linear(16, 64, bias=False)
    head.weight = emb.weight  # tied
    model = torch.nn.ModuleDict({"embed_tokens": emb, "block": block, "lm_head": head})
    sd = dict(model.state_dict())
    assert sd["embed_tokens.weight"].data_ptr() == sd["lm_head.weight"].data_ptr()
    return sd


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    reads_big = torch_version() >= (2, 1)
    cases: list[dict[str, Any]] = []

    def case(p: Path, group: str, what: str, reads: bool = True) -> None:
        cases.append({"path": str(p), "group": group, "what": what, "torch_reads": reads})

    for n, fixture in enumerate(map(Path, sys.argv[2:])):
        d = out / str(n)
        d.mkdir(exist_ok=True)
        g = fixture.name
        root = load(fixture)
        case(fixture, g, f"{g} as shipped")
        torch.save(root, d / "zip.pt")
        case(d / "zip.pt", g, f"{g} re-saved (zip)")
        torch.save(root, d / "legacy.pt", _use_new_zipfile_serialization=False)
        case(d / "legacy.pt", g, f"{g} re-saved (legacy)")
        rewrite(d / "zip.pt", d / "refolder.pt", folder="another_folder.name", reverse=True)
        case(d / "refolder.pt", g, f"{g} re-zipped: another folder, reverse order, extra record, comment")
        rewrite(d / "zip.pt", d / "bigendian.pt", big=True)
        case(d / "bigendian.pt", g, f"{g} big-endian storages", reads_big)
        torch.save(remap(root, as_view, {}), d / "views.pt")
        case(d / "views.pt", g, f"{g} transposed views at offsets")
        torch.save(shared(root), d / "shared.pt")
        case(d / "shared.pt", g, f"{g} one shared storage per dtype")
        if isinstance(root, dict) and root and all(type(k) is str and isinstance(v, torch.Tensor) for k, v in root.items()):
            plain = dict(root)
            torch.save(plain, d / "plain.pt")
            gp = f"{g} as a plain dict"
            case(d / "plain.pt", gp, f"{gp}")
            for k in (2, 3):
                if len(plain) >= k:
                    idx = shards(plain, d / f"shards{k}", k)
                    case(idx, gp, f"{gp}, {k} shards, by index")
                    case(idx.parent / f"pytorch_model-00001-of-{k:05d}.bin", gp, f"{gp}, {k} shards, by first shard")
                    case(idx.parent / f"pytorch_model-{k:05d}-of-{k:05d}.bin", gp, f"{gp}, {k} shards, by last shard")

    tied = out / "tied"
    tied.mkdir(exist_ok=True)
    sd = tied_model()
    torch.save(sd, tied / "pytorch_model.bin")
    case(tied / "pytorch_model.bin", "tied", "tied embeddings, one storage (transformers' pytorch_model.bin)")
    untied = {k: v.clone() for k, v in sd.items()}
    torch.save(untied, tied / "untied.bin")
    case(tied / "untied.bin", "tied", "the same state dict, every tensor its own storage")
    idx = shards(sd, tied / "shards", 2)
    case(idx, "tied", "tied embeddings cut into 2 shards, by index")
    # Scratch bytes torch.save may leave (none expected); keep OUT_DIR tidy.
    shutil.rmtree(out / "__pycache__", ignore_errors=True)
    print(json.dumps({"cases": cases, "torch": torch.__version__}))


if __name__ == "__main__":
    main()
