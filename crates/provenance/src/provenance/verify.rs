//! `verify` up to the relabelling: read a statement, DSSE envelope or
//! Sigstore bundle, check its signature before a single subject is read,
//! then read every subject and locate it under the root before any is
//! opened. The command line and the Python API both relabel what this
//! returns, through `--check`'s rules, opening each subject with
//! [`Claims::open`]: beneath the root (docs/adr/0020).

use crate::provenance::ProvenanceErrorKind;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{Error, ErrorKind, Result};
use crate::format::AnyModel;
use crate::format::OpenOptions;
use crate::provenance::envelope::{self, Signed};
use crate::provenance::keys::PublicKey;
use crate::provenance::{PAYLOAD_TYPE, read_limited, subjects};
use crate::source::Root;

/// What a statement claims, ready to be relabelled.
#[derive(Debug, Clone)]
pub struct Claims {
    /// Every subject: its name as the statement gives it, and its label.
    pub subjects: Vec<subjects::Subject>,
    /// Where each subject is read from, in the same order: opened with
    /// [`Claims::open`], never outside the root.
    pub paths: Vec<PathBuf>,
    /// True when a signature verified with one of the keys; false when the
    /// caller chose [`Signature::Unchecked`] (nothing about the signer is
    /// then known).
    pub signature_checked: bool,
    /// The root, held open: every subject, and every file a subject leads
    /// to, is opened beneath it.
    root: Arc<Root>,
}

impl Claims {
    /// Opens the model at `path`, one of [`Claims::paths`]: beneath the
    /// root, so that no link (however it changes meanwhile) leads a
    /// subject, its shards, an index's files or a directory's entries out
    /// of it; an `ollama:` reference in its store, an `hf:` reference in
    /// the Hugging Face cache.
    pub fn open(&self, path: &Path, opts: &OpenOptions) -> Result<AnyModel> {
        if crate::input::Input::is_store_reference(path) {
            return crate::input::open_model(path, opts);
        }
        match path.strip_prefix(self.root.path()) {
            Ok(rel) => crate::input::open_model_beneath(&self.root, rel, path, opts),
            Err(_) => Err(Error::internal("a subject's path is not under the root").in_file(path)),
        }
    }
}

/// What `verify` requires of the statement's signature.
#[derive(Debug, Clone, Copy)]
pub enum Signature<'a> {
    /// One of its DSSE signatures must verify with one of these keys. No key
    /// at all is refused ([`ProvenanceErrorKind::SignatureRequired`]): verifying fails
    /// closed.
    Keys(&'a [PublicKey]),
    /// The caller chose not to check who signed it: the subjects alone are
    /// relabelled, and [`Claims::signature_checked`] is false.
    Unchecked,
}

/// Reads `file` and checks it: unless the caller chose
/// [`Signature::Unchecked`], one of its DSSE signatures must verify with one
/// of the keys (otherwise [`ProvenanceErrorKind::SignatureFailed`], or
/// [`ProvenanceErrorKind::SignatureRequired`] when there is no key, and no subject is
/// read); every subject must lie under `root` (by default the file's
/// directory).
pub fn claims(file: &Path, root: Option<&Path>, signature: Signature<'_>) -> Result<Claims> {
    claims_of(file, root, signature).map_err(|e| e.in_file(file))
}

fn claims_of(file: &Path, root: Option<&Path>, signature: Signature<'_>) -> Result<Claims> {
    // Refused before the file is even read: nothing in it can matter.
    if let Signature::Keys([]) = signature {
        return Err(Error::new(ProvenanceErrorKind::SignatureRequired));
    }
    let signed = envelope::read(&read_limited(file)?)?;
    if let Signature::Keys(keys) = signature {
        check_signature(&signed, keys)?;
    }
    let subjects = match &signed {
        Signed::Bare(statement) => subjects::of_statement(statement)?,
        Signed::Dsse { payload, .. } => subjects::read_payload(payload)?,
    };
    let root = root.or_else(|| file.parent()).unwrap_or(Path::new(""));
    // As `locate` joins names to it: the working directory as `.`.
    let root = if root.as_os_str().is_empty() { Path::new(".") } else { root };
    let paths = subjects.iter().map(|s| subjects::locate(root, &s.name)).collect::<Result<Vec<_>>>()?;
    let root = Root::open(root).map_err(|e| {
        let what = format!("the root {}: {}", root.display(), e.detail());
        Error::new(ErrorKind::Io(std::io::Error::other(what)))
    })?;
    Ok(Claims { subjects, paths, signature_checked: matches!(signature, Signature::Keys(_)), root })
}

fn check_signature(signed: &Signed, keys: &[PublicKey]) -> Result<()> {
    let failed = |what: String| Err(Error::new(ProvenanceErrorKind::SignatureFailed(what)));
    match signed {
        Signed::Bare(_) => failed("a bare statement carries no signature".into()),
        Signed::Dsse { payload, signatures, .. } => {
            let pae = envelope::pae(PAYLOAD_TYPE, payload);
            if signatures.iter().any(|s| keys.iter().any(|k| k.verifies(&pae, &s.sig))) {
                return Ok(());
            }
            let kinds: Vec<&str> = keys.iter().map(PublicKey::kind).collect();
            failed(format!(
                "none of its {} signatures verifies with the given key ({})",
                signatures.len(),
                kinds.join(", ")
            ))
        }
    }
}

/// Each distinct path of `paths` once, and for every path the index of
/// its copy in that list: a statement may name one model many times, and
/// it is labelled once.
pub fn distinct(paths: &[PathBuf]) -> (Vec<PathBuf>, Vec<usize>) {
    let mut first: HashMap<&Path, usize> = HashMap::new();
    let mut unique = Vec::new();
    let of = paths
        .iter()
        .map(|p| {
            *first.entry(p.as_path()).or_insert_with(|| {
                unique.push(p.clone());
                unique.len().saturating_sub(1)
            })
        })
        .collect();
    (unique, of)
}

/// Labels every distinct path of `paths` once, through `label` (which
/// answers each of the distinct paths it is given, by index, in order),
/// and answers every path through `emit`, in order: the first subject
/// naming a file gets its result, later ones a copy
/// ([`Error::repeat`] for an error).
pub fn label_once_each(
    paths: &[PathBuf],
    label: impl FnOnce(&[PathBuf], &mut dyn FnMut(usize, Result<String>)),
    emit: &mut dyn FnMut(usize, Result<String>),
) {
    let (unique, of) = distinct(paths);
    let mut uses = vec![0usize; unique.len()];
    for &u in &of {
        if let Some(n) = uses.get_mut(u) {
            *n = n.saturating_add(1);
        }
    }
    let mut results: Vec<Option<Result<String>>> = (0..unique.len()).map(|_| None).collect();
    let mut next = 0usize;
    let mut on_unique = |i: usize, r: Result<String>| {
        if let Some(slot) = results.get_mut(i) {
            *slot = Some(r);
        }
        // Answer every path whose file is labelled, in order.
        while let Some(&u) = of.get(next) {
            let (Some(slot), Some(left)) = (results.get_mut(u), uses.get_mut(u)) else { break };
            let answer = match slot {
                None => break,
                Some(r) if *left > 1 => r.as_ref().map(Clone::clone).map_err(Error::repeat),
                Some(_) => match slot.take() {
                    Some(r) => r,
                    None => break,
                },
            };
            *left = left.saturating_sub(1);
            emit(next, answer);
            next = next.saturating_add(1);
        }
    };
    label(&unique, &mut on_unique);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_named_many_times_is_labelled_once_and_answered_in_order() {
        let paths: Vec<PathBuf> = ["a", "b", "a", "c", "b", "a"].iter().map(PathBuf::from).collect();
        assert_eq!(distinct(&paths).1, [0, 1, 0, 2, 1, 0]);
        let mut asked = Vec::new();
        let mut answers = Vec::new();
        label_once_each(
            &paths,
            |unique, emit| {
                asked = unique.to_vec();
                for (i, p) in unique.iter().enumerate() {
                    if p == Path::new("b") {
                        let e = Error::from(std::io::Error::from(std::io::ErrorKind::NotFound)).in_file(p).at(7);
                        emit(i, Err(e));
                    } else {
                        emit(i, Ok(format!("label of {}", p.display())));
                    }
                }
            },
            &mut |k, r| answers.push((k, r.map_err(|e| (e.to_string(), e.is_not_found())))),
        );
        assert_eq!(asked, [PathBuf::from("a"), PathBuf::from("b"), PathBuf::from("c")]);
        let b_error = Error::from(std::io::Error::from(std::io::ErrorKind::NotFound)).in_file(Path::new("b")).at(7);
        let b = Err((b_error.to_string(), true));
        let ok = |p: &str| Ok(format!("label of {p}"));
        assert_eq!(answers, [(0, ok("a")), (1, b.clone()), (2, ok("a")), (3, ok("c")), (4, b), (5, ok("a"))]);
    }
}
