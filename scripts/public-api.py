#!/usr/bin/env python3
"""The public API of the crate `gguf-digest`, one line per item, checked.

    python3 scripts/public-api.py            # fail (exit 1, with the diff) if the
                                             # API differs from docs/public-api.txt
    python3 scripts/public-api.py --bless    # re-record docs/public-api.txt

Reads rustdoc's JSON (`cargo rustdoc ... --output-format json`, unstable, so
run with RUSTC_BOOTSTRAP=1 on the stable toolchain) of the facade and of the
three layer crates it re-exports from: every public path of the facade, and
for each item its signature (a function's), fields, variants, methods and
trait implementations, followed into the layer crate that defines it. A type
the front names but does not export is shown by its path in its layer crate
(`gguf_digest_core::...`), so a leak of a layer's item is seen too.
docs/adr/0042-public-front.md says why this and not `cargo public-api`.
"""

import difflib
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RECORD = ROOT / "docs" / "public-api.txt"
PACKAGES = ["gguf-digest", "gguf-digest-core", "gguf-digest-formats", "gguf-digest-provenance"]
# rustdoc JSON's layout changes with its format version; these are the ones
# this script was written for (rustc 1.95's is 57).
FORMAT_VERSIONS = {57}
# Auto traits rustdoc reports that are no promise of the crate (unstable).
UNSTABLE_AUTO_TRAITS = {"core::marker::Freeze", "core::marker::UnsafeUnpin"}


def target_dir():
    """A target directory of its own: cargo rebuilds every crate whose
    RUSTC_BOOTSTRAP differs, so sharing the build's would rebuild it twice."""
    meta = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--no-deps"],
        cwd=ROOT, check=True, capture_output=True, text=True,
    )
    return Path(json.loads(meta.stdout)["target_directory"]) / "public-api"


def rustdoc_json():
    """Each package's rustdoc JSON, by crate name."""
    env = dict(os.environ, RUSTC_BOOTSTRAP="1")
    docs = {}
    target = target_dir()
    out = target / "doc"
    for package in PACKAGES:
        subprocess.run(
            ["cargo", "rustdoc", "--quiet", "--target-dir", str(target), "-p", package, "--lib", "--",
             "-Z", "unstable-options", "--output-format", "json", "-A", "warnings"],
            cwd=ROOT, check=True, env=env,
        )
        name = package.replace("-", "_")
        doc = json.loads((out / f"{name}.json").read_text())
        if doc["format_version"] not in FORMAT_VERSIONS:
            sys.exit(f"rustdoc JSON format {doc['format_version']}: this script reads {sorted(FORMAT_VERSIONS)}; "
                     "update scripts/public-api.py to it")
        docs[name] = doc
    return docs


class Crate:
    """One crate's JSON: its items, and its own items by path."""

    def __init__(self, doc):
        self.doc = doc
        self.index = doc["index"]
        self.by_path = {tuple(s["path"]): int(i) for i, s in doc["paths"].items() if s["crate_id"] == 0}

    def item(self, id_):
        return self.index.get(str(id_))

    def path_of(self, id_):
        s = self.doc["paths"].get(str(id_))
        return "::".join(s["path"]) if s else None


class Lister:
    def __init__(self, docs):
        self.crates = {name: Crate(doc) for name, doc in docs.items()}
        self.facade = self.crates["gguf_digest"]
        # Where each item the front exports lives, by its defining path,
        # so that types are named by their facade path.
        self.exported = {}
        # (the item's path, what the line is: 0 the item, 1 a field or
        # variant, 2 a method, 3 a trait implementation, the line itself)
        self.lines = set()
        self.owner = None

    def add(self, order, line):
        self.lines.add((self.owner, order, line))

    # ---- finding items ----

    def resolve(self, crate, id_):
        """(crate, item) of an id seen in `crate`, following it into the
        crate that defines it; None when it is not one of ours."""
        item = crate.item(id_)
        if item is not None:
            return crate, item
        summary = crate.doc["paths"].get(str(id_))
        if not summary:
            return None
        other = self.crates.get(summary["path"][0])
        if other is None:
            return None
        own = other.by_path.get(tuple(summary["path"]))
        if own is None or other.item(own) is None:
            return None
        return other, other.item(own)

    def walk(self, crate, module, prefix):
        """Each public item under `prefix`: (facade path, crate, item)."""
        for id_ in module["inner"]["module"]["items"]:
            item = crate.item(id_)
            if item is None:
                continue
            inner = item["inner"]
            if "use" in inner:
                use = inner["use"]
                found = self.resolve(crate, use["id"]) if use["id"] is not None else None
                if found is None:
                    yield f"{prefix}::{use['name']}", None, use
                    continue
                c, target = found
                name = use["name"]
                if use["is_glob"]:
                    yield from self.walk(c, target, prefix)
                    continue
            else:
                c, target, name = crate, item, item["name"]
            path = f"{prefix}::{name}"
            yield path, c, target
            if "module" in target["inner"]:
                yield from self.walk(c, target, path)

    # ---- naming types ----

    def type_name(self, crate, id_, written):
        found = self.resolve(crate, id_)
        if found is not None:
            c, item = found
            key = (id(c), item["id"])
            if key in self.exported:
                return self.exported[key]
            return c.path_of(item["id"]) or written
        return crate.path_of(id_) or written

    def path(self, crate, p):
        name = self.type_name(crate, p["id"], p["path"])
        return name + self.args(crate, p.get("args"))

    def args(self, crate, args):
        if not args:
            return ""
        if "angle_bracketed" in args:
            a = args["angle_bracketed"]
            parts = []
            for arg in a["args"]:
                if "type" in arg:
                    parts.append(self.ty(crate, arg["type"]))
                elif "lifetime" in arg:
                    parts.append(arg["lifetime"])
                elif "const" in arg:
                    parts.append(arg["const"].get("expr", "_"))
                else:
                    parts.append("_")
            for c in a["constraints"]:
                b = c["binding"]
                if "equality" in b:
                    eq = b["equality"]
                    parts.append(f"{c['name']} = " + (self.ty(crate, eq["type"]) if "type" in eq else str(eq)))
                else:
                    parts.append(f"{c['name']}: " + self.bounds(crate, b["constraint"]))
            return "<" + ", ".join(parts) + ">" if parts else ""
        if "parenthesized" in args:
            p = args["parenthesized"]
            out = "(" + ", ".join(self.ty(crate, t) for t in p["inputs"]) + ")"
            return out + (" -> " + self.ty(crate, p["output"]) if p["output"] else "")
        return ""

    def bounds(self, crate, bounds):
        parts = []
        for b in bounds:
            if "trait_bound" in b:
                t = b["trait_bound"]
                parts.append(("?" if t.get("modifier") == "maybe" else "") + self.path(crate, t["trait"]))
            elif "outlives" in b:
                parts.append(b["outlives"])
            else:
                parts.append("use<..>")
        return " + ".join(parts)

    def ty(self, crate, t):
        if t is None:
            return "()"
        (kind, v), = t.items()
        if kind == "resolved_path":
            return self.path(crate, v)
        if kind == "dyn_trait":
            parts = [self.path(crate, p["trait"]) for p in v["traits"]]
            if v.get("lifetime"):
                parts.append(v["lifetime"])
            return "dyn " + " + ".join(parts)
        if kind in ("generic", "primitive"):
            return v
        if kind == "tuple":
            return "(" + ", ".join(self.ty(crate, x) for x in v) + ("," if len(v) == 1 else "") + ")"
        if kind == "slice":
            return "[" + self.ty(crate, v) + "]"
        if kind == "array":
            return f"[{self.ty(crate, v['type'])}; {v['len']}]"
        if kind == "impl_trait":
            return "impl " + self.bounds(crate, v)
        if kind == "borrowed_ref":
            lt = v["lifetime"] + " " if v.get("lifetime") else ""
            return "&" + lt + ("mut " if v["is_mutable"] else "") + self.ty(crate, v["type"])
        if kind == "raw_pointer":
            return ("*mut " if v["is_mutable"] else "*const ") + self.ty(crate, v["type"])
        if kind == "qualified_path":
            trait = self.path(crate, v["trait"]) if v.get("trait") else "_"
            return f"<{self.ty(crate, v['self_type'])} as {trait}>::{v['name']}"
        if kind == "function_pointer":
            sig = v["sig"]
            ins = ", ".join(self.ty(crate, x) for _, x in sig["inputs"])
            return f"fn({ins})" + (" -> " + self.ty(crate, sig["output"]) if sig["output"] else "")
        if kind == "infer":
            return "_"
        return kind

    def generics(self, crate, g):
        params = []
        for p in g["params"]:
            k = p["kind"]
            if "lifetime" in k:
                params.append(p["name"])
            elif "type" in k:
                if k["type"].get("is_synthetic"):
                    continue
                b = self.bounds(crate, k["type"]["bounds"])
                params.append(p["name"] + (": " + b if b else ""))
            elif "const" in k:
                params.append(f"const {p['name']}: {self.ty(crate, k['const']['type'])}")
        out = "<" + ", ".join(params) + ">" if params else ""
        wheres = []
        for w in g["where_predicates"]:
            if "bound_predicate" in w:
                bp = w["bound_predicate"]
                wheres.append(self.ty(crate, bp["type"]) + ": " + self.bounds(crate, bp["bounds"]))
        return out, (" where " + ", ".join(wheres) if wheres else "")

    def fn(self, crate, name, f):
        gen, where = self.generics(crate, f["generics"])
        ins = []
        for arg, t in f["sig"]["inputs"]:
            if arg == "self":
                if t == {"generic": "Self"}:
                    ins.append("self")
                elif "borrowed_ref" in t and t["borrowed_ref"]["type"] == {"generic": "Self"}:
                    ins.append("&" + ("mut " if t["borrowed_ref"]["is_mutable"] else "") + "self")
                else:
                    ins.append("self: " + self.ty(crate, t))
            else:
                ins.append(f"{arg}: {self.ty(crate, t)}")
        out = f["sig"]["output"]
        head = f["header"]
        quals = ("const " if head.get("is_const") else "") + ("unsafe " if head.get("is_unsafe") else "")
        return f"{quals}fn {name}{gen}({', '.join(ins)})" + (" -> " + self.ty(crate, out) if out else "") + where

    # ---- describing items ----

    def describe(self, path, crate, item):
        self.owner = path
        add = lambda line: self.add(0, line)  # noqa: E731
        member = lambda line: self.add(1, line)  # noqa: E731
        if crate is None:
            add(f"pub use {path} (outside the workspace: {item['source']})")
            return
        (kind, v), = item["inner"].items()
        if kind == "module":
            add(f"pub mod {path}")
        elif kind == "function":
            add(f"pub {self.fn(crate, path, v)}")
        elif kind == "constant":
            add(f"pub const {path}: {self.ty(crate, v['type'])}")
        elif kind == "static":
            add(f"pub static {path}: {self.ty(crate, v['type'])}")
        elif kind == "type_alias":
            gen, _ = self.generics(crate, v["generics"])
            add(f"pub type {path}{gen} = {self.ty(crate, v['type'])}")
        elif kind == "macro":
            add(f"pub macro {path}!")
        elif kind == "struct":
            gen, where = self.generics(crate, v["generics"])
            k = v["kind"]
            if k == "unit":
                add(f"pub struct {path}{gen}{where}")
            elif "tuple" in k:
                fields = [self.field(crate, f) for f in k["tuple"]]
                add(f"pub struct {path}{gen}({', '.join(fields)}){where}")
            else:
                add(f"pub struct {path}{gen}{where}")
                for fid in k["plain"]["fields"]:
                    f = crate.item(fid)
                    if f is not None:
                        member(f"pub {path}::{f['name']}: {self.ty(crate, f['inner']['struct_field'])}")
            self.impls(path, crate, v["impls"])
        elif kind == "enum":
            gen, where = self.generics(crate, v["generics"])
            add(f"pub enum {path}{gen}{where}")
            for vid in v["variants"]:
                var = crate.item(vid)
                if var is None:
                    continue
                vk = var["inner"]["variant"]["kind"]
                if vk == "plain":
                    member(f"pub {path}::{var['name']}")
                elif "tuple" in vk:
                    member(f"pub {path}::{var['name']}({', '.join(self.field(crate, f) for f in vk['tuple'])})")
                else:
                    member(f"pub {path}::{var['name']}")
                    for fid in vk["struct"]["fields"]:
                        f = crate.item(fid)
                        if f is not None:
                            member(f"pub {path}::{var['name']}::{f['name']}: {self.ty(crate, f['inner']['struct_field'])}")
            self.impls(path, crate, v["impls"])
        elif kind == "trait":
            gen, where = self.generics(crate, v["generics"])
            sup = self.bounds(crate, v["bounds"])
            add(f"pub trait {path}{gen}" + (": " + sup if sup else "") + where)
            for mid in v["items"]:
                m = crate.item(mid)
                if m is None:
                    continue
                if "function" in m["inner"]:
                    self.add(2, f"pub {self.fn(crate, path + '::' + m['name'], m['inner']['function'])}")
                elif "assoc_type" in m["inner"]:
                    member(f"pub type {path}::{m['name']}")
                elif "assoc_const" in m["inner"]:
                    member(f"pub const {path}::{m['name']}: {self.ty(crate, m['inner']['assoc_const']['type'])}")
        else:
            add(f"pub {kind} {path}")

    def field(self, crate, fid):
        if fid is None:
            return "_"
        f = crate.item(fid)
        return self.ty(crate, f["inner"]["struct_field"]) if f else "_"

    def impls(self, path, crate, ids):
        for iid in ids:
            imp = crate.item(iid)
            if imp is None:
                continue
            i = imp["inner"]["impl"]
            if i.get("blanket_impl") is not None:
                continue
            gen, where = self.generics(crate, i["generics"])
            if i["trait"] is None:
                for mid in i["items"]:
                    m = crate.item(mid)
                    if m is not None and m["visibility"] == "public" and "function" in m["inner"]:
                        self.add(2, f"pub {self.fn(crate, path + '::' + m['name'], m['inner']['function'])}")
                    elif m is not None and m["visibility"] == "public" and "constant" in m["inner"]:
                        self.add(1, f"pub const {path}::{m['name']}: {self.ty(crate, m['inner']['constant']['type'])}")
            else:
                neg = "!" if i.get("is_negative") else ""
                trait = self.path(crate, i["trait"])
                if trait in UNSTABLE_AUTO_TRAITS:
                    continue
                self.add(3, f"impl{gen} {neg}{trait} for {self.ty(crate, i['for'])}{where}")

    def run(self):
        root = self.facade.item(self.facade.doc["root"])
        items = list(self.walk(self.facade, root, "gguf_digest"))
        for path, crate, item in items:
            if crate is not None:
                self.exported[(id(crate), item["id"])] = path
        for path, crate, item in items:
            self.describe(path, crate, item)
        return [line for _, _, line in sorted(self.lines)]


def main():
    bless = sys.argv[1:] == ["--bless"]
    if sys.argv[1:] not in ([], ["--bless"]):
        sys.exit(__doc__)
    lines = Lister(rustdoc_json()).run()
    text = "".join(line + "\n" for line in lines)
    header = ("# The public API of the crate gguf-digest (default features), one item a line.\n"
              "# Written by `python3 scripts/public-api.py --bless`; checked in CI (docs/adr/0042).\n")
    text = header + text
    if bless:
        RECORD.write_text(text)
        print(f"{RECORD.relative_to(ROOT)}: {len(lines)} lines")
        return
    recorded = RECORD.read_text() if RECORD.exists() else ""
    if recorded != text:
        sys.stdout.writelines(difflib.unified_diff(
            recorded.splitlines(keepends=True), text.splitlines(keepends=True),
            fromfile="docs/public-api.txt (recorded)", tofile="the public API now"))
        print("\nThe public API of gguf-digest changed (above). If that is meant, re-record it with\n"
              "    python3 scripts/public-api.py --bless\nand commit docs/public-api.txt with the change.")
        sys.exit(1)
    print(f"the public API matches docs/public-api.txt ({len(lines)} lines)")


if __name__ == "__main__":
    main()
