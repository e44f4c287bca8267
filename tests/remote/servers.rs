//! Servers the tests start on free ports of 127.0.0.1 and stop when
//! dropped: Debian's nginx (HTTP or HTTPS, a second server on another
//! host name that logs the `Authorization` it receives), a certificate
//! authority made with openssl, and a proxy of ours in front of nginx that
//! cuts connections mid-answer or calls a hook before a request.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::py::in_ci;

/// A free port of 127.0.0.1 (bound, then let go).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Waits until something listens on `port` (at most 10 s).
fn wait_for(port: u16) {
    let start = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(start.elapsed() < Duration::from_secs(10), "nothing listens on {port}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The program `name` on PATH (or in /usr/sbin), or `None` after one
/// `SKIPPED:` line; a panic under `CI=true`.
pub fn tool(name: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).chain([PathBuf::from("/usr/sbin")]).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .map(|d| d.join(name))
        .find(|p| p.is_file());
    if found.is_none() {
        assert!(!in_ci(), "{name} is missing, and CI=true: .ci/run installs it");
        println!("SKIPPED: {name} is not installed (.ci/run installs it)");
    }
    found
}

/// A certificate authority and a server certificate for `localhost` and
/// 127.0.0.1 it signed, made by openssl in `dir`.
pub struct Tls {
    pub ca: PathBuf,
    pub cert: PathBuf,
    pub key: PathBuf,
}

pub fn make_tls(openssl: &Path, dir: &Path) -> Tls {
    let run = |args: &[&str]| {
        let out = Command::new(openssl).args(args).current_dir(dir).output().unwrap();
        assert!(out.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
    run(&[
        &["req", "-x509"][..],
        &ec,
        &["-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=gguf-digest test CA"],
    ]
    .concat());
    run(&[&["req"][..], &ec, &["-keyout", "srv.key", "-out", "srv.csr", "-subj", "/CN=localhost"]].concat());
    std::fs::write(dir.join("san.ext"), "subjectAltName=DNS:localhost,IP:127.0.0.1\n").unwrap();
    run(&[
        "x509",
        "-req",
        "-in",
        "srv.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "srv.pem",
        "-days",
        "2",
        "-extfile",
        "san.ext",
    ]);
    Tls { ca: dir.join("ca.pem"), cert: dir.join("srv.pem"), key: dir.join("srv.key") }
}

/// nginx serving `root`: on `port` (with TLS when given), and on `other`
/// a second server of the same files that logs each request's
/// `Authorization` header to `other.log`; `/moved/NAME` on the first
/// redirects to `http://localhost:OTHER/NAME` (another host).
pub struct Nginx {
    child: Child,
    pub port: u16,
    #[allow(dead_code)]
    pub other: u16,
    pub dir: tempfile::TempDir,
}

/// Debian's WebDAV listing module for nginx (libnginx-mod-http-dav-ext,
/// which .ci/run installs): nginx alone answers `PROPFIND` with 405.
const DAV_EXT: &str = "/usr/lib/nginx/modules/ngx_http_dav_ext_module.so";

impl Nginx {
    pub fn start(nginx: &Path, root: &Path, tls: Option<&Tls>) -> Nginx {
        Nginx::launch(nginx, root, tls, None)
    }

    /// The same servers, the first also answering WebDAV `PROPFIND` (a
    /// folder's listing) through Debian's dav-ext module; `None` after one
    /// `SKIPPED:` line without the module (a panic under `CI=true`).
    pub fn start_dav(nginx: &Path, root: &Path, tls: Option<&Tls>) -> Option<Nginx> {
        if !Path::new(DAV_EXT).is_file() {
            assert!(!in_ci(), "{DAV_EXT} is missing, and CI=true: .ci/run installs libnginx-mod-http-dav-ext");
            println!("SKIPPED: {DAV_EXT} is not installed (.ci/run installs libnginx-mod-http-dav-ext)");
            return None;
        }
        Some(Nginx::launch(nginx, root, tls, Some(Path::new(DAV_EXT))))
    }

    fn launch(nginx: &Path, root: &Path, tls: Option<&Tls>, dav: Option<&Path>) -> Nginx {
        let dir = tempfile::tempdir().unwrap();
        let (port, other) = (free_port(), free_port());
        let d = dir.path().display();
        let ssl = match tls {
            Some(t) => {
                format!(" ssl;\n ssl_certificate {};\n ssl_certificate_key {}", t.cert.display(), t.key.display())
            }
            None => String::new(),
        };
        let (load, methods) = match dav {
            Some(m) => (format!("load_module {};\n", m.display()), " dav_ext_methods PROPFIND OPTIONS;"),
            None => (String::new(), ""),
        };
        let conf = format!(
            "{load}daemon off; master_process off; worker_processes 1; pid {d}/nginx.pid; error_log {d}/error.log;
events {{ worker_connections 256; }}
http {{
 access_log off; client_body_temp_path {d}/b; proxy_temp_path {d}/p; fastcgi_temp_path {d}/f; uwsgi_temp_path {d}/u; scgi_temp_path {d}/s;
 log_format auth '[$http_authorization] $request';
 server {{ listen 127.0.0.1:{port}{ssl}; root {root};{methods} location /moved/ {{ rewrite ^/moved/(.*)$ http://localhost:{other}/$1 redirect; }} }}
 server {{ listen 127.0.0.1:{other}; root {root}; access_log {d}/other.log auth; }}
}}
",
            root = root.display()
        );
        std::fs::write(dir.path().join("nginx.conf"), conf).unwrap();
        let child = Command::new(nginx)
            .args(["-e", "stderr", "-c"])
            .arg(dir.path().join("nginx.conf"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        wait_for(port);
        wait_for(other);
        Nginx { child, port, other, dir }
    }

    /// What the second server logged: one `[AUTHORIZATION] REQUEST` a line.
    pub fn other_log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("other.log")).unwrap_or_default()
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What the proxy does to the traffic it passes.
#[derive(Default)]
pub struct Faults {
    /// The first this many connections are cut after `cut_after` bytes
    /// of the server's answer.
    pub cut_connections: AtomicUsize,
    pub cut_after: usize,
    /// Called once, before the `before_get`-th `GET` (counted from 1) is
    /// passed on.
    #[allow(clippy::type_complexity)]
    pub hook: Mutex<Option<(usize, Box<dyn FnOnce() + Send>)>>,
    pub gets: AtomicUsize,
    /// Connections cut so far.
    pub cut: AtomicUsize,
}

/// A TCP proxy of ours on a free port in front of `upstream`.
pub struct Proxy {
    pub port: u16,
    stop: Arc<AtomicBool>,
}

impl Proxy {
    pub fn start(upstream: u16, faults: Arc<Faults>) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        std::thread::spawn(move || {
            for client in listener.incoming() {
                if stopped.load(Ordering::Relaxed) {
                    return;
                }
                let Ok(client) = client else { continue };
                let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else { continue };
                let cut = faults
                    .cut_connections
                    .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                    .is_ok();
                let f = Arc::clone(&faults);
                let (c2, s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                std::thread::spawn(move || pump_requests(c2, s2, &f));
                let f = Arc::clone(&faults);
                std::thread::spawn(move || pump_answers(server, client, cut.then_some(f.cut_after), &f));
            }
        });
        Proxy { port, stop }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

fn pump_requests(mut from: TcpStream, mut to: TcpStream, faults: &Faults) {
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let gets = buf[..n].windows(4).filter(|w| w == b"GET ").count();
        for _ in 0..gets {
            let nth = faults.gets.fetch_add(1, Ordering::SeqCst) + 1;
            let mut hook = faults.hook.lock().unwrap();
            if hook.as_ref().is_some_and(|(at, _)| *at == nth) {
                if let Some((_, f)) = hook.take() {
                    f();
                }
            }
        }
        if to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}

fn pump_answers(mut from: TcpStream, mut to: TcpStream, cut_after: Option<usize>, faults: &Faults) {
    let mut buf = vec![0u8; 64 << 10];
    let mut sent = 0usize;
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let n = match cut_after {
            Some(limit) if sent + n >= limit => {
                let _ = to.write_all(&buf[..limit - sent]);
                faults.cut.fetch_add(1, Ordering::SeqCst);
                let _ = to.shutdown(Shutdown::Both);
                let _ = from.shutdown(Shutdown::Both);
                return;
            }
            _ => n,
        };
        if to.write_all(&buf[..n]).is_err() {
            break;
        }
        sent += n;
    }
    let _ = to.shutdown(Shutdown::Write);
}
