"""explain — what may explain an overlap of two critical sections, judged
by the moment it began (checks.py's C1 and C8 use it): a whole-holder
pause that covers it, a --release --force within a renewal, and where a
scenario's spec does not list C1, a kill -9 of one side or a network fault
within the last lease before it. docs/RELIABILITY.md, "What explains an
overlap". And what may explain a lock key left after every wrapper ended
(explain_leftover, for C5). Works on plain data only.
"""

MS = 1_000_000

# How late the harness may see a witness's death or a process's exit (its
# loop polls every 10 ms; a loaded machine adds to that).
SEEN_SLACK_MS = 100


# After a release with --force (the key deleted under a live holder) the
# holder notices at its next renewal (every --renew, ttl/3 by default): its
# section may outlast the release by that much, plus a round trip and the
# time to see it die. Anything longer is not explained by the release. A
# plain --release (it revokes the lock and waits for the holder's own
# release) explains nothing: nobody can take the lock before the holder
# released it.
RELEASE_SLACK_MS = 200


def duration_ms(v, default):
    """"500ms", "1s", "2m", 700 -> milliseconds (default if unreadable)."""
    if isinstance(v, (int, float)):
        return int(v)
    if not isinstance(v, str):
        return default
    for suf, mult in (("ms", 1), ("s", 1000), ("m", 60000)):
        if v.endswith(suf) and v[: -len(suf)].replace(".", "", 1).isdigit():
            return int(float(v[: -len(suf)]) * mult)
    return default


def pause_grace_ns(spec):
    """How long after a whole-holder pause ended its section may still
    overlap a section that started then: the resumed guard is past its
    deadline and TERMs the command at once, KILLs it --kill-after later;
    plus the time the harness takes to see it die."""
    return (duration_ms(spec.get("kill_after"), 500) + SEEN_SLACK_MS) * MS


def pause_covers(run, t_ns, grace_ns):
    """The whole-holder pause (STOP of wrapper, guard and command) of run
    that began before t_ns and lasted into it (ended no earlier than
    t_ns - grace_ns), or None. A run's "pauses": [t0_ns, t1_ns or None,
    kind]. A run recorded without "pauses" (an older harness) has none:
    its "signals" say that it was paused, not when."""
    for p in run.get("pauses") or []:
        t0, t1, kind = p[0], p[1], p[2] if len(p) > 2 else "whole"
        if kind == "whole" and t0 < t_ns and (t1 is None or t1 + grace_ns >= t_ns):
            return p
    return None


def fault_windows(meta):
    """The network faults (a paused, partitioned, delayed or restarted
    Redis; a module's: failovers, reshards, blips), as [t0_ns, t1_ns,
    kind]: from meta "fault_events" (the harness's log, "network": true;
    a fault without a recorded end lasts one lease; a Sentinel failover
    lasts from the command until the group settled)."""
    ttl_ns = ((meta.get("spec") or {}).get("ttl_ms") or 1000) * MS
    out = []
    for e in meta.get("fault_events") or []:
        if e.get("network"):
            out.append([e["t_ns"], e.get("until_ns") or e["t_ns"] + ttl_ns, e["kind"]])
    return out


# What may explain an overlap. Where a scenario asserts C1: a whole-holder
# pause that covers it, a --release --force within a renewal. Where it does
# not (its faults can break the lock by design: a single Redis that
# restarts empty, a failover without --sync-replicas, pauses of holders),
# also a kill -9 of one side's wrapper or a network fault within the last
# lease before the overlap began. Nothing else: every other overlap fails
# the run, in every scenario. (--limit N scenarios: C8 judges the count.)
STRICT_EXCUSES = ("pause", "release")
LOOSE_EXCUSES = ("pause", "release", "kill", "network")


def explain_overlap(a, b, runs, meta, excuses):
    """What explains the overlap of sections a and b (b starts no earlier
    than a), in time: (kind, detail) or (None, None)."""
    spec = meta.get("spec") or {}
    ttl_ms = spec.get("ttl_ms") or 1000
    renew_ms = spec.get("renew_ms") or ttl_ms // 3
    t = b["start"]
    if "pause" in excuses:
        grace = pause_grace_ns(spec)
        for x in (a, b):
            p = pause_covers(runs.get(x["id"], {}), t, grace)
            if p:
                return "pause", {"id": x["id"], "paused_from_ms": round((p[0] - t) / MS, 1),
                                 "to_ms": None if p[1] is None else round((p[1] - t) / MS, 1)}
    if "release" in excuses and release_explains(None, a, b, meta.get("releases") or [],
                                                 ttl_ms, renew_ms, spec.get("masters") or 1):
        return "release", {}
    lo = t - ttl_ms * MS
    if "kill" in excuses:
        for e in meta.get("fault_events") or []:
            if e.get("kind") == "kill_wrapper" and e.get("id") in (a["id"], b["id"]) \
                    and lo <= e["t_ns"] <= t:
                return "kill", {"id": e["id"], "before_ms": round((t - e["t_ns"]) / MS, 1)}
    if "network" in excuses:
        for w0, w1, kind in fault_windows(meta):
            if w0 <= t and w1 >= lo:
                return "network", {"kind": kind, "from_ms": round((w0 - t) / MS, 1),
                                   "to_ms": round((w1 - t) / MS, 1)}
    return None, None


def release_explains(o, a, b, releases, ttl_ms, renew_ms, masters=1):
    """Is the overlap of sections a and b explained by a forced release
    (--release --force) of the lock of one of them (x), the other (y)
    starting after the release began? Only if x ended within the renewal
    interval after it. (Either may have started first: two acquires queued
    behind a paused server, the release between them, start their commands
    at the same moment.) A release without --force revokes the lock and
    waits for the holder to release it: it explains nothing. (A release
    recorded without "force", by a harness before that distinction, was a
    deletion: it counts as forced.)

    x is the holder the release names (its fence). With several masters it
    names only the first master's holder, which may be a minority holder
    about to give its part back; there x is any section that was running
    while the release ran."""
    bound = (renew_ms + RELEASE_SLACK_MS) * MS
    for rel in releases:
        if rel.get("rc") != 0 or rel.get("t1") is None or not rel.get("force", True):
            continue
        for x, y in ((a, b), (b, a)):
            named = rel.get("fence") is not None and x["fence"] == rel["fence"]
            running = masters > 1 and x["start"] <= rel["t1"] and x["end"] >= rel["t0"]
            if (named or running) and y["start"] >= rel["t0"] and x["end"] <= rel["t1"] + bound:
                return True
    return False


# A lock key still there after every wrapper ended, with a PTTL within one
# lease (meta "lock_keys": server, pttl_ms, t_ns, the moment it was read):
# it was written (set or renewed) at t - (TTL - PTTL), and by then nobody
# gave it back. What explains that, in time:
#   kill     a wrapper that was kill -9'd, stopped or hung, and ended no
#            earlier than the write (it may be the holder that died)
#   late     a network fault on that master that was on within the lease
#            before the write: a request sent then, applied late
#   release  a network fault on that master that began after the write and
#            before the read: the holder's release or give-back could not
#            reach that master (a release that lands on a quorum of
#            masters is done: a minority's key expires by itself)
# A fault event without "servers" (a module's: failovers, reshards,
# blips) may be on any master. Nothing else: the key fails C5.
def explain_leftover(k, runs, meta):
    """What explains the lock key k left after every wrapper ended:
    (kind, detail) or (None, None). A key without a TTL, or with a TTL
    longer than the lease, is never explained."""
    ttl_ms = ((meta.get("spec") or {}).get("ttl_ms") or 1000)
    pttl, t = k.get("pttl_ms"), k.get("t_ns")
    if not isinstance(pttl, int) or pttl < 0 or pttl > ttl_ms or t is None:
        return None, None
    ttl = ttl_ms * MS
    written = t - (ttl_ms - pttl) * MS
    for r in runs.values():
        sig = set(r.get("signals") or [])
        died = ("KILL" in sig or "TSTP" in sig or r.get("hung")
                or any(x.startswith("STOP") for x in sig))
        end = r.get("exit_ns")
        if died and end is not None and written - SEEN_SLACK_MS * MS <= end <= t:
            return "kill", {"id": r.get("id"), "after_write_ms": round((end - written) / MS, 1)}
    for e in meta.get("fault_events") or []:
        if not e.get("network") or ("servers" in e and k.get("server") not in e["servers"]):
            continue
        w0, w1 = e["t_ns"], e.get("until_ns") or e["t_ns"] + ttl
        detail = {"kind": e["kind"], "from_ms": round((w0 - written) / MS, 1),
                  "to_ms": round((w1 - written) / MS, 1)}
        if w0 <= written and w1 >= written - ttl:
            return "late", detail
        if written < w0 <= t:
            return "release", detail
    return None, None
