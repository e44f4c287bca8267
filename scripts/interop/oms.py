"""OpenSSF model signing with the real `model-signing` (PyPI, 1.1.1), for
tests/interop/sign_oms.rs.

usage:
  oms.py sign-key MODEL_DIR PRIVATE_KEY SIGNATURE [--shards N] [--ignore P]...
         [--signed-ignore P]... [--allow-symlinks]
  oms.py sign-cert MODEL_DIR PRIVATE_KEY LEAF_CERT CHAIN_CERT SIGNATURE [--ignore P]...
  oms.py verify-key MODEL_DIR PUBLIC_KEY SIGNATURE

Signs through the library (its CLI signs `files` serialization only):
`hashing.Config().use_shard_serialization(shard_size=N)` for shards.
Ignore paths are relative to MODEL_DIR, as the CLI takes them; git's files
are ignored (the default). `--signed-ignore P` writes P into the signed
`ignore_paths` as given, after hashing (model_signing's signer drops a path
that is not below the model; a hostile signer need not, and its verifier
must then ignore nothing for it). `--allow-symlinks` signs a directory of
links (a Hugging Face snapshot). Prints {"ok": true} or {"ok": false, "error"}.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from model_signing import hashing, signing, verifying


def hashing_config(model: Path, shards: int | None, ignore: list[str], links: bool = False) -> hashing.Config:
    config = hashing.Config()
    if shards:
        config.use_shard_serialization(shard_size=shards)
    config.set_allow_symlinks(links)
    return config.set_ignored_paths(paths=ignore, ignore_git_paths=True)


class Options:
    def __init__(self, rest: list[str]) -> None:
        self.shards: int | None = None
        self.ignore: list[str] = []
        self.signed_ignore: list[str] = []
        self.links = False
        while rest:
            if rest[0] == "--allow-symlinks":
                self.links, rest = True, rest[1:]
                continue
            flag, value, rest = rest[0], rest[1], rest[2:]
            if flag == "--shards":
                self.shards = int(value)
            elif flag == "--ignore":
                self.ignore.append(value)
            elif flag == "--signed-ignore":
                self.signed_ignore.append(value)
            else:
                raise SystemExit(f"unknown option {flag}")


def options(rest: list[str]) -> tuple[int | None, list[str]]:
    o = Options(rest)
    return o.shards, o.ignore


class WithSignedIgnore(hashing.Config):
    """model_signing's hashing, with ignore paths added to the manifest's
    serialization as given (its own signer would drop them)."""

    def __init__(self, inner: hashing.Config, extra: list[str]) -> None:
        self.__dict__.update(inner.__dict__)
        self._extra = extra

    def hash(self, model_path, *, files_to_hash=None):  # type: ignore[override]
        manifest = super().hash(model_path, files_to_hash=files_to_hash)
        manifest._serialization_type._ignore_paths.extend(self._extra)
        return manifest


def main(argv: list[str]) -> None:
    command = argv[0]
    if command == "sign-key":
        model, key, sig = Path(argv[1]), argv[2], argv[3]
        o = Options(argv[4:])
        config = signing.Config().use_elliptic_key_signer(private_key=key)
        hashing_cfg = hashing_config(model, o.shards, o.ignore, o.links)
        if o.signed_ignore:
            hashing_cfg = WithSignedIgnore(hashing_cfg, o.signed_ignore)
        config.set_hashing_config(hashing_cfg).sign(model, sig)
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
