//! The hashing pool: how many threads label a batch, and the one limit on
//! that number, for every caller (the command's `-j`, Python's `threads=`).
//!
//! Here, beside the scheduler that runs on the pool, rather than in the
//! command: the Python extension builds its pools by the same rules and
//! must not compile the command to reach them.

use crate::error::{Error, ErrorKind, Result};

/// The most hashing threads a pool may have (`-j`, Python's `threads=`,
/// `RAYON_NUM_THREADS`). More never help: hashing is bound by the cores
/// and the disk, and an idle pool of thousands of threads took seconds to
/// start and stop (25 s for 4,096 on two cores, for a 24-byte file).
pub const MAX_THREADS: usize = 1024;

/// A pool of `threads` hashing threads (0: rayon's default: its
/// variables, else one per core), named as `ps` and `perf` show them. Any
/// count above [`MAX_THREADS`], given or from the environment, is refused.
pub fn hashing_pool(threads: usize) -> Result<rayon::ThreadPool> {
    let asked = if threads == 0 { threads_from_env(|var| std::env::var(var).ok()) } else { Some(("threads", threads)) };
    if let Some((what, n)) = asked.filter(|&(_, n)| n > MAX_THREADS) {
        return Err(Error::new(ErrorKind::Usage(format!("{what}={n}: at most {MAX_THREADS} hashing threads"))));
    }
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("gguf-digest-{i}"))
        .build()
        .map_err(|e| Error::from(std::io::Error::other(e)))
}

/// The thread count rayon takes from its variables (`get` reads one): in
/// its order, parsed as it parses them (a value it cannot parse, or 0, it
/// passes over).
fn threads_from_env(get: impl Fn(&str) -> Option<String>) -> Option<(&'static str, usize)> {
    ["RAYON_NUM_THREADS", "RAYON_RS_NUM_CPUS"]
        .into_iter()
        .find_map(|var| Some((var, get(var)?.parse::<usize>().ok().filter(|&n| n > 0)?)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rayon_variables_are_read_as_rayon_reads_them() {
        let env = |pairs: &[(&str, &str)]| {
            let pairs: Vec<(String, String)> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
            threads_from_env(move |var| pairs.iter().find(|(k, _)| k == var).map(|(_, v)| v.clone()))
        };
        assert_eq!(env(&[]), None);
        assert_eq!(env(&[("RAYON_NUM_THREADS", "1024")]), Some(("RAYON_NUM_THREADS", 1024)));
        assert_eq!(env(&[("RAYON_NUM_THREADS", "3"), ("RAYON_RS_NUM_CPUS", "5")]), Some(("RAYON_NUM_THREADS", 3)));
        for passed_over in ["x", "0", " 3", "-1"] {
            let got = env(&[("RAYON_NUM_THREADS", passed_over), ("RAYON_RS_NUM_CPUS", "5")]);
            assert_eq!(got, Some(("RAYON_RS_NUM_CPUS", 5)), "{passed_over:?}");
        }
    }

    #[test]
    fn a_pool_of_more_than_1024_threads_is_refused() {
        let refused = hashing_pool(MAX_THREADS + 1).err();
        assert!(matches!(refused.as_ref().map(Error::kind), Some(ErrorKind::Usage(_))), "{refused:?}");
        let refused = refused.map(|e| e.to_string());
        assert_eq!(refused.as_deref(), Some("threads=1025: at most 1024 hashing threads"));
        assert_eq!(hashing_pool(2).ok().map(|p| p.current_num_threads()), Some(2));
    }
}
