//! Nothing an input names is opened outside the directory the tool was
//! pointed at (docs/adr/0020-opening-beneath-a-root.md): every way out the
//! attack on issue 23 found (a subject directory's entry, an index's shard,
//! a first shard's sibling, an Ollama store's `manifests/...` or `blobs`
//! linking out), each through the real binary; the rename race `verify`
//! lost; and the links that stay inside a root (a Hugging Face snapshot's)
//! still followed.
use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::ollama::{MODEL, Store, TEMPLATE};
use common::st::{St, StTensor};
use common::*;

/// What every refusal of a way out says.
const LEADS_OUT: &str = "leads outside";

fn symlink(target: impl AsRef<Path>, link: impl AsRef<Path>) {
    std::os::unix::fs::symlink(target, link).expect("make a symbolic link");
}

fn mkdir(p: impl AsRef<Path>) -> PathBuf {
    std::fs::create_dir_all(p.as_ref()).expect("make a directory");
    p.as_ref().to_path_buf()
}

/// The label gguf-digest prints for `arg` run in `dir` (it must succeed).
fn label_in(dir: &Path, arg: &str) -> String {
    let o = gd_in(dir, &[arg]);
    assert_eq!(o.status.code(), Some(0), "{arg}: {}", text(&o.stderr));
    text(&o.stdout).split_once("  ").expect("a sums line").0.to_string()
}

/// A bare in-toto statement claiming `subjects` (name, label).
fn statement(subjects: &[(&str, &str)]) -> Vec<u8> {
    let list: Vec<serde_json::Value> =
        subjects.iter().map(|(n, l)| serde_json::json!({"name": n, "digest": {"sha256": l}})).collect();
    let s = serde_json::json!({
        "_type": "https://in-toto.io/Statement/v1",
        "subject": list,
        "predicateType": "https://gguf-digest.dev/label/v1",
        "predicate": {},
    });
    serde_json::to_vec(&s).unwrap()
}

/// `gguf-digest verify --root ROOT S` for a statement claiming one subject.
fn verify_one(root: &Path, name: &str, label: &str) -> Output {
    let s = root.parent().unwrap().join(format!("s-{}.json", name.replace('/', "_")));
    std::fs::write(&s, statement(&[(name, label)])).unwrap();
    gd_in(Path::new("/"), &["verify", "--no-signature", "--root", root.to_str().unwrap(), s.to_str().unwrap()])
}

/// A way out refused: not OK, and stderr says why.
fn assert_refused(o: &Output, what: &str) {
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert_ne!(o.status.code(), Some(0), "{what}: must not pass\nstdout: {out}\nstderr: {err}");
    assert!(!out.contains(": OK"), "{what}: labelled what lies outside: {out}");
    assert!(err.contains(LEADS_OUT), "{what}: stderr must say it {LEADS_OUT:?}: {err}");
}

fn assert_ok(o: &Output, what: &str) {
    assert_eq!(o.status.code(), Some(0), "{what}: {}{}", text(&o.stdout), text(&o.stderr));
}

/// A top directory holding `root/` (where the tool is pointed) and
/// `outside/` (beside it).
fn top() -> (Dir, PathBuf, PathBuf) {
    let d = Dir::new();
    let root = mkdir(d.path("root"));
    let outside = mkdir(d.path("outside"));
    (d, root, outside)
}

#[test]
fn verify_does_not_follow_a_subject_directory_entry_out_of_the_root() {
    let (_d, root, outside) = top();
    std::fs::write(outside.join("model.gguf"), rich_model(&[0]).build()).unwrap();
    let want = label_in(&outside, "model.gguf");
    mkdir(root.join("m"));
    symlink("../../outside/model.gguf", root.join("m/model.gguf"));
    assert_refused(&verify_one(&root, "m", &want), "verify of a directory whose entry links out");
    // The same directory named on the command line.
    assert_refused(&gd_in(&root, &["m"]), "a directory argument whose entry links out");
}

#[test]
fn an_index_whose_shard_links_out_is_refused() {
    let (_d, root, outside) = top();
    let st = St::new().meta("k", "v").tensor(StTensor::filled("a", "F32", &[2, 2], 1)).tensor(StTensor::filled(
        "b",
        "F16",
        &[4],
        2,
    ));
    let (files, index) = st.sharded("model", &[1, 1]);
    for (name, bytes) in &files {
        std::fs::write(outside.join(name), bytes).unwrap();
    }
    std::fs::write(outside.join("model.safetensors.index.json"), &index).unwrap();
    let want = label_in(&outside, "model.safetensors.index.json");
    mkdir(root.join("x"));
    std::fs::write(root.join("x/model.safetensors.index.json"), &index).unwrap();
    std::fs::write(root.join("x").join(&files[0].0), &files[0].1).unwrap();
    symlink(Path::new("../../outside").join(&files[1].0), root.join("x").join(&files[1].0));
    assert_refused(&verify_one(&root, "x/model.safetensors.index.json", &want), "verify of an index");
    // In general, not only for verify: the index, a shard beside it, the directory.
    for arg in ["x/model.safetensors.index.json", "x/model-00001-of-00002.safetensors", "x"] {
        assert_refused(&gd_in(&root, &[arg]), arg);
    }
}

#[test]
fn a_first_gguf_shard_whose_sibling_links_out_is_refused() {
    let (_d, root, outside) = top();
    let g = rich_model(&[0, 1, 8]);
    let shards = g.split(&[1, 2]);
    let outside_dir = Dir { dir: tempfile::tempdir_in(&outside).unwrap() };
    write_set(&outside_dir, "m", &shards);
    let first = "m-00001-of-00002.gguf";
    let want = label_in(outside_dir.dir.path(), first);
    mkdir(root.join("g"));
    std::fs::copy(outside_dir.path(first), root.join("g").join(first)).unwrap();
    symlink(outside_dir.path("m-00002-of-00002.gguf"), root.join("g/m-00002-of-00002.gguf"));
    assert_refused(&verify_one(&root, "g/m-00001-of-00002.gguf", &want), "verify of a first shard");
    assert_refused(&gd_in(&root, &["g/m-00001-of-00002.gguf"]), "a first shard named on the command line");
    assert_refused(&gd_in(&root, &["g"]), "the shards' directory");
}

#[test]
fn a_first_safetensors_shard_whose_sibling_links_out_is_refused() {
    let (_d, root, outside) = top();
    let st = St::new().tensor(StTensor::filled("a", "F32", &[2], 1)).tensor(StTensor::filled("b", "I8", &[3], 2));
    let (files, _index) = st.sharded("w", &[1, 1]);
    for (name, bytes) in &files {
        std::fs::write(outside.join(name), bytes).unwrap();
    }
    let want = label_in(&outside, &files[0].0);
    std::fs::write(root.join(&files[0].0), &files[0].1).unwrap();
    symlink(outside.join(&files[1].0), root.join(&files[1].0));
    assert_refused(&verify_one(&root, &files[0].0, &want), "verify of a first safetensors shard");
    assert_refused(&gd_in(&root, &[files[0].0.as_str()]), "a first safetensors shard");
}

fn ollama(store: &Path, args: &[&str]) -> Output {
    Command::new(gguf_digest_bin())
        .args(args)
        .env("OLLAMA_MODELS", store)
        .stdin(Stdio::null())
        .output()
        .expect("runs gguf-digest")
}

/// A store at `<top>/models` with one model (`ns/m`) and its label.
fn ollama_store(top: &Path) -> (Store, String) {
    let store = Store::new(&top.join("models"));
    let layers = [store.blob(MODEL, &rich_model(&[0, 8]).build()), store.blob(TEMPLATE, b"{{ .Prompt }}")];
    store.manifest("ns/m", &store.config(""), &layers);
    let o = ollama(&store.root, &["ollama:ns/m"]);
    assert_ok(&o, "the store as written");
    (store, text(&o.stdout).split_once("  ").unwrap().0.to_string())
}

#[test]
fn an_ollama_manifests_directory_that_links_out_of_the_store_is_refused() {
    let d = Dir::new();
    let (store, _) = ollama_store(d.path("").as_path());
    // manifests/registry.ollama.ai/ns -> ../../../x: the namespace lives outside.
    let host = store.root.join("manifests/registry.ollama.ai");
    std::fs::rename(host.join("ns"), d.path("x")).unwrap();
    symlink("../../../x", host.join("ns"));
    let o = ollama(&store.root, &["ollama:ns/m"]);
    assert_refused(&o, "a namespace directory linking out of the store");
    // A manifest given by path through the link: the same.
    let by_path = host.join("ns/m/latest");
    assert_refused(&ollama(&store.root, &[by_path.to_str().unwrap()]), "a manifest path through the link");
}

#[test]
fn an_ollama_blobs_directory_that_links_out_of_the_store_is_refused() {
    let d = Dir::new();
    let (store, _) = ollama_store(d.path("").as_path());
    std::fs::rename(store.root.join("blobs"), d.path("elsewhere")).unwrap();
    symlink("../elsewhere", store.root.join("blobs"));
    assert_refused(&ollama(&store.root, &["ollama:ns/m"]), "blobs linking out of the store");
}

#[test]
fn links_that_stay_inside_a_root_are_still_followed() {
    let (_d, root, _) = top();
    // A directory entry linking to a file elsewhere in the same directory.
    mkdir(root.join("real"));
    std::fs::write(root.join("real/model.gguf"), rich_model(&[0]).build()).unwrap();
    mkdir(root.join("d"));
    symlink("../real/model.gguf", root.join("d/model.gguf"));
    let want = label_in(&root, "real/model.gguf");
    // A directory is labelled whole: its link out of it (though inside the
    // root) is refused (directory contract §2)...
    assert_refused(&verify_one(&root, "d", &want), "a directory entry linking out of the directory");
    // ...one inside it is followed.
    std::fs::remove_file(root.join("d/model.gguf")).unwrap();
    mkdir(root.join("d/sub"));
    std::fs::write(root.join("d/sub/model.gguf"), rich_model(&[0]).build()).unwrap();
    symlink("sub/model.gguf", root.join("d/model.gguf"));
    let o = verify_one(&root, "d", &label_in(&root, "d"));
    assert_ok(&o, "verify of a directory whose entry links inside the directory");
    assert!(text(&o.stdout).ends_with("signature NOT CHECKED (--no-signature)\nd: OK\n"), "{}", text(&o.stdout));
    // A subject that is itself a link inside the root, and a linked directory.
    symlink("real", root.join("linked"));
    assert_ok(&verify_one(&root, "linked/model.gguf", &want), "through a linked directory inside the root");
    // Shards linking to a directory beside theirs, inside the root.
    let shards = rich_model(&[0, 1, 8]).split(&[2, 1]);
    let set = Dir { dir: tempfile::tempdir_in(&root).unwrap() };
    let paths = write_set(&set, "s", &shards);
    mkdir(root.join("g"));
    let set_name = set.dir.path().file_name().unwrap().to_str().unwrap().to_string();
    for p in &paths {
        let name = p.file_name().unwrap();
        symlink(Path::new("..").join(&set_name).join(name), root.join("g").join(name));
    }
    let want = label_in(set.dir.path(), "s-00001-of-00002.gguf");
    assert_ok(&verify_one(&root, "g/s-00001-of-00002.gguf", &want), "shards linking inside the root");
    // An Ollama namespace linked inside the store.
    let d = Dir::new();
    let (store, want) = ollama_store(d.path("").as_path());
    let host = store.root.join("manifests/registry.ollama.ai");
    std::fs::rename(host.join("ns"), store.root.join("kept")).unwrap();
    symlink("../../kept", host.join("ns"));
    let o = ollama(&store.root, &["ollama:ns/m"]);
    assert_ok(&o, "a namespace linked inside the store");
    assert!(text(&o.stdout).starts_with(&want), "{}", text(&o.stdout));
}

/// A Hugging Face cache repository folder: `blobs/<sha>` holding the
/// files, `snapshots/<rev>/<name>` linking to `../../blobs/<sha>`.
fn hf_repo(top: &Path, files: &[(String, Vec<u8>)]) -> PathBuf {
    let repo = mkdir(top.join("models--org--name"));
    let snap = mkdir(repo.join("snapshots/0123abcd"));
    mkdir(repo.join("blobs"));
    for (name, bytes) in files {
        let sha = hex(&sha(bytes));
        std::fs::write(repo.join("blobs").join(&sha), bytes).unwrap();
        symlink(Path::new("../../blobs").join(&sha), snap.join(name));
    }
    repo
}

#[test]
fn a_hugging_face_snapshot_keeps_working() {
    let d = Dir::new();
    let st = St::new().meta("k", "v").tensor(StTensor::filled("a", "F32", &[2, 2], 1)).tensor(StTensor::filled(
        "b",
        "BF16",
        &[4],
        2,
    ));
    let (mut files, index) = st.sharded("model", &[1, 1]);
    let plain = mkdir(d.path("plain"));
    for (name, bytes) in &files {
        std::fs::write(plain.join(name), bytes).unwrap();
    }
    std::fs::write(plain.join("model.safetensors.index.json"), &index).unwrap();
    let want = label_in(&plain, "model.safetensors.index.json");
    // A directory's label is the directory label, the same for the copy.
    let want_dir = label_in(&d.path(""), "plain");
    files.push(("model.safetensors.index.json".into(), index.into_bytes()));
    let repo = hf_repo(&d.path(""), &files);
    let snap = "models--org--name/snapshots/0123abcd";
    for arg in [snap.to_string(), format!("{snap}/")] {
        assert_eq!(label_in(&d.path(""), &arg), want_dir, "{arg}");
    }
    for arg in [format!("{snap}/model.safetensors.index.json"), format!("{snap}/model-00001-of-00002.safetensors")] {
        assert_eq!(label_in(&d.path(""), &arg), want, "{arg}");
    }
    // From inside the snapshot, and inside the repo folder (relative paths).
    assert_eq!(label_in(&repo.join("snapshots/0123abcd"), "."), want_dir);
    assert_eq!(label_in(&repo.join("snapshots/0123abcd"), "model-00001-of-00002.safetensors"), want);
    assert_eq!(label_in(&repo, "snapshots/0123abcd"), want_dir);
    // verify with the root at the repo folder or above.
    assert_ok(&verify_one(&d.path(""), snap, &want_dir), "verify of a snapshot under --root");
    // A snapshot entry that links out of the repo folder is refused.
    let outside = mkdir(d.path("outside"));
    let second = "model-00002-of-00002.safetensors";
    std::fs::write(outside.join(second), &files[1].1).unwrap();
    let link = repo.join("snapshots/0123abcd").join(second);
    std::fs::remove_file(&link).unwrap();
    symlink("../../../outside/model-00002-of-00002.safetensors", &link);
    assert_refused(&gd_in(&d.path(""), &[snap]), "a snapshot entry linking out of the repo folder");
}

/// The race the attack won 2,017 times in 8,509 runs: a thread swaps a
/// subject file with a link out of the root (`renameat2(RENAME_EXCHANGE)`)
/// while `verify` runs again and again. The subject claims the label of the
/// file outside, so an `OK` would be that file labelled. Bounded: 2,000
/// runs or 10 seconds, whichever comes first (no assertion on time).
#[test]
fn the_rename_race_never_labels_the_file_outside() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    let (d, root, outside) = top();
    std::fs::write(outside.join("outside.gguf"), rich_model(&[0, 1]).build()).unwrap();
    let want = label_in(&outside, "outside.gguf");
    mkdir(root.join("sub"));
    std::fs::write(root.join("sub/m.gguf"), rich_model(&[8]).build()).unwrap();
    symlink("../../outside/outside.gguf", root.join("sub/swap"));
    let s = d.path("s.json");
    std::fs::write(&s, statement(&[("sub/m.gguf", &want)])).unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicU64::new(0));
    let swapper = {
        let (stop, swaps) = (Arc::clone(&stop), Arc::clone(&swaps));
        let (a, b) = (root.join("sub/m.gguf"), root.join("sub/swap"));
        std::thread::spawn(move || {
            let cwd = rustix::fs::CWD;
            while !stop.load(Ordering::Relaxed) {
                rustix::fs::renameat_with(cwd, &a, cwd, &b, rustix::fs::RenameFlags::EXCHANGE)
                    .expect("RENAME_EXCHANGE");
                swaps.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    let started = std::time::Instant::now();
    let (mut runs, mut saw_inside, mut saw_link) = (0u32, 0u32, 0u32);
    let mut labelled_outside = Vec::new();
    while runs < 2000 && started.elapsed() < std::time::Duration::from_secs(10) {
        let o =
            gd_in(Path::new("/"), &["verify", "--no-signature", "--root", root.to_str().unwrap(), s.to_str().unwrap()]);
        runs += 1;
        let (out, err) = (text(&o.stdout), text(&o.stderr));
        if o.status.code() == Some(0) || out.contains(": OK") {
            labelled_outside.push(format!("run {runs}: {out}{err}"));
        } else if out.contains("sub/m.gguf: FAILED\n") {
            saw_inside += 1;
        } else if err.contains(LEADS_OUT) || err.contains("is refused") {
            saw_link += 1;
        }
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    assert!(
        labelled_outside.is_empty(),
        "{} of {runs} runs labelled the file outside:\n{}",
        labelled_outside.len(),
        labelled_outside.join("\n")
    );
    // The loop raced: both sides of the swap were seen.
    assert!(
        swaps.load(Ordering::Relaxed) > 0 && saw_inside > 0 && saw_link > 0,
        "{runs} runs: {saw_inside} saw the file, {saw_link} the link"
    );
}

#[test]
fn verify_opens_a_manifest_subject_beneath_its_root_and_needs_the_root_to_open() {
    let d = Dir::new();
    let (store, want) = ollama_store(d.path("").as_path());
    let manifest = "models/manifests/registry.ollama.ai/ns/m/latest";
    // The store lies inside the root: its blobs are opened beneath it.
    let o = verify_one(&d.path(""), manifest, &want);
    assert_ok(&o, "a manifest subject inside the root");
    // The root inside the store: the store (and its blobs) lie above it.
    let o = verify_one(&store.root.join("manifests"), "registry.ollama.ai/ns/m/latest", &want);
    assert_refused(&o, "a manifest subject whose store lies above the root");
    // A root that cannot be opened: the statement is refused (exit 2), naming it.
    let s = d.path("s.json");
    std::fs::write(&s, statement(&[("m.gguf", &want)])).unwrap();
    let missing = d.path("no-such-root");
    let o =
        gd_in(Path::new("/"), &["verify", "--no-signature", "--root", missing.to_str().unwrap(), s.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(o.stdout.is_empty());
    let err = text(&o.stderr);
    assert!(err.contains(&format!("the root {}: No such file or directory", missing.display())), "{err}");
}
