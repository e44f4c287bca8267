//! `verify` of an OpenSSF model signature (model_signing's bundle): the
//! signature checked by the method the flags name, then the model
//! directory recomputed file by file (docs/adr/0027-openssf-model-signing.md).

use crate::provenance::ProvenanceErrorKind;
use std::io::{self, IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};

use crate::BatchOptions;
use crate::output::{error_line, quote_name};
use crate::provenance::oms::{self, Method, check::Verdict, read_key, read_material as read_small};

use super::{EXIT_ERROR, EXIT_MISMATCH, EXIT_OK, Progress};

/// What `verify` was asked, for a model signature.
pub(super) struct Request<'a> {
    pub file: &'a Path,
    pub root: Option<&'a Path>,
    pub keys: &'a [PathBuf],
    pub certificate_chain: &'a [PathBuf],
    pub identity: Option<&'a str>,
    pub issuer: Option<&'a str>,
    pub trusted_root: Option<&'a Path>,
    pub accept_relayout: bool,
    pub quiet: bool,
    pub status: bool,
}

/// Runs `verify` of a model signature; the exit status.
pub(super) fn run(req: &Request<'_>, opts: &BatchOptions, pool: &rayon::ThreadPool) -> io::Result<u8> {
    let name = quote_name(req.file.as_os_str().as_encoded_bytes());
    let refuse = |what: String| {
        eprintln!("gguf-digest: verify: {name}: {what}");
        Ok(EXIT_ERROR)
    };
    // Material first, read whole: then the signature, then the model.
    let mut keys = Vec::new();
    for k in req.keys {
        match read_key(k) {
            Ok(key) => keys.push(key),
            Err(e) => return refuse(error_line(&e)),
        }
    }
    let mut chain = Vec::new();
    for c in req.certificate_chain {
        match read_small(c) {
            Ok(t) => chain.extend_from_slice(&t),
            Err(e) => return refuse(error_line(&e)),
        }
    }
    let trusted_root = match req.trusted_root.map(read_small).transpose() {
        Ok(t) => t.map(|t| String::from_utf8_lossy(&t).into_owned()),
        Err(e) => return refuse(error_line(&e)),
    };
    let method = match (req.keys.is_empty(), req.certificate_chain.is_empty(), req.identity, req.issuer) {
        (false, true, None, None) => Method::Key(&keys),
        (true, false, None, None) => Method::Certificate(&chain),
        (true, true, Some(identity), Some(issuer)) => {
            Method::Keyless { identity, issuer, trusted_root: trusted_root.as_deref() }
        }
        (true, true, None, None) => {
            return refuse(
                "an OpenSSF model signature: give --key PUBKEY, --certificate-chain CA.pem, or --identity and --issuer (keyless)"
                    .into(),
            );
        }
        _ => return refuse("give one method: --key, --certificate-chain, or --identity with --issuer".into()),
    };
    let verified = match oms::verify_signature(req.file, method) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("gguf-digest: verify: {name}: {}", e.detail());
            let failed = matches!(e.kind().of::<ProvenanceErrorKind>(), Some(ProvenanceErrorKind::SignatureFailed(_)));
            return Ok(if failed { EXIT_MISMATCH } else { EXIT_ERROR });
        }
    };
    // A URL root: the model where it lies, its objects listed and read by
    // ranges (docs/adr/0052-oms-of-urls.md).
    let url = req.root.and_then(Path::to_str).and_then(crate::RemoteUrl::parse);
    let place = match url.as_ref().map(|u| crate::provenance::oms_sign::open_prefix(u, opts.open.read_mode)).transpose()
    {
        Ok(p) => p,
        Err(e) => return refuse(error_line(&e)),
    };
    let root_path =
        req.root.map(Path::to_path_buf).unwrap_or_else(|| req.file.parent().map(Path::to_path_buf).unwrap_or_default());
    let root_path = if root_path.as_os_str().is_empty() { PathBuf::from(".") } else { root_path };
    // Every signed name located before any file is opened (a remote
    // prefix has no links: each name is opened by its plain components).
    if place.is_none() {
        if let Err(e) = oms::check::locate_all(&root_path, &verified.manifest) {
            return refuse(e.detail());
        }
    }
    let mut batch = opts.clone();
    let progress = wants_bar(req).then(|| {
        let total = verified.manifest.resources.iter().map(|r| r.range.map_or(0, |(s, e)| e.saturating_sub(s))).sum();
        Progress::counting(if total > 0 { Some(total) } else { None }, &mut batch)
    });
    let report = match &place {
        Some(place) => oms::check::check_place(place, &verified.manifest, &batch, pool),
        None => oms::check::check(&root_path, &verified.manifest, req.file, &batch, pool),
    };
    if let Some(p) = progress {
        p.finish();
    }
    let report = match report {
        Ok(r) => r,
        Err(e) => return refuse(e.detail()),
    };
    let stdout = io::stdout();
    let mut out = stdout.lock();
    if !req.status {
        writeln!(out, "{name}: signature OK ({})", verified.signer)?;
        for p in &report.dropped_ignore_paths {
            let p = quote_name(p.as_bytes());
            eprintln!(
                "gguf-digest: verify: {name}: ignore path {p} is not below the model directory: it ignores nothing (model_signing drops it too)"
            );
        }
    }
    let mut bad = 0usize;
    // Each file that did not pass, and whether it is in the model.
    let mut failing: Vec<(&str, bool)> = Vec::new();
    for (file, verdict) in &report.files {
        let shown = quote_name(file.as_bytes());
        let line = match verdict {
            Verdict::Ok => {
                if !req.quiet && !req.status {
                    writeln!(out, "{shown}: OK")?;
                }
                continue;
            }
            Verdict::Failed(why) if why.is_empty() => format!("{shown}: FAILED"),
            Verdict::Failed(why) => format!("{shown}: FAILED ({why})"),
            Verdict::Missing => format!("{shown}: FAILED (missing)"),
            Verdict::Unexpected => format!("{shown}: FAILED (unexpected: not in the signature)"),
            Verdict::Unreadable(e) => {
                if !req.status {
                    eprintln!("gguf-digest: {}", error_line(e));
                }
                format!("{shown}: FAILED open or read")
            }
        };
        bad = bad.saturating_add(1);
        failing.push((file, !matches!(verdict, Verdict::Missing)));
        if !req.status {
            writeln!(out, "{line}")?;
        }
    }
    out.flush()?;
    if bad == 0 {
        return Ok(EXIT_OK);
    }
    if !req.status {
        eprintln!("gguf-digest: WARNING: {bad} of {} files did NOT match the signature", report.files.len());
    }
    // A relayout is judged on a local directory only.
    if let Some(verdict) =
        place.is_none().then(|| relayout(&verified.manifest, &root_path, req.file, opts, pool)).flatten()
    {
        let line = match &verdict {
            Relayout::Holds(_) => HOLDS,
            Relayout::Other(why) => why,
        };
        if !req.status {
            writeln!(out, "{name}: file digests differ, {line}")?;
        }
        if let (Relayout::Holds(now), true) = (&verdict, req.accept_relayout) {
            // Only what a relayout changes is excused: files of weights
            // components whose signed labels hold.
            let signed = verified.manifest.relayout.as_ref().map_or(&[][..], |r| r.components.as_slice());
            let left = oms::relayout::not_excused(&failing, signed, now);
            if left.is_empty() {
                if !req.status {
                    writeln!(out, "{name}: accepted as a relayout of the signed model (--accept-relayout)")?;
                }
                return Ok(EXIT_OK);
            }
            if !req.status {
                for file in left {
                    writeln!(
                        out,
                        "{}: not excused by --accept-relayout: it is in no weights component whose signed label holds",
                        quote_name(file.as_bytes())
                    )?;
                }
            }
        }
    }
    Ok(EXIT_MISMATCH)
}

const HOLDS: &str = "the signed model's label holds";

/// The relayout verdict.
enum Relayout {
    /// The directory's label is the signed one; the directory as labelled now.
    Holds(oms::relayout::Relabelled),
    /// It is not, or could not be computed: why.
    Other(&'static str),
}

/// When the signer also signed the directory's gguf-digest label: whether
/// the model directory still has it.
fn relayout(
    manifest: &oms::manifest::Manifest,
    root: &Path,
    signature: &Path,
    opts: &BatchOptions,
    pool: &rayon::ThreadPool,
) -> Option<Relayout> {
    let signed = manifest.relayout.as_ref()?;
    if signed.contract != oms::relayout::CONTRACT {
        return Some(Relayout::Other("and the signed label follows a contract this verifier does not know"));
    }
    // The signer labelled the directory before writing the signature into
    // it (and listed it among the ignored paths): this bundle when it lies
    // in the root, else the root's copy of it under the same listed name.
    let listed = signature
        .file_name()
        .and_then(|n| n.to_str())
        .filter(|n| manifest.serialization.ignore_paths.iter().any(|p| p == n))
        .map(PathBuf::from);
    let inside = oms::relayout::inside(root, signature).or(listed);
    match pool.install(|| oms::relayout::relabel(root, inside.as_deref(), &opts.open)) {
        Ok(now) if now.label == signed.label => Some(Relayout::Holds(now)),
        Ok(_) => Some(Relayout::Other("and the directory's label is not the signed one")),
        Err(e) => {
            eprintln!("gguf-digest: {}", error_line(&e));
            Some(Relayout::Other("and the directory could not be labelled"))
        }
    }
}

fn wants_bar(req: &Request<'_>) -> bool {
    !req.quiet && !req.status && io::stderr().is_terminal()
}
