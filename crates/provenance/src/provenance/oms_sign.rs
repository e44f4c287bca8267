//! `sign --format oms DIR`: an OpenSSF model signature (OMS v1.0, the
//! format PyPI's `model-signing` writes and reads) of a directory, signed
//! with an EC key as its *key* method does, so that `model_signing verify
//! key` accepts it unchanged (docs/adr/0026-signing.md).
//!
//! The statement: one subject named by the directory's name whose
//! `sha256` is the root digest (SHA-256 over every resource's digest, in
//! the resources' order); predicate `serialization` (method `files`,
//! SHA-256, the ignored paths) and `resources` (every file: `name`,
//! `algorithm`, `digest`), and, as a member `model_signing` 1.1 ignores,
//! `gguf_digest`: the directory's label and each weights component's.
//! The bundle holds no member the specification does not define, and its
//! key hint is the hex SHA-256 of the PEM public key (the only hint
//! `model_signing` accepts).

use crate::directory::DirectoryErrorKind;
use crate::provenance::ProvenanceErrorKind;
use std::collections::HashMap;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};

use serde_json::json;
use sha2::{Digest as _, Sha256};

use crate::directory::skeleton::Kind;
use crate::directory::walk::{Store, Tree, walk};
use crate::error::{Error, ErrorKind, Result, Subject};
use crate::format::OpenOptions;
use crate::hash::{Conversion, Job, Sha256Digest};
use crate::input::remote::{self, Remote, RemoteUrl, Scheme};
use crate::provenance::private_keys::SigningKey;
use crate::provenance::{PAYLOAD_TYPE, STATEMENT_TYPE, bundle};
use crate::schedule::JobList;
use crate::source::Source;

/// The OMS v1.0 predicate type.
pub const OMS_PREDICATE_TYPE: &str = "https://model_signing/signature/v1.0";

/// The contract of the `gguf_digest` predicate member's label.
pub const DIRECTORY_CONTRACT: &str = "directory-skeleton-v1";

/// Paths (relative to the directory) no label of it covers, written as the
/// signature's `ignore_paths`: `model_signing`'s own (the Git entries) and
/// the `.cache/` a `huggingface_hub` local_dir keeps its download records
/// in, which the directory label leaves out too.
pub const IGNORED: [&str; 5] = [".cache", ".git", ".gitattributes", ".github", ".gitignore"];

/// One file of the manifest: its `/`-separated name and SHA-256.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resource {
    /// Its name relative to the directory, `/`-separated.
    pub name: String,
    /// The SHA-256 of its bytes.
    pub sha256: Sha256Digest,
}

/// One weights component of the directory label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComponentLabel {
    /// `SFTN` or `GGUF`.
    pub kind: &'static str,
    /// Its name in the directory (`d/P`).
    pub name: String,
    /// Its label, 64 hex digits.
    pub label: String,
}

/// The gguf-digest labels the predicate carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Labels {
    /// The directory's label.
    pub label: String,
    /// Every weights component's label.
    pub components: Vec<ComponentLabel>,
}

/// How `model_signing` orders resources: as `PurePosixPath`s, a
/// component at a time (so `a/b` comes before `a-b/c`).
fn path_order(a: &str, b: &str) -> std::cmp::Ordering {
    a.split('/').cmp(b.split('/'))
}

/// The in-toto statement (pretty JSON) of a directory named `model_name`
/// whose files are `resources` (sorted here), leaving out `ignore_paths`.
pub fn statement(
    model_name: &str,
    resources: &mut [Resource],
    ignore_paths: &[String],
    allow_symlinks: bool,
    labels: &Labels,
) -> Vec<u8> {
    resources.sort_by(|a, b| path_order(&a.name, &b.name));
    let mut root = Sha256::new();
    for r in resources.iter() {
        root.update(r.sha256);
    }
    let mut ignored = ignore_paths.to_vec();
    ignored.sort();
    ignored.dedup();
    let resources: Vec<_> = resources
        .iter()
        .map(|r| json!({ "name": r.name, "algorithm": "sha256", "digest": hex::encode(r.sha256) }))
        .collect();
    let components: Vec<_> =
        labels.components.iter().map(|c| json!({ "kind": c.kind, "name": c.name, "label": c.label })).collect();
    let statement = json!({
        "_type": STATEMENT_TYPE,
        "subject": [{ "name": model_name, "digest": { "sha256": hex::encode(root.finalize()) } }],
        "predicateType": OMS_PREDICATE_TYPE,
        "predicate": {
            "serialization": {
                "method": "files",
                "hash_type": "sha256",
                "allow_symlinks": allow_symlinks,
                "ignore_paths": ignored,
            },
            "resources": resources,
            "gguf_digest": {
                "contract": DIRECTORY_CONTRACT,
                "label": labels.label,
                "components": components,
            },
        },
    });
    let mut out = serde_json::to_vec_pretty(&statement).unwrap_or_default();
    out.push(b'\n');
    out
}

/// The bundle of `statement` signed by `key` the way `model_signing`'s key
/// method signs: EC keys only (it has no Ed25519), the PEM key's hint.
pub fn sign_statement(statement: &[u8], key: &SigningKey) -> Result<Vec<u8>> {
    if matches!(key, SigningKey::Ed25519(_)) {
        return Err(Error::new(ProvenanceErrorKind::PrivateKey(
            "an OpenSSF model signature is made with an ECDSA key (P-256 or P-384): model_signing verifies no Ed25519"
                .to_string(),
        )));
    }
    Ok(bundle::write(statement, PAYLOAD_TYPE, key, &key.model_signing_hint()?))
}

/// The path of `out` relative to `dir`, when it lies inside it (the
/// signature is then one of the ignored paths, as `model_signing` does).
fn inside(dir: &Path, out: &Path) -> Option<String> {
    let dir = std::fs::canonicalize(dir).ok()?;
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let at = std::fs::canonicalize(parent).ok()?.join(out.file_name()?);
    at.strip_prefix(&dir).ok()?.to_str().map(str::to_string)
}

fn ignored(name: &str, ignore: &[String]) -> bool {
    ignore.iter().any(|i| name == i || name.strip_prefix(i.as_str()).is_some_and(|rest| rest.starts_with('/')))
}

/// The directory `dir` walked once and every file opened once: the
/// manifest's resources (each file's SHA-256, hashed whole) and the
/// gguf-digest labels are computed from the same open files, in one run of
/// the scheduler on the current rayon pool, and every file is checked
/// unchanged after both, so
/// the two describe one tree even if files are swapped meanwhile.
fn describe(tree: Tree, dir: &Path, ignore: &[String], opts: &OpenOptions) -> Result<(Labels, Vec<Resource>)> {
    // Each file's name by the path it is shown as (its source's path).
    let mut names: HashMap<PathBuf, String> = HashMap::new();
    for f in &tree.files {
        let shown = tree.shown_path(&f.name);
        let name = std::str::from_utf8(&f.name).map_err(|_| {
            let what = "its name is not UTF-8, which a model signature (JSON) cannot name".to_string();
            Error::new(DirectoryErrorKind::DirectoryEntry(what)).in_file(&shown)
        })?;
        names.insert(shown, name.to_string());
    }
    let count = names.len();
    let model = crate::directory::Model::open_tree(tree, dir, opts)?;
    let sources: Vec<(String, &Source)> = model
        .sources()
        .into_iter()
        .map(|s| Ok((names.get(s.path()).ok_or_else(|| Error::internal("a file the walk did not find"))?.clone(), s)))
        .collect::<Result<_>>()?;
    if sources.len() != count {
        return Err(Error::internal("a file of the walk was not opened"));
    }
    describe_model(&model, sources, ignore, opts)
}

/// The labels and the manifest's resources of an opened directory model
/// whose every source is named (`sources`: its signed name, `/`-separated):
/// each file hashed whole beside the label's jobs in one scheduler run,
/// then every source checked unchanged (a remote object against its
/// pinned version), so resources and labels describe one set of bytes.
fn describe_model(
    model: &crate::directory::Model,
    sources: Vec<(String, &Source)>,
    ignore: &[String],
    opts: &OpenOptions,
) -> Result<(Labels, Vec<Resource>)> {
    let (resources, jobs): (Vec<String>, Vec<Job<'_>>) = sources
        .into_iter()
        .filter(|(name, _)| !ignored(name, ignore))
        .map(|(name, source)| {
            let job = Job {
                source,
                start: 0,
                len: source.len(),
                conversion: Conversion::none(1, "file"),
                subject: Subject::Key(format!("file {name}").into_bytes()),
                gather: None,
            };
            (name, job)
        })
        .unzip();
    // The files hashed whole and the label's jobs in one run of the
    // scheduler, largest first across both; then every file checked
    // unchanged since it was opened (which covers the whole-file reads).
    let files = JobList(jobs);
    let (digest, hashed) = crate::schedule::digest_with(model, &[&files], &opts.pieces);
    let hashed =
        hashed.into_iter().next().unwrap_or_else(|| Err(Error::internal("the files' digests went missing")))?;
    let resources: Vec<Resource> =
        resources.into_iter().zip(hashed).map(|(name, sha256)| Resource { name, sha256 }).collect();
    let digest = digest?;
    let digests = model.component_digests(digest.tensor_sha256())?;
    let components = model
        .components()
        .iter()
        .zip(digests)
        .filter_map(|(c, d)| {
            if c.kind == Kind::FILE {
                return None;
            }
            let kind = c.kind.text();
            let name = String::from_utf8_lossy(&c.name).into_owned();
            Some(ComponentLabel { kind, name, label: hex::encode(d) })
        })
        .collect();
    Ok((Labels { label: digest.label(), components }, resources))
}

/// Signs the directory `dir` as an OpenSSF model signature: walks it once,
/// opens every file once, labels it and hashes every file from those open
/// files, and returns the bundle (`out`, where it will be
/// written, is left out of the manifest when it lies inside `dir`).
/// Errors name the file; nothing is signed unless every file was read.
pub fn sign_directory(dir: &Path, key: &SigningKey, out: Option<&Path>, opts: &OpenOptions) -> Result<Vec<u8>> {
    // Refused before any file is read.
    if matches!(key, SigningKey::Ed25519(_)) {
        return sign_statement(b"", key);
    }
    let tree = walk(dir)?;
    let mut ignore: Vec<String> = IGNORED.iter().map(|s| (*s).to_string()).collect();
    if let Some((out, rel)) = out.and_then(|o| Some((o, inside(dir, o)?))) {
        // An old signature there would enter the directory label (which
        // takes every file), while verifiers leave the signature out.
        if std::fs::symlink_metadata(out).is_ok() {
            let what = "a file is already there, inside the directory being signed: its bytes would enter the \
                        directory's label; remove it first, or write the signature outside the directory";
            return Err(Error::new(ErrorKind::Io(std::io::Error::other(what))).in_file(out));
        }
        ignore.push(rel);
    }
    let allow_symlinks = tree.snapshot
        || tree.files.iter().any(|f| f.store != Store::Main || f.at.as_os_str().as_bytes() != f.name.as_slice());
    let (labels, mut resources) = describe(tree, dir, &ignore, opts)?;
    let name = model_name(dir);
    let statement = statement(&name, &mut resources, &ignore, allow_symlinks, &labels);
    sign_statement(&statement, key)
}

/// Signs the remote prefix `place` (a URL ending in `/`, opened by the
/// registered opener: docs/adr/0052-oms-of-urls.md) as `sign_directory`
/// signs a local directory holding the same objects: the model named
/// `model_name` (the prefix's last segment), every object listed once,
/// opened once (its version pinned), labelled and hashed whole from those
/// sources, each checked unchanged after; its signed name is its key
/// relative to the prefix. Nothing is written inside the prefix, so no
/// path is ignored beyond the usual ones, and no link exists.
pub fn sign_place(
    place: &crate::source::Beside,
    model_name: &str,
    key: &SigningKey,
    opts: &OpenOptions,
) -> Result<Vec<u8>> {
    // Refused before any object is read.
    if matches!(key, SigningKey::Ed25519(_)) {
        return sign_statement(b"", key);
    }
    let ignore: Vec<String> = IGNORED.iter().map(|s| (*s).to_string()).collect();
    let shown = place.shown().to_path_buf();
    let model = crate::directory::Model::open_place(place, opts)?;
    // Each source is opened below the prefix by its relative name, and
    // shown as the prefix followed by that name.
    let sources: Vec<(String, &Source)> = model
        .sources()
        .into_iter()
        .map(|s| {
            let rel = s.path().strip_prefix(&shown).ok().and_then(Path::to_str).filter(|r| !r.is_empty());
            let rel = rel.ok_or_else(|| Error::internal("an object opened outside the prefix it was listed in"))?;
            Ok((rel.to_string(), s))
        })
        .collect::<Result<_>>()?;
    let (labels, mut resources) = describe_model(&model, sources, &ignore, opts)?;
    let statement = statement(model_name, &mut resources, &ignore, false, &labels);
    sign_statement(&statement, key)
}

/// Signs the prefix `url` names (ending in `/`), or the CNCF ModelPack
/// artifact an `oci://` URL names: opens it with the registered opener and
/// signs it as [`sign_place`] does, the model named by [`url_model_name`],
/// as `model_signing` names a local directory by its own name.
pub fn sign_url(url: &RemoteUrl, key: &SigningKey, opts: &OpenOptions) -> Result<Vec<u8>> {
    // Refused before any request.
    if matches!(key, SigningKey::Ed25519(_)) {
        return sign_statement(b"", key);
    }
    let place = open_prefix(url, opts.read_mode)?;
    sign_place(&place, &url_model_name(url), key, opts)
}

/// Why a URL is no directory of files a model signature can name.
const NOT_A_PREFIX: &str = "an OpenSSF model signature is of a prefix ending in `/` (a directory of objects), \
                            in s3://, gs://, az://, https:// or http://, or of a ModelPack artifact in oci://";

/// Why an Ollama model in a registry is not signed as files.
const NOT_OLLAMA: &str = "it holds an Ollama model, which is no directory of files: its layers are named by \
                          media type (model, template, params, license...), not by file paths, and `ollama pull` \
                          keeps them as blobs named by digest, so an OpenSSF model signature could name none of \
                          them as a pulled copy has it; sign its label instead (`sign` without --format oms)";

/// Why a Docker Model Runner artifact is not signed as files.
const NOT_DOCKER: &str = "it holds a Docker Model Runner model, which is no directory of files: its layers are \
                          named by media type (weights, license), its weights by a name some versions leave out, \
                          and `docker model pull` keeps them in its own store, so an OpenSSF model signature could \
                          name none of them as a pulled copy has it; sign its label instead (`sign` without \
                          --format oms)";

/// The place a URL names, opened as a directory of files: a prefix ending
/// in `/`, or an `oci://` CNCF ModelPack artifact (its files named by
/// their file path annotations, each blob checked against its digest as
/// it is read: docs/adr/0052-oms-of-urls.md). An object, an Ollama model
/// or a Docker Model Runner artifact is refused, saying why (a model
/// signature is of a directory of files, each signed by its name).
pub fn open_prefix(url: &RemoteUrl, mode: crate::source::ReadMode) -> Result<crate::source::Beside> {
    let oci = url.scheme() == Scheme::Oci;
    if !oci && !url.is_prefix() {
        return Err(url.refused(NOT_A_PREFIX));
    }
    match remote::open(url, mode)? {
        Remote::Prefix(place) => Ok(place),
        // The only model an opener builds is an Ollama model (ADR 0046),
        // and the only object an `oci://` opens a Docker model's weights.
        Remote::Model(_) if oci => Err(not_files(url, NOT_OLLAMA)),
        Remote::Object(_) if oci => Err(not_files(url, NOT_DOCKER)),
        Remote::Object(_) | Remote::Model(_) => Err(url.refused(NOT_A_PREFIX)),
    }
}

/// An error naming `url` (as shown): what it holds is no directory of files.
fn not_files(url: &RemoteUrl, why: &str) -> Error {
    let e = std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("no OpenSSF model signature: {why}"));
    Error::new(ErrorKind::Io(e)).in_file(url.shown())
}

/// The model's name for a URL: a prefix's last segment, or the bucket,
/// container or host at its root; an `oci://` artifact's repository's last
/// component, without its tag or digest (`oci://r/org/tiny:v1` is `tiny`,
/// the directory a pull into `./tiny` makes).
pub fn url_model_name(url: &RemoteUrl) -> String {
    let path = url.path().trim_end_matches('/');
    let path = if url.scheme() == Scheme::Oci {
        // A repository's components hold no `:` or `@`: the tag follows
        // the last component's `:`, the digest the path's `@`.
        let repository = path.split('@').next().unwrap_or(path);
        let last = repository.rsplit('/').next().unwrap_or(repository);
        last.split(':').next().unwrap_or(last)
    } else {
        path.rsplit('/').next().unwrap_or(path)
    };
    if path.is_empty() { url.authority().to_string() } else { path.to_string() }
}

/// The directory's own name, as `model_signing` names the model (the
/// last component of its real path).
fn model_name(dir: &Path) -> String {
    let real = std::fs::canonicalize(dir).unwrap_or_else(|_| PathBuf::from(dir));
    real.file_name().map(OsStr::to_string_lossy).map(|s| s.into_owned()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resource(name: &str, byte: u8) -> Resource {
        Resource { name: name.to_string(), sha256: [byte; 32] }
    }

    #[test]
    fn resources_in_path_order_and_the_root_digest_over_them() {
        let mut rs = vec![resource("a-b/c", 1), resource("a/b", 2), resource("a.txt", 3)];
        let labels = Labels { label: "0".repeat(64), components: vec![] };
        let text = statement("m", &mut rs, &[".git".into(), ".cache".into()], false, &labels);
        let names: Vec<&str> = rs.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["a/b", "a-b/c", "a.txt"]);
        let v: serde_json::Value = serde_json::from_slice(&text).unwrap();
        let mut root = Sha256::new();
        for b in [2u8, 1, 3] {
            root.update([b; 32]);
        }
        assert_eq!(v["subject"][0]["digest"]["sha256"], hex::encode(root.finalize()));
        assert_eq!(v["subject"].as_array().unwrap().len(), 1);
        assert_eq!(v["predicateType"], OMS_PREDICATE_TYPE);
        assert_eq!(v["predicate"]["serialization"]["ignore_paths"], json!([".cache", ".git"]));
        assert_eq!(v["predicate"]["serialization"]["method"], "files");
        assert_eq!(
            v["predicate"]["resources"][0],
            json!({"name": "a/b", "algorithm": "sha256", "digest": hex::encode([2u8; 32])})
        );
        assert_eq!(
            v["predicate"]["gguf_digest"],
            json!({"contract": DIRECTORY_CONTRACT, "label": "0".repeat(64), "components": []})
        );
    }

    #[test]
    fn ignored_paths_cover_what_lies_below_them() {
        let ignore = vec![".git".to_string(), "model.sig".to_string()];
        assert!(ignored(".git", &ignore) && ignored(".git/HEAD", &ignore) && ignored("model.sig", &ignore));
        assert!(!ignored(".github2", &ignore) && !ignored("sub/.git", &ignore) && !ignored("model.sig2", &ignore));
    }

    /// The resources' digests and the `gguf_digest` label of a bundle.
    fn signed(bundle: &[u8]) -> (Vec<(String, String)>, String) {
        use base64::Engine as _;
        let b: serde_json::Value = serde_json::from_slice(bundle).unwrap();
        let payload = b["dsseEnvelope"]["payload"].as_str().unwrap();
        let st: serde_json::Value =
            serde_json::from_slice(&base64::engine::general_purpose::STANDARD.decode(payload).unwrap()).unwrap();
        let p = &st["predicate"];
        let rs = p["resources"].as_array().unwrap();
        let rs =
            rs.iter().map(|r| (r["name"].as_str().unwrap().into(), r["digest"].as_str().unwrap().into())).collect();
        (rs, p["gguf_digest"]["label"].as_str().unwrap().into())
    }

    #[test]
    fn a_file_swapped_while_signing_never_splits_the_signature_between_two_trees() {
        // a.txt is replaced (renamed over) by one of two versions, over and
        // over, while the directory is signed: each signature's label must
        // be the label of the file its resources name.
        let top = tempfile::tempdir().unwrap();
        let dir = top.path().join("m");
        std::fs::create_dir(&dir).unwrap();
        let versions = [top.path().join("v1"), top.path().join("v2")];
        std::fs::write(&versions[0], b"one").unwrap();
        std::fs::write(&versions[1], b"two").unwrap();
        std::fs::write(dir.join("a.txt"), b"one").unwrap();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let swapper = {
            let (stop, dir, top, versions) = (stop.clone(), dir.clone(), top.path().to_path_buf(), versions.clone());
            std::thread::spawn(move || {
                let tmp = top.join("tmp");
                let mut i = 0usize;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let _ = std::fs::remove_file(&tmp);
                    std::fs::hard_link(&versions[i % 2], &tmp).unwrap();
                    std::fs::rename(&tmp, dir.join("a.txt")).unwrap();
                    i += 1;
                    // Room for whole signings between swaps (a swap
                    // during one makes it fail "changed", as it should).
                    std::thread::sleep(std::time::Duration::from_micros(300));
                }
            })
        };
        let key = SigningKey::P256(p256::ecdsa::SigningKey::from_slice(&[7; 32]).unwrap());
        let label_of = |digest: &str| {
            let d: [u8; 32] = hex::decode(digest).unwrap().try_into().unwrap();
            hex::encode(Sha256::digest(crate::directory::skeleton::skeleton(&[(Kind::FILE, &b"a.txt"[..], d)])))
        };
        let (mut split, mut signed_whole) = (None, 0);
        for _ in 0..300 {
            let Ok(bundle) = sign_directory(&dir, &key, None, &OpenOptions::default()) else { continue };
            signed_whole += 1;
            let (resources, label) = signed(&bundle);
            assert_eq!(resources.len(), 1);
            if label_of(&resources[0].1) != label {
                split = Some(resources);
                break;
            }
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        swapper.join().unwrap();
        assert!(split.is_none(), "a signature's resources {split:?} and its label describe two different trees");
        assert!(signed_whole > 0, "no signing finished: the test proved nothing");
    }

    #[test]
    fn a_url_s_model_is_named_by_its_last_segment_or_its_repository_s_last_component() {
        for (url, name) in [
            ("s3://bucket/models/tiny/", "tiny"),
            ("s3://bucket/", "bucket"),
            ("https://host:8443/", "host:8443"),
            ("oci://127.0.0.1:5000/pack/tiny:v1", "tiny"),
            ("oci://registry.example/org/team/tiny@sha256:00ff", "tiny"),
            ("oci://registry.example/org/tiny:v1@sha256:00ff", "tiny"),
            ("oci://registry.example/tiny", "tiny"),
        ] {
            assert_eq!(url_model_name(&RemoteUrl::parse(url).unwrap()), name, "{url}");
        }
    }

    #[test]
    fn an_oci_url_without_an_opener_is_not_refused_as_no_prefix() {
        // An `oci://` reference ends in its tag, not `/`: what it holds
        // decides (here: no opener in this build, said so).
        let url = RemoteUrl::parse("oci://127.0.0.1:1/pack/tiny:v1").unwrap();
        let e = open_prefix(&url, crate::source::ReadMode::Pread).unwrap_err().to_string();
        assert!(e.contains("feature `remote`") && !e.contains("prefix ending"), "{e}");
        let url = RemoteUrl::parse("s3://bucket/model/m.gguf").unwrap();
        let e = open_prefix(&url, crate::source::ReadMode::Pread).unwrap_err().to_string();
        assert!(e.contains("a prefix ending in `/`"), "{e}");
    }

    #[test]
    fn ed25519_is_refused() {
        let key = SigningKey::Ed25519(ed25519_dalek::SigningKey::from_bytes(&[1; 32]));
        let e = sign_statement(b"{}", &key).unwrap_err().to_string();
        assert!(e.contains("ECDSA key (P-256 or P-384)"), "{e}");
    }
}
