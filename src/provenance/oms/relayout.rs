//! The relayout verdict (issue #26 item 3, the verifier's side): a
//! signature made by `gguf-digest sign --format oms` also signs the model
//! directory's gguf-digest label (SPEC Part IV), which holds across layouts
//! (shards re-cut, files converted). When the files differ, the directory
//! is labelled again to say whether the signed model is still what it holds.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt as _;
use std::path::Path;

use sha2::{Digest as _, Sha256};

use crate::directory::skeleton::{Kind, skeleton};
use crate::error::Result;
use crate::format::OpenOptions;

/// The contract the signed label must follow to be compared.
pub const CONTRACT: &str = "directory-skeleton-v1";

/// The directory label of `root` as the signer computed it: without the
/// file `signature` (relative to `root`), which was written after the
/// label was, when it lies inside the directory. Hashed on the current
/// rayon pool.
pub fn directory_label(root: &Path, signature: Option<&Path>, opts: &OpenOptions) -> Result<String> {
    let model = crate::directory::Model::open(root, opts)?;
    let digest = model.digest()?;
    let components = model.component_digests(digest.tensor_sha256())?;
    let left_out = signature.map(|p| p.as_os_str().as_bytes());
    let kept: Vec<(Kind, &[u8], [u8; 32])> = model
        .components()
        .iter()
        .zip(components)
        .filter(|(c, _)| !(c.kind == Kind::FILE && Some(c.name.as_slice()) == left_out))
        .map(|(c, d)| (c.kind, c.name.as_slice(), d))
        .collect();
    Ok(hex::encode(Sha256::digest(skeleton(&kept))))
}

/// `signature`'s path relative to `root`, when it lies inside it.
pub fn inside(root: &Path, signature: &Path) -> Option<std::path::PathBuf> {
    let (root, sig) = (root.canonicalize().ok()?, signature.canonicalize().ok()?);
    sig.strip_prefix(&root).ok().filter(|r| !r.as_os_str().is_empty()).map(|r| Path::new(OsStr::new(r)).to_path_buf())
}
