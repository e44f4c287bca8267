//! The registry client's unit tests: the in-order check, the Bearer flow
//! and redirects against a hand-made registry.

use super::*;

fn d(bytes: &[u8]) -> Descriptor {
    Descriptor {
        media_type: "m".into(),
        hex: hex::encode(Sha256::digest(bytes)),
        size: bytes.len() as u64,
        annotations: vec![],
        artifact_type: None,
        platform: None,
    }
}

#[test]
fn blob_check_takes_only_the_exact_bytes() {
    let desc = d(b"hello world");
    let mut c = BlobCheck::new(&desc, "b");
    c.update(b"hello ").unwrap();
    c.update(b"world").unwrap();
    c.finish().unwrap();
    let mut c = BlobCheck::new(&desc, "b");
    c.update(b"hello w0rld").unwrap();
    let e = c.finish().unwrap_err().to_string();
    assert!(e.contains("not the ones its digest names") && e.contains(&desc.hex), "{e}");
    let mut c = BlobCheck::new(&desc, "b");
    c.update(b"hello").unwrap();
    assert!(c.finish().unwrap_err().to_string().contains("found 5 bytes"));
    let mut c = BlobCheck::new(&desc, "b");
    assert!(c.update(b"hello world!").is_err());
}

/// A registry of one manifest and one blob, by hand: a Bearer
/// challenge, a token service on its own origin that wants the basic
/// credentials, and blob GETs redirected to a storage server on another
/// port. Every request's headers are recorded.
struct Fake {
    port: u16,
    storage_port: u16,
    seen: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

fn serve(
    listener: std::net::TcpListener,
    seen: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    answer: impl Fn(&str) -> String + Send + 'static,
) {
    std::thread::spawn(move || {
        use std::io::{BufRead, BufReader, Write};
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut head = String::new();
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                head.push_str(&line);
            }
            seen.lock().unwrap().push(head.clone());
            let mut out = stream;
            let _ = out.write_all(answer(&head).as_bytes());
        }
    });
}

fn fake(manifest: String, blob: &'static [u8]) -> Fake {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let storage = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let storage_port = storage.local_addr().unwrap().port();
    serve(storage, seen.clone(), move |_| {
        let mut r = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", blob.len());
        r.push_str(std::str::from_utf8(blob).unwrap());
        r
    });
    let registry = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = registry.local_addr().unwrap().port();
    serve(registry, seen.clone(), move |head| {
        let reply = |status: &str, extra: &str, body: &str| {
            format!("HTTP/1.1 {status}\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len())
        };
        let line = head.lines().next().unwrap_or("");
        if line.starts_with("GET /token?service=svc&scope=repository%3Aa%2Fb%3Apull ") {
            // alice:pw
            return if head.contains("authorization: Basic YWxpY2U6cHc=")
                || head.contains("Authorization: Basic YWxpY2U6cHc=")
            {
                reply("200 OK", "", r#"{"token": "T0K"}"#)
            } else {
                reply("401 Unauthorized", "", "")
            };
        }
        if !head.to_ascii_lowercase().contains("authorization: bearer t0k") {
            let challenge =
                format!(r#"Www-Authenticate: Bearer realm="http://127.0.0.1:{port}/token",service="svc"\r\n"#);
            return reply("401 Unauthorized", &challenge, "");
        }
        if line.starts_with("GET /v2/a/b/manifests/t ") {
            return reply("200 OK", "Content-Type: application/vnd.oci.image.manifest.v1+json\r\n", &manifest);
        }
        if line.starts_with("GET /v2/a/b/blobs/") {
            return reply(
                "307 Temporary Redirect",
                &format!("Location: http://127.0.0.1:{storage_port}/data?X-Sig=s3cr3t\r\n"),
                "",
            );
        }
        reply("404 Not Found", "", r#"{"errors": [{"code": "MANIFEST_UNKNOWN", "message": "manifest unknown"}]}"#)
    });
    Fake { port, storage_port, seen }
}

#[test]
fn bearer_tokens_and_redirects_without_credentials() {
    static BLOB: &[u8] = b"the blob's bytes";
    let layer = d(BLOB);
    let config = d(b"{}");
    let manifest = format!(
        r#"{{"schemaVersion": 2, "config": {{"mediaType": "c", "digest": "sha256:{}", "size": 2}},
           "layers": [{{"mediaType": "l", "digest": "sha256:{}", "size": {}}}]}}"#,
        config.hex,
        layer.hex,
        BLOB.len()
    );
    let f = fake(manifest, BLOB);
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("config.json");
    std::fs::write(&cfg, format!(r#"{{"auths": {{"127.0.0.1:{}": {{"auth": "YWxpY2U6cHc="}}}}}}"#, f.port)).unwrap();
    let r = Reference::parse(&format!("oci://127.0.0.1:{}/a/b:t", f.port)).unwrap();
    let c = Client::new(&r, &Options { allow_http: true, ca_file: None, config: Some(cfg) }).unwrap();
    let resolved = c.resolve().unwrap();
    assert_eq!(resolved.manifest.layers[0].hex, layer.hex);
    assert_eq!(c.blob(&resolved.manifest.layers[0], 1024).unwrap(), BLOB);
    let seen = f.seen.lock().unwrap().clone();
    let storage: Vec<&String> = seen.iter().filter(|h| h.contains(&format!("127.0.0.1:{}", f.storage_port))).collect();
    assert_eq!(storage.len(), 1, "{seen:?}");
    assert!(
        !storage[0].to_ascii_lowercase().contains("authorization"),
        "no credentials to the storage host: {}",
        storage[0]
    );
    assert!(seen.iter().any(|h| h.starts_with("GET /token")), "a token was asked for");
    // A tag it does not hold: not found, by name.
    let missing = Reference::parse(&format!("oci://127.0.0.1:{}/a/b:gone", f.port)).unwrap();
    let c = Client::new(
        &missing,
        &Options { allow_http: true, ca_file: None, config: Some(dir.path().join("config.json")) },
    )
    .unwrap();
    let e = c.resolve().unwrap_err();
    assert!(e.is_not_found() && e.to_string().contains(":gone is not in the registry (MANIFEST_UNKNOWN"), "{e}");
    // Without the basic credentials the token service refuses: said so.
    let c = Client::new(&r, &Options { allow_http: true, ca_file: None, config: Some(dir.path().join("none.json")) })
        .unwrap();
    let e = c.resolve().unwrap_err().to_string();
    assert!(e.contains("token service") && e.contains("anonymously"), "{e}");
}

#[test]
fn credentials_go_to_the_registry_origin_only() {
    let r = Reference::parse("oci://localhost:5000/a/b:t").unwrap();
    let c =
        Client::new(&r, &Options { allow_http: true, ca_file: None, config: Some("/nonexistent/config.json".into()) })
            .unwrap();
    for (url, same) in [
        ("http://localhost:5000/v2/a/b/blobs/x", true),
        ("http://localhost:5001/v2/a/b/blobs/x", false),
        ("https://localhost:5000/v2/a/b/blobs/x", false),
        ("http://127.0.0.1:5000/v2/a/b/blobs/x", false),
        ("http://storage.example/v2/a/b/blobs/x", false),
    ] {
        assert_eq!(c.same_origin(&Url::parse(url).unwrap()), same, "{url}");
    }
    assert_eq!(c.repo_url("manifests/t").unwrap().as_str(), "http://localhost:5000/v2/a/b/manifests/t");
    let hub = Client::new(&Reference::parse("oci://docker.io/m").unwrap(), &Options::default()).unwrap();
    assert_eq!(
        hub.repo_url("manifests/latest").unwrap().as_str(),
        "https://registry-1.docker.io/v2/library/m/manifests/latest"
    );
}

/// A registry whose tokens expire: the token service hands out `T1`, then
/// `T2`; the manifest is served to either, the blob only to `T2` (to `T1`
/// a 401 with `error="invalid_token"`, as the distribution registry
/// answers an expired token). With `refuse_all`, no token is accepted.
fn expiring(manifest: String, blob: &'static [u8], refuse_all: bool) -> u16 {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let issued = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let registry = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = registry.local_addr().unwrap().port();
    serve(registry, seen, move |head| {
        let reply = |status: &str, extra: &str, body: &str| {
            format!("HTTP/1.1 {status}\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len())
        };
        let line = head.lines().next().unwrap_or("");
        if line.starts_with("GET /token?") {
            let n = issued.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            return reply("200 OK", "", &format!(r#"{{"access_token": "T{}", "expires_in": 60}}"#, n + 1));
        }
        let lower = head.to_ascii_lowercase();
        let token = ["t1", "t2"].into_iter().find(|t| lower.contains(&format!("authorization: bearer {t}\r\n")));
        let challenge = |error: &str| {
            format!(r#"Www-Authenticate: Bearer realm="http://127.0.0.1:{port}/token",service="svc"{error}"#) + "\r\n"
        };
        let valid = match token {
            None => return reply("401 Unauthorized", &challenge(""), ""),
            Some(_) if refuse_all => false,
            Some(t) => t == "t2" || line.starts_with("GET /v2/a/b/manifests/"),
        };
        if !valid {
            return reply("401 Unauthorized", &challenge(r#",error="invalid_token""#), "");
        }
        if line.starts_with("GET /v2/a/b/manifests/t ") {
            return reply("200 OK", "Content-Type: application/vnd.oci.image.manifest.v1+json\r\n", &manifest);
        }
        reply("200 OK", "", std::str::from_utf8(blob).unwrap())
    });
    port
}

#[test]
fn an_expired_token_is_fetched_again_and_a_refused_one_named() {
    static BLOB: &[u8] = b"the blob's bytes";
    let layer = d(BLOB);
    let manifest = format!(
        r#"{{"schemaVersion": 2, "config": {{"mediaType": "c", "digest": "sha256:{}", "size": 2}},
           "layers": [{{"mediaType": "l", "digest": "sha256:{}", "size": {}}}]}}"#,
        d(b"{}").hex,
        layer.hex,
        BLOB.len()
    );
    let options = Options { allow_http: true, ca_file: None, config: Some("/nonexistent/config.json".into()) };
    let port = expiring(manifest.clone(), BLOB, false);
    let c = Client::new(&Reference::parse(&format!("oci://127.0.0.1:{port}/a/b:t")).unwrap(), &options).unwrap();
    let resolved = c.resolve().unwrap();
    assert_eq!(c.current_auth().unwrap().as_deref(), Some("Bearer T1"));
    assert_eq!(c.blob(&resolved.manifest.layers[0], 1024).unwrap(), BLOB, "T1 expired, T2 fetched");
    assert_eq!(c.current_auth().unwrap().as_deref(), Some("Bearer T2"));
    // A registry that refuses every token: the error names the token
    // service and the registry's reason, once (no loop).
    let port = expiring(manifest, BLOB, true);
    let c = Client::new(&Reference::parse(&format!("oci://127.0.0.1:{port}/a/b:t")).unwrap(), &options).unwrap();
    let e = c.resolve().unwrap_err().to_string();
    assert!(
        e.contains(&format!("the registry 127.0.0.1:{port} refused access: HTTP 401 Unauthorized: it refused the token from http://127.0.0.1:{port}/token (invalid_token)")),
        "{e}"
    );
}
