"""An HTTP/2 server (h2c, prior knowledge) that misbehaves on purpose, for tests/h2_misbehave.rs.

Usage: misbehave.py MODE COUNTS_FILE
  rst     resets every third request with INTERNAL_ERROR (RST_STREAM), answers the others
  refuse  refuses every third request with REFUSED_STREAM (RST_STREAM), answers the others
  goaway  answers four requests per connection, then sends GOAWAY naming the last one it
          answered (requests above it are not processed) and closes once the client does
  limit   lowers SETTINGS_MAX_CONCURRENT_STREAMS to 2 after the first request
  window  gives request bodies a 16-octet window, opened 16 octets per WINDOW_UPDATE
  stall   never opens its windows (the default 65,535 octets each): a body that needs more
          waits for ever; answers each request whose body ended
Prints its port on the first line. COUNTS_FILE holds {"answered": N, "reset": N} as JSON,
rewritten before each response or reset is sent, so it is current once the client has it.
"""
import json
import os
import socket
import sys
import threading

import h2.config
import h2.connection
import h2.events
import h2.settings

MODE, COUNTS = sys.argv[1], sys.argv[2]
lock = threading.Lock()
counts = {"answered": 0, "reset": 0}


def count(what):
    with lock:
        counts[what] += 1
        tmp = COUNTS + ".tmp"
        with open(tmp, "w") as f:
            json.dump(counts, f)
        os.replace(tmp, COUNTS)


def answer(conn, sid):
    count("answered")
    body = b"hello"
    conn.send_headers(sid, [(":status", "200"), ("content-length", str(len(body)))])
    conn.send_data(sid, body, end_stream=True)


def handle(sock):
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False))
    if MODE == "window":
        conn.local_settings = h2.settings.Settings(
            client=False, initial_values={h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 16}
        )
    conn.initiate_connection()
    sock.sendall(conn.data_to_send())
    served, gone = 0, False
    bodies = {}
    while True:
        try:
            data = sock.recv(65536)
        except OSError:
            break
        if not data:
            break
        try:
            events = conn.receive_data(data)
        except Exception:
            break
        for ev in events:
            if gone:
                continue
            if isinstance(ev, h2.events.DataReceived):
                bodies[ev.stream_id] = bodies.get(ev.stream_id, 0) + len(ev.data)
                if MODE != "stall":
                    conn.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
            if isinstance(ev, h2.events.StreamEnded) and MODE in ("window", "stall"):
                answer(conn, ev.stream_id)
            if not isinstance(ev, h2.events.RequestReceived):
                continue
            sid = ev.stream_id
            served += 1
            if MODE in ("window", "stall"):
                continue
            if MODE in ("rst", "refuse") and served % 3 == 0:
                count("reset")
                conn.reset_stream(sid, error_code=2 if MODE == "rst" else 7)
                continue
            answer(conn, sid)
            if MODE == "limit" and served == 1:
                conn.update_settings({h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: 2})
            if MODE == "goaway" and served == 4:
                conn.close_connection(last_stream_id=sid)
                gone = True
        try:
            sock.sendall(conn.data_to_send())
        except OSError:
            break
        if gone:
            # The client closes once the streams GOAWAY kept are answered; read until then,
            # so that closing with its requests unread does not reset the GOAWAY away.
            try:
                sock.shutdown(socket.SHUT_WR)
                while sock.recv(65536):
                    pass
            except OSError:
                pass
            break
    sock.close()


def main():
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(128)
    print(srv.getsockname()[1], flush=True)
    while True:
        sock, _ = srv.accept()
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=handle, args=(sock,), daemon=True).start()


main()
