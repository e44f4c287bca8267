//! Messages without credentials: every error this crate returns goes
//! through [`scrub`] (a URL's `user:password@` and query left out, as
//! [`RemoteUrl::shown`](gguf_digest_formats::input::RemoteUrl::shown)
//! leaves them out), and `object_store`'s errors become the core's.

use std::io;
use std::path::Path;

use gguf_digest_core::source::changed;
use gguf_digest_core::{Error, ErrorKind};

/// `msg` with every URL in it cut to scheme, host and path: a userinfo
/// (`user:password@`) and a query (`?X-Amz-Signature=…`, an Azure SAS
/// token) are replaced by `…`.
pub(crate) fn scrub(msg: &str) -> String {
    let mut out = String::with_capacity(msg.len());
    let mut rest = msg;
    while let Some(at) = rest.find("://") {
        let (before, after) = rest.split_at(at.saturating_add(3));
        out.push_str(before);
        // The URL runs to the next space, quote or angle bracket.
        let end =
            after.find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>' | ')')).unwrap_or(after.len());
        let (url, tail) = after.split_at(end);
        let authority_end = url.find(['/', '?', '#']).unwrap_or(url.len());
        let (authority, path) = url.split_at(authority_end);
        match authority.rfind('@') {
            Some(i) => {
                out.push_str("…@");
                out.push_str(authority.get(i.saturating_add(1)..).unwrap_or(""));
            }
            None => out.push_str(authority),
        }
        match path.find(['?', '#']) {
            Some(i) => {
                out.push_str(path.get(..i).unwrap_or(""));
                out.push_str("?…");
            }
            None => out.push_str(path),
        }
        rest = tail;
    }
    out.push_str(rest);
    out
}

/// `object_store`'s error about the object shown as `shown` (at byte
/// `offset` when known), as the core's: a failed precondition is the
/// object replaced ([`ErrorKind::FileChanged`]), a missing object the
/// system's "not found", anything else an I/O error in its words, scrubbed.
pub(crate) fn error(e: &object_store::Error, shown: &Path, offset: Option<u64>) -> Error {
    let e = match e {
        object_store::Error::Precondition { .. } => changed(
            "it was replaced while it was read (its ETag or version is no longer the one pinned at its first request)",
        ),
        object_store::Error::NotFound { .. } => Error::from(io::Error::new(io::ErrorKind::NotFound, "no such object")),
        other => Error::new(ErrorKind::Io(io::Error::other(scrub(&other.to_string())))),
    };
    let e = match offset {
        Some(at) => e.at(at),
        None => e,
    };
    e.in_file(shown)
}

/// An I/O error in `what`'s words about the object shown as `shown`.
pub(crate) fn io_error(what: &str, shown: &Path, offset: Option<u64>) -> Error {
    let e = Error::from(io::Error::other(scrub(what)));
    let e = match offset {
        Some(at) => e.at(at),
        None => e,
    };
    e.in_file(shown)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_and_queries_are_cut_from_every_url_in_a_message() {
        assert_eq!(
            scrub("GET https://user:pw@host:9/a/b?sig=SECRET failed; see http://h/x"),
            "GET https://…@host:9/a/b?… failed; see http://h/x"
        );
        assert_eq!(scrub("no url here"), "no url here");
        assert_eq!(scrub("s3://bucket/key#frag"), "s3://bucket/key?…");
        assert_eq!(scrub("(https://a@b)"), "(https://…@b)");
    }
}
