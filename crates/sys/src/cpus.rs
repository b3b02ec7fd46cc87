//! CPU lists (`0-3,8`), the host's online CPUs, and pinning the calling thread to one CPU.
//!
//! Both the server (`--cpus` for its workers) and the load generator (`--cpus` for its
//! threads) take the kernel's own list syntax, the one in `/sys/devices/system/cpu/online`
//! and `taskset -c` (see cpuset(7), "List format").

use std::fmt;

/// The kernel's CPU-list format: comma-separated CPU numbers or inclusive ranges.
///
/// Kept sorted and deduplicated, so `"3,0-1,1"` and `"0-1,3"` are the same set.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct CpuList {
    cpus: Vec<usize>,
}

/// Why a CPU list did not parse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuListError {
    /// The list (or one element of it) was empty.
    Empty,
    /// An element was not a number or `A-B` range of numbers.
    NotANumber,
    /// A range ended before it began (`3-1`).
    ReversedRange,
    /// A CPU number above [`CpuList::MAX_CPU`].
    TooLarge,
}

impl fmt::Display for CpuListError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Empty => "empty CPU list or element",
            Self::NotANumber => "expected CPU numbers or ranges like 0-3,8",
            Self::ReversedRange => "range ends before it starts",
            Self::TooLarge => "CPU number too large",
        })
    }
}

impl std::error::Error for CpuListError {}

impl CpuList {
    /// The largest CPU number accepted; the kernel's `CONFIG_NR_CPUS` tops out at 8192.
    pub const MAX_CPU: usize = 8191;

    /// Parses `0-3,8` style text; surrounding whitespace and a trailing newline are ignored.
    pub fn parse(text: &str) -> Result<Self, CpuListError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(CpuListError::Empty);
        }
        let mut cpus = Vec::new();
        for part in text.split(',') {
            let part = part.trim();
            let (lo, hi) = match part.split_once('-') {
                Some((a, b)) => (parse_cpu(a)?, parse_cpu(b)?),
                None => {
                    let c = parse_cpu(part)?;
                    (c, c)
                }
            };
            if hi < lo {
                return Err(CpuListError::ReversedRange);
            }
            cpus.extend(lo..=hi);
        }
        cpus.sort_unstable();
        cpus.dedup();
        Ok(Self { cpus })
    }

    /// A list holding exactly these CPUs.
    pub fn from_cpus(iter: impl IntoIterator<Item = usize>) -> Self {
        let mut cpus: Vec<usize> = iter.into_iter().collect();
        cpus.sort_unstable();
        cpus.dedup();
        Self { cpus }
    }

    /// The CPUs in ascending order.
    pub fn as_slice(&self) -> &[usize] {
        &self.cpus
    }

    /// How many CPUs the list holds.
    pub fn len(&self) -> usize {
        self.cpus.len()
    }

    /// Whether the list holds no CPU.
    pub fn is_empty(&self) -> bool {
        self.cpus.is_empty()
    }

    /// Whether `cpu` is in the list.
    pub fn contains(&self, cpu: usize) -> bool {
        self.cpus.binary_search(&cpu).is_ok()
    }

    /// The first `n` CPUs of the list (all of them when `n` is larger).
    pub fn first(&self, n: usize) -> Self {
        Self {
            cpus: self.cpus.iter().copied().take(n).collect(),
        }
    }

    /// The CPUs of `self` that are not in `other`.
    pub fn without(&self, other: &Self) -> Self {
        Self {
            cpus: self
                .cpus
                .iter()
                .copied()
                .filter(|c| !other.contains(*c))
                .collect(),
        }
    }
}

impl fmt::Display for CpuList {
    /// Writes the compact kernel form, ranges collapsed: `0-3,8`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut i = 0;
        let mut first = true;
        while i < self.cpus.len() {
            let start = self.cpus[i];
            let mut end = start;
            while i + 1 < self.cpus.len() && self.cpus[i + 1] == end + 1 {
                i += 1;
                end += 1;
            }
            if !first {
                f.write_str(",")?;
            }
            first = false;
            if start == end {
                write!(f, "{start}")?;
            } else {
                write!(f, "{start}-{end}")?;
            }
            i += 1;
        }
        Ok(())
    }
}

fn parse_cpu(s: &str) -> Result<usize, CpuListError> {
    let s = s.trim();
    if s.is_empty() {
        return Err(CpuListError::Empty);
    }
    if !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(CpuListError::NotANumber);
    }
    match s.parse::<usize>() {
        Ok(n) if n <= CpuList::MAX_CPU => Ok(n),
        _ => Err(CpuListError::TooLarge),
    }
}

/// The CPUs the kernel has online, from `/sys/devices/system/cpu/online`.
///
/// Falls back to `0..available_parallelism` where sysfs is not mounted (some containers).
pub fn online() -> CpuList {
    std::fs::read_to_string("/sys/devices/system/cpu/online")
        .ok()
        .and_then(|t| CpuList::parse(&t).ok())
        .unwrap_or_else(|| {
            let n = std::thread::available_parallelism().map_or(1, |n| n.get());
            CpuList::from_cpus(0..n)
        })
}

/// The CPUs the calling thread may run on: its affinity mask (sched_getaffinity(2)), which
/// `taskset -c` and a container's `--cpuset-cpus` set. A server that sizes itself from this
/// rather than from [`online`] gives `taskset -c 0 server` exactly one worker.
pub fn allowed() -> std::io::Result<CpuList> {
    let set = rustix::thread::sched_getaffinity(None)?;
    Ok(CpuList::from_cpus(
        (0..rustix::thread::CpuSet::MAX_CPU).filter(|&c| set.is_set(c)),
    ))
}

/// Pins the calling thread to `cpu` (sched_setaffinity(2) on thread id 0, i.e. itself).
///
/// Workers call this before they allocate anything, so their memory is first touched on the
/// CPU (and NUMA node) that will use it.
pub fn pin_current_thread(cpu: usize) -> std::io::Result<()> {
    if cpu >= rustix::thread::CpuSet::MAX_CPU {
        // rustix's fixed-size set (glibc's CPU_SETSIZE, 1024) would panic on a larger index.
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "CPU {cpu} is beyond the {} CPUs an affinity set holds",
                rustix::thread::CpuSet::MAX_CPU
            ),
        ));
    }
    let mut set = rustix::thread::CpuSet::new();
    set.set(cpu);
    rustix::thread::sched_setaffinity(None, &set).map_err(std::io::Error::from)
}

/// The CPU the calling thread is running on now (sched_getcpu(3)).
pub fn current_cpu() -> usize {
    rustix::thread::sched_getcpu()
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! list {
        ($($name:ident: $text:expr => $want:expr;)*) => {$(
            #[test]
            fn $name() {
                assert_eq!(CpuList::parse($text).map(|l| l.as_slice().to_vec()), $want);
            }
        )*};
    }

    list! {
        single: "3" => Ok(vec![3]);
        range: "0-3" => Ok(vec![0, 1, 2, 3]);
        mixed_unsorted_dup: "8,0-1,1" => Ok(vec![0, 1, 8]);
        sysfs_newline: "0-1\n" => Ok(vec![0, 1]);
        empty: "" => Err(CpuListError::Empty);
        empty_element: "0,,1" => Err(CpuListError::Empty);
        letters: "a" => Err(CpuListError::NotANumber);
        negative: "-1" => Err(CpuListError::Empty);
        reversed: "3-1" => Err(CpuListError::ReversedRange);
        huge: "99999999999999999999" => Err(CpuListError::TooLarge);
        above_max: "8192" => Err(CpuListError::TooLarge);
    }

    #[test]
    fn allowed_holds_the_current_cpu() {
        let allowed = allowed().unwrap();
        assert!(!allowed.is_empty());
        // A thread always runs on a CPU of its own mask.
        assert!(allowed.contains(current_cpu()), "{allowed}");
    }

    #[test]
    fn display_collapses_ranges() {
        let l = CpuList::parse("5,0-2,7,6").unwrap();
        assert_eq!(l.to_string(), "0-2,5-7");
    }

    #[test]
    fn first_and_without() {
        let l = CpuList::parse("0-3").unwrap();
        assert_eq!(l.first(2).as_slice(), &[0, 1]);
        assert_eq!(
            l.without(&CpuList::parse("1,3").unwrap()).as_slice(),
            &[0, 2]
        );
    }

    #[test]
    fn pinning_to_a_cpu_beyond_the_set_is_an_error() {
        assert!(pin_current_thread(4000).is_err());
    }

    #[test]
    fn pinning_moves_the_thread() {
        let cpu = online().as_slice()[0];
        std::thread::spawn(move || {
            pin_current_thread(cpu).unwrap();
            assert_eq!(current_cpu(), cpu);
        })
        .join()
        .unwrap();
    }
}
