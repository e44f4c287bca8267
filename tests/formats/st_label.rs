//! The safetensors label: every layout of the same tensors and metadata has
//! the label derived from the logical model alone (`common::st`); every
//! change of content changes it; shard cuts, indexes and directories give
//! the unsharded file's label; every read path matches a one-shot oracle.
use crate::common;

use std::path::Path;

use common::st::*;
use common::*;
use gguf_digest::safetensors::Model;
use gguf_digest::{OpenOptions, PieceSizes, ReadMode};

fn open(path: &Path, read_mode: ReadMode, pieces: PieceSizes) -> Model {
    let opts = OpenOptions { read_mode, pieces, ..OpenOptions::default() };
    Model::open_with(path, opts).unwrap_or_else(|e| panic!("opens: {e}"))
}

fn label_of(path: &Path) -> String {
    let mut labels = Vec::new();
    for read_mode in [ReadMode::Mmap, ReadMode::Pread] {
        labels.push(open(path, read_mode, PieceSizes::default()).label().unwrap_or_else(|e| panic!("labels: {e}")));
    }
    assert_eq!(labels[0], labels[1], "both read modes");
    // Every label test case of one file also through a stream in odd pieces
    // (a set's siblings and index are files: tests/cli/stream.rs).
    let name = path.to_string_lossy();
    if !path.is_file() || name.contains("-of-") || !name.ends_with(".safetensors") {
        return labels.remove(0);
    }
    let bytes = std::fs::read(path).expect("reads the file");
    let streamed = gguf_digest::safetensors::Model::from_source(
        stream::stream_source(&bytes, &stream::ODD_PIECES),
        gguf_digest::OpenOptions::default(),
    )
    .and_then(|m| m.label())
    .unwrap_or_else(|e| panic!("stream of {}: {e}", path.display()));
    assert_eq!(labels[0], streamed, "file and stream disagree on {}", path.display());
    labels.remove(0)
}

fn label(st: &St) -> String {
    let d = Dir::new();
    label_of(&d.write("m.safetensors", &st.build()))
}

/// A model with a tensor of every dtype, a scalar, zero-size tensors,
/// non-ASCII names and metadata.
fn rich() -> St {
    let mut st = St::new().meta("format", "pt").meta("author", "zoë ✓").meta("", "empty key").meta("k\n", "");
    for (i, dtype) in ALL_DTYPES.iter().enumerate() {
        st = st.tensor(StTensor::filled(&format!("layer.{i}.{dtype}"), dtype, &[2, 12], i as u8));
    }
    st.tensor(StTensor::filled("scalar", "F32", &[], 1))
        .tensor(StTensor::filled("zero.a", "F16", &[0, 7], 2))
        .tensor(StTensor::filled("zero.b", "BF16", &[0], 3))
        .tensor(StTensor::filled("", "U8", &[3], 4))
        .tensor(StTensor::filled("émoji 🦀", "I64", &[1, 3], 5))
        .tensor(StTensor::filled("n1", "F32", &[5, 1], 6))
}

#[test]
fn label_is_the_contracts() {
    let st = rich();
    assert_eq!(label(&st), st.expected_label());
    let empty = St::new();
    assert_eq!(label(&empty), empty.expected_label());
    let no_tensors = St::new().meta("a", "b");
    assert_eq!(label(&no_tensors), no_tensors.expected_label());
}

#[test]
fn layouts_do_not_change_the_label() {
    let st = rich();
    let want = st.expected_label();
    let n = st.tensors.len();
    let reversed: Vec<usize> = (0..n).rev().collect();
    let shuffled: Vec<usize> = (0..n).map(|i| (i * 5 + 3) % n).collect();
    assert_eq!(n % 5, 3, "5 and n coprime: the shuffle is a permutation");
    let layouts = [
        St { key_order: Some(reversed.clone()), ..st.clone() },
        St { data_order: Some(shuffled.clone()), ..st.clone() },
        St { key_order: Some(shuffled), data_order: Some(reversed), metadata_last: true, ..st.clone() },
        St { pad: 7, ..st.clone() },
        St { pad: 4096, ..st.clone() },
        St { escape: true, ..st.clone() },
        St { extra_member: Some("\"note\": [1.5, -2, {\"x\": null}]".into()), ..st.clone() },
        St {
            metadata: st.metadata.clone().map(|mut m| {
                m.reverse();
                m
            }),
            ..st.clone()
        },
    ];
    for (i, l) in layouts.iter().enumerate() {
        assert_eq!(label(l), want, "layout {i}");
    }
    // Absent and empty __metadata__ are the same.
    let bare = St { metadata: None, ..st.clone() };
    assert_eq!(label(&bare), label(&St { metadata: Some(vec![]), ..st.clone() }));
}

#[test]
fn every_content_change_changes_the_label() {
    let st = St::new().meta("format", "pt").tensor(StTensor::filled("w", "F32", &[4, 2], 1));
    let base = label(&st);
    let mut changes: Vec<St> = Vec::new();
    let mut c = st.clone();
    c.tensors[0].data[5] ^= 1;
    changes.push(c);
    let mut c = st.clone();
    c.tensors[0].dtype = "I32".into();
    changes.push(c);
    let mut c = st.clone();
    c.tensors[0].shape = vec![2, 4];
    changes.push(c);
    let mut c = st.clone();
    c.tensors[0].shape = vec![4, 2, 1];
    changes.push(c);
    let mut c = st.clone();
    c.tensors[0].name = "w2".into();
    changes.push(c);
    changes.push(St { metadata: Some(vec![("format".into(), "tf".into())]), ..st.clone() });
    changes.push(St { metadata: Some(vec![("Format".into(), "pt".into())]), ..st.clone() });
    changes.push(st.clone().meta("extra", ""));
    changes.push(St { metadata: None, ..st.clone() });
    changes.push(st.clone().tensor(StTensor::filled("z", "F32", &[0], 0)));
    let mut labels = vec![base];
    for (i, c) in changes.iter().enumerate() {
        let l = label(c);
        assert_eq!(l, c.expected_label(), "change {i}");
        assert!(!labels.contains(&l), "change {i} kept a label");
        labels.push(l);
    }
}

#[test]
fn shard_cuts_with_an_index_are_the_unsharded_file() {
    let st = rich();
    let want = st.expected_label();
    let n = st.tensors.len();
    let cuts: [Vec<usize>; 4] = [vec![n], vec![1, n - 1], vec![10, 5, n - 15], vec![1; n]];
    for sizes in cuts {
        let d = Dir::new();
        let (files, index) = st.sharded("model", &sizes);
        for (name, bytes) in &files {
            d.write(name, bytes);
        }
        let index_path = d.write("model.safetensors.index.json", index.as_bytes());
        assert_eq!(label_of(&index_path), want, "index of {} shards", sizes.len());
        assert_eq!(label_of(&d.path(&files[0].0)), want, "first of {} shards", sizes.len());
        // With the index beside it, any shard names the model.
        assert_eq!(label_of(&d.path(&files[files.len() - 1].0)), want, "last of {} shards", sizes.len());
    }
}

#[test]
fn shard_sets_without_an_index_join_by_name() {
    // Each shard keeps its own __metadata__: the same map in each is one group.
    let st = rich();
    let d = Dir::new();
    let n = st.tensors.len();
    let parts = [0..5, 5..n];
    for (i, r) in parts.iter().enumerate() {
        let shard = St { tensors: st.tensors[r.clone()].to_vec(), ..st.clone() };
        d.write(&format!("m-{:05}-of-00002.safetensors", i + 1), &shard.build());
    }
    assert_eq!(label_of(&d.path("m-00001-of-00002.safetensors")), st.expected_label());
    let e = Model::open(d.path("m-00002-of-00002.safetensors")).unwrap_err().to_string();
    assert!(e.contains("m-00001-of-00002.safetensors"), "names the first shard: {e}");
    // Different metadata per shard: two groups, each tensor tied to its own.
    let d = Dir::new();
    let a = St { metadata: Some(vec![("q".into(), "int4".into())]), tensors: st.tensors[0..3].to_vec(), ..St::new() };
    let b = St { metadata: Some(vec![("q".into(), "int8".into())]), tensors: st.tensors[3..6].to_vec(), ..St::new() };
    d.write("m-00001-of-00002.safetensors", &a.build());
    d.write("m-00002-of-00002.safetensors", &b.build());
    let want = St::expected_skeleton_of(&[
        (a.metadata.clone().unwrap(), a.tensors.clone()),
        (b.metadata.clone().unwrap(), b.tensors.clone()),
    ]);
    assert_eq!(label_of(&d.path("m-00001-of-00002.safetensors")), hex(&sha(&want)));
}

#[test]
fn every_read_path_matches_the_one_shot_oracle() {
    // Unaligned data starts (header lengths 8k+1..8k+7), tensors straddling
    // tiny windows and chunks, both read modes.
    let mut st = St::new();
    for (i, (dtype, n)) in
        [("F32", 1001), ("U8", 4099), ("F6_E2M3", 4 * 333), ("F4", 2 * 777), ("C64", 129)].iter().enumerate()
    {
        st = st.tensor(StTensor::filled(&format!("t{i}"), dtype, &[*n], i as u8));
    }
    let d = Dir::new();
    for pad in 0..8 {
        let path = d.write(&format!("m{pad}.safetensors"), &St { pad, ..st.clone() }.build());
        for read_mode in [ReadMode::Mmap, ReadMode::Pread] {
            for pieces in [
                PieceSizes { window: 37, chunk: 5, min_mapped: 1 },
                PieceSizes { window: 4096, chunk: 1000, min_mapped: 1 },
                PieceSizes::default(),
            ] {
                let model = open(&path, read_mode, pieces);
                let digest = model.digest().unwrap();
                for (t, got) in model.tensors().iter().zip(digest.tensor_sha256()) {
                    let want = st.tensors.iter().find(|w| w.name == t.entry.name).unwrap();
                    assert_eq!(hex(got), hex(&sha(&want.data)), "{} pad {pad} {read_mode:?} {pieces:?}", want.name);
                }
                assert_eq!(digest.label(), st.expected_label());
            }
        }
    }
}

#[test]
fn a_safetensors_label_is_never_a_gguf_one() {
    let st = St::new();
    let d = Dir::new();
    let p = d.write("m.safetensors", &st.build());
    let model = open(&p, ReadMode::Mmap, PieceSizes::default());
    let skeleton = gguf_digest_formats::safetensors::skeleton_bytes(&model, model.digest().unwrap().tensor_sha256());
    assert_eq!(&skeleton[..4], b"SFTN");
}

#[test]
fn the_progress_bar_counts_every_file_of_the_model() {
    let st = rich();
    let d = Dir::new();
    let (files, index) = st.sharded("model", &[3, 10, st.tensors.len() - 13]);
    let total: u64 = files.iter().map(|(_, b)| b.len() as u64).sum();
    for (name, bytes) in &files {
        d.write(name, bytes);
    }
    let index_path = d.write("model.safetensors.index.json", index.as_bytes());
    assert_eq!(gguf_digest_formats::input::approximate_bytes(&index_path), total, "by index");
    assert_eq!(
        gguf_digest_formats::input::approximate_bytes(&d.path(&files[1].0)),
        total,
        "by a shard beside its index"
    );
    // A directory is labelled whole: its index is one of its files.
    assert_eq!(gguf_digest_formats::input::approximate_bytes(d.dir.path()), total + index.len() as u64, "by directory");
    let single = d.write("one.safetensors", &st.build());
    assert_eq!(gguf_digest_formats::input::approximate_bytes(&single), std::fs::metadata(&single).unwrap().len());
    let g = rich_model(&[0, 1]);
    let gd = Dir::new();
    let paths = write_set(&gd, "g", &g.split(&[1, 1]));
    let gtotal: u64 = paths.iter().map(|p| std::fs::metadata(p).unwrap().len()).sum();
    assert_eq!(gguf_digest_formats::input::approximate_bytes(&paths[0]), gtotal, "a GGUF shard set");
}
