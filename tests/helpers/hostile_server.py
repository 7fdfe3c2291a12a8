#!/usr/bin/env python3
"""hostile_server.py — a fake "Redis" that answers with a reply too big to hold.

    hostile_server.py MODE PORTFILE [--seconds S] [--max-mib N]

Listens on 127.0.0.1, on a port the kernel picks (written to PORTFILE once
it listens, so there is no race for a free port). Every connection, on its
first bytes from the client, gets MODE's header and then a stream, sent as
fast as the socket takes it:

    bulk       $4000000000\\r\\n  then "xxxx..."   (announces a 4 GB string)
    multibulk  *2000000000\\r\\n  then ":1\\r\\n" x N (2e9 elements, one by one)
    nested     *1\\r\\n*1\\r\\n*2000000000\\r\\n then ":1\\r\\n" x N
    line       +xxxx... with no CRLF, ever          (announces nothing)

It stops by itself: each connection sends at most --max-mib MiB (64) and
then stays silent, and the whole server exits after --seconds (8). The
ceiling keeps a client without a reply cap from eating the machine while a
test proves that it lacks one. Only the Python 3 standard library is used.
"""
import argparse
import os
import socket
import threading
import time

HEADERS = {
    "bulk": (b"$4000000000\r\n", b"x"),
    "multibulk": (b"*2000000000\r\n", b":1\r\n"),
    "nested": (b"*1\r\n*1\r\n*2000000000\r\n", b":1\r\n"),
    "line": (b"+", b"x"),
}


def serve(conn, mode, max_bytes, deadline):
    header, unit = HEADERS[mode]
    chunk = unit * (65536 // len(unit))
    sent = 0
    try:
        conn.settimeout(max(0.1, deadline - time.monotonic()))
        if not conn.recv(65536):
            return
        conn.sendall(header)
        while sent < max_bytes and time.monotonic() < deadline:
            conn.sendall(chunk)
            sent += len(chunk)
        # Silent from here on, until the client gives up or we stop.
        while time.monotonic() < deadline:
            conn.settimeout(max(0.05, deadline - time.monotonic()))
            if not conn.recv(65536):
                return
    except OSError:
        pass  # the client closed: what a client with a cap does
    finally:
        conn.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=sorted(HEADERS))
    ap.add_argument("portfile")
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--max-mib", type=int, default=64)
    a = ap.parse_args()

    deadline = time.monotonic() + a.seconds
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", 0))
    ls.listen(16)
    tmp = a.portfile + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % ls.getsockname()[1])
    # Atomic: a reader never sees a half-written port.
    os.replace(tmp, a.portfile)

    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        ls.settimeout(left)
        try:
            conn, _ = ls.accept()
        except socket.timeout:
            break
        threading.Thread(target=serve, daemon=True,
                         args=(conn, a.mode, a.max_mib << 20, deadline)).start()
    ls.close()


if __name__ == "__main__":
    main()
