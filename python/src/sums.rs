//! Sums lists: `check` (a `--check` list verified by its rules) and
//! `relabel`, which `verify_statement` shares (a statement's subjects
//! checked as a list's entries are).

use super::*;

/// One checked entry: (line or subject number, name, expected, actual, error).
pub(crate) type Row = (usize, OsString, String, Option<String>, Option<Py<PyAny>>);

/// Verifies `lines` by `--check`'s rules (the library's `check::verify_list`),
/// a file listed several times labelled once, as `verify` does: the counts,
/// and one row per entry (an entry whose file does not exist left out with
/// `ignore_missing`). `located`: where each entry is read from, when that
/// is not its name (a statement's subjects).
pub(crate) fn relabel(
    py: Python<'_>,
    lines: &[Line],
    opts: &CheckOptions,
    read: Read,
    via: Via<'_>,
    located: Option<&[PathBuf]>,
) -> PyResult<(CheckSummary, Vec<Row>)> {
    // A URL named with credentials (a list's line, a statement's subject)
    // is read with them and shown without, in rows and errors alike.
    let lines: Vec<Line> = lines.iter().map(hidden_line).collect();
    let lines = lines.as_slice();
    let located: Option<Vec<PathBuf>> = located.map(|l| l.iter().cloned().map(remote::hidden).collect());
    let located = located.as_deref();
    let mut labelled = Ok(());
    let label = |paths: &[PathBuf], emit: &mut dyn FnMut(usize, gguf_digest::Result<String>)| {
        let paths = located.unwrap_or(paths);
        if paths.is_empty() {
            return;
        }
        let (unique, of) = verify::distinct(paths);
        let results = match label_all(py, &unique, read.clone(), via, |_, d| d.label()) {
            Ok(results) => results,
            Err(e) => {
                labelled = Err(e);
                return;
            }
        };
        for (i, &u) in of.iter().enumerate() {
            emit(
                i,
                match results.get(u) {
                    Some(Ok(label)) => Ok(label.clone()),
                    Some(Err(e)) => Err(e.repeat()),
                    None => Err(gguf_digest::Error::internal("a listed file was not labelled")),
                },
            );
        }
    };
    let mut rows = Vec::new();
    let summary = check_list(lines, opts, label, |c| {
        let Checked::Entry { index, line_no, expected, path, verdict } = c else { return };
        let name = OsString::from_vec(path.to_vec());
        let (actual, failure) = match verdict {
            Verdict::Missing(_) => return,
            Verdict::Matched => (Some(expected.to_string()), None),
            Verdict::Mismatched { actual } => (Some(actual), None),
            Verdict::Unreadable(e) => {
                let read_from = located.and_then(|l| l.get(index)).cloned().unwrap_or_else(|| PathBuf::from(&name));
                (None, Some(error(py, &e, Some(read_from.as_path())).into_value(py).into_any()))
            }
        };
        rows.push((line_no, name, expected.to_string(), actual, failure));
    });
    labelled?;
    Ok((summary, rows))
}

/// `line` with its path as [`remote::hidden`] shows it.
fn hidden_line(line: &Line) -> Line {
    match line {
        Line::Entry { line_no, label, path } => Line::Entry {
            line_no: *line_no,
            label: label.clone(),
            path: remote::hidden(PathBuf::from(OsString::from_vec(path.clone()))).into_os_string().into_vec(),
        },
        Line::Misformatted { .. } => line.clone(),
    }
}

/// `gguf_digest.Error` about a label list, worded as `--check` words it
/// (`LIST: what`).
fn list_error(py: Python<'_>, sums: &Path, what: &str) -> PyErr {
    let name = quote_name(sums.as_os_str().as_encoded_bytes());
    plain_error(py, format!("{name}: {what}"), Some(sums))
}

/// Verifies a list of labels with `--check`'s rules: (misformatted lines
/// skipped, one result per entry).
#[pyfunction]
#[pyo3(signature = (sums, threads=None, ignore_missing=false, strict=false, join_shards=true, mmap=true, verify_blobs=false, cache=None, allow_http=false, connections=None, ca_file=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn check(
    py: Python<'_>,
    sums: PathBuf,
    threads: Option<usize>,
    ignore_missing: bool,
    strict: bool,
    join_shards: bool,
    mmap: bool,
    verify_blobs: bool,
    cache: Option<bool>,
    allow_http: bool,
    connections: Option<usize>,
    ca_file: Option<PathBuf>,
) -> PyResult<(usize, Vec<Row>)> {
    // The command reads `-` as standard input; here it would be the
    // interpreter's, so it is refused as `open_in_python` refuses a model `-`.
    if sums.as_os_str().as_encoded_bytes() == b"-" {
        return Err(list_error(
            py,
            &sums,
            "standard input is not read by the Python API; pass a file (gguf-digest -c reads '-')",
        ));
    }
    // Read without the GIL (a list may be a FIFO or on a slow mount), a
    // line at a time as the command reads it.
    let lines = detached(py, || {
        std::fs::File::open(&sums)
            .map_err(gguf_digest::Error::from)
            .and_then(|f| read_list(&mut std::io::BufReader::new(f), false))
    })?
    .map_err(|e| list_error(py, &sums, &e.detail()))?;
    // With `strict`, a misformatted line fails the list: raised before
    // anything is labelled.
    let misformatted = lines.iter().find_map(|l| match l {
        Line::Misformatted { line_no } => Some(*line_no),
        Line::Entry { .. } => None,
    });
    if let (true, Some(line_no)) = (strict, misformatted) {
        return Err(list_error(py, &sums, &format!("{line_no}: {MISFORMATTED_LINE}")));
    }
    let urls = UrlOptions { allow_http, connections, ca_file };
    let read = Read { threads, join_shards, mmap, verify_blobs, cache, urls };
    let opts = CheckOptions { ignore_missing, strict, ..CheckOptions::default() };
    let (summary, rows) = relabel(py, &lines, &opts, read, Via::Arguments, None)?;
    if summary.entries == 0 {
        return Err(list_error(py, &sums, NO_ENTRIES));
    }
    Ok((summary.misformatted, rows))
}
