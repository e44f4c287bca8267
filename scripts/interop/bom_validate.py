#!/usr/bin/env python3
"""The AI-BOM interop test's Python side (tests/interop/bom.rs).

  bom_validate.py cyclonedx BOM...
      cyclonedx-python-lib (PyPI, with its json-validation extra) validates
      each BOM against the CycloneDX 1.6 JSON schema (the strict one: no
      member the schema does not name), with the schemas it ships.
  bom_validate.py spdx BOM...
      spdx-python-model (PyPI, the SPDX 3 bindings generated from the
      model's SHACL) reads each document as SPDX 3.0.1 JSON-LD (an unknown
      type or property, a value of the wrong type or outside its
      vocabulary is an error), links every reference (one left unresolved
      is an error) and writes it back (a required property missing, or too
      many or too few values, is an error).

Either way the network is shut for this process before anything is
loaded, so a schema or context fetched from the web would fail, not pass.
Prints {"valid": [BOM...], "invalid": {BOM: [error...]}}.

Nothing here comes from gguf-digest: its documents are judged by the
formats' own publishers' libraries.
"""

from __future__ import annotations

import io
import json
import socket
import sys
from collections.abc import Callable


def _no_network(*args: object, **kwargs: object) -> socket.socket:
    raise OSError("network access is shut for this validation (schemas must be the bundled ones)")


def cyclonedx_errors() -> Callable[[str], list[str]]:
    from cyclonedx.schema import SchemaVersion
    from cyclonedx.validation.json import JsonStrictValidator

    validator = JsonStrictValidator(SchemaVersion.V1_6)

    def check(text: str) -> list[str]:
        errors = validator.validate_str(text, all_errors=True)
        return [str(e)[:2000] for e in errors] if errors else []

    return check


def spdx_errors() -> Callable[[str], list[str]]:
    from spdx_python_model import load_data

    def check(text: str) -> list[str]:
        try:
            model, objset = load_data(json.loads(text))
            unresolved = objset.link()
            if unresolved:
                return [f"unresolved references: {sorted(unresolved)}"]
            model.JSONLDSerializer().write(objset, io.BytesIO())
        except Exception as e:  # noqa: BLE001
            return [repr(e)[:2000]]
        return []

    return check


def main(kind: str, paths: list[str]) -> None:
    socket.socket = _no_network  # type: ignore[assignment,misc]
    socket.create_connection = _no_network  # type: ignore[assignment]
    check = {"cyclonedx": cyclonedx_errors, "spdx": spdx_errors}[kind]()
    valid: list[str] = []
    invalid: dict[str, list[str]] = {}
    for p in paths:
        with open(p, encoding="utf-8") as f:
            errors = check(f.read())
        if errors:
            invalid[p] = errors
        else:
            valid.append(p)
    print(json.dumps({"valid": valid, "invalid": invalid}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
