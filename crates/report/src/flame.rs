//! Flame graphs from perf samples: fold `perf script` stacks, colour user-space frames blue and
//! kernel frames red (as the study drew them), put the run's figures in the title, and diff
//! two profiles.
//!
//! Everything here is a pure function over text: [`Folded::from_perf_script`] turns the output
//! of `perf script` into folded stacks (`comm;outer;…;inner COUNT`, one line per distinct
//! stack), [`render`] draws one profile and [`render_diff`] draws B against A. Folding and
//! drawing are inferno's (the Rust port of Brendan Gregg's FlameGraph; CDDL-1.0, which is why
//! this module sits behind the `flame` cargo feature); what is twelve's is the colouring and
//! the titles. perf marks a kernel frame by its module (`[kernel.kallsyms]`); folding keeps
//! that as a `_[k]` suffix on the frame's name, which inferno hides in the label and which
//! [`frame_kind`] reads to pick the colour family.
use crate::format;
use crate::summary::Summary;
use inferno::collapse::Collapse;
use inferno::collapse::perf::{Folder, Options as FoldOptions};
use inferno::differential;
use inferno::flamegraph::{self, Options, Palette, color::BasicPalette, color::PaletteMap};
use std::collections::BTreeMap;
use std::fmt;
use std::io::{self, Write};

/// Suffix that folding gives kernel frames (inferno's `annotate_kernel`).
const KERNEL_SUFFIX: &str = "_[k]";

/// Folded stacks: each distinct stack (frames outermost first, `;`-separated) and how many
/// samples it had.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Folded {
    stacks: BTreeMap<String, u64>,
}

/// A line of folded-stack text that is not `STACK COUNT`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FoldError {
    /// 1-based line number.
    pub line: usize,
}

impl fmt::Display for FoldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: expected `frame;frame;… COUNT`", self.line)
    }
}

impl std::error::Error for FoldError {}

/// Which side of the system call boundary a frame ran on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameKind {
    /// User space: twelve, libc, the Rust runtime.
    User,
    /// The kernel (perf's `[kernel.kallsyms]` and kernel modules).
    Kernel,
}

impl Folded {
    /// Parses folded-stack text (`a;b;c 12` per line; blank lines ignored). A stack that
    /// appears twice is summed.
    pub fn parse(text: &str) -> Result<Folded, FoldError> {
        let mut folded = Folded::default();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let (stack, count) = line
                .rsplit_once(' ')
                .and_then(|(s, c)| Some((s.trim_end(), c.parse::<u64>().ok()?)))
                .filter(|(s, _)| !s.is_empty())
                .ok_or(FoldError { line: i + 1 })?;
            folded.add(stack, count);
        }
        Ok(folded)
    }

    /// Folds the text `perf script -F comm,tid,time,event,ip,sym,dso` prints for
    /// `perf record -g`, marking kernel frames. Without the period field each sample counts
    /// one, so the counts are samples, as the graph says.
    pub fn from_perf_script(script: &[u8]) -> io::Result<Folded> {
        let mut opts = FoldOptions::default();
        opts.annotate_kernel = true;
        // One thread: the input is small and the host is busy enough.
        opts.nthreads = 1;
        let mut out = Vec::new();
        Folder::from(opts).collapse(script, &mut out)?;
        let text = String::from_utf8_lossy(&out);
        Folded::parse(&text).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
    }

    /// Adds `count` samples of `stack`.
    pub fn add(&mut self, stack: &str, count: u64) {
        *self.stacks.entry(stack.to_string()).or_default() += count;
    }

    /// Adds every stack of `other` (e.g. the rounds of one side of a compare).
    pub fn merge(&mut self, other: &Folded) {
        for (stack, count) in &other.stacks {
            self.add(stack, *count);
        }
    }

    /// Total samples.
    pub fn total(&self) -> u64 {
        self.stacks.values().sum()
    }

    /// Whether there is no sample at all.
    pub fn is_empty(&self) -> bool {
        self.stacks.is_empty()
    }

    /// Samples whose innermost frame ran in the kernel, and all samples.
    pub fn kernel_share(&self) -> (u64, u64) {
        let kernel = self
            .stacks
            .iter()
            .filter(|(s, _)| s.rsplit(';').next().map(frame_kind) == Some(FrameKind::Kernel))
            .map(|(_, c)| c)
            .sum();
        (kernel, self.total())
    }

    /// The folded text, one `STACK COUNT` line per stack, sorted (the form `flamegraph.pl`
    /// and inferno read).
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        for (stack, count) in &self.stacks {
            s += &format!("{stack} {count}\n");
        }
        s
    }

    fn frames(&self) -> impl Iterator<Item = &str> {
        self.stacks.keys().flat_map(|s| s.split(';'))
    }
}

/// Whether a folded frame ran in the kernel (folding marked it `_[k]`) or in user space.
pub fn frame_kind(frame: &str) -> FrameKind {
    if frame.ends_with(KERNEL_SUFFIX) {
        FrameKind::Kernel
    } else {
        FrameKind::User
    }
}

/// A frame's colour: a blue for user space, a red for the kernel, the shade picked by a hash
/// of the name so that neighbours differ and a function keeps its shade from graph to graph.
pub fn frame_color(frame: &str) -> (u8, u8, u8) {
    // FNV-1a: stable across runs and builds, unlike the std hasher.
    let h = frame.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    let v1 = (h & 0xff) as u8;
    let v2 = ((h >> 8) & 0xff) as u8;
    match frame_kind(frame) {
        // Blues: b 205..255, g 90..190, r 20..80; b always far above r.
        FrameKind::User => (20 + v1 % 60, 90 + v2 % 100, 205 + v1 % 50),
        // Reds: r 205..255, g 40..120, b 30..70; r always far above b.
        FrameKind::Kernel => (205 + v1 % 50, 40 + v2 % 80, 30 + v1 % 40),
    }
}

/// What a graph is labelled with: a title (the run's figures go here) and a smaller line below.
#[derive(Clone, Debug, Default)]
pub struct Labels {
    /// The title line.
    pub title: String,
    /// The line under it (how it was sampled).
    pub subtitle: Option<String>,
}

impl Labels {
    /// The labels of a flame graph of `summary`'s run: its figures in the title (req/s,
    /// latency percentiles, connections, pipeline depth, URL) and, below, what was sampled.
    pub fn of_run(summary: &Summary, sampled: &str) -> Labels {
        let p = &summary.percentiles.corrected;
        let i = &summary.info;
        let url = i.urls.first().map_or("", String::as_str);
        Labels {
            title: format!(
                "{} req/s, p50 {}, p99 {}, -c {}, -p {}, {url}",
                format::metric(summary.rps),
                format::latency_us(p.p50_us),
                format::latency_us(p.p99_us),
                i.connections,
                i.pipeline,
            ),
            subtitle: Some(format!(
                "{sampled}; {} requests in {:.2}s; user-space frames blue, kernel frames red",
                summary.requests,
                summary.elapsed.as_secs_f64()
            )),
        }
    }
}

fn options<'a>(labels: &Labels, palette: Option<&'a mut PaletteMap>) -> Options<'a> {
    let mut opt = Options::default();
    opt.title = labels.title.clone();
    opt.subtitle = labels.subtitle.clone();
    opt.colors = Palette::Basic(BasicPalette::Hot);
    opt.count_name = "samples".to_string();
    opt.palette_map = palette;
    // Same input, same picture: the frames' colours come from the palette map, and nothing
    // else may vary.
    opt.deterministic = true;
    opt
}

/// Draws `folded` as an SVG flame graph: user-space frames in blues, kernel frames in reds.
pub fn render(folded: &Folded, labels: &Labels, out: impl Write) -> io::Result<()> {
    if folded.is_empty() {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "no samples"));
    }
    let mut palette = PaletteMap::default();
    // inferno draws a root frame, labelled `all` but named "", under every stack: neither
    // user nor kernel, so grey.
    palette.insert("", rgb((200, 200, 200)));
    for frame in folded.frames() {
        palette.insert(frame, rgb(frame_color(frame)));
    }
    let text = folded.to_text();
    let mut opt = options(labels, Some(&mut palette));
    flamegraph::from_lines(&mut opt, text.lines(), out)
}

/// Draws the differential flame graph of `b` against `a`: the shape is B's profile, a frame
/// is red where B spends a larger share of its samples there than A did and blue where it
/// spends less (A is scaled to B's sample count first, so a faster side with more samples
/// does not turn everything red).
pub fn render_diff(a: &Folded, b: &Folded, labels: &Labels, out: impl Write) -> io::Result<()> {
    if a.is_empty() || b.is_empty() {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "no samples"));
    }
    let mut lines = Vec::new();
    differential::from_readers(
        differential::Options {
            normalize: true,
            strip_hex: true,
        },
        a.to_text().as_bytes(),
        b.to_text().as_bytes(),
        &mut lines,
    )?;
    let text = String::from_utf8_lossy(&lines);
    let mut opt = options(labels, None);
    flamegraph::from_lines(&mut opt, text.lines(), out)
}

fn rgb((r, g, b): (u8, u8, u8)) -> flamegraph::color::Color {
    flamegraph::color::Color { r, g, b }
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! parses {
        ($name:ident, $text:expr, $want:expr) => {
            #[test]
            fn $name() {
                let got = Folded::parse($text).map(|f| f.to_text());
                assert_eq!(got, $want);
            }
        };
    }

    parses!(one_stack, "a;b;c 3\n", Ok("a;b;c 3\n".to_string()));
    parses!(
        repeated_stacks_add,
        "a;b 1\na;b 2\n",
        Ok("a;b 3\n".to_string())
    );
    parses!(blank_lines_ignored, "\na 1\n\n", Ok("a 1\n".to_string()));
    parses!(
        frames_may_hold_spaces,
        "a;<impl Foo for Bar>::baz 4\n",
        Ok("a;<impl Foo for Bar>::baz 4\n".to_string())
    );
    parses!(missing_count, "a;b\n", Err(FoldError { line: 1 }));
    parses!(bad_count, "a 1\na;b x\n", Err(FoldError { line: 2 }));
    parses!(count_without_stack, " 5\n", Err(FoldError { line: 1 }));

    macro_rules! kind {
        ($name:ident, $frame:expr, $want:expr) => {
            #[test]
            fn $name() {
                assert_eq!(frame_kind($frame), $want);
            }
        };
    }

    kind!(plain_frame_is_user, "twelve_http::parse", FrameKind::User);
    kind!(
        annotated_frame_is_kernel,
        "tcp_sendmsg_[k]",
        FrameKind::Kernel
    );
    kind!(jit_annotation_is_not_kernel, "foo_[j]", FrameKind::User);

    #[test]
    fn user_frames_are_blue_and_kernel_frames_red() {
        for name in ["main", "twelve_engine::conn::Conn::on_read", "x", ""] {
            let (r, _, b) = frame_color(name);
            assert!(b >= 205 && r < 80, "{name}: {:?}", frame_color(name));
            let k = format!("{name}{KERNEL_SUFFIX}");
            let (r, _, b) = frame_color(&k);
            assert!(r >= 205 && b < 70, "{k}: {:?}", frame_color(&k));
        }
    }

    #[test]
    fn kernel_share_counts_innermost_frames() {
        let f = Folded::parse("w;main;send;tcp_sendmsg_[k] 3\nw;main;parse 1\n").unwrap();
        assert_eq!(f.kernel_share(), (3, 4));
    }

    #[test]
    fn merge_sums_counts() {
        let mut a = Folded::parse("x;y 1\n").unwrap();
        a.merge(&Folded::parse("x;y 2\nx;z 1\n").unwrap());
        assert_eq!(a.to_text(), "x;y 3\nx;z 1\n");
        assert_eq!(a.total(), 4);
    }

    #[test]
    fn run_labels_carry_the_figures() {
        let mut w = crate::WorkerResult {
            requests: 250_000,
            wall_time: std::time::Duration::from_secs(1),
            ..Default::default()
        };
        w.latency.record(0, 0, 300_000);
        let mut run = crate::RunResult {
            elapsed: std::time::Duration::from_secs(1),
            workers: vec![w],
            ..Default::default()
        };
        run.info.connections = 64;
        run.info.pipeline = 1;
        run.info.urls = vec!["http://127.0.0.1:1/json".into()];
        let labels = Labels::of_run(&Summary::new(&run, &[]), "perf -F 999");
        assert_eq!(
            labels.title,
            "250.00k req/s, p50 300.03us, p99 300.03us, -c 64, -p 1, http://127.0.0.1:1/json"
        );
        let sub = labels.subtitle.unwrap();
        assert!(
            sub.starts_with("perf -F 999; 250000 requests in 1.00s"),
            "{sub}"
        );
    }

    /// A few lines of `perf script -F comm,tid,time,event,ip,sym,dso` (the fields twelve asks
    /// for: no period, so each sample counts one) after `perf record -g`, as perf 6.1 prints.
    const PERF_SCRIPT: &str = "\
twelve-w0 1240 100.000001: cpu-clock:ppp: 
\tffffffff8a1b2c3d tcp_sendmsg+0x1d ([kernel.kallsyms])
\tffffffff8a1b2000 __sys_sendto+0x10 ([kernel.kallsyms])
\t55d0c0de0100 twelve_engine::backend::epoll::flush+0x40 (/usr/bin/twelve)
\t55d0c0de0000 std::rt::lang_start+0x10 (/usr/bin/twelve)

twelve-w0 1240 100.000002: cpu-clock:ppp: 
\t55d0c0de0200 twelve_http::parse::parse_request+0x22 (/usr/bin/twelve)
\t55d0c0de0000 std::rt::lang_start+0x10 (/usr/bin/twelve)

";

    #[test]
    fn perf_script_folds_with_kernel_frames_marked() {
        let f = Folded::from_perf_script(PERF_SCRIPT.as_bytes()).unwrap();
        assert_eq!(
            f.to_text(),
            "twelve-w0;std::rt::lang_start;twelve_engine::backend::epoll::flush;\
             __sys_sendto_[k];tcp_sendmsg_[k] 1\n\
             twelve-w0;std::rt::lang_start;twelve_http::parse::parse_request 1\n"
        );
    }
}
