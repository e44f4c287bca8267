//! The directory label (directory-skeleton-v1): its value computed from
//! the contract's text, one label for every layout of the same files,
//! another for any change; the grouping of weights files; `--verify-blobs`
//! at the library level. Trees are written byte by byte at test time
//! (tests/common/tree.rs).

use crate::common;

use std::path::Path;

use common::st::*;
use common::tree::{self, Files, expected_label, file_component, weights_component};
use common::*;
use gguf_digest::{Error, ErrorKind, OpenOptions, ReadMode};
use gguf_digest_formats::directory;

fn label_with(dir: &Path, opts: &OpenOptions) -> Result<String, Error> {
    let m = directory::Model::open(dir, opts)?;
    Ok(m.digest()?.label())
}

/// The label, read mapped and with pread: both must agree.
#[track_caller]
fn label(dir: &Path) -> String {
    let a = label_with(dir, &OpenOptions::default()).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let pread = OpenOptions { read_mode: ReadMode::Pread, ..OpenOptions::default() };
    let b = label_with(dir, &pread).unwrap_or_else(|e| panic!("{} (pread): {e}", dir.display()));
    assert_eq!(a, b, "mmap and pread disagree");
    a
}

#[track_caller]
fn refused(dir: &Path) -> Error {
    label_with(dir, &OpenOptions::default()).expect_err("must be refused")
}

fn weights() -> St {
    St::new()
        .meta("format", "pt")
        .tensor(StTensor::filled("a", "F32", &[4, 2], 1))
        .tensor(StTensor::filled("b", "BF16", &[6], 2))
        .tensor(StTensor::filled("c", "U8", &[5], 3))
}

fn gguf_model() -> Gguf {
    rich_model(&[0, 1, 8])
}

/// A small snapshot: weights, config, tokenizer, template, a pooling
/// folder, a GGUF quantization in a folder, a README.
fn files() -> Files {
    vec![
        ("config.json".into(), br#"{"architectures":["BertModel"],"hidden_size":8}"#.to_vec()),
        ("tokenizer.json".into(), br#"{"model":{"vocab":{"a":0,"b":1}}}"#.to_vec()),
        ("tokenizer_config.json".into(), br#"{"chat_template":"{{ messages }}"}"#.to_vec()),
        ("1_Pooling/config.json".into(), br#"{"pooling_mode_mean_tokens":true}"#.to_vec()),
        ("model.safetensors".into(), weights().build()),
        ("gguf/m.Q8_0.gguf".into(), gguf_model().build()),
        ("README.md".into(), b"# A model\n".to_vec()),
    ]
}

/// The label of `files()` from the contract: every non-weights file by its
/// SHA-256, each weights model by its own label (from the writers'
/// independent oracles).
fn expected() -> String {
    let mut c: Vec<_> = files()
        .iter()
        .filter(|(n, _)| !n.ends_with(".safetensors") && !n.ends_with(".gguf"))
        .map(|(n, b)| file_component(n, b))
        .collect();
    c.push(weights_component(b"SFTN", "model", &weights().expected_label()));
    c.push(weights_component(b"GGUF", "gguf/m.Q8_0", &gguf_model().expected_label()));
    expected_label(&c)
}

#[test]
fn the_label_of_a_snapshot_is_the_contract_s() {
    let d = Dir::new();
    let dir = tree::plain(&d.path("plain"), &files());
    assert_eq!(label(&dir), expected());
}

#[test]
fn one_label_for_every_layout_of_the_same_files() {
    let d = Dir::new();
    let want = expected();
    let layouts = [
        tree::plain(&d.path("plain"), &files()),
        tree::snapshot(&d.path("hub"), "n", &files(), false),
        tree::snapshot(&d.path("xet"), "n", &files(), true),
        tree::local_dir(&d.path("local"), &files()),
        tree::git_tree(&d.path("git"), &files()),
    ];
    for dir in &layouts {
        assert_eq!(label(dir), want, "{}", dir.display());
    }
    // Re-sharded into 2 and 3 shards with an index, in a copy and in the cache.
    for sizes in [&[2, 1][..], &[1, 1, 1]] {
        let mut f: Files = files().into_iter().filter(|(n, _)| n != "model.safetensors").collect();
        let (shards, index) = weights().sharded("model", sizes);
        f.extend(shards);
        f.push(("model.safetensors.index.json".into(), index.into_bytes()));
        let n = sizes.len();
        assert_eq!(label(&tree::plain(&d.path(&format!("sharded{n}")), &f)), want, "{n} shards");
        assert_eq!(label(&tree::snapshot(&d.path(&format!("hub{n}")), "n", &f, n == 3)), want, "{n} shards, cache");
    }
}

#[test]
fn any_change_of_a_file_gives_another_label() {
    let d = Dir::new();
    let want = label(&tree::plain(&d.path("base"), &files()));
    let changed = |name: &str, edit: &dyn Fn(&mut Files)| {
        let mut f = files();
        edit(&mut f);
        let l = label(&tree::plain(&d.path(name), &f));
        assert_ne!(l, want, "{name}");
        l
    };
    let set = |file: &'static str, bytes: &'static [u8]| {
        move |f: &mut Files| f.iter_mut().find(|(n, _)| n == file).unwrap().1 = bytes.to_vec()
    };
    let a = changed("config", &set("config.json", br#"{"architectures":["BertModel"],"hidden_size":9}"#));
    let b = changed("pooling", &set("1_Pooling/config.json", br#"{"pooling_mode_mean_tokens":false}"#));
    let c = changed("template", &set("tokenizer_config.json", br#"{"chat_template":"{{ other }}"}"#));
    let e = changed("added", &|f: &mut Files| f.push(("extra.txt".into(), b"x".to_vec())));
    // A renamed file is another component.
    let g =
        changed("renamed", &|f: &mut Files| f.iter_mut().find(|(n, _)| n == "README.md").unwrap().0 = "README".into());
    // The same weights under another name: another name in the skeleton.
    let h = changed("weights-renamed", &|f: &mut Files| {
        f.iter_mut().find(|(n, _)| n == "model.safetensors").unwrap().0 = "other.safetensors".into();
    });
    let all = [want, a, b, c, e, g, h];
    for (i, x) in all.iter().enumerate() {
        assert!(all[i + 1..].iter().all(|y| y != x), "two changes share a label");
    }
}

#[test]
fn a_directory_label_never_equals_its_one_weights_file_s() {
    let d = Dir::new();
    let dir = tree::plain(&d.path("one"), &vec![("model.safetensors".into(), weights().build())]);
    let got = label(&dir);
    assert_ne!(got, weights().expected_label());
    assert_eq!(got, expected_label(&[weights_component(b"SFTN", "model", &weights().expected_label())]));
}

#[test]
fn a_weights_file_beside_an_index_and_its_shards_is_refused() {
    // The issue's sharper form: transformers would load model.safetensors
    // first, so it must not slip past an approved index.
    let d = Dir::new();
    let mut f: Files = vec![("config.json".into(), b"{}".to_vec())];
    let (shards, index) = weights().sharded("model", &[2, 1]);
    f.extend(shards);
    f.push(("model.safetensors.index.json".into(), index.into_bytes()));
    f.push(("model.safetensors".into(), St::new().tensor(StTensor::filled("z", "U8", &[1], 9)).build()));
    let e = refused(&tree::plain(&d.path("d"), &f)).to_string();
    assert!(e.contains("model: model.safetensors is not listed by its index"), "{e}");
}

#[test]
fn an_lfs_pointer_where_weights_should_be_says_so() {
    let pointer = b"version https://git-lfs.github.com/spec/v1\noid sha256:4d7a\nsize 12345\n".to_vec();
    for name in ["model.safetensors", "m.gguf", "model-00002-of-00002.safetensors"] {
        let d = Dir::new();
        let mut f: Files = vec![("config.json".into(), b"{}".to_vec())];
        if name.starts_with("model-") {
            let (shards, _) = weights().sharded("model", &[2, 1]);
            f.push(shards[0].clone());
        }
        f.push((name.into(), pointer.clone()));
        let dir = tree::plain(&d.path("d"), &f);
        let e = refused(&dir);
        assert!(matches!(e.kind(), ErrorKind::LfsPointer), "{name}: {e}");
        assert_eq!(e.path(), Some(dir.join(name).as_path()), "{name}: {e}");
        assert!(e.to_string().contains("git lfs pull"), "{e}");
    }
}

#[test]
fn verify_blobs_checks_every_file_against_its_blob() {
    let d = Dir::new();
    let verify = OpenOptions { verify_blobs: true, ..OpenOptions::default() };
    let snap = tree::snapshot(&d.path("hub"), "n", &files(), true);
    assert_eq!(label_with(&snap, &verify).unwrap(), expected(), "the label is unchanged");
    let m = directory::Model::open(&snap, &verify).unwrap();
    assert_eq!(m.audits().len(), files().len(), "every file is checked");
    // A changed byte in a git blob (SHA-1) and in an LFS blob (SHA-256).
    for (file, algorithm) in [("config.json", "Git blob SHA-1"), ("model.safetensors", "SHA-256")] {
        let d = Dir::new();
        let snap = tree::snapshot(&d.path("hub"), "n", &files(), true);
        let blob = tree::blob_of(&snap, file);
        let blob = std::fs::canonicalize(&blob).unwrap();
        flip_last_byte(&blob);
        label_with(&snap, &OpenOptions::default()).expect("without --verify-blobs the change is only another label");
        let e = label_with(&snap, &verify).expect_err("a blob that is not its name");
        assert_eq!(e.path(), Some(snap.join(file).as_path()), "{e}");
        assert!(e.to_string().contains(algorithm) && e.to_string().contains("not the name of the blob"), "{e}");
    }
}

#[test]
fn read_front_to_back_the_audits_and_the_label_are_the_same() {
    // The reader a cold file gets (pipeline.rs) runs the Git SHA-1 jobs as
    // the mapped path does, beside the tensor jobs of the same files.
    let d = Dir::new();
    let verify = OpenOptions { verify_blobs: true, ..OpenOptions::default() };
    let snap = tree::snapshot(&d.path("hub"), "n", &files(), true);
    let m = directory::Model::open(&snap, &verify).unwrap();
    let mapped = m.digest().unwrap();
    let quiet = |_: u64| Ok(());
    let pieces = gguf_digest::PieceSizes::default();
    for direct in [gguf_digest_core::pipeline::DirectReads::Auto, gguf_digest_core::pipeline::DirectReads::Always] {
        let data = gguf_digest_core::pipeline::hash_front_to_back_with(&m, &pieces, 2, direct, &quiet).unwrap();
        assert_eq!(data, mapped.tensor_sha256(), "{direct:?}");
        assert_eq!(gguf_digest_core::format::finish(&m, data).unwrap().label(), expected());
    }
    flip_last_byte(&std::fs::canonicalize(tree::blob_of(&snap, "README.md")).unwrap());
    let m = directory::Model::open(&snap, &verify).unwrap();
    let data = gguf_digest_core::pipeline::hash_front_to_back(&m, &pieces, 2, &quiet).unwrap();
    let e = gguf_digest_core::format::finish(&m, data).unwrap_err();
    assert!(e.to_string().contains("Git blob SHA-1"), "{e}");
}
