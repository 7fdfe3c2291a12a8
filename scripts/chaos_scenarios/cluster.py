"""cluster — scripts/chaos scenarios against a Redis Cluster (redis-cluster://).

A scenario with cluster=True starts six cluster-enabled redis-servers
(three masters, a replica each), creates the cluster, and gives every
wrapper one lock service: redis-cluster:// with all six nodes as seeds, in
an order drawn per run (so some runs start at the slot's owner, some at a
replica or another master and follow MOVED). No proxies: the faults are the
cluster's own moving parts.

  fault      what the harness does
  ---------  -------------------------------------------------------------
  reshard    moves the job's slot to another master as redis-cli would:
             SETSLOT IMPORTING / MIGRATING, MIGRATE of its keys 0.2-0.6 TTL
             later, SETSLOT NODE everywhere as much again after that; the
             renewals run while the slot is half-way (ASK, TRYAGAIN)
  failover   CLUSTER FAILOVER on a replica of the slot's owner (the manual,
             graceful one: the replica has every write before it takes over)
  halfway    the job's slot left half-way: SETSLOT IMPORTING / MIGRATING,
             no key moved, for 0.5-2.5 s, then SETSLOT STABLE on both (the
             move called off): every script that names a key not there yet
             (an acquire, a release) is refused TRYAGAIN meanwhile, while
             renewals go through

cluster-halfway-once runs --once IDs (a pool of 40, --state-ttl 60s, so
an ID that succeeded must never run again in the scenario: C7) with
--on-stale run (a run recorded abandoned would let its ID run again), a
lease of 4 s (longer than any half-way slot, so every release lands in
the end: an exit 74 fails C5), and the job's records read as limit.py's
give-back scenarios read them (scripts/chaoslib/records.py): a run that
exited 0 recorded 'abandoned' fails C5.

One fault at a time. Neither loses a write, so every check (C1-C5) is
asserted: a wrapper may fail to get or keep the lock (69, 79: availability),
never share it. A kill -9 of the owner is not here: without --sync-replicas
a failover can lose the lock by design (README, "Redis Cluster");
t_cluster.sh covers it with --sync-replicas 1.

Everything works on a Scenario object of scripts/chaos (sc) through the
hooks it calls (start_servers, url, FAULTS, quiesce, teardown, finish),
talking to the nodes with scripts/chaoslib's RESP client (redis-cli only
creates the cluster); nothing is imported from scripts/chaos.
"""

import os
import random
import subprocess

from chaoslib import records
from chaoslib.checks import ALL_CHECKS, NS
from chaoslib.nodes import Node, mono, port_free, server_argv, wait_until
from chaoslib.resp import try_resp

# Timeouts a resharding or a failover fits in (they take 100-500 ms here).
# A release refused while the slot is half-way (TRYAGAIN), or one that timed
# out in the client pause of a manual failover, leaves our key to expire
# within one lease: the checker accepts such a leftover for these faults
# (chaoslib/explain.py, explain_leftover; on any master: not recorded).
NETWORK_FAULTS = {"reshard", "failover"}

CLUSTER_DEFAULTS = dict(masters=1, cluster=True, redis_timeout="500ms", connect_timeout="500ms",
                        wait_ms=4000, fault_every=(0.8, 1.6))

SHORT = [
    dict(CLUSTER_DEFAULTS, name="cluster-reshard-failover", wrappers=8, duration=8,
         faults=["reshard", "failover"], asserted=list(ALL_CHECKS)),
]

LONG = [
    dict(CLUSTER_DEFAULTS, name="cluster-reshard", wrappers=10, duration=15,
         faults=["reshard"], asserted=list(ALL_CHECKS)),
    dict(CLUSTER_DEFAULTS, name="cluster-failover", wrappers=10, duration=15,
         faults=["failover"], asserted=list(ALL_CHECKS), fault_every=(1.5, 2.5)),
    dict(CLUSTER_DEFAULTS, name="cluster-reshard-failover", wrappers=12, duration=25,
         faults=["reshard", "failover"], asserted=list(ALL_CHECKS)),
    dict(CLUSTER_DEFAULTS, name="cluster-halfway-once", wrappers=8, duration=25, ttl_ms=4000,
         wait_ms=8000, faults=["halfway"], fault_every=(1.5, 3.0), respawn_ms=(200, 600),
         records=True, release_room=True, asserted=list(ALL_CHECKS) + ["C6", "C7"],
         lease=dict(once=dict(ids=40, state_ttl="60s", state_ttl_ms=60000, on_stale="run"))),
]


def cluster_port(taken):
    """A free port below 55535 whose cluster bus port (+10000) is free too."""
    while True:
        p = random.randrange(20000, 45000)
        if p not in taken and port_free(p) and port_free(p + 10000):
            return p


def cmd(port, *args):
    """One command to one node: its reply, or None (no answer in 5 s)."""
    return try_resp(port, *args, timeout=5)


def state_ok(port):
    """Does the node say cluster_state:ok?"""
    r = cmd(port, "CLUSTER", "INFO")
    return isinstance(r, str) and "cluster_state:ok" in r


def nodes_view(sc):
    """CLUSTER NODES from a live node: [(id, port, flags, master_id, slots)]."""
    for sv in sc.servers:
        if sv.state != "up":
            continue
        out = cmd(sv.port, "CLUSTER", "NODES")
        if not isinstance(out, str) or not out:
            continue
        view = []
        for line in out.splitlines():
            f = line.split()
            if len(f) < 8:
                continue
            port = int(f[1].split("@")[0].rsplit(":", 1)[1] or 0)
            view.append((f[0], port, f[2], f[3], f[8:]))
        return view
    return []


def owner(sc):
    """(id, port) of the master serving the job's slot, as a live node sees it."""
    slot = sc.cluster["slot"]
    for nid, port, flags, _, slots in nodes_view(sc):
        if "master" not in flags or "fail" in flags:
            continue
        for r in slots:
            if r.startswith("["):
                continue
            lo, _, hi = r.partition("-")
            if int(lo) <= slot <= int(hi or lo):
                return nid, port
    return None, None


class ClusterNode(Node):
    """A cluster-enabled redis-server on a port chosen by cluster_port."""

    ping_timeout = 1

    def argv(self):
        tag = "cluster%d-%d" % (self.idx, self.port)
        return server_argv(self.port, self.dir, os.path.join(self.dir, tag + ".log"),
                           "--dbfilename", tag + ".rdb", "--repl-diskless-sync-delay", "0",
                           "--cluster-enabled", "yes", "--cluster-node-timeout", "1000",
                           "--cluster-config-file", tag + "-nodes.conf",
                           "--cluster-replica-validity-factor", "0")


def start_servers(sc):
    """A cluster scenario's servers: six nodes, the cluster created. False
    for the other scenarios (scripts/chaos starts theirs)."""
    if not sc.s.get("cluster"):
        return False
    taken = []
    for i in range(6):
        for _ in range(5):
            sv = ClusterNode(sc.dir, i, cluster_port(taken))
            if sv.start():
                break
        else:
            raise RuntimeError("cannot start a cluster node")
        taken.append(sv.port)
        sc.servers.append(sv)
    out = subprocess.run(["redis-cli", "--cluster", "create"]
                         + ["127.0.0.1:%d" % sv.port for sv in sc.servers]
                         + ["--cluster-replicas", "1", "--cluster-yes"],
                         stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    if out.returncode != 0:
        raise RuntimeError("redis-cli --cluster create failed: %s" % out.stdout[-300:])
    if not wait_until(lambda: all(state_ok(sv.port) for sv in sc.servers), 30):
        raise RuntimeError("the cluster did not become ok")
    slot = int(cmd(sc.servers[0].port, "CLUSTER", "KEYSLOT", "{%s}" % sc.lock_name()))
    sc.cluster = {"slot": slot, "busy": False, "moves": [], "failovers": []}
    return True


def url(sc):
    """The -r of one run: every node a seed, in an order drawn for it."""
    ports = [sv.port for sv in sc.servers]
    sc.rng.shuffle(ports)
    return "redis-cluster://" + ",".join("127.0.0.1:%d" % p for p in ports)


def half_way(sc):
    """Set the job's slot MIGRATING on its owner and IMPORTING on another
    master (no key moved) and mark the cluster busy: (cluster, slot, src
    port, dst port, dst node id), or None if no move can start now."""
    c = getattr(sc, "cluster", None)
    if c is None or c["busy"]:
        return None
    src_id, src = owner(sc)
    if src is None:
        return None
    dests = [(nid, port) for nid, port, flags, _, slots in nodes_view(sc)
             if "master" in flags and "fail" not in flags and nid != src_id and slots]
    if not dests:
        return None
    dst_id, dst = sc.rng.choice(dests)
    slot = c["slot"]
    if (cmd(dst, "CLUSTER", "SETSLOT", slot, "IMPORTING", src_id) != "OK"
            or cmd(src, "CLUSTER", "SETSLOT", slot, "MIGRATING", dst_id) != "OK"):
        cmd(dst, "CLUSTER", "SETSLOT", slot, "STABLE")
        return None
    c["busy"] = True
    return c, slot, src, dst, dst_id


def f_reshard(sc):
    hw = half_way(sc)
    if hw is None:
        return False
    c, slot, src, dst, dst_id = hw
    move = {"slot": slot, "from": src, "to": dst, "t0": mono(), "keys": 0}
    c["moves"].append(move)

    def finish():
        for sv in sc.servers:
            if sv.state == "up":
                cmd(sv.port, "CLUSTER", "SETSLOT", slot, "NODE", dst_id)
        move["t1"] = mono()
        c["busy"] = False

    def migrate():
        for _ in range(10):
            keys = cmd(src, "CLUSTER", "GETKEYSINSLOT", slot, 100)
            if not isinstance(keys, list) or not keys:
                break
            cmd(src, "MIGRATE", "127.0.0.1", dst, "", 0, 5000, "KEYS", *keys)
            move["keys"] += len(keys)

    # Both queued now, in order (revert_all runs what is left, sorted).
    d1 = sc.ttl_ns(0.2, 0.6)
    sc.later(d1, migrate)
    sc.later(d1 + sc.ttl_ns(0.2, 0.6), finish)
    return True


def f_failover(sc):
    c = getattr(sc, "cluster", None)
    if c is None or c["busy"]:
        return False
    oid, _ = owner(sc)
    reps = [port for nid, port, flags, master, _ in nodes_view(sc)
            if master == oid and "fail" not in flags]
    if not reps:
        return False
    rep = sc.rng.choice(reps)
    if cmd(rep, "CLUSTER", "FAILOVER") != "OK":
        return False
    c["busy"] = True
    ev = {"replica": rep, "t0": mono()}
    c["failovers"].append(ev)

    def done():
        ev["owner_after"] = owner(sc)[1]
        c["busy"] = False
    sc.later(2 * NS, done)
    return True


def f_halfway(sc):
    hw = half_way(sc)
    if hw is None:
        return False
    c, slot, src, dst, _ = hw
    ev = {"slot": slot, "from": src, "to": dst, "t0": mono()}
    c.setdefault("halfway", []).append(ev)

    def stable():
        ev["answers"] = [cmd(p, "CLUSTER", "SETSLOT", slot, "STABLE") for p in (src, dst)]
        ev["t1"] = mono()
        c["busy"] = False
    sc.later(int(sc.rng.uniform(0.5, 2.5) * NS), stable)
    return True


FAULTS = {"reshard": f_reshard, "failover": f_failover, "halfway": f_halfway}


def _owner_port(sc):
    """The slot's owner, as found when the records began (the half-way
    faults call every move off, so it stays)."""
    return sc.cluster.get("owner_port")


def setup(sc):
    c = getattr(sc, "cluster", None)
    if c is not None and sc.s.get("records"):
        c["owner_port"] = owner(sc)[1]
        records.start(sc, _owner_port)


def quiesce(sc):
    """After the last wrapper: a failover still going on ends (the lock keys
    are read next, from every node)."""
    if getattr(sc, "cluster", None) is not None:
        wait_until(lambda: all(state_ok(sv.port) for sv in sc.servers if sv.state == "up"), 10)
        if sc.s.get("records"):
            records.read_history(sc, _owner_port(sc))


def teardown(sc):
    for sv in getattr(sc, "cluster", None) and sc.servers or []:
        sv.kill()


def finish(sc):
    c = getattr(sc, "cluster", None)
    return dict({"cluster": c}, **records.finish(sc)) if c else {}
