//! Provenance of ONNX models through the real binary (issue #35): one
//! model built here byte by byte with its weights inline, in one external
//! data file and in one file per tensor; `statement` gives every layout the
//! same subject digest, `verify` and `--check` relabel them and fail when a
//! weight byte of an external file changes or the file is missing, `bom`
//! lists the model file and the external files it reads with their digests,
//! `sign` bundles verify with the key, and an OpenSSF model signature of a
//! directory holding an ONNX model with external data verifies file by file
//! and accepts a relayout only with `--accept-relayout`.
use crate::common;

use std::path::Path;
use std::process::{Command, Output};

use common::onnx::{int, s, value_info};
use common::{Dir, gd_in, hex, sha, text};
use serde_json::Value as JsonValue;

/// `w`: F32 [2] = 1.0, 2.0.
const W: [u8; 8] = [0, 0, 0x80, 0x3f, 0, 0, 0, 0x40];
/// `b`: F32 [3] = 3.0, 4.0, 5.0.
const B: [u8; 12] = [0, 0, 0x40, 0x40, 0, 0, 0x80, 0x40, 0, 0, 0xa0, 0x40];

/// The initializer `name` of F32 `dims` whose data records are `data`.
fn f32_tensor(name: &str, dims: &[u64], data: &[u8]) -> Vec<u8> {
    let mut t: Vec<u8> = dims.iter().flat_map(|&d| int(1, d)).collect();
    t.extend(int(2, 1));
    t.extend(s(8, name.as_bytes()));
    t.extend_from_slice(data);
    t
}

/// `Identity` from x to y with the initializers `w` and `b`, whose data
/// records are `w` and `b`.
fn model(w: &[u8], b: &[u8]) -> Vec<u8> {
    let node = [s(1, b"x"), s(2, b"y"), s(4, b"Identity")].concat();
    let graph = [
        s(1, &node),
        s(2, b"g"),
        s(5, &f32_tensor("w", &[2], w)),
        s(5, &f32_tensor("b", &[3], b)),
        s(11, &value_info("x")),
        s(12, &value_info("y")),
    ]
    .concat();
    [int(1, 8), s(7, &graph), s(8, &[s(1, b""), int(2, 13)].concat())].concat()
}

/// The data records of elements in an external file: `external_data`
/// entries and `data_location` EXTERNAL.
fn external(entries: &[(&str, &str)]) -> Vec<u8> {
    let mut data: Vec<u8> =
        entries.iter().flat_map(|(k, v)| s(13, &[s(1, k.as_bytes()), s(2, v.as_bytes())].concat())).collect();
    data.extend(int(14, 1));
    data
}

/// The three layouts in `d` (in `sub`, if not empty): `inline.onnx`
/// (`raw_data`); `one.onnx` with both tensors in `one.data`, `w` at 0 and
/// `b` at 16 after 8 bytes of padding; `per.onnx` with `per.w.bin` and
/// `per.b.bin`. Returns the models' names.
fn layouts(d: &Dir, sub: &str) -> [String; 3] {
    let at = |n: &str| if sub.is_empty() { n.to_string() } else { format!("{sub}/{n}") };
    if !sub.is_empty() {
        std::fs::create_dir_all(d.path(sub)).unwrap();
    }
    d.write(&at("inline.onnx"), &model(&s(9, &W), &s(9, &B)));
    d.write(&at("one.data"), &[&W[..], &[0; 8], &B].concat());
    d.write(
        &at("one.onnx"),
        &model(
            &external(&[("location", "one.data"), ("offset", "0"), ("length", "8")]),
            &external(&[("location", "one.data"), ("offset", "16"), ("length", "12")]),
        ),
    );
    d.write(&at("per.w.bin"), &W);
    d.write(&at("per.b.bin"), &B);
    d.write(&at("per.onnx"), &model(&external(&[("location", "per.w.bin")]), &external(&[("location", "per.b.bin")])));
    [at("inline.onnx"), at("one.onnx"), at("per.onnx")]
}

/// The one label of the three layouts, from the sums lines.
fn the_label(d: &Dir, names: &[String]) -> String {
    let args: Vec<&str> = names.iter().map(String::as_str).collect();
    let out = gd_in(d.dir.path(), &args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let labels: Vec<String> = text(&out.stdout).lines().map(|l| l[..64].to_string()).collect();
    assert_eq!(labels.len(), 3);
    assert!(labels.iter().all(|l| *l == labels[0]), "one label for every layout: {labels:?}");
    labels[0].clone()
}

/// `path` in `d` with the byte at `at` flipped.
fn flip(d: &Dir, path: &str, at: usize) {
    let mut bytes = std::fs::read(d.path(path)).unwrap();
    bytes[at] ^= 1;
    std::fs::write(d.path(path), bytes).unwrap();
}

#[test]
fn a_statement_gives_every_layout_one_subject_digest_and_names_the_external_files() {
    let d = Dir::new();
    let names = layouts(&d, "m");
    let label = the_label(&d, &names);
    let args: Vec<&str> = ["statement"].into_iter().chain(names.iter().map(String::as_str)).collect();
    let out = gd_in(d.dir.path(), &args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let st: JsonValue = serde_json::from_slice(&out.stdout).unwrap();
    let subjects: Vec<(&str, &str)> = st["subject"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| (x["name"].as_str().unwrap(), x["digest"]["sha256"].as_str().unwrap()))
        .collect();
    assert_eq!(subjects, [("m/inline.onnx", label.as_str()), ("m/one.onnx", &label), ("m/per.onnx", &label)]);
    // Each model's entry names the files read: the model, then the external
    // data files in the order its tensors name them, each once.
    let files = |i: usize| -> Vec<(String, u64)> {
        let m = &st["predicate"]["models"][i];
        assert_eq!((m["format"].as_str(), m["contract"].as_str()), (Some("onnx"), Some("onnx-skeleton-v1")), "{m}");
        assert_eq!(m["label"].as_str(), Some(label.as_str()));
        m["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| (f["path"].as_str().unwrap().to_string(), f["size"].as_u64().unwrap()))
            .collect()
    };
    let size = |p: &str| std::fs::metadata(d.path(p)).unwrap().len();
    let listed = |ps: &[&str]| -> Vec<(String, u64)> { ps.iter().map(|p| (p.to_string(), size(p))).collect() };
    assert_eq!(files(0), listed(&["m/inline.onnx"]));
    assert_eq!(files(1), listed(&["m/one.onnx", "m/one.data"]));
    assert_eq!(files(2), listed(&["m/per.onnx", "m/per.w.bin", "m/per.b.bin"]));

    // --leaves: the model's --json entry, every tensor with where it lies.
    let out = gd_in(d.dir.path(), &["statement", "--leaves", "m/per.onnx"]);
    let st: JsonValue = serde_json::from_slice(&out.stdout).unwrap();
    let t = &st["predicate"]["models"][0]["leaves"]["tensors"];
    assert_eq!((t[0]["name"].as_str(), t[0]["file"].as_str()), (Some("w"), Some("per.w.bin")), "{t}");
    assert_eq!(t[1]["sha256"].as_str(), Some(hex(&sha(&B)).as_str()), "{t}");
    // An external file missing: exit 2, nothing printed, the file named.
    std::fs::remove_file(d.path("m/one.data")).unwrap();
    let out = gd_in(d.dir.path(), &["statement", "m/inline.onnx", "m/one.onnx"]);
    assert_eq!((out.status.code(), out.stdout.is_empty()), (Some(2), true));
    let err = text(&out.stderr);
    assert!(err.contains("m/one.onnx") && err.contains("external location 'one.data'"), "{err}");
}

#[test]
fn verify_and_check_fail_when_a_weight_byte_changes_or_an_external_file_is_missing() {
    let d = Dir::new();
    let names = layouts(&d, "");
    let label = the_label(&d, &names);
    let args: Vec<&str> = ["statement"].into_iter().chain(names.iter().map(String::as_str)).collect();
    let out = gd_in(d.dir.path(), &args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    d.write("s.json", &out.stdout);
    let sums: String = names.iter().map(|n| format!("{label}  {n}\n")).collect();
    d.write("SUMS", sums.as_bytes());
    let verify = || {
        let o = gd_in(d.dir.path(), &["verify", "--no-signature", "s.json"]);
        (o.status.code(), text(&o.stdout), text(&o.stderr))
    };
    let check = || {
        let o = gd_in(d.dir.path(), &["--check", "SUMS"]);
        (o.status.code(), text(&o.stdout), text(&o.stderr))
    };
    let said = |verdicts: [&str; 3]| {
        let lines: String = names.iter().zip(verdicts).map(|(n, v)| format!("{n}: {v}\n")).collect();
        (format!("s.json: signature NOT CHECKED (--no-signature)\n{lines}"), lines)
    };
    let (v, c) = said(["OK", "OK", "OK"]);
    assert_eq!(verify(), (Some(0), v, String::new()));
    assert_eq!(check(), (Some(0), c, String::new()));

    // The padding between the tensors of one.data is not content.
    flip(&d, "one.data", 12);
    let (v, c) = said(["OK", "OK", "OK"]);
    assert_eq!(verify(), (Some(0), v, String::new()));
    assert_eq!(check().1, c);
    // One byte of b in one.data: one.onnx fails, exit 1.
    flip(&d, "one.data", 12);
    flip(&d, "one.data", 17);
    let (v, c) = said(["OK", "FAILED", "OK"]);
    let (code, out, err) = verify();
    assert_eq!((code, out), (Some(1), v), "{err}");
    assert!(err.contains("1 computed label did NOT match"), "{err}");
    assert_eq!(check().0, Some(1));
    assert_eq!(check().1, c);
    flip(&d, "one.data", 17);
    // One byte of w's file: per.onnx fails.
    flip(&d, "per.w.bin", 3);
    let (v, c) = said(["OK", "OK", "FAILED"]);
    assert_eq!(verify().1, v);
    assert_eq!((check().0, check().1), (Some(1), c));
    flip(&d, "per.w.bin", 3);
    assert_eq!(verify().0, Some(0));

    // b's file missing: FAILED open or read, the model and the missing file named.
    std::fs::rename(d.path("per.b.bin"), d.path("away")).unwrap();
    let (v, c) = said(["OK", "OK", "FAILED open or read"]);
    let (code, out, err) = verify();
    assert_eq!((code, out), (Some(1), v), "{err}");
    assert!(err.contains("per.onnx: ") && err.contains("tensor 'b'"), "{err}");
    assert!(err.contains("external location 'per.b.bin': No such file or directory"), "{err}");
    let (code, out, err) = check();
    assert_eq!((code, out), (Some(1), c), "{err}");
    assert!(err.contains("external location 'per.b.bin'"), "{err}");
    std::fs::rename(d.path("away"), d.path("per.b.bin")).unwrap();
    // one.data cut short: b's range is past its end.
    std::fs::write(d.path("one.data"), [&W[..], &[0; 8]].concat()).unwrap();
    let (code, out, err) = verify();
    assert_eq!((code, out), (Some(1), said(["OK", "FAILED open or read", "OK"]).0), "{err}");
    assert!(err.contains("external range 16 + 12 past the end of 'one.data' (16 bytes)"), "{err}");

    // Another layout of the same weights verifies: one.onnx saved inline.
    std::fs::copy(d.path("inline.onnx"), d.path("one.onnx")).unwrap();
    let (v, _) = said(["OK", "OK", "OK"]);
    assert_eq!(verify(), (Some(0), v, String::new()));
}

/// `gguf-digest bom ARGS` in `dir`, the timestamp fixed.
fn bom_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(common::gguf_digest_bin())
        .arg("bom")
        .args(args)
        .current_dir(dir)
        .env("SOURCE_DATE_EPOCH", "1700000000")
        .output()
        .unwrap()
}

#[test]
fn a_bom_lists_the_model_and_the_external_files_it_reads_with_their_digests() {
    let d = Dir::new();
    let names = layouts(&d, "m");
    let label = the_label(&d, &names);
    let out = bom_in(d.dir.path(), &["m/inline.onnx", "m/one.onnx", "m/per.onnx"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let b: JsonValue = serde_json::from_slice(&out.stdout).unwrap();
    let c = b["components"].as_array().unwrap();
    assert_eq!(c.len(), 3, "one component per model: {b}");
    let prop = |c: &JsonValue, n: &str| -> Option<String> {
        c["properties"].as_array()?.iter().find(|p| p["name"] == n)?["value"].as_str().map(str::to_string)
    };
    let file_sha = |p: &str| hex(&sha(&std::fs::read(d.path(p)).unwrap()));
    let want_files =
        [vec!["m/inline.onnx"], vec!["m/one.onnx", "m/one.data"], vec!["m/per.onnx", "m/per.w.bin", "m/per.b.bin"]];
    for (i, (m, files)) in c.iter().zip(&want_files).enumerate() {
        assert_eq!(m["type"], "machine-learning-model", "{m}");
        assert_eq!(m["name"].as_str(), Some(files[0]), "{m}");
        assert_eq!(m["bom-ref"].as_str(), Some(format!("model-{}", i + 1).as_str()));
        assert_eq!(prop(m, "gguf-digest:label"), Some(label.clone()), "{m}");
        assert_eq!(prop(m, "gguf-digest:format").as_deref(), Some("onnx"));
        assert_eq!(prop(m, "gguf-digest:contract").as_deref(), Some("onnx-skeleton-v1"));
        assert_eq!(prop(m, "gguf-digest:reference").as_deref(), Some(files[0]));
        assert_eq!(prop(m, "gguf-digest:tensor-type:F32").as_deref(), Some("2"), "{m}");
        // Every file read, once, with its SHA-256 and size: the model and
        // its external data files (one.data once for both of its tensors).
        let got: Vec<(String, String, String, String)> = m["components"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                assert_eq!(f["type"], "file", "{f}");
                assert_eq!(f["hashes"][0]["alg"], "SHA-256", "{f}");
                (
                    f["name"].as_str().unwrap().to_string(),
                    f["hashes"][0]["content"].as_str().unwrap().to_string(),
                    prop(f, "gguf-digest:size").unwrap(),
                    f["bom-ref"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        let want: Vec<(String, String, String, String)> = files
            .iter()
            .enumerate()
            .map(|(k, p)| {
                let size = std::fs::metadata(d.path(p)).unwrap().len().to_string();
                (p.to_string(), file_sha(p), size, format!("model-{}-file-{}", i + 1, k + 1))
            })
            .collect();
        assert_eq!(got, want);
    }
    // The same weights: the labels are one, the files differ, so the
    // serial number (of the labels) is the same for each layout alone.
    let serial = |n: &str| {
        let o = bom_in(d.dir.path(), &[n]);
        serde_json::from_slice::<JsonValue>(&o.stdout).unwrap()["serialNumber"].clone()
    };
    assert_eq!(serial("m/one.onnx"), serial("m/per.onnx"));

    // SPDX: the model's package and its files with their checksums.
    let out = bom_in(d.dir.path(), &["--format", "spdx", "m/per.onnx"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc = text(&out.stdout);
    for p in ["m/per.onnx", "m/per.w.bin", "m/per.b.bin"] {
        assert!(doc.contains(&format!("\"{p}\"")) && doc.contains(&file_sha(p)), "{p}: {doc}");
    }
    assert!(doc.contains(&format!("sha256:{label}")), "{doc}");

    // An external file missing: exit 2, nothing written, the file named.
    std::fs::remove_file(d.path("m/per.w.bin")).unwrap();
    let out = bom_in(d.dir.path(), &["m/inline.onnx", "m/per.onnx"]);
    assert_eq!((out.status.code(), out.stdout.is_empty()), (Some(2), true));
    assert!(text(&out.stderr).contains("external location 'per.w.bin'"), "{}", text(&out.stderr));
}

/// Runs openssl in `dir` (the test skipped without it, outside CI).
fn openssl(dir: &Path, args: &[&str]) -> Option<()> {
    crate::sign_statement::openssl(dir, args).map(|_| ())
}

/// A private key `name.key` (mode 600, as `sign` wants it) and `name.pub`.
fn key_pair(dir: &Path, name: &str, algorithm: &[&str]) -> Option<()> {
    use std::os::unix::fs::PermissionsExt as _;
    let key = format!("{name}.key");
    openssl(dir, &[&["genpkey"], algorithm, &["-out", &key]].concat())?;
    std::fs::set_permissions(dir.join(&key), std::fs::Permissions::from_mode(0o600)).unwrap();
    openssl(dir, &["pkey", "-in", &key, "-pubout", "-out", &format!("{name}.pub")])
}

#[test]
fn a_signed_bundle_of_every_layout_verifies_with_the_key_until_a_weight_changes() {
    let d = Dir::new();
    let dir = d.dir.path();
    let names = layouts(&d, "");
    let Some(()) = key_pair(dir, "ed", &["-algorithm", "ed25519"]) else { return };
    let args: Vec<&str> = names.iter().map(String::as_str).collect();
    let o = gd_in(dir, &[&["sign", "--key", "ed.key", "--out", "b.json"], &args[..]].concat());
    assert_eq!((o.status.code(), text(&o.stderr)), (Some(0), String::new()));
    // The payload is the statement `statement` prints.
    let bundle: JsonValue = serde_json::from_slice(&std::fs::read(d.path("b.json")).unwrap()).unwrap();
    use base64::Engine as _;
    let payload =
        base64::engine::general_purpose::STANDARD.decode(bundle["dsseEnvelope"]["payload"].as_str().unwrap()).unwrap();
    assert_eq!(payload, gd_in(dir, &[&["statement"], &args[..]].concat()).stdout);
    let o = gd_in(dir, &["verify", "--key", "ed.pub", "b.json"]);
    assert_eq!(
        (o.status.code(), text(&o.stdout)),
        (Some(0), "inline.onnx: OK\none.onnx: OK\nper.onnx: OK\n".to_string()),
        "{}",
        text(&o.stderr)
    );
    flip(&d, "one.data", 2);
    let o = gd_in(dir, &["verify", "--key", "ed.pub", "b.json"]);
    assert_eq!(
        (o.status.code(), text(&o.stdout)),
        (Some(1), "inline.onnx: OK\none.onnx: FAILED\nper.onnx: OK\n".to_string())
    );
}

#[test]
fn an_openssf_signature_of_a_directory_with_external_data_checks_each_file_and_accepts_a_relayout() {
    let d = Dir::new();
    let dir = d.dir.path();
    std::fs::create_dir(d.path("m")).unwrap();
    d.write("m/model.onnx", &model(&external(&[("location", "model.data")]), &s(9, &B)));
    d.write("m/model.data", &W);
    let Some(()) = key_pair(dir, "ec", &["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"]) else {
        return;
    };
    let o = gd_in(dir, &["sign", "--format", "oms", "--key", "ec.key", "--out", "oms.json", "m"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let verify = |extra: &[&str]| {
        let o = gd_in(dir, &[&["verify", "--key", "ec.pub", "--root", "m"], extra, &["oms.json"]].concat());
        (o.status.code(), text(&o.stdout), text(&o.stderr))
    };
    let (code, out, err) = verify(&[]);
    assert_eq!(
        (code, out.as_str()),
        (Some(0), "oms.json: signature OK (key ECDSA P-256)\nmodel.data: OK\nmodel.onnx: OK\n"),
        "{err}"
    );
    // The signed statement carries the ONNX component's label.
    let label = text(&gd_in(dir, &["m/model.onnx"]).stdout)[..64].to_string();
    let bundle: JsonValue = serde_json::from_slice(&std::fs::read(d.path("oms.json")).unwrap()).unwrap();
    use base64::Engine as _;
    let payload: JsonValue = serde_json::from_slice(
        &base64::engine::general_purpose::STANDARD.decode(bundle["dsseEnvelope"]["payload"].as_str().unwrap()).unwrap(),
    )
    .unwrap();
    let comp = &payload["predicate"]["gguf_digest"]["components"][0];
    assert_eq!((comp["kind"].as_str(), comp["name"].as_str()), (Some("ONNX"), Some("model.onnx")), "{payload}");
    assert_eq!(comp["label"].as_str(), Some(label.as_str()));

    // A weight byte of the external file: that file fails, the label too.
    flip(&d, "m/model.data", 5);
    let (code, out, _) = verify(&["--accept-relayout"]);
    assert_eq!(code, Some(1));
    assert!(out.contains("model.data: FAILED\n") && out.contains("model.onnx: OK\n"), "{out}");
    assert!(out.contains("the directory's label is not the signed one"), "{out}");
    flip(&d, "m/model.data", 5);
    // The same weights laid out again under the same names (b moved into
    // model.data after 4 bytes of padding, w behind it): every file
    // differs, the signed label holds; accepted only with --accept-relayout.
    d.write("m/model.data", &[&B[..], &[0; 4], &W].concat());
    d.write(
        "m/model.onnx",
        &model(
            &external(&[("location", "model.data"), ("offset", "16"), ("length", "8")]),
            &external(&[("location", "model.data"), ("offset", "0"), ("length", "12")]),
        ),
    );
    assert_eq!(text(&gd_in(dir, &["m/model.onnx"]).stdout)[..64], label);
    let (code, out, _) = verify(&[]);
    assert_eq!(code, Some(1));
    assert!(out.contains("model.data: FAILED\nmodel.onnx: FAILED\n"), "{out}");
    assert!(out.contains("the signed model's label holds"), "{out}");
    let (code, out, err) = verify(&["--accept-relayout"]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("accepted as a relayout of the signed model (--accept-relayout)"), "{out}");
}

#[test]
fn a_hugging_face_snapshots_model_verifies_through_its_links_into_blobs_under_the_root() {
    // The snapshot's model and external files are links into blobs/, as
    // huggingface_hub writes them: verified with the repository as root.
    let d = Dir::new();
    let repo = "hub/models--org--name";
    let snap = format!("{repo}/snapshots/0123456789abcdef0123456789abcdef01234567");
    std::fs::create_dir_all(d.path(&snap)).unwrap();
    std::fs::create_dir_all(d.path(&format!("{repo}/blobs"))).unwrap();
    let ext = model(&external(&[("location", "model.w.bin")]), &external(&[("location", "model.b.bin")]));
    for (blob, bytes, name) in
        [("aaaa", &ext[..], "model.onnx"), ("bbbb", &W, "model.w.bin"), ("cccc", &B, "model.b.bin")]
    {
        d.write(&format!("{repo}/blobs/{blob}"), bytes);
        std::os::unix::fs::symlink(format!("../../blobs/{blob}"), d.path(&format!("{snap}/{name}"))).unwrap();
    }
    d.write("inline.onnx", &model(&s(9, &W), &s(9, &B)));
    let subject = format!("{snap}/model.onnx");
    let out = gd_in(d.dir.path(), &["statement", "--root", "hub", &subject, "inline.onnx"]);
    assert_eq!(out.status.code(), Some(2), "inline.onnx is outside the root: {}", text(&out.stdout));
    let out = gd_in(d.dir.path(), &["statement", "--root", "hub", &subject]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let st: JsonValue = serde_json::from_slice(&out.stdout).unwrap();
    let label = text(&gd_in(d.dir.path(), &["inline.onnx"]).stdout)[..64].to_string();
    assert_eq!(st["subject"][0]["digest"]["sha256"].as_str(), Some(label.as_str()));
    d.write("hub/s.json", &out.stdout);
    let name = subject.strip_prefix("hub/").unwrap();
    let o = gd_in(d.dir.path(), &["verify", "--no-signature", "hub/s.json"]);
    assert_eq!(
        (o.status.code(), text(&o.stdout)),
        (Some(0), format!("hub/s.json: signature NOT CHECKED (--no-signature)\n{name}: OK\n")),
        "{}",
        text(&o.stderr)
    );
    flip(&d, &format!("{repo}/blobs/cccc"), 0);
    let o = gd_in(d.dir.path(), &["verify", "--no-signature", "hub/s.json"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stdout).contains(&format!("{name}: FAILED\n")), "{}", text(&o.stdout));
}
