"""Directory trees holding ONNX models (directory contract revision 3,
docs/SPEC.md Part IV D2 rule 4, Part VI X8), written with the real `onnx`
package.

usage: dir_onnx_trees.py OUT_DIR

Each tree holds a `config.json` and one small model (`MatMul` then `Add`,
two float initializers and an int64 one, metadata) saved by
`onnx.save_model`:

  * group A, one label: inline; all tensors in one external file
    `model.onnx_data` (save_as_external_data, as Optimum writes it); one
    file per tensor; a size threshold (the small tensor stays inline);
    re-saved with typed fields (`float_data`, `int64_data`) instead of
    `raw_data`; initializers and metadata_props reordered;
  * group O, one label: A's model in an `onnx/` folder, as Hugging Face
    repositories carry it, inline and with one external file named
    `weights.bin` (which is then no PyTorch candidate: it is the model's);
  * group B: one element changed in the external file;
  * group C: one metadata value changed;
  * rejected: two models naming one external file; an external file
    missing; a location with `..`; a model named as another's data.

Each tree is labelled by dir_oracle.py (written from SPEC alone, its ONNX
models through onnx_oracle.py). Checks that trees of one group share a
label and trees of two groups do not, and that the oracle refuses each
rejected tree. Prints one JSON line {"trees": [{"path", "group", "what",
"label"}], "rejected": [{"path", "what", "oracle"}], "onnx": version}.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, str(Path(__file__).parent))
import dir_oracle  # noqa: E402
from st_oracle import Rejected  # noqa: E402

CONFIG = b'{"model_type": "toy", "architectures": ["Toy"]}'


def model(bump: bool = False, meta: str = "v1", reorder: bool = False) -> onnx.ModelProto:
    w = np.arange(64, dtype=np.float32).reshape(8, 8) / 7
    if bump:
        w[3, 5] += 1
    inits = [
        numpy_helper.from_array(w, "w"),
        numpy_helper.from_array(np.linspace(-1, 1, 8, dtype=np.float32), "b"),
        numpy_helper.from_array(np.array([1, 8], dtype=np.int64), "shape"),
    ]
    props = [("source", "dir_onnx_trees"), ("version", meta)]
    if reorder:
        inits.reverse()
        props.reverse()
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Add", ["h", "b"], ["y"])],
        "toy",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])],
        inits,
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="dir_onnx_trees")
    m.ir_version = 8
    for k, v in props:
        m.metadata_props.append(onnx.StringStringEntryProto(key=k, value=v))
    return m


def typed(m: onnx.ModelProto) -> onnx.ModelProto:
    """The same model with every initializer's elements in its typed field."""
    for t in m.graph.initializer:
        a = numpy_helper.to_array(t)
        t.ClearField("raw_data")
        if t.data_type == TensorProto.FLOAT:
            t.float_data.extend(a.flatten().tolist())
        else:
            t.int64_data.extend(a.flatten().tolist())
    return m


def save(m: onnx.ModelProto, path: Path, **external: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if external:
        onnx.save_model(m, str(path), save_as_external_data=True, **external)
    else:
        onnx.save_model(m, str(path))


def named_external(m: onnx.ModelProto, location: str) -> onnx.ModelProto:
    """`w` pointed at `location` by hand (no file written for it)."""
    for t in m.graph.initializer:
        if t.name == "w":
            t.ClearField("raw_data")
            t.data_location = TensorProto.EXTERNAL
            for k, v in (("location", location), ("offset", "0"), ("length", "256")):
                t.external_data.append(onnx.StringStringEntryProto(key=k, value=v))
    return m


def main() -> None:
    out = Path(sys.argv[1])
    trees: list[dict[str, Any]] = []
    rejected: list[dict[str, Any]] = []

    def tree(group: str, what: str) -> Path:
        p = out / f"t{len(trees):02d}"
        p.mkdir(parents=True)
        (p / "config.json").write_bytes(CONFIG)
        trees.append({"path": str(p), "group": group, "what": what})
        return p

    def bad(what: str) -> Path:
        p = out / f"r{len(rejected):02d}"
        p.mkdir(parents=True)
        rejected.append({"path": str(p), "what": what})
        return p

    one = {"all_tensors_to_one_file": True, "location": "model.onnx_data", "size_threshold": 0}
    save(model(), tree("A", "inline") / "model.onnx")
    save(model(), tree("A", "one external file") / "model.onnx", **one)
    save(model(), tree("A", "a file per tensor") / "model.onnx", all_tensors_to_one_file=False, size_threshold=0)
    save(model(), tree("A", "a size threshold") / "model.onnx", **{**one, "size_threshold": 64})
    save(typed(model()), tree("A", "typed fields") / "model.onnx")
    save(model(reorder=True), tree("A", "reordered, external") / "model.onnx", **one)
    save(model(), tree("O", "onnx/ inline") / "onnx" / "model.onnx")
    p = tree("O", "onnx/ with weights.bin")
    save(model(), p / "onnx" / "model.onnx", **{**one, "location": "weights.bin"})
    save(model(bump=True), tree("B", "one element changed") / "model.onnx", **one)
    save(model(meta="v2"), tree("C", "a metadata value changed") / "model.onnx", **one)

    p = bad("two models naming one external file")
    save(model(), p / "a.onnx", **one)
    shutil.copy(p / "a.onnx", p / "b.onnx")
    p = bad("an external file missing")
    save(model(), p / "model.onnx", **one)
    (p / "model.onnx_data").unlink()
    p = bad("a location with ..")
    (p / "sub").mkdir()
    save(named_external(model(), "../w.bin"), p / "sub" / "model.onnx")
    (p / "w.bin").write_bytes(numpy_helper.to_array(model().graph.initializer[0]).tobytes())
    p = bad("a model named as another's data")
    save(named_external(model(), "b.onnx"), p / "a.onnx")
    save(model(), p / "b.onnx")

    failures = []
    for t in trees:
        try:
            t["label"] = dir_oracle.label_dir(t["path"])["label"]
        except Rejected as e:
            failures.append(f"{t['what']}: the oracle refuses it: {e}")
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
    if failures:
        print("dir_onnx_trees.py:\n  " + "\n  ".join(failures), file=sys.stderr)
        sys.exit(1)
    print(json.dumps({"trees": trees, "rejected": rejected, "onnx": onnx.__version__}))


if __name__ == "__main__":
    main()
