//! An independent test writer of PyTorch checkpoints, byte by byte: a
//! protocol-2 pickle of a state dict, in a zip archive (stored entries,
//! data descriptors or not, Zip64 when asked, any folder and record order)
//! or the legacy format; tensors contiguous, as transposed views, in one
//! shared storage, little- or big-endian. And the contract's skeleton
//! derived from the logical state dict alone, with no code of the crate.

use super::{hex, sha};

/// One tensor of the logical state dict: its elements little-endian, row-major.
#[derive(Debug, Clone)]
pub struct PtTensor {
    pub dtype: &'static str,
    pub shape: Vec<u64>,
    pub data: Vec<u8>,
}

/// (label dtype, storage class, element size, word size for byte order)
pub const DTYPES: &[(&str, &str, usize, usize)] = &[
    ("F64", "DoubleStorage", 8, 8),
    ("F32", "FloatStorage", 4, 4),
    ("F16", "HalfStorage", 2, 2),
    ("BF16", "BFloat16Storage", 2, 2),
    ("I64", "LongStorage", 8, 8),
    ("I32", "IntStorage", 4, 4),
    ("I16", "ShortStorage", 2, 2),
    ("I8", "CharStorage", 1, 1),
    ("U8", "ByteStorage", 1, 1),
    ("BOOL", "BoolStorage", 1, 1),
    ("C64", "ComplexFloatStorage", 8, 4),
    ("C128", "ComplexDoubleStorage", 16, 8),
];

fn dtype(name: &str) -> (&'static str, usize, usize) {
    let d = DTYPES.iter().find(|d| d.0 == name).expect("dtype of the table");
    (d.1, d.2, d.3)
}

impl PtTensor {
    /// A tensor whose bytes are a pattern seeded by `seed`.
    pub fn filled(dtype_name: &'static str, shape: &[u64], seed: u8) -> PtTensor {
        let (_, size, _) = dtype(dtype_name);
        let n = shape.iter().product::<u64>() as usize * size;
        let data = (0..n)
            .map(|i| {
                if dtype_name == "BOOL" {
                    ((i + seed as usize) % 2) as u8
                } else {
                    (i as u8).wrapping_mul(31).wrapping_add(seed)
                }
            })
            .collect();
        PtTensor { dtype: dtype_name, shape: shape.to_vec(), data }
    }
}

/// How the checkpoint is written.
#[derive(Debug, Clone)]
pub struct Layout {
    pub zip: bool,
    pub folder: String,
    pub reverse_records: bool,
    pub big_endian: bool,
    /// Each tensor stored transposed (column-major) and read through strides.
    pub views: bool,
    /// Every tensor in one storage (all of one dtype), at offsets.
    pub shared: bool,
    pub zip64: bool,
    /// Local headers with flag bit 3, zero sizes and data descriptors.
    pub deferred: bool,
    /// The root as `OrderedDict` (with `_metadata` when set) instead of a dict.
    pub ordered: bool,
}

impl Default for Layout {
    fn default() -> Self {
        Layout {
            zip: true,
            folder: "archive".into(),
            reverse_records: false,
            big_endian: false,
            views: false,
            shared: false,
            zip64: false,
            deferred: true,
            ordered: false,
        }
    }
}

/// A state dict: names to tensors, and the root's `_metadata` attribute
/// (`{"": {"version": 1}}`) when `metadata` is set.
#[derive(Debug, Clone, Default)]
pub struct StateDict {
    pub tensors: Vec<(String, PtTensor)>,
    pub metadata: bool,
}

impl StateDict {
    pub fn new() -> StateDict {
        StateDict::default()
    }

    pub fn tensor(mut self, name: &str, t: PtTensor) -> StateDict {
        self.tensors.push((name.into(), t));
        self
    }

    /// The contract's skeleton, derived from the logical state dict.
    pub fn expected_skeleton(&self) -> Vec<u8> {
        let mut out = b"PTCH".to_vec();
        out.extend(1u32.to_le_bytes());
        if self.metadata {
            out.push(0x0C);
        }
        let mut entries: Vec<(Vec<u8>, Vec<u8>)> = self
            .tensors
            .iter()
            .map(|(k, t)| {
                let mut key = vec![0x06];
                key.extend(sha(k.as_bytes()));
                let mut v = vec![0x0D];
                v.extend((t.dtype.len() as u32).to_le_bytes());
                v.extend(t.dtype.as_bytes());
                v.extend((t.shape.len() as u32).to_le_bytes());
                for s in &t.shape {
                    v.extend(s.to_le_bytes());
                }
                v.extend(sha(&t.data));
                (key, v)
            })
            .collect();
        entries.sort();
        out.push(0x0B);
        out.extend((entries.len() as u64).to_le_bytes());
        for (k, v) in entries {
            out.extend(k);
            out.extend(v);
        }
        if self.metadata {
            // {"_metadata": {"": {"version": 1}}}
            out.push(0x0B);
            out.extend(1u64.to_le_bytes());
            out.push(0x06);
            out.extend(sha(b"_metadata"));
            out.push(0x0B);
            out.extend(1u64.to_le_bytes());
            out.push(0x06);
            out.extend(sha(b""));
            out.push(0x0B);
            out.extend(1u64.to_le_bytes());
            out.push(0x06);
            out.extend(sha(b"version"));
            out.extend([0x03, 1, 0, 0, 0, 1]);
        }
        out
    }

    pub fn expected_label(&self) -> String {
        hex(&sha(&self.expected_skeleton()))
    }

    /// The checkpoint's bytes.
    pub fn build(&self, layout: &Layout) -> Vec<u8> {
        let (storages, places) = self.storages(layout);
        let pickle = self.pickle(layout, &storages, &places);
        if layout.zip {
            let mut records: Vec<(String, Vec<u8>)> = vec![(format!("{}/data.pkl", layout.folder), pickle)];
            records.push((
                format!("{}/byteorder", layout.folder),
                if layout.big_endian { b"big".to_vec() } else { b"little".to_vec() },
            ));
            for s in &storages {
                records.push((format!("{}/data/{}", layout.folder, s.key), s.bytes.clone()));
            }
            records.push((format!("{}/version", layout.folder), b"3\n".to_vec()));
            records.push((format!("{}/.data/serialization_id", layout.folder), b"1234567890".to_vec()));
            if layout.reverse_records {
                records.reverse();
            }
            zip(&records, layout)
        } else {
            let mut out = Vec::new();
            // magic, protocol version, sys_info
            out.extend(b"\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19.");
            out.extend(b"\x80\x02M\xe9\x03.");
            let mut p = Pickle::new();
            p.op(b"}");
            p.op(b"(");
            p.str("protocol_version");
            p.int(1001);
            p.str("little_endian");
            p.op(b"\x88");
            p.str("type_sizes");
            p.op(b"}(");
            for (k, v) in [("short", 2), ("int", 4), ("long", 8)] {
                p.str(k);
                p.int(v);
            }
            p.op(b"uu.");
            out.extend(p.out);
            out.extend(pickle);
            let mut keys = Pickle::new();
            keys.op(b"](");
            for s in &storages {
                keys.str(&s.key);
            }
            keys.op(b"e.");
            out.extend(keys.out);
            for s in &storages {
                out.extend(((s.bytes.len() / s.elem) as i64).to_le_bytes());
                out.extend(&s.bytes);
            }
            out
        }
    }

    /// The storages, and where each tensor is in them (storage, offset).
    fn storages(&self, layout: &Layout) -> (Vec<Storage>, Vec<(usize, usize)>) {
        let mut out: Vec<Storage> = Vec::new();
        let mut places = Vec::new();
        for (i, (_, t)) in self.tensors.iter().enumerate() {
            let (class, elem, word) = dtype(t.dtype);
            let mut bytes = if layout.views { column_major(&t.data, &t.shape, elem) } else { t.data.clone() };
            if layout.big_endian && word > 1 {
                for w in bytes.chunks_mut(word) {
                    w.reverse();
                }
            }
            if layout.shared {
                if out.is_empty() {
                    out.push(Storage { key: "0".into(), class, elem, bytes: Vec::new() });
                }
                assert_eq!(out[0].class, class, "a shared storage holds one dtype");
                // A gap of one element between tensors: a view into a larger storage.
                out[0].bytes.extend(vec![0xAB; elem]);
                places.push((0, out[0].bytes.len() / elem));
                out[0].bytes.extend(bytes);
            } else {
                places.push((out.len(), 0));
                out.push(Storage { key: format!("{}", i * 7 + 3), class, elem, bytes });
            }
        }
        (out, places)
    }

    fn pickle(&self, layout: &Layout, storages: &[Storage], places: &[(usize, usize)]) -> Vec<u8> {
        let mut p = Pickle::new();
        let ids_legacy = !layout.zip;
        if layout.ordered || self.metadata {
            p.global("collections", "OrderedDict");
            p.op(b")R");
        } else {
            p.op(b"}");
        }
        p.op(b"q\x00(");
        for ((name, t), &(si, offset)) in self.tensors.iter().zip(places) {
            let s = &storages[si];
            p.str(name);
            p.global("torch._utils", "_rebuild_tensor_v2");
            p.op(b"(");
            // persistent id
            p.op(b"(");
            p.str("storage");
            p.global("torch", s.class);
            p.str(&s.key);
            p.str("cpu");
            p.int((s.bytes.len() / s.elem) as i64);
            if ids_legacy {
                p.op(b"N");
            }
            p.op(b"tQ");
            p.int(offset as i64);
            p.tuple(&t.shape);
            let stride = if layout.views { col_strides(&t.shape) } else { row_strides(&t.shape) };
            p.tuple(&stride);
            p.op(b"\x89");
            p.global("collections", "OrderedDict");
            p.op(b")R");
            p.op(b"tR");
        }
        p.op(b"u");
        if self.metadata {
            p.op(b"}(");
            p.str("_metadata");
            p.op(b"}(");
            p.str("");
            p.op(b"}(");
            p.str("version");
            p.int(1);
            p.op(b"uuub");
        }
        p.op(b".");
        p.out
    }
}

struct Storage {
    key: String,
    class: &'static str,
    elem: usize,
    bytes: Vec<u8>,
}

fn row_strides(shape: &[u64]) -> Vec<u64> {
    let mut s = vec![1u64; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1];
    }
    s
}

fn col_strides(shape: &[u64]) -> Vec<u64> {
    let mut s = vec![1u64; shape.len()];
    for i in 1..shape.len() {
        s[i] = s[i - 1] * shape[i - 1];
    }
    s
}

/// The row-major `data` laid out column-major.
fn column_major(data: &[u8], shape: &[u64], elem: usize) -> Vec<u8> {
    let n: u64 = shape.iter().product();
    let (rs, cs) = (row_strides(shape), col_strides(shape));
    let mut out = vec![0u8; data.len()];
    for flat in 0..n {
        let mut rem = flat;
        let mut pos = 0;
        for (d, r) in rs.iter().enumerate() {
            let idx = rem / r;
            rem %= r;
            pos += idx * cs[d];
        }
        let (f, p) = (flat as usize * elem, pos as usize * elem);
        out[p..p + elem].copy_from_slice(&data[f..f + elem]);
    }
    out
}

/// A protocol-2 pickle being written.
pub struct Pickle {
    pub out: Vec<u8>,
}

impl Pickle {
    pub fn new() -> Pickle {
        Pickle { out: b"\x80\x02".to_vec() }
    }
    pub fn op(&mut self, b: &[u8]) {
        self.out.extend(b);
    }
    pub fn str(&mut self, s: &str) {
        self.out.push(b'X');
        self.out.extend((s.len() as u32).to_le_bytes());
        self.out.extend(s.as_bytes());
    }
    pub fn int(&mut self, v: i64) {
        if (0..256).contains(&v) {
            self.out.extend([b'K', v as u8]);
        } else if (0..65536).contains(&v) {
            self.out.push(b'M');
            self.out.extend((v as u16).to_le_bytes());
        } else {
            self.out.extend([0x8A, 8]);
            self.out.extend(v.to_le_bytes());
        }
    }
    pub fn global(&mut self, module: &str, name: &str) {
        self.out.push(b'c');
        self.out.extend(format!("{module}\n{name}\n").as_bytes());
    }
    pub fn tuple(&mut self, items: &[u64]) {
        self.out.push(b'(');
        for &i in items {
            self.int(i as i64);
        }
        self.out.push(b't');
    }
}

fn le16(v: usize) -> [u8; 2] {
    (v as u16).to_le_bytes()
}
fn le32(v: u64) -> [u8; 4] {
    (v as u32).to_le_bytes()
}

/// A zip archive of stored `records`, as `layout` says.
pub fn zip(records: &[(String, Vec<u8>)], layout: &Layout) -> Vec<u8> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    for (name, data) in records {
        let offset = out.len() as u64;
        let flags: u16 = if layout.deferred { 8 } else { 0 };
        out.extend(b"PK\x03\x04");
        out.extend(le16(if layout.zip64 { 45 } else { 20 }));
        out.extend(flags.to_le_bytes());
        out.extend([0, 0, 0, 0, 0, 0]); // method 0, time, date
        out.extend([0, 0, 0, 0]); // crc: not content
        let size = data.len() as u64;
        let mut local_extra = Vec::new();
        if layout.deferred {
            out.extend([0; 8]);
        } else if layout.zip64 {
            out.extend([0xFF; 8]);
            local_extra.extend(1u16.to_le_bytes());
            local_extra.extend(16u16.to_le_bytes());
            local_extra.extend(size.to_le_bytes());
            local_extra.extend(size.to_le_bytes());
        } else {
            out.extend(le32(size));
            out.extend(le32(size));
        }
        // torch aligns data to 64 bytes with an extra field of padding.
        let base = out.len() + 4 + name.len() + local_extra.len() + 4;
        let pad = (64 - base % 64) % 64;
        local_extra.extend(b"FB");
        local_extra.extend(le16(pad));
        local_extra.extend(vec![b'Z'; pad]);
        out.extend(le16(name.len()));
        out.extend(le16(local_extra.len()));
        out.extend(name.as_bytes());
        out.extend(&local_extra);
        out.extend(data);
        if layout.deferred {
            out.extend(b"PK\x07\x08");
            out.extend([0; 4]);
            out.extend(le32(size));
            out.extend(le32(size));
        }
        central.extend(b"PK\x01\x02");
        central.extend(le16(if layout.zip64 { 45 } else { 20 }));
        central.extend(le16(if layout.zip64 { 45 } else { 20 }));
        central.extend(flags.to_le_bytes());
        central.extend([0, 0, 0, 0, 0, 0, 0, 0, 0, 0]); // method, time, date, crc
        let mut extra = Vec::new();
        if layout.zip64 {
            central.extend([0xFF; 8]);
            extra.extend(1u16.to_le_bytes());
            extra.extend(24u16.to_le_bytes());
            extra.extend(size.to_le_bytes());
            extra.extend(size.to_le_bytes());
            extra.extend(offset.to_le_bytes());
        } else {
            central.extend(le32(size));
            central.extend(le32(size));
        }
        central.extend(le16(name.len()));
        central.extend(le16(extra.len()));
        central.extend([0, 0, 0, 0, 0, 0, 0, 0, 0, 0]); // comment, disk, attrs
        central.extend(if layout.zip64 { [0xFF; 4] } else { le32(offset) });
        central.extend(name.as_bytes());
        central.extend(&extra);
    }
    let cd_offset = out.len() as u64;
    let cd_size = central.len() as u64;
    out.extend(&central);
    let n = records.len() as u64;
    if layout.zip64 {
        let z = out.len() as u64;
        out.extend(b"PK\x06\x06");
        out.extend(44u64.to_le_bytes());
        out.extend(le16(45));
        out.extend(le16(45));
        out.extend([0; 8]);
        out.extend(n.to_le_bytes());
        out.extend(n.to_le_bytes());
        out.extend(cd_size.to_le_bytes());
        out.extend(cd_offset.to_le_bytes());
        out.extend(b"PK\x06\x07");
        out.extend([0; 4]);
        out.extend(z.to_le_bytes());
        out.extend(1u32.to_le_bytes());
        out.extend(b"PK\x05\x06");
        out.extend([0; 4]);
        out.extend([0xFF; 4]);
        out.extend([0xFF; 8]);
    } else {
        out.extend(b"PK\x05\x06");
        out.extend([0; 4]);
        out.extend(le16(n as usize));
        out.extend(le16(n as usize));
        out.extend(le32(cd_size));
        out.extend(le32(cd_offset));
    }
    out.extend([0, 0]); // comment length
    out
}
