"""The Python side of tests/interop/sign_bundle.rs: keys made by PyPI's
`cryptography`, and bundles written by `gguf-digest sign` checked by what
nobody here wrote.

usage:
  sign_check.py keys DIR PASSWORD
      writes, with `cryptography`, ed25519/p256/p384 private keys as PKCS#8
      PEM (NAME.key) and encrypted PKCS#8 PEM (NAME.enc.key, PASSWORD,
      BestAvailableEncryption) and their public keys (NAME.pub)
  sign_check.py bundle BUNDLE PUB
      parses BUNDLE with `sigstore-models` (strict: unknown or missing
      members, wrong types refused), then verifies its one DSSE signature
      over the pre-authentication encoding with PUB, by `cryptography`
      (ECDSA with SHA-256 on P-256, SHA-384 on P-384, as cosign pairs them)

Prints one JSON line: {"keys": [...]} or {"payload": <the statement>,
"verified": true}. Exits 1 with the reason on stderr when a check fails.
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from sigstore_models.bundle.v1 import Bundle


def keys(out: Path, password: str) -> None:
    made = {
        "ed25519": ed25519.Ed25519PrivateKey.generate(),
        "p256": ec.generate_private_key(ec.SECP256R1()),
        "p384": ec.generate_private_key(ec.SECP384R1()),
    }
    for name, key in made.items():
        pkcs8 = serialization.PrivateFormat.PKCS8
        pem = serialization.Encoding.PEM
        (out / f"{name}.key").write_bytes(key.private_bytes(pem, pkcs8, serialization.NoEncryption()))
        locked = serialization.BestAvailableEncryption(password.encode())
        (out / f"{name}.enc.key").write_bytes(key.private_bytes(pem, pkcs8, locked))
        public = key.public_key().public_bytes(pem, serialization.PublicFormat.SubjectPublicKeyInfo)
        (out / f"{name}.pub").write_bytes(public)
    print(json.dumps({"keys": sorted(made)}))


def pae(payload_type: str, payload: bytes) -> bytes:
    t = payload_type.encode()
    return b"DSSEv1 %d %s %d %s" % (len(t), t, len(payload), payload)


def bundle(path: Path, pub: Path) -> None:
    parsed = Bundle.from_json(path.read_bytes())
    envelope = parsed.dsse_envelope
    if envelope is None or len(envelope.signatures) != 1:
        sys.exit("the bundle holds no DSSE envelope with one signature")
    if parsed.verification_material.public_key is None:
        sys.exit("the bundle names no public key")
    raw = json.loads(path.read_bytes())["dsseEnvelope"]
    payload = base64.b64decode(raw["payload"])
    sig = base64.b64decode(raw["signatures"][0]["sig"])
    key = serialization.load_pem_public_key(pub.read_bytes())
    message = pae(envelope.payload_type, payload)
    if isinstance(key, ed25519.Ed25519PublicKey):
        key.verify(sig, message)
    elif isinstance(key, ec.EllipticCurvePublicKey):
        digest = {256: hashes.SHA256(), 384: hashes.SHA384()}[key.curve.key_size]
        key.verify(sig, message, ec.ECDSA(digest))
    else:
        sys.exit(f"unexpected key {type(key).__name__}")
    print(json.dumps({"payload": json.loads(payload), "verified": True}))


def main() -> None:
    if sys.argv[1:2] == ["keys"] and len(sys.argv) == 4:
        keys(Path(sys.argv[2]), sys.argv[3])
    elif sys.argv[1:2] == ["bundle"] and len(sys.argv) == 4:
        bundle(Path(sys.argv[2]), Path(sys.argv[3]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
