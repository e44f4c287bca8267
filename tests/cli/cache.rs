//! The verified-leaf cache (`--cache`, docs/adr/0033): no false accept,
//! ever. Each change case labels a model once with the cache, changes it
//! the way a person or a tool would, and labels it again: the label must be
//! the one a run without the cache gives, and the file must have been read
//! (`--json`'s `cache` member). Every change is followed by a pause longer
//! than the racy margin, so that it is the identity check that catches it,
//! not the racy rule. A damaged store is a warning, never a crash or a
//! label.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use serde_json::Value as JsonValue;

use crate::common::{Dir, Gguf, Tensor, gguf_digest_bin, rich_model, text};

/// Longer than the racy margin (50 ms on a file system with nanosecond
/// times): a file this old is trusted.
const SETTLE: Duration = Duration::from_millis(120);

/// A model directory and a cache folder of its own.
struct Case {
    d: Dir,
}

impl Case {
    fn new() -> Case {
        let d = Dir::new();
        std::fs::create_dir_all(d.path("m")).unwrap();
        Case { d }
    }

    fn cache_dir(&self) -> PathBuf {
        self.d.path("cache")
    }

    fn store(&self) -> PathBuf {
        self.cache_dir().join("leaves-v1")
    }

    fn m(&self, name: &str) -> PathBuf {
        self.d.path("m").join(name)
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new(gguf_digest_bin())
            .args(args)
            .current_dir(self.d.path("m"))
            .env("GGUF_DIGEST_CACHE_DIR", self.cache_dir())
            .env_remove("GGUF_DIGEST_CACHE")
            .output()
            .unwrap()
    }

    /// `--json` of `arg` with the cache: (label, file name → "cache" or "read").
    fn cached(&self, arg: &str) -> (String, Vec<(String, String)>, String) {
        let o = self.run(&["--cache", "--json", arg]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        let v: JsonValue = serde_json::from_slice(&o.stdout).unwrap();
        let e = &v["files"][0];
        let files = e["cache"]
            .as_array()
            .unwrap_or_else(|| panic!("no cache member: {e}"))
            .iter()
            .map(|f| (f["path"].as_str().unwrap().to_string(), f["bytes"].as_str().unwrap().to_string()))
            .collect();
        (e["label"].as_str().unwrap().to_string(), files, text(&o.stderr))
    }

    /// The label without the cache.
    fn uncached(&self, arg: &str) -> String {
        let o = self.run(&["--no-cache", arg]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        text(&o.stdout).split_whitespace().next().unwrap().to_string()
    }
}

fn bytes_of<'a>(files: &'a [(String, String)], name: &str) -> &'a str {
    files.iter().find(|(p, _)| p.ends_with(name)).map(|(_, b)| b.as_str()).unwrap_or("absent")
}

/// Two models of the same size whose tensor data differ.
fn two_models() -> (Vec<u8>, Vec<u8>) {
    let a = Gguf::new().tensor(Tensor::filled("w", &[1024], 0, 1)).tensor(Tensor::filled("v", &[64], 0, 2)).build();
    let b = Gguf::new().tensor(Tensor::filled("w", &[1024], 0, 9)).tensor(Tensor::filled("v", &[64], 0, 2)).build();
    assert_eq!(a.len(), b.len());
    assert_ne!(a, b);
    (a, b)
}

fn sh(dir: &Path, cmd: &str, args: &[&str]) {
    let o = Command::new(cmd).args(args).current_dir(dir).output().unwrap();
    assert!(o.status.success(), "{cmd} {args:?}: {}", text(&o.stderr));
}

/// A model labelled with the cache, read; again, from the cache, with the
/// same label; then changed by `change`, and labelled again with the
/// cache: the label without the cache, the file read.
fn changed_is_read_again(what: &str, change: impl Fn(&Case)) {
    let c = Case::new();
    let (a, b) = two_models();
    std::fs::write(c.m("x.gguf"), &a).unwrap();
    std::fs::write(c.m("other.gguf"), &b).unwrap();
    std::thread::sleep(SETTLE);
    let (first, files, _) = c.cached("x.gguf");
    assert_eq!(bytes_of(&files, "x.gguf"), "read", "{what}: first run");
    let (again, files, _) = c.cached("x.gguf");
    assert_eq!((again.as_str(), bytes_of(&files, "x.gguf")), (first.as_str(), "cache"), "{what}: second run");
    change(&c);
    std::thread::sleep(SETTLE);
    let (after, files, _) = c.cached("x.gguf");
    assert_eq!(after, c.uncached("x.gguf"), "{what}: the label must be the uncached one");
    assert_ne!(after, first, "{what}: the change changes the label");
    assert_eq!(bytes_of(&files, "x.gguf"), "read", "{what}: the changed file must be read");
}

#[test]
fn a_same_size_write_in_place_is_read_again() {
    changed_is_read_again("dd conv=notrunc", |c| {
        sh(&c.d.path("m"), "dd", &["if=other.gguf", "of=x.gguf", "conv=notrunc", "status=none"]);
    });
}

#[test]
fn a_write_in_place_with_the_mtime_restored_is_read_again() {
    changed_is_read_again("dd, then touch -d", |c| {
        let m = std::fs::metadata(c.m("x.gguf")).unwrap();
        let mtime = std::os::unix::fs::MetadataExt::mtime(&m);
        let nsec = std::os::unix::fs::MetadataExt::mtime_nsec(&m);
        sh(&c.d.path("m"), "dd", &["if=other.gguf", "of=x.gguf", "conv=notrunc", "status=none"]);
        sh(&c.d.path("m"), "touch", &["-d", &format!("@{mtime}.{nsec:09}"), "x.gguf"]);
        let now = std::fs::metadata(c.m("x.gguf")).unwrap();
        assert_eq!(std::os::unix::fs::MetadataExt::mtime_nsec(&now), nsec, "touch -d restored the mtime");
    });
}

#[test]
fn a_copy_preserving_everything_over_it_is_read_again() {
    changed_is_read_again("cp --preserve=all", |c| {
        sh(&c.d.path("m"), "cp", &["--preserve=all", "other.gguf", "x.gguf"]);
    });
}

#[test]
fn a_file_renamed_over_it_is_read_again() {
    changed_is_read_again("mv", |c| sh(&c.d.path("m"), "mv", &["other.gguf", "x.gguf"]));
}

#[test]
fn a_hard_link_swap_is_read_again() {
    changed_is_read_again("ln + mv", |c| {
        sh(&c.d.path("m"), "ln", &["other.gguf", "link.gguf"]);
        sh(&c.d.path("m"), "mv", &["link.gguf", "x.gguf"]);
    });
}

#[test]
fn a_truncation_then_extension_to_the_same_size_is_read_again() {
    changed_is_read_again("truncate", |c| {
        let len = std::fs::metadata(c.m("x.gguf")).unwrap().len();
        sh(&c.d.path("m"), "truncate", &["-s", "200", "x.gguf"]);
        sh(&c.d.path("m"), "truncate", &["-s", &len.to_string(), "x.gguf"]);
    });
}

/// A write in the same second, and in the same timestamp tick, as the run
/// that read the file: the racy rule. Written, labelled at once with the
/// cache, written again at once, labelled again: always the uncached label.
#[test]
fn writes_in_the_same_tick_as_a_run_are_never_taken_from_the_cache() {
    let c = Case::new();
    let (a, b) = two_models();
    for round in 0..12 {
        let (first, second) = if round % 2 == 0 { (&a, &b) } else { (&b, &a) };
        std::fs::write(c.m("x.gguf"), first).unwrap();
        let _ = c.cached("x.gguf");
        // Same size, same inode, within milliseconds of the run.
        let mut f = std::fs::OpenOptions::new().write(true).open(c.m("x.gguf")).unwrap();
        std::io::Write::write_all(&mut f, second).unwrap();
        drop(f);
        let (label, _, _) = c.cached("x.gguf");
        assert_eq!(label, c.uncached("x.gguf"), "round {round}");
    }
}

/// A directory with one changed file reads that file only: the rest comes
/// from the cache, and the label is the uncached one.
#[test]
fn a_directory_with_one_changed_file_reads_only_that_file() {
    let c = Case::new();
    std::fs::create_dir_all(c.m("snap")).unwrap();
    std::fs::write(c.m("snap/model.gguf"), rich_model(&[0, 1, 8]).build()).unwrap();
    for i in 0..20 {
        std::fs::write(c.m(&format!("snap/f{i}.txt")), format!("file {i}\n").repeat(100)).unwrap();
    }
    std::fs::write(c.m("snap/README.md"), "# hello\n").unwrap();
    std::thread::sleep(SETTLE);
    let (first, files, _) = c.cached("snap");
    assert!(files.iter().all(|(_, b)| b == "read"), "{files:?}");
    let (again, files, _) = c.cached("snap");
    assert_eq!(again, first);
    assert_eq!(files.len(), 22);
    assert!(files.iter().all(|(_, b)| b == "cache"), "{files:?}");
    std::fs::write(c.m("snap/README.md"), "# hello, again\n").unwrap();
    std::thread::sleep(SETTLE);
    let (after, files, _) = c.cached("snap");
    assert_eq!(after, c.uncached("snap"));
    assert_ne!(after, first);
    for (p, b) in &files {
        assert_eq!(b, if p.ends_with("README.md") { "read" } else { "cache" }, "{p}");
    }
}

/// A shard set with one changed shard: the others from the cache.
#[test]
fn a_shard_set_with_one_changed_shard_reads_only_that_shard() {
    let c = Case::new();
    let g = Gguf::new()
        .tensor(Tensor::filled("a", &[256], 0, 1))
        .tensor(Tensor::filled("b", &[256], 0, 2))
        .tensor(Tensor::filled("c", &[256], 0, 3));
    let shards = g.split(&[1, 1, 1]);
    let n = shards.len();
    let name = |i: usize| format!("s-{:05}-of-{n:05}.gguf", i + 1);
    for (i, s) in shards.iter().enumerate() {
        std::fs::write(c.m(&name(i)), s.build()).unwrap();
    }
    std::thread::sleep(SETTLE);
    let first_shard = name(0);
    let (first, _, _) = c.cached(&first_shard);
    let last = c.m(&name(n - 1));
    let mut bytes = std::fs::read(&last).unwrap();
    let end = bytes.len() - 1;
    bytes[end] ^= 0x40;
    std::fs::write(&last, &bytes).unwrap();
    std::thread::sleep(SETTLE);
    let (after, files, _) = c.cached(&first_shard);
    assert_eq!(after, c.uncached(&first_shard));
    assert_ne!(after, first);
    for (p, b) in &files {
        assert_eq!(b, if p.ends_with(&name(n - 1)) { "read" } else { "cache" }, "{p}");
    }
}

/// The store damaged in every way the issue names: a warning saying it is
/// ignored, the uncached label, the file read; and the store rebuilt.
#[test]
fn a_damaged_or_foreign_store_is_a_warning_and_rebuilt() {
    use std::os::unix::fs::PermissionsExt;
    type Damage = fn(&Path);
    let cases: [(&str, Damage, &str); 5] = [
        ("truncated", |s| sh(s.parent().unwrap(), "truncate", &["-s", "40", "leaves-v1"]), "damaged"),
        (
            "bit-flipped",
            |s| {
                let mut b = std::fs::read(s).unwrap();
                let i = b.len() / 2;
                b[i] ^= 0x10;
                std::fs::write(s, b).unwrap();
            },
            "damaged",
        ),
        (
            "a link",
            |s| {
                let real = s.with_file_name("elsewhere");
                std::fs::rename(s, &real).unwrap();
                std::os::unix::fs::symlink(&real, s).unwrap();
            },
            "symbolic link",
        ),
        (
            "writable by others",
            |s| std::fs::set_permissions(s, std::fs::Permissions::from_mode(0o666)).unwrap(),
            "writable by others",
        ),
        (
            "of another version",
            |s| {
                let mut b = std::fs::read(s).unwrap();
                b.truncate(b.len() - 32);
                let v = env!("CARGO_PKG_VERSION");
                let at = b.windows(v.len()).position(|w| w == v.as_bytes()).unwrap();
                b[at] = b'9';
                let sum = crate::common::sha(&b);
                b.extend_from_slice(&sum);
                std::fs::write(s, b).unwrap();
            },
            "written by gguf-digest 9",
        ),
    ];
    for (what, damage, said) in cases {
        let c = Case::new();
        std::fs::write(c.m("x.gguf"), rich_model(&[0, 8]).build()).unwrap();
        std::thread::sleep(SETTLE);
        let (first, _, _) = c.cached("x.gguf");
        damage(&c.store());
        let (label, files, stderr) = c.cached("x.gguf");
        assert_eq!(label, first, "{what}");
        assert_eq!(bytes_of(&files, "x.gguf"), "read", "{what}");
        assert!(stderr.contains("warning: cache:") && stderr.contains(said), "{what}: {stderr}");
        // Rebuilt: the next run takes it from the cache, without a warning.
        let (label, files, stderr) = c.cached("x.gguf");
        assert_eq!((label.as_str(), bytes_of(&files, "x.gguf")), (first.as_str(), "cache"), "{what}: {stderr}");
        assert!(stderr.is_empty(), "{what}: {stderr}");
        let m = std::fs::symlink_metadata(c.store()).unwrap();
        assert!(m.is_file() && m.permissions().mode() & 0o777 == 0o600, "{what}");
    }
}

/// A cache folder others can write to is not used at all.
#[test]
fn a_cache_folder_others_can_write_is_not_used() {
    use std::os::unix::fs::PermissionsExt;
    let c = Case::new();
    std::fs::write(c.m("x.gguf"), rich_model(&[0]).build()).unwrap();
    std::fs::create_dir_all(c.cache_dir()).unwrap();
    std::fs::set_permissions(c.cache_dir(), std::fs::Permissions::from_mode(0o777)).unwrap();
    std::thread::sleep(SETTLE);
    for _ in 0..2 {
        let (label, files, stderr) = c.cached("x.gguf");
        assert_eq!(label, c.uncached("x.gguf"));
        assert_eq!(bytes_of(&files, "x.gguf"), "read");
        assert!(stderr.contains("writable by others") && stderr.contains("not used"), "{stderr}");
    }
    assert!(!c.store().exists());
}

/// The folder is made 0700 and the store 0600; the environment turns the
/// cache on, `--no-cache` off; without either, `--json` is as before.
#[test]
fn the_environment_and_the_flags_choose_and_json_says_so() {
    use std::os::unix::fs::PermissionsExt;
    let c = Case::new();
    std::fs::write(c.m("x.gguf"), rich_model(&[0]).build()).unwrap();
    std::thread::sleep(SETTLE);
    let o = c.run(&["--json", "x.gguf"]);
    assert!(!text(&o.stdout).contains("\"cache\""), "{}", text(&o.stdout));
    assert!(!c.cache_dir().exists(), "nothing made without the cache");
    let env = |args: &[&str]| {
        Command::new(gguf_digest_bin())
            .args(args)
            .current_dir(c.d.path("m"))
            .env("GGUF_DIGEST_CACHE_DIR", c.cache_dir())
            .env("GGUF_DIGEST_CACHE", "1")
            .output()
            .unwrap()
    };
    let o = env(&["--json", "x.gguf"]);
    assert!(text(&o.stdout).contains("\"bytes\": \"read\""), "{}", text(&o.stdout));
    assert_eq!(std::fs::metadata(c.cache_dir()).unwrap().permissions().mode() & 0o777, 0o700);
    assert_eq!(std::fs::metadata(c.store()).unwrap().permissions().mode() & 0o777, 0o600);
    let o = env(&["--json", "x.gguf"]);
    assert!(text(&o.stdout).contains("\"bytes\": \"cache\""), "{}", text(&o.stdout));
    let o = env(&["x.gguf"]);
    assert!(text(&o.stderr).contains("x.gguf: 1 of 1 files taken from the cache, 0 read"), "{}", text(&o.stderr));
    let o = env(&["--json", "--no-cache", "x.gguf"]);
    assert!(!text(&o.stdout).contains("\"cache\""), "{}", text(&o.stdout));
    // The statement records it per file; --check says it on stderr.
    let o = env(&["statement", "x.gguf"]);
    let s: JsonValue = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(s["predicate"]["models"][0]["files"][0]["bytes"], "cache", "{s}");
    let sums = c.run(&["x.gguf"]);
    std::fs::write(c.d.path("m/sums"), &sums.stdout).unwrap();
    let o = env(&["-c", "sums"]);
    assert_eq!(text(&o.stdout), "x.gguf: OK\n");
    assert!(text(&o.stderr).contains("x.gguf: 1 of 1 files taken from the cache, 0 read"), "{}", text(&o.stderr));
    for sub in
        [&["inspect", "--cache", "x.gguf"][..], &["diff", "--cache", "x.gguf", "x.gguf"], &["bom", "--cache", "x.gguf"]]
    {
        let o = c.run(sub);
        assert_eq!(o.status.code(), Some(0), "{sub:?}: {}", text(&o.stderr));
    }
}

/// `sign` reads every byte whatever `GGUF_DIGEST_CACHE` says, and says so
/// when `--cache` tells it otherwise.
#[test]
fn sign_uses_the_cache_only_when_told_and_says_so() {
    let c = Case::new();
    std::fs::write(c.m("x.gguf"), rich_model(&[0]).build()).unwrap();
    let made = Command::new("openssl")
        .args(["genpkey", "-algorithm", "ed25519", "-out", "k.pem"])
        .current_dir(c.d.path("m"))
        .output();
    if !made.is_ok_and(|o| o.status.success()) {
        eprintln!("SKIPPED: no openssl to make a key");
        return;
    }
    let sign = |extra: &[&str]| {
        Command::new(gguf_digest_bin())
            .args(["sign", "--key", "k.pem", "-o", "b.json"])
            .args(extra)
            .arg("x.gguf")
            .current_dir(c.d.path("m"))
            .env("GGUF_DIGEST_CACHE_DIR", c.cache_dir())
            .env("GGUF_DIGEST_CACHE", "1")
            .output()
            .unwrap()
    };
    let o = sign(&[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(!text(&o.stderr).contains("cache"), "{}", text(&o.stderr));
    assert!(!c.cache_dir().exists(), "sign without --cache does not touch the cache");
    let o = sign(&["--cache"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("--cache: files unchanged since an earlier run are not read again"));
}

/// Whether strace can trace a process here: `None` when it can; else why
/// not (the test skips loudly, except in CI, where .ci/run installs it
/// and it must work).
fn strace_unusable() -> Option<String> {
    let why = match Command::new("strace").args(["-f", "-qq", "-o", "/dev/null", "true"]).output() {
        Err(e) => format!("strace cannot be run ({e})"),
        Ok(o) if o.status.success() => return None,
        Ok(o) => format!("strace cannot trace here: {}", text(&o.stderr).trim()),
    };
    let ci = std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true") || v == "1");
    assert!(!ci, "{why}: .ci/run installs strace, and CI must be able to trace");
    Some(why)
}

/// The system calls of a `strace -f -y` log that name `file` (by its
/// descriptor, shown as `<path>`, or by its path, `"...path"`), by name:
/// (stat calls, reads, maps).
fn calls_on(log: &str, file: &str) -> (Vec<String>, usize, usize) {
    const STATS: [&str; 9] =
        ["statx", "fstat", "newfstatat", "stat", "lstat", "fstatat64", "stat64", "lstat64", "fstat64"];
    const READS: [&str; 5] = ["read", "pread64", "readv", "preadv", "preadv2"];
    let (by_fd, by_path) = (format!("{file}>"), format!("{file}\""));
    let mut stats = Vec::new();
    let (mut reads, mut maps) = (0, 0);
    for line in log.lines().filter(|l| l.contains(&by_fd) || l.contains(&by_path)) {
        // "PID name(args..." or "PID <... name resumed>...".
        let rest = line.split_once(" ").map_or(line, |(_, r)| r).trim_start().trim_start_matches("<... ");
        let name = rest.split(['(', ' ']).next().unwrap_or("");
        if STATS.contains(&name) {
            stats.push(name.to_string());
        } else if READS.contains(&name) {
            reads += 1;
        } else if name == "mmap" {
            maps += 1;
        }
    }
    (stats, reads, maps)
}

/// A 140-file snapshot relabelled from the cache costs one `statx` per file
/// and reads none of its bytes (issue #33): no read, `pread` or map of any
/// file, no stat of the walk's, none at the end. Counted with strace on a
/// Hugging Face snapshot (its entries links into `blobs/`) and on a plain
/// directory of the same files; the first, uncached run is counted too,
/// reading every file, so the count is seen to see reads. A weights file
/// whose metadata is parsed (here `model.gguf`) keeps its end stat
/// (docs/adr/0033, "One statx"): only the text files are counted.
#[test]
fn an_unchanged_snapshot_costs_one_statx_a_file_and_no_read() {
    if let Some(why) = strace_unusable() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let c = Case::new();
    let repo = c.m("hub/models--org--name");
    let snap = repo.join("snapshots/0123abcd");
    std::fs::create_dir_all(repo.join("blobs")).unwrap();
    std::fs::create_dir_all(&snap).unwrap();
    std::fs::create_dir_all(c.m("plain")).unwrap();
    let names: Vec<String> = (0..139).map(|i| format!("f{i:03}.txt")).collect();
    for (i, name) in names.iter().enumerate() {
        let body = format!("file {i}\n").repeat(50);
        std::fs::write(repo.join(format!("blobs/b{i:03}")), &body).unwrap();
        std::os::unix::fs::symlink(format!("../../blobs/b{i:03}"), snap.join(name)).unwrap();
        std::fs::write(c.m("plain").join(name), &body).unwrap();
    }
    let model = rich_model(&[0, 8]).build();
    std::fs::write(repo.join("blobs/model"), &model).unwrap();
    std::os::unix::fs::symlink("../../blobs/model", snap.join("model.gguf")).unwrap();
    std::fs::write(c.m("plain/model.gguf"), &model).unwrap();
    std::thread::sleep(SETTLE);
    let traced = |dir: &Path, log: &str| {
        let log = c.d.path(log);
        let o = Command::new("strace")
            .args(["-f", "-qq", "-y", "-o"])
            .arg(&log)
            .arg(gguf_digest_bin())
            .args(["--cache", "--json"])
            .arg(dir)
            .env("GGUF_DIGEST_CACHE_DIR", c.cache_dir())
            .env_remove("GGUF_DIGEST_CACHE")
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        (std::fs::read_to_string(&log).unwrap(), text(&o.stdout))
    };
    // (what, the directory labelled, each file's name where its bytes lie)
    let blobs: Vec<String> = (0..139).map(|i| format!("/blobs/b{i:03}")).collect();
    let plain: Vec<String> = names.iter().map(|n| format!("/plain/{n}")).collect();
    for (what, dir, files) in [("snapshot", &snap, &blobs), ("plain directory", &c.m("plain"), &plain)] {
        let (first, json) = traced(dir, "first.log");
        assert_eq!(json.matches("\"bytes\": \"read\"").count(), 140, "{what}: {json}");
        for f in files {
            let (_, reads, maps) = calls_on(&first, f);
            assert!(reads + maps > 0, "{what}: the first run reads {f}:\n{first}");
        }
        let (again, json) = traced(dir, "again.log");
        assert_eq!(json.matches("\"bytes\": \"cache\"").count(), 140, "{what}: {json}");
        for f in files {
            let (stats, reads, maps) = calls_on(&again, f);
            assert_eq!((stats.as_slice(), reads, maps), (&["statx".to_string()][..], 0, 0), "{what}: {f}:\n{again}");
        }
        // Nor is a link, or a plain file, stat'ed by the walk under its own name.
        for n in &names {
            let (stats, reads, _) = calls_on(&again, &format!("/{n}"));
            let want = if what == "snapshot" { 0 } else { 1 };
            assert_eq!((stats.len(), reads), (want, 0), "{what}: {n}: {stats:?}\n{again}");
        }
    }
}

/// A file changed while the first run reads it (a writer opens it while the
/// run holds its lease, as `lease.rs` does it): no label, and nothing of it
/// stored, so a later run reads it.
#[cfg(not(feature = "portable"))]
#[test]
fn a_file_changed_while_the_first_run_reads_it_is_never_stored() {
    use super::lease::{lease_state, spawn, wait_for};
    use std::io::Write;
    use std::os::unix::fs::{FileExt, MetadataExt};
    use std::process::Stdio;
    let c = Case::new();
    let (a, _) = two_models();
    std::fs::write(c.m("x.gguf"), &a).unwrap();
    std::thread::sleep(SETTLE);
    let ino = std::fs::metadata(c.m("x.gguf")).unwrap().ino();
    let mut child = spawn(
        Command::new(gguf_digest_bin())
            .args(["--cache", "x.gguf", "-"])
            .current_dir(c.d.path("m"))
            .env("GGUF_DIGEST_CACHE_DIR", c.cache_dir())
            .stdin(Stdio::piped()),
    );
    let pid = child.id();
    wait_for(Duration::from_secs(60), "no lease taken", || lease_state(pid, ino).as_deref() == Some("ACTIVE"));
    let path = c.m("x.gguf");
    let len = a.len() as u64;
    let writer = std::thread::spawn(move || {
        let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        f.write_all_at(b"\x55", len - 1).unwrap();
    });
    // Broken: the writer waits (BREAKING), or the run already saw it broken
    // at its next piece and let it go (the writer got in).
    wait_for(Duration::from_secs(60), "the lease did not break", || {
        writer.is_finished() || lease_state(pid, ino).as_deref() == Some("BREAKING")
    });
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&rich_model(&[0]).build()).unwrap();
    drop(stdin);
    let run = super::faults::finish(child, Duration::from_secs(120), "a writer during the first run");
    writer.join().unwrap();
    assert_eq!(run.status.code(), Some(2), "{}", run.stderr);
    assert!(run.stderr.contains("file changed while hashing"), "{}", run.stderr);
    assert!(!c.store().exists(), "nothing stored of a file whose lease broke");
    std::thread::sleep(SETTLE);
    let (label, files, _) = c.cached("x.gguf");
    assert_eq!(label, c.uncached("x.gguf"));
    assert_eq!(bytes_of(&files, "x.gguf"), "read");
}
