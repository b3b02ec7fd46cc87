//! Flame graphs drawn from synthetic folded stacks, read back as SVG: every frame's colour
//! family, the title with the run's figures, and the differential graph's red and blue.
#![cfg(feature = "flame")]

use std::collections::HashMap;
use twelve_report::flame::{Folded, Labels, render, render_diff};

/// A server that spends most of its time sending (kernel) and some parsing (user).
const SERVER: &str = "\
twelve-w0;main;epoll_loop;flush;__sys_sendto_[k];tcp_sendmsg_[k] 60
twelve-w0;main;epoll_loop;flush;__sys_sendto_[k];tcp_sendmsg_[k];tcp_write_xmit_[k] 20
twelve-w0;main;epoll_loop;parse_request 15
twelve-w0;main;epoll_loop;epoll_wait_[k] 5
";

/// inferno's SVG starts with a DOCTYPE, which roxmltree refuses unless asked.
fn parse(svg: &str) -> roxmltree::Document<'_> {
    let opts = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    roxmltree::Document::parse_with_options(svg, opts).expect("the SVG parses")
}

/// Each frame of an SVG flame graph: its name (`<title>`, without the sample count) and fill.
fn frames(svg: &str) -> HashMap<String, (u8, u8, u8)> {
    let doc = parse(svg);
    let mut out = HashMap::new();
    for g in doc.descendants().filter(|n| n.has_tag_name("g")) {
        let title = g.children().find(|n| n.has_tag_name("title"));
        let rect = g.children().find(|n| n.has_tag_name("rect"));
        let (Some(title), Some(rect)) = (title, rect) else {
            continue;
        };
        let name = title.text().unwrap_or_default();
        let name = name.split(" (").next().unwrap().to_string();
        let fill = rect.attribute("fill").expect("a frame has a fill");
        let nums: Vec<u8> = fill
            .trim_start_matches("rgb(")
            .trim_end_matches(')')
            .split(',')
            .map(|v| v.trim().parse().unwrap())
            .collect();
        out.insert(name, (nums[0], nums[1], nums[2]));
    }
    out
}

fn draw(folded: &str, title: &str) -> String {
    let mut svg = Vec::new();
    let labels = Labels {
        title: title.to_string(),
        subtitle: Some("perf record -g -F 999".to_string()),
    };
    render(&Folded::parse(folded).unwrap(), &labels, &mut svg).unwrap();
    String::from_utf8(svg).unwrap()
}

#[test]
fn every_frame_is_drawn_in_its_family() {
    let svg = draw(SERVER, "t");
    let frames = frames(&svg);
    for name in ["main", "epoll_loop", "flush", "parse_request", "twelve-w0"] {
        let (r, _, b) = frames[name];
        assert!(
            b > 200 && r < 80,
            "user frame {name} not blue: {:?}",
            (r, b)
        );
    }
    for name in [
        "__sys_sendto",
        "tcp_sendmsg",
        "tcp_write_xmit",
        "epoll_wait",
    ] {
        // inferno shows kernel frames without the `_[k]` folding added.
        let key = frames
            .keys()
            .find(|k| k.trim_end_matches("_[k]") == name)
            .unwrap_or_else(|| panic!("no frame {name} in {:?}", frames.keys()));
        let (r, _, b) = frames[key];
        assert!(
            r > 200 && b < 80,
            "kernel frame {name} not red: {:?}",
            (r, b)
        );
    }
}

#[test]
fn the_title_carries_the_figures() {
    let svg = draw(SERVER, "twelve bench: 247.6k req/s, p99 372.74us");
    let doc = parse(&svg);
    let texts: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text())
        .collect();
    assert!(
        texts.contains(&"twelve bench: 247.6k req/s, p99 372.74us"),
        "{texts:?}"
    );
    assert!(texts.contains(&"perf record -g -F 999"), "{texts:?}");
}

#[test]
fn frame_widths_follow_the_sample_counts() {
    let svg = draw(SERVER, "t");
    let doc = parse(&svg);
    let title_of = |prefix: &str| {
        doc.descendants()
            .filter(|n| n.has_tag_name("title"))
            .filter_map(|n| n.text())
            .find(|t| t.starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix}"))
            .to_string()
    };
    assert!(
        title_of("tcp_sendmsg").contains("80 samples"),
        "{}",
        title_of("tcp_sendmsg")
    );
    assert!(title_of("parse_request").contains("15 samples"));
}

#[test]
fn the_diff_is_red_where_b_grew_and_blue_where_it_shrank() {
    // B parses twice as much per sample and sends less.
    let a = Folded::parse("w;main;parse 10\nw;main;send_[k] 90\n").unwrap();
    let b = Folded::parse("w;main;parse 40\nw;main;send_[k] 60\n").unwrap();
    let mut svg = Vec::new();
    let labels = Labels {
        title: "B against A".into(),
        subtitle: None,
    };
    render_diff(&a, &b, &labels, &mut svg).unwrap();
    let frames = frames(&String::from_utf8(svg).unwrap());
    let (r, _, b_) = frames["parse"];
    assert!(
        r > b_ && r > 200,
        "parse grew, should be red: {:?}",
        frames["parse"]
    );
    let send = frames
        .iter()
        .find(|(k, _)| k.starts_with("send"))
        .map(|(_, c)| *c)
        .unwrap();
    assert!(
        send.2 > send.0 && send.2 > 200,
        "send shrank, should be blue: {send:?}"
    );
}

#[test]
fn the_diff_of_equal_profiles_is_neutral() {
    // Same shape, B twice the samples: normalised, nothing changed, so no frame is coloured.
    let a = Folded::parse("w;main;parse 10\nw;main;send_[k] 90\n").unwrap();
    let b = Folded::parse("w;main;parse 20\nw;main;send_[k] 180\n").unwrap();
    let mut svg = Vec::new();
    render_diff(&a, &b, &Labels::default(), &mut svg).unwrap();
    for (name, (r, g, b)) in frames(&String::from_utf8(svg).unwrap()) {
        // inferno draws an unchanged frame in a neutral grey: no red, no blue.
        assert!(
            r == g && g == b,
            "{name} coloured without a change: {:?}",
            (r, g, b)
        );
    }
}

#[test]
fn an_empty_profile_is_an_error_not_an_empty_picture() {
    let mut svg = Vec::new();
    assert!(render(&Folded::default(), &Labels::default(), &mut svg).is_err());
}
