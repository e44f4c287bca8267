#!/usr/bin/env python3
"""Times transposed views against the zip form for several builds side by
side (docs/BENCHMARKS.md, issue #34 "Speed": views ≤ 1.3 × zip).

Usage: python3 bench/pt_views_ab.py DIR ROUNDS NAME=BINARY [NAME=BINARY ...]

DIR holds zip.pt and views.pt from bench/pt_make.py (the other files it
writes may be deleted). Each round reads both files once with `cat` (a
warm page cache), then runs every (build, file) once, the order rotated
round by round; prints each run, the medians of wall time and of user +
system CPU time, views / zip per build (medians, and each round's, whose
runs were side by side), and the load average before and after: the
machine may be shared, and the ratios are the steadier figures. Checks
first that every build gives both files one label.
"""
import os
import statistics
import subprocess
import sys
import time

d, rounds = sys.argv[1], int(sys.argv[2])
builds = dict(a.split("=", 1) for a in sys.argv[3:])
files = ("zip.pt", "views.pt")


def run(argv):
    t = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    if status != 0:
        sys.exit(f"{argv} failed: {status}")
    return wall, ru.ru_utime + ru.ru_stime, out.split()[0].decode()


labels = {(b, f): run([exe, os.path.join(d, f)])[2] for b, exe in builds.items() for f in files}
print("labels:", labels)
if len(set(labels.values())) != 1:
    sys.exit("the builds or the files disagree on the label")
print("load average before:", os.getloadavg())
runs = [(b, f) for b in builds for f in files]
times = {r: [] for r in runs}
for k in range(rounds):
    for f in files:
        subprocess.run(["cat", os.path.join(d, f)], stdout=subprocess.DEVNULL, check=True)
    for b, f in runs[k % len(runs):] + runs[: k % len(runs)]:
        wall, cpu, _ = run([builds[b], os.path.join(d, f)])
        times[(b, f)].append((wall, cpu))
        print(f"round {k + 1}: {b:10} {f:9} {wall:6.2f} s wall {cpu:6.2f} s cpu", flush=True)
print("load average after:", os.getloadavg())
print("\n| build | zip.pt wall (CPU) | views.pt wall (CPU) | views / zip wall (CPU) | per round (wall) |")
print("|---|---|---|---|---|")
for b in builds:
    z, v = times[(b, "zip.pt")], times[(b, "views.pt")]
    zw, zc = statistics.median(w for w, _ in z), statistics.median(c for _, c in z)
    vw, vc = statistics.median(w for w, _ in v), statistics.median(c for _, c in v)
    per = ", ".join(f"{x[0] / y[0]:.2f}" for x, y in zip(v, z))
    print(f"| {b} | {zw:.2f} s ({zc:.2f} s) | {vw:.2f} s ({vc:.2f} s) | {vw / zw:.2f} ({vc / zc:.2f}) | {per} |")
