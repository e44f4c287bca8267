"""One content-addressed label for every layout of a GGUF, safetensors, directory or Ollama model.

The label is the SHA-256 of the model's canonical skeleton (docs/SPEC.md):
every metadata value and every weight byte enter it, while tensor and key
order, padding, byte order, GGUF v2/v3 and the split into shards do not.
These are the labels the ``gguf-digest`` command prints::

    import gguf_digest

    assert gguf_digest.label("model.gguf") == "107e635b…"

A path may be a ``str`` or any ``os.PathLike`` (``pathlib.Path``): a GGUF or
safetensors file (for a split model, its first shard), a
``*.safetensors.index.json``, a directory holding one model (a Hugging Face
snapshot), or an ``ollama:NAME`` reference to a model in the Ollama store.

Where the extension was built with URL inputs (the wheel ``pip install .``
builds is), a path may also be a URL, read by range requests without a download:
``s3://BUCKET/KEY``, ``gs://BUCKET/KEY``, ``az://CONTAINER/KEY``,
``https://HOST/PATH``, ``oci://REGISTRY/REPOSITORY:TAG``, and
``http://HOST/PATH`` with ``allow_http=True``; one ending in ``/`` is a
directory (S3, GCS, Azure; over HTTP a server listing through WebDAV ``PROPFIND``). Its label is that of the same bytes on disk.
Credentials come from each service's usual environment (``AWS_*``,
``GOOGLE_*``, ``AZURE_*``, ``~/.docker/config.json``), or for HTTP from
``https://user:password@host/...``; they never appear in a result or an
exception. Every function that takes a path takes three keywords for them,
as the command's flags: ``allow_http`` (``--allow-http``: read ``http://``
and services reached over plain HTTP, such as emulators), ``connections``
(``--connections``: at most this many range requests in flight at once, 1
to 1024; default 8) and ``ca_file`` (``--ca-file``: also trust the
certificate authorities of this PEM file). Without ``threads``, a call
whose paths include a URL hashes on ``connections`` threads, as the command
does.

Every failure to label raises :class:`Error` (with ``argument``, ``path``,
``offset`` and ``subject``); a wrong argument type raises ``TypeError`` or ``ValueError``.
Hashing runs on all cores with the GIL released; Ctrl-C
(``KeyboardInterrupt``) stops it. Standard input (``"-"``) is not read
here (the ``gguf-digest`` command reads it).
"""

from __future__ import annotations

import json as _json
import os
import struct
import warnings
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, Optional, Sequence, Tuple, Union

from . import _native
from ._native import Error, SignatureError

__version__: str = _native.__version__

StrPath = Union[str, "os.PathLike[str]"]
"""A path as the ecosystem gives one: ``str`` or ``os.PathLike``."""

__all__ = [
    "CheckResult",
    "Component",
    "Error",
    "Leaf",
    "SignatureError",
    "Model",
    "StrPath",
    "Tensor",
    "Verification",
    "check",
    "label",
    "labels",
    "ollama_models",
    "open",
    "statement",
    "verify",
]


def _fspath(path: StrPath) -> str:
    # os.fspath also refuses what is no path (an int, None) with a TypeError.
    p = os.fspath(path)
    if not isinstance(p, str):
        raise TypeError(f"expected str or os.PathLike[str], got {type(path).__name__}")
    # A lone surrogate ("\ud800") names no file; os.fsencode says so here, where
    # the extension's own conversion would end in a panic. (Names decoded with
    # surrogateescape, as os.listdir gives undecodable ones, encode fine.)
    try:
        os.fsencode(p)
    except UnicodeEncodeError as e:
        raise ValueError(f"{p!r} cannot be a file name: {e.reason}") from None
    return p


def _paths(paths: Iterable[StrPath], one: str) -> list[str]:
    # A str is an iterable of one-letter "paths": refuse it, not read "m", "o", ...
    if isinstance(paths, (str, bytes)) or hasattr(paths, "__fspath__"):
        raise TypeError(f"expected a list of paths, got one path ({one})")
    return [_fspath(p) for p in paths]


def _connections(connections: Optional[int]) -> Optional[int]:
    if connections is not None and (
        not isinstance(connections, int) or isinstance(connections, bool) or not 1 <= connections <= _native.MAX_THREADS
    ):
        raise ValueError(f"connections must be an int from 1 to {_native.MAX_THREADS}, or None; got {connections!r}")
    return connections


def _urls(allow_http: bool, connections: Optional[int], ca_file: Optional[StrPath]) -> Dict[str, Any]:
    """The keywords of every native call that reads paths: how URLs are read."""
    return {
        "allow_http": bool(allow_http),
        "connections": _connections(connections),
        "ca_file": None if ca_file is None else _fspath(ca_file),
    }


def _threads(threads: Optional[int]) -> Optional[int]:
    if threads is not None and (
        not isinstance(threads, int) or isinstance(threads, bool) or not 1 <= threads <= _native.MAX_THREADS
    ):
        raise ValueError(f"threads must be an int from 1 to {_native.MAX_THREADS}, or None; got {threads!r}")
    return threads


def label(
    path: StrPath,
    threads: Optional[int] = None,
    *,
    join_shards: bool = True,
    mmap: bool = True,
    verify_blobs: bool = False,
    cache: Optional[bool] = None,
    allow_http: bool = False,
    connections: Optional[int] = None,
    ca_file: Optional[StrPath] = None,
) -> str:
    """The label of the model at ``path``: 64 lowercase hex digits.

    ``threads``: hash on at most this many threads, 1 to 1024 (default:
    ``RAYON_NUM_THREADS``, else all cores); ``join_shards=False`` labels one
    shard of a split model alone; ``mmap=False`` reads with ``pread``
    instead of mapping; ``verify_blobs=True`` also checks every Ollama
    weights blob against its digest (a store audit; the label is the same).
    ``cache=True`` takes the digests of files unchanged since an earlier run
    from the verified-leaf cache (``gguf-digest --cache``), ``False`` reads
    every byte, ``None`` (the default) asks ``GGUF_DIGEST_CACHE``.

    ``path`` may be a URL (see the module's help): ``allow_http=True``
    reads ``http://`` URLs (and cloud services reached over plain HTTP);
    ``connections``: at most this many range requests in flight at once
    (1 to 1024; default 8); ``ca_file``: a PEM file of certificate
    authorities trusted for HTTPS beside the system's.
    """
    return labels(
        [path],
        threads,
        join_shards=join_shards,
        mmap=mmap,
        verify_blobs=verify_blobs,
        cache=cache,
        allow_http=allow_http,
        connections=connections,
        ca_file=ca_file,
    )[0]


def labels(
    paths: Iterable[StrPath],
    threads: Optional[int] = None,
    *,
    join_shards: bool = True,
    mmap: bool = True,
    verify_blobs: bool = False,
    cache: Optional[bool] = None,
    allow_http: bool = False,
    connections: Optional[int] = None,
    ca_file: Optional[StrPath] = None,
) -> list[str]:
    """The labels of many models, in order, hashed together as the command
    does (every tensor of every file on one pool of ``threads`` threads;
    default: ``RAYON_NUM_THREADS``, else all cores). One label per path:
    the first model that cannot be labelled raises :class:`Error` (a later
    shard of a split model too, even beside its first shard, unless its set
    has an index: then any shard names the model). A model is read once
    however many of its shards are named. URLs as in :func:`label`."""
    return _native.labels(
        _paths(paths, "use label() for one model"),
        _threads(threads),
        join_shards=join_shards,
        mmap=mmap,
        verify_blobs=verify_blobs,
        cache=cache,
        **_urls(allow_http, connections, ca_file),
    )


@dataclass(frozen=True)
class Tensor:
    """One tensor, as it enters the skeleton."""

    name: str
    """Its name (invalid UTF-8 replaced by U+FFFD)."""
    type: str
    """Its ggml type (``"Q4_K"``, ``"F16"``) or safetensors dtype (``"BF16"``)."""
    shape: Tuple[int, ...]
    """Its dimensions as the format lists them (GGUF: fastest-varying first)."""
    nbytes: int
    """Bytes of data."""
    sha256: str
    """SHA-256 of its data (little-endian), hex."""


@dataclass(frozen=True, eq=False)
class Leaf:
    """One metadata value: a GGUF KV, or a safetensors ``__metadata__`` entry.

    Leaves are equal when they enter the skeleton alike: a float by its
    ``bits``, so a NaN leaf equals itself (and a model its reopened self)."""

    key: str
    type: str
    """GGUF: the value type (``"UINT32"``, ``"STRING"``, ``"ARRAY"``); safetensors: ``"STRING"``."""
    value: Union[bool, int, float, str, None]
    """A GGUF scalar (NaN and infinities included), a GGUF string of up to
    1 MiB (invalid UTF-8 replaced by U+FFFD), or a safetensors string;
    ``None`` for GGUF arrays and longer strings. GGUF strings and arrays
    enter the skeleton through ``sha256``, which binds them whole."""
    sha256: Optional[str]
    """The SHA-256 a GGUF string or array enters the skeleton with, hex; else ``None``."""
    bits: Optional[str] = None
    """A GGUF float's bit pattern as stored (big-endian hex), which tells
    NaNs apart; else ``None``."""

    def _identity(self) -> Tuple[Any, ...]:
        return (self.key, self.type, self.value if self.bits is None else self.bits, self.sha256)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Leaf):
            return NotImplemented
        return self._identity() == other._identity()

    def __hash__(self) -> int:
        return hash(self._identity())


@dataclass(frozen=True)
class Component:
    """One component of an Ollama model or of a directory."""

    media_type: str
    """The layer's media type (Ollama); empty for a directory's component."""
    name: str
    kind: str
    """Ollama: ``"gguf"``, ``"safetensors"``, ``"config"`` or ``"blob"``;
    a directory: ``"SFTN"``, ``"GGUF"`` or ``"FILE"``."""
    digest: Optional[str]
    """The GGUF or safetensors label for weights; the SHA-256 of the bytes otherwise."""
    layers: Tuple[str, ...]
    """The digests of the layers it came from (Ollama; empty for a directory)."""
    files: Tuple[str, ...] = ()
    """The relative paths of its files (a directory; empty for Ollama)."""


@dataclass(frozen=True)
class Model:
    """A labelled model: what :func:`open` returns."""

    path: str
    """The path or reference it was opened by (a URL without its
    credentials or query)."""
    format: str
    """``"gguf"``, ``"safetensors"``, ``"ollama"`` or ``"directory"``."""
    contract: str
    """The contract its label follows (``"canonical-skeleton-v1"``, …)."""
    label: str
    files: Tuple[str, ...]
    """Every file whose bytes are hashed, once each, the first one given
    first: a split model's shards; for Ollama, the blobs (its manifest, at
    ``json()["manifest"]``, and its config blob are read but not listed)."""
    metadata: Tuple[Leaf, ...]
    """GGUF KVs and safetensors metadata (empty for Ollama: see ``components``)."""
    tensors: Tuple[Tensor, ...]
    """Every tensor, in the order the ``--json`` output lists them (empty for Ollama)."""
    components: Tuple[Component, ...]
    """Ollama: every component; empty for the other formats."""
    _skeleton: bytes = field(repr=False)
    _json: str = field(repr=False)

    def skeleton(self) -> bytes:
        """The canonical skeleton: ``hashlib.sha256(m.skeleton()).hexdigest() == m.label``."""
        return self._skeleton

    def json(self) -> Dict[str, Any]:
        """The model's entry of ``gguf-digest --json``: every field, per format."""
        parsed: Dict[str, Any] = _json.loads(self._json)
        return parsed


def _float(kv: Dict[str, Any]) -> Any:
    # JSON has no NaN or infinity: --json gives those as null, with the bits.
    bits = kv.get("bits")
    if kv.get("value") is None and bits is not None:
        return struct.unpack(">f" if len(bits) == 8 else ">d", bytes.fromhex(bits))[0]
    return kv.get("value")


def _leaves(entry: Dict[str, Any], strings: Sequence[Optional[bytes]]) -> Tuple[Leaf, ...]:
    if "kvs" in entry:
        # `strings` has one entry (bytes or None) per KV, in the entry's order.
        return tuple(
            Leaf(
                kv["key"],
                kv["type"],
                _float(kv) if raw is None else raw.decode("utf-8", "replace"),
                kv.get("sha256"),
                kv.get("bits"),
            )
            for kv, raw in zip(entry["kvs"], strings)
        )
    return tuple(
        Leaf(key, "STRING", value, None)
        for group in entry.get("metadata_groups", [])
        for key, value in (group.get("metadata") or {}).items()
    )


def _tensors(entry: Dict[str, Any]) -> Tuple[Tensor, ...]:
    return tuple(
        Tensor(
            t["name"],
            t.get("type", t.get("dtype", "")),
            tuple(t["dims"] if "dims" in t else t["shape"]),
            t["nbytes"],
            t["sha256"],
        )
        for t in entry.get("tensors", [])
    )


def _component(c: Dict[str, Any]) -> Component:
    if "media_type" in c:
        layers = tuple(layer["digest"] for layer in c["layers"])
        return Component(c["media_type"], c["name"], c["kind"], c.get("digest"), layers)
    # A directory's component (directory-skeleton-v1): kind, name, digest, files.
    return Component("", c["name"], c["kind"], c.get("digest"), (), tuple(f["path"] for f in c["files"]))


def _components(entry: Dict[str, Any]) -> Tuple[Component, ...]:
    return tuple(_component(c) for c in entry.get("components", []))


def open(
    path: StrPath,
    threads: Optional[int] = None,
    *,
    join_shards: bool = True,
    mmap: bool = True,
    verify_blobs: bool = False,
    cache: Optional[bool] = None,
    allow_http: bool = False,
    connections: Optional[int] = None,
    ca_file: Optional[StrPath] = None,
) -> Model:
    """Opens and labels the model at ``path``: its label, metadata leaves,
    tensors (with their data's SHA-256), files and skeleton. URLs as in
    :func:`label`."""
    fmt, contract, lbl, entry_json, skeleton, files, strings = _native.open_model(
        _fspath(path),
        _threads(threads),
        join_shards=join_shards,
        mmap=mmap,
        verify_blobs=verify_blobs,
        cache=cache,
        **_urls(allow_http, connections, ca_file),
    )
    # As the model names itself: a URL without its credentials.
    p = _native.shown(_fspath(path))
    entry = _json.loads(entry_json)
    return Model(
        path=p,
        format=fmt,
        contract=contract,
        label=lbl,
        files=tuple(files),
        metadata=_leaves(entry, strings),
        tensors=_tensors(entry),
        components=_components(entry),
        _skeleton=skeleton,
        _json=entry_json,
    )


@dataclass(frozen=True)
class CheckResult:
    """One checked line of a label list, or one subject of a statement."""

    line: int
    """The line's number in the list (the subject's number in a statement), from 1."""
    path: str
    """The name as the list or statement gives it."""
    expected: str
    actual: Optional[str]
    """The label computed now; ``None`` when the model could not be read."""
    error: Optional[Error]
    """Why the model could not be read, else ``None``."""

    @property
    def ok(self) -> bool:
        """True when the label matched."""
        return self.actual == self.expected


def _results(rows: Sequence[Tuple[int, str, str, Optional[str], Optional[Error]]]) -> list[CheckResult]:
    return [CheckResult(line, path, expected, actual, error) for line, path, expected, actual, error in rows]


def check(
    sums: StrPath,
    *,
    ignore_missing: bool = False,
    strict: bool = False,
    threads: Optional[int] = None,
    join_shards: bool = True,
    mmap: bool = True,
    verify_blobs: bool = False,
    cache: Optional[bool] = None,
    allow_http: bool = False,
    connections: Optional[int] = None,
    ca_file: Optional[StrPath] = None,
) -> list[CheckResult]:
    """Verifies a list of labels (``gguf-digest`` output, ``sha256sum``
    style) by ``gguf-digest --check``'s rules: one result per entry, in
    order; names are read relative to the working directory, as the command
    does. The list verifies exactly when the result is not empty and every
    result is ``ok`` (what ``--check`` reports with exit status 0).

    Misformatted lines are skipped with a ``UserWarning`` saying how many
    (the command's warning), or with ``strict=True`` raise :class:`Error`;
    a list without one well-formed line raises; ``ignore_missing=True``
    leaves out entries whose file does not exist. The list is a file; its
    entries may be URLs, read as in :func:`label`.
    """
    name = _fspath(sums)
    misformatted, rows = _native.check(
        name,
        _threads(threads),
        ignore_missing=ignore_missing,
        strict=strict,
        join_shards=join_shards,
        mmap=mmap,
        verify_blobs=verify_blobs,
        cache=cache,
        **_urls(allow_http, connections, ca_file),
    )
    if misformatted:
        what = "1 line is" if misformatted == 1 else f"{misformatted} lines are"
        warnings.warn(f"{name}: {what} improperly formatted", UserWarning, stacklevel=2)
    return _results(rows)


def statement(
    paths: Sequence[StrPath],
    *,
    leaves: bool = False,
    root: Optional[StrPath] = None,
    threads: Optional[int] = None,
    cache: Optional[bool] = None,
    allow_http: bool = False,
    connections: Optional[int] = None,
    ca_file: Optional[StrPath] = None,
) -> str:
    """The in-toto Statement v1 of these models, byte for byte what
    ``gguf-digest statement`` prints: one subject per model, named as given
    or, with ``root``, relative to that directory (where :func:`verify` will
    look), whose ``sha256`` digest is its label; a name ``verify`` would
    refuse (absolute, with ``..``, ``-``, outside ``root``) raises
    :class:`Error` before anything is labelled. A later shard named with its
    first shard is part of that subject, as in the command. ``leaves=True``
    adds every model's KV and tensor leaves to the predicate. Sign it with
    any DSSE or Sigstore tool. A URL (read as in :func:`label`) is a
    subject named by the URL, without its credentials or query."""
    names = _paths(paths, "pass [path]")
    if not names:
        # The command needs a model too: a statement must name a subject.
        raise ValueError("a statement needs at least one model")
    return _native.statement(
        names,
        leaves=leaves,
        threads=_threads(threads),
        root=None if root is None else _fspath(root),
        cache=cache,
        **_urls(allow_http, connections, ca_file),
    )


@dataclass(frozen=True)
class Verification:
    """What :func:`verify` found."""

    signature_checked: bool
    """True when a signature verified with one of the keys; False when no key was given."""
    results: Tuple[CheckResult, ...]
    """One result per subject, in the statement's order."""

    @property
    def ok(self) -> bool:
        """True when every subject matched (at least one)."""
        return bool(self.results) and all(r.ok for r in self.results)


def verify(
    path: StrPath,
    *,
    keys: Sequence[StrPath] = (),
    no_signature: bool = False,
    root: Optional[StrPath] = None,
    threads: Optional[int] = None,
    cache: Optional[bool] = None,
    allow_http: bool = False,
    connections: Optional[int] = None,
    ca_file: Optional[StrPath] = None,
) -> Verification:
    """Verifies a statement, DSSE envelope or Sigstore bundle as
    ``gguf-digest verify`` does: with ``keys`` (PEM public keys, Ed25519 or
    ECDSA P-256) a signature must verify with one of them before any subject
    is read (else :class:`SignatureError`, "signature: FAILED", a subclass
    of :class:`Error`, as the command's exit 1); every subject must
    lie under ``root`` (default: the statement's directory), then each is
    relabelled. Without keys it fails closed (:class:`Error`, "no public key
    was given") unless ``no_signature=True`` says to relabel the subjects
    without checking who signed them; the result's ``signature_checked`` is
    then false. A subject named by a URL is read from it, as in
    :func:`label`."""
    if no_signature and keys:
        raise ValueError("keys and no_signature=True exclude each other")
    signed, rows = _native.verify_statement(
        _fspath(path),
        _paths(keys, "pass keys=[path]"),
        None if root is None else _fspath(root),
        _threads(threads),
        no_signature,
        cache=cache,
        **_urls(allow_http, connections, ca_file),
    )
    return Verification(signed, tuple(_results(rows)))


def ollama_models() -> list[str]:
    """Every model in the Ollama store (``$OLLAMA_MODELS``, else
    ``~/.ollama/models``) as ``ollama:host/namespace/model:tag``, sorted:
    what ``gguf-digest ollama:`` labels. ``labels(ollama_models())`` labels them all.
    Each entry of the store that is no manifest (a stray file or directory, a
    name Ollama would not list) is skipped with a ``UserWarning`` naming it,
    as the command reports it."""
    models, strays = _native.ollama_models()
    for stray in strays:
        warnings.warn(stray, UserWarning, stacklevel=2)
    return models
