//! Test-only safetensors writer: emits any logical model in any layout (key
//! order, data order, header padding, string escapes, shard cuts with or
//! without an index), plus the expected skeleton derived from the contract's
//! text. It shares no code with the library on purpose.
#![allow(dead_code)]

use super::{hex, sha};

/// Bits per element of the contract's dtype table, written out again here.
pub fn dtype_bits(dtype: &str) -> Option<u64> {
    Some(match dtype {
        "F4" => 4,
        "F6_E2M3" | "F6_E3M2" => 6,
        "BOOL" | "U8" | "I8" | "F8_E5M2" | "F8_E4M3" | "F8_E8M0" | "F8_E4M3FNUZ" | "F8_E5M2FNUZ" => 8,
        "I16" | "U16" | "F16" | "BF16" => 16,
        "I32" | "U32" | "F32" => 32,
        "C64" | "F64" | "I64" | "U64" => 64,
        _ => return None,
    })
}

/// Every dtype of the table.
pub const ALL_DTYPES: [&str; 22] = [
    "F4",
    "F6_E2M3",
    "F6_E3M2",
    "BOOL",
    "U8",
    "I8",
    "F8_E5M2",
    "F8_E4M3",
    "F8_E8M0",
    "F8_E4M3FNUZ",
    "F8_E5M2FNUZ",
    "I16",
    "U16",
    "F16",
    "BF16",
    "I32",
    "U32",
    "F32",
    "C64",
    "F64",
    "I64",
    "U64",
];

/// A tensor as the test writes it.
#[derive(Clone, Debug, PartialEq)]
pub struct StTensor {
    pub name: String,
    pub dtype: String,
    pub shape: Vec<u64>,
    pub data: Vec<u8>,
}

impl StTensor {
    /// A tensor of `dtype` and `shape`, filled with bytes derived from `seed`.
    pub fn filled(name: &str, dtype: &str, shape: &[u64], seed: u8) -> StTensor {
        let bits = dtype_bits(dtype).expect("known dtype");
        let n = shape.iter().product::<u64>() * bits / 8;
        let data = (0..n).map(|i| (i as u8).wrapping_mul(37).wrapping_add(seed)).collect();
        StTensor { name: name.to_string(), dtype: dtype.to_string(), shape: shape.to_vec(), data }
    }
}

/// One file's applicable metadata map and its tensors.
pub type FileContent = (Vec<(String, String)>, Vec<StTensor>);

/// A safetensors file to write: the logical content plus layout choices.
#[derive(Clone, Debug, Default)]
pub struct St {
    /// `__metadata__` entries; `None` writes no `__metadata__` member.
    pub metadata: Option<Vec<(String, String)>>,
    pub tensors: Vec<StTensor>,
    /// Order of the header members (indices into `tensors`; the metadata
    /// member goes first unless `metadata_last`).
    pub key_order: Option<Vec<usize>>,
    pub metadata_last: bool,
    /// Order of the data (indices into `tensors`).
    pub data_order: Option<Vec<usize>>,
    /// Spaces appended to the header (writers pad to 8 bytes).
    pub pad: usize,
    /// Write every non-ASCII and some ASCII characters of names and strings
    /// as `\uXXXX` escapes.
    pub escape: bool,
    /// Extra members put into every tensor entry, verbatim (`"k": v`).
    pub extra_member: Option<String>,
}

/// A JSON string literal, optionally with everything escaped.
pub fn json_str(s: &str, escape: bool) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c if escape && (c as u32 > 0x7e || c == 'a' || c == '.') => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    out.push_str(&format!("\\u{unit:04X}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

impl St {
    pub fn new() -> St {
        St::default()
    }

    pub fn meta(mut self, k: &str, v: &str) -> St {
        self.metadata.get_or_insert_with(Vec::new).push((k.to_string(), v.to_string()));
        self
    }

    pub fn tensor(mut self, t: StTensor) -> St {
        self.tensors.push(t);
        self
    }

    /// The file's bytes.
    pub fn build(&self) -> Vec<u8> {
        let n = self.tensors.len();
        let data_order = self.data_order.clone().unwrap_or_else(|| (0..n).collect());
        let mut offsets = vec![(0u64, 0u64); n];
        let mut pos = 0u64;
        for &i in &data_order {
            let len = self.tensors[i].data.len() as u64;
            offsets[i] = (pos, pos + len);
            pos += len;
        }
        let mut members: Vec<String> = Vec::new();
        let meta = self.metadata.as_ref().map(|m| {
            let inner: Vec<String> =
                m.iter().map(|(k, v)| format!("{}:{}", json_str(k, self.escape), json_str(v, self.escape))).collect();
            format!("\"__metadata__\":{{{}}}", inner.join(","))
        });
        if let (Some(m), false) = (&meta, self.metadata_last) {
            members.push(m.clone());
        }
        for &i in self.key_order.as_ref().unwrap_or(&(0..n).collect()) {
            let t = &self.tensors[i];
            let shape: Vec<String> = t.shape.iter().map(u64::to_string).collect();
            let extra = self.extra_member.as_ref().map(|e| format!(",{e}")).unwrap_or_default();
            members.push(format!(
                "{}:{{\"dtype\":\"{}\",\"shape\":[{}],\"data_offsets\":[{},{}]{extra}}}",
                json_str(&t.name, self.escape),
                t.dtype,
                shape.join(","),
                offsets[i].0,
                offsets[i].1
            ));
        }
        if let (Some(m), true) = (&meta, self.metadata_last) {
            members.push(m.clone());
        }
        let mut header = format!("{{{}}}", members.join(",")).into_bytes();
        header.extend(std::iter::repeat_n(b' ', self.pad));
        let mut out = (header.len() as u64).to_le_bytes().to_vec();
        out.extend_from_slice(&header);
        for &i in &data_order {
            out.extend_from_slice(&self.tensors[i].data);
        }
        out
    }

    /// The canonical encoding of one applicable metadata map.
    pub fn group(map: &[(String, String)]) -> Vec<u8> {
        let mut sorted: Vec<&(String, String)> = map.iter().collect();
        sorted.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        sorted.dedup_by(|a, b| a.0 == b.0);
        let mut g = (sorted.len() as u64).to_le_bytes().to_vec();
        for (k, v) in sorted {
            g.extend_from_slice(&sha(k.as_bytes()));
            g.extend_from_slice(&(v.len() as u64).to_le_bytes());
            g.extend_from_slice(&sha(v.as_bytes()));
        }
        g
    }

    /// The skeleton of a model whose tensors are spread over files, each
    /// file with its applicable metadata map: `(map, tensors)` per file.
    pub fn expected_skeleton_of(files: &[FileContent]) -> Vec<u8> {
        let mut groups: Vec<Vec<u8>> = files.iter().map(|(m, _)| St::group(m)).collect();
        let mut tensors: Vec<(&StTensor, [u8; 32])> = Vec::new();
        for ((m, ts), _) in files.iter().zip(0..) {
            let g = sha(&St::group(m));
            tensors.extend(ts.iter().map(|t| (t, g)));
        }
        groups.sort_by_key(|g| sha(g));
        groups.dedup();
        tensors.sort_by(|a, b| a.0.name.as_bytes().cmp(b.0.name.as_bytes()));
        let mut s = b"SFTN".to_vec();
        s.extend_from_slice(&1u32.to_le_bytes());
        s.extend_from_slice(&(tensors.len() as u64).to_le_bytes());
        s.extend_from_slice(&(groups.len() as u64).to_le_bytes());
        for g in &groups {
            s.extend_from_slice(g);
        }
        let mut offset = 0u64;
        for (t, g) in tensors {
            s.extend_from_slice(&sha(t.name.as_bytes()));
            s.extend_from_slice(&(t.dtype.len() as u32).to_le_bytes());
            s.extend_from_slice(t.dtype.as_bytes());
            s.extend_from_slice(&(t.shape.len() as u32).to_le_bytes());
            for d in &t.shape {
                s.extend_from_slice(&d.to_le_bytes());
            }
            s.extend_from_slice(&offset.to_le_bytes());
            s.extend_from_slice(&sha(&t.data));
            s.extend_from_slice(&g);
            offset += t.data.len() as u64;
        }
        s
    }

    /// The label of this file alone.
    pub fn expected_label(&self) -> String {
        let map = self.metadata.clone().unwrap_or_default();
        hex(&sha(&St::expected_skeleton_of(&[(map, self.tensors.clone())])))
    }

    /// The model cut into shards as huggingface_hub writes them: shard i
    /// holds `sizes[i]` tensors and `{"format": "pt"}`; the user metadata
    /// and `total_size` go into the index. Returns the files (name, bytes)
    /// and the index text.
    pub fn sharded(&self, prefix: &str, sizes: &[usize]) -> (Vec<(String, Vec<u8>)>, String) {
        assert_eq!(sizes.iter().sum::<usize>(), self.tensors.len());
        let count = sizes.len();
        let mut files = Vec::new();
        let mut weight_map = Vec::new();
        let mut next = 0;
        for (i, &k) in sizes.iter().enumerate() {
            let name = format!("{prefix}-{:05}-of-{count:05}.safetensors", i + 1);
            let shard = St {
                metadata: Some(vec![("format".into(), "pt".into())]),
                tensors: self.tensors[next..next + k].to_vec(),
                // Layout choices carry over to every shard.
                pad: self.pad,
                escape: self.escape,
                extra_member: self.extra_member.clone(),
                ..St::default()
            };
            for t in &shard.tensors {
                weight_map.push(format!("{}:{}", json_str(&t.name, false), json_str(&name, false)));
            }
            files.push((name, shard.build()));
            next += k;
        }
        let total: u64 = self.tensors.iter().map(|t| t.data.len() as u64).sum();
        let mut meta = vec![format!("\"total_size\":{total}")];
        for (k, v) in self.metadata.iter().flatten() {
            if k != "format" {
                meta.push(format!("{}:{}", json_str(k, false), json_str(v, false)));
            }
        }
        let index = format!("{{\"metadata\":{{{}}},\"weight_map\":{{{}}}}}", meta.join(","), weight_map.join(","));
        (files, index)
    }
}
