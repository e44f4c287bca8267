//! A prefix over HTTP (a URL ending in `/`) is a directory (issue #36
//! part 1, docs/adr/0044 "Listing"): listed through WebDAV `PROPFIND`
//! (Debian's nginx with its dav-ext module), it gets the directory label,
//! `--json` and `inspect` of the same files on disk. A server that does
//! not list (nginx alone: 405) is an error saying so; a hostile server's
//! listing (another host, `../`, an endless or huge answer, bad XML,
//! folders without end) is refused, through a fake server of the test's
//! own; credentials in the URL are never printed; over HTTPS the CA
//! given is trusted for the listing as for the reads.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Output};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use crate::common::{Dir, gguf_digest_bin, text};
use crate::models::{models, onnx_model};
use crate::servers::{Faults, Nginx, Proxy, make_tls, tool};

/// A Hugging Face snapshot's files: config, tokenizer, weights, and a
/// subfolder of its own.
fn snapshot() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("config.json", br#"{"architectures": ["M"], "hidden_size": 300}"#.to_vec()),
        ("tokenizer.json", br#"{"version": "1.0", "model": {"type": "BPE"}}"#.to_vec()),
        ("model.safetensors", models()[1].1.clone()),
        ("onnx/model.onnx", onnx_model()),
    ]
}

/// The snapshot served under `/model/` by nginx with WebDAV listing, and
/// written locally under a folder whose path is as long as the URL (so
/// tables aligned on names compare byte for byte once it is replaced).
struct Served {
    www: Dir,
    here: Dir,
    server: Nginx,
}

impl Served {
    fn start() -> Option<Served> {
        let nginx = tool("nginx")?;
        let www = Dir::new();
        let server = Nginx::start_dav(&nginx, www.path("").as_path(), None)?;
        let s = Served { www, here: Dir::new(), server };
        let local = s.local();
        for (name, bytes) in snapshot() {
            for root in [s.www.path("model"), s.here.path(&local)] {
                let path = root.join(name);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(path, &bytes).unwrap();
            }
        }
        Some(s)
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/model/", self.server.port)
    }

    /// The local twin's path relative to `here`, as long as the URL.
    fn local(&self) -> String {
        format!("{}/model/", "x".repeat(self.url().len() - "/model/".len()))
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new(gguf_digest_bin())
            .args(args)
            .current_dir(self.here.path(""))
            .env("SOURCE_DATE_EPOCH", "1700000000")
            .output()
            .unwrap()
    }

    /// `args` with `--allow-http` and the URL, then with the local twin:
    /// the same exit code and outputs once the URL is named as its twin.
    fn same_as_on_disk(&self, sub: Option<&str>, args: &[&str]) -> Output {
        let (url, local) = (self.url(), self.local());
        let with = |arg: &str| -> Vec<String> {
            sub.into_iter().chain(["--allow-http"]).chain(args.iter().copied()).chain([arg]).map(String::from).collect()
        };
        let remote = with(&url);
        let local_args: Vec<String> = with(&local).into_iter().filter(|a| a != "--allow-http").collect();
        let r = self.run(&remote.iter().map(String::as_str).collect::<Vec<_>>());
        let l = self.run(&local_args.iter().map(String::as_str).collect::<Vec<_>>());
        let named = |b: &[u8]| text(b).replace(&url, &local);
        assert_eq!(r.status.code(), l.status.code(), "{remote:?}: {}{}", text(&r.stdout), text(&r.stderr));
        assert_eq!(named(&r.stdout), text(&l.stdout), "{remote:?}");
        assert_eq!(named(&r.stderr), text(&l.stderr), "{remote:?}");
        r
    }
}

#[test]
fn a_prefix_over_http_has_the_directory_label_json_and_inspect_of_its_files_on_disk() {
    let Some(s) = Served::start() else { return };
    let out = s.same_as_on_disk(None, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let line = text(&out.stdout);
    assert!(line.ends_with(&format!("  {}\n", s.url())), "{line}");
    // The subfolder counts: without it the label is another.
    let out = s.same_as_on_disk(None, &["--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc.to_string().contains("onnx/model.onnx"), "{doc}");
    s.same_as_on_disk(Some("inspect"), &[]);
    s.same_as_on_disk(Some("inspect"), &["--json"]);
    // --check reads the sums line back through the listing.
    let sums = s.here.write("sums", line.as_bytes());
    let out = s.run(&["--allow-http", "--check", sums.to_str().unwrap()]);
    assert_eq!(text(&out.stdout), format!("{}: OK\n", s.url()), "{}", text(&out.stderr));
    // A file added to the folder is another label.
    std::fs::write(s.www.path("model/onnx/extra.json"), b"{}").unwrap();
    let again = s.run(&["--allow-http", &s.url()]);
    assert!(again.status.success(), "{}", text(&again.stderr));
    assert_ne!(text(&again.stdout), line);
}

#[test]
fn a_prefix_over_https_is_listed_trusting_the_ca_file_only_when_given() {
    let (Some(nginx), Some(openssl)) = (tool("nginx"), tool("openssl")) else { return };
    let www = Dir::new();
    for (name, bytes) in snapshot() {
        let path = www.path(&format!("model/{name}"));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
    let certs = tempfile::tempdir().unwrap();
    let tls = make_tls(&openssl, certs.path());
    let Some(server) = Nginx::start_dav(&nginx, www.path("").as_path(), Some(&tls)) else { return };
    let url = format!("https://localhost:{}/model/", server.port);
    let on_disk = Command::new(gguf_digest_bin()).arg(www.path("model")).output().unwrap();
    let out = Command::new(gguf_digest_bin()).args(["--ca-file", tls.ca.to_str().unwrap(), &url]).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let first = |o: &Output| text(&o.stdout).split_whitespace().next().unwrap_or_default().to_string();
    assert_eq!(first(&out), first(&on_disk));
    // Without it the server's issuer is unknown: the listing is refused.
    let out = Command::new(gguf_digest_bin()).arg(&url).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    assert!(text(&out.stderr).contains(&url), "{}", text(&out.stderr));
}

#[test]
fn credentials_in_a_prefix_url_are_sent_never_printed() {
    let Some(s) = Served::start() else { return };
    let with = s.url().replace("http://", "http://alice:s3cr3t@");
    let out = s.run(&["--allow-http", &with]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let label = s.run(&["--allow-http", &s.url()]);
    assert_eq!(text(&out.stdout), text(&label.stdout));
    let out = s.run(&["--allow-http", &format!("{with}none/?token=T0KEN")]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("{}none/", s.url())), "{err}");
    assert!(!err.contains("s3cr3t") && !err.contains("alice") && !err.contains("T0KEN"), "{err}");
}

/// `path`'s bytes, its last flipped or not, with a modification time of
/// its own (nginx's ETag is the time in seconds and the size).
fn put_version(path: &Path, bytes: &[u8], new: bool) {
    let mut bytes = bytes.to_vec();
    if new {
        *bytes.last_mut().unwrap() ^= 1;
    }
    let at = SystemTime::UNIX_EPOCH + Duration::from_secs(if new { 1_800_000_000 } else { 1_700_000_000 });
    let tmp = path.with_extension("new");
    std::fs::write(&tmp, &bytes).unwrap();
    std::fs::File::options().write(true).open(&tmp).unwrap().set_modified(at).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

#[test]
fn a_file_replaced_while_the_prefix_is_read_is_refused_never_labelled_as_two() {
    let Some(s) = Served::start() else { return };
    let path = s.www.path("model/model.safetensors");
    let old = std::fs::read(&path).unwrap();
    let label_on_disk = |new: bool| {
        put_version(&path, &old, new);
        let out = s.run(&[s.www.path("model").to_str().unwrap()]);
        text(&out.stdout).split_whitespace().next().unwrap().to_string()
    };
    let (before, after) = (label_on_disk(false), label_on_disk(true));
    // The weights replaced (same length, other bytes, another ETag) before
    // the n-th GET, for every n: the label of the files before, or after,
    // or the replacement refused; never a label of both.
    let mut refusals = 0;
    for n in 1..=8 {
        put_version(&path, &old, false);
        let faults = Arc::new(Faults::default());
        let (p, o) = (path.clone(), old.clone());
        *faults.hook.lock().unwrap() = Some((n, Box::new(move || put_version(&p, &o, true))));
        let proxy = Proxy::start(s.server.port, Arc::clone(&faults));
        let url = format!("http://127.0.0.1:{}/model/", proxy.port);
        let out = s.run(&["--allow-http", "-j", "1", &url]);
        let (printed, err) = (text(&out.stdout), text(&out.stderr));
        match out.status.code() {
            Some(0) => {
                let label = printed.split_whitespace().next().unwrap();
                assert!(label == before || label == after, "{n}: a label of neither: {printed}");
            }
            _ => {
                assert!(err.contains("replaced") && err.contains(&format!("{url}model.safetensors")), "{n}: {err}");
                refusals += 1;
            }
        }
    }
    assert!(refusals > 0, "no replacement fell between a pin and a read");
}

#[test]
fn a_server_that_does_not_list_is_named_with_what_a_prefix_needs() {
    let Some(nginx) = tool("nginx") else { return };
    let www = Dir::new();
    std::fs::create_dir_all(www.path("model")).unwrap();
    www.write("model/config.json", b"{}");
    // Debian's nginx alone: PROPFIND is 405 Not Allowed.
    let server = Nginx::start(&nginx, www.path("").as_path(), None);
    let url = format!("http://127.0.0.1:{}/model/", server.port);
    let out = Command::new(gguf_digest_bin()).args(["--allow-http", &url]).output().unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
    assert!(err.contains(&url) && err.contains("does not list") && err.contains("PROPFIND"), "{err}");
    assert!(err.contains("405"), "{err}");
}

/// What the fake server answers a `PROPFIND` of a path.
enum Reply {
    /// A 207 with this multistatus.
    Xml(String),
    /// A 207 whose multistatus never ends.
    Endless,
    /// A 207 of this many entries, each a file of its own name.
    Many(usize),
    /// An empty answer of this status.
    Status(u16),
}

/// A WebDAV server of the test's own on a free port: `answer` gives the
/// multistatus of a path; any other method is 404.
fn fake(answer: impl Fn(&str) -> Reply + Send + Sync + 'static) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let answer = Arc::new(answer);
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { continue };
            let answer = Arc::clone(&answer);
            std::thread::spawn(move || serve(conn, &*answer));
        }
    });
    port
}

fn serve(mut conn: TcpStream, answer: &dyn Fn(&str) -> Reply) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && head.len() < 65536 {
        if conn.read(&mut byte).unwrap_or(0) == 0 {
            return;
        }
        head.push(byte[0]);
    }
    let head = text(&head);
    let mut words = head.split_whitespace();
    let (method, path) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    if method != "PROPFIND" {
        let _ = conn.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        return;
    }
    let start = "HTTP/1.1 207 Multi-Status\r\nContent-Type: application/xml\r\nConnection: close\r\n";
    let open = "<?xml version=\"1.0\"?><D:multistatus xmlns:D=\"DAV:\">";
    let entry = |href: &str| format!("<D:response><D:href>{href}</D:href></D:response>");
    let _ = match answer(path) {
        Reply::Status(code) => {
            let head =
                format!("HTTP/1.1 {code} X\r\nLocation: /elsewhere/\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
            conn.write_all(head.as_bytes())
        }
        Reply::Xml(xml) => conn.write_all(format!("{start}Content-Length: {}\r\n\r\n{xml}", xml.len()).as_bytes()),
        Reply::Endless => {
            let _ = conn.write_all(format!("{start}\r\n{open}").as_bytes());
            let chunk = entry(&format!("{path}x")).repeat(1000);
            while conn.write_all(chunk.as_bytes()).is_ok() {}
            Ok(())
        }
        Reply::Many(n) => {
            let _ = conn.write_all(format!("{start}\r\n{open}").as_bytes());
            let mut batch = String::new();
            for i in 0..n {
                batch.push_str(&entry(&format!("{path}f{i}")));
                if batch.len() > 1 << 16 {
                    if conn.write_all(batch.as_bytes()).is_err() {
                        return;
                    }
                    batch.clear();
                }
            }
            batch.push_str("</D:multistatus>");
            conn.write_all(batch.as_bytes())
        }
    };
}

/// The command on `http://127.0.0.1:PORT/m/`: exit 2, nothing printed,
/// and a message naming `url` and holding each of `words`.
fn refused(port: u16, words: &[&str]) {
    let url = format!("http://127.0.0.1:{port}/m/");
    let out = Command::new(gguf_digest_bin()).args(["--allow-http", &url]).output().unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{url}: {}{err}", text(&out.stdout));
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
    assert!(err.contains("http://127.0.0.1:") && words.iter().all(|w| err.contains(w)), "{words:?}: {err}");
}

fn multistatus(hrefs: &[&str]) -> String {
    let all: String = hrefs.iter().map(|h| format!("<D:response><D:href>{h}</D:href></D:response>")).collect();
    format!("<?xml version=\"1.0\"?><D:multistatus xmlns:D=\"DAV:\">{all}</D:multistatus>")
}

#[test]
fn a_listing_naming_what_is_not_below_the_prefix_on_its_host_is_refused() {
    let up = fake(|_| Reply::Xml(multistatus(&["/m/", "/m/config.json", "/m/../secret"])));
    refused(up, &["/m/../secret", "outside the folder"]);
    let elsewhere = fake(|_| Reply::Xml(multistatus(&["/m/", "/etc/passwd"])));
    refused(elsewhere, &["/etc/passwd", "outside the folder"]);
    let other = fake(|_| Reply::Xml(multistatus(&["/m/", "http://other.example/m/x.json"])));
    refused(other, &["other.example", "on another host"]);
    let twice = fake(|_| Reply::Xml(multistatus(&["/m/", "/m/a.json", "/m/a.json"])));
    refused(twice, &["/m/a.json twice"]);
    let bad = fake(|_| Reply::Xml("<D:multistatus xmlns:D=\"DAV:\"><D:response><D:href>/m/a".into()));
    refused(bad, &["not WebDAV XML"]);
}

#[test]
fn an_answer_without_end_is_refused_at_its_byte_bound() {
    // One answer that never ends: refused at 64 MiB, never held whole.
    refused(fake(|_| Reply::Endless), &["longer than 67108864 bytes"]);
}

#[test]
fn a_listing_of_more_than_a_million_entries_is_refused() {
    // 10⁶ entries and more in one answer: refused at the bound, the prefix named.
    refused(fake(|_| Reply::Many(1_000_002)), &["more than 1000000 objects and folders"]);
}

#[test]
fn folders_without_end_are_refused_at_the_depth_bound() {
    // Every folder holding one more: refused 64 folders deep.
    let deeper = fake(|path| {
        let entry = format!(
            "<D:response><D:href>{path}d/</D:href><D:propstat><D:prop><D:resourcetype><D:collection/>\
             </D:resourcetype></D:prop></D:propstat></D:response>"
        );
        Reply::Xml(format!("<D:multistatus xmlns:D=\"DAV:\">{entry}</D:multistatus>"))
    });
    refused(deeper, &["more than 64 deep"]);
}

#[test]
fn a_listing_answered_5xx_is_asked_again_and_a_redirect_not_followed() {
    // 503 once, then an answer: the second one is the one judged.
    let asked = std::sync::atomic::AtomicUsize::new(0);
    let once = fake(move |_| match asked.fetch_add(1, std::sync::atomic::Ordering::SeqCst) {
        0 => Reply::Status(503),
        _ => Reply::Xml(multistatus(&["/m/", "/m/../secret"])),
    });
    refused(once, &["/m/../secret", "outside the folder"]);
    // 503 every time: refused once the retries are spent, saying so.
    refused(fake(|_| Reply::Status(503)), &["failed 6 times", "503"]);
    // A redirect of the listing is not followed.
    refused(fake(|_| Reply::Status(301)), &["redirected the listing", "not followed"]);
}
