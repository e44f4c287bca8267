//! Test-only GGUF writer: emits any logical model in any layout (KV order,
//! tensor-info order, data order, gaps, padding bytes, trailing bytes,
//! version, byte order, stored shape, shards), plus an independent
//! derivation of the expected skeleton straight from the spec's text.
//!
//! It shares no code with the library on purpose: a bug in the library's
//! reading cannot hide behind the same bug in the writing.
#![allow(dead_code)]

/// The command every test runs: the binary cargo built, or the one
/// `GGUF_DIGEST_BIN` names (scripts/test-python.sh runs the `gguf_cli::` and
/// `st_cli::` modules of the cli test binary again on the `gguf-digest` the
/// Python wheel installs). Every test names the command through this, and
/// nowhere else.
pub fn gguf_digest_bin() -> &'static str {
    static BIN: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        std::env::var("GGUF_DIGEST_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_gguf-digest").to_string())
    });
    BIN.as_str()
}

/// Copies the command under test to `path`, runnable by every user (for
/// runs as `nobody`). The copy is made by `cp`, in a child: were it written
/// here, every process a parallel test forks would hold it open for writing
/// until its exec, and running the copy in that moment fails with ETXTBSY
/// ("Text file busy"), as it did once the tests shared a binary.
pub fn copy_gguf_digest_to(path: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;
    let status = std::process::Command::new("cp").arg(gguf_digest_bin()).arg(path).status().expect("runs cp");
    assert!(status.success(), "cp {} {} failed", gguf_digest_bin(), path.display());
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod 755");
}

/// Runs the command under test (see [`gguf_digest_bin`]) in `dir`, with
/// an empty standard input; its output.
pub fn gd_in(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(gguf_digest_bin()).args(args).current_dir(dir).output().expect("runs gguf-digest")
}

/// Captured output as text (invalid UTF-8 replaced).
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Changes the last byte of a file (a model's last tensor byte, in the
/// test models: its label changes).
pub fn flip_last_byte(path: &std::path::Path) {
    let mut bytes = std::fs::read(path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(path, &bytes).unwrap();
}

/// Makes a FIFO at `path` (with the system's `mkfifo`).
pub fn mkfifo(path: &std::path::Path) {
    let status = std::process::Command::new("mkfifo").arg(path).status().expect("mkfifo");
    assert!(status.success(), "mkfifo failed");
}

pub mod harness;
pub mod ollama;
pub mod onnx;
pub mod progress;
pub mod pt;
pub mod py;
pub mod st;
pub mod stream;
pub mod tree;

use sha2::{Digest, Sha256};

/// A KV value as the test writes it.
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    U8(u8),
    I8(i8),
    U16(u16),
    I16(i16),
    U32(u32),
    I32(i32),
    F32(f32),
    Bool(bool),
    Str(Vec<u8>),
    /// Element type id and elements (each of that type, arrays nest).
    Arr(u32, Vec<Val>),
    U64(u64),
    I64(i64),
    F64(f64),
    /// Any type id followed by these bytes verbatim (for malformed files).
    Raw(u32, Vec<u8>),
}

impl Val {
    pub fn str(s: &str) -> Val {
        Val::Str(s.as_bytes().to_vec())
    }

    pub fn type_id(&self) -> u32 {
        match self {
            Val::U8(_) => 0,
            Val::I8(_) => 1,
            Val::U16(_) => 2,
            Val::I16(_) => 3,
            Val::U32(_) => 4,
            Val::I32(_) => 5,
            Val::F32(_) => 6,
            Val::Bool(_) => 7,
            Val::Str(_) => 8,
            Val::Arr(..) => 9,
            Val::U64(_) => 10,
            Val::I64(_) => 11,
            Val::F64(_) => 12,
            Val::Raw(t, _) => *t,
        }
    }

    /// The value's bytes as written after its type (scalars, string length +
    /// bytes, array element type + count + elements), in the given order.
    pub fn encode(&self, be: bool, out: &mut Vec<u8>) {
        match self {
            Val::U8(v) => out.push(*v),
            Val::I8(v) => out.push(*v as u8),
            Val::Bool(v) => out.push(u8::from(*v)),
            Val::U16(v) => put(out, &v.to_le_bytes(), be),
            Val::I16(v) => put(out, &v.to_le_bytes(), be),
            Val::U32(v) => put(out, &v.to_le_bytes(), be),
            Val::I32(v) => put(out, &v.to_le_bytes(), be),
            Val::F32(v) => put(out, &v.to_bits().to_le_bytes(), be),
            Val::U64(v) => put(out, &v.to_le_bytes(), be),
            Val::I64(v) => put(out, &v.to_le_bytes(), be),
            Val::F64(v) => put(out, &v.to_bits().to_le_bytes(), be),
            Val::Str(s) => {
                put(out, &(s.len() as u64).to_le_bytes(), be);
                out.extend_from_slice(s);
            }
            Val::Arr(t, items) => {
                put(out, &t.to_le_bytes(), be);
                put(out, &(items.len() as u64).to_le_bytes(), be);
                // Nested arrays carry their own element type and count.
                for i in items {
                    i.encode(be, out);
                }
            }
            Val::Raw(_, bytes) => out.extend_from_slice(bytes),
        }
    }

    /// canonical_value of spec §2.
    pub fn canonical(&self) -> Vec<u8> {
        let mut out = Vec::new();
        match self {
            Val::Str(s) => {
                out.extend_from_slice(&(s.len() as u64).to_le_bytes());
                out.extend_from_slice(&sha(s));
            }
            Val::Arr(t, items) => {
                out.extend_from_slice(&t.to_le_bytes());
                out.extend_from_slice(&(items.len() as u64).to_le_bytes());
                let mut payload = Vec::new();
                for i in items {
                    i.encode(false, &mut payload);
                }
                out.extend_from_slice(&sha(&payload));
            }
            v => v.encode(false, &mut out),
        }
        out
    }
}

/// Writes little-endian bytes `le` in the requested order.
fn put(out: &mut Vec<u8>, le: &[u8], be: bool) {
    if be {
        out.extend(le.iter().rev());
    } else {
        out.extend_from_slice(le);
    }
}

pub fn sha(b: &[u8]) -> [u8; 32] {
    Sha256::digest(b).into()
}

pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// (block size, bytes per block) of the spec's table, written out again here.
pub fn type_size(t: u32) -> Option<(u64, u64)> {
    Some(match t {
        0 => (1, 4),
        1 => (1, 2),
        2 => (32, 18),
        3 => (32, 20),
        6 => (32, 22),
        7 => (32, 24),
        8 => (32, 34),
        9 => (32, 36),
        10 => (256, 84),
        11 => (256, 110),
        12 => (256, 144),
        13 => (256, 176),
        14 => (256, 210),
        15 => (256, 292),
        16 => (256, 66),
        17 => (256, 74),
        18 => (256, 98),
        19 => (256, 50),
        20 => (32, 18),
        21 => (256, 110),
        22 => (256, 82),
        23 => (256, 136),
        24 => (1, 1),
        25 => (1, 2),
        26 => (1, 4),
        27 => (1, 8),
        28 => (1, 8),
        29 => (256, 56),
        30 => (1, 2),
        34 => (256, 54),
        35 => (256, 66),
        39 => (32, 17),
        40 => (64, 36),
        41 => (128, 18),
        42 => (64, 18),
        _ => return None,
    })
}

/// Every type id of the table.
pub const ALL_TYPES: [u32; 35] = [
    0, 1, 2, 3, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 34, 35,
    39, 40, 41, 42,
];

/// The types spec §6 can convert from big-endian.
pub const BE_TYPES: [u32; 14] = [0, 1, 2, 8, 12, 14, 24, 25, 26, 27, 28, 30, 39, 40];

/// Little-endian data to its big-endian form (spec §6, read backwards).
/// Types without a rule are written unchanged.
pub fn to_big_endian(t: u32, data: &[u8]) -> Vec<u8> {
    let mut d = data.to_vec();
    let words = match t {
        0 | 26 => 4,
        1 | 30 | 25 => 2,
        27 | 28 => 8,
        _ => 0,
    };
    if words > 0 {
        for w in d.chunks_exact_mut(words) {
            w.reverse();
        }
        return d;
    }
    let (block, halves): (usize, &[usize]) = match t {
        2 => (18, &[0]),
        8 => (34, &[0]),
        12 => (144, &[0, 2]),
        14 => (210, &[208]),
        _ => return d,
    };
    for b in d.chunks_exact_mut(block) {
        for &o in halves {
            b.swap(o, o + 1);
        }
    }
    d
}

/// A tensor as the test writes it: data always given little-endian.
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    pub name: Vec<u8>,
    /// Dims as stored (0 to 4, or more for malformed files).
    pub dims: Vec<u64>,
    pub ggml_type: u32,
    pub data: Vec<u8>,
}

impl Tensor {
    /// A tensor of `ggml_type` with `dims`, filled with bytes derived from `seed`.
    pub fn filled(name: &str, dims: &[u64], ggml_type: u32, seed: u8) -> Tensor {
        let (block, size) = type_size(ggml_type).expect("known type");
        let mut n = dims.first().copied().unwrap_or(1) / block * size;
        for d in dims.iter().skip(1) {
            n *= d;
        }
        let data = (0..n).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect();
        Tensor { name: name.as_bytes().to_vec(), dims: dims.to_vec(), ggml_type, data }
    }
}

/// A GGUF file to write: the logical model plus every layout choice.
#[derive(Clone, Debug)]
pub struct Gguf {
    pub version: u32,
    pub big_endian: bool,
    pub kvs: Vec<(Vec<u8>, Val)>,
    pub tensors: Vec<Tensor>,
    /// Order of the tensor infos (indices into `tensors`); default: as given.
    pub info_order: Option<Vec<usize>>,
    /// Order of the tensor data; default: as given.
    pub data_order: Option<Vec<usize>>,
    /// Filler bytes before each tensor's data, in data order (cycled).
    pub gaps: Vec<u64>,
    /// Round each tensor's start up to the alignment, as writers do.
    pub align_data: bool,
    /// The byte used for padding and gaps.
    pub pad_byte: u8,
    /// Bytes after the last tensor.
    pub trailing: Vec<u8>,
    /// Alignment used for padding when it must differ from the KV's.
    pub pad_alignment: Option<u64>,
}

impl Default for Gguf {
    fn default() -> Self {
        Gguf {
            version: 3,
            big_endian: false,
            kvs: Vec::new(),
            tensors: Vec::new(),
            info_order: None,
            data_order: None,
            gaps: Vec::new(),
            align_data: true,
            pad_byte: 0,
            trailing: Vec::new(),
            pad_alignment: None,
        }
    }
}

/// Where the writer put things, for tests that patch or cut files.
#[derive(Clone, Debug, Default)]
pub struct Layout {
    /// File position of each KV (in `kvs` order).
    pub kv_offsets: Vec<u64>,
    /// File position of each tensor info (in `tensors` order).
    pub info_offsets: Vec<u64>,
    /// End of the tensor infos.
    pub info_end: u64,
    pub data_start: u64,
    /// Stored offset of each tensor (in `tensors` order).
    pub offsets: Vec<u64>,
}

impl Gguf {
    pub fn new() -> Gguf {
        Gguf::default()
    }

    pub fn kv(mut self, key: &str, v: Val) -> Gguf {
        self.kvs.push((key.as_bytes().to_vec(), v));
        self
    }

    pub fn tensor(mut self, t: Tensor) -> Gguf {
        self.tensors.push(t);
        self
    }

    /// The effective alignment of spec §4 (a well-formed KV only).
    pub fn alignment(&self) -> u64 {
        self.kvs
            .iter()
            .find_map(|(k, v)| match v {
                Val::U32(a) if k == b"general.alignment" => Some(u64::from(*a)),
                _ => None,
            })
            .unwrap_or(32)
    }

    pub fn build(&self) -> Vec<u8> {
        self.build_with_layout().0
    }

    pub fn build_with_layout(&self) -> (Vec<u8>, Layout) {
        let be = self.big_endian;
        let mut lay = Layout::default();
        let mut out = b"GGUF".to_vec();
        put(&mut out, &self.version.to_le_bytes(), be);
        put(&mut out, &(self.tensors.len() as u64).to_le_bytes(), be);
        put(&mut out, &(self.kvs.len() as u64).to_le_bytes(), be);
        for (k, v) in &self.kvs {
            lay.kv_offsets.push(out.len() as u64);
            put(&mut out, &(k.len() as u64).to_le_bytes(), be);
            out.extend_from_slice(k);
            put(&mut out, &v.type_id().to_le_bytes(), be);
            v.encode(be, &mut out);
        }
        let a = self.pad_alignment.unwrap_or_else(|| self.alignment()).max(1);
        let align = |x: u64| x.div_ceil(a) * a;

        // Stored offsets first: they go into the tensor infos.
        let n = self.tensors.len();
        let data_order: Vec<usize> = self.data_order.clone().unwrap_or_else(|| (0..n).collect());
        lay.offsets = vec![0; n];
        let mut pos = 0u64;
        let mut starts = Vec::new();
        for (k, &i) in data_order.iter().enumerate() {
            let gap = if self.gaps.is_empty() { 0 } else { self.gaps[k % self.gaps.len()] };
            pos += gap;
            if self.align_data {
                pos = align(pos);
            }
            lay.offsets[i] = pos;
            starts.push((pos, i));
            pos += self.tensors[i].data.len() as u64;
        }

        lay.info_offsets = vec![0; n];
        let info_order: Vec<usize> = self.info_order.clone().unwrap_or_else(|| (0..n).collect());
        for &i in &info_order {
            let t = &self.tensors[i];
            lay.info_offsets[i] = out.len() as u64;
            put(&mut out, &(t.name.len() as u64).to_le_bytes(), be);
            out.extend_from_slice(&t.name);
            put(&mut out, &(t.dims.len() as u32).to_le_bytes(), be);
            for d in &t.dims {
                put(&mut out, &d.to_le_bytes(), be);
            }
            put(&mut out, &t.ggml_type.to_le_bytes(), be);
            put(&mut out, &lay.offsets[i].to_le_bytes(), be);
        }
        lay.info_end = out.len() as u64;
        lay.data_start = align(lay.info_end);
        if n == 0 {
            // Nothing follows the infos: no padding (like vector a).
            lay.data_start = lay.info_end;
            out.extend_from_slice(&self.trailing);
            return (out, lay);
        }
        out.resize(lay.data_start as usize, self.pad_byte);
        for (start, i) in starts {
            let at = (lay.data_start + start) as usize;
            out.resize(at, self.pad_byte);
            let t = &self.tensors[i];
            if be {
                out.extend_from_slice(&to_big_endian(t.ggml_type, &t.data));
            } else {
                out.extend_from_slice(&t.data);
            }
        }
        out.extend_from_slice(&self.trailing);
        (out, lay)
    }

    /// The skeleton of spec §2, derived from the logical model alone.
    pub fn expected_skeleton(&self) -> Vec<u8> {
        let mut kvs: Vec<&(Vec<u8>, Val)> = self.kvs.iter().filter(|(k, _)| !k.starts_with(b"split.")).collect();
        kvs.sort_by(|a, b| a.0.cmp(&b.0));
        let mut ts: Vec<&Tensor> = self.tensors.iter().collect();
        ts.sort_by(|a, b| a.name.cmp(&b.name));
        let a = self.alignment();
        let mut s = b"GGUF".to_vec();
        s.extend_from_slice(&3u32.to_le_bytes());
        s.extend_from_slice(&(ts.len() as u64).to_le_bytes());
        s.extend_from_slice(&(kvs.len() as u64).to_le_bytes());
        s.extend_from_slice(&a.to_le_bytes());
        for (k, v) in kvs {
            s.extend_from_slice(&sha(k));
            s.extend_from_slice(&v.type_id().to_le_bytes());
            s.extend_from_slice(&v.canonical());
        }
        let mut offset = 0u64;
        for t in ts {
            let mut dims = t.dims.clone();
            dims.resize(4, 1);
            while dims.len() > 1 && dims.last() == Some(&1) {
                dims.pop();
            }
            s.extend_from_slice(&sha(&t.name));
            s.extend_from_slice(&(dims.len() as u32).to_le_bytes());
            for d in &dims {
                s.extend_from_slice(&d.to_le_bytes());
            }
            s.extend_from_slice(&t.ggml_type.to_le_bytes());
            s.extend_from_slice(&offset.to_le_bytes());
            s.extend_from_slice(&sha(&t.data));
            offset = (offset + t.data.len() as u64).div_ceil(a) * a;
        }
        s
    }

    /// The label of spec §1, derived from the logical model alone.
    pub fn expected_label(&self) -> String {
        hex(&sha(&self.expected_skeleton()))
    }

    /// The model cut into shards the way gguf-split writes them: `sizes[i]`
    /// tensors in shard i; the first shard holds every KV plus split.no (u16),
    /// split.count (u16) and split.tensors.count (i32); the others only those
    /// three keys. Tensors are stored with trailing 1s dropped, as ggml does.
    pub fn split(&self, sizes: &[usize]) -> Vec<Gguf> {
        assert_eq!(sizes.iter().sum::<usize>(), self.tensors.len());
        let count = sizes.len() as u16;
        let total = self.tensors.len() as i32;
        let mut next = 0;
        sizes
            .iter()
            .enumerate()
            .map(|(no, &k)| {
                let mut g = Gguf {
                    version: self.version,
                    big_endian: self.big_endian,
                    kvs: if no == 0 { self.kvs.clone() } else { Vec::new() },
                    tensors: self.tensors[next..next + k].iter().map(ggml_shape).collect(),
                    ..Gguf::default()
                };
                next += k;
                g.kvs.push((b"split.no".to_vec(), Val::U16(no as u16)));
                g.kvs.push((b"split.count".to_vec(), Val::U16(count)));
                g.kvs.push((b"split.tensors.count".to_vec(), Val::I32(total)));
                g
            })
            .collect()
    }

    /// The model as `gguf-split --merge` leaves it: split.count 0, the other
    /// split keys kept.
    pub fn merged(&self) -> Gguf {
        let mut g = self.clone();
        g.tensors = g.tensors.iter().map(ggml_shape).collect();
        g.kvs.push((b"split.no".to_vec(), Val::U16(0)));
        g.kvs.push((b"split.count".to_vec(), Val::U16(0)));
        g.kvs.push((b"split.tensors.count".to_vec(), Val::I32(self.tensors.len() as i32)));
        g
    }
}

/// A tensor's dims as ggml stores them: trailing 1s dropped, at least one.
fn ggml_shape(t: &Tensor) -> Tensor {
    let mut dims = t.dims.clone();
    while dims.len() > 1 && dims.last() == Some(&1) {
        dims.pop();
    }
    Tensor { dims, ..t.clone() }
}

/// A small model with one KV of every value type (arrays of every element
/// type, nested to depth 3, an empty string, an empty array) and tensors of
/// the given types.
pub fn rich_model(types: &[u32]) -> Gguf {
    let mut g = Gguf::new()
        .kv("general.architecture", Val::str("llama"))
        .kv("general.name", Val::str("rich"))
        .kv("v.u8", Val::U8(200))
        .kv("v.i8", Val::I8(-5))
        .kv("v.u16", Val::U16(60000))
        .kv("v.i16", Val::I16(-300))
        .kv("v.u32", Val::U32(4_000_000_000))
        .kv("v.i32", Val::I32(-70000))
        .kv("v.f32", Val::F32(0.25))
        .kv("v.bool", Val::Bool(true))
        .kv("v.u64", Val::U64(u64::MAX))
        .kv("v.i64", Val::I64(i64::MIN))
        .kv("v.f64", Val::F64(-2.5))
        .kv("v.empty_str", Val::str(""))
        .kv("v.empty_arr", Val::Arr(6, vec![]))
        .kv(
            "v.nested",
            Val::Arr(9, vec![Val::Arr(9, vec![Val::Arr(0, vec![Val::U8(1), Val::U8(2)])]), Val::Arr(9, vec![])]),
        );
    let arrays = [
        (0, Val::U8(1)),
        (1, Val::I8(-1)),
        (2, Val::U16(513)),
        (3, Val::I16(-513)),
        (4, Val::U32(70000)),
        (5, Val::I32(-70000)),
        (6, Val::F32(1.5)),
        (7, Val::Bool(true)),
        (8, Val::str("tok")),
        (10, Val::U64(1 << 40)),
        (11, Val::I64(-(1 << 40))),
        (12, Val::F64(0.1)),
    ];
    for (t, v) in arrays {
        g = g.kv(&format!("arr.t{t}"), Val::Arr(t, vec![v.clone(), v.clone(), v]));
    }
    for (i, &t) in types.iter().enumerate() {
        let (block, _) = type_size(t).expect("known type");
        g = g.tensor(Tensor::filled(&format!("blk.{i}.w"), &[block * 2, 3], t, i as u8));
    }
    g
}

/// Writes files into a fresh temporary directory.
pub struct Dir {
    pub dir: tempfile::TempDir,
}

impl Dir {
    pub fn new() -> Dir {
        Dir { dir: tempfile::tempdir().expect("temp dir") }
    }

    pub fn write(&self, name: &str, bytes: &[u8]) -> std::path::PathBuf {
        let p = self.dir.path().join(name);
        std::fs::write(&p, bytes).expect("write test file");
        p
    }

    pub fn path(&self, name: &str) -> std::path::PathBuf {
        self.dir.path().join(name)
    }
}

/// Writes a shard set as `<prefix>-NNNNN-of-MMMMM.gguf` files, returning their paths.
pub fn write_set(d: &Dir, prefix: &str, shards: &[Gguf]) -> Vec<std::path::PathBuf> {
    let n = shards.len();
    shards
        .iter()
        .enumerate()
        .map(|(i, g)| d.write(&format!("{prefix}-{:05}-of-{n:05}.gguf", i + 1), &g.build()))
        .collect()
}

/// Replaces the value of an existing KV.
pub fn set_kv(g: &mut Gguf, key: &str, v: Val) {
    let slot = g.kvs.iter_mut().find(|(k, _)| k == key.as_bytes()).expect("key present");
    slot.1 = v;
}

/// Big-endian data back to little-endian. Every rule of spec §6 reverses
/// bytes in place (words, or 2-byte halves at fixed block offsets), so the
/// conversion is its own inverse.
pub fn from_big_endian(t: u32, data: &[u8]) -> Vec<u8> {
    to_big_endian(t, data)
}

/// The one-shot oracle of a tensor's data digest: read all of its stored
/// bytes out of the built file, convert all of them to little-endian at
/// once, hash once. No pieces, so no piece boundary can hide a bug; every
/// read path of the library is compared with it.
pub fn oracle_tensor_sha256(g: &Gguf, file: &[u8], layout: &Layout, i: usize) -> [u8; 32] {
    let t = &g.tensors[i];
    let start = (layout.data_start + layout.offsets[i]) as usize;
    let stored = &file[start..start + t.data.len()];
    if g.big_endian { sha(&from_big_endian(t.ggml_type, stored)) } else { sha(stored) }
}
