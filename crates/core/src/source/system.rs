//! What the process and the machine allow: the open-file limit, memory,
//! the page size.

/// Raises this process's soft limit on open files to its hard limit, as Go
/// programs (Ollama among them) do at start: one model can be thousands of
/// files held open at once (an Ollama model is a blob per tensor), and a soft
/// limit of 1024 is common. Failing leaves the limit as it was.
#[cfg(unix)]
pub fn raise_open_file_limit() {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    // `None` is no limit (RLIM_INFINITY), above every number.
    let lim = getrlimit(Resource::Nofile);
    let below_hard = match (lim.current, lim.maximum) {
        (Some(current), Some(maximum)) => current < maximum,
        (Some(_), None) => true,
        (None, _) => false,
    };
    if below_hard {
        let _ = setrlimit(Resource::Nofile, Rlimit { current: lim.maximum, maximum: lim.maximum });
    }
}

/// Without `setrlimit` (not Unix), the limit is the system's.
#[cfg(not(unix))]
pub fn raise_open_file_limit() {}

/// The machine's memory in bytes (0 where the platform does not say: no
/// file is then larger than half of it).
pub(super) fn memory_bytes() -> u64 {
    super::platform::memory_bytes()
}

/// The page size, a power of two (4096 if the system says otherwise).
pub fn page_size() -> u64 {
    #[cfg(unix)]
    let p = rustix::param::page_size();
    #[cfg(not(unix))]
    let p = 4096;
    u64::try_from(p).ok().filter(|p| p.is_power_of_two()).unwrap_or(4096)
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;

    /// A line of a `/proc` file such as `/proc/meminfo`: the numbers after
    /// `key`.
    fn proc_numbers(file: &str, key: &str) -> Vec<u64> {
        let text = std::fs::read_to_string(file).unwrap();
        let line = text.lines().find(|l| l.starts_with(key)).unwrap_or_else(|| panic!("{file}: no {key}"));
        line[key.len()..].split_whitespace().filter_map(|w| w.parse().ok()).collect()
    }

    #[test]
    fn memory_and_page_size_are_the_kernels() {
        // MemTotal is the same count of pages as sysinfo's, in KiB; the
        // portable path does not ask (0: no file is larger than half of it).
        let expected =
            if cfg!(feature = "portable") { 0 } else { proc_numbers("/proc/meminfo", "MemTotal:")[0] * 1024 };
        assert_eq!(memory_bytes(), expected);
        let getconf = std::process::Command::new("getconf").arg("PAGESIZE").output().unwrap();
        assert_eq!(page_size().to_string(), String::from_utf8_lossy(&getconf.stdout).trim());
    }

    #[test]
    fn the_open_file_limit_is_raised_to_the_hard_limit() {
        use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
        // One below the hard limit first (one, so that tests running beside
        // this one keep their descriptors), unless there is none.
        let lim = getrlimit(Resource::Nofile);
        if let Some(hard) = lim.maximum {
            setrlimit(Resource::Nofile, Rlimit { current: Some(hard - 1), maximum: Some(hard) }).unwrap();
        }
        raise_open_file_limit();
        // "Max open files  SOFT  HARD  files"; "unlimited" is not a number.
        let limits = std::fs::read_to_string("/proc/self/limits").unwrap();
        let line = limits.lines().find(|l| l.starts_with("Max open files")).unwrap();
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(words[3], words[4], "{line}");
    }
}
