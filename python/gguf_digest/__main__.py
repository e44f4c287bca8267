"""``python -m gguf_digest``: the ``gguf-digest`` command."""

from ._cli import main

main()
