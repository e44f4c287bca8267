#!/usr/bin/env python3
"""Seeds for the pt_pickle and pt_zip fuzz targets (docs/FUZZING.md).

Usage: /usr/bin/python3 fuzz/pt_seeds.py [FIXTURE_DIR] (needs torch; run from
anywhere). Writes fuzz/corpus/pt_pickle/ and fuzz/corpus/pt_zip/:

- small checkpoints written here by torch.save (zip and legacy, several
  pickle protocols, dtypes, shared storages, views, nested containers);
- the checkpoints inside the wheels of FIXTURE_DIR (default
  ~/.cache/gguf-digest/pt-fixtures, made by the interop tests' setup).

pt_pickle gets every zip checkpoint's data.pkl and every pickle of a legacy
file (found by pickletools, never executed); pt_zip gets every zip
checkpoint of at most 64 KiB (the campaign's -max_len) whole.
"""
import collections
import hashlib
import io
import os
import pickletools
import sys
import zipfile

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
MAX_LEN = 65536


def put(target, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, hashlib.sha1(data).hexdigest()), "wb") as f:
        f.write(data)


def pickles(data):
    """Every pickle of a legacy file, up to its storages' raw bytes."""
    f = io.BytesIO(data)
    out = []
    for _ in range(5):
        start = f.tell()
        try:
            for _op, _arg, _pos in pickletools.genops(f):
                pass
        except Exception:
            break
        out.append(data[start : f.tell()])
    return out


def hollowed(data):
    """A large zip checkpoint written again (by zipfile, stored) with every
    storage cut to its first 8 bytes: its names and shape under -max_len."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as z, zipfile.ZipFile(out, "w") as w:
        for info in z.infolist():
            body = z.read(info)
            if "/data/" in info.filename:
                body = body[:8]
            w.writestr(info.filename, body)
    return out.getvalue()


def add_checkpoint(data):
    if data[:4] == b"PK\x03\x04":
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            for n in z.namelist():
                if n.endswith("/data.pkl"):
                    put("pt_pickle", z.read(n))
        if len(data) <= MAX_LEN:
            put("pt_zip", data)
        else:
            put("pt_zip", hollowed(data))
    else:
        for p in pickles(data):
            put("pt_pickle", p)


def generated():
    torch.manual_seed(0)
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    objs = [
        {"w": base, "b": torch.zeros(6)},
        collections.OrderedDict([("a.weight", base.t()), ("a.bias", base[1]), ("c", base[:, 2:5])]),
        {
            "f16": torch.ones(3, dtype=torch.float16),
            "bf16": torch.ones(2, 2, dtype=torch.bfloat16),
            "f64": torch.ones(1, dtype=torch.float64),
            "i8": torch.tensor([-1, 2], dtype=torch.int8),
            "u8": torch.tensor([1, 2], dtype=torch.uint8),
            "i16": torch.tensor([1], dtype=torch.int16),
            "i32": torch.tensor([1], dtype=torch.int32),
            "i64": torch.tensor([1, 2, 3]),
            "bool": torch.tensor([True, False]),
            "c64": torch.ones(2, dtype=torch.complex64),
            "scalar": torch.tensor(3.5),
            "empty": torch.empty(0, 3),
        },
        {
            "model": {"layer": {"weight": base, "tied": base}},
            "epoch": 3,
            "lr": 0.001,
            "name": "run-ü",
            "flags": [True, False, None],
            "shape": (4, 6),
            "bytes": b"\x00\x01",
            "big": 2**70,
            "neg": -(2**40),
            "nested": [[1, 2], {"k": (3,)}],
        },
        [base, base.t().contiguous(), base[::2, ::3]],
        {"expanded": torch.ones(1, 3).expand(4, 3), "strided": torch.ones(8)[::2]},
    ]
    for obj in objs:
        for zipped in (True, False):
            for proto in (2, 4, 5):
                buf = io.BytesIO()
                try:
                    torch.save(obj, buf, pickle_protocol=proto, _use_new_zipfile_serialization=zipped)
                except Exception:
                    continue
                yield buf.getvalue()


def fixtures(root):
    if not os.path.isdir(root):
        return
    for w in sorted(os.listdir(root)):
        if not w.endswith(".whl"):
            continue
        with zipfile.ZipFile(os.path.join(root, w)) as z:
            for n in z.namelist():
                if n.endswith((".pt", ".pth", ".ckpt", ".bin")):
                    yield z.read(n)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.expanduser("~/.cache/gguf-digest/pt-fixtures")
    for data in generated():
        add_checkpoint(data)
    for data in fixtures(root):
        add_checkpoint(data)
    for t in ("pt_pickle", "pt_zip"):
        d = os.path.join(HERE, "corpus", t)
        files = os.listdir(d) if os.path.isdir(d) else []
        size = sum(os.path.getsize(os.path.join(d, f)) for f in files)
        print(f"{t}: {len(files)} seeds, {size} bytes")


if __name__ == "__main__":
    main()
