//! `hf:` references and the Hugging Face cache's layout: `hf:ORG/NAME` or
//! `hf:NAME`, optionally `@REV`; the cache root (`$HF_HUB_CACHE`, …); the
//! repository folder `models--ORG--NAME`, its `refs/REV` files and
//! `snapshots/COMMIT` folders, as `huggingface_hub`'s `file_download.py`
//! writes them (`repo_folder_name`, `_cache_commit_hash_for_specific_revision`).
//! **The only place an `hf:` name, or a name read from the cache, becomes a
//! path**, and only after it was checked to be one plain name (or, for a
//! ref, plain names joined by `/`) that cannot leave the cache.

use crate::hf::HfErrorKind;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The prefix of an argument that names a model in the Hugging Face cache.
pub const SCHEME: &str = "hf:";
/// The revision `hf:ORG/NAME` means, as `huggingface_hub` defaults it.
pub const DEFAULT_REVISION: &str = "main";
/// What `huggingface_hub` prefixes a model repository's folder with
/// (`repo_folder_name`: the repository type, plural, then `--`).
pub const MODELS_PREFIX: &str = "models--";
/// `huggingface_hub`'s `REPO_ID_SEPARATOR`, which replaces each `/`.
const SEPARATOR: &str = "--";
/// A repository id part's longest length (`REPO_ID_REGEX`: `{1,96}`).
const MAX_PART: usize = 96;

/// A parsed `hf:` reference: a model repository and a revision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    /// `ORG/NAME` or `NAME`, as `huggingface_hub`'s `validate_repo_id` accepts it.
    pub repo_id: String,
    /// The branch or tag (a file in `refs/`) or the 40-hex commit; `None`
    /// for `main`, as written without `@`.
    pub revision: Option<String>,
}

fn bad_name(name: &str, why: impl Into<String>) -> Error {
    Error::new(HfErrorKind::HfName { name: name.to_string(), why: why.into() })
}

/// True for a commit as `huggingface_hub` names snapshot folders
/// (`REGEX_COMMIT_HASH`: 40 lowercase hex digits).
pub fn is_commit(s: &str) -> bool {
    s.len() == 40 && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Why `part` of a repository id is refused, as `validate_repo_id` would:
/// 1 to 96 of `A-Z a-z 0-9 _ - .`, beginning and ending with a letter,
/// digit or `_` (its regex's word boundaries).
fn repo_part_error(part: &str) -> Option<&'static str> {
    let word = |b: &u8| b.is_ascii_alphanumeric() || *b == b'_';
    let bytes = part.as_bytes();
    if bytes.is_empty() {
        Some("is empty")
    } else if bytes.len() > MAX_PART {
        Some("is longer than 96 characters")
    } else if !bytes.iter().all(|b| word(b) || *b == b'-' || *b == b'.') {
        Some("holds a character other than A-Z, a-z, 0-9, '_', '-' and '.'")
    } else if !bytes.first().is_some_and(word) || !bytes.last().is_some_and(word) {
        Some("begins or ends with '-' or '.'")
    } else {
        None
    }
}

/// Why a repository id is refused (`validate_repo_id`'s rules), or `None`.
fn repo_id_error(id: &str) -> Option<String> {
    let parts: Vec<&str> = id.split('/').collect();
    if parts.len() > 2 {
        let why = match parts.first() {
            Some(&("datasets" | "spaces" | "kernels")) => "hf: names models only, not datasets, spaces or kernels",
            _ => "it has more than one '/' (a repository is ORG/NAME or NAME)",
        };
        return Some(why.into());
    }
    for (part, what) in parts.iter().zip(if parts.len() == 2 { ["organization", "name"] } else { ["name", ""] }) {
        if let Some(why) = repo_part_error(part) {
            return Some(format!("its {what} '{}' {why}", crate::text::escape_bytes(part.as_bytes())));
        }
    }
    if id.contains("--") || id.contains("..") {
        return Some("it holds '--' or '..'".into());
    }
    if id.ends_with(".git") {
        return Some("it ends in '.git'".into());
    }
    None
}

/// Why a ref name (the path of a file below `refs/`, `/`-separated) is
/// refused, or `None`. Git's rules for a ref's name (`git check-ref-format`),
/// which every branch and tag the Hub serves obeys: so it is plain names
/// joined by `/`, none empty, `.` or `..`, and cannot leave `refs/`.
pub fn ref_error(name: &str) -> Option<&'static str> {
    let banned = |b: u8| b < 0x20 || b == 0x7f || b" ~^:?*[\\".contains(&b);
    if name.is_empty() {
        Some("is empty")
    } else if name.bytes().any(banned) {
        Some("holds a space, a control character or one of ~ ^ : ? * [ \\")
    } else if name.contains("..") || name.contains("@{") || name == "@" {
        Some("holds '..' or '@{', or is '@'")
    } else if name.split('/').any(|c| c.is_empty() || c.starts_with('.') || c.ends_with(".lock")) {
        Some("has an empty part, a part beginning with '.' or ending in '.lock'")
    } else if name.ends_with('.') {
        Some("ends in '.'")
    } else {
        None
    }
}

impl Reference {
    /// Parses `REPO[@REV]`, the text after `hf:` (`full` is the whole
    /// argument, for messages).
    pub fn parse(full: &str) -> Result<Reference> {
        let name = full.strip_prefix(SCHEME).unwrap_or(full);
        if name.is_empty() {
            return Err(bad_name(
                full,
                "it names no repository ('hf:' alone, as an argument of the labelling command, lists the cache)",
            ));
        }
        // A repository id holds no '@'; a ref may (not as "@{").
        let (repo_id, revision) = match name.split_once('@') {
            Some((id, rev)) => (id, Some(rev)),
            None => (name, None),
        };
        if let Some(why) = repo_id_error(repo_id) {
            return Err(bad_name(full, why));
        }
        if let Some(rev) = revision {
            if let Some(why) = ref_error(rev) {
                let rev = crate::text::escape_bytes(rev.as_bytes());
                return Err(bad_name(
                    full,
                    format!("its revision '{rev}' is neither a ref nor a 40-hex commit: it {why}"),
                ));
            }
        }
        Ok(Reference { repo_id: repo_id.to_string(), revision: revision.map(str::to_string) })
    }

    /// The revision: as given, or `main`.
    pub fn revision(&self) -> &str {
        self.revision.as_deref().unwrap_or(DEFAULT_REVISION)
    }

    /// `hf:ID`, or `hf:ID@REV` when a revision was given.
    pub fn display(&self) -> String {
        match &self.revision {
            Some(rev) => format!("{SCHEME}{}@{rev}", self.repo_id),
            None => format!("{SCHEME}{}", self.repo_id),
        }
    }

    /// The repository's folder in the cache: `models--ORG--NAME`
    /// (`repo_folder_name`).
    pub fn repo_rel(&self) -> PathBuf {
        PathBuf::from(format!("{MODELS_PREFIX}{}", self.repo_id.replace('/', SEPARATOR)))
    }

    /// The calls that would download this revision; this tool never does.
    pub fn download_calls(&self) -> String {
        let (id, rev) = (&self.repo_id, self.revision());
        format!(
            "huggingface_hub.snapshot_download(\"{id}\", revision=\"{rev}\") or `hf download {id} --revision {rev}`"
        )
    }
}

/// The repository id a cache folder's name holds (`models--ORG--NAME` →
/// `ORG/NAME`), if it is a model repository's folder whose id
/// `huggingface_hub` would accept; the folder `repo_folder_name` writes for
/// that id is then exactly this name.
pub fn repo_id_of_folder(folder: &str) -> Option<String> {
    let id = folder.strip_prefix(MODELS_PREFIX)?.replacen(SEPARATOR, "/", 1);
    repo_id_error(&id).is_none().then_some(id)
}

/// The ref file of `rev` in a repository folder: `refs/REV` (a ref with
/// `/` is a file in folders, `refs/pr/1`: `huggingface_hub` joins the
/// revision to `refs` as it is). `rev` must have passed [`ref_error`].
pub fn ref_rel(rev: &str) -> PathBuf {
    Path::new("refs").join(rev)
}

/// The snapshot folder of a commit in a repository folder. `commit` must
/// be [`is_commit`].
pub fn snapshot_rel(commit: &str) -> PathBuf {
    Path::new("snapshots").join(commit)
}

/// The Hugging Face cache, as `huggingface_hub` finds it (constants.py):
/// `$HF_HUB_CACHE`, else the legacy `$HUGGINGFACE_HUB_CACHE`, else
/// `$HF_HOME/hub`, else `$XDG_CACHE_HOME/huggingface/hub`, else
/// `~/.cache/huggingface/hub` on every system; a leading `~` is the home
/// directory (`$HOME`, `%USERPROFILE%` on Windows, as `expanduser`). Unlike
/// Python, a variable set to the empty string counts as unset (Python
/// would take the working directory), and `$VAR`s inside a value are not
/// expanded.
pub fn cache_root() -> Result<PathBuf> {
    cache_root_from(|name| std::env::var_os(name), crate::source::home_dir())
}

/// [`cache_root`] from the variables `variable` reads and the home directory.
fn cache_root_from(variable: impl Fn(&str) -> Option<std::ffi::OsString>, home: Option<PathBuf>) -> Result<PathBuf> {
    let var = |name: &str| variable(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    let home = || {
        home.clone()
            .ok_or_else(|| Error::new(HfErrorKind::HfNoCache(format!("{} is not set", crate::source::HOME_VAR))))
    };
    let expand = |p: PathBuf| -> Result<PathBuf> {
        match p.strip_prefix("~") {
            Ok(rest) => Ok(home()?.join(rest)),
            Err(_) => Ok(p),
        }
    };
    if let Some(p) = var("HF_HUB_CACHE").or_else(|| var("HUGGINGFACE_HUB_CACHE")) {
        return expand(p);
    }
    if let Some(p) = var("HF_HOME") {
        return Ok(expand(p)?.join("hub"));
    }
    let cache = match var("XDG_CACHE_HOME") {
        Some(p) => expand(p)?,
        None => home()?.join(".cache"),
    };
    Ok(cache.join("huggingface").join("hub"))
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;

    #[test]
    fn no_cache_without_a_variable_or_a_home() {
        let no_cache = |e: Error| {
            assert!(matches!(e.kind().of::<HfErrorKind>(), Some(HfErrorKind::HfNoCache(_))), "{e}");
            assert!(e.to_string().ends_with(" is not set"), "{e}");
            assert!(!e.is_not_found(), "{e}");
        };
        no_cache(cache_root_from(|_| None, None).unwrap_err());
        no_cache(cache_root_from(|v| (v == "HF_HOME").then(|| "~/hf".into()), None).unwrap_err());
        let home = Some(PathBuf::from("/h"));
        assert_eq!(cache_root_from(|_| None, home.clone()).unwrap(), Path::new("/h/.cache/huggingface/hub"));
        let hf_home = |v: &str| (v == "HF_HOME").then(|| "~/hf".into());
        assert_eq!(cache_root_from(hf_home, home).unwrap(), Path::new("/h/hf/hub"));
    }

    #[test]
    fn references_name_a_models_folder_and_a_revision() {
        let r = Reference::parse("hf:org/name").unwrap();
        assert_eq!((r.repo_id.as_str(), r.revision()), ("org/name", "main"));
        assert_eq!(r.repo_rel(), Path::new("models--org--name"));
        assert_eq!(r.display(), "hf:org/name");
        let r = Reference::parse("hf:gpt2@refs/pr/1").unwrap();
        assert_eq!((r.repo_rel(), r.revision()), (PathBuf::from("models--gpt2"), "refs/pr/1"));
        assert_eq!(ref_rel(r.revision()), Path::new("refs/refs/pr/1"));
        let r = Reference::parse("hf:A_b.c-1/x.Y_2@v1.0").unwrap();
        assert_eq!(r.display(), "hf:A_b.c-1/x.Y_2@v1.0");
    }

    #[test]
    fn names_huggingface_hub_refuses_are_refused() {
        let long = "a".repeat(97);
        for bad in [
            "hf:",
            "hf:/n",
            "hf:o/",
            "hf:o//n",
            "hf:a/b/c",
            "hf:datasets/o/n",
            "hf:../n",
            "hf:o/..",
            "hf:o/a..b",
            "hf:o--x/n",
            "hf:o/n.git",
            "hf:-o/n",
            "hf:o/n.",
            "hf:o/n é",
            "hf:o\\n",
            "hf:o/n\0",
            &format!("hf:o/{long}"),
            "hf:o/n@",
            "hf:o/n@../main",
            "hf:o/n@a//b",
            "hf:o/n@/main",
            "hf:o/n@main/",
            "hf:o/n@.hidden",
            "hf:o/n@x.lock",
            "hf:o/n@a b",
            "hf:o/n@a\nb",
            "hf:o/n@x@{1}",
            "hf:o/n@x.",
        ] {
            let e = Reference::parse(bad).unwrap_err();
            assert!(matches!(e.kind().of::<HfErrorKind>(), Some(HfErrorKind::HfName { .. })), "{bad:?}: {e}");
        }
        assert!(Reference::parse("hf:datasets/o/n").unwrap_err().to_string().contains("models only"));
    }

    #[test]
    fn folders_read_back_as_the_ids_that_name_them() {
        assert_eq!(repo_id_of_folder("models--org--name").as_deref(), Some("org/name"));
        assert_eq!(repo_id_of_folder("models--gpt2").as_deref(), Some("gpt2"));
        for not in ["datasets--o--n", "models--", "models--o--n--x", "models--o----n", "models---o--n", "x"] {
            assert_eq!(repo_id_of_folder(not), None, "{not}");
        }
        assert!(is_commit(&"0a".repeat(20)) && !is_commit(&"0A".repeat(20)) && !is_commit(&"0".repeat(41)));
    }
}
