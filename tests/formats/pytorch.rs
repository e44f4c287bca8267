//! PyTorch checkpoints through the library: every layout of one state dict
//! has the label derived from the logical state dict alone; each content
//! change changes it; every read path (map, pread, pieces of a few bytes)
//! gives the same digests; and each hostile input is an error naming the
//! file and the offset, in bounded time and memory.
use crate::common;

use std::path::Path;

use common::pt::{Layout, Pickle, PtTensor, StateDict, zip};
use common::{Dir, hex, sha};
use gguf_digest::pytorch::Model;
use gguf_digest::{OpenOptions, PieceSizes, ReadMode};
use gguf_digest_core::source::Source;

fn open_with(path: &Path, read_mode: ReadMode, pieces: PieceSizes) -> gguf_digest::Result<Model> {
    let opts = OpenOptions { read_mode, pieces, ..OpenOptions::default() };
    Model::from_source(Source::open(path, read_mode)?, opts)
}

fn label(path: &Path) -> gguf_digest::Result<String> {
    Ok(open_with(path, ReadMode::Mmap, PieceSizes::default())?.digest()?.label())
}

fn error(bytes: &[u8]) -> gguf_digest::Error {
    let d = Dir::new();
    let p = d.write("m.pt", bytes);
    match label(&p) {
        Ok(l) => panic!("labelled {l}"),
        Err(e) => e,
    }
}

fn model() -> StateDict {
    StateDict::new()
        .tensor("embed.weight", PtTensor::filled("F32", &[5, 3], 1))
        .tensor("layer.0.w", PtTensor::filled("F32", &[3, 4, 2], 2))
        .tensor("layer.0.b", PtTensor::filled("F32", &[4], 3))
        .tensor("scalar", PtTensor::filled("F32", &[], 4))
        .tensor("empty", PtTensor::filled("F32", &[0, 3], 5))
}

fn mixed() -> StateDict {
    StateDict::new()
        .tensor("h", PtTensor::filled("F16", &[3, 5], 1))
        .tensor("b", PtTensor::filled("BF16", &[7], 2))
        .tensor("d", PtTensor::filled("F64", &[2, 2], 3))
        .tensor("i", PtTensor::filled("I64", &[3], 4))
        .tensor("q", PtTensor::filled("I8", &[9], 5))
        .tensor("m", PtTensor::filled("BOOL", &[2, 3], 6))
        .tensor("c", PtTensor::filled("C64", &[2, 3], 7))
        .tensor("z", PtTensor::filled("C128", &[3], 8))
}

fn layouts() -> Vec<(&'static str, Layout)> {
    let base = Layout::default();
    vec![
        ("zip", base.clone()),
        ("zip, sizes in local headers", Layout { deferred: false, ..base.clone() }),
        (
            "zip, other folder, records reversed",
            Layout { folder: "other_name".into(), reverse_records: true, ..base.clone() },
        ),
        ("zip64", Layout { zip64: true, ..base.clone() }),
        ("zip64, sizes in local headers", Layout { zip64: true, deferred: false, ..base.clone() }),
        ("views", Layout { views: true, ..base.clone() }),
        ("big-endian", Layout { big_endian: true, ..base.clone() }),
        ("big-endian views", Layout { big_endian: true, views: true, ..base.clone() }),
        ("OrderedDict root", Layout { ordered: true, ..base.clone() }),
        ("legacy", Layout { zip: false, ..base.clone() }),
        ("legacy views", Layout { zip: false, views: true, ..base.clone() }),
    ]
}

#[test]
fn every_layout_of_one_state_dict_has_one_label() {
    let d = Dir::new();
    for sd in [model(), mixed()] {
        let want = sd.expected_label();
        for (what, layout) in layouts() {
            let p = d.write("m.pt", &sd.build(&layout));
            assert_eq!(label(&p).unwrap_or_else(|e| panic!("{what}: {e}")), want, "{what}");
        }
    }
    // One storage shared by every tensor (one dtype), with gaps: views into it.
    let sd = model();
    for zip in [true, false] {
        for views in [false, true] {
            let layout = Layout { shared: true, zip, views, ..Layout::default() };
            let p = d.write("m.pt", &sd.build(&layout));
            assert_eq!(label(&p).unwrap(), sd.expected_label(), "shared, zip {zip}, views {views}");
        }
    }
}

#[test]
fn every_read_path_and_piece_size_gives_the_same_digests() {
    let d = Dir::new();
    let sd = mixed();
    let want = sd.expected_label();
    let tiny = [
        PieceSizes { window: 1, chunk: 1, min_mapped: 0 },
        PieceSizes { window: 48, chunk: 16, min_mapped: 0 },
        PieceSizes { window: 7, chunk: 3, min_mapped: 1 << 20 },
        PieceSizes::default(),
    ];
    for (what, layout) in layouts() {
        let p = d.write("m.pt", &sd.build(&layout));
        for mode in [ReadMode::Mmap, ReadMode::Pread] {
            for pieces in tiny {
                let m = open_with(&p, mode, pieces).unwrap();
                let digest = m.digest().unwrap_or_else(|e| panic!("{what} {mode:?} {pieces:?}: {e}"));
                assert_eq!(digest.label(), want, "{what} {mode:?} {pieces:?}");
                // Every tensor's digest is the one-shot digest of its elements.
                for (leaf, got) in m.tree().tensors.iter().zip(digest.tensor_sha256()) {
                    let t = &sd.tensors.iter().find(|(n, _)| *n == leaf.path).unwrap().1;
                    assert_eq!(hex(got), hex(&sha(&t.data)), "{what} {mode:?} {pieces:?} {}", leaf.path);
                }
            }
        }
    }
}

#[test]
fn each_content_change_changes_the_label() {
    let d = Dir::new();
    let base = model();
    let label_of = |sd: &StateDict| {
        let p = d.write("c.pt", &sd.build(&Layout::default()));
        label(&p).unwrap()
    };
    let l0 = label_of(&base);
    let mut byte = base.clone();
    byte.tensors[1].1.data[5] ^= 1;
    let mut key = base.clone();
    key.tensors[0].0 = "embed.weights".into();
    let mut dtype = base.clone();
    dtype.tensors[2].1.dtype = "I32";
    let mut shape = base.clone();
    shape.tensors[0].1.shape = vec![3, 5];
    let mut meta = base.clone();
    meta.metadata = true;
    let mut fewer = base.clone();
    fewer.tensors.pop();
    for (what, sd) in [
        ("byte", byte),
        ("key", key),
        ("dtype", dtype),
        ("shape", shape),
        ("_metadata", meta),
        ("tensor dropped", fewer),
    ] {
        let l = label_of(&sd);
        assert_ne!(l, l0, "{what}");
        assert_eq!(l, sd.expected_label(), "{what}");
    }
}

#[test]
fn the_skeleton_is_the_contracts() {
    let d = Dir::new();
    let mut sd = model();
    sd.metadata = true;
    let p = d.write("m.pt", &sd.build(&Layout { ordered: true, ..Layout::default() }));
    let m = open_with(&p, ReadMode::Mmap, PieceSizes::default()).unwrap();
    let digest = m.digest().unwrap();
    let sk = gguf_digest::Labelled::skeleton(&m, digest.tensor_sha256()).unwrap();
    assert_eq!(hex(&sk), hex(&sd.expected_skeleton()));
    assert_eq!(digest.label(), hex(&sha(&sk)));
}

// ---- hostile and broken inputs ----

fn zip_of(records: &[(&str, &[u8])]) -> Vec<u8> {
    let r: Vec<(String, Vec<u8>)> = records.iter().map(|(n, b)| (n.to_string(), b.to_vec())).collect();
    zip(&r, &Layout { deferred: false, ..Layout::default() })
}

/// A one-record archive holding this pickle as `data.pkl`.
fn with_pickle(p: &[u8]) -> Vec<u8> {
    zip_of(&[("a/data.pkl", p)])
}

fn says(e: &gguf_digest::Error, words: &str) {
    assert!(e.to_string().contains(words), "{e} (wanted: {words})");
}

fn find(hay: &[u8], needle: &[u8]) -> usize {
    hay.windows(needle.len()).position(|w| w == needle).expect("needle")
}

#[test]
fn zip_local_headers_must_agree_with_the_directory() {
    let good = model().build(&Layout { deferred: false, ..Layout::default() });
    // A local header naming another record.
    let mut b = good.clone();
    let i = find(&b, b"archive/data.pkl");
    b[i + 8] = b'X';
    let e = error(&b);
    says(&e, "the local header names");
    assert_eq!(e.offset(), Some(0));
    // A local header with other sizes.
    let mut b = good.clone();
    b[18] ^= 1;
    says(&error(&b), "local header gives sizes");
    // A deflated entry.
    let mut b = good.clone();
    let cd = find(&b, b"PK\x01\x02");
    b[cd + 10] = 8;
    says(&error(&b), "method 8 (deflated)");
}

#[test]
fn zip_overlaps_duplicates_and_lying_zip64_records_are_errors() {
    let pkl = b"\x80\x02}.";
    // Two entries of one name.
    let b = zip_of(&[("a/data.pkl", pkl), ("a/data.pkl", pkl)]);
    says(&error(&b), "two entries named 'a/data.pkl'");
    // Overlapping entries: the second central entry points at the first's header.
    let mut b = zip_of(&[("a/data.pkl", pkl), ("a/xxxxxxxx", pkl)]);
    let second = find(&b, b"a/xxxxxxxx");
    let cds: Vec<usize> = b.windows(4).enumerate().filter(|(_, w)| *w == b"PK\x01\x02").map(|(i, _)| i).collect();
    let _ = second;
    b[cds[1] + 42..cds[1] + 46].copy_from_slice(&0u32.to_le_bytes());
    let e = error(&b);
    assert!(e.to_string().contains("overlap") || e.to_string().contains("local header names"), "{e}");
    // A Zip64 end record whose count disagrees with the end record's.
    let mut b = model().build(&Layout { zip64: true, ..Layout::default() });
    let z = find(&b, b"PK\x06\x06");
    b[z + 32] += 1;
    b[z + 24] += 1;
    says(&error(&b), "central directory entry #9");
    // A Zip64 end record lying about the directory's size.
    let mut b = model().build(&Layout { zip64: true, ..Layout::default() });
    b[z + 40] += 1;
    says(&error(&b), "central directory");
    // Not in one folder; TorchScript.
    says(&error(&zip_of(&[("a/data.pkl", pkl), ("b/x", b"")])), "two top-level folders");
    let e = error(&zip_of(&[("a/data.pkl", pkl), ("a/constants.pkl", pkl)]));
    says(&e, "TorchScript");
    let e = error(&zip_of(&[("a/data.pkl", pkl), ("a/code/__torch__.py", b"import os")]));
    says(&e, "runs the code");
    // torch.jit.save deflates its code entries: the archive is still named
    // as TorchScript, not refused for the compression (silero_vad.jit was).
    let mut b = zip_of(&[("a/data.pkl", pkl), ("a/code/__torch__.py", b"import os")]);
    let name = b"a/code/__torch__.py";
    let last = b.windows(name.len()).rposition(|w| w == name).expect("the central directory names it");
    let cd = last - 46;
    assert_eq!(&b[cd..cd + 4], b"PK\x01\x02");
    b[cd + 10] = 8;
    let e = error(&b);
    says(&e, "TorchScript");
}

/// A pickle of `{"w": tensor}` whose storage "0" holds `numel` F32 and whose
/// tensor reads `size`/`stride` from `offset`.
fn tensor_pickle(numel: u64, offset: u64, size: &[u64], stride: &[u64]) -> Vec<u8> {
    let mut p = Pickle::new();
    p.op(b"}(");
    p.str("w");
    p.global("torch._utils", "_rebuild_tensor_v2");
    p.op(b"((");
    p.str("storage");
    p.global("torch", "FloatStorage");
    p.str("0");
    p.str("cpu");
    p.op(&[0x8A, 8]);
    p.op(&numel.to_le_bytes());
    p.op(b"tQ");
    p.op(&[0x8A, 9]);
    p.op(&offset.to_le_bytes());
    p.op(&[0]);
    let big = |p: &mut Pickle, v: &[u64]| {
        p.op(b"(");
        for x in v {
            p.op(&[0x8A, 9]);
            p.op(&x.to_le_bytes());
            p.op(&[0]);
        }
        p.op(b"t");
    };
    big(&mut p, size);
    big(&mut p, stride);
    p.op(b"\x89N");
    p.op(b"tRu.");
    p.out
}

fn with_storage(pickle: &[u8], bytes: &[u8]) -> Vec<u8> {
    zip_of(&[("a/data.pkl", pickle), ("a/data/0", bytes)])
}

#[test]
fn tensors_outside_their_storage_overflowing_or_expanded_are_errors() {
    // The last element past the storage.
    let e = error(&with_storage(&tensor_pickle(4, 1, &[4], &[1]), &[0; 16]));
    says(&e, "lies past the end of its storage");
    assert!(e.offset().is_some());
    // A stride that overflows.
    let e = error(&with_storage(&tensor_pickle(4, 0, &[4, 2], &[u64::MAX / 2, 1]), &[0; 16]));
    says(&e, "overflows");
    // A zero-stride view asking for terabytes: the work bound.
    let e = error(&with_storage(&tensor_pickle(4, 0, &[1 << 20, 1 << 20], &[0, 0]), &[0; 16]));
    says(&e, "16 × the storages");
    assert!(matches!(e.subject(), Some(gguf_digest::Subject::Key(k)) if k == b"w"), "{:?}", e.subject());
    // A record shorter than its storage's stated size.
    says(&error(&with_storage(&tensor_pickle(4, 0, &[4], &[1]), &[0; 12])), "its record holds 12 bytes");
    // A bool that is neither 0 nor 1.
    let sd = StateDict::new().tensor("m", PtTensor { dtype: "BOOL", shape: vec![2], data: vec![1, 2] });
    says(&error(&sd.build(&Layout::default())), "0x02");
}

#[test]
fn hostile_pickles_are_errors_in_bounded_time_and_memory() {
    // Nested 10^5 deep: a list in a list in a list...
    let mut p = b"\x80\x02".to_vec();
    p.extend(std::iter::repeat_n(b']', 100_000));
    p.extend(std::iter::repeat_n(b'a', 99_999));
    p.push(b'.');
    let e = error(&with_pickle(&p));
    says(&e, "nested deeper than 1000");
    // A cycle.
    says(&error(&with_pickle(b"\x80\x02]q\x00h\x00a.")), "contains itself");
    // A BINUNICODE claiming 4 GiB.
    let e = error(&with_pickle(b"\x80\x02X\xff\xff\xff\xff"));
    says(&e, "4294967295 bytes needed");
    // A refused global, named with what loading would do.
    let e = error(&with_pickle(b"\x80\x02cos\nsystem\nX\x02\x00\x00\x00lsR."));
    says(&e, "would import and call `os.system`");
    assert!(e.offset().is_some() && e.path().is_some());
    // Bytes after STOP.
    says(&error(&with_pickle(b"\x80\x02}.N")), "after STOP");
    // One key set twice.
    says(&error(&with_pickle(b"\x80\x02}(X\x01\x00\x00\x00aK\x01U\x01aK\x02u.")), "set twice");
}

#[test]
fn costly_but_valid_pickles_are_labelled() {
    let d = Dir::new();
    // LONG_BINPUT at memo index 2^32 - 1, and a LONG1 of 255 bytes.
    let mut p = b"\x80\x02}r\xff\xff\xff\xff(X\x01\x00\x00\x00n\x8a\xff".to_vec();
    p.extend([0x01; 255]);
    p.extend(b"u.");
    let path = d.write("m.pt", &with_pickle(&p));
    let l = label(&path).unwrap();
    let mut sk = b"PTCH\x01\x00\x00\x00\x0B\x01\x00\x00\x00\x00\x00\x00\x00\x06".to_vec();
    sk.extend(sha(b"n"));
    sk.extend([0x03, 255, 0, 0, 0]);
    sk.extend([0x01; 255]);
    assert_eq!(l, hex(&sha(&sk)));
}

#[test]
fn legacy_files_must_end_with_their_storages() {
    let sd = model();
    let mut b = sd.build(&Layout { zip: false, ..Layout::default() });
    b.push(0);
    says(&error(&b), "1 bytes after the last storage");
    let b = sd.build(&Layout { zip: false, ..Layout::default() });
    let e = error(&b[..b.len() - 1]);
    says(&e, "legacy storage");
}

#[test]
fn a_legacy_pickle_claiming_more_than_the_file_is_an_error_in_both_read_modes() {
    let d = Dir::new();
    let mut b = b"\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19.\x80\x02M\xe9\x03.\x80\x02}.".to_vec();
    b.extend(b"\x80\x02X\xff\xff\xff\xff");
    b.extend(vec![b'x'; 300_000]);
    let p = d.write("m.pt", &b);
    for mode in [ReadMode::Mmap, ReadMode::Pread] {
        let e = open_with(&p, mode, PieceSizes::default()).expect_err("refused");
        says(&e, "4294967295 bytes needed");
        assert_eq!(e.offset(), Some(27), "{mode:?}: {e}");
    }
}

#[test]
fn transposed_views_in_tiles_give_the_one_shot_digests() {
    // Views whose walk is cut into tiles (a transpose: stride 1 on the
    // first dimension), with windows that hold one, a few or all of the
    // tile's rows, uneven last tiles, chunks cutting rows, and a dimension
    // of size 1 between the others.
    let d = Dir::new();
    let sd = StateDict::new()
        .tensor("a", PtTensor::filled("F32", &[37, 29], 1))
        .tensor("b", PtTensor::filled("F64", &[5, 6, 7], 2))
        .tensor("c", PtTensor::filled("BF16", &[3, 1, 40], 3))
        .tensor("m", PtTensor::filled("BOOL", &[9, 11], 4));
    let want = sd.expected_label();
    let pieces = [
        PieceSizes { window: 1, chunk: 1, min_mapped: 0 },
        PieceSizes { window: 116, chunk: 8, min_mapped: 0 },
        PieceSizes { window: 256, chunk: 24, min_mapped: 0 },
        PieceSizes { window: 1000, chunk: 40, min_mapped: 0 },
        PieceSizes { window: 4096, chunk: 4096, min_mapped: 0 },
        PieceSizes::default(),
    ];
    let views = Layout { views: true, ..Layout::default() };
    let layouts = [
        ("views", views.clone()),
        ("big-endian views", Layout { big_endian: true, ..views.clone() }),
        ("legacy views", Layout { zip: false, ..views.clone() }),
    ];
    for (what, layout) in layouts {
        let p = d.write("t.pt", &sd.build(&layout));
        for mode in [ReadMode::Mmap, ReadMode::Pread] {
            for pieces in pieces {
                let m = open_with(&p, mode, pieces).unwrap();
                let digest = m.digest().unwrap_or_else(|e| panic!("{what} {mode:?} {pieces:?}: {e}"));
                assert_eq!(digest.label(), want, "{what} {mode:?} {pieces:?}");
                for (leaf, got) in m.tree().tensors.iter().zip(digest.tensor_sha256()) {
                    let t = &sd.tensors.iter().find(|(n, _)| *n == leaf.path).unwrap().1;
                    assert_eq!(hex(got), hex(&sha(&t.data)), "{what} {mode:?} {pieces:?} {}", leaf.path);
                }
            }
        }
    }
}
