//! The directory section of `gguf-digest diff`: two directories compared
//! component by component (by kind and name, the skeleton's order). Every
//! component added, removed or changed is named; a changed weights
//! component goes on into its own format's diff, leaf by leaf;
//! a changed JSON file names the members that differ (`chat_template`
//! added, `pooling_mode_mean_tokens` true → false), not only "bytes
//! differ".

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};

use serde_json::{Map, Value as JsonValue, json};

use crate::directory::inspect::{ComponentRow, component_json};
use crate::directory::members::{Change, MAX_MEMBERS_FILE, Member, changed_members};
use crate::directory::model::{Model, Part};
use crate::error::{Error, Result};
use crate::format::{DiffSection, Side as FormatSide};
use crate::hash::Digest;
use crate::output::{JSON_FORMAT, put_name};
use crate::render::{DiffOptions, path_text, short_digest};
use crate::source::Source;
use crate::text::escape_bytes;

/// How a changed component differs.
#[derive(Debug)]
pub enum Inside {
    /// Two weights models of one format, leaf by leaf: the format's own
    /// `diff` section.
    Weights(Box<dyn DiffSection>),
    /// Two JSON files: the members that differ (at most
    /// [`MAX_MEMBERS_SHOWN`](crate::directory::members::MAX_MEMBERS_SHOWN))
    /// and how many do in all. None named: only spacing or order differs.
    Members(Vec<Member>, usize),
    /// Two files whose bytes differ (not JSON, or too large to read as such).
    Bytes,
}

/// One component that differs between the two directories.
#[derive(Debug)]
pub enum ComponentChange {
    /// Only in B.
    Added(ComponentRow),
    /// Only in A.
    Removed(ComponentRow),
    /// In both, with other digests.
    Changed {
        /// A's side.
        a: ComponentRow,
        /// B's side.
        b: ComponentRow,
        /// How (boxed: a weights diff is large, and most changes are files).
        inside: Box<Inside>,
    },
}

/// The differences between two directories.
#[derive(Debug)]
pub struct Diff {
    /// (path, label, components) of A.
    pub a: (String, String, usize),
    /// (path, label, components) of B.
    pub b: (String, String, usize),
    /// Components in both with one digest.
    pub same: usize,
    /// Every component that differs, in skeleton order.
    pub changes: Vec<ComponentChange>,
}

/// A component's row, its open model or file, and its own digest.
struct Side<'m> {
    row: ComponentRow,
    part: &'m Part,
    digest: Digest,
}

fn sides<'m>(model: &'m Model, digest: &Digest) -> Result<BTreeMap<(&'static str, Vec<u8>), Side<'m>>> {
    let subs = model.sub_digests(digest.tensor_sha256())?;
    let mut out = BTreeMap::new();
    for (c, d) in model.components().iter().zip(subs) {
        let row = ComponentRow::of(c, &d);
        out.insert((row.kind, row.name.clone()), Side { row, part: &c.part, digest: d });
    }
    Ok(out)
}

/// Compares two directories whose jobs were hashed into `da` and `db`.
pub fn diff(a: &Model, da: &Digest, b: &Model, db: &Digest, opts: &DiffOptions) -> Result<Diff> {
    let (sa, sb) = (sides(a, da)?, sides(b, db)?);
    let mut changes = Vec::new();
    let mut same = 0usize;
    let keys: std::collections::BTreeSet<_> = sa.keys().chain(sb.keys()).cloned().collect();
    for key in keys {
        match (sa.get(&key), sb.get(&key)) {
            (Some(x), Some(y)) if x.row.digest == y.row.digest => same = same.saturating_add(1),
            (Some(x), Some(y)) => {
                let inside = Box::new(inside(x, y, opts)?);
                changes.push(ComponentChange::Changed { a: x.row.clone(), b: y.row.clone(), inside });
            }
            (Some(x), None) => changes.push(ComponentChange::Removed(x.row.clone())),
            (None, Some(y)) => changes.push(ComponentChange::Added(y.row.clone())),
            (None, None) => {}
        }
    }
    // Skeleton order: kind bytes, then name bytes (the map's order is the
    // kind's text, the same bytes).
    Ok(Diff {
        a: (path_text(a.path()), da.label(), sa.len()),
        b: (path_text(b.path()), db.label(), sb.len()),
        same,
        changes,
    })
}

/// How two components of one kind and name differ.
fn inside(x: &Side<'_>, y: &Side<'_>, opts: &DiffOptions) -> Result<Inside> {
    Ok(match (x.part, y.part) {
        // One kind is one format: the model compares itself with the other.
        (Part::Weights(ma), Part::Weights(mb)) => match ma.diff(&x.digest, mb, &y.digest, FormatSide::First, opts) {
            Some(d) => Inside::Weights(d?),
            None => return Err(Error::internal("two weights components of one kind that cannot be compared")),
        },
        (Part::File(fa), Part::File(fb)) if is_json_name(&x.row.name) => match (whole(fa), whole(fb)) {
            (Some(ta), Some(tb)) => match changed_members(&ta, &tb, opts.width) {
                Some((members, total)) => Inside::Members(members, total),
                None => Inside::Bytes,
            },
            _ => Inside::Bytes,
        },
        _ => Inside::Bytes,
    })
}

/// Whether a file's name says it holds JSON (`config.json`,
/// `tokenizer_config.json`, `1_Pooling/config.json`).
fn is_json_name(name: &[u8]) -> bool {
    name.ends_with(b".json")
}

/// A file's bytes, when it is small enough to compare as JSON. Read again
/// after labelling: only for showing, the verdict is the digests'.
fn whole(source: &Source) -> Option<Vec<u8>> {
    if source.len() > MAX_MEMBERS_FILE as u64 {
        return None;
    }
    source.head(source.len()).ok()
}

impl Diff {
    /// True when both labels are equal (and so no component differs).
    pub fn labels_equal(&self) -> bool {
        self.a.1 == self.b.1
    }

    /// The text report.
    pub fn text(&self) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = self.write_text(&mut out);
        out
    }

    fn write_text(&self, out: &mut String) -> fmt::Result {
        for (side, (path, label, n)) in [("a", &self.a), ("b", &self.b)] {
            writeln!(out, "{side}  {label}  {path}  ({n} components)")?;
        }
        if self.labels_equal() {
            return writeln!(out, "\nThe labels are equal: every component is the same.");
        }
        writeln!(out, "\n{} the same; {} differ:", self.same, self.changes.len())?;
        let line = |sign: char, r: &ComponentRow| {
            format!("{sign} {} {}  {}", r.kind, escape_bytes(&r.name), short_digest(&r.digest))
        };
        for c in &self.changes {
            match c {
                ComponentChange::Added(r) => writeln!(out, "{}", line('+', r))?,
                ComponentChange::Removed(r) => writeln!(out, "{}", line('-', r))?,
                ComponentChange::Changed { a, b, inside } => {
                    let name = escape_bytes(&a.name);
                    writeln!(out, "~ {} {name}  {} → {}", a.kind, short_digest(&a.digest), short_digest(&b.digest))?;
                    write_inside(out, inside)?;
                }
            }
        }
        Ok(())
    }

    /// The JSON document: both sides, and every component that differs with
    /// its kind, name, digest and files.
    pub fn to_json(&self) -> JsonValue {
        let side = |(path, label, n): &(String, String, usize)| json!({"path": path, "label": label, "components": n});
        json!({
            "format": JSON_FORMAT,
            "model_format": "directory",
            "a": side(&self.a),
            "b": side(&self.b),
            "labels_equal": self.labels_equal(),
            "same": self.same,
            "changes": self.changes.iter().map(change_json).collect::<Vec<_>>(),
        })
    }
}

/// What a changed component's own diff says, indented under its line.
fn write_inside(out: &mut String, inside: &Inside) -> fmt::Result {
    let indent = |out: &mut String, text: &str| -> fmt::Result {
        for l in text.lines() {
            writeln!(out, "    {l}")?;
        }
        Ok(())
    };
    match inside {
        Inside::Weights(d) => indent(out, &d.text()),
        Inside::Bytes => writeln!(out, "    bytes differ"),
        Inside::Members(m, _) if m.is_empty() => writeln!(out, "    the same members and values, written differently"),
        Inside::Members(members, total) => {
            for m in members {
                let path = if m.path.is_empty() { "(the whole document)" } else { m.path.as_str() };
                match &m.change {
                    Change::Added(v) => writeln!(out, "    {path}: added {v}")?,
                    Change::Removed(v) => writeln!(out, "    {path}: removed (was {v})")?,
                    Change::Changed(x, y) => writeln!(out, "    {path}: {x} → {y}")?,
                }
            }
            let more = total.saturating_sub(members.len());
            if more > 0 {
                writeln!(out, "    … and {more} more")?;
            }
            Ok(())
        }
    }
}

fn change_json(c: &ComponentChange) -> JsonValue {
    match c {
        ComponentChange::Added(r) => json!({"change": "added", "b": component_json(r)}),
        ComponentChange::Removed(r) => json!({"change": "removed", "a": component_json(r)}),
        ComponentChange::Changed { a, b, inside } => {
            let mut o = Map::new();
            o.insert("change".into(), json!("changed"));
            o.insert("kind".into(), json!(a.kind));
            put_name(&mut o, "name", &a.name);
            o.insert("a".into(), component_json(a));
            o.insert("b".into(), component_json(b));
            let detail = match &**inside {
                Inside::Weights(d) => json!({"weights": d.to_json()}),
                Inside::Bytes => json!({"bytes_differ": true}),
                Inside::Members(members, total) => json!({
                    "members": members.iter().map(member_json).collect::<Vec<_>>(),
                    "members_differing": total,
                }),
            };
            if let JsonValue::Object(d) = detail {
                o.extend(d);
            }
            JsonValue::Object(o)
        }
    }
}

fn member_json(m: &Member) -> JsonValue {
    match &m.change {
        Change::Added(v) => json!({"member": m.path, "change": "added", "b": v}),
        Change::Removed(v) => json!({"member": m.path, "change": "removed", "a": v}),
        Change::Changed(x, y) => json!({"member": m.path, "change": "changed", "a": x, "b": y}),
    }
}
