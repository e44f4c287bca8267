//! `gguf-digest inspect` and `gguf-digest diff`: flags and printing only;
//! the work is in the library.

use std::io;

use gguf_digest::BatchOptions;

/// Flags of `gguf-digest inspect`.
#[derive(clap::Args, Debug)]
pub struct InspectArgs {
    /// The model (for a split model, its first shard).
    pub file: std::path::PathBuf,
}

/// Flags of `gguf-digest diff`.
#[derive(clap::Args, Debug)]
pub struct DiffArgs {
    /// The first model.
    pub a: std::path::PathBuf,
    /// The second model.
    pub b: std::path::PathBuf,
}

/// Runs `inspect`; returns the exit status.
pub fn run_inspect(_args: &InspectArgs, _opts: &BatchOptions, _pool: &rayon::ThreadPool) -> io::Result<u8> {
    eprintln!("gguf-digest: inspect is not implemented yet");
    Ok(crate::EXIT_ERROR)
}

/// Runs `diff`; returns the exit status.
pub fn run_diff(_args: &DiffArgs, _opts: &BatchOptions, _pool: &rayon::ThreadPool) -> io::Result<u8> {
    eprintln!("gguf-digest: diff is not implemented yet");
    Ok(crate::EXIT_ERROR)
}
