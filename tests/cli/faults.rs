//! Faults that come from outside a file's bytes, checked on the real binary:
//! a file truncated or rewritten by another process while it is hashed (or
//! while its metadata is parsed from the map), inputs that are not regular
//! files, unreadable files, names with newlines, declared counts far beyond
//! the file, and gigabytes of metadata that cost no disk (sparse files).
//!
//! The races below run the tool where it holds no read lease on the file
//! (`without_lease`), so that the change lands while the file is hashed and
//! the readers' own checks are tested; tests/cli/lease.rs tests the lease.
//!
//! The promise under test: the tool reports an error and exits 2; it is never
//! killed by a signal (SIGBUS from a vanished mapped page, SIGABRT from a
//! failed allocation), never hangs, never holds memory in proportion to what
//! a file declares, and never prints a label for a file that changed while it
//! was read. Races are made real, not simulated: the test
//! watches the child's read counter (/proc/PID/io) or its mappings
//! (/proc/PID/maps) and acts while the child is provably mid-read, on sparse
//! files large enough that hashing takes a second or more; if the child
//! still finishes first, the test retries with a larger file and fails
//! loudly if it never won the race.
// Helpers of tests that need Linux (leases, the map) go unused under
// the feature `portable`, whose path has neither.
#![cfg_attr(feature = "portable", allow(dead_code, unused_imports))]
use crate::common;

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{FileExt, PermissionsExt};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use common::*;
use gguf_digest::gguf::{Model, parse};
use gguf_digest::{ErrorKind, OpenOptions as ModelOptions, ReadMode};

/// What a finished run of the binary left.
pub(super) struct Run {
    pub(super) status: ExitStatus,
    pub(super) stdout: String,
    pub(super) stderr: String,
}

impl Run {
    /// Exit 2, not a signal, no label printed, and an error that says the file changed.
    fn assert_changed_error(&self, what: &str) {
        assert_eq!(self.status.signal(), None, "{what}: killed by signal; stderr: {}", self.stderr);
        assert_eq!(
            self.status.code(),
            Some(2),
            "{what}: exit status; stdout {:?} stderr {:?}",
            self.stdout,
            self.stderr
        );
        assert!(self.stdout.is_empty(), "{what}: printed a label for a changed file: {}", self.stdout);
        assert!(self.stderr.contains("changed"), "{what}: the error does not say the file changed: {}", self.stderr);
    }

    /// As [`Run::assert_changed_error`], for a run of [`without_lease`]:
    /// as root, the change was caught by the readers' own checks, not by a
    /// lease.
    fn assert_changed_without_lease(&self, what: &str) {
        self.assert_changed_error(what);
        if is_root() {
            assert!(!self.stderr.contains("opened for writing"), "{what}: a lease was held: {}", self.stderr);
        }
    }
}

fn drain(mut r: impl Read + Send + 'static) -> JoinHandle<String> {
    std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = r.read_to_end(&mut s);
        String::from_utf8_lossy(&s).into_owned()
    })
}

/// Waits for `child` at most `limit`; a child still running then is killed
/// and the test fails: the tool hung.
pub(super) fn finish(mut child: Child, limit: Duration, what: &str) -> Run {
    let out = drain(child.stdout.take().expect("piped stdout"));
    let err = drain(child.stderr.take().expect("piped stderr"));
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: still running after {limit:?}, killed: the tool hung");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Run { status, stdout: out.join().expect("stdout"), stderr: err.join().expect("stderr") }
}

fn spawn(args: &[&std::ffi::OsStr]) -> Child {
    Command::new(gguf_digest_bin())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start gguf-digest")
}

/// Bytes the process has read with read/pread so far (its `rchar`).
fn bytes_read(pid: u32) -> Option<u64> {
    let io = std::fs::read_to_string(format!("/proc/{pid}/io")).ok()?;
    io.lines().find_map(|l| l.strip_prefix("rchar: ")).and_then(|v| v.trim().parse().ok())
}

/// True while the process has `path` mapped.
fn has_mapped(pid: u32, path: &Path) -> bool {
    let name = path.to_string_lossy();
    std::fs::read_to_string(format!("/proc/{pid}/maps")).is_ok_and(|m| m.lines().any(|l| l.ends_with(&*name)))
}

/// A valid model with one I8 tensor of `size` bytes that are holes of a
/// sparse file: no disk used, yet the tool must read and hash every byte.
/// Returns the data start.
fn sparse_model(path: &Path, size: u64) -> u64 {
    let t = Tensor { name: b"big".to_vec(), dims: vec![size], ggml_type: 24, data: Vec::new() };
    let (bytes, lay) = Gguf::new().kv("general.name", Val::str("big")).tensor(t).build_with_layout();
    std::fs::write(path, bytes).unwrap();
    let f = OpenOptions::new().write(true).open(path).unwrap();
    f.set_len(lay.data_start + size).unwrap();
    // A little real data so the content is not all zeros.
    f.write_all_at(b"weights", lay.data_start).unwrap();
    lay.data_start
}

/// How the race went.
enum Race {
    /// The action ran while the child was mid-read; here is how the child ended.
    Hit(Run),
    /// The child finished before the moment came.
    TooLate(Run),
}

/// Starts `cmd` (the binary with its arguments), waits until `ready(pid)`
/// says it is in the middle of reading, runs `act`, and waits for the child.
fn race(mut cmd: Command, ready: impl Fn(u32) -> bool, act: impl FnOnce(), what: &str) -> Race {
    let mut child =
        cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("start gguf-digest");
    let pid = child.id();
    let start = Instant::now();
    loop {
        if child.try_wait().expect("wait").is_some() {
            return Race::TooLate(finish(child, Duration::from_secs(5), what));
        }
        if ready(pid) {
            break;
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("{what}: the child never started reading within 60 s");
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    act();
    Race::Hit(finish(child, Duration::from_secs(120), what))
}

/// Runs `attempt(size)` for each sparse size in turn until the race is won.
/// Once the child is seen reading, the change must land before it
/// finishes, and on a loaded machine (CI building other crates on both
/// cores) this test's thread can wait half a second for a core: tensor
/// races start at 4 GiB. A won truncation race does not pay for the size
/// (hashing stops at the first window after it); a rewrite is only seen
/// after hashing, so that race hashes all 4 GiB of holes (a few seconds).
fn until_hit(what: &str, sizes: &[u64], mut attempt: impl FnMut(u64) -> Race) -> Run {
    let mut notes = Vec::new();
    for &size in sizes {
        match attempt(size) {
            Race::Hit(run) => return run,
            Race::TooLate(run) => {
                notes.push(format!("{size} bytes: finished first (exit {:?}, stdout {:?})", run.status, run.stdout))
            }
        }
    }
    panic!("{what}: the race was never won, so nothing was tested: {notes:?}");
}

/// Is the child hashing tensor data? With `--no-mmap` it has read at least
/// 64 MiB; in the default mode data is hashed from a map (no `read` calls),
/// so it has spent at least 100 ms of CPU, far more than parsing takes.
fn hashing(pid: u32) -> bool {
    bytes_read(pid).is_some_and(|n| n >= 64 << 20) || cpu_ticks(pid).is_some_and(|t| t >= 10)
}

/// User plus system CPU time of a process, in clock ticks (1/100 s).
fn cpu_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the parenthesised command name; utime and stime are the 12th and 13th.
    let rest = stat.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
}

/// The binary, run so that it gets no read lease on the files of `dir`
/// when the tests run as root: as user `nobody`, neither their owner nor
/// holding CAP_LEASE. Another process's writes then land while a file is
/// hashed, as on a file system without leases or once the kernel's
/// lease-break-time has passed, so what is tested is the readers' own
/// checks (the guard, short reads, the final fstat). Without root the tool
/// holds a lease: the writer's open waits for it, the tool stops with
/// "file changed while hashing (it was opened for writing)", and the test
/// passes through that path instead (tests/cli/lease.rs tests it on purpose).
fn without_lease(dir: &Dir) -> Command {
    if is_root() { unprivileged(&runnable_binary(dir)) } else { Command::new(gguf_digest_bin()) }
}

/// Sparse model sizes for races against tensor hashing.
const TENSOR_RACE_SIZES: [u64; 3] = [4 << 30, 16 << 30, 64 << 30];

fn truncated_while_hashing(extra: &[&str]) {
    let dir = open_dir();
    let path = dir.path("big.gguf");
    let what = format!("truncation while hashing {extra:?}");
    let run = until_hit(&what, &TENSOR_RACE_SIZES, |size| {
        let data_start = sparse_model(&path, size);
        let mut cmd = without_lease(&dir);
        cmd.args(["-j", "1"]).args(extra).arg(&path);
        let cut = || OpenOptions::new().write(true).open(&path).unwrap().set_len(data_start + 4096).unwrap();
        race(cmd, hashing, cut, &what)
    });
    run.assert_changed_without_lease(&what);
}

/// (a) Another process truncates the file while its tensor data is hashed,
/// where the tool holds no read lease (`without_lease`): a short read, or
/// a guarded map's lost page, reported as a change; no SIGBUS.
#[test]
fn truncated_while_hashing_is_an_error_not_a_signal() {
    truncated_while_hashing(&[]);
}

#[test]
fn truncated_while_hashing_is_an_error_with_no_mmap() {
    truncated_while_hashing(&["--no-mmap"]);
}

/// (b) Bytes already hashed are rewritten in place (same size) and the
/// modification time is even put back, where the tool holds no read lease
/// (`without_lease`): the change time still differs, so the file is
/// reported as changed instead of labelled with stale content.
#[test]
fn rewritten_while_hashing_is_an_error() {
    let dir = open_dir();
    let path = dir.path("big.gguf");
    let what = "rewrite while hashing";
    let old = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
    let run = until_hit(what, &TENSOR_RACE_SIZES, |size| {
        let data_start = sparse_model(&path, size);
        File::options().write(true).open(&path).unwrap().set_modified(old).unwrap();
        let rewrite = || {
            let f = OpenOptions::new().write(true).open(&path).unwrap();
            // 1 MiB in: already hashed when the child has read 64 MiB.
            f.write_all_at(b"rewritten", data_start + (1 << 20)).unwrap();
            f.set_modified(old).unwrap();
        };
        let mut cmd = without_lease(&dir);
        cmd.args(["-j", "1"]).arg(&path);
        race(cmd, hashing, rewrite, what)
    });
    run.assert_changed_without_lease(what);
}

/// (e) The residual window of the default read mode: the file is truncated
/// while its metadata is parsed from the memory map (a KV string of
/// gigabytes keeps the parser inside the map for a second or more), where
/// the tool holds no read lease (`without_lease`). The map guard must turn
/// the SIGBUS of the vanished pages into a "changed" error.
// The SIGBUS guard's test: the portable path maps nothing (its reads of a
// truncated file are `truncated_while_hashing_is_an_error_with_no_mmap`'s).
#[cfg(not(feature = "portable"))]
#[test]
fn truncated_while_metadata_is_mapped_is_an_error_not_sigbus() {
    let dir = open_dir();
    let path = dir.path("bigkv.gguf");
    let what = "truncation while parsing from the map";
    // The parser hashes a string in one call, so every size is read in
    // full: these stay small.
    let run = until_hit(what, &[1 << 30, 4 << 30, 16 << 30], |size| {
        sparse_string_kv(&path, size);
        let cut = || OpenOptions::new().write(true).open(&path).unwrap().set_len(4096).unwrap();
        // Give the parser a moment inside the map before cutting.
        let ready = |pid| {
            let mapped = has_mapped(pid, &path);
            if mapped {
                std::thread::sleep(Duration::from_millis(20));
            }
            mapped
        };
        let mut cmd = without_lease(&dir);
        cmd.arg(&path);
        race(cmd, ready, cut, what)
    });
    run.assert_changed_without_lease(what);
}

// ---------------------------------------------------------------------------
// (c) Inputs that are not regular, readable files.

/// A temp dir every user can enter, for runs as an unprivileged user.
fn open_dir() -> Dir {
    let d = Dir::new();
    std::fs::set_permissions(d.dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    d
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// The binary, copied where an unprivileged user can run it.
fn runnable_binary(dir: &Dir) -> PathBuf {
    let p = dir.path("gguf-digest");
    copy_gguf_digest_to(&p);
    p
}

/// Root reads any file whatever its mode: run as `nobody` to test a
/// permission error for real (the standard library drops root's groups too).
fn unprivileged(bin: &Path) -> Command {
    let mut c = Command::new(bin);
    if is_root() {
        c.uid(65534).gid(65534);
    }
    c
}

/// Every kind of bad input on one command line, between good files: each bad
/// one gets one line on stderr naming it, the good ones still get their
/// labels, in order, and the exit status is 2. Nothing blocks: a FIFO must be
/// rejected without waiting for a writer.
fn bad_inputs_between_good_ones(extra: &[&str]) {
    let dir = open_dir();
    let bin = runnable_binary(&dir);
    let model = rich_model(&[0, 24]);
    let bytes = model.build();
    let label = model.expected_label();
    let file = |name: &str, b: &[u8], mode: u32| {
        let p = dir.write(name, b);
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        p
    };
    let ok1 = file("ok1.gguf", &bytes, 0o644);
    let ok2 = file("ok2.gguf", &bytes, 0o644);
    let newline_ok = file("new\nline.gguf", &bytes, 0o644);
    let newline_bad = file("bad\nname.gguf", b"NOTGGUF", 0o644);
    let empty = file("empty.gguf", b"", 0o644);
    let noperm = file("noperm.gguf", &bytes, 0o000);
    let subdir = dir.path("a-directory");
    std::fs::create_dir(&subdir).unwrap();
    let fifo = dir.path("fifo.gguf");
    mkfifo(&fifo);
    let looped = dir.path("loop.gguf");
    std::os::unix::fs::symlink(dir.path("loop2.gguf"), &looped).unwrap();
    std::os::unix::fs::symlink(&looped, dir.path("loop2.gguf")).unwrap();
    let missing = dir.path("missing.gguf");

    // (path, what its stderr line must say)
    let bad: Vec<(PathBuf, &str)> = vec![
        (subdir, "holds no file"),
        (fifo, "FIFO"),
        (PathBuf::from("/dev/null"), "not a regular file"),
        (PathBuf::from("/proc/self/status"), "empty"),
        (missing, "No such file"),
        (noperm, "Permission denied"),
        (looped, "symbolic links"),
        (empty, "empty"),
        (newline_bad, "not a GGUF file"),
    ];
    let mut args: Vec<PathBuf> = vec![ok1.clone()];
    args.extend(bad.iter().map(|(p, _)| p.clone()));
    args.push(newline_ok.clone());
    args.push(ok2.clone());

    let child = unprivileged(&bin)
        .args(extra)
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start gguf-digest");
    let what = format!("bad inputs {extra:?}");
    let run = finish(child, Duration::from_secs(30), &what);
    assert_eq!(run.status.signal(), None, "{what}: killed by a signal");
    assert_eq!(run.status.code(), Some(2), "{what}: {}", run.stderr);

    // The good files, in order; the name with a newline escaped as sha256sum does.
    let escaped = newline_ok.to_string_lossy().replace('\n', "\\n");
    let want = format!("{label}  {}\n\\{label}  {escaped}\n{label}  {}\n", ok1.display(), ok2.display());
    assert_eq!(run.stdout, want, "{what}: stdout");

    // One line per bad input, each naming its file, none split by a raw newline.
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), bad.len(), "{what}: one stderr line per bad input, got:\n{}", run.stderr);
    for (line, (path, says)) in lines.iter().zip(&bad) {
        assert!(line.starts_with("gguf-digest: "), "{what}: {line}");
        let name = path.file_name().unwrap().to_string_lossy();
        let name_start = name.split('\n').next().unwrap();
        assert!(line.contains(name_start), "{what}: line does not name {name:?}: {line}");
        assert!(line.contains(says), "{what}: expected '{says}' for {}: {line}", path.display());
    }
}

#[test]
fn bad_inputs_are_one_line_errors_and_the_rest_is_labelled() {
    bad_inputs_between_good_ones(&[]);
}

#[test]
fn bad_inputs_are_one_line_errors_and_the_rest_is_labelled_with_no_mmap() {
    bad_inputs_between_good_ones(&["--no-mmap"]);
}

/// The unprivileged run really is unprivileged: otherwise the permission
/// case above would test nothing.
#[test]
fn unprivileged_runs_cannot_read_a_mode_000_file() {
    let dir = open_dir();
    let p = dir.write("secret", b"x");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o000)).unwrap();
    let status = unprivileged(Path::new("cat")).arg(&p).stderr(Stdio::null()).status().expect("run cat");
    assert!(!status.success(), "cat read a mode-000 file: the permission test would be void");
}

// ---------------------------------------------------------------------------
// (d) Work bounded by the input.

/// A 1 KiB file that declares 2^40 KVs or 2^40 tensors.
fn huge_counts(tensors: u64, kvs: u64) -> Vec<u8> {
    let mut b = b"GGUF".to_vec();
    b.extend_from_slice(&3u32.to_le_bytes());
    b.extend_from_slice(&tensors.to_le_bytes());
    b.extend_from_slice(&kvs.to_le_bytes());
    b.resize(1024, b'x');
    b
}

#[test]
fn declared_counts_beyond_the_file_fail_before_any_work() {
    let dir = Dir::new();
    for (tensors, kvs, which) in [(0, 1u64 << 40, "KV count"), (1 << 40, 0, "tensor count"), (1 << 40, 1 << 40, "")] {
        let b = huge_counts(tensors, kvs);
        // CountTooLarge is the up-front check (spec §3); anything else would
        // mean the parser started looping over the declared entries.
        let e = parse(&b).expect_err("rejected");
        match e.kind() {
            ErrorKind::CountTooLarge { what, count, available } => {
                assert!(what.contains(which), "{what}");
                assert!(*count >= 1 << 40);
                assert_eq!(*available, 1024 - 24);
            }
            other => panic!("expected CountTooLarge, got {other:?}"),
        }
        let p = dir.write("counts.gguf", &b);
        for read_mode in [ReadMode::Mmap, ReadMode::Pread] {
            let e = Model::open_with(&p, ModelOptions { join_shards: true, read_mode, ..ModelOptions::default() })
                .expect_err("rejected");
            assert!(matches!(e.kind(), ErrorKind::CountTooLarge { .. }), "{read_mode:?}: {e}");
        }
        let run = finish(spawn(&[p.as_os_str()]), Duration::from_secs(10), "huge counts");
        assert_eq!(run.status.code(), Some(2));
        assert!(run.stderr.contains("cannot fit"), "{}", run.stderr);
    }
}

/// A model whose metadata is one KV string of `size` bytes, all holes of a
/// sparse file.
fn sparse_string_kv(path: &Path, size: u64) {
    let mut b = b"GGUF".to_vec();
    b.extend_from_slice(&3u32.to_le_bytes());
    b.extend_from_slice(&0u64.to_le_bytes());
    b.extend_from_slice(&1u64.to_le_bytes());
    b.extend_from_slice(&9u64.to_le_bytes());
    b.extend_from_slice(b"big.value");
    b.extend_from_slice(&8u32.to_le_bytes());
    b.extend_from_slice(&size.to_le_bytes());
    let header = b.len() as u64;
    std::fs::write(path, &b).unwrap();
    OpenOptions::new().write(true).open(path).unwrap().set_len(header + size).unwrap();
}

/// Runs the binary and waits for it with `wait4`, which also reports the
/// child's own peak RSS (std's wait does not; `RUSAGE_CHILDREN` would mix in
/// the children of tests running in parallel).
// Reaped by `wait4` below, which clippy cannot see.
#[allow(clippy::zombie_processes)]
fn run_measured(args: &[&std::ffi::OsStr], limit: Duration) -> (ExitStatus, String, u64) {
    let mut child = Command::new(gguf_digest_bin())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start gguf-digest");
    let err = drain(child.stderr.take().expect("piped stderr"));
    let pid = child.id() as libc::pid_t;
    let start = Instant::now();
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid out-parameter.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: `pid` is our own child, not yet reaped (std never waits on
        // it: `child` is only dropped, which does not wait); the pointers
        // are to live locals.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        assert!(r >= 0, "wait4: {}", std::io::Error::last_os_error());
        if r == pid {
            break;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("still running after {limit:?}, killed: the tool hung");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let max_rss = u64::try_from(usage.ru_maxrss).unwrap_or(0) * 1024;
    (ExitStatus::from_raw(status), err.join().expect("stderr"), max_rss)
}

/// `--no-mmap` reads metadata with `pread` instead of mapping it. A sparse
/// file whose one KV string is 1 GiB (no disk used, nothing to download)
/// must not make it hold that gigabyte: the string is to be hashed as it is
/// read, or refused. The default (mapped) mode holds no copy, only pages of
/// the file.
#[test]
fn no_mmap_metadata_memory_is_bounded() {
    let dir = Dir::new();
    let path = dir.path("bigkv.gguf");
    sparse_string_kv(&path, 1 << 30);
    let args: [&std::ffi::OsStr; 4] = ["--no-mmap".as_ref(), "-j".as_ref(), "1".as_ref(), path.as_os_str()];
    let (status, stderr, max_rss) = run_measured(&args, Duration::from_secs(120));
    assert_eq!(status.signal(), None, "--no-mmap on a 1 GiB KV string was killed by a signal: {stderr}");
    assert!(matches!(status.code(), Some(0 | 2)), "{status:?}: {stderr}");
    assert!(
        max_rss < 256 << 20,
        "--no-mmap held {} MiB for a file whose metadata is one 1 GiB string ({})",
        max_rss >> 20,
        stderr.trim()
    );
}

/// Mapped tensor pages are dropped behind the hasher, so the resident set
/// does not grow with the model. The model holds one 64 MiB tensor, whose
/// 8 MiB windows drop their own pages, and 128 pairs of a 96 KiB tensor and
/// a tensor of 2 MiB less 96 KiB: the long ones drop their own pages, the
/// short ones are dropped in bulk. Each short one sits in a 2 MiB block of
/// its own, which the kernel maps whole where the page cache holds a 2 MiB
/// folio (as it does for data written in large pieces), so the bulk drop
/// must count what a range may hold mapped, not its length: counting
/// lengths let this model reach 201 MiB. With two threads the process
/// stays under the 64 MiB.
// Pages of the map: the portable path maps nothing, and reads through
// reused buffers.
#[cfg(not(feature = "portable"))]
#[test]
fn mapped_tensor_pages_do_not_pile_up() {
    const SHORT: u64 = 96 << 10;
    let dir = Dir::new();
    let path = dir.path("wide.gguf");
    let tensor =
        |name: String, size: u64| Tensor { name: name.into_bytes(), dims: vec![size], ggml_type: 24, data: Vec::new() };
    let mut g = Gguf::new().kv("general.name", Val::str("wide")).tensor(tensor("big".into(), 64 << 20));
    for i in 0..128 {
        g = g.tensor(tensor(format!("short.{i}"), SHORT));
        g = g.tensor(tensor(format!("long.{i}"), (2 << 20) - SHORT));
    }
    // Built without data (every stored offset 0), then each tensor info's
    // offset field is set to its place, and the data is written 8 MiB at a
    // time: this process never holds the model (a child's peak RSS starts
    // from its parent's at the fork).
    let (mut bytes, lay) = g.build_with_layout();
    let mut end = 0u64;
    for (t, &info) in g.tensors.iter().zip(&lay.info_offsets) {
        let field = (info + 8 + t.name.len() as u64 + 4 + 8 + 4) as usize;
        bytes[field..field + 8].copy_from_slice(&end.to_le_bytes());
        end += t.dims[0];
    }
    let mut f = std::fs::File::create(&path).unwrap();
    f.write_all(&bytes).unwrap();
    let piece = vec![0x5au8; 8 << 20];
    for _ in 0..end / piece.len() as u64 {
        f.write_all(&piece).unwrap();
    }
    drop(f);

    let args: [&std::ffi::OsStr; 3] = ["-j".as_ref(), "2".as_ref(), path.as_os_str()];
    let (status, stderr, max_rss) = run_measured(&args, Duration::from_secs(300));
    assert_eq!(status.code(), Some(0), "{status:?}: {stderr}");
    assert!(max_rss < 64 << 20, "hashing a 320 MiB model held {} MiB resident", max_rss >> 20);
}

/// Read front to back (a cold file, buffered or around the page cache), a
/// file cut short after it was opened: an error naming what changed, never
/// a label from zeros or a short read.
#[test]
fn a_file_truncated_before_it_is_read_front_to_back_is_an_error() {
    use gguf_digest::PieceSizes;
    use gguf_digest_core::pipeline::{DirectReads, hash_front_to_back_with};
    for direct in [DirectReads::Auto, DirectReads::Always] {
        let d = Dir::new();
        let g = Gguf::new().tensor(Tensor::filled("a", &[100_000], 0, 1)).tensor(Tensor::filled("b", &[100_000], 0, 2));
        let bytes = g.build();
        let path = d.write("m.gguf", &bytes);
        let model = Model::open_with(&path, ModelOptions { read_mode: ReadMode::Pread, ..ModelOptions::default() })
            .expect("opens");
        // Labelled once first, which lets the file's read lease go
        // (src/source/lease.rs): the cut below then lands at once, as it
        // does where no lease is given, instead of waiting for the lease.
        model.digest().expect("labels");
        OpenOptions::new().write(true).open(&path).unwrap().set_len(bytes.len() as u64 - 300_000).unwrap();
        let e = hash_front_to_back_with(&model, &PieceSizes::default(), 2, direct, &|_| Ok(())).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::FileChanged(_)), "{direct:?}: {e}");
        assert!(e.to_string().contains("ended early") && e.to_string().contains("m.gguf"), "{direct:?}: {e}");
    }
}
