//! h2spec's http2 sections 4 and 5: frame format and size, header compression, stream states
//! and identifiers, concurrency, priority, error handling and extensions (RFC 9113 §4, §5).

use crate::Expect::{Conn, Pong, Stream, StreamOrConn};
use crate::kind::*;
use crate::*;
use twelve_testkit::h2::Client;

/// A GET `/` on `stream` whose response ends before the next step: the stream is closed.
fn closed_get(c: &mut Client, stream: u32) {
    c.get(stream, "/");
    c.response(stream).expect("the response");
}

/// A POST `/echo` on `stream` whose body is still to come: the stream is open.
fn open_post(c: &mut Client, stream: u32) {
    let b = block(c, "POST", "/echo");
    c.send(&headers(stream, END_HEADERS, &b));
}

cases! {
    // §4.1: a frame of an unknown type is ignored.
    s4_1_c1_a_frame_of_unknown_type_is_ignored: |c| {
        c.send(&raw(0x16, 0, 0, &[0; 8]));
    } => Pong;
    // §4.1: undefined flags are ignored (a PING with every flag but ACK set is a PING).
    s4_1_c2_undefined_flags_are_ignored: |c| {
        c.send(&raw(PING, 0x16, 0, &[0; 8]));
    } => Expect::Ack([0; 8]);
    // §4.1: the reserved bit of the stream id is ignored.
    s4_1_c3_the_reserved_bit_is_ignored: |c| {
        c.send(&raw(PING, 0x16, 1 << 31, &[0; 8]));
    } => Expect::Ack([0; 8]);

    // §4.2: a frame of 2^14 octets is taken whole.
    s4_2_c1_a_data_frame_of_2_14_octets_is_taken: |c| {
        open_post(c, 1);
        c.send(&raw(DATA, END_STREAM, 1, &[b'x'; 16_384]));
    } => Expect::Status(1, 200);
    // §4.2: a frame over SETTINGS_MAX_FRAME_SIZE is FRAME_SIZE_ERROR (DATA: the stream's, or
    // the connection's).
    s4_2_c2_a_data_frame_over_max_frame_size_is_frame_size_error: |c| {
        open_post(c, 1);
        c.send(&raw(DATA, END_STREAM, 1, &[b'x'; 16_385]));
    } => StreamOrConn(1, &[FRAME_SIZE_ERROR]);
    // §4.2: ... and on a frame carrying a field block, a connection error.
    s4_2_c3_a_headers_frame_over_max_frame_size_is_a_connection_error: |c| {
        let mut b = block(c, "GET", "/");
        b.extend(dummy_block(c, 5));
        c.send(&headers(1, END_STREAM | END_HEADERS, &b));
    } => Conn(&[FRAME_SIZE_ERROR]);

    // §4.3: a block that does not decode is COMPRESSION_ERROR.
    s4_3_c1_an_undecodable_block_is_compression_error: |c| {
        c.send(&headers(1, END_STREAM | END_HEADERS, b"\x40"));
    } => Conn(&[COMPRESSION_ERROR]);
    // §4.3: a field block is contiguous: no other frame type inside it ...
    s4_3_c2_a_priority_frame_inside_a_field_block_is_protocol_error: |c| {
        let b = block(c, "GET", "/");
        c.send(&headers(1, 0, &b));
        c.send(&priority(1, 0, 255));
        let d = dummy_block(c, 1);
        c.send(&raw(CONTINUATION, END_HEADERS, 1, &d));
    } => Conn(&[PROTOCOL_ERROR]);
    // §4.3: ... and no frame of another stream.
    s4_3_c3_headers_of_another_stream_inside_a_field_block_is_protocol_error: |c| {
        let b = block(c, "GET", "/");
        c.send(&headers(1, 0, &b));
        c.send(&headers(3, END_STREAM | END_HEADERS, &b));
        let d = dummy_block(c, 1);
        c.send(&raw(CONTINUATION, END_HEADERS, 1, &d));
    } => Conn(&[PROTOCOL_ERROR]);

    // §5.1 idle: only HEADERS and PRIORITY; anything else is a connection error.
    s5_1_c1_idle_data_is_protocol_error: |c| {
        c.data(1, b"test", true);
    } => Conn(&[PROTOCOL_ERROR]);
    s5_1_c2_idle_rst_stream_is_protocol_error: |c| {
        c.send(&rst(1, CANCEL));
    } => Conn(&[PROTOCOL_ERROR]);
    s5_1_c3_idle_window_update_is_protocol_error: |c| {
        c.send(&window_update(1, 100));
    } => Conn(&[PROTOCOL_ERROR]);
    s5_1_c4_idle_continuation_is_protocol_error: |c| {
        let b = block(c, "GET", "/");
        c.send(&raw(CONTINUATION, END_HEADERS, 1, &b));
    } => Conn(&[PROTOCOL_ERROR]);
    // §5.1 half-closed (remote), §6.1: DATA is a stream error STREAM_CLOSED.
    s5_1_c5_half_closed_remote_data_is_stream_closed: |c| {
        c.get(1, "/");
        c.data(1, b"test", true);
    } => Stream(1, &[STREAM_CLOSED]);
    // §5.1: any frame after END_STREAM but WINDOW_UPDATE, PRIORITY and RST_STREAM is
    // STREAM_CLOSED.
    s5_1_c6_half_closed_remote_headers_is_stream_closed: |c| {
        c.get(1, "/");
        c.get(1, "/");
    } => StreamOrConn(1, &[STREAM_CLOSED]);
    // ... also while the response is still being sent (the stream is in the server's table).
    s5_1_c6b_half_closed_remote_headers_while_answering_is_stream_closed: |c| {
        c.send(&settings(&[(INITIAL_WINDOW_SIZE, 0)]));
        c.get(1, "/");
        check(c, Pong); // the response's HEADERS went; its DATA waits for window
        c.get(1, "/");
    } => StreamOrConn(1, &[STREAM_CLOSED]);
    s5_1_c6c_half_closed_remote_data_while_answering_is_stream_closed: |c| {
        c.send(&settings(&[(INITIAL_WINDOW_SIZE, 0)]));
        c.get(1, "/");
        check(c, Pong);
        c.data(1, b"test", true);
    } => Stream(1, &[STREAM_CLOSED]);
    // §6.10: a CONTINUATION after a whole block is PROTOCOL_ERROR (h2spec also takes
    // STREAM_CLOSED).
    s5_1_c7_half_closed_remote_continuation_is_an_error: |c| {
        let b = block(c, "GET", "/");
        c.send(&headers(1, END_STREAM | END_HEADERS, &b));
        c.send(&raw(CONTINUATION, END_HEADERS, 1, &b));
    } => Conn(&[STREAM_CLOSED, PROTOCOL_ERROR]);
    // §5.1 closed: after the peer's RST_STREAM, any frame but PRIORITY is STREAM_CLOSED.
    s5_1_c8_closed_by_rst_data_is_stream_closed: |c| {
        open_post(c, 1);
        c.send(&rst(1, CANCEL));
        c.data(1, b"test", true);
    } => Stream(1, &[STREAM_CLOSED]);
    s5_1_c9_closed_by_rst_headers_is_stream_closed: |c| {
        open_post(c, 1);
        c.send(&rst(1, CANCEL));
        c.get(1, "/");
    } => StreamOrConn(1, &[STREAM_CLOSED]);
    s5_1_c10_closed_by_rst_continuation_is_an_error: |c| {
        open_post(c, 1);
        c.send(&rst(1, CANCEL));
        let d = dummy_block(c, 1);
        c.send(&raw(CONTINUATION, END_HEADERS, 1, &d));
    } => Conn(&[STREAM_CLOSED, PROTOCOL_ERROR]);
    // §5.1 closed (both ends sent END_STREAM): DATA is STREAM_CLOSED (§6.1).
    s5_1_c11_closed_data_is_stream_closed: |c| {
        closed_get(c, 1);
        c.data(1, b"test", true);
    } => StreamOrConn(1, &[STREAM_CLOSED]);
    // §5.1 closed: HEADERS after END_STREAM is a connection error STREAM_CLOSED.
    s5_1_c12_closed_headers_is_a_connection_error_stream_closed: |c| {
        closed_get(c, 1);
        c.get(1, "/");
    } => Conn(&[STREAM_CLOSED]);
    s5_1_c13_closed_continuation_is_an_error: |c| {
        closed_get(c, 1);
        let d = dummy_block(c, 1);
        c.send(&raw(CONTINUATION, END_HEADERS, 1, &d));
    } => Conn(&[STREAM_CLOSED, PROTOCOL_ERROR]);

    // §5.1.1: a client's stream id is odd ...
    s5_1_1_c1_an_even_stream_id_is_protocol_error: |c| {
        c.get(2, "/");
    } => Conn(&[PROTOCOL_ERROR]);
    // §5.1.1: ... and above every id it used before.
    s5_1_1_c2_a_stream_id_below_the_last_is_protocol_error: |c| {
        c.get(5, "/");
        c.get(3, "/");
    } => Conn(&[PROTOCOL_ERROR]);

    // §5.1.2: a stream over SETTINGS_MAX_CONCURRENT_STREAMS is refused (the responses
    // cannot end while the window is 0, so every stream stays open).
    s5_1_2_c1_a_stream_over_the_concurrency_limit_is_refused: |c| {
        c.send(&settings(&[(INITIAL_WINDOW_SIZE, 0)]));
        let b = block(c, "GET", "/");
        c.batch();
        for i in 0..=128u32 {
            c.send(&headers(2 * i + 1, END_STREAM | END_HEADERS, &b));
        }
        c.flush();
    } => Stream(257, &[PROTOCOL_ERROR, REFUSED_STREAM]);

    // §5.3.1: a stream cannot depend on itself (HEADERS carries a block: the connection
    // may end so that HPACK stays in step, §4.3).
    s5_3_1_c1_headers_depending_on_itself_is_protocol_error: |c| {
        let mut p = 1u32.to_be_bytes().to_vec();
        p.push(255);
        p.extend(block(c, "GET", "/"));
        c.send(&headers(1, END_STREAM | END_HEADERS | PRIORITY_FLAG, &p));
    } => StreamOrConn(1, &[PROTOCOL_ERROR]);
    s5_3_1_c2_priority_depending_on_itself_is_protocol_error: |c| {
        c.send(&priority(1, 1, 255));
    } => Stream(1, &[PROTOCOL_ERROR]);

    // §5.4.1: a connection error sends GOAWAY, then closes the connection.
    s5_4_1_c1_a_connection_error_closes_the_connection: |c| {
        c.send(&raw(PING, 0, 3, &[0; 8]));
    } => Conn(&[PROTOCOL_ERROR]);
    s5_4_1_c2_a_connection_error_sends_goaway_first: |c| {
        c.send(&raw(PING, 0, 3, &[0; 8]));
    } => Conn(&[PROTOCOL_ERROR]);

    // §5.5: unknown extension frames are ignored ...
    s5_5_c1_an_unknown_extension_frame_is_ignored: |c| {
        c.send(&raw(0x16, 0, 0, &[0; 8]));
    } => Pong;
    // ... but not inside a field block (§4.3).
    s5_5_c2_an_unknown_frame_inside_a_field_block_is_protocol_error: |c| {
        let b = block(c, "GET", "/");
        c.send(&headers(1, END_STREAM, &b));
        c.send(&raw(0x16, 0, 0, &[0; 8]));
    } => Conn(&[PROTOCOL_ERROR]);
}

/// §5.1.2: the limit counts open streams, not streams ever opened: 300 requests in one write,
/// each answered at once, are all answered on a server that allows 128 at a time.
#[test]
fn s5_1_2_c2_more_streams_than_the_limit_in_all_are_answered() {
    let server = common::TestServer::start();
    let mut c = handshake(&server);
    let b = block(&mut c, "GET", "/x");
    c.batch();
    for i in 0..300u32 {
        c.send(&headers(2 * i + 1, END_STREAM | END_HEADERS, &b));
    }
    c.flush();
    for i in 0..300u32 {
        check(&mut c, Expect::Status(2 * i + 1, 200));
    }
    drop(c);
    server.finish();
}
