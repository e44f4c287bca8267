//! Test-only directory trees: one set of files laid out as a plain copy, a
//! Hugging Face cache snapshot (links into `blobs/` named by SHA-256 for
//! weights and by Git blob SHA-1 for other files, and optionally through
//! the shared Xet store), a `local_dir` download with `.cache/`, a git
//! tree with `.git/`; and the directory label computed from the contract's
//! text (`directory-skeleton-v1.md` §4), sharing no code with the library.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use sha1::Digest as _;

use super::{hex, sha};

/// Files as (relative path, bytes).
pub type Files = Vec<(String, Vec<u8>)>;

/// Git's blob id of `bytes`: SHA-1 of `"blob <len>\0"` and the bytes.
pub fn git_sha1(bytes: &[u8]) -> String {
    let mut h = sha1::Sha1::new();
    h.update(format!("blob {}\0", bytes.len()).as_bytes());
    h.update(bytes);
    hex(&h.finalize())
}

fn write(path: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// The files copied into `dir`.
pub fn plain(dir: &Path, files: &Files) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    for (name, bytes) in files {
        write(&dir.join(name), bytes);
    }
    dir.to_path_buf()
}

/// A `local_dir` download: the files, and `huggingface_hub`'s metadata in
/// `.cache/huggingface/`.
pub fn local_dir(dir: &Path, files: &Files) -> PathBuf {
    plain(dir, files);
    for (name, _) in files {
        write(&dir.join(".cache/huggingface/download").join(format!("{name}.metadata")), b"0123abcd\netag\n1.0\n");
    }
    write(&dir.join(".cache/huggingface/.gitignore"), b"*\n");
    dir.to_path_buf()
}

/// A git clone with its LFS files fetched: `.git/`, `.gitattributes`,
/// `.gitignore` and `.github/` in the root (only there are they left out of
/// the label: directory contract §2, revision 2).
pub fn git_tree(dir: &Path, files: &Files) -> PathBuf {
    plain(dir, files);
    write(&dir.join(".git/HEAD"), b"ref: refs/heads/main\n");
    write(&dir.join(".git/objects/ab/cdef"), b"x");
    write(&dir.join(".gitattributes"), b"*.safetensors filter=lfs diff=lfs merge=lfs -text\n");
    write(&dir.join(".github/workflows/ci.yml"), b"on: push\n");
    write(&dir.join(".gitignore"), b"*.tmp\n");
    dir.to_path_buf()
}

/// Whether `huggingface_hub` stores `name` as an LFS file (blob named by
/// SHA-256) rather than a git file (blob named by its Git SHA-1).
fn is_lfs(name: &str) -> bool {
    name.ends_with(".safetensors") || name.ends_with(".gguf")
}

/// A cache repository `cache/models--org--NAME` with the files as snapshot
/// `REV`: each a link `../../blobs/<id>` (deeper for files in folders),
/// `refs/main` naming the revision. With `xet`, each LFS blob is itself a
/// link into the shared store `cache/blobs/` (marked by
/// `.huggingface-shared-blobs`), as `huggingface_hub` 2.4 keeps Xet
/// downloads. Returns the snapshot's path.
pub fn snapshot(cache: &Path, name: &str, files: &Files, xet: bool) -> PathBuf {
    let rev = "0123456789abcdef0123456789abcdef01234567";
    let repo = cache.join(format!("models--org--{name}"));
    let snap = repo.join("snapshots").join(rev);
    std::fs::create_dir_all(repo.join("blobs")).unwrap();
    std::fs::create_dir_all(&snap).unwrap();
    write(&repo.join("refs/main"), rev.as_bytes());
    for (file, bytes) in files {
        let id = if is_lfs(file) { hex(&sha(bytes)) } else { git_sha1(bytes) };
        let blob = repo.join("blobs").join(&id);
        if xet && is_lfs(file) {
            write(&cache.join("blobs/.huggingface-shared-blobs"), b"");
            write(&cache.join("blobs").join(&id), bytes);
            if !blob.exists() {
                symlink(Path::new("../../blobs").join(&id), &blob).unwrap();
            }
        } else {
            write(&blob, bytes);
        }
        let depth = file.matches('/').count();
        let up: PathBuf = std::iter::repeat_n("..", depth + 2).collect();
        let link = snap.join(file);
        std::fs::create_dir_all(link.parent().unwrap()).unwrap();
        symlink(up.join("blobs").join(&id), &link).unwrap();
    }
    snap
}

/// The blob a snapshot's file links to.
pub fn blob_of(snap: &Path, file: &str) -> PathBuf {
    let link = snap.join(file);
    let target = std::fs::read_link(&link).unwrap();
    link.parent().unwrap().join(target)
}

/// A component as the contract's §3 defines it: kind, name, digest.
pub type Component = (&'static [u8; 4], Vec<u8>, [u8; 32]);

/// A `FILE` component of `bytes` named `name`.
pub fn file_component(name: &str, bytes: &[u8]) -> Component {
    (b"FILE", name.as_bytes().to_vec(), sha(bytes))
}

/// A weights component (`SFTN` or `GGUF`) named `name` with the label
/// `label` (64 hex digits: the weights' own label).
pub fn weights_component(kind: &'static [u8; 4], name: &str, label: &str) -> Component {
    let mut d = [0u8; 32];
    for (i, b) in d.iter_mut().enumerate() {
        *b = u8::from_str_radix(&label[2 * i..2 * i + 2], 16).unwrap();
    }
    (kind, name.as_bytes().to_vec(), d)
}

/// The directory label of components, from the contract's §4:
/// `"MDIR" ‖ LE_u32(1) ‖ LE_u64(C)`, then each component sorted by
/// (kind bytes, name bytes) as `kind ‖ SHA-256(name) ‖ digest`.
pub fn expected_label(components: &[Component]) -> String {
    let mut sorted = components.to_vec();
    sorted.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    let mut s = b"MDIR".to_vec();
    s.extend_from_slice(&1u32.to_le_bytes());
    s.extend_from_slice(&(sorted.len() as u64).to_le_bytes());
    for (kind, name, digest) in &sorted {
        s.extend_from_slice(*kind);
        s.extend_from_slice(&sha(name));
        s.extend_from_slice(digest);
    }
    hex(&sha(&s))
}
