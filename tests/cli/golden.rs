//! Golden outputs: proof that a change meant to leave the command line alone
//! (a refactoring, a move of modules) leaves every byte `gguf-digest` prints,
//! and every exit status, exactly as they were.
//!
//! The corpus is made at run time (once per test process, in
//! `$CARGO_TARGET_TMPDIR/golden-corpus`), never committed: the spec vectors
//! of `tests/data/vectors`, models from the test writer in `tests/common`
//! (every type and value type, relayouts, big-endian, v2, a shard set, empty
//! models, odd names and strings, a file past the 64 KiB read-or-map
//! threshold), malformed files of every kind, the sums lists `--check` reads
//! (made from the tool's own output, as a user would make them), and the
//! real SmolLM2 model when the interop venv holds it. The real binary runs
//! over it in every mode whose output is a contract: sums lines (one file,
//! many, `-j1` and `-j2`), `--json`, `--skeleton`, `--no-join`, `--no-mmap`,
//! `--check` with each of its flags, `inspect`, `diff`, errors and usage
//! messages. Every run is in the corpus directory with relative paths, so no
//! output names it.
//!
//! Every case is a test of its own, `golden::<group>::<case>` (one file's
//! cases `golden::file::<file>::<mode>`): `cargo test --test cli
//! golden::check::tampered_quiet` runs one, `golden::file::rich_gguf::` one
//! file's. Its expected output is `tests/golden/<case>.txt` (`check/tampered-quiet.txt`;
//! the test's path is the file's with `-` and `.` written `_`), compared by
//! [snapbox](https://docs.rs/snapbox) with no filter: the exit status and both
//! streams, byte for byte. A failure shows the diff. After a change meant to
//! change output, `SNAPSHOTS=overwrite cargo test --test cli golden::`
//! rewrites the files that differ (or are missing); review `git diff
//! tests/golden`.
//!
//! A case's file is text, so that a change shows as a diff:
//!
//! ```text
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
//! does not end with one. The encoding is one to one, so equal text is equal
//! bytes.
//!
//! SmolLM2 is found as `tests/interop/gguf.rs` finds it (the venv of
//! `scripts/setup-python.sh`, at `$GGUF_DIGEST_VENV` or
//! `~/.cache/gguf-digest/venv`). Without it the `smollm2::` tests print one
//! `SKIPPED:` line and pass, except under `CI=true`, where they fail instead.
//!
//! Under `--features portable` every `--json` entry of a file ends with a
//! `read_lease_unavailable` note (that path takes no lease); each case takes
//! it out after checking it says only that (`lease_notes_removed`), and the
//! rest must be Linux's bytes.
use crate::common;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value as JsonValue;

/// Generous, because one case hashes the 98 MB SmolLM2 in a debug build;
/// only a hung process gets anywhere near it.
const TIMEOUT: Duration = Duration::from_secs(120);

const SMOLLM2_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";

/// Where the expected outputs are.
fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
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
struct Run {
    code: i32,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

/// What one case runs: arguments, what its stdin holds (nothing: `/dev/null`),
/// and whether its stdout is a file rather than a pipe (both are "not a
/// terminal", as `--skeleton` requires).
struct Cmd {
    args: Vec<String>,
    stdin: Option<Vec<u8>>,
    to_file: bool,
}

impl Cmd {
    fn new<S: AsRef<str>>(args: &[S]) -> Cmd {
        Cmd { args: args.iter().map(|a| a.as_ref().to_string()).collect(), stdin: None, to_file: false }
    }
}

/// A case with these arguments alone.
fn args(a: &'static [&'static str]) -> impl FnOnce(&Corpus) -> Cmd {
    move |_| Cmd::new(a)
}

/// A case with these arguments, its stdin the corpus file `file`.
fn fed(a: &'static [&'static str], file: &'static str) -> impl FnOnce(&Corpus) -> Cmd {
    move |c| Cmd { stdin: Some(std::fs::read(c.dir.join(file)).expect("a sums list of the corpus")), ..Cmd::new(a) }
}

/// A case whose stdout is a file.
fn to_file(a: &'static [&'static str]) -> impl FnOnce(&Corpus) -> Cmd {
    move |_| Cmd { to_file: true, ..Cmd::new(a) }
}

/// `flags`, then the corpus files `names`.
fn with<S: AsRef<str>>(flags: &[&str], names: &[S]) -> Cmd {
    Cmd::new(&flags.iter().copied().chain(names.iter().map(AsRef::as_ref)).collect::<Vec<&str>>())
}

/// Runs `cmd` in `dir` as a user's shell would, whatever the host's settings.
fn exec(dir: &Path, what: &str, cmd: &Cmd) -> Run {
    let mut c = Command::new(gguf_digest_bin());
    c.args(&cmd.args).current_dir(dir);
    // The same bytes whatever the host: clap's messages in the C locale,
    // no colour, help wrapped at a fixed width (clap reads COLUMNS), and
    // the default thread count not taken from the developer's shell.
    c.env("LC_ALL", "C")
        .env("NO_COLOR", "1")
        .env("COLUMNS", "100")
        .env_remove("CLICOLOR")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("RAYON_NUM_THREADS");
    c.stdin(if cmd.stdin.is_some() { Stdio::piped() } else { Stdio::null() });
    // Outside the corpus, which other cases read at the same time.
    let out_file = cmd.to_file.then(|| tempfile::NamedTempFile::new().expect("a file for stdout"));
    match &out_file {
        Some(f) => c.stdout(f.reopen().expect("reopen the stdout file")),
        None => c.stdout(Stdio::piped()),
    };
    c.stderr(Stdio::piped());
    let mut child = c.spawn().expect("spawn gguf-digest");
    // Fed and drained from threads: a child that writes before it has
    // read all its input must not deadlock against this process.
    let feeder = match (child.stdin.take(), &cmd.stdin) {
        (Some(mut pipe), Some(b)) => {
            let b = b.clone();
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
            panic!("{what} hung and was killed after {TIMEOUT:?}: {c:?}");
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    if let Some(f) = feeder {
        f.join().expect("stdin feeder");
    }
    let stdout = match (out_t, &out_file) {
        (Some(t), _) => t.join().expect("stdout"),
        (None, Some(f)) => std::fs::read(f.path()).expect("read the stdout file"),
        (None, None) => unreachable!("stdout is a pipe or a file"),
    };
    let stderr = err_t.expect("stderr is piped").join().expect("stderr");
    let code = status.code().unwrap_or_else(|| panic!("{what} was killed by a signal: {status}"));
    Run { code, stdout, stderr }
}

/// Runs a case and compares what it did with `tests/golden/<case>.txt`.
/// `test` is the test's path under `golden::`, which must be the case's
/// name with `/` written `::` and `-` and `.` written `_`, so that a
/// failing file names its test and the reverse.
#[track_caller]
fn check(case: &str, test: &str, cmd: impl FnOnce(&Corpus) -> Cmd) {
    let plain: String = case.chars().map(|ch| if ch == '-' || ch == '.' { '_' } else { ch }).collect();
    assert_eq!(plain.replace('/', "::"), test, "case {case} is the test golden::{test}");
    let c = corpus();
    let mut run = exec(&c.dir, case, &cmd(c));
    if cfg!(feature = "portable") {
        run.stdout = lease_notes_removed(&run.stdout).0;
    }
    let expected = golden_dir().join(format!("{case}.txt"));
    // `raw`: no wildcard, path or redaction filter, so only equal bytes pass.
    snapbox::Assert::new()
        .action_env(snapbox::assert::DEFAULT_ACTION_ENV)
        .eq(snapbox::Data::text(block(&run)), snapbox::Data::read_from(&expected, None).raw());
}

/// The test's path under `golden::`, from `module_path!()` and its name.
fn test_path(module: &str, name: &str) -> String {
    let module = module.split_once("::golden").map_or("", |(_, m)| m.trim_start_matches("::"));
    if module.is_empty() { name.to_string() } else { format!("{module}::{name}") }
}

// ---------------------------------------------------------------------------
// The corpus
// ---------------------------------------------------------------------------

/// The corpus's folder and its file names, by what the tool should make of them.
#[derive(Default)]
struct Corpus {
    dir: PathBuf,
    /// Files that label (first shards stand for their set).
    good: Vec<String>,
    /// Files, missing files and folders the tool must refuse.
    bad: Vec<String>,
    /// Shards of sets, labelled apart with `--no-join`.
    shards: Vec<String>,
}

/// The corpus, made by the first case that needs it. In one known place, so
/// that a run leaves one copy behind, not one per run.
fn corpus() -> &'static Corpus {
    static CORPUS: OnceLock<Corpus> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("golden-corpus");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create the corpus folder");
        let mut c = build_corpus(&Place(dir.clone()));
        c.dir = dir;
        write_sums(&c);
        c
    })
}

/// A folder to write the corpus in.
struct Place(PathBuf);

impl Place {
    fn write(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let p = self.path(name);
        std::fs::write(&p, bytes).expect("write a corpus file");
        p
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

/// Writes a shard set as `<prefix>-NNNNN-of-MMMMM.gguf` files, returning their paths.
fn write_set(d: &Place, prefix: &str, shards: &[Gguf]) -> Vec<PathBuf> {
    let n = shards.len();
    shards
        .iter()
        .enumerate()
        .map(|(i, g)| d.write(&format!("{prefix}-{:05}-of-{n:05}.gguf", i + 1), &g.build()))
        .collect()
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
fn build_corpus(d: &Place) -> Corpus {
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
/// Replaces the first hex digit of the line's label by another.
fn tamper(line: &str) -> String {
    let first = if line.starts_with('0') { '1' } else { '0' };
    format!("{first}{}", &line[1..])
}

/// The sums lists `--check` reads. The first is the tool's own output for
/// every good file (as a user would make it, and as `check::write_sums`
/// shows it); the others are made from it.
fn write_sums(c: &Corpus) {
    let write = |name: &str, bytes: &[u8]| std::fs::write(c.dir.join(name), bytes).expect("write a sums list");
    let run = exec(&c.dir, "the good files' sums", &with(&["-j", "2"], &c.good));
    assert_eq!(run.code, 0, "{}", String::from_utf8_lossy(&run.stderr));
    let good_sums = run.stdout;
    assert!(!good_sums.is_empty());
    write("good.sums", &good_sums);
    let text = String::from_utf8(good_sums.clone()).expect("sums lines are UTF-8 here");
    let lines: Vec<&str> = text.lines().collect();
    let label_of = |name: &str| {
        let line = lines.iter().find(|l| l.ends_with(&format!("  {name}"))).expect("labelled");
        line[..64].to_string()
    };

    // All labels match: only --strict turns the misformatted line into a failure.
    let mut junk = good_sums.clone();
    junk.extend_from_slice(b"not a label line\n");
    write("good-junk.sums", &junk);

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
    let zeros = "0".repeat(64);
    let rich = label_of("rich.gguf");
    t.push_str(&format!("{zeros}  missing.gguf\n{rich}  bad_magic.gguf\n{rich}  dir.gguf\n"));
    t.push_str(&format!("{rich}  gap-00001-of-00002.gguf\n{rich} rich.gguf\n{}  v2.gguf", label_of("v2.gguf")));
    write("tampered.sums", t.as_bytes());

    // BSD-reversed lines: one blank between label and name.
    let bsd =
        format!("{rich} rich.gguf\n{} v2.gguf\n{}  align64.gguf\n", label_of("v2.gguf"), label_of("align64.gguf"));
    write("bsd.sums", bsd.as_bytes());

    // Labels from vectors.json: written by the spec's authors, not by this tool.
    let v: JsonValue = serde_json::from_slice(&std::fs::read(c.dir.join("vectors.json")).expect("vectors.json"))
        .expect("vectors.json parses");
    let mut vsums = String::new();
    for (name, entry) in v["files"].as_object().expect("files") {
        vsums.push_str(&format!("{}  {name}\n", entry["label"].as_str().unwrap_or(&zeros)));
    }
    write("vectors.sums", vsums.as_bytes());

    write("only-missing.sums", format!("{zeros}  missing.gguf\n").as_bytes());
    write("junk.sums", b"junk\nmore junk\n");
}

/// A case-name word for a file name: its odd bytes made plain.
fn word(name: &str) -> String {
    name.chars().map(|ch| if ch.is_ascii_alphanumeric() || "._-".contains(ch) { ch } else { '_' }).collect()
}

// ---------------------------------------------------------------------------
// A case's text
// ---------------------------------------------------------------------------

const NO_NEWLINE: &str = "%no newline at end";

/// Whether a line can be written as printed: text a terminal shows as it
/// is, and nothing an editor would strip.
fn verbatim(line: &[u8]) -> Option<&str> {
    let t = std::str::from_utf8(line).ok()?;
    let clean = !t.chars().any(|c| c.is_control() && c != '\t') && !t.ends_with([' ', '\t']);
    clean.then_some(t)
}

/// A stream as lines of a case's text (see the module's comment).
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
                out.push_str("| ");
                out.push_str(t);
                out.push('\n');
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
                                out.push_str(&format!("\\x{byte:02x}"));
                            }
                        } else {
                            out.push(c);
                        }
                    }
                    for byte in chunk.invalid() {
                        out.push_str(&format!("\\x{byte:02x}"));
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

/// A case's text: its exit status and both streams.
fn block(run: &Run) -> String {
    let mut text = format!("exit {}\n--- stdout\n", run.code);
    encode_stream(&run.stdout, &mut text);
    text.push_str("--- stderr\n");
    encode_stream(&run.stderr, &mut text);
    text
}

// ---------------------------------------------------------------------------
// The cases: one test each
// ---------------------------------------------------------------------------

/// One test per case, `test: "group/case" => what it runs;`, and the
/// group's list of cases.
macro_rules! golden {
    ($($test:ident: $case:literal => $cmd:expr;)*) => {
        $(
            #[test]
            fn $test() {
                super::check($case, &super::test_path(module_path!(), stringify!($test)), $cmd);
            }
        )*
        /// This group's cases.
        pub(super) const CASES: &[&str] = &[$($case),*];
    };
}

/// A mode: the test's name, the case's (`file/<file>/<mode>`) and the
/// flags before the file's name.
type Mode = (&'static str, &'static str, &'static [&'static str]);

/// What each kind of corpus file is run with.
const MODES: &[(&str, &[Mode])] = &[
    (
        "good",
        &[
            ("label", "label", &[]),
            ("json", "json", &["--json"]),
            ("skeleton", "skeleton", &["--skeleton"]),
            ("no_mmap", "no-mmap", &["--no-mmap"]),
            ("inspect", "inspect", &["inspect"]),
            ("inspect_json", "inspect-json", &["inspect", "--json"]),
        ],
    ),
    (
        "bad",
        &[
            ("label", "label", &[]),
            ("json", "json", &["--json"]),
            ("no_mmap", "no-mmap", &["--no-mmap"]),
            ("inspect", "inspect", &["inspect"]),
        ],
    ),
    (
        "shard",
        &[
            ("no_join", "no-join", &["--no-join"]),
            ("no_join_json", "no-join-json", &["--no-join", "--json"]),
            ("inspect_no_join", "inspect-no-join", &["inspect", "--no-join"]),
        ],
    ),
];

/// The modes of a kind of corpus file.
fn modes(kind: &str) -> &'static [Mode] {
    MODES.iter().find(|(k, _)| *k == kind).unwrap_or_else(|| panic!("no kind {kind}")).1
}

/// One file's case in one mode: `word` is the file's name in case names, `name` its real one.
#[track_caller]
fn file_case(kind: &str, word: &str, name: &'static str, mode: &str, test: &str) {
    let (_, case, flags) =
        modes(kind).iter().find(|(m, ..)| *m == mode).unwrap_or_else(|| panic!("no {kind} mode {mode}"));
    check(&format!("file/{word}/{case}"), test, |_| with(flags, &[name]));
}

/// A test per mode of the kind: the tests of `golden::file::<file>::`.
macro_rules! kind {
    ($kind:ident, $word:literal, $name:expr; $($mode:ident)+) => {
        $(
            #[test]
            fn $mode() {
                super::super::file_case(
                    stringify!($kind),
                    $word,
                    $name,
                    stringify!($mode),
                    &super::super::test_path(module_path!(), stringify!($mode)),
                );
            }
        )+
    };
}

macro_rules! good {
    ($word:literal, $name:expr) => {
        kind!(good, $word, $name; label json skeleton no_mmap inspect inspect_json);
    };
}

macro_rules! bad {
    ($word:literal, $name:expr) => {
        kind!(bad, $word, $name; label json no_mmap inspect);
    };
}

macro_rules! shard {
    ($word:literal, $name:expr) => {
        kind!(shard, $word, $name; no_join no_join_json inspect_no_join);
    };
}

/// The file itself, or the name it stands for when that has odd bytes.
macro_rules! name {
    ($word:literal) => {
        $word
    };
    ($word:literal, $name:literal) => {
        $name
    };
}

/// A module of tests per corpus file, `module "word" [= "real name"]: kinds;`,
/// and the list of files with their kinds.
macro_rules! files {
    ($($m:ident $word:literal $(= $name:literal)?: $($kind:ident)+;)*) => {
        $(
            pub mod $m {
                /// The file's real name.
                const NAME: &str = name!($word $(, $name)?);
                $( $kind!($word, NAME); )+
            }
        )*
        /// Each file's word and kinds.
        pub(super) const FILES: &[(&str, &[&str])] = &[$(($word, &[$(stringify!($kind)),+])),*];
    };
}

/// Every file, one mode at a time: every file the tool labels, every file
/// it refuses, every shard apart.
pub mod file {
    files! {
        a_empty_gguf "a_empty.gguf": good;
        align64_gguf "align64.gguf": good;
        alignment_type_gguf "alignment_type.gguf": bad;
        b_all_types_gguf "b_all_types.gguf": good;
        back_slash_gguf "back_slash.gguf" = "back\\slash.gguf": good;
        bad_alignment_gguf "bad_alignment.gguf": bad;
        bad_block_dim_gguf "bad_block_dim.gguf": bad;
        bad_bool_gguf "bad_bool.gguf": bad;
        bad_magic_gguf "bad_magic.gguf": bad;
        be_twin_be_gguf "be_twin_be.gguf": good;
        be_twin_be_relayout_gguf "be_twin_be_relayout.gguf": good;
        be_twin_le_gguf "be_twin_le.gguf": good;
        be_unconvertible_gguf "be_unconvertible.gguf": bad;
        big_gguf "big.gguf": good;
        big_changed_gguf "big_changed.gguf": good;
        big_truncated_gguf "big_truncated.gguf": bad;
        c_relayout_gguf "c_relayout.gguf": good;
        d_big_endian_gguf "d_big_endian.gguf": good;
        dir_gguf "dir.gguf": bad;
        dup_key_gguf "dup_key.gguf": bad;
        dup_tensor_gguf "dup_tensor.gguf": bad;
        e_merged_gguf "e_merged.gguf": good;
        e_split_00001_of_00002_gguf "e_split-00001-of-00002.gguf": good shard;
        e_split_00002_of_00002_gguf "e_split-00002-of-00002.gguf": bad shard;
        empty_file_gguf "empty_file.gguf": bad;
        empty_model_gguf "empty_model.gguf": good;
        gap_00001_of_00002_gguf "gap-00001-of-00002.gguf": bad;
        huge_count_gguf "huge_count.gguf": bad;
        kv_only_gguf "kv_only.gguf": good;
        missing_gguf "missing.gguf": bad;
        odd_gguf "odd.gguf": good;
        odd_name_gguf "odd_name.gguf" = "odd\nname.gguf": good;
        overlap_gguf "overlap.gguf": bad;
        rich_gguf "rich.gguf": good;
        rich_changed_gguf "rich_changed.gguf": good;
        rich_relayout_gguf "rich_relayout.gguf": good;
        split_00001_of_00003_gguf "split-00001-of-00003.gguf": good shard;
        split_00002_of_00003_gguf "split-00002-of-00003.gguf": bad shard;
        split_00003_of_00003_gguf "split-00003-of-00003.gguf": shard;
        split_merged_gguf "split_merged.gguf": good;
        split_whole_gguf "split_whole.gguf": good;
        too_many_dims_gguf "too_many_dims.gguf": bad;
        truncated_data_gguf "truncated_data.gguf": bad;
        truncated_header_gguf "truncated_header.gguf": bad;
        truncated_infos_gguf "truncated_infos.gguf": bad;
        truncated_kv_gguf "truncated_kv.gguf": bad;
        unknown_ggml_type_gguf "unknown_ggml_type.gguf": bad;
        unknown_value_type_gguf "unknown_value_type.gguf": bad;
        v2_gguf "v2.gguf": good;
        v2_be_gguf "v2_be.gguf": good;
        vectors_json "vectors.json": bad;
        version1_gguf "version1.gguf": bad;
        version9_gguf "version9.gguf": bad;
    }
}

/// Many files in one run. Good and bad interleaved: errors must not reorder
/// or drop the lines after them.
mod many {
    use super::{Cmd, Corpus, with};

    /// Good and bad files, one of each in turn, and `flags` before them.
    fn all(flags: &'static [&'static str]) -> impl FnOnce(&Corpus) -> Cmd {
        move |c| {
            let mut all = Vec::new();
            for i in 0..c.good.len().max(c.bad.len()) {
                all.extend(c.good.get(i).cloned());
                all.extend(c.bad.get(i).cloned());
            }
            with(flags, &all)
        }
    }

    const TWICE: &[&str] =
        &["rich.gguf", "missing.gguf", "rich.gguf", "bad_magic.gguf", "missing.gguf", "big.gguf", "rich.gguf"];

    golden! {
        good_j1: "many/good-j1" => |c| with(&["-j", "1"], &c.good);
        all_j1: "many/all-j1" => all(&["-j", "1"]);
        all_json_j1: "many/all-json-j1" => all(&["--json", "-j", "1"]);
        good_j2: "many/good-j2" => |c| with(&["-j", "2"], &c.good);
        all_j2: "many/all-j2" => all(&["-j", "2"]);
        all_json_j2: "many/all-json-j2" => all(&["--json", "-j", "2"]);
        all_no_mmap: "many/all-no-mmap" => all(&["--no-mmap", "-j", "2"]);
        all_no_join: "many/all-no-join" => all(&["--no-join", "-j", "2"]);
        shards_no_join: "many/shards-no-join" => |c| with(&["--no-join"], &c.shards);
        repeated_j1: "many/repeated-j1" => |_| with(&["-j", "1"], TWICE);
        repeated_j2: "many/repeated-j2" => |_| with(&["-j", "2"], TWICE);
    }
}

/// `--skeleton`, to a file and to a pipe.
mod skeleton {
    use super::{args, to_file};

    golden! {
        rich_to_file: "skeleton/rich-to-file" => to_file(&["--skeleton", "rich.gguf"]);
        split_set: "skeleton/split-set" => args(&["--skeleton", "split-00001-of-00003.gguf"]);
        no_join_no_mmap: "skeleton/no-join-no-mmap" =>
            args(&["--skeleton", "--no-join", "--no-mmap", "split-00002-of-00003.gguf"]);
        bad_magic: "skeleton/bad-magic" => args(&["--skeleton", "bad_magic.gguf"]);
        missing: "skeleton/missing" => args(&["--skeleton", "missing.gguf"]);
        two_files: "skeleton/two-files" => args(&["--skeleton", "rich.gguf", "v2.gguf"]);
    }
}

/// `--check` with each of its flags, on the sums lists of the corpus
/// (`write_sums`): all good, one line of every kind (`tampered.sums`),
/// BSD-style, the spec's own labels, and lists that are not there or not lists.
mod check {
    use super::{args, fed, with};

    golden! {
        write_sums: "check/write-sums" => |c| with(&["-j", "2"], &c.good);
        good: "check/good" => args(&["-c", "good.sums"]);
        good_quiet: "check/good-quiet" => args(&["-c", "--quiet", "good.sums"]);
        good_status: "check/good-status" => args(&["-c", "--status", "good.sums"]);
        good_strict: "check/good-strict" => args(&["-c", "--strict", "good.sums"]);
        good_warn: "check/good-warn" => args(&["-c", "--warn", "good.sums"]);
        good_ignore_missing: "check/good-ignore-missing" => args(&["-c", "--ignore-missing", "good.sums"]);
        good_j1: "check/good-j1" => args(&["-c", "-j", "1", "good.sums"]);
        good_no_mmap: "check/good-no-mmap" => args(&["-c", "--no-mmap", "good.sums"]);
        good_no_join: "check/good-no-join" => args(&["-c", "--no-join", "good.sums"]);
        good_stdin: "check/good-stdin" => fed(&["-c"], "good.sums");
        good_junk: "check/good-junk" => args(&["-c", "good-junk.sums"]);
        good_junk_strict: "check/good-junk-strict" => args(&["-c", "--strict", "good-junk.sums"]);
        good_junk_warn: "check/good-junk-warn" => args(&["-c", "--warn", "good-junk.sums"]);
        good_stdin_dash: "check/good-stdin-dash" => fed(&["--check", "-"], "good.sums");
        tampered: "check/tampered" => args(&["-c", "tampered.sums"]);
        tampered_quiet: "check/tampered-quiet" => args(&["-c", "--quiet", "tampered.sums"]);
        tampered_status: "check/tampered-status" => args(&["-c", "--status", "tampered.sums"]);
        tampered_strict: "check/tampered-strict" => args(&["-c", "--strict", "tampered.sums"]);
        tampered_warn: "check/tampered-warn" => args(&["-c", "--warn", "tampered.sums"]);
        tampered_strict_warn: "check/tampered-strict-warn" => args(&["-c", "--strict", "--warn", "tampered.sums"]);
        tampered_ignore_missing: "check/tampered-ignore-missing" =>
            args(&["-c", "--ignore-missing", "tampered.sums"]);
        tampered_ignore_missing_quiet: "check/tampered-ignore-missing-quiet" =>
            args(&["-c", "--ignore-missing", "--quiet", "tampered.sums"]);
        tampered_warn_then_status: "check/tampered-warn-then-status" =>
            args(&["-c", "--warn", "--status", "tampered.sums"]);
        tampered_no_mmap_j1: "check/tampered-no-mmap-j1" => args(&["-c", "--no-mmap", "-j", "1", "tampered.sums"]);
        tampered_stdin: "check/tampered-stdin" => fed(&["-c"], "tampered.sums");
        two_lists: "check/two-lists" => args(&["-c", "good.sums", "tampered.sums"]);
        bsd: "check/bsd" => args(&["-c", "bsd.sums"]);
        bsd_strict: "check/bsd-strict" => args(&["-c", "--strict", "bsd.sums"]);
        vectors: "check/vectors" => args(&["-c", "vectors.sums"]);
        only_missing: "check/only-missing" => args(&["-c", "only-missing.sums"]);
        only_missing_ignore_missing: "check/only-missing-ignore-missing" =>
            args(&["-c", "--ignore-missing", "only-missing.sums"]);
        no_proper_line: "check/no-proper-line" => args(&["-c", "junk.sums"]);
        no_proper_line_warn: "check/no-proper-line-warn" => args(&["-c", "--warn", "junk.sums"]);
        list_missing: "check/list-missing" => args(&["-c", "nope.sums"]);
        list_is_dir: "check/list-is-dir" => args(&["-c", "dir.gguf"]);
        list_missing_then_good: "check/list-missing-then-good" => args(&["-c", "nope.sums", "good.sums"]);
        list_is_a_model: "check/list-is-a-model" => args(&["-c", "rich.gguf"]);
    }
}

/// `inspect` with its limits.
mod inspect {
    use super::args;

    golden! {
        rich_limit_3: "inspect/rich-limit-3" => args(&["inspect", "--limit", "3", "rich.gguf"]);
        odd_width_4_items_2: "inspect/odd-width-4-items-2" =>
            args(&["inspect", "--width", "4", "--items", "2", "odd.gguf"]);
        odd_json_width_4_items_2: "inspect/odd-json-width-4-items-2" =>
            args(&["inspect", "--json", "--width", "4", "--items", "2", "odd.gguf"]);
        big_limit_0_j1_no_mmap: "inspect/big-limit-0-j1-no-mmap" =>
            args(&["inspect", "--limit", "0", "-j", "1", "--no-mmap", "big.gguf"]);
        rich_json_limit_2: "inspect/rich-json-limit-2" => args(&["inspect", "--json", "--limit", "2", "rich.gguf"]);
    }
}

/// `diff` of pairs, as text and as JSON.
mod diff {
    use super::args;

    golden! {
        rich: "diff/rich" => args(&["diff", "rich.gguf", "rich.gguf"]);
        rich_json: "diff/rich-json" => args(&["diff", "--json", "rich.gguf", "rich.gguf"]);
        rich_relayout: "diff/rich-relayout" => args(&["diff", "rich.gguf", "rich_relayout.gguf"]);
        rich_relayout_json: "diff/rich-relayout-json" => args(&["diff", "--json", "rich.gguf", "rich_relayout.gguf"]);
        rich_changed: "diff/rich-changed" => args(&["diff", "rich.gguf", "rich_changed.gguf"]);
        rich_changed_json: "diff/rich-changed-json" => args(&["diff", "--json", "rich.gguf", "rich_changed.gguf"]);
        changed_rich: "diff/changed-rich" => args(&["diff", "rich_changed.gguf", "rich.gguf"]);
        changed_rich_json: "diff/changed-rich-json" => args(&["diff", "--json", "rich_changed.gguf", "rich.gguf"]);
        rich_odd: "diff/rich-odd" => args(&["diff", "rich.gguf", "odd.gguf"]);
        rich_odd_json: "diff/rich-odd-json" => args(&["diff", "--json", "rich.gguf", "odd.gguf"]);
        rich_align64: "diff/rich-align64" => args(&["diff", "rich.gguf", "align64.gguf"]);
        rich_align64_json: "diff/rich-align64-json" => args(&["diff", "--json", "rich.gguf", "align64.gguf"]);
        rich_empty: "diff/rich-empty" => args(&["diff", "rich.gguf", "empty_model.gguf"]);
        rich_empty_json: "diff/rich-empty-json" => args(&["diff", "--json", "rich.gguf", "empty_model.gguf"]);
        empty_kv_only: "diff/empty-kv-only" => args(&["diff", "empty_model.gguf", "kv_only.gguf"]);
        empty_kv_only_json: "diff/empty-kv-only-json" => args(&["diff", "--json", "empty_model.gguf", "kv_only.gguf"]);
        be_twin_le_be: "diff/be-twin-le-be" => args(&["diff", "be_twin_le.gguf", "be_twin_be.gguf"]);
        be_twin_le_be_json: "diff/be-twin-le-be-json" => args(&["diff", "--json", "be_twin_le.gguf", "be_twin_be.gguf"]);
        be_twin_be_relayout: "diff/be-twin-be-relayout" =>
            args(&["diff", "be_twin_be.gguf", "be_twin_be_relayout.gguf"]);
        be_twin_be_relayout_json: "diff/be-twin-be-relayout-json" =>
            args(&["diff", "--json", "be_twin_be.gguf", "be_twin_be_relayout.gguf"]);
        v2_v2_be: "diff/v2-v2-be" => args(&["diff", "v2.gguf", "v2_be.gguf"]);
        v2_v2_be_json: "diff/v2-v2-be-json" => args(&["diff", "--json", "v2.gguf", "v2_be.gguf"]);
        v2_rich: "diff/v2-rich" => args(&["diff", "v2.gguf", "rich.gguf"]);
        v2_rich_json: "diff/v2-rich-json" => args(&["diff", "--json", "v2.gguf", "rich.gguf"]);
        big_big_changed: "diff/big-big-changed" => args(&["diff", "big.gguf", "big_changed.gguf"]);
        big_big_changed_json: "diff/big-big-changed-json" => args(&["diff", "--json", "big.gguf", "big_changed.gguf"]);
        split_merged: "diff/split-merged" => args(&["diff", "split-00001-of-00003.gguf", "split_merged.gguf"]);
        split_merged_json: "diff/split-merged-json" =>
            args(&["diff", "--json", "split-00001-of-00003.gguf", "split_merged.gguf"]);
        split_whole: "diff/split-whole" => args(&["diff", "split-00001-of-00003.gguf", "split_whole.gguf"]);
        split_whole_json: "diff/split-whole-json" =>
            args(&["diff", "--json", "split-00001-of-00003.gguf", "split_whole.gguf"]);
        vector_b_c: "diff/vector-b-c" => args(&["diff", "b_all_types.gguf", "c_relayout.gguf"]);
        vector_b_c_json: "diff/vector-b-c-json" => args(&["diff", "--json", "b_all_types.gguf", "c_relayout.gguf"]);
        vector_b_d: "diff/vector-b-d" => args(&["diff", "b_all_types.gguf", "d_big_endian.gguf"]);
        vector_b_d_json: "diff/vector-b-d-json" => args(&["diff", "--json", "b_all_types.gguf", "d_big_endian.gguf"]);
        vector_e_split_merged: "diff/vector-e-split-merged" =>
            args(&["diff", "e_split-00001-of-00002.gguf", "e_merged.gguf"]);
        vector_e_split_merged_json: "diff/vector-e-split-merged-json" =>
            args(&["diff", "--json", "e_split-00001-of-00002.gguf", "e_merged.gguf"]);
        vector_a_b: "diff/vector-a-b" => args(&["diff", "a_empty.gguf", "b_all_types.gguf"]);
        vector_a_b_json: "diff/vector-a-b-json" => args(&["diff", "--json", "a_empty.gguf", "b_all_types.gguf"]);
        rich_bad_magic: "diff/rich-bad-magic" => args(&["diff", "rich.gguf", "bad_magic.gguf"]);
        rich_bad_magic_json: "diff/rich-bad-magic-json" => args(&["diff", "--json", "rich.gguf", "bad_magic.gguf"]);
        truncated_rich: "diff/truncated-rich" => args(&["diff", "truncated_data.gguf", "rich.gguf"]);
        truncated_rich_json: "diff/truncated-rich-json" => args(&["diff", "--json", "truncated_data.gguf", "rich.gguf"]);
        rich_missing: "diff/rich-missing" => args(&["diff", "rich.gguf", "missing.gguf"]);
        rich_missing_json: "diff/rich-missing-json" => args(&["diff", "--json", "rich.gguf", "missing.gguf"]);
        rich_later_shard: "diff/rich-later-shard" => args(&["diff", "rich.gguf", "split-00002-of-00003.gguf"]);
        rich_later_shard_json: "diff/rich-later-shard-json" =>
            args(&["diff", "--json", "rich.gguf", "split-00002-of-00003.gguf"]);
        rich_gap_set: "diff/rich-gap-set" => args(&["diff", "rich.gguf", "gap-00001-of-00002.gguf"]);
        rich_gap_set_json: "diff/rich-gap-set-json" => args(&["diff", "--json", "rich.gguf", "gap-00001-of-00002.gguf"]);
        rich_changed_width_4_items_1: "diff/rich-changed-width-4-items-1" =>
            args(&["diff", "--width", "4", "--items", "1", "rich.gguf", "rich_changed.gguf"]);
        big_big_changed_no_mmap_j1: "diff/big-big-changed-no-mmap-j1" =>
            args(&["diff", "--no-mmap", "-j", "1", "big.gguf", "big_changed.gguf"]);
        split_merged_no_join: "diff/split-merged-no-join" =>
            args(&["diff", "--no-join", "split-00001-of-00003.gguf", "split_merged.gguf"]);
        later_shards_no_join: "diff/later-shards-no-join" =>
            args(&["diff", "--no-join", "split-00002-of-00003.gguf", "split-00003-of-00003.gguf"]);
    }
}

/// Usage: help, version, and arguments clap or the tool refuses.
mod usage {
    use super::args;

    golden! {
        no_args: "usage/no-args" => args(&[]);
        help: "usage/help" => args(&["--help"]);
        help_short: "usage/help-short" => args(&["-h"]);
        version: "usage/version" => args(&["--version"]);
        inspect_help: "usage/inspect-help" => args(&["inspect", "--help"]);
        diff_help: "usage/diff-help" => args(&["diff", "--help"]);
        inspect_no_file: "usage/inspect-no-file" => args(&["inspect"]);
        diff_one_file: "usage/diff-one-file" => args(&["diff", "rich.gguf"]);
        json_check: "usage/json-check" => args(&["--json", "--check", "good.sums"]);
        skeleton_check: "usage/skeleton-check" => args(&["--skeleton", "-c", "good.sums"]);
        zero_threads: "usage/zero-threads" => args(&["-j", "0", "rich.gguf"]);
        bad_threads: "usage/bad-threads" => args(&["-j", "x", "rich.gguf"]);
        quiet_without_check: "usage/quiet-without-check" => args(&["--quiet", "rich.gguf"]);
        status_without_check: "usage/status-without-check" => args(&["--status", "rich.gguf"]);
        unknown_flag: "usage/unknown-flag" => args(&["--frobnicate", "rich.gguf"]);
        subcommand_after_flag: "usage/subcommand-after-flag" => args(&["--json", "inspect", "rich.gguf"]);
        inspect_bad_limit: "usage/inspect-bad-limit" => args(&["inspect", "--limit", "-1", "rich.gguf"]);
    }
}

/// The real SmolLM2, found as tests/interop/gguf.rs finds it, linked into
/// the corpus under its own name (outputs name the file as a user would see
/// it). Without it, each test prints `SKIPPED:` once and passes (under CI, fails).
mod smollm2 {
    use super::{Cmd, Corpus, SMOLLM2_FILE, common};

    /// The case's command, or `None` (skip) without the model.
    fn smollm2(flags: &'static [&'static str]) -> impl FnOnce(&Corpus) -> Cmd {
        move |c| {
            static LINKED: std::sync::Once = std::sync::Once::new();
            LINKED.call_once(|| {
                let py = common::py::prerequisites("the SmolLM2 golden cases (tests/cli/golden.rs)")
                    .expect("checked by present()");
                std::os::unix::fs::symlink(py.path("model"), c.dir.join(SMOLLM2_FILE))
                    .expect("link SmolLM2 into the corpus");
            });
            Cmd::new(&flags.iter().copied().chain([SMOLLM2_FILE]).collect::<Vec<_>>())
        }
    }

    /// Whether the model is there (after a `SKIPPED:` line if not).
    fn present() -> bool {
        common::py::prerequisites("the SmolLM2 golden cases (tests/cli/golden.rs)").is_some()
    }

    macro_rules! smollm2 {
        ($($test:ident: $case:literal => $flags:expr;)*) => {
            $(
                #[test]
                fn $test() {
                    if present() {
                        super::check($case, &super::test_path(module_path!(), stringify!($test)), smollm2($flags));
                    }
                }
            )*
            /// This group's cases.
            pub(super) const CASES: &[&str] = &[$($case),*];
        };
    }

    smollm2! {
        label: "smollm2/label" => &[];
        json: "smollm2/json" => &["--json"];
        skeleton: "smollm2/skeleton" => &["--skeleton"];
        inspect: "smollm2/inspect" => &["inspect"];
    }
}

// ---------------------------------------------------------------------------
// The cases, all of them
// ---------------------------------------------------------------------------

/// Every case's name, from the tests above.
fn all_cases() -> Vec<String> {
    let mut all: Vec<String> = Vec::new();
    for (word, kinds) in file::FILES {
        for kind in *kinds {
            all.extend(modes(kind).iter().map(|(_, case, _)| format!("file/{word}/{case}")));
        }
    }
    for group in [many::CASES, skeleton::CASES, check::CASES, inspect::CASES, diff::CASES, usage::CASES, smollm2::CASES]
    {
        all.extend(group.iter().map(|c| c.to_string()));
    }
    all.sort();
    all
}

/// The expected outputs under `dir`, as case names.
fn snapshots(dir: &Path, under: &str, out: &mut Vec<String>) {
    for e in std::fs::read_dir(dir).expect("read tests/golden") {
        let e = e.expect("a folder entry");
        let name = e.file_name().into_string().expect("UTF-8 names in tests/golden");
        let case = if under.is_empty() { name.clone() } else { format!("{under}/{name}") };
        if e.file_type().expect("a file type").is_dir() {
            snapshots(&e.path(), &case, out);
        } else {
            out.push(
                case.strip_suffix(".txt").unwrap_or_else(|| panic!("tests/golden/{case} is not a case")).to_string(),
            );
        }
    }
}

/// No expected output is left without its test (a case deleted or renamed
/// but not its file), and no case is there twice.
#[test]
fn every_expected_output_has_its_case() {
    let cases = all_cases();
    let mut unique = cases.clone();
    unique.dedup();
    assert_eq!(unique.len(), cases.len(), "a case is defined twice");
    let mut files = Vec::new();
    snapshots(&golden_dir(), "", &mut files);
    files.sort();
    let orphans: Vec<&String> = files.iter().filter(|f| !cases.contains(f)).collect();
    let missing: Vec<&String> = cases.iter().filter(|c| !files.contains(c)).collect();
    assert!(orphans.is_empty(), "expected outputs no test checks: {orphans:?}");
    // A case without its file fails on its own; `SNAPSHOTS=overwrite` writes it.
    assert!(missing.is_empty(), "cases without an expected output: {missing:?}");
    let _ = writeln!(std::io::stderr(), "golden: {} cases, each a test", cases.len());
}

/// The per-file tests run every corpus file in every mode of its kind: a
/// file added to the corpus (or to tests/data/vectors) without its tests fails here.
#[test]
fn every_corpus_file_has_its_cases() {
    let c = corpus();
    let mut made: Vec<(String, &str)> = Vec::new();
    for (names, kind) in [(&c.good, "good"), (&c.bad, "bad"), (&c.shards, "shard")] {
        made.extend(names.iter().map(|n| (word(n), kind)));
    }
    made.sort();
    let mut tested: Vec<(String, &str)> =
        file::FILES.iter().flat_map(|(w, kinds)| kinds.iter().map(|k| (w.to_string(), *k))).collect();
    tested.sort();
    assert_eq!(made, tested, "the corpus's files (left) and those with tests in golden::file (right)");
}

/// The portable path's notes are there to be taken out (and only they
/// differ from Linux's outputs: every case checks the rest); on Linux there
/// are none.
#[test]
fn lease_notes_only_on_the_portable_path() {
    let c = corpus();
    let run = exec(&c.dir, "--json rich.gguf", &Cmd::new(&["--json", "rich.gguf"]));
    let (_, notes) = lease_notes_removed(&run.stdout);
    assert_eq!(notes, usize::from(cfg!(feature = "portable")), "{}", String::from_utf8_lossy(&run.stdout));
}
