//! The Python side of the interop tests: the venv `scripts/setup-python.sh`
//! makes (at `$GGUF_DIGEST_VENV` or `~/.cache/gguf-digest/venv`), what
//! `scripts/interop/prereq.py` found in it, and running its scripts.
//! Without it a test prints one `SKIPPED:` line and passes; under `CI=true`
//! it fails instead.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use serde_json::Value as JsonValue;

/// The venv's interpreter and what prereq.py reported.
pub struct Py {
    pub python: PathBuf,
    pub info: JsonValue,
}

pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true") || v == "1")
}

fn venv_dir() -> Result<PathBuf, String> {
    if let Some(v) = std::env::var_os("GGUF_DIGEST_VENV").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(v));
    }
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty()).ok_or("neither GGUF_DIGEST_VENV nor HOME is set")?;
    Ok(Path::new(&home).join(".cache/gguf-digest/venv"))
}

pub fn scripts() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/interop")
}

fn find() -> Result<Py, String> {
    let venv = venv_dir()?;
    let python = venv.join("bin/python");
    if !python.exists() {
        return Err(format!("no Python venv at {} (GGUF_DIGEST_VENV)", venv.display()));
    }
    let out = command(&python, &scripts().join("prereq.py"))
        .output()
        .map_err(|e| format!("cannot run {}: {e}", python.display()))?;
    if !out.status.success() {
        return Err(format!("venv {} is not ready: {}", venv.display(), String::from_utf8_lossy(&out.stderr).trim()));
    }
    let info = last_json_line(&out.stdout).map_err(|e| format!("prereq.py: {e}"))?;
    Ok(Py { python, info })
}

/// The Python side, or `None` after one `SKIPPED:` line naming `what`;
/// under CI, a panic.
pub fn prerequisites(what: &str) -> Option<&'static Py> {
    static PY: OnceLock<Result<Py, String>> = OnceLock::new();
    let found = PY.get_or_init(|| {
        let found = find();
        if let Err(why) = &found
            && !in_ci()
        {
            // Written past libtest's output capture, so it shows in a normal run.
            let _ = writeln!(std::io::stderr(), "\nSKIPPED: {what}: {why}; run scripts/setup-python.sh");
        }
        found
    });
    match found {
        Ok(py) => Some(py),
        Err(why) if in_ci() => panic!("interop prerequisite missing, and CI=true: {why}; run scripts/setup-python.sh"),
        Err(_) => None,
    }
}

/// A command running one of our scripts with the venv's Python, offline.
pub fn command(python: &Path, script: &Path) -> Command {
    let mut c = Command::new(python);
    c.arg(script)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("PYTHONIOENCODING", "utf-8")
        .env("HF_HUB_OFFLINE", "1")
        // gguf-py as installed, never a checkout's copy.
        .env("NO_LOCAL_GGUF", "1")
        .env_remove("PYTHONPATH")
        .stdin(Stdio::null());
    c
}

impl Py {
    /// Runs `scripts/interop/<script>` with `args`; its last JSON line.
    pub fn run<S: AsRef<std::ffi::OsStr>>(&self, script: &str, args: &[S]) -> JsonValue {
        let t = std::time::Instant::now();
        let out = command(&self.python, &scripts().join(script)).args(args).output().expect("runs python");
        assert!(out.status.success(), "{}", describe(script, &out));
        eprintln!("{script}: {:.1}s", t.elapsed().as_secs_f64());
        last_json_line(&out.stdout).unwrap_or_else(|e| panic!("{script}: {e}"))
    }

    /// A path prereq.py reported under `key`.
    pub fn path(&'static self, key: &str) -> &'static Path {
        Path::new(self.info[key].as_str().unwrap_or_else(|| panic!("prereq.py printed no {key}")))
    }
}

pub fn last_json_line(stdout: &[u8]) -> Result<JsonValue, String> {
    let text = String::from_utf8_lossy(stdout);
    let line = text.lines().rev().find(|l| !l.trim().is_empty()).ok_or("printed nothing")?;
    serde_json::from_str(line).map_err(|e| format!("printed no JSON ({e}): {line:.300}"))
}

pub fn describe(what: &str, out: &Output) -> String {
    let tail = |b: &[u8]| {
        let s = String::from_utf8_lossy(b).into_owned();
        let start = s.len().saturating_sub(3000);
        let start = (start..s.len()).find(|&i| s.is_char_boundary(i)).unwrap_or(s.len());
        s[start..].to_string()
    };
    format!("{what}: {}\n--- stdout ---\n{}\n--- stderr ---\n{}", out.status, tail(&out.stdout), tail(&out.stderr))
}
