//! `--check`: reading a list of labels and verifying it, with GNU
//! `sha256sum -c` semantics. What each line came to is handed back
//! ([`Checked`]): the command prints it as `sha256sum -c` does, Python
//! turns it into values.
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

use std::io::{BufRead, Read};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use crate::error::{Error, ErrorKind, Result};

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
    let mut reader = ListReader::new(list, from_stdin);
    let mut lines = Vec::new();
    while let Some(line) = reader.next_line()? {
        lines.push(line);
    }
    Ok(lines)
}

/// A check list read one line at a time, holding one line and the list's
/// style (standard or BSD reversed): what [`read_list`] collects, and what
/// `--check` reads a window of lines at a time from, so that its memory
/// does not grow with the list.
pub struct ListReader<'a> {
    list: &'a mut dyn BufRead,
    from_stdin: bool,
    bsd_reversed: Option<bool>,
    buf: Vec<u8>,
    line_no: usize,
}

impl<'a> ListReader<'a> {
    /// A reader of `list`; `from_stdin` as for [`read_list`].
    pub fn new(list: &'a mut dyn BufRead, from_stdin: bool) -> Self {
        ListReader { list, from_stdin, bsd_reversed: None, buf: Vec::new(), line_no: 0 }
    }

    /// The next line that is not a comment or empty, `None` at the list's
    /// end; errors as [`read_list`]'s (after one, the list is not read on).
    pub fn next_line(&mut self) -> Result<Option<Line>> {
        loop {
            self.buf.clear();
            // One byte past the limit tells a line that is too long.
            let limit = (MAX_LINE as u64).saturating_add(1);
            if (&mut *self.list).take(limit).read_until(b'\n', &mut self.buf).map_err(Error::from)? == 0 {
                return Ok(None);
            }
            self.line_no = self.line_no.saturating_add(1);
            let line_no = self.line_no;
            let line = match self.buf.strip_suffix(b"\n") {
                Some(line) => line,
                None if self.buf.len() > MAX_LINE => {
                    let kind = ErrorKind::ListLineTooLong { line: line_no as u64, limit: MAX_LINE };
                    return Err(Error::new(kind));
                }
                // The last line, without its newline.
                None => &self.buf,
            };
            if line.first() == Some(&b'#') {
                continue;
            }
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if line.is_empty() {
                continue;
            }
            return Ok(Some(match split_line(line, &mut self.bsd_reversed) {
                Some((_, path)) if self.from_stdin && path == b"-" => Line::Misformatted { line_no },
                Some((label, path)) => Line::Entry { line_no, label, path },
                None => Line::Misformatted { line_no },
            }));
        }
    }
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
    /// Adds the counts of another part of the same list (`--check` verifies
    /// a long list a window at a time).
    pub fn add(&mut self, other: &CheckSummary) {
        self.matched = self.matched.saturating_add(other.matched);
        self.mismatched = self.mismatched.saturating_add(other.mismatched);
        self.unreadable = self.unreadable.saturating_add(other.unreadable);
        self.misformatted = self.misformatted.saturating_add(other.misformatted);
        self.entries = self.entries.saturating_add(other.entries);
    }

    /// True when the list verified by GNU's rules.
    pub fn passed(&self, opts: &CheckOptions) -> bool {
        self.entries > 0
            && self.matched > 0
            && self.mismatched == 0
            && self.unreadable == 0
            && !(opts.strict && self.misformatted > 0)
    }
}

/// What became of one entry of a list.
#[derive(Debug)]
pub enum Verdict {
    /// The file's label is the one listed (`OK`).
    Matched,
    /// The file was labelled, with another label (`FAILED`).
    Mismatched {
        /// The label it has.
        actual: String,
    },
    /// The file could not be opened, read or labelled (`FAILED open or
    /// read`): counted in [`CheckSummary::unreadable`].
    Unreadable(Error),
    /// The file does not exist and [`CheckOptions::ignore_missing`] is
    /// set: neither counted nor reported.
    Missing(Error),
}

/// One line of a list, checked: what [`verify_list`] hands on for every line
/// that is not a comment or empty, in the list's order.
#[derive(Debug)]
pub enum Checked<'a> {
    /// A line that is no entry ([`CheckSummary::misformatted`]).
    Misformatted {
        /// 1-based line number.
        line_no: usize,
    },
    /// An entry and its verdict.
    Entry {
        /// Its place among the list's entries: the index `label` was asked
        /// for it by.
        index: usize,
        /// 1-based line number.
        line_no: usize,
        /// The label listed for it, lowercased.
        expected: &'a str,
        /// The path, unescaped.
        path: &'a [u8],
        /// What its file's label said.
        verdict: Verdict,
    },
}

/// Verifies one check list: `label` is called once with every listed path
/// in order and answers with `(index, result)` pairs in the same order;
/// `on_line` is handed every line as its turn comes (a misformatted line
/// just before the entry after it, the entries as their results arrive),
/// so a caller can print each as `sha256sum -c` does while the rest is
/// still being labelled. Returns the counts by which the list passes or
/// fails ([`CheckSummary::passed`]).
pub fn verify_list(
    lines: &[Line],
    opts: &CheckOptions,
    label: impl FnOnce(&[PathBuf], &mut dyn FnMut(usize, Result<String>)),
    on_line: impl FnMut(Checked<'_>),
) -> CheckSummary {
    let entries: Vec<(usize, usize, &str, &[u8])> = lines
        .iter()
        .enumerate()
        .filter_map(|(i, l)| match l {
            Line::Entry { line_no, label, path } => Some((i, *line_no, label.as_str(), path.as_slice())),
            Line::Misformatted { .. } => None,
        })
        .collect();
    let paths: Vec<PathBuf> = entries.iter().map(|(.., p)| PathBuf::from(std::ffi::OsStr::from_bytes(p))).collect();
    let mut tally =
        Tally { lines, next_line: 0, sum: CheckSummary { entries: entries.len(), ..CheckSummary::default() }, on_line };
    label(&paths, &mut |index, r| {
        let Some(&(line_index, line_no, expected, path)) = entries.get(index) else {
            return;
        };
        tally.misformatted_before(line_index.saturating_add(1));
        let verdict = tally.verdict(opts, expected, r);
        (tally.on_line)(Checked::Entry { index, line_no, expected, path, verdict });
    });
    tally.misformatted_before(lines.len());
    tally.sum
}

/// [`verify_list`]'s running state: the counts, and how far the list's lines
/// were handed on.
struct Tally<'a, F> {
    lines: &'a [Line],
    next_line: usize,
    sum: CheckSummary,
    on_line: F,
}

impl<F: FnMut(Checked<'_>)> Tally<'_, F> {
    /// Counts and hands on the misformatted lines before line index `upto`.
    fn misformatted_before(&mut self, upto: usize) {
        while self.next_line < upto {
            if let Some(&Line::Misformatted { line_no }) = self.lines.get(self.next_line) {
                self.sum.misformatted = self.sum.misformatted.saturating_add(1);
                (self.on_line)(Checked::Misformatted { line_no });
            }
            self.next_line = self.next_line.saturating_add(1);
        }
    }

    /// The verdict on an entry whose file's labelling gave `r`, counted.
    fn verdict(&mut self, opts: &CheckOptions, expected: &str, r: Result<String>) -> Verdict {
        let sum = &mut self.sum;
        match r {
            Err(e) if opts.ignore_missing && e.is_not_found() => Verdict::Missing(e),
            Err(e) => {
                sum.unreadable = sum.unreadable.saturating_add(1);
                Verdict::Unreadable(e)
            }
            Ok(label) if label == expected => {
                sum.matched = sum.matched.saturating_add(1);
                Verdict::Matched
            }
            Ok(actual) => {
                sum.mismatched = sum.mismatched.saturating_add(1);
                Verdict::Mismatched { actual }
            }
        }
    }
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

    /// What `verify` hands on for each line of a list, in the list's
    /// order, and what it counts (the command prints these, Python turns
    /// them into values).
    #[test]
    fn verify_hands_on_every_line_in_order_with_its_verdict() {
        let other = "0".repeat(LABEL_HEX_LEN);
        let list = format!("bad\n{H}  ok\n{H}  other\nworse\n{H}  gone\n{H}  unreadable\ntrailing\n");
        let lines = parse_list(list.as_bytes(), false);
        let label = |paths: &[PathBuf], emit: &mut dyn FnMut(usize, Result<String>)| {
            let names: Vec<&str> = paths.iter().map(|p| p.to_str().unwrap()).collect();
            assert_eq!(names, ["ok", "other", "gone", "unreadable"]);
            emit(0, Ok(H.to_string()));
            emit(1, Ok(other.clone()));
            emit(2, Err(Error::from(std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"))));
            emit(3, Err(Error::from(std::io::Error::other("cannot"))));
        };
        for ignore_missing in [false, true] {
            let mut seen = Vec::new();
            let opts = CheckOptions { ignore_missing, ..CheckOptions::default() };
            let sum = verify_list(&lines, &opts, label, |c| {
                seen.push(match c {
                    Checked::Misformatted { line_no } => format!("{line_no}: misformatted"),
                    Checked::Entry { index, line_no, expected, path, verdict } => {
                        assert_eq!(expected, H);
                        let path = String::from_utf8_lossy(path);
                        let verdict = match verdict {
                            Verdict::Matched => "matched".to_string(),
                            Verdict::Mismatched { actual } => format!("mismatched {}", &actual[..4]),
                            Verdict::Unreadable(e) => format!("unreadable: {e}"),
                            Verdict::Missing(_) => "missing".to_string(),
                        };
                        format!("{line_no}: #{index} {path} {verdict}")
                    }
                })
            });
            let gone = if ignore_missing { "missing" } else { "unreadable: no such file" };
            let mut want =
                vec!["1: misformatted".to_string(), "2: #0 ok matched".into(), "3: #1 other mismatched 0000".into()];
            want.extend(["4: misformatted".to_string(), format!("5: #2 gone {gone}")]);
            want.extend(["6: #3 unreadable unreadable: cannot".to_string(), "7: misformatted".into()]);
            assert_eq!(seen, want);
            let unreadable = if ignore_missing { 1 } else { 2 };
            let want = CheckSummary { matched: 1, mismatched: 1, unreadable, misformatted: 3, entries: 4 };
            assert_eq!(sum, want);
            assert!(!sum.passed(&opts));
        }
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
