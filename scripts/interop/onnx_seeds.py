"""Writes the seed corpora of the ONNX fuzz targets (fuzz/fuzz_targets/
onnx_wire.rs and onnx_model.rs; docs/FUZZING.md).

usage: onnx_seeds.py FUZZ_DIR [--stride K]

Into FUZZ_DIR/corpus/onnx_wire/ and FUZZ_DIR/corpus/onnx_model/, one file
per seed named by its SHA-256, each at most 64 KiB (the campaigns'
-max_len):

  * every backend test model of the onnx 1.22.0 wheel, as shipped, and for
    every K-th (default 4) the same model with every tensor in its typed
    field, and reordered (onnx_check.to_typed, onnx_check.reorder);
  * the models onnx_check.py builds with onnx.helper, in every variant;
  * the refusals and crafted encodings onnx_check.py writes;
  * for onnx_model also each model saved by onnx with its external data in
    one file `w.bin` (thresholds 0 and 1024), and onnx_check's external data
    refusals, as `EXT\\0` + the model's length (u32, little-endian) + the
    model + `w.bin` (the target's framing).

silero-vad's models are over 64 KiB and are left out. Needs the venv's onnx
(scripts/setup-python.sh). Writes nothing outside FUZZ_DIR but a temporary
directory it removes.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import io
import struct
import sys
import tempfile
from collections import Counter
from pathlib import Path

import onnx

sys.path.insert(0, str(Path(__file__).resolve().parent))
import onnx_check as check  # noqa: E402

MAX = 65536


def main(argv: list[str]) -> int:
    fuzz = Path(argv[0]).resolve()
    stride = int(argv[argv.index("--stride") + 1]) if "--stride" in argv else 4
    wire_dir = fuzz / "corpus" / "onnx_wire"
    model_dir = fuzz / "corpus" / "onnx_model"
    wire_dir.mkdir(parents=True, exist_ok=True)
    model_dir.mkdir(parents=True, exist_ok=True)
    counts: Counter = Counter()

    def put(d: Path, b: bytes, what: str) -> None:
        if len(b) > MAX:
            counts["over 64 KiB, left out"] += 1
            return
        p = d / hashlib.sha256(b).hexdigest()
        if not p.exists():
            p.write_bytes(b)
            counts[what] += 1

    def model_file(p: Path, what: str) -> None:
        b = p.read_bytes()
        put(wire_dir, b, what)
        ext = p.parent / "w.bin"
        if ext.exists():
            put(model_dir, b"EXT\0" + struct.pack("<I", len(b)) + b + ext.read_bytes(), what + ", external")
        else:
            put(model_dir, b, what)

    data = Path(onnx.__file__).parent / "backend" / "test" / "data"
    backend = sorted(glob.glob(str(data / "**" / "*.onnx"), recursive=True))
    with tempfile.TemporaryDirectory(prefix="gguf-digest-onnx-seeds-") as tmp_s:
        tmp = Path(tmp_s)
        for i, f in enumerate(backend):
            model_file(Path(f), "backend")
            if i % stride:
                continue
            m = onnx.load(f, load_external_data=False)
            for name, fn in (("typed", check.to_typed), ("reordered", check.reorder)):
                try:
                    model_file(check.save(fn(m), tmp / "b" / str(i) / name / "m.onnx"), "backend " + name)
                except Exception:  # noqa: BLE001  a conversion onnx itself cannot make
                    counts[f"backend {name}: onnx could not"] += 1
            for thr in (0, 1024):
                try:
                    p = check.save(m, tmp / "b" / str(i) / f"ext{thr}" / "m.onnx", save_as_external_data=True,
                                   all_tensors_to_one_file=True, location="w.bin", size_threshold=thr)
                    model_file(p, "backend")
                except Exception:  # noqa: BLE001
                    counts["backend external: onnx could not"] += 1
        built = [check.identity_model(), check.identity_model(True), check.rich_model(), check.quantised_model(),
                 check.sparse_model()]
        for i, m in enumerate(built):
            for _, p in check.variants(m, tmp / "built" / str(i)):
                if p is not None:
                    model_file(p, "built")
        stats: Counter = Counter()
        with contextlib.redirect_stdout(io.StringIO()):
            check.refusals(tmp / "r", stats)
            check.crafted(tmp / "r", stats)
            check.worked(tmp / "r", stats)
        for p in sorted((tmp / "r").rglob("*.onnx")):
            model_file(p, "onnx_check")
    for k, v in sorted(counts.items()):
        print(f"{v:6}  {k}")
    for d in (wire_dir, model_dir):
        files = list(d.iterdir())
        print(f"{d}: {len(files)} seeds, {sum(f.stat().st_size for f in files) // 1024} KiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
