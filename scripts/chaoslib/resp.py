"""resp — the harness's one RESP client: one command on a fresh loopback
connection, short timeouts, plain text replies."""

import socket


def resp(port, *args, timeout=0.5):
    """Send one command to 127.0.0.1:port and return its reply: str for a
    simple or bulk string (bulk decoded with errors replaced), int, None
    for a null, a list for an array, ("ERR", text) for an error. Raises
    OSError (also on a timeout or EOF) or ValueError (a garbled reply)."""
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.settimeout(timeout)
        s.sendall(out)
        f = s.makefile("rb")

        def one():
            line = f.readline()
            if not line:
                raise OSError("eof")
            t, rest = line[:1], line[1:-2]
            if t == b"+":
                return rest.decode()
            if t == b"-":
                return ("ERR", rest.decode())
            if t == b":":
                return int(rest)
            if t == b"$":
                n = int(rest)
                return None if n < 0 else f.read(n + 2)[:-2].decode(errors="replace")
            if t == b"*":
                n = int(rest)
                return None if n < 0 else [one() for _ in range(n)]
            raise OSError("bad reply")
        return one()


def try_resp(port, *args, timeout=0.5):
    """resp(), or None where it raised."""
    try:
        return resp(port, *args, timeout=timeout)
    except (OSError, ValueError):
        return None


def pairs(flat):
    """["k", "v", "k", "v"] -> dict ({} for anything but a list)."""
    if not isinstance(flat, list):
        return {}
    return {flat[i]: flat[i + 1] for i in range(0, len(flat) - 1, 2)}


def info(port, section="replication"):
    """INFO section as a dict ({} where the node did not answer)."""
    r = try_resp(port, "INFO", section)
    if not isinstance(r, str):
        return {}
    out = {}
    for line in r.splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            out[k] = v
    return out
