//! The progress bar on stderr: when one is wanted, its length, and the
//! ticker that feeds it from the batch's byte counter.
//!
//! Its length is the local inputs' sizes, asked before any is opened, and
//! each URL input's objects' sizes, taken from the model once it is open
//! (the objects pinned by their first request, a prefix listed, a
//! registry's manifest read): no request of its own. Until every URL input
//! is open, and for a stream, the bar counts bytes, as `pv` does. The
//! counter moves with every piece hashed, so a long remote range moves it
//! as its parts arrive, not when its tensor ends (docs/adr/0050).

use std::io::{self, IsTerminal, Write as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use super::Args;
use crate::{AnyModel, BatchOptions, Digest, Input, OpenOptions, Opener, approximate_bytes, schedule};

/// Labels `paths` like [`digest_paths`], with a progress bar when one is
/// wanted, hidden while `emit` prints so lines and bar never interleave.
pub(super) fn digest_with_progress(
    args: &Args,
    paths: &[PathBuf],
    opts: &BatchOptions,
    pool: &rayon::ThreadPool,
    open: &Opener<'_, AnyModel>,
    mut emit: impl FnMut(usize, crate::Result<(AnyModel, Digest)>),
) {
    let mut opts = opts.clone();
    let progress = Progress::start(args, paths, &mut opts);
    let opened = |p: &PathBuf, o: &OpenOptions| {
        let model = open(p, o);
        if let (Some(progress), true) = (&progress, is_url(p)) {
            progress.url_opened(model.as_ref().map_or(0, model_bytes));
        }
        model
    };
    schedule(paths, &opts, pool, &opened, |i, r| match &progress {
        Some(p) => {
            p.note(r.is_ok());
            p.suspend(|| emit(i, r))
        }
        None => emit(i, r),
    });
    if let Some(p) = progress {
        p.finish();
    }
}

/// Work below this size finishes before a bar would be worth drawing.
const PROGRESS_MIN_BYTES: u64 = 1 << 30;

/// The variable that shows the bar whatever the work's size, where stderr
/// is no terminal too (`1`: plain lines, for a log), or never (`0`); the
/// README says so under the flags.
const PROGRESS_VAR: &str = "GGUF_DIGEST_PROGRESS";

/// Where the bar may be drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Show {
    /// Stderr is a terminal: a bar when the work is long enough.
    Terminal,
    /// `GGUF_DIGEST_PROGRESS=1`: a bar whatever the size and wherever
    /// stderr goes.
    Forced,
    /// No bar: stderr is no terminal, or `GGUF_DIGEST_PROGRESS=0`.
    Never,
}

impl Show {
    /// From the variable's value and whether stderr is a terminal; any
    /// value but `0` and `1` is as if it were unset.
    fn from(var: Option<&std::ffi::OsStr>, stderr_is_terminal: bool) -> Show {
        match var.and_then(|v| v.to_str()) {
            Some("1") => Show::Forced,
            Some("0") => Show::Never,
            _ if stderr_is_terminal => Show::Terminal,
            _ => Show::Never,
        }
    }
}

/// The bar's length as it becomes known: the local inputs' sizes up front,
/// each URL input's once it is open, and never with a stream among them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Total {
    /// Bytes of the inputs known so far.
    bytes: u64,
    /// URL inputs not opened yet.
    pending: usize,
    /// Standard input is among the inputs: no length, ever.
    stream: bool,
}

impl Total {
    /// The total of `paths`: `local` sizes every input but a URL
    /// (`is_url`) and standard input, whose sizes come later or never.
    fn of(paths: &[PathBuf], is_url: impl Fn(&Path) -> bool, local: impl Fn(&Path) -> u64) -> Total {
        let mut total = Total { bytes: 0, pending: 0, stream: false };
        for p in paths {
            if p.as_os_str() == "-" {
                total.stream = true;
            } else if is_url(p) {
                total.pending = total.pending.saturating_add(1);
            } else {
                total.bytes = total.bytes.saturating_add(local(p));
            }
        }
        total
    }

    /// One URL input opened: `bytes`, its objects' sizes (0 when it
    /// could not be opened).
    fn url_opened(&mut self, bytes: u64) {
        self.pending = self.pending.saturating_sub(1);
        self.bytes = self.bytes.saturating_add(bytes);
    }

    /// The bar's length, once every input's size is known.
    fn known(&self) -> Option<u64> {
        (!self.stream && self.pending == 0).then_some(self.bytes)
    }
}

/// True when `path` is a URL input (`s3://`, `oci://`, ...), by its
/// spelling alone.
fn is_url(path: &Path) -> bool {
    matches!(Input::by_spelling(path), Some(Input::Url(_)))
}

/// Bytes of every object (or file) an opened model reads: what a URL
/// input adds to the bar's length.
fn model_bytes(model: &AnyModel) -> u64 {
    model.sources().iter().fold(0u64, |t, s| t.saturating_add(s.len()))
}

/// The bar's total if a progress bar helps: a person watches stderr (or
/// `GGUF_DIGEST_PROGRESS=1` asks for it), nothing on the terminal must
/// stay clean (quiet, status, JSON, skeleton), and the work is long
/// enough. `total` is asked last, so files are only looked at when the
/// rest already says yes. A URL input's read is worth a bar whatever its
/// size (the network sets its pace), as is a stream, whose length nobody
/// knows; until their sizes are known the bar counts bytes.
fn wants_progress(args: &Args, show: Show, total: impl FnOnce() -> Total) -> Option<Total> {
    if show == Show::Never || args.quiet || args.status || args.json || args.skeleton {
        return None;
    }
    let total = total();
    match total.known() {
        Some(t) if t < PROGRESS_MIN_BYTES && show == Show::Terminal => None,
        _ => Some(total),
    }
}

/// The bar's look with a length, and without one (a count of bytes).
const BAR_TEMPLATE: &str = "{bar:40} {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} eta {eta}";
const COUNT_TEMPLATE: &str = "{spinner} {binary_bytes} read {binary_bytes_per_sec} {elapsed}";

fn style(template: &str) -> Option<indicatif::ProgressStyle> {
    indicatif::ProgressStyle::with_template(template).ok()
}

/// A progress bar on stderr fed from the batch's byte counter.
pub(super) struct Progress {
    bar: indicatif::ProgressBar,
    counter: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    ticker: JoinHandle<()>,
    /// The length as URL inputs open.
    total: Mutex<Total>,
    /// Drawn as plain lines (stderr is no terminal).
    lines: bool,
    /// A model failed: the bar ends where it stood, not full.
    failed: AtomicBool,
}

impl Progress {
    /// Starts a bar for `paths` if one is wanted, wiring its counter into `opts`.
    fn start(args: &Args, paths: &[PathBuf], opts: &mut BatchOptions) -> Option<Progress> {
        let terminal = io::stderr().is_terminal();
        let show = Show::from(std::env::var_os(PROGRESS_VAR).as_deref(), terminal);
        let total = wants_progress(args, show, || Total::of(paths, is_url, approximate_bytes))?;
        Some(Progress::drawn(total, opts, !terminal))
    }

    /// A bar of `total` bytes (or a counter of bytes read when `None`),
    /// wiring its counter into `opts`.
    pub(super) fn counting(total: Option<u64>, opts: &mut BatchOptions) -> Progress {
        let total = Total { bytes: total.unwrap_or(0), pending: 0, stream: total.is_none() };
        Progress::drawn(total, opts, false)
    }

    /// A bar of `total`, drawn on the terminal or, with `lines`, as one
    /// plain line a draw.
    fn drawn(total: Total, opts: &mut BatchOptions, lines: bool) -> Progress {
        let counter = Arc::new(AtomicU64::new(0));
        opts.progress = Some(Arc::clone(&counter));
        let bar = match total.known() {
            Some(len) => indicatif::ProgressBar::new(len),
            None => indicatif::ProgressBar::no_length(),
        };
        if lines {
            bar.set_draw_target(indicatif::ProgressDrawTarget::term_like(Box::new(Lines::default())));
        }
        if let Some(style) = style(if total.known().is_some() { BAR_TEMPLATE } else { COUNT_TEMPLATE }) {
            bar.set_style(style);
        }
        let stop = Arc::new(AtomicBool::new(false));
        // A log is not an animation: a line a second at most, and only
        // when the count moved.
        let tick = Duration::from_millis(if lines { 1000 } else { 100 });
        let ticker = {
            let (bar, stop, counter) = (bar.clone(), Arc::clone(&stop), Arc::clone(&counter));
            std::thread::spawn(move || {
                let mut shown = None;
                while !stop.load(Ordering::Relaxed) {
                    let now = counter.load(Ordering::Relaxed);
                    if !lines || shown != Some(now) {
                        bar.set_position(now);
                        shown = Some(now);
                    }
                    // Woken early by `finish`, so the command does not wait.
                    std::thread::park_timeout(tick);
                }
            })
        };
        Progress { bar, counter, stop, ticker, total: Mutex::new(total), lines, failed: AtomicBool::new(false) }
    }

    /// A URL input was opened, its objects' sizes `bytes`: the last one
    /// gives the bar its length.
    fn url_opened(&self, bytes: u64) {
        let mut total = self.total.lock().unwrap_or_else(|p| p.into_inner());
        let before = total.known();
        total.url_opened(bytes);
        if let (None, Some(len)) = (before, total.known()) {
            self.bar.set_length(len);
            if let Some(style) = style(BAR_TEMPLATE) {
                self.bar.set_style(style);
            }
        }
    }

    /// A model's result arrived: `ok` or not.
    fn note(&self, ok: bool) {
        if !ok {
            self.failed.store(true, Ordering::Relaxed);
        }
    }

    /// Runs `f` (which prints) with the bar hidden, so lines don't
    /// interleave; a log of plain lines has nothing to hide.
    fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        if self.lines { f() } else { self.bar.suspend(f) }
    }

    pub(super) fn finish(self) {
        self.stop.store(true, Ordering::Relaxed);
        self.ticker.thread().unpark();
        // The ticker only sleeps and sets a position; it cannot panic.
        let _ = self.ticker.join();
        self.bar.set_position(self.counter.load(Ordering::Relaxed));
        if !self.lines {
            self.bar.finish_and_clear();
        } else if self.failed.load(Ordering::Relaxed) {
            // Where it stopped: a failed run did not read everything.
            self.bar.abandon();
        } else {
            // Every model labelled: every byte it needed was read (the
            // bytes no label reads, such as padding, were not waited for).
            self.bar.finish();
        }
    }
}

/// A draw target that is no terminal (a log, a test): each draw of the
/// bar becomes one plain line on stderr, with no cursor movement.
#[derive(Debug, Default)]
struct Lines {
    line: Mutex<String>,
}

impl indicatif::TermLike for Lines {
    fn width(&self) -> u16 {
        // Wide enough that no line of the bar wraps.
        200
    }

    fn move_cursor_up(&self, _: usize) -> io::Result<()> {
        Ok(())
    }

    fn move_cursor_down(&self, _: usize) -> io::Result<()> {
        Ok(())
    }

    fn move_cursor_right(&self, _: usize) -> io::Result<()> {
        Ok(())
    }

    fn move_cursor_left(&self, _: usize) -> io::Result<()> {
        Ok(())
    }

    fn write_line(&self, s: &str) -> io::Result<()> {
        self.write_str(s)?;
        self.flush()
    }

    fn write_str(&self, s: &str) -> io::Result<()> {
        let mut line = self.line.lock().unwrap_or_else(|p| p.into_inner());
        line.push_str(s.trim_start_matches('\r'));
        Ok(())
    }

    fn clear_line(&self) -> io::Result<()> {
        Ok(())
    }

    fn flush(&self) -> io::Result<()> {
        let mut line = self.line.lock().unwrap_or_else(|p| p.into_inner());
        let text = line.trim_end();
        if !text.is_empty() {
            // One write of the whole line, so it never splits around
            // another thread's message.
            io::stderr().lock().write_all(format!("{text}\n").as_bytes())?;
        }
        line.clear();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn args(extra: &[&str]) -> Args {
        let mut v = vec!["gguf-digest"];
        v.extend_from_slice(extra);
        Args::parse_from(v)
    }

    fn sized(bytes: u64) -> Total {
        Total { bytes, pending: 0, stream: false }
    }

    #[test]
    fn progress_only_for_long_work_on_a_terminal() {
        let t = Show::Terminal;
        let big = || sized(PROGRESS_MIN_BYTES);
        assert_eq!(wants_progress(&args(&["m.gguf"]), t, big), Some(big()));
        assert_eq!(wants_progress(&args(&["m.gguf"]), t, || sized(PROGRESS_MIN_BYTES - 1)), None);
        assert_eq!(wants_progress(&args(&["m.gguf"]), Show::Never, big), None);
        assert_eq!(wants_progress(&args(&["--json", "m.gguf"]), t, big), None);
        assert_eq!(wants_progress(&args(&["--skeleton", "m.gguf"]), t, big), None);
        assert_eq!(wants_progress(&args(&["-c", "--quiet", "s"]), t, big), None);
        assert_eq!(wants_progress(&args(&["-c", "--status", "s"]), t, big), None);
        assert!(wants_progress(&args(&["-c", "s"]), t, big).is_some());
        // Files are not looked at when flags already say no.
        assert_eq!(wants_progress(&args(&["--json", "m.gguf"]), t, || unreachable!()), None);
        // A stream: bytes read are counted, with no length.
        let stream = || Total { bytes: 0, pending: 0, stream: true };
        assert_eq!(wants_progress(&args(&["-"]), t, stream), Some(stream()));
        assert_eq!(wants_progress(&args(&["-"]), Show::Never, stream), None);
        assert_eq!(wants_progress(&args(&["--json", "-"]), t, stream), None);
        // A URL input: a bar whatever its size, its length known once it is open.
        let url = || Total { bytes: 5, pending: 1, stream: false };
        assert_eq!(wants_progress(&args(&["s3://b/m.gguf"]), t, url), Some(url()));
        // Asked for: whatever the size and wherever stderr goes, but never
        // where output must stay clean.
        let f = Show::Forced;
        assert_eq!(wants_progress(&args(&["m.gguf"]), f, || sized(1)), Some(sized(1)));
        assert_eq!(wants_progress(&args(&["--json", "m.gguf"]), f, big), None);
        assert_eq!(wants_progress(&args(&["-c", "--status", "s"]), f, big), None);
    }

    #[test]
    fn the_variable_forces_or_hides_the_bar() {
        use std::ffi::OsStr;
        assert_eq!(Show::from(None, true), Show::Terminal);
        assert_eq!(Show::from(None, false), Show::Never);
        assert_eq!(Show::from(Some(OsStr::new("1")), false), Show::Forced);
        assert_eq!(Show::from(Some(OsStr::new("1")), true), Show::Forced);
        assert_eq!(Show::from(Some(OsStr::new("0")), true), Show::Never);
        assert_eq!(Show::from(Some(OsStr::new("yes")), true), Show::Terminal);
        assert_eq!(Show::from(Some(OsStr::new("")), false), Show::Never);
    }

    /// Local inputs are sized up front; each URL input adds its objects'
    /// sizes once open (0 when it failed), and the length is known only
    /// when the last one is; a stream keeps it unknown.
    #[test]
    fn the_total_is_known_once_every_url_input_is_open() {
        let paths: Vec<PathBuf> =
            ["a.gguf", "s3://b/m.gguf", "dir", "oci://r/m:t", "https://h/p/"].iter().map(PathBuf::from).collect();
        let local = |p: &Path| if p == Path::new("a.gguf") { 100 } else { 20 };
        let mut total = Total::of(&paths, is_url, local);
        assert_eq!(total, Total { bytes: 120, pending: 3, stream: false });
        assert_eq!(total.known(), None);
        total.url_opened(1 << 20);
        total.url_opened(0);
        assert_eq!(total.known(), None);
        total.url_opened(u64::MAX);
        assert_eq!(total.known(), Some(u64::MAX), "sums saturate");
        let only_local = Total::of(&paths[..1], is_url, local);
        assert_eq!(only_local.known(), Some(100));
        let with_stream = [PathBuf::from("-"), PathBuf::from("./-")];
        let mut t = Total::of(&with_stream, is_url, |_| 7);
        assert_eq!(t, Total { bytes: 7, pending: 0, stream: true });
        t.url_opened(3);
        assert_eq!(t.known(), None);
        assert!(!is_url(Path::new("ollama:m")) && !is_url(Path::new("hf:o/n")) && !is_url(Path::new("s3:/x")));
    }
}
