#!/usr/bin/env python3
"""Writes an ONNX model whose weights lie in one external data file, for
bench/onnx_speed.sh (issue #35: "a 2 GiB model with external data").

  onnx_make.py DIR --bytes N [--tensors K]

DIR/model.onnx (written by onnx 1.22.0: the graph and K initializers
[rows, 1024] F32 whose elements lie in DIR/weights.bin, each at its own
offset, 4 KiB aligned as onnx aligns them) and DIR/weights.bin (N bytes of
pseudo-random data, written in 64 MiB pieces: Python never holds it whole).
The graph chains K `Add` nodes, one per initializer, so the model file is a
few KiB. Needs the venv's onnx (scripts/setup-python.sh).
"""

from __future__ import annotations

import argparse
import os
import random
from pathlib import Path

import onnx
from onnx import TensorProto, helper


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("dir")
    p.add_argument("--bytes", type=int, required=True)
    p.add_argument("--tensors", type=int, default=64)
    a = p.parse_args()
    d = Path(a.dir)
    d.mkdir(parents=True, exist_ok=True)
    row = 1024 * 4
    rows = max(1, a.bytes // a.tensors // row)
    size = rows * row
    rng = random.Random(35)
    inits, nodes, offset = [], [], 0
    with open(d / "weights.bin", "wb") as f:
        for i in range(a.tensors):
            offset = (offset + 4095) // 4096 * 4096
            f.seek(offset)
            left = size
            while left:
                n = min(left, 64 << 20)
                f.write(rng.randbytes(n))
                left -= n
            t = TensorProto(name=f"w{i}", data_type=TensorProto.FLOAT, dims=[rows, 1024])
            t.data_location = TensorProto.EXTERNAL
            for k, v in (("location", "weights.bin"), ("offset", str(offset)), ("length", str(size))):
                t.external_data.add(key=k, value=v)
            inits.append(t)
            nodes.append(helper.make_node("Add", [f"h{i}", f"w{i}"], [f"h{i + 1}"], name=f"add{i}"))
            offset += size
    vi = lambda n: helper.make_tensor_value_info(n, TensorProto.FLOAT, [rows, 1024])  # noqa: E731
    g = helper.make_graph(nodes, "bench", [vi("h0")], [vi(f"h{a.tensors}")], initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="bench/onnx_make.py")
    onnx.save_model(m, str(d / "model.onnx"))
    total = os.path.getsize(d / "model.onnx") + os.path.getsize(d / "weights.bin")
    print(f"{d}: model.onnx + weights.bin, {a.tensors} tensors of {size} bytes, {total} bytes in all")


if __name__ == "__main__":
    main()
