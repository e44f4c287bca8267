"""Wrong on purpose: `mypy --strict` must reject every line marked
`# wrong:`, which shows that the stubs are seen (scripts/test-python.sh
checks each marked line, and fails if any passes)."""

import gguf_digest

count: int = gguf_digest.label("model.gguf")  # wrong: a str, not an int
gguf_digest.labels(["model.gguf"], threads="2")  # wrong: threads is an int
model = gguf_digest.open("model.gguf")
model.skeleton().upper(1)  # wrong: bytes.upper takes no argument
first: str = model.tensors[0].shape  # wrong: a tuple of ints
e = gguf_digest.Error("x")
offset: str = e.offset  # wrong: an int or None
ok: str = gguf_digest.check("models.sums")[0].ok  # wrong: a bool
names: int = gguf_digest.ollama_models()  # wrong: a list of str
gguf_digest.label("s3://bucket/m.gguf", connections="8")  # wrong: connections is an int
