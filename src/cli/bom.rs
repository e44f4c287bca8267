//! `bom`: flags, then the library's BOM (`crate::bom`), then printing.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::bom::{self, Entry, MAX_TIMESTAMP};
use crate::output::{error_line, quote_name};
use crate::{AnyModel, BatchOptions, Digest, Error, NamedModels, schedule_all};

use super::{EXIT_ERROR, EXIT_OK, ReadArgs};

/// Flags of `gguf-digest bom`.
#[derive(clap::Args, Debug)]
#[command(after_help = "Writes a CycloneDX 1.6 JSON BOM (--format spdx: SPDX 3.0.1, an AI package per model): \
                        one machine-learning-model component per model, \
                        its label, contract and format as gguf-digest:* properties, what its metadata \
                        says (name, license, architecture, base models, quantization) in the component \
                        and its modelCard, and each of its files as a file component with its SHA-256.\n\
                        The serial number is derived from the labels: the same models give the same BOM \
                        when SOURCE_DATE_EPOCH fixes its timestamp.\n\
                        Exit status: 0 written, 2 a model could not be labelled or a file hashed \
                        (nothing is written).")]
pub struct BomArgs {
    /// The models (files, directories, ollama:NAME, hf:ORG/NAME; not standard input).
    #[arg(value_name = "MODEL", required = true)]
    pub(super) models: Vec<PathBuf>,

    /// Write the BOM to FILE (whole, or not at all) instead of standard output.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,

    /// The BOM's format: CycloneDX 1.6 JSON, or an SPDX 3.0.1 JSON-LD document of AI packages.
    #[arg(long, value_enum, default_value_t = BomFormat::Cyclonedx)]
    format: BomFormat,

    #[command(flatten)]
    pub(super) read: ReadArgs,
}

/// What `--format` names.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum BomFormat {
    /// CycloneDX 1.6 JSON.
    Cyclonedx,
    /// SPDX 3.0.1 JSON-LD.
    Spdx,
}

/// Runs `bom`; returns the exit status.
pub fn run_bom(args: &BomArgs, options: &BatchOptions, pool: &rayon::ThreadPool) -> io::Result<u8> {
    let timestamp = match timestamp() {
        Ok(t) => t,
        Err(why) => {
            eprintln!("gguf-digest: bom: {why}");
            return Ok(EXIT_ERROR);
        }
    };
    if args.models.iter().any(|m| m.as_os_str() == "-") {
        eprintln!("gguf-digest: bom: standard input cannot be in a BOM: each file is hashed again (name a file)");
        return Ok(EXIT_ERROR);
    }
    // `bom *.gguf`: one component per shard set, as the labelling does.
    let named = NamedModels::new(&args.models, &options.open);
    let models = named.paths();
    let mut entries = Vec::with_capacity(models.len());
    let mut failed = false;
    let labelled = schedule_all(models, options, pool, &|p, o| named.open(p, o));
    // Every file of every model labelled, hashed in one run, largest first.
    let ok: Vec<(&Path, &AnyModel, &Digest)> =
        labelled.iter().zip(models).filter_map(|(r, p)| r.as_ref().ok().map(|(m, d)| (p.as_path(), m, d))).collect();
    let mut hashed = Entry::all(&ok, pool).into_iter();
    for (r, path) in labelled.into_iter().zip(models) {
        let entry = |_| {
            let e = hashed.next().unwrap_or_else(|| Err(Error::internal("a BOM entry went missing")));
            e.map_err(|e| e.for_argument(path))
        };
        match r.and_then(entry) {
            Ok(e) => entries.push(e),
            Err(e) => {
                eprintln!("gguf-digest: {}", error_line(&e));
                failed = true;
            }
        }
    }
    // Every model or no BOM.
    if failed {
        return Ok(EXIT_ERROR);
    }
    let document = match args.format {
        BomFormat::Cyclonedx => bom::cyclonedx(&entries, timestamp),
        BomFormat::Spdx => bom::spdx(&entries, timestamp),
    };
    let mut text = serde_json::to_vec_pretty(&document).map_err(io::Error::other)?;
    text.push(b'\n');
    match &args.out {
        None => {
            let mut out = io::stdout().lock();
            out.write_all(&text)?;
            out.flush()?;
        }
        Some(path) => {
            if let Err(e) = write_whole(path, &text) {
                eprintln!("gguf-digest: bom: {}: {e}", quote_name(path.as_os_str().as_encoded_bytes()));
                return Ok(EXIT_ERROR);
            }
        }
    }
    Ok(EXIT_OK)
}

/// Seconds since the epoch: `SOURCE_DATE_EPOCH` (reproducible builds'
/// variable) when set, else now.
fn timestamp() -> Result<u64, String> {
    match std::env::var_os("SOURCE_DATE_EPOCH") {
        Some(v) => v
            .to_str()
            .and_then(|s| s.parse::<u64>().ok())
            .filter(|&t| t <= MAX_TIMESTAMP)
            .ok_or_else(|| format!("SOURCE_DATE_EPOCH must be whole seconds since 1970, at most {MAX_TIMESTAMP}")),
        None => Ok(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())),
    }
}

/// Writes `bytes` to `path` through a file beside it, renamed over it
/// once whole: a reader never sees half a BOM.
fn write_whole(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(path.file_name().unwrap_or_default());
    tmp_name.push(format!(".{}.partial", std::process::id()));
    let tmp = path.with_file_name(tmp_name);
    let written = std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}
