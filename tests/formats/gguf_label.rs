//! Labels of files built by the test writer: what must not change the label
//! (layout, byte order, version, stored shape, shards), what must (every
//! piece of content), hand-assembled golden skeletons, and the model
//! accessors the label is built from.
//!
//! Expected labels come from `Gguf::expected_label()` (tests/common), which
//! derives the skeleton from the spec without the library, or from skeleton
//! bytes written out by hand in the golden tests.
use crate::common;

use std::collections::HashSet;
use std::path::Path;

use common::*;
use gguf_digest::gguf::{Model, Value};
use gguf_digest::{OpenOptions, ReadMode};

fn open_with(p: &Path, join_shards: bool, read_mode: ReadMode) -> Model {
    Model::open_with(p, OpenOptions { join_shards, read_mode, ..OpenOptions::default() })
        .unwrap_or_else(|e| panic!("opens: {e}"))
}

/// Labels a file both ways of reading its metadata; they must agree.
fn label_path(p: &Path) -> String {
    let mapped = open_with(p, true, ReadMode::Mmap).label().unwrap_or_else(|e| panic!("hashes: {e}"));
    let read = open_with(p, true, ReadMode::Pread).label().unwrap_or_else(|e| panic!("hashes: {e}"));
    assert_eq!(mapped, read, "mmap and pread disagree on {}", p.display());
    // Every label test case also through a stream in odd pieces (a shard
    // of a set cannot be: its siblings are files, tested in tests/cli/stream.rs).
    if !p.to_string_lossy().contains("-of-") {
        let bytes = std::fs::read(p).expect("reads the file");
        let streamed = Model::from_source(stream::stream_source(&bytes, &stream::ODD_PIECES), OpenOptions::default())
            .and_then(|m| m.label())
            .unwrap_or_else(|e| panic!("stream of {}: {e}", p.display()));
        assert_eq!(mapped, streamed, "file and stream disagree on {}", p.display());
    }
    mapped
}

fn label_of(bytes: &[u8]) -> String {
    let d = Dir::new();
    label_path(&d.write("m.gguf", bytes))
}

/// The library's label of `g`, checked against the writer's own derivation.
#[track_caller]
fn label(g: &Gguf) -> String {
    let l = label_of(&g.build());
    assert_eq!(l, g.expected_label(), "library and spec-derived label differ");
    l
}

/// `a` and `b` are different files of one model.
#[track_caller]
fn same_model(a: &Gguf, b: &Gguf) {
    assert_ne!(a.build(), b.build(), "the two layouts must really differ");
    assert_eq!(label(a), label(b));
}

/// `a` and `b` are different models.
#[track_caller]
fn different_model(a: &Gguf, b: &Gguf) {
    assert_ne!(label(a), label(b));
}

/// A rich model plus an array whose elements sit at depth 2.
fn base() -> Gguf {
    rich_model(&[0, 1, 8, 14, 24, 30]).kv("v.depth2", Val::Arr(9, vec![Val::Arr(5, vec![Val::I32(1), Val::I32(-1)])]))
}

#[test]
fn writer_smoke_every_type_le_and_be() {
    let g = rich_model(&ALL_TYPES);
    assert_eq!(label_of(&g.build()), g.expected_label());
    let mut be = rich_model(&BE_TYPES);
    assert_eq!(label_of(&be.build()), be.expected_label());
    be.big_endian = true;
    assert_eq!(label_of(&be.build()), be.expected_label());
}

// ---------------------------------------------------------------- unchanged

#[test]
fn tensor_data_order_is_not_content() {
    let a = rich_model(&ALL_TYPES);
    let mut b = a.clone();
    b.data_order = Some((0..a.tensors.len()).rev().collect());
    same_model(&a, &b);
}

#[test]
fn tensor_info_order_is_not_content() {
    let a = rich_model(&ALL_TYPES);
    let mut b = a.clone();
    let n = a.tensors.len();
    // Interleave from both ends, so neither file nor sorted order survives.
    b.info_order = Some((0..n).map(|i| if i % 2 == 0 { i / 2 } else { n - 1 - i / 2 }).collect());
    same_model(&a, &b);
}

#[test]
fn kv_order_is_not_content() {
    let a = base();
    let mut b = a.clone();
    b.kvs.reverse();
    same_model(&a, &b);
    let mut c = a.clone();
    c.kvs.rotate_left(5);
    same_model(&a, &c);
}

#[test]
fn padding_byte_is_not_content() {
    let a = base();
    let b = Gguf { pad_byte: 0xA5, ..a.clone() };
    same_model(&a, &b);
}

#[test]
fn gaps_and_unaligned_offsets_are_not_content() {
    let a = base();
    let b = Gguf { align_data: false, gaps: vec![3, 5, 7], data_order: Some(vec![5, 3, 1, 0, 2, 4]), ..a.clone() };
    let (_, lay) = b.build_with_layout();
    assert!(lay.offsets.iter().any(|o| o % 32 != 0), "some stored offset must be unaligned: {:?}", lay.offsets);
    same_model(&a, &b);
    // Tensors that touch (one ends where the next starts) share no byte.
    let c = Gguf { align_data: false, ..a.clone() };
    let (_, lay) = c.build_with_layout();
    assert_eq!(lay.offsets[1], lay.offsets[0] + a.tensors[0].data.len() as u64);
    same_model(&a, &c);
}

#[test]
fn trailing_bytes_are_not_content() {
    let a = base();
    let b = Gguf { trailing: vec![0xEE; 77], ..a.clone() };
    same_model(&a, &b);
    // Also after a file with no tensors, whose data_start lies past the end.
    let e = Gguf::new().kv("general.name", Val::str("x"));
    let f = Gguf { trailing: vec![1, 2, 3], ..e.clone() };
    same_model(&e, &f);
}

#[test]
fn version_2_and_3_are_one_model() {
    let a = base();
    let b = Gguf { version: 2, ..a.clone() };
    same_model(&a, &b);
}

#[test]
fn trailing_unit_dims_are_not_content() {
    let one = |dims: &[u64]| {
        let mut t = Tensor::filled("w", dims, 0, 9);
        // Same data whatever the stored shape, so only the shape can differ.
        t.data = Tensor::filled("w", &[dims.iter().product::<u64>()], 0, 9).data;
        Gguf::new().kv("general.name", Val::str("shape")).tensor(t)
    };
    let n = 48;
    same_model(&one(&[n]), &one(&[n, 1]));
    same_model(&one(&[n]), &one(&[n, 1, 1]));
    same_model(&one(&[n]), &one(&[n, 1, 1, 1]));
    same_model(&one(&[n, 3]), &one(&[n, 3, 1, 1]));
    same_model(&one(&[1]), &one(&[]));
    same_model(&one(&[1]), &one(&[1, 1, 1, 1]));
    // Leading and inner 1s are part of the shape.
    different_model(&one(&[n]), &one(&[1, n]));
    different_model(&one(&[n, 3]), &one(&[n, 1, 3]));
}

#[test]
fn split_keys_in_a_single_file_are_not_content() {
    let a = base();
    for count in [Val::U16(0), Val::U16(1), Val::U32(1), Val::I64(0)] {
        let b = a
            .clone()
            .kv("split.no", Val::U16(0))
            .kv("split.count", count)
            .kv("split.tensors.count", Val::I32(a.tensors.len() as i32))
            .kv("split.anything", Val::str("layout only"));
        same_model(&a, &b);
    }
    // split.no and split.tensors.count that disagree with anything are
    // ignored when split.count says single file.
    let c = a.clone().kv("split.no", Val::U8(7)).kv("split.tensors.count", Val::U64(999));
    same_model(&a, &c);
}

#[test]
fn big_endian_twin_of_every_convertible_type() {
    for t in BE_TYPES {
        // general.alignment is a big-endian number too in the twin.
        let le = rich_model(&[t, t]).kv("general.alignment", Val::U32(if t % 2 == 0 { 64 } else { 16 }));
        let be = Gguf { big_endian: true, ..le.clone() };
        same_model(&le, &be);
        let be2 = Gguf { version: 2, ..be.clone() };
        same_model(&le, &be2);
    }
}

#[test]
fn big_endian_tensors_larger_than_one_read_chunk() {
    // Data is read in chunks of whole blocks; blocks of 210, 144 and 34
    // bytes do not divide the chunk size, so a chunk boundary that split a
    // block would swap the wrong bytes.
    let g = Gguf::new()
        .tensor(Tensor::filled("q6k", &[256 * 1300], 14, 1))
        .tensor(Tensor::filled("q4k", &[256 * 1900], 12, 2))
        .tensor(Tensor::filled("q8", &[32 * 8000], 8, 3))
        .tensor(Tensor::filled("f16", &[140_000], 1, 4));
    assert!(g.tensors.iter().all(|t| t.data.len() as u64 > gguf_digest_core::hash::CHUNK));
    assert!(g.tensors.iter().any(|t| gguf_digest_core::hash::CHUNK % type_size(t.ggml_type).unwrap().1 != 0));
    same_model(&g, &Gguf { big_endian: true, ..g.clone() });
}

#[test]
fn big_endian_data_is_converted_not_copied() {
    // A big-endian file that carries little-endian F32 bytes is another model.
    let le = Gguf::new().tensor(Tensor::filled("w", &[8], 0, 1));
    let mut wrong = Gguf { big_endian: true, ..le.clone() };
    wrong.tensors[0].data = to_big_endian(0, &le.tensors[0].data);
    assert_ne!(label_of(&wrong.build()), label(&le));
}

#[test]
fn shard_sets_join_to_the_unsplit_model() {
    let g = rich_model(&ALL_TYPES);
    let want = label(&g);
    let n = g.tensors.len();
    let sizes: [&[usize]; 6] = [&[1, n - 1], &[n - 1, 1], &[10, 10, n - 20], &[0, 5, n - 5], &[5, 0, n - 5], &[n, 0]];
    for (k, sizes) in sizes.iter().enumerate() {
        let d = Dir::new();
        let paths = write_set(&d, &format!("model{k}"), &g.split(sizes));
        assert_eq!(label_path(&paths[0]), want, "split {sizes:?}");
        assert_eq!(open_with(&paths[0], true, ReadMode::Mmap).shards().len(), sizes.len());
    }
}

/// Each open file holds one guarded map, and there are 4,096 guard slots in
/// the process: the shards of a 4,200-shard model beyond them are read with
/// `pread`, metadata and tensor data alike (the last shard's tensor is big
/// enough to be mapped if it could be), and the label does not change.
#[test]
fn shards_beyond_the_guard_slots_are_read_instead() {
    const SHARDS: usize = 4200;
    let g = Gguf::new()
        .kv("general.name", Val::str("many shards"))
        .tensor(Tensor::filled("first", &[100_000], 24, 1))
        .tensor(Tensor::filled("last", &[100_000], 24, 2));
    let want = g.expected_label();
    let mut sizes = vec![0; SHARDS];
    sizes[0] = 1;
    sizes[SHARDS - 1] = 1;
    let d = Dir::new();
    let paths = write_set(&d, "many", &g.split(&sizes));
    let model = open_with(&paths[0], true, ReadMode::Mmap);
    let maps = std::fs::read_to_string("/proc/self/maps").expect("maps");
    let dir = d.dir.path().to_string_lossy().into_owned();
    let mapped = maps.lines().filter(|l| l.contains(dir.as_str())).count();
    assert!(mapped < SHARDS, "all {mapped} shards were mapped: no fallback was exercised");
    assert_eq!(model.label().unwrap_or_else(|e| panic!("hashes: {e}")), want);
}

/// `--no-mmap` (`ReadMode::Pread`) never maps the file, for metadata or for
/// a tensor big enough to be mapped otherwise. (The default mode is not
/// checked the other way round: with the 4,200-shard test holding the guard
/// slots at the same time, it may rightly read instead.)
#[test]
fn read_mode_pread_never_maps_the_file() {
    let g = Gguf::new().tensor(Tensor::filled("big", &[300_000], 24, 3));
    let d = Dir::new();
    let p = d.write("m.gguf", &g.build());
    let name = p.to_string_lossy().into_owned();
    let model = open_with(&p, true, ReadMode::Pread);
    assert_eq!(model.label().unwrap_or_else(|e| panic!("hashes: {e}")), g.expected_label());
    let maps = std::fs::read_to_string("/proc/self/maps").expect("maps");
    assert!(!maps.lines().any(|l| l.ends_with(name.as_str())), "mapped with the model still open");
}

#[test]
fn shards_may_differ_in_version_and_byte_order() {
    let g = rich_model(&BE_TYPES);
    let want = label(&g);
    let mut shards = g.split(&[4, 0, 5, 5]);
    shards[0].big_endian = true;
    shards[1].version = 2;
    shards[2].version = 2;
    shards[2].big_endian = true;
    shards[3].pad_byte = 0x5A;
    shards[3].align_data = false;
    shards[3].gaps = vec![1, 2];
    let d = Dir::new();
    let paths = write_set(&d, "mixed", &shards);
    assert_eq!(label_path(&paths[0]), want);
}

#[test]
fn shards_use_their_own_alignment_the_model_the_joined_one() {
    // Only the first shard carries general.alignment = 64; the others pad to
    // their own default 32, and the model's recomputed offsets use 64.
    let g = base().kv("general.alignment", Val::U32(64));
    let want = label(&g);
    assert_ne!(want, label(&base().kv("general.alignment", Val::U32(32))));
    let d = Dir::new();
    let paths = write_set(&d, "aligned", &g.split(&[1, 2, 3]));
    assert_eq!(label_path(&paths[0]), want);
    let m = open_with(&paths[0], true, ReadMode::Mmap);
    assert_eq!(m.alignment(), 64);
    assert_eq!(m.shards()[1].file.alignment, 32);
}

#[test]
fn alignment_held_only_by_a_later_shard_is_the_models() {
    let g = base().kv("general.alignment", Val::U32(128));
    let want = label(&g);
    let mut shards = g.split(&[2, 4]);
    let kv = shards[0].kvs.iter().position(|(k, _)| k == b"general.alignment").unwrap();
    let moved = shards[0].kvs.remove(kv);
    shards[1].kvs.insert(0, moved);
    let d = Dir::new();
    let paths = write_set(&d, "late", &shards);
    assert_eq!(label_path(&paths[0]), want);
    let m = open_with(&paths[0], true, ReadMode::Mmap);
    assert_eq!((m.alignment(), m.shards()[0].file.alignment, m.shards()[1].file.alignment), (128, 32, 128));
}

#[test]
fn a_key_repeated_in_shards_with_the_same_value_counts_once() {
    let g = base();
    let want = label(&g);
    let mut shards = g.split(&[3, 3]);
    shards[1].kvs.insert(0, (b"general.name".to_vec(), Val::str("rich")));
    shards[1].kvs.push((b"v.nested".to_vec(), g.kvs.iter().find(|(k, _)| k == b"v.nested").unwrap().1.clone()));
    let d = Dir::new();
    let paths = write_set(&d, "rep", &shards);
    assert_eq!(label_path(&paths[0]), want);
}

#[test]
fn merged_file_is_the_unsplit_model() {
    let g = rich_model(&ALL_TYPES);
    same_model(&g, &g.merged());
    let be = rich_model(&BE_TYPES);
    same_model(&be, &Gguf { big_endian: true, ..be.merged() });
}

#[test]
fn no_join_labels_a_shard_as_its_own_model() {
    let g = base();
    let full = label(&g);
    let shards = g.split(&[2, 4]);
    let d = Dir::new();
    let paths = write_set(&d, "nj", &shards);
    for (s, p) in shards.iter().zip(&paths) {
        let m = open_with(p, false, ReadMode::Mmap);
        assert_eq!(m.shards().len(), 1);
        let own = m.label().expect("hashes");
        assert_eq!(own, s.expected_label(), "{}", p.display());
        assert_ne!(own, full);
    }
}

// ------------------------------------------------------------------ changed

#[test]
fn one_flipped_tensor_byte_changes_the_label() {
    let g = base();
    let (bytes, lay) = g.build_with_layout();
    let orig = label(&g);
    let mut seen = HashSet::from([orig]);
    for (i, t) in g.tensors.iter().enumerate() {
        for at in [0, t.data.len() / 2, t.data.len() - 1] {
            let mut flipped = bytes.clone();
            flipped[(lay.data_start + lay.offsets[i]) as usize + at] ^= 0x10;
            let l = label_of(&flipped);
            let mut h = g.clone();
            h.tensors[i].data[at] ^= 0x10;
            assert_eq!(l, h.expected_label(), "tensor {i} byte {at}");
            assert!(seen.insert(l), "tensor {i} byte {at}: label did not change");
        }
    }
}

#[test]
fn changing_one_value_of_each_type_changes_the_label() {
    let g = base();
    let changes: Vec<(&str, Val)> = vec![
        ("v.u8", Val::U8(201)),
        ("v.i8", Val::I8(-6)),
        ("v.u16", Val::U16(60001)),
        ("v.i16", Val::I16(-301)),
        ("v.u32", Val::U32(4_000_000_001)),
        ("v.i32", Val::I32(-70001)),
        ("v.f32", Val::F32(0.5)),
        ("v.bool", Val::Bool(false)),
        // Same length: only the digest of the bytes can tell.
        ("general.name", Val::str("Rich")),
        ("arr.t4", Val::Arr(4, vec![Val::U32(70000), Val::U32(70000), Val::U32(70001)])),
        ("v.u64", Val::U64(u64::MAX - 1)),
        ("v.i64", Val::I64(i64::MIN + 1)),
        ("v.f64", Val::F64(2.5)),
        // An element at depth 2, one at depth 3, and an inner array's count.
        ("v.depth2", Val::Arr(9, vec![Val::Arr(5, vec![Val::I32(1), Val::I32(-2)])])),
        (
            "v.nested",
            Val::Arr(
                9,
                vec![
                    Val::Arr(9, vec![Val::Arr(0, vec![Val::U8(1), Val::U8(2)])]),
                    Val::Arr(9, vec![Val::Arr(0, vec![])]),
                ],
            ),
        ),
        (
            "v.nested",
            Val::Arr(9, vec![Val::Arr(9, vec![Val::Arr(0, vec![Val::U8(1), Val::U8(3)])]), Val::Arr(9, vec![])]),
        ),
        // Array element type, count, and string elements.
        ("arr.t8", Val::Arr(8, vec![Val::str("tok"), Val::str("tok"), Val::str("toK")])),
        ("arr.t8", Val::Arr(8, vec![Val::str("tok"), Val::str("tok")])),
        ("v.empty_arr", Val::Arr(5, vec![])),
        // Floats are bit patterns: -0.0 is not 0.0, and NaN payloads differ.
        ("v.f32", Val::F32(-0.25)),
        ("v.f64", Val::F64(f64::from_bits(0x7ff8_0000_0000_0001))),
        // Same canonical bytes, another type.
        ("v.u32", Val::I32(4_000_000_000u32 as i32)),
        ("v.u8", Val::I8(200u8 as i8)),
        ("v.empty_str", Val::Arr(0, vec![])),
    ];
    let mut seen = HashSet::from([label(&g)]);
    let mut types_changed = HashSet::new();
    for (key, v) in changes {
        let mut h = g.clone();
        set_kv(&mut h, key, v.clone());
        assert!(seen.insert(label(&h)), "{key} = {v:?} did not change the label");
        types_changed.insert(g.kvs.iter().find(|(k, _)| k == key.as_bytes()).unwrap().1.type_id());
    }
    assert_eq!(types_changed.len(), 13, "every value type must be covered");
}

#[test]
fn zero_and_negative_zero_floats_differ() {
    let a = Gguf::new().kv("x", Val::F32(0.0));
    different_model(&a, &Gguf::new().kv("x", Val::F32(-0.0)));
    let b = Gguf::new().kv("x", Val::F64(0.0));
    different_model(&b, &Gguf::new().kv("x", Val::F64(-0.0)));
}

#[test]
fn an_added_kv_changes_the_label() {
    let g = base();
    different_model(&g, &g.clone().kv("general.description", Val::str("")));
    different_model(&g, &g.clone().kv("zzz", Val::U8(0)));
}

#[test]
fn a_renamed_tensor_changes_the_label() {
    let g = base();
    let mut h = g.clone();
    h.tensors[2].name = b"blk.2.W".to_vec();
    different_model(&g, &h);
    // A name change that keeps the sorted order, and one that moves the tensor.
    let mut i = g.clone();
    i.tensors[5].name = b"a".to_vec();
    different_model(&g, &i);
    different_model(&h, &i);
}

#[test]
fn a_changed_dim_changes_the_label() {
    // Same data bytes, same byte count: only the shape differs.
    let mk = |dims: &[u64]| {
        let data = Tensor::filled("w", &[192], 0, 3).data;
        Gguf::new().tensor(Tensor { name: b"w".to_vec(), dims: dims.to_vec(), ggml_type: 0, data })
    };
    let labels: HashSet<String> =
        [&[192][..], &[64, 3], &[3, 64], &[32, 6], &[32, 3, 2]].iter().map(|d| label(&mk(d))).collect();
    assert_eq!(labels.len(), 5);
}

#[test]
fn a_changed_ggml_type_of_the_same_size_changes_the_label() {
    let mk = |t: u32| {
        let data = Tensor::filled("w", &[64], 1, 3).data;
        Gguf::new().tensor(Tensor { name: b"w".to_vec(), dims: vec![64], ggml_type: t, data })
    };
    // F16, BF16, I16: two bytes per element each.
    let two: HashSet<String> = [1, 30, 25].into_iter().map(|t| label(&mk(t))).collect();
    assert_eq!(two.len(), 3);
    let mk4 = |t: u32| {
        let data = Tensor::filled("w", &[32], 0, 3).data;
        Gguf::new().tensor(Tensor { name: b"w".to_vec(), dims: vec![32], ggml_type: t, data })
    };
    // F32 and I32: four bytes per element.
    different_model(&mk4(0), &mk4(26));
    // Q4_0 and IQ4_NL: 18-byte blocks of 32.
    let q = |t: u32| {
        let data = Tensor::filled("w", &[64], 2, 3).data;
        Gguf::new().tensor(Tensor { name: b"w".to_vec(), dims: vec![64], ggml_type: t, data })
    };
    different_model(&q(2), &q(20));
}

#[test]
fn a_changed_alignment_changes_the_label() {
    let g = base();
    let labels: HashSet<String> = [None, Some(32), Some(64), Some(1), Some(4096)]
        .into_iter()
        .map(|a| match a {
            None => label(&g),
            Some(a) => label(&g.clone().kv("general.alignment", Val::U32(a))),
        })
        .collect();
    assert_eq!(labels.len(), 5);
}

// ----------------------------------------------------------- accepted edges

#[test]
fn odd_but_valid_inputs_are_labelled() {
    let long_key = "k".repeat(70_000);
    let g = Gguf::new()
        .kv(&long_key, Val::U8(1))
        .kv("bad.utf8", Val::Str(vec![0xff, 0xfe, b'a']))
        .kv("nul.inside", Val::Str(b"a\0b".to_vec()))
        .tensor(Tensor::filled("", &[4], 0, 1))
        .tensor(Tensor::filled(&"n".repeat(200), &[4], 0, 2))
        .tensor(Tensor { name: vec![0xc3, 0x28], dims: vec![8], ggml_type: 24, data: vec![7; 8] });
    label(&g);
    // Invalid UTF-8 is content like any other bytes.
    let mut h = g.clone();
    set_kv(&mut h, "bad.utf8", Val::Str(vec![0xff, 0xfe, b'b']));
    different_model(&g, &h);
}

#[test]
fn smallest_possible_entries_are_accepted() {
    // A 14-byte KV and a 24-byte tensor info, the least the counts are checked against.
    let kv = Gguf::new().kv("k", Val::U8(5));
    assert_eq!(kv.build().len(), 24 + 14);
    label(&kv);
    let t = Gguf::new().tensor(Tensor { name: Vec::new(), dims: Vec::new(), ggml_type: 24, data: vec![9] });
    let (b, lay) = t.build_with_layout();
    assert_eq!((lay.info_end, b.len()), (24 + 24, 64 + 1));
    label(&t);
}

#[test]
fn zero_byte_tensors_overlap_nothing() {
    // The writer puts a zero-byte tensor where the next one starts.
    let g = Gguf::new()
        .tensor(Tensor::filled("a", &[0], 0, 0))
        .tensor(Tensor::filled("b", &[8], 0, 1))
        .tensor(Tensor::filled("c", &[256, 0], 8, 0))
        .tensor(Tensor::filled("d", &[4, 0, 3], 24, 0));
    let (_, lay) = g.build_with_layout();
    assert_eq!(lay.offsets[0], lay.offsets[1]);
    label(&g);
}

#[test]
fn metadata_larger_than_the_first_read_is_labelled() {
    // Pread mode reads the first megabyte, then grows: a 3 MB string makes it grow.
    let g = Gguf::new().kv("big", Val::Str(vec![b'x'; 3 << 20])).tensor(Tensor::filled("w", &[16], 0, 4));
    label(&g);
}

#[test]
fn nesting_to_depth_8_is_labelled() {
    let mut v = Val::Arr(0, vec![Val::U8(1), Val::U8(2)]);
    for _ in 1..8 {
        v = Val::Arr(9, vec![v]);
    }
    let mut e = Val::Arr(9, vec![]);
    for _ in 1..8 {
        e = Val::Arr(9, vec![e]);
    }
    let g = Gguf::new().kv("deep", v).kv("deep.empty", e);
    label(&g);
    label(&Gguf { big_endian: true, ..g });
}

// ------------------------------------------------------------------ golden

fn sha256(b: &[u8]) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(b).into()
}

/// The library's skeleton and label of a file, which must equal `skeleton`
/// and its hash.
#[track_caller]
fn assert_golden(file: &[u8], skeleton: &[u8]) {
    let d = Dir::new();
    let p = d.write("golden.gguf", file);
    let model = open_with(&p, true, ReadMode::Mmap);
    let digest = model.digest().expect("hashes");
    assert_eq!(hex(&gguf_digest::gguf::skeleton_bytes(&model, digest.tensor_sha256())), hex(skeleton));
    assert_eq!(digest.label(), hex(&sha256(skeleton)));
    assert_eq!(label_path(&p), hex(&sha256(skeleton)));
}

#[test]
fn golden_one_uint32_kv_no_tensors() {
    let mut le = Vec::new();
    le.extend_from_slice(b"GGUF");
    le.extend_from_slice(&[3, 0, 0, 0]);
    le.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0]); // no tensors
    le.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0]); // one KV
    le.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0]);
    le.push(b'k');
    le.extend_from_slice(&[4, 0, 0, 0]); // UINT32
    le.extend_from_slice(&[7, 0, 0, 0]);
    // The same, big-endian version 2.
    let mut be = Vec::new();
    be.extend_from_slice(b"GGUF");
    be.extend_from_slice(&[0, 0, 0, 2]);
    be.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0]);
    be.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 1]);
    be.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 1]);
    be.push(b'k');
    be.extend_from_slice(&[0, 0, 0, 4]);
    be.extend_from_slice(&[0, 0, 0, 7]);

    let mut s = Vec::new();
    s.extend_from_slice(&[0x47, 0x47, 0x55, 0x46]);
    s.extend_from_slice(&[3, 0, 0, 0]);
    s.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0]); // T
    s.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0]); // K
    s.extend_from_slice(&[32, 0, 0, 0, 0, 0, 0, 0]); // A, the default
    s.extend_from_slice(&sha256(b"k"));
    s.extend_from_slice(&[4, 0, 0, 0]);
    s.extend_from_slice(&[7, 0, 0, 0]);
    assert_eq!(s.len(), 32 + 40);
    assert_golden(&le, &s);
    assert_golden(&be, &s);
}

#[test]
fn golden_one_f32_tensor() {
    let data = [0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0xc0]; // 1.0, -2.0
    let mut f = Vec::new();
    f.extend_from_slice(b"GGUF");
    f.extend_from_slice(&[3, 0, 0, 0]);
    f.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0]); // one tensor
    f.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0]); // no KVs
    f.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0]);
    f.push(b'w');
    f.extend_from_slice(&[2, 0, 0, 0]); // n_dims 2, stored [2, 1]
    f.extend_from_slice(&[2, 0, 0, 0, 0, 0, 0, 0]);
    f.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0]);
    f.extend_from_slice(&[0, 0, 0, 0]); // F32
    f.extend_from_slice(&[8, 0, 0, 0, 0, 0, 0, 0]); // stored offset 8: 8 filler bytes first
    assert_eq!(f.len(), 65);
    f.resize(96, 0xA5); // data_start = align(65, 32)
    f.extend_from_slice(&[0xA5; 8]);
    f.extend_from_slice(&data);

    let mut s = Vec::new();
    s.extend_from_slice(b"GGUF");
    s.extend_from_slice(&[3, 0, 0, 0]);
    s.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0]);
    s.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0]);
    s.extend_from_slice(&[32, 0, 0, 0, 0, 0, 0, 0]);
    s.extend_from_slice(&sha256(b"w"));
    s.extend_from_slice(&[1, 0, 0, 0]); // canonical n = 1
    s.extend_from_slice(&[2, 0, 0, 0, 0, 0, 0, 0]);
    s.extend_from_slice(&[0, 0, 0, 0]);
    s.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0]); // recomputed offset 0
    s.extend_from_slice(&sha256(&data));
    assert_eq!(s.len(), 32 + 88);
    assert_golden(&f, &s);
}

#[test]
fn golden_string_and_array_kvs_sorted() {
    let mut f = Vec::new();
    f.extend_from_slice(b"GGUF");
    f.extend_from_slice(&[2, 0, 0, 0]);
    f.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0]);
    f.extend_from_slice(&[2, 0, 0, 0, 0, 0, 0, 0]);
    // "b.arr" first in the file, ARRAY of INT16 [1, -2]
    f.extend_from_slice(&[5, 0, 0, 0, 0, 0, 0, 0]);
    f.extend_from_slice(b"b.arr");
    f.extend_from_slice(&[9, 0, 0, 0]);
    f.extend_from_slice(&[3, 0, 0, 0]);
    f.extend_from_slice(&[2, 0, 0, 0, 0, 0, 0, 0]);
    f.extend_from_slice(&[0x01, 0x00, 0xfe, 0xff]);
    // "a.str" = "hi"
    f.extend_from_slice(&[5, 0, 0, 0, 0, 0, 0, 0]);
    f.extend_from_slice(b"a.str");
    f.extend_from_slice(&[8, 0, 0, 0]);
    f.extend_from_slice(&[2, 0, 0, 0, 0, 0, 0, 0]);
    f.extend_from_slice(b"hi");

    let mut s = Vec::new();
    s.extend_from_slice(b"GGUF");
    s.extend_from_slice(&[3, 0, 0, 0]); // always 3
    s.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0]);
    s.extend_from_slice(&[2, 0, 0, 0, 0, 0, 0, 0]);
    s.extend_from_slice(&[32, 0, 0, 0, 0, 0, 0, 0]);
    s.extend_from_slice(&sha256(b"a.str"));
    s.extend_from_slice(&[8, 0, 0, 0]);
    s.extend_from_slice(&[2, 0, 0, 0, 0, 0, 0, 0]);
    s.extend_from_slice(&sha256(b"hi"));
    s.extend_from_slice(&sha256(b"b.arr"));
    s.extend_from_slice(&[9, 0, 0, 0]);
    s.extend_from_slice(&[3, 0, 0, 0]);
    s.extend_from_slice(&[2, 0, 0, 0, 0, 0, 0, 0]);
    s.extend_from_slice(&sha256(&[0x01, 0x00, 0xfe, 0xff]));
    assert_eq!(s.len(), 32 + 76 + 80);
    assert_golden(&f, &s);
}

#[test]
fn golden_recomputed_offsets_with_alignment_64() {
    let v: Vec<u8> = (0..70).collect();
    let x = [9u8, 8, 7];
    let mut f = Vec::new();
    f.extend_from_slice(b"GGUF");
    f.extend_from_slice(&[3, 0, 0, 0]);
    f.extend_from_slice(&[3, 0, 0, 0, 0, 0, 0, 0]);
    f.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0]);
    f.extend_from_slice(&[17, 0, 0, 0, 0, 0, 0, 0]);
    f.extend_from_slice(b"general.alignment");
    f.extend_from_slice(&[4, 0, 0, 0]);
    f.extend_from_slice(&[64, 0, 0, 0]);
    // Infos and data in the reverse of sorted order, at unaligned offsets.
    // "x": I8 [3] at stored offset 0.
    f.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0]);
    f.push(b'x');
    f.extend_from_slice(&[1, 0, 0, 0]);
    f.extend_from_slice(&[3, 0, 0, 0, 0, 0, 0, 0]);
    f.extend_from_slice(&[24, 0, 0, 0]);
    f.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0]);
    // "w": I8 with n_dims 0 (one element) at stored offset 3.
    f.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0]);
    f.push(b'w');
    f.extend_from_slice(&[0, 0, 0, 0]);
    f.extend_from_slice(&[24, 0, 0, 0]);
    f.extend_from_slice(&[3, 0, 0, 0, 0, 0, 0, 0]);
    // "v": I8 stored as [70, 1, 1] at stored offset 4.
    f.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0]);
    f.push(b'v');
    f.extend_from_slice(&[3, 0, 0, 0]);
    f.extend_from_slice(&[70, 0, 0, 0, 0, 0, 0, 0]);
    f.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0]);
    f.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0]);
    f.extend_from_slice(&[24, 0, 0, 0]);
    f.extend_from_slice(&[4, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(f.len(), 24 + 33 + 33 + 25 + 49);
    f.resize(192, 0); // data_start = align(164, 64)
    f.extend_from_slice(&x);
    f.push(0x55);
    f.extend_from_slice(&v);

    let mut s = Vec::new();
    s.extend_from_slice(b"GGUF");
    s.extend_from_slice(&[3, 0, 0, 0]);
    s.extend_from_slice(&[3, 0, 0, 0, 0, 0, 0, 0]);
    s.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0]);
    s.extend_from_slice(&[64, 0, 0, 0, 0, 0, 0, 0]);
    s.extend_from_slice(&sha256(b"general.alignment"));
    s.extend_from_slice(&[4, 0, 0, 0]);
    s.extend_from_slice(&[64, 0, 0, 0]);
    // Sorted: v, w, x.
    s.extend_from_slice(&sha256(b"v"));
    s.extend_from_slice(&[1, 0, 0, 0]); // [70, 1, 1] is [70]
    s.extend_from_slice(&[70, 0, 0, 0, 0, 0, 0, 0]);
    s.extend_from_slice(&[24, 0, 0, 0]);
    s.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0]);
    s.extend_from_slice(&sha256(&v));
    s.extend_from_slice(&sha256(b"w"));
    s.extend_from_slice(&[1, 0, 0, 0]); // n_dims 0 is [1]
    s.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0]);
    s.extend_from_slice(&[24, 0, 0, 0]);
    s.extend_from_slice(&[128, 0, 0, 0, 0, 0, 0, 0]); // align(0 + 70, 64)
    s.extend_from_slice(&sha256(&[0x55]));
    s.extend_from_slice(&sha256(b"x"));
    s.extend_from_slice(&[1, 0, 0, 0]);
    s.extend_from_slice(&[3, 0, 0, 0, 0, 0, 0, 0]);
    s.extend_from_slice(&[24, 0, 0, 0]);
    s.extend_from_slice(&[192, 0, 0, 0, 0, 0, 0, 0]); // align(128 + 1, 64)
    s.extend_from_slice(&sha256(&x));
    assert_eq!(s.len(), 32 + 40 + 3 * 88);
    assert_golden(&f, &s);
}

// ---------------------------------------------------------------- accessors

#[test]
fn tensor_digests_are_sha256_of_little_endian_data() {
    for big_endian in [false, true] {
        let g = Gguf { big_endian, ..rich_model(&BE_TYPES) };
        let d = Dir::new();
        let p = d.write("m.gguf", &g.build());
        let m = open_with(&p, true, ReadMode::Mmap);
        let digest = m.digest().expect("hashes");
        assert_eq!(digest.tensor_sha256().len(), g.tensors.len());
        for (t, sha) in m.tensors().iter().zip(digest.tensor_sha256()) {
            let want = g.tensors.iter().find(|w| w.name == t.info.name).expect("known tensor");
            assert_eq!(hex(sha), hex(&sha256(&want.data)), "{}", String::from_utf8_lossy(&t.info.name));
        }
        assert_eq!(digest.label(), g.expected_label());
    }
}

#[test]
fn accessors_sort_by_raw_bytes_and_recompute_offsets() {
    // Byte order, not locale or UTF-16 order: "B" < "Z" < "a" < "é" (c3 a9) < "\xff".
    let names: [&[u8]; 6] = [b"a", b"\xff", b"Z", "\u{e9}".as_bytes(), b"", b"B"];
    let mut g = Gguf::new().kv("general.alignment", Val::U32(64)).kv("split.count", Val::U16(1));
    for (i, n) in names.iter().enumerate() {
        let mut t = Tensor::filled("x", &[(i as u64 + 1) * 10], 24, i as u8);
        t.name = n.to_vec();
        g = g.tensor(t);
        if !n.is_empty() {
            g.kvs.push((n.to_vec(), Val::U32(i as u32)));
        }
    }
    g.data_order = Some(vec![3, 1, 5, 0, 4, 2]);
    let d = Dir::new();
    let p = d.write("m.gguf", &g.build());
    let m = open_with(&p, true, ReadMode::Mmap);
    assert_eq!(m.alignment(), 64);

    let keys: Vec<&[u8]> = m.kvs().iter().map(|k| k.kv.key.as_slice()).collect();
    let want_keys: Vec<&[u8]> = vec![b"B", b"Z", b"a", b"general.alignment", "\u{e9}".as_bytes(), b"\xff"];
    assert_eq!(keys, want_keys, "split.count dropped, the rest in byte order");
    for k in m.kvs() {
        let want = match g.kvs.iter().find(|(n, _)| *n == k.kv.key).map(|(_, v)| v) {
            Some(Val::U32(v)) => *v,
            other => panic!("unexpected {other:?}"),
        };
        assert_eq!(k.kv.value, Value::Uint32(want));
        assert_eq!(k.shard, 0);
    }

    let tensors: Vec<&[u8]> = m.tensors().iter().map(|t| t.info.name.as_slice()).collect();
    let want_names: Vec<&[u8]> = vec![b"", b"B", b"Z", b"a", "\u{e9}".as_bytes(), b"\xff"];
    assert_eq!(tensors, want_names);
    // Sizes by index in `names`: 10, 20, ..., 60 bytes (I8).
    let size = |n: &[u8]| (names.iter().position(|x| *x == n).unwrap() as u64 + 1) * 10;
    let mut running = 0;
    for t in m.tensors() {
        assert_eq!(t.offset, running, "{:?}", t.info.name);
        assert_eq!(t.info.nbytes, size(&t.info.name));
        running = (running + t.info.nbytes).div_ceil(64) * 64;
    }
    // Hand-computed: "" 50 bytes at 0, "B" 60 at 64, "Z" 30 at 128, "a" 10 at 192,
    // "é" 40 at 256, "\xff" 20 at 320.
    let offsets: Vec<u64> = m.tensors().iter().map(|t| t.offset).collect();
    assert_eq!(offsets, [0, 64, 128, 192, 256, 320]);
    assert_eq!(m.tensor_bytes(), 210);
    assert_eq!(m.digest().expect("hashes").label(), g.expected_label());
}

/// `Model::string_bytes` (the Python API's string values): the stored bytes
/// of every STRING KV, of either byte order, read either way, checked
/// against the digest the label binds; a byte changed since parsing is an
/// error, not a value.
#[test]
fn string_values_are_read_back_and_checked_against_their_digest() {
    let d = Dir::new();
    for (be, mode) in
        [(false, ReadMode::Mmap), (true, ReadMode::Mmap), (false, ReadMode::Pread), (true, ReadMode::Pread)]
    {
        let mut g = Gguf::new()
            .kv("a.name", Val::str("SmolLM2"))
            .kv("b.bad", Val::Str(vec![0xff, b'x']))
            .kv("c.n", Val::U32(3))
            .kv("d.long", Val::str(&"x".repeat(65)))
            .kv("e.empty", Val::str(""))
            .tensor(Tensor::filled("t", &[4], 0, 1));
        g.big_endian = be;
        let path = d.write(&format!("strings-{be}-{mode:?}.gguf"), &g.build());
        let m = open_with(&path, true, mode);
        let got: Vec<Option<Vec<u8>>> = m.kvs().iter().map(|kv| m.string_bytes(kv, 64).unwrap()).collect();
        let want = [Some(&b"SmolLM2"[..]), Some(&[0xff, b'x'][..]), None, None, Some(&b""[..])];
        assert_eq!(got, want.map(|w| w.map(<[u8]>::to_vec)), "{be} {mode:?}");
        assert_eq!(m.string_bytes(&m.kvs()[3], 65).unwrap(), Some(b"x".repeat(65)));
        // Labelled, which lets the file's read lease go (src/source/lease.rs),
        // so the writes below land at once, as where no lease is given.
        m.digest().unwrap();
        // The same length, another byte: read again, it no longer matches.
        let at = std::fs::read(&path).unwrap().windows(7).position(|w| w == b"SmolLM2").unwrap();
        let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        std::os::unix::fs::FileExt::write_all_at(&file, b"X", at as u64).unwrap();
        let e = m.string_bytes(&m.kvs()[0], 64).unwrap_err();
        assert!(matches!(e.kind(), gguf_digest::ErrorKind::FileChanged(_)), "{e}");
        let text = e.to_string();
        assert!(text.contains("a.name") && text.contains(&format!("byte {at}")), "{text}");
        // Cut short: the read itself fails, naming the key.
        file.set_len(at as u64 + 3).unwrap();
        let e = m.string_bytes(&m.kvs()[0], 64).unwrap_err();
        assert!(matches!(e.kind(), gguf_digest::ErrorKind::FileChanged(_)), "{e}");
        assert!(e.to_string().contains("a.name") && e.to_string().contains("ended early"), "{e}");
    }
}
