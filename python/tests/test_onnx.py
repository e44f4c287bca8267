"""The installed gguf_digest package on ONNX models (issue #35): models
written here record by record with their weights inline, in one external
data file and in one file per tensor, and the six real models silero-vad
6.2.3's wheel ships (the pinned wheel scripts/setup-python.sh downloads
with the PyTorch fixtures, read from the zip, never installed), also moved
to external data here. Labelled, opened, checked, put in a statement and
verified as the command does; refusals are gguf_digest.Error with the
command's message, file, offset and tensor."""

from __future__ import annotations

import hashlib
import json
import os
import struct
import zipfile
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Optional, Tuple

import pytest

import gguf_digest
from conftest import Cli

# --- protobuf records, byte by byte (as tests/common/onnx.rs writes them) ---


def varint(v: int) -> bytes:
    out = bytearray()
    while True:
        b, v = v & 0x7F, v >> 7
        if v == 0:
            out.append(b)
            return bytes(out)
        out.append(b | 0x80)


def rec(num: int, wt: int, payload: bytes) -> bytes:
    return varint(num << 3 | wt) + (varint(len(payload)) if wt == 2 else b"") + payload


def i(num: int, v: int) -> bytes:
    return rec(num, 0, varint(v))


def s(num: int, v: bytes) -> bytes:
    return rec(num, 2, v)


def value_info(name: bytes) -> bytes:
    shape = s(2, s(1, i(1, 1)))
    return s(1, name) + s(2, s(1, i(1, 1) + shape))


W = struct.pack("<2f", 1.0, 2.0)
B = struct.pack("<3f", 3.0, 4.0, 5.0)


def f32(name: bytes, dims: List[int], data: bytes) -> bytes:
    return b"".join(i(1, d) for d in dims) + i(2, 1) + s(8, name) + data


def external(*entries: Tuple[str, str]) -> bytes:
    return b"".join(s(13, s(1, k.encode()) + s(2, v.encode())) for k, v in entries) + i(14, 1)


def model(w: bytes, b: bytes, extra: bytes = b"") -> bytes:
    """Identity from x to y with the initializers w (F32 [2]) and b (F32
    [3]) whose data records are `w` and `b`, then `extra` graph records."""
    node = s(1, b"x") + s(2, b"y") + s(4, b"Identity")
    graph = s(1, node) + s(2, b"g") + s(5, f32(b"w", [2], w)) + s(5, f32(b"b", [3], b)) + extra
    graph += s(11, value_info(b"x")) + s(12, value_info(b"y"))
    return i(1, 8) + s(7, graph) + s(8, s(1, b"") + i(2, 13))


def layouts(d: Path) -> List[str]:
    """inline.onnx (raw_data); one.onnx with both tensors in one.data (b
    after 8 bytes of padding); per.onnx with per.w.bin and per.b.bin."""
    d.mkdir(parents=True, exist_ok=True)
    (d / "inline.onnx").write_bytes(model(s(9, W), s(9, B)))
    (d / "one.data").write_bytes(W + bytes(8) + B)
    (d / "one.onnx").write_bytes(
        model(
            external(("location", "one.data"), ("offset", "0"), ("length", "8")),
            external(("location", "one.data"), ("offset", "16"), ("length", "12")),
        )
    )
    (d / "per.w.bin").write_bytes(W)
    (d / "per.b.bin").write_bytes(B)
    (d / "per.onnx").write_bytes(model(external(("location", "per.w.bin")), external(("location", "per.b.bin"))))
    return ["inline.onnx", "one.onnx", "per.onnx"]


def flip(path: Path, at: int) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 1
    path.write_bytes(bytes(data))


# --- a real model's main-graph initializers moved to external data ---


def records(buf: bytes) -> Iterator[Tuple[int, int, bytes, bytes]]:
    """Each record of a message: field number, wire type, the record's
    bytes, and a length-delimited record's payload."""
    pos = 0

    def read_varint() -> int:
        nonlocal pos
        v, shift = 0, 0
        while True:
            byte = buf[pos]
            pos += 1
            v |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                return v

    while pos < len(buf):
        start = pos
        tag = read_varint()
        num, wt = tag >> 3, tag & 7
        payload = b""
        if wt == 0:
            read_varint()
        elif wt == 1:
            pos += 8
        elif wt == 5:
            pos += 4
        elif wt == 2:
            n = read_varint()
            payload = buf[pos : pos + n]
            pos += n
        else:
            raise ValueError(f"wire type {wt} at byte {start}")
        yield num, wt, buf[start:pos], payload


def externalized(onnx: bytes, one_file: Optional[str]) -> Tuple[bytes, Dict[str, bytes]]:
    """The model with every tensor of its graphs held in raw_data (the
    graph's initializers, a node's attribute tensors, those of subgraphs,
    as onnx.save_model(save_as_external_data=True) moves them) moved to
    external data: all in `one_file` (each at a 64-byte aligned offset), or
    one file per tensor when None. Returns the model and the files to write
    beside it."""
    files: Dict[str, bytearray] = {}

    def tensor(t: bytes) -> bytes:
        raw = next((p for n, wt, _, p in records(t) if n == 9 and wt == 2), b"")
        if not raw:
            return t
        location = one_file or f"t{len(files)}.bin"
        data = files.setdefault(location, bytearray())
        data.extend(bytes(-len(data) % 64))
        entries = [("location", location), ("offset", str(len(data))), ("length", str(len(raw)))]
        data.extend(raw)
        return b"".join(r for n, _, r, _ in records(t) if n != 9) + external(*entries)

    def each(msg: bytes, inner: Dict[int, Callable[[bytes], bytes]]) -> bytes:
        return b"".join(s(n, inner[n](p)) if wt == 2 and n in inner else r for n, wt, r, p in records(msg))

    def graph(g: bytes) -> bytes:
        return each(g, {1: node, 5: tensor})

    def node(n: bytes) -> bytes:
        return each(n, {5: attribute})

    def attribute(a: bytes) -> bytes:
        # t, g, tensors, graphs.
        return each(a, {5: tensor, 6: graph, 10: tensor, 11: graph})

    out = each(onnx, {7: graph})
    return out, {k: bytes(v) for k, v in files.items()}


@pytest.fixture(scope="module")
def silero(tmp_path_factory: pytest.TempPathFactory) -> List[Path]:
    wheels = Path(os.environ.get("GGUF_DIGEST_PT_FIXTURES", Path.home() / ".cache" / "gguf-digest" / "pt-fixtures"))
    wheel = wheels / "silero_vad-6.2.3-py3-none-any.whl"
    if not wheel.is_file():
        if os.environ.get("CI", "").lower() in ("true", "1"):
            pytest.fail(f"no {wheel} (scripts/setup-python.sh downloads it)")
        pytest.skip(f"no {wheel} (run scripts/setup-python.sh)")
    out = tmp_path_factory.mktemp("silero")
    paths = []
    with zipfile.ZipFile(wheel) as z:
        for name in sorted(z.namelist()):
            if name.endswith(".onnx"):
                (out / Path(name).name).write_bytes(z.read(name))
                paths.append(out / Path(name).name)
    assert len(paths) == 6, paths
    return paths


# --- the tests ---


def test_every_layout_has_one_label_the_commands(tmp_path: Path, cargo_cli: Cli) -> None:
    names = layouts(tmp_path)
    paths = [tmp_path / n for n in names]
    want = cargo_cli.label(str(paths[0]))
    assert gguf_digest.labels(paths) == [want] * 3
    assert gguf_digest.labels(paths, threads=1, mmap=False) == [want] * 3
    for p in paths:
        assert gguf_digest.label(p) == cargo_cli.label(str(p)) == want
    files = {
        "inline.onnx": ["inline.onnx"],
        "one.onnx": ["one.onnx", "one.data"],
        "per.onnx": ["per.onnx", "per.w.bin", "per.b.bin"],
    }
    for p in paths:
        m = gguf_digest.open(p)
        assert (m.format, m.contract, m.label) == ("onnx", "onnx-skeleton-v1", want), p
        # Every file read: the model, then its external data files, each once.
        assert m.files == tuple(str(tmp_path / f) for f in files[p.name]), m.files
        assert [(t.name, t.type, t.shape, t.nbytes, t.sha256) for t in m.tensors] == [
            ("w", "F32", (2,), 8, hashlib.sha256(W).hexdigest()),
            ("b", "F32", (3,), 12, hashlib.sha256(B).hexdigest()),
        ]
        assert m.skeleton()[:8] == b"ONNX\x01\x00\x00\x00"
        assert hashlib.sha256(m.skeleton()).hexdigest() == want
        assert m.metadata == () and m.components == ()
        entry = json.loads(cargo_cli.run("--json", str(p)).stdout)["files"][0]
        assert m.json() == entry
    # Another element: another label.
    (tmp_path / "other.onnx").write_bytes(model(s(9, W[:7] + b"\x41"), s(9, B)))
    assert gguf_digest.label(tmp_path / "other.onnx") not in (want,)


def test_a_directory_holds_each_onnx_model_with_its_external_files(tmp_path: Path, cargo_cli: Cli) -> None:
    names = layouts(tmp_path / "m")
    want = gguf_digest.label(tmp_path / "m" / names[0])
    m = gguf_digest.open(tmp_path / "m")
    assert (m.format, m.label) == ("directory", cargo_cli.label(str(tmp_path / "m")))
    assert [(c.kind, c.name, c.digest, c.files) for c in m.components] == [
        ("ONNX", "inline.onnx", want, ("inline.onnx",)),
        ("ONNX", "one.onnx", want, ("one.onnx", "one.data")),
        ("ONNX", "per.onnx", want, ("per.onnx", "per.w.bin", "per.b.bin")),
    ]


def test_check_statement_and_verify(tmp_path: Path, cargo_cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    names = layouts(tmp_path)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "SUMS").write_bytes(cargo_cli.run(*names, cwd=tmp_path).stdout)
    assert [(r.path, r.ok) for r in gguf_digest.check("SUMS")] == [(n, True) for n in names]
    statement = gguf_digest.statement(names)
    assert statement == cargo_cli.run("statement", *names, cwd=tmp_path).stdout.decode()
    with_leaves = gguf_digest.statement(names, leaves=True)
    assert with_leaves == cargo_cli.run("statement", "--leaves", *names, cwd=tmp_path).stdout.decode()
    doc = json.loads(statement)
    assert [x["digest"]["sha256"] for x in doc["subject"]] == gguf_digest.labels(names)
    assert [[f["path"] for f in m["files"]] for m in doc["predicate"]["models"]] == [
        ["inline.onnx"],
        ["one.onnx", "one.data"],
        ["per.onnx", "per.w.bin", "per.b.bin"],
    ]
    (tmp_path / "s.json").write_text(statement)
    v = gguf_digest.verify("s.json", no_signature=True)
    assert v.ok and not v.signature_checked
    # The padding between one.data's tensors is not content; a byte of b is.
    flip(tmp_path / "one.data", 12)
    assert gguf_digest.verify("s.json", no_signature=True).ok
    flip(tmp_path / "one.data", 12)
    flip(tmp_path / "one.data", 17)
    v = gguf_digest.verify("s.json", no_signature=True)
    assert not v.ok and [r.ok for r in v.results] == [True, False, True]
    assert v.results[1].actual is not None and v.results[1].error is None
    assert [r.ok for r in gguf_digest.check("SUMS")] == [True, False, True]
    flip(tmp_path / "one.data", 17)
    # An external file missing: that subject has an error naming it.
    (tmp_path / "per.b.bin").rename(tmp_path / "away")
    v = gguf_digest.verify("s.json", no_signature=True)
    assert [r.ok for r in v.results] == [True, True, False]
    missing = v.results[2]
    assert missing.actual is None and missing.error is not None
    assert "external location 'per.b.bin'" in str(missing.error), str(missing.error)
    r = gguf_digest.check("SUMS")[2]
    assert r.actual is None and r.error is not None and "per.b.bin" in str(r.error)
    with pytest.raises(gguf_digest.Error, match="per.b.bin"):
        gguf_digest.statement(names)
    (tmp_path / "away").rename(tmp_path / "per.b.bin")
    # Saved inline instead: the statement still holds.
    (tmp_path / "one.onnx").write_bytes((tmp_path / "inline.onnx").read_bytes())
    assert gguf_digest.verify("s.json", no_signature=True).ok


def test_refusals_are_errors_with_the_commands_message(tmp_path: Path, cargo_cli: Cli) -> None:
    def refused(name: str, data: bytes) -> gguf_digest.Error:
        p = tmp_path / name
        p.write_bytes(data)
        with pytest.raises(gguf_digest.Error) as info:
            gguf_digest.label(p)
        e = info.value
        assert e.path == str(p), (e.path, str(e))
        assert cargo_cli.run(str(p)).stderr.decode().strip() == f"gguf-digest: {e}"
        return e

    e = refused("missing.onnx", model(external(("location", "nothere.bin")), s(9, B)))
    assert "external location 'nothere.bin'" in str(e)
    assert e.subject is not None and "'w'" in e.subject and isinstance(e.offset, int)
    e = refused("short.onnx", model(s(9, W[:4]), s(9, B)))
    assert "raw_data holds 4 bytes, 2 elements of F32 take 8" in str(e)
    # Two initializers named w: the error is at the second one's message.
    second = f32(b"w", [2], s(9, W))
    bytes_ = model(s(9, W), s(9, B), s(5, second))
    e = refused("dup.onnx", bytes_)
    assert "graph.initializer: two entries with the key 'w'" in str(e)
    assert e.offset == bytes_.rindex(s(5, second)) + 2


def test_silero_vads_models_are_the_commands(silero: List[Path], cargo_cli: Cli) -> None:
    labels = gguf_digest.labels(silero)
    assert labels == [cargo_cli.label(str(p)) for p in silero]
    assert len(set(labels)) == 6
    for p, want in zip(silero, labels):
        m = gguf_digest.open(p)
        assert (m.format, m.contract, m.label, m.files) == ("onnx", "onnx-skeleton-v1", want, (str(p),))
        entry = json.loads(cargo_cli.run("--json", str(p)).stdout)["files"][0]
        assert m.json() == entry
        assert [(t.name, t.type, list(t.shape), t.sha256) for t in m.tensors] == [
            (t["name"], t["dtype"], t["shape"], t["sha256"]) for t in entry["tensors"]
        ], p
        assert m.tensors and hashlib.sha256(m.skeleton()).hexdigest() == want


def test_silero_vads_models_with_external_data_keep_their_labels(
    silero: List[Path], cargo_cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = []
    for k, p in enumerate(silero):
        for layout in ("one", "per"):
            d = tmp_path / f"{layout}{k}"
            d.mkdir()
            onnx, files = externalized(p.read_bytes(), "model.data" if layout == "one" else None)
            assert files, f"{p}: no tensor in raw_data"
            (d / p.name).write_bytes(onnx)
            for f, data in files.items():
                (d / f).write_bytes(data)
            names.append((f"{d.name}/{p.name}", gguf_digest.label(p), len(files)))
    monkeypatch.chdir(tmp_path)
    got = gguf_digest.labels([n for n, _, _ in names])
    assert got == [want for _, want, _ in names]
    assert got == [cargo_cli.label(str(tmp_path / n)) for n, _, _ in names]
    for n, want, count in names:
        m = gguf_digest.open(n)
        assert m.label == want and len(m.files) == 1 + count, (n, m.files)
        assert any(t["storage"] == "external" for t in m.json()["tensors"])
    # Their statement verifies; a weight byte in one external file fails it.
    statement = gguf_digest.statement([n for n, _, _ in names])
    assert statement == cargo_cli.run("statement", *[n for n, _, _ in names], cwd=tmp_path).stdout.decode()
    (tmp_path / "s.json").write_text(statement)
    assert gguf_digest.verify("s.json", no_signature=True).ok
    data = tmp_path / "one0" / "model.data"
    flip(data, data.stat().st_size - 1)
    v = gguf_digest.verify("s.json", no_signature=True)
    assert [r.ok for r in v.results] == [False] + [True] * (len(names) - 1)
