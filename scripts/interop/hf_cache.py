"""A Hugging Face cache written with huggingface_hub's own functions, offline,
and read back with its own readers (test data for `hf:` references,
docs/adr/0024).

usage: hf_cache.py CACHE

huggingface_hub cannot download offline, so this does what its
`hf_hub_download` does after a download (file_download.py, 2.x): the storage
folder from `repo_folder_name`, each file's bytes in `blobs/` named by its
etag (the SHA-256 for an LFS file, the Git blob SHA-1 (`git_hash`) for the
others), the snapshot's pointer from `_get_pointer_path`, linked with
`_create_symlink`, and each revision's ref written by
`_cache_commit_hash_for_specific_revision` (so `refs/pr/1` is the file
`refs/refs/pr/1`). Weights are written by `safetensors.numpy.save_file`.

Then it prints one JSON object: `scan_cache_dir(CACHE)`'s repositories (type,
id, and per revision the commit, its refs and its snapshot path), its
warnings, and what `try_to_load_from_cache` returns for `config.json` at
each revision the test asks about.
"""

import hashlib
import json
import os
import sys
import tempfile

import numpy as np
from huggingface_hub import scan_cache_dir, try_to_load_from_cache
from huggingface_hub.file_download import (
    _cache_commit_hash_for_specific_revision,
    _create_symlink,
    _get_pointer_path,
    repo_folder_name,
)
from huggingface_hub.utils.sha import git_hash
from safetensors.numpy import save_file


def weights(seed):
    rng = np.random.default_rng(seed)
    path = os.path.join(tempfile.mkdtemp(), "w.safetensors")
    save_file({"a.weight": rng.standard_normal((4, 3)).astype(np.float32),
               "b.bias": rng.standard_normal((5,)).astype(np.float16)}, path, metadata={"format": "pt"})
    with open(path, "rb") as f:
        return f.read()


def store(cache, repo_id, commit, files, repo_type="model"):
    """One snapshot, as hf_hub_download leaves each file in it."""
    storage = os.path.join(cache, repo_folder_name(repo_id=repo_id, repo_type=repo_type))
    for name, data, lfs in files:
        etag = hashlib.sha256(data).hexdigest() if lfs else git_hash(data)
        blob = os.path.join(storage, "blobs", etag)
        os.makedirs(os.path.dirname(blob), exist_ok=True)
        with open(blob, "wb") as f:
            f.write(data)
        pointer = _get_pointer_path(storage, commit, name)
        os.makedirs(os.path.dirname(pointer), exist_ok=True)
        _create_symlink(blob, pointer, new_blob=True)
    return storage


def main():
    cache = sys.argv[1]
    a, b, c, d = ("%040x" % (0xA0 + i) for i in range(4))
    files = lambda seed, template: [
        ("model.safetensors", weights(seed), True),
        ("config.json", b'{"hidden_size": 4}', False),
        ("tokenizer_config.json", json.dumps({"chat_template": template}).encode(), False),
        ("1_Pooling/config.json", b'{"pooling_mode_mean_tokens": true}', False),
    ]
    org = store(cache, "org/model", a, files(1, "{{ messages }}"))
    store(cache, "org/model", b, files(2, "{{ messages }}"))
    store(cache, "org/model", c, files(1, "{{ other }}"))
    for rev, commit in [("main", a), ("v1.0", a), ("refs/pr/1", b)]:
        _cache_commit_hash_for_specific_revision(org, rev, commit)
    solo = store(cache, "solo", d, files(3, ""))
    _cache_commit_hash_for_specific_revision(solo, "main", d)
    tags = store(cache, "org/tags-only", b, files(2, ""))
    for rev in ["v2", "v10"]:
        _cache_commit_hash_for_specific_revision(tags, rev, b)
    data = store(cache, "org/data", a, [("train.csv", b"x,y\n", False)], repo_type="dataset")
    _cache_commit_hash_for_specific_revision(data, "main", a)

    info = scan_cache_dir(cache)
    repos = [{
        "type": r.repo_type,
        "id": r.repo_id,
        "revisions": sorted(({"commit": v.commit_hash, "refs": sorted(v.refs), "snapshot": str(v.snapshot_path)}
                             for v in r.revisions), key=lambda v: v["commit"]),
    } for r in sorted(info.repos, key=lambda r: (r.repo_type, r.repo_id))]
    loaded = {}
    for repo_id, rev in [("org/model", None), ("org/model", "v1.0"), ("org/model", "refs/pr/1"), ("org/model", c),
                         ("solo", None), ("org/tags-only", "v10")]:
        found = try_to_load_from_cache(repo_id, "config.json", cache_dir=cache, revision=rev)
        loaded["hf:" + repo_id + ("@" + rev if rev else "")] = os.path.dirname(found) if isinstance(found, str) else None
    print(json.dumps({"repos": repos, "warnings": [str(w) for w in info.warnings], "loaded": loaded}))


if __name__ == "__main__":
    main()
