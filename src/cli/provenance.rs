//! `statement` and `verify`: flags, then the library's provenance module,
//! then printing (docs/adr/0017-provenance.md).

use crate::provenance::ProvenanceErrorKind;
use std::io::{self, Write};
use std::path::PathBuf;

use crate::check::{CheckOptions, Line};
use crate::output::{JsonWriter, error_line, quote_name};
use crate::provenance::keys::PublicKey;
use crate::provenance::oms;
use crate::provenance::statement;
use crate::provenance::subjects;
use crate::provenance::verify;
use crate::{AnyModel, BatchOptions, Digest, NamedModels, schedule, schedule_all};

use super::{EXIT_ERROR, EXIT_MISMATCH, EXIT_OK, ReadArgs};

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
    pub(super) models: Vec<PathBuf>,

    /// Also put every model's KV and tensor leaves (its --json entry) in the predicate.
    #[arg(long)]
    leaves: bool,

    /// Name every subject relative to DIR, where `verify --root DIR` (or a
    /// statement saved in DIR) will look for it. Without it, names are the
    /// paths as given, and an absolute path, `..` or `-` is refused.
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,

    #[command(flatten)]
    pub(super) read: ReadArgs,
}

/// Flags of `gguf-digest verify`.
#[derive(clap::Args, Debug)]
#[command(after_help = "The signature is checked first (--key), before any subject is read; without a \
                        key, verify refuses unless --no-signature is given. Each subject's name is a \
                        path relative to --root DIR (default: the statement's directory); a name that \
                        is absolute, holds '..' or leads out of DIR through a link is refused before \
                        anything is opened.\n\
                        Exit status: 0 every subject matched, 1 a subject did not match or could not be \
                        read, or a signature did not verify, 2 the statement could not be read or was \
                        refused (no key, another predicate type, a subject leaving the root).")]
pub struct VerifyArgs {
    /// A statement, a DSSE envelope, or a Sigstore bundle holding one.
    #[arg(value_name = "FILE")]
    file: PathBuf,

    /// Look for subjects under DIR (default: the statement's directory). For an
    /// OpenSSF model signature, also a URL prefix ending in `/` or an oci:// ModelPack artifact.
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,

    /// Check the DSSE signature with this public key (PEM: Ed25519 or ECDSA
    /// P-256; an OpenSSF model signature: ECDSA P-256, P-384 or P-521)
    /// before trusting any subject; may be given more than once.
    /// Without a key, verify refuses (exit 2) unless --no-signature is given.
    #[arg(long, value_name = "PUBKEY")]
    key: Vec<PathBuf>,

    /// OpenSSF model signature, certificate method: the bundle's signing
    /// certificate must chain to these CA certificates (PEM; checked at the
    /// leaf's notBefore, as model_signing does).
    #[arg(long, value_name = "CA.pem", conflicts_with_all = ["key", "no_signature"])]
    certificate_chain: Vec<PathBuf>,

    /// OpenSSF model signature, keyless Sigstore method: the signing
    /// certificate's identity (its SAN: an email or URI), exactly.
    #[arg(long, value_name = "IDENTITY", requires = "issuer", conflicts_with_all = ["key", "no_signature"])]
    identity: Option<String>,

    /// Keyless: the OIDC issuer that vouched for the identity, exactly.
    #[arg(long, value_name = "URL", requires = "identity")]
    issuer: Option<String>,

    /// Keyless: this trusted_root.json instead of Sigstore's public-good
    /// trust root shipped with the tool (checked offline either way).
    #[arg(long, value_name = "FILE", requires = "identity")]
    trusted_root: Option<PathBuf>,

    /// OpenSSF model signature made by `gguf-digest sign --format oms`: a
    /// file that differs only inside a weights component whose signed label
    /// holds (shards re-cut, say) is excused, and the output says so; any
    /// other file that differs, is missing or was added still fails.
    #[arg(long)]
    accept_relayout: bool,

    /// Relabel the subjects without checking who signed the statement (an
    /// unsigned statement, or no key at hand); the result says so.
    #[arg(long, conflicts_with = "key")]
    no_signature: bool,

    /// Don't print OK for each verified subject.
    #[arg(long, overrides_with = "status")]
    quiet: bool,

    /// Print nothing; the exit status tells.
    #[arg(long, overrides_with = "quiet")]
    status: bool,

    #[command(flatten)]
    pub(super) read: ReadArgs,
}

/// The subjects' names, and their models with their digests.
pub(super) type Labelled = (Vec<PathBuf>, Vec<(AnyModel, Digest)>);

/// The models of a statement, labelled: each subject's name (relative to
/// `root` when given) with its model and digest, or the exit status after
/// the errors were printed (`command` names the command in them). Every
/// model or none: a statement is never written for part of them.
pub(super) fn label_subjects(
    command: &str,
    models: &[PathBuf],
    root: Option<&std::path::Path>,
    options: &BatchOptions,
    pool: &rayon::ThreadPool,
) -> Result<Labelled, u8> {
    // `statement *.gguf`: one subject per shard set, as the labelling does.
    let named = NamedModels::new(models, &options.open);
    let models = named.paths();
    // Names first: a statement never names a subject verify must refuse,
    // and nothing is labelled for a statement that cannot be written.
    let mut names = Vec::with_capacity(models.len());
    for p in models {
        match subjects::name_for(p, root) {
            Ok(n) => names.push(PathBuf::from(n)),
            Err(e) => {
                let hint = if root.is_none() { " (or give --root DIR to name it relative to DIR)" } else { "" };
                eprintln!("gguf-digest: {command}: {}{hint}", e.detail());
                return Err(EXIT_ERROR);
            }
        }
    }
    let mut done = Vec::with_capacity(models.len());
    let mut failed = false;
    for r in schedule_all(models, options, pool, &|p, o| named.open(p, o)) {
        match r {
            Ok(m) => done.push(m),
            Err(e) => {
                eprintln!("gguf-digest: {}", error_line(&e));
                failed = true;
            }
        }
    }
    if failed { Err(EXIT_ERROR) } else { Ok((names, done)) }
}

/// Runs `statement`; returns the exit status.
pub fn run_statement(args: &StatementArgs, options: &BatchOptions, pool: &rayon::ThreadPool) -> io::Result<u8> {
    let (names, done) = match label_subjects("statement", &args.models, args.root.as_deref(), options, pool) {
        Ok(labelled) => labelled,
        Err(code) => return Ok(code),
    };
    let labelled: Vec<statement::Subject<'_>> =
        done.iter().zip(&names).map(|((m, d), n)| (n.as_path(), m.labelled(), d)).collect();
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
    // Read as paths, they would be local files of that spelling. The
    // subjects a statement names may be URLs; the statement is read here.
    // An OpenSSF model signature's --root may be a URL prefix or an oci://
    // ModelPack artifact (the model where it lies: docs/adr/0052-oms-of-urls.md).
    let oms_file = !super::is_url(&args.file) && oms::is_model_signing_file(&args.file);
    let root = args.root.as_ref().filter(|_| !oms_file);
    for (what, arg, also) in [
        ("the statement or signature", Some(&args.file), ""),
        (
            "--root",
            root,
            "; only an OpenSSF model signature's --root may be a URL prefix ending in `/` or an oci:// ModelPack artifact",
        ),
    ] {
        if arg.is_some_and(|a| super::is_url(a)) {
            eprintln!(
                "gguf-digest: verify: {name}: {what} is read from a local file or directory, not a URL (download it first{also})"
            );
            return Ok(EXIT_ERROR);
        }
    }
    // An OpenSSF model signature has methods and a manifest of its own.
    let oms_only = !args.certificate_chain.is_empty() || args.identity.is_some() || args.accept_relayout;
    if oms_file {
        if args.no_signature {
            eprintln!(
                "gguf-digest: verify: {name}: an OpenSSF model signature is verified with its signature, never without"
            );
            return Ok(EXIT_ERROR);
        }
        let req = super::oms::Request {
            file: &args.file,
            root: args.root.as_deref(),
            keys: &args.key,
            certificate_chain: &args.certificate_chain,
            identity: args.identity.as_deref(),
            issuer: args.issuer.as_deref(),
            trusted_root: args.trusted_root.as_deref(),
            accept_relayout: args.accept_relayout,
            quiet: args.quiet,
            status: args.status,
        };
        return super::oms::run(&req, opts, pool);
    }
    if oms_only {
        eprintln!(
            "gguf-digest: verify: {name}: --certificate-chain, --identity and --accept-relayout are for OpenSSF model signatures, and this is not one"
        );
        return Ok(EXIT_ERROR);
    }
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
    let signature = if args.no_signature { verify::Signature::Unchecked } else { verify::Signature::Keys(&keys) };
    // The signature first: not one subject is trusted (or opened) before.
    let claims = match verify::claims(&args.file, args.root.as_deref(), signature) {
        Ok(c) => c,
        Err(e) => {
            let hint = if matches!(e.kind().of::<ProvenanceErrorKind>(), Some(ProvenanceErrorKind::SignatureRequired)) {
                " (give --key PUBKEY, or --no-signature to relabel the subjects without checking who signed them)"
            } else {
                ""
            };
            eprintln!("gguf-digest: verify: {name}: {}{hint}", e.detail());
            let failed_signature =
                matches!(e.kind().of::<ProvenanceErrorKind>(), Some(ProvenanceErrorKind::SignatureFailed(_)));
            return Ok(if failed_signature { EXIT_MISMATCH } else { EXIT_ERROR });
        }
    };
    if !claims.signature_checked && !args.status {
        // In the result itself, --quiet too: a pass without a signature
        // must never read like a signed pass.
        println!("{name}: signature NOT CHECKED (--no-signature)");
    }
    let subjects = &claims.subjects;
    // A subject naming a URL with credentials or a query is opened with
    // them, and named without them in every verdict and error (as a sums
    // line is: docs/adr/0044).
    let located: Vec<PathBuf> = claims.paths.iter().map(|p| shown(p)).collect();
    let lines: Vec<Line> = subjects
        .iter()
        .enumerate()
        .map(|(i, s)| {
            super::check::hide_credentials(Line::Entry {
                line_no: i.saturating_add(1),
                label: s.label.clone(),
                path: s.name.clone().into_bytes(),
            })
        })
        .collect();
    let located = &located;
    let check_opts = CheckOptions { quiet: args.quiet, status: args.status, ..CheckOptions::default() };
    // A model named by several subjects is labelled once.
    let label = |_: &[PathBuf], emit: &mut dyn FnMut(usize, crate::Result<String>)| {
        // Each subject opened beneath the root (Claims::open), never by its path alone.
        verify::label_once_each(
            located,
            |unique, emit_unique| {
                schedule(unique, opts, pool, &|p, o| claims.open(p, o), |i, r| {
                    if let (Ok((m, _)), Some(p), false) = (&r, unique.get(i), args.status) {
                        super::note_cache_use(p, m.labelled());
                    }
                    emit_unique(i, r.map(|(_, d)| d.label()))
                });
            },
            emit,
        );
    };
    let stdout = io::stdout();
    let summary = super::check::verify_and_print(
        &lines,
        &name,
        &check_opts,
        label,
        &mut stdout.lock(),
        &mut io::stderr().lock(),
    )?;
    stdout.lock().flush()?;
    Ok(if summary.passed(&check_opts) { EXIT_OK } else { EXIT_MISMATCH })
}

/// `path` as messages may show it: a URL without its credentials and
/// query (kept for the opener alone), anything else as it is.
fn shown(path: &std::path::Path) -> PathBuf {
    #[cfg(feature = "remote")]
    return PathBuf::from(crate::remote::hide_credentials(path.as_os_str()));
    #[cfg(not(feature = "remote"))]
    path.to_path_buf()
}
