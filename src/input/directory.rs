//! A directory argument names the one model in it: a Hugging Face snapshot
//! (`models--org--name/snapshots/<rev>/`, entries symlinked into `blobs/`),
//! a checkpoint folder, a folder holding one GGUF model. The rule
//! (docs/adr/0012): its one `*.safetensors.index.json`; else its one
//! safetensors file or shard set; else its one GGUF file or shard set.
//! Several candidates at the first level that has any is an error listing
//! them, so the user can name one. Only the directory's own entries count
//! (no recursion); hidden entries are skipped. The directory is listed, and
//! its model opened, beneath its root (docs/adr/0020): symlinks are
//! followed as long as they stay inside it, as the snapshot layout needs
//! (a snapshot's root is its repository folder, which holds `blobs/`); an
//! entry that links out of it is refused when the model is opened.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::error::{Error, ErrorKind, Result};
use crate::gguf;
use crate::safetensors;
use crate::source::Beside;

/// The file name of the one model in the directory `dir`, to be opened in
/// it ([`Beside::open`]) like a file argument.
pub fn model_in(dir: &Beside) -> Result<OsString> {
    let located = |e: Error| e.in_file(dir.shown());
    let mut names: Vec<PathBuf> = Vec::new();
    for name in dir.names()? {
        let hidden = name.to_str().is_none_or(|n| n.starts_with('.'));
        // A snapshot's entries are links into blobs/: files, inside the root.
        if !hidden && dir.holds_file(&name) {
            names.push(dir.path_of(&name));
        }
    }
    names.sort();
    let ends = |p: &Path, suffix: &str| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with(suffix));
    let levels: [Vec<PathBuf>; 3] = [
        names.iter().filter(|p| safetensors::is_index_name(p)).cloned().collect(),
        candidates(names.iter().filter(|p| ends(p, ".safetensors")), |p| {
            safetensors::ShardName::parse(p).map(|s| s.sibling(1))
        }),
        candidates(names.iter().filter(|p| ends(p, ".gguf")), |p| gguf::ShardName::parse(p).map(|s| s.sibling(1))),
    ];
    for level in levels {
        match level.as_slice() {
            [] => continue,
            [one] => return Ok(one.file_name().unwrap_or_default().to_os_string()),
            _ => return Err(located(ErrorKind::SeveralModels(level).into())),
        }
    }
    Err(located(ErrorKind::NoModelInDirectory.into()))
}

/// One candidate per model: a file alone, or the first shard of a set.
fn candidates<'a>(
    files: impl Iterator<Item = &'a PathBuf>,
    first_shard: impl Fn(&Path) -> Option<PathBuf>,
) -> Vec<PathBuf> {
    let set: BTreeSet<PathBuf> = files.map(|p| first_shard(p).unwrap_or_else(|| p.clone())).collect();
    set.into_iter().collect()
}
