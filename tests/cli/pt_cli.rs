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

    // Standard input: refused, with what to do.
    let out = std::process::Command::new(common::gguf_digest_bin())
        .arg("-")
        .current_dir(d.dir.path())
        .stdin(std::fs::File::open(d.path("evil.pt")).unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("name the file instead"), "{}", text(&out.stderr));
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
