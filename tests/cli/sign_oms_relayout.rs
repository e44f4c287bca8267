//! The relayout verdict (issue #26 item 3, the verifier's side): an OpenSSF
//! model signature that also carries the directory's gguf-digest label (as
//! `gguf-digest sign --format oms` writes it: `predicate.gguf_digest`).
//! When the files differ but the directory label is the signed one (the
//! GGUF shards re-cut), `verify` says so and still fails unless
//! `--accept-relayout`; a real change fails either way.
use crate::common;
use crate::sign_oms::{PAYLOAD_TYPE, bundle, hint, key, public_pem, sign};

use std::path::Path;

use common::*;
use sha2::{Digest as _, Sha256};

/// The files of `dir` (relative names, sorted) with their SHA-256.
fn files(dir: &Path) -> Vec<(String, [u8; 32])> {
    let mut out: Vec<(String, [u8; 32])> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x != "sig"))
        .map(|p| {
            (p.file_name().unwrap().to_str().unwrap().to_string(), Sha256::digest(std::fs::read(&p).unwrap()).into())
        })
        .collect();
    out.sort();
    out
}

/// The statement `sign --format oms` writes for `dir` with `label` and
/// `components` (the JSON array's members).
fn statement(dir: &Path, label: &str, components: &str) -> String {
    let fs = files(dir);
    let mut root = Sha256::new();
    let resources: Vec<String> = fs
        .iter()
        .map(|(n, d)| {
            root.update(d);
            format!(r#"{{"name":"{n}","algorithm":"sha256","digest":"{}"}}"#, hex::encode(d))
        })
        .collect();
    format!(
        r#"{{"_type":"https://in-toto.io/Statement/v1","subject":[{{"name":"model","digest":{{"sha256":"{}"}}}}],"predicateType":"https://model_signing/signature/v1.0","predicate":{{"serialization":{{"method":"files","hash_type":"sha256","allow_symlinks":false,"ignore_paths":["model.sig"]}},"resources":[{}],"gguf_digest":{{"contract":"directory-skeleton-v1","label":"{label}","components":[{components}]}}}}}}"#,
        hex::encode(root.finalize()),
        resources.join(",")
    )
}

fn directory_label(d: &Dir) -> String {
    let o = gd_in(d.dir.path(), &["model"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    text(&o.stdout).split_whitespace().next().unwrap().to_string()
}

/// The `gguf_digest` component of the GGUF model `first` (a shard set's
/// first file, or a file), named `m`.
fn gguf_component(d: &Dir, first: &str) -> String {
    let o = gd_in(d.dir.path(), &[first]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let label = text(&o.stdout).split_whitespace().next().unwrap().to_string();
    format!(r#"{{"kind":"GGUF","name":"m","label":"{label}"}}"#)
}

#[test]
fn accept_relayout_excuses_only_files_of_weights_components_whose_labels_hold() {
    // Issue #31 item 3: the shards re-cut (excused) and a file the label's
    // walk does not see but the OpenSSF check does (a nested `.github`):
    // that file is no relayout, accepted or not.
    let d = Dir::new();
    std::fs::create_dir_all(d.path("model/sub")).unwrap();
    let g = rich_model(&[0, 1, 8]);
    let n = g.tensors.len();
    let two = write_set(&d, "model/m", &g.split(&[1, n - 1]));
    d.write("model/config.json", b"{\"a\": 1}\n");
    let label = directory_label(&d);
    let st = statement(&d.path("model"), &label, &gguf_component(&d, "model/m-00001-of-00002.gguf"));
    let sig = d.write(
        "model/model.sig",
        bundle(PAYLOAD_TYPE, st.as_bytes(), &[sign(&key(), PAYLOAD_TYPE, st.as_bytes())], &hint()).as_bytes(),
    );
    let public = d.write("key.pub", public_pem(&key()).as_bytes());
    let verify = || {
        let args = ["verify", sig.to_str().unwrap(), "--key", public.to_str().unwrap(), "--accept-relayout"];
        let o = gd_in(d.dir.path(), &args);
        (o.status.code(), text(&o.stdout), text(&o.stderr))
    };
    for p in two {
        std::fs::remove_file(p).unwrap();
    }
    write_set(&d, "model/m", &g.split(&[1, 1, n - 2]));
    let (code, out, err) = verify();
    assert_eq!(code, Some(0), "{out}{err}");
    std::fs::create_dir_all(d.path("model/sub/.github")).unwrap();
    d.write("model/sub/.github/workflow.yml", b"on: push\n");
    let (code, out, err) = verify();
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(out.contains("sub/.github/workflow.yml: FAILED (unexpected"), "{out}");
    assert!(!out.contains("accepted as a relayout"), "{out}");
}

#[test]
fn a_weights_component_signed_under_another_label_is_not_excused() {
    // The directory label holds only with every component's; a signature
    // whose component list does not name the re-cut model excuses none of it.
    let d = Dir::new();
    std::fs::create_dir_all(d.path("model")).unwrap();
    let g = rich_model(&[0, 1, 8]);
    let n = g.tensors.len();
    let two = write_set(&d, "model/m", &g.split(&[1, n - 1]));
    let label = directory_label(&d);
    let other = format!(r#"{{"kind":"GGUF","name":"m","label":"{}"}}"#, "1".repeat(64));
    let st = statement(&d.path("model"), &label, &other);
    let sig = d.write(
        "model/model.sig",
        bundle(PAYLOAD_TYPE, st.as_bytes(), &[sign(&key(), PAYLOAD_TYPE, st.as_bytes())], &hint()).as_bytes(),
    );
    let public = d.write("key.pub", public_pem(&key()).as_bytes());
    for p in two {
        std::fs::remove_file(p).unwrap();
    }
    write_set(&d, "model/m", &g.split(&[1, 1, n - 2]));
    let args = ["verify", sig.to_str().unwrap(), "--key", public.to_str().unwrap(), "--accept-relayout"];
    let o = gd_in(d.dir.path(), &args);
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    assert!(out.contains("the signed model's label holds"), "{out}");
    assert!(out.contains("m-00003-of-00003.gguf: not excused by --accept-relayout"), "{out}");
}

#[test]
fn re_cut_shards_keep_the_signed_label_and_pass_only_when_accepted() {
    let d = Dir::new();
    std::fs::create_dir_all(d.path("model")).unwrap();
    let g = rich_model(&[0, 1, 8]);
    let n = g.tensors.len();
    let two = write_set(&d, "model/m", &g.split(&[1, n - 1]));
    d.write("model/config.json", b"{\"a\": 1}\n");
    let label = directory_label(&d);
    let st = statement(&d.path("model"), &label, &gguf_component(&d, "model/m-00001-of-00002.gguf"));
    // Signed as `sign --format oms` signs: the signature inside the directory.
    let sig = d.write(
        "model/model.sig",
        bundle(PAYLOAD_TYPE, st.as_bytes(), &[sign(&key(), PAYLOAD_TYPE, st.as_bytes())], &hint()).as_bytes(),
    );
    let public = d.write("key.pub", public_pem(&key()).as_bytes());
    let verify = |extra: &[&str]| {
        let mut args = vec!["verify", sig.to_str().unwrap(), "--key", public.to_str().unwrap()];
        args.extend_from_slice(extra);
        let o = gd_in(d.dir.path(), &args);
        (o.status.code(), text(&o.stdout), text(&o.stderr))
    };
    let (code, out, err) = verify(&[]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(!out.contains("label"), "{out}");
    // The same model cut into three shards: every file differs, the label holds.
    for p in two {
        std::fs::remove_file(p).unwrap();
    }
    write_set(&d, "model/m", &g.split(&[1, 1, n - 2]));
    let (code, out, err) = verify(&[]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(out.contains("m-00003-of-00003.gguf: FAILED (unexpected"), "{out}");
    assert!(out.contains("file digests differ, the signed model's label holds"), "{out}");
    let (code, out, err) = verify(&["--accept-relayout"]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("accepted as a relayout of the signed model (--accept-relayout)"), "{out}");
    // The bundle copied out and verified against the directory that still
    // holds its own copy under the ignored name: that copy is left out too.
    std::fs::create_dir_all(d.path("out")).unwrap();
    std::fs::copy(&sig, d.path("out/model.sig")).unwrap();
    let o = gd_in(d.dir.path(), &["verify", "out/model.sig", "--root", "model", "--key", public.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("the signed model's label holds"), "{}", text(&o.stdout));
    // A changed config: the label no longer holds, accepted or not.
    d.write("model/config.json", b"{\"a\": 2}\n");
    let (code, out, err) = verify(&["--accept-relayout"]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(out.contains("the directory's label is not the signed one"), "{out}");
}

#[test]
fn a_model_signing_signature_without_the_label_gets_no_verdict() {
    let d = Dir::new();
    std::fs::create_dir_all(d.path("model")).unwrap();
    d.write("model/w.bin", &[1u8; 100]);
    let st = statement(&d.path("model"), &"0".repeat(64), "").replace(r#","gguf_digest":{"contract":"directory-skeleton-v1","label":"0000000000000000000000000000000000000000000000000000000000000000","components":[]}"#, "");
    let sig = d.write(
        "s.sig",
        bundle(PAYLOAD_TYPE, st.as_bytes(), &[sign(&key(), PAYLOAD_TYPE, st.as_bytes())], &hint()).as_bytes(),
    );
    let public = d.write("key.pub", public_pem(&key()).as_bytes());
    d.write("model/w.bin", &[2u8; 100]);
    let o = gd_in(
        d.dir.path(),
        &["verify", sig.to_str().unwrap(), "--root", "model", "--key", public.to_str().unwrap(), "--accept-relayout"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(!text(&o.stdout).contains("label"), "{}", text(&o.stdout));
}
