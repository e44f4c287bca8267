//! Interop for `hf:` references: a Hugging Face cache written with
//! `huggingface_hub`'s own functions (`scripts/interop/hf_cache.py`:
//! `repo_folder_name`, `_get_pointer_path`, `_create_symlink`,
//! `_cache_commit_hash_for_specific_revision`, blobs named by SHA-256 and
//! Git SHA-1, `refs/pr/1` as it writes it), read back by its
//! `scan_cache_dir()` and `try_to_load_from_cache()`: every revision the
//! scan reports resolves to the snapshot it reports, by ref and by commit,
//! to the label of that snapshot directory; `hf:` alone lists exactly the
//! model snapshots the scan reports a ref for; and where
//! `try_to_load_from_cache` finds a revision, `hf:` finds the same folder.
use crate::common;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use common::gguf_digest_bin;
use common::py::{describe, prerequisites};

const WHAT: &str = "the Hugging Face cache interop tests (tests/interop/hf.rs)";

fn gd(cache: &Path, args: &[&str]) -> Output {
    Command::new(gguf_digest_bin())
        .args(args)
        .env("HF_HUB_CACHE", cache)
        .stdin(Stdio::null())
        .output()
        .expect("runs gguf-digest")
}

fn label(cache: &Path, arg: &str) -> String {
    let out = gd(cache, &[arg]);
    assert!(out.status.success(), "{}", describe(&format!("gguf-digest {arg}"), &out));
    let t = String::from_utf8_lossy(&out.stdout).to_string();
    let (l, rest) = t.split_once("  ").expect("a sums line");
    assert_eq!(rest, format!("{arg}\n"));
    l.to_string()
}

#[test]
fn references_resolve_as_huggingface_hub_reads_its_cache() {
    let Some(py) = prerequisites(WHAT) else { return };
    let t = tempfile::Builder::new().prefix("gguf-digest-hf-interop-").tempdir().unwrap();
    let cache = t.path().join("hub");
    let scan = py.run("hf_cache.py", &[&cache]);
    assert_eq!(scan["warnings"].as_array().unwrap().len(), 0, "the cache is sound for huggingface_hub: {scan}");
    let mut expected_listing = Vec::new();
    let mut checked = 0;
    for repo in scan["repos"].as_array().unwrap() {
        let id = repo["id"].as_str().unwrap();
        for rev in repo["revisions"].as_array().unwrap() {
            let (commit, snapshot) = (rev["commit"].as_str().unwrap(), rev["snapshot"].as_str().unwrap());
            let refs: Vec<&str> = rev["refs"].as_array().unwrap().iter().map(|r| r.as_str().unwrap()).collect();
            if repo["type"] != "model" {
                let out = gd(&cache, &[&format!("hf:{id}")]);
                assert_eq!(out.status.code(), Some(2), "hf: names models only: {}", describe("gguf-digest", &out));
                continue;
            }
            let want = label(&cache, snapshot);
            assert_eq!(label(&cache, &format!("hf:{id}@{commit}")), want, "{id}@{commit}");
            for r in &refs {
                assert_eq!(label(&cache, &format!("hf:{id}@{r}")), want, "{id}@{r} is {snapshot}");
                checked += 1;
            }
            if refs.contains(&"main") {
                assert_eq!(label(&cache, &format!("hf:{id}")), want, "hf:{id} is main's snapshot");
                expected_listing.push(format!("hf:{id}"));
            } else if let Some(least) = refs.iter().min() {
                expected_listing.push(format!("hf:{id}@{least}"));
            }
        }
    }
    assert!(checked >= 6, "every ref of the scan was checked ({checked})");
    expected_listing.sort();
    let out = gd(&cache, &["hf:"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe("gguf-digest hf:", &out));
    let listed: Vec<String> =
        String::from_utf8_lossy(&out.stdout).lines().map(|l| l.split_once("  ").unwrap().1.to_string()).collect();
    assert_eq!(listed, expected_listing);
    assert_eq!(listed, ["hf:org/model", "hf:org/model@refs/pr/1", "hf:org/tags-only@v10", "hf:solo"]);
    // try_to_load_from_cache's folder for each reference is the one hf: labels.
    for (reference, folder) in scan["loaded"].as_object().unwrap() {
        let folder = folder.as_str().unwrap_or_else(|| panic!("huggingface_hub finds {reference}"));
        assert_eq!(label(&cache, reference), label(&cache, folder), "{reference} is {folder}");
    }
}
