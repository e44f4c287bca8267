//! A directory as one model (directory contract, docs/SPEC.md Part IV):
//! every file enters, weights through their canonical labels, every other
//! file by its bytes. `group` decides, by names and the lists files give
//! (indexes, ONNX models), which files form which component, asking each
//! format's rule through the registry (docs/adr/0047); `open` opens them.

pub mod diff;
mod error;
mod facts;
pub mod group;
pub mod inspect;
pub mod members;
pub mod model;
mod open;
pub mod skeleton;
pub mod walk;

pub use error::DirectoryErrorKind;

pub use model::Model;

impl crate::format::Labelled for Model {
    fn job_count(&self) -> usize {
        Model::job_count(self)
    }

    fn job(&self, i: usize) -> Option<crate::hash::Job<'_>> {
        Model::job(self, i)
    }

    fn sources(&self) -> Vec<&crate::source::Source> {
        Model::sources(self)
    }

    fn write_skeleton(&self, data: &[crate::hash::Sha256Digest], sink: &mut dyn FnMut(&[u8])) -> crate::Result<()> {
        Model::write_skeleton(self, data, sink)
    }

    fn write_json(
        &self,
        w: &mut crate::output::JsonWriter<'_>,
        path: &std::path::Path,
        digest: &crate::hash::Digest,
    ) -> std::io::Result<()> {
        Model::write_json(self, w, path, digest)
    }

    fn contract(&self) -> (&'static str, &'static str) {
        ("directory", "directory-skeleton-v1")
    }
}

impl crate::format::Opened for Model {
    fn what(&self) -> &'static str {
        "a directory"
    }

    fn inspect(
        &self,
        digest: &crate::hash::Digest,
        opts: &crate::render::InspectOptions,
    ) -> crate::Result<Box<dyn crate::format::Section>> {
        Ok(Box::new(inspect::inspect(self, digest, opts)?))
    }

    fn diff(
        &self,
        mine: &crate::hash::Digest,
        other: &crate::format::AnyModel,
        theirs: &crate::hash::Digest,
        side: crate::format::Side,
        opts: &crate::render::DiffOptions,
    ) -> Option<crate::Result<Box<dyn crate::format::DiffSection>>> {
        crate::format::diff_same(self, mine, other, theirs, side, |a, da, b, db| diff::diff(a, da, b, db, opts))
    }

    fn facts(&self, facts: &mut crate::facts::Facts) -> crate::Result<()> {
        facts::facts(self, facts)
    }

    fn shard_alone_names_model(&self) -> bool {
        false
    }

    fn warnings(&self) -> Vec<String> {
        Model::warnings(self)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl crate::format::Section for inspect::Inspection {
    fn text(&self) -> String {
        inspect::Inspection::text(self)
    }

    fn to_json(&self) -> serde_json::Value {
        inspect::Inspection::to_json(self)
    }
}

impl crate::format::Section for diff::Diff {
    fn text(&self) -> String {
        diff::Diff::text(self)
    }

    fn to_json(&self) -> serde_json::Value {
        diff::Diff::to_json(self)
    }
}

impl crate::format::DiffSection for diff::Diff {
    fn labels_equal(&self) -> bool {
        diff::Diff::labels_equal(self)
    }
}

/// About how many bytes labelling the directory `path` reads (its files'
/// sizes, through the walk): a progress bar's length; `None` when `path`
/// is no directory or cannot be walked.
pub fn approximate_bytes(path: &std::path::Path) -> Option<u64> {
    if !path.is_dir() {
        return None;
    }
    let tree = walk::walk(path).ok()?;
    let size = |f: &walk::Found| {
        let root = tree.root(f.store)?;
        std::fs::symlink_metadata(root.path().join(&f.at)).ok().map(|m| m.len())
    };
    Some(tree.files.iter().filter_map(size).fold(0u64, u64::saturating_add))
}
