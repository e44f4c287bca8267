//! The progress bar on stderr: when one is wanted, its length, and the
//! ticker that feeds it from the batch's byte counter.

use std::io::{self, IsTerminal};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use super::Args;
use crate::{AnyModel, BatchOptions, Digest, OpenOptions, Opener, approximate_bytes, schedule};

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
    schedule(paths, &opts, pool, &|p: &PathBuf, o: &OpenOptions| open(p, o), |i, r| match &progress {
        Some(p) => p.suspend(|| emit(i, r)),
        None => emit(i, r),
    });
    if let Some(p) = progress {
        p.finish();
    }
}

/// Work below this size finishes before a bar would be worth drawing.
const PROGRESS_MIN_BYTES: u64 = 1 << 30;

/// The bar's length if a progress bar helps: a person watches stderr,
/// nothing on the terminal must stay clean (quiet, status, JSON, skeleton),
/// and the work is long enough. `total_bytes` is asked last, so files are
/// only looked at when the rest already says yes; it is `None` when a
/// stream is among the inputs, whose length nobody knows (the bar then
/// counts bytes read, as `pv` does, `Some(None)`).
fn wants_progress(
    args: &Args,
    stderr_is_terminal: bool,
    total_bytes: impl FnOnce() -> Option<u64>,
) -> Option<Option<u64>> {
    if !stderr_is_terminal || args.quiet || args.status || args.json || args.skeleton {
        return None;
    }
    match total_bytes() {
        None => Some(None),
        Some(t) if t >= PROGRESS_MIN_BYTES => Some(Some(t)),
        Some(_) => None,
    }
}

/// Bytes on disk of these models, every file of each included (the bar's length).
/// `None` when standard input is among them.
fn total_size(paths: &[PathBuf]) -> Option<u64> {
    if paths.iter().any(|p| p.as_os_str() == "-") {
        return None;
    }
    Some(paths.iter().fold(0u64, |t, p| t.saturating_add(approximate_bytes(p))))
}

/// A progress bar on stderr fed from the batch's byte counter.
pub(super) struct Progress {
    bar: indicatif::ProgressBar,
    stop: Arc<AtomicBool>,
    ticker: JoinHandle<()>,
}

impl Progress {
    /// Starts a bar for `paths` if one is wanted, wiring its counter into `opts`.
    fn start(args: &Args, paths: &[PathBuf], opts: &mut BatchOptions) -> Option<Progress> {
        let total = wants_progress(args, io::stderr().is_terminal(), || total_size(paths))?;
        Some(Progress::counting(total, opts))
    }

    /// A bar of `total` bytes (or a counter of bytes read when `None`),
    /// wiring its counter into `opts`.
    pub(super) fn counting(total: Option<u64>, opts: &mut BatchOptions) -> Progress {
        let counter = Arc::new(AtomicU64::new(0));
        opts.progress = Some(Arc::clone(&counter));
        let (bar, template) = match total {
            Some(total) => (
                indicatif::ProgressBar::new(total),
                "{bar:40} {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} eta {eta}",
            ),
            None => {
                (indicatif::ProgressBar::no_length(), "{spinner} {binary_bytes} read {binary_bytes_per_sec} {elapsed}")
            }
        };
        let style = indicatif::ProgressStyle::with_template(template);
        if let Ok(style) = style {
            bar.set_style(style);
        }
        let stop = Arc::new(AtomicBool::new(false));
        let ticker = {
            let (bar, stop) = (bar.clone(), Arc::clone(&stop));
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    bar.set_position(counter.load(Ordering::Relaxed));
                    std::thread::sleep(Duration::from_millis(100));
                }
            })
        };
        Progress { bar, stop, ticker }
    }

    /// Runs `f` (which prints) with the bar hidden, so lines don't interleave.
    fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        self.bar.suspend(f)
    }

    pub(super) fn finish(self) {
        self.stop.store(true, Ordering::Relaxed);
        // The ticker only sleeps and sets a position; it cannot panic.
        let _ = self.ticker.join();
        self.bar.finish_and_clear();
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

    #[test]
    fn progress_only_for_long_work_on_a_terminal() {
        let big = || Some(PROGRESS_MIN_BYTES);
        assert_eq!(wants_progress(&args(&["m.gguf"]), true, big), Some(Some(PROGRESS_MIN_BYTES)));
        assert_eq!(wants_progress(&args(&["m.gguf"]), true, || Some(PROGRESS_MIN_BYTES - 1)), None);
        assert_eq!(wants_progress(&args(&["m.gguf"]), false, big), None);
        assert_eq!(wants_progress(&args(&["--json", "m.gguf"]), true, big), None);
        assert_eq!(wants_progress(&args(&["--skeleton", "m.gguf"]), true, big), None);
        assert_eq!(wants_progress(&args(&["-c", "--quiet", "s"]), true, big), None);
        assert_eq!(wants_progress(&args(&["-c", "--status", "s"]), true, big), None);
        assert!(wants_progress(&args(&["-c", "s"]), true, big).is_some());
        // Files are not looked at when flags already say no.
        assert_eq!(wants_progress(&args(&["--json", "m.gguf"]), true, || unreachable!()), None);
        // A stream: bytes read are counted, with no length.
        assert_eq!(wants_progress(&args(&["-"]), true, || None), Some(None));
        assert_eq!(wants_progress(&args(&["-"]), false, || None), None);
        assert_eq!(wants_progress(&args(&["--json", "-"]), true, || None), None);
        assert_eq!(total_size(&[PathBuf::from("-")]), None);
        assert_eq!(total_size(&[PathBuf::from("./-")]), Some(0));
    }
}
