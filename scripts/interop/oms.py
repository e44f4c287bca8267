"""OpenSSF model signing with the real `model-signing` (PyPI, 1.1.1), for
tests/interop/sign_oms.rs.

usage:
  oms.py sign-key MODEL_DIR PRIVATE_KEY SIGNATURE [--shards N] [--ignore P]...
  oms.py sign-cert MODEL_DIR PRIVATE_KEY LEAF_CERT CHAIN_CERT SIGNATURE [--ignore P]...
  oms.py verify-key MODEL_DIR PUBLIC_KEY SIGNATURE

Signs through the library (its CLI signs `files` serialization only):
`hashing.Config().use_shard_serialization(shard_size=N)` for shards.
Ignore paths are relative to MODEL_DIR, as the CLI takes them; git's files
are ignored (the default). Prints {"ok": true} or {"ok": false, "error"}.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from model_signing import hashing, signing, verifying


def hashing_config(model: Path, shards: int | None, ignore: list[str]) -> hashing.Config:
    config = hashing.Config()
    if shards:
        config.use_shard_serialization(shard_size=shards)
    return config.set_ignored_paths(paths=ignore, ignore_git_paths=True)


def options(rest: list[str]) -> tuple[int | None, list[str]]:
    shards, ignore = None, []
    while rest:
        flag, value, rest = rest[0], rest[1], rest[2:]
        if flag == "--shards":
            shards = int(value)
        elif flag == "--ignore":
            ignore.append(value)
        else:
            raise SystemExit(f"unknown option {flag}")
    return shards, ignore


def main(argv: list[str]) -> None:
    command = argv[0]
    if command == "sign-key":
        model, key, sig = Path(argv[1]), argv[2], argv[3]
        shards, ignore = options(argv[4:])
        config = signing.Config().use_elliptic_key_signer(private_key=key)
        config.set_hashing_config(hashing_config(model, shards, ignore)).sign(model, sig)
    elif command == "sign-cert":
        model, key, leaf, chain, sig = Path(argv[1]), argv[2], argv[3], argv[4], argv[5]
        shards, ignore = options(argv[6:])
        config = signing.Config().use_certificate_signer(
            private_key=key, signing_certificate=leaf, certificate_chain=[chain]
        )
        config.set_hashing_config(hashing_config(model, shards, ignore)).sign(model, sig)
    elif command == "verify-key":
        model, key, sig = Path(argv[1]), argv[2], argv[3]
        try:
            verifying.Config().use_elliptic_key_verifier(public_key=key).verify(model, sig)
        except Exception as e:  # noqa: BLE001
            print(json.dumps({"ok": False, "error": str(e)}))
            return
    else:
        raise SystemExit(f"unknown command {command}")
    print(json.dumps({"ok": True}))


if __name__ == "__main__":
    main(sys.argv[1:])
