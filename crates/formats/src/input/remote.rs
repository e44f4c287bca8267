//! URL inputs (`s3://`, `gs://`, `az://`, `https://`, `http://`): the
//! spelling parsed once ([`RemoteUrl`]), shown without its credentials,
//! and the opener that turns one into a [`Source`] or a listed place,
//! supplied by the remote crate ([`register`]): this crate names no
//! transport (docs/adr/0044-remote-inputs.md).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use crate::error::{Error, ErrorKind, Result};
use crate::source::{Beside, ReadMode, Source};

/// The schemes a URL input may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// `s3://BUCKET/KEY`: Amazon S3 or an S3-compatible store.
    S3,
    /// `gs://BUCKET/KEY`: Google Cloud Storage.
    Gcs,
    /// `az://CONTAINER/KEY`: Azure Blob Storage.
    Azure,
    /// `https://HOST/PATH`.
    Https,
    /// `http://HOST/PATH`: only with the command's `--allow-http`.
    Http,
    /// `oci://REGISTRY/REPOSITORY[:TAG][@sha256:HEX]`: a manifest in an OCI
    /// registry (docs/adr/0046).
    Oci,
}

impl Scheme {
    /// Every scheme with its spelling, `://` included.
    const ALL: [(Scheme, &'static str); 6] = [
        (Scheme::S3, "s3://"),
        (Scheme::Gcs, "gs://"),
        (Scheme::Azure, "az://"),
        (Scheme::Https, "https://"),
        (Scheme::Http, "http://"),
        (Scheme::Oci, "oci://"),
    ];

    /// The scheme's spelling, `://` included.
    pub fn prefix(self) -> &'static str {
        Scheme::ALL.iter().find(|(s, _)| *s == self).map_or("", |(_, p)| p)
    }
}

/// A URL argument, parsed once: its scheme, its authority (bucket,
/// container or host, credentials left out), its path, and how it is
/// shown. The credentials (`user:password@`) and the query (an Azure SAS
/// token, a presigned URL's signature) are kept for the opener only:
/// [`RemoteUrl::shown`] never holds them, and neither does any message.
#[derive(Clone, PartialEq, Eq)]
pub struct RemoteUrl {
    scheme: Scheme,
    /// The URL as given (credentials and query included): for the opener.
    raw: String,
    /// The bucket, container or host (with its port), no credentials.
    authority: String,
    /// The key or path after the authority's `/`, no query.
    path: String,
    /// Whether the URL held credentials or a query (left out of `shown`).
    redacted: bool,
    shown: PathBuf,
}

impl std::fmt::Debug for RemoteUrl {
    /// The URL as shown: a debug print must not leak what `shown` leaves out.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("RemoteUrl").field(&self.shown).finish()
    }
}

impl RemoteUrl {
    /// The URL `arg` spells, or `None` when it spells none of the schemes
    /// (then it is a path). One that starts with a scheme but cannot be
    /// read (no bucket or host, a `..` in its path) is still a URL: opening
    /// it is the error ([`RemoteUrl::check`]).
    pub fn parse(arg: &str) -> Option<RemoteUrl> {
        let (scheme, rest) = Scheme::ALL.iter().find_map(|(s, p)| {
            let head = arg.get(..p.len())?;
            head.eq_ignore_ascii_case(p).then(|| (*s, arg.get(p.len()..).unwrap_or("")))
        })?;
        Some(RemoteUrl::split(scheme, arg, rest))
    }

    fn split(scheme: Scheme, raw: &str, rest: &str) -> RemoteUrl {
        // The fragment is never sent; the query is kept for the opener only.
        let rest = rest.split('#').next().unwrap_or("");
        let (rest, query) = match rest.split_once('?') {
            Some((r, q)) => (r, Some(q)),
            None => (rest, None),
        };
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        let (userinfo, authority) = match authority.rsplit_once('@') {
            Some((u, a)) => (Some(u), a),
            None => (None, authority),
        };
        let redacted = userinfo.is_some() || query.is_some();
        let shown = format!("{}{}/{}", scheme.prefix(), authority, path);
        RemoteUrl {
            scheme,
            raw: raw.to_string(),
            authority: authority.to_string(),
            path: path.to_string(),
            redacted,
            shown: PathBuf::from(shown),
        }
    }

    /// Fails for a URL that cannot be read: no bucket, container or host;
    /// a `..` or `.` in its path (never resolved: it would leave the place
    /// named); an empty segment.
    pub fn check(&self) -> Result<()> {
        if self.authority.is_empty() {
            return Err(self.refused("it names no bucket, container or host"));
        }
        let inner = self.path.strip_suffix('/').unwrap_or(&self.path);
        if !inner.is_empty() && inner.split('/').any(|part| matches!(part, "" | "." | "..")) {
            return Err(self.refused("an empty, `.` or `..` segment in a URL's path is not followed"));
        }
        Ok(())
    }

    /// An error about this URL, which names it as shown.
    pub fn refused(&self, why: &str) -> Error {
        let e = std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("not a URL this tool reads: {why}"));
        Error::new(ErrorKind::Io(e)).in_file(&self.shown)
    }

    /// The scheme.
    pub fn scheme(&self) -> Scheme {
        self.scheme
    }

    /// The bucket, container or host (and port): no credentials.
    pub fn authority(&self) -> &str {
        &self.authority
    }

    /// The key or path below the authority, without a leading `/` or the query.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The URL as given, credentials and query included: for the opener,
    /// never for a message.
    pub fn raw(&self) -> &str {
        &self.raw
    }

    /// True when the URL held credentials or a query that [`shown`] leaves
    /// out.
    ///
    /// [`shown`]: RemoteUrl::shown
    pub fn was_redacted(&self) -> bool {
        self.redacted
    }

    /// The URL as output and errors show it: scheme, authority and path,
    /// no credentials, no query.
    pub fn shown(&self) -> &Path {
        &self.shown
    }

    /// True for a prefix (a path ending in `/`, or none): a directory,
    /// listed and labelled as one.
    pub fn is_prefix(&self) -> bool {
        self.path.is_empty() || self.path.ends_with('/')
    }
}

/// What a URL opens to.
pub enum Remote {
    /// One object, as a source every format reads.
    Object(Box<Source>),
    /// A prefix ending in `/`: a place whose objects are listed.
    Prefix(Beside),
    /// A model the opener built itself (an Ollama model in an OCI
    /// registry, docs/adr/0046).
    Model(crate::format::AnyModel),
}

/// What turns a URL into something to read: implemented by the remote
/// crate (object_store) and [`register`]ed once by the program that wants
/// URLs read (the command with the feature `remote`, Python).
pub trait Opener: Send + Sync {
    /// Opens `url`: an object (its version pinned) or a prefix.
    fn open(&self, url: &RemoteUrl, mode: ReadMode) -> Result<Remote>;

    /// About how many bytes labelling `url` reads (a progress bar's
    /// length); 0 when not known without a request.
    fn approximate_bytes(&self, url: &RemoteUrl) -> u64 {
        let _ = url;
        0
    }
}

static OPENER: RwLock<Option<Arc<dyn Opener>>> = RwLock::new(None);

/// The opener registered, if any.
fn opener() -> Option<Arc<dyn Opener>> {
    OPENER.read().unwrap_or_else(|p| p.into_inner()).clone()
}

/// Makes `opener` the one that opens URL inputs in this process (a later
/// registration replaces it: a run of the command registers the options
/// of its flags).
pub fn register(opener: Arc<dyn Opener>) {
    *OPENER.write().unwrap_or_else(|p| p.into_inner()) = Some(opener);
}

/// URLs given with credentials or a query, by how they are shown
/// ([`hide_credentials`]).
static HIDDEN: Mutex<Vec<(PathBuf, RemoteUrl)>> = Mutex::new(Vec::new());

/// `arg` as the rest of the program sees it: a URL with credentials or a
/// query becomes its shown form (`scheme://authority/path`), the whole URL
/// kept here for the opener alone. A program calls this on its arguments
/// before anything prints them (the command does, on every argument), so
/// that no sums line, JSON document, error or verdict can show them.
pub fn hide_credentials(arg: &std::ffi::OsStr) -> std::ffi::OsString {
    let Some(url) = arg.to_str().and_then(RemoteUrl::parse).filter(RemoteUrl::was_redacted) else {
        return arg.to_os_string();
    };
    let shown = url.shown().as_os_str().to_os_string();
    let mut hidden = HIDDEN.lock().unwrap_or_else(|p| p.into_inner());
    hidden.retain(|(s, _)| s != url.shown());
    hidden.push((url.shown().to_path_buf(), url));
    shown
}

/// The URL given for `url` (its credentials) when it was hidden.
fn unhidden(url: &RemoteUrl) -> RemoteUrl {
    let hidden = HIDDEN.lock().unwrap_or_else(|p| p.into_inner());
    hidden.iter().find(|(s, _)| s == url.shown()).map_or_else(|| url.clone(), |(_, u)| u.clone())
}

/// Opens `url` with the registered opener; an error that says how to get
/// one when none is registered (a build without the feature `remote`).
pub fn open(url: &RemoteUrl, mode: ReadMode) -> Result<Remote> {
    url.check()?;
    let url = &unhidden(url);
    match opener() {
        Some(o) => o.open(url, mode),
        None => Err(url.refused("this build reads no URLs (it was built without the feature `remote`)")),
    }
}

/// About how many bytes labelling `url` reads; 0 without an opener.
pub fn approximate_bytes(url: &RemoteUrl) -> u64 {
    opener().map_or(0, |o| o.approximate_bytes(&unhidden(url)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> RemoteUrl {
        RemoteUrl::parse(s).unwrap()
    }

    #[test]
    fn urls_are_told_by_their_scheme_and_shown_without_credentials() {
        let u = url("s3://bucket/models/m.gguf");
        assert_eq!((u.scheme(), u.authority(), u.path()), (Scheme::S3, "bucket", "models/m.gguf"));
        assert_eq!(u.shown(), Path::new("s3://bucket/models/m.gguf"));
        assert!(!u.is_prefix() && !u.was_redacted());
        let u = url("https://user:secret@host:8443/a/b.safetensors?sig=TOKEN#frag");
        assert_eq!(u.shown(), Path::new("https://host:8443/a/b.safetensors"));
        assert!(u.was_redacted());
        assert!(!format!("{u:?}").contains("secret") && !format!("{u:?}").contains("TOKEN"));
        assert!(u.raw().contains("secret"), "the opener still has them");
        assert_eq!(url("HTTP://h/x").scheme(), Scheme::Http);
        assert!(url("gs://b/dir/").is_prefix());
        assert!(url("az://c").is_prefix());
        for path in ["m.gguf", "./s3://x", "s3:/x", "file:///x", "ollama:x"] {
            assert!(RemoteUrl::parse(path).is_none(), "{path}");
        }
    }

    #[test]
    fn a_url_without_an_authority_or_with_dot_dot_is_refused_without_its_credentials() {
        for bad in ["s3://", "https:///x", "s3://b/a/../c", "https://u:pw@h/../x?k=SECRET", "gs://b/a//c", "gs://b/./c"]
        {
            let e = url(bad).check().unwrap_err();
            let shown = e.to_string();
            assert!(!shown.contains("pw") && !shown.contains("SECRET"), "{shown}");
        }
    }

    #[test]
    fn a_url_with_credentials_is_hidden_behind_its_shown_form() {
        let given = std::ffi::OsStr::new("https://u:pw@hidden.example/m.gguf?sig=Q");
        let shown = hide_credentials(given);
        assert_eq!(shown, "https://hidden.example/m.gguf");
        assert_eq!(unhidden(&url("https://hidden.example/m.gguf")).raw(), given.to_str().unwrap());
        assert_eq!(hide_credentials("m.gguf".as_ref()), "m.gguf");
        assert_eq!(hide_credentials("s3://b/k".as_ref()), "s3://b/k");
    }

    #[test]
    fn without_an_opener_a_url_is_an_error_naming_the_feature() {
        let Err(e) = open(&url("s3://b/k"), ReadMode::Pread) else { panic!("opened") };
        assert!(e.to_string().contains("feature `remote`"), "{e}");
    }
}
