"""Pushes models to an OCI registry in the layouts Ollama, CNCF ModelPack and
Docker Model Runner write (test data for `oci://` inputs,
docs/adr/0046-oci-registries.md). Blobs go up through the `oras` package
(PyPI, pinned in scripts/setup-python.sh); each manifest is written here,
byte for byte as its tool writes it, and PUT with its own media type.

usage: oci_push.py ollama    --registry H:P --ref REPO:TAG --store ROOT --manifest PATH
       oci_push.py modelpack --registry H:P --ref REPO:TAG --dir DIR [--annotation cncf|cnai]
                             [--pack raw|tar|mixed] [--tar-format pax|gnu]
                             [--bad symlink|past-end]
       oci_push.py dmr       --registry H:P --ref REPO:TAG (--gguf F ... | --safetensors F ...)
                             [--license F] [--named]
       oci_push.py tamper    --storage DIR --digest sha256:HEX
       (every push: [--user U --password P] for a registry with basic auth)

What is emulated, and where it is in each tool's source (read, never
copied):

  * ollama: the manifest and blobs of an Ollama store (written by
    ollama_store.py as `ollama create` writes them) pushed unchanged, as
    `ollama push` sends them (server/upload.go): the manifest's own bytes,
    Content-Type application/vnd.docker.distribution.manifest.v2+json;
  * modelpack: `modctl build --raw` (github:modelpack/modctl,
    github:modelpack/model-spec specs-go/v1): one layer per file,
    weights `application/vnd.cncf.model.weight.v1.raw`, configs (`*.json`,
    tokenizer files) `.weight.config.v1.raw`, docs (README, LICENSE, `*.md`)
    `.doc.v1.raw`, other files `.code.v1.raw`; each layer annotated with
    its path (`org.cncf.model.filepath`, or with --annotation cnai the
    mid-2025 `org.cnai.model.filepath`) and its file metadata; the config
    `application/vnd.cncf.model.config.v1+json` (descriptor, config,
    modelfs with the diffIds); the manifest an OCI image manifest with
    artifactType `application/vnd.cncf.model.manifest.v1+json`, Go's
    compact JSON; with --pack tar (modctl before `--raw` was its default:
    pkg/archiver/archiver.go, pkg/codec/tar.go) each layer is instead an
    uncompressed tar of its one file at its relative path, media type
    `....v1.tar` (with --annotation cnai the mid-2025
    `application/vnd.cnai.model.*.v1.tar` spelling), written by Python's
    tarfile in the PAX or GNU format (--tar-format); --pack mixed makes
    every other file (in path order) a tar layer; --bad symlink adds a
    symbolic link entry `<path>.link` to the first tar layer of a non-empty
    file, --bad past-end cuts that layer inside its file's data (its blob's
    digest that of the bytes pushed);
  * dmr: `docker model package --gguf` (github:docker/model-runner,
    pkg/distribution): one `application/vnd.docker.ai.gguf.v3` layer per
    GGUF file or shard (`application/vnd.docker.ai.safetensors` per
    safetensors file), a license as `application/vnd.docker.ai.license`,
    the config `application/vnd.docker.ai.model.config.v0.1+json`; with
    --named each weights layer carries `org.cncf.model.filepath` (newer
    versions do);
  * tamper: one byte of a stored blob flipped in the registry's filesystem
    storage (the registry checks digests on upload only).

Prints one JSON object: the manifest's digest and the layers pushed.
"""

import argparse
import hashlib
import json
import os
import io
import sys
import tarfile

import oras.provider

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"


def go_json(obj):
    """Go's encoding/json compact form (keys in struct order as given)."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def sha(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


def descriptor(media_type, data, annotations=None):
    d = {"mediaType": media_type, "digest": sha(data), "size": len(data)}
    if annotations:
        d["annotations"] = annotations
    return d


class Pusher:
    def __init__(self, args, scratch):
        backend = "basic" if args.user else "token"
        self.client = oras.provider.Registry(hostname=args.registry, insecure=True, auth_backend=backend)
        if args.user:
            self.client.auth.set_basic_auth(args.user, args.password)
        self.container = self.client.get_container(f"{args.registry}/{args.ref}")
        self.scratch = scratch
        self.pushed = []

    def blob(self, data, desc):
        path = os.path.join(self.scratch, desc["digest"].replace(":", "-"))
        with open(path, "wb") as f:
            f.write(data)
        layer = {"mediaType": desc["mediaType"], "digest": desc["digest"], "size": desc["size"]}
        r = self.client.upload_blob(path, self.container, layer)
        if r.status_code not in (200, 201, 202):
            sys.exit(f"blob {desc['digest']}: HTTP {r.status_code} {r.text}")
        self.pushed.append(desc["digest"])

    def manifest(self, data, media_type):
        url = f"{self.client.prefix}://{self.container.manifest_url()}"
        r = self.client.do_request(url, "PUT", headers={"Content-Type": media_type}, data=data)
        if r.status_code not in (200, 201):
            sys.exit(f"manifest: HTTP {r.status_code} {r.text}")
        print(json.dumps({"manifest": sha(data), "layers": self.pushed}))


def read(path):
    with open(path, "rb") as f:
        return f.read()


def push_ollama(args, p):
    text = read(args.manifest)
    m = json.loads(text)
    for d in [m["config"], *m["layers"]]:
        p.blob(read(os.path.join(args.store, "blobs", d["digest"].replace(":", "-"))), d)
    p.manifest(text, m.get("mediaType", DOCKER_MANIFEST))


def file_metadata(path, rel):
    st = os.stat(path)
    # modctl's FileMetadata (model-spec specs-go/v1/annotations.go), fixed
    # times so that a test's manifest is reproducible.
    return json.dumps(
        {"name": os.path.basename(rel), "mode": 0o644, "uid": 0, "gid": 0, "size": st.st_size,
         "mtime": "2025-01-01T00:00:00Z", "typeflag": 48},
        separators=(",", ":"),
    )


def modelpack_kind(rel):
    base = os.path.basename(rel).lower()
    if base.endswith((".gguf", ".safetensors", ".bin", ".pt", ".pth", ".onnx")):
        return "weight.v1.raw"
    if base.endswith(".json") or base.startswith("tokenizer") or base in ("merges.txt", "vocab.txt"):
        return "weight.config.v1.raw"
    if base.startswith(("readme", "license")) or base.endswith(".md"):
        return "doc.v1.raw"
    return "code.v1.raw"


def tar_layer(rel, data, fmt, bad):
    """An uncompressed tar of one file at its relative path, as modctl's
    archiver writes it (no directory entries, the end-of-archive blocks)."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format={"pax": tarfile.PAX_FORMAT, "gnu": tarfile.GNU_FORMAT}[fmt]) as t:
        info = tarfile.TarInfo(rel)
        info.size, info.mode, info.mtime = len(data), 0o644, 1735689600
        t.addfile(info, io.BytesIO(data))
        if bad == "symlink":
            link = tarfile.TarInfo(rel + ".link")
            link.type, link.linkname, link.mtime = tarfile.SYMTYPE, os.path.basename(rel), 1735689600
            t.addfile(link)
    raw = out.getvalue()
    if bad == "past-end":
        # The header(s), then half the file's data: its entry runs past the end.
        start = raw.index(data[:64]) if data else 512
        raw = raw[: start + len(data) // 2]
    return raw


def push_modelpack(args, p):
    key = {"cncf": "org.cncf.model.filepath", "cnai": "org.cnai.model.filepath"}[args.annotation]
    layers = []
    count = 0
    bad = args.bad
    for top, dirs, files in os.walk(args.dir):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(top, name)
            rel = os.path.relpath(path, args.dir).replace(os.sep, "/")
            data = read(path)
            ann = {
                "org.cncf.model.file.metadata+json": file_metadata(path, rel),
                "org.cncf.model.file.mediatype.untested": "false",
                key: rel,
            }
            kind = modelpack_kind(rel)
            as_tar = args.pack == "tar" or (args.pack == "mixed" and count % 2 == 0)
            count += 1
            if as_tar:
                data, bad = tar_layer(rel, data, args.tar_format, bad if data else None), bad if not data else None
                prefix = "application/vnd.cnai.model." if args.annotation == "cnai" else "application/vnd.cncf.model."
                d = descriptor(prefix + kind[: -len(".raw")] + ".tar", data, ann)
            else:
                d = descriptor("application/vnd.cncf.model." + kind, data, ann)
            p.blob(data, d)
            layers.append(d)
    config = go_json({
        "descriptor": {"createdAt": "2025-01-01T00:00:00Z", "family": "test", "name": "tiny"},
        "config": {"format": "gguf" if any(l["annotations"][key].endswith(".gguf") for l in layers) else "safetensors"},
        "modelfs": {"type": "layers", "diffIds": [l["digest"] for l in layers]},
    })
    cd = descriptor("application/vnd.cncf.model.config.v1+json", config)
    p.blob(config, cd)
    manifest = {
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST,
        "artifactType": "application/vnd.cncf.model.manifest.v1+json",
        "config": cd,
        "layers": layers,
    }
    p.manifest(go_json(manifest), OCI_MANIFEST)


def push_dmr(args, p):
    files = args.gguf or args.safetensors
    media = "application/vnd.docker.ai.gguf.v3" if args.gguf else "application/vnd.docker.ai.safetensors"
    layers = []
    for path in files:
        data = read(path)
        ann = {"org.cncf.model.filepath": os.path.basename(path)} if args.named else None
        d = descriptor(media, data, ann)
        p.blob(data, d)
        layers.append(d)
    for path in args.license or []:
        data = read(path)
        d = descriptor("application/vnd.docker.ai.license", data)
        p.blob(data, d)
        layers.append(d)
    size = sum(l["size"] for l in layers)
    config = go_json({
        "config": {"format": "gguf" if args.gguf else "safetensors", "size": f"{size} B"},
        "descriptor": {"created": "2025-01-01T00:00:00Z"},
        "rootfs": {"type": "rootfs", "diff_ids": [l["digest"] for l in layers]},
    })
    cd = descriptor("application/vnd.docker.ai.model.config.v0.1+json", config)
    p.blob(config, cd)
    manifest = {"schemaVersion": 2, "mediaType": OCI_MANIFEST, "config": cd, "layers": layers}
    p.manifest(go_json(manifest), OCI_MANIFEST)


def tamper(args):
    hexd = args.digest.split(":", 1)[1]
    path = os.path.join(args.storage, "docker", "registry", "v2", "blobs", "sha256", hexd[:2], hexd, "data")
    with open(path, "r+b") as f:
        f.seek(os.path.getsize(path) // 2)
        b = f.read(1)
        f.seek(-1, os.SEEK_CUR)
        f.write(bytes([b[0] ^ 0x01]))
    print(json.dumps({"tampered": path}))


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("ollama", "modelpack", "dmr"):
        s = sub.add_parser(name)
        s.add_argument("--registry", required=True)
        s.add_argument("--ref", required=True)
        s.add_argument("--user")
        s.add_argument("--password")
        if name == "ollama":
            s.add_argument("--store", required=True)
            s.add_argument("--manifest", required=True)
        elif name == "modelpack":
            s.add_argument("--dir", required=True)
            s.add_argument("--annotation", choices=("cncf", "cnai"), default="cncf")
            s.add_argument("--pack", choices=("raw", "tar", "mixed"), default="raw")
            s.add_argument("--tar-format", choices=("pax", "gnu"), default="pax")
            s.add_argument("--bad", choices=("symlink", "past-end"))
        else:
            g = s.add_mutually_exclusive_group(required=True)
            g.add_argument("--gguf", nargs="+")
            g.add_argument("--safetensors", nargs="+")
            s.add_argument("--license", nargs="*")
            s.add_argument("--named", action="store_true")
    t = sub.add_parser("tamper")
    t.add_argument("--storage", required=True)
    t.add_argument("--digest", required=True)
    args = ap.parse_args()
    if args.cmd == "tamper":
        return tamper(args)
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        p = Pusher(args, scratch)
        {"ollama": push_ollama, "modelpack": push_modelpack, "dmr": push_dmr}[args.cmd](args, p)


if __name__ == "__main__":
    main()
