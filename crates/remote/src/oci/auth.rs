//! Registry credentials: a 401's `WWW-Authenticate` challenge, and the
//! `~/.docker/config.json` `auths` entry for the registry's host.
//!
//! The token flow is the distribution spec's: a `Bearer` challenge names a
//! `realm` (the token service), a `service` and a `scope`; the token is
//! asked for `repository:NAME:pull`, anonymously or with the user's basic
//! credentials, and sent as `Authorization: Bearer` to the registry only. A
//! `Basic` challenge gets the basic credentials directly.
//!
//! Credentials come only from the config file's `auths` (`auth`, the
//! base64 of `user:password`, or `username` and `password`). A
//! `credsStore` or `credHelpers` entry names a program
//! (`docker-credential-NAME`): this tool never runs a program an input or
//! a config names, so such credentials are not used, and an error says so.
//! `identitytoken` (an OAuth2 refresh token) is not used either.

use std::path::{Path, PathBuf};

use base64::Engine as _;

use crate::json::{Json, parse_strict};

/// The largest config file read.
const MAX_CONFIG: u64 = 4 << 20;

/// A user name and password for one registry. Its `Debug` shows neither.
#[derive(Clone, PartialEq, Eq)]
pub struct Basic {
    user: String,
    password: String,
}

impl Basic {
    /// Credentials from their parts.
    pub fn new(user: &str, password: &str) -> Basic {
        Basic { user: user.to_string(), password: password.to_string() }
    }

    /// The value of an `Authorization: Basic` header.
    pub fn header(&self) -> String {
        let raw = format!("{}:{}", self.user, self.password);
        format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(raw))
    }

    /// The user name and password, for a client's own basic-auth call.
    pub fn parts(&self) -> (&str, &str) {
        (&self.user, &self.password)
    }
}

impl std::fmt::Debug for Basic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Basic(<redacted>)")
    }
}

/// What the config file says of one registry.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Found {
    /// Inline credentials, when the `auths` entry holds them.
    pub basic: Option<Basic>,
    /// The credential helper that keeps this registry's credentials (not
    /// run), for the message of a refusal.
    pub helper: Option<String>,
    /// The config file read, for messages.
    pub file: Option<PathBuf>,
}

/// The config file: `$DOCKER_CONFIG/config.json`, else
/// `$HOME/.docker/config.json`.
pub fn config_path() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("DOCKER_CONFIG").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir).join("config.json"));
    }
    std::env::var_os("HOME").filter(|h| !h.is_empty()).map(|h| PathBuf::from(h).join(".docker").join("config.json"))
}

/// The credentials the config file at `path` holds for `registry`
/// (`host[:port]`). A missing file is no credentials; a file that is not
/// strict JSON, or an `auths` entry that cannot be decoded, is an error
/// (naming the file and the registry, never a secret).
pub fn lookup(path: &Path, registry: &str) -> Result<Found, String> {
    let text = match std::fs::File::open(path) {
        Ok(f) => {
            use std::io::Read as _;
            let mut text = Vec::new();
            f.take(MAX_CONFIG.saturating_add(1))
                .read_to_end(&mut text)
                .map_err(|e| format!("{}: {e}", path.display()))?;
            if text.len() as u64 > MAX_CONFIG {
                return Err(format!("{}: larger than {} MiB", path.display(), MAX_CONFIG >> 20));
            }
            text
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Found::default()),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    let found = from_text(&text, registry).map_err(|why| format!("{}: {why}", path.display()))?;
    Ok(Found { file: Some(path.to_path_buf()), ..found })
}

/// [`lookup`] on the config's bytes.
pub fn from_text(text: &[u8], registry: &str) -> Result<Found, String> {
    let json = parse_strict(text, 16).map_err(|e| e.to_string())?;
    if json.as_object().is_none() {
        return Err(format!("a JSON {}, not an object", json.kind()));
    }
    let mut found = Found::default();
    if let Some(auths) = json.get("auths") {
        let members = auths.as_object().ok_or("auths is not an object")?;
        for (key, entry) in members {
            if auth_key_host(key) != registry_key(registry) {
                continue;
            }
            if let Some(basic) = entry_basic(entry).map_err(|why| format!("auths entry for {registry}: {why}"))? {
                found.basic = Some(basic);
                break;
            }
        }
    }
    if found.basic.is_none() {
        let helper = json
            .get("credHelpers")
            .and_then(|h| h.as_object())
            .and_then(|m| m.iter().find(|(k, _)| auth_key_host(k) == registry_key(registry)))
            .and_then(|(_, v)| v.as_str())
            .or_else(|| json.get("credsStore").and_then(Json::as_str));
        found.helper = helper.filter(|h| !h.is_empty()).map(|h| format!("docker-credential-{h}"));
    }
    Ok(found)
}

fn entry_basic(entry: &Json) -> Result<Option<Basic>, String> {
    if entry.as_object().is_none() {
        return Err(format!("a JSON {}, not an object", entry.kind()));
    }
    if let Some(auth) = entry.get("auth").and_then(Json::as_str).filter(|a| !a.is_empty()) {
        let raw = base64::engine::general_purpose::STANDARD
            .decode(auth.trim())
            .map_err(|_| "auth is not base64".to_string())?;
        let raw = String::from_utf8(raw).map_err(|_| "auth is not UTF-8 once decoded".to_string())?;
        let (user, password) = raw.split_once(':').ok_or("auth is not user:password once decoded")?;
        return Ok(Some(Basic::new(user, password)));
    }
    match (entry.get("username").and_then(Json::as_str), entry.get("password").and_then(Json::as_str)) {
        (Some(u), Some(p)) if !u.is_empty() => Ok(Some(Basic::new(u, p))),
        _ => Ok(None),
    }
}

/// The host of an `auths` key, which may be a URL (`https://index.docker.io/v1/`).
fn auth_key_host(key: &str) -> String {
    let rest = key.strip_prefix("https://").or_else(|| key.strip_prefix("http://")).unwrap_or(key);
    registry_key(rest.split('/').next().unwrap_or(rest))
}

/// Docker Hub's names, folded into the one Docker writes.
fn registry_key(registry: &str) -> String {
    match registry {
        "docker.io" | "registry-1.docker.io" | "index.docker.io" => "index.docker.io".to_string(),
        other => other.to_ascii_lowercase(),
    }
}

/// One challenge of a `WWW-Authenticate` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Challenge {
    /// The scheme, lowercased (`bearer`, `basic`).
    pub scheme: String,
    /// Its parameters, names lowercased, values unquoted.
    pub params: Vec<(String, String)>,
}

impl Challenge {
    /// A parameter's value.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}

/// Parses a `WWW-Authenticate` value (RFC 7235: challenges separated by
/// commas, each a scheme and `name=value` or `name="quoted"` parameters).
/// `None` when it cannot be read.
pub fn parse_challenges(header: &str) -> Option<Vec<Challenge>> {
    let mut out: Vec<Challenge> = Vec::new();
    let mut rest = header.trim_start();
    while !rest.is_empty() {
        // A token, then either '=' (a parameter of the current challenge)
        // or a space/comma/end (a new challenge's scheme).
        let end = rest.find(|c: char| c == '=' || c == ',' || c.is_whitespace()).unwrap_or(rest.len());
        let token = rest.get(..end)?;
        rest = rest.get(end..)?.trim_start();
        if let Some(after) = rest.strip_prefix('=') {
            let after = after.trim_start();
            let (value, tail) = if let Some(q) = after.strip_prefix('"') {
                let mut value = String::new();
                let mut chars = q.char_indices();
                let mut close = None;
                while let Some((i, c)) = chars.next() {
                    match c {
                        '\\' => value.push(chars.next()?.1),
                        '"' => {
                            close = Some(i);
                            break;
                        }
                        c => value.push(c),
                    }
                }
                (value, q.get(close?.saturating_add(1)..)?)
            } else {
                let e = after.find(|c: char| c == ',' || c.is_whitespace()).unwrap_or(after.len());
                (after.get(..e)?.to_string(), after.get(e..)?)
            };
            out.last_mut()?.params.push((token.to_ascii_lowercase(), value));
            rest = tail.trim_start();
        } else {
            if token.is_empty() {
                return None;
            }
            out.push(Challenge { scheme: token.to_ascii_lowercase(), params: Vec::new() });
        }
        rest = rest.strip_prefix(',').unwrap_or(rest).trim_start();
    }
    if out.is_empty() { None } else { Some(out) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges_as_registries_write_them() {
        let c = parse_challenges(
            r#"Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:ai/smollm2:pull""#,
        )
        .unwrap();
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].scheme, "bearer");
        assert_eq!(c[0].param("realm"), Some("https://auth.docker.io/token"));
        assert_eq!(c[0].param("scope"), Some("repository:ai/smollm2:pull"));
        let c = parse_challenges(r#"Basic realm="Registry Realm", Bearer realm="x\"y", service=s"#).unwrap();
        assert_eq!(c.iter().map(|c| c.scheme.as_str()).collect::<Vec<_>>(), ["basic", "bearer"]);
        assert_eq!(c[0].param("realm"), Some("Registry Realm"));
        assert_eq!(c[1].param("realm"), Some("x\"y"));
        assert_eq!(c[1].param("service"), Some("s"));
        for bad in ["", "realm=x", r#"Bearer realm="open"#] {
            assert_eq!(parse_challenges(bad), None, "{bad}");
        }
    }

    #[test]
    fn auths_by_host_and_helpers_named_never_run() {
        let b64 = base64::engine::general_purpose::STANDARD.encode("alice:s3cret");
        let text = format!(
            r#"{{"auths": {{"https://index.docker.io/v1/": {{"auth": "{b64}"}},
                "localhost:5000": {{"username": "bob", "password": "pw"}},
                "ghcr.io": {{}}}},
               "credsStore": "desktop", "credHelpers": {{"quay.io": "quay"}}}}"#
        );
        let hub = from_text(text.as_bytes(), "registry-1.docker.io").unwrap();
        assert_eq!(hub.basic, Some(Basic::new("alice", "s3cret")));
        assert_eq!(hub.helper, None);
        let local = from_text(text.as_bytes(), "localhost:5000").unwrap();
        assert_eq!(local.basic.as_ref().map(|b| b.parts()), Some(("bob", "pw")));
        assert!(!format!("{local:?}").contains("pw"), "Debug shows no secret");
        let quay = from_text(text.as_bytes(), "quay.io").unwrap();
        assert_eq!((quay.basic, quay.helper.as_deref()), (None, Some("docker-credential-quay")));
        let ghcr = from_text(text.as_bytes(), "ghcr.io").unwrap();
        assert_eq!((ghcr.basic, ghcr.helper.as_deref()), (None, Some("docker-credential-desktop")));
        assert_eq!(Basic::new("a", "b").header(), "Basic YTpi");
    }

    #[test]
    fn a_bad_config_is_an_error_without_secrets() {
        for bad in [
            r#"[]"#,
            r#"{"auths": []}"#,
            r#"{"auths": {"h": {"auth": "!!"}}}"#,
            r#"{"auths": {"h": {"auth": "bm9jb2xvbg=="}}}"#,
        ] {
            let e = from_text(bad.as_bytes(), "h").unwrap_err();
            assert!(!e.contains("nocolon"), "{e}");
        }
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(lookup(&dir.path().join("none.json"), "h").unwrap(), Found::default());
    }
}
