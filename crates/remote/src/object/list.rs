//! A prefix of an HTTP(S) server listed as a directory: WebDAV `PROPFIND`
//! with `Depth: 1`, folder by folder (docs/adr/0044, "Listing"). Servers
//! refuse `Depth: infinity` (nginx's dav-ext answers 403; RFC 4918 lets
//! them), so the walk asks each folder for its children, bounded: at most
//! `max` entries in all, [`MAX_DEPTH`] folders deep, [`MAX_ANSWER`] bytes
//! an answer, never held whole before the bound is checked.
//!
//! Whatever a server answers is held to the prefix: an entry naming
//! another host, a path outside the folder listed (`..`, an absolute path
//! elsewhere), a name twice, or anything deeper than one level is refused,
//! never skipped; an answer that is not WebDAV XML is refused. Our own
//! client (not `object_store`'s list, which reads any body whole and
//! drops an entry's host), with the store's certificate authorities and
//! credentials; redirects are not followed.

use std::borrow::Cow;
use std::collections::{HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::time::Duration;

use percent_encoding::percent_decode_str;
use quick_xml::events::Event;
use reqwest::header::{AUTHORIZATION, HeaderValue};
use reqwest::{Method, StatusCode, Url};

use gguf_digest_core::{Error, Result};

use crate::redact::{io_error, scrub};

/// The most folders below the prefix a listing descends.
pub(crate) const MAX_DEPTH: usize = 64;

/// The most bytes of one folder's answer.
pub(crate) const MAX_ANSWER: u64 = 64 << 20;

/// The deepest nesting of XML elements in an answer (a multistatus needs 6).
const MAX_NESTING: usize = 64;

/// A WebDAV client of one host: the same trust and credentials as the
/// store's `object_store` client.
#[derive(Debug)]
pub(crate) struct Dav {
    http: reqwest::Client,
    /// `scheme://authority/`, no credentials.
    base: Url,
    /// A URL's `user:password@` as a Basic `Authorization`, sent to this
    /// host only (redirects are not followed).
    auth: Option<HeaderValue>,
    /// Retries of a request refused by a reset, a timeout or a 5xx.
    retries: usize,
}

/// One `<response>` of a multistatus: its `href` and whether it is a
/// collection.
#[derive(Debug, PartialEq, Eq)]
struct Entry {
    href: String,
    collection: bool,
}

impl Dav {
    /// A client of `base` (`scheme://authority/`) trusting the system's
    /// roots and those of `ca_file`.
    pub(crate) fn new(base: &str, ca_file: Option<&Path>, auth: Option<HeaderValue>, retries: usize) -> Result<Dav> {
        let shown = PathBuf::from(base);
        let base = Url::parse(base).map_err(|e| io_error(&e.to_string(), &shown, None))?;
        let http = crate::http::client(ca_file)?;
        Ok(Dav { http, base, auth, retries })
    }

    /// The URL of the folder `key` (empty, or ending in `/`).
    fn folder_url(&self, key: &str, shown: &Path) -> Result<Url> {
        let mut url = self.base.clone();
        if !key.is_empty() {
            let mut segments = url.path_segments_mut().map_err(|()| io_error("not a URL with a path", shown, None))?;
            segments.pop_if_empty().extend(key.split('/'));
        }
        Ok(url)
    }

    /// Every object below the folder `prefix` (a key, empty or ending in
    /// `/`), named relative to it (`a`, `sub/b`): more than `max` entries
    /// (objects and folders), or folders deeper than [`MAX_DEPTH`], are
    /// refused naming the prefix.
    pub(crate) async fn walk(&self, prefix: &str, shown: &Path, max: usize) -> Result<Vec<String>> {
        let mut objects = Vec::new();
        let mut seen = 0usize;
        let mut folders = VecDeque::from([(String::new(), 0usize)]);
        while let Some((rel, depth)) = folders.pop_front() {
            let here = PathBuf::from(format!("{}{rel}", shown.display()));
            let url = self.folder_url(&format!("{prefix}{rel}"), &here)?;
            let body = self.propfind(&url, &here).await?;
            // The folder's own entry comes with its children.
            let room = max.saturating_sub(seen).saturating_add(1);
            let entries = parse(&body, room).map_err(|why| match why {
                Parsed::TooMany => too_many(max, shown),
                Parsed::Bad(why) => io_error(&format!("the server's listing is not WebDAV XML: {why}"), &here, None),
            })?;
            let mut names = HashSet::new();
            for entry in &entries {
                let Some((name, folder)) = child(&url, entry, &here)? else { continue };
                if !names.insert(name.clone()) {
                    let what = format!("the server's listing names {} twice", scrub(&entry.href));
                    return Err(io_error(&what, &here, None));
                }
                seen = seen.saturating_add(1);
                if seen > max {
                    return Err(too_many(max, shown));
                }
                if folder {
                    let deeper = depth.saturating_add(1);
                    if deeper > MAX_DEPTH {
                        let what = format!("the listing holds folders more than {MAX_DEPTH} deep");
                        return Err(io_error(&what, shown, None));
                    }
                    folders.push_back((format!("{rel}{name}/"), deeper));
                } else {
                    objects.push(format!("{rel}{name}"));
                }
            }
        }
        Ok(objects)
    }

    /// The body of `PROPFIND url` with `Depth: 1` (a 207 answer), at most
    /// [`MAX_ANSWER`] bytes; a reset, a timeout, a 5xx or a body cut short
    /// asked again with backoff, `retries` times.
    async fn propfind(&self, url: &Url, shown: &Path) -> Result<Vec<u8>> {
        let method = Method::from_bytes(b"PROPFIND").map_err(|e| Error::internal(&e.to_string()))?;
        let mut tries = 0usize;
        let mut backoff = Duration::from_millis(100);
        loop {
            let mut request = self.http.request(method.clone(), url.clone()).header("Depth", "1");
            if let Some(auth) = &self.auth {
                request = request.header(AUTHORIZATION, auth.clone());
            }
            let failed = match request.send().await {
                Ok(mut answer) => {
                    let status = answer.status();
                    if status == StatusCode::MULTI_STATUS {
                        match read_limited(&mut answer, MAX_ANSWER).await {
                            Ok(Ok(body)) => return Ok(body),
                            Ok(Err(what)) => return Err(io_error(&what, shown, None)),
                            Err(e) => crate::http::error_words(&e),
                        }
                    } else if status.is_server_error() {
                        format!("the server answered {status}")
                    } else {
                        return Err(not_listed(status, shown));
                    }
                }
                Err(e) => crate::http::error_words(&e),
            };
            tries = tries.saturating_add(1);
            if tries > self.retries {
                let what = format!("listing it (WebDAV PROPFIND) failed {tries} times: {failed}");
                return Err(io_error(&what, shown, None));
            }
            tokio::time::sleep(backoff).await;
            backoff = backoff.saturating_mul(2).min(Duration::from_secs(5));
        }
    }
}

/// A listing answered `status` (not 207, not a 5xx): the folder missing,
/// or a server that does not list.
fn not_listed(status: StatusCode, shown: &Path) -> Error {
    if status == StatusCode::NOT_FOUND {
        return Error::from(std::io::Error::new(std::io::ErrorKind::NotFound, "no such folder")).in_file(shown);
    }
    let what = if status.is_redirection() {
        format!("the server redirected the listing (WebDAV PROPFIND answered {status}; not followed)")
    } else {
        format!(
            "the server does not list folders (WebDAV PROPFIND with Depth 1 answered {status}, not 207 \
             Multi-Status): a directory URL over HTTP needs a server that answers PROPFIND"
        )
    };
    io_error(&what, shown, None)
}

fn too_many(max: usize, shown: &Path) -> Error {
    io_error(&format!("the listing holds more than {max} objects and folders"), shown, None)
}

/// The body, refused past `limit` bytes (never held whole first): `Err`
/// a broken connection (asked again), `Ok(Err)` a body too long.
async fn read_limited(
    answer: &mut reqwest::Response,
    limit: u64,
) -> std::result::Result<std::result::Result<Vec<u8>, String>, reqwest::Error> {
    let mut out = Vec::new();
    while let Some(piece) = answer.chunk().await? {
        if (out.len() as u64).saturating_add(piece.len() as u64) > limit {
            return Ok(Err(format!("the server's listing is longer than {limit} bytes")));
        }
        out.extend_from_slice(&piece);
    }
    Ok(Ok(out))
}

/// The name of `entry` in the folder listed at `folder` and whether it
/// is a folder; `None` for the folder itself. Another host, a path
/// outside the folder or deeper than its children, or a name that is not
/// plain is an error.
fn child(folder: &Url, entry: &Entry, shown: &Path) -> Result<Option<(String, bool)>> {
    let refuse = |why: &str| {
        let what = format!("the server's listing names {}, {why}", scrub(&entry.href));
        io_error(&what, shown, None)
    };
    let url = folder.join(&entry.href).map_err(|e| refuse(&format!("not a URL ({e})")))?;
    if url.scheme() != folder.scheme()
        || url.host_str() != folder.host_str()
        || url.port_or_known_default() != folder.port_or_known_default()
    {
        return Err(refuse("on another host"));
    }
    let (here, _) = segments(folder).ok_or_else(|| refuse("and the folder's own path is not UTF-8"))?;
    let (there, slash) = segments(&url).ok_or_else(|| refuse("not a path of plain UTF-8 names"))?;
    let Some(rest) = there.strip_prefix(here.as_slice()) else {
        return Err(refuse("outside the folder listed"));
    };
    match rest {
        [] => Ok(None),
        [name] => {
            let plain = !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\0']);
            if !plain {
                return Err(refuse("not a plain name"));
            }
            Ok(Some((name.clone(), entry.collection || slash)))
        }
        _ => Err(refuse("deeper than the folder's own entries")),
    }
}

/// The percent-decoded segments of `url`'s path, a trailing `/` dropped
/// (and said); `None` if one is not UTF-8.
fn segments(url: &Url) -> Option<(Vec<String>, bool)> {
    let mut out: Vec<String> = Vec::new();
    for s in url.path_segments()? {
        out.push(percent_decode_str(s).decode_utf8().ok()?.into_owned());
    }
    let slash = out.last().is_some_and(String::is_empty);
    if slash {
        out.pop();
    }
    Some((out, slash))
}

/// Why an answer was refused.
#[derive(Debug)]
enum Parsed {
    /// More than the entries left room for.
    TooMany,
    /// Not WebDAV XML, in words.
    Bad(String),
}

/// The `<response>` entries of a multistatus (elements by local name),
/// at most `room`. A DOCTYPE (entities of its own) is refused.
fn parse(body: &[u8], room: usize) -> std::result::Result<Vec<Entry>, Parsed> {
    let mut reader = quick_xml::Reader::from_reader(body);
    reader.config_mut().trim_text(true);
    let mut stack: Vec<Vec<u8>> = Vec::new();
    let mut entries = Vec::new();
    let mut current: Option<(Option<String>, bool)> = None;
    let mut buf = Vec::new();
    let bad = |reader: &quick_xml::Reader<&[u8]>, why: String| {
        Parsed::Bad(format!("{why} at byte {}", reader.error_position().max(reader.buffer_position())))
    };
    let mut roots = 0usize;
    loop {
        let event = reader.read_event_into(&mut buf).map_err(|e| bad(&reader, e.to_string()))?;
        let in_href = matches!(stack.as_slice(), [.., r, h] if r == b"response" && h == b"href");
        match event {
            Event::Eof => break,
            Event::Start(ref s) | Event::Empty(ref s) => {
                let name = s.local_name().as_ref().to_vec();
                match (stack.as_slice(), name.as_slice()) {
                    ([], b"multistatus") => roots = roots.saturating_add(1),
                    ([], _) => return Err(bad(&reader, "the root element is not a multistatus".into())),
                    ([m], b"response") if m == b"multistatus" => {
                        if entries.len() >= room {
                            return Err(Parsed::TooMany);
                        }
                        current = Some((None, false));
                    }
                    ([.., t], b"collection") if t == b"resourcetype" => {
                        if let Some(c) = current.as_mut() {
                            c.1 = true;
                        }
                    }
                    ([.., r], b"href") if r == b"response" => {
                        if let Some((href @ None, _)) = current.as_mut() {
                            *href = Some(String::new());
                        } else {
                            return Err(bad(&reader, "a response with two hrefs".into()));
                        }
                    }
                    _ => {}
                }
                if roots > 1 {
                    return Err(bad(&reader, "two root elements".into()));
                }
                if matches!(event, Event::Start(_)) {
                    if stack.len() >= MAX_NESTING {
                        return Err(bad(&reader, format!("elements nested more than {MAX_NESTING} deep")));
                    }
                    stack.push(name);
                } else if name == b"response" && stack.len() == 1 {
                    return Err(bad(&reader, "a response without an href".into()));
                }
            }
            Event::End(_) => {
                let name = stack.pop().ok_or_else(|| bad(&reader, "an end tag without its start".into()))?;
                if name == b"response" && stack.len() == 1 {
                    match current.take() {
                        Some((Some(href), collection)) => entries.push(Entry { href, collection }),
                        _ => return Err(bad(&reader, "a response without an href".into())),
                    }
                }
            }
            Event::Text(ref t) if in_href => {
                let text = t.xml10_content().map_err(|e| bad(&reader, e.to_string()))?;
                push_href(&mut current, &text);
            }
            Event::CData(ref t) if in_href => {
                let text = t.decode().map_err(|e| bad(&reader, e.to_string()))?;
                push_href(&mut current, &text);
            }
            Event::GeneralRef(ref r) => {
                let ch = r.resolve_char_ref().map_err(|e| bad(&reader, e.to_string()))?;
                let text: Cow<'_, str> = match ch {
                    Some(c) => Cow::Owned(c.to_string()),
                    None => {
                        let name = r.decode().map_err(|e| bad(&reader, e.to_string()))?;
                        let known = quick_xml::escape::resolve_predefined_entity(&name);
                        Cow::Borrowed(known.ok_or_else(|| bad(&reader, format!("an unknown entity &{name};")))?)
                    }
                };
                if in_href {
                    push_href(&mut current, &text);
                }
            }
            Event::DocType(_) => return Err(bad(&reader, "a DOCTYPE".into())),
            _ => {}
        }
        buf.clear();
    }
    if roots == 0 || !stack.is_empty() {
        return Err(bad(&reader, "no complete multistatus".into()));
    }
    Ok(entries)
}

fn push_href(current: &mut Option<(Option<String>, bool)>, text: &str) {
    if let Some((Some(href), _)) = current.as_mut() {
        href.push_str(text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NGINX: &str = r#"<?xml version="1.0" encoding="utf-8" ?>
<D:multistatus xmlns:D="DAV:">
<D:response><D:href>/model/</D:href><D:propstat><D:prop><D:resourcetype><D:collection/></D:resourcetype>
<D:lockdiscovery/></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>
<D:response><D:href>/model/sub/</D:href><D:propstat><D:prop><D:resourcetype><D:collection/></D:resourcetype>
</D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>
<D:response><D:href>/model/a%20b&amp;c.json</D:href><D:propstat><D:prop><D:getcontentlength>8</D:getcontentlength>
<D:resourcetype></D:resourcetype></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>
</D:multistatus>"#;

    fn entries(xml: &str) -> Vec<Entry> {
        parse(xml.as_bytes(), 100).unwrap()
    }

    #[test]
    fn a_multistatus_gives_its_hrefs_and_collections() {
        let e = entries(NGINX);
        let hrefs: Vec<(&str, bool)> = e.iter().map(|e| (e.href.as_str(), e.collection)).collect();
        assert_eq!(hrefs, [("/model/", true), ("/model/sub/", true), ("/model/a%20b&c.json", false)]);
        // Any prefix, or none, for the DAV: namespace; an href in a lock is not the entry's.
        let other = r#"<multistatus xmlns="DAV:"><response><href>/m/x</href><propstat><prop>
            <lockdiscovery><activelock><locktoken><href>urn:x</href></locktoken></activelock></lockdiscovery>
            </prop></propstat></response></multistatus>"#;
        assert_eq!(entries(other), [Entry { href: "/m/x".into(), collection: false }]);
    }

    #[test]
    fn what_is_not_a_multistatus_is_refused_in_words() {
        for (xml, why) in [
            ("<D:multistatus xmlns:D=\"DAV:\"><D:response><D:href>/a", "no complete multistatus"),
            ("<html><body>Index of /</body></html>", "not a multistatus"),
            ("<multistatus><response><propstat/></response></multistatus>", "without an href"),
            ("<multistatus><response><href>/a</href><href>/b</href></response></multistatus>", "two hrefs"),
            ("<!DOCTYPE x [<!ENTITY e \"/etc\">]><multistatus/>", "DOCTYPE"),
            ("<multistatus><response><href>&e;</href></response></multistatus>", "unknown entity"),
            ("<multistatus></multistatus><multistatus/>", "two root elements"),
            ("<multistatus><response></multistatus>", "at byte"),
            ("", "no complete multistatus"),
        ] {
            match parse(xml.as_bytes(), 10) {
                Err(Parsed::Bad(w)) => assert!(w.contains(why), "{xml}: {w}"),
                other => panic!("{xml}: {other:?}"),
            }
        }
        let deep = format!("<multistatus>{}", "<a>".repeat(100));
        assert!(matches!(parse(deep.as_bytes(), 10), Err(Parsed::Bad(w)) if w.contains("nested")));
    }

    #[test]
    fn entries_past_the_room_left_are_refused_before_they_are_held() {
        let many = format!("<multistatus>{}</multistatus>", "<response><href>/m/x</href></response>".repeat(11));
        assert_eq!(parse(many.as_bytes(), 11).unwrap().len(), 11);
        assert!(matches!(parse(many.as_bytes(), 10), Err(Parsed::TooMany)));
    }

    #[test]
    fn only_the_folders_own_children_on_its_host_are_taken() {
        let folder = Url::parse("https://h:8443/model/").unwrap();
        let shown = Path::new("https://h:8443/model/");
        let e = |href: &str, collection: bool| Entry { href: href.into(), collection };
        let ok = |href: &str, collection: bool| child(&folder, &e(href, collection), shown).unwrap();
        assert_eq!(ok("/model/", true), None);
        assert_eq!(ok("/model", true), None);
        assert_eq!(ok("/model/a%20b.json", false), Some(("a b.json".into(), false)));
        assert_eq!(ok("sub/", false), Some(("sub".into(), true)));
        assert_eq!(ok("https://h:8443/model/x", false), Some(("x".into(), false)));
        for (href, why) in [
            ("/model/../secret", "outside the folder"),
            ("../secret", "outside the folder"),
            ("/model/%2e%2e/secret", "outside the folder"),
            ("/etc/passwd", "outside the folder"),
            ("https://other:8443/model/x", "another host"),
            ("https://h:9/model/x", "another host"),
            ("http://h:8443/model/x", "another host"),
            ("//other/model/x", "another host"),
            ("https://user:pw@other/model/x?sig=S3CR3T", "another host"),
            ("/model/sub/deeper", "deeper"),
            ("/model/a%2Fb", "not a plain name"),
            ("/model/a%00b", "not a plain name"),
            ("/model/%FF", "UTF-8"),
        ] {
            let err = child(&folder, &e(href, false), shown).unwrap_err().to_string();
            assert!(err.contains(why) && err.contains("https://h:8443/model/"), "{href}: {err}");
            assert!(!err.contains("S3CR3T") && !err.contains("pw@"), "{err}");
        }
    }

    #[test]
    fn a_folder_url_is_the_base_and_its_key_encoded() {
        let dav = Dav::new("https://h/", None, None, 0).unwrap();
        let shown = Path::new("https://h/");
        assert_eq!(dav.folder_url("", shown).unwrap().as_str(), "https://h/");
        assert_eq!(dav.folder_url("a b/sub/", shown).unwrap().as_str(), "https://h/a%20b/sub/");
    }
}
