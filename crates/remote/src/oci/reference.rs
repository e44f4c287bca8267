//! `oci://REGISTRY/REPOSITORY[:TAG][@sha256:HEX]`: an argument naming a
//! manifest in a registry, checked by the distribution spec's grammar
//! before any request is made.
//!
//! The registry is always written out (no implicit Docker Hub, unlike
//! `docker pull`): the host a request goes to is the one the user typed,
//! except that `docker.io` is Docker Hub's name and its API answers at
//! `registry-1.docker.io` (a one-component repository there is
//! `library/NAME`, as Docker spells it).

use super::error::OciErrorKind;
use crate::Result;

/// The scheme of an OCI reference argument.
pub const SCHEME: &str = "oci://";

/// The longest repository name the distribution spec allows.
const MAX_REPOSITORY: usize = 255;
/// The longest tag.
const MAX_TAG: usize = 128;

/// A parsed `oci://` reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    /// The registry as written: a host name or address, maybe `:PORT`.
    pub registry: String,
    /// The repository, components joined by `/`.
    pub repository: String,
    /// The tag, when one was written (`latest` when neither tag nor digest
    /// was).
    pub tag: Option<String>,
    /// The manifest's SHA-256 (64 lowercase hex digits), when written: it
    /// wins over a tag, and the manifest's bytes must hash to it.
    pub digest: Option<String>,
}

impl Reference {
    /// Parses an `oci://` argument. Errors name what is wrong, never more
    /// of the argument than the argument itself.
    pub fn parse(text: &str) -> Result<Reference> {
        let bad = |why: &str| OciErrorKind::Reference { reference: text.to_string(), why: why.to_string() };
        let rest = text.strip_prefix(SCHEME).ok_or_else(|| bad("it does not start with oci://"))?;
        let (registry, path) = rest.split_once('/').ok_or_else(|| bad("it names no repository after the registry"))?;
        check_registry(registry).map_err(|why| bad(&why))?;
        let (name_tag, digest) = match path.split_once('@') {
            Some((n, d)) => (n, Some(check_digest(d).map_err(|why| bad(&why))?)),
            None => (path, None),
        };
        // A tag follows the last ':' after the last '/' (a port is in the
        // registry, already split off).
        let last_slash = name_tag.rfind('/').map_or(0, |i| i.saturating_add(1));
        let tail = name_tag.get(last_slash..).unwrap_or("");
        let (repository, tag) = match tail.find(':') {
            Some(i) => {
                let cut = last_slash.saturating_add(i);
                let repo = name_tag.get(..cut).unwrap_or("");
                let tag = name_tag.get(cut.saturating_add(1)..).unwrap_or("");
                check_tag(tag).map_err(|why| bad(&why))?;
                (repo, Some(tag.to_string()))
            }
            None => (name_tag, None),
        };
        check_repository(repository).map_err(|why| bad(&why))?;
        let tag = if tag.is_none() && digest.is_none() { Some("latest".to_string()) } else { tag };
        Ok(Reference { registry: registry.to_string(), repository: repository.to_string(), tag, digest })
    }

    /// What the manifest request names: `sha256:HEX` when a digest was
    /// written, else the tag.
    pub fn manifest_reference(&self) -> String {
        match (&self.digest, &self.tag) {
            (Some(d), _) => format!("sha256:{d}"),
            (None, Some(t)) => t.clone(),
            (None, None) => "latest".to_string(),
        }
    }

    /// The host (and port) requests go to: the registry, except Docker
    /// Hub's API host for `docker.io`.
    pub fn api_host(&self) -> &str {
        if self.registry == "docker.io" || self.registry == "index.docker.io" {
            "registry-1.docker.io"
        } else {
            &self.registry
        }
    }

    /// The repository as the API names it (`library/NAME` on Docker Hub for
    /// a one-component name).
    pub fn api_repository(&self) -> String {
        if self.api_host() == "registry-1.docker.io" && !self.repository.contains('/') {
            format!("library/{}", self.repository)
        } else {
            self.repository.clone()
        }
    }

    /// True when the registry is this machine (`localhost`, `127.x.x.x`,
    /// `[::1]`): what plain `http://` may reach once allowed.
    pub fn is_loopback(&self) -> bool {
        let host = host_of(&self.registry);
        host == "localhost" || host == "[::1]" || host.starts_with("127.")
    }
}

impl std::fmt::Display for Reference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{SCHEME}{}/{}", self.registry, self.repository)?;
        if let Some(t) = &self.tag {
            write!(f, ":{t}")?;
        }
        if let Some(d) = &self.digest {
            write!(f, "@sha256:{d}")?;
        }
        Ok(())
    }
}

/// The host of `host[:port]` (a bracketed IPv6 address kept whole).
pub fn host_of(registry: &str) -> &str {
    if registry.starts_with('[') {
        return registry.find(']').and_then(|i| registry.get(..=i)).unwrap_or(registry);
    }
    registry.split_once(':').map_or(registry, |(h, _)| h)
}

fn check_registry(registry: &str) -> std::result::Result<(), String> {
    if registry.is_empty() {
        return Err("the registry is empty".into());
    }
    let (host, port) = if let Some(rest) = registry.strip_prefix('[') {
        let (addr, after) = rest.split_once(']').ok_or("an IPv6 registry address lacks its ']'")?;
        if addr.is_empty() || !addr.bytes().all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.') {
            return Err(format!("the registry address [{addr}] is no IPv6 address"));
        }
        let port = match after {
            "" => None,
            p => Some(p.strip_prefix(':').ok_or("the registry address is followed by neither ':PORT' nor '/'")?),
        };
        (None, port)
    } else {
        match registry.split_once(':') {
            Some((h, p)) => (Some(h), Some(p)),
            None => (Some(registry), None),
        }
    };
    if let Some(host) = host {
        let ok_label = |l: &str| {
            !l.is_empty()
                && l.len() <= 63
                && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                && !l.starts_with('-')
                && !l.ends_with('-')
        };
        if host.len() > 253 || !host.split('.').all(ok_label) {
            return Err(format!("the registry host {host:?} is no host name"));
        }
    }
    if let Some(port) = port {
        if port.is_empty() || port.len() > 5 || !port.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!("the registry port {port:?} is no port number"));
        }
        match port.parse::<u32>() {
            Ok(1..=65535) => {}
            _ => return Err(format!("the registry port {port} is out of range")),
        }
    }
    Ok(())
}

fn check_repository(repo: &str) -> std::result::Result<(), String> {
    if repo.is_empty() {
        return Err("the repository is empty".into());
    }
    if repo.len() > MAX_REPOSITORY {
        return Err(format!("the repository is longer than {MAX_REPOSITORY} bytes"));
    }
    for component in repo.split('/') {
        if !component_ok(component) {
            return Err(format!(
                "the repository component {component:?} is not lowercase letters and digits joined by '.', '_', '__' or '-'"
            ));
        }
    }
    Ok(())
}

/// `[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*`, by hand.
fn component_ok(c: &str) -> bool {
    let alnum = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    let bytes = c.as_bytes();
    let (Some(&first), Some(&last)) = (bytes.first(), bytes.last()) else { return false };
    if !alnum(first) || !alnum(last) {
        return false;
    }
    // Separators between alphanumeric runs: one '.', one or two '_', or any run of '-'.
    let mut run = String::new();
    for &b in bytes {
        if alnum(b) {
            let ok = matches!(run.as_str(), "" | "." | "_" | "__") || run.bytes().all(|s| s == b'-');
            if !ok {
                return false;
            }
            run.clear();
        } else if matches!(b, b'.' | b'_' | b'-') {
            run.push(char::from(b));
        } else {
            return false;
        }
    }
    true
}

fn check_tag(tag: &str) -> std::result::Result<(), String> {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let bytes = tag.as_bytes();
    match bytes.first() {
        None => Err("the tag after ':' is empty".into()),
        _ if bytes.len() > MAX_TAG => Err(format!("the tag is longer than {MAX_TAG} bytes")),
        Some(&b) if !word(b) => Err(format!("the tag {tag:?} does not start with a letter, digit or '_'")),
        _ if !bytes.iter().all(|&b| word(b) || b == b'.' || b == b'-') => {
            Err(format!("the tag {tag:?} holds a byte other than letters, digits, '_', '.' and '-'"))
        }
        _ => Ok(()),
    }
}

/// `sha256:` and 64 lowercase hex digits: the hex. Other algorithms the
/// spec registers (sha512) are refused by name.
pub fn check_digest(d: &str) -> std::result::Result<String, String> {
    let Some(hex) = d.strip_prefix("sha256:") else {
        return Err(match d.split_once(':') {
            Some((alg, _)) => format!("the digest algorithm {alg:?} is not supported (only sha256)"),
            None => "the digest is not of the form sha256:HEX".into(),
        });
    };
    if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
        return Err("a sha256 digest is 64 lowercase hex digits".into());
    }
    Ok(hex.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(s: &str) -> Reference {
        Reference::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn tags_digests_ports_and_defaults() {
        let r = ok("oci://localhost:5000/library/tiny:v1.0");
        assert_eq!(
            (r.registry.as_str(), r.repository.as_str(), r.tag.as_deref()),
            ("localhost:5000", "library/tiny", Some("v1.0"))
        );
        assert_eq!(r.manifest_reference(), "v1.0");
        assert!(r.is_loopback());
        let hex = "a".repeat(64);
        let r = ok(&format!("oci://ghcr.io/org/m@sha256:{hex}"));
        assert_eq!((r.tag.as_deref(), r.digest.as_deref()), (None, Some(hex.as_str())));
        assert_eq!(r.manifest_reference(), format!("sha256:{hex}"));
        let r = ok(&format!("oci://ghcr.io/org/m:t@sha256:{hex}"));
        assert_eq!(r.manifest_reference(), format!("sha256:{hex}"), "the digest wins");
        assert_eq!(r.to_string(), format!("oci://ghcr.io/org/m:t@sha256:{hex}"));
        let r = ok("oci://registry.ollama.ai/library/smollm2");
        assert_eq!(r.tag.as_deref(), Some("latest"));
        assert!(!r.is_loopback());
        let r = ok("oci://[::1]:5000/a/b-c__d.e:x");
        assert!(r.is_loopback());
        assert_eq!(r.repository, "a/b-c__d.e");
        let r = ok("oci://docker.io/smollm2:135M");
        assert_eq!((r.api_host(), r.api_repository().as_str()), ("registry-1.docker.io", "library/smollm2"));
        assert_eq!(ok("oci://docker.io/ai/smollm2").api_repository(), "ai/smollm2");
    }

    #[test]
    fn refusals_say_why() {
        for (bad, why) in [
            ("localhost/x:y", "oci://"),
            ("oci://localhost", "no repository"),
            ("oci:///x", "registry is empty"),
            ("oci://local_host/x", "no host name"),
            ("oci://h:0/x", "out of range"),
            ("oci://h:99999/x", "out of range"),
            ("oci://h:p/x", "no port"),
            ("oci://h/X", "lowercase"),
            ("oci://h/a//b", "lowercase"),
            ("oci://h/a..b", "lowercase"),
            ("oci://h/a___b", "lowercase"),
            ("oci://h/-a", "lowercase"),
            ("oci://h/a:", "empty"),
            ("oci://h/a:.x", "does not start"),
            ("oci://h/a:x/y", "lowercase"),
            ("oci://h/a:x+y", "holds a byte"),
            ("oci://h/a@sha512:ab", "not supported"),
            ("oci://h/a@sha256:AB", "64 lowercase"),
            ("oci://h/a@abc", "not of the form"),
            ("oci://[zz]/a", "no IPv6"),
        ] {
            let e = Reference::parse(bad).err().unwrap_or_else(|| panic!("{bad} was accepted")).to_string();
            assert!(e.contains(why), "{bad}: {e}");
        }
        let long = format!("oci://h/{}", "a".repeat(256));
        assert!(Reference::parse(&long).is_err());
        let long_tag = format!("oci://h/a:{}", "t".repeat(129));
        assert!(Reference::parse(&long_tag).is_err());
    }
}
