//! `statement` and `verify`: flags, then the library's provenance module,
//! then printing (docs/adr/0017-provenance.md).

use std::io::{self, Write};
use std::path::PathBuf;

use gguf_digest::check::{self, CheckOptions, Line};
use gguf_digest::output::{JsonWriter, error_line, quote_name};
use gguf_digest::provenance::keys::PublicKey;
use gguf_digest::provenance::statement;
use gguf_digest::provenance::verify;
use gguf_digest::{BatchOptions, ErrorKind, NamedModels, digest_paths, schedule_all};

use super::inspect_diff::ReadArgs;
use super::{EXIT_ERROR, EXIT_MISMATCH, EXIT_OK};

/// Flags of `gguf-digest statement`.
#[derive(clap::Args, Debug)]
#[command(after_help = "Prints an in-toto Statement v1 whose subjects carry the models' labels as sha256 \
                        digests (schema of the predicate: docs/statement-predicate.schema.json).\n\
                        Exit status: 0 printed, 2 a model could not be labelled (nothing is printed).")]
pub struct StatementArgs {
    /// The models, named in the statement as given (keep them relative to
    /// where the statement will be verified; later shards named with their
    /// first shard are covered by its subject).
    #[arg(value_name = "MODEL", required = true)]
    models: Vec<PathBuf>,

    /// Also put every model's KV and tensor leaves (its --json entry) in the predicate.
    #[arg(long)]
    leaves: bool,

    #[command(flatten)]
    pub(super) read: ReadArgs,
}

/// Flags of `gguf-digest verify`.
#[derive(clap::Args, Debug)]
#[command(after_help = "Exit status: 0 every subject matched, 1 a subject did not match or could not be \
                        read, or a signature did not verify, 2 the statement could not be read or was \
                        refused (another predicate type, a subject leaving the root).")]
pub struct VerifyArgs {
    /// A statement, a DSSE envelope, or a Sigstore bundle holding one.
    #[arg(value_name = "FILE")]
    file: PathBuf,

    /// Look for subjects under DIR (default: the statement's directory).
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,

    /// Check the DSSE signature with this public key (PEM: Ed25519 or ECDSA
    /// P-256) before trusting any subject; may be given more than once.
    #[arg(long, value_name = "PUBKEY")]
    key: Vec<PathBuf>,

    /// Don't print OK for each verified subject.
    #[arg(long, overrides_with = "status")]
    quiet: bool,

    /// Print nothing; the exit status tells.
    #[arg(long, overrides_with = "quiet")]
    status: bool,

    #[command(flatten)]
    pub(super) read: ReadArgs,
}

/// Runs `statement`; returns the exit status.
pub fn run_statement(args: &StatementArgs, opts: &BatchOptions, pool: &rayon::ThreadPool) -> io::Result<u8> {
    let options = args.read.options(opts);
    // `statement *.gguf`: one subject per shard set, as the labelling does.
    let named = NamedModels::new(&args.models, &options.open);
    let models = named.paths();
    let mut done = Vec::with_capacity(models.len());
    let mut failed = false;
    for r in schedule_all(models, &options, pool, &|p, o| named.open(p, o)) {
        match r {
            Ok(m) => done.push(m),
            Err(e) => {
                eprintln!("gguf-digest: {}", error_line(&e));
                failed = true;
            }
        }
    }
    // Every model or no statement.
    if failed {
        return Ok(EXIT_ERROR);
    }
    let labelled: Vec<statement::Subject<'_>> =
        done.iter().zip(models).map(|((m, d), p)| (p.as_path(), m.as_ref(), d)).collect();
    // Written as it is made: with --leaves every tensor of every model.
    let mut out = io::BufWriter::new(io::stdout().lock());
    statement::write_statement(&mut JsonWriter::pretty(&mut out), &labelled, args.leaves)?;
    out.write_all(b"\n")?;
    out.flush()?;
    Ok(EXIT_OK)
}

/// Runs `verify`; returns the exit status.
pub fn run_verify(args: &VerifyArgs, opts: &BatchOptions, pool: &rayon::ThreadPool) -> io::Result<u8> {
    let name = quote_name(args.file.as_os_str().as_encoded_bytes());
    let mut keys = Vec::with_capacity(args.key.len());
    for k in &args.key {
        match PublicKey::from_pem_file(k) {
            Ok(key) => keys.push(key),
            Err(e) => {
                eprintln!("gguf-digest: verify: {name}: {}", error_line(&e));
                return Ok(EXIT_ERROR);
            }
        }
    }
    // The signature first: not one subject is trusted (or opened) before.
    let claims = match verify::claims(&args.file, args.root.as_deref(), &keys) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("gguf-digest: verify: {name}: {}", e.detail());
            let failed_signature = matches!(e.kind(), ErrorKind::SignatureFailed(_));
            return Ok(if failed_signature { EXIT_MISMATCH } else { EXIT_ERROR });
        }
    };
    if !claims.signature_checked {
        // Every time, --status too: a pass without a signature must never
        // look like a signed pass.
        eprintln!("gguf-digest: verify: {name}: WARNING: no signature was checked (no --key given)");
    }
    let (subjects, located) = (&claims.subjects, &claims.paths);
    let lines: Vec<Line> = subjects
        .iter()
        .enumerate()
        .map(|(i, s)| Line::Entry {
            line_no: i.saturating_add(1),
            label: s.label.clone(),
            path: s.name.clone().into_bytes(),
        })
        .collect();
    let check_opts = CheckOptions { quiet: args.quiet, status: args.status, ..CheckOptions::default() };
    let batch = args.read.options(opts);
    let label = |_: &[PathBuf], emit: &mut dyn FnMut(usize, gguf_digest::Result<String>)| {
        digest_paths(located, &batch, pool, |i, r| emit(i, r.map(|(_, d)| d.label())));
    };
    let stdout = io::stdout();
    let summary = check::verify(&lines, &name, &check_opts, label, &mut stdout.lock(), &mut io::stderr().lock())?;
    stdout.lock().flush()?;
    Ok(if summary.passed(&check_opts) { EXIT_OK } else { EXIT_MISMATCH })
}
