//! HTTP and HTTPS through Debian's nginx: every model's label over a URL
//! equals its label on disk; external data found beside the object; a
//! redirect to another host followed without the credentials; a cut
//! connection retried; an object replaced mid-read refused; `http://`
//! refused without `--allow-http`; credentials never printed.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use crate::common::{Dir, text};
use crate::models::{file_label, label, models, onnx_external, run};
use crate::servers::{Faults, Nginx, Proxy, make_tls, tool};

/// The models written into a folder nginx serves.
fn served() -> Option<(Dir, Nginx)> {
    let nginx = tool("nginx")?;
    let d = Dir::new();
    for (name, bytes) in models() {
        d.write(name, &bytes);
    }
    let server = Nginx::start(&nginx, d.path("").as_path(), None);
    Some((d, server))
}

#[test]
fn every_model_over_http_has_its_label_on_disk() {
    let Some((d, server)) = served() else { return };
    for (name, _) in models() {
        let url = format!("http://127.0.0.1:{}/{name}", server.port);
        assert_eq!(label(&["--allow-http"], &url), file_label(&d.path(name)), "{name}");
    }
    // The sums line names the URL as given; --check reads it back.
    let url = format!("http://127.0.0.1:{}/m.gguf", server.port);
    let out = run(&["--allow-http", &url]);
    let line = text(&out.stdout);
    assert!(line.ends_with(&format!("  {url}\n")), "{line}");
    let sums = d.write("sums", line.as_bytes());
    let out = run(&["--allow-http", "--check", sums.to_str().unwrap()]);
    assert!(out.status.success(), "{}{}", text(&out.stdout), text(&out.stderr));
    assert_eq!(text(&out.stdout), format!("{url}: OK\n"));
    // --json names the URL too.
    let out = run(&["--allow-http", "--json", &url]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains(&format!("\"{url}\"")), "{}", text(&out.stdout));
}

#[test]
fn http_is_refused_without_allow_http_and_a_missing_object_is_an_error() {
    let Some((_d, server)) = served() else { return };
    let url = format!("http://127.0.0.1:{}/m.gguf", server.port);
    let out = run(&[&url]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--allow-http"), "{}", text(&out.stderr));
    let out = run(&["--allow-http", &format!("http://127.0.0.1:{}/none.gguf", server.port)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("none.gguf"), "{}", text(&out.stderr));
}

#[test]
fn onnx_external_data_is_read_beside_the_object_only() {
    let Some(nginx) = tool("nginx") else { return };
    let d = Dir::new();
    d.write("e.onnx", &onnx_external());
    d.write("w.bin", &[0, 0, 0x80, 0x3f, 0, 0, 0, 0x40]);
    let server = Nginx::start(&nginx, d.path("").as_path(), None);
    let url = format!("http://127.0.0.1:{}/e.onnx", server.port);
    assert_eq!(label(&["--allow-http"], &url), file_label(&d.path("e.onnx")));
}

#[test]
fn a_redirect_to_another_host_is_followed_without_the_credentials() {
    let Some((d, server)) = served() else { return };
    let url = format!("http://alice:s3cr3t@127.0.0.1:{}/moved/m.safetensors", server.port);
    let out = run(&["--allow-http", &url]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let printed = text(&out.stdout);
    assert!(!printed.contains("s3cr3t") && !printed.contains("alice"), "{printed}");
    assert_eq!(printed.split_whitespace().next().unwrap(), file_label(&d.path("m.safetensors")));
    let log = server.other_log();
    assert!(log.contains("GET /m.safetensors"), "the other host was reached: {log}");
    // nginx logs an absent header as `-`.
    assert!(log.lines().all(|l| l.starts_with("[-] ")), "credentials reached another host: {log}");
    // An error names the URL without them either.
    let out = run(&["--allow-http", &format!("http://alice:s3cr3t@127.0.0.1:{}/none.gguf?token=T0KEN", server.port)]);
    let err = text(&out.stderr);
    assert!(!err.contains("s3cr3t") && !err.contains("T0KEN") && err.contains("none.gguf"), "{err}");
}

#[test]
fn https_with_a_ca_of_our_own_is_trusted_only_when_given() {
    let (Some(nginx), Some(openssl)) = (tool("nginx"), tool("openssl")) else { return };
    let d = Dir::new();
    for (name, bytes) in models() {
        d.write(name, &bytes);
    }
    let certs = tempfile::tempdir().unwrap();
    let tls = make_tls(&openssl, certs.path());
    let server = Nginx::start(&nginx, d.path("").as_path(), Some(&tls));
    let url = format!("https://localhost:{}/m.gguf", server.port);
    let ca = tls.ca.to_str().unwrap();
    assert_eq!(label(&["--ca-file", ca], &url), file_label(&d.path("m.gguf")));
    let out = run(&[&url]);
    assert_eq!(out.status.code(), Some(2), "an unknown CA is refused: {}", text(&out.stdout));
    // SSL_CERT_FILE: the system store's own variable.
    let out = std::process::Command::new(crate::common::gguf_digest_bin())
        .arg(&url)
        .env("SSL_CERT_FILE", ca)
        .output()
        .unwrap();
    assert!(out.status.success(), "SSL_CERT_FILE: {}", text(&out.stderr));
}

#[test]
fn a_connection_cut_mid_answer_is_retried_and_the_label_is_the_same() {
    let Some((d, server)) = served() else { return };
    let faults = Arc::new(Faults { cut_after: 1 << 20, ..Faults::default() });
    faults.cut_connections.store(3, Ordering::SeqCst);
    let proxy = Proxy::start(server.port, Arc::clone(&faults));
    let url = format!("http://127.0.0.1:{}/m.gguf", proxy.port);
    assert_eq!(label(&["--allow-http", "-j", "1", "--connections", "1"], &url), file_label(&d.path("m.gguf")));
    assert!(faults.cut.load(Ordering::SeqCst) >= 1, "no connection was cut");
}

#[test]
fn an_object_replaced_mid_read_is_refused() {
    let Some((d, server)) = served() else { return };
    let faults = Arc::new(Faults::default());
    let path = d.path("m.gguf");
    // Before the second GET (the metadata was the first): the same name,
    // other bytes, another length (so another ETag).
    let replace = move || {
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.push(0);
        std::fs::write(path.with_extension("new"), &bytes).unwrap();
        std::fs::rename(path.with_extension("new"), &path).unwrap();
    };
    *faults.hook.lock().unwrap() = Some((2, Box::new(replace)));
    let proxy = Proxy::start(server.port, Arc::clone(&faults));
    let url = format!("http://127.0.0.1:{}/m.gguf", proxy.port);
    let out = run(&["--allow-http", "-j", "1", &url]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    let err = text(&out.stderr);
    assert!(err.contains("replaced") && err.contains(&url), "{err}");
}
