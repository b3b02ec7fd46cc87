//! h2spec's http2 sections 6 and 7: each frame type's rules (RFC 9113 §6.1-§6.10) and
//! unknown error codes (§7).

use crate::Expect::{Conn, Data, Pong, PongOrClose, SettingsAck, Status, Stream, StreamOrConn};
use crate::kind::*;
use crate::*;
use twelve_testkit::h2::Got;

cases! {
    // §6.1: DATA on stream 0 is a connection error PROTOCOL_ERROR.
    s6_1_c1_data_on_stream_0_is_protocol_error: |c| {
        c.data(0, b"test", true);
    } => Conn(&[PROTOCOL_ERROR]);
    // §6.1: DATA on a stream not "open" or "half-closed (local)" is STREAM_CLOSED.
    s6_1_c2_data_on_a_half_closed_stream_is_stream_closed: |c| {
        let b = block(c, "POST", "/echo");
        c.send(&headers(1, END_STREAM | END_HEADERS, &b));
        c.data(1, b"test", true);
    } => Stream(1, &[STREAM_CLOSED]);
    // §6.1: padding as long as the payload is a connection error PROTOCOL_ERROR.
    s6_1_c3_data_with_too_long_padding_is_protocol_error: |c| {
        let mut fields = twelve_testkit::h2::request("POST", "/echo");
        fields.push(("content-length", "4"));
        let b = c.block(&fields);
        c.send(&headers(1, END_HEADERS, &b));
        c.send(&raw(DATA, END_STREAM | PADDED, 1, b"\x06Test"));
    } => Conn(&[PROTOCOL_ERROR]);

    // §6.2: a field block is contiguous (§4.3).
    s6_2_c1_priority_inside_a_headers_block_is_protocol_error: |c| {
        let b = block(c, "GET", "/");
        c.send(&headers(1, 0, &b));
        c.send(&priority(1, 0, 255));
        let d = dummy_block(c, 1);
        c.send(&raw(CONTINUATION, END_HEADERS, 1, &d));
    } => Conn(&[PROTOCOL_ERROR]);
    s6_2_c2_headers_of_another_stream_inside_a_block_is_protocol_error: |c| {
        let b = block(c, "GET", "/");
        c.send(&headers(1, 0, &b));
        c.send(&headers(3, END_STREAM | END_HEADERS, &b));
        let d = dummy_block(c, 1);
        c.send(&raw(CONTINUATION, END_HEADERS, 1, &d));
    } => Conn(&[PROTOCOL_ERROR]);
    // §6.2: HEADERS on stream 0 is a connection error PROTOCOL_ERROR.
    s6_2_c3_headers_on_stream_0_is_protocol_error: |c| {
        let b = block(c, "GET", "/");
        c.send(&headers(0, END_STREAM | END_HEADERS, &b));
    } => Conn(&[PROTOCOL_ERROR]);
    // §6.2: padding longer than what remains is PROTOCOL_ERROR.
    s6_2_c4_headers_with_too_long_padding_is_protocol_error: |c| {
        let b = block(c, "GET", "/");
        let mut p = vec![(b.len() + 2) as u8];
        p.extend(&b);
        c.send(&headers(1, END_STREAM | END_HEADERS | PADDED, &p));
    } => StreamOrConn(1, &[PROTOCOL_ERROR]);

    // §6.3: PRIORITY on stream 0 is a connection error PROTOCOL_ERROR.
    s6_3_c1_priority_on_stream_0_is_protocol_error: |c| {
        c.send(&priority(0, 0, 255));
    } => Conn(&[PROTOCOL_ERROR]);
    // §6.3: a PRIORITY not 5 octets long is a stream error FRAME_SIZE_ERROR.
    s6_3_c2_a_short_priority_is_a_stream_error_frame_size: |c| {
        c.get(1, "/");
        c.send(&raw(PRIORITY, 0, 1, b"\x80\x00\x00\x01"));
    } => Stream(1, &[FRAME_SIZE_ERROR]);

    // §6.4: RST_STREAM on stream 0, or on an idle stream, is PROTOCOL_ERROR.
    s6_4_c1_rst_stream_on_stream_0_is_protocol_error: |c| {
        c.send(&rst(0, CANCEL));
    } => Conn(&[PROTOCOL_ERROR]);
    s6_4_c2_rst_stream_on_an_idle_stream_is_protocol_error: |c| {
        c.send(&rst(1, CANCEL));
    } => Conn(&[PROTOCOL_ERROR]);
    // §6.4: a RST_STREAM not 4 octets long is a connection error FRAME_SIZE_ERROR.
    s6_4_c3_a_short_rst_stream_is_frame_size_error: |c| {
        c.get(1, "/");
        c.send(&raw(RST_STREAM, 0, 1, &[0; 3]));
    } => Conn(&[FRAME_SIZE_ERROR]);

    // §6.5: an ACK with a payload is FRAME_SIZE_ERROR ...
    s6_5_c1_a_settings_ack_with_payload_is_frame_size_error: |c| {
        c.send(&raw(SETTINGS, ACK, 0, &[0]));
    } => Conn(&[FRAME_SIZE_ERROR]);
    // ... SETTINGS on a stream is PROTOCOL_ERROR ...
    s6_5_c2_settings_on_a_stream_is_protocol_error: |c| {
        c.send(&raw(SETTINGS, 0, 1, b"\x00\x03\x00\x00\x00\x64"));
    } => Conn(&[PROTOCOL_ERROR]);
    // ... and a length that is not a multiple of 6 is FRAME_SIZE_ERROR.
    s6_5_c3_settings_of_a_bad_length_is_frame_size_error: |c| {
        c.send(&raw(SETTINGS, 0, 0, b"\x00\x03\x00"));
    } => Conn(&[FRAME_SIZE_ERROR]);

    // §6.5.2: values out of each setting's range.
    s6_5_2_c1_enable_push_of_2_is_protocol_error: |c| {
        c.send(&settings(&[(ENABLE_PUSH, 2)]));
    } => Conn(&[PROTOCOL_ERROR]);
    s6_5_2_c2_initial_window_size_over_2_31_1_is_flow_control_error: |c| {
        c.send(&settings(&[(INITIAL_WINDOW_SIZE, 1 << 31)]));
    } => Conn(&[FLOW_CONTROL_ERROR]);
    s6_5_2_c3_max_frame_size_below_16384_is_protocol_error: |c| {
        c.send(&settings(&[(MAX_FRAME_SIZE, 16_383)]));
    } => Conn(&[PROTOCOL_ERROR]);
    s6_5_2_c4_max_frame_size_over_2_24_1_is_protocol_error: |c| {
        c.send(&settings(&[(MAX_FRAME_SIZE, 1 << 24)]));
    } => Conn(&[PROTOCOL_ERROR]);
    s6_5_2_c5_an_unknown_setting_is_ignored: |c| {
        c.send(&settings(&[(0xff, 1)]));
    } => Pong;

    // §6.5.3: values are processed in order: the last INITIAL_WINDOW_SIZE (1) holds.
    s6_5_3_c1_settings_values_apply_in_order: |c| {
        c.send(&settings(&[(INITIAL_WINDOW_SIZE, 100), (INITIAL_WINDOW_SIZE, 1)]));
        check(c, SettingsAck);
        c.get(1, "/");
    } => Data(1, 1);
    // §6.5.3: SETTINGS is acknowledged.
    s6_5_3_c2_settings_are_acknowledged: |c| {
        c.send(&settings(&[(ENABLE_PUSH, 0)]));
    } => SettingsAck;

    // §6.7: PING is answered with an ACK of the same payload ...
    s6_7_c1_ping_is_answered_with_the_same_payload: |_| {} => Pong;
    // ... an ACK is not answered (Pong fails on an ACK of any other payload) ...
    s6_7_c2_a_ping_ack_is_not_answered: |c| {
        c.send(&ping(true, *b"invalid!"));
    } => Pong;
    // ... PING on a stream is PROTOCOL_ERROR, and not 8 octets FRAME_SIZE_ERROR.
    s6_7_c3_ping_on_a_stream_is_protocol_error: |c| {
        c.send(&raw(PING, 0, 1, &[0; 8]));
    } => Conn(&[PROTOCOL_ERROR]);
    s6_7_c4_a_short_ping_is_frame_size_error: |c| {
        c.send(&raw(PING, 0, 0, &[0; 6]));
    } => Conn(&[FRAME_SIZE_ERROR]);

    // §6.8: GOAWAY on a stream is PROTOCOL_ERROR.
    s6_8_c1_goaway_on_a_stream_is_protocol_error: |c| {
        c.send(&raw(GOAWAY, 0, 1, &[0; 8]));
    } => Conn(&[PROTOCOL_ERROR]);

    // §6.9.1: no flow-controlled frame beyond the window.
    s6_9_1_c1_data_stays_within_a_window_of_1: |c| {
        c.send(&settings(&[(INITIAL_WINDOW_SIZE, 1)]));
        check(c, SettingsAck);
        c.get(1, "/");
    } => Data(1, 1);
    // §6.9.1: a window over 2^31-1 is FLOW_CONTROL_ERROR: the connection's ...
    s6_9_1_c2_a_connection_window_over_2_31_1_is_flow_control_error: |c| {
        c.send(&window_update(0, (1 << 31) - 1));
        c.send(&window_update(0, (1 << 31) - 1));
    } => Conn(&[FLOW_CONTROL_ERROR]);
    // ... and a stream's, a stream error.
    s6_9_1_c3_a_stream_window_over_2_31_1_is_a_stream_error: |c| {
        let b = block(c, "POST", "/echo");
        c.send(&headers(1, END_HEADERS, &b));
        c.send(&window_update(1, (1 << 31) - 1));
        c.send(&window_update(1, (1 << 31) - 1));
    } => Stream(1, &[FLOW_CONTROL_ERROR]);

    // §6.9.2: a new INITIAL_WINDOW_SIZE changes the open streams' windows ...
    s6_9_2_c1_a_new_initial_window_applies_to_open_streams: |c| {
        c.send(&settings(&[(INITIAL_WINDOW_SIZE, 0)]));
        check(c, SettingsAck);
        c.get(1, "/");
        check(c, Pong); // the HEADERS went, no DATA could
        c.send(&settings(&[(INITIAL_WINDOW_SIZE, 1)]));
    } => Data(1, 1);
    // ... even below what was sent: the window goes negative and is tracked.
    s6_9_2_c2_a_negative_window_is_tracked: |c| {
        c.send(&settings(&[(INITIAL_WINDOW_SIZE, 3)]));
        check(c, SettingsAck);
        c.get(1, "/");
        check(c, Data(1, 3));
        c.send(&settings(&[(INITIAL_WINDOW_SIZE, 2)]));
        check(c, SettingsAck);
        // The window is 2 - 3 = -1; 2 more open it to 1.
        c.send(&window_update(1, 2));
    } => Data(1, 1);
    s6_9_2_c3_initial_window_over_2_31_1_is_flow_control_error: |c| {
        c.send(&raw(SETTINGS, 0, 0, b"\x00\x04\x80\x00\x00\x00"));
    } => Conn(&[FLOW_CONTROL_ERROR]);

    // §6.9: an increment of 0 is PROTOCOL_ERROR: of the connection ...
    s6_9_c1_a_zero_connection_increment_is_protocol_error: |c| {
        c.send(&window_update(0, 0));
    } => Conn(&[PROTOCOL_ERROR]);
    // ... or of the stream.
    s6_9_c2_a_zero_stream_increment_is_a_stream_error: |c| {
        let b = block(c, "POST", "/echo");
        c.send(&headers(1, END_HEADERS, &b));
        c.send(&window_update(1, 0));
    } => Stream(1, &[PROTOCOL_ERROR]);
    // §6.9: a WINDOW_UPDATE not 4 octets long is FRAME_SIZE_ERROR.
    s6_9_c3_a_short_window_update_is_frame_size_error: |c| {
        c.send(&raw(WINDOW_UPDATE, 0, 0, &[0, 0, 1]));
    } => Conn(&[FRAME_SIZE_ERROR]);

    // §6.10: CONTINUATIONs after HEADERS make one block.
    s6_10_c1_continuations_after_headers_are_one_block: |c| {
        let b = block(c, "GET", "/");
        let d = dummy_block(c, 1);
        c.send(&headers(1, END_STREAM, &b));
        c.send(&raw(CONTINUATION, 0, 1, &d));
        c.send(&raw(CONTINUATION, END_HEADERS, 1, &d));
    } => Status(1, 200);
    // §6.10: inside a block, a frame other than CONTINUATION is PROTOCOL_ERROR ...
    s6_10_c2_data_after_an_unfinished_block_is_protocol_error: |c| {
        let b = block(c, "POST", "/echo");
        let d = dummy_block(c, 1);
        c.send(&headers(1, 0, &b));
        c.send(&raw(CONTINUATION, 0, 1, &d));
        c.data(1, b"test", true);
    } => Conn(&[PROTOCOL_ERROR]);
    // ... a CONTINUATION on stream 0 too ...
    s6_10_c3_continuation_on_stream_0_is_protocol_error: |c| {
        let b = block(c, "GET", "/");
        let d = dummy_block(c, 1);
        c.send(&headers(1, END_STREAM, &b));
        c.send(&raw(CONTINUATION, END_HEADERS, 0, &d));
    } => Conn(&[PROTOCOL_ERROR]);
    // ... and a CONTINUATION with no unfinished block before it.
    s6_10_c4_continuation_after_end_headers_is_protocol_error: |c| {
        let b = block(c, "GET", "/");
        let d = dummy_block(c, 1);
        c.send(&headers(1, END_STREAM | END_HEADERS, &b));
        c.send(&raw(CONTINUATION, END_HEADERS, 1, &d));
    } => Conn(&[PROTOCOL_ERROR]);
    s6_10_c5_continuation_after_a_finished_continuation_is_protocol_error: |c| {
        let b = block(c, "GET", "/");
        let d = dummy_block(c, 1);
        c.send(&headers(1, END_STREAM, &b));
        c.send(&raw(CONTINUATION, END_HEADERS, 1, &d));
        c.send(&raw(CONTINUATION, END_HEADERS, 1, &d));
    } => Conn(&[PROTOCOL_ERROR]);
    s6_10_c6_continuation_after_data_is_protocol_error: |c| {
        let b = block(c, "POST", "/echo");
        let d = dummy_block(c, 1);
        c.send(&headers(1, END_HEADERS, &b));
        c.data(1, b"test", true);
        c.send(&raw(CONTINUATION, 0, 1, &d));
        c.send(&raw(CONTINUATION, END_HEADERS, 0, &d));
    } => Conn(&[PROTOCOL_ERROR]);

    // §7: an unknown error code triggers nothing special: in GOAWAY ...
    s7_c1_goaway_with_an_unknown_code_is_not_special: |c| {
        c.send(&raw(GOAWAY, 0, 0, b"\x00\x00\x00\x00\x00\x00\x00\xff"));
    } => PongOrClose;
    // ... and in RST_STREAM.
    s7_c2_rst_stream_with_an_unknown_code_is_not_special: |c| {
        let b = block(c, "POST", "/echo");
        c.send(&headers(1, END_HEADERS, &b));
        c.send(&rst(1, 0xff));
    } => Pong;
}

/// §4.2 and §6.9.1: a body larger than the client's windows goes out in DATA frames of at most
/// SETTINGS_MAX_FRAME_SIZE (16,384 by default), exactly up to the 65,535 octets of the
/// initial windows, and no further until a WINDOW_UPDATE.
#[test]
fn s6_9_1_c4_a_large_body_fills_the_initial_window_in_frames_of_the_max_size() {
    let server = common::TestServer::start();
    let mut c = handshake(&server);
    c.get(1, "/big.bin");
    let mut got = 0;
    while got < 65_535 {
        match c.next_frame() {
            Got::Data {
                stream: 1, data, ..
            } => {
                assert!(data.len() <= 16_384, "a DATA frame of {}", data.len());
                got += data.len();
            }
            g @ (Got::Reset { .. } | Got::GoAway { .. } | Got::Closed) => panic!("{g:?}"),
            _ => {}
        }
    }
    assert_eq!(got, 65_535);
    // A PING's ACK comes back with no DATA before it: the window is used up.
    c.send(&ping(false, *b"window!!"));
    loop {
        match c.next_frame() {
            Got::Ping { ack: true, .. } => break,
            Got::Data { data, .. } => panic!("{} octets past the window", data.len()),
            g @ (Got::Reset { .. } | Got::GoAway { .. } | Got::Closed) => panic!("{g:?}"),
            _ => {}
        }
    }
    // Opening both windows by 10 lets exactly 10 more octets go.
    c.send(&window_update(0, 10));
    c.send(&window_update(1, 10));
    check(&mut c, Data(1, 10));
    c.send(&rst(1, CANCEL));
    check(&mut c, Pong);
    drop(c);
    server.finish();
}

/// §6.8: a connection error's GOAWAY names the last stream the server took (here 3, both
/// streams answered), then the connection closes.
#[test]
fn s6_8_c2_goaway_names_the_last_stream_taken() {
    let server = common::TestServer::start();
    let mut c = handshake(&server);
    c.get(1, "/");
    c.get(3, "/");
    check(&mut c, Status(1, 200));
    check(&mut c, Status(3, 200));
    c.send(&raw(PING, 0, 3, &[0; 8]));
    let goaway = loop {
        if let g @ (Got::GoAway { .. } | Got::Closed) = c.next_frame() {
            break g;
        }
    };
    assert_eq!(
        goaway,
        Got::GoAway {
            last_stream: 3,
            code: PROTOCOL_ERROR
        }
    );
    assert_eq!(c.next_frame(), Got::Closed);
    drop(c);
    server.finish();
}
