//! The password of an encrypted private key: from the environment
//! (`GGUF_DIGEST_PASSWORD`; for cosign's key files `COSIGN_PASSWORD` too,
//! as cosign reads it) or, when standard input is a terminal, typed at a
//! prompt with echo off. Never from a flag: a flag's value is in every
//! process listing and shell history.

use crate::provenance::ProvenanceErrorKind;
use std::io::{BufRead as _, Write as _};

use zeroize::Zeroizing;

use crate::error::{Error, ErrorKind, Result};
use crate::provenance::private_keys::Encrypted;

/// The variable every encrypted key's password may come from.
pub const PASSWORD_VAR: &str = "GGUF_DIGEST_PASSWORD";

/// The variable cosign reads a cosign key file's password from.
pub const COSIGN_PASSWORD_VAR: &str = "COSIGN_PASSWORD";

/// The most bytes of a typed password kept.
const MAX_TYPED: u64 = 4096;

/// The password from the environment, if a variable names one: an empty
/// value is an empty password (cosign's keys may have one).
pub fn from_env(kind: Encrypted, var: &dyn Fn(&str) -> Option<String>) -> Option<Zeroizing<String>> {
    if let Some(p) = var(PASSWORD_VAR) {
        return Some(Zeroizing::new(p));
    }
    if kind == Encrypted::Cosign {
        return var(COSIGN_PASSWORD_VAR).map(Zeroizing::new);
    }
    None
}

/// The password for a key file named `what`: from the environment, else
/// typed at a prompt (on standard error) when standard input is a
/// terminal, else an error saying where it may come from.
pub fn obtain(kind: Encrypted, what: &str) -> Result<Zeroizing<String>> {
    if let Some(p) = from_env(kind, &|v| std::env::var(v).ok()) {
        return Ok(p);
    }
    let stdin = std::io::stdin();
    if !rustix::termios::isatty(&stdin) {
        let vars = if kind == Encrypted::Cosign {
            format!("{PASSWORD_VAR} or {COSIGN_PASSWORD_VAR}")
        } else {
            PASSWORD_VAR.to_string()
        };
        return Err(Error::new(ProvenanceErrorKind::PrivateKey(format!(
            "the key is encrypted and no password was given: set {vars} (there is no terminal to ask on)"
        ))));
    }
    prompt(&stdin, &format!("Password for {what}: "))
}

/// Restores the terminal's modes when dropped, however the read ends.
struct EchoOff<'a> {
    fd: &'a std::io::Stdin,
    saved: rustix::termios::Termios,
}

impl Drop for EchoOff<'_> {
    fn drop(&mut self) {
        let _ = rustix::termios::tcsetattr(self.fd, rustix::termios::OptionalActions::Now, &self.saved);
    }
}

fn prompt(stdin: &std::io::Stdin, text: &str) -> Result<Zeroizing<String>> {
    use rustix::termios::{LocalModes, OptionalActions, tcgetattr, tcsetattr};
    let io = |e: std::io::Error| Error::new(ErrorKind::Io(e));
    let saved = tcgetattr(stdin).map_err(|e| io(e.into()))?;
    let mut quiet = saved.clone();
    quiet.local_modes.remove(LocalModes::ECHO);
    quiet.local_modes.insert(LocalModes::ECHONL);
    let mut stderr = std::io::stderr().lock();
    stderr.write_all(text.as_bytes()).and_then(|()| stderr.flush()).map_err(io)?;
    tcsetattr(stdin, OptionalActions::Now, &quiet).map_err(|e| io(e.into()))?;
    let _restore = EchoOff { fd: stdin, saved };
    let mut line = Zeroizing::new(String::new());
    std::io::Read::take(stdin.lock(), MAX_TYPED).read_line(&mut line).map_err(io)?;
    let typed = line.strip_suffix('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)).unwrap_or(&line);
    Ok(Zeroizing::new(typed.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ours_first_and_cosigns_only_for_cosign_files() {
        let both = |v: &str| Some(format!("from {v}"));
        assert_eq!(from_env(Encrypted::Pkcs8, &both).unwrap().as_str(), "from GGUF_DIGEST_PASSWORD");
        let cosign_only = |v: &str| (v == COSIGN_PASSWORD_VAR).then(String::new);
        assert!(from_env(Encrypted::Pkcs8, &cosign_only).is_none());
        assert_eq!(from_env(Encrypted::Cosign, &cosign_only).unwrap().as_str(), "");
        assert!(from_env(Encrypted::Cosign, &|_| None).is_none());
    }
}
