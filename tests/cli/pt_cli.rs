//! The real binary on PyTorch checkpoints: sums lines, `--skeleton`,
//! `--check`, `--json`, `inspect`, `diff` (leaf by key path, and against a
//! safetensors model tensor by tensor), standard input and exit codes.
use crate::common;

use common::pt::{Layout, PtTensor, StateDict, zip};
use common::st::{St, StTensor};
use common::{Dir, gd_in, hex, sha, text};
use serde_json::Value as JsonValue;

fn model() -> StateDict {
    StateDict::new()
        .tensor("embed.weight", PtTensor::filled("F32", &[6, 4], 1))
        .tensor("layer.0.w", PtTensor::filled("BF16", &[4, 4], 2))
        .tensor("layer.0.b", PtTensor::filled("F32", &[4], 3))
}

#[test]
fn sums_skeleton_check_and_json() {
    let d = Dir::new();
    let sd = model();
    let want = sd.expected_label();
    d.write("model.pt", &sd.build(&Layout::default()));
    d.write("pytorch_model.bin", &sd.build(&Layout { zip: false, views: true, ..Layout::default() }));
    let out = gd_in(d.dir.path(), &["model.pt", "pytorch_model.bin"]);
    assert_eq!(
        (out.status.code(), text(&out.stdout)),
        (Some(0), format!("{want}  model.pt\n{want}  pytorch_model.bin\n")),
        "{}",
        text(&out.stderr)
    );
    let out = gd_in(d.dir.path(), &["--skeleton", "model.pt"]);
    assert_eq!(&out.stdout[..4], b"PTCH");
    assert_eq!(hex(&sha(&out.stdout)), want);

    d.write("SUMS", format!("{want}  model.pt\n{want}  pytorch_model.bin\n").as_bytes());
    let out = gd_in(d.dir.path(), &["--check", "SUMS"]);
    assert_eq!((out.status.code(), text(&out.stdout)), (Some(0), "model.pt: OK\npytorch_model.bin: OK\n".into()));
    let mut changed = model();
    changed.tensors[2].1.data[0] ^= 1;
    d.write("model.pt", &changed.build(&Layout::default()));
    let out = gd_in(d.dir.path(), &["--check", "SUMS"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stdout).contains("model.pt: FAILED"), "{}", text(&out.stdout));

    let out = gd_in(d.dir.path(), &["--json", "pytorch_model.bin"]);
    assert_eq!(out.status.code(), Some(0));
    let j: JsonValue = serde_json::from_slice(&out.stdout).unwrap();
    let e = &j["files"][0];
    assert_eq!(
        (e["format"].as_str(), e["spec"].as_str(), e["layout"].as_str()),
        (Some("pytorch"), Some("pytorch-skeleton-v1"), Some("legacy"))
    );
    assert_eq!(e["label"].as_str(), Some(want.as_str()));
    let tensors = e["tensors"].as_array().unwrap();
    assert_eq!(tensors.len(), 3);
    for t in tensors {
        let name = t["name"].as_str().unwrap();
        let logical = &sd.tensors.iter().find(|(n, _)| n == name).unwrap().1;
        assert_eq!(t["sha256"].as_str().unwrap(), hex(&sha(&logical.data)), "{name}");
        assert_eq!(t["view"].as_bool(), Some(logical.shape.len() > 1), "{name}: a transposed 2-D tensor is gathered");
    }
    let leaves: Vec<&str> = e["leaves"].as_array().unwrap().iter().map(|l| l["path"].as_str().unwrap()).collect();
    assert_eq!(leaves.len(), 3);
    assert!(leaves.contains(&"layer.0.w"));
}

#[test]
fn refusals_name_the_file_the_offset_and_what_loading_would_run() {
    let d = Dir::new();
    let mut p = common::pt::Pickle::new();
    p.global("os", "system");
    p.str("echo pwned");
    p.op(b"\x85R.");
    let r = vec![("a/data.pkl".to_string(), p.out)];
    d.write("evil.pt", &zip(&r, &Layout::default()));
    let out = gd_in(d.dir.path(), &["evil.pt"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("evil.pt") && err.contains("byte ") && err.contains("would import and call `os.system`"),
        "{err}"
    );
    assert!(out.stdout.is_empty());

    // From standard input: refused the same, reading nothing of it as code.
    let out = common::stream::run_piped(
        std::path::Path::new(common::gguf_digest_bin()),
        &["-"],
        &std::fs::read(d.path("evil.pt")).unwrap(),
        &[7, 1000],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("-: byte ") && text(&out.stderr).contains("`os.system`"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn standard_input_is_held_whole_up_to_a_bound_and_labelled_as_the_file() {
    use common::stream::{ODD_PIECES, run_piped};
    let bin = std::path::Path::new(common::gguf_digest_bin());
    let sd = model();
    let want = sd.expected_label();
    for layout in [
        Layout::default(),
        Layout { zip: false, ..Layout::default() },
        Layout { views: true, big_endian: true, ..Layout::default() },
        Layout { zip64: true, deferred: false, ..Layout::default() },
    ] {
        let bytes = sd.build(&layout);
        let out = run_piped(bin, &["-"], &bytes, &ODD_PIECES);
        assert_eq!(
            (out.status.code(), text(&out.stdout)),
            (Some(0), format!("{want}  -\n")),
            "{layout:?}: {}",
            text(&out.stderr)
        );
        let out = run_piped(bin, &["--json", "-"], &bytes, &[1 << 16]);
        let j: JsonValue = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(j["files"][0]["label"].as_str(), Some(want.as_str()));
        // Cut short: an error, never a label.
        let out = run_piped(bin, &["-"], &bytes[..bytes.len() - 9], &ODD_PIECES);
        assert_eq!(out.status.code(), Some(2), "{layout:?} cut");
        assert!(out.stdout.is_empty() && text(&out.stderr).starts_with("gguf-digest: -: "), "{}", text(&out.stderr));
    }
    // Past the bound: refused saying so, at the bound, having held no more.
    let mut huge = b"PK\x03\x04".to_vec();
    huge.resize((128 << 20) + 4096, 0);
    let out = run_piped(bin, &["-"], &huge, &[1 << 20]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("-: byte 134217728: standard input holds more than 134217728 bytes")
            && err.contains("name the file instead"),
        "{err}"
    );
}

/// `sd`'s tensors `cut` into shards: each a plain dict.
fn shard(sd: &StateDict, keys: &[&str]) -> StateDict {
    StateDict {
        tensors: sd.tensors.iter().filter(|(n, _)| keys.contains(&n.as_str())).cloned().collect(),
        metadata: false,
    }
}

fn index(entries: &[(&str, &str)], metadata: &str) -> Vec<u8> {
    let map: Vec<String> = entries.iter().map(|(k, f)| format!("{k:?}: {f:?}")).collect();
    format!("{{\"metadata\": {metadata}, \"weight_map\": {{{}}}}}", map.join(", ")).into_bytes()
}

const S1: &str = "pytorch_model-00001-of-00002.bin";
const S2: &str = "pytorch_model-00002-of-00002.bin";
const IX: &str = "pytorch_model.bin.index.json";

#[test]
fn a_shard_set_has_the_label_of_the_one_file_of_their_union() {
    let d = Dir::new();
    let sd = model();
    let want = sd.expected_label();
    let first = shard(&sd, &["embed.weight"]);
    let second = shard(&sd, &["layer.0.w", "layer.0.b"]);
    // Without an index: by its first shard, a zip and a legacy file of views.
    d.write("m-00001-of-00002.bin", &first.build(&Layout::default()));
    d.write("m-00002-of-00002.bin", &second.build(&Layout { zip: false, views: true, ..Layout::default() }));
    let out = gd_in(d.dir.path(), &["m-00001-of-00002.bin"]);
    assert_eq!((out.status.code(), text(&out.stdout)), (Some(0), format!("{want}  m-00001-of-00002.bin\n")));
    // Named together: one line, the first shard's.
    let out = gd_in(d.dir.path(), &["m-00002-of-00002.bin", "m-00001-of-00002.bin"]);
    assert_eq!((out.status.code(), text(&out.stdout)), (Some(0), format!("{want}  m-00001-of-00002.bin\n")));
    // A later shard alone is refused naming the first.
    let out = gd_in(d.dir.path(), &["m-00002-of-00002.bin"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr)
            .contains("m-00002-of-00002.bin: this is shard 2 of 2; pass the first shard instead: m-00001-of-00002.bin"),
        "{}",
        text(&out.stderr)
    );
    // --no-join: each file alone, its own label.
    let out = gd_in(d.dir.path(), &["--no-join", "m-00001-of-00002.bin", "m-00002-of-00002.bin"]);
    assert_eq!(
        text(&out.stdout),
        format!(
            "{}  m-00001-of-00002.bin\n{}  m-00002-of-00002.bin\n",
            first.expected_label(),
            second.expected_label()
        )
    );
    // --json: the union's tensors, every file read.
    let out = gd_in(d.dir.path(), &["--json", "m-00001-of-00002.bin"]);
    let j: JsonValue = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["files"][0]["label"].as_str(), Some(want.as_str()));
    assert_eq!(j["files"][0]["tensors"].as_array().map(Vec::len), Some(3));

    // Through the index: by the index, and by each of its shards.
    d.write(S1, &first.build(&Layout { zip: false, ..Layout::default() }));
    d.write(S2, &second.build(&Layout { big_endian: true, views: true, ..Layout::default() }));
    let listed = [("embed.weight", S1), ("layer.0.w", S2), ("layer.0.b", S2)];
    d.write(IX, &index(&listed, r#"{"total_size": 1, "total_parameters": "any"}"#));
    for name in [IX, S1, S2] {
        let out = gd_in(d.dir.path(), &[name]);
        assert_eq!(
            (out.status.code(), text(&out.stdout)),
            (Some(0), format!("{want}  {name}\n")),
            "{}",
            text(&out.stderr)
        );
    }
    let out = gd_in(d.dir.path(), &[S1, S2]);
    assert_eq!(text(&out.stdout), format!("{want}  {S1}\n"));
    d.write("SUMS", format!("{want}  {IX}\n").as_bytes());
    let out = gd_in(d.dir.path(), &["--check", "SUMS"]);
    assert_eq!((out.status.code(), text(&out.stdout)), (Some(0), format!("{IX}: OK\n")));
}

#[test]
fn a_shard_set_that_is_not_one_model_is_refused_naming_the_file_and_key() {
    let d = Dir::new();
    let sd = model();
    let first = shard(&sd, &["embed.weight"]);
    let second = shard(&sd, &["layer.0.w", "layer.0.b"]);
    let refused = |args: &[&str], words: &[&str]| {
        let out = gd_in(d.dir.path(), args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
        assert!(words.iter().all(|w| err.contains(w)), "{args:?}: {words:?} not in {err}");
    };
    // A missing shard, named.
    d.write("m-00001-of-00003.bin", &first.build(&Layout::default()));
    d.write("m-00002-of-00003.bin", &second.build(&Layout::default()));
    refused(&["m-00001-of-00003.bin"], &["m-00001-of-00003.bin", "shard 3 of 3 is missing: m-00003-of-00003.bin"]);
    // A key in two shards.
    d.write("t-00001-of-00002.bin", &first.build(&Layout::default()));
    d.write("t-00002-of-00002.bin", &sd.build(&Layout::default()));
    refused(&["t-00001-of-00002.bin"], &["t-00002-of-00002.bin", "embed.weight", "also in t-00001-of-00002.bin"]);
    // A shard whose root has attributes, or is not a mapping of strings.
    let mut with_attrs = second.clone();
    with_attrs.metadata = true;
    d.write("a-00001-of-00002.bin", &first.build(&Layout::default()));
    d.write("a-00002-of-00002.bin", &with_attrs.build(&Layout { ordered: true, ..Layout::default() }));
    refused(&["a-00001-of-00002.bin"], &["a-00002-of-00002.bin", "a shard's root is a mapping with attributes"]);
    // Its one-file label is still the checkpoint's.
    let out = gd_in(d.dir.path(), &["--no-join", "a-00002-of-00002.bin"]);
    assert_eq!(out.status.code(), Some(0));

    // The index must list exactly what the shards hold.
    d.write(S1, &first.build(&Layout::default()));
    d.write(S2, &second.build(&Layout::default()));
    let good = [("embed.weight", S1), ("layer.0.w", S2), ("layer.0.b", S2)];
    // (weight_map entries, metadata, words the error holds)
    type Case<'a> = (&'a [(&'a str, &'a str)], &'a str, &'a [&'a str]);
    let cases: &[Case] = &[
        (
            &[("embed.weight", S1), ("layer.0.w", S1), ("layer.0.b", S2)],
            "{}",
            &[S2, "layer.0.w", "the index lists this key in pytorch_model-00001-of-00002.bin"],
        ),
        (&[("layer.0.w", S2), ("layer.0.b", S2)], "null", &[IX, "does not list this file"]),
        (&[("embed.weight", S1), ("layer.0.w", S2)], "{}", &[S2, "layer.0.b", "the index does not list this key"]),
        (
            &[("embed.weight", S1), ("layer.0.w", S2), ("layer.0.b", S2), ("lm_head.weight", S2)],
            "{}",
            &[IX, "lm_head.weight", "which does not hold it"],
        ),
        (
            &[("embed.weight", S1), ("layer.0.w", S2), ("layer.0.b", "../pytorch_model-00002-of-00002.bin")],
            "{}",
            &[IX, "holds a path separator"],
        ),
        (&good, r#"{"format": "pt"}"#, &[IX, "metadata member 'format'"]),
    ];
    for (entries, metadata, words) in cases {
        d.write(IX, &index(entries, metadata));
        let first_named = if words.contains(&"does not list this file") { S1 } else { IX };
        refused(&[first_named], words);
    }
    // An index whose file is missing names it.
    d.write(IX, &index(&[("embed.weight", S1), ("layer.0.w", "gone.bin")], "{}"));
    refused(&[IX], &["gone.bin"]);
    d.write(IX, b"{\"weight_map\": {\"a\": 1}}");
    refused(&[IX], &[IX, "a weight_map value must be a file name"]);
}

#[test]
fn inspect_and_diff() {
    let d = Dir::new();
    let sd = model();
    d.write("a.pt", &sd.build(&Layout { zip: false, ..Layout::default() }));
    let out = gd_in(d.dir.path(), &["inspect", "a.pt"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.contains("PyTorch checkpoint (legacy)") && s.contains("warning: legacy format"), "{s}");
    assert!(s.contains("BF16: 1 tensors, 32 bytes"), "{s}");

    // requires_grad is not content, and inspect says it is set.
    d.write("g.pt", &sd.build(&Layout { requires_grad: true, ..Layout::default() }));
    let out = gd_in(d.dir.path(), &["inspect", "g.pt"]);
    let s = text(&out.stdout);
    assert!(s.contains("`requires_grad` set on 3 tensors") && s.contains(&sd.expected_label()), "{s}");

    let mut other = model();
    other.tensors[1].1.data[3] ^= 1;
    d.write("b.pt", &other.build(&Layout::default()));
    let out = gd_in(d.dir.path(), &["diff", "a.pt", "b.pt"]);
    let s = text(&out.stdout);
    assert!(s.contains("~ layer.0.w"), "{s}");
    assert!(!s.contains("embed.weight"), "{s}");

    // Against its safetensors conversion, which dropped a tied tensor.
    let tied = model().tensor("lm_head.weight", PtTensor::filled("F32", &[6, 4], 1));
    d.write("tied.pt", &tied.build(&Layout::default()));
    let mut st = St::new();
    for (name, t) in &model().tensors {
        st = st.tensor(StTensor {
            name: name.clone(),
            dtype: t.dtype.into(),
            shape: t.shape.clone(),
            data: t.data.clone(),
        });
    }
    d.write("m.safetensors", &st.build());
    let out = gd_in(d.dir.path(), &["diff", "tied.pt", "m.safetensors"]);
    let s = text(&out.stdout);
    assert!(s.contains("3 tensors identical"), "{s}{}", text(&out.stderr));
    assert!(
        s.contains("- lm_head.weight") && s.contains("'embed.weight': a tied weight the conversion dropped"),
        "{s}"
    );
    assert!(s.contains("every other tensor is identical"), "{s}");
    assert_eq!(out.status.code(), Some(1), "labels differ");
}

/// Writes `name` (a relative path) in `d`, making its folders.
fn put(d: &Dir, name: &str, bytes: &[u8]) {
    std::fs::create_dir_all(d.path(name).parent().unwrap()).unwrap();
    d.write(name, bytes);
}

/// An `os.system` pickle in a zip: a file the contract refuses.
fn evil() -> Vec<u8> {
    let mut p = common::pt::Pickle::new();
    p.global("os", "system");
    p.str("echo pwned");
    p.op(b"\x85R.");
    zip(&[("a/data.pkl".to_string(), p.out)], &Layout::default())
}

/// `inspect --json DIR`'s components by name: (kind, digest, note).
fn components(d: &Dir, dir: &str) -> std::collections::BTreeMap<String, (String, String, String)> {
    let out = gd_in(d.dir.path(), &["inspect", "--json", dir]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let j: JsonValue = serde_json::from_slice(&out.stdout).unwrap();
    j["components"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let s = |k: &str| c[k].as_str().unwrap_or("").to_string();
            (s("name"), (s("kind"), s("digest"), s("note")))
        })
        .collect()
}

#[test]
fn in_a_directory_checkpoints_are_ptch_components_labelled_whatever_their_save() {
    let d = Dir::new();
    let sd = model();
    let first = shard(&sd, &["embed.weight"]);
    let second = shard(&sd, &["layer.0.w", "layer.0.b"]);
    let small = StateDict::new().tensor("w", PtTensor::filled("F16", &[3, 2], 7));
    let write = |dir: &str, layout: &Layout| {
        put(&d, &format!("{dir}/{S1}"), &first.build(layout));
        put(&d, &format!("{dir}/{S2}"), &second.build(layout));
        let listed = [("embed.weight", S1), ("layer.0.w", S2), ("layer.0.b", S2)];
        put(&d, &format!("{dir}/{IX}"), &index(&listed, r#"{"total_size": 123}"#));
        put(&d, &format!("{dir}/config.json"), b"{}\n");
        put(&d, &format!("{dir}/sub/w.pt"), &small.build(layout));
        put(&d, &format!("{dir}/evil.pt"), &evil());
        put(&d, &format!("{dir}/openvino.bin"), b"not a pickle");
        put(&d, &format!("{dir}/trainer.ckpt"), &small.build(&Layout::default())); // bytes: one save
    };
    write("a", &Layout::default());
    write("b", &Layout { zip: false, views: true, ..Layout::default() });

    let c = components(&d, "a");
    let kinds: Vec<(&str, &str)> = c.iter().map(|(n, (k, _, _))| (n.as_str(), k.as_str())).collect();
    assert_eq!(
        kinds,
        [
            ("config.json", "FILE"),
            ("evil.pt", "FILE"),
            ("openvino.bin", "FILE"),
            ("pytorch_model", "PTCH"),
            ("sub/w.pt", "PTCH"),
            ("trainer.ckpt", "FILE"),
        ]
    );
    assert_eq!(c["pytorch_model"].1, sd.expected_label(), "the shard set's digest is its PyTorch label");
    assert_eq!(c["sub/w.pt"].1, small.expected_label());
    assert_eq!(c["evil.pt"].1, hex(&sha(&evil())), "a refused checkpoint is a FILE: its bytes");
    assert!(c["evil.pt"].2.contains("would import and call `os.system`"), "inspect says why: {:?}", c["evil.pt"]);
    assert!(c["openvino.bin"].2.contains("neither a zip archive nor the legacy format"), "{:?}", c["openvino.bin"]);
    assert_eq!(c["trainer.ckpt"].2, "", ".ckpt is no candidate (contract rule 3)");
    let out = gd_in(d.dir.path(), &["inspect", "a"]);
    let s = text(&out.stdout);
    assert!(s.contains("note: FILE evil.pt: not a checkpoint pytorch-skeleton-v1 accepts"), "{s}");
    assert!(s.contains("== PTCH pytorch_model: PyTorch checkpoint ==") && s.contains("shards: 2"), "{s}");

    // Another save of the same weights (legacy, views) is the same directory.
    let (a, b) = (gd_in(d.dir.path(), &["a"]), gd_in(d.dir.path(), &["b"]));
    assert_eq!((a.status.code(), b.status.code()), (Some(0), Some(0)), "{}", text(&b.stderr));
    assert_eq!(text(&a.stdout)[..64], text(&b.stdout)[..64]);
    // Another tensor is another directory, and diff names the component and key.
    let mut changed = second.clone();
    changed.tensors[0].1.data[0] ^= 1;
    put(&d, &format!("b/{S2}"), &changed.build(&Layout::default()));
    let b2 = gd_in(d.dir.path(), &["b"]);
    assert_ne!(text(&a.stdout)[..64], text(&b2.stdout)[..64]);
    let out = gd_in(d.dir.path(), &["diff", "a", "b"]);
    let s = text(&out.stdout);
    assert!(s.contains("pytorch_model") && s.contains("layer.0.w"), "{s}");
}

#[test]
fn in_a_directory_a_file_named_as_weights_must_be_weights() {
    let d = Dir::new();
    let sd = model();
    let refused = |dir: &str, words: &[&str]| {
        let out = gd_in(d.dir.path(), &[dir]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{dir}: {err}");
        assert!(words.iter().all(|w| err.contains(w)), "{dir}: {words:?} not in {err}");
    };
    // pytorch_model.bin claims PTCH by its name: junk there is an error.
    put(&d, "junk/pytorch_model.bin", b"not a pickle");
    refused("junk", &["pytorch_model.bin", "not a PyTorch checkpoint"]);
    // A Git LFS pointer where a checkpoint should be, under any candidate name.
    put(&d, "lfs/w.pth", b"version https://git-lfs.github.com/spec/v1\noid sha256:00\nsize 1\n");
    refused("lfs", &["w.pth", "LFS"]);
    // pytorch_model.bin beside an index that lists other files (rule 1's precedence).
    put(&d, "both/pytorch_model.bin", &sd.build(&Layout::default()));
    put(&d, "both/pytorch_model-00001-of-00001.bin", &sd.build(&Layout::default()));
    let listed = [("embed.weight", "pytorch_model-00001-of-00001.bin")];
    put(&d, "both/pytorch_model.bin.index.json", &index(&listed, "{}"));
    refused("both", &["pytorch_model", "not listed by its index"]);
    // A shard set missing a shard.
    put(&d, "gap/pytorch_model-00002-of-00002.bin", &sd.build(&Layout::default()));
    refused("gap", &["pytorch_model", "incomplete: missing 00001"]);
    // A pytorch_model.bin alone, an OrderedDict with _metadata: one file, attributes and all.
    let mut with = model();
    with.metadata = true;
    put(&d, "one/pytorch_model.bin", &with.build(&Layout { ordered: true, ..Layout::default() }));
    let c = components(&d, "one");
    assert_eq!(c["pytorch_model"], ("PTCH".to_string(), with.expected_label(), String::new()));
}

#[test]
fn statement_verify_and_bom_of_checkpoints() {
    let d = Dir::new();
    let sd = model();
    let want = sd.expected_label();
    d.write("model.pt", &sd.build(&Layout::default()));
    put(&d, &format!("set/{S1}"), &shard(&sd, &["embed.weight"]).build(&Layout::default()));
    put(&d, &format!("set/{S2}"), &shard(&sd, &["layer.0.w", "layer.0.b"]).build(&Layout::default()));
    let listed = [("embed.weight", S1), ("layer.0.w", S2), ("layer.0.b", S2)];
    d.write(&format!("set/{IX}"), &index(&listed, "{}"));
    let ix = format!("set/{IX}");
    let out = gd_in(d.dir.path(), &["statement", "model.pt", &ix]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let s: JsonValue = serde_json::from_slice(&out.stdout).unwrap();
    let subjects: Vec<(&str, &str)> = s["subject"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| (x["name"].as_str().unwrap(), x["digest"]["sha256"].as_str().unwrap()))
        .collect();
    assert_eq!(subjects, [("model.pt", want.as_str()), (ix.as_str(), want.as_str())]);
    d.write("s.json", &out.stdout);
    let out = gd_in(d.dir.path(), &["verify", "--no-signature", "s.json"]);
    assert_eq!(
        (out.status.code(), text(&out.stdout)),
        (Some(0), format!("s.json: signature NOT CHECKED (--no-signature)\nmodel.pt: OK\n{ix}: OK\n"))
    );
    // Saved again in another layout: still verified (the label is of the weights).
    d.write("model.pt", &sd.build(&Layout { zip: false, views: true, ..Layout::default() }));
    d.write(
        &format!("set/{S2}"),
        &shard(&sd, &["layer.0.w", "layer.0.b"]).build(&Layout { zip: false, ..Layout::default() }),
    );
    let out = gd_in(d.dir.path(), &["verify", "--no-signature", "s.json"]);
    assert_eq!(
        (out.status.code(), text(&out.stdout)),
        (Some(0), format!("s.json: signature NOT CHECKED (--no-signature)\nmodel.pt: OK\n{ix}: OK\n"))
    );
    // Another element: FAILED.
    let mut other = shard(&sd, &["layer.0.w", "layer.0.b"]);
    other.tensors[1].1.data[0] ^= 1;
    d.write(&format!("set/{S2}"), &other.build(&Layout::default()));
    let out = gd_in(d.dir.path(), &["verify", "--no-signature", "s.json"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stdout),
        format!("s.json: signature NOT CHECKED (--no-signature)\nmodel.pt: OK\n{ix}: FAILED\n"),
        "{}",
        text(&out.stderr)
    );

    // The BOM: the label, the contract, every file hashed, the dtypes.
    let out = std::process::Command::new(common::gguf_digest_bin())
        .args(["bom", "model.pt"])
        .current_dir(d.dir.path())
        .env("SOURCE_DATE_EPOCH", "1700000000")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let b: JsonValue = serde_json::from_slice(&out.stdout).unwrap();
    let c = &b["components"][0];
    let prop =
        |n: &str| c["properties"].as_array().unwrap().iter().find(|p| p["name"] == n).and_then(|p| p["value"].as_str());
    assert_eq!(prop("gguf-digest:label"), Some(want.as_str()));
    assert_eq!(prop("gguf-digest:contract"), Some("pytorch-skeleton-v1"));
    assert_eq!(prop("gguf-digest:tensor-type:BF16"), Some("1"));
    assert_eq!(prop("gguf-digest:tensor-type:F32"), Some("2"));
    let file_sha = c["components"][0]["hashes"][0]["content"].as_str();
    assert_eq!(file_sha, Some(hex(&sha(&std::fs::read(d.path("model.pt")).unwrap())).as_str()));
}
