"""Wrong on purpose: `mypy --strict` must reject every marked line, which
shows that the stubs are seen (scripts/test-python.sh fails if it passes)."""

import gguf_digest

count: int = gguf_digest.label("model.gguf")  # a str, not an int
gguf_digest.labels("model.gguf", threads="2")  # threads is an int
model = gguf_digest.open("model.gguf")
model.skeleton().upper(1)  # bytes.upper takes no argument
first: str = model.tensors[0].shape  # a tuple of ints
e = gguf_digest.Error("x")
offset: str = e.offset  # an int or None
