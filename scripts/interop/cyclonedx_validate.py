#!/usr/bin/env python3
"""The AI-BOM interop test's Python side (tests/interop/interop_bom.rs).

  cyclonedx_validate.py BOM...
      cyclonedx-python-lib (PyPI, with its json-validation extra) validates
      each BOM against the CycloneDX 1.6 JSON schema (the strict one: no
      member the schema does not name), with the schemas it ships: the
      network is shut for this process before anything is loaded, so a
      schema fetched from the web would fail, not pass. Prints
      {"valid": [BOM...], "invalid": {BOM: [error...]}}.

Nothing here comes from gguf-digest: its documents are judged by the
schema's own publisher's library.
"""

from __future__ import annotations

import json
import socket
import sys


def _no_network(*args: object, **kwargs: object) -> socket.socket:
    raise OSError("network access is shut for this validation (schemas must be the bundled ones)")


def main(paths: list[str]) -> None:
    socket.socket = _no_network  # type: ignore[assignment,misc]
    socket.create_connection = _no_network  # type: ignore[assignment]
    from cyclonedx.schema import SchemaVersion
    from cyclonedx.validation.json import JsonStrictValidator

    validator = JsonStrictValidator(SchemaVersion.V1_6)
    valid: list[str] = []
    invalid: dict[str, list[str]] = {}
    for p in paths:
        with open(p, encoding="utf-8") as f:
            text = f.read()
        errors = validator.validate_str(text, all_errors=True)
        if errors:
            invalid[p] = [str(e)[:2000] for e in errors]
        else:
            valid.append(p)
    print(json.dumps({"valid": valid, "invalid": invalid}))


if __name__ == "__main__":
    main(sys.argv[1:])
