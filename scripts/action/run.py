#!/usr/bin/env python3
"""The one script of gguf-digest's GitHub Action (action.yml).

A composite action gets no INPUT_* variables by itself: action.yml maps
its inputs into this step's environment as GD_SUMS, GD_STATEMENT, GD_KEY,
GD_ROOT, GD_MODELS, GD_NO_SIGNATURE and GD_CACHE. The script runs
`gguf-digest --check` on each sums file, `gguf-digest verify` on the
statement, and `gguf-digest` on the models, prints their output as they
would, and writes one Markdown table of models, labels and verdicts to
$GITHUB_STEP_SUMMARY (and `verdict=` to $GITHUB_OUTPUT).

Exit status, as gguf-digest's own: 0 when everything holds, 1 when a label
differs or a listed file is missing, 2 when something could not be read or
the inputs name nothing to check. The tool is `$GGUF_DIGEST` if set (the
tests), else `gguf-digest` on PATH. Standard library only.

`run.py --source-digest DIR` prints `digest=HEX`, the SHA-256 of what
`cargo install --path DIR` builds from (Cargo.toml, Cargo.lock, src/): the
build cache's key, so that a tag that moves to a new release (`v1`) builds
the new tool instead of running the old one it cached.
"""

import base64
import hashlib
import json
import os
import re
import subprocess
import sys

TOOL = os.environ.get("GGUF_DIGEST") or "gguf-digest"

# A sums line as sha256sum writes it: a backslash first when the name is
# escaped (\\ and \n), the label, a space, a space or '*', the name.
SUMS_LINE = re.compile(r"^(\\?)([0-9a-f]{64}) [ *](.*)$")
# What the tool says of each model with the verified-leaf cache on.
CACHE_LINE = re.compile(r"^gguf-digest: cache: .*: (\d+) of (\d+) files taken from the cache, (\d+) read$")
# A --check or verify result line: NAME: OK, NAME: FAILED, NAME: FAILED open or read.
RESULT_LINE = re.compile(r"^(\\?)(.*): (OK|FAILED.*|signature NOT CHECKED.*)$")


def words(name):
    """An input's list: separated by spaces or new lines (names with spaces
    go in a sums file)."""
    return os.environ.get(name, "").split()


def unescape(escaped, text):
    """A name as sha256sum escapes it, back to what it is."""
    if not escaped:
        return text
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), text)


def run(args):
    """Runs the tool; its output goes to the log as it would have, and comes
    back for the table."""
    done = subprocess.run([TOOL, *args], capture_output=True, text=True, errors="replace")
    sys.stdout.write(done.stdout)
    sys.stderr.write(done.stderr)
    return done


def results(stdout):
    """Each result line of --check or verify, name -> verdict, in order."""
    out = {}
    for line in stdout.splitlines():
        m = RESULT_LINE.match(line)
        if m:
            out[unescape(m.group(1), m.group(2))] = m.group(3)
    return out


def check_sums(path, rows):
    """`--check` of one sums file: a row per listed model."""
    done = run(["--check", "--", path])
    verdicts = results(done.stdout)
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            listed = [SUMS_LINE.match(line.rstrip("\n")) for line in f]
    except OSError:
        listed = []
    for m in filter(None, listed):
        name = unescape(m.group(1), m.group(3))
        rows.append((name, m.group(2), verdicts.get(name, "not checked"), path))
    return done.returncode, done.stderr


# An OpenSSF model signature's statement (model_signing): its subject is
# the model as a whole, and verify answers for each file it lists.
MODEL_SIGNING = "https://model_signing/"


def statement_subjects(path):
    """What a statement, a DSSE envelope or a Sigstore bundle names, as
    (name, digest) pairs, and whether it is an OpenSSF model signature: then
    the files it lists (for the table only: gguf-digest verify decides)."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        envelope = doc.get("dsseEnvelope", doc)
        if "payload" in envelope:
            doc = json.loads(base64.b64decode(envelope["payload"]))
        if str(doc.get("predicateType", "")).startswith(MODEL_SIGNING):
            resources = doc.get("predicate", {}).get("resources", [])
            return [(str(r.get("name", "")), str(r.get("digest", ""))) for r in resources], True
        return [(s.get("name", ""), s.get("digest", {}).get("sha256", "")) for s in doc.get("subject", [])], False
    except (OSError, ValueError, AttributeError, TypeError):
        return [], False


def verify(path, rows):
    """`verify` of one statement: a row per subject."""
    args = ["verify"]
    for key in words("GD_KEY"):
        args += ["--key", key]
    if os.environ.get("GD_NO_SIGNATURE", "").strip().lower() == "true":
        args.append("--no-signature")
    if os.environ.get("GD_ROOT", "").strip():
        args += ["--root", os.environ["GD_ROOT"].strip()]
    done = run(args + ["--", path])
    verdicts = results(done.stdout)
    unchecked = verdicts.get(path, "")
    subjects, per_file = statement_subjects(path)
    for name, label in subjects:
        verdict = verdicts.get(name, "not checked")
        if unchecked.startswith("signature NOT CHECKED") and verdict == "OK":
            verdict = "OK (signature NOT CHECKED)"
        rows.append((name, label, verdict, path))
    if per_file:
        # A file of the directory that the signature does not list has a
        # verdict (unexpected) and a row, without a signed digest.
        listed = {name for name, _ in subjects}
        for name, verdict in verdicts.items():
            if name not in listed and name != path:
                rows.append((name, "", verdict, path))
    return done.returncode, done.stderr


def label_models(models, rows):
    """The models' labels, as `gguf-digest MODEL...` prints them."""
    # After `--`: a word that begins with `-` is a model's name, never an option.
    done = run(["--", *models])
    for line in done.stdout.splitlines():
        m = SUMS_LINE.match(line)
        if m:
            rows.append((unescape(m.group(1), m.group(3)), m.group(2), "labelled", "models"))
    return done.returncode, done.stderr


def cell(text):
    """A table cell that cannot break the table or run as Markdown."""
    text = text.replace("\\", "\\\\").replace("|", "\\|").replace("`", "'")
    return "".join(c if c.isprintable() else "\\x%02x" % ord(c) for c in text)


def mark(verdict):
    if verdict.startswith("OK (signature"):
        return "⚠️ " + verdict
    if verdict in ("OK", "labelled"):
        return "✅ " + verdict
    return "❌ " + verdict


def use_cache():
    """With GD_CACHE "true": the tool's verified-leaf cache, kept in the folder
    action.yml restores between runs; otherwise every byte is read."""
    if os.environ.get("GD_CACHE", "").strip().lower() != "true":
        os.environ.pop("GGUF_DIGEST_CACHE", None)
        return
    os.environ["GGUF_DIGEST_CACHE"] = "1"
    if os.environ.get("RUNNER_TOOL_CACHE"):
        os.environ["GGUF_DIGEST_CACHE_DIR"] = os.path.join(os.environ["RUNNER_TOOL_CACHE"], "gguf-digest-leaves")


def cache_note(errors):
    """What came from the cache, summed over the tool's lines; None without it."""
    counts = [tuple(map(int, m.groups())) for m in map(CACHE_LINE.match, errors.splitlines()) if m]
    if not counts:
        return None
    cached, files, read = (sum(c[i] for c in counts) for i in range(3))
    return f"Verified-leaf cache: {cached} of {files} files taken from the cache, {read} read in this run."


def summary(rows, errors, status):
    verdict = ["ok", "failed", "error"][min(status, 2)]
    lines = ["### gguf-digest: " + {"ok": "every model holds", "failed": "a model differs", "error": "an error"}[verdict], ""]
    if rows:
        lines += ["| Model | Label | Verdict | From |", "|---|---|---|---|"]
        for name, label, v, source in rows:
            lines.append(f"| `{cell(name)}` | `{cell(label)}` | {mark(v)} | `{cell(source)}` |")
    note = cache_note(errors)
    if note:
        lines += ["", note]
        errors = "\n".join(e for e in errors.splitlines() if not CACHE_LINE.match(e))
    if errors.strip():
        lines += ["", "<details><summary>Messages</summary>", "", "```text"]
        lines += [cell(e) for e in errors.strip().splitlines()]
        lines += ["```", "</details>"]
    return verdict, "\n".join(lines) + "\n"


def source_digest(root):
    """The SHA-256 of what `cargo install --path ROOT` builds from: each
    file's path and bytes, in sorted order."""
    files = [f for f in ("Cargo.toml", "Cargo.lock") if os.path.isfile(os.path.join(root, f))]
    # The command's crate (src/) and the layer crates it is built from (crates/).
    for tree in ("src", "crates"):
        for top, dirs, names in os.walk(os.path.join(root, tree)):
            dirs.sort()
            files += [os.path.relpath(os.path.join(top, n), root) for n in names]
    h = hashlib.sha256()
    for rel in sorted(files):
        with open(os.path.join(root, rel), "rb") as f:
            data = f.read()
        name = rel.replace(os.sep, "/").encode()
        h.update(b"%d:%s%d:" % (len(name), name, len(data)))
        h.update(data)
    return h.hexdigest()


def main():
    if sys.argv[1:2] == ["--source-digest"] and len(sys.argv) == 3:
        print("digest=" + source_digest(sys.argv[2]))
        return 0
    use_cache()
    rows, errors, statuses = [], "", []
    for path in words("GD_SUMS"):
        code, err = check_sums(path, rows)
        statuses.append(code)
        errors += err
    statement = os.environ.get("GD_STATEMENT", "").strip()
    if statement:
        code, err = verify(statement, rows)
        statuses.append(code)
        errors += err
    models = words("GD_MODELS")
    if models:
        code, err = label_models(models, rows)
        statuses.append(code)
        errors += err
    if not statuses:
        sys.stderr.write("gguf-digest action: nothing to check: give sums, statement or models\n")
        statuses.append(2)
        errors += "nothing to check: give sums, statement or models\n"
    status = 2 if any(c not in (0, 1) for c in statuses) else max(statuses)
    verdict, text = summary(rows, errors, status)
    for var, content in (("GITHUB_STEP_SUMMARY", text), ("GITHUB_OUTPUT", f"verdict={verdict}\n")):
        if os.environ.get(var):
            with open(os.environ[var], "a", encoding="utf-8") as f:
                f.write(content)
    return status


if __name__ == "__main__":
    sys.exit(main())
