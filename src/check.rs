//! `--check`: reading a list of labels and verifying it, with GNU
//! `sha256sum -c` semantics and output.
//!
//! Line parsing follows coreutils' rules to the letter: leading blanks are
//! skipped, a leading `\` marks an escaped name (`\\`, `\n`, `\r`), comment
//! lines start with `#`, empty lines are skipped, the digest is exactly 64
//! hex digits (either case) followed by a blank, then `' '` or `'*'`, then
//! the name — or, once a list has used a single blank ("BSD reversed"
//! style), every later line must too, as GNU does to stop names with leading
//! blanks from being misread. BSD `--tag` lines (`SHA256 (f) = …`) name the
//! SHA-256 of the file, not a label, and are treated as misformatted.
//!
//! A list is read a line at a time, as `sha256sum -c` reads it, and only
//! its entries are kept; unlike GNU, a line may hold at most [`MAX_LINE`]
//! bytes, so that a list without newlines (`-c /dev/zero`) is an error at
//! its first line instead of a read that grows until memory runs out.

use std::io::{BufRead, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use crate::error::{Error, ErrorKind, Result};
use crate::output::{check_name, error_line};

/// Hex digits in a label.
pub const LABEL_HEX_LEN: usize = 64;

/// What a misformatted line is called after `LIST: LINE: ` (the command
/// and the Python API word it alike).
pub const MISFORMATTED_LINE: &str = "improperly formatted label line";

/// What a list without one well-formed line is called after `LIST: `.
pub const NO_ENTRIES: &str = "no properly formatted label lines found";

/// The label `hex` spells, lowercased, if it is exactly [`LABEL_HEX_LEN`]
/// hex digits (either case).
pub fn label_of(hex: &[u8]) -> Option<String> {
    (hex.len() == LABEL_HEX_LEN && hex.iter().all(u8::is_ascii_hexdigit))
        .then(|| String::from_utf8_lossy(hex).to_ascii_lowercase())
}

/// One line of a check list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// A label and the path it is claimed for.
    Entry {
        /// 1-based line number.
        line_no: usize,
        /// The expected label, lowercased.
        label: String,
        /// The path, unescaped.
        path: Vec<u8>,
    },
    /// A line that is neither an entry, a comment nor empty.
    Misformatted {
        /// 1-based line number.
        line_no: usize,
    },
}

/// The most bytes a line of a check list may hold, its newline not
/// counted: a label line is 67 bytes and a path, which Linux opens only
/// below `PATH_MAX` (4,096 bytes; 8,192 once escaped): 64 KiB is far past
/// any line that can name a file, and little to hold.
pub const MAX_LINE: usize = 64 << 10;

/// Reads a check list a line at a time (never whole: only its entries are
/// kept). In a list read from standard input an entry naming `-` is
/// misformatted, as in coreutils (stdin is already the list). A read error,
/// or a line longer than [`MAX_LINE`] ([`ErrorKind::ListLineTooLong`],
/// naming it by number), ends the list with that error.
pub fn read_list(list: &mut dyn BufRead, from_stdin: bool) -> Result<Vec<Line>> {
    let mut bsd_reversed = None;
    let mut lines = Vec::new();
    let mut buf = Vec::new();
    let mut line_no = 0usize;
    loop {
        buf.clear();
        // One byte past the limit tells a line that is too long.
        let limit = (MAX_LINE as u64).saturating_add(1);
        if list.take(limit).read_until(b'\n', &mut buf).map_err(Error::from)? == 0 {
            break;
        }
        line_no = line_no.saturating_add(1);
        let line = match buf.strip_suffix(b"\n") {
            Some(line) => line,
            None if buf.len() > MAX_LINE => {
                let kind = ErrorKind::ListLineTooLong { line: line_no as u64, limit: MAX_LINE };
                return Err(Error::new(kind));
            }
            // The last line, without its newline.
            None => &buf,
        };
        if line.first() == Some(&b'#') {
            continue;
        }
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            continue;
        }
        lines.push(match split_line(line, &mut bsd_reversed) {
            Some((_, path)) if from_stdin && path == b"-" => Line::Misformatted { line_no },
            Some((label, path)) => Line::Entry { line_no, label, path },
            None => Line::Misformatted { line_no },
        });
    }
    Ok(lines)
}

fn is_blank(b: Option<&u8>) -> bool {
    matches!(b, Some(b' ' | b'\t'))
}

/// coreutils' `split_3`: the label and the (unescaped) name of one line.
fn split_line(s: &[u8], bsd_reversed: &mut Option<bool>) -> Option<(String, Vec<u8>)> {
    let mut i = 0;
    while is_blank(s.get(i)) {
        i = i.saturating_add(1);
    }
    let escaped = s.get(i) == Some(&b'\\');
    if escaped {
        i = i.saturating_add(1);
    }
    let rest = s.get(i..)?;
    // The digest, one blank, and at least one more byte.
    if rest.len() < LABEL_HEX_LEN + 2 {
        return None;
    }
    let (hex, after) = rest.split_at(LABEL_HEX_LEN);
    let label = label_of(hex)?;
    if !is_blank(after.first()) {
        return None;
    }
    let after = after.get(1..)?;
    let name = if after.len() == 1 || !matches!(after.first(), Some(b' ' | b'*')) {
        if *bsd_reversed == Some(false) {
            return None;
        }
        *bsd_reversed = Some(true);
        after
    } else if *bsd_reversed != Some(true) {
        *bsd_reversed = Some(false);
        after.get(1..)?
    } else {
        after
    };
    let name = match escaped {
        true => unescape(name)?,
        // coreutils reads the name as a C string: it ends at a NUL.
        false => name.split(|&b| b == 0).next().unwrap_or(&[]).to_vec(),
    };
    Some((label, name))
}

/// coreutils' `filename_unescape`: `\\`, `\n` and `\r` only; anything else,
/// a trailing `\`, or a NUL makes the line misformatted.
fn unescape(name: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(name.len());
    let mut it = name.iter();
    while let Some(&b) = it.next() {
        match b {
            b'\\' => out.push(match it.next()? {
                b'\\' => b'\\',
                b'n' => b'\n',
                b'r' => b'\r',
                _ => return None,
            }),
            0 => return None,
            b => out.push(b),
        }
    }
    Some(out)
}

/// The `--check` flags. As in coreutils, at most one of `quiet`, `status`
/// and `warn` is in force: the command line keeps the last one given.
#[derive(Debug, Clone, Copy, Default)]
pub struct CheckOptions {
    /// Don't fail or report for files that do not exist.
    pub ignore_missing: bool,
    /// Don't print OK for each verified file.
    pub quiet: bool,
    /// Print no results or summary, only why a file could not be read and a
    /// list without any well-formed line; the exit code tells.
    pub status: bool,
    /// Misformatted lines make the check fail.
    pub strict: bool,
    /// Warn about each misformatted line.
    pub warn: bool,
}

/// The counts of one check list.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CheckSummary {
    /// Entries whose label matched.
    pub matched: usize,
    /// Entries whose label did not match.
    pub mismatched: usize,
    /// Entries whose file could not be opened, read or parsed.
    pub unreadable: usize,
    /// Misformatted lines.
    pub misformatted: usize,
    /// Entries (well-formed lines).
    pub entries: usize,
}

impl CheckSummary {
    /// True when the list verified by GNU's rules.
    pub fn passed(&self, opts: &CheckOptions) -> bool {
        self.entries > 0
            && self.matched > 0
            && self.mismatched == 0
            && self.unreadable == 0
            && !(opts.strict && self.misformatted > 0)
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Verifies one check list: `label` is called with every listed path in
/// order and answers with `(path, result)` pairs in the same order; the
/// report goes to `out` and `err` as sha256sum writes it. `list_name` is
/// the list's name as messages show it (quoted: see [`crate::output::quote_name`]).
pub fn verify_list(
    lines: &[Line],
    list_name: &str,
    opts: &CheckOptions,
    label: impl FnOnce(&[PathBuf], &mut dyn FnMut(usize, Result<String>)),
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> std::io::Result<CheckSummary> {
    let mut sum = CheckSummary::default();
    let entries: Vec<(usize, &str, &[u8])> = lines
        .iter()
        .enumerate()
        .filter_map(|(i, l)| match l {
            Line::Entry { label, path, .. } => Some((i, label.as_str(), path.as_slice())),
            Line::Misformatted { .. } => None,
        })
        .collect();
    let paths: Vec<PathBuf> = entries.iter().map(|(_, _, p)| PathBuf::from(std::ffi::OsStr::from_bytes(p))).collect();
    sum.entries = entries.len();
    let mut next_line = 0;
    let mut io_result = Ok(());
    let mut warn_misformatted = |upto: usize, sum: &mut CheckSummary, err: &mut dyn Write| -> std::io::Result<()> {
        while next_line < upto {
            if let Some(Line::Misformatted { line_no }) = lines.get(next_line) {
                sum.misformatted = sum.misformatted.saturating_add(1);
                if opts.warn {
                    writeln!(err, "gguf-digest: {list_name}: {line_no}: {MISFORMATTED_LINE}")?;
                }
            }
            next_line = next_line.saturating_add(1);
        }
        Ok(())
    };
    let mut on_result = |k: usize, r: Result<String>| {
        let Some(&(line_index, expected, name)) = entries.get(k) else {
            return;
        };
        let step = warn_misformatted(line_index.saturating_add(1), &mut sum, err)
            .and_then(|()| report(&mut sum, opts, expected, name, r, out, err));
        if io_result.is_ok() {
            io_result = step;
        }
    };
    label(&paths, &mut on_result);
    io_result?;
    warn_misformatted(lines.len(), &mut sum, err)?;

    // The order and the conditions of these lines are coreutils 9's.
    if sum.entries == 0 {
        writeln!(err, "gguf-digest: {list_name}: {NO_ENTRIES}")?;
        return Ok(sum);
    }
    if !opts.status {
        if sum.misformatted > 0 {
            let what = plural(sum.misformatted, "line is", "lines are");
            writeln!(err, "gguf-digest: WARNING: {what} improperly formatted")?;
        }
        if sum.unreadable > 0 {
            let what = plural(sum.unreadable, "listed file", "listed files");
            writeln!(err, "gguf-digest: WARNING: {what} could not be read")?;
        }
        if sum.mismatched > 0 {
            let what = plural(sum.mismatched, "computed label", "computed labels");
            writeln!(err, "gguf-digest: WARNING: {what} did NOT match")?;
        }
        if opts.ignore_missing && sum.matched == 0 {
            writeln!(err, "gguf-digest: {list_name}: no file was verified")?;
        }
    }
    Ok(sum)
}

fn report(
    sum: &mut CheckSummary,
    opts: &CheckOptions,
    expected: &str,
    name: &[u8],
    r: Result<String>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> std::io::Result<()> {
    let verdict: &[u8] = match r {
        Err(e) if opts.ignore_missing && e.is_not_found() => return Ok(()),
        Err(e) => {
            sum.unreadable = sum.unreadable.saturating_add(1);
            // Even --status says why a file could not be read, as coreutils does.
            writeln!(err, "gguf-digest: {}", error_line(&e))?;
            b"FAILED open or read"
        }
        Ok(label) if label == expected => {
            sum.matched = sum.matched.saturating_add(1);
            if opts.quiet || opts.status {
                return Ok(());
            }
            b"OK"
        }
        Ok(_) => {
            sum.mismatched = sum.mismatched.saturating_add(1);
            b"FAILED"
        }
    };
    if !opts.status {
        out.write_all(&check_name(name))?;
        out.write_all(b": ")?;
        out.write_all(verdict)?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: &str = "29c4cfb0a1382984c7b014137762148477071455cea7b047cddf205df62f9af1";

    fn entry(path: &[u8]) -> (String, Vec<u8>) {
        (H.to_string(), path.to_vec())
    }

    #[test]
    fn standard_lines() {
        let mut m = None;
        assert_eq!(split_line(format!("{H}  a b").as_bytes(), &mut m), Some(entry(b"a b")));
        assert_eq!(split_line(format!("{H} *bin").as_bytes(), &mut m), Some(entry(b"bin")));
        assert_eq!(split_line(format!("  {H}  lead").as_bytes(), &mut m), Some(entry(b"lead")));
        assert_eq!(m, Some(false));
        // Once standard, a single-blank line is misformatted.
        assert_eq!(split_line(format!("{H} x").as_bytes(), &mut m), None);
    }

    #[test]
    fn bsd_reversed_lines_keep_leading_blanks() {
        let mut m = None;
        assert_eq!(split_line(format!("{H} a").as_bytes(), &mut m), Some(entry(b"a")));
        assert_eq!(split_line(format!("{H}  a").as_bytes(), &mut m), Some(entry(b" a")));
    }

    #[test]
    fn uppercase_hex_is_accepted() {
        let mut m = None;
        let line = format!("{}  f", H.to_uppercase());
        assert_eq!(split_line(line.as_bytes(), &mut m), Some(entry(b"f")));
    }

    #[test]
    fn escapes() {
        let mut m = None;
        let line = format!("\\{H}  a\\nb\\\\c\\r");
        assert_eq!(split_line(line.as_bytes(), &mut m), Some(entry(b"a\nb\\c\r")));
        for bad in ["a\\", "a\\t"] {
            let line = format!("\\{H}  {bad}");
            assert_eq!(split_line(line.as_bytes(), &mut None), None, "{bad}");
        }
    }

    #[test]
    fn misformatted() {
        for bad in
            ["deadbeef  x".to_string(), format!("{H}x  f"), format!("g{}  f", &H[1..]), format!("SHA256 (f) = {H}")]
        {
            assert_eq!(split_line(bad.as_bytes(), &mut None), None, "{bad}");
        }
    }

    fn parse_list(list: &[u8], from_stdin: bool) -> Vec<Line> {
        read_list(&mut &list[..], from_stdin).unwrap()
    }

    #[test]
    fn list_skips_comments_and_empty_lines() {
        let list = format!("# c\n\n{H}  a\r\nbad\n");
        let lines = parse_list(list.as_bytes(), false);
        assert_eq!(parse_list(format!("{H}  -").as_bytes(), true), vec![Line::Misformatted { line_no: 1 }]);
        assert_eq!(
            lines,
            vec![
                Line::Entry { line_no: 3, label: H.to_string(), path: b"a".to_vec() },
                Line::Misformatted { line_no: 4 }
            ]
        );
        // The last line needs no newline; a final newline ends no empty line.
        assert_eq!(parse_list(format!("\n{H}  a").as_bytes(), false).len(), 1);
        assert_eq!(parse_list(b"x\n\n", false), vec![Line::Misformatted { line_no: 1 }]);
    }

    #[test]
    fn a_line_may_hold_max_line_bytes_and_no_more() {
        let name = "n".repeat(MAX_LINE - LABEL_HEX_LEN - 2);
        let ok = format!("{H}  {name}\n{H}  {name}");
        let lines = parse_list(ok.as_bytes(), false);
        assert!(
            matches!(&lines[..], [Line::Entry { line_no: 1, .. }, Line::Entry { line_no: 2, path, .. }] if path.len() == name.len())
        );
        for long in [format!("{H}  a\n{H}  {name}x\n"), format!("{H}  a\n\n{H}  {name}x")] {
            let e = read_list(&mut long.as_bytes(), false).unwrap_err();
            let line = if long.contains("\n\n") { 3 } else { 2 };
            assert!(matches!(e.kind(), ErrorKind::ListLineTooLong { line: l, limit: MAX_LINE } if *l == line), "{e}");
            assert_eq!(e.to_string(), format!("{line}: line longer than 65536 bytes (the most a label line may hold)"));
        }
    }
}
