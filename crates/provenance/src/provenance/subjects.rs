//! A statement's subjects, and where each may be looked for: a subject
//! names a path under the root (the statement's directory, or `--root`) or
//! an `ollama:` reference; a name that would leave the root is refused
//! before anything is opened. What keeps a subject inside the root is how
//! it is opened (beneath a descriptor of the root: `verify::Claims::open`,
//! docs/adr/0020); the refusals here say why early, by name.

use std::path::{Component, Path, PathBuf};

use crate::check::label_of;
use crate::error::{Error, ErrorKind, Result};
use crate::input::Input;
use crate::json::{Json, parse_strict};
use crate::provenance::{MAX_DEPTH, PREDICATE_TYPE, STATEMENT_TYPE};

/// One subject: its name and the label it claims.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subject {
    /// The name as the statement gives it.
    pub name: String,
    /// The `sha256` digest: the label, 64 lowercase hex digits.
    pub label: String,
}

/// The subjects of a DSSE payload: a statement of this project's
/// predicate type. Offsets in its errors are the decoded payload's, so they
/// are named as such, not as the file's.
pub fn read_payload(payload: &[u8]) -> Result<Vec<Subject>> {
    let json = parse_strict(payload, MAX_DEPTH).map_err(|e| {
        let at = e.offset.map(|o| format!(", byte {o}")).unwrap_or_default();
        Error::new(ErrorKind::Json(format!("in the DSSE payload{at}: {}", e.what)))
    })?;
    of_statement(&json)
}

/// The subjects of a parsed statement of this project's predicate type.
pub fn of_statement(json: &Json) -> Result<Vec<Subject>> {
    let ty = json.get("_type").and_then(Json::as_str).unwrap_or_default();
    if ty != STATEMENT_TYPE {
        return Err(Error::schema(format!("not an in-toto statement v1 (_type is \"{ty}\", not {STATEMENT_TYPE})")));
    }
    let pt = json.get("predicateType").and_then(Json::as_str).unwrap_or_default();
    if pt != PREDICATE_TYPE {
        return Err(Error::schema(format!(
            "the statement's predicateType is \"{pt}\", not gguf-digest's ({PREDICATE_TYPE}): it does not claim labels"
        )));
    }
    let list = json
        .get("subject")
        .and_then(Json::as_array)
        .ok_or_else(|| Error::schema("the statement has no subject list"))?;
    if list.is_empty() {
        return Err(Error::schema("the statement has no subjects"));
    }
    let mut out = Vec::with_capacity(list.len());
    for s in list {
        let name = s.get("name").and_then(Json::as_str).ok_or_else(|| Error::schema("a subject has no name"))?;
        let label = s
            .get("digest")
            .and_then(|d| d.get("sha256"))
            .and_then(Json::as_str)
            .ok_or_else(|| Error::schema(format!("subject {name:?} has no sha256 digest")))?;
        let Some(label) = label_of(label.as_bytes()) else {
            return Err(Error::schema(format!("subject {name:?}: its sha256 is not 64 hex digits")));
        };
        out.push(Subject { name: name.to_string(), label });
    }
    Ok(out)
}

/// Where subject `name` is looked for under `root`: the path, or the
/// `ollama:` or `hf:` reference as it is. Refused: an empty name, `-`, an absolute
/// path, a `..` component, a NUL, and any path that (through symbolic
/// links) resolves outside the root now. That last check is only an early,
/// clear refusal: a link put in place after it is refused by the open
/// itself, which resolves the path beneath the root.
pub fn locate(root: &Path, name: &str) -> Result<PathBuf> {
    let refuse = |why: &str| Err(Error::schema(format!("subject {name:?} is refused: {why}; nothing was opened")));
    if Input::is_store_reference(Path::new(name)) {
        return Ok(PathBuf::from(name));
    }
    if let Some(why) = unlocatable(name) {
        return refuse(why);
    }
    let rel = Path::new(name);
    // An empty root is the working directory; as "" it could not be
    // canonicalized, and the symbolic-link check below would be skipped.
    let root = if root.as_os_str().is_empty() { Path::new(".") } else { root };
    let path = root.join(rel);
    // A symbolic link inside the root may point out of it: resolve both and
    // compare, to refuse it before anything is opened. A path that does not
    // exist is left to the labelling, which reports it. (The open beneath
    // the root is what holds when the links change in between.)
    if let (Ok(real_root), Ok(real)) = (root.canonicalize(), path.canonicalize()) {
        if !real.starts_with(&real_root) {
            return refuse("it leads outside the root through a symbolic link");
        }
    }
    Ok(path)
}

/// Why [`locate`] refuses `name` whatever the root (not an `ollama:`
/// reference): `None` when it is a relative file name without `..`.
fn unlocatable(name: &str) -> Option<&'static str> {
    let rel = Path::new(name);
    if name.is_empty() || name == "-" || name.contains('\0') {
        Some("not a file name")
    } else if rel.is_absolute() {
        Some("an absolute path")
    } else if rel.components().any(|c| c == Component::ParentDir) {
        Some("it holds '..'")
    } else {
        None
    }
}

/// The name a statement gives the model named `path`: the path as given,
/// or relative to `root` when one is given (the directory `verify` will
/// look in). Refused, so that a statement never names a subject `verify`
/// must refuse: a name that is absolute, holds `..`, is `-` or empty, is
/// not under `root`, or is not UTF-8 (a subject's name is a JSON string).
/// `ollama:` and `hf:` references are names as they are.
pub fn name_for(path: &Path, root: Option<&Path>) -> Result<String> {
    let given = path.to_string_lossy();
    let refuse = |why: String| Err(Error::schema(format!("{given:?} cannot be a subject's name: {why}")));
    if Input::is_store_reference(path) {
        return Ok(given.into_owned());
    }
    let relative = match root {
        None => path.to_path_buf(),
        Some(root) => {
            let (abs, abs_root) = (std::path::absolute(path)?, std::path::absolute(root)?);
            match abs.strip_prefix(&abs_root) {
                Ok(rel) => rel.to_path_buf(),
                Err(_) => return refuse(format!("it is not under the root {}", abs_root.display())),
            }
        }
    };
    let Some(name) = relative.to_str() else {
        return refuse("it is not UTF-8, and a subject's name is a JSON string".into());
    };
    match unlocatable(name) {
        Some(why) => refuse(format!("{why}, which verify refuses")),
        None => Ok(name.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_leave_the_root_are_refused() {
        let root = Path::new("/tmp");
        for bad in ["", "-", "/etc/passwd", "../x", "a/../../x", "a\0b"] {
            assert!(locate(root, bad).is_err(), "{bad:?}");
        }
        assert_eq!(locate(root, "a/b.gguf").unwrap(), Path::new("/tmp/a/b.gguf"));
        assert_eq!(locate(root, "ollama:x").unwrap(), Path::new("ollama:x"));
        // An empty root is the working directory, so that it can be
        // canonicalized and symbolic links out of it are caught.
        assert_eq!(locate(Path::new(""), "a.gguf").unwrap(), Path::new("./a.gguf"));
    }

    #[test]
    fn a_statement_names_only_subjects_verify_can_locate() {
        let name = |p: &str, root: Option<&str>| name_for(Path::new(p), root.map(Path::new));
        assert_eq!(name("m.gguf", None).unwrap(), "m.gguf");
        assert_eq!(name("a/m.gguf", None).unwrap(), "a/m.gguf");
        assert_eq!(name("ollama:x", None).unwrap(), "ollama:x");
        assert_eq!(name("/srv/models/a/m.gguf", Some("/srv/models")).unwrap(), "a/m.gguf");
        for (bad, root, why) in [
            ("/srv/m.gguf", None, "an absolute path"),
            ("../m.gguf", None, "it holds '..'"),
            ("-", None, "not a file name"),
            ("/elsewhere/m.gguf", Some("/srv"), "not under the root /srv"),
            ("/srv/a/../../m.gguf", Some("/srv"), "it holds '..'"),
        ] {
            let e = name(bad, root).unwrap_err().to_string();
            assert!(e.contains(why), "{bad:?}: {e}");
            assert!(e.contains("cannot be a subject's name"), "{e}");
        }
        use std::os::unix::ffi::OsStrExt;
        let not_utf8 = Path::new(std::ffi::OsStr::from_bytes(b"m\xff.gguf"));
        assert!(name_for(not_utf8, None).unwrap_err().to_string().contains("not UTF-8"));
    }
}
