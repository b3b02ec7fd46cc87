//! The HTML report in a real browser: headless Chromium (Debian's `chromium` package) loads the
//! page from a file, logs no console message (errors, CSP violations, uncaught exceptions),
//! runs the page's script that counts the plots, and renders a screenshot that is not blank.
//! Skips, saying why, where /usr/bin/chromium is absent; fails instead under
//! `TWELVE_REQUIRE_ALL_TESTS=1`, as in CI, which installs it.
mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use twelve_testkit::skip_or_fail;

const CHROMIUM: &str = "/usr/bin/chromium";

fn chromium_present() -> bool {
    if Path::new(CHROMIUM).exists() {
        return true;
    }
    skip_or_fail(format!("{CHROMIUM} is absent (apt-get install chromium)"));
    false
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("html_browser")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs headless Chromium on `page` with `extra` flags; returns (stdout, stderr). Killed (by
/// its pid) after 120 s so a hung browser fails the test instead of hanging it.
fn chromium(dir: &Path, page: &Path, extra: &[String]) -> (String, String) {
    let profile = dir.join(format!("profile-{}", extra.len()));
    let mut cmd = Command::new(CHROMIUM);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--enable-logging=stderr",
        "--v=0",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .args(extra)
    .arg(format!("file://{}", page.display()))
    .stdin(Stdio::null())
    .stdout(Stdio::from(
        std::fs::File::create(dir.join("stdout")).unwrap(),
    ))
    .stderr(Stdio::from(
        std::fs::File::create(dir.join("stderr")).unwrap(),
    ));
    let mut child = cmd.spawn().expect("start chromium");
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within 120 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    (
        std::fs::read_to_string(dir.join("stdout")).unwrap(),
        std::fs::read_to_string(dir.join("stderr")).unwrap(),
    )
}

/// Console messages Chromium logged for the page (`INFO:CONSOLE:<line>] "…"`): with
/// `--enable-logging=stderr` every console call, uncaught exception and CSP violation shows
/// up there. The report calls no console function, so any line is a failure.
fn console_lines(stderr: &str) -> Vec<&str> {
    stderr.lines().filter(|l| l.contains(":CONSOLE")).collect()
}

#[test]
fn console_check_sees_an_error_and_a_blocked_fetch() {
    // The check below is only worth something if it can fail: a page with a console error
    // and a fetch the report's CSP blocks must be caught.
    if !chromium_present() {
        return;
    }
    let dir = scratch("control");
    let page = dir.join("bad.html");
    std::fs::write(
        &page,
        "<!DOCTYPE html><html><head><meta http-equiv=\"Content-Security-Policy\" \
         content=\"default-src 'none'; script-src 'unsafe-inline'\"><script>\
         console.error('deliberate')</script></head><body><img src=\"http://127.0.0.1:9/x.png\">\
         </body></html>",
    )
    .unwrap();
    let (_, stderr) = chromium(&dir, &page, &["--dump-dom".into()]);
    let lines = console_lines(&stderr);
    assert!(lines.iter().any(|l| l.contains("deliberate")), "{stderr}");
    assert!(
        lines.iter().any(|l| l.contains("Content Security Policy")),
        "{stderr}"
    );
}

#[test]
fn report_loads_without_console_messages_and_draws_its_plots() {
    if !chromium_present() {
        return;
    }
    let dir = scratch("report");
    let page = dir.join("report.html");
    std::fs::write(&page, common::page().render()).unwrap();

    let (dom, stderr) = chromium(&dir, &page, &["--dump-dom".into()]);
    assert_eq!(console_lines(&stderr), Vec::<&str>::new());
    // The page's script ran after parsing and found the six inline SVGs.
    assert!(
        dom.contains("data-plots=\"6\""),
        "{}",
        &dom[..dom.len().min(600)]
    );
    for id in [
        "throughput",
        "latency",
        "distribution",
        "throughput-over-time",
        "latency-over-time",
        "errors",
    ] {
        assert!(
            dom.contains(&format!("id=\"plot-{id}\"")),
            "plot {id} missing"
        );
    }

    let shot = dir.join("screenshot.png");
    let (_, stderr) = chromium(
        &dir,
        &page,
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1200,2000".into(),
            "--hide-scrollbars".into(),
        ],
    );
    assert_eq!(console_lines(&stderr), Vec::<&str>::new());
    let (width, height, colours, ink) = decode(&shot);
    assert_eq!((width, height), (1200, 2000));
    assert!(colours > 16, "only {colours} distinct colours: blank page?");
    assert!(
        ink > 0.01,
        "only {:.3}% of pixels are not white",
        ink * 100.0
    );
    eprintln!("screenshot: {} ({colours} colours)", shot.display());
}

/// Decodes a PNG: (width, height, distinct RGB colours, share of non-white pixels).
fn decode(path: &Path) -> (u32, u32, usize, f64) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    let bytes = &buf[..info.buffer_size()];
    let mut seen = std::collections::HashSet::new();
    let mut ink = 0usize;
    for px in bytes.chunks_exact(channels) {
        let rgb = match channels {
            1 | 2 => [px[0]; 3],
            _ => [px[0], px[1], px[2]],
        };
        if rgb != [255, 255, 255] {
            ink += 1;
        }
        seen.insert(rgb);
    }
    let n = (info.width * info.height) as f64;
    (info.width, info.height, seen.len(), ink as f64 / n)
}
