//! A directory as one model (directory contract, docs/SPEC.md Part IV):
//! every file enters, weights through their canonical labels, every other
//! file by its bytes. `group` decides, by names alone, which files form
//! which component.

pub mod diff;
pub mod group;
pub mod inspect;
pub mod members;
pub mod model;
pub mod skeleton;
pub mod walk;

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

/// The directory "format", as the core's list of formats names it
/// (`formats.rs`). No file is one: a directory argument is opened by
/// [`Model::open`].
#[derive(Debug, Clone, Copy)]
pub struct Directory;

/// Why a file cannot be read as a directory (the input layer opens a
/// directory by its path, never as a file).
fn not_a_file() -> crate::Error {
    crate::Error::internal("a file was handed to the directory format")
}

impl crate::format::Description for Directory {
    type Model = Model;
    type Inspection = inspect::Inspection;
    type Diff = diff::Diff;

    const WHAT: &'static str = "a directory";
    const EXTENSIONS: &'static [&'static str] = &[];

    fn claims_bytes(_head: &[u8]) -> bool {
        false
    }

    fn claims_path(_path: &std::path::Path) -> bool {
        false
    }

    fn from_source(source: crate::source::Source, _opts: crate::format::OpenOptions) -> crate::Result<Model> {
        Err(not_a_file().in_file(source.path()))
    }

    fn first_shard_of(_later: &std::path::Path) -> Option<std::path::PathBuf> {
        None
    }

    fn shard_alone_names_model(_model: &Model) -> bool {
        false
    }

    fn approximate_bytes(path: &std::path::Path) -> Option<u64> {
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

    fn inspect(
        model: &Model,
        digest: &crate::hash::Digest,
        opts: &crate::render::InspectOptions,
    ) -> crate::Result<inspect::Inspection> {
        inspect::inspect(model, digest, opts)
    }

    fn diff(
        a: &Model,
        da: &crate::hash::Digest,
        b: &Model,
        db: &crate::hash::Digest,
        opts: &crate::render::DiffOptions,
    ) -> crate::Result<diff::Diff> {
        diff::diff(a, da, b, db, opts)
    }
}
