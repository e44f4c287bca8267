//! Every class of rejection from spec §3–§6: each must come back as the
//! right `ErrorKind`, and (spec §7) its message must name the file, the byte
//! offset, and the key or tensor concerned — never a panic, never a label.
//!
//! Files are built with the test writer and then broken, by choosing odd
//! values or by patching bytes at positions the writer's `Layout` reports.
use crate::common;
use gguf_digest::gguf::GgufErrorKind;

use std::ops::Range;
use std::path::{Path, PathBuf};

use common::*;
use gguf_digest::{Error, ErrorKind, Model, OpenOptions, ReadMode};

fn open_mode(p: &Path, read_mode: ReadMode) -> Result<String, Error> {
    Model::open_with(p, OpenOptions { join_shards: true, read_mode, ..OpenOptions::default() }).and_then(|m| m.label())
}

/// Opens `p` both ways of reading metadata; both must fail the same way.
#[track_caller]
fn reject_path(p: &Path) -> Error {
    let mapped = open_mode(p, ReadMode::Mmap).expect_err("must be rejected");
    let read = open_mode(p, ReadMode::Pread).expect_err("must be rejected (pread)");
    assert_eq!(mapped.to_string(), read.to_string(), "mmap and pread disagree");
    mapped
}

/// A rejected file: the directory (kept alive), its path and the error.
struct Rejected {
    _dir: Dir,
    path: PathBuf,
    err: Error,
}

#[track_caller]
fn reject(bytes: &[u8]) -> Rejected {
    let dir = Dir::new();
    let path = dir.write("bad.gguf", bytes);
    let err = reject_path(&path);
    Rejected { _dir: dir, path, err }
}

/// Where an error must point: a byte range that holds the offending field
/// (the library may name its start or the field itself), and a name.
#[track_caller]
fn assert_where(e: &Error, path: &Path, at: Range<u64>, name: Option<&str>) {
    let msg = e.to_string();
    assert_eq!(e.path(), Some(path), "{msg}");
    assert!(msg.contains(&path.display().to_string()), "message lacks the path: {msg}");
    let o = e.offset().unwrap_or_else(|| panic!("no byte offset: {msg}"));
    assert!(at.contains(&o), "offset {o} outside {at:?}: {msg}");
    assert!(msg.contains(&format!("byte {o}")), "message lacks the offset: {msg}");
    if let Some(n) = name {
        assert!(msg.contains(n), "message lacks {n:?}: {msg}");
    }
}

impl Rejected {
    #[track_caller]
    fn at(&self, at: Range<u64>, name: Option<&str>) -> &Self {
        assert_where(&self.err, &self.path, at, name);
        self
    }

    #[track_caller]
    fn kind(&self, ok: impl FnOnce(&ErrorKind) -> bool) -> &Self {
        assert!(ok(self.err.kind()), "wrong kind {:?}: {}", self.err.kind(), self.err);
        self
    }
}

/// Byte range of KV `i` of `g` as written.
fn kv_range(g: &Gguf, i: usize) -> Range<u64> {
    let (_, lay) = g.build_with_layout();
    let end = lay
        .kv_offsets
        .get(i + 1)
        .copied()
        .unwrap_or_else(|| lay.info_offsets.iter().copied().min().unwrap_or(lay.info_end));
    lay.kv_offsets[i]..end
}

/// KV `i`'s range plus the position right after it: a declared length or
/// count that ends the KV is reported where its payload would begin.
fn kv_reach(g: &Gguf, i: usize) -> Range<u64> {
    let r = kv_range(g, i);
    r.start..r.end + 1
}

/// Byte range of the tensor info of tensor `i` of `g` (infos in given order).
fn info_range(g: &Gguf, i: usize) -> Range<u64> {
    let (_, lay) = g.build_with_layout();
    let end = lay.info_offsets.iter().copied().filter(|&o| o > lay.info_offsets[i]).min().unwrap_or(lay.info_end);
    lay.info_offsets[i]..end
}

fn patch(bytes: &mut [u8], at: u64, with: &[u8]) {
    bytes[at as usize..at as usize + with.len()].copy_from_slice(with);
}

/// A model with a KV after the one under test, so it is not the file's last.
fn with_kv(key: &str, v: Val) -> Gguf {
    let g = Gguf::new().kv("general.name", Val::str("m")).kv(key, v).kv("after", Val::U8(1));
    g.tensor(Tensor::filled("w", &[8], 0, 1))
}

fn tensor(name: &str, dims: &[u64], ggml_type: u32) -> Tensor {
    // Data left empty: these tensors are never meant to be hashed.
    Tensor { name: name.as_bytes().to_vec(), dims: dims.to_vec(), ggml_type, data: Vec::new() }
}

fn with_tensor(t: Tensor) -> Gguf {
    Gguf::new().kv("general.name", Val::str("m")).tensor(Tensor::filled("a", &[8], 0, 1)).tensor(t)
}

// ------------------------------------------------------------------ header

#[test]
fn empty_file() {
    let r = reject(b"");
    r.kind(|k| matches!(k, ErrorKind::Empty));
    // Nothing to point into; the file and the reason are named.
    let msg = r.err.to_string();
    assert!(msg.contains(&r.path.display().to_string()) && msg.contains("empty"), "{msg}");
}

#[test]
fn missing_file_and_directory() {
    let d = Dir::new();
    let missing = d.path("absent.gguf");
    let e = reject_path(&missing);
    assert!(e.is_not_found(), "{e:?}");
    assert_names(&e, &[&missing]);
    let e = reject_path(d.dir.path());
    // Either wording is fine (the system's EISDIR, as sha256sum says it, or our own).
    assert!(matches!(e.kind(), ErrorKind::NotRegularFile(_) | ErrorKind::Io(_)), "{e:?}");
    assert_names(&e, &[d.dir.path()]);
}

/// Cuts a valid file at every offset up to its data start (and into its
/// data): every prefix is rejected, and the error points at or before the
/// cut and names the KV or tensor it falls in.
#[test]
fn truncation_anywhere_in_the_metadata() {
    for big_endian in [false, true] {
        let g = Gguf { big_endian, ..rich_model(&BE_TYPES) }.kv("general.alignment", Val::U32(64));
        let (bytes, lay) = g.build_with_layout();
        let kvs = lay.kv_offsets[0]..lay.info_offsets.iter().copied().min().unwrap();
        let infos = kvs.end..lay.info_end;
        let d = Dir::new();
        let path = d.write("cut.gguf", &bytes);
        // Shrinking one file in place: rewriting a file per cut is far slower
        // on ext4, which flushes a file truncated to zero and rewritten. It
        // is closed before each read: a file held open for writing is
        // refused (src/source/lease.rs).
        let mut cuts: Vec<u64> = (0..=lay.data_start).chain([lay.data_start + 1, bytes.len() as u64 - 1]).collect();
        cuts.reverse();
        for cut in cuts {
            std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(cut).unwrap();
            let e = reject_path(&path);
            let msg = e.to_string();
            assert!(
                matches!(e.kind(), ErrorKind::Empty | ErrorKind::Truncated { .. } | ErrorKind::CountTooLarge { .. })
                    || matches!(e.kind().of::<GgufErrorKind>(), Some(GgufErrorKind::TensorOutOfFile { .. })),
                "cut {cut}: {msg}"
            );
            if cut == 0 {
                continue;
            }
            // A missing field is reported where it would start: at most at the cut.
            assert_where(&e, &path, 0..cut + 1, None);
            let o = e.offset().unwrap();
            // The header's own counts are checked where the KVs would begin.
            let header_count = o == 24 && matches!(e.kind(), ErrorKind::CountTooLarge { .. });
            if kvs.contains(&o) && !header_count {
                assert!(msg.contains("KV #") || msg.contains("key '"), "cut {cut} names no KV: {msg}");
            }
            if infos.contains(&o) {
                assert!(msg.contains("tensor"), "cut {cut} names no tensor: {msg}");
            }
            if cut >= lay.info_end {
                assert!(
                    matches!(e.kind().of::<GgufErrorKind>(), Some(GgufErrorKind::TensorOutOfFile { .. })),
                    "cut {cut}: {msg}"
                );
            }
        }
    }
}

#[test]
fn truncation_inside_each_header_field() {
    let bytes = base_bytes();
    // Inside magic, version, tensor count, KV count.
    for (cut, at) in [(2, 0..1), (6, 4..5), (12, 8..9), (20, 16..17)] {
        reject(&bytes[..cut]).kind(|k| matches!(k, ErrorKind::Truncated { .. })).at(at, None);
    }
}

fn base_bytes() -> Vec<u8> {
    rich_model(&[0, 8]).build()
}

#[test]
fn bad_magic() {
    for magic in [*b"GGUG", *b"FUGG", *b"gguf", [0; 4]] {
        let mut b = base_bytes();
        patch(&mut b, 0, &magic);
        reject(&b)
            .kind(|k| matches!(k.of::<GgufErrorKind>(), Some(GgufErrorKind::BadMagic(m)) if *m == magic))
            .at(0..1, None);
    }
}

#[test]
fn unsupported_versions() {
    for (v, one) in [([0, 0, 0, 0], false), ([1, 0, 0, 0], true), ([0, 0, 0, 1], true), ([4, 0, 0, 0], false)] {
        let mut b = base_bytes();
        patch(&mut b, 4, &v);
        let r = reject(&b);
        r.at(4..5, Some("version"));
        if one {
            r.kind(|k| matches!(k.of::<GgufErrorKind>(), Some(GgufErrorKind::Version1)));
            let msg = r.err.to_string();
            assert!(msg.contains("version 1") && msg.contains("not supported"), "{msg}");
        } else {
            r.kind(
                |k| matches!(k.of::<GgufErrorKind>(), Some(GgufErrorKind::UnsupportedVersion(n)) if *n == u32::from_le_bytes(v)),
            );
        }
    }
}

#[test]
fn counts_of_u64_max_fail_fast() {
    let start = std::time::Instant::now();
    for (field, name) in [(8u64, "tensor count"), (16, "KV count")] {
        for big_endian in [false, true] {
            let g = Gguf { big_endian, ..rich_model(&[0]) };
            let mut b = g.build();
            patch(&mut b, field, &[0xff; 8]);
            // The count field itself, or where the counted entries would begin.
            reject(&b).kind(|k| matches!(k, ErrorKind::CountTooLarge { count: u64::MAX, .. })).at(8..25, Some(name));
        }
    }
    // Both large but each alone plausible: rejected, whether by a combined
    // check up front or at the first KV that is not there.
    let mut b = Gguf::new().build();
    b.extend_from_slice(&[0; 240]);
    patch(&mut b, 8, &10u64.to_le_bytes());
    patch(&mut b, 16, &17u64.to_le_bytes());
    reject(&b).kind(|k| {
        matches!(k, ErrorKind::CountTooLarge { .. } | ErrorKind::Truncated { .. })
            || matches!(k.of::<GgufErrorKind>(), Some(GgufErrorKind::EmptyKey))
    });
    assert!(start.elapsed().as_secs() < 5, "count checks must not walk the declared counts");
}

// --------------------------------------------------------------------- KVs

#[test]
fn string_length_u64_max_and_past_eof() {
    let mut len = u64::MAX.to_le_bytes().to_vec();
    len.extend_from_slice(b"abc");
    let g = with_kv("s", Val::Raw(8, len));
    reject(&g.build())
        .kind(|k| matches!(k, ErrorKind::Truncated { .. } | ErrorKind::CountTooLarge { .. }))
        .at(kv_range(&g, 1), Some("'s'"));

    // The last thing in a file without tensors: 4 bytes declared, 3 present.
    let mut len = 4u64.to_le_bytes().to_vec();
    len.extend_from_slice(b"abc");
    let g = Gguf::new().kv("general.name", Val::str("m")).kv("s", Val::Raw(8, len));
    let (b, lay) = g.build_with_layout();
    reject(&b).kind(|k| matches!(k, ErrorKind::Truncated { .. })).at(lay.kv_offsets[1]..b.len() as u64, Some("'s'"));

    // A string element of an array, and a key's own length.
    let mut arr = 8u32.to_le_bytes().to_vec();
    arr.extend_from_slice(&1u64.to_le_bytes());
    arr.extend_from_slice(&u64::MAX.to_le_bytes());
    let g = with_kv("arr", Val::Raw(9, arr));
    reject(&g.build()).at(kv_reach(&g, 1), Some("'arr'"));
    // A tensor name's length.
    let g = with_tensor(Tensor::filled("b", &[8], 0, 2));
    let (mut b, lay) = g.build_with_layout();
    patch(&mut b, lay.info_offsets[1], &u64::MAX.to_le_bytes());
    reject(&b)
        .kind(|k| matches!(k, ErrorKind::Truncated { .. } | ErrorKind::CountTooLarge { .. }))
        .at(info_range(&g, 1), Some("tensor info #1"));
    let g = with_kv("k", Val::U8(0));
    let (mut b, lay) = g.build_with_layout();
    patch(&mut b, lay.kv_offsets[1], &u64::MAX.to_le_bytes());
    reject(&b)
        .kind(|k| matches!(k, ErrorKind::Truncated { .. } | ErrorKind::CountTooLarge { .. }))
        .at(kv_range(&g, 1), Some("KV #1"));
}

#[test]
fn array_count_u64_max() {
    for elem in [0u32, 6, 7, 8, 9, 12] {
        let mut raw = elem.to_le_bytes().to_vec();
        raw.extend_from_slice(&u64::MAX.to_le_bytes());
        let g = with_kv("a", Val::Raw(9, raw));
        reject(&g.build())
            .kind(|k| matches!(k, ErrorKind::CountTooLarge { count: u64::MAX, .. }))
            .at(kv_reach(&g, 1), Some("'a'"));
    }
    // The same inside a nested array.
    let mut raw = 9u32.to_le_bytes().to_vec();
    raw.extend_from_slice(&1u64.to_le_bytes());
    raw.extend_from_slice(&4u32.to_le_bytes());
    raw.extend_from_slice(&u64::MAX.to_le_bytes());
    let g = with_kv("nested", Val::Raw(9, raw));
    reject(&g.build()).kind(|k| matches!(k, ErrorKind::CountTooLarge { .. })).at(kv_reach(&g, 1), Some("'nested'"));
}

#[test]
fn empty_key() {
    let g = with_kv("", Val::U32(1));
    reject(&g.build())
        .kind(|k| matches!(k.of::<GgufErrorKind>(), Some(GgufErrorKind::EmptyKey)))
        .at(kv_range(&g, 1), Some("KV #1"));
}

#[test]
fn duplicate_key_even_with_identical_value() {
    for second in [Val::str("m"), Val::str("other"), Val::U8(1)] {
        let g = with_kv("general.name", second);
        reject(&g.build())
            .kind(|k| matches!(k.of::<GgufErrorKind>(), Some(GgufErrorKind::DuplicateKey)))
            .at(kv_range(&g, 1), Some("general.name"));
    }
    // split. keys are keys too.
    let g = with_kv("split.count", Val::U16(1)).kv("split.count", Val::U16(1));
    reject(&g.build())
        .kind(|k| matches!(k.of::<GgufErrorKind>(), Some(GgufErrorKind::DuplicateKey)))
        .at(kv_range(&g, 3), Some("split.count"));
}

#[test]
fn duplicate_tensor_name() {
    let g = with_tensor(Tensor::filled("a", &[8], 0, 1));
    reject(&g.build())
        .kind(|k| matches!(k.of::<GgufErrorKind>(), Some(GgufErrorKind::DuplicateTensor)))
        .at(info_range(&g, 1), Some("'a'"));
    // Also the empty name, which is otherwise allowed.
    let g = Gguf::new().tensor(Tensor::filled("", &[4], 0, 1)).tensor(Tensor::filled("", &[4], 0, 2));
    reject(&g.build())
        .kind(|k| matches!(k.of::<GgufErrorKind>(), Some(GgufErrorKind::DuplicateTensor)))
        .at(info_range(&g, 1), Some("tensor"));
}

#[test]
fn unknown_value_types() {
    for t in [13u32, 255, u32::MAX] {
        let g = with_kv("bad.type", Val::Raw(t, vec![0; 8]));
        reject(&g.build())
            .kind(|k| matches!(k.of::<GgufErrorKind>(), Some(GgufErrorKind::UnknownValueType(n)) if *n == t))
            .at(kv_range(&g, 1), Some("bad.type"));
        // As the element type of an empty array, at depth 1 and 2.
        let g = with_kv("bad.elem", Val::Arr(t, vec![]));
        reject(&g.build())
            .kind(|k| matches!(k.of::<GgufErrorKind>(), Some(GgufErrorKind::UnknownValueType(n)) if *n == t))
            .at(kv_range(&g, 1), Some("bad.elem"));
        let g = with_kv("bad.nested", Val::Arr(9, vec![Val::Arr(0, vec![Val::U8(1)]), Val::Arr(t, vec![])]));
        reject(&g.build())
            .kind(|k| matches!(k.of::<GgufErrorKind>(), Some(GgufErrorKind::UnknownValueType(n)) if *n == t))
            .at(kv_range(&g, 1), Some("bad.nested"));
    }
}

/// An array nested `depth` deep whose innermost array is `inner`.
fn nest(depth: usize, inner: Val) -> Val {
    (1..depth).fold(inner, |v, _| Val::Arr(9, vec![v]))
}

#[test]
fn nesting_depth_9_is_rejected_8_is_not() {
    let ok = with_kv("deep", nest(8, Val::Arr(0, vec![Val::U8(1)])));
    let d = Dir::new();
    assert_eq!(Model::open(d.write("ok.gguf", &ok.build())).unwrap().label().unwrap(), ok.expected_label());
    // An empty array of ARRAY at depth 8 holds no array.
    let ok = with_kv("deep", nest(8, Val::Arr(9, vec![])));
    assert_eq!(Model::open(d.write("ok2.gguf", &ok.build())).unwrap().label().unwrap(), ok.expected_label());

    for inner in [Val::Arr(0, vec![Val::U8(1)]), Val::Arr(9, vec![]), Val::Arr(8, vec![])] {
        for big_endian in [false, true] {
            let g = Gguf { big_endian, ..with_kv("deep", nest(9, inner.clone())) };
            reject(&g.build())
                .kind(|k| matches!(k.of::<GgufErrorKind>(), Some(GgufErrorKind::NestingTooDeep { max: 8 })))
                .at(kv_range(&g, 1), Some("'deep'"));
        }
    }
}

#[test]
fn bool_byte_2() {
    let g = with_kv("flag", Val::Raw(7, vec![2]));
    let value_at = kv_range(&g, 1).start + 8 + 4 + 4;
    reject(&g.build())
        .kind(|k| matches!(k.of::<GgufErrorKind>(), Some(GgufErrorKind::InvalidBool(2))))
        .at(value_at..value_at + 1, Some("'flag'"));
    let g = with_kv("flags", Val::Arr(7, vec![Val::Bool(true), Val::Raw(7, vec![2])]));
    reject(&g.build())
        .kind(|k| matches!(k.of::<GgufErrorKind>(), Some(GgufErrorKind::InvalidBool(2))))
        .at(kv_range(&g, 1), Some("'flags'"));
    let g = with_kv(
        "nested",
        Val::Arr(9, vec![Val::Arr(7, vec![]), Val::Arr(7, vec![Val::Bool(false), Val::Raw(7, vec![0xff])])]),
    );
    reject(&g.build())
        .kind(|k| matches!(k.of::<GgufErrorKind>(), Some(GgufErrorKind::InvalidBool(0xff))))
        .at(kv_range(&g, 1), Some("'nested'"));
}

#[test]
fn alignment_zero_non_power_of_two_and_wrong_type() {
    for a in [0u32, 48, 3, 0x8000_0001] {
        // Padded to 32: the writer would otherwise pad to the bad value itself.
        let g = Gguf { pad_alignment: Some(32), ..with_kv("general.alignment", Val::U32(a)) };
        reject(&g.build())
            .kind(|k| matches!(k.of::<GgufErrorKind>(), Some(GgufErrorKind::AlignmentValue(n)) if *n == a))
            .at(kv_range(&g, 1), Some("general.alignment"));
    }
    for v in [Val::U64(32), Val::I32(32), Val::U16(32), Val::str("32")] {
        let g = with_kv("general.alignment", v);
        reject(&g.build())
            .kind(|k| matches!(k.of::<GgufErrorKind>(), Some(GgufErrorKind::AlignmentType(_))))
            .at(kv_range(&g, 1), Some("general.alignment"));
    }
}

#[test]
fn split_keys_that_are_not_integers() {
    for key in ["split.count", "split.no", "split.tensors.count"] {
        for v in [Val::str("2"), Val::Bool(true), Val::F32(2.0), Val::Arr(4, vec![Val::U32(2)])] {
            let g = with_kv(key, v);
            reject(&g.build())
                .kind(|k| matches!(k.of::<GgufErrorKind>(), Some(GgufErrorKind::SplitKeyType(_))))
                .at(kv_range(&g, 1), Some(key));
        }
    }
}

// ------------------------------------------------------------ tensor infos

#[test]
fn too_many_dims() {
    let g = with_tensor(tensor("t5", &[1, 1, 1, 1, 1], 0));
    reject(&g.build())
        .kind(|k| matches!(k.of::<GgufErrorKind>(), Some(GgufErrorKind::TooManyDims(5))))
        .at(info_range(&g, 1), Some("'t5'"));
    let g = with_tensor(tensor("tmax", &[], 0));
    let (mut b, lay) = g.build_with_layout();
    patch(&mut b, lay.info_offsets[1] + 8 + 4, &u32::MAX.to_le_bytes());
    reject(&b)
        .kind(|k| matches!(k.of::<GgufErrorKind>(), Some(GgufErrorKind::TooManyDims(u32::MAX))))
        .at(info_range(&g, 1), Some("'tmax'"));
}

#[test]
fn dim_and_size_overflow() {
    let big = i64::MAX as u64;
    let cases: [(&[u64], u32); 8] = [
        (&[1 << 32, 1 << 32], 24), // element count
        (&[1 << 62, 4, 0], 24),    // a later 0 does not excuse it
        (&[1 << 62], 0),           // nbytes of F32
        (&[big], 1),               // nbytes of F16
        (&[1 << 63], 24),          // a dim above i64::MAX
        (&[1, 1, u64::MAX], 24),
        // After a 0 no product overflows: only the dim's own check remains.
        (&[0, 1 << 63], 24),
        (&[32, 0, u64::MAX], 0),
    ];
    for (dims, t) in cases {
        let g = with_tensor(tensor("huge", dims, t));
        reject(&g.build())
            .kind(|k| matches!(k.of::<GgufErrorKind>(), Some(GgufErrorKind::SizeOverflow(_))))
            .at(info_range(&g, 1), Some("'huge'"));
    }
}

#[test]
fn dim_0_not_a_multiple_of_the_block() {
    for (d0, t) in [(33u64, 8u32), (16, 2), (255, 12), (64, 41), (1, 40)] {
        let g = with_tensor(tensor("q", &[d0, 2], t));
        reject(&g.build())
            .kind(
                |k| matches!(k.of::<GgufErrorKind>(), Some(GgufErrorKind::NotBlockMultiple { dim, .. }) if *dim == d0),
            )
            .at(info_range(&g, 1), Some("'q'"));
    }
}

#[test]
fn unknown_ggml_types() {
    for t in [4u32, 5, 31, 36, 38, 43, u32::MAX] {
        let g = with_tensor(tensor("odd", &[32], t));
        let r = reject(&g.build());
        r.kind(|k| matches!(k.of::<GgufErrorKind>(), Some(GgufErrorKind::UnknownGgmlType(n)) if *n == t))
            .at(info_range(&g, 1), Some("'odd'"));
        assert!(r.err.to_string().contains(&t.to_string()), "{}", r.err);
    }
}

// ------------------------------------------------------------- tensor data

#[test]
fn tensor_range_past_eof() {
    let g = with_tensor(Tensor::filled("last", &[8], 0, 3));
    let b = g.build();
    reject(&b[..b.len() - 1])
        .kind(|k| matches!(k.of::<GgufErrorKind>(), Some(GgufErrorKind::TensorOutOfFile { .. })))
        .at(info_range(&g, 1), Some("'last'"));

    for offset in [u64::MAX, u64::MAX - 31, 1 << 40] {
        let (mut b, lay) = g.build_with_layout();
        patch(&mut b, lay.info_end - 8, &offset.to_le_bytes());
        reject(&b)
            .kind(|k| matches!(k.of::<GgufErrorKind>(), Some(GgufErrorKind::TensorOutOfFile { .. })))
            .at(info_range(&g, 1), Some("'last'"));
    }
    // Zero bytes must lie inside the file too.
    let g = with_tensor(tensor("empty", &[0], 0));
    let (mut b, lay) = g.build_with_layout();
    let past = b.len() as u64 - lay.data_start + 1;
    patch(&mut b, lay.info_end - 8, &past.to_le_bytes());
    reject(&b)
        .kind(|k| matches!(k.of::<GgufErrorKind>(), Some(GgufErrorKind::TensorOutOfFile { .. })))
        .at(info_range(&g, 1), Some("'empty'"));
}

#[test]
fn overlapping_tensors() {
    for shift in [1u64, 31] {
        let g = Gguf::new().tensor(Tensor::filled("a", &[8], 0, 1)).tensor(Tensor::filled("b", &[8], 0, 2));
        let (mut b, lay) = g.build_with_layout();
        patch(&mut b, lay.info_end - 8, &(lay.offsets[0] + shift).to_le_bytes());
        let r = reject(&b);
        r.kind(|k| matches!(k.of::<GgufErrorKind>(), Some(GgufErrorKind::TensorsOverlap { .. })));
        let msg = r.err.to_string();
        assert!(msg.contains("'a'") && msg.contains("'b'"), "names both tensors: {msg}");
        r.at(lay.info_offsets[0]..lay.info_end, None);
    }
}

#[test]
fn two_huge_i8_tensors_are_rejected_not_hashed() {
    let n = 0x7FFF_FFFF_FFFF_FFC0;
    let g = Gguf::new().tensor(tensor("a", &[n], 24)).tensor(tensor("b", &[n], 24));
    let (mut b, lay) = g.build_with_layout();
    // Also with distinct stored offsets, as a writer would lay them out.
    for second in [0, n] {
        patch(&mut b, lay.info_end - 8, &second.to_le_bytes());
        reject(&b)
            .kind(|k| {
                matches!(
                    k.of::<GgufErrorKind>(),
                    Some(GgufErrorKind::TensorOutOfFile { .. } | GgufErrorKind::TensorsOverlap { .. })
                ) || matches!(k, ErrorKind::OffsetOverflow(_))
            })
            .at(lay.info_offsets[0]..lay.info_end, None);
    }
}

#[test]
fn big_endian_tensor_of_a_type_without_swap_rule() {
    let names = [
        (3, "Q4_1"),
        (6, "Q5_0"),
        (7, "Q5_1"),
        (9, "Q8_1"),
        (10, "Q2_K"),
        (11, "Q3_K"),
        (13, "Q5_K"),
        (15, "Q8_K"),
        (16, "IQ2_XXS"),
        (17, "IQ2_XS"),
        (18, "IQ3_XXS"),
        (19, "IQ1_S"),
        (20, "IQ4_NL"),
        (21, "IQ3_S"),
        (22, "IQ2_S"),
        (23, "IQ4_XS"),
        (29, "IQ1_M"),
        (34, "TQ1_0"),
        (35, "TQ2_0"),
        (41, "Q1_0"),
        (42, "Q2_0"),
    ];
    assert_eq!(names.len() + BE_TYPES.len(), ALL_TYPES.len());
    for (t, name) in names {
        assert!(!BE_TYPES.contains(&t));
        let g = Gguf { big_endian: true, ..rich_model(&[0, t]) };
        let r = reject(&g.build());
        r.kind(|k| matches!(k.of::<GgufErrorKind>(), Some(GgufErrorKind::BigEndianType(n)) if *n == name))
            .at(info_range(&g, 1), Some("'blk.1.w'"));
        assert!(r.err.to_string().contains(name), "{}", r.err);
        // Even with no bytes to convert.
        let g = Gguf { big_endian: true, ..Gguf::new().tensor(tensor("z", &[0], t)) };
        reject(&g.build())
            .kind(|k| matches!(k.of::<GgufErrorKind>(), Some(GgufErrorKind::BigEndianType(_))))
            .at(info_range(&g, 0), Some("'z'"));
        // The little-endian file of the same model is fine.
        let le = rich_model(&[0, t]);
        assert_eq!(
            Model::open(Dir::new().write("le.gguf", &le.build())).unwrap().label().unwrap(),
            le.expected_label()
        );
    }
}

// ------------------------------------------------------------------ shards

fn kv_index(g: &Gguf, key: &str) -> usize {
    g.kvs.iter().position(|(k, _)| k == key.as_bytes()).expect("key present")
}

fn three_shards() -> Vec<Gguf> {
    rich_model(&[0, 1, 8, 24, 30]).split(&[2, 1, 2])
}

#[track_caller]
fn assert_names(e: &Error, parts: &[&Path]) {
    let msg = e.to_string();
    for p in parts {
        assert!(msg.contains(&p.display().to_string()), "message lacks {}: {msg}", p.display());
    }
}

#[test]
fn missing_shard() {
    for missing in [1usize, 2] {
        let d = Dir::new();
        let paths = write_set(&d, "m", &three_shards());
        std::fs::remove_file(&paths[missing]).unwrap();
        let e = reject_path(&paths[0]);
        assert!(matches!(e.kind(), ErrorKind::MissingShard { no, count: 3, .. } if *no == missing as u64 + 1), "{e:?}");
        assert_names(&e, &[&paths[0], &paths[missing]]);
    }
}

#[test]
fn shard_with_wrong_split_count() {
    for found in [Val::U16(2), Val::U16(4), Val::U16(0), Val::I64(3_i64 << 40)] {
        let mut shards = three_shards();
        set_kv(&mut shards[2], "split.count", found);
        let d = Dir::new();
        let paths = write_set(&d, "m", &shards);
        let e = reject_path(&paths[0]);
        assert!(
            matches!(
                e.kind().of::<GgufErrorKind>(),
                Some(GgufErrorKind::ShardMismatch { key: "split.count", expected: 3, .. })
            ),
            "{e:?}"
        );
        assert_where(&e, &paths[2], kv_range(&shards[2], kv_index(&shards[2], "split.count")), Some("split.count"));
    }
}

#[test]
fn shard_with_wrong_split_no() {
    for (shard, no) in [(1usize, 0u16), (1, 2), (2, 1), (0, 1)] {
        let mut shards = three_shards();
        set_kv(&mut shards[shard], "split.no", Val::U16(no));
        let d = Dir::new();
        let paths = write_set(&d, "m", &shards);
        let e = reject_path(&paths[0]);
        assert!(
            matches!(e.kind().of::<GgufErrorKind>(), Some(GgufErrorKind::ShardMismatch { key: "split.no", found, expected }) if *found == i128::from(no) && *expected == shard as i128),
            "{e:?}"
        );
        let s = &shards[shard];
        assert_where(&e, &paths[shard], kv_range(s, kv_index(s, "split.no")), Some("split.no"));
    }
}

#[test]
fn shard_without_split_keys() {
    for key in ["split.count", "split.no"] {
        let mut shards = three_shards();
        shards[1].kvs.retain(|(k, _)| k != key.as_bytes());
        let d = Dir::new();
        let paths = write_set(&d, "m", &shards);
        let e = reject_path(&paths[0]);
        assert!(
            matches!(e.kind().of::<GgufErrorKind>(), Some(GgufErrorKind::MissingSplitKey(k)) if *k == key),
            "{e:?}"
        );
        assert_eq!(e.path(), Some(paths[1].as_path()), "{e}");
        assert_names(&e, &[&paths[1]]);
        assert!(e.to_string().contains(key), "{e}");
    }
}

#[test]
fn broken_later_shard_is_named() {
    let shards = three_shards();
    let d = Dir::new();
    let paths = write_set(&d, "m", &shards);
    let b = shards[2].build();
    std::fs::write(&paths[2], &b[..b.len() - 1]).unwrap();
    let e = reject_path(&paths[0]);
    assert!(matches!(e.kind().of::<GgufErrorKind>(), Some(GgufErrorKind::TensorOutOfFile { .. })), "{e:?}");
    assert_where(&e, &paths[2], info_range(&shards[2], 1), Some("blk.4.w"));
}

#[test]
fn tensor_in_two_shards() {
    let mut shards = three_shards();
    let copy = shards[0].tensors[1].clone();
    shards[2].tensors.insert(0, copy.clone());
    for s in &mut shards {
        set_kv(s, "split.tensors.count", Val::I32(6));
    }
    let d = Dir::new();
    let paths = write_set(&d, "m", &shards);
    let e = reject_path(&paths[0]);
    assert!(matches!(e.kind(), ErrorKind::TensorInTwoShards { .. }), "{e:?}");
    let name = String::from_utf8(copy.name).unwrap();
    assert_where(&e, &paths[2], info_range(&shards[2], 0), Some(&format!("'{name}'")));
    // The message also says where the first copy is.
    assert_names(&e, &[&paths[0]]);
}

#[test]
fn of_several_shard_errors_the_first_met_shard_by_shard_is_reported() {
    // Joining sorts the tensors by name; the error reported must still be
    // the one a reader going shard by shard (a shard's KVs, then its
    // tensors, each in file order) meets first.
    let copies = |shards: &mut Vec<Gguf>, to: usize, from: &[usize]| {
        for (k, &i) in from.iter().enumerate() {
            let t = shards[0].tensors[i].clone();
            shards[to].tensors.insert(k, t);
        }
        let total: usize = shards.iter().map(|s| s.tensors.len()).sum();
        for s in shards.iter_mut() {
            set_kv(s, "split.tensors.count", Val::I32(total as i32));
        }
    };
    let conflict =
        |shards: &mut Vec<Gguf>, to: usize| shards[to].kvs.insert(0, (b"general.name".to_vec(), Val::str("X")));
    // Two copies in the last shard, the one met first sorting last.
    let mut shards = three_shards();
    let (a, b) = (&shards[0].tensors[0].name, &shards[0].tensors[1].name);
    let order = if a > b { [0, 1] } else { [1, 0] };
    let first = String::from_utf8(shards[0].tensors[order[0]].name.clone()).unwrap();
    copies(&mut shards, 2, &order);
    let d = Dir::new();
    let paths = write_set(&d, "m", &shards);
    let e = reject_path(&paths[0]);
    assert!(matches!(e.kind(), ErrorKind::TensorInTwoShards { .. }), "{e:?}");
    assert_where(&e, &paths[2], info_range(&shards[2], 0), Some(&format!("'{first}'")));
    // A tensor copy and a conflicting key: the earlier shard's, and in one
    // shard the key.
    for (tensor_in, key_in, want_key) in [(2, 1, true), (1, 2, false), (1, 1, true)] {
        let mut shards = three_shards();
        copies(&mut shards, tensor_in, &[0]);
        conflict(&mut shards, key_in);
        let d = Dir::new();
        let paths = write_set(&d, "m", &shards);
        let e = reject_path(&paths[0]);
        let (is_key, is_tensor) = (
            matches!(e.kind().of::<GgufErrorKind>(), Some(GgufErrorKind::ConflictingKey { .. })),
            matches!(e.kind(), ErrorKind::TensorInTwoShards { .. }),
        );
        assert!(if want_key { is_key } else { is_tensor }, "{tensor_in} {key_in}: {e:?}");
        assert_eq!(e.path(), Some(paths[if want_key { key_in } else { tensor_in }].as_path()), "{e}");
    }
}

#[test]
fn key_with_two_values_in_two_shards() {
    // Another value of the same length, another length, and the same value.
    for v in [Val::str("RICH"), Val::str("rich "), Val::str("rich")] {
        let mut shards = three_shards();
        shards[1].kvs.insert(0, (b"general.name".to_vec(), v.clone()));
        let same = v == Val::str("rich");
        let d = Dir::new();
        let paths = write_set(&d, "m", &shards);
        if same {
            // Byte-identical value in two shards: fine, counted once.
            let label = Model::open(&paths[0]).unwrap().label().unwrap();
            assert_eq!(label, rich_model(&[0, 1, 8, 24, 30]).expected_label());
            continue;
        }
        let e = reject_path(&paths[0]);
        assert!(matches!(e.kind().of::<GgufErrorKind>(), Some(GgufErrorKind::ConflictingKey { .. })), "{e:?}");
        assert_where(&e, &paths[1], kv_range(&shards[1], 0), Some("general.name"));
        assert_names(&e, &[&paths[0]]);
    }
    // Same canonical bytes under another type, another value, another width.
    for v in [Val::I32(4_000_000_000u32 as i32), Val::U32(4_000_000_001), Val::U64(4_000_000_000)] {
        let mut shards = three_shards();
        shards[2].kvs.push((b"v.u32".to_vec(), v));
        let d = Dir::new();
        let paths = write_set(&d, "m", &shards);
        let e = reject_path(&paths[0]);
        assert!(matches!(e.kind().of::<GgufErrorKind>(), Some(GgufErrorKind::ConflictingKey { .. })), "{e:?}");
        let last = shards[2].kvs.len() - 1;
        assert_where(&e, &paths[2], kv_range(&shards[2], last), Some("v.u32"));
    }
}

#[test]
fn split_tensors_count_wrong() {
    for shard in 0..3 {
        for wrong in [4, 6, 0, -5] {
            let mut shards = three_shards();
            set_kv(&mut shards[shard], "split.tensors.count", Val::I32(wrong));
            let d = Dir::new();
            let paths = write_set(&d, "m", &shards);
            let e = reject_path(&paths[0]);
            assert!(
                matches!(e.kind().of::<GgufErrorKind>(), Some(GgufErrorKind::ShardMismatch { key: "split.tensors.count", found, expected: 5 }) if *found == i128::from(wrong)),
                "{e:?}"
            );
            let s = &shards[shard];
            assert_where(
                &e,
                &paths[shard],
                kv_range(s, kv_index(s, "split.tensors.count")),
                Some("split.tensors.count"),
            );
        }
    }
}

#[test]
fn later_shard_given_names_the_first() {
    let d = Dir::new();
    let paths = write_set(&d, "m", &three_shards());
    for (i, p) in paths.iter().enumerate().skip(1) {
        let e = reject_path(p);
        assert!(
            matches!(e.kind(), ErrorKind::NotFirstShard { no, count: 3, first } if *no == i as u64 + 1 && first == &paths[0]),
            "{e:?}"
        );
        assert_names(&e, &[p, &paths[0]]);
    }
    // Even when the first shard does not exist.
    std::fs::remove_file(&paths[0]).unwrap();
    let e = reject_path(&paths[1]);
    assert!(matches!(e.kind(), ErrorKind::NotFirstShard { .. }), "{e:?}");
    assert_names(&e, &[&paths[1], &paths[0]]);
}

#[test]
fn shard_with_a_name_that_does_not_match() {
    let shards = three_shards();
    let first = shards[0].build();
    let d = Dir::new();
    // No pattern at all, the wrong count, the wrong case, too few digits.
    for name in [
        "model.gguf",
        "m-00001-of-00002.gguf",
        "m-00001-of-00003.GGUF",
        "m-0001-of-0003.gguf",
        "m-00001-of-00003.gguf.bak",
    ] {
        let p = d.write(name, &first);
        let e = reject_path(&p);
        assert!(
            matches!(e.kind().of::<GgufErrorKind>(), Some(GgufErrorKind::ShardName { count: 3, .. })),
            "{name}: {e:?}"
        );
        assert_names(&e, &[&p]);
        assert!(e.to_string().contains("split.count"), "{e}");
    }
    // Given alone without joining, the same file is a model of its own.
    let p = d.path("model.gguf");
    let opts = OpenOptions { join_shards: false, ..OpenOptions::default() };
    assert_eq!(Model::open_with(&p, opts).unwrap().label().unwrap(), shards[0].expected_label());
}
