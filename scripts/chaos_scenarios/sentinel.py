"""sentinel — scripts/chaos scenarios for a Redis Sentinel group.

The wrappers use `-r redis-sentinel://S1,S2,S3/NAME` (src/sentinel.c): a
group of 1 master + 2 replicas (redis-server, no persistence,
repl-diskless-sync-delay 0) and 3 sentinels (quorum 2,
down-after-milliseconds 1000, failover-timeout 3000, parallel-syncs 1), as
tests/integration/lib_topo.sh starts it. No proxy: the sentinels announce
the data nodes' real ports, and the wrappers talk to those.

  fault              what the harness does (one at a time, in a thread)
  -----------------  -------------------------------------------------------
  sentinel_failover  SENTINEL FAILOVER NAME (to a sentinel that takes it;
                     NOGOODSLAVE/INPROG: again, for up to 5 s), then waits
                     until every sentinel names the new master and it says
                     ROLE master, then until the group settled
  kill_master        kill -9 of the master's redis-server; wait for the
                     sentinels to promote a replica; start the old node
                     again on its port, empty, as a replica of the new
                     master (--replicaof: it rejoins at once, rather than
                     as a second master until a sentinel converts it,
                     which Sentinel does only after 8-10 s); wait until the
                     group settled

SENTINEL FAILOVER leaves the old master a master, with no replicas, until
a sentinel converts it 8-10 s later (+convert-to-slave) and sees it as a
healthy replica up to 10 s after that; the harness sends it REPLICAOF the
new master itself when it is still a master 2 s after the failover ended
(as an operator would), so that a cycle takes ~3.5 s, not ~21 s.

"Settled": every sentinel names one master, with flags plain "master"
(no failover in progress), it says ROLE master, every other live data
node replicates from it with the link up (its own INFO), every sentinel
sees the 2 other sentinels and at least one healthy replica (flags exactly
"slave", link ok; all of them at the start). Only then can the next fault
start, fault_every later. The two kinds take turns. Every wait is bounded
(a failover that does not end in 20 s, a group that does not settle in
30 s, is printed and recorded in meta.json under "sentinel", and no fault
follows it); a fault counts as injected once a new master was promoted.

The scenarios, each with 10 wrappers. The "failovers" ones: 50 ms holds
under `-t 2s`; the "long-holds" ones: half of the runs hold 0.2-1.5 s
(lease.py's hold) under `-t 1s`, so that holders span a failover and renew
across it.

  sentinel-nosync-*   without --sync-replicas. C3-C5 asserted, C1/C2
                      measured: an overlap is a lock on the old master
                      that the promoted replica never had.
  sentinel-sync1-*    --sync-replicas 1 (of 2 replicas). C3-C5 asserted,
                      C1/C2 measured: a SENTINEL FAILOVER promotes one
                      replica while the old master, still writable, has
                      its lock confirmed by the *other* replica, which
                      then resyncs from the new master and drops it.
  sentinel-sync2-*    --sync-replicas 2, every replica. C1-C5 asserted: a
                      lock write counts only if the replica that will be
                      promoted has it too. (A run while a replica is down
                      is refused: 69.)
  sentinel-sync{1,2}-planned
                      SENTINEL FAILOVER only, the old master converted by
                      the sentinels (not the harness), -t 9s, holds of
                      2-7 s: C5 also fails on a holder lost (79), since
                      the lease leaves room for the failover -- except,
                      with --sync-replicas 1, a run whose command started
                      between the SENTINEL FAILOVER and the promotion (its
                      lock may have been confirmed by the replica that was
                      not promoted: the sync1 window above)

The checker needs nothing new: overlaps are explained only by a pause of
the whole holder (signal STOP), which these faults never send.
Everything here works on a Scenario object of scripts/chaos (sc) and
plain data; nothing is imported from there.
"""

import os
import random
import threading
import time

from chaoslib.checks import ALL_CHECKS, MS
from chaoslib.nodes import Node, free_port, mono, server_argv, wait_until
from chaoslib.resp import info, pairs, try_resp

MEASURED = ["C3", "C4", "C5"]       # C1/C2 reported, not asserted
FAULT_KINDS = ["sentinel_failover", "kill_master"]
# A lock key left with a TTL within one lease after these is a late
# request or a holder cut off by the failover (chaoslib/explain.py,
# explain_leftover).
NETWORK_FAULTS = set(FAULT_KINDS)
MASTER_NAME = "chaos"

PROMOTE_S = 20      # a failover must have completed within this
SETTLE_S = 30       # and the group settled within this
FAILOVER_CMD_S = 5  # SENTINEL FAILOVER refused (NOGOODSLAVE...): retry this long
CONVERT_S = 2       # then REPLICAOF to an old master still a master this long


def _spec(name, sync, duration, every, wrappers=10, ttl_ms=2000, hold=None, quick=0.5):
    extra = ["--sync-replicas", str(sync)] if sync else []
    d = dict(name=name, masters=1, wrappers=wrappers, duration=duration,
             faults=list(FAULT_KINDS), asserted=list(ALL_CHECKS if sync >= 2 else MEASURED),
             ttl_ms=ttl_ms, fault_every=every, extra_opts=extra,
             sentinel=dict(sync_replicas=sync))
    if hold:
        # 1 - quick of the runs hold the lock for hold[0]-hold[1] ms
        # (lease.py's hold; the wrappers then also write --metrics-file and
        # run in a process group of the harness's session): holders that
        # span a failover and renew across it.
        d["lease"] = dict(hold=hold, short=quick)
    return d


HOLDS = (200, 1500)   # half of the runs: long enough to span a failover


def _planned(name, sync, duration=60):
    """Planned failovers only (SENTINEL FAILOVER), the old master left to
    the sentinels to convert (8-10 s later), under -t 9s: holders of 2-7 s
    span a failover and renew across it (every 3 s). The lease leaves room,
    so none may end lost: a 79 is a C5 violation here (issue 18 point 4)."""
    d = _spec(name, sync, duration, (3.0, 6.0), wrappers=6, ttl_ms=9000,
              hold=(2000, 7000), quick=0.5)
    d["faults"] = ["sentinel_failover"]
    d["sentinel"].update(convert=False, keeps=True)
    d["min_completed"] = 3
    return d

SHORT = [
    # Two faults (a SENTINEL FAILOVER, a kill -9), 2-3 s of calm before
    # each, in which enough runs complete (C0); asserted. ~18 s in all.
    _spec("sentinel-sync2-short", 2, 14, (2.0, 3.0), ttl_ms=1000, hold=HOLDS, quick=0.75),
]

LONG = [
    # Quick holds under a 2 s lease, as in the other scenarios.
    _spec("sentinel-nosync-failovers", 0, 45, (0.5, 2.0)),
    _spec("sentinel-sync2-failovers", 2, 45, (0.5, 2.0)),
    # Holders that span the failover, under a 1 s lease.
    _spec("sentinel-nosync-long-holds", 0, 45, (0.5, 2.0), ttl_ms=1000, hold=HOLDS),
    _spec("sentinel-sync1-long-holds", 1, 45, (0.5, 2.0), ttl_ms=1000, hold=HOLDS),
    _spec("sentinel-sync2-long-holds", 2, 45, (0.5, 2.0), ttl_ms=1000, hold=HOLDS),
    # Planned failovers that the lease leaves room for: no holder lost.
    _planned("sentinel-sync1-planned", 1),
    _planned("sentinel-sync2-planned", 2),
]


# ---------------------------------------------------------------------------
# The group's processes
# ---------------------------------------------------------------------------

class SentinelNode(Node):
    """A data node (kind "node", a redis-server) or a sentinel (kind
    "sentinel": its config file is written by Group.start)."""

    def __init__(self, workdir, idx, kind):
        super().__init__(workdir, idx)
        self.kind = kind

    def argv(self, replicaof=None):
        tag = "%s%d" % (self.kind, self.idx)
        if self.kind == "sentinel":
            return ["redis-server", os.path.join(self.dir, tag + ".conf"), "--sentinel"]
        a = server_argv(self.port, self.dir, os.path.join(self.dir, tag + ".log"),
                        "--dbfilename", tag + ".rdb", "--repl-diskless-sync-delay", "0")
        if replicaof:
            a += ["--replicaof", "127.0.0.1", str(replicaof)]
        return a


class Group:
    def __init__(self, workdir, rng):
        self.dir = workdir
        self.rng = rng
        self.data = [SentinelNode(workdir, i, "node") for i in range(3)]
        self.sents = [SentinelNode(workdir, i, "sentinel") for i in range(3)]
        self.master = None          # the Node the group settled on last
        self.stop = threading.Event()
        self.events = []            # one dict per fault, filled by the thread
        self.errors = []
        self.busy = False
        self.thread = None
        self.lock = threading.Lock()
        self.relaxed = False        # settled(): all replicas at the start only
        self.kinds = list(FAULT_KINDS)  # the scenario's fault kinds, in turn
        self.convert = True         # REPLICAOF an old master still a master (failover)

    # -- start ------------------------------------------------------------
    def _start(self, node, replicaof=None):
        for _ in range(5):
            if node.start(replicaof):
                return True
            node.port = free_port()
        raise RuntimeError("cannot start %s %d" % (node.kind, node.idx))

    def start(self):
        m = self.data[0]
        self._start(m)
        for n in self.data[1:]:
            self._start(n, m.port)
        self.master = m
        for s in self.sents:
            for _ in range(5):
                body = ("port %d\nbind 127.0.0.1\ndaemonize no\nsave \"\"\nappendonly no\n"
                        "dir %s\nlogfile %s\n"
                        "sentinel monitor %s 127.0.0.1 %d 2\n"
                        "sentinel down-after-milliseconds %s 1000\n"
                        "sentinel failover-timeout %s 3000\n"
                        "sentinel parallel-syncs %s 1\n"
                        % (s.port, self.dir, os.path.join(self.dir, "sentinel%d.log" % s.idx),
                           MASTER_NAME, m.port, MASTER_NAME, MASTER_NAME, MASTER_NAME))
                # Sentinel rewrites its file: its own, writable.
                with open(os.path.join(self.dir, "sentinel%d.conf" % s.idx), "w") as f:
                    f.write(body)
                if s.start():
                    break
                s.port = free_port()
            else:
                raise RuntimeError("cannot start sentinel %d" % s.idx)
        if not self.wait(self.settled, SETTLE_S):
            raise RuntimeError("the sentinel group did not settle in %d s" % SETTLE_S)
        self.relaxed = True

    # -- what the sentinels say ----------------------------------------------
    def named(self):
        """The master port every live sentinel names, if they agree."""
        ports = set()
        for s in self.sents:
            if not s.alive():
                continue
            r = try_resp(s.port, "SENTINEL", "get-master-addr-by-name", MASTER_NAME)
            if not (isinstance(r, list) and len(r) == 2):
                return None
            ports.add(int(r[1]))
        return ports.pop() if len(ports) == 1 else None

    def node_at(self, port):
        for n in self.data:
            if n.port == port:
                return n
        return None

    def is_master(self, port):
        r = try_resp(port, "ROLE")
        return isinstance(r, list) and r and r[0] == "master"

    def settled(self):
        mp = self.named()
        if mp is None or not self.is_master(mp) or not self.failover_over():
            return False
        nr = 0
        for n in self.data:
            if n.port == mp or not n.alive():
                continue
            inf = info(n.port)
            if inf.get("master_link_status") != "up" or inf.get("master_port") != str(mp):
                return False
            nr += 1
        live = [s for s in self.sents if s.alive()]
        for s in live:
            reps = try_resp(s.port, "SENTINEL", "replicas", MASTER_NAME)
            if not isinstance(reps, list):
                return False
            # At least one replica it would promote (it refreshes a
            # replica's state only every 10 s: all would take that long).
            ok = [d for d in map(pairs, reps)
                  if d.get("flags") == "slave" and d.get("master-link-status") == "ok"]
            if len(ok) < min(nr, 1 if self.relaxed else nr):
                return False
            sens = try_resp(s.port, "SENTINEL", "sentinels", MASTER_NAME)
            if not isinstance(sens, list):
                return False
            if sum(1 for d in map(pairs, sens) if d.get("flags") == "sentinel") < len(live) - 1:
                return False
        self.master = self.node_at(mp)
        return True

    def failover_over(self):
        """No sentinel is still in a failover: its master's flags are plain
        "master" (the leader names the promoted replica before the end)."""
        for s in self.sents:
            if s.alive():
                d = pairs(try_resp(s.port, "SENTINEL", "master", MASTER_NAME))
                if d.get("flags") != "master":
                    return False
        return True

    def promoted_other_than(self, old):
        mp = self.named()
        return (mp is not None and mp != old and self.is_master(mp)
                and self.failover_over() and self.named() == mp)

    def wait(self, cond, secs, step=0.1):
        return wait_until(cond, secs, step, self.stop)

    # -- the faults (run in self.thread) ---------------------------------------
    def failover(self, ev):
        old = self.master.port
        deadline = time.monotonic() + FAILOVER_CMD_S
        answer = None
        while time.monotonic() < deadline and not self.stop.is_set():
            for s in self.rng.sample(self.sents, len(self.sents)):
                answer = try_resp(s.port, "SENTINEL", "FAILOVER", MASTER_NAME)
                if answer == "OK":
                    break
            if answer == "OK":
                break
            time.sleep(0.2)
        ev["answer"] = str(answer)
        if answer != "OK":
            return "SENTINEL FAILOVER refused: %s" % (answer,)
        ev["old"] = old
        if not self.wait(lambda: self.promoted_other_than(old), PROMOTE_S):
            return "no new master %d s after SENTINEL FAILOVER" % PROMOTE_S
        ev["promoted_ns"] = mono()
        new = ev["new"] = self.named()
        # The old master is still a master, with no replicas: Sentinel
        # converts it only 8-10 s later (+convert-to-slave), and sees it as
        # a healthy replica up to 10 s after that. CONVERT_S after the
        # sentinels agreed, the harness does it, as an operator would.
        old_node = self.node_at(old)
        if not self.convert:
            return None             # the sentinels convert it (the "planned" scenarios)
        if old_node is not None and not self.wait(lambda: not self.is_master(old), CONVERT_S):
            if self.stop.is_set():
                return None
            ev["converted_by_harness"] = True
            ev["convert_answer"] = str(try_resp(old, "REPLICAOF", "127.0.0.1", new))
            ev["converted_ns"] = mono()
        return None

    def kill_master(self, ev):
        old = self.master
        ev["old"] = old.port
        old.kill()
        ev["killed_ns"] = mono()
        if not self.wait(lambda: self.promoted_other_than(old.port), PROMOTE_S):
            return "no new master %d s after kill -9 of the master" % PROMOTE_S
        ev["promoted_ns"] = mono()
        new = self.named()
        ev["new"] = new
        # Back on its port, empty, as a replica of the new master.
        for _ in range(40):
            if self.stop.is_set() or old.start(replicaof=new):
                break
            time.sleep(0.1)
        if not old.alive():
            return "cannot restart the old master on port %d" % old.port
        ev["restarted_ns"] = mono()
        return None

    def cycle(self, kind):
        ev = {"kind": kind, "t0_ns": mono()}
        try:
            err = (self.failover if kind == "sentinel_failover" else self.kill_master)(ev)
            if err is None and not self.wait(self.settled, SETTLE_S):
                err = "the group did not settle in %d s after %s" % (SETTLE_S, kind)
            if err is None:
                ev["settled_ns"] = mono()
        except Exception as e:   # recorded; the scenario then injects no more
            err = "%s: %r" % (kind, e)
        if err and not self.stop.is_set():
            ev["error"] = err
            self.errors.append(err)
        self.events.append(ev)
        with self.lock:
            self.busy = False

    def begin(self, kind):
        """Start a fault cycle unless one is running (or one failed). The
        kinds take turns (the one asked for only at first): a short run
        has both."""
        with self.lock:
            if self.busy or self.errors or self.stop.is_set():
                return False
            self.busy = True
        if self.events and self.events[-1]["kind"] in self.kinds:
            last = self.events[-1]["kind"]
            kind = self.kinds[(self.kinds.index(last) + 1) % len(self.kinds)]
        self.thread = threading.Thread(target=self.cycle, args=(kind,), daemon=True)
        self.thread.start()
        return True

    def join(self, secs):
        t = self.thread
        if t is not None:
            t.join(secs)
            return not t.is_alive()
        return True


# ---------------------------------------------------------------------------
# Hooks for scripts/chaos
# ---------------------------------------------------------------------------

def start_servers(sc):
    if not sc.s.get("sentinel"):
        return False
    # A generator of its own: the thread's choices must not shift the
    # scenario's (the seed replays the same wrappers and faults).
    g = Group(sc.dir, random.Random(sc.rng.random()))
    g.kinds = [k for k in sc.s.get("faults") or [] if k in FAULT_KINDS] or list(FAULT_KINDS)
    g.convert = sc.s["sentinel"].get("convert", True)
    sc.sentinel = g
    try:
        g.start()
    finally:
        sc.servers = list(g.data)   # killed by the runner, checked for locks
    return True


def url(sc):
    g = sc.sentinel
    return "redis-sentinel://%s/%s" % (",".join("127.0.0.1:%d" % s.port for s in g.sents),
                                        MASTER_NAME)


def _fault(kind):
    def f(sc):
        g = getattr(sc, "sentinel", None)
        return g is not None and g.begin(kind)
    return f


FAULTS = {k: _fault(k) for k in FAULT_KINDS}


def quiesce(sc):
    """After the last wrapper: let the fault in progress finish, then wait
    for the group to settle, so that the lock keys are read from a settled
    group (scripts/chaos: lock_keys reads every data node)."""
    g = getattr(sc, "sentinel", None)
    if g is None:
        return
    g.join(PROMOTE_S + SETTLE_S + 10)
    if not g.wait(g.settled, SETTLE_S):
        g.errors.append("the group did not settle after the scenario")


def stop(sc):
    g = getattr(sc, "sentinel", None)
    if g is not None:
        g.stop.set()
        g.join(5)


def teardown(sc):
    g = getattr(sc, "sentinel", None)
    if g is None:
        return
    for n in g.sents + g.data:
        n.kill()


def finish(sc):
    g = getattr(sc, "sentinel", None)
    if g is None:
        return {}
    t0 = min([e["t0_ns"] for e in g.events] + [0])
    evs = []
    for e in g.events:
        d = dict(e)
        for k in ("promoted_ns", "restarted_ns", "settled_ns"):
            if k in e:
                d[k.replace("_ns", "_after_ms")] = round((e[k] - e["t0_ns"]) / MS)
        evs.append(d)
    done = [e for e in g.events if "settled_ns" in e]
    for err in g.errors:
        print("# %s: sentinel group: %s" % (sc.s["name"], err), flush=True)
    # What counts as injected: a fault whose new master was promoted (C0
    # fails if none was: a group that never failed over tested nothing).
    # Each with its window, from the command to the group settled (or the
    # promotion): what may explain an overlap (checks.py, fault_windows).
    for k in FAULT_KINDS:
        sc.faults.pop(k, None)
    sc.fault_events[:] = [e for e in sc.fault_events if e["kind"] not in FAULT_KINDS]
    for e in g.events:
        if "promoted_ns" in e:
            sc.count(e["kind"], t_ns=e["t0_ns"], until_ns=e.get("settled_ns") or e["promoted_ns"])
    return {"sentinel": {"events": evs, "errors": g.errors, "t0_ns": t0,
                         "failovers_completed": len(done),
                         "master_port": g.master.port if g.master else None,
                         "sentinel_ports": [s.port for s in g.sents],
                         "data_ports": [n.port for n in g.data]}}
