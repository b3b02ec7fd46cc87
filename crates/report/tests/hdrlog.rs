//! `--hdr-log` output reads back through the hdrhistogram crate's interval-log reader and
//! V2 deserialiser, interval for interval and count for count.
use base64::Engine;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use std::time::{Duration, SystemTime};
use twelve_report::{IntervalLog, IntervalRecord, Recorder};

#[test]
fn interval_log_round_trips() {
    let start = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    let mut log = IntervalLog::new(Vec::new(), start);
    let mut written = Vec::new();
    for s in 0..3u64 {
        let mut r = Recorder::new();
        for i in 0..(100 + s * 10) {
            r.record(0, i * 100, 10_000 + i * 1_000 + s);
        }
        written.push(r.clone());
        log.push(IntervalRecord {
            offset: Duration::from_secs(s),
            length: Duration::from_secs(1),
            latency: r,
        });
    }
    let bytes = log.finish().unwrap();
    let text = String::from_utf8(bytes.clone()).unwrap();
    assert!(
        text.contains("#[Histogram log format version 1.3]"),
        "{text}"
    );
    assert!(
        text.contains("HISTF"),
        "V2 compressed payloads start HISTF: {text}"
    );

    let mut seen = 0;
    let mut de = Deserializer::new();
    for entry in IntervalLogIterator::new(&bytes) {
        let LogEntry::Interval(ih) = entry.expect("log parses") else {
            continue;
        };
        let idx = ih.start_timestamp().as_secs() as usize;
        assert_eq!(ih.duration(), Duration::from_secs(1));
        let raw = base64::engine::general_purpose::STANDARD
            .decode(ih.encoded_histogram())
            .unwrap();
        let h: Histogram<u64> = de.deserialize(&mut raw.as_slice()).unwrap();
        let want = match ih.tag().map(|t| t.as_str()) {
            None => &written[idx].corrected,
            Some("uncorrected") => &written[idx].uncorrected,
            Some("queue-wait") => &written[idx].wait,
            Some(other) => panic!("unexpected tag {other}"),
        };
        assert_eq!(&h, want);
        // Interval_Max is in ms (ns / 10^6).
        assert!((ih.max() - want.max() as f64 / 1e6).abs() < 1e-3);
        seen += 1;
    }
    assert_eq!(seen, 9);
}
