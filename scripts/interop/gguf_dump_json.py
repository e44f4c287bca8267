"""Runs gguf-py's own gguf_dump.py (as installed) on one file and prints its
--json --json-array document, plus its --data-offset and --data-alignment
answers, as one strict JSON object.

The script's own functions are called in-process on one GGUFReader (what its
main() does for each flag), so a large model is parsed once, not three times.

usage: gguf_dump_json.py FILE

gguf_dump.py writes Python's json, in which a non-finite float is the bare
word Infinity or NaN: strict JSON readers (serde_json) refuse those, so
they are turned into the strings "inf", "-inf" and "nan" here. Nothing else
is changed.

Prints {"dump": <gguf_dump.py --json --json-array>, "data_offset": int,
"alignment": int}.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import math
import sys
from pathlib import Path
from typing import Any

import gguf


def finite(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
    if isinstance(v, list):
        return [finite(x) for x in v]
    if isinstance(v, dict):
        return {k: finite(x) for k, x in v.items()}
    return v


def load_gguf_dump() -> Any:
    """gguf/scripts/gguf_dump.py as installed, loaded as a module."""
    script = Path(gguf.__file__).parent / "scripts" / "gguf_dump.py"
    spec = importlib.util.spec_from_file_location("gguf_dump_script", script)
    if spec is None or spec.loader is None:
        print(f"cannot load {script}", file=sys.stderr)
        sys.exit(1)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    path = sys.argv[1]
    gguf_dump = load_gguf_dump()
    reader = gguf_dump.GGUFReader(path, "r")
    # What `gguf_dump.py --json --json-array PATH` prints.
    args = argparse.Namespace(model=path, json=True, json_array=True, no_tensors=False)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        gguf_dump.dump_metadata_json(reader, args)
    dump = json.loads(out.getvalue())
    # What `--data-offset` and `--data-alignment` print.
    data_offset, alignment = int(reader.data_offset), int(reader.alignment)
    print(json.dumps({"dump": finite(dump), "data_offset": data_offset, "alignment": alignment}))


if __name__ == "__main__":
    main()
