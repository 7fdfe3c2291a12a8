"""crowd — scripts/chaos scenarios: a crowd of waiters killed at once.

The wrapper slots loop as everywhere, with a long --wait (they are the
live waiters). The one fault:

  crowd_kill   start a blocker (run "bE": it waits for the lock, then
               holds it for up to 20 s), and once its command runs, SIZE
               extra wrappers with --wait 30s on the same lock (runs "cE-I",
               tags crowd=E) that queue behind it; wait until the queue has
               grown by nine tenths of them (at most 10 s), then SIGKILL all
               of them within a few ms, and SIGTERM the blocker 200 ms later
               (its release meets the dead entries at the head, still
               looking alive for a queue-entry TTL); from the kill on, for one queue-entry
               TTL and a half, a run without --wait and without -q every
               250 ms (runs "pE-J", tags probe=E; its stderr kept), which
               may take the lock like any other. The next crowd comes two
               leases later at the earliest, none in the last 10 s.

What the README promises ("Waiting is first come, first served"): a
waiter that dies costs the ones behind it at most two thirds of a lease,
and so do many that die at once; a run without --wait that finds the lock
free but waiters queued says "N waiters are queued ahead", never "lock is
held". Checked as C9 (scripts/chaoslib/checks.py, check_crowd): after each
kill, no stretch with the lock unused while a live waiter is queued lasts
past max(its start + a refresh interval, the kill + 2/3 TTL) + 400 ms
(or its lease's end + a refresh interval, where a killed crowd member
held the lock); a
probe's "lock is held" needs a section (or a killed holder's lease) within
400 ms of it. C1-C5 as everywhere (no fault here can cause an overlap).

Works on a Scenario object of scripts/chaos (sc) through its hooks and
sc.spawn; imports nothing from there.
"""

import os
import signal

from chaoslib.checks import ALL_CHECKS, MS, NS
from chaoslib.nodes import mono
from chaoslib.resp import try_resp

CHECKS = list(ALL_CHECKS) + ["C9"]
CROWD_WAIT_MS = 30000
PROBE_EVERY_MS = 250
QUEUE_WAIT_S = 5
BATCH = 5
LAST_S = 10         # no crowd starts later than this before the end
RELEASE_AFTER_MS = 200   # the blocker's release, after the kill

SHORT = []

# Timeouts of 1 s: the crowd's connections go through the harness's proxies
# (one Python thread), and a loaded machine must not turn that into 69s.
CROWD = dict(wrappers=6, duration=30, ttl_ms=3000, wait_ms=12000, hold_ms=100,
             redis_timeout="1s", connect_timeout="1s", faults=["crowd_kill"],
             fault_every=(0.5, 1.0), asserted=CHECKS)

# --short: one crowd of 30-50 under a 1.5 s lease (allowed: 1 s + 400 ms of
# idle lock), started in the first 2 s; 4 live waiters.
SHORT.append(dict(CROWD, name="single-crowd-short", masters=1, wrappers=4, duration=6,
                  ttl_ms=1500, wait_ms=8000, crowd=dict(size=(30, 50), last_s=4)))

LONG = [
    dict(CROWD, name="single-crowd-killed", masters=1, crowd=dict(size=(80, 150))),
    dict(CROWD, name="redlock5-crowd-killed", masters=5, crowd=dict(size=(40, 70))),
]


# The holder's pid, if the lock's token is the record's, and the lock's PTTL.
HOLDER = """
local t = redis.call('GET', KEYS[1])
local h = redis.call('HMGET', KEYS[2], 'token', 'pid')
if not t or t ~= h[1] then return {'', -2} end
return {h[2] or '', redis.call('PTTL', KEYS[1])}
"""


def entry_ttl_ms(ttl_ms):
    """The queue-entry TTL: half the --ttl, 200 ms..10 s (README)."""
    return max(200, min(10000, ttl_ms // 2))


def setup(sc):
    if sc.s.get("crowd") is None:
        return
    sc.crowd = {"kills": [], "probes": [], "dead_holders": [], "busy_until": 0, "events": 0,
                "slack_ms": 400,
                "entry_ttl_ms": entry_ttl_ms(sc.s["ttl_ms"]),
                # (set up just before the scenario's clock starts)
                "last_start_ns": mono() + int((sc.s["duration"]
                                               - sc.s["crowd"].get("last_s", LAST_S)) * NS)}
    os.makedirs(os.path.join(sc.dir, "probes"), exist_ok=True)


def queue_len(sc):
    """ZCARD of the lock's queue on the first master (None: no answer)."""
    r = try_resp(sc.servers[0].port, "ZCARD", "redlock:{%s}:queue" % sc.lock_name(), timeout=0.2)
    return r if isinstance(r, int) else None


def f_crowd_kill(sc):
    c = getattr(sc, "crowd", None)
    if c is None or mono() < c["busy_until"] or mono() > c["last_start_ns"]:
        return False
    e = c["events"]
    c["events"] += 1
    lo, hi = sc.s["crowd"]["size"]
    n = sc.rng.randint(lo, hi)
    t0 = mono()
    members = []
    ev = {"event": e, "size": n}
    c["busy_until"] = mono() + 60 * NS
    # The blocker: a run that holds the lock (up to 20 s) while the crowd
    # queues behind it, so that its release meets the dead entries at the
    # head of the queue, as a holder's release would after a crowd died.
    blocker = sc.spawn(3000 + e, 0, rid="b%d" % e, wait_ms=CROWD_WAIT_MS, hold_ms=20000,
                       tags={"blocker": e})

    def blocked():
        if blocker.started or not blocker.alive() or mono() - t0 > QUEUE_WAIT_S * NS:
            ev["blocker_started"] = blocker.started
            ev["queue_before"] = queue_len(sc) or 0
            spawn_some()
        else:
            sc.later(20 * MS, blocked)

    def spawn_some():
        """BATCH at a time, so the harness's loop keeps reading the log."""
        for i in range(len(members), min(n, len(members) + BATCH)):
            members.append(sc.spawn(1000 + e, i, rid="c%d-%d" % (e, i), wait_ms=CROWD_WAIT_MS,
                                    tags={"crowd": e}))
        if len(members) < n:
            sc.later(20 * MS, spawn_some)
        else:
            ev["spawned_ms"] = round((mono() - t0) / MS)
            sc.later(100 * MS, kill)

    def kill():
        q = queue_len(sc)
        if (q is not None and q < ev["queue_before"] + 0.9 * n
                and mono() - t0 < 2 * QUEUE_WAIT_S * NS):
            sc.later(100 * MS, kill)
            return
        ev["queue_at_kill"] = q
        ids = []
        t_kill = mono()
        for r in members:
            if r.alive():
                os.kill(r.proc.pid, signal.SIGKILL)
                r.signals.append("KILL")
                ids.append(r.id)
        ev.update(t_ns=t_kill, killed=len(ids), ids=ids,
                  kill_took_ms=round((mono() - t_kill) / MS, 1))
        c["kills"].append(ev)
        c["busy_until"] = t_kill + 2 * sc.s["ttl_ms"] * MS
        probe_until = t_kill + (c["entry_ttl_ms"] * 3 // 2) * MS
        probe(e, 0, probe_until)
        pids = {r.proc.pid for r in members}
        holders(pids, t_kill + (sc.s["ttl_ms"] + c["entry_ttl_ms"]) * MS)
        sc.later(RELEASE_AFTER_MS * MS, unblock)

    def unblock():
        """The blocker stops (SIGTERM: its command is stopped, the lock
        released) while the dead entries still look alive."""
        if blocker.alive():
            os.kill(blocker.proc.pid, signal.SIGTERM)
            blocker.signals.append("TERM-blocker")
            ev["unblocked_ns"] = mono()

    def holders(pids, until):
        """Who holds the lock (lock token = record token) on each master:
        a crowd member (its acquire ran before it died, or after: a request
        of a dead process still runs) holds it until its lease ends."""
        if mono() > until:
            return
        sc.later(100 * MS, lambda: holders(pids, until))
        for sv in sc.servers:
            rep = try_resp(sv.port, "EVAL", HOLDER, 2, "redlock:{%s}:lock" % sc.lock_name(),
                           "redlock:{%s}:state" % sc.lock_name(), timeout=0.1)
            if isinstance(rep, list) and len(rep) == 2 and rep[0].isdigit() and int(rep[0]) in pids:
                c["dead_holders"].append({"t_ns": mono(), "server": sv.idx, "pid": int(rep[0]),
                                          "pttl": rep[1]})

    def probe(e, j, until):
        if mono() > until:
            return
        rid = "p%d-%d" % (e, j)
        path = os.path.join(sc.dir, "probes", rid + ".err")
        with open(path, "wb") as err:
            r = sc.spawn(2000 + e, j, rid=rid, wait_ms=0, stderr=err, tags={"probe": e}, loud=True)
        c["probes"].append({"id": rid, "t0_ns": r.spawn_ns, "path": path})
        sc.later(PROBE_EVERY_MS * MS, lambda: probe(e, j + 1, until))

    blocked()
    return True


FAULTS = {"crowd_kill": f_crowd_kill}


def drain(sc):
    """The scenario's time is up: a crowd not killed yet dies now, as the
    others did (its kill would not come: nothing runs later now), and a
    blocker still holding is stopped."""
    c = getattr(sc, "crowd", None)
    if c is None:
        return
    t, ids = mono(), []
    for r in sc.runs:
        if r.tags.get("crowd") is not None and r.alive():
            os.kill(r.proc.pid, signal.SIGKILL)
            r.signals.append("KILL")
            ids.append(r.id)
    if ids:
        c["kills"].append({"event": "drain", "t_ns": t, "killed": len(ids), "ids": ids})
    for r in sc.runs:
        if r.tags.get("blocker") is not None and r.alive():
            os.kill(r.proc.pid, signal.SIGTERM)
            r.signals.append("TERM-blocker")


def finish(sc):
    c = getattr(sc, "crowd", None)
    if c is None:
        return {}
    by_id = {r.id: r for r in sc.runs}
    for p in c["probes"]:
        r = by_id.get(p["id"])
        p["t1_ns"] = r.exit_ns if r is not None and r.exit_ns else mono()
        p["rc"] = r.rc if r is not None else None
        try:
            with open(p.pop("path"), "rb") as f:
                p["err"] = f.read().decode(errors="replace").strip()[:400]
        except OSError:
            p["err"] = ""
    return {"crowd": c}
