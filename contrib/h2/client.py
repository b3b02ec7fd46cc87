#!/usr/bin/env python3
"""An HTTP/2 client on Python's `h2` library (python-hyper), for tests/h2_serve_interop.rs:
one request over h2c with prior knowledge, or over TLS with ALPN h2 (--cafile), its body sent
as the server's flow-control windows allow. Prints one JSON line: the status, the response's
fields and body length, how many body octets went out and how many WINDOW_UPDATEs the
server sent. Exits 1 on a reset, a GOAWAY or a close before the response ended.

    client.py HOST PORT PATH [--method POST --body-bytes N] [--cafile CA.pem]
"""
import argparse
import json
import socket
import ssl
import sys

import h2.config
import h2.connection
import h2.events


def connect(args):
    sock = socket.create_connection((args.host, args.port), timeout=10)
    if not args.cafile:
        return sock
    ctx = ssl.create_default_context(cafile=args.cafile)
    ctx.set_alpn_protocols(["h2"])
    tls = ctx.wrap_socket(sock, server_hostname="localhost")
    if tls.selected_alpn_protocol() != "h2":
        sys.exit(f"ALPN chose {tls.selected_alpn_protocol()!r}, not h2")
    return tls


def main():
    p = argparse.ArgumentParser()
    p.add_argument("host")
    p.add_argument("port", type=int)
    p.add_argument("path")
    p.add_argument("--method", default="GET")
    p.add_argument("--body-bytes", type=int, default=0)
    p.add_argument("--cafile")
    args = p.parse_args()

    sock = connect(args)
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    conn.initiate_connection()
    sock.sendall(conn.data_to_send())

    body = bytes(i % 251 for i in range(args.body_bytes))
    scheme = "https" if args.cafile else "http"
    head = [
        (":method", args.method),
        (":scheme", scheme),
        (":authority", f"{args.host}:{args.port}"),
        (":path", args.path),
        ("user-agent", "python-h2"),
    ]
    if body:
        head.append(("content-length", str(len(body))))
    stream = conn.get_next_available_stream_id()
    conn.send_headers(stream, head, end_stream=not body)
    sock.sendall(conn.data_to_send())

    sent, updates, status, fields, got = 0, 0, None, {}, 0
    done = False
    while not done:
        # Send what the windows allow, then wait for the server.
        while sent < len(body):
            room = min(conn.local_flow_control_window(stream), conn.max_outbound_frame_size)
            if room <= 0:
                break
            chunk = body[sent : sent + room]
            sent += len(chunk)
            conn.send_data(stream, chunk, end_stream=sent == len(body))
        sock.sendall(conn.data_to_send())
        data = sock.recv(65536)
        if not data:
            sys.exit(f"closed before the response ended ({sent} body octets sent)")
        for ev in conn.receive_data(data):
            if isinstance(ev, h2.events.WindowUpdated):
                updates += 1
            elif isinstance(ev, h2.events.ResponseReceived):
                for k, v in ev.headers:
                    k, v = k.decode(), v.decode()
                    if k == ":status":
                        status = int(v)
                    else:
                        fields[k] = v
            elif isinstance(ev, h2.events.DataReceived):
                got += len(ev.data)
                conn.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
            elif isinstance(ev, h2.events.StreamEnded):
                done = True
            elif isinstance(ev, (h2.events.StreamReset, h2.events.ConnectionTerminated)):
                sys.exit(f"{ev} ({sent} body octets sent)")
        sock.sendall(conn.data_to_send())
    conn.close_connection()
    sock.sendall(conn.data_to_send())
    sock.close()
    print(json.dumps({"status": status, "fields": fields, "body_len": got,
                      "sent": sent, "window_updates": updates}))


if __name__ == "__main__":
    main()
