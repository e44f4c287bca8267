#!/usr/bin/env python3
"""The provenance interop tests' Python side (tests/interop/sign_statement.rs).

  provenance.py validate STATEMENT SCHEMA
      in-toto-attestation (PyPI) validates STATEMENT as an in-toto Statement
      v1, and jsonschema validates its predicate against SCHEMA; prints
      {"ok": true, "subjects": N}.
  provenance.py sign STATEMENT OUTDIR
      securesystemslib (PyPI) generates an Ed25519 and an ECDSA P-256 key and
      signs STATEMENT's bytes as DSSE envelopes (payload type
      application/vnd.in-toto+json); writes OUTDIR/{ed25519,ecdsa}.json (the
      envelopes) and OUTDIR/{ed25519,ecdsa}.pub (PEM SubjectPublicKeyInfo,
      exported with pyca/cryptography); prints the file names as JSON.

Nothing here comes from gguf-digest: a statement it printed is checked, and
the envelopes it must accept are made, by code nobody here wrote.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def validate(statement_path: str, schema_path: str) -> None:
    import jsonschema
    from google.protobuf import json_format
    from in_toto_attestation.v1 import statement_pb2
    from in_toto_attestation.v1.statement import Statement

    text = Path(statement_path).read_text()
    pb = json_format.Parse(text, statement_pb2.Statement())
    Statement.copy_from_pb(pb).validate()
    doc = json.loads(text)
    jsonschema.validate(doc["predicate"], json.loads(Path(schema_path).read_text()))
    # The predicate's labels are the subjects' digests, in order.
    labels = [m["label"] for m in doc["predicate"]["models"]]
    digests = [s["digest"]["sha256"] for s in doc["subject"]]
    if labels != digests:
        raise SystemExit(f"predicate labels {labels} are not the subject digests {digests}")
    print(json.dumps({"ok": True, "subjects": len(doc["subject"])}))


def public_pem(signer) -> bytes:
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    return signer.public_key._crypto_key().public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo)


def sign(statement_path: str, outdir: str) -> None:
    from securesystemslib.dsse import Envelope
    from securesystemslib.signer import CryptoSigner

    payload = Path(statement_path).read_bytes()
    out = Path(outdir)
    written = {}
    for name, signer in [("ed25519", CryptoSigner.generate_ed25519()), ("ecdsa", CryptoSigner.generate_ecdsa())]:
        env = Envelope(payload=payload, payload_type="application/vnd.in-toto+json", signatures={})
        env.sign(signer)
        (out / f"{name}.json").write_text(json.dumps(env.to_dict()))
        (out / f"{name}.pub").write_bytes(public_pem(signer))
        written[name] = {"envelope": f"{name}.json", "key": f"{name}.pub", "scheme": signer.public_key.scheme}
    print(json.dumps(written))


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "validate":
        validate(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "sign":
        sign(sys.argv[2], sys.argv[3])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
