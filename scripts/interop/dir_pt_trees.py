"""Directory trees holding PyTorch checkpoints (directory contract revision
3, docs/SPEC.md Part IV D2 rule 3), written with real PyTorch.

usage: dir_pt_trees.py OUT_DIR

Runs with the Python that has torch (prereq.py's `torch_python`). Each tree
holds a `config.json` and a small state dict (a plain dict of tensors, as
`transformers` saves one) saved by `torch.save`, in these layouts:

  * group A, one label: `pytorch_model.bin` (zip); the legacy format; cut
    into 2 shards with `pytorch_model.bin.index.json` (as `transformers`
    writes it); the 2 shards without an index; 3 shards with an index;
    `pytorch_model.bin` beside an index listing it alone; an index listing
    files of other names (`part-a.bin` ...). One label because the
    checkpoint is a PTCH component: its bytes are not content;
  * group B: one weight changed (another label);
  * group C, one label: candidates beside the checkpoint (rule 3's other
    `.bin`, `.pt`, `.pth`): `optimizer.pt` (a dict of tensors: a PTCH
    component, so saved again in the legacy format it keeps the label),
    `training_args.bin` (a pickle of a class of this script: refused by
    Part V, so a FILE), `scripted.pt` (a TorchScript archive: a FILE),
    `weights.pth` (legacy, accepted), `run.ckpt` (never a candidate: a
    FILE), a shard-named `other-00001-of-00002.bin` alone (a candidate
    taken as the one file it is), `PYTORCH_MODEL.BIN` (names are
    case-sensitive: a FILE);
  * group D: C with `training_args.bin` written again with another value
    (a FILE: its bytes are content);
  * group E: C with `optimizer.pt` holding another tensor;
  * rejected (the contract refuses the tree): `pytorch_model.bin` beside
    shards; `pytorch_model.bin` beside an index listing it and a shard; a
    missing shard; shards of two counts; a shard its index does not list;
    an index naming a missing file; `pytorch_model.bin` that is not a
    checkpoint, or whose pickle Part V refuses (it claims the kind by its
    name); a candidate `model.pt` holding a Git LFS pointer.

Each tree is labelled here by dir_oracle.py (written from SPEC Part IV,
its checkpoints through pt_oracle.py, from Part V). Checks that trees of
one group share a label and trees of two groups do not, and that the
oracle refuses each rejected tree. Prints one JSON line {"trees": [{"path",
"group", "what", "label", "kinds"}], "rejected": [{"path", "what",
"oracle"}], "torch": version}; `kinds` is the oracle's component kinds by
name.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).parent))
import dir_oracle  # noqa: E402
from st_oracle import Rejected  # noqa: E402


class TrainingArgs:
    """Stands for `transformers.TrainingArguments`: a class a pickle names."""

    def __init__(self, lr: float) -> None:
        self.lr = lr


def state(seed: int = 0, bump: bool = False) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    d = {
        "embed.weight": torch.randn(16, 8, generator=g),
        "layers.0.weight": torch.randn(8, 8, generator=g),
        "layers.0.bias": torch.randn(8, generator=g),
        "layers.1.weight": torch.randn(8, 8, generator=g).half(),
        "head.weight": torch.randn(4, 8, generator=g),
        "steps": torch.tensor([3, 1, 4], dtype=torch.int64),
    }
    if bump:
        d["layers.0.bias"][3] += 1.0
    return d


CONFIG = b'{"architectures": ["TinyModel"], "hidden_size": 8}\n'


def base(dst: Path) -> None:
    dst.mkdir(parents=True)
    (dst / "config.json").write_bytes(CONFIG)


def save(obj: Any, path: Path, legacy: bool = False) -> None:
    torch.save(obj, path, _use_new_zipfile_serialization=not legacy)


def sharded(d: dict[str, torch.Tensor], dst: Path, n: int, index: bool = True, names: list[str] | None = None) -> None:
    keys = list(d)
    parts = [keys[i::n] for i in range(n)]
    weight_map = {}
    for i, part in enumerate(parts):
        name = names[i] if names else f"pytorch_model-{i + 1:05d}-of-{n:05d}.bin"
        save({k: d[k] for k in part}, dst / name)
        weight_map.update({k: name for k in part})
    if index:
        total = sum(t.numel() * t.element_size() for t in d.values())
        doc = {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))}
        (dst / "pytorch_model.bin.index.json").write_text(json.dumps(doc, indent=2) + "\n")


def candidates(dst: Path, lr: float = 0.001, other_optimizer: bool = False, legacy_optimizer: bool = False) -> None:
    save(state(0), dst / "pytorch_model.bin")
    opt = {"state": {0: {"exp_avg": torch.ones(3) * (2.0 if other_optimizer else 1.0)}}, "param_groups": [{"lr": 0.5}]}
    save(opt, dst / "optimizer.pt", legacy=legacy_optimizer)
    save(TrainingArgs(lr), dst / "training_args.bin")
    save({"w": torch.arange(6.0).reshape(2, 3)}, dst / "weights.pth", legacy=True)
    save({"w": torch.zeros(2)}, dst / "other-00001-of-00002.bin")
    (dst / "run.ckpt").write_bytes(b"not read as a checkpoint\n")
    (dst / "PYTORCH_MODEL.BIN").write_bytes(b"a plain file: names are case-sensitive\n")


def scripted(dst: Path) -> None:
    class Tiny(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x * 2

    torch.jit.save(torch.jit.script(Tiny()), str(dst / "scripted.pt"))


def main() -> None:
    out = Path(sys.argv[1])
    trees: list[dict[str, Any]] = []
    rejected: list[dict[str, Any]] = []
    n = 0

    def tree(group: str, what: str) -> Path:
        nonlocal n
        n += 1
        p = out / f"{n:02d}-{group}"
        base(p)
        trees.append({"path": str(p), "group": group, "what": what})
        return p

    def bad(what: str) -> Path:
        nonlocal n
        n += 1
        p = out / f"{n:02d}-rejected"
        base(p)
        rejected.append({"path": str(p), "what": what})
        return p

    d = state(0)
    save(d, tree("A", "pytorch_model.bin, zip") / "pytorch_model.bin")
    save(d, tree("A", "pytorch_model.bin, legacy format") / "pytorch_model.bin", legacy=True)
    sharded(d, tree("A", "2 shards with pytorch_model.bin.index.json"), 2)
    sharded(d, tree("A", "2 shards, no index"), 2, index=False)
    sharded(d, tree("A", "3 shards with an index"), 3)
    p = tree("A", "pytorch_model.bin beside an index listing it alone")
    save(d, p / "pytorch_model.bin")
    (p / "pytorch_model.bin.index.json").write_text(
        json.dumps({"metadata": {"total_size": 1}, "weight_map": {k: "pytorch_model.bin" for k in d}})
    )
    sharded(d, tree("A", "an index listing files of other names (part-a.bin ...)"), 2, names=["part-a.bin", "part-b.bin"])
    save(state(0, bump=True), tree("B", "one weight changed") / "pytorch_model.bin")
    for what, kw in (
        ("candidates beside the checkpoint", {}),
        ("the same, optimizer.pt saved in the legacy format", {"legacy_optimizer": True}),
    ):
        p = tree("C", what)
        candidates(p, **kw)
        scripted(p)
    c0 = Path(trees[-2]["path"])
    # The TorchScript archive and training_args.bin are FILEs: their bytes
    # are content, so every tree of C holds the same bytes.
    shutil.copy(c0 / "scripted.pt", Path(trees[-1]["path"]) / "scripted.pt")
    shutil.copy(c0 / "training_args.bin", Path(trees[-1]["path"]) / "training_args.bin")
    p = tree("D", "training_args.bin with another value (a FILE)")
    candidates(p, lr=0.002)
    shutil.copy(c0 / "scripted.pt", p / "scripted.pt")
    p = tree("E", "optimizer.pt holding another tensor (a PTCH component)")
    candidates(p, other_optimizer=True)
    shutil.copy(c0 / "scripted.pt", p / "scripted.pt")
    shutil.copy(c0 / "training_args.bin", p / "training_args.bin")

    p = bad("pytorch_model.bin beside shards")
    sharded(d, p, 2, index=False)
    save(d, p / "pytorch_model.bin")
    p = bad("pytorch_model.bin beside an index listing it and a shard")
    save({k: v for k, v in list(d.items())[:3]}, p / "pytorch_model.bin")
    save({k: v for k, v in list(d.items())[3:]}, p / "pytorch_model-00002-of-00002.bin")
    wm = {k: "pytorch_model.bin" for k in list(d)[:3]} | {k: "pytorch_model-00002-of-00002.bin" for k in list(d)[3:]}
    (p / "pytorch_model.bin.index.json").write_text(json.dumps({"weight_map": wm}))
    p = bad("a missing shard")
    sharded(d, p, 3, index=False)
    (p / "pytorch_model-00002-of-00003.bin").unlink()
    p = bad("shards of two counts")
    sharded(d, p, 2, index=False)
    save({"x": torch.ones(1)}, p / "pytorch_model-00001-of-00003.bin")
    p = bad("a shard its index does not list")
    sharded(d, p, 2)
    save({"x": torch.ones(1)}, p / "pytorch_model-00003-of-00003.bin")
    p = bad("an index naming a missing file")
    sharded(d, p, 2)
    (p / "pytorch_model-00002-of-00002.bin").unlink()
    p = bad("pytorch_model.bin that is not a checkpoint")
    (p / "pytorch_model.bin").write_bytes(b"\x00" * 64)
    p = bad("pytorch_model.bin whose pickle Part V refuses (a class of a script)")
    save(TrainingArgs(0.1), p / "pytorch_model.bin")
    p = bad("a candidate model.pt holding a Git LFS pointer")
    (p / "model.pt").write_bytes(
        b"version https://git-lfs.github.com/spec/v1\noid sha256:" + b"0" * 64 + b"\nsize 123\n"
    )

    failures = []
    for t in trees:
        try:
            r = dir_oracle.label_dir(t["path"])
        except Rejected as e:
            failures.append(f"{t['what']}: the oracle refuses it: {e}")
            continue
        t["label"] = r["label"]
        t["kinds"] = {c["name"]: c["kind"] for c in r["components"]}
    for b in rejected:
        try:
            dir_oracle.label_dir(b["path"])
            failures.append(f"{b['what']}: the oracle labels it")
        except Rejected as e:
            b["oracle"] = str(e)
    first: dict[str, dict[str, Any]] = {}
    for t in trees:
        if "label" not in t:
            continue
        f = first.setdefault(t["group"], t)
        if f["label"] != t["label"]:
            failures.append(f"group {t['group']}: {f['what']!r} and {t['what']!r} differ")
    labels = [f["label"] for f in first.values()]
    if len(set(labels)) != len(labels):
        failures.append("two groups share a label")
    kinds = next(t for t in trees if t["group"] == "C").get("kinds", {})
    for name, kind in (
        ("pytorch_model", "PTCH"),
        ("optimizer.pt", "PTCH"),
        ("weights.pth", "PTCH"),
        ("other-00001-of-00002.bin", "PTCH"),
        ("training_args.bin", "FILE"),
        ("scripted.pt", "FILE"),
        ("run.ckpt", "FILE"),
        ("PYTORCH_MODEL.BIN", "FILE"),
    ):
        if kinds.get(name) != kind:
            failures.append(f"group C: {name} is {kinds.get(name)}, not {kind}")
    if failures:
        print("dir_pt_trees.py:\n  " + "\n  ".join(failures), file=sys.stderr)
        sys.exit(1)
    print(json.dumps({"trees": trees, "rejected": rejected, "torch": torch.__version__}))


if __name__ == "__main__":
    main()
