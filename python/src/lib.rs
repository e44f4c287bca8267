//! `gguf_digest._native`: the library for Python, and the command itself.
//!
//! Thin on purpose: every rule (what a path names, how models are
//! scheduled, `--check`'s parsing, statements, signatures) is the library's;
//! this file turns Python arguments into library calls and library results
//! into Python values. The typed, documented API is `gguf_digest/__init__.py`
//! over these functions (stubs: `gguf_digest/_native.pyi`).
//!
//! Two rules hold for every function:
//! - the GIL is released while models are read and hashed, and a pending
//!   `KeyboardInterrupt` cancels the run ([`run`]);
//! - nothing panics into Python: a library error becomes `gguf_digest.Error`
//!   with `argument`, `path`, `offset` and `subject`, and a panic (a bug) is caught and
//!   raised as one too.

#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use gguf_digest::check::{
    CheckOptions, CheckSummary, Checked, Line, MISFORMATTED_LINE, NO_ENTRIES, Verdict, read_list,
    verify_list as check_list,
};
use gguf_digest::cli;
use gguf_digest::provenance::{ProvenanceErrorKind, PublicKey};
use gguf_digest::{AnyModel, BatchOptions, Digest, Labelled, OpenOptions, ReadMode, expand_arguments};
// Beyond the library's front (docs/adr/0042-public-front.md): the layers'
// own items the wheel needs to mirror the command.
use gguf_digest_core::output::{self, quote_name};
use gguf_digest_core::schedule::schedule_all;
use gguf_digest_formats::input::{Named, NamedModels};
use gguf_digest_provenance::provenance::statement as statements;
use gguf_digest_provenance::provenance::subjects;
use gguf_digest_provenance::provenance::verify;
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

mod remote;
mod sums;
use remote::UrlOptions;
use sums::{Row, relabel};

create_exception!(
    gguf_digest,
    Error,
    PyException,
    "A model could not be labelled, a list or statement could not be read, or a run was refused.\n\n\
     Attributes: argument (the path or reference given that led to the error: a directory, an index, \
     a first shard, an 'ollama:' reference, or the file itself; or None), path (the file, or None), \
     offset (the byte offset in it, or None), subject (the key or tensor concerned, as 'key \
     'general.name'' or 'tensor 'blk.0.attn_q.weight'', or None)."
);

create_exception!(
    gguf_digest,
    SignatureError,
    Error,
    "A signed statement none of whose signatures verifies with the keys given (the command's exit 1)."
);

/// How models are read, as the command's flags say it.
#[derive(Clone)]
struct Read {
    threads: Option<usize>,
    join_shards: bool,
    mmap: bool,
    verify_blobs: bool,
    /// The verified-leaf cache: on, off, or `None` for `GGUF_DIGEST_CACHE`.
    cache: Option<bool>,
    /// How URL inputs are read.
    urls: UrlOptions,
}

impl Read {
    fn batch(&self) -> BatchOptions {
        BatchOptions {
            open: OpenOptions {
                join_shards: self.join_shards,
                read_mode: if self.mmap { ReadMode::Mmap } else { ReadMode::Pread },
                verify_blobs: self.verify_blobs,
                ..OpenOptions::default()
            },
            ..BatchOptions::default()
        }
    }
}

/// `gguf_digest.Error` for a library error, its place filled from the
/// argument (`path`) when the error names no file or argument.
fn error(py: Python<'_>, e: &gguf_digest::Error, path: Option<&Path>) -> PyErr {
    // The remote opener's refusal of `http://` names the command's flag;
    // here it is a keyword.
    let message = e.to_string().replace("only with --allow-http", "only with allow_http=True");
    let err = match e.kind().of::<ProvenanceErrorKind>() {
        Some(ProvenanceErrorKind::SignatureFailed(_)) => SignatureError::new_err(message),
        _ => Error::new_err(message),
    };
    let value = err.value(py);
    let given = || path.map(|p| p.as_os_str().to_owned());
    let file = e.path().map(|p| p.as_os_str().to_owned()).or_else(given);
    let argument = e.argument().map(|p| p.as_os_str().to_owned()).or_else(given);
    // Setting an attribute on a fresh exception object cannot fail.
    let _ = value.setattr("argument", argument);
    let _ = value.setattr("path", file);
    let _ = value.setattr("offset", e.offset());
    let _ = value.setattr("subject", e.subject().map(ToString::to_string));
    err
}

/// `gguf_digest.Error` with a message and a file only.
fn plain_error(py: Python<'_>, message: String, path: Option<&Path>) -> PyErr {
    let err = Error::new_err(message);
    let _ = err.value(py).setattr("argument", path.map(|p| p.as_os_str().to_owned()));
    let _ = err.value(py).setattr("path", path.map(|p| p.as_os_str().to_owned()));
    err
}

/// Runs `work` on a thread of its own with the GIL released, waking every
/// tenth of a second to let Python's signal handlers run: a
/// `KeyboardInterrupt` sets `cancel` (the library stops at its next
/// piece), waits for the thread to stop, and is raised. A panic in `work`
/// is raised as `gguf_digest.Error`.
fn run<T: Send>(py: Python<'_>, cancel: &AtomicBool, work: impl FnOnce() -> T + Send) -> PyResult<T> {
    let caller = std::thread::current();
    // Set before the wake-up, so the waiting thread never sleeps a whole
    // period more (`is_finished` turns true only once the thread has
    // exited, after the wake-up: that cost 100 ms on every other call).
    let done = AtomicBool::new(false);
    let (joined, interrupt) = std::thread::scope(|s| {
        let worker = s.spawn(|| {
            let r = catch_unwind(AssertUnwindSafe(work));
            done.store(true, Ordering::Release);
            caller.unpark();
            r
        });
        let mut interrupt = None;
        while !done.load(Ordering::Acquire) {
            py.detach(|| std::thread::park_timeout(Duration::from_millis(100)));
            if interrupt.is_none() {
                if let Err(e) = py.check_signals() {
                    cancel.store(true, Ordering::Relaxed);
                    interrupt = Some(e);
                }
            }
        }
        (worker.join(), interrupt)
    });
    if let Some(e) = interrupt {
        return Err(e);
    }
    match joined {
        Ok(Ok(t)) => Ok(t),
        _ => Err(plain_error(py, "internal error: a hashing thread panicked (please report it)".into(), None)),
    }
}

/// Runs `work` as [`run`] does (no GIL, a panic raised as an error, Ctrl-C
/// raised once it ends), for work no cancel flag reaches: opening files,
/// reading lists, keys and statements, building JSON.
fn detached<T: Send>(py: Python<'_>, work: impl FnOnce() -> T + Send) -> PyResult<T> {
    run(py, &AtomicBool::new(false), work)
}

/// Labels every path together (one pool, all tensors of all files
/// scheduled at once, as the command does); one result per path, in order.
/// `via`: how each path is opened.
fn label_all<T: Send>(
    py: Python<'_>,
    paths: &[PathBuf],
    read: Read,
    via: Via<'_>,
    keep: impl Fn(AnyModel, Digest) -> T + Send + Sync,
) -> PyResult<Vec<gguf_digest::Result<T>>> {
    let cancel = Arc::new(AtomicBool::new(false));
    let mut opts = read.batch();
    opts.cancel = Some(Arc::clone(&cancel));
    let threads = read.threads.or_else(|| remote::default_threads(&read.urls, paths));
    let pool = gguf_digest::hashing_pool(threads.unwrap_or(0))
        .map_err(|e| plain_error(py, format!("cannot start hashing threads: {e}"), None))?;
    if read.cache.unwrap_or_else(gguf_digest::cache::enabled_by_env) {
        opts.cache = detached(py, gguf_digest::cache::Cache::from_env)?.map(Arc::new);
        cache_warnings(py, opts.cache.as_deref())?;
    }
    let results = run(py, &cancel, || {
        let urls = &read.urls;
        let all = schedule_all(paths, &opts, &pool, &|p, o| remote::with(urls, || open_in_python(p, o, via)));
        all.into_iter().map(|r| r.map(|(m, d)| keep(m, d))).collect()
    })?;
    if let Some(cache) = opts.cache.as_deref() {
        detached(py, || cache.persist())?;
        cache_warnings(py, Some(cache))?;
    }
    Ok(results)
}

/// The cache's warnings (a store ignored, a write that failed) as Python
/// `RuntimeWarning`s.
fn cache_warnings(py: Python<'_>, cache: Option<&gguf_digest::cache::Cache>) -> PyResult<()> {
    for w in cache.map(gguf_digest::cache::Cache::take_warnings).unwrap_or_default() {
        let category = py.get_type::<pyo3::exceptions::PyRuntimeWarning>();
        PyErr::warn(py, &category, &std::ffi::CString::new(format!("gguf-digest cache: {w}")).unwrap_or_default(), 1)?;
    }
    Ok(())
}

/// Opens a model as the command does, except two names that are no one
/// model in Python: `-` (the library would read the interpreter's standard
/// input, where a blocked read could not be interrupted; the wheel's
/// `gguf-digest` command reads `-` as the binary does), and `ollama:` or
/// `hf:` alone (every model of the store or cache; `ollama_models()` lists
/// the store's).
/// Through `via`.
fn open_in_python(path: &Path, opts: &OpenOptions, via: Via<'_>) -> gguf_digest::Result<AnyModel> {
    let why = match path.as_os_str().as_encoded_bytes() {
        b"-" => "standard input is not read by the Python API; pass a file (the gguf-digest command reads '-')",
        b"ollama:" => "ollama: alone names every model of the store; pass one ollama:NAME (ollama_models() lists them)",
        b"hf:" => "hf: alone names every snapshot of the Hugging Face cache; pass one hf:ORG/NAME[@REV]",
        _ => {
            return match via {
                Via::Arguments => gguf_digest::open_model(path, opts),
                Via::Named(n) => n.open(path, opts),
                Via::Subjects(c) => c.open(path, opts),
            };
        }
    };
    Err(gguf_digest::Error::new(gguf_digest::ErrorKind::Io(std::io::Error::other(why))))
}

/// How [`label_all`] opens its paths.
#[derive(Clone, Copy)]
enum Via<'a> {
    /// As the command opens its arguments.
    Arguments,
    /// The statement's models, whose first shards come opened.
    Named(&'a NamedModels),
    /// A statement's subjects, beneath its root (`verify`).
    Subjects(&'a verify::Claims),
}

/// Every result, or the first error (in argument order) raised.
fn all_or_first_error<T>(py: Python<'_>, paths: &[PathBuf], results: Vec<gguf_digest::Result<T>>) -> PyResult<Vec<T>> {
    results.into_iter().zip(paths).map(|(r, p)| r.map_err(|e| error(py, &e, Some(p.as_path())))).collect()
}

/// The labels of `paths`, in order.
#[pyfunction]
#[pyo3(signature = (paths, threads=None, join_shards=true, mmap=true, verify_blobs=false, cache=None, allow_http=false, connections=None, ca_file=None))]
#[allow(clippy::too_many_arguments)]
fn labels(
    py: Python<'_>,
    paths: Vec<PathBuf>,
    threads: Option<usize>,
    join_shards: bool,
    mmap: bool,
    verify_blobs: bool,
    cache: Option<bool>,
    allow_http: bool,
    connections: Option<usize>,
    ca_file: Option<PathBuf>,
) -> PyResult<Vec<String>> {
    let urls = UrlOptions { allow_http, connections, ca_file };
    let read = Read { threads, join_shards, mmap, verify_blobs, cache, urls };
    let paths: Vec<PathBuf> = paths.into_iter().map(remote::hidden).collect();
    // One label per path, each model read once: a shard of an indexed set
    // named beside its first shard takes the first's label (alone, it names
    // that same model); a later shard that alone is refused is refused here
    // too, even beside its first, so it is opened on its own.
    let named = detached(py, || remote::with(&read.urls, || NamedModels::new(&paths, &read.batch().open)))?;
    let mut todo = named.paths().to_vec();
    let mut from = Vec::with_capacity(paths.len());
    for (path, how) in paths.iter().zip(named.arguments()) {
        from.push(match *how {
            Named::Line(n) | Named::SameModel(n) => n,
            Named::LaterShard(_) => {
                todo.push(path.clone());
                todo.len().saturating_sub(1)
            }
        });
    }
    let results = label_all(py, &todo, read.clone(), Via::Named(&named), |_, d| d.label())?;
    // The first error in argument order, named by the path that was read.
    from.into_iter()
        .map(|n| match results.get(n) {
            Some(Ok(label)) => Ok(label.clone()),
            Some(Err(e)) => Err(error(py, e, todo.get(n).map(PathBuf::as_path))),
            None => Err(plain_error(py, "a path was not labelled".into(), None)),
        })
        .collect()
}

/// A labelled model: (format, contract, label, JSON entry, skeleton, files,
/// GGUF string values in the entry's KV order).
type Opened = (&'static str, &'static str, String, String, Py<PyBytes>, Vec<OsString>, Vec<Option<Py<PyBytes>>>);

/// The longest GGUF string `open()` gives as a value (chat templates are
/// kilobytes); a longer one is bound by its `sha256` alone, so a hostile
/// file cannot make `open()` hold its whole size twice over.
const MAX_STRING_VALUE: u64 = 1 << 20;

/// Every GGUF STRING value up to [`MAX_STRING_VALUE`] bytes, in the order
/// of the model's KVs (its `--json` entry's); empty for other formats.
fn string_values(m: &AnyModel) -> gguf_digest::Result<Vec<Option<Vec<u8>>>> {
    let Some(g) = m.downcast_ref::<gguf_digest::gguf::Model>() else { return Ok(Vec::new()) };
    g.kvs().iter().map(|kv| g.string_bytes(kv, MAX_STRING_VALUE)).collect()
}

/// Opens and labels one model.
#[pyfunction]
#[pyo3(signature = (path, threads=None, join_shards=true, mmap=true, verify_blobs=false, cache=None, allow_http=false, connections=None, ca_file=None))]
#[allow(clippy::too_many_arguments)]
fn open_model(
    py: Python<'_>,
    path: PathBuf,
    threads: Option<usize>,
    join_shards: bool,
    mmap: bool,
    verify_blobs: bool,
    cache: Option<bool>,
    allow_http: bool,
    connections: Option<usize>,
    ca_file: Option<PathBuf>,
) -> PyResult<Opened> {
    let urls = UrlOptions { allow_http, connections, ca_file };
    let read = Read { threads, join_shards, mmap, verify_blobs, cache, urls };
    let paths = [remote::hidden(path)];
    // The JSON entry is built on the worker, without the GIL.
    let results = label_all(py, &paths, read, Via::Arguments, |m, d| {
        let (format, contract) = m.contract();
        let json = m.json_text(&paths[0], &d)?;
        let skeleton = m.skeleton(d.tensor_sha256())?;
        let files: Vec<OsString> = m.sources().iter().map(|s| s.path().as_os_str().to_owned()).collect();
        string_values(&m).map(|strings| (format, contract, json, d, skeleton, files, strings))
    })?;
    let results: Vec<_> = results.into_iter().map(|r| r.and_then(|x| x)).collect();
    let mut opened = all_or_first_error(py, &paths, results)?;
    match opened.pop() {
        Some((format, contract, json, d, skeleton, files, strings)) => {
            let strings = strings.iter().map(|s| s.as_ref().map(|b| PyBytes::new(py, b).unbind())).collect();
            Ok((format, contract, d.label(), json, PyBytes::new(py, &skeleton).unbind(), files, strings))
        }
        // One path, one result: cannot happen (the lint forbids an expect).
        None => Err(plain_error(py, "no model was opened".into(), paths.first().map(PathBuf::as_path))),
    }
}

/// The in-toto statement of `paths`, as `gguf-digest statement` prints it
/// (names relative to `root` when given).
#[pyfunction]
#[pyo3(signature = (paths, leaves=false, threads=None, root=None, cache=None, allow_http=false, connections=None, ca_file=None))]
#[allow(clippy::too_many_arguments)]
fn statement(
    py: Python<'_>,
    paths: Vec<PathBuf>,
    leaves: bool,
    threads: Option<usize>,
    root: Option<PathBuf>,
    cache: Option<bool>,
    allow_http: bool,
    connections: Option<usize>,
    ca_file: Option<PathBuf>,
) -> PyResult<String> {
    let urls = UrlOptions { allow_http, connections, ca_file };
    let read = Read { threads, join_shards: true, mmap: true, verify_blobs: false, cache, urls };
    let paths: Vec<PathBuf> = paths.into_iter().map(remote::hidden).collect();
    // As the command: a later shard named with its first is that subject's.
    let named = detached(py, || remote::with(&read.urls, || NamedModels::new(&paths, &read.batch().open)))?;
    let paths = named.paths();
    // As the command: no subject verify must refuse, checked before labelling.
    let names = paths
        .iter()
        .map(|p| {
            subjects::name_for(p, root.as_deref()).map(PathBuf::from).map_err(|e| error(py, &e, Some(p.as_path())))
        })
        .collect::<PyResult<Vec<_>>>()?;
    let results = label_all(py, paths, read, Via::Named(&named), |m, d| (m, d))?;
    let done = all_or_first_error(py, paths, results)?;
    // Every leaf of every model with --leaves: built without the GIL.
    let text = detached(py, || {
        let labelled: Vec<statements::Subject<'_>> =
            done.iter().zip(&names).map(|((m, d), n)| (n.as_path(), m.labelled(), d)).collect();
        statements::statement_text(&labelled, leaves)
    })?;
    text.map_err(|e| plain_error(py, e.to_string(), None))
}

/// Checks a statement's signature (with `keys`; none at all is refused
/// unless `no_signature`), locates its subjects under `root`, and relabels
/// them: (signature checked, one result per subject).
#[pyfunction]
#[pyo3(signature = (path, keys=Vec::new(), root=None, threads=None, no_signature=false, cache=None, allow_http=false, connections=None, ca_file=None))]
#[allow(clippy::too_many_arguments)]
fn verify_statement(
    py: Python<'_>,
    path: PathBuf,
    keys: Vec<PathBuf>,
    root: Option<PathBuf>,
    threads: Option<usize>,
    no_signature: bool,
    cache: Option<bool>,
    allow_http: bool,
    connections: Option<usize>,
    ca_file: Option<PathBuf>,
) -> PyResult<(bool, Vec<Row>)> {
    // Key files and the statement are read without the GIL: either may be a
    // FIFO or on a slow mount.
    let keys = detached(py, || {
        keys.iter().map(|k| PublicKey::from_pem_file(k).map_err(|e| (e, k.clone()))).collect::<Result<Vec<_>, _>>()
    })?;
    let keys = keys.map_err(|(e, k)| error(py, &e, Some(k.as_path())))?;
    let signature = if no_signature { verify::Signature::Unchecked } else { verify::Signature::Keys(&keys) };
    let claims = detached(py, || verify::claims(&path, root.as_deref(), signature))?
        .map_err(|e| error(py, &e, Some(path.as_path())))?;
    // Each subject a line of a list, read from where it was located.
    let lines: Vec<Line> = claims
        .subjects
        .iter()
        .enumerate()
        .map(|(i, s)| Line::Entry {
            line_no: i.saturating_add(1),
            label: s.label.clone(),
            path: s.name.clone().into_bytes(),
        })
        .collect();
    let read = Read {
        threads,
        join_shards: true,
        mmap: true,
        verify_blobs: false,
        cache,
        urls: UrlOptions { allow_http, connections, ca_file },
    };
    let (_, rows) = relabel(py, &lines, &CheckOptions::default(), read, Via::Subjects(&claims), Some(&claims.paths))?;
    Ok((claims.signature_checked, rows))
}

/// Every model in the Ollama store (`$OLLAMA_MODELS` or `~/.ollama/models`),
/// as `ollama:` references: what `gguf-digest ollama:` labels; and each
/// entry of the store that is no manifest, as the command reports it.
#[pyfunction]
fn ollama_models(py: Python<'_>) -> PyResult<(Vec<OsString>, Vec<String>)> {
    let all = detached(py, || expand_arguments(&[PathBuf::from("ollama:")]))?;
    let (models, strays) = all.map_err(|e| error(py, &e, None))?;
    let strays = strays.iter().map(output::error_line).collect();
    Ok((models.into_iter().map(PathBuf::into_os_string).collect(), strays))
}

/// `path` as results and errors show it: a URL without its credentials or
/// query (kept aside for the opener), any other path unchanged.
#[pyfunction]
fn shown(path: PathBuf) -> OsString {
    // A str back, not a pathlib path (which would fold `//` in a URL).
    remote::hidden(path).into_os_string()
}

/// Runs the `gguf-digest` command with `argv` (the program's name first;
/// arguments as bytes, as the OS passes them) and returns its exit status.
/// The GIL is released for the whole run; the caller restores Ctrl-C's
/// default action first, so that it stops the command as it stops the binary.
#[pyfunction]
fn main(py: Python<'_>, argv: Vec<Vec<u8>>) -> u8 {
    let argv: Vec<OsString> = argv.into_iter().map(OsString::from_vec).collect();
    py.detach(|| {
        catch_unwind(AssertUnwindSafe(|| cli::main(argv))).unwrap_or_else(|_| {
            eprintln!("gguf-digest: internal error (please report it)");
            cli::EXIT_ERROR
        })
    })
}

/// The module: the functions above and `Error`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let error_type = py.get_type::<Error>();
    for attribute in ["argument", "path", "offset", "subject"] {
        error_type.setattr(attribute, py.None())?;
    }
    m.add("Error", error_type)?;
    m.add("SignatureError", py.get_type::<SignatureError>())?;
    // As the command does at start: a model can be thousands of files (an
    // Ollama blob per tensor), held open at once.
    gguf_digest_core::source::raise_open_file_limit();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("MAX_THREADS", gguf_digest::MAX_THREADS)?;
    m.add_function(wrap_pyfunction!(labels, m)?)?;
    m.add_function(wrap_pyfunction!(open_model, m)?)?;
    m.add_function(wrap_pyfunction!(sums::check, m)?)?;
    m.add_function(wrap_pyfunction!(statement, m)?)?;
    m.add_function(wrap_pyfunction!(verify_statement, m)?)?;
    m.add_function(wrap_pyfunction!(ollama_models, m)?)?;
    m.add_function(wrap_pyfunction!(shown, m)?)?;
    m.add_function(wrap_pyfunction!(main, m)?)?;
    Ok(())
}
