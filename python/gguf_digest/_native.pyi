# Stubs of the extension module (python/src/lib.rs). The public, documented
# API is gguf_digest/__init__.py; these are what it calls.
from typing import List, Optional, Tuple

__version__: str
MAX_THREADS: int

class Error(Exception):
    """A model could not be labelled, a list or statement could not be read, or a run was refused."""

    argument: Optional[str]
    """The path or reference given that led to the error (a directory, an index, a first
    shard, an ``ollama:`` reference, or the file itself), or None."""
    path: Optional[str]
    """The file concerned, or None."""
    offset: Optional[int]
    """The byte offset in that file, or None."""
    subject: Optional[str]
    """The key or tensor concerned ("key 'general.name'", "tensor 'output.weight'"), or None."""

class SignatureError(Error):
    """A signed statement none of whose signatures verifies with the keys given."""

_Checked = Tuple[int, str, str, Optional[str], Optional[Error]]

def labels(
    paths: List[str],
    threads: Optional[int] = None,
    join_shards: bool = True,
    mmap: bool = True,
    verify_blobs: bool = False,
    cache: Optional[bool] = None,
    allow_http: bool = False,
    connections: Optional[int] = None,
    ca_file: Optional[str] = None,
) -> List[str]: ...
def open_model(
    path: str,
    threads: Optional[int] = None,
    join_shards: bool = True,
    mmap: bool = True,
    verify_blobs: bool = False,
    cache: Optional[bool] = None,
    allow_http: bool = False,
    connections: Optional[int] = None,
    ca_file: Optional[str] = None,
) -> Tuple[str, str, str, str, bytes, List[str], List[Optional[bytes]]]: ...
def check(
    sums: str,
    threads: Optional[int] = None,
    ignore_missing: bool = False,
    strict: bool = False,
    join_shards: bool = True,
    mmap: bool = True,
    verify_blobs: bool = False,
    cache: Optional[bool] = None,
    allow_http: bool = False,
    connections: Optional[int] = None,
    ca_file: Optional[str] = None,
) -> Tuple[int, List[_Checked]]: ...
def statement(
    paths: List[str],
    leaves: bool = False,
    threads: Optional[int] = None,
    root: Optional[str] = None,
    cache: Optional[bool] = None,
    allow_http: bool = False,
    connections: Optional[int] = None,
    ca_file: Optional[str] = None,
) -> str: ...
def verify_statement(
    path: str,
    keys: List[str] = ...,
    root: Optional[str] = None,
    threads: Optional[int] = None,
    no_signature: bool = False,
    cache: Optional[bool] = None,
    allow_http: bool = False,
    connections: Optional[int] = None,
    ca_file: Optional[str] = None,
) -> Tuple[bool, List[_Checked]]: ...
def ollama_models() -> Tuple[List[str], List[str]]: ...
def shown(path: str) -> str: ...
def main(argv: List[bytes]) -> int: ...
