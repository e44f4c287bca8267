"""ONNX models exported by a real PyTorch, for tests/interop/onnx.rs.

usage: onnx_torch.py OUT              (the venv's Python, with onnx)
       onnx_torch.py --export FILE    (run by it under a Python with torch)

The first form runs the second twice under prereq.torch_python() (Debian's
python3-torch, 1.13): `torch.onnx.export` of one small module (Linear,
Conv1d, LayerNorm, an embedding and a buffer; fixed seed) into OUT/a/m.onnx
and OUT/b/m.onnx, each in a fresh process. torch 1.13's export has no
external data switch (it writes external data only past 2 GiB), so each
export is then saved again by onnx with its external data: in one file
(`w.bin`, every tensor), one file per tensor, and above a 64-byte threshold.
It prints one JSON line: {"files": [{"path", "label", "refusal", "export",
"layout"}], "torch": version, "same_bytes": whether the two exports are one
byte string} with the blind oracle's verdict on each file.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path


def export(path: str) -> None:
    import torch

    class Small(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.emb = torch.nn.Embedding(10, 8)
            self.lin = torch.nn.Linear(8, 4)
            self.conv = torch.nn.Conv1d(2, 3, 3)
            self.norm = torch.nn.LayerNorm(4)
            self.register_buffer("scale", torch.arange(4, dtype=torch.float32))

        def forward(self, ids, y):
            h = self.norm(self.lin(self.emb(ids)).relu()) * self.scale
            return h, self.conv(y)

    torch.manual_seed(0)
    m = Small().eval()
    args = (torch.zeros(1, 5, dtype=torch.int64), torch.zeros(1, 2, 8))
    torch.onnx.export(m, args, path, opset_version=13, input_names=["ids", "y"], output_names=["h", "z"])
    print(torch.__version__)


def main(argv: list[str]) -> int:
    if argv[:1] == ["--export"]:
        export(argv[1])
        return 0
    import onnx

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import onnx_oracle as oracle  # noqa: E402
    import prereq  # noqa: E402

    out = Path(argv[0]).resolve()
    files = []
    version = None
    for side in ("a", "b"):
        d = out / side
        d.mkdir(parents=True, exist_ok=True)
        p = d / "m.onnx"
        r = subprocess.run([prereq.torch_python(), "-s", __file__, "--export", str(p)], capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"torch.onnx.export failed: {r.stderr[-2000:]}")
        version = r.stdout.strip().splitlines()[-1]
        m = onnx.load(str(p))
        layouts = [("inline", p)]
        for name, kw in (
            ("one file", {"all_tensors_to_one_file": True, "location": "w.bin", "size_threshold": 0}),
            ("one file per tensor", {"all_tensors_to_one_file": False, "size_threshold": 0}),
            ("threshold 64", {"all_tensors_to_one_file": True, "location": "w.bin", "size_threshold": 64}),
        ):
            q = d / name.replace(" ", "_") / "m.onnx"
            q.parent.mkdir(parents=True, exist_ok=True)
            onnx.save_model(copy.deepcopy(m), str(q), save_as_external_data=True, **kw)
            layouts.append((name, q))
        for name, q in layouts:
            try:
                label, refusal = oracle.label(q), None
            except oracle.OnnxError as e:
                label, refusal = None, str(e)
            files.append({"path": str(q), "label": label, "refusal": refusal, "export": side, "layout": name})
    same = (out / "a" / "m.onnx").read_bytes() == (out / "b" / "m.onnx").read_bytes()
    print(json.dumps({"files": files, "torch": version, "same_bytes": same}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
