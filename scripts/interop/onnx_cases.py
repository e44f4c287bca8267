"""Writes the ONNX interop cases for tests/interop/onnx.rs, with the blind
oracle's verdict on each (docs/SPEC.md Part VI).

usage: onnx_cases.py OUT [--stride K]
       onnx_cases.py --have-wheels   (exit 0 when every fixture wheel is there)

Into OUT it writes, with the real onnx package (1.22.0):

  * for each model -- those onnx_check.py builds with onnx.helper, the six
    ONNX models silero-vad 6.2.3's wheel ships (the pinned wheel
    scripts/setup-python.sh downloads with the PyTorch fixtures, read from
    the zip, never installed), the ONNX models of the five pinned wheels of
    ONNX_WHEELS (openwakeword's nine, nudenet's, basic-pitch's, rapidocr's
    three, and onnxruntime's three test models, mul_1.onnx among them: IR 3,
    which onnx.checker refuses and the contract labels, SPEC X1), and every
    K-th backend test model of the onnx
    wheel (K = 1: all 1,914) -- its variants (as loaded, raw_data, typed
    fields, reordered, external data in one file and one file per tensor at
    size thresholds 0 and 1024; onnx_check.variants) and its mutations (one
    element, an attribute, a node's input, an opset version, a metadata
    value; onnx_check.mutations);
  * the refusals and crafted encodings onnx_check.py writes (refusals,
    crafted, worked).

It prints one JSON line: {"files": [{"path", "case", "group", "label",
"refusal"}], "models", "backend", "checker": {case: onnx.checker's verdict
on each wheel model, "ok" or its error}} where `group` is "same" for a variant (every variant of a case
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
# The ONNX fixtures' wheels (scripts/setup-python.sh downloads them beside
# the PyTorch fixtures), as a glob each (onnxruntime's names its Python and
# machine), with the number of ONNX models each ships.
ONNX_WHEELS = {
    "openwakeword-0.5.1-py3-none-any.whl": 9,
    "nudenet-3.4.2-py3-none-any.whl": 1,
    "basic_pitch-0.4.0-py2.py3-none-any.whl": 1,
    "rapidocr_onnxruntime-1.4.4-py3-none-any.whl": 3,
    "onnxruntime-1.20.1-*.whl": 3,
}


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


def wheel_path(pattern: str) -> Path | None:
    found = sorted(prereq.pt_wheel_dir().glob(pattern))
    return found[0] if found else None


def wheel_models() -> dict[str, onnx.ModelProto]:
    """Every ONNX model the ONNX_WHEELS ship, read from the zips."""
    out = {}
    for pattern, want in ONNX_WHEELS.items():
        wheel = wheel_path(pattern)
        if wheel is None:
            raise SystemExit(f"no ONNX fixture wheel {prereq.pt_wheel_dir() / pattern} (scripts/setup-python.sh)")
        n = 0
        with zipfile.ZipFile(wheel) as z:
            for name in sorted(z.namelist()):
                if name.endswith(".onnx"):
                    out[f"{wheel.name.split('-')[0]}/{Path(name).name}"] = onnx.load_model_from_string(z.read(name))
                    n += 1
        if n != want:
            raise SystemExit(f"{wheel}: {n} ONNX models, want {want}")
    return out


def checker(m: onnx.ModelProto) -> str:
    try:
        onnx.checker.check_model(m)
        return "ok"
    except Exception as e:  # noqa: BLE001  the checker's verdict, whatever it raises
        return f"{type(e).__name__}: {e}".splitlines()[0]


def main(argv: list[str]) -> int:
    if argv == ["--have-wheels"]:
        return 0 if all(wheel_path(p) for p in ONNX_WHEELS) else 1
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
    wheels = wheel_models()
    models.update(wheels)
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
    verdicts = {case: checker(m) for case, m in wheels.items()}
    print(json.dumps({"files": files, "models": len(models), "backend": len(backend), "checker": verdicts}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
