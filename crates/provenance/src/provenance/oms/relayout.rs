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

/// A weights component of the directory as it is now.
#[derive(Debug, Clone)]
pub struct Weights {
    /// `GGUF` or `SFTN`.
    pub kind: &'static str,
    /// Its name, `d/P`.
    pub name: String,
    /// Its files' relative paths (an index first).
    pub files: Vec<String>,
    /// Its label, 64 hex digits.
    pub label: String,
}

/// The directory labelled again: its label and its weights components.
#[derive(Debug, Clone)]
pub struct Relabelled {
    /// The directory label, 64 hex digits.
    pub label: String,
    /// Every weights component.
    pub weights: Vec<Weights>,
}

/// The directory label of `root` as the signer computed it: without the
/// file `signature` (relative to `root`), which was written after the
/// label was, when it lies inside the directory; and each weights
/// component's label. Hashed on the current rayon pool.
pub fn relabel(root: &Path, signature: Option<&Path>, opts: &OpenOptions) -> Result<Relabelled> {
    let model = crate::directory::Model::open(root, opts)?;
    let digest = model.digest()?;
    let components = model.component_digests(digest.tensor_sha256())?;
    let left_out = signature.map(|p| p.as_os_str().as_bytes());
    let kept: Vec<(Kind, &[u8], [u8; 32])> = model
        .components()
        .iter()
        .zip(&components)
        .filter(|(c, _)| !(c.kind == Kind::FILE && Some(c.name.as_slice()) == left_out))
        .map(|(c, d)| (c.kind, c.name.as_slice(), *d))
        .collect();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let weights = model
        .components()
        .iter()
        .zip(&components)
        .filter(|(c, _)| c.kind != Kind::FILE)
        .map(|(c, d)| Weights {
            kind: c.kind.text(),
            name: text(&c.name),
            files: c.files.iter().map(|f| text(f)).collect(),
            label: hex::encode(d),
        })
        .collect();
    Ok(Relabelled { label: hex::encode(Sha256::digest(skeleton(&kept))), weights })
}

/// The weights component a file's name alone places it in, as the
/// directory contract groups names: `d/P` of `d/P.gguf`, `d/P.safetensors`,
/// `d/P-NNNNN-of-MMMMM.gguf` or `.safetensors`, `d/P.safetensors.index.json`.
/// A file an index names otherwise is placed in none.
fn component_of_name(name: &str) -> Option<(&'static str, String)> {
    let (dir, base) = name.rsplit_once('/').map_or(("", name), |(d, b)| (d, b));
    let (kind, stem) = if let Some(p) = base.strip_suffix(".safetensors.index.json") {
        ("SFTN", p)
    } else if let Some(p) = base.strip_suffix(".safetensors") {
        ("SFTN", unshard(p))
    } else if let Some(p) = base.strip_suffix(".gguf") {
        ("GGUF", unshard(p))
    } else {
        return None;
    };
    if stem.is_empty() {
        return None;
    }
    Some((kind, if dir.is_empty() { stem.to_string() } else { format!("{dir}/{stem}") }))
}

/// `P` of a shard's stem `P-NNNNN-of-MMMMM`; any other stem unchanged.
fn unshard(stem: &str) -> &str {
    let digits = |s: Option<&str>| s.is_some_and(|s| s.len() == 5 && s.bytes().all(|b| b.is_ascii_digit()));
    match stem.len().checked_sub(15).and_then(|at| Some((stem.get(..at)?, stem.get(at..)?))) {
        Some((p, tail))
            if tail.starts_with('-')
                && tail.get(6..10) == Some("-of-")
                && digits(tail.get(1..6))
                && digits(tail.get(10..)) =>
        {
            p
        }
        _ => stem,
    }
}

/// Of the files the OpenSSF check did not pass (each with whether it is in
/// the model now), those a relayout does not excuse: `--accept-relayout`
/// excuses a file only when it lies in a weights component whose signed
/// label holds (the same kind and name signed, with the label it has now).
/// A file present now must be one of such a component's files; a missing
/// one, named as such a component's files are named.
pub fn not_excused<'a>(
    failing: &[(&'a str, bool)],
    signed: &[(String, String, String)],
    now: &Relabelled,
) -> Vec<&'a str> {
    let holds = |kind: &str, name: &str| {
        now.weights.iter().any(|w| {
            w.kind == kind && w.name == name && signed.iter().any(|(k, n, l)| k == kind && n == name && *l == w.label)
        })
    };
    failing
        .iter()
        .filter(|&&(file, present)| {
            let excused = if present {
                now.weights.iter().any(|w| w.files.iter().any(|f| f == file) && holds(w.kind, &w.name))
            } else {
                component_of_name(file).is_some_and(|(kind, name)| holds(kind, &name))
            };
            !excused
        })
        .map(|&(file, _)| file)
        .collect()
}

/// `signature`'s path relative to `root`, when it lies inside it.
pub fn inside(root: &Path, signature: &Path) -> Option<std::path::PathBuf> {
    let (root, sig) = (root.canonicalize().ok()?, signature.canonicalize().ok()?);
    sig.strip_prefix(&root).ok().filter(|r| !r.as_os_str().is_empty()).map(|r| Path::new(OsStr::new(r)).to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_place_files_in_weights_components() {
        assert_eq!(component_of_name("m-00001-of-00002.gguf"), Some(("GGUF", "m".into())));
        assert_eq!(component_of_name("d/m.safetensors.index.json"), Some(("SFTN", "d/m".into())));
        assert_eq!(component_of_name("d/m-00002-of-00003.safetensors"), Some(("SFTN", "d/m".into())));
        assert_eq!(component_of_name("m-1-of-2.gguf"), Some(("GGUF", "m-1-of-2".into())));
        assert_eq!(component_of_name("config.json"), None);
        assert_eq!(component_of_name(".gguf"), None);
    }

    #[test]
    fn only_files_of_held_weights_components_are_excused() {
        let now = Relabelled {
            label: String::new(),
            weights: vec![Weights {
                kind: "GGUF",
                name: "m".into(),
                files: vec!["m-00001-of-00003.gguf".into()],
                label: "aa".into(),
            }],
        };
        let signed = vec![("GGUF".to_string(), "m".to_string(), "aa".to_string())];
        let failing = [("m-00001-of-00003.gguf", true), ("m-00001-of-00002.gguf", false), ("sub/.github/x", true)];
        assert_eq!(not_excused(&failing, &signed, &now), ["sub/.github/x"]);
        // The label changed: nothing is excused.
        let other = vec![("GGUF".to_string(), "m".to_string(), "bb".to_string())];
        assert_eq!(not_excused(&failing, &other, &now).len(), 3);
    }
}
