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
    let stdout = io::stdout();
    let stderr = io::stderr();
    let mut code = EXIT_OK;
    for list in &lists {
        let from_stdin = list.as_os_str() == "-";
        let name = quote_name(if from_stdin { &b"standard input"[..] } else { list.as_os_str().as_encoded_bytes() });
        // A line at a time, never the whole list (`-c /dev/zero` ends at
        // its first line, too long).
        let lines = if from_stdin {
            check::read_list(&mut io::stdin().lock(), true)
        } else {
            std::fs::File::open(list)
                .map_err(crate::Error::from)
                .and_then(|f| check::read_list(&mut io::BufReader::new(f), false))
        };
        let lines = match lines {
            Ok(lines) => lines,
            Err(e) => {
                eprintln!("gguf-digest: {name}: {}", e.detail());
                code = EXIT_ERROR;
                continue;
            }
        };
        let label = |paths: &[PathBuf], emit: &mut dyn FnMut(usize, crate::Result<String>)| {
            digest_with_progress(args, paths, opts, pool, &open_model, |i, r| {
                if let (Ok((m, _)), Some(p), false) = (&r, paths.get(i), args.status) {
                    super::note_cache_use(p, m.labelled());
                }
                emit(i, r.map(|(_, d)| d.label()))
            });
        };
        let summary = verify_and_print(&lines, &name, &check_opts, label, &mut stdout.lock(), &mut stderr.lock())?;
        if !summary.passed(&check_opts) && code == EXIT_OK {
            code = EXIT_MISMATCH;
        }
    }
    stdout.lock().flush()?;
    Ok(code)
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
    let mut io_result = Ok(());
    // An entry is not printed after a warning before it failed to be.
    let mut warned = Ok(());
    let summary = check::verify_list(lines, opts, label, |c| {
        let step = match &c {
            Checked::Misformatted { .. } => {
                let r = print_line(&c, list_name, opts, out, err);
                if warned.is_ok() {
                    warned = r;
                }
                return;
            }
            Checked::Entry { .. } => {
                std::mem::replace(&mut warned, Ok(())).and_then(|()| print_line(&c, list_name, opts, out, err))
            }
        };
        if io_result.is_ok() {
            io_result = step;
        }
    });
    io_result?;
    warned?;
    print_summary(&summary, list_name, opts, err)?;
    Ok(summary)
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
