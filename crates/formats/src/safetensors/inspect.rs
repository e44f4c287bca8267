//! The safetensors section of `gguf-digest inspect`: the model's files,
//! its metadata groups, a dtype summary, the tensors, and warnings about
//! what labels fine but deserves a look.

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};
use std::path::PathBuf;

use serde_json::{Value as JsonValue, json};

use crate::hash::{Digest, Sha256Digest};
use crate::output::JSON_FORMAT;
use crate::render::InspectOptions;
use crate::render::{Shown, count, dims_text, path_text, short_digest, table};
use crate::safetensors::index::Declared;
use crate::safetensors::model::Model;
use crate::text::escape_bytes;

/// One file of the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileEntry {
    /// The path it was opened by.
    pub path: PathBuf,
    /// Its size.
    pub size: u64,
    /// Its JSON header's length `N`.
    pub header_len: u64,
    /// Its tensors.
    pub tensor_count: usize,
    /// Index of its metadata group.
    pub group: usize,
}

/// A tensor as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorRow {
    /// Its name.
    pub name: String,
    /// Its dtype.
    pub dtype: &'static str,
    /// Its shape as stored.
    pub shape: Vec<u64>,
    /// Its bytes.
    pub nbytes: u64,
    /// Index of its file.
    pub file: usize,
    /// Its stored `data_offsets`.
    pub data_offsets: [u64; 2],
    /// The SHA-256 of its data.
    pub sha256: Sha256Digest,
}

/// Something that labels fine but a user should know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Warning {
    /// The index's `total_size` is not the sum of the tensors' bytes.
    TotalSize {
        /// What the index says.
        declared: u64,
        /// The sum of `nbytes`.
        actual: u64,
    },
    /// The index's `total_parameters` is not the tensors' element count.
    TotalParameters {
        /// What the index says.
        declared: u64,
        /// The sum of the tensors' element counts.
        actual: u64,
    },
    /// A derived member of the index's `metadata` (`total_size`,
    /// `total_parameters`) is not an integer.
    DerivedNotInteger {
        /// The member.
        member: &'static str,
        /// The kind of JSON value it holds.
        kind: &'static str,
    },
    /// A tensor entry has members the label ignores.
    UnknownMembers {
        /// The tensor.
        tensor: String,
        /// The members.
        members: Vec<String>,
    },
    /// A tensor name or metadata value is empty.
    EmptyName,
}

impl Warning {
    /// A short stable code.
    pub fn code(&self) -> &'static str {
        match self {
            Warning::TotalSize { .. } => "total-size",
            Warning::TotalParameters { .. } => "total-parameters",
            Warning::DerivedNotInteger { .. } => "derived-not-integer",
            Warning::UnknownMembers { .. } => "unknown-members",
            Warning::EmptyName => "empty-name",
        }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::TotalSize { declared, actual } => write!(
                f,
                "the index's total_size is {declared}, but the tensors hold {actual} bytes (layout only, not in the label)"
            ),
            Warning::TotalParameters { declared, actual } => write!(
                f,
                "the index's total_parameters is {declared}, but the tensors hold {actual} elements (derived, not in the label)"
            ),
            Warning::DerivedNotInteger { member, kind } => write!(
                f,
                "the index's {member} is a JSON {kind}, not the integer the tensors give (derived, not in the label)"
            ),
            Warning::UnknownMembers { tensor, members } => write!(
                f,
                "tensor '{}' has members the label ignores: {}",
                escape_bytes(tensor.as_bytes()),
                members.iter().map(|m| escape_bytes(m.as_bytes())).collect::<Vec<_>>().join(", ")
            ),
            Warning::EmptyName => write!(f, "a tensor has the empty name"),
        }
    }
}

/// Everything `inspect` shows about a safetensors model.
#[derive(Debug, Clone, PartialEq)]
pub struct Inspection {
    /// The label.
    pub label: String,
    /// The index it was opened through, if any.
    pub index: Option<PathBuf>,
    /// The files, in the order they were opened.
    pub files: Vec<FileEntry>,
    /// The metadata groups (sorted maps), in skeleton order.
    pub groups: Vec<BTreeMap<String, String>>,
    /// Count and bytes per dtype.
    pub dtypes: Vec<(&'static str, usize, u64)>,
    /// Tensors in name order, at most `limit`.
    pub tensors: Vec<TensorRow>,
    /// All tensors.
    pub tensor_count: usize,
    /// All tensor bytes.
    pub tensor_bytes: u64,
    /// Warnings.
    pub warnings: Vec<Warning>,
    width: usize,
}

/// Inspects a model whose tensors were hashed into `digest`.
pub fn inspect(model: &Model, digest: &Digest, opts: &InspectOptions) -> Inspection {
    let files = model
        .files()
        .iter()
        .map(|f| FileEntry {
            path: f.path().to_path_buf(),
            size: f.source.len(),
            header_len: f.file.header_len,
            tensor_count: f.file.tensors.len(),
            group: f.group,
        })
        .collect();
    let mut dtypes: BTreeMap<&'static str, (usize, u64)> = BTreeMap::new();
    for t in model.tensors() {
        let e = dtypes.entry(t.entry.dtype.name).or_insert((0, 0));
        e.0 = e.0.saturating_add(1);
        e.1 = e.1.saturating_add(t.entry.nbytes);
    }
    let mut tensors: Vec<TensorRow> = model
        .tensors()
        .iter()
        .zip(digest.tensor_sha256())
        .map(|(t, sha)| TensorRow {
            name: t.entry.name.clone(),
            dtype: t.entry.dtype.name,
            shape: t.entry.shape.clone(),
            nbytes: t.entry.nbytes,
            file: t.file,
            data_offsets: [t.entry.begin, t.entry.end],
            sha256: *sha,
        })
        .collect();
    tensors.truncate(opts.limit.unwrap_or(usize::MAX));
    let mut warnings = Vec::new();
    if let Some(index) = model.index() {
        let derived = [
            ("total_size", &index.total_size, model.tensor_bytes()),
            ("total_parameters", &index.total_parameters, model.parameters()),
        ];
        for (member, declared, actual) in derived {
            match declared {
                None => {}
                Some(Declared::Integer(n)) if *n == actual => {}
                Some(Declared::Integer(declared)) if member == "total_size" => {
                    warnings.push(Warning::TotalSize { declared: *declared, actual });
                }
                Some(Declared::Integer(declared)) => {
                    warnings.push(Warning::TotalParameters { declared: *declared, actual })
                }
                Some(Declared::Other(kind)) => warnings.push(Warning::DerivedNotInteger { member, kind }),
            }
        }
    }
    for t in model.tensors() {
        if !t.entry.unknown_members.is_empty() {
            let members = t.entry.unknown_members.clone();
            warnings.push(Warning::UnknownMembers { tensor: t.entry.name.clone(), members });
        }
        if t.entry.name.is_empty() {
            warnings.push(Warning::EmptyName);
        }
    }
    Inspection {
        label: digest.label(),
        index: model.index().map(|i| i.path.clone()),
        files,
        groups: model.groups().iter().map(|g| g.map.clone()).collect(),
        dtypes: dtypes.into_iter().map(|(k, (n, b))| (k, n, b)).collect(),
        tensors,
        tensor_count: model.tensors().len(),
        tensor_bytes: model.tensor_bytes(),
        warnings,
        width: opts.width,
    }
}

impl Inspection {
    /// The text report.
    pub fn text(&self) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = self.write_text(&mut out);
        out
    }

    fn write_text(&self, out: &mut String) -> fmt::Result {
        let first = self.files.first().map(|f| path_text(&f.path)).unwrap_or_default();
        let model = match (&self.index, self.files.len()) {
            (Some(i), n) => format!("{} ({})", path_text(i), count(n as u64, "file", "files")),
            (None, 1) => first,
            (None, n) => format!("{first} ({n} shards)"),
        };
        let rows = [
            ("model", model),
            ("format", "safetensors".to_string()),
            ("tensors", format!("{} ({} of data)", self.tensor_count, count(self.tensor_bytes, "byte", "bytes"))),
            ("metadata", count(self.groups.len() as u64, "group", "groups")),
            ("label", self.label.clone()),
        ];
        for (k, v) in rows {
            writeln!(out, "{k:<12}{v}")?;
        }
        writeln!(out, "\nFiles:")?;
        let rows: Vec<Vec<String>> = self
            .files
            .iter()
            .enumerate()
            .map(|(i, f)| {
                vec![
                    i.saturating_add(1).to_string(),
                    path_text(&f.path),
                    f.size.to_string(),
                    f.header_len.to_string(),
                    f.tensor_count.to_string(),
                    f.group.saturating_add(1).to_string(),
                ]
            })
            .collect();
        let header = ["file", "path", "size", "header", "tensors", "metadata group"];
        table(out, &header, &[true, false, true, true, true, true], &rows)?;
        for (i, g) in self.groups.iter().enumerate() {
            writeln!(out, "\nMetadata group {} ({}):", i.saturating_add(1), count(g.len() as u64, "key", "keys"))?;
            let rows: Vec<Vec<String>> = g
                .iter()
                .map(|(k, v)| vec![escape_bytes(k.as_bytes()), Shown::text(v, self.width).to_string()])
                .collect();
            table(out, &["key", "value"], &[false, false], &rows)?;
        }
        writeln!(out, "\nDtypes:")?;
        let mut rows: Vec<Vec<String>> =
            self.dtypes.iter().map(|(d, n, b)| vec![d.to_string(), n.to_string(), b.to_string()]).collect();
        rows.push(vec!["total".into(), self.tensor_count.to_string(), self.tensor_bytes.to_string()]);
        table(out, &["dtype", "count", "bytes"], &[false, true, true], &rows)?;
        let listed = if self.tensors.len() < self.tensor_count {
            format!("{} of {}, in name order", self.tensors.len(), self.tensor_count)
        } else {
            format!("{}, in name order", self.tensor_count)
        };
        writeln!(out, "\nTensors ({listed}):")?;
        let rows: Vec<Vec<String>> = self
            .tensors
            .iter()
            .map(|t| {
                vec![
                    escape_bytes(t.name.as_bytes()),
                    t.dtype.to_string(),
                    dims_text(&t.shape),
                    t.nbytes.to_string(),
                    t.file.saturating_add(1).to_string(),
                    short_digest(&t.sha256),
                ]
            })
            .collect();
        table(
            out,
            &["name", "dtype", "shape", "bytes", "file", "sha256"],
            &[false, false, false, true, true, false],
            &rows,
        )?;
        // As GGUF's section says it.
        if self.warnings.is_empty() {
            writeln!(out, "\nWarnings: none")?;
        } else {
            writeln!(out, "\nWarnings ({}):", self.warnings.len())?;
        }
        for w in &self.warnings {
            writeln!(out, "  {}: {w}", w.code())?;
        }
        Ok(())
    }

    /// The JSON document.
    pub fn to_json(&self) -> JsonValue {
        json!({
            "format": JSON_FORMAT,
            "model_format": "safetensors",
            "label": self.label,
            "index": self.index.as_ref().map(|p| p.to_string_lossy().into_owned()),
            "tensor_count": self.tensor_count,
            "tensor_bytes": self.tensor_bytes,
            "files": self.files.iter().map(|f| json!({
                "path": f.path.to_string_lossy(),
                "size": f.size,
                "header_len": f.header_len,
                "tensor_count": f.tensor_count,
                "metadata_group": f.group,
            })).collect::<Vec<_>>(),
            "metadata_groups": self.groups,
            "dtypes": self.dtypes.iter().map(|(d, n, b)| json!({"dtype": d, "count": n, "bytes": b})).collect::<Vec<_>>(),
            "tensors": self.tensors.iter().map(|t| json!({
                "name": t.name,
                "dtype": t.dtype,
                "shape": t.shape,
                "nbytes": t.nbytes,
                "file": t.file,
                "data_offsets": t.data_offsets,
                "sha256": hex::encode(t.sha256),
            })).collect::<Vec<_>>(),
            "warnings": self.warnings.iter().map(|w| json!({"code": w.code(), "message": w.to_string()})).collect::<Vec<_>>(),
        })
    }
}
