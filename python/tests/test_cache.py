"""The verified-leaf cache from Python (``cache=``, ``GGUF_DIGEST_CACHE``;
docs/adr/0033): a second open of an unchanged model takes its leaves from
the cache and says so in its JSON entry, a changed file is read again with
the label an uncached run gives, and a store not safely the user's is a
``RuntimeWarning``, never a label.

A file is trusted only when its times are older than the run by the racy
margin (50 ms where times carry nanoseconds), so every file is aged first,
as tests/cli/cache.rs does: its mtime set an hour back with ``os.utime``
(which moves its ctime to now), then a pause past the margin."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import time
from pathlib import Path
from typing import Any, Dict, List

import pytest

import gguf_digest
from conftest import Cli, Corpus

# Longer than the racy margin: a file this old may be kept and trusted.
SETTLE = 0.12


def aged(*paths: Path) -> None:
    """Sets each file's mtime an hour back, then waits past the margin (the
    ctime ``os.utime`` moved is then old enough too)."""
    hour_ago = time.time() - 3600
    for p in paths:
        os.utime(p, (hour_ago, hour_ago), follow_symlinks=False)
    time.sleep(SETTLE)


def tensor_byte(model: Path, entry: Dict[str, Any]) -> int:
    """The position in the file of a byte in the middle of the model's
    largest tensor (the JSON gives offsets in the data section; the section
    starts where that tensor's digest is found, at a multiple of 32)."""
    data = model.read_bytes()
    t = max(entry["tensors"], key=lambda t: t["nbytes"])
    at, n = t["stored_offset"], t["nbytes"]
    start = next(s for s in range(0, len(data), 32) if hashlib.sha256(data[s + at : s + at + n]).hexdigest() == t["sha256"])
    return int(start + at + n // 2)


def bytes_of(opened: gguf_digest.Model) -> List[str]:
    entry: Dict[str, Any] = opened.json()
    return [f["bytes"] for f in entry["cache"]]


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "leaves"
    monkeypatch.setenv("GGUF_DIGEST_CACHE_DIR", str(d))
    monkeypatch.delenv("GGUF_DIGEST_CACHE", raising=False)
    return d


def test_a_second_open_takes_the_leaves_from_the_cache(
    corpus: Corpus, cache_dir: Path, tmp_path: Path, cargo_cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    # gguf-py's writer: every value type and quantized tensors.
    model = tmp_path / "m.gguf"
    shutil.copyfile(corpus.root / "all_types.gguf", model)
    aged(model)
    plain = gguf_digest.open(model)
    assert "cache" not in plain.json()
    assert not cache_dir.exists(), "nothing made without the cache"

    first = gguf_digest.open(model, cache=True)
    assert first.label == plain.label == cargo_cli.label(str(model))
    assert first.json()["cache"] == [{"path": str(model), "bytes": "read"}]
    assert stat.S_IMODE((cache_dir / "leaves-v1").stat().st_mode) == 0o600

    again = gguf_digest.open(model, cache=True)
    assert again.label == plain.label
    assert again.json()["cache"] == [{"path": str(model), "bytes": "cache"}]
    assert gguf_digest.label(model, cache=True) == plain.label
    assert "cache" not in gguf_digest.open(model, cache=False).json()

    # The environment turns it on; cache=False still turns it off.
    monkeypatch.setenv("GGUF_DIGEST_CACHE", "1")
    assert bytes_of(gguf_digest.open(model)) == ["cache"]
    assert "cache" not in gguf_digest.open(model, cache=False).json()
    monkeypatch.delenv("GGUF_DIGEST_CACHE")

    # A same-size write in place (a byte of tensor data), its mtime put
    # back: the ctime moved, so the file is read again, and the label is the
    # uncached one.
    at = tensor_byte(model, plain.json())
    before = model.stat()
    with open(model, "r+b") as f:
        f.seek(at)
        byte = f.read(1)
        f.seek(at)
        f.write(bytes([byte[0] ^ 1]))
    os.utime(model, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert model.stat().st_mtime_ns == before.st_mtime_ns
    time.sleep(SETTLE)
    changed = gguf_digest.open(model, cache=True)
    assert bytes_of(changed) == ["read"]
    assert changed.label == gguf_digest.label(model, cache=False) == cargo_cli.label(str(model))
    assert changed.label != plain.label
    # Kept again: the next open takes the new leaves.
    assert bytes_of(gguf_digest.open(model, cache=True)) == ["cache"]


def test_a_snapshot_with_one_changed_file_reads_that_file(corpus: Corpus, cache_dir: Path, tmp_path: Path) -> None:
    # huggingface_hub's layout: the snapshot's entries link into blobs/.
    snapshot = next(p for p in corpus.models if p.parent.name == "snapshots")
    repo = snapshot.parent.parent
    copy = tmp_path / "hub" / repo.name
    shutil.copytree(repo, copy, symlinks=True)
    snap = copy / "snapshots" / snapshot.name
    # A README and a config beside the weights, linked as the hub links them.
    for name, text in [("README.md", "# tiny\n"), ("config.json", '{"model_type": "tiny"}\n')]:
        blob = hashlib.sha1(text.encode()).hexdigest()
        (copy / "blobs" / blob).write_text(text)
        (snap / name).symlink_to(f"../../blobs/{blob}")
    blobs = sorted((copy / "blobs").iterdir())
    aged(*blobs)
    first = gguf_digest.open(snap, cache=True)
    assert set(bytes_of(first)) == {"read"}
    again = gguf_digest.open(snap, cache=True)
    assert again.label == first.label
    assert len(bytes_of(again)) == len(bytes_of(first)) >= 3
    assert set(bytes_of(again)) == {"cache"}

    # The README's blob rewritten (same size): only it is read.
    one = (snap / "README.md").resolve()
    one.write_text("# TINY\n")
    time.sleep(SETTLE)
    after = gguf_digest.open(snap, cache=True)
    assert after.label == gguf_digest.label(snap, cache=False) != first.label
    read = [f["path"] for f in after.json()["cache"] if f["bytes"] == "read"]
    assert len(read) == 1 and os.path.realpath(read[0]) == str(one.resolve()), after.json()["cache"]


def test_a_model_without_tensor_data_is_always_read(cache_dir: Path, tmp_path: Path, repo: Path) -> None:
    """A GGUF with no tensors has no leaf to keep: its label is its
    metadata, read and parsed on every run (the cache keeps only tensor
    data and whole-file digests), so it says "read" every time."""
    model = tmp_path / "empty.gguf"
    shutil.copyfile(repo / "tests" / "data" / "vectors" / "a_empty.gguf", model)
    aged(model)
    for _ in range(2):
        assert bytes_of(gguf_digest.open(model, cache=True)) == ["read"]


def test_a_store_others_can_write_is_a_warning_and_not_used(corpus: Corpus, cache_dir: Path, tmp_path: Path) -> None:
    model = tmp_path / "m.gguf"
    shutil.copyfile(corpus.root / "all_types.gguf", model)
    aged(model)
    gguf_digest.open(model, cache=True)
    store = cache_dir / "leaves-v1"
    assert bytes_of(gguf_digest.open(model, cache=True)) == ["cache"]
    store.chmod(0o666)
    with pytest.warns(RuntimeWarning, match="gguf-digest cache: .*writable by others"):
        opened = gguf_digest.open(model, cache=True)
    assert bytes_of(opened) == ["read"]
    assert opened.label == gguf_digest.label(model, cache=False)
