//! `sign`: flags, then the library's provenance module (a key read, a
//! statement or an OpenSSF model signature signed into a Sigstore bundle),
//! then writing it (docs/adr/0026-signing.md).

use std::io::{self, Write};
use std::path::PathBuf;

use crate::output::{error_line, quote_name};
use crate::provenance::private_keys::{self, KeyFile};
use crate::provenance::{oms_sign, password, sign, statement};
use crate::{BatchOptions, ErrorKind};

use super::{EXIT_ERROR, EXIT_OK, ReadArgs};

/// What `sign` signs.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SignFormat {
    /// The statement `gguf-digest statement` prints for the models.
    Label,
    /// An OpenSSF model signature (model_signing's key method) of one
    /// directory, carrying its gguf-digest labels.
    Oms,
}

/// Flags of `gguf-digest sign`.
#[derive(clap::Args, Debug)]
#[command(after_help = "Writes a Sigstore bundle (v0.3) of a DSSE envelope: by default of the in-toto statement \
                        `gguf-digest statement` prints for the same models, which `gguf-digest verify --key PUB` \
                        and cosign (verify-blob-attestation --new-bundle-format --insecure-ignore-tlog) accept; \
                        with --format oms, an OpenSSF model signature of one directory (or a URL prefix ending in `/`, \
                        or an oci:// CNCF ModelPack artifact, signed where it lies as the same files in a local \
                        directory of its last name) that `model_signing verify key` accepts.\n\
                        KEY: a PEM private key (Ed25519, ECDSA P-256 or P-384): PKCS#8, encrypted PKCS#8, or a \
                        cosign key file. The password of an encrypted key comes from GGUF_DIGEST_PASSWORD (for \
                        a cosign key also COSIGN_PASSWORD) or, on a terminal, a prompt.\n\
                        Exit status: 0 signed, 2 the key could not be used or a model could not be labelled \
                        (nothing is written).")]
pub struct SignArgs {
    /// The models (as `statement` takes them), or with --format oms one directory (or URL prefix ending in `/`,
    /// or oci:// ModelPack artifact).
    #[arg(value_name = "MODEL", required = true)]
    pub(super) models: Vec<PathBuf>,

    /// The private key (PEM).
    #[arg(long, value_name = "KEY")]
    key: PathBuf,

    /// Write the bundle to FILE (whole, or not at all) instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    out: Option<PathBuf>,

    /// What to sign.
    #[arg(long, value_enum, default_value = "label")]
    format: SignFormat,

    /// Also put every model's KV and tensor leaves in the statement (as `statement --leaves`).
    #[arg(long, conflicts_with = "format")]
    leaves: bool,

    /// Name every subject relative to DIR (as `statement --root`).
    #[arg(long, value_name = "DIR", conflicts_with = "format")]
    root: Option<PathBuf>,

    #[command(flatten)]
    pub(super) read: ReadArgs,
}

/// Runs `sign`; returns the exit status.
pub fn run_sign(args: &SignArgs, options: &BatchOptions, pool: &rayon::ThreadPool) -> io::Result<u8> {
    // Signing reads every byte unless told otherwise, and says so when told.
    if options.cache.is_some() {
        eprintln!(
            "gguf-digest: sign: --cache: files unchanged since an earlier run are not read again; their digests come from the verified-leaf cache"
        );
    }
    // The key first: a wrong password costs no hashing.
    let shown = args.key.display().to_string();
    let key = match private_keys::read_key_file(&args.key, &mut |kind| password::obtain(kind, &shown)) {
        Ok(KeyFile { key, warning }) => {
            if let Some(w) = warning {
                eprintln!("gguf-digest: sign: {w}");
            }
            key
        }
        Err(e) => {
            eprintln!("gguf-digest: sign: {}", error_line(&e));
            return Ok(EXIT_ERROR);
        }
    };
    let bundle = match args.format {
        SignFormat::Oms => {
            let [dir] = args.models.as_slice() else {
                eprintln!("gguf-digest: sign: --format oms signs one directory");
                return Ok(EXIT_ERROR);
            };
            // A URL prefix (or an oci:// ModelPack artifact) is signed where
            // it lies, as the same files in a local directory of its last
            // name would be (docs/adr/0052-oms-of-urls.md).
            let signed = match dir.to_str().and_then(crate::RemoteUrl::parse) {
                Some(url) => pool.install(|| oms_sign::sign_url(&url, &key, &options.open)),
                None => pool.install(|| oms_sign::sign_directory(dir, &key, args.out.as_deref(), &options.open)),
            };
            match signed {
                Ok(b) => b,
                Err(e) => {
                    eprintln!("gguf-digest: sign: {}", error_line(&e));
                    return Ok(EXIT_ERROR);
                }
            }
        }
        SignFormat::Label => {
            let (names, done) =
                match super::provenance::label_subjects("sign", &args.models, args.root.as_deref(), options, pool) {
                    Ok(labelled) => labelled,
                    Err(code) => return Ok(code),
                };
            let labelled: Vec<statement::Subject<'_>> =
                done.iter().zip(&names).map(|((m, d), n)| (n.as_path(), m.labelled(), d)).collect();
            match sign::sign_statement(&labelled, args.leaves, &key) {
                Ok(b) => b,
                Err(e) => {
                    eprintln!("gguf-digest: sign: {}", error_line(&e));
                    return Ok(EXIT_ERROR);
                }
            }
        }
    };
    match &args.out {
        Some(path) => {
            if let Err(e) = sign::write_whole(path, &bundle) {
                let name = quote_name(path.as_os_str().as_encoded_bytes());
                eprintln!("gguf-digest: sign: {name}: {}", crate::Error::new(ErrorKind::Io(e)));
                return Ok(EXIT_ERROR);
            }
        }
        None => {
            let mut out = io::stdout().lock();
            out.write_all(&bundle)?;
            out.flush()?;
        }
    }
    Ok(EXIT_OK)
}
