//! The `gguf-digest` command: parses flags, calls the library, prints.
//!
//! In the library, behind the `cli` feature (on by default; docs/adr/0022),
//! because two executables run it: the binary (`src/bin/gguf-digest/main.rs`)
//! and the `gguf-digest` command the Python wheel installs (its extension
//! calls [`main`]), so `pip install` gives the very same command. Without the
//! feature the library builds without `clap` and `indicatif`.

mod bom;
mod check;
mod docs;
mod inspect_diff;
mod oms;
mod progress;
mod provenance;
mod sign;

use std::ffi::OsString;
use std::io::{self, IsTerminal, Write};
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::sync::Arc;

use crate::cache::Cache;
use crate::output::{JsonWriter, begin_document, end_document, error_line, sums_line, write_error_json};
use crate::{
    AnyModel, BatchOptions, Digest, Labelled, MAX_THREADS, NamedModels, OpenOptions, ReadMode, digest_paths,
    expand_arguments, hashing_pool,
};
use clap::{Parser, Subcommand};
use progress::{Progress, digest_with_progress};

const EXAMPLES: &str = "\
Examples:
  gguf-digest model.gguf                     print the label of a model
  gguf-digest model-00001-of-00003.gguf      one label for a whole split model
  gguf-digest *.gguf > models.sums           labels of many models, sha256sum style
  gguf-digest -c models.sums                 verify them later (OK / FAILED per file)
  curl -L URL | gguf-digest                  standard input ('-', or no FILE), read once
  gguf-digest ollama:smollm2                 a model in the Ollama store
  gguf-digest hf:org/name@v1.0               a snapshot in the Hugging Face cache (never downloaded)
  gguf-digest --json model.gguf              every KV and tensor leaf, as JSON
  gguf-digest --skeleton model.gguf | sha256sum
                                             the label is the SHA-256 of the skeleton

Environment:
  OLLAMA_MODELS      the Ollama store for ollama:NAME (default: ~/.ollama/models)
  HF_HUB_CACHE       the Hugging Face cache for hf:ORG/NAME (default: $HF_HOME/hub,
                     else ~/.cache/huggingface/hub)
  RAYON_NUM_THREADS  hashing threads when -j is not given (default: one per core)

Exit status:
  0  every file labelled (with --check: every label matched)
  1  --check: a label did not match, a listed file could not be read,
     or the list held no (or, with --strict, a misformatted) line
  2  a file could not be labelled, a list could not be read, or bad usage";

/// One content-addressed label for every layout of a GGUF, safetensors, directory or Ollama model.
///
/// The label is the SHA-256 of the model's canonical skeleton: every metadata
/// value and every tensor, sorted, with strings, arrays and tensor data
/// replaced by their SHA-256. Tensor and key order, padding, byte order, GGUF
/// v2/v3 and the split into shards or blobs do not change it; any metadata
/// value or weight byte does.
#[derive(Parser, Debug)]
#[command(
    name = "gguf-digest",
    version,
    about,
    long_about,
    after_help = EXAMPLES,
    args_conflicts_with_subcommands = true,
    mut_arg("no_join", |a| a.help("Label a shard of a split model alone, as a model of its own")),
    mut_arg("no_mmap", |a| a.help("Read the file with pread instead of mapping it"))
)]
struct Args {
    /// Models: GGUF or safetensors files (for a split model, its first shard;
    /// later shards named with it are covered by its line),
    /// *.safetensors.index.json files, directories, ollama:NAME references
    /// to the store at $OLLAMA_MODELS, else ~/.ollama/models ('ollama:'
    /// alone: every model in it), hf:ORG/NAME[@REV] references to the
    /// Hugging Face cache ('hf:' alone: every snapshot a ref names), '-' for
    /// standard input (none: standard input, as sha256sum reads it); with
    /// --check, label lists to verify
    /// ('-' or none: standard input).
    #[arg(value_name = "FILE")]
    files: Vec<PathBuf>,

    /// Read labels from the FILEs and check them.
    #[arg(short = 'c', long)]
    check: bool,

    /// With --check: don't fail or report status for missing files.
    #[arg(long, requires = "check")]
    ignore_missing: bool,

    /// With --check: don't print OK for each successfully verified file.
    #[arg(long, requires = "check", overrides_with_all = ["status", "warn"])]
    quiet: bool,

    /// With --check: print nothing; the exit status tells.
    #[arg(long, requires = "check", overrides_with_all = ["quiet", "warn"])]
    status: bool,

    /// With --check: exit non-zero for improperly formatted lines.
    #[arg(long, requires = "check")]
    strict: bool,

    /// With --check: warn about improperly formatted lines.
    #[arg(short = 'w', long, requires = "check", overrides_with_all = ["quiet", "status"])]
    warn: bool,

    /// Print one JSON document with every file's label, KVs and tensors.
    #[arg(long, conflicts_with_all = ["check", "skeleton"])]
    json: bool,

    /// Write the raw skeleton bytes of one FILE to standard output.
    #[arg(long, conflicts_with = "check")]
    skeleton: bool,

    #[command(flatten)]
    read: ReadArgs,

    /// Ollama models: also check every weights blob against its digest and
    /// size; Hugging Face cache snapshots: every file against the name of
    /// the blob it links to (a store audit; the label is the same).
    // Shown between --no-mmap and -j, as before the reading flags were
    // shared: clap numbers the flags in the order they are declared
    // (--check 0, ... --no-mmap 9, -j 10) and breaks a tie by name. The
    // subcommands are declared after every flag, so adding one moves no
    // number here. The golden `--help` outputs pin it.
    #[arg(long, display_order = 9)]
    verify_blobs: bool,

    #[command(subcommand)]
    command: Option<Command>,
}

/// The reading and threading flags: the top level's and every
/// subcommand's, the same flags (the top-level ones cannot be combined
/// with a subcommand, so each subcommand takes them again). Their help is
/// worded for the subcommands; the top level words two of them for
/// labelling (`Args`' `mut_arg`).
#[derive(clap::Args, Debug)]
struct ReadArgs {
    /// Take a shard of a split model alone, as a model of its own.
    #[arg(long)]
    no_join: bool,

    /// Read metadata with pread instead of mapping the file.
    #[arg(long)]
    no_mmap: bool,

    /// Hash with at most N threads, N up to 1024 (default: RAYON_NUM_THREADS, else all cores).
    #[arg(short = 'j', long, value_name = "N", value_parser = threads_arg)]
    threads: Option<NonZeroUsize>,

    /// Take the digests of files unchanged since a run with --cache from the verified-leaf cache (also GGUF_DIGEST_CACHE=1).
    #[arg(long, overrides_with = "no_cache")]
    cache: bool,

    /// Read every byte, whatever GGUF_DIGEST_CACHE says.
    #[arg(long, overrides_with = "cache")]
    no_cache: bool,

    /// URL inputs: at most N range requests in flight at once, across every object.
    #[cfg(feature = "remote")]
    #[arg(long, value_name = "N", default_value_t = crate::remote::CONNECTIONS)]
    connections: usize,

    /// Read http:// URLs (bytes and credentials in the clear), and cloud services reached over plain HTTP.
    #[cfg(feature = "remote")]
    #[arg(long)]
    allow_http: bool,

    /// URL inputs: also trust the certificate authorities of this PEM file.
    #[cfg(feature = "remote")]
    #[arg(long, value_name = "FILE")]
    ca_file: Option<PathBuf>,
}

impl ReadArgs {
    /// The options these flags ask for, over `base`.
    fn options(&self, base: &BatchOptions) -> BatchOptions {
        let mut opts = base.clone();
        opts.open.join_shards &= !self.no_join;
        if self.no_mmap {
            opts.open.read_mode = ReadMode::Pread;
        }
        opts
    }
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Show what is in a model: header, type summary, KVs, tensors, warnings.
    Inspect(inspect_diff::InspectArgs),
    /// Compare two models leaf by leaf (exit 0 if their labels are equal, 1 if not).
    Diff(inspect_diff::DiffArgs),
    /// Print an in-toto statement whose subjects are the models and their labels.
    Statement(provenance::StatementArgs),
    /// Check the signature of a DSSE envelope or Sigstore bundle first (before
    /// any subject is opened), then relabel every subject it claims.
    Verify(provenance::VerifyArgs),
    /// Sign the models' statement (or a directory, --format oms) into a Sigstore bundle.
    Sign(sign::SignArgs),
    /// Write a CycloneDX 1.6 AI-BOM: each model, its label, metadata and files' SHA-256.
    Bom(bom::BomArgs),
    /// Print a shell completion script (bash, zsh, fish, powershell, elvish).
    Completions(docs::CompletionsArgs),
    /// Print the man page (roff): `gguf-digest man | man -l -`.
    Man(docs::ManArgs),
}

impl Command {
    /// The subcommand's reading and threading flags (`None`: it reads no model).
    fn read(&self) -> Option<&ReadArgs> {
        match self {
            Command::Inspect(a) => Some(&a.read),
            Command::Diff(a) => Some(&a.read),
            Command::Statement(a) => Some(&a.read),
            Command::Verify(a) => Some(&a.read),
            Command::Sign(a) => Some(&a.read),
            Command::Bom(a) => Some(&a.read),
            Command::Completions(_) | Command::Man(_) => None,
        }
    }

    /// The models named on the command line (`verify`'s are in its
    /// statement, read later).
    #[cfg(feature = "remote")]
    fn models(&self) -> Vec<&PathBuf> {
        match self {
            Command::Inspect(a) => vec![&a.file],
            Command::Diff(a) => vec![&a.a, &a.b],
            Command::Statement(a) => a.models.iter().collect(),
            Command::Sign(a) => a.models.iter().collect(),
            Command::Bom(a) => a.models.iter().collect(),
            Command::Verify(_) | Command::Completions(_) | Command::Man(_) => Vec::new(),
        }
    }
}

/// Whether the command line names a model by URL: the subcommand's
/// models, else the top level's arguments.
#[cfg(feature = "remote")]
fn names_a_url(args: &Args) -> bool {
    let given = args.command.as_ref().map_or_else(|| args.files.iter().collect(), Command::models);
    given.into_iter().any(|f| is_url(f))
}

// Exit statuses (also in --help and README.md).
/// Exit status: every file labelled (with `--check`: every label matched).
pub const EXIT_OK: u8 = 0;
/// Exit status: `--check`, `verify` or `diff` found a difference.
pub const EXIT_MISMATCH: u8 = 1;
/// Exit status: something could not be labelled or read, or bad usage.
pub const EXIT_ERROR: u8 = 2;

/// Runs the command with these arguments (the program's name first);
/// returns the exit status.
pub fn main(argv: impl IntoIterator<Item = OsString>) -> u8 {
    crate::raise_open_file_limit();
    // A URL's credentials and query never reach anything that prints
    // (docs/adr/0044): the opener alone keeps them.
    #[cfg(feature = "remote")]
    let argv: Vec<OsString> = argv.into_iter().map(|a| crate::remote::hide_credentials(&a)).collect();
    let args = match Args::try_parse_from(argv) {
        Ok(a) => a,
        Err(e) => {
            // --help and --version print to stdout and exit 0; usage errors
            // print to stderr and exit 2, as clap's own `parse` does.
            let _ = e.print();
            return u8::try_from(e.exit_code()).unwrap_or(EXIT_ERROR);
        }
    };
    match run(&args) {
        Ok(code) => code,
        // A closed pipe (e.g. `| head`) is the reader's choice, not an error to report.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => EXIT_ERROR,
        Err(e) => {
            eprintln!("gguf-digest: {e}");
            EXIT_ERROR
        }
    }
}

/// `-j N`: a thread count from 1 to [`MAX_THREADS`].
fn threads_arg(arg: &str) -> Result<NonZeroUsize, String> {
    let n: usize = arg.parse().map_err(|e: std::num::ParseIntError| e.to_string())?;
    let n = NonZeroUsize::new(n).ok_or("at least 1 hashing thread (leave -j out to use one per core)")?;
    if n.get() > MAX_THREADS {
        return Err(format!("at most {MAX_THREADS} hashing threads"));
    }
    Ok(n)
}

/// The verified-leaf cache this run asked for (docs/adr/0033): `--cache`,
/// or `GGUF_DIGEST_CACHE=1` unless `--no-cache` (or the command is `sign`,
/// which takes it only from the flag). Its warnings are printed.
fn run_cache(args: &Args, read: &ReadArgs) -> Option<Arc<Cache>> {
    let sign = matches!(args.command, Some(Command::Sign(_)));
    let wanted = read.cache || (!read.no_cache && !sign && crate::cache::enabled_by_env());
    if !wanted {
        return None;
    }
    let Some(cache) = Cache::from_env() else {
        eprintln!(
            "gguf-digest: warning: no folder for the cache (set {} or HOME); every byte is read",
            crate::cache::ENV_DIR
        );
        return None;
    };
    print_cache_warnings(&cache);
    Some(Arc::new(cache))
}

/// For labelling, `--check` and `verify` with the cache on: how many of a
/// model's files were taken from the cache rather than read, on standard
/// error (the sums and verdict lines stay sha256sum's). Nothing with the
/// cache off.
pub(crate) fn note_cache_use(path: &std::path::Path, model: &dyn crate::Labelled) {
    let used: Vec<bool> = model.sources().iter().filter_map(|s| s.bytes_from_cache()).collect();
    if used.is_empty() {
        return;
    }
    let cached = used.iter().filter(|&&c| c).count();
    eprintln!(
        "gguf-digest: cache: {}: {cached} of {} files taken from the cache, {} read",
        crate::output::quote_name(path.as_os_str().as_encoded_bytes()),
        used.len(),
        used.len().saturating_sub(cached)
    );
}

/// Whether `arg` spells a URL (`s3://`, `https://`, ...): a model's name
/// only, never a file the command reads itself (a list, a statement, a key).
pub(crate) fn is_url(arg: &std::path::Path) -> bool {
    matches!(crate::Input::by_spelling(arg), Some(crate::Input::Url(_)))
}

fn print_cache_warnings(cache: &Cache) {
    for w in cache.take_warnings() {
        eprintln!("gguf-digest: warning: cache: {}", crate::text::defang(&w));
    }
}

fn run(args: &Args) -> io::Result<u8> {
    // The subcommand's reading flags when there is one (the top-level ones
    // cannot be combined with a subcommand): one pool, of its -j.
    match &args.command {
        Some(Command::Completions(a)) => return docs::run_completions(a),
        Some(Command::Man(a)) => return docs::run_man(a),
        _ => {}
    }
    let read = args.command.as_ref().and_then(Command::read).unwrap_or(&args.read);
    #[cfg(feature = "remote")]
    crate::remote::register(crate::remote::RemoteOptions {
        connections: read.connections.max(1),
        allow_http: read.allow_http,
        ca_file: read.ca_file.clone(),
        ..Default::default()
    })
    .map_err(io::Error::other)?;
    let threads = read.threads.map_or(0, NonZeroUsize::get);
    // Jobs over URLs mostly wait on the network: without -j, as many as
    // requests may be in flight, so that --connections is what bounds them
    // (docs/adr/0044). The pieces each holds keep memory bounded.
    #[cfg(feature = "remote")]
    let threads = match threads {
        0 if names_a_url(args) => read.connections.clamp(1, crate::MAX_THREADS),
        n => n,
    };
    let pool = hashing_pool(threads).map_err(io::Error::other)?;
    let base = OpenOptions { verify_blobs: args.verify_blobs, ..OpenOptions::default() };
    let cache = run_cache(args, read);
    let opts = read.options(&BatchOptions { open: base, progress: None, cancel: None, cache: cache.clone() });
    let code = run_command(args, &opts, &pool);
    // What was learnt is kept whatever the verdict: every stored leaf is of
    // a file checked unchanged.
    if let Some(cache) = cache {
        cache.persist();
        print_cache_warnings(&cache);
    }
    code
}

fn run_command(args: &Args, opts: &BatchOptions, pool: &rayon::ThreadPool) -> io::Result<u8> {
    match &args.command {
        Some(Command::Inspect(a)) => return inspect_diff::run_inspect(a, opts, pool),
        Some(Command::Diff(a)) => return inspect_diff::run_diff(a, opts, pool),
        Some(Command::Statement(a)) => return provenance::run_statement(a, opts, pool),
        Some(Command::Verify(a)) => return provenance::run_verify(a, opts, pool),
        Some(Command::Sign(a)) => return sign::run_sign(a, opts, pool),
        Some(Command::Bom(a)) => return bom::run_bom(a, opts, pool),
        Some(Command::Completions(_) | Command::Man(_)) | None => {}
    }
    if args.check {
        return check::run_check(args, opts, pool);
    }
    // No FILE: standard input, as sha256sum reads it.
    let given = if args.files.is_empty() { vec![PathBuf::from("-")] } else { args.files.clone() };
    if args.skeleton {
        return run_skeleton(&given, opts, pool);
    }
    let (named, strays) = match expand_arguments(&given) {
        // `*.gguf` names every shard of a set: one line for the set.
        Ok((f, strays)) => (NamedModels::new(&f, &opts.open), strays),
        Err(e) => {
            eprintln!("gguf-digest: {}", error_line(&e));
            return Ok(EXIT_ERROR);
        }
    };
    let files = named.paths();
    let stdout = io::stdout();
    let mut out = stdout.lock();
    // A store's entries that are no manifest: reported first, every model
    // still labelled, exit 2 at the end.
    let mut failed = !strays.is_empty();
    // The document is written an entry at a time, each as its model is
    // labelled: never whole in memory (a model may have a million tensors).
    let mut json_sink = io::BufWriter::new(stdout.lock());
    let mut json = args.json.then(|| JsonWriter::pretty(&mut json_sink));
    let mut io_result = json.as_mut().map_or(Ok(()), |w| begin_document(w));
    for e in &strays {
        eprintln!("gguf-digest: {}", error_line(e));
        if let (Some(w), true) = (json.as_mut(), io_result.is_ok()) {
            io_result = write_error_json(w, e.path().unwrap_or(std::path::Path::new("")), e);
        }
    }
    let report = |i: usize, r: crate::Result<(AnyModel, Digest)>| {
        let Some(path) = files.get(i) else { return };
        if let Ok((m, _)) = &r {
            for w in m.warnings() {
                eprintln!(
                    "gguf-digest: warning: {}: {w}",
                    crate::output::quote_name(path.as_os_str().as_encoded_bytes())
                );
            }
        }
        // With the cache on, how many files were read, unless --json says it per file.
        if let (Ok((model, _)), None) = (&r, json.as_ref()) {
            note_cache_use(path, model.labelled());
        }
        let step = match (r, json.as_mut()) {
            (Ok((model, digest)), Some(w)) => io_result.is_ok().then(|| model.write_json(w, path, &digest)),
            (Ok((_, digest)), None) => io_result.is_ok().then(|| out.write_all(&sums_line(&digest.label(), path))),
            (Err(e), w) => {
                failed = true;
                eprintln!("gguf-digest: {}", error_line(&e));
                w.filter(|_| io_result.is_ok()).map(|w| write_error_json(w, path, &e))
            }
        };
        if let Some(step) = step {
            io_result = step;
        }
    };
    digest_with_progress(args, files, opts, pool, &|p, o| named.open(p, o), report);
    io_result?;
    if let Some(mut w) = json {
        end_document(&mut w)?;
        json_sink.write_all(b"\n")?;
        json_sink.flush()?;
    }
    out.flush()?;
    Ok(if failed { EXIT_ERROR } else { EXIT_OK })
}

fn run_skeleton(files: &[PathBuf], opts: &BatchOptions, pool: &rayon::ThreadPool) -> io::Result<u8> {
    if files.len() != 1 {
        eprintln!("gguf-digest: --skeleton takes exactly one FILE");
        return Ok(EXIT_ERROR);
    }
    let stdout = io::stdout();
    if stdout.is_terminal() {
        eprintln!("gguf-digest: refusing to write the binary skeleton to a terminal; redirect or pipe it");
        return Ok(EXIT_ERROR);
    }
    let mut result = None;
    digest_paths(files, opts, pool, |_, r| result = Some(r));
    // Written a record at a time, as the label hashed it.
    let written = result.map(|r| {
        r.and_then(|(model, digest)| {
            let mut out = io::BufWriter::new(stdout.lock());
            let mut io_result = Ok(());
            model.write_skeleton(digest.tensor_sha256(), &mut |piece| {
                if io_result.is_ok() {
                    io_result = out.write_all(piece);
                }
            })?;
            Ok(io_result.and_then(|()| out.flush()))
        })
    });
    match written {
        Some(Ok(io_result)) => {
            io_result?;
            Ok(EXIT_OK)
        }
        Some(Err(e)) => {
            eprintln!("gguf-digest: {}", error_line(&e));
            Ok(EXIT_ERROR)
        }
        None => Ok(EXIT_ERROR),
    }
}

#[cfg(all(test, feature = "remote"))]
mod tests {
    use super::*;

    #[test]
    fn a_url_named_by_any_subcommand_asks_for_threads_per_connection() {
        let parsed = |argv: &[&str]| Args::try_parse_from([&["gguf-digest"][..], argv].concat()).unwrap();
        for argv in [
            &["s3://b/m.gguf"][..],
            &["inspect", "https://h/m.gguf"],
            &["diff", "m.gguf", "gs://b/m.gguf"],
            &["statement", "m.gguf", "az://c/m.gguf"],
            &["sign", "--key", "k.pem", "https://h/m.gguf"],
            &["bom", "https://h/d/"],
        ] {
            assert!(names_a_url(&parsed(argv)), "{argv:?}");
        }
        for argv in
            [&["m.gguf"][..], &["inspect", "m.gguf"], &["bom", "hf:org/name"], &["verify", "--no-signature", "s.json"]]
        {
            assert!(!names_a_url(&parsed(argv)), "{argv:?}");
        }
    }
}
