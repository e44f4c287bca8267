"""Writes the ONNX interop cases for tests/interop/onnx.rs, with the blind
oracle's verdict on each (docs/SPEC.md Part VI).

usage: onnx_cases.py OUT [--stride K]

Into OUT it writes, with the real onnx package (1.22.0):

  * for each model -- those onnx_check.py builds with onnx.helper, the six
    ONNX models silero-vad 6.2.3's wheel ships (the pinned wheel
    scripts/setup-python.sh downloads with the PyTorch fixtures, read from
    the zip, never installed), and every K-th backend test model of the onnx
    wheel (K = 1: all 1,914) -- its variants (as loaded, raw_data, typed
    fields, reordered, external data in one file and one file per tensor at
    size thresholds 0 and 1024; onnx_check.variants) and its mutations (one
    element, an attribute, a node's input, an opset version, a metadata
    value; onnx_check.mutations);
  * the refusals and crafted encodings onnx_check.py writes (refusals,
    crafted, worked).

It prints one JSON line: {"files": [{"path", "case", "group", "label",
"refusal"}]} where `group` is "same" for a variant (every variant of a case
must have one label), "mut:<what>" for a mutation (a label of its own),
"meta-base" for the model a metadata mutation starts from, "other" for the
rest; `label` is the oracle's label (null when it refuses) and `refusal` its
message (null when it labels). Nothing is written outside OUT.
"""

from __future__ import annotations

import glob
import io
import json
import sys
import zipfile
from collections import Counter
from pathlib import Path

import onnx

sys.path.insert(0, str(Path(__file__).resolve().parent))
import onnx_check as check  # noqa: E402
import onnx_oracle as oracle  # noqa: E402
import prereq  # noqa: E402

SILERO_WHEEL = "silero_vad-6.2.3-py3-none-any.whl"


def verdict(path: Path) -> tuple[str | None, str | None]:
    try:
        return oracle.label(path), None
    except oracle.OnnxError as e:
        return None, str(e)


def silero_models() -> dict[str, onnx.ModelProto]:
    wheel = prereq.pt_wheel_dir() / SILERO_WHEEL
    out = {}
    with zipfile.ZipFile(wheel) as z:
        for name in sorted(z.namelist()):
            if name.endswith(".onnx"):
                out["silero/" + Path(name).name] = onnx.load_model_from_string(z.read(name))
    if len(out) != 6:
        raise SystemExit(f"{wheel}: {len(out)} ONNX models, want 6")
    return out


def main(argv: list[str]) -> int:
    out = Path(argv[0]).resolve()
    stride = 1
    if "--stride" in argv:
        stride = int(argv[argv.index("--stride") + 1])
    files: list[dict] = []

    def add(path: Path, case: str, group: str) -> None:
        label, refusal = verdict(path)
        files.append({"path": str(path), "case": case, "group": group, "label": label, "refusal": refusal})

    models: dict[str, onnx.ModelProto] = {
        "built/identity": check.identity_model(),
        "built/identity_w": check.identity_model(True),
        "built/rich": check.rich_model(),
        "built/quantised": check.quantised_model(),
        "built/sparse": check.sparse_model(),
    }
    models.update(silero_models())
    data = Path(onnx.__file__).parent / "backend" / "test" / "data"
    backend = sorted(glob.glob(str(data / "**" / "*.onnx"), recursive=True))[::stride]
    for f in backend:
        models["backend/" + str(Path(f).relative_to(data))] = onnx.load(f, load_external_data=False)

    for i, (case, m) in enumerate(models.items()):
        d = out / "m" / str(i)
        for vname, p in check.variants(m, d):
            if p is not None:
                add(p, case, "same")
        for j, (mname, mm) in enumerate(check.mutations(m)):
            p = check.save(mm, d / "mut" / str(j) / "m.onnx")
            group = "meta-base" if mname.endswith("(base)") else "mut:" + mname
            add(p, case, group)

    stats: Counter = Counter()
    quiet = io.StringIO()
    real = sys.stdout
    sys.stdout = quiet  # onnx_check's refusals print a line each
    try:
        check.refusals(out / "r", stats)
        check.crafted(out / "r", stats)
        check.worked(out / "r", stats)
    finally:
        sys.stdout = real
    if check.FAILS:
        raise SystemExit(f"onnx_check found the oracle wrong: {check.FAILS}")
    seen = {f["path"] for f in files}
    for p in sorted((out / "r").rglob("*.onnx")):
        if str(p) not in seen:
            add(p, "written by onnx_check", "other")
    print(json.dumps({"files": files, "models": len(models), "backend": len(backend)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
