#!/usr/bin/env python3
"""delayproxy — a loopback TCP proxy that delivers the FIRST connection's
client-to-server bytes late.

    delayproxy.py TARGET_PORT DELAY_MS

Listens on 127.0.0.1 on a free port and prints "port N" on stdout. Every
accepted connection is forwarded to 127.0.0.1:TARGET_PORT. For the first
one, each chunk the client sends (and its end of stream) reaches the server
DELAY_MS after it arrived: a packet delayed in the network, or retransmitted
late. Server-to-client bytes pass at once. Later connections pass straight.
When the first connection's delayed bytes and its end of stream have all
been handed to the server, it prints "flushed N" (N bytes). Only the
standard library; nothing but loopback.
"""
import queue
import socket
import sys
import threading
import time


def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def pump_back(up, client):
    """Server to client, at once. Keeps draining the server after the
    client has gone, so that the server can finish the delayed requests."""
    client_ok = True
    while True:
        try:
            data = up.recv(65536)
        except OSError:
            break
        if not data:
            break
        if client_ok:
            try:
                client.sendall(data)
            except OSError:
                client_ok = False
    try:
        client.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def pump_forward(client, up, delay_s, first):
    """Client to server: a reader stamps each chunk (and the end of stream,
    as b"") with the time it is due; this thread sends each when due."""
    q = queue.Queue()

    def reader():
        while True:
            try:
                data = client.recv(65536)
            except OSError:
                data = b""
            q.put((time.monotonic() + delay_s, data))
            if not data:
                return

    threading.Thread(target=reader, daemon=True).start()
    total = 0
    while True:
        due, data = q.get()
        pause = due - time.monotonic()
        if pause > 0:
            time.sleep(pause)
        if not data:
            break
        try:
            up.sendall(data)
            total += len(data)
        except OSError:
            break
    try:
        up.shutdown(socket.SHUT_WR)
    except OSError:
        pass
    if first:
        say("flushed %d" % total)


def serve(client, target_port, delay_s, first):
    try:
        up = socket.create_connection(("127.0.0.1", target_port))
    except OSError:
        client.close()
        return
    back = threading.Thread(target=pump_back, args=(up, client), daemon=True)
    back.start()
    pump_forward(client, up, delay_s, first)
    back.join()
    up.close()
    client.close()


def main():
    if len(sys.argv) != 3:
        sys.stderr.write("usage: delayproxy.py TARGET_PORT DELAY_MS\n")
        return 2
    target_port = int(sys.argv[1])
    delay_s = int(sys.argv[2]) / 1000.0
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", 0))
    ls.listen(16)
    say("port %d" % ls.getsockname()[1])
    n = 0
    while True:
        client, _ = ls.accept()
        first = n == 0
        n += 1
        threading.Thread(target=serve, args=(client, target_port,
                                             delay_s if first else 0, first),
                         daemon=True).start()


if __name__ == "__main__":
    sys.exit(main())
