"""URL inputs through the Python API (issue #36, docs/adr/0044), against
real servers the tests start on free ports of 127.0.0.1: Debian's nginx
(HTTP, HTTPS with a certificate authority openssl makes, a throttled
folder) and moto's S3 server (PyPI ``moto[server]``, objects uploaded by
boto3). Every label over a URL is the label the same API gives the same
bytes on disk.

nginx and openssl are found on PATH (or /usr/sbin); moto and boto3 in the
interpreter ``INTEROP_PYTHON`` names (scripts/test-python.sh sets it to the
venv of scripts/setup-python.sh), else in this one. Each test skips without
its server unless ``CI=true``, as tests/remote does.
"""

from __future__ import annotations

import os
import random
import shutil
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple

import pytest

import gguf_digest


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("true", "1")


def missing(what: str) -> None:
    if in_ci():
        pytest.fail(f"{what} is missing, and CI=true: .ci/run installs it")
    pytest.skip(f"{what} is missing (.ci/run installs it)")


def tool(name: str) -> str:
    found = shutil.which(name, path=os.environ.get("PATH", "") + os.pathsep + "/usr/sbin")
    if found is None:
        missing(name)
    assert found is not None
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def wait_for(port: int, proc: subprocess.Popen[bytes], seconds: float = 30) -> None:
    start = time.monotonic()
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            assert proc.poll() is None, f"the server on {port} exited with {proc.returncode}"
            assert time.monotonic() - start < seconds, f"nothing listens on {port}"
            time.sleep(0.05)


# ---------------------------------------------------------------------------
# The models, written byte by byte
# ---------------------------------------------------------------------------


def gguf_model(seed: int) -> bytes:
    """A GGUF v3 file: a name KV and three F32 tensors, the first 6 MiB
    (more than one 4 MiB range request), pseudo-random data."""
    rng = random.Random(seed)
    tensors = [("big", [3 << 19]), ("small", [64, 3]), ("big2", [1 << 18, 2])]
    key, value = b"general.name", b"remote test"
    kv = len(key).to_bytes(8, "little") + key + (8).to_bytes(4, "little") + len(value).to_bytes(8, "little") + value
    infos, data = b"", b""
    for name, dims in tensors:
        n = 4
        for d in dims:
            n *= d
        infos += len(name).to_bytes(8, "little") + name.encode() + len(dims).to_bytes(4, "little")
        infos += b"".join(d.to_bytes(8, "little") for d in dims)
        infos += (0).to_bytes(4, "little") + len(data).to_bytes(8, "little")  # F32 at this offset
        data += rng.randbytes(n) + b"\0" * (-n % 32)
    head = b"GGUF" + (3).to_bytes(4, "little") + len(tensors).to_bytes(8, "little") + (1).to_bytes(8, "little")
    head += kv + infos
    return head + b"\0" * (-len(head) % 32) + data


def safetensors_model(seed: int) -> bytes:
    import json

    rng = random.Random(seed)
    w, b = rng.randbytes(512 * 300 * 4), rng.randbytes(77 * 2)
    header = {
        "__metadata__": {"format": "pt"},
        "w": {"dtype": "F32", "shape": [512, 300], "data_offsets": [0, len(w)]},
        "b": {"dtype": "BF16", "shape": [77], "data_offsets": [len(w), len(w) + len(b)]},
    }
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    return len(text).to_bytes(8, "little") + text + w + b


def varint(v: int) -> bytes:
    out = bytearray()
    while True:
        low, v = v & 0x7F, v >> 7
        if v == 0:
            out.append(low)
            return bytes(out)
        out.append(low | 0x80)


def field(num: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field."""
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def int_field(num: int, v: int) -> bytes:
    return varint(num << 3) + varint(v)


def value_info(name: bytes) -> bytes:
    shape = field(2, field(1, int_field(1, 1)))
    return field(1, name) + field(2, field(1, int_field(1, 1) + shape))


def onnx_external() -> bytes:
    """SPEC X10's model (`Identity`, initializer `w` F32 [2]) with its data
    in `w.bin` beside it: ONNX external data."""
    data = field(13, field(1, b"location") + field(2, b"w.bin")) + int_field(14, 1)
    tensor = int_field(1, 2) + int_field(2, 1) + field(8, b"w") + data
    node = field(1, b"x") + field(2, b"y") + field(4, b"Identity")
    graph = field(1, node) + field(2, b"g") + field(5, tensor) + field(11, value_info(b"x")) + field(12, value_info(b"y"))
    return int_field(1, 8) + field(7, graph) + field(8, field(1, b"") + int_field(2, 13))


W_BIN = bytes([0, 0, 0x80, 0x3F, 0, 0, 0, 0x40])


@dataclass
class Served:
    root: Path
    """The folder: each model also on disk."""
    files: List[str]
    """The models, by name under the root."""


def write_models(root: Path) -> Served:
    root.mkdir(parents=True, exist_ok=True)
    (root / "m.gguf").write_bytes(gguf_model(1))
    (root / "m.safetensors").write_bytes(safetensors_model(2))
    (root / "e.onnx").write_bytes(onnx_external())
    (root / "w.bin").write_bytes(W_BIN)
    # A directory: two models beside a config (labelled whole over S3).
    (root / "tree" / "sub").mkdir(parents=True)
    (root / "tree" / "a.gguf").write_bytes(gguf_model(3))
    (root / "tree" / "sub" / "b.safetensors").write_bytes(safetensors_model(4))
    (root / "tree" / "config.json").write_bytes(b'{"a": 1}')
    # A model served slowly (nginx's limit_rate): for Ctrl-C mid-read.
    (root / "slow").mkdir()
    (root / "slow" / "big.gguf").write_bytes(big_gguf())
    return Served(root, ["m.gguf", "m.safetensors", "e.onnx"])


def big_gguf() -> bytes:
    """One 48 MiB I8 tensor: many seconds through the throttled folder."""
    name, n = b"bytes", 48 << 20
    info = len(name).to_bytes(8, "little") + name + (1).to_bytes(4, "little") + n.to_bytes(8, "little")
    info += (24).to_bytes(4, "little") + (0).to_bytes(8, "little")
    head = b"GGUF" + (3).to_bytes(4, "little") + (1).to_bytes(8, "little") + (0).to_bytes(8, "little") + info
    return head + b"\0" * (-len(head) % 32) + random.Random(5).randbytes(n)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Served:
    return write_models(tmp_path_factory.mktemp("served"))


# ---------------------------------------------------------------------------
# nginx (as tests/remote/servers.rs starts it)
# ---------------------------------------------------------------------------


@dataclass
class Tls:
    ca: Path
    cert: Path
    key: Path


def make_tls(openssl: str, d: Path) -> Tls:
    """A certificate authority and a certificate for localhost and 127.0.0.1 it signed."""

    def run(*args: str) -> None:
        p = subprocess.run([openssl, *args], cwd=d, capture_output=True)
        assert p.returncode == 0, f"openssl {args}: {p.stderr.decode()}"

    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    run("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=gguf-digest test CA")
    run("req", *ec, "-keyout", "srv.key", "-out", "srv.csr", "-subj", "/CN=localhost")
    (d / "san.ext").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    run(
        "x509", "-req", "-in", "srv.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
        "-out", "srv.pem", "-days", "2", "-extfile", "san.ext",
    )  # fmt: skip
    return Tls(d / "ca.pem", d / "srv.pem", d / "srv.key")


@dataclass
class Nginx:
    port: int
    base: str
    """``http://127.0.0.1:PORT/`` (``https://`` with TLS)."""


def start_nginx(root: Path, d: Path, tls: Optional[Tls] = None) -> Iterator[Nginx]:
    nginx = tool("nginx")
    port = free_port()
    ssl = f" ssl; ssl_certificate {tls.cert}; ssl_certificate_key {tls.key}" if tls else ""
    conf = f"""daemon off; master_process off; worker_processes 1; pid {d}/nginx.pid; error_log {d}/error.log;
events {{ worker_connections 256; }}
http {{
 access_log off; client_body_temp_path {d}/b; proxy_temp_path {d}/p; fastcgi_temp_path {d}/f; uwsgi_temp_path {d}/u; scgi_temp_path {d}/s;
 server {{ listen 127.0.0.1:{port}{ssl}; root {root}; location /slow/ {{ limit_rate 2m; }} }}
}}
"""
    (d / "nginx.conf").write_text(conf)
    proc = subprocess.Popen(
        [nginx, "-e", "stderr", "-c", str(d / "nginx.conf")],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(port, proc)
        yield Nginx(port, f"{'https' if tls else 'http'}://127.0.0.1:{port}/")
    finally:
        proc.kill()
        proc.wait()


@pytest.fixture(scope="module")
def http(served: Served, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Nginx]:
    yield from start_nginx(served.root, tmp_path_factory.mktemp("nginx"))


@pytest.fixture(scope="module")
def https(served: Served, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tuple[Nginx, Tls]]:
    d = tmp_path_factory.mktemp("nginx-tls")
    tls = make_tls(tool("openssl"), d)
    for server in start_nginx(served.root, d, tls):
        yield server, tls


# ---------------------------------------------------------------------------
# HTTP and HTTPS
# ---------------------------------------------------------------------------


def test_every_model_over_http_has_its_label_on_disk(served: Served, http: Nginx) -> None:
    for name in served.files:
        on_disk = gguf_digest.label(served.root / name)
        assert gguf_digest.label(http.base + name, allow_http=True) == on_disk, name
    # Many at once, on one connection, and opened whole.
    urls = [http.base + name for name in served.files]
    assert gguf_digest.labels(urls, allow_http=True, connections=1) == gguf_digest.labels(
        [served.root / n for n in served.files]
    )
    model = gguf_digest.open(http.base + "m.gguf", allow_http=True)
    local = gguf_digest.open(served.root / "m.gguf")
    assert (model.path, model.label, model.tensors, model.metadata) == (
        http.base + "m.gguf",
        local.label,
        local.tensors,
        local.metadata,
    )


def test_http_is_refused_without_allow_http(http: Nginx) -> None:
    url = http.base + "m.gguf"
    with pytest.raises(gguf_digest.Error) as e:
        gguf_digest.label(url)
    # The keyword is named, not the command's flag.
    assert "allow_http=True" in str(e.value) and "--allow-http" not in str(e.value), e.value
    assert e.value.argument == url and url in str(e.value)
    with pytest.raises(gguf_digest.Error, match="allow_http=True"):
        gguf_digest.open(url)


def test_a_missing_object_is_an_error_naming_the_url(http: Nginx) -> None:
    url = http.base + "none.gguf"
    with pytest.raises(gguf_digest.Error) as e:
        gguf_digest.label(url, allow_http=True)
    assert url in str(e.value) and e.value.argument == url, e.value


def test_credentials_never_show_in_results_or_errors(served: Served, http: Nginx) -> None:
    host = f"127.0.0.1:{http.port}"
    # Read with them (nginx ignores them): the model names itself without.
    model = gguf_digest.open(f"http://alice:secret@{host}/m.gguf?sig=TOKEN", allow_http=True)
    assert model.label == gguf_digest.label(served.root / "m.gguf")
    assert model.path == f"http://{host}/m.gguf"
    assert "secret" not in repr(model) and "TOKEN" not in model.path
    failures = [
        (f"http://alice:secret@{host}/none.gguf", True),
        (f"http://alice:secret@{host}/m.gguf", False),
        # TLS to a plain HTTP port: the connection fails.
        (f"https://user:secret@{host}/m.gguf", False),
        (f"https://user:secret@{host}/m.gguf?sig=secret", True),
    ]
    # A list's entry with them: read with them, shown without.
    sums = served.root.parent / "secret.sums"
    sums.write_text(f"{model.label}  http://alice:secret@{host}/m.gguf\n{'0' * 64}  http://alice:secret@{host}/none.gguf\n")
    results = gguf_digest.check(sums, allow_http=True)
    assert [(r.path, r.ok) for r in results] == [(f"http://{host}/m.gguf", True), (f"http://{host}/none.gguf", False)]
    assert results[1].error is not None
    shown = repr(results) + str(results[1].error) + str(results[1].error.argument) + str(results[1].error.path)
    assert "secret" not in shown and "alice" not in shown, shown
    for url, allow_http in failures:
        with pytest.raises(gguf_digest.Error) as e:
            gguf_digest.label(url, allow_http=allow_http, connections=1)
        shown = " ".join(str(x) for x in (e.value, repr(e.value), e.value.argument, e.value.path, e.value.subject))
        assert "secret" not in shown and "alice" not in shown and "user:" not in shown, shown
        assert host in shown, shown


def test_https_with_a_ca_file(served: Served, https: Tuple[Nginx, Tls]) -> None:
    server, tls = https
    url = server.base + "m.safetensors"
    assert gguf_digest.label(url, ca_file=tls.ca) == gguf_digest.label(served.root / "m.safetensors")
    # Without it the certificate's issuer is unknown: refused.
    with pytest.raises(gguf_digest.Error) as e:
        gguf_digest.label(url, connections=2)
    assert url in str(e.value)
    # A CA file that is not there is an error naming it.
    with pytest.raises(gguf_digest.Error) as e:
        gguf_digest.label(url, ca_file=served.root / "no-ca.pem", connections=3)
    assert "no-ca.pem" in str(e.value)


def test_a_prefix_over_plain_http_is_refused_naming_it(http: Nginx) -> None:
    # A plain nginx does not list (no WebDAV PROPFIND, docs/adr/0044): a
    # directory URL is an error, not a label of nothing.
    url = http.base + "tree/"
    with pytest.raises(gguf_digest.Error) as e:
        gguf_digest.label(url, allow_http=True)
    assert http.base + "tree" in str(e.value), e.value
    assert "PROPFIND" in str(e.value), e.value


def test_check_statement_and_verify_take_urls(served: Served, http: Nginx, tmp_path: Path) -> None:
    url = http.base + "m.gguf"
    want = gguf_digest.label(served.root / "m.gguf")
    sums = tmp_path / "sums"
    sums.write_text(f"{want}  {url}\n{'0' * 64}  {http.base}m.safetensors\n")
    results = gguf_digest.check(sums, allow_http=True)
    assert [(r.path, r.ok) for r in results] == [(url, True), (http.base + "m.safetensors", False)]
    # Without allow_http each entry is unreadable, saying why.
    results = gguf_digest.check(sums)
    assert all(r.actual is None and r.error is not None and "allow_http=True" in str(r.error) for r in results)
    text = gguf_digest.statement([f"http://u:secret@127.0.0.1:{http.port}/m.gguf"], allow_http=True)
    assert url in text and want in text and "secret" not in text
    stmt = tmp_path / "statement.json"
    stmt.write_text(text)
    done = gguf_digest.verify(stmt, no_signature=True, allow_http=True)
    assert done.ok and [r.path for r in done.results] == [url]


def test_connections_must_be_a_count(http: Nginx) -> None:
    for bad in (0, -1, True, 1.5, 100000):
        with pytest.raises(ValueError, match="connections"):
            gguf_digest.label(http.base + "m.gguf", allow_http=True, connections=bad)  # type: ignore[arg-type]


def test_keyboard_interrupt_stops_a_long_remote_read(served: Served, http: Nginx, sigint_raises: None) -> None:
    import _thread

    url = http.base + "slow/big.gguf"
    # 48 MiB at 2 MiB/s a connection, on two: about 12 s to the end.
    timer = threading.Timer(0.5, _thread.interrupt_main)
    start = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        gguf_digest.label(url, allow_http=True, connections=2)
    stopped = time.monotonic() - start
    timer.join()
    # Raised once the parts in flight end (4 MiB at 2 MiB/s), not at the end.
    assert stopped < 6, stopped
    # And URLs are read again afterwards.
    assert gguf_digest.label(http.base + "m.gguf", allow_http=True) == gguf_digest.label(served.root / "m.gguf")


# ---------------------------------------------------------------------------
# S3 through moto's server
# ---------------------------------------------------------------------------


def moto_python() -> str:
    for python in (os.environ.get("INTEROP_PYTHON"), sys.executable):
        if python and subprocess.run([python, "-c", "import moto, boto3"], capture_output=True).returncode == 0:
            return python
    missing("moto[server] and boto3 (scripts/setup-python.sh installs them in its venv)")
    raise AssertionError("unreachable")


UPLOAD = """
import sys, boto3
port, bucket, pairs = sys.argv[1], sys.argv[2], sys.argv[3:]
s3 = boto3.client("s3", endpoint_url=f"http://127.0.0.1:{port}", aws_access_key_id="testing",
                  aws_secret_access_key="testing-secret", region_name="us-east-1")
s3.create_bucket(Bucket=bucket)
for key, path in zip(pairs[::2], pairs[1::2]):
    with open(path, "rb") as f:
        s3.put_object(Bucket=bucket, Key=key, Body=f.read())
"""


@pytest.fixture(scope="module")
def s3(served: Served) -> Iterator[str]:
    """moto's S3 on a free port, the served folder uploaded by boto3 to the
    bucket `models`, and the environment the S3 client reads pointed at
    it; yields ``s3://models/``."""
    python = moto_python()
    port = free_port()
    proc = subprocess.Popen(
        [python, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    saved: Dict[str, Optional[str]] = {}
    try:
        wait_for(port, proc)
        pairs: List[str] = []
        for path in sorted(p for p in served.root.rglob("*") if p.is_file() and "slow" not in p.parts):
            pairs += [path.relative_to(served.root).as_posix(), str(path)]
        up = subprocess.run([python, "-c", UPLOAD, str(port), "models", *pairs], capture_output=True)
        assert up.returncode == 0, up.stderr.decode()
        env = {
            "AWS_ENDPOINT": f"http://127.0.0.1:{port}",
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing-secret",
            "AWS_REGION": "us-east-1",
        }
        for k, v in env.items():
            saved[k] = os.environ.get(k)
            os.environ[k] = v
        yield "s3://models/"
    finally:
        for k, old in saved.items():
            if old is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = old
        proc.kill()
        proc.wait()


def test_every_model_and_a_prefix_in_s3_have_their_labels_on_disk(served: Served, s3: str) -> None:
    # moto speaks plain HTTP: allow_http, as the command's --allow-http.
    for name in served.files:
        assert gguf_digest.label(s3 + name, allow_http=True) == gguf_digest.label(served.root / name), name
    # A prefix ending in "/" is a directory: the directory label.
    assert gguf_digest.label(s3 + "tree/", allow_http=True) == gguf_digest.label(served.root / "tree")
    model = gguf_digest.open(s3 + "tree/", allow_http=True)
    assert model.format == "directory" and model.label == gguf_digest.label(served.root / "tree")
    # A missing object names its URL, never the secret key.
    with pytest.raises(gguf_digest.Error) as e:
        gguf_digest.label(s3 + "none.gguf", allow_http=True)
    assert s3 + "none.gguf" in str(e.value) and "testing-secret" not in repr(e.value), e.value
    # Without allow_http the service over plain HTTP is refused.
    with pytest.raises(gguf_digest.Error):
        gguf_digest.label(s3 + "m.gguf", connections=5)


# ---------------------------------------------------------------------------
# OCI: Debian's docker-registry, an artifact pushed by oras
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The CNCF distribution registry on a free port; yields its host."""
    if not Path("/usr/bin/docker-registry").is_file():
        missing("docker-registry")
    d = tmp_path_factory.mktemp("registry")
    port = free_port()
    (d / "config.yml").write_text(
        f"version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\n"
        f"storage:\n  filesystem:\n    rootdirectory: {d / 'storage'}\nhttp:\n  addr: 127.0.0.1:{port}\n"
    )
    proc = subprocess.Popen(
        ["/usr/bin/docker-registry", "serve", str(d / "config.yml")],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(port, proc)
        yield f"127.0.0.1:{port}"
    finally:
        proc.kill()
        proc.wait()


def test_a_docker_model_in_an_oci_registry_has_its_ggufs_label(
    served: Served, registry: str, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from conftest import interop

    gguf = served.root / "m.gguf"
    # scripts/interop/oci_push.py: oras writes the Docker Model Runner layout.
    interop(repo, "oci_push.py", "dmr", "--registry", registry, "--ref", "ai/m:q", "--gguf", str(gguf))
    monkeypatch.setenv("DOCKER_CONFIG", "/nonexistent-docker-config")
    url = f"oci://{registry}/ai/m:q"
    assert gguf_digest.label(url, allow_http=True) == gguf_digest.label(gguf)
    with pytest.raises(gguf_digest.Error) as e:
        gguf_digest.label(f"oci://{registry}/ai/m:missing", allow_http=True)
    assert f"{registry}/ai/m" in str(e.value), e.value
