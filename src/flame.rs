//! `--flame`: samples a server with perf while a run measures (twelve-load's `perf`) and draws
//! its flame graphs (twelve-report's `flame`): `twelve bench --flame FILE.svg` and
//! `twelve compare --flame DIR`. perf missing or refused is one message; the run goes on.
use std::path::{Path, PathBuf};
use std::time::Duration;
use twelve_load::perf::{self, DEFAULT_FREQ_HZ, PerfTarget, Recording};
use twelve_report::Summary;
#[cfg(feature = "flame")]
use twelve_report::flame::{Folded, Labels, render, render_diff};

/// Without the `flame` feature (inferno, CDDL-1.0) nothing is folded or drawn.
#[cfg(not(feature = "flame"))]
#[derive(Default)]
struct Folded;

/// The flame-graph flags of `twelve bench`.
#[derive(clap::Args, Debug, Clone)]
#[command(next_help_heading = "Profiling")]
pub struct BenchFlame {
    /// Sample the server with `perf record -g` during the measured window only and write its
    /// flame graph (SVG: user-space frames blue, kernel frames red, the run's figures in the
    /// title) to FILE. Samples the embedded server's threads unless --flame-pid or
    /// --flame-cgroup says otherwise. Needs perf (Debian: linux-perf) and root or
    /// kernel.perf_event_paranoid <= 1; without them the run completes with a message.
    #[arg(long, value_name = "FILE.svg")]
    flame: Option<PathBuf>,
    /// With --flame: sample this process (every thread) instead of the embedded server.
    #[arg(
        long,
        value_name = "PID",
        requires = "flame",
        conflicts_with = "flame_cgroup"
    )]
    flame_pid: Option<u32>,
    /// With --flame: sample every task of this cgroup, named as perf -G takes it (relative to
    /// the cgroup v2 root, or to v1's perf_event hierarchy), e.g. system.slice/nginx.service.
    #[arg(long, value_name = "PATH", requires = "flame")]
    flame_cgroup: Option<String>,
}

/// One perf recording under way, or none (the reason already printed).
struct Sampler {
    recording: Option<Recording>,
}

impl Sampler {
    /// Starts perf on `target`, sampling after `warmup`; prints why not if it cannot.
    fn start(target: PerfTarget, warmup: Duration) -> Sampler {
        if !cfg!(feature = "flame") {
            eprintln!(
                "twelve: --flame: this twelve was built without the `flame` feature; no flame graph"
            );
            return Sampler { recording: None };
        }
        let data = std::env::temp_dir().join(format!(
            "twelve-perf-{}-{}.data",
            std::process::id(),
            COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        let recording = match Recording::start(&target, DEFAULT_FREQ_HZ, warmup, &data) {
            Ok(r) => Some(r),
            Err(e) => {
                eprintln!("twelve: --flame: {e}; the run goes on without a flame graph");
                None
            }
        };
        Sampler { recording }
    }

    /// Stops perf and folds its stacks; prints why not if it failed.
    fn stop(self) -> Option<Folded> {
        let script = match self.recording?.stop() {
            Ok(s) => s,
            Err(e) => {
                eprintln!("twelve: --flame: {e}; no flame graph");
                return None;
            }
        };
        fold(&script)
    }
}

/// Distinguishes the perf data files of one process's recordings.
static COUNTER: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

#[cfg(feature = "flame")]
fn fold(script: &[u8]) -> Option<Folded> {
    match Folded::from_perf_script(script) {
        Ok(f) if !f.is_empty() => Some(f),
        Ok(_) => {
            eprintln!("twelve: --flame: perf recorded no sample of the server; no flame graph");
            None
        }
        Err(e) => {
            eprintln!("twelve: --flame: folding perf's stacks: {e}");
            None
        }
    }
}

#[cfg(not(feature = "flame"))]
fn fold(_: &[u8]) -> Option<Folded> {
    None
}

/// `twelve bench --flame`: the recording of one run, then its graph.
pub struct BenchProfile {
    path: Option<PathBuf>,
    /// What is sampled, for the graph's subtitle.
    what: String,
    sampler: Option<Sampler>,
    stacks: Option<Folded>,
}

impl BenchProfile {
    /// Starts sampling if --flame was given: the embedded server's worker threads (on
    /// `server_cpu`), or --flame-pid's process, or --flame-cgroup's tasks.
    pub fn start(args: &BenchFlame, server_cpu: Option<usize>, warmup: Duration) -> Self {
        let mut sampled = String::new();
        let sampler = args.flame.as_ref().and_then(|_| {
            let (target, what) = match (&args.flame_pid, &args.flame_cgroup, server_cpu) {
                (Some(pid), _, _) => (PerfTarget::Pids(vec![*pid]), format!("PID {pid}")),
                (None, Some(cg), _) => (PerfTarget::Cgroup(cg.clone()), format!("cgroup {cg}")),
                (None, None, Some(cpu)) => {
                    // The embedded server runs in this process beside the load generator: only
                    // its worker threads are sampled (perf -t), so the client is neither in
                    // the graph nor slowed by sampling interrupts.
                    let name = format!("twelve-w{cpu}");
                    match perf::threads_named(&name) {
                        Ok(t) => (
                            PerfTarget::Threads(t),
                            format!("the embedded server ({name})"),
                        ),
                        Err(e) => {
                            eprintln!("twelve: --flame: listing this process's threads: {e}");
                            return None;
                        }
                    }
                }
                (None, None, None) => {
                    eprintln!(
                        "twelve: --flame: with a URL, name the server to sample with \
                         --flame-pid or --flame-cgroup; no flame graph"
                    );
                    return None;
                }
            };
            sampled = what;
            Some(Sampler::start(target, warmup))
        });
        BenchProfile {
            path: args.flame.clone(),
            what: sampled,
            sampler,
            stacks: None,
        }
    }

    /// Stops sampling: call when the load has ended.
    pub fn stop(&mut self) {
        self.stacks = self.sampler.take().and_then(Sampler::stop);
    }

    /// Writes the flame graph of the run `summary` describes, if there is one.
    pub fn write(&self, summary: &Summary) -> anyhow::Result<()> {
        let (Some(path), Some(stacks)) = (&self.path, &self.stacks) else {
            return Ok(());
        };
        write_graph(path, stacks, summary, &self.what)
    }
}

#[cfg(feature = "flame")]
fn write_graph(path: &Path, stacks: &Folded, summary: &Summary, what: &str) -> anyhow::Result<()> {
    use anyhow::Context;
    let sampled = format!(
        "{what}: perf record -g -F {DEFAULT_FREQ_HZ}, {} samples",
        stacks.total()
    );
    let labels = Labels::of_run(summary, &sampled);
    let file =
        std::fs::File::create(path).with_context(|| format!("--flame {}", path.display()))?;
    render(stacks, &labels, std::io::BufWriter::new(file))
        .with_context(|| format!("--flame {}", path.display()))?;
    let (kernel, total) = stacks.kernel_share();
    eprintln!(
        "twelve: flame graph of {total} samples ({:.0}% in the kernel) written to {}",
        100.0 * kernel as f64 / total.max(1) as f64,
        path.display()
    );
    Ok(())
}

#[cfg(not(feature = "flame"))]
fn write_graph(_: &Path, _: &Folded, _: &Summary, _: &str) -> anyhow::Result<()> {
    Ok(())
}

/// `twelve compare --flame DIR`: each side's samples over every round, then one graph per
/// side and the differential graph of B against A.
#[derive(Default)]
pub struct CompareProfile {
    dir: Option<PathBuf>,
    running: Option<Sampler>,
    /// The side about to run, and its warm-up.
    side: usize,
    warmup: Duration,
    stacks: [Option<Folded>; 2],
    warned_url: [bool; 2],
    /// The process to sample for a side given as a URL.
    pids: [Option<u32>; 2],
}

impl CompareProfile {
    /// Profiles into `dir`, if given; `pids` are the processes to sample for URL sides.
    pub fn new(dir: Option<PathBuf>, pids: [Option<u32>; 2]) -> anyhow::Result<Self> {
        if let Some(d) = &dir {
            use anyhow::Context;
            std::fs::create_dir_all(d).with_context(|| format!("--flame {}", d.display()))?;
        }
        Ok(CompareProfile {
            dir,
            pids,
            ..Default::default()
        })
    }

    /// The next run is side `i`'s, with this warm-up.
    pub fn side(&mut self, i: usize, warmup: Duration) {
        self.side = i;
        self.warmup = warmup;
    }

    /// Writes `a.svg`, `b.svg` and `diff.svg` (B against A), with their folded stacks, for
    /// the sides that have samples; `ratio` is B/A's req/s (median of the rounds' ratios).
    pub fn write(&self, specs: [&str; 2], ratio: f64, rounds: usize) -> anyhow::Result<()> {
        let Some(dir) = &self.dir else {
            return Ok(());
        };
        write_compare(dir, &self.stacks, specs, ratio, rounds)
    }
}

impl twelve_sweep::SideObserver for CompareProfile {
    /// Before a side's load: samples its server's process group, if it has one.
    fn before(&mut self, pgid: Option<u32>) {
        if self.dir.is_none() {
            return;
        }
        let i = self.side;
        let pids = match (pgid, self.pids[i]) {
            (Some(pgid), _) => perf::process_group(pgid).unwrap_or_else(|_| vec![pgid]),
            (None, Some(pid)) => vec![pid],
            (None, None) => {
                if !std::mem::replace(&mut self.warned_url[i], true) {
                    eprintln!(
                        "twelve: --flame: side {} is a URL: name its process with --{}-flame-pid; \
                         no flame graph of it",
                        side_name(i),
                        side_name(i).to_ascii_lowercase()
                    );
                }
                return;
            }
        };
        self.running = Some(Sampler::start(PerfTarget::Pids(pids), self.warmup));
    }

    /// After a side's load: adds this round's samples to the side's.
    fn after(&mut self, _: Option<&Summary>) {
        let Some(stacks) = self.running.take().and_then(Sampler::stop) else {
            return;
        };
        merge_into(&mut self.stacks[self.side], stacks);
    }
}

fn side_name(i: usize) -> &'static str {
    ["A", "B"][i]
}

#[cfg(feature = "flame")]
fn merge_into(side: &mut Option<Folded>, stacks: Folded) {
    side.get_or_insert_with(Folded::default).merge(&stacks);
}

#[cfg(not(feature = "flame"))]
fn merge_into(_: &mut Option<Folded>, _: Folded) {}

#[cfg(feature = "flame")]
fn write_compare(
    dir: &Path,
    stacks: &[Option<Folded>; 2],
    specs: [&str; 2],
    ratio: f64,
    rounds: usize,
) -> anyhow::Result<()> {
    use anyhow::Context;
    let sampled = format!("perf record -g -F {DEFAULT_FREQ_HZ}, {rounds} rounds");
    let create = |name: &str| {
        let p = dir.join(name);
        std::fs::File::create(&p)
            .map(std::io::BufWriter::new)
            .with_context(|| format!("--flame {}", p.display()))
    };
    for (i, side) in stacks.iter().enumerate() {
        let Some(f) = side else { continue };
        let name = side_name(i).to_ascii_lowercase();
        std::fs::write(dir.join(format!("{name}.folded")), f.to_text())
            .with_context(|| format!("--flame {}", dir.display()))?;
        let labels = Labels {
            title: format!("{}: {}", side_name(i), specs[i]),
            subtitle: Some(format!(
                "{sampled}, {} samples; user-space frames blue, kernel frames red",
                f.total()
            )),
        };
        render(f, &labels, create(&format!("{name}.svg"))?)?;
    }
    if let [Some(a), Some(b)] = stacks {
        let labels = Labels {
            title: format!("B against A: B/A req/s {ratio:.3} (median of {rounds} rounds)"),
            subtitle: Some(
                "B's profile; red: B spends a larger share of its samples there than A, \
                 blue: a smaller one"
                    .to_string(),
            ),
        };
        render_diff(a, b, &labels, create("diff.svg")?)?;
        eprintln!(
            "twelve: flame graphs written to {}: a.svg, b.svg, diff.svg (B against A)",
            dir.display()
        );
    }
    Ok(())
}

#[cfg(not(feature = "flame"))]
fn write_compare(
    _: &Path,
    _: &[Option<Folded>; 2],
    _: [&str; 2],
    _: f64,
    _: usize,
) -> anyhow::Result<()> {
    Ok(())
}
