#!/usr/bin/env python3
# Writes two torch.save-shaped zip checkpoints of one 4096x4096 F32 tensor:
# contiguous (stride (4096, 1)) and a transposed view (stride (1, 4096)).
import struct, sys, zipfile, os
n = int(sys.argv[2]) if len(sys.argv) > 2 else 4096
out = sys.argv[1]
def s(x):
    b = x.encode(); return b"X" + struct.pack("<I", len(b)) + b
def g(m, name): return b"c" + m.encode() + b"\n" + name.encode() + b"\n"
def i(v): return b"J" + struct.pack("<i", v)
def pkl(stride):
    p = b"\x80\x02}q\x00(" + s("w") + g("torch._utils", "_rebuild_tensor_v2") + b"("
    p += b"(" + s("storage") + g("torch", "FloatStorage") + s("0") + s("cpu") + i(n * n) + b"tQ"
    p += i(0) + b"(" + i(n) + i(n) + b"t" + b"(" + i(stride[0]) + i(stride[1]) + b"t"
    p += b"\x89" + g("collections", "OrderedDict") + b")RtR" + b"u."
    return p
data = os.urandom(n * n * 4)
for name, stride in [("contiguous", (n, 1)), ("transposed", (1, n))]:
    with zipfile.ZipFile(f"{out}/{name}.pt", "w", zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", pkl(stride))
        z.writestr("archive/data/0", data)
        z.writestr("archive/version", "3\n")
