"""nodes — the scenarios' server processes, and what starting them needs.

Node is one redis-server (or redis-sentinel) of a scenario, started in its
own session (a signal to the harness's group never reaches it) and killed
by its pid only. A topology's subclass says how it is started (argv); the
harness expects of every entry of sc.servers: port, tls_port, idx, state
("up", "paused" or "down") and kill().
"""

import os
import shutil
import signal
import socket
import subprocess
import time

from .resp import try_resp


def mono():
    """CLOCK_MONOTONIC in ns, the clock the witness stamps with."""
    return time.monotonic_ns()


def wait_until(cond, secs, step=0.1, stop=None):
    """Poll cond() every step seconds for up to secs: True once it holds;
    False at the deadline, or at once when the stop Event is set."""
    deadline = time.monotonic() + secs
    while time.monotonic() < deadline:
        if stop is not None and stop.is_set():
            return False
        if cond():
            return True
        time.sleep(step)
    return False


def free_port():
    """A loopback port nobody listens on now (never Redis's or Sentinel's
    default port)."""
    while True:
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        p = s.getsockname()[1]
        s.close()
        if p not in (6379, 26379):
            return p


def port_free(port):
    """Can 127.0.0.1:port be bound now?"""
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        s.close()


def make_pki(outdir):
    """A CA and a server certificate for 127.0.0.1, made once per harness run
    for the TLS scenarios; returns the directory, or None without openssl."""
    d = os.path.join(outdir, "pki")
    if os.path.exists(os.path.join(d, "server.crt")):
        return d
    if not shutil.which("openssl"):
        return None
    os.makedirs(d, exist_ok=True)
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    run = lambda *a: subprocess.run(["openssl"] + list(a), cwd=d, check=True,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    run("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.crt", "-days", "30",
        "-subj", "/CN=rr chaos ca")
    run("req", *ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1")
    with open(os.path.join(d, "san.ext"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1\n")
    run("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
        "-CAcreateserial", "-days", "30", "-out", "server.crt", "-extfile", "san.ext")
    return d


def server_argv(port, workdir, logfile, *extra):
    """redis-server on 127.0.0.1:port, no persistence, in the foreground."""
    return ["redis-server", "--port", str(port), "--bind", "127.0.0.1",
            "--save", "", "--appendonly", "no", "--dir", workdir,
            "--logfile", logfile, "--daemonize", "no"] + [str(a) for a in extra]


class Node:
    """One server process. Subclasses define argv(); start() passes its
    arguments on to it."""

    ping_timeout = 0.2   # per PING while waiting for the node to answer
    tries = 60           # PINGs, 50 ms apart
    kill_silent = True   # kill a node that did not answer in time

    def __init__(self, workdir, idx, port=None):
        self.dir, self.idx = workdir, idx
        self.port = port or free_port()
        self.tls_port = None
        self.proc = None
        self.state = "down"  # up | paused | down

    def argv(self, *args, **kw):
        raise NotImplementedError

    def start(self, *args, **kw):
        """Start it and wait until it answers PING: True; else False (and,
        with kill_silent, it is killed again)."""
        self.proc = subprocess.Popen(self.argv(*args, **kw), stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     start_new_session=True)
        for _ in range(self.tries):
            if try_resp(self.port, "PING", timeout=self.ping_timeout) == "PONG":
                self.state = "up"
                return True
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        if self.kill_silent:
            self.kill()
        return False

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def kill(self):
        if self.proc and self.proc.poll() is None:
            try:
                os.kill(self.proc.pid, signal.SIGCONT)
                os.kill(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()
        self.state = "down"

    def pause(self):
        os.kill(self.proc.pid, signal.SIGSTOP)
        self.state = "paused"

    def resume(self):
        os.kill(self.proc.pid, signal.SIGCONT)
        self.state = "up"


class Redis(Node):
    """A plain master of the basic, lease and limit scenarios. With pki
    (make_pki's directory) it also listens for TLS on tls_port: the
    wrappers (through the proxies) use that one, the harness the plain
    port. One slow to answer after a restart_redis is left running: it may
    still come up (setup kills it before it tries another port)."""

    tries = 50
    kill_silent = False

    def __init__(self, workdir, idx, pki=None):
        super().__init__(workdir, idx)
        self.pki = pki
        self.tls_port = free_port() if pki else None

    def argv(self):
        return server_argv(self.port, self.dir, os.path.join(self.dir, "redis%d.log" % self.idx),
                           *self.tls_args())

    def tls_args(self):
        if not self.pki:
            return []
        return ["--tls-port", str(self.tls_port),
                "--tls-cert-file", os.path.join(self.pki, "server.crt"),
                "--tls-key-file", os.path.join(self.pki, "server.key"),
                "--tls-ca-cert-file", os.path.join(self.pki, "ca.crt"),
                "--tls-auth-clients", "no"]
