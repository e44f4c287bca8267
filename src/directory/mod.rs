//! A directory as one model (directory contract, docs/SPEC.md Part IV):
//! every file enters, weights through their canonical labels, every other
//! file by its bytes. `group` decides, by names alone, which files form
//! which component.

pub mod group;
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

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
