//! `gguf-digest inspect` and `gguf-digest diff`: flags and printing only;
//! the work is in the library (`crate::inspect`, `crate::diff`).

use std::io::{self, Write};
use std::path::PathBuf;

use crate::BatchOptions;
use crate::diff::{DiffOptions, diff_paths};
use crate::inspect::{InspectOptions, inspect_path, what_could_be_read};
use crate::output::error_line;

use super::{EXIT_ERROR, EXIT_MISMATCH, EXIT_OK, ReadArgs};

/// Flags of `gguf-digest inspect`.
#[derive(clap::Args, Debug)]
#[command(after_help = "Exit status: 0 inspected, 2 the file could not be read or labelled.")]
pub struct InspectArgs {
    /// The model (for a split model, its first shard).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// Print one JSON document instead of text.
    #[arg(long)]
    pub json: bool,

    /// List at most N tensors (in file order).
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,

    /// Show at most N bytes of each string; longer ones are elided with their length.
    #[arg(long, value_name = "N", default_value_t = InspectOptions::default().width)]
    pub width: usize,

    /// Show at most N elements of each array (nested elements included).
    #[arg(long, value_name = "N", default_value_t = InspectOptions::default().items)]
    pub items: usize,

    #[command(flatten)]
    pub read: ReadArgs,
}

/// Flags of `gguf-digest diff`.
#[derive(clap::Args, Debug)]
#[command(after_help = "Exit status: 0 the labels are equal, 1 they differ, 2 a model could not be read or labelled.")]
pub struct DiffArgs {
    /// The first model (a file, or the first shard of a split model).
    #[arg(value_name = "A")]
    pub a: PathBuf,

    /// The second model.
    #[arg(value_name = "B")]
    pub b: PathBuf,

    /// Print one JSON document instead of text.
    #[arg(long)]
    pub json: bool,

    /// Show strings of at most N bytes; longer ones by length and digest only.
    #[arg(long, value_name = "N", default_value_t = DiffOptions::default().width)]
    pub width: usize,

    /// Show at most N elements of an array (in text, of an added or removed one).
    #[arg(long, value_name = "N", default_value_t = DiffOptions::default().items)]
    pub items: usize,

    #[command(flatten)]
    pub read: ReadArgs,
}

pub(crate) fn print_json(doc: &serde_json::Value) -> io::Result<()> {
    let mut out = io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, doc)?;
    out.write_all(b"\n")?;
    out.flush()
}

fn print_text(text: &str) -> io::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}

/// Runs `inspect`; returns the exit status.
pub fn run_inspect(args: &InspectArgs, opts: &BatchOptions, pool: &rayon::ThreadPool) -> io::Result<u8> {
    let options = InspectOptions { width: args.width, items: args.items, limit: args.limit };
    match inspect_path(&args.file, opts, pool, &options) {
        Ok(i) if args.json => print_json(&i.to_json()).map(|()| EXIT_OK),
        Ok(i) => print_text(&i.text()).map(|()| EXIT_OK),
        Err(e) => {
            // What could be read of a cut or malformed file, then why it
            // stopped. Not with --json: a partial document could be taken
            // for a whole one.
            if !args.json {
                if let Some(partial) = what_could_be_read(&args.file, &e, &options) {
                    print_text(&partial.text())?;
                }
            }
            eprintln!("gguf-digest: {}", error_line(&e));
            Ok(EXIT_ERROR)
        }
    }
}

/// Runs `diff`; returns the exit status.
pub fn run_diff(args: &DiffArgs, opts: &BatchOptions, pool: &rayon::ThreadPool) -> io::Result<u8> {
    let options = DiffOptions { width: args.width, items: args.items };
    if args.a.as_os_str() == "-" && args.b.as_os_str() == "-" {
        eprintln!(
            "gguf-digest: diff: standard input can be read only once; save one side to a file and compare with it"
        );
        return Ok(EXIT_ERROR);
    }
    let d = match diff_paths(&args.a, &args.b, opts, pool, &options) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("gguf-digest: {}", error_line(&e));
            return Ok(EXIT_ERROR);
        }
    };
    if args.json {
        print_json(&d.to_json())?;
    } else {
        print_text(&d.text())?;
    }
    Ok(if d.labels_equal() { EXIT_OK } else { EXIT_MISMATCH })
}
