//! The `--json` document of one model of N tensors, written three ways from
//! the same in-memory model (as a format's `Model` holds it: a list of
//! tensors and a list of digests), call for call as
//! crates/formats/src/{gguf,safetensors}/json.rs write an entry:
//!
//! - `writer`: the product's `JsonWriter` (crates/core/src/output.rs): since
//!   docs/adr/0045 serde_json's formatter and `Serialize` values;
//! - `handwritten`: the hand-written writer it replaced (src/handwritten.rs);
//! - `serde`: each entry a `Serialize` impl over iterators into one
//!   `serde_json::Serializer` (pretty), the tensors a sequence collected
//!   from an iterator: no `Value` tree, no `Vec` of entries.
//!
//! Shapes: `gguf` (bench/memory.py's 10^6-tensor file: names `blk.NNNNNNN`,
//! one dim, F32 of one element; one name in 10^5 not UTF-8) and
//! `safetensors` (the same tensors as safetensors names them, one file, one
//! metadata group).
//!
//!   json-bench check [N]          the three ways byte for byte, both shapes
//!   json-bench MODE SHAPE N       one document to stdout (a BufWriter, as the
//!                                 command's), the writing's time to stderr
//!
//! bench/json.sh runs the modes interleaved through bench/measure.py (wall
//! time, CPU time and peak RSS of each process).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{self, BufWriter, Write};
use std::time::Instant;

use gguf_digest_core::output::{JsonWriter, begin_document};

mod handwritten;
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Value as JsonValue, json};

/// A GGUF tensor as `gguf::model::Model` holds what its entry prints.
struct GgufTensor {
    name: Vec<u8>,
    dims: Vec<u64>,
    stored_dims: Vec<u64>,
    type_name: &'static str,
    type_id: u32,
    nbytes: u64,
    offset: u64,
    stored_offset: u64,
    shard: usize,
}

/// A safetensors tensor as `safetensors::model::Model` holds it.
struct StTensor {
    name: String,
    dtype: &'static str,
    shape: Vec<u64>,
    nbytes: u64,
    offset: u64,
    begin: u64,
    end: u64,
    file: usize,
}

struct Model<T> {
    path: String,
    label: String,
    tensors: Vec<T>,
    digests: Vec<[u8; 32]>,
}

fn digest(i: usize) -> [u8; 32] {
    let mut d = [0u8; 32];
    for (j, b) in d.iter_mut().enumerate() {
        *b = (i.wrapping_mul(31).wrapping_add(j.wrapping_mul(7)) & 0xff) as u8;
    }
    d
}

fn gguf_model(n: usize) -> Model<GgufTensor> {
    let tensors = (0..n)
        .map(|i| {
            // One name in 100,000 is not UTF-8, so that the `_hex` branch is taken.
            let mut name = format!("blk.{i:07}").into_bytes();
            if i % 100_000 == 99_999 {
                name.push(0xff);
            }
            GgufTensor {
                name,
                dims: vec![1],
                stored_dims: vec![1],
                type_name: "F32",
                type_id: 0,
                nbytes: 4,
                offset: (i as u64) * 32,
                stored_offset: (i as u64) * 32,
                shard: 0,
            }
        })
        .collect();
    Model { path: "m.gguf".into(), label: hex::encode(digest(n)), tensors, digests: (0..n).map(digest).collect() }
}

fn st_model(n: usize) -> Model<StTensor> {
    let tensors = (0..n)
        .map(|i| StTensor {
            name: format!("model.layers.{i}.weight\u{1}\""),
            dtype: "F32",
            shape: vec![1],
            nbytes: 4,
            offset: 8 + 100 + (i as u64) * 4,
            begin: (i as u64) * 4,
            end: (i as u64) * 4 + 4,
            file: 0,
        })
        .collect();
    Model {
        path: "model.safetensors".into(),
        label: hex::encode(digest(n)),
        tensors,
        digests: (0..n).map(digest).collect(),
    }
}

// ---- the writers, call for call as gguf/json.rs and safetensors/json.rs write an entry ----

/// The entry functions for one writer type (the product's `JsonWriter`, or
/// the hand-written one it replaced: the same calls).
macro_rules! entries {
    ($module:ident, $W:ident) => {
        mod $module {
            use super::*;
            #[allow(unused_imports)]
            use crate::handwritten::HandWriter;

            pub(crate) fn writer_document(
                out: &mut dyn Write,
                tool: &str,
                entry: &dyn Fn(&mut $W<'_>) -> io::Result<()>,
            ) -> io::Result<()> {
                let mut w = $W::pretty(out);
                // begin_document's members
                w.begin_object()?;
                w.field("format", gguf_digest_core::output::JSON_FORMAT)?;
                w.str_field("spec", "canonical-skeleton-v1")?;
                w.str_field("tool", tool)?;
                w.key("files")?;
                w.begin_array()?;
                entry(&mut w)?;
                w.end_array()?;
                w.end_object()?;
                drop(w);
                out.write_all(b"\n")
            }

            pub(crate) fn writer_gguf(w: &mut $W<'_>, m: &Model<GgufTensor>) -> io::Result<()> {
                w.begin_object()?;
                w.str_field("path", &m.path)?;
                w.str_field("label", &m.label)?;
                w.field("version", Some(3))?;
                w.field("byte_order", Some("little"))?;
                w.field("alignment", 32)?;
                w.field("data_start", Some(1000u64))?;
                w.field("kv_count", 1)?;
                w.field("tensor_count", m.tensors.len())?;
                w.field("tensor_bytes", 4 * m.tensors.len() as u64)?;
                w.key("shards")?;
                w.begin_array()?;
                w.begin_object()?;
                w.str_field("path", &m.path)?;
                w.field("size", 1000u64)?;
                w.end_object()?;
                w.end_array()?;
                w.key("kvs")?;
                w.begin_array()?;
                w.begin_object()?;
                w.name_field("key", b"general.alignment")?;
                w.str_field("type", "UINT32")?;
                for (k, v) in [("value", json!(32))] {
                    w.key(k)?;
                    w.tree(&v)?;
                }
                w.end_object()?;
                w.end_array()?;
                w.key("tensors")?;
                w.begin_array()?;
                for (t, sha) in m.tensors.iter().zip(&m.digests) {
                    w.begin_object()?;
                    w.name_field("name", &t.name)?;
                    w.u64s_field("dims", &t.dims)?;
                    w.u64s_field("stored_dims", &t.stored_dims)?;
                    w.str_field("type", t.type_name)?;
                    w.field("type_id", t.type_id)?;
                    w.field("nbytes", t.nbytes)?;
                    w.field("offset", t.offset)?;
                    w.field("stored_offset", t.stored_offset)?;
                    w.field("shard", t.shard)?;
                    w.str_field("sha256", &hex::encode(sha))?;
                    w.end_object()?;
                }
                w.end_array()?;
                w.end_object()
            }

            pub(crate) fn writer_st(w: &mut $W<'_>, m: &Model<StTensor>) -> io::Result<()> {
                w.begin_object()?;
                w.str_field("path", &m.path)?;
                w.str_field("format", "safetensors")?;
                w.str_field("spec", "safetensors-skeleton-v1")?;
                w.str_field("label", &m.label)?;
                w.field("tensor_count", m.tensors.len())?;
                w.field("tensor_bytes", 4 * m.tensors.len() as u64)?;
                w.key("files")?;
                w.begin_array()?;
                w.begin_object()?;
                w.str_field("path", &m.path)?;
                w.field("size", 1000u64)?;
                w.field("metadata_group", Some(0))?;
                w.end_object()?;
                w.end_array()?;
                w.key("metadata_groups")?;
                w.begin_array()?;
                w.begin_object()?;
                w.str_field("sha256", &hex::encode(digest(1)))?;
                w.key("metadata")?;
                w.begin_object()?;
                w.str_field("format", "pt")?;
                w.end_object()?;
                w.end_object()?;
                w.end_array()?;
                w.key("tensors")?;
                w.begin_array()?;
                for (t, sha) in m.tensors.iter().zip(&m.digests) {
                    w.begin_object()?;
                    w.name_field("name", t.name.as_bytes())?;
                    w.str_field("dtype", t.dtype)?;
                    w.u64s_field("shape", &t.shape)?;
                    w.field("nbytes", t.nbytes)?;
                    w.field("offset", t.offset)?;
                    w.u64s_field("data_offsets", &[t.begin, t.end])?;
                    w.field("file", t.file)?;
                    w.field("metadata_group", Some(0usize))?;
                    w.str_field("sha256", &hex::encode(sha))?;
                    w.end_object()?;
                }
                w.end_array()?;
                w.end_object()
            }
        }
    };
}

entries!(product, JsonWriter);
entries!(hand, HandWriter);

// ---- the candidate: Serialize over iterators ----

/// A sequence serialized from an iterator made on demand: nothing collected.
struct Seq<F>(F);

impl<F, I> Serialize for Seq<F>
where
    F: Fn() -> I,
    I: Iterator,
    I::Item: Serialize,
{
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq((self.0)())
    }
}

/// A name as `name_field` writes it: lossy text, and its bytes in hex
/// under `KEY_hex` when it is not UTF-8.
fn name_entry<M: SerializeMap>(
    m: &mut M,
    key: &'static str,
    hex_key: &'static str,
    bytes: &[u8],
) -> Result<(), M::Error> {
    match std::str::from_utf8(bytes) {
        Ok(s) => m.serialize_entry(key, s),
        Err(_) => {
            m.serialize_entry(key, &String::from_utf8_lossy(bytes))?;
            m.serialize_entry(hex_key, &hex::encode(bytes))
        }
    }
}

/// A one-member object `{key: value}` without a tree.
struct Object1<'a, V: Serialize>(&'a str, V);

impl<V: Serialize> Serialize for Object1<'_, V> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(1))?;
        m.serialize_entry(self.0, &self.1)?;
        m.end()
    }
}

struct GgufTensorJson<'a>(&'a GgufTensor, &'a [u8; 32]);

impl Serialize for GgufTensorJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let GgufTensorJson(t, sha) = self;
        let mut m = s.serialize_map(None)?;
        name_entry(&mut m, "name", "name_hex", &t.name)?;
        m.serialize_entry("dims", &t.dims)?;
        m.serialize_entry("stored_dims", &t.stored_dims)?;
        m.serialize_entry("type", t.type_name)?;
        m.serialize_entry("type_id", &t.type_id)?;
        m.serialize_entry("nbytes", &t.nbytes)?;
        m.serialize_entry("offset", &t.offset)?;
        m.serialize_entry("stored_offset", &t.stored_offset)?;
        m.serialize_entry("shard", &t.shard)?;
        m.serialize_entry("sha256", &hex::encode(sha))?;
        m.end()
    }
}

struct GgufEntry<'a>(&'a Model<GgufTensor>);

impl Serialize for GgufEntry<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let m = self.0;
        let mut o = s.serialize_map(None)?;
        o.serialize_entry("path", &m.path)?;
        o.serialize_entry("label", &m.label)?;
        o.serialize_entry("version", &Some(3))?;
        o.serialize_entry("byte_order", &Some("little"))?;
        o.serialize_entry("alignment", &32)?;
        o.serialize_entry("data_start", &Some(1000u64))?;
        o.serialize_entry("kv_count", &1)?;
        o.serialize_entry("tensor_count", &m.tensors.len())?;
        o.serialize_entry("tensor_bytes", &(4 * m.tensors.len() as u64))?;
        o.serialize_entry("shards", &[Shard(&m.path)])?;
        o.serialize_entry("kvs", &[Kv])?;
        o.serialize_entry("tensors", &Seq(|| m.tensors.iter().zip(&m.digests).map(|(t, d)| GgufTensorJson(t, d))))?;
        o.end()
    }
}

struct Shard<'a>(&'a str);

impl Serialize for Shard<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut o = s.serialize_map(None)?;
        o.serialize_entry("path", self.0)?;
        o.serialize_entry("size", &1000u64)?;
        o.end()
    }
}

struct Kv;

impl Serialize for Kv {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut o = s.serialize_map(None)?;
        name_entry(&mut o, "key", "key_hex", b"general.alignment")?;
        o.serialize_entry("type", "UINT32")?;
        o.serialize_entry("value", &32)?;
        o.end()
    }
}

struct StTensorJson<'a>(&'a StTensor, &'a [u8; 32]);

impl Serialize for StTensorJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let StTensorJson(t, sha) = self;
        let mut m = s.serialize_map(None)?;
        name_entry(&mut m, "name", "name_hex", t.name.as_bytes())?;
        m.serialize_entry("dtype", t.dtype)?;
        m.serialize_entry("shape", &t.shape)?;
        m.serialize_entry("nbytes", &t.nbytes)?;
        m.serialize_entry("offset", &t.offset)?;
        m.serialize_entry("data_offsets", &[t.begin, t.end])?;
        m.serialize_entry("file", &t.file)?;
        m.serialize_entry("metadata_group", &Some(0usize))?;
        m.serialize_entry("sha256", &hex::encode(sha))?;
        m.end()
    }
}

struct StEntry<'a>(&'a Model<StTensor>);

impl Serialize for StEntry<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let m = self.0;
        let mut o = s.serialize_map(None)?;
        o.serialize_entry("path", &m.path)?;
        o.serialize_entry("format", "safetensors")?;
        o.serialize_entry("spec", "safetensors-skeleton-v1")?;
        o.serialize_entry("label", &m.label)?;
        o.serialize_entry("tensor_count", &m.tensors.len())?;
        o.serialize_entry("tensor_bytes", &(4 * m.tensors.len() as u64))?;
        o.serialize_entry("files", &[StFile(&m.path)])?;
        o.serialize_entry("metadata_groups", &[StGroup])?;
        o.serialize_entry("tensors", &Seq(|| m.tensors.iter().zip(&m.digests).map(|(t, d)| StTensorJson(t, d))))?;
        o.end()
    }
}

struct StFile<'a>(&'a str);

impl Serialize for StFile<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut o = s.serialize_map(None)?;
        o.serialize_entry("path", self.0)?;
        o.serialize_entry("size", &1000u64)?;
        o.serialize_entry("metadata_group", &Some(0))?;
        o.end()
    }
}

struct StGroup;

impl Serialize for StGroup {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut o = s.serialize_map(None)?;
        o.serialize_entry("sha256", &hex::encode(digest(1)))?;
        o.serialize_entry("metadata", &Object1("format", "pt"))?;
        o.end()
    }
}

/// The document around the entries: `files` a sequence of one entry here
/// (the command's would be the entries as their models are labelled).
struct Document<E: Serialize> {
    tool: String,
    entry: E,
}

impl<E: Serialize> Serialize for Document<E> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut o = s.serialize_map(None)?;
        o.serialize_entry("format", &gguf_digest_core::output::JSON_FORMAT)?;
        o.serialize_entry("spec", "canonical-skeleton-v1")?;
        o.serialize_entry("tool", &self.tool)?;
        o.serialize_entry("files", &Seq(|| std::iter::once(&self.entry)))?;
        o.end()
    }
}

fn serde_document(out: &mut dyn Write, doc: &impl Serialize) -> io::Result<()> {
    let mut ser = serde_json::Serializer::pretty(&mut *out);
    doc.serialize(&mut ser)?;
    out.write_all(b"\n")
}

/// The tool's name and version as the product's `begin_document` writes it.
fn tool() -> String {
    let mut head = Vec::new();
    begin_document(&mut JsonWriter::compact(&mut head)).unwrap();
    let v: JsonValue = serde_json::from_slice(&[head.as_slice(), b"]}"].concat()).unwrap();
    v["tool"].as_str().unwrap().to_string()
}

/// Builds the model, then writes its document; returns the seconds the writing took.
fn write(mode: &str, shape: &str, n: usize, out: &mut dyn Write) -> io::Result<f64> {
    let (g, st) = match shape {
        "gguf" => (Some(gguf_model(n)), None),
        "safetensors" => (None, Some(st_model(n))),
        _ => (None, None),
    };
    let tool = tool();
    let t = Instant::now();
    match (mode, &g, &st) {
        ("writer", Some(m), _) => product::writer_document(out, &tool, &|w| product::writer_gguf(w, m))?,
        ("writer", _, Some(m)) => product::writer_document(out, &tool, &|w| product::writer_st(w, m))?,
        ("handwritten", Some(m), _) => hand::writer_document(out, &tool, &|w| hand::writer_gguf(w, m))?,
        ("handwritten", _, Some(m)) => hand::writer_document(out, &tool, &|w| hand::writer_st(w, m))?,
        ("serde", Some(m), _) => serde_document(out, &Document { tool, entry: GgufEntry(m) })?,
        ("serde", _, Some(m)) => serde_document(out, &Document { tool, entry: StEntry(m) })?,
        _ => {
            return Err(io::Error::other(
                "usage: json-bench check [N] | json-bench writer|handwritten|serde gguf|safetensors N",
            ));
        }
    }
    out.flush()?;
    Ok(t.elapsed().as_secs_f64())
}

fn main() -> io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| args.get(i).map(String::as_str);
    if arg(0) == Some("check") {
        let n: usize = arg(1).map_or(200_001, |s| s.parse().expect("N"));
        for shape in ["gguf", "safetensors"] {
            let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
            write("writer", shape, n, &mut a)?;
            write("serde", shape, n, &mut b)?;
            write("handwritten", shape, n, &mut c)?;
            let _: JsonValue = serde_json::from_slice(&a).expect("the writer's document parses");
            assert!(a == b && a == c, "{shape}: the documents differ");
            println!("{shape}: {n} tensors, {} bytes, byte for byte the same three ways", a.len());
        }
        return Ok(());
    }
    let (mode, shape) = (arg(0).unwrap_or(""), arg(1).unwrap_or(""));
    let n: usize = arg(2).map_or(1_000_000, |s| s.parse().expect("N"));
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let secs = write(mode, shape, n, &mut out)?;
    eprintln!("{mode} {shape} {n}: writing {secs:.3} s");
    Ok(())
}
