#!/usr/bin/env python3
"""Writes the checkpoints of the PyTorch speed benchmark (docs/BENCHMARKS.md).

Usage: /usr/bin/python3 bench/pt_make.py OUT_DIR [LAYERS]  (needs torch)

One state dict shaped like a TinyLlama-1.1B (hidden 2048, MLP 5632, 4
key/value heads of 64, vocabulary 32000), LAYERS decoder layers (default
20: 2.0 GiB), seeded random values: the embedding and the norms float32,
every other weight bfloat16. Written four ways, all of the same values, so
all four have one label:

- zip.pt        torch.save, zip format (every tensor contiguous);
- legacy.pt     torch.save(_use_new_zipfile_serialization=False);
- views.pt      zip format, every 2-D weight a transposed view (stride
                (1, rows)) of a storage holding its transpose;
- model.safetensors  the same tensors as safetensors (written here: the
                format is a length, a JSON header and the bytes).
"""
import json
import os
import struct
import sys

import torch

out = sys.argv[1]
layers = int(sys.argv[2]) if len(sys.argv) > 2 else 20
H, I, KV, V = 2048, 5632, 256, 32000
torch.manual_seed(34)


def w(*shape, dtype=torch.bfloat16):
    return torch.randn(*shape, dtype=torch.float32).to(dtype)


sd = {"model.embed_tokens.weight": w(V, H, dtype=torch.float32)}
for n in range(layers):
    p = f"model.layers.{n}."
    sd[p + "self_attn.q_proj.weight"] = w(H, H)
    sd[p + "self_attn.k_proj.weight"] = w(KV, H)
    sd[p + "self_attn.v_proj.weight"] = w(KV, H)
    sd[p + "self_attn.o_proj.weight"] = w(H, H)
    sd[p + "mlp.gate_proj.weight"] = w(I, H)
    sd[p + "mlp.up_proj.weight"] = w(I, H)
    sd[p + "mlp.down_proj.weight"] = w(H, I)
    sd[p + "input_layernorm.weight"] = w(H, dtype=torch.float32)
    sd[p + "post_attention_layernorm.weight"] = w(H, dtype=torch.float32)
sd["model.norm.weight"] = w(H, dtype=torch.float32)
sd["lm_head.weight"] = w(V, H)
os.makedirs(out, exist_ok=True)
torch.save(sd, os.path.join(out, "zip.pt"))
torch.save(sd, os.path.join(out, "legacy.pt"), _use_new_zipfile_serialization=False)
views = {k: (v.t().contiguous().t() if v.dim() == 2 else v) for k, v in sd.items()}
assert all(torch.equal(views[k], sd[k]) for k in sd)
torch.save(views, os.path.join(out, "views.pt"))
del views

names = {torch.float32: "F32", torch.bfloat16: "BF16"}
header, at = {}, 0
for k, v in sd.items():
    n = v.numel() * v.element_size()
    header[k] = {"dtype": names[v.dtype], "shape": list(v.shape), "data_offsets": [at, at + n]}
    at += n
text = json.dumps(header, separators=(",", ":")).encode()
text += b" " * (-len(text) % 8)
with open(os.path.join(out, "model.safetensors"), "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text)
    for v in sd.values():
        f.write((v.view(torch.int16) if v.dtype == torch.bfloat16 else v).numpy().tobytes())
for f in sorted(os.listdir(out)):
    print(f, os.path.getsize(os.path.join(out, f)))
