//! Golden outputs: proof that a change meant to leave the command line alone
//! (a refactoring, a move of modules) leaves every byte `gguf-digest` prints,
//! and every exit status, exactly as they were.
//!
//! The corpus is made at run time in a temporary directory, never committed:
//! the spec vectors of `tests/data/vectors`, models from the test writer in
//! `tests/common` (every type and value type, relayouts, big-endian, v2, a
//! shard set, empty models, odd names and strings, a file past the 64 KiB
//! read-or-map threshold), malformed files of every kind, and the real
//! SmolLM2 model when the interop venv holds it. The real binary runs over it
//! in every mode whose output is a contract: sums lines (one file, many, `-j1`
//! and `-j2`), `--json`, `--skeleton`, `--no-join`, `--no-mmap`, `--check` with
//! each of its flags, `inspect`, `diff`, errors and usage messages. Every run
//! is in the corpus directory with relative paths, so no output names it.
//!
//! `tests/golden/outputs.txt` holds every case's output as text, so that a
//! change shows as a diff of that file. Cases are in name order, each
//!
//! ```text
//! === <case>
//! exit <code>
//! --- stdout
//! | <a line, as printed>
//! ~ <a line with bytes escaped: \\ is a backslash, \xNN any byte>
//! --- stderr
//! %no newline at end
//! ```
//!
//! A line is written as printed (`| `) unless it is not UTF-8, holds a control
//! character other than a tab, or ends in a space or tab; then it is escaped
//! (`~ `). `%no newline at end` follows a stream's last line when the stream
//! does not end with one. A case whose exit status and streams are those of
//! an earlier case (in name order, SmolLM2 cases only with each other) is
//! written `same as <that case>` instead of `exit ...` and its streams.
//! Blank lines between cases are ignored.
//!
//! A failing run prints, for each changed case, the lines that differ
//! (`-` recorded, `+` now), and leaves the whole manifest as it would be
//! recorded now in `target/tmp/golden/outputs.txt`, for
//! `diff -u tests/golden/outputs.txt target/tmp/golden/outputs.txt`.
//!
//! To re-record after a change that is meant to change output:
//! `GOLDEN_RECORD=1 cargo test --test cli golden::`, then review the manifest's diff.
//!
//! SmolLM2 is found as `tests/interop/interop.rs` finds it (the venv of
//! `scripts/setup-python.sh`, at `$GGUF_DIGEST_VENV` or
//! `~/.cache/gguf-digest/venv`). Without it the `smollm2/` cases print one
//! `SKIPPED:` line and are left out of the comparison (recording keeps their
//! old text), except under `CI=true`, where the test fails instead.
use crate::common;

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fmt::Write as _;
use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value as JsonValue;

/// Generous, because one case hashes the 98 MB SmolLM2 in a debug build;
/// only a hung process gets anywhere near it.
const TIMEOUT: Duration = Duration::from_secs(120);

/// Cases whose outputs the failure message shows; the rest are only named,
/// so that a change touching everything still gives a readable message.
const SHOWN_CASES: usize = 30;

/// Differing lines shown per failing case, for each side.
const SHOWN_LINES: usize = 40;

/// Unchanged lines shown before a case's first difference.
const CONTEXT_LINES: usize = 3;

const SMOLLM2_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";
const SMOLLM2_PREFIX: &str = "smollm2/";

fn manifest_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/outputs.txt")
}

fn dump_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("golden")
}

/// The portable path (`--features portable`) takes no read lease, and every
/// file's `--json` entry ends with a `read_lease_unavailable` note saying
/// so; the rest of every output must be Linux's byte for byte. This takes
/// each note out (and the comma before it), after checking that it gives
/// exactly that reason, and counts them.
fn lease_notes_removed(stdout: &[u8]) -> (Vec<u8>, usize) {
    let text = String::from_utf8_lossy(stdout);
    if !text.contains("\"read_lease_unavailable\": [") {
        return (stdout.to_vec(), 0);
    }
    let mut out: Vec<String> = Vec::new();
    let mut notes = 0;
    let mut lines = text.split_inclusive('\n');
    while let Some(line) = lines.next() {
        let Some(indent) = line.strip_suffix("\"read_lease_unavailable\": [\n") else {
            out.push(line.to_string());
            continue;
        };
        notes += 1;
        let close = format!("{indent}]");
        for inner in lines.by_ref() {
            if inner.trim_end_matches(['\n', ',']) == close {
                assert!(inner.trim_end() == close, "a note is the entry's last member: {text}");
                break;
            }
            let member = inner.trim();
            assert!(
                ["{", "}", "},"].contains(&member)
                    || member.starts_with("\"path\": ")
                    || member == "\"why\": \"this system has no file leases\"",
                "the portable path's only note is that it has no leases: {inner}"
            );
        }
        let last = out.last_mut().expect("a note follows an entry's members");
        let trimmed = last.trim_end_matches('\n').strip_suffix(',').expect("a member before the note").to_string();
        *last = format!("{trimmed}\n");
    }
    (out.concat().into_bytes(), notes)
}

// ---------------------------------------------------------------------------
// Running the binary
// ---------------------------------------------------------------------------

/// What one run did.
#[derive(Clone, PartialEq)]
struct Run {
    code: i32,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

enum Stdin<'a> {
    Null,
    Bytes(&'a [u8]),
}

/// Where the child's stdout goes; both are "not a terminal", as `--skeleton` requires.
enum Stdout {
    Pipe,
    File,
}

/// Runs the cases in one directory and keeps what each did.
struct Golden {
    dir: PathBuf,
    runs: BTreeMap<String, Run>,
    /// `read_lease_unavailable` notes taken out of `--json` outputs (the
    /// portable path's, `lease_notes_removed`).
    lease_notes: usize,
}

impl Golden {
    fn run<S: AsRef<OsStr>>(&mut self, case: &str, args: &[S]) -> &Run {
        self.exec(case, args, Stdin::Null, Stdout::Pipe)
    }

    fn run_stdin<S: AsRef<OsStr>>(&mut self, case: &str, args: &[S], stdin: &[u8]) -> &Run {
        self.exec(case, args, Stdin::Bytes(stdin), Stdout::Pipe)
    }

    fn run_to_file<S: AsRef<OsStr>>(&mut self, case: &str, args: &[S]) -> &Run {
        self.exec(case, args, Stdin::Null, Stdout::File)
    }

    fn exec<S: AsRef<OsStr>>(&mut self, case: &str, args: &[S], stdin: Stdin<'_>, stdout: Stdout) -> &Run {
        // A case name is one manifest word and a relative file name under the dump folder.
        assert!(
            !case.is_empty()
                && case.bytes().all(|b| b.is_ascii_graphic())
                && !case.split('/').any(|p| p.is_empty() || p == "." || p == ".."),
            "bad case name {case:?}"
        );
        assert!(!self.runs.contains_key(case), "case {case} defined twice");
        let mut cmd = Command::new(gguf_digest_bin());
        cmd.args(args).current_dir(&self.dir);
        // The same bytes whatever the host: clap's messages in the C locale,
        // no colour, help wrapped at a fixed width (clap reads COLUMNS), and
        // the default thread count not taken from the developer's shell.
        cmd.env("LC_ALL", "C")
            .env("NO_COLOR", "1")
            .env("COLUMNS", "100")
            .env_remove("CLICOLOR")
            .env_remove("CLICOLOR_FORCE")
            .env_remove("RAYON_NUM_THREADS");
        cmd.stdin(if matches!(stdin, Stdin::Bytes(_)) { Stdio::piped() } else { Stdio::null() });
        let out_file = self.dir.join(".golden-stdout");
        match stdout {
            Stdout::Pipe => cmd.stdout(Stdio::piped()),
            Stdout::File => cmd.stdout(File::create(&out_file).expect("create stdout file")),
        };
        cmd.stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn gguf-digest");
        // Fed and drained from threads: a child that writes before it has
        // read all its input must not deadlock against this process.
        let feeder = match (child.stdin.take(), stdin) {
            (Some(mut pipe), Stdin::Bytes(b)) => {
                let b = b.to_vec();
                Some(std::thread::spawn(move || {
                    // The child may exit without reading it all.
                    let _ = pipe.write_all(&b);
                }))
            }
            _ => None,
        };
        let drain = |r: Option<Box<dyn Read + Send>>| {
            r.map(|mut r| {
                std::thread::spawn(move || {
                    let mut v = Vec::new();
                    r.read_to_end(&mut v).expect("read child output");
                    v
                })
            })
        };
        let out_t = drain(child.stdout.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
        let err_t = drain(child.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
        let deadline = Instant::now() + TIMEOUT;
        let status = loop {
            if let Some(s) = child.try_wait().expect("wait") {
                break s;
            }
            if Instant::now() > deadline {
                // Our own child, by its pid: a hang fails the test instead of stalling the suite.
                let _ = child.kill();
                let _ = child.wait();
                panic!("case {case} hung and was killed after {TIMEOUT:?}: {cmd:?}");
            }
            std::thread::sleep(Duration::from_millis(1));
        };
        if let Some(f) = feeder {
            f.join().expect("stdin feeder");
        }
        let stdout = match out_t {
            Some(t) => t.join().expect("stdout"),
            None => {
                let b = std::fs::read(&out_file).expect("read stdout file");
                std::fs::remove_file(&out_file).expect("remove stdout file");
                b
            }
        };
        let stderr = err_t.expect("stderr is piped").join().expect("stderr");
        let code = status.code().unwrap_or_else(|| panic!("case {case} was killed by a signal: {status}"));
        let stdout = if cfg!(feature = "portable") {
            let (stdout, notes) = lease_notes_removed(&stdout);
            self.lease_notes += notes;
            stdout
        } else {
            stdout
        };
        self.runs.entry(case.to_string()).or_insert(Run { code, stdout, stderr })
    }
}

// ---------------------------------------------------------------------------
// The corpus
// ---------------------------------------------------------------------------

/// The corpus's file names, by what the tool should make of them.
#[derive(Default)]
struct Corpus {
    /// Files that label (first shards stand for their set).
    good: Vec<String>,
    /// Files, missing files and folders the tool must refuse.
    bad: Vec<String>,
    /// Shards of sets, labelled apart with `--no-join`.
    shards: Vec<String>,
}

fn vectors_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/vectors")
}

/// The vectors' names, sorted so the corpus order does not follow the file system's.
fn vector_names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(vectors_dir())
        .expect("tests/data/vectors")
        .map(|e| e.expect("dir entry").file_name().into_string().expect("UTF-8 vector name"))
        .collect();
    names.sort();
    names
}

/// `rich_model` with every layout choice the writer has changed; the same logical model.
fn relayout(g: &Gguf) -> Gguf {
    let mut r = g.clone();
    r.kvs.reverse();
    let n = r.tensors.len();
    // Strides coprime to the tensor count give permutations; the writer
    // would silently build a broken file from anything else.
    let permuted = |stride: usize, shift: usize| {
        let order: Vec<usize> = (0..n).map(|i| (i * stride + shift) % n).collect();
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert!(sorted.iter().copied().eq(0..n), "stride {stride} is not coprime to {n} tensors");
        order
    };
    r.info_order = Some(permuted(3, 0));
    r.data_order = Some(permuted(37, 1));
    r.gaps = vec![3, 5, 7];
    r.align_data = false;
    r.pad_byte = 0xA5;
    r.trailing = b"trailing bytes".to_vec();
    r
}

/// `rich` with one change of every kind `diff` names.
fn changed(rich: &Gguf) -> Gguf {
    let mut c = rich.clone();
    set_kv(&mut c, "general.name", Val::str("rich, changed"));
    set_kv(&mut c, "arr.t4", Val::Arr(4, vec![Val::U32(70000), Val::U32(70001), Val::U32(70000)]));
    c.kvs.retain(|(k, _)| k != b"v.u8");
    c = c.kv("v.added", Val::U32(7));
    // F32 [2, 3] as [3, 2]: same bytes, another shape.
    c.tensors[0].dims = vec![3, 2];
    c.tensors[3].data[5] ^= 0x40;
    c.tensors.remove(5);
    // Same data under another name: diff says it may be a rename.
    c.tensors[6].name = b"blk.renamed.w".to_vec();
    c.tensor(Tensor::filled("extra.w", &[8], 0, 99))
}

/// Past 64 KiB of metadata and of tensor data, so mapping and `--no-mmap` take different paths.
fn big(seed: u8) -> Gguf {
    Gguf::new()
        .kv("general.architecture", Val::str("llama"))
        .kv("general.name", Val::str("big"))
        .kv("tokenizer.ggml.tokens", Val::Arr(8, (0..6000).map(|i| Val::str(&format!("tok{i}"))).collect()))
        .tensor(Tensor::filled("token_embd.weight", &[32768, 4], 0, seed))
        .tensor(Tensor::filled("blk.0.ffn.weight", &[4096, 16], 8, seed.wrapping_add(1)))
}

/// Strings, keys and names that must be escaped, elided or flagged.
fn odd() -> Gguf {
    let mut g = Gguf::new()
        .kv("general.architecture", Val::str("llama"))
        .kv("general.name", Val::str("odd"))
        .kv("x.long", Val::str(&"a".repeat(200)))
        .kv("x.accents", Val::str("ééé"))
        .kv("x.ctl", Val::str("red\x1b[31m\n\\'"))
        .kv("x.many", Val::Arr(4, (0..100).map(Val::U32).collect()))
        .kv("x.nan", Val::F32(f32::NAN))
        .kv("x.inf", Val::F64(f64::NEG_INFINITY))
        .kv("x.neg_zero", Val::F32(-0.0))
        .kv("x.key\r\n", Val::U8(1))
        .kv("General.Name", Val::U8(0))
        .kv("x.nested", Val::Arr(9, vec![Val::Arr(4, vec![Val::U32(1)]), Val::Arr(4, vec![])]));
    g.kvs.push((b"x.bad\xffkey".to_vec(), Val::U8(1)));
    g.kvs.push((b"x.value".to_vec(), Val::Str(b"ok\xc3".to_vec())));
    let mut toks: Vec<Val> = (0..10).map(|i| Val::str(&format!("t{i}"))).collect();
    toks[3] = Val::Str(b"\xff".to_vec());
    toks[7] = Val::Str(b"a\xe2\x82".to_vec());
    g.kvs.push((b"tokenizer.ggml.tokens".to_vec(), Val::Arr(8, toks)));
    g.tensor(Tensor::filled("token_embd.weight", &[8, 4], 0, 1))
        .tensor(Tensor::filled("x.a", &[8, 1, 1], 0, 2))
        .tensor(Tensor::filled("x.b", &[], 0, 3))
        .tensor(Tensor::filled(&"m".repeat(64), &[8], 0, 4))
        .tensor(Tensor { name: b"bad\xfe".to_vec(), ..Tensor::filled("", &[8], 0, 5) })
        .tensor(Tensor::filled("ctl\x1b.w", &[32], 8, 6))
}

fn small(seed: u8) -> Gguf {
    Gguf::new()
        .kv("general.architecture", Val::str("llama"))
        .kv("seed", Val::U8(seed))
        .tensor(Tensor::filled("b", &[8, 2], 0, seed))
        .tensor(Tensor::filled("a", &[32], 8, seed.wrapping_add(1)))
}

/// A file position of the stored offset in a tensor info the writer placed at `info`.
fn offset_field(info: u64, t: &Tensor) -> usize {
    (info + 8 + t.name.len() as u64 + 4 + 8 * t.dims.len() as u64 + 4) as usize
}

/// Writes the corpus into `d` and says what each name is.
fn build_corpus(d: &Dir) -> Corpus {
    let mut c = Corpus::default();
    let mut good = |name: &str, g: &Gguf| {
        d.write(name, &g.build());
        c.good.push(name.to_string());
    };

    let rich = rich_model(&ALL_TYPES);
    good("rich.gguf", &rich);
    good("rich_relayout.gguf", &relayout(&rich));
    good("rich_changed.gguf", &changed(&rich));
    let be_twin = rich_model(&BE_TYPES);
    good("be_twin_le.gguf", &be_twin);
    good("be_twin_be.gguf", &Gguf { big_endian: true, ..be_twin.clone() });
    good("be_twin_be_relayout.gguf", &Gguf { big_endian: true, ..relayout(&be_twin) });
    good("v2.gguf", &Gguf { version: 2, ..be_twin.clone() });
    good("v2_be.gguf", &Gguf { version: 2, big_endian: true, ..be_twin.clone() });
    good("align64.gguf", &rich_model(&[0, 8, 12]).kv("general.alignment", Val::U32(64)));
    good("empty_model.gguf", &Gguf::new());
    good("kv_only.gguf", &Gguf::new().kv("general.architecture", Val::str("llama")).kv("general.name", Val::str("kv")));
    good("odd.gguf", &odd());
    good("big.gguf", &big(1));
    let mut big_changed = big(1);
    set_kv(
        &mut big_changed,
        "tokenizer.ggml.tokens",
        Val::Arr(
            8,
            (0..6000).map(|i| Val::str(&if i == 4000 { "changed".into() } else { format!("tok{i}") })).collect(),
        ),
    );
    big_changed.tensors[0].data[300_000] ^= 1;
    good("big_changed.gguf", &big_changed);
    good("odd\nname.gguf", &small(1));
    good("back\\slash.gguf", &small(2));

    // A shard set as gguf-split writes it, its merge, and the unsplit original.
    let base = rich_model(&[0, 1, 8, 2, 12, 14, 24, 30]);
    let set = write_set(d, "split", &base.split(&[3, 3, 2]));
    assert_eq!(set.len(), 3);
    d.write("split_merged.gguf", &base.merged().build());
    d.write("split_whole.gguf", &base.build());
    c.good.extend(["split-00001-of-00003.gguf", "split_merged.gguf", "split_whole.gguf"].map(String::from));
    c.shards.extend((1..=3).map(|i| format!("split-{i:05}-of-00003.gguf")));

    // The same set with its last shard gone.
    let set = write_set(d, "gap", &small(3).split(&[1, 1]));
    std::fs::remove_file(&set[1]).expect("remove a shard");

    for name in vector_names() {
        std::fs::copy(vectors_dir().join(&name), d.path(&name)).expect("copy vector");
        if name.ends_with(".gguf") && !name.contains("-00002-of-") {
            c.good.push(name);
        }
    }
    c.shards.extend(["e_split-00001-of-00002.gguf", "e_split-00002-of-00002.gguf"].map(String::from));

    let mut bad = |name: &str, bytes: &[u8]| {
        d.write(name, bytes);
        c.bad.push(name.to_string());
    };
    let rich_bytes = rich.build();
    bad("bad_magic.gguf", b"JUNK and more bytes after the magic");
    bad("empty_file.gguf", b"");
    bad("truncated_header.gguf", &rich_bytes[..20]);
    bad("truncated_kv.gguf", &rich_bytes[..300]);
    let (_, rich_layout) = rich.build_with_layout();
    bad("truncated_infos.gguf", &rich_bytes[..rich_layout.info_offsets[20] as usize + 5]);
    bad("truncated_data.gguf", &rich_bytes[..rich_bytes.len() - 1]);
    let big_bytes = big(1).build();
    bad("big_truncated.gguf", &big_bytes[..big_bytes.len() / 2]);
    bad("bad_bool.gguf", &small(9).kv("flag", Val::Raw(7, vec![2])).kv("after", Val::U8(0)).build());
    bad("version1.gguf", &Gguf { version: 1, ..small(4) }.build());
    bad("version9.gguf", &Gguf { version: 9, ..small(4) }.build());
    bad("bad_alignment.gguf", &rich_model(&[0]).kv("general.alignment", Val::U32(48)).build());
    bad("alignment_type.gguf", &rich_model(&[0]).kv("general.alignment", Val::U64(32)).build());
    bad("dup_key.gguf", &small(5).kv("seed", Val::U8(6)).build());
    bad("dup_tensor.gguf", &small(5).tensor(Tensor::filled("a", &[8], 0, 7)).build());
    bad("unknown_value_type.gguf", &small(5).kv("x.weird", Val::Raw(13, vec![])).build());
    let unknown_type = Tensor { name: b"t".to_vec(), dims: vec![4], ggml_type: 99, data: vec![7; 16] };
    bad("unknown_ggml_type.gguf", &small(5).tensor(unknown_type).build());
    bad("be_unconvertible.gguf", &Gguf { big_endian: true, ..rich_model(&[0, 10]) }.build());
    let five_dims = Tensor { dims: vec![2, 1, 1, 1, 1], ..Tensor::filled("t", &[2], 0, 1) };
    bad("too_many_dims.gguf", &small(5).tensor(five_dims).build());
    let bad_block = Tensor { name: b"q".to_vec(), dims: vec![33], ggml_type: 8, data: vec![1; 34] };
    bad("bad_block_dim.gguf", &small(5).tensor(bad_block).build());
    let two = Gguf::new().tensor(Tensor::filled("a", &[8], 0, 1)).tensor(Tensor::filled("b", &[8], 0, 2));
    let (mut bytes, lay) = two.build_with_layout();
    let at = offset_field(lay.info_offsets[1], &two.tensors[1]);
    bytes[at..at + 8].copy_from_slice(&lay.offsets[0].to_le_bytes());
    bad("overlap.gguf", &bytes);
    let mut bytes = small(5).build();
    bytes[8..16].copy_from_slice(&(1u64 << 40).to_le_bytes());
    bad("huge_count.gguf", &bytes);
    std::fs::create_dir(d.path("dir.gguf")).expect("create dir.gguf");
    c.bad.extend(
        [
            "dir.gguf",
            "missing.gguf",
            "vectors.json",
            "split-00002-of-00003.gguf",
            "e_split-00002-of-00002.gguf",
            "gap-00001-of-00002.gguf",
        ]
        .map(String::from),
    );
    c
}

/// A case-name word for a file name: its odd bytes made plain.
fn word(name: &str) -> String {
    name.chars().map(|ch| if ch.is_ascii_alphanumeric() || "._-".contains(ch) { ch } else { '_' }).collect()
}

fn with<'a>(flags: &[&'a str], names: &'a [String]) -> Vec<&'a str> {
    flags.iter().copied().chain(names.iter().map(String::as_str)).collect()
}

// ---------------------------------------------------------------------------
// The cases
// ---------------------------------------------------------------------------

fn per_file_cases(g: &mut Golden, c: &Corpus) {
    for name in &c.good {
        let w = word(name);
        g.run(&format!("file/{w}/label"), &[name]);
        g.run(&format!("file/{w}/json"), &["--json", name]);
        g.run(&format!("file/{w}/skeleton"), &["--skeleton", name]);
        g.run(&format!("file/{w}/no-mmap"), &["--no-mmap", name]);
        g.run(&format!("file/{w}/inspect"), &["inspect", name]);
        g.run(&format!("file/{w}/inspect-json"), &["inspect", "--json", name]);
    }
    for name in &c.bad {
        let w = word(name);
        g.run(&format!("file/{w}/label"), &[name]);
        g.run(&format!("file/{w}/json"), &["--json", name]);
        g.run(&format!("file/{w}/no-mmap"), &["--no-mmap", name]);
        g.run(&format!("file/{w}/inspect"), &["inspect", name]);
    }
    for name in &c.shards {
        let w = word(name);
        g.run(&format!("file/{w}/no-join"), &["--no-join", name]);
        g.run(&format!("file/{w}/no-join-json"), &["--no-join", "--json", name]);
        g.run(&format!("file/{w}/inspect-no-join"), &["inspect", "--no-join", name]);
    }
}

fn many_file_cases(g: &mut Golden, c: &Corpus) {
    // Good and bad interleaved: errors must not reorder or drop the lines after them.
    let mut all = Vec::new();
    for i in 0..c.good.len().max(c.bad.len()) {
        all.extend(c.good.get(i).cloned());
        all.extend(c.bad.get(i).cloned());
    }
    for j in ["1", "2"] {
        g.run(&format!("many/good-j{j}"), &with(&["-j", j], &c.good));
        g.run(&format!("many/all-j{j}"), &with(&["-j", j], &all));
        g.run(&format!("many/all-json-j{j}"), &with(&["--json", "-j", j], &all));
    }
    g.run("many/all-no-mmap", &with(&["--no-mmap", "-j", "2"], &all));
    g.run("many/all-no-join", &with(&["--no-join", "-j", "2"], &all));
    g.run("many/shards-no-join", &with(&["--no-join"], &c.shards));
    let twice = ["rich.gguf", "missing.gguf", "rich.gguf", "bad_magic.gguf", "missing.gguf", "big.gguf", "rich.gguf"];
    g.run("many/repeated-j1", &with(&["-j", "1"], &twice.map(String::from)));
    g.run("many/repeated-j2", &with(&["-j", "2"], &twice.map(String::from)));
    g.run_to_file("skeleton/rich-to-file", &["--skeleton", "rich.gguf"]);
    g.run("skeleton/split-set", &["--skeleton", "split-00001-of-00003.gguf"]);
    g.run("skeleton/no-join-no-mmap", &["--skeleton", "--no-join", "--no-mmap", "split-00002-of-00003.gguf"]);
    g.run("skeleton/bad-magic", &["--skeleton", "bad_magic.gguf"]);
    g.run("skeleton/missing", &["--skeleton", "missing.gguf"]);
    g.run("skeleton/two-files", &["--skeleton", "rich.gguf", "v2.gguf"]);
}

/// Replaces the first hex digit of the line's label by another.
fn tamper(line: &str) -> String {
    let first = if line.starts_with('0') { '1' } else { '0' };
    format!("{first}{}", &line[1..])
}

fn check_cases(g: &mut Golden, c: &Corpus) {
    // The list is the tool's own output, as a user would make it.
    let good_sums = g.run("check/write-sums", &with(&["-j", "2"], &c.good)).stdout.clone();
    assert!(!good_sums.is_empty());
    std::fs::write(g.dir.join("good.sums"), &good_sums).expect("write good.sums");
    let text = String::from_utf8(good_sums.clone()).expect("sums lines are UTF-8 here");
    let lines: Vec<&str> = text.lines().collect();
    let label_of = |name: &str| {
        let line = lines.iter().find(|l| l.ends_with(&format!("  {name}"))).expect("labelled");
        line[..64].to_string()
    };

    for (case, flags) in [
        ("check/good", &[][..]),
        ("check/good-quiet", &["--quiet"]),
        ("check/good-status", &["--status"]),
        ("check/good-strict", &["--strict"]),
        ("check/good-warn", &["--warn"]),
        ("check/good-ignore-missing", &["--ignore-missing"]),
        ("check/good-j1", &["-j", "1"]),
        ("check/good-no-mmap", &["--no-mmap"]),
        ("check/good-no-join", &["--no-join"]),
    ] {
        g.run(case, &[&["-c"][..], flags, &["good.sums"]].concat());
    }
    g.run_stdin("check/good-stdin", &["-c"], &good_sums);
    // All labels match: only --strict turns the misformatted line into a failure.
    let mut junk = good_sums.clone();
    junk.extend_from_slice(b"not a label line\n");
    std::fs::write(g.dir.join("good-junk.sums"), &junk).expect("write good-junk.sums");
    g.run("check/good-junk", &["-c", "good-junk.sums"]);
    g.run("check/good-junk-strict", &["-c", "--strict", "good-junk.sums"]);
    g.run("check/good-junk-warn", &["-c", "--warn", "good-junk.sums"]);
    g.run_stdin("check/good-stdin-dash", &["--check", "-"], &good_sums);

    // One line of each kind --check treats apart: a wrong label, uppercase
    // hex, a CRLF ending, a misformatted line, a comment, a blank line,
    // entries for a missing file, a non-GGUF file, a folder and a set
    // missing a shard, a BSD-style line after GNU-style ones, and no final
    // newline.
    let mut t = String::new();
    for (i, l) in lines.iter().enumerate() {
        match i {
            0 => t.push_str(&tamper(l)),
            2 => {
                t.push_str(&l[..64].to_uppercase());
                t.push_str(&l[64..]);
            }
            _ => t.push_str(l),
        }
        t.push_str(if i == 3 { "\r\n" } else { "\n" });
        if i == 1 {
            t.push_str("this line is not a label\n# a comment\n\n");
        }
    }
    let _ = writeln!(t, "{}  missing.gguf", "0".repeat(64));
    let _ = writeln!(t, "{}  bad_magic.gguf", label_of("rich.gguf"));
    let _ = writeln!(t, "{}  dir.gguf", label_of("rich.gguf"));
    let _ = writeln!(t, "{}  gap-00001-of-00002.gguf", label_of("rich.gguf"));
    let _ = writeln!(t, "{} rich.gguf", label_of("rich.gguf"));
    let _ = write!(t, "{}  v2.gguf", label_of("v2.gguf"));
    std::fs::write(g.dir.join("tampered.sums"), &t).expect("write tampered.sums");
    for (case, flags) in [
        ("check/tampered", &[][..]),
        ("check/tampered-quiet", &["--quiet"]),
        ("check/tampered-status", &["--status"]),
        ("check/tampered-strict", &["--strict"]),
        ("check/tampered-warn", &["--warn"]),
        ("check/tampered-strict-warn", &["--strict", "--warn"]),
        ("check/tampered-ignore-missing", &["--ignore-missing"]),
        ("check/tampered-ignore-missing-quiet", &["--ignore-missing", "--quiet"]),
        ("check/tampered-warn-then-status", &["--warn", "--status"]),
        ("check/tampered-no-mmap-j1", &["--no-mmap", "-j", "1"]),
    ] {
        g.run(case, &[&["-c"][..], flags, &["tampered.sums"]].concat());
    }
    g.run_stdin("check/tampered-stdin", &["-c"], t.as_bytes());
    g.run("check/two-lists", &["-c", "good.sums", "tampered.sums"]);

    // BSD-reversed lines: one blank between label and name.
    let bsd = format!(
        "{} rich.gguf\n{} v2.gguf\n{}  align64.gguf\n",
        label_of("rich.gguf"),
        label_of("v2.gguf"),
        label_of("align64.gguf")
    );
    std::fs::write(g.dir.join("bsd.sums"), bsd).expect("write bsd.sums");
    g.run("check/bsd", &["-c", "bsd.sums"]);
    g.run("check/bsd-strict", &["-c", "--strict", "bsd.sums"]);

    // Labels from vectors.json: written by the spec's authors, not by this tool.
    let v: JsonValue = serde_json::from_slice(&std::fs::read(g.dir.join("vectors.json")).expect("vectors.json"))
        .expect("vectors.json parses");
    let mut vsums = String::new();
    for (name, entry) in v["files"].as_object().expect("files") {
        match entry["label"].as_str() {
            Some(label) => {
                let _ = writeln!(vsums, "{label}  {name}");
            }
            None => {
                let _ = writeln!(vsums, "{}  {name}", "0".repeat(64));
            }
        }
    }
    std::fs::write(g.dir.join("vectors.sums"), vsums).expect("write vectors.sums");
    g.run("check/vectors", &["-c", "vectors.sums"]);

    std::fs::write(g.dir.join("only-missing.sums"), format!("{}  missing.gguf\n", "0".repeat(64)))
        .expect("write only-missing.sums");
    g.run("check/only-missing", &["-c", "only-missing.sums"]);
    g.run("check/only-missing-ignore-missing", &["-c", "--ignore-missing", "only-missing.sums"]);
    std::fs::write(g.dir.join("junk.sums"), "junk\nmore junk\n").expect("write junk.sums");
    g.run("check/no-proper-line", &["-c", "junk.sums"]);
    g.run("check/no-proper-line-warn", &["-c", "--warn", "junk.sums"]);
    g.run("check/list-missing", &["-c", "nope.sums"]);
    g.run("check/list-is-dir", &["-c", "dir.gguf"]);
    g.run("check/list-missing-then-good", &["-c", "nope.sums", "good.sums"]);
    g.run("check/list-is-a-model", &["-c", "rich.gguf"]);
}

fn inspect_diff_cases(g: &mut Golden) {
    g.run("inspect/rich-limit-3", &["inspect", "--limit", "3", "rich.gguf"]);
    g.run("inspect/odd-width-4-items-2", &["inspect", "--width", "4", "--items", "2", "odd.gguf"]);
    g.run("inspect/odd-json-width-4-items-2", &["inspect", "--json", "--width", "4", "--items", "2", "odd.gguf"]);
    g.run("inspect/big-limit-0-j1-no-mmap", &["inspect", "--limit", "0", "-j", "1", "--no-mmap", "big.gguf"]);
    g.run("inspect/rich-json-limit-2", &["inspect", "--json", "--limit", "2", "rich.gguf"]);

    let pairs = [
        ("rich", "rich.gguf", "rich.gguf"),
        ("rich-relayout", "rich.gguf", "rich_relayout.gguf"),
        ("rich-changed", "rich.gguf", "rich_changed.gguf"),
        ("changed-rich", "rich_changed.gguf", "rich.gguf"),
        ("rich-odd", "rich.gguf", "odd.gguf"),
        ("rich-align64", "rich.gguf", "align64.gguf"),
        ("rich-empty", "rich.gguf", "empty_model.gguf"),
        ("empty-kv-only", "empty_model.gguf", "kv_only.gguf"),
        ("be-twin-le-be", "be_twin_le.gguf", "be_twin_be.gguf"),
        ("be-twin-be-relayout", "be_twin_be.gguf", "be_twin_be_relayout.gguf"),
        ("v2-v2-be", "v2.gguf", "v2_be.gguf"),
        ("v2-rich", "v2.gguf", "rich.gguf"),
        ("big-big-changed", "big.gguf", "big_changed.gguf"),
        ("split-merged", "split-00001-of-00003.gguf", "split_merged.gguf"),
        ("split-whole", "split-00001-of-00003.gguf", "split_whole.gguf"),
        ("vector-b-c", "b_all_types.gguf", "c_relayout.gguf"),
        ("vector-b-d", "b_all_types.gguf", "d_big_endian.gguf"),
        ("vector-e-split-merged", "e_split-00001-of-00002.gguf", "e_merged.gguf"),
        ("vector-a-b", "a_empty.gguf", "b_all_types.gguf"),
        ("rich-bad-magic", "rich.gguf", "bad_magic.gguf"),
        ("truncated-rich", "truncated_data.gguf", "rich.gguf"),
        ("rich-missing", "rich.gguf", "missing.gguf"),
        ("rich-later-shard", "rich.gguf", "split-00002-of-00003.gguf"),
        ("rich-gap-set", "rich.gguf", "gap-00001-of-00002.gguf"),
    ];
    for (case, a, b) in pairs {
        g.run(&format!("diff/{case}"), &["diff", a, b]);
        g.run(&format!("diff/{case}-json"), &["diff", "--json", a, b]);
    }
    g.run(
        "diff/rich-changed-width-4-items-1",
        &["diff", "--width", "4", "--items", "1", "rich.gguf", "rich_changed.gguf"],
    );
    g.run("diff/big-big-changed-no-mmap-j1", &["diff", "--no-mmap", "-j", "1", "big.gguf", "big_changed.gguf"]);
    g.run("diff/split-merged-no-join", &["diff", "--no-join", "split-00001-of-00003.gguf", "split_merged.gguf"]);
    g.run(
        "diff/later-shards-no-join",
        &["diff", "--no-join", "split-00002-of-00003.gguf", "split-00003-of-00003.gguf"],
    );
}

fn usage_cases(g: &mut Golden) {
    let cases: &[(&str, &[&str])] = &[
        ("usage/no-args", &[]),
        ("usage/help", &["--help"]),
        ("usage/help-short", &["-h"]),
        ("usage/version", &["--version"]),
        ("usage/inspect-help", &["inspect", "--help"]),
        ("usage/diff-help", &["diff", "--help"]),
        ("usage/inspect-no-file", &["inspect"]),
        ("usage/diff-one-file", &["diff", "rich.gguf"]),
        ("usage/json-check", &["--json", "--check", "good.sums"]),
        ("usage/skeleton-check", &["--skeleton", "-c", "good.sums"]),
        ("usage/zero-threads", &["-j", "0", "rich.gguf"]),
        ("usage/bad-threads", &["-j", "x", "rich.gguf"]),
        ("usage/quiet-without-check", &["--quiet", "rich.gguf"]),
        ("usage/status-without-check", &["--status", "rich.gguf"]),
        ("usage/unknown-flag", &["--frobnicate", "rich.gguf"]),
        ("usage/subcommand-after-flag", &["--json", "inspect", "rich.gguf"]),
        ("usage/inspect-bad-limit", &["inspect", "--limit", "-1", "rich.gguf"]),
    ];
    for (case, args) in cases {
        g.run(case, args);
    }
}

fn smollm2_cases(g: &mut Golden, model: &Path) {
    // A link with the real name: outputs name the file as a user would see it.
    std::os::unix::fs::symlink(model, g.dir.join(SMOLLM2_FILE)).expect("link SmolLM2 into the corpus");
    g.run("smollm2/label", &[SMOLLM2_FILE]);
    g.run("smollm2/json", &["--json", SMOLLM2_FILE]);
    g.run("smollm2/skeleton", &["--skeleton", SMOLLM2_FILE]);
    g.run("smollm2/inspect", &["inspect", SMOLLM2_FILE]);
}

// ---------------------------------------------------------------------------
// SmolLM2, found as tests/interop/interop.rs finds it
// ---------------------------------------------------------------------------

/// The model, or `None` after a `SKIPPED:` line; under CI, a panic
/// (`common::py::prerequisites`, the interop tests' own lookup).
fn smollm2() -> Option<PathBuf> {
    common::py::prerequisites("the SmolLM2 golden cases (tests/cli/golden.rs)").map(|py| py.path("model").to_path_buf())
}

// ---------------------------------------------------------------------------
// The manifest
// ---------------------------------------------------------------------------

const MANIFEST_HEADER: &str = "\
# Golden outputs of gguf-digest: each case's exit status, stdout and stderr (format: tests/cli/golden.rs).
# Checked by tests/cli/golden.rs; re-record with `GOLDEN_RECORD=1 cargo test --test cli golden::`.
";

const CASE: &str = "=== ";
const SAME_AS: &str = "same as ";
const EXIT: &str = "exit ";
const STDOUT: &str = "--- stdout";
const STDERR: &str = "--- stderr";
const NO_NEWLINE: &str = "%no newline at end";

/// Whether a line can be written as printed: text a terminal shows as it
/// is, and nothing an editor would strip.
fn verbatim(line: &[u8]) -> Option<&str> {
    let t = std::str::from_utf8(line).ok()?;
    let clean = !t.chars().any(|c| c.is_control() && c != '\t') && !t.ends_with([' ', '\t']);
    clean.then_some(t)
}

/// A stream as manifest lines (see the module's comment).
fn encode_stream(b: &[u8], out: &mut String) {
    if b.is_empty() {
        return;
    }
    let ends_with_newline = b.ends_with(b"\n");
    let body = if ends_with_newline { &b[..b.len() - 1] } else { b };
    for line in body.split(|&c| c == b'\n') {
        match verbatim(line) {
            Some("") => out.push_str("|\n"),
            Some(t) => {
                let _ = writeln!(out, "| {t}");
            }
            None => {
                out.push_str("~ ");
                let mut chunks = line.utf8_chunks().peekable();
                while let Some(chunk) = chunks.next() {
                    let mut chars = chunk.valid().chars().peekable();
                    while let Some(c) = chars.next() {
                        let last = chars.peek().is_none() && chunk.invalid().is_empty() && chunks.peek().is_none();
                        if c == '\\' {
                            out.push_str("\\\\");
                        } else if (c.is_control() && c != '\t') || (last && (c == ' ' || c == '\t')) {
                            let mut buf = [0; 4];
                            for byte in c.encode_utf8(&mut buf).bytes() {
                                let _ = write!(out, "\\x{byte:02x}");
                            }
                        } else {
                            out.push(c);
                        }
                    }
                    for byte in chunk.invalid() {
                        let _ = write!(out, "\\x{byte:02x}");
                    }
                }
                out.push('\n');
            }
        }
    }
    if !ends_with_newline {
        out.push_str(NO_NEWLINE);
        out.push('\n');
    }
}

/// The bytes of an escaped (`~ `) line.
fn unescape(line: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut rest = line.as_bytes();
    while let Some((&c, tail)) = rest.split_first() {
        rest = tail;
        if c != b'\\' {
            out.push(c);
            continue;
        }
        match rest {
            [b'\\', tail @ ..] => {
                out.push(b'\\');
                rest = tail;
            }
            [b'x', h, l, tail @ ..] => {
                let hex = std::str::from_utf8(&[*h, *l]).ok().and_then(|d| u8::from_str_radix(d, 16).ok());
                out.push(hex.ok_or_else(|| format!("bad escape in {line:?}"))?);
                rest = tail;
            }
            _ => return Err(format!("bad escape in {line:?}")),
        }
    }
    Ok(out)
}

/// The manifest's text for these runs, identical runs written once.
fn encode_manifest(runs: &BTreeMap<String, Run>) -> String {
    let mut text = MANIFEST_HEADER.to_string();
    let mut first_of: Vec<(&str, &Run)> = Vec::new();
    for (case, run) in runs {
        let smollm2 = case.starts_with(SMOLLM2_PREFIX);
        let _ = writeln!(text, "\n{CASE}{case}");
        let earlier = first_of.iter().find(|(c, r)| c.starts_with(SMOLLM2_PREFIX) == smollm2 && *r == run);
        if let Some((c, _)) = earlier {
            let _ = writeln!(text, "{SAME_AS}{c}");
            continue;
        }
        first_of.push((case, run));
        let _ = writeln!(text, "{EXIT}{}", run.code);
        let _ = writeln!(text, "{STDOUT}");
        encode_stream(&run.stdout, &mut text);
        let _ = writeln!(text, "{STDERR}");
        encode_stream(&run.stderr, &mut text);
    }
    text
}

/// Each case's run, from the manifest's text.
fn decode_manifest(text: &str) -> Result<BTreeMap<String, Run>, String> {
    /// What the next line may be.
    enum At {
        /// Comments, before the first case.
        Header,
        /// `exit`, `same as` or `--- stdout`.
        Case,
        /// Stream lines, `--- stderr` (once) or `%no newline at end`.
        Stream { stderr: bool },
        /// Nothing but the next case: this one was `same as` another.
        Done,
    }
    fn finish(runs: &mut BTreeMap<String, Run>, current: Option<(String, Run)>) -> Result<(), String> {
        if let Some((case, run)) = current {
            if runs.insert(case.clone(), run).is_some() {
                return Err(format!("case {case} is twice in the manifest"));
            }
        }
        Ok(())
    }
    let mut runs = BTreeMap::new();
    let mut current: Option<(String, Run)> = None;
    let mut at = At::Header;
    for (i, line) in text.split('\n').enumerate() {
        let bad = |why: &str| format!("{}:{}: {why}: {line:?}", manifest_path().display(), i + 1);
        if let Some(case) = line.strip_prefix(CASE) {
            finish(&mut runs, current.take())?;
            current = Some((case.to_string(), Run { code: 0, stdout: Vec::new(), stderr: Vec::new() }));
            at = At::Case;
            continue;
        }
        if line.is_empty() || (matches!(at, At::Header) && line.starts_with('#')) {
            continue;
        }
        let Some((_, run)) = current.as_mut() else { return Err(bad("a line before the first case")) };
        match at {
            At::Header | At::Done => return Err(bad("a line outside a case")),
            At::Case => {
                if let Some(other) = line.strip_prefix(SAME_AS) {
                    *run = runs.get(other).ok_or_else(|| bad("same as a case not written before it"))?.clone();
                    at = At::Done;
                } else if let Some(code) = line.strip_prefix(EXIT) {
                    run.code = code.parse().map_err(|_| bad("not an exit status"))?;
                } else if line == STDOUT {
                    at = At::Stream { stderr: false };
                } else {
                    return Err(bad("expected `exit`, `same as` or `--- stdout`"));
                }
            }
            At::Stream { stderr } => {
                let stream = if stderr { &mut run.stderr } else { &mut run.stdout };
                if line == STDERR && !stderr {
                    at = At::Stream { stderr: true };
                } else if line == NO_NEWLINE && stream.ends_with(b"\n") {
                    stream.pop();
                } else if line == "|" {
                    stream.push(b'\n');
                } else if let Some(t) = line.strip_prefix("| ") {
                    stream.extend_from_slice(t.as_bytes());
                    stream.push(b'\n');
                } else if let Some(t) = line.strip_prefix("~ ") {
                    stream.extend_from_slice(&unescape(t).map_err(|e| bad(&e))?);
                    stream.push(b'\n');
                } else {
                    return Err(bad("not a stream line"));
                }
            }
        }
    }
    finish(&mut runs, current)?;
    Ok(runs)
}

fn read_manifest() -> Option<BTreeMap<String, Run>> {
    let text = std::fs::read_to_string(manifest_path()).ok()?;
    Some(decode_manifest(&text).unwrap_or_else(|e| panic!("{e}")))
}

/// Writes the manifest `runs` make, after checking that it reads back as
/// those very runs.
fn write_manifest(path: &Path, runs: &BTreeMap<String, Run>) {
    let text = encode_manifest(runs);
    let back = decode_manifest(&text).unwrap_or_else(|e| panic!("the manifest written does not read back: {e}"));
    assert!(back == *runs, "the manifest written does not read back as the runs it was made from");
    std::fs::create_dir_all(path.parent().expect("a folder")).expect("create the manifest's folder");
    std::fs::write(path, text).expect("write the manifest");
}

/// One case's block with its streams written out (no `same as`).
fn block(run: &Run) -> Vec<String> {
    let mut text = format!("{EXIT}{}\n{STDOUT}\n", run.code);
    encode_stream(&run.stdout, &mut text);
    let _ = writeln!(text, "{STDERR}");
    encode_stream(&run.stderr, &mut text);
    text.lines().map(str::to_string).collect()
}

/// The lines of a case that differ, diff-style: the recorded block against
/// the one now, from a few lines before the first difference to the last.
fn diff(case: &str, was: &Run, now: &Run) -> String {
    let (a, b) = (block(was), block(now));
    let head = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let tail = a[head..].iter().rev().zip(b[head..].iter().rev()).take_while(|(x, y)| x == y).count();
    let from = head.saturating_sub(CONTEXT_LINES);
    let mut out = format!("--- {case} (recorded)\n+++ {case} (now)\n@@ line {} of the case @@\n", from + 1);
    for line in &a[from..head] {
        let _ = writeln!(out, " {line}");
    }
    for (sign, side) in [('-', &a[head..a.len() - tail]), ('+', &b[head..b.len() - tail])] {
        for line in side.iter().take(SHOWN_LINES) {
            let _ = writeln!(out, "{sign}{line}");
        }
        if side.len() > SHOWN_LINES {
            let _ = writeln!(out, "{sign}… ({} more lines)", side.len() - SHOWN_LINES);
        }
    }
    out
}

// ---------------------------------------------------------------------------
// The test
// ---------------------------------------------------------------------------

#[test]
fn cli_outputs_match_the_golden_manifest() {
    let started = Instant::now();
    let model = smollm2();
    let d = Dir::new();
    let corpus = build_corpus(&d);
    let mut g = Golden { dir: d.dir.path().to_path_buf(), runs: BTreeMap::new(), lease_notes: 0 };
    per_file_cases(&mut g, &corpus);
    many_file_cases(&mut g, &corpus);
    check_cases(&mut g, &corpus);
    inspect_diff_cases(&mut g);
    usage_cases(&mut g);
    let small_done = started.elapsed();
    if let Some(m) = &model {
        smollm2_cases(&mut g, m);
    }
    // Under `portable`, the notes were there to be taken out (and only they
    // differ from Linux's outputs, checked below).
    assert_eq!(g.lease_notes > 0, cfg!(feature = "portable"), "{} read_lease_unavailable notes", g.lease_notes);

    let old = read_manifest();
    // What recording would write: this run's cases, and where this machine
    // cannot run SmolLM2, the SmolLM2 cases recorded where it could.
    let mut recorded = g.runs.clone();
    let mut kept = 0;
    if model.is_none() {
        for (case, run) in old.iter().flatten().filter(|(c, _)| c.starts_with(SMOLLM2_PREFIX)) {
            recorded.insert(case.clone(), run.clone());
            kept += 1;
        }
    }
    let now_path = dump_dir().join("outputs.txt");
    let _ = std::fs::remove_dir_all(dump_dir());
    write_manifest(&now_path, &recorded);
    let _ = writeln!(
        std::io::stderr(),
        "golden: {} cases in {:.1}s ({:.1}s without SmolLM2); outputs in {}",
        g.runs.len(),
        started.elapsed().as_secs_f64(),
        small_done.as_secs_f64(),
        now_path.display()
    );

    if std::env::var_os("GOLDEN_RECORD").is_some_and(|v| v == "1") {
        write_manifest(&manifest_path(), &recorded);
        let _ = writeln!(
            std::io::stderr(),
            "GOLDEN_RECORD=1: recorded {} cases ({kept} SmolLM2 cases kept from the old manifest) in {}",
            recorded.len(),
            manifest_path().display()
        );
        return;
    }

    let Some(mut expected) = old else {
        panic!(
            "no manifest at {}; record one with GOLDEN_RECORD=1 cargo test --test cli golden::",
            manifest_path().display()
        );
    };
    if model.is_none() {
        expected.retain(|c, _| !c.starts_with(SMOLLM2_PREFIX));
    }
    let actual = &g.runs;
    let mut changed = Vec::new();
    let mut new = Vec::new();
    for (case, run) in actual {
        match expected.get(case) {
            Some(r) if r == run => {}
            Some(_) => changed.push(case.as_str()),
            None => new.push(case.as_str()),
        }
    }
    let gone: Vec<&str> = expected.keys().filter(|c| !actual.contains_key(*c)).map(String::as_str).collect();
    if changed.is_empty() && new.is_empty() && gone.is_empty() {
        return;
    }

    let mut msg = format!(
        "gguf-digest's output differs from {}:\n  {} case(s) changed: {}\n  {} case(s) not in the manifest: {}\n  \
         {} case(s) in the manifest but not run: {}\n",
        manifest_path().display(),
        changed.len(),
        changed.join(" "),
        new.len(),
        new.join(" "),
        gone.len(),
        gone.join(" "),
    );
    let _ = writeln!(
        msg,
        "The whole manifest as this run would record it is {}: diff -u {} {}. If the change is intended: \
         GOLDEN_RECORD=1 cargo test --test cli golden::.",
        now_path.display(),
        manifest_path().display(),
        now_path.display()
    );
    let empty = Run { code: 0, stdout: Vec::new(), stderr: Vec::new() };
    let shown: Vec<&str> = changed.iter().chain(&new).copied().collect();
    for case in shown.iter().take(SHOWN_CASES) {
        let was = expected.get(*case).unwrap_or(&empty);
        let what = if new.contains(case) { " (new: compared with an empty case)" } else { "" };
        let _ = write!(msg, "\n===== {case}{what}\n{}", diff(case, was, &actual[*case]));
    }
    if shown.len() > SHOWN_CASES {
        let _ = writeln!(msg, "\n({} more cases not shown; see {})", shown.len() - SHOWN_CASES, now_path.display());
    }
    panic!("{msg}");
}
