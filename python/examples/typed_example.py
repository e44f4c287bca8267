"""A small typed use of gguf_digest, checked with `mypy --strict` against
the installed wheel's stubs (scripts/test-python.sh). It is also what the
README's "From Python" section shows."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Dict, List

import gguf_digest


def approved(sums: Path) -> bool:
    """True when every model a sums file lists has its label."""
    results: List[gguf_digest.CheckResult] = gguf_digest.check(sums)
    for r in results:
        if not r.ok:
            why = r.error if r.error is not None else f"label {r.actual}, expected {r.expected}"
            print(f"{r.path}: FAILED ({why})", file=sys.stderr)
    return bool(results) and all(r.ok for r in results)


def describe(path: Path) -> Dict[str, object]:
    try:
        model: gguf_digest.Model = gguf_digest.open(path)
    except gguf_digest.Error as e:
        offset: int | None = e.offset
        return {"error": str(e), "path": e.path, "offset": offset, "subject": e.subject}
    largest: gguf_digest.Tensor = max(model.tensors, key=lambda t: t.nbytes)
    shape: tuple[int, ...] = largest.shape
    skeleton: bytes = model.skeleton()
    return {
        "label": model.label,
        "format": model.format,
        "files": list(model.files),
        "largest": (largest.name, shape, largest.sha256),
        "skeleton_bytes": len(skeleton),
        "keys": [leaf.key for leaf in model.metadata],
    }


def main(argv: List[str]) -> int:
    labels: List[str] = gguf_digest.labels([Path(a) for a in argv], threads=2)
    for label, name in zip(labels, argv):
        print(f"{label}  {name}")
    # A URL, with the keywords of the command's --allow-http, --connections, --ca-file.
    remote: str = gguf_digest.label(
        "https://models.internal/m.safetensors", connections=4, ca_file=Path("corp-ca.pem"), allow_http=False
    )
    print(remote)
    statement: str = gguf_digest.statement(argv, leaves=False)
    v: gguf_digest.Verification = gguf_digest.verify("s.dsse.json", keys=["signer.pub"], root=".")
    return 0 if v.ok and v.signature_checked and statement else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
