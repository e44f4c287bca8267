//! `--check` (and `verify`'s report): the library's verdicts printed as
//! `sha256sum -c` prints them, and the exit status they make.

use std::io::{self, Write};
use std::path::PathBuf;

use crate::check::{self, CheckOptions, CheckSummary, Checked, Line, MISFORMATTED_LINE, NO_ENTRIES, Verdict};
use crate::output::{check_name, error_line, quote_name};
use crate::{BatchOptions, open_model};

use super::{Args, EXIT_ERROR, EXIT_MISMATCH, EXIT_OK, digest_with_progress};

/// Runs `--check` over every list named (none: standard input).
pub(super) fn run_check(args: &Args, opts: &BatchOptions, pool: &rayon::ThreadPool) -> io::Result<u8> {
    let check_opts = CheckOptions {
        ignore_missing: args.ignore_missing,
        quiet: args.quiet,
        status: args.status,
        strict: args.strict,
        warn: args.warn,
    };
    let lists = if args.files.is_empty() { vec![PathBuf::from("-")] } else { args.files.clone() };
    let mut code = EXIT_OK;
    for list in &lists {
        let from_stdin = list.as_os_str() == "-";
        let name = quote_name(if from_stdin { &b"standard input"[..] } else { list.as_os_str().as_encoded_bytes() });
        // A line at a time, never the whole list (`-c /dev/zero` ends at
        // its first line, too long), and verified a window at a time.
        let checked = if super::is_url(list) {
            // Read as a path, it would be a local file of that spelling.
            eprintln!(
                "gguf-digest: {name}: a list is read from a file or standard input, not a URL (curl -s URL | gguf-digest -c)"
            );
            code = EXIT_ERROR;
            continue;
        } else if from_stdin {
            check_list(&mut io::stdin().lock(), true, &name, &check_opts, args, opts, pool)
        } else {
            match std::fs::File::open(list) {
                Ok(f) => check_list(&mut io::BufReader::new(f), false, &name, &check_opts, args, opts, pool),
                Err(e) => Ok(Err(crate::Error::from(e))),
            }
        };
        match checked? {
            Ok(summary) if !summary.passed(&check_opts) && code == EXIT_OK => code = EXIT_MISMATCH,
            Ok(_) => {}
            Err(e) => {
                eprintln!("gguf-digest: {name}: {}", e.detail());
                code = EXIT_ERROR;
            }
        }
    }
    io::stdout().lock().flush()?;
    Ok(code)
}

/// The most lines `--check` holds at once: a window of a list is read,
/// its files labelled in parallel, its verdicts printed in order, and it is
/// dropped before the next is read, so memory does not grow with the list
/// (issue #31: 10⁶ lines once held 270 MB). Large enough that the pool
/// stays busy across a window's end.
const WINDOW_LINES: usize = 4096;

/// One list of `--check`, read and verified a window of [`WINDOW_LINES`]
/// at a time, then its summary. `Ok(Err(e))`: the list could not be read
/// (a read error, a line too long), which ends it without a summary: a
/// window is labelled only once it was read whole, so a list that fails
/// within its first window is refused before any file is read; the
/// verdicts of windows before the failure are printed, as `sha256sum -c`
/// prints the lines before one it cannot read. `Err`: a failed write.
fn check_list(
    list: &mut dyn io::BufRead,
    from_stdin: bool,
    list_name: &str,
    check_opts: &CheckOptions,
    args: &Args,
    opts: &BatchOptions,
    pool: &rayon::ThreadPool,
) -> io::Result<crate::Result<CheckSummary>> {
    let stdout = io::stdout();
    let stderr = io::stderr();
    let (mut out, mut err) = (stdout.lock(), stderr.lock());
    let mut reader = check::ListReader::new(list, from_stdin);
    let mut printer = Printer { io_result: Ok(()), warned: Ok(()) };
    let mut summary = CheckSummary::default();
    let mut window = Vec::with_capacity(WINDOW_LINES);
    loop {
        window.clear();
        while window.len() < WINDOW_LINES {
            match reader.next_line() {
                Ok(Some(line)) => window.push(hide_credentials(line)),
                Ok(None) => break,
                Err(e) => return printer.finish().map(|()| Err(e)),
            }
        }
        if window.is_empty() {
            break;
        }
        let label = |paths: &[PathBuf], emit: &mut dyn FnMut(usize, crate::Result<String>)| {
            digest_with_progress(args, paths, opts, pool, &open_model, |i, r| {
                if let (Ok((m, _)), Some(p), false) = (&r, paths.get(i), args.status) {
                    super::note_cache_use(p, m.labelled());
                }
                emit(i, r.map(|(_, d)| d.label()))
            });
        };
        summary.add(&printer.verify(&window, list_name, check_opts, label, &mut out, &mut err));
    }
    printer.finish()?;
    print_summary(&summary, list_name, check_opts, &mut err)?;
    Ok(Ok(summary))
}

/// `line` as the rest of the check sees it: a URL's credentials and query
/// kept for the opener alone (as the command line's are: docs/adr/0044),
/// so that no verdict or error prints them.
#[cfg(feature = "remote")]
pub(super) fn hide_credentials(line: Line) -> Line {
    match line {
        Line::Entry { line_no, label, path } => {
            use std::os::unix::ffi::{OsStrExt as _, OsStringExt as _};
            let shown = crate::remote::hide_credentials(std::ffi::OsStr::from_bytes(&path));
            Line::Entry { line_no, label, path: shown.into_vec() }
        }
        other => other,
    }
}

/// Without URL inputs there are no credentials to hide.
#[cfg(not(feature = "remote"))]
pub(super) fn hide_credentials(line: Line) -> Line {
    line
}

/// [`check::verify_list`], each line's verdict printed as it comes (results to
/// `out`, warnings and why a file could not be read to `err`), then the
/// summary. `list_name` is the list as messages show it (quoted: see
/// [`quote_name`]). A failed write stops nothing but the printing: the
/// first such error is returned once the list is done, before its summary.
pub(super) fn verify_and_print(
    lines: &[Line],
    list_name: &str,
    opts: &CheckOptions,
    label: impl FnOnce(&[PathBuf], &mut dyn FnMut(usize, crate::Result<String>)),
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> io::Result<CheckSummary> {
    let mut printer = Printer { io_result: Ok(()), warned: Ok(()) };
    let summary = printer.verify(lines, list_name, opts, label, out, err);
    printer.finish()?;
    print_summary(&summary, list_name, opts, err)?;
    Ok(summary)
}

/// Printing one list's verdicts, across its windows: the first failed
/// write, kept until the list is done.
struct Printer {
    io_result: io::Result<()>,
    /// An entry is not printed after a warning before it failed to be.
    warned: io::Result<()>,
}

impl Printer {
    /// [`check::verify_list`] over `lines`, each verdict printed as it comes.
    fn verify(
        &mut self,
        lines: &[Line],
        list_name: &str,
        opts: &CheckOptions,
        label: impl FnOnce(&[PathBuf], &mut dyn FnMut(usize, crate::Result<String>)),
        out: &mut dyn Write,
        err: &mut dyn Write,
    ) -> CheckSummary {
        check::verify_list(lines, opts, label, |c| {
            let step = match &c {
                Checked::Misformatted { .. } => {
                    let r = print_line(&c, list_name, opts, out, err);
                    if self.warned.is_ok() {
                        self.warned = r;
                    }
                    return;
                }
                Checked::Entry { .. } => {
                    std::mem::replace(&mut self.warned, Ok(())).and_then(|()| print_line(&c, list_name, opts, out, err))
                }
            };
            if self.io_result.is_ok() {
                self.io_result = step;
            }
        })
    }

    /// The first failed write, once the list is done.
    fn finish(&mut self) -> io::Result<()> {
        std::mem::replace(&mut self.io_result, Ok(()))?;
        std::mem::replace(&mut self.warned, Ok(()))
    }
}

/// One line's verdict as `sha256sum -c` prints it: `NAME: OK` (not with
/// `--quiet`), `NAME: FAILED`, `NAME: FAILED open or read` after why (that
/// reason even with `--status`), a misformatted line's warning with
/// `--warn`; nothing for a missing file with `--ignore-missing`.
fn print_line(
    c: &Checked<'_>,
    list_name: &str,
    opts: &CheckOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> io::Result<()> {
    let (path, verdict) = match c {
        Checked::Misformatted { line_no } if opts.warn => {
            return writeln!(err, "gguf-digest: {list_name}: {line_no}: {MISFORMATTED_LINE}");
        }
        Checked::Misformatted { .. } => return Ok(()),
        Checked::Entry { path, verdict, .. } => (path, verdict),
    };
    let word: &[u8] = match verdict {
        Verdict::Missing(_) => return Ok(()),
        Verdict::Unreadable(e) => {
            // Even --status says why a file could not be read, as coreutils does.
            writeln!(err, "gguf-digest: {}", error_line(e))?;
            b"FAILED open or read"
        }
        Verdict::Matched if opts.quiet || opts.status => return Ok(()),
        Verdict::Matched => b"OK",
        Verdict::Mismatched { .. } => b"FAILED",
    };
    if !opts.status {
        out.write_all(&check_name(path))?;
        out.write_all(b": ")?;
        out.write_all(word)?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The lines after a list: the order and the conditions are coreutils 9's.
fn print_summary(sum: &CheckSummary, list_name: &str, opts: &CheckOptions, err: &mut dyn Write) -> io::Result<()> {
    if sum.entries == 0 {
        return writeln!(err, "gguf-digest: {list_name}: {NO_ENTRIES}");
    }
    if opts.status {
        return Ok(());
    }
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
    Ok(())
}
