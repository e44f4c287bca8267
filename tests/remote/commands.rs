//! Every command that takes a path, given a URL (issue #36 part 1) through
//! Debian's nginx: `inspect`, `diff`, `--json`, `--skeleton`, `statement`, `verify`,
//! `sign`, `bom` and `-c` print for a URL exactly what they print for the
//! same bytes on disk, but for the name; and the rules of part 4: a URL in
//! a sums file, a statement or an index is held to the rules of a path (no
//! `..`, `http://` only when allowed, an index's files beside it on the
//! same host, credentials never printed).
//!
//! The local twin of each served file lies under a folder whose name
//! makes its path exactly as long as the URL, so that tables aligned on
//! names compare byte for byte once the URL is replaced by the path.

use std::process::{Command, Output};

use crate::common::{Dir, gguf_digest_bin, text};
use crate::models::models;
use crate::servers::{Nginx, tool};

/// The served folder, its server, and the local twins of its files.
struct Served {
    /// What nginx serves.
    www: Dir,
    /// Where the twins lie; commands on them run here.
    here: Dir,
    server: Nginx,
}

impl Served {
    fn start() -> Option<Served> {
        let nginx = tool("nginx")?;
        let www = Dir::new();
        let server = Nginx::start(&nginx, www.path("").as_path(), None);
        Some(Served { www, here: Dir::new(), server })
    }

    fn url(&self, name: &str) -> String {
        format!("http://127.0.0.1:{}/{name}", self.server.port)
    }

    /// Serves `bytes` as `name`, and writes them at a local path as long
    /// as its URL (relative to `here`), which it returns with the URL.
    fn put(&self, name: &str, bytes: &[u8]) -> (String, String) {
        let url = self.url(name);
        self.www.write(name, bytes);
        let pad = "x".repeat(url.len() - name.len() - 1);
        std::fs::create_dir_all(self.here.path(&pad)).unwrap();
        let local = format!("{pad}/{name}");
        std::fs::write(self.here.path(&local), bytes).unwrap();
        assert_eq!(local.len(), url.len());
        (url, local)
    }

    /// The command, run in `here`.
    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(gguf_digest_bin());
        c.args(args).current_dir(self.here.path("")).env("SOURCE_DATE_EPOCH", "1700000000");
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }
}

/// Runs `args` with `--allow-http` after the subcommand (when there is
/// one) and the URLs, then with the local paths in their place: the same
/// exit code, standard output and error, once each URL is named as its
/// twin (unquoted). Returns the URL run's output.
fn same_as_on_disk(s: &Served, sub: Option<&str>, args: &[&str], pairs: &[(&str, &str)]) -> Output {
    let mut remote: Vec<&str> = sub.into_iter().collect();
    remote.push("--allow-http");
    remote.extend(args);
    let local: Vec<&str> = sub
        .into_iter()
        .chain(args.iter().map(|a| pairs.iter().find(|(u, _)| u == a).map_or(*a, |(_, l)| *l)))
        .collect();
    let (r, l) = (s.run(&remote), s.run(&local));
    // Messages quote a name holding `:` as coreutils does; a plain path is not.
    let named = |b: &[u8]| pairs.iter().fold(text(b), |t, (u, l)| t.replace(&format!("'{u}'"), l).replace(u, l));
    assert_eq!(r.status.code(), l.status.code(), "{remote:?}: {}{}", text(&r.stdout), text(&r.stderr));
    assert_eq!(named(&r.stdout), text(&l.stdout), "{remote:?}");
    assert_eq!(named(&r.stderr), text(&l.stderr), "{remote:?}");
    r
}

#[test]
fn inspect_and_json_of_a_url_are_those_of_its_bytes_on_disk() {
    let Some(s) = Served::start() else { return };
    for (name, bytes) in models() {
        let (url, local) = s.put(name, &bytes);
        let pair = [(url.as_str(), local.as_str())];
        let out = same_as_on_disk(&s, Some("inspect"), &[&url], &pair);
        assert_eq!(out.status.code(), Some(0), "{name}");
        let first = text(&out.stdout).lines().next().unwrap_or_default().to_string();
        assert!(first.contains(&url), "{name}: {first}");
        let out = same_as_on_disk(&s, Some("inspect"), &["--json", &url], &pair);
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(doc.to_string().contains(&url), "{name}: the document names the URL");
        // Labelling's --json: the URL is the entry's path.
        let out = same_as_on_disk(&s, None, &["--json", &url], &pair);
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(doc["files"][0]["path"], url.as_str(), "{name}");
        // The skeleton names no file: byte for byte the file's.
        let (r, l) = (s.run(&["--allow-http", "--skeleton", &url]), s.run(&["--skeleton", &local]));
        assert_eq!((r.status.code(), l.status.code()), (Some(0), Some(0)), "{name}: {}", text(&r.stderr));
        assert!(!r.stdout.is_empty() && r.stdout == l.stdout, "{name}");
    }
    // A missing object: exit 2, its URL named, nothing on standard output.
    let out = s.run(&["inspect", "--allow-http", &s.url("none.gguf")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains(&s.url("none.gguf")), "{}", text(&out.stderr));
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
    // Without --allow-http: refused, nothing read.
    let out = s.run(&["inspect", &s.url("m.gguf")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--allow-http"), "{}", text(&out.stderr));
}

#[test]
fn diff_of_urls_is_the_diff_of_their_bytes_on_disk() {
    let Some(s) = Served::start() else { return };
    let all = models();
    let st = &all[1].1;
    let mut other = st.clone();
    *other.last_mut().unwrap() ^= 1;
    let (a, la) = s.put("a.safetensors", st);
    let (b, lb) = s.put("b.safetensors", &other);
    let pairs = [(a.as_str(), la.as_str()), (b.as_str(), lb.as_str())];
    // URL and URL, URL and path, path and URL; text and JSON.
    let out = same_as_on_disk(&s, Some("diff"), &[&a, &b], &pairs);
    assert_eq!(out.status.code(), Some(1), "the labels differ");
    assert!(text(&out.stdout).contains("~ tensor"), "{}", text(&out.stdout));
    assert_eq!(same_as_on_disk(&s, Some("diff"), &[&a, &lb], &pairs).status.code(), Some(1));
    assert_eq!(same_as_on_disk(&s, Some("diff"), &[&la, &b], &pairs).status.code(), Some(1));
    let out = same_as_on_disk(&s, Some("diff"), &["--json", &a, &b], &pairs);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc.to_string().contains(&a) && doc.to_string().contains(&b), "{doc}");
    // The same bytes: equal, exit 0.
    let out = same_as_on_disk(&s, Some("diff"), &[&a, &la], &pairs);
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).contains("labels equal"), "{}", text(&out.stdout));
}

#[test]
fn bom_of_a_url_is_the_bom_of_its_bytes_on_disk() {
    let Some(s) = Served::start() else { return };
    let all = models();
    let (g, lg) = s.put("m.gguf", &all[0].1);
    let (p, lp) = s.put("m.pt", &all[2].1);
    let pairs = [(g.as_str(), lg.as_str()), (p.as_str(), lp.as_str())];
    for format in ["cyclonedx", "spdx"] {
        let out = same_as_on_disk(&s, Some("bom"), &["--format", format, &g, &p], &pairs);
        assert_eq!(out.status.code(), Some(0), "{format}: {}", text(&out.stderr));
    }
    let out = s.run(&["bom", "--allow-http", &g]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let model = &doc["components"][0];
    assert_eq!(model["name"], g.as_str());
    // Each file's SHA-256 is of the object's bytes.
    let file_hash = &model["components"][0]["hashes"][0];
    assert_eq!(file_hash["alg"], "SHA-256");
    assert_eq!(file_hash["content"], sha256_hex(&all[0].1));
    // Every model or no BOM: a missing object writes nothing, exit 2.
    let out = s.run(&["bom", "--allow-http", &g, &s.url("none.gguf")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn a_statement_of_a_url_names_it_and_verify_relabels_it_there() {
    let Some(s) = Served::start() else { return };
    let all = models();
    let (url, local) = s.put("m.safetensors", &all[1].1);
    let pair = [(url.as_str(), local.as_str())];
    let out = same_as_on_disk(&s, Some("statement"), &[&url], &pair);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let statement: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(statement["subject"][0]["name"], url.as_str());
    let label = crate::models::file_label(&s.here.path(&local));
    assert_eq!(statement["subject"][0]["digest"]["sha256"], label.as_str());
    // Credentials and a query given on the command line are never written.
    let with = url.replacen("http://", "http://alice:s3cr3t@", 1) + "?token=T0KEN";
    let out = s.run(&["statement", "--allow-http", &with]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        out.stdout,
        serde_json::to_vec_pretty(&statement).unwrap().into_iter().chain(*b"\n").collect::<Vec<_>>()
    );
    // A URL is a subject as a store reference is: verify opens it where it
    // names, under verify's own rules (--allow-http).
    let file = s.here.write("s.json", &serde_json::to_vec_pretty(&statement).unwrap());
    let file = file.to_str().unwrap();
    let out = s.run(&["verify", "--allow-http", "--no-signature", file]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), format!("{file}: signature NOT CHECKED (--no-signature)\n{url}: OK\n"));
    let out = s.run(&["verify", "--no-signature", file]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stdout),
        format!("{file}: signature NOT CHECKED (--no-signature)\n{url}: FAILED open or read\n")
    );
    assert!(text(&out.stderr).contains("--allow-http"), "{}", text(&out.stderr));
    // The object changed since: FAILED, exit 1.
    let mut other = all[1].1.clone();
    *other.last_mut().unwrap() ^= 1;
    s.www.write("m.safetensors", &other);
    let out = s.run(&["verify", "--allow-http", "--no-signature", file]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stdout).ends_with(&format!("{url}: FAILED\n")), "{}", text(&out.stdout));
}

#[test]
fn a_statement_subject_naming_a_url_is_held_to_the_rules_of_a_url() {
    let Some(s) = Served::start() else { return };
    let all = models();
    let (url, _) = s.put("m.safetensors", &all[1].1);
    let label = crate::models::label(&["--allow-http"], &url);
    let statement = |name: &str| {
        let v = serde_json::json!({
            "_type": "https://in-toto.io/Statement/v1",
            "subject": [{"name": name, "digest": {"sha256": label}}],
            "predicateType": "https://gguf-digest.dev/label/v1",
            "predicate": {}
        });
        s.here.write("s.json", &serde_json::to_vec(&v).unwrap()).to_str().unwrap().to_string()
    };
    // A `..` segment is refused, not resolved: nothing is requested.
    let dotted = format!("http://127.0.0.1:{}/x/../m.safetensors", s.server.port);
    let out = s.run(&["verify", "--allow-http", "--no-signature", &statement(&dotted)]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stdout).ends_with(&format!("{dotted}: FAILED open or read\n")), "{}", text(&out.stdout));
    assert!(text(&out.stderr).contains("`..` segment"), "{}", text(&out.stderr));
    // Credentials in a subject's name are sent, never printed.
    let with = format!("http://alice:s3cr3t@127.0.0.1:{}/m.safetensors?token=T0KEN", s.server.port);
    let out = s.run(&["verify", "--allow-http", "--no-signature", &statement(&with)]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).ends_with(&format!("{url}: OK\n")), "{}", text(&out.stdout));
    let missing = with.replace("m.safetensors", "none.safetensors");
    let out = s.run(&["verify", "--allow-http", "--no-signature", &statement(&missing)]);
    assert_eq!(out.status.code(), Some(1));
    let all_text = text(&out.stdout) + &text(&out.stderr);
    assert!(!all_text.contains("s3cr3t") && !all_text.contains("alice") && !all_text.contains("T0KEN"), "{all_text}");
    assert!(all_text.contains(&s.url("none.safetensors")), "{all_text}");
}

#[test]
fn sign_of_a_url_is_verified_with_its_key() {
    let (Some(s), Some(openssl)) = (Served::start(), tool("openssl")) else { return };
    let all = models();
    let (g, lg) = s.put("m.gguf", &all[0].1);
    let (o, lo) = s.put("m.onnx", &all[3].1);
    let key = |args: &[&str]| {
        let out = Command::new(&openssl).args(args).current_dir(s.here.path("")).output().unwrap();
        assert!(out.status.success(), "openssl {args:?}: {}", text(&out.stderr));
    };
    key(&["genpkey", "-algorithm", "ed25519", "-out", "k.pem"]);
    key(&["pkey", "-in", "k.pem", "-pubout", "-out", "k.pub"]);
    // Ed25519 signs deterministically: the bundle of the URLs is the bundle
    // of the files on disk but for the names inside its payload.
    let out = s.run(&["sign", "--allow-http", "--key", "k.pem", "-o", "url.json", &g, &o]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = s.run(&["verify", "--allow-http", "--key", "k.pub", "url.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), format!("{g}: OK\n{o}: OK\n"));
    let local = s.run(&["sign", "--key", "k.pem", "-o", "local.json", &lg, &lo]);
    assert_eq!(local.status.code(), Some(0), "{}", text(&local.stderr));
    let payload = |f: &str| {
        let b: serde_json::Value = serde_json::from_slice(&std::fs::read(s.here.path(f)).unwrap()).unwrap();
        let p = b["dsseEnvelope"]["payload"].as_str().unwrap().to_string();
        use base64::Engine as _;
        text(&base64::engine::general_purpose::STANDARD.decode(p).unwrap())
    };
    assert_eq!(payload("url.json").replace(&g, &lg).replace(&o, &lo), payload("local.json"));
    // Another key: the signature fails before any subject is read.
    key(&["genpkey", "-algorithm", "ed25519", "-out", "k2.pem"]);
    key(&["pkey", "-in", "k2.pem", "-pubout", "-out", "k2.pub"]);
    let out = s.run(&["verify", "--allow-http", "--key", "k2.pub", "url.json"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
}

#[test]
fn check_takes_urls_in_a_sums_file_under_the_rules_of_the_command_line() {
    let Some(s) = Served::start() else { return };
    let all = models();
    let mut pairs = Vec::new();
    for (name, bytes) in &all {
        pairs.push(s.put(name, bytes));
    }
    let urls: Vec<&str> = pairs.iter().map(|(u, _)| u.as_str()).collect();
    let mut args = vec!["--allow-http"];
    args.extend(&urls);
    let out = s.run(&args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let sums = text(&out.stdout);
    s.here.write("sums", sums.as_bytes());
    // Each URL's line is its twin's line but for the name.
    let local: Vec<&str> = pairs.iter().map(|(_, l)| l.as_str()).collect();
    let on_disk = text(&s.run(&local).stdout);
    assert_eq!(pairs.iter().fold(sums.clone(), |t, (u, l)| t.replace(u, l)), on_disk);
    let out = s.run(&["--allow-http", "-c", "sums"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), urls.iter().map(|u| format!("{u}: OK\n")).collect::<String>());
    // A wrong label: FAILED, exit 1; the others still OK.
    let first = sums.lines().next().unwrap();
    let wrong = format!("{}{}\n", "0".repeat(64), &first[64..]);
    s.here.write("wrong", (wrong + &sums).as_bytes());
    let out = s.run(&["--allow-http", "-c", "wrong"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stdout).starts_with(&format!("{}: FAILED\n{}: OK\n", urls[0], urls[0])), "{}", text(&out.stdout));
    assert!(text(&out.stderr).contains("1 computed label did NOT match"), "{}", text(&out.stderr));
    // http:// without --allow-http: each line unreadable (exit 1), saying why.
    let out = s.run(&["-c", "sums"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stdout), urls.iter().map(|u| format!("{u}: FAILED open or read\n")).collect::<String>());
    assert!(text(&out.stderr).contains("--allow-http"), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("4 listed files could not be read"), "{}", text(&out.stderr));
    // --ignore-missing skips a missing object as it skips a missing file.
    let label = &first[..64];
    let missing = s.url("none.gguf");
    s.here.write("missing", format!("{label}  {missing}\n{first}\n").as_bytes());
    let out = s.run(&["--allow-http", "-c", "--ignore-missing", "missing"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), format!("{}: OK\n", urls[0]));
}

#[test]
fn a_url_line_of_a_sums_file_is_refused_as_its_argument_would_be() {
    let Some(s) = Served::start() else { return };
    let all = models();
    let (url, _) = s.put("m.gguf", &all[0].1);
    let label = crate::models::label(&["--allow-http"], &url);
    // The rule of a sums line is the rule of the command line: a path may
    // be anywhere (as sha256sum -c reads it), a URL on any host the user's
    // flags allow; what no argument may be, no line may: a `.`, `..` or
    // empty segment, a scheme the build does not read.
    let port = s.server.port;
    for (line, why) in [
        (format!("http://127.0.0.1:{port}/x/../m.gguf"), "`..` segment"),
        (format!("http://127.0.0.1:{port}/./m.gguf"), "`..` segment"),
        (format!("http://127.0.0.1:{port}//m.gguf"), "`..` segment"),
        (format!("ftp://127.0.0.1:{port}/m.gguf"), "No such file"),
    ] {
        s.here.write("sums", format!("{label}  {line}\n").as_bytes());
        let out = s.run(&["--allow-http", "-c", "sums"]);
        assert_eq!(out.status.code(), Some(1), "{line}");
        assert_eq!(text(&out.stdout), format!("{line}: FAILED open or read\n"));
        assert!(text(&out.stderr).contains(why), "{line}: {}", text(&out.stderr));
    }
}

#[test]
fn credentials_in_a_sums_line_are_sent_but_never_printed() {
    let Some(s) = Served::start() else { return };
    let all = models();
    let (url, _) = s.put("m.gguf", &all[0].1);
    let label = crate::models::label(&["--allow-http"], &url);
    let port = s.server.port;
    let with = format!("http://alice:s3cr3t@127.0.0.1:{port}/m.gguf?token=T0KEN");
    let missing = format!("http://alice:s3cr3t@127.0.0.1:{port}/none.gguf?token=T0KEN");
    s.here.write("sums", format!("{label}  {with}\n{label}  {missing}\n").as_bytes());
    let out = s.run(&["--allow-http", "-c", "sums"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), format!("{url}: OK\n{}: FAILED open or read\n", s.url("none.gguf")));
    let err = text(&out.stderr);
    assert!(!err.contains("s3cr3t") && !err.contains("alice") && !err.contains("T0KEN"), "{err}");
    assert!(err.contains(&s.url("none.gguf")), "{err}");
}

#[test]
fn an_index_names_only_files_beside_it_on_its_host() {
    let Some(s) = Served::start() else { return };
    let all = models();
    s.www.write("m.safetensors", &all[1].1);
    std::fs::create_dir_all(s.www.path("sub")).unwrap();
    let st: serde_json::Value = {
        let b = &all[1].1;
        let n = u64::from_le_bytes(b[..8].try_into().unwrap()) as usize;
        serde_json::from_slice(&b[8..8 + n]).unwrap()
    };
    let tensors: Vec<&String> = st.as_object().unwrap().keys().filter(|k| *k != "__metadata__").collect();
    let index = |shard: &str| {
        let map: serde_json::Map<String, serde_json::Value> =
            tensors.iter().map(|t| ((*t).clone(), serde_json::Value::from(shard))).collect();
        serde_json::to_vec(&serde_json::json!({"metadata": {}, "weight_map": map})).unwrap()
    };
    // Beside it: labelled as the model file alone is (an index of one file).
    s.www.write("sub/m.safetensors", &all[1].1);
    s.www.write("sub/ok.safetensors.index.json", &index("m.safetensors"));
    let local = Dir::new();
    local.write("m.safetensors", &all[1].1);
    let twin = local.write("ok.safetensors.index.json", &index("m.safetensors"));
    assert_eq!(
        crate::models::label(&["--allow-http"], &s.url("sub/ok.safetensors.index.json")),
        crate::models::file_label(&twin)
    );
    let other = format!("http://localhost:{}/m.safetensors", s.server.other);
    for (name, shard) in [("up", "../m.safetensors"), ("host", other.as_str()), ("abs", "/m.safetensors")] {
        let file = format!("sub/{name}.safetensors.index.json");
        s.www.write(&file, &index(shard));
        let out = s.run(&["--allow-http", &s.url(&file)]);
        assert_eq!(out.status.code(), Some(2), "{shard}: {}", text(&out.stdout));
        let err = text(&out.stderr);
        assert!(err.contains(&s.url(&file)) && err.contains("only a plain file name"), "{shard}: {err}");
    }
    // The other host was never asked.
    assert_eq!(s.server.other_log(), "");
}

#[test]
fn what_is_read_whole_is_read_from_a_file_and_a_url_there_is_refused_as_such() {
    let Some(s) = Served::start() else { return };
    let all = models();
    let (url, _) = s.put("m.gguf", &all[0].1);
    let label = crate::models::label(&["--allow-http"], &url);
    s.put("sums", format!("{label}  {url}\n").as_bytes());
    // Read as paths, these would be local files spelt like the URL
    // (`http:/127.0.0.1:PORT/...`): each is refused, naming the URL, exit 2.
    let refused = |args: &[&str], why: &str| {
        let out = s.run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out.stdout));
        let err = text(&out.stderr);
        assert!(err.contains(why) && err.contains("not a URL"), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}: {}", text(&out.stdout));
    };
    refused(&["--allow-http", "-c", &s.url("sums")], "curl -s URL | gguf-digest -c");
    refused(&["verify", "--allow-http", "--no-signature", &s.url("s.json")], "the statement or signature");
    s.here.write("s.json", b"{}");
    refused(&["verify", "--allow-http", "--no-signature", "--root", &s.url(""), "s.json"], "--root");
    s.here.write("k.pem", b"");
    let key = s.here.path("k.pem");
    // The key is read first: give sign one it can use.
    if let Some(openssl) = tool("openssl") {
        let out = Command::new(openssl)
            .args(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out"])
            .arg(&key)
            .output()
            .unwrap();
        assert!(out.status.success());
        refused(
            &["sign", "--allow-http", "--format", "oms", "--key", key.to_str().unwrap(), &s.url("")],
            "--format oms signs a local directory",
        );
    }
    // The list through standard input, as the message says: checked.
    let out = s.cmd(&["--allow-http", "-c"]).stdin(std::fs::File::open(s.www.path("sums")).unwrap()).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), format!("{url}: OK\n"));
}

#[test]
fn declared_sizes_are_bounded_by_the_bytes_of_an_object_as_of_a_file() {
    let Some(s) = Served::start() else { return };
    // 10⁶ tensors declared in 24 bytes; a header of 1 TiB declared in 10;
    // 10⁶ metadata keys declared.
    let mut many_tensors = b"GGUF".to_vec();
    many_tensors.extend(3u32.to_le_bytes());
    many_tensors.extend(1_000_000u64.to_le_bytes());
    many_tensors.extend(0u64.to_le_bytes());
    let mut many_kvs = b"GGUF".to_vec();
    many_kvs.extend(3u32.to_le_bytes());
    many_kvs.extend(0u64.to_le_bytes());
    many_kvs.extend(1_000_000u64.to_le_bytes());
    let mut huge_header = (1u64 << 40).to_le_bytes().to_vec();
    huge_header.extend(b"{}");
    for (name, bytes) in [("t.gguf", many_tensors), ("k.gguf", many_kvs), ("h.safetensors", huge_header)] {
        let (url, local) = s.put(name, &bytes);
        let pair = [(url.as_str(), local.as_str())];
        let out = same_as_on_disk(&s, None, &[&url], &pair);
        assert_eq!(out.status.code(), Some(2), "{name}");
        assert!(text(&out.stderr).contains(&url), "{name}: {}", text(&out.stderr));
        // `inspect` says why as for the file; what could be read of a cut
        // or malformed file it shows of a local file only (the formats
        // crate's `what_could_be_read` reopens a named file).
        let (r, l) = (s.run(&["inspect", "--allow-http", &url]), s.run(&["inspect", &local]));
        assert_eq!((r.status.code(), l.status.code()), (Some(2), Some(2)), "{name}");
        assert_eq!(text(&r.stderr).replace(&format!("'{url}'"), &local), text(&l.stderr), "{name}");
        assert!(r.stdout.is_empty(), "{name}: {}", text(&r.stdout));
    }
}
