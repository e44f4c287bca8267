//! `statement` and `verify`: flags, then the library's provenance module,
//! then printing (docs/adr/0017-provenance.md).

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use gguf_digest::check::{self, CheckOptions, Line};
use gguf_digest::output::{error_line, quote_name};
use gguf_digest::provenance::envelope::{self, Signed};
use gguf_digest::provenance::keys::PublicKey;
use gguf_digest::provenance::statement::{Entry, statement};
use gguf_digest::provenance::{MAX_STATEMENT, subjects};
use gguf_digest::{AnyModel, BatchOptions, Digest, digest_paths};

use crate::inspect_diff::{ReadArgs, print_json};
use crate::{EXIT_ERROR, EXIT_MISMATCH, EXIT_OK};

/// Flags of `gguf-digest statement`.
#[derive(clap::Args, Debug)]
#[command(after_help = "Prints an in-toto Statement v1 whose subjects carry the models' labels as sha256 \
                        digests (schema of the predicate: docs/statement-predicate.schema.json).\n\
                        Exit status: 0 printed, 2 a model could not be labelled (nothing is printed).")]
pub struct StatementArgs {
    /// The models, named in the statement as given (keep them relative to
    /// where the statement will be verified).
    #[arg(value_name = "MODEL", required = true)]
    models: Vec<PathBuf>,

    /// Also put every model's KV and tensor leaves (its --json entry) in the predicate.
    #[arg(long)]
    leaves: bool,

    #[command(flatten)]
    read: ReadArgs,
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
    read: ReadArgs,
}

/// Runs `statement`; returns the exit status.
pub fn run_statement(args: &StatementArgs, opts: &BatchOptions, pool: &rayon::ThreadPool) -> io::Result<u8> {
    let own_pool = args.read.pool()?;
    let pool = own_pool.as_ref().unwrap_or(pool);
    let mut done: Vec<Option<(AnyModel, Digest)>> = (0..args.models.len()).map(|_| None).collect();
    let mut failed = false;
    digest_paths(&args.models, &args.read.options(opts), pool, |i, r| match r {
        Ok(m) => {
            if let Some(slot) = done.get_mut(i) {
                *slot = Some(m);
            }
        }
        Err(e) => {
            eprintln!("gguf-digest: {}", error_line(&e));
            failed = true;
        }
    });
    if failed {
        return Ok(EXIT_ERROR);
    }
    let names: Vec<String> = args.models.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let entries: Vec<Entry<'_>> = done
        .iter()
        .zip(&names)
        .filter_map(|(d, name)| d.as_ref().map(|(m, d)| Entry { name, model: m.as_ref(), digest: d }))
        .collect();
    print_json(&statement(&entries, args.leaves))?;
    Ok(EXIT_OK)
}

/// Reads at most [`MAX_STATEMENT`] bytes of `path`.
fn read_limited(path: &Path) -> io::Result<Vec<u8>> {
    let file = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    file.take(MAX_STATEMENT.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_STATEMENT {
        return Err(io::Error::other(format!("larger than {MAX_STATEMENT} bytes")));
    }
    Ok(bytes)
}

/// Runs `verify`; returns the exit status.
pub fn run_verify(args: &VerifyArgs, opts: &BatchOptions, pool: &rayon::ThreadPool) -> io::Result<u8> {
    let own_pool = args.read.pool()?;
    let pool = own_pool.as_ref().unwrap_or(pool);
    let name = quote_name(args.file.as_os_str().as_encoded_bytes());
    let fail = |what: String, code: u8| {
        eprintln!("gguf-digest: verify: {name}: {what}");
        Ok(code)
    };
    let bytes = match read_limited(&args.file) {
        Ok(b) => b,
        Err(e) => return fail(gguf_digest::Error::from(e).detail(), EXIT_ERROR),
    };
    let signed = match envelope::read(&bytes) {
        Ok(s) => s,
        Err(e) => return fail(e.to_string(), EXIT_ERROR),
    };
    // The signature first: not one subject is trusted (or opened) before.
    if args.key.is_empty() {
        // Every time, --status too: a pass without a signature must never
        // look like a signed pass.
        eprintln!("gguf-digest: verify: {name}: WARNING: no signature was checked (no --key given)");
    } else {
        let mut keys = Vec::with_capacity(args.key.len());
        for k in &args.key {
            match PublicKey::from_pem_file(k) {
                Ok(key) => keys.push(key),
                Err(e) => return fail(error_line(&e), EXIT_ERROR),
            }
        }
        match &signed {
            Signed::Bare(_) => {
                return fail("signature: FAILED: a bare statement carries no signature".into(), EXIT_MISMATCH);
            }
            Signed::Dsse { payload_type, payload, signatures, .. } => {
                let pae = envelope::pae(payload_type, payload);
                let good = signatures.iter().any(|s| keys.iter().any(|k| k.verifies(&pae, &s.sig)));
                if !good {
                    let kinds: Vec<&str> = keys.iter().map(PublicKey::kind).collect();
                    let what = format!(
                        "signature: FAILED: none of its {} signatures verifies with the given key ({})",
                        signatures.len(),
                        kinds.join(", ")
                    );
                    return fail(what, EXIT_MISMATCH);
                }
            }
        }
    }
    let subjects = match subjects::read(signed.statement()) {
        Ok(s) => s,
        Err(e) => return fail(e.to_string(), EXIT_ERROR),
    };
    let root = match &args.root {
        Some(r) => r.clone(),
        None => args.file.parent().map(Path::to_path_buf).unwrap_or_default(),
    };
    let root = if root.as_os_str().is_empty() { PathBuf::from(".") } else { root };
    // Every subject is located before any is opened.
    let mut located = Vec::with_capacity(subjects.len());
    for s in &subjects {
        match subjects::locate(&root, &s.name) {
            Ok(p) => located.push(p),
            Err(e) => return fail(e.to_string(), EXIT_ERROR),
        }
    }
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
        digest_paths(&located, &batch, pool, |i, r| emit(i, r.map(|(_, d)| d.label())));
    };
    let stdout = io::stdout();
    let summary = check::verify(&lines, &name, &check_opts, label, &mut stdout.lock(), &mut io::stderr().lock())?;
    stdout.lock().flush()?;
    Ok(if summary.passed(&check_opts) { EXIT_OK } else { EXIT_MISMATCH })
}
