//! Later shards named beside their first shard (`gguf-digest *.gguf` or
//! `*.safetensors` in a folder holding a split model): left out of the run
//! when the set's line covers them (ADR 0006).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::error::Result;
use crate::format::{AnyModel, Labelled, OpenOptions};
use crate::formats;

use super::open_model;

/// What a run makes of one of its arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Named {
    /// Labelled: the `n`-th of [`NamedModels::paths`].
    Line(usize),
    /// Left out: the model of the `n`-th path holds it, and named alone it
    /// names that same model (a shard of a set with an index: alone, it is
    /// opened through the same index).
    SameModel(usize),
    /// Left out: the model of the `n`-th path holds it, and named alone it
    /// is refused for not being its set's first shard.
    LaterShard(usize),
}

/// The models a run's arguments name: the arguments without each later
/// shard whose first shard is also an argument (the same path as given but
/// for the shard number) and whose model holds it (GGUF, safetensors with
/// or without an index), so that the set has one line, the first shard's.
/// That is read from the files, never guessed from names: a file merely
/// named like a shard, or a shard the set does not hold, stays, labelled or
/// refused on its own. The first shards opened to decide are kept and
/// handed to the run ([`NamedModels::open`]), so the model labelled is the
/// very one seen to hold the shards left out: no argument is dropped
/// unseen, even if files change meanwhile, no label is of part of a model,
/// and no model is read twice. They stay open until the run reaches them
/// (a price of that promise). With `join_shards` off every shard is a
/// model: nothing is left out.
pub struct NamedModels {
    paths: Vec<PathBuf>,
    arguments: Vec<Named>,
    opts: OpenOptions,
    /// Each first shard opened to decide (`None`: it could not be opened,
    /// so it covers nothing; the run says why), handed over once.
    opened: Mutex<HashMap<PathBuf, Option<AnyModel>>>,
}

impl NamedModels {
    /// Reads which later shards `args` holds beside their sets, opening the
    /// models of the first shards named beside them (nothing else).
    pub fn new(args: &[PathBuf], opts: &OpenOptions) -> NamedModels {
        let mut opened: HashMap<PathBuf, Option<AnyModel>> = HashMap::new();
        // Per argument: the first shard whose model holds it, and whether
        // alone it names that model.
        let covered: Vec<Option<(PathBuf, bool)>> = if opts.join_shards {
            let named: HashSet<&Path> = args.iter().map(PathBuf::as_path).collect();
            let mut cover = |arg: &PathBuf| {
                let first = formats::first_shard_of(arg).filter(|f| named.contains(f.as_path()))?;
                let model = opened.entry(first.clone()).or_insert_with_key(|first| open_model(first, opts).ok());
                let stands = stands_alone(model.as_ref()?, arg)?;
                Some((first, stands))
            };
            args.iter().map(&mut cover).collect()
        } else {
            vec![None; args.len()]
        };
        // Each line's index; a covered argument points at its first shard's
        // (the first occurrence, if it is named twice). A first shard is
        // never covered (its number is 1), so it always has a line.
        let mut paths = Vec::new();
        let mut line_of: HashMap<&Path, usize> = HashMap::new();
        for (arg, c) in args.iter().zip(&covered) {
            if c.is_none() {
                line_of.entry(arg.as_path()).or_insert(paths.len());
                paths.push(arg.clone());
            }
        }
        let mut arguments = Vec::with_capacity(args.len());
        let mut next = 0..;
        for c in &covered {
            let line = c.as_ref().and_then(|(first, stands)| Some((*line_of.get(first.as_path())?, *stands)));
            arguments.push(match line {
                Some((n, true)) => Named::SameModel(n),
                Some((n, false)) => Named::LaterShard(n),
                None => Named::Line(next.next().unwrap_or_default()),
            });
        }
        NamedModels { paths, arguments, opts: *opts, opened: Mutex::new(opened) }
    }

    /// The paths to label, in argument order.
    pub fn paths(&self) -> &[PathBuf] {
        &self.paths
    }

    /// What the run makes of each argument, in argument order.
    pub fn arguments(&self) -> &[Named] {
        &self.arguments
    }

    /// Opens `path` for the run: a first shard opened to decide what it
    /// covers comes as it was opened (once, and only with the options it was
    /// opened with); anything else as [`open_model`] opens it.
    pub fn open(&self, path: &Path, opts: &OpenOptions) -> Result<AnyModel> {
        let kept = if *opts == self.opts {
            self.opened.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).remove(path).flatten()
        } else {
            None
        };
        kept.map_or_else(|| open_model(path, opts), Ok)
    }
}

/// Whether `model`, opened from a first shard, holds the later shard
/// `shard` (`None`: it does not) and, if so, whether `shard` alone names
/// the same model. A GGUF set holds a later shard only when its `split.`
/// keys say it is one, and alone that shard is refused (not the first); a
/// safetensors set without an index refuses its later shards alone by their
/// names; through an index, a shard alone opens the same index, so names
/// the same model.
fn stands_alone(model: &AnyModel, shard: &Path) -> Option<bool> {
    if !model.sources().iter().any(|s| s.path() == shard) {
        return None;
    }
    Some(model.shard_alone_names_model())
}
