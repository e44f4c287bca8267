//! Writers the file's times do not show, checked on the real binary (issue
//! 23, item 3): a file that a process holds open for writing, or mapped
//! `MAP_SHARED` writable, is refused when it is opened, and one that a
//! process opens for writing while it is hashed gets no label. Both rest on
//! the read lease the tool takes on every file it opens (src/source/lease.rs,
//! docs/adr/0021-read-lease.md); where it may not take one, the `--json`
//! entry says so.
//!
//! No test waits on a clock: the tool's lease is watched in /proc/locks,
//! and every wait is bounded only to turn a hang into a failure.
// Helpers of tests that need Linux (leases, the map) go unused under
// the feature `portable`, whose path has neither.
#![cfg_attr(feature = "portable", allow(dead_code, unused_imports))]
use crate::common;

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{FileExt, MetadataExt, PermissionsExt};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::*;

// The bounded wait of the fault tests: a hang fails the test.
use super::faults::{Run, finish};

pub(super) fn spawn(cmd: &mut Command) -> Child {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("start gguf-digest")
}

/// Polls `cond` until it holds; after `limit`, fails the test with `why`.
pub(super) fn wait_for(limit: Duration, why: &str, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < limit, "{why} (waited {limit:?})");
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// The state /proc/locks shows for a lease `pid` holds on inode `ino`
/// (`ACTIVE`, `BREAKING`), if it holds one.
pub(super) fn lease_state(pid: u32, ino: u64) -> Option<String> {
    let locks = std::fs::read_to_string("/proc/locks").ok()?;
    locks.lines().find_map(|l| {
        // "1: LEASE  ACTIVE    READ 4121 fe:00:10030578 0 EOF"
        let f: Vec<&str> = l.split_whitespace().collect();
        let (kind, state, owner, dev_ino) = (f.get(1)?, f.get(2)?, f.get(4)?, f.get(5)?);
        let at = dev_ino.rsplit(':').next()?;
        (*kind == "LEASE" && owner.parse() == Ok(pid) && at.parse() == Ok(ino)).then(|| state.to_string())
    })
}

/// A valid model of one I8 tensor of `size` bytes that are holes of a
/// sparse file (no disk used; every byte hashed). Returns the data start.
fn sparse_model(path: &Path, size: u64) -> u64 {
    let t = Tensor { name: b"big".to_vec(), dims: vec![size], ggml_type: 24, data: Vec::new() };
    let (bytes, lay) = Gguf::new().kv("general.name", Val::str("big")).tensor(t).build_with_layout();
    std::fs::write(path, bytes).unwrap();
    let f = OpenOptions::new().write(true).open(path).unwrap();
    f.set_len(lay.data_start + size).unwrap();
    f.write_all_at(b"weights", lay.data_start).unwrap();
    lay.data_start
}

/// User plus system CPU time of a process, in clock ticks (1/100 s).
fn cpu_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = stat.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
}

/// Is the child hashing tensor data (it has spent 100 ms of CPU, far more
/// than opening and parsing take)?
fn hashing(pid: u32) -> bool {
    cpu_ticks(pid).is_some_and(|t| t >= 10)
}

/// Exit 2, not a signal, no label printed, and an error naming `path` that says `says`.
fn assert_refused(run: &Run, path: &Path, says: &str, what: &str) {
    assert_eq!(run.status.signal(), None, "{what}: killed by a signal; stderr: {}", run.stderr);
    assert_eq!(run.status.code(), Some(2), "{what}: exit; stdout {:?} stderr {:?}", run.stdout, run.stderr);
    assert!(run.stdout.is_empty(), "{what}: printed a label for a file being written: {}", run.stdout);
    let name = path.file_name().unwrap().to_string_lossy();
    assert!(run.stderr.contains(&*name), "{what}: the error does not name {name}: {}", run.stderr);
    assert!(run.stderr.contains(says), "{what}: the error does not say '{says}': {}", run.stderr);
}

/// The case: a writer mapped the file `MAP_SHARED` writable and
/// dirtied pages before the tool opened it, then flips bytes on both sides
/// of the hashing front while it hashes. Writes to pages already dirty take
/// no fault, so neither time moves: before the lease, a label came out for
/// content the file never held. Now the open is refused (the map holds the
/// file open for writing, though its descriptor is closed), in both modes.
fn mapped_writer(extra: &[&str]) {
    let dir = Dir::new();
    let path = dir.path("mapped.gguf");
    let what = format!("a writer's shared map {extra:?}");
    let size: u64 = 4 << 30;
    let data_start = sparse_model(&path, size);
    let (behind, ahead) = ((data_start + (1 << 20)) as usize, (data_start + size - 4096) as usize);
    let file = OpenOptions::new().read(true).write(true).open(&path).unwrap();
    // SAFETY: a map of this test's own file, which nothing else truncates;
    // it lives until the end of the test.
    let mut map = unsafe { memmap2::MmapMut::map_mut(&file).unwrap() };
    drop(file);
    // Dirtied before the tool opens the file: later writes to these pages
    // change no time.
    map[behind] = 1;
    map[ahead] = 1;
    let mut args: Vec<&str> = vec!["-j", "1"];
    args.extend(extra);
    let mut child = spawn(Command::new(gguf_digest_bin()).args(&args).arg(&path).stdin(Stdio::null()));
    let pid = child.id();
    // Before the lease the tool hashed for seconds, and the flips landed
    // mid-hash; now it has exited before it could hash anything.
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(60) && child.try_wait().expect("wait").is_none() {
        if hashing(pid) {
            map[behind] = 2;
            map[ahead] = 2;
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let run = finish(child, Duration::from_secs(120), &what);
    assert_refused(&run, &path, "open for writing", &what);
    drop(map);
}

// Needs Linux read leases, which the portable path does not take (it
// notes so: `a_file_read_without_a_lease_is_labelled_and_its_json_says_why`).
#[cfg(not(feature = "portable"))]
#[test]
fn a_file_mapped_writable_before_it_is_opened_is_refused_not_labelled() {
    mapped_writer(&[]);
}

// Needs Linux read leases, which the portable path does not take (it
// notes so: `a_file_read_without_a_lease_is_labelled_and_its_json_says_why`).
#[cfg(not(feature = "portable"))]
#[test]
fn a_file_mapped_writable_before_it_is_opened_is_refused_not_labelled_with_no_mmap() {
    mapped_writer(&["--no-mmap"]);
}

/// A writer that opens the file for writing after the tool took its lease.
/// The tool is held at a known point: `FILE -` opens FILE, then waits for
/// standard input before it finishes any model, so FILE's lease is held
/// for as long as the test keeps standard input open. The writer's `open`
/// waits for the lease (as the kernel makes it); the tool then refuses
/// FILE's label, labels standard input, and lets the lease go, so the
/// writer gets in (no wait for the kernel's 45 s).
// Needs Linux read leases, which the portable path does not take (it
// notes so: `a_file_read_without_a_lease_is_labelled_and_its_json_says_why`).
#[cfg(not(feature = "portable"))]
#[test]
fn a_writer_that_opens_the_file_while_it_is_hashed_gets_it_refused() {
    let dir = Dir::new();
    let model = Gguf::new().kv("general.name", Val::str("m")).tensor(Tensor::filled("t", &[4096], 0, 1));
    let path = dir.write("m.gguf", &model.build());
    let ino = std::fs::metadata(&path).unwrap().ino();
    let mut child = spawn(Command::new(gguf_digest_bin()).arg(&path).arg("-").stdin(Stdio::piped()));
    let pid = child.id();
    let what = "a writer after the lease";
    wait_for(Duration::from_secs(60), "the tool took no read lease on the file it opened", || {
        lease_state(pid, ino).as_deref() == Some("ACTIVE")
    });
    let writer_path = path.clone();
    let writer = std::thread::spawn(move || {
        // Blocks until the tool lets its lease go.
        let f = OpenOptions::new().write(true).open(&writer_path).expect("the writer's open");
        f.write_all_at(b"x", 0).unwrap();
    });
    wait_for(Duration::from_secs(60), "the writer's open did not break the tool's lease", || {
        lease_state(pid, ino).as_deref() == Some("BREAKING")
    });
    let stdin_model = Gguf::new().kv("general.name", Val::str("stdin")).tensor(Tensor::filled("s", &[64], 0, 2));
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&stdin_model.build()).unwrap();
    drop(stdin);
    let run = finish(child, Duration::from_secs(120), what);
    writer.join().expect("the writer got in once the tool let its lease go");
    assert_eq!(run.status.signal(), None, "{what}: killed by a signal; {}", run.stderr);
    assert_eq!(run.status.code(), Some(2), "{what}: {}", run.stderr);
    assert_eq!(run.stdout, format!("{}  -\n", stdin_model.expected_label()), "{what}: only standard input is labelled");
    assert!(
        run.stderr.contains("m.gguf") && run.stderr.contains("file changed while hashing (it was opened for writing)")
    );
    assert_eq!(run.stderr.lines().count(), 1, "{what}: {}", run.stderr);
}

/// A writer that opens a file while its data is being hashed: its `open`
/// waits, the tool stops at its next piece and lets the lease go, the
/// writer writes, and no label is printed. Both read modes.
fn writer_during_hashing(extra: &[&str]) {
    let dir = Dir::new();
    let path = dir.path("big.gguf");
    let what = format!("a writer while hashing {extra:?}");
    let data_start = sparse_model(&path, 16 << 30);
    let mut args: Vec<&str> = vec!["-j", "1"];
    args.extend(extra);
    let child = spawn(Command::new(gguf_digest_bin()).args(&args).arg(&path).stdin(Stdio::null()));
    let pid = child.id();
    wait_for(Duration::from_secs(60), "the tool never started hashing", || hashing(pid));
    // 16 GiB takes far longer to hash than this takes to get here.
    let f = OpenOptions::new().write(true).open(&path).expect("the writer's open");
    f.write_all_at(b"rewritten", data_start + (1 << 20)).unwrap();
    let run = finish(child, Duration::from_secs(120), &what);
    assert_refused(&run, &path, "file changed while hashing (it was opened for writing)", &what);
}

// Needs Linux read leases, which the portable path does not take (it
// notes so: `a_file_read_without_a_lease_is_labelled_and_its_json_says_why`).
#[cfg(not(feature = "portable"))]
#[test]
fn a_writer_during_hashing_stops_it_and_gets_no_label() {
    writer_during_hashing(&[]);
}

// Needs Linux read leases, which the portable path does not take (it
// notes so: `a_file_read_without_a_lease_is_labelled_and_its_json_says_why`).
#[cfg(not(feature = "portable"))]
#[test]
fn a_writer_during_hashing_stops_it_and_gets_no_label_with_no_mmap() {
    writer_during_hashing(&["--no-mmap"]);
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Where the kernel gives no lease (here: run as `nobody` on root's file,
/// without CAP_LEASE), the file is labelled as before, checked by its
/// identity, and its `--json` entry says it had no lease and why. A file
/// that had one gets no such member (the JSON stays as it was).
#[test]
fn a_file_read_without_a_lease_is_labelled_and_its_json_says_why() {
    let dir = Dir::new();
    std::fs::set_permissions(dir.dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let model = rich_model(&[0, 24]);
    let path = dir.write("m.gguf", &model.build());
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let json = |cmd: &mut Command| -> serde_json::Value {
        let out = cmd.arg("--json").arg(&path).stdin(Stdio::null()).output().expect("runs");
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).expect("JSON")
    };
    let leased = json(&mut Command::new(gguf_digest_bin()));
    assert_eq!(leased["files"][0]["label"], model.expected_label());
    if cfg!(feature = "portable") {
        // The portable path takes no lease, for any user, and says so.
        let note = serde_json::json!([{"path": path.to_str().unwrap(), "why": "this system has no file leases"}]);
        assert_eq!(leased["files"][0]["read_lease_unavailable"], note, "{leased}");
        return;
    }
    assert!(leased["files"][0].get("read_lease_unavailable").is_none(), "{leased}");
    if !is_root() {
        eprintln!("SKIPPED: not root, so no user here is refused a lease on this file (lease::tests map the refusals)");
        return;
    }
    let bin = dir.path("gguf-digest");
    copy_gguf_digest_to(&bin);
    let unleased = json(Command::new(&bin).uid(65534).gid(65534));
    let entry = &unleased["files"][0];
    assert_eq!(entry["label"], model.expected_label());
    let note =
        serde_json::json!([{"path": path.to_str().unwrap(), "why": "not the file's owner, and without CAP_LEASE"}]);
    assert_eq!(entry["read_lease_unavailable"], note, "{unleased}");
    // Nothing else differs.
    let mut without = entry.clone();
    without.as_object_mut().unwrap().remove("read_lease_unavailable");
    assert_eq!(without, leased["files"][0]);
}

/// The tool names one file twice (two opens, two read leases side by
/// side): both are labelled, and the lease of the first, released after
/// its check, does not spoil the second.
#[test]
fn one_file_named_twice_is_labelled_twice() {
    let dir = Dir::new();
    let model = rich_model(&[0]);
    let path = dir.write("m.gguf", &model.build());
    let out = Command::new(gguf_digest_bin()).arg(&path).arg(&path).stdin(Stdio::null()).output().expect("runs");
    let line = format!("{}  {}\n", model.expected_label(), path.display());
    assert_eq!(String::from_utf8_lossy(&out.stdout), line.repeat(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(0));
}

/// A file open for writing by another process (an ordinary descriptor) is
/// refused at once: nothing is read from it, and the other files are labelled.
#[test]
fn a_file_held_open_for_writing_is_refused_and_the_rest_labelled() {
    let dir = Dir::new();
    let model = rich_model(&[0]);
    let (busy, ok) = (dir.write("busy.gguf", &model.build()), dir.write("ok.gguf", &model.build()));
    let holder = File::options().append(true).open(&busy).unwrap();
    let out = Command::new(gguf_digest_bin()).arg(&busy).arg(&ok).stdin(Stdio::null()).output().expect("runs");
    drop(holder);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if cfg!(feature = "portable") {
        // Without a lease the writer is not seen (docs/SECURITY.md): both
        // are labelled, as their bytes are now.
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        let label = model.expected_label();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            format!("{label}  {}\n{label}  {}\n", busy.display(), ok.display())
        );
        return;
    }
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), format!("{}  {}\n", model.expected_label(), ok.display()));
    let want = format!(
        "gguf-digest: {}: file is open for writing by a process (a descriptor or a shared writable map), so its \
         content could change while it is hashed\n",
        busy.display()
    );
    assert_eq!(stderr, want);
}
