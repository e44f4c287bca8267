//! A directory argument through the binary (directory-skeleton-v1,
//! docs/adr/0023): its label and `--json` entry, every bad input of issue
//! #25's "Bad input and safety" (exit 2, the argument and the file named,
//! the other arguments still labelled, nothing outside opened), and
//! `--verify-blobs` on a cache snapshot.

use crate::common;

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use common::st::*;
use common::tree::{self, Files, expected_label, file_component, weights_component};
use common::*;

fn weights() -> St {
    St::new().meta("format", "pt").tensor(StTensor::filled("a", "F32", &[4, 2], 1)).tensor(StTensor::filled(
        "b",
        "U8",
        &[5],
        2,
    ))
}

fn files() -> Files {
    vec![
        ("config.json".into(), br#"{"hidden_size":8}"#.to_vec()),
        ("tokenizer_config.json".into(), br#"{"chat_template":"{{ messages }}"}"#.to_vec()),
        ("model.safetensors".into(), weights().build()),
    ]
}

fn expected() -> String {
    let mut c: Vec<_> = files()[..2].iter().map(|(n, b)| file_component(n, b)).collect();
    c.push(weights_component(b"SFTN", "model", &weights().expected_label()));
    expected_label(&c)
}

fn gd(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let o = gd_in(dir, args);
    (o.status.code(), text(&o.stdout), text(&o.stderr))
}

#[test]
fn a_directory_argument_gets_the_directory_label() {
    let d = Dir::new();
    tree::plain(&d.path("plain"), &files());
    tree::snapshot(&d.path("hub"), "n", &files(), true);
    let snap = "hub/models--org--n/snapshots/0123456789abcdef0123456789abcdef01234567";
    let (code, out, err) = gd(&d.path(""), &["plain", snap, "plain/model.safetensors"]);
    assert_eq!(code, Some(0), "{err}");
    let want = expected();
    assert_eq!(
        out,
        format!("{want}  plain\n{want}  {snap}\n{}  plain/model.safetensors\n", weights().expected_label())
    );
    // The label the binary prints for the weights file alone is the
    // weights component's digest.
    let alone = gd(&d.path(""), &["plain/model.safetensors"]).1;
    let mut c: Vec<_> = files()[..2].iter().map(|(n, b)| file_component(n, b)).collect();
    c.push(weights_component(b"SFTN", "model", &alone[..64]));
    assert_eq!(expected_label(&c), want);
}

#[test]
fn the_json_entry_lists_every_component() {
    let d = Dir::new();
    tree::plain(&d.path("plain"), &files());
    let (code, out, err) = gd(&d.path(""), &["--json", "plain"]);
    assert_eq!(code, Some(0), "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let entry = &doc["files"][0];
    assert_eq!(entry["format"], "directory");
    assert_eq!(entry["spec"], "directory-skeleton-v1");
    assert_eq!(entry["label"], expected());
    let comps = entry["components"].as_array().unwrap();
    let got: Vec<(String, String)> =
        comps.iter().map(|c| (c["kind"].as_str().unwrap().into(), c["name"].as_str().unwrap().into())).collect();
    let want = [("FILE", "config.json"), ("FILE", "tokenizer_config.json"), ("SFTN", "model")];
    assert_eq!(got, want.map(|(k, n)| (k.to_string(), n.to_string())));
    assert_eq!(comps[2]["digest"], weights().expected_label());
    assert_eq!(comps[0]["digest"], hex(&sha(&files()[0].1)));
    assert_eq!(comps[2]["files"][0]["path"], "model.safetensors");
}

/// A bad directory between two good arguments: exit 2, one stderr line
/// naming the argument and then `file` in it (or the argument alone when
/// `file` is empty) and saying `says`; both good arguments labelled.
#[track_caller]
fn refused_between_good_ones(top: &Path, bad: &str, file: &str, says: &str) {
    if !top.join("good").exists() {
        tree::plain(&top.join("good"), &files());
        std::fs::write(top.join("alone.safetensors"), weights().build()).unwrap();
    }
    let (code, out, err) = gd(top, &["good", bad, "alone.safetensors"]);
    assert_eq!(code, Some(2), "{bad}: {out}{err}");
    assert_eq!(out, format!("{}  good\n{}  alone.safetensors\n", expected(), weights().expected_label()), "{bad}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{bad}: {err}");
    let named =
        if file.is_empty() { format!("gguf-digest: {bad}: ") } else { format!("gguf-digest: {bad}: {bad}/{file}: ") };
    assert!(lines[0].starts_with(&named), "{bad}: wanted {named:?}: {}", lines[0]);
    assert!(lines[0].contains(says), "{bad}: wanted {says:?}: {}", lines[0]);
}

/// `top/bad` holding `files()` and whatever `make` adds.
fn bad_dir(top: &Path, make: impl FnOnce(&Path)) -> PathBuf {
    let dir = tree::plain(&top.join("bad"), &files());
    make(&dir);
    dir
}

/// Outside the root: a FIFO, which no open of it could mistake for a
/// model: an error naming a FIFO would mean it was opened.
fn outside_fifo(top: &Path) {
    std::fs::create_dir_all(top.join("outside")).unwrap();
    mkfifo(&top.join("outside/f.safetensors"));
}

#[test]
fn a_link_leading_outside_the_root_is_refused_unopened() {
    let d = Dir::new();
    outside_fifo(&d.path(""));
    bad_dir(&d.path(""), |b| symlink("../outside/f.safetensors", b.join("x.safetensors")).unwrap());
    refused_between_good_ones(&d.path(""), "bad", "x.safetensors", "leads outside");
    // Absolute, and out and back in again through the parent: each step is
    // checked where it lands.
    let d = Dir::new();
    outside_fifo(&d.path(""));
    let abs = d.path("outside/f.safetensors");
    bad_dir(&d.path(""), |b| symlink(&abs, b.join("x.safetensors")).unwrap());
    refused_between_good_ones(&d.path(""), "bad", "x.safetensors", "leads outside");
}

#[test]
fn a_snapshot_link_leading_outside_the_repository_or_its_blobs_is_refused() {
    let d = Dir::new();
    let snap = tree::snapshot(&d.path("hub"), "n", &files(), false);
    outside_fifo(&d.path("hub"));
    symlink("../../../../outside/f.safetensors", snap.join("x.safetensors")).unwrap();
    let arg = "hub/models--org--n/snapshots/0123456789abcdef0123456789abcdef01234567";
    refused_between_good_ones(&d.path(""), arg, "x.safetensors", "leads outside");
    // Inside the repository but in another snapshot: not a blob.
    std::fs::remove_file(snap.join("x.safetensors")).unwrap();
    let other = d.path("hub/models--org--n/snapshots/other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("x.txt"), b"x").unwrap();
    symlink("../other/x.txt", snap.join("x.txt")).unwrap();
    refused_between_good_ones(&d.path(""), arg, "x.txt", "leads outside");
    // A Xet-style link in blobs/ when the cache has no marked shared store.
    std::fs::remove_file(snap.join("x.txt")).unwrap();
    std::fs::create_dir_all(d.path("hub/blobs")).unwrap();
    std::fs::write(d.path("hub/blobs/abc"), b"x").unwrap();
    symlink("../../blobs/abc", d.path("hub/models--org--n/blobs/abc")).unwrap();
    symlink("../../blobs/abc", snap.join("y.txt")).unwrap();
    refused_between_good_ones(&d.path(""), arg, "y.txt", "leads outside");
}

#[test]
fn a_dangling_link_is_refused() {
    let d = Dir::new();
    bad_dir(&d.path(""), |b| symlink("gone.json", b.join("x.json")).unwrap());
    refused_between_good_ones(&d.path(""), "bad", "x.json", "dangling symbolic link");
}

#[test]
fn a_link_loop_is_refused() {
    let d = Dir::new();
    bad_dir(&d.path(""), |b| {
        symlink("b", b.join("a")).unwrap();
        symlink("a", b.join("b")).unwrap();
    });
    refused_between_good_ones(&d.path(""), "bad", "a", "loop of symbolic links");
    // More than 40 steps, none met twice.
    let d = Dir::new();
    bad_dir(&d.path(""), |b| {
        std::fs::write(b.join("end"), b"x").unwrap();
        symlink("end", b.join("l41")).unwrap();
        for i in (0..41).rev() {
            symlink(format!("l{}", i + 1), b.join(format!("l{i}"))).unwrap();
        }
    });
    refused_between_good_ones(&d.path(""), "bad", "l0", "loop of symbolic links");
}

#[test]
fn a_link_to_a_directory_or_through_one_is_refused() {
    let d = Dir::new();
    bad_dir(&d.path(""), |b| {
        std::fs::create_dir(b.join("sub")).unwrap();
        symlink("sub", b.join("linked")).unwrap();
    });
    refused_between_good_ones(&d.path(""), "bad", "linked", "link to a directory");
    let d = Dir::new();
    bad_dir(&d.path(""), |b| {
        std::fs::create_dir(b.join(".hidden")).unwrap();
        std::fs::write(b.join(".hidden/f"), b"x").unwrap();
        // Through a skipped entry's link: not passed through.
        symlink(".hidden", b.join(".git")).unwrap();
        symlink(".git/f", b.join("through")).unwrap();
    });
    refused_between_good_ones(&d.path(""), "bad", "through", "passes through a link");
}

#[test]
fn a_fifo_or_socket_is_refused() {
    let d = Dir::new();
    bad_dir(&d.path(""), |b| mkfifo(&b.join("pipe")));
    refused_between_good_ones(&d.path(""), "bad", "pipe", "not a regular file (a FIFO)");
    let d = Dir::new();
    let dir = bad_dir(&d.path(""), |_| {});
    let _socket = std::os::unix::net::UnixListener::bind(dir.join("sock")).unwrap();
    refused_between_good_ones(&d.path(""), "bad", "sock", "not a regular file (a socket)");
}

#[test]
fn a_directory_with_no_file_is_refused() {
    let d = Dir::new();
    std::fs::create_dir_all(d.path("bad/empty/deeper")).unwrap();
    std::fs::create_dir_all(d.path("bad/.git")).unwrap();
    std::fs::write(d.path("bad/.git/HEAD"), b"x").unwrap();
    std::fs::write(d.path("bad/.gitattributes"), b"x").unwrap();
    refused_between_good_ones(&d.path(""), "bad", "", "holds no file");
}

fn sharded(top: &Path, sizes: &[usize], edit: impl FnOnce(&mut Files, &mut String)) {
    let mut f: Files = vec![("config.json".into(), b"{}".to_vec())];
    let (shards, mut index) = weights().sharded("model", sizes);
    f.extend(shards);
    edit(&mut f, &mut index);
    if !index.is_empty() {
        f.push(("model.safetensors.index.json".into(), index.into_bytes()));
    }
    tree::plain(&top.join("bad"), &f);
}

#[test]
fn an_index_naming_a_file_outside_its_directory_is_refused() {
    let d = Dir::new();
    outside_fifo(&d.path(""));
    sharded(&d.path(""), &[1, 1], |_, index| {
        *index = index.replace("model-00002-of-00002.safetensors", "../outside/f.safetensors");
    });
    refused_between_good_ones(&d.path(""), "bad", "model.safetensors.index.json", "path separator");
}

#[test]
fn an_index_naming_a_file_that_does_not_exist_is_refused() {
    let d = Dir::new();
    sharded(&d.path(""), &[1, 1], |f, _| f.retain(|(n, _)| n != "model-00002-of-00002.safetensors"));
    refused_between_good_ones(
        &d.path(""),
        "bad",
        "",
        "model: its index lists model-00002-of-00002.safetensors, which is not a file",
    );
}

#[test]
fn a_shard_set_with_a_shard_missing_is_refused() {
    let d = Dir::new();
    sharded(&d.path(""), &[1, 1], |f, index| {
        index.clear();
        f.retain(|(n, _)| n != "model-00002-of-00002.safetensors");
    });
    refused_between_good_ones(&d.path(""), "bad", "", "model: shard set of 2 is incomplete: missing 00002");
}

#[test]
fn a_single_file_beside_shards_of_its_name_is_refused() {
    let d = Dir::new();
    sharded(&d.path(""), &[1, 1], |f, index| {
        index.clear();
        f.push(("model.safetensors".into(), weights().build()));
    });
    refused_between_good_ones(&d.path(""), "bad", "", "model: model.safetensors lies beside shards");
}

/// `model.safetensors` holding some tensors beside an index that lists it
/// and a shard with the rest: `transformers` loads `model.safetensors`
/// alone, so this is no label (contract §3.1, revision 2; issue #31,
/// item 1), where it used to get the complete model's label.
#[test]
fn a_partial_single_file_beside_its_index_is_refused() {
    let d = Dir::new();
    sharded(&d.path(""), &[1, 1], |f, index| {
        for (n, _) in f.iter_mut() {
            if n == "model-00001-of-00002.safetensors" {
                *n = "model.safetensors".into();
            }
        }
        *index = index.replace("model-00001-of-00002.safetensors", "model.safetensors");
    });
    refused_between_good_ones(
        &d.path(""),
        "bad",
        "",
        "model: model.safetensors lies beside its index, which also lists model-00002-of-00002.safetensors: \
         transformers loads model.safetensors alone",
    );
    // --check of the complete model's label is no OK.
    let sums = format!(
        "{}  bad\n",
        expected_label(&[
            file_component("config.json", b"{}"),
            weights_component(b"SFTN", "model", &weights().expected_label()),
        ])
    );
    std::fs::write(d.path("sums"), sums).unwrap();
    let (code, out, _) = gd(&d.path(""), &["--check", "sums"]);
    assert_ne!(code, Some(0), "{out}");
    assert!(out.starts_with("bad: FAILED"), "{out}");
    // Listed alone by its index, it is the model.
    let d = Dir::new();
    sharded(&d.path(""), &[2], |f, index| {
        for (n, _) in f.iter_mut() {
            if n == "model-00001-of-00001.safetensors" {
                *n = "model.safetensors".into();
            }
        }
        *index = index.replace("model-00001-of-00001.safetensors", "model.safetensors");
    });
    let (code, out, err) = gd(&d.path(""), &["bad"]);
    assert_eq!(code, Some(0), "{err}");
    let want = expected_label(&[
        file_component("config.json", b"{}"),
        weights_component(b"SFTN", "model", &weights().expected_label()),
    ]);
    assert_eq!(out, format!("{want}  bad\n"));
}

/// Version-control entries are skipped only directly in the root (contract
/// §2, revision 2; issue #31, item 2): a `.git` planted below it is content,
/// so `--check` of the label recorded without it fails.
#[test]
fn a_git_entry_below_the_root_is_content() {
    let d = Dir::new();
    let dir = tree::plain(&d.path("m"), &files());
    std::fs::create_dir_all(dir.join(".git")).unwrap();
    std::fs::write(dir.join(".git/config"), b"[core]\n").unwrap();
    std::fs::write(dir.join(".gitattributes"), b"* -text\n").unwrap();
    let (code, out, err) = gd(&d.path(""), &["m"]);
    assert_eq!((code, out.clone()), (Some(0), format!("{}  m\n", expected())), "root entries are skipped: {err}");
    std::fs::write(d.path("sums"), &out).unwrap();
    std::fs::create_dir_all(dir.join("sub/.git")).unwrap();
    let planted = b"[core]\n\tfsmonitor = ./hook\n";
    std::fs::write(dir.join("sub/.git/config"), planted).unwrap();
    let (code, out, _) = gd(&d.path(""), &["--check", "sums"]);
    assert_eq!((code, out.as_str()), (Some(1), "m: FAILED\n"));
    let mut c: Vec<_> = files()[..2].iter().map(|(n, b)| file_component(n, b)).collect();
    c.push(weights_component(b"SFTN", "model", &weights().expected_label()));
    c.push(file_component("sub/.git/config", planted));
    let (code, out, err) = gd(&d.path(""), &["m"]);
    assert_eq!((code, out), (Some(0), format!("{}  m\n", expected_label(&c))), "{err}");
}

#[test]
fn a_git_lfs_pointer_where_weights_should_be_is_refused_saying_so() {
    let d = Dir::new();
    let pointer = b"version https://git-lfs.github.com/spec/v1\noid sha256:4d7a\nsize 12345\n";
    bad_dir(&d.path(""), |b| std::fs::write(b.join("model.safetensors"), pointer).unwrap());
    refused_between_good_ones(&d.path(""), "bad", "model.safetensors", "is a Git LFS pointer");
    refused_between_good_ones(&d.path(""), "bad", "model.safetensors", "`git lfs pull` fetches the file");
}

const SNAP: &str = "hub/models--org--n/snapshots/0123456789abcdef0123456789abcdef01234567";

#[test]
fn verify_blobs_passes_an_intact_snapshot_and_warns_of_partial_downloads() {
    let d = Dir::new();
    tree::snapshot(&d.path("hub"), "n", &files(), true);
    std::fs::write(d.path("hub/models--org--n/blobs/1234.incomplete"), b"part").unwrap();
    let (code, out, err) = gd(&d.path(""), &["--verify-blobs", SNAP]);
    assert_eq!((code, out), (Some(0), format!("{}  {SNAP}\n", expected())), "{err}");
    assert!(err.contains("warning") && err.contains("1234.incomplete") && err.contains("partial download"), "{err}");
    let (code, out, _) = gd(&d.path(""), &["--verify-blobs", "--json", SNAP]);
    assert_eq!(code, Some(0));
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["files"][0]["blobs_verified"], 3);
    let partial = doc["files"][0]["incomplete_blobs"][0].as_str().unwrap();
    assert!(partial.ends_with("models--org--n/blobs/1234.incomplete"), "{partial}");
}

#[test]
fn verify_blobs_names_a_file_whose_blob_is_not_its_name() {
    for (file, algorithm) in [("config.json", "Git blob SHA-1"), ("model.safetensors", "SHA-256")] {
        let d = Dir::new();
        let snap = tree::snapshot(&d.path("hub"), "n", &files(), file == "model.safetensors");
        flip_last_byte(&std::fs::canonicalize(tree::blob_of(&snap, file)).unwrap());
        let (code, out, err) = gd(&d.path(""), &["--verify-blobs", SNAP]);
        assert_eq!((code, out.as_str()), (Some(2), ""), "{file}: {err}");
        assert!(err.starts_with(&format!("gguf-digest: {SNAP}: {SNAP}/{file}: its {algorithm} is ")), "{err}");
        assert!(err.contains("not the name of the blob it links to"), "{err}");
        // Without the audit, the changed bytes are only another label.
        let (code, out, _) = gd(&d.path(""), &[SNAP]);
        assert_eq!(code, Some(0));
        assert_ne!(out, format!("{}  {SNAP}\n", expected()));
    }
}

/// A snapshot file that is a regular file (a copy, not a link into
/// `blobs/`) has no blob name to check it against: the audit says so, on
/// standard error and in `--json`, instead of passing it in silence
/// (issue #31, item 10).
#[test]
fn verify_blobs_names_a_snapshot_file_it_could_not_check() {
    let d = Dir::new();
    let snap = tree::snapshot(&d.path("hub"), "n", &files(), true);
    let config = snap.join("config.json");
    std::fs::remove_file(&config).unwrap();
    std::fs::write(&config, &files()[0].1).unwrap();
    let (code, out, err) = gd(&d.path(""), &["--verify-blobs", SNAP]);
    assert_eq!((code, out), (Some(0), format!("{}  {SNAP}\n", expected())), "{err}");
    let want =
        format!("{SNAP}/config.json: not a link into the repository's blobs/, so --verify-blobs could not check it");
    assert!(err.contains("warning") && err.contains(&want), "{err}");
    assert!(!err.contains("model.safetensors"), "only the copy is named: {err}");
    let (code, out, _) = gd(&d.path(""), &["--verify-blobs", "--json", SNAP]);
    assert_eq!(code, Some(0));
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["files"][0]["blobs_verified"], 2);
    let unverified = doc["files"][0]["blobs_unverified"].as_array().unwrap();
    assert_eq!(unverified.len(), 1);
    assert_eq!(unverified[0]["path"], format!("{SNAP}/config.json"));
    // Without --verify-blobs nothing was promised, so nothing is said.
    let (code, _, err) = gd(&d.path(""), &[SNAP]);
    assert_eq!(code, Some(0));
    assert!(!err.contains("could not check"), "{err}");
}

#[test]
fn verify_blobs_names_a_file_whose_blob_is_missing() {
    let d = Dir::new();
    let snap = tree::snapshot(&d.path("hub"), "n", &files(), false);
    std::fs::remove_file(tree::blob_of(&snap, "config.json")).unwrap();
    let (code, out, err) = gd(&d.path(""), &["--verify-blobs", SNAP]);
    assert_eq!((code, out.as_str()), (Some(2), ""), "{err}");
    assert!(err.starts_with(&format!("gguf-digest: {SNAP}: {SNAP}/config.json: ")), "{err}");
    assert!(err.contains("dangling"), "{err}");
}

/// A link that climbs above the root and comes back down its own real path
/// lands inside: labelled as the file it names (contract §2, ADR 0023);
/// one through a sibling directory leads outside and is refused unopened.
#[test]
fn a_link_out_of_the_root_and_back_in_is_the_file_it_names() {
    let d = Dir::new();
    std::fs::create_dir_all(d.path("back-in/sub")).unwrap();
    std::fs::create_dir_all(d.path("other")).unwrap();
    std::fs::write(d.path("back-in/x.txt"), b"x").unwrap();
    std::fs::write(d.path("other/x.txt"), b"x").unwrap();
    symlink("../../back-in/x.txt", d.path("back-in/sub/l.txt")).unwrap();
    let want = expected_label(&[file_component("sub/l.txt", b"x"), file_component("x.txt", b"x")]);
    let (code, out, err) = gd(&d.path(""), &["back-in"]);
    assert_eq!((code, out), (Some(0), format!("{want}  back-in\n")), "{err}");
    symlink("../other/x.txt", d.path("back-in/m.txt")).unwrap();
    let (code, _, err) = gd(&d.path(""), &["back-in"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("back-in/m.txt") && err.contains("outside"), "{err}");
}

/// An index that lists no file is a safetensors model of no file (its
/// metadata is content), as `gguf-digest INDEX` labels it.
#[test]
fn an_index_of_no_file_is_a_model_of_no_file() {
    let d = Dir::new();
    std::fs::create_dir_all(d.path("m")).unwrap();
    let index = br#"{"metadata": {"total_size": 0}, "weight_map": {}}"#;
    std::fs::write(d.path("m/e.safetensors.index.json"), index).unwrap();
    let alone = gd(&d.path(""), &["m/e.safetensors.index.json"]);
    assert_eq!(alone.0, Some(0), "{}", alone.2);
    let want = expected_label(&[weights_component(b"SFTN", "e", &alone.1[..64])]);
    let (code, out, err) = gd(&d.path(""), &["m"]);
    assert_eq!((code, out), (Some(0), format!("{want}  m\n")), "{err}");
}
