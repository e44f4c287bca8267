//! The real binary on ONNX models built here byte by byte (docs/SPEC.md
//! Part VI): SPEC's worked labels, one label wherever the elements lie
//! (`raw_data`, packed or unpacked `float_data`, an external file at an
//! offset, in a subdirectory), `--skeleton`, `--check`, `--json`, `inspect`,
//! `diff`, and every refusal of external data naming the file, the field
//! path, the byte offset and the tensor, exit 2.
use crate::common;

use common::onnx::{int, rec, s, value_info, varint};
use common::{Dir, gd_in, hex, sha, text};
use serde_json::Value as JsonValue;

/// SPEC X10's second worked example's label.
const WORKED_W: &str = "e8dd38d6e7341d5c5f8e40b8d849c33e069a6e43f35e32da354b94ca2cbcbb4e";

/// The worked example's model: `Identity` from x to y, with the
/// initializer `w` (F32 [2] = 1.0, 2.0) whose data records are `data`, and
/// `op` as the node's op type.
fn model_with(data: &[u8], op: &str) -> Vec<u8> {
    let tensor = [int(1, 2), int(2, 1), s(8, b"w"), data.to_vec()].concat();
    let node = [s(1, b"x"), s(2, b"y"), s(4, op.as_bytes())].concat();
    let graph = [s(1, &node), s(2, b"g"), s(5, &tensor), s(11, &value_info("x")), s(12, &value_info("y"))].concat();
    [int(1, 8), s(7, &graph), s(8, &[s(1, b""), int(2, 13)].concat())].concat()
}

const W: [u8; 8] = [0, 0, 0x80, 0x3f, 0, 0, 0, 0x40];

fn raw() -> Vec<u8> {
    model_with(&s(9, &W), "Identity")
}

/// `external_data` entries and `data_location` EXTERNAL.
fn external(entries: &[(&str, &str)]) -> Vec<u8> {
    let mut data: Vec<u8> =
        entries.iter().flat_map(|(k, v)| s(13, &[s(1, k.as_bytes()), s(2, v.as_bytes())].concat())).collect();
    data.extend(int(14, 1));
    model_with(&data, "Identity")
}

#[test]
fn one_label_wherever_the_elements_lie_and_sums_check_json_skeleton() {
    let d = Dir::new();
    d.write("raw.onnx", &raw());
    let packed = s(4, &[1.0f32.to_le_bytes(), 2.0f32.to_le_bytes()].concat());
    d.write("packed.onnx", &model_with(&packed, "Identity"));
    let unpacked = [rec(4, 5, &1.0f32.to_le_bytes()), rec(4, 5, &2.0f32.to_le_bytes())].concat();
    d.write("unpacked.onnx", &model_with(&unpacked, "Identity"));
    d.write("w.bin", &[b"junk".as_slice(), &W, b"more"].concat());
    d.write("ext.onnx", &external(&[("location", "w.bin"), ("offset", "4"), ("length", "8")]));
    std::fs::create_dir(d.path("sub")).unwrap();
    d.write("sub/all.bin", &W);
    d.write("sub.onnx", &external(&[("location", "sub/all.bin"), ("checksum", "x"), ("basepath", "/elsewhere")]));
    let names = ["raw.onnx", "packed.onnx", "unpacked.onnx", "ext.onnx", "sub.onnx"];
    let out = gd_in(d.dir.path(), &names);
    let want: String = names.iter().map(|n| format!("{WORKED_W}  {n}\n")).collect();
    assert_eq!((out.status.code(), text(&out.stdout)), (Some(0), want.clone()), "{}", text(&out.stderr));
    let out = gd_in(d.dir.path(), &[&["--no-mmap"][..], &names].concat());
    assert_eq!((out.status.code(), text(&out.stdout)), (Some(0), want.clone()), "{}", text(&out.stderr));

    let out = gd_in(d.dir.path(), &["--skeleton", "ext.onnx"]);
    assert_eq!(&out.stdout[..8], b"ONNX\x01\0\0\0");
    assert_eq!(out.stdout.len(), 1092, "SPEC X10: the skeleton is 1,092 bytes");
    assert_eq!(hex(&sha(&out.stdout)), WORKED_W);

    d.write("SUMS", want.as_bytes());
    let out = gd_in(d.dir.path(), &["--check", "SUMS"]);
    assert_eq!(out.status.code(), Some(0), "{}{}", text(&out.stdout), text(&out.stderr));
    // One element changed in the external file: ext.onnx fails, the rest hold.
    d.write("w.bin", &[b"junk".as_slice(), &[0, 0, 0x80, 0x3f, 0, 0, 0, 0x41], b"more"].concat());
    let out = gd_in(d.dir.path(), &["--check", "SUMS"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stdout).contains("ext.onnx: FAILED") && text(&out.stdout).contains("raw.onnx: OK"),
        "{}",
        text(&out.stdout)
    );
    // Bytes of the external file outside the range are not content.
    d.write("w.bin", &[b"JUNK".as_slice(), &W, b"MORE!"].concat());
    let out = gd_in(d.dir.path(), &["--check", "SUMS"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));

    let out = gd_in(d.dir.path(), &["--json", "ext.onnx"]);
    assert_eq!(out.status.code(), Some(0));
    let j: JsonValue = serde_json::from_slice(&out.stdout).unwrap();
    let e = &j["files"][0];
    assert_eq!(
        (e["format"].as_str(), e["spec"].as_str(), e["label"].as_str()),
        (Some("onnx"), Some("onnx-skeleton-v1"), Some(WORKED_W))
    );
    assert_eq!(e["ir_version"], 8);
    assert_eq!(e["external_files"][0]["location"], "w.bin");
    let t = &e["tensors"][0];
    assert_eq!(
        (t["name"].as_str(), t["dtype"].as_str(), t["storage"].as_str()),
        (Some("w"), Some("F32"), Some("external"))
    );
    assert_eq!(t["path"], "graph.initializer[0]");
    assert_eq!(t["shape"], serde_json::json!([2]));
    assert_eq!(t["sha256"].as_str(), Some(hex(&sha(&W)).as_str()));
}

#[test]
fn content_changes_change_the_label_and_diff_names_them() {
    let d = Dir::new();
    d.write("a.onnx", &raw());
    d.write("b.onnx", &model_with(&s(9, &[0, 0, 0x80, 0x3f, 0, 0, 0, 0x41]), "Identity"));
    d.write("c.onnx", &model_with(&s(9, &W), "Neg"));
    let out = gd_in(d.dir.path(), &["a.onnx", "b.onnx", "c.onnx"]);
    let labels: Vec<String> = text(&out.stdout).lines().map(|l| l[..64].to_string()).collect();
    assert_eq!(labels.len(), 3);
    assert!(labels[0] != labels[1] && labels[0] != labels[2] && labels[1] != labels[2], "{labels:?}");

    let out = gd_in(d.dir.path(), &["diff", "a.onnx", "b.onnx"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("~ initializer 'w': F32 [2] sha256"), "{}", text(&out.stdout));
    let out = gd_in(d.dir.path(), &["diff", "a.onnx", "c.onnx"]);
    assert!(
        text(&out.stdout).contains("~ node[0]: Identity '' (x) -> (y) -> Neg '' (x) -> (y)"),
        "{}",
        text(&out.stdout)
    );
    let out = gd_in(d.dir.path(), &["diff", "a.onnx", "a.onnx"]);
    assert_eq!((out.status.code(), text(&out.stdout)), (Some(0), format!("same label {WORKED_W}\n")));

    d.write("w.bin", &W);
    d.write("ext.onnx", &external(&[("location", "w.bin")]));
    let out = gd_in(d.dir.path(), &["inspect", "ext.onnx"]);
    let t = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    for want in [
        "ir_version: 8",
        "opsets:     ai.onnx:13",
        "inputs:     x",
        "outputs:    y",
        "Identity: 1",
        "F32: 1 (8 bytes)",
        "w.bin (8 bytes)",
    ] {
        assert!(t.contains(want), "{want}: {t}");
    }
    let out = gd_in(d.dir.path(), &["inspect", "--json", "ext.onnx"]);
    let j: JsonValue = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out.stdout)));
    let j = if j.get("files").is_some() { j["files"][0].clone() } else { j };
    assert_eq!(j["nodes_by_op_type"]["Identity"], 1, "{j}");
}

/// A model file's name, its `external_data` entries, and why it is refused.
type Refusal<'a> = (&'a str, Vec<(&'a str, String)>, &'a str);

/// Refused with exit 2, the message naming the file, the field path, the
/// byte offset and the tensor, and `why`.
fn refused(d: &Dir, name: &str, why: &str) {
    let out = gd_in(d.dir.path(), &[name]);
    let err = text(&out.stderr);
    assert_eq!((out.status.code(), text(&out.stdout)), (Some(2), String::new()), "{name}: {err}");
    let want = format!("{name}: byte 27, tensor 'w': graph.initializer[0]: ");
    assert!(err.contains(&want) && err.contains(why), "{name}: want {want}…{why}, got {err}");
}

#[test]
fn external_data_is_opened_beneath_the_models_directory_only() {
    let top = Dir::new();
    std::fs::write(top.path("outside.bin"), W).unwrap();
    std::fs::create_dir(top.path("m")).unwrap();
    let d = Dir { dir: tempfile::tempdir_in(top.path("m")).unwrap() };
    d.write("w.bin", &W);
    let outside = top.path("outside.bin");
    let cases: Vec<Refusal> = vec![
        (
            "abs.onnx",
            vec![("location", outside.display().to_string())],
            "is not a relative name beneath the model's directory",
        ),
        (
            "dots.onnx",
            vec![("location", "../../outside.bin".into())],
            "is not a relative name beneath the model's directory",
        ),
        ("dot.onnx", vec![("location", "./w.bin".into())], "'./w.bin' is not a relative name"),
        ("empty.onnx", vec![("location", "a//w.bin".into())], "'a//w.bin' is not a relative name"),
        ("backslash.onnx", vec![("location", "a\\w.bin".into())], "is not a relative name"),
        ("none.onnx", vec![("offset", "0".into())], "external_data without location"),
        ("key.onnx", vec![("location", "w.bin".into()), ("where", "x".into())], "external_data key 'where'"),
        (
            "twice.onnx",
            vec![("location", "w.bin".into()), ("location", "w.bin".into())],
            "external_data key location twice",
        ),
        (
            "past.onnx",
            vec![("location", "w.bin".into()), ("offset", "4".into())],
            "external length 4, 2 elements of F32 take 8",
        ),
        (
            "range.onnx",
            vec![("location", "w.bin".into()), ("offset", "4".into()), ("length", "8".into())],
            "external range 4 + 8 past the end of 'w.bin' (8 bytes)",
        ),
        ("offset.onnx", vec![("location", "w.bin".into()), ("offset", "9".into())], "external offset 9 past the end"),
        (
            "sign.onnx",
            vec![("location", "w.bin".into()), ("offset", "+0".into())],
            "external offset '+0' is not a decimal",
        ),
        (
            "big.onnx",
            vec![("location", "w.bin".into()), ("length", "18446744073709551616".into())],
            "does not fit 64 bits",
        ),
        ("missing.onnx", vec![("location", "nothere.bin".into())], "external location 'nothere.bin': "),
    ];
    for (name, entries, why) in &cases {
        let e: Vec<(&str, &str)> = entries.iter().map(|(k, v)| (*k, v.as_str())).collect();
        d.write(name, &external(&e));
        refused(&d, name, why);
    }
    // A link out of the directory, and a directory on the way that is a link.
    std::os::unix::fs::symlink(&outside, d.path("link.bin")).unwrap();
    d.write("link.onnx", &external(&[("location", "link.bin")]));
    refused(&d, "link.onnx", "external location 'link.bin': leads outside the model's directory");
    std::os::unix::fs::symlink("../../m", d.path("up")).unwrap();
    d.write("up.onnx", &external(&[("location", "up/outside.bin")]));
    refused(&d, "up.onnx", "external location 'up/outside.bin': ");
    std::fs::create_dir(d.path("real")).unwrap();
    d.write("real/w.bin", &W);
    std::os::unix::fs::symlink("real", d.path("alias")).unwrap();
    d.write("alias.onnx", &external(&[("location", "alias/w.bin")]));
    refused(&d, "alias.onnx", "external location 'alias/w.bin': ");
    // A link that stays inside is followed; a plain subdirectory is read.
    std::os::unix::fs::symlink("real/w.bin", d.path("inside.bin")).unwrap();
    d.write("inside.onnx", &external(&[("location", "inside.bin")]));
    d.write("real.onnx", &external(&[("location", "real/w.bin")]));
    let out = gd_in(d.dir.path(), &["inside.onnx", "real.onnx"]);
    assert_eq!(text(&out.stdout), format!("{WORKED_W}  inside.onnx\n{WORKED_W}  real.onnx\n"), "{}", text(&out.stderr));
}

#[test]
fn wire_and_tensor_refusals_name_the_field_and_offset() {
    let d = Dir::new();
    let mut both = s(9, &W);
    both.extend(s(4, &[]));
    d.write("both.onnx", &model_with(&both, "Identity"));
    refused(&d, "both.onnx", "raw_data beside float_data");
    d.write("short.onnx", &model_with(&s(9, &W[..4]), "Identity"));
    refused(&d, "short.onnx", "raw_data holds 4 bytes, 2 elements of F32 take 8");
    // A file cut inside the graph: the length runs past the end.
    let m = raw();
    d.write("cut.onnx", &m[..m.len() - 10]);
    let out = gd_in(d.dir.path(), &["cut.onnx"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("cut.onnx: byte 2: ModelProto: a length-delimited value of"),
        "{}",
        text(&out.stderr)
    );
    // A field number ModelProto does not define.
    d.write("unknown.onnx", &[raw(), int(9, 1)].concat());
    let out = gd_in(d.dir.path(), &["unknown.onnx"]);
    assert!(
        text(&out.stderr).contains(&format!("byte {}: ModelProto: field number 9 is not in ModelProto", raw().len())),
        "{}",
        text(&out.stderr)
    );
    // IR 2, and standard input.
    let mut ir2 = raw();
    ir2[1] = 2;
    d.write("ir2.onnx", &ir2);
    let out = gd_in(d.dir.path(), &["ir2.onnx"]);
    assert!(
        text(&out.stderr).contains("ModelProto.ir_version: 2: only IR versions 3 to 13 are read"),
        "{}",
        text(&out.stderr)
    );
    let out = std::process::Command::new(common::gguf_digest_bin())
        .arg("-")
        .stdin(std::fs::File::open(d.write("stdin.onnx", &raw())).unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("cannot be read from standard input"), "{}", text(&out.stderr));
}

#[test]
fn a_hugging_face_snapshots_links_into_blobs_are_followed_and_links_out_refused() {
    let d = Dir::new();
    let repo = d.path("hub/models--org--name");
    let snap = repo.join("snapshots/0123456789abcdef0123456789abcdef01234567");
    std::fs::create_dir_all(&snap).unwrap();
    std::fs::create_dir_all(repo.join("blobs")).unwrap();
    std::fs::write(repo.join("blobs/aaaa"), external(&[("location", "w.bin")])).unwrap();
    std::fs::write(repo.join("blobs/bbbb"), W).unwrap();
    std::os::unix::fs::symlink("../../blobs/aaaa", snap.join("model.onnx")).unwrap();
    std::os::unix::fs::symlink("../../blobs/bbbb", snap.join("w.bin")).unwrap();
    let out = gd_in(&snap, &["model.onnx"]);
    assert_eq!(
        (out.status.code(), text(&out.stdout)),
        (Some(0), format!("{WORKED_W}  model.onnx\n")),
        "{}",
        text(&out.stderr)
    );
    // Out of the repository folder: refused.
    std::fs::write(d.path("hub/outside.bin"), W).unwrap();
    std::fs::remove_file(snap.join("w.bin")).unwrap();
    std::os::unix::fs::symlink("../../../outside.bin", snap.join("w.bin")).unwrap();
    let out = gd_in(&snap, &["model.onnx"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("external location 'w.bin': leads outside the model's directory"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn many_tensors_naming_one_range_meet_the_work_bound() {
    // 20 tensors of 1 MiB, all the same 1 MiB of w.bin: 20 MiB of elements
    // against 16 × (1 MiB + the model) + 1 MiB.
    let d = Dir::new();
    d.write("w.bin", &vec![0u8; 1 << 20]);
    let tensor = |i: usize| {
        let ext = [s(1, b"location"), s(2, b"w.bin")].concat();
        [int(1, 1 << 18), int(2, 1), s(8, format!("w{i}").as_bytes()), s(13, &ext), int(14, 1)].concat()
    };
    let model = |count: usize| {
        let inits: Vec<u8> = (0..count).flat_map(|i| s(5, &tensor(i))).collect();
        [int(1, 8), s(7, &inits), s(8, &[s(1, b""), int(2, 13)].concat())].concat()
    };
    d.write("ok.onnx", &model(17));
    let out = gd_in(d.dir.path(), &["ok.onnx"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    d.write("big.onnx", &model(20));
    let out = gd_in(d.dir.path(), &["big.onnx"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("tensor 'w17': graph.initializer[17]: the elements of all tensors exceed the work bound"),
        "{err}"
    );
}

/// An ONNX model whose main graph's initializers are `inits` (name, ONNX
/// `data_type`, dims, the tensor's data records).
fn model_of(inits: &[(&str, u64, &[u64], Vec<u8>)]) -> Vec<u8> {
    let node = [s(1, b"x"), s(2, b"y"), s(4, b"Identity")].concat();
    let mut graph = [s(1, &node), s(2, b"g")].concat();
    for (name, dt, dims, data) in inits {
        let mut t: Vec<u8> = dims.iter().flat_map(|&d| int(1, d)).collect();
        t.extend(int(2, *dt));
        t.extend(s(8, name.as_bytes()));
        t.extend_from_slice(data);
        graph.extend(s(5, &t));
    }
    graph.extend([s(11, &value_info("x")), s(12, &value_info("y"))].concat());
    [int(1, 8), s(7, &graph), s(8, &[s(1, b""), int(2, 13)].concat())].concat()
}

/// `diff` of the two files in `d`: exit code, stdout, stderr.
fn diff(d: &Dir, args: &[&str]) -> (Option<i32>, String, String) {
    let mut all = vec!["diff"];
    all.extend_from_slice(args);
    let out = gd_in(d.dir.path(), &all);
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

#[test]
fn diff_against_safetensors_compares_initializers_by_name_dtype_shape_and_elements() {
    use common::st::{St, StTensor};
    let st_t = |name: &str, dtype: &str, shape: &[u64], data: &[u8]| StTensor {
        name: name.into(),
        dtype: dtype.into(),
        shape: shape.to_vec(),
        data: data.to_vec(),
    };
    let b: [u8; 8] = [1, 0, 0, 0, 2, 0, 0, 0];
    let d = Dir::new();
    // `w` in raw_data, `b` (I32) in packed int32_data: where the elements
    // lie is not compared, their digest is.
    let typed_b = s(5, &[varint(1), varint(2)].concat());
    d.write("m.onnx", &model_of(&[("w", 1, &[2], s(9, &W)), ("b", 6, &[2], typed_b.clone())]));
    d.write(
        "same.safetensors",
        &St::new().tensor(st_t("w", "F32", &[2], &W)).tensor(st_t("b", "I32", &[2], &b)).build(),
    );

    // Identical tensors: the labels still differ (exit 1), by format.
    let (code, out, err) = diff(&d, &["m.onnx", "same.safetensors"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(out.starts_with("an ONNX model against a safetensors model: labels differ by format"), "{out}");
    assert!(out.contains("  2 tensors identical\n") && out.contains("every tensor is identical"), "{out}");
    // And the reverse, with the sides named the other way round.
    let (code, out, err) = diff(&d, &["same.safetensors", "m.onnx"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(out.starts_with("a safetensors model against an ONNX model:"), "{out}");
    assert!(out.contains("  2 tensors identical\n") && out.contains("every tensor is identical"), "{out}");

    // One element changed, a dtype changed (the same bytes as U32), a
    // tensor missing on either side.
    let mut w2 = W;
    w2[7] ^= 1;
    d.write(
        "other.safetensors",
        &St::new()
            .tensor(st_t("w", "F32", &[2], &w2))
            .tensor(st_t("b", "U32", &[2], &b))
            .tensor(st_t("extra", "F32", &[2], &w2))
            .build(),
    );
    d.write(
        "more.onnx",
        &model_of(&[("w", 1, &[2], s(9, &W)), ("b", 6, &[2], typed_b), ("lonely", 1, &[1], s(9, &W[..4]))]),
    );
    let (code, out, err) = diff(&d, &["more.onnx", "other.safetensors"]);
    assert_eq!(code, Some(1), "{err}");
    let sha = |bytes: &[u8]| hex(&sha(bytes));
    for want in [
        "  0 tensors identical\n".to_string(),
        format!("  ~ w: F32 [2] {} -> F32 [2] {}\n", sha(&W), sha(&w2)),
        format!("  ~ b: I32 [2] {} -> U32 [2] {}\n", sha(&b), sha(&b)),
        "  - lonely (only in the first)\n".to_string(),
        "  + extra (only in the second)\n".to_string(),
    ] {
        assert!(out.contains(&want), "want {want:?} in {out}");
    }
    assert!(!out.contains("every"), "{out}");

    // --json: the same, as members.
    let (code, out, err) = diff(&d, &["--json", "other.safetensors", "more.onnx"]);
    assert_eq!(code, Some(1), "{err}");
    let j: JsonValue = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let j = if j.get("diff").is_some() { j["diff"].clone() } else { j };
    assert_eq!(j["formats"], serde_json::json!(["a safetensors model", "an ONNX model"]), "{j}");
    assert_eq!((j["labels_equal"].clone(), j["tensors_identical"].clone()), (false.into(), false.into()), "{j}");
    assert_eq!(j["identical"], 0, "{j}");
    assert_eq!(j["changed"].as_array().map(Vec::len), Some(2), "{j}");
    assert_eq!(j["changed"][0]["a"]["dtype"], "U32", "{j}");
    assert_eq!(j["changed"][0]["b"]["dtype"], "I32", "{j}");
    assert_eq!(j["only_a"][0]["tensor"]["name"], "extra", "{j}");
    assert_eq!(j["only_b"][0]["tensor"]["name"], "lonely", "{j}");
    assert_eq!(j["only_b"][0]["tensor"]["shape"], serde_json::json!([1]), "{j}");

    // A model neither side can compare with: refused, exit 2.
    d.write("m.gguf", b"GGUF\x03\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0");
    let (code, out, err) = diff(&d, &["m.onnx", "m.gguf"]);
    assert_eq!((code, out.as_str()), (Some(2), ""), "{err}");
}

/// The model of `model_with` around a whole initializer message `tensor`,
/// with `extra` graph records after it.
fn model_around(tensor: &[u8], extra: &[u8]) -> Vec<u8> {
    let node = [s(1, b"x"), s(2, b"y"), s(4, b"Identity")].concat();
    let graph =
        [s(1, &node), s(2, b"g"), s(5, tensor), extra.to_vec(), s(11, &value_info("x")), s(12, &value_info("y"))]
            .concat();
    [int(1, 8), s(7, &graph), s(8, &[s(1, b""), int(2, 13)].concat())].concat()
}

/// The initializer `w`: `dims`, `data_type` `dt`, then `data`'s records.
fn w_tensor(dims: &[u64], dt: u64, data: &[u8]) -> Vec<u8> {
    let mut t: Vec<u8> = dims.iter().flat_map(|&d| int(1, d)).collect();
    t.extend(int(2, dt));
    t.extend(s(8, b"w"));
    t.extend_from_slice(data);
    t
}

#[test]
fn every_refusal_of_the_model_names_the_file_the_field_path_and_the_offset() {
    let d = Dir::new();
    let w = w_tensor(&[2], 1, &s(9, &W));
    // The initializer's message starts at byte 27 (as in `refused`).
    let neg = [vec![0x08], vec![0xff; 9], vec![0x01], int(2, 1), s(8, b"w")].concat();
    let idx = [int(1, 1), int(2, 7), s(8, b"i"), s(9, &[1, 0, 0, 0, 0, 0, 0, 0])].concat();
    let sparse = s(15, &[s(1, &w), s(2, &idx), int(3, 2)].concat());
    let nested = {
        // ModelProto 1, graph 2, value_info 3, its type 4, each sequence two
        // more: the tensor_type of the 48th sequence is level 101.
        let mut t = s(1, &int(1, 1));
        for _ in 0..48 {
            t = s(4, &s(1, &t));
        }
        [int(1, 8), s(7, &s(13, &[s(1, b"v"), s(2, &t)].concat()))].concat()
    };
    let mut ir2 = raw();
    ir2[1] = 2;
    let mut ir14 = raw();
    ir14[1] = 14;
    let n = raw().len();
    let cases: Vec<(&str, Vec<u8>, String)> = vec![
        (
            "dup.onnx",
            model_around(&w, &s(5, &w)),
            // The second initializer's message: 27 + its 17 bytes + its record's tag and length.
            "byte 46: graph.initializer: two entries with the key 'w'".into(),
        ),
        (
            "segment.onnx",
            model_around(&w_tensor(&[2], 1, &[s(9, &W), s(3, &int(1, 0))].concat()), b""),
            // The segment record, 17 bytes into the tensor.
            "byte 44: graph.initializer[0]: a segment: v1 labels whole tensors only".into(),
        ),
        (
            "nodata.onnx",
            model_around(&w_tensor(&[2], 1, b""), b""),
            "byte 27, tensor 'w': graph.initializer[0]: 2 elements and no data".into(),
        ),
        (
            "dtype.onnx",
            model_around(&w_tensor(&[2], 27, &s(9, &W)), b""),
            "byte 27, tensor 'w': graph.initializer[0]: data_type 27 is not in the table".into(),
        ),
        ("negdim.onnx", model_around(&neg, b""), "byte 27, tensor 'w': graph.initializer[0]: a negative dim -1".into()),
        (
            "sparse.onnx",
            model_around(&w, &sparse),
            // The sparse initializer's values: its record at 44, its message at 46.
            "byte 46, tensor 'w': graph.sparse_initializer[0]: a sparse initializer named as a dense one ('w')".into(),
        ),
        ("nograph.onnx", int(1, 8), "byte 0: ModelProto: no graph".into()),
        (
            "twice.onnx",
            [raw(), int(1, 8)].concat(),
            format!("byte {n}: ir_version: a non-repeated field written in two records"),
        ),
        (
            "split.onnx",
            [int(1, 8), s(7, &s(2, b"g")), s(7, &s(2, b"h"))].concat(),
            "byte 7: graph: a non-repeated field written in two records".into(),
        ),
        (
            "unknown.onnx",
            [raw(), int(9, 1)].concat(),
            format!("byte {n}: ModelProto: field number 9 is not in ModelProto"),
        ),
        ("ir2.onnx", ir2, "byte 0: ModelProto.ir_version: 2: only IR versions 3 to 13 are read".into()),
        ("ir14.onnx", ir14, "byte 0: ModelProto.ir_version: 14: only IR versions 3 to 13 are read".into()),
        (
            "deep.onnx",
            nested,
            format!(
                "byte 242: graph.value_info[0].type{}.tensor_type: a message nested more than 100 deep",
                ".sequence_type.elem_type".repeat(48)
            ),
        ),
    ];
    for (name, bytes, want) in &cases {
        d.write(name, bytes);
        let out = gd_in(d.dir.path(), &[name]);
        let err = text(&out.stderr);
        assert_eq!((out.status.code(), text(&out.stdout)), (Some(2), String::new()), "{name}: {err}");
        assert_eq!(err, format!("gguf-digest: {name}: {want}\n"), "{name}");
    }
}
