//! The progress bar of URL inputs, drawn as plain lines on a stderr that
//! is no terminal (`GGUF_DIGEST_PROGRESS=1`): its length is the object's
//! size (a prefix's: every object listed), taken from the pinned object
//! and not from a request of its own; it moves as a long range's parts
//! arrive, not when the tensor ends; the URL's credentials never appear.

use std::path::Path;
use std::process::{Command, Output};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::common::progress::{bar_lines, big_model, bytes_of, shown_bytes};
use crate::common::{Dir, gguf_digest_bin, text};
use crate::models::{file_label, uploads};
use crate::s3::Moto;
use crate::servers::{Faults, Nginx, Proxy, tool};

/// Runs the binary with `args` and the bar asked for (`GGUF_DIGEST_PROGRESS`).
fn with_bar(var: Option<&str>, args: &[&str]) -> Output {
    let mut c = Command::new(gguf_digest_bin());
    c.args(args);
    match var {
        Some(v) => c.env("GGUF_DIGEST_PROGRESS", v),
        None => c.env_remove("GGUF_DIGEST_PROGRESS"),
    };
    c.output().unwrap()
}

#[test]
fn a_url_s_bar_is_its_object_s_size_and_moves_as_the_parts_arrive() {
    let Some(nginx) = tool("nginx") else { return };
    let d = Dir::new();
    let path = d.write("m.gguf", &big_model());
    let size = std::fs::metadata(&path).unwrap().len();
    let total = shown_bytes(size);
    assert_eq!(total, "16.50 MiB");
    let server = Nginx::start(&nginx, d.path("").as_path(), None);
    let faults = Arc::new(Faults::default());
    let proxy = Proxy::start(server.port, Arc::clone(&faults));
    let url = format!("http://alice:s3cr3t@127.0.0.1:{}/m.gguf", proxy.port);
    let args = ["--allow-http", "-j", "1", url.as_str()];

    let out = with_bar(Some("1"), &args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).split_whitespace().next().unwrap(), file_label(&path));
    let err = text(&out.stderr);
    let bars = bar_lines(&err);
    assert_eq!(bars.last(), Some(&(total.clone(), total.clone())), "the last line is the whole object: {err}");
    assert!(bars.iter().all(|(_, t)| *t == total), "every line's total is the object's size: {err}");
    for secret in ["s3cr3t", "alice"] {
        assert!(!err.contains(secret) && !text(&out.stdout).contains(secret), "{err}");
    }
    let gets = faults.gets.load(Ordering::SeqCst);
    assert!(gets >= 4, "the tensor alone takes four range requests: {gets}");

    // The same run held 2.5 s before the third of the tensor's four parts
    // is asked for: the bar shows the two parts before it hashed, not 0
    // until the tensor's one job ends.
    let faults = Arc::new(Faults::default());
    let held = Arc::new(AtomicBool::new(false));
    let h = Arc::clone(&held);
    *faults.hook.lock().unwrap() = Some((
        gets - 1,
        Box::new(move || {
            h.store(true, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(2500));
        }),
    ));
    let proxy = Proxy::start(server.port, Arc::clone(&faults));
    let url = format!("http://alice:s3cr3t@127.0.0.1:{}/m.gguf", proxy.port);
    let out = with_bar(Some("1"), &["--allow-http", "-j", "1", &url]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(held.load(Ordering::SeqCst), "the hook ran");
    let err = text(&out.stderr);
    let tensor = (16 << 20) as f64;
    let moving = bar_lines(&err).iter().any(|(done, t)| *t == total && (1.0..tensor).contains(&bytes_of(done)));
    assert!(moving, "a line shows part of the tensor hashed: {err}");

    // No bar where stderr is no terminal unless asked, nor when refused.
    for var in [None, Some("0")] {
        let out = with_bar(var, &args);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert_eq!(text(&out.stderr), "", "{var:?}");
    }
}

#[test]
fn a_prefix_s_bar_is_every_listed_object_s_size() {
    let Some(moto) = Moto::start() else { return };
    let up = uploads();
    moto.upload("progress", &up.files);
    let tree = up.tree.path("");
    let size: u64 = ["a.gguf", "sub/b.safetensors", "config.json"]
        .iter()
        .map(|rel| std::fs::metadata(Path::new(&tree).join(rel)).unwrap().len())
        .sum();
    let total = shown_bytes(size);
    let out = moto.gguf_digest(moto.port).env("GGUF_DIGEST_PROGRESS", "1").arg("s3://progress/tree/").output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).split_whitespace().next().unwrap(), file_label(&tree));
    let err = text(&out.stderr);
    assert_eq!(bar_lines(&err).last(), Some(&(total.clone(), total)), "{err}");
    assert!(!err.contains("testing-secret"), "{err}");
}
