//! A directory as one model (directory contract, docs/SPEC.md Part IV):
//! every file enters, weights through their canonical labels, every other
//! file by its bytes. `group` decides, by names alone, which files form
//! which component.

pub mod group;
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
/// [`Model::open`]; `inspect` and `diff` of a directory are not built yet.
#[derive(Debug, Clone, Copy)]
pub struct Directory;

/// `inspect` and `diff` of a directory: not built yet (an error says so).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoSection {}

fn no_section(what: &str) -> crate::Error {
    crate::Error::from(std::io::Error::other(format!("{what} of a directory is not available yet")))
}

impl crate::format::Description for Directory {
    type Model = Model;
    type Inspection = NoSection;
    type Diff = NoSection;

    const WHAT: &'static str = "a directory";
    const EXTENSIONS: &'static [&'static str] = &[];

    fn claims_bytes(_head: &[u8]) -> bool {
        false
    }

    fn claims_path(_path: &std::path::Path) -> bool {
        false
    }

    fn from_source(source: crate::source::Source, _opts: crate::format::OpenOptions) -> crate::Result<Model> {
        Err(no_section("a file read as a directory").in_file(source.path()))
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
        _model: &Model,
        _digest: &crate::hash::Digest,
        _opts: &crate::render::InspectOptions,
    ) -> crate::Result<NoSection> {
        Err(no_section("inspect"))
    }

    fn diff(
        _a: &Model,
        _da: &crate::hash::Digest,
        _b: &Model,
        _db: &crate::hash::Digest,
        _opts: &crate::render::DiffOptions,
    ) -> crate::Result<NoSection> {
        Err(no_section("diff"))
    }
}
