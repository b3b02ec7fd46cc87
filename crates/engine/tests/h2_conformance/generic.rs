//! h2spec's generic sections 1-3: what a server accepts, frame type by frame type
//! (RFC 9113 §3.4, §5.1, §6): the preface, frames on idle, half-closed and closed streams,
//! and each frame type with its optional parts (padding, priority, CONTINUATION).

use crate::Expect::{Data, Pong, PongOrClose, Status};
use crate::kind::*;
use crate::*;
use twelve_testkit::h2::Client;

/// A POST `/echo` on stream 1 whose body is still to come.
fn open_post(c: &mut Client) {
    let b = block(c, "POST", "/echo");
    c.send(&headers(1, END_HEADERS, &b));
}

/// A GET `/` on stream 1 after SETTINGS_INITIAL_WINDOW_SIZE 0: the response's DATA waits.
fn blocked_get(c: &mut Client) {
    c.send(&settings(&[(INITIAL_WINDOW_SIZE, 0)]));
    c.get(1, "/");
}

cases! {
    // 1: the client preface is accepted (the handshake itself), and a request is answered.
    g1_c1_the_client_preface_is_accepted: |c| {
        c.get(1, "/");
    } => Status(1, 200);

    // 2: PRIORITY on an idle stream (§5.1 "idle": PRIORITY is allowed).
    g2_c1_priority_on_an_idle_stream_is_accepted: |c| {
        c.send(&priority(1, 0, 255));
    } => Pong;
    // WINDOW_UPDATE, PRIORITY and RST_STREAM on a half-closed (remote) stream are allowed.
    g2_c2_window_update_on_a_half_closed_stream_is_accepted: |c| {
        blocked_get(c);
        c.send(&window_update(1, 1));
    } => Data(1, 1);
    g2_c3_priority_on_a_half_closed_stream_is_accepted: |c| {
        blocked_get(c);
        c.send(&priority(1, 0, 255));
        c.send(&window_update(1, 1));
    } => Data(1, 1);
    g2_c4_rst_stream_on_a_half_closed_stream_is_accepted: |c| {
        blocked_get(c);
        c.send(&rst(1, CANCEL));
    } => Pong;
    // PRIORITY on a closed stream is allowed (§5.1 "closed").
    g2_c5_priority_on_a_closed_stream_is_accepted: |c| {
        c.get(1, "/");
        check(c, Status(1, 200));
        c.send(&priority(1, 0, 255));
    } => Pong;

    // 3.1 DATA: one frame, many, and padded.
    g3_1_c1_a_data_frame: |c| {
        open_post(c);
        c.data(1, b"test", true);
    } => Status(1, 200);
    g3_1_c2_data_frames: |c| {
        open_post(c);
        c.data(1, b"test", false);
        c.data(1, b"test", true);
    } => Status(1, 200);
    g3_1_c3_a_padded_data_frame: |c| {
        open_post(c);
        c.send(&raw(DATA, END_STREAM | PADDED, 1, b"\x05test\0\0\0\0\0"));
    } => Status(1, 200);

    // 3.2 HEADERS: plain, padded, with priority.
    g3_2_c1_a_headers_frame: |c| {
        c.get(1, "/");
    } => Status(1, 200);
    g3_2_c2_a_padded_headers_frame: |c| {
        let mut p = vec![8u8];
        p.extend(block(c, "GET", "/"));
        p.extend([0u8; 8]);
        c.send(&headers(1, END_STREAM | END_HEADERS | PADDED, &p));
    } => Status(1, 200);
    g3_2_c3_a_headers_frame_with_priority: |c| {
        let mut p = vec![0, 0, 0, 0, 255];
        p.extend(block(c, "GET", "/"));
        c.send(&headers(1, END_STREAM | END_HEADERS | PRIORITY_FLAG, &p));
    } => Status(1, 200);

    // 3.3 PRIORITY (§5.3.2: accepted and ignored): weights 1 and 256, a dependency, the
    // E bit, and an idle stream above the one that is then opened.
    g3_3_c1_priority_of_weight_1: |c| {
        c.send(&priority(1, 0, 0));
        c.get(1, "/");
    } => Status(1, 200);
    g3_3_c2_priority_of_weight_256: |c| {
        c.send(&priority(1, 0, 255));
        c.get(1, "/");
    } => Status(1, 200);
    g3_3_c3_priority_with_a_dependency: |c| {
        c.send(&priority(3, 1, 0));
        c.get(1, "/");
    } => Status(1, 200);
    g3_3_c4_priority_exclusive: |c| {
        c.send(&priority(1, 1 << 31, 0));
        c.get(1, "/");
    } => Status(1, 200);
    g3_3_c5_priority_on_an_idle_stream_then_headers_below_it: |c| {
        c.send(&priority(3, 0, 255));
        c.get(1, "/");
    } => Status(1, 200);

    // 3.4-3.9: RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE.
    g3_4_c1_rst_stream: |c| {
        open_post(c);
        c.send(&rst(1, CANCEL));
    } => Pong;
    g3_5_c1_settings: |c| {
        c.send(&settings(&[(INITIAL_WINDOW_SIZE, 65_535)]));
    } => Expect::SettingsAck;
    g3_7_c1_ping: |_| {} => Pong;
    g3_8_c1_goaway: |c| {
        c.send(&raw(GOAWAY, 0, 0, b"\x00\x00\x00\x00\x00\x00\x00\x00h2spec"));
    } => PongOrClose;
    g3_9_c1_window_update_on_stream_0: |c| {
        c.send(&window_update(0, 1));
    } => Pong;
    g3_9_c2_window_update_on_stream_1: |c| {
        c.get(1, "/");
        c.send(&window_update(1, 1));
    } => Status(1, 200);

    // 3.10 CONTINUATION: a block cut into HEADERS and one or two CONTINUATIONs.
    g3_10_c1_a_continuation: |c| {
        let b = block(c, "GET", "/");
        c.send(&headers(1, END_STREAM, &b[..3]));
        c.send(&raw(CONTINUATION, END_HEADERS, 1, &b[3..]));
    } => Status(1, 200);
    g3_10_c2_continuations: |c| {
        let b = block(c, "GET", "/");
        c.send(&headers(1, END_STREAM, &b[..2]));
        c.send(&raw(CONTINUATION, 0, 1, &b[2..4]));
        c.send(&raw(CONTINUATION, END_HEADERS, 1, &b[4..]));
    } => Status(1, 200);
}

/// After the peer's GOAWAY a stream it opened before is still answered (§6.8).
#[test]
fn g3_8_c2_a_stream_opened_before_the_peers_goaway_is_answered() {
    let server = common::TestServer::start();
    let mut c = handshake(&server);
    open_post(&mut c);
    c.send(&raw(GOAWAY, 0, 0, b"\x00\x00\x00\x01\x00\x00\x00\x00"));
    c.data(1, b"test", true);
    check(&mut c, Status(1, 200));
    drop(c);
    server.finish();
}
