//! The real binary on safetensors models: sums lines, `--json`,
//! `--skeleton`, `--check`, `inspect`, `diff` (within and across formats),
//! directories and exit codes.
use crate::common;

use common::st::*;
use common::*;
use serde_json::Value as JsonValue;

fn model() -> St {
    St::new()
        .meta("format", "pt")
        .meta("license", "apache-2.0")
        .tensor(StTensor::filled("embed.weight", "BF16", &[16, 4], 1))
        .tensor(StTensor::filled("layer.0.w", "F32", &[4, 4], 2))
        .tensor(StTensor::filled("layer.0.b", "F32", &[4], 3))
        .tensor(StTensor::filled("step", "I64", &[], 4))
}

#[test]
fn sums_skeleton_and_check() {
    let d = Dir::new();
    let st = model();
    d.write("m.safetensors", &st.build());
    let want = st.expected_label();
    let out = gd_in(d.dir.path(), &["m.safetensors"]);
    assert_eq!((out.status.code(), text(&out.stdout)), (Some(0), format!("{want}  m.safetensors\n")));

    let out = gd_in(d.dir.path(), &["--skeleton", "m.safetensors"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(hex(&sha(&out.stdout)), want, "the skeleton hashes to the label");
    assert_eq!(&out.stdout[..4], b"SFTN");

    // A sums file over a file, its shards by index and by first shard.
    let (files, index) = st.sharded("model", &[1, 3]);
    std::fs::create_dir(d.path("ckpt")).unwrap();
    for (name, bytes) in &files {
        d.write(&format!("ckpt/{name}"), bytes);
    }
    d.write("ckpt/model.safetensors.index.json", index.as_bytes());
    let names = ["m.safetensors", "ckpt/model.safetensors.index.json", "ckpt/model-00001-of-00002.safetensors"];
    let sums: String = names.iter().map(|n| format!("{want}  {n}\n")).collect();
    d.write("models.sums", sums.as_bytes());
    let out = gd_in(d.dir.path(), &["-c", "models.sums"]);
    let ok: String = names.iter().map(|n| format!("{n}: OK\n")).collect();
    assert_eq!((out.status.code(), text(&out.stdout)), (Some(0), ok), "{}", text(&out.stderr));

    // A changed byte fails the check with exit 1.
    let mut changed = st.clone();
    changed.tensors[1].data[0] ^= 0x80;
    d.write("m.safetensors", &changed.build());
    let out = gd_in(d.dir.path(), &["-c", "--quiet", "models.sums"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stdout).contains("m.safetensors: FAILED"), "{}", text(&out.stdout));
}

#[test]
fn shards_named_together() {
    // Every shard of a set named (`*.safetensors`), with or without an
    // index: one line, the first shard's, as for GGUF (ADR 0006).
    let d = Dir::new();
    let st = model();
    let want = st.expected_label();
    let (files, index) = st.sharded("model", &[1, 2, 1]);
    for dir in ["indexed", "bare"] {
        std::fs::create_dir(d.path(dir)).unwrap();
        for (name, bytes) in &files {
            d.write(&format!("{dir}/{name}"), bytes);
        }
    }
    d.write("indexed/model.safetensors.index.json", index.as_bytes());
    let shards = |dir: &str| -> Vec<String> { files.iter().map(|(n, _)| format!("{dir}/{n}")).collect() };
    let run = |args: &[String]| gd_in(d.dir.path(), &args.iter().map(String::as_str).collect::<Vec<_>>());

    let indexed = shards("indexed");
    let one_line = format!(
        "{want}  {}
",
        indexed[0]
    );
    let out = run(&indexed);
    assert_eq!((out.status.code(), text(&out.stdout)), (Some(0), one_line.clone()), "{}", text(&out.stderr));
    // In any order, and beside another argument.
    let mut shuffled = indexed.clone();
    shuffled.reverse();
    shuffled.insert(1, "other.safetensors".into());
    d.write("other.safetensors", &St::new().tensor(StTensor::filled("x", "U8", &[2], 9)).build());
    let out = run(&shuffled);
    let other = St::new().tensor(StTensor::filled("x", "U8", &[2], 9)).expected_label();
    assert_eq!(text(&out.stdout), format!("{other}  other.safetensors\n{one_line}"), "{}", text(&out.stderr));
    // The line checks; a later shard alone still names the model through its index.
    d.write("set.sums", one_line.as_bytes());
    let out = gd_in(d.dir.path(), &["-c", "set.sums"]);
    assert_eq!((out.status.code(), text(&out.stdout)), (Some(0), format!("{}: OK\n", indexed[0])));
    let out = run(&indexed[2..3]);
    assert_eq!(text(&out.stdout), format!("{want}  {}\n", indexed[2]), "{}", text(&out.stderr));
    // statement: one subject.
    let out = run(&[&["statement".to_string()], &indexed[..]].concat());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: JsonValue = serde_json::from_slice(&out.stdout).unwrap();
    let subjects = doc["subject"].as_array().unwrap();
    assert_eq!(subjects.len(), 1, "{doc}");
    assert_eq!(
        (subjects[0]["name"].as_str(), subjects[0]["digest"]["sha256"].as_str()),
        (Some(indexed[0].as_str()), Some(want.as_str()))
    );

    // Without an index, the same; a later shard alone is refused.
    let bare = shards("bare");
    let set = text(&run(&bare[..1]).stdout);
    let out = run(&[bare[1].clone(), bare[0].clone(), bare[2].clone()]);
    assert_eq!((out.status.code(), text(&out.stdout)), (Some(0), set), "{}", text(&out.stderr));
    let alone = run(&bare[1..2]);
    assert_eq!(alone.status.code(), Some(2), "a later shard alone is still refused");
}

#[test]
fn json_entry() {
    let d = Dir::new();
    let st = model();
    d.write("m.safetensors", &st.build());
    let out = gd_in(d.dir.path(), &["--json", "m.safetensors", "missing.safetensors"]);
    assert_eq!(out.status.code(), Some(2), "one path failed");
    let doc: JsonValue = serde_json::from_slice(&out.stdout).expect("JSON");
    let f = &doc["files"][0];
    assert_eq!(f["format"], "safetensors");
    assert_eq!(f["spec"], "safetensors-skeleton-v1");
    assert_eq!(f["label"], st.expected_label().as_str());
    assert_eq!(f["tensor_count"], 4);
    assert_eq!(f["metadata_groups"][0]["metadata"]["license"], "apache-2.0");
    let names: Vec<&str> = f["tensors"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["embed.weight", "layer.0.b", "layer.0.w", "step"], "name order");
    let step = &f["tensors"][3];
    assert_eq!(step["shape"], serde_json::json!([]));
    assert_eq!(step["dtype"], "I64");
    assert_eq!(step["sha256"], hex(&sha(&st.tensors[3].data)).as_str());
    // Offsets recomputed in name order: 128 + 16 + 64.
    assert_eq!(step["offset"], 208);
    assert!(doc["files"][1]["error"].as_str().unwrap().contains("No such file"));
}

#[test]
fn inspect_shows_groups_dtypes_tensors_and_warnings() {
    let d = Dir::new();
    let st = St { extra_member: Some("\"note\":1".into()), ..model() };
    let (files, index) = st.sharded("model", &[2, 2]);
    for (name, bytes) in &files {
        d.write(name, bytes);
    }
    // A total_size that disagrees with the tensors: layout, so only a warning.
    let index = index.replace("\"total_size\":", "\"total_size\":1");
    d.write("model.safetensors.index.json", index.as_bytes());
    let out = gd_in(d.dir.path(), &["inspect", "model.safetensors.index.json"]);
    let t = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    for want in
        ["format      safetensors", "(2 files)", "Metadata group 1", "license", "BF16", "total-size", "unknown-members"]
    {
        assert!(t.contains(want), "inspect shows {want:?}:\n{t}");
    }
    assert!(t.contains(&st.expected_label()), "{t}");
    let out = gd_in(d.dir.path(), &["inspect", "--json", "model-00002-of-00002.safetensors"]);
    let doc: JsonValue = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(doc["model_format"], "safetensors");
    assert_eq!(doc["warnings"].as_array().unwrap().len(), 5, "total_size, and 4 tensors' unknown members");
}

/// An index as `transformers` writes it since mid-2025 (an integer
/// `total_parameters` beside `total_size`) labels as the model does
/// (safetensors contract §5, revision 2; issue #31, item 6); `inspect`
/// warns when a derived member is not the integer the tensors give.
#[test]
fn an_index_with_total_parameters_labels_and_inspect_checks_it() {
    let d = Dir::new();
    let st = model();
    let (files, index) = st.sharded("model", &[2, 2]);
    for (name, bytes) in &files {
        d.write(name, bytes);
    }
    let params: u64 = st.tensors.iter().map(|t| t.shape.iter().product::<u64>()).sum();
    let right = index.replace("\"total_size\":", &format!("\"total_parameters\":{params},\"total_size\":"));
    assert_ne!(right, index);
    d.write("model.safetensors.index.json", right.as_bytes());
    let out = gd_in(d.dir.path(), &["model.safetensors.index.json"]);
    assert_eq!(text(&out.stdout), format!("{}  model.safetensors.index.json\n", st.expected_label()));
    let out = gd_in(d.dir.path(), &["inspect", "--json", "model.safetensors.index.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: JsonValue = serde_json::from_slice(&out.stdout).expect("JSON");
    let codes: Vec<&str> = doc["warnings"].as_array().unwrap().iter().filter_map(|w| w["code"].as_str()).collect();
    assert!(!codes.iter().any(|c| c.starts_with("total") || c.starts_with("derived")), "{codes:?}");
    let wrong = right.replace(&format!("\"total_parameters\":{params}"), "\"total_parameters\":\"4B\"");
    d.write("model.safetensors.index.json", wrong.as_bytes());
    let out = gd_in(d.dir.path(), &["inspect", "model.safetensors.index.json"]);
    let t = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(t.contains(&st.expected_label()), "{t}");
    assert!(t.contains("the index's total_parameters is a JSON string, not the integer the tensors give"), "{t}");
    let off = right.replace(&format!("\"total_parameters\":{params}"), "\"total_parameters\":1");
    d.write("model.safetensors.index.json", off.as_bytes());
    let out = gd_in(d.dir.path(), &["inspect", "model.safetensors.index.json"]);
    let t = text(&out.stdout);
    assert!(t.contains(&format!("the index's total_parameters is 1, but the tensors hold {params} elements")), "{t}");
}

#[test]
fn diff_within_and_across_formats() {
    let d = Dir::new();
    let a = model();
    let mut b = a.clone();
    b.tensors[2].data[0] ^= 1;
    b.metadata = Some(vec![("format".into(), "pt".into()), ("license".into(), "mit".into())]);
    d.write("a.safetensors", &a.build());
    d.write("b.safetensors", &b.build());
    d.write("a2.safetensors", &St { pad: 5, key_order: Some(vec![3, 2, 1, 0]), ..a.clone() }.build());
    d.write("m.gguf", &rich_model(&[0]).build());

    let out = gd_in(d.dir.path(), &["diff", "a.safetensors", "a2.safetensors"]);
    assert_eq!(out.status.code(), Some(0), "same model, other layout");
    assert!(text(&out.stdout).contains("labels equal"));

    let out = gd_in(d.dir.path(), &["diff", "a.safetensors", "b.safetensors"]);
    let t = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1));
    assert!(t.contains("~ metadata license: 'apache-2.0' → 'mit'"), "{t}");
    assert!(t.contains("~ tensor layer.0.b: data sha256"), "{t}");
    let out = gd_in(d.dir.path(), &["diff", "--json", "a.safetensors", "b.safetensors"]);
    let doc: JsonValue = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(doc["labels_equal"], false);
    assert_eq!(doc["metadata"][0]["key"], "license");

    let out = gd_in(d.dir.path(), &["diff", "a.safetensors", "m.gguf"]);
    assert_eq!(out.status.code(), Some(2));
    let e = text(&out.stderr);
    assert!(e.contains("A is a safetensors model and B is a GGUF model") && e.contains("different formats"), "{e}");
}

#[test]
fn a_directory_is_labelled_whole_not_by_its_one_model() {
    // Superseded ADR 0012 named "the one model in it"; a directory now has
    // its own label (docs/adr/0023), never its weights' alone.
    let d = Dir::new();
    let st = model();
    std::fs::create_dir(d.path("one")).unwrap();
    d.write("one/model.safetensors", &st.build());
    let out = gd_in(d.dir.path(), &["one", "one/model.safetensors"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let lines: Vec<String> = text(&out.stdout).lines().map(|l| l[..64].to_string()).collect();
    assert_eq!(lines[1], st.expected_label());
    assert_ne!(lines[0], lines[1], "a directory label never equals a weights label");
}

/// A shard prefix may be empty, as for GGUF: `-00001-of-00002.safetensors`
/// is the first shard of a set (and `.safetensors.index.json` its index),
/// not a model of one file.
#[test]
fn a_shard_prefix_may_be_empty() {
    let d = Dir::new();
    // Only `format` in the metadata: without an index, each shard carries it.
    let st = St::new()
        .meta("format", "pt")
        .tensor(StTensor::filled("a", "F32", &[4], 1))
        .tensor(StTensor::filled("b", "U8", &[3], 2))
        .tensor(StTensor::filled("c", "I64", &[2], 3));
    let want = st.expected_label();
    let (files, index) = st.sharded("", &[1, 2]);
    assert_eq!(files[0].0, "-00001-of-00002.safetensors");
    for dir in ["bare", "indexed"] {
        std::fs::create_dir(d.path(dir)).unwrap();
        for (name, bytes) in &files {
            d.write(&format!("{dir}/{name}"), bytes);
        }
    }
    d.write("indexed/.safetensors.index.json", index.as_bytes());
    for dir in ["bare", "indexed"] {
        let first = format!("{dir}/-00001-of-00002.safetensors");
        let out = gd_in(d.dir.path(), &[first.as_str()]);
        assert_eq!(text(&out.stdout), format!("{want}  {first}\n"), "{dir}: {}", text(&out.stderr));
    }
    // Without an index, a later shard alone is refused, naming the first.
    let out = gd_in(d.dir.path(), &["bare/-00002-of-00002.safetensors"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("pass the first shard instead"), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("bare/-00001-of-00002.safetensors"), "{}", text(&out.stderr));
}

/// Metadata alone differs: every tensor carries its file's metadata group,
/// so every tensor leaf differs, but `diff` says it once, as the group,
/// and that no tensor's data does; a tensor that moved to a file of other
/// metadata is still named on its own.
#[test]
fn diff_of_metadata_alone_names_the_group_not_every_tensor() {
    let d = Dir::new();
    let a = model();
    let mut b = a.clone();
    b.metadata = Some(vec![("format".into(), "pt".into()), ("license".into(), "mit".into())]);
    d.write("a.safetensors", &a.build());
    d.write("b.safetensors", &b.build());
    let out = gd_in(d.dir.path(), &["diff", "a.safetensors", "b.safetensors"]);
    let t = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(t.contains("~ metadata license: 'apache-2.0' → 'mit'"), "{t}");
    assert!(!t.contains("~ tensor"), "no tensor is listed: {t}");
    assert!(t.contains(": carried by all 4 tensors (in a.safetensors and b.safetensors), whose data, dtypes and shapes are unchanged\n"), "{t}");
    assert!(t.contains("~ metadata group "), "{t}");
    assert!(t.ends_with("labels differ; metadata keys: 1 differs; metadata groups: 1 changed (4 tensors); tensors: 0 changed, 0 added, 0 removed\n"), "{t}");
    let out = gd_in(d.dir.path(), &["diff", "--json", "a.safetensors", "b.safetensors"]);
    let doc: JsonValue = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(doc["tensors"], JsonValue::Array(vec![]), "{doc}");
    let g = &doc["metadata_groups"][0];
    assert_eq!((g["tensors"].as_u64(), g["data_unchanged"].as_bool()), (Some(4), Some(true)), "{doc}");
    assert_eq!(g["files_a"], serde_json::json!(["a.safetensors"]));

    // With a tensor's data changed too: the group line, and that tensor.
    let mut c = b.clone();
    c.tensors[2].data[0] ^= 1;
    d.write("c.safetensors", &c.build());
    let t = text(&gd_in(d.dir.path(), &["diff", "a.safetensors", "c.safetensors"]).stdout);
    assert!(t.contains(": carried by all 4 tensors (in a.safetensors and c.safetensors)\n"), "{t}");
    assert_eq!(t.matches("~ tensor").count(), 1, "{t}");
    assert!(t.contains("~ tensor layer.0.b: data sha256 "), "{t}");
    assert!(t.ends_with("tensors: 1 changed, 0 added, 0 removed\n"), "{t}");

    // Shards of two metadata groups; one tensor moves into the other file.
    let shard = |meta: &str, ts: &[usize]| {
        let mut s = St::new().meta("format", "pt").meta("part", meta);
        for &i in ts {
            s = s.tensor(a.tensors[i].clone());
        }
        s.build()
    };
    d.write("x-00001-of-00002.safetensors", &shard("1", &[0, 1]));
    d.write("x-00002-of-00002.safetensors", &shard("2", &[2, 3]));
    d.write("y-00001-of-00002.safetensors", &shard("1", &[0]));
    d.write("y-00002-of-00002.safetensors", &shard("2", &[1, 2, 3]));
    let out = gd_in(d.dir.path(), &["diff", "x-00001-of-00002.safetensors", "y-00001-of-00002.safetensors"]);
    let t = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(!t.contains("~ metadata group"), "no group changed as a whole: {t}");
    let moved = a.tensors[1].name.clone();
    assert!(
        t.contains(&format!("~ tensor {moved}: its file's metadata differs (in x-00001-of-00002.safetensors and y-00002-of-00002.safetensors)")),
        "{t}"
    );
    assert!(
        t.ends_with("metadata keys: 0 differ; metadata groups: 0 changed; tensors: 1 changed, 0 added, 0 removed\n"),
        "{t}"
    );
}
