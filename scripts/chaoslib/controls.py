"""controls — the checker's negative controls: planted logs judged on the
verdict. Pure: no process, no server (`scripts/chaos --planted`, which
tests/integration/t_checker.sh runs under `make check`).

Each control is a pair built by one function: a clean log, which must
PASS (else the control proves nothing: its log is wrong, not the checker
right), and the same log with one defect planted, which must FAIL with the
named check among those that failed. One control per check C0-C9 and per
way an overlap may or may not be explained (a pause that covers it, or
that began after it, or ended before it, or of a third run, or of the
wrapper alone; a forced release within a renewal, a late one, a plain
one; a kill -9 within the last lease, an older one, one of a third run; a
network fault within the last lease, an older one, one where C1 is
asserted; the kernel's lock: a clash nothing explains, one under
--limit, a late-seen death without the later witness's lock record or without
the earlier one's), a lock key left after every wrapper ended (a fault on
another master, a fault long before it was written, a kill -9 before it
was written: none explains it), and the C5 extras (records, operator
releases, planned failovers). A control whose planted log passes "stayed green": the
checker is blind to that defect.
"""

import json
import os
import time

from chaoslib.checks import ALL_CHECKS, MS, check

STRICT = list(ALL_CHECKS)                 # C1 asserted: pause and release explain
LOOSE = ["C3", "C4", "C5"]                # C1 not in the spec: kill, network too


class Planted:
    """A scenario directory written by hand: sections (witness.log),
    runs.jsonl, counter, sink/log, meta.json. Times are in ms of the
    monotonic clock; wall = monotonic (wall_minus_mono_ns 0), so a fence
    (wall ms at the acquire) is the start's ms minus one."""

    def __init__(self, name, asserted=STRICT, faults=(), ttl_ms=1000, **spec):
        self.name = name
        self.asserted = list(asserted)
        self.spec = dict(name=name, ttl_ms=ttl_ms, faults=list(faults), min_completed=5,
                         kill_after="500ms", masters=1, **spec)
        self.secs = []          # [id, start ms, end ms or None, fence]
        self.runs = {}
        self.meta = {"faults": {k: 1 for k in faults}, "fault_events": [], "releases": [],
                     "locks_left": []}
        self.counter_delta = 0  # the counter minus the completed runs
        self.sink_extra = []    # lines after the accepts
        self.rejected = set()   # runs whose write the sink rejected (a stale fence)
        self.kl = []            # (ms, the kernel lock's record: klock, kclash)
        self.logs = {}          # run id: its wrapper's JSON log lines (tags["log"])

    def sec(self, rid, a, b, fence=None, **run):
        """A critical section [a, b] ms (b None: never ended) of run rid."""
        self.secs.append([rid, a, b, a - 1 if fence is None else fence])
        r = {"id": rid, "rc": 0, "signals": [], "tags": {}, "pid": 1000 + len(self.runs),
             "spawn_ns": (a - 20) * MS, "exit_ns": ((b if b is not None else a) + 5) * MS}
        r.update(run)
        self.runs[rid] = r
        return r

    def seq(self, n, t0=1000, gap=200, dur=50, prefix="r"):
        for i in range(n):
            self.sec("%s%d" % (prefix, i), t0 + gap * i, t0 + gap * i + dur)

    def pause(self, rid, a, b, kind="whole"):
        r = self.runs[rid]
        r.setdefault("pauses", []).append([a * MS, None if b is None else b * MS, kind])
        r["signals"].append({"whole": "STOP", "wrapper": "STOP-wrapper"}.get(kind, kind))

    def klock(self, rid, kind="klock", holder=None, at=None):
        """rid's witness took the kernel's lock 1 ms before its start, or
        (kclash) found it held by holder's witness (at: when, in ms)."""
        sec = [x for x in self.secs if x[0] == rid][0]
        t = sec[1] - 1 if at is None else at
        line = "%s %d %s %d pid=%d file=klock.1" % (kind, t * MS, rid, sec[3],
                                                   self.runs[rid]["pid"])
        if kind == "kclash":
            line += " holder=%s" % (self.runs[holder]["pid"] if holder else "?")
        self.kl.append((t, line))

    def event(self, kind, t, until=None, network=False, **extra):
        e = dict(kind=kind, t_ns=t * MS, network=network, **extra)
        if until is not None:
            e["until_ns"] = until * MS
        self.meta["fault_events"].append(e)

    def renewed(self, rid, t, rtt):
        """rid's wrapper logged a renewal confirmed at t ms, rtt ms after
        it was sent (wall = monotonic here: the epoch's first seconds)."""
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t // 1000))
        self.logs.setdefault(rid, []).append(json.dumps(
            {"time": "%s.%03dZ" % (stamp, t % 1000), "level": "info", "event": "renewed",
             "rtt_ms": rtt}))

    def write(self, d):
        os.makedirs(os.path.join(d, "sink"), exist_ok=True)
        for rid, lines in self.logs.items():
            path = os.path.join(d, "logs", rid + ".json")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as fh:
                fh.write("".join(x + "\n" for x in lines))
            self.runs[rid]["tags"]["log"] = path
        lines = []
        for rid, a, b, f in self.secs:
            pid = self.runs[rid]["pid"]
            lines.append((a, 0, "start %d %s %d pid=%d" % (a * MS, rid, f, pid)))
            if b is not None:
                lines.append((b, 1, "end %d %s %d pid=%d read=0 prev=-" % (b * MS, rid, f, pid)))
        lines += [(t, -1, line) for t, line in self.kl]
        with open(os.path.join(d, "witness.log"), "w") as fh:
            fh.write("".join(x[2] + "\n" for x in sorted(lines)))
        done = [s for s in self.secs if s[2] is not None]
        last = max(done, key=lambda s: s[2])[0] if done else "-"
        with open(os.path.join(d, "counter"), "w") as fh:
            fh.write("%d %s\n" % (len(done) + self.counter_delta, last))
        with open(os.path.join(d, "sink", "log"), "w") as fh:
            for rid, a, b, f in sorted(self.secs, key=lambda s: s[1]):
                fh.write("%s %d %s\n" % ("reject" if rid in self.rejected else "accept", f, rid))
            fh.write("".join(x + "\n" for x in self.sink_extra))
        with open(os.path.join(d, "runs.jsonl"), "w") as fh:
            for r in self.runs.values():
                fh.write(json.dumps(r) + "\n")
        ends = [s[2] or s[1] for s in self.secs] + [0]
        meta = dict(self.meta, scenario=self.name, asserted=self.asserted, spec=self.spec,
                    start_ns=0, end_ns=(max(ends) + 500) * MS, wall_minus_mono_ns=0)
        with open(os.path.join(d, "meta.json"), "w") as fh:
            json.dump(meta, fh, indent=1)


# -- the controls: fn(bad) -> (Planted, the check that must fail) ------------
# Six sections r0..r5 of 50 ms, 200 ms apart, from 1000 ms, unless said.

def overlap(p, ms=200):
    """r4 runs on ms past r5's start (r5 starts at 2000): one overlap."""
    p.secs[4][2] = 2000 + ms
    p.runs["r4"]["exit_ns"] = (2000 + ms + 5) * MS


def c0_too_few(bad):
    p = Planted("c0-too-few")
    p.seq(3 if bad else 6)
    return p, "C0"


def c0_kind_never(bad):
    p = Planted("c0-kind-never", LOOSE, faults=["pause_holder", "kill_wrapper"])
    p.seq(6)
    if bad:
        p.meta["faults"] = {"kill_wrapper": 2, "pause_holder": 0}
    return p, "C0"


def c1_nothing(bad):
    p = Planted("c1-nothing")
    p.seq(6)
    if bad:
        overlap(p)
    return p, "C1"


def c1_audit(bad):
    """The audit's log: a 200 ms overlap of two runs never paused, in a
    scenario with a pause fault (C1 not in its spec); a third run was
    paused, long before. Clean: the pause is of r4, over r5's start."""
    p = Planted("c1-audit-unpaused", LOOSE, faults=["pause_holder"])
    p.seq(6)
    overlap(p)
    if bad:
        p.pause("r1", 1210, 1240)
    else:
        p.pause("r4", 1820, 2100)
    return p, "C1"


def c1_pause_after(bad):
    """The pause of a side began after the overlap did (it was excused
    per run before: paused at any time)."""
    p = Planted("c1-pause-after", faults=["pause_holder"])
    p.seq(6)
    overlap(p)
    p.pause("r4", 2050 if bad else 1850, 2150)
    return p, "C1"


def c1_pause_ended(bad):
    """The pause of a side ended long before the overlap began (more than
    --kill-after + the harness's slack: 600 ms)."""
    p = Planted("c1-pause-ended", faults=["pause_holder"])
    p.seq(6)
    p.secs[2][2] = 2100
    p.runs["r2"]["exit_ns"] = 2105 * MS
    # r2 (1400-2100) overlaps r3, r4, r5: each pair, from r3's start on
    # (1600 ms). Bad: r2 was paused while it acquired, ended at 950 ms.
    p.pause("r2", 900 if bad else 1405, 950 if bad else 2050)
    return p, "C1"


def c1_pause_other(bad):
    p = Planted("c1-pause-other", faults=["pause_holder"])
    p.seq(6)
    overlap(p)
    p.pause("r1" if bad else "r4", 1210 if bad else 1850, 2100)
    return p, "C1"


def c1_stop_wrapper(bad):
    """A SIGSTOP of the wrapper alone leaves the guard running: it explains
    nothing."""
    p = Planted("c1-stop-wrapper", faults=["pause_holder"])
    p.seq(6)
    overlap(p)
    p.pause("r4", 1850, 2100, kind="wrapper" if bad else "whole")
    return p, "C1"


def _released(p, force, runs_on):
    """r4's lock (fence 1799) released at 1960-1990 ms; r5 starts at 2000;
    r4's section ends runs_on ms after the release."""
    overlap(p, 1990 + runs_on - 2000)
    p.meta["releases"].append({"t0": 1960 * MS, "t1": 1990 * MS, "rc": 0, "fence": 1799,
                               "force": force})
    p.runs["r4"]["rc"] = 79


def c1_release_plain(bad):
    p = Planted("c1-release-plain", faults=["force_release"])
    p.seq(6)
    _released(p, force=not bad, runs_on=100)
    return p, "C1"


def c1_release_late(bad):
    """--renew 333 ms + 200 ms of slack after a forced release, no more."""
    p = Planted("c1-release-late", faults=["force_release"])
    p.seq(6)
    _released(p, force=True, runs_on=900 if bad else 300)
    return p, "C1"


def c1_kill_old(bad):
    """A kill -9 of a side's wrapper explains an overlap (where C1 is not
    in the spec) only within the last lease before it."""
    p = Planted("c1-kill-old", LOOSE, faults=["kill_wrapper"])
    p.seq(6)
    overlap(p)
    p.event("kill_wrapper", 500 if bad else 1700, id="r4")
    return p, "C1"


def c1_kill_other(bad):
    p = Planted("c1-kill-other", LOOSE, faults=["kill_wrapper"])
    p.seq(6)
    overlap(p)
    p.event("kill_wrapper", 1900, id="r1" if bad else "r5")
    return p, "C1"


def c1_network_old(bad):
    """A network fault explains an overlap (where C1 is not in the spec)
    only if it was on within the last lease before it."""
    p = Planted("c1-network-old", LOOSE, faults=["pause_redis"])
    p.seq(6)
    overlap(p)
    if bad:
        p.event("pause_redis", 200, 900, network=True)
    else:
        p.event("pause_redis", 1500, 1900, network=True)
    return p, "C1"


def c1_network_strict(bad):
    """Where C1 is asserted, a network fault explains nothing (a single
    Redis paused, or five, must not let two holders in)."""
    p = Planted("c1-network-strict", STRICT if bad else LOOSE, faults=["pause_redis"])
    p.seq(6)
    overlap(p)
    p.event("pause_redis", 1500, 1900, network=True)
    return p, "C1"


def c1_kclash(bad):
    """The kernel saw r4's witness alive at r5's start (kclash), although
    the log shows no overlap; nothing explains it: C1 fails."""
    p = Planted("c1-kclash")
    p.seq(6)
    for rid in p.runs:
        if bad and rid == "r5":
            p.klock(rid, "kclash", holder="r4")
        else:
            p.klock(rid)
    return p, "C1"


def c1_kclash_limit(bad):
    """--limit 2: a kclash is two holders of one slot, which --limit does
    not allow: only an event that covers it explains it (clean: a
    whole-holder pause of r4 over r5's start; bad: one that began after)."""
    p = Planted("c1-kclash-limit", ["C5", "C8"], faults=["pause_holder"], limit=2)
    p.seq(6)
    for rid in p.runs:
        p.klock(rid, "kclash" if rid == "r5" else "klock", holder="r4")
    p.pause("r4", 2050 if bad else 1900, 2100)
    return p, "C1"


def _late_death(p):
    """r4's witness killed (no end record); the harness saw its death at
    2004 ms, 4 ms after r5's start: a measured overlap of 4 ms."""
    p.seq(6)
    p.secs[4][2] = None
    p.runs["r4"].update(rc=-9, signals=["KILL"], exit_ns=1990 * MS, child_death_ns=2004 * MS)


def _late_without(name, bad, rid_missing):
    p = Planted(name, faults=["term_storm"])
    _late_death(p)
    for rid in p.runs:
        if rid != rid_missing or not bad:
            p.klock(rid)
    return p, "C1"


def c1_late_klock(bad):
    """The 4 ms of _late_death are the harness's lag only if r5's witness
    took the kernel's lock (which r4's had taken): with it, "closed by a
    late-seen death" (clean); without r5's record (bad), an overlap
    nothing explains."""
    return _late_without("c1-late-no-klock", bad, "r5")


def c1_late_earlier_missing(bad):
    """As c1_late_klock, but nothing says that the earlier witness (r4)
    had taken the lock (no klock record: a witness without --klock, a
    lost line): r5's lock then says nothing about r4."""
    return _late_without("c1-late-earlier-missing", bad, "r4")


def c2_lost(bad):
    """One overlap, explained (a pause): at most one lost update."""
    p = Planted("c2-lost", faults=["pause_holder"])
    p.seq(6)
    overlap(p)
    p.pause("r4", 1850, 2100)
    p.counter_delta = -2 if bad else -1
    return p, "C2"


def c2_excess(bad):
    p = Planted("c2-excess")
    p.seq(6)
    p.counter_delta = 2 if bad else 0
    return p, "C2"


def c3_inversion(bad):
    """A fence that goes backwards between runs that do not overlap (the
    sink rejected its write: C4 holds)."""
    p = Planted("c3-inversion")
    p.seq(6)
    if bad:
        p.secs[3][3] = 1300               # below r2's 1399
        p.rejected.add("r3")
    return p, "C3"


def c3_explained(bad):
    """An inversion between two sections whose overlap a pause explains is
    explained; between two others, not."""
    p = Planted("c3-explained", faults=["pause_holder"])
    p.seq(6)
    overlap(p)
    p.pause("r4", 1850, 2100)
    p.counter_delta = -1
    p.secs[5][3] = 1790          # r5's fence below r4's (1799): the pair is explained
    if bad:
        p.secs[2][3] = 1100      # r2's below r1's (1199): no overlap there
    p.rejected |= {"r5", "r2"} if bad else {"r5"}
    return p, "C3"


def c4_stale(bad):
    p = Planted("c4-stale")
    p.seq(6)
    if bad:
        p.sink_extra.append("accept 1000 r0")   # again, after higher fences
    return p, "C4"


def c5_exit0(bad):
    p = Planted("c5-exit0-unfinished")
    p.seq(6)
    if bad:
        p.runs["x"] = {"id": "x", "rc": 0, "signals": [], "tags": {}}
    return p, "C5"


def c5_rc(bad):
    p = Planted("c5-unexpected-rc")
    p.seq(6)
    p.runs["x"] = {"id": "x", "rc": 3 if bad else 69, "signals": [], "tags": {}}
    return p, "C5"


def c5_hung(bad):
    p = Planted("c5-hung")
    p.seq(6)
    p.runs["x"] = {"id": "x", "rc": -9, "signals": [] if bad else ["KILL"], "tags": {},
                   "hung": bad, "life_ms": 9000}
    return p, "C5"


def c5_lock_left(bad):
    p = Planted("c5-lock-left")
    p.seq(6)
    if bad:
        p.meta["lock_keys"] = [{"server": 0, "pttl_ms": -1, "t_ns": 2600 * MS}]
    return p, "C5"


def _key_left(p):
    """Five masters; the lock key on master 1, read at 2600 ms with 600 ms
    left: written (set or renewed) at 2200 ms, never given back."""
    p.spec["masters"] = 5
    p.seq(6)
    p.meta["lock_keys"] = [{"server": 1, "pttl_ms": 600, "t_ns": 2600 * MS}]


def c5_lock_release_lost(bad):
    """A partition of master 1 that began after the write (the holder's
    release could not reach it) explains the key; one of master 0 does not."""
    p = Planted("c5-lock-other-master", faults=["partition"])
    _key_left(p)
    p.event("partition", 2230, 2280, network=True, servers=[0 if bad else 1])
    return p, "C5"


def c5_lock_fault_old(bad):
    """A pause of master 1 explains the key as a late request only if it
    was on within the lease before the write (1200-2200 ms)."""
    p = Planted("c5-lock-fault-old", faults=["pause_redis"])
    _key_left(p)
    p.event("pause_redis", 800 if bad else 1000, 1100 if bad else 1300, network=True,
            servers=[1])
    return p, "C5"


def c5_lock_kill_old(bad):
    """A kill -9'd wrapper explains the key only if it was alive when the
    key was written (it may be its holder): not one that died before."""
    p = Planted("c5-lock-kill-old", faults=["kill_wrapper"])
    _key_left(p)
    t = 1900 if bad else 2300
    p.runs["k"] = {"id": "k", "rc": -9, "signals": ["KILL"], "tags": {},
                   "spawn_ns": 1700 * MS, "exit_ns": t * MS}
    p.event("kill_wrapper", t, id="k")
    return p, "C5"


def c5_records_held(bad):
    """A slot still held by the token of a run that exited 69 without
    running its command (records=True, check_records)."""
    p = Planted("c5-records-held", records=True)
    p.seq(6)
    p.runs["g"] = {"id": "g", "rc": 69, "signals": [], "tags": {}, "pid": 77,
                   "spawn_ns": 1500 * MS, "exit_ns": 1600 * MS}
    p.meta["records"] = {"held": [{"slot": 1, "pid": 77, "t_ns": (1900 if bad else 1650) * MS,
                                   "pttl": 700}], "history": []}
    return p, "C5"


def c5_records_abandoned(bad):
    """An 'abandoned' history entry for a run that exited 0."""
    p = Planted("c5-records-abandoned", records=True)
    p.seq(6)
    p.meta["records"] = {"held": [], "history": [
        {"status": "abandoned" if bad else "succeeded", "pid": p.runs["r2"]["pid"],
         "fence": 1399, "started_ms": 1400}]}
    return p, "C5"


def c5_release_waits(bad):
    """lease.strict_release: --release returned (rc 0, naming r4's fence)
    while r4's command still ran."""
    p = Planted("c5-release-waits", lease={"strict_release": True})
    p.seq(6)
    t1 = 1820 if bad else 1860
    p.meta["releases"].append({"t0": 1810 * MS, "t1": t1 * MS, "rc": 0, "fence": 1799,
                               "force": False, "out": "released"})
    if bad:
        p.secs[4][2] = 1960
        p.runs["r4"]["exit_ns"] = 1965 * MS
    return p, "C5"


def c5_release_69(bad):
    p = Planted("c5-release-69", lease={"strict_release": True})
    p.seq(6)
    p.meta["releases"].append({"t0": 1810 * MS, "t1": 1860 * MS, "rc": 69 if bad else 1,
                               "fence": 1799, "force": False, "out": ""})
    return p, "C5"


def c5_planned(bad):
    """A holder lost (79) across a planned failover its lease leaves room
    for (sentinel.keeps, --sync-replicas 2)."""
    p = Planted("c5-planned", sentinel={"keeps": True, "sync_replicas": 2})
    p.seq(6)
    p.runs["r3"]["rc"] = 79 if bad else 0
    return p, "C5"


def c6_late(bad):
    """The last run's command starts at 2900 ms; bad: its lease (fence
    1800: acquired at 1800 ms, TTL 1 s) ended at 2800."""
    p = Planted("c6-late-start", STRICT + ["C6"])
    p.seq(5)
    p.sec("r5", 2900, 2950, fence=1800 if bad else 2899)
    return p, "C6"


def c6_renewed(bad):
    """The same late start, after a renewal its wrapper logged as sent at
    2490 ms (to 3490): confirmed at 2500, before the start, it extends the
    lease; bad: confirmed at 2910, after the start, it does not."""
    p = Planted("c6-late-after-renewal", STRICT + ["C6"])
    p.seq(5)
    p.sec("r5", 2900, 2950, fence=1800)
    p.renewed("r5", 2910 if bad else 2500, 420 if bad else 10)
    return p, "C6"


def c7_once(bad):
    p = Planted("c7-once-again", STRICT + ["C6", "C7"],
                lease={"once": {"ids": 1, "state_ttl": "1s", "state_ttl_ms": 1000}})
    p.seq(6, gap=700)
    p.runs["r1"]["tags"]["once"] = "id-0"
    p.runs["r2" if bad else "r3"]["tags"]["once"] = "id-0"   # 650 ms / 1350 ms after r1's end
    return p, "C7"


def c8_over(bad):
    """--limit 2: three at once."""
    p = Planted("c8-over", ["C5", "C8"], limit=2)
    p.seq(6)
    p.secs[2][2] = 1900
    p.runs["r2"]["exit_ns"] = 1905 * MS
    if bad:
        p.secs[3][2] = 1900
        p.runs["r3"]["exit_ns"] = 1905 * MS
    return p, "C8"


def c8_pause_after(bad):
    """--limit 2: three at once, explained only by a pause that began
    before the moment and lasted into it."""
    p = Planted("c8-pause-after", ["C5", "C8"], faults=["pause_holder"], limit=2)
    p.seq(6)
    for i in (2, 3):
        p.secs[i][2] = 1900
        p.runs["r%d" % i]["exit_ns"] = 1905 * MS
    p.pause("r2", 1850 if bad else 1500, 1880 if bad else 1850)
    return p, "C8"


def _crowd(p, next_start):
    """Runs r0-r2 at 1000-1450 ms, a crowd killed at 1500 ms, and r3-r5
    from next_start (r3 a live waiter since 1000 ms)."""
    p.seq(3)
    for i in range(3):
        rid = "r%d" % (i + 3)
        p.sec(rid, next_start + 200 * i, next_start + 200 * i + 50, spawn_ns=1000 * MS)
    p.meta["crowd"] = {"kills": [{"t_ns": 1500 * MS, "ids": []}], "probes": [],
                       "dead_holders": [], "slack_ms": 400}


def c9_idle(bad):
    """TTL 1 s: after the kill, the lock may stay unused with a live waiter
    for 2/3 of a lease (+ 400 ms of slack): till 2566 ms here."""
    p = Planted("c9-idle", STRICT + ["C9"], faults=["crowd_kill"])
    _crowd(p, 3200 if bad else 2500)
    return p, "C9"


def c9_probe(bad):
    """A run without --wait said "lock is held" while nobody held it."""
    p = Planted("c9-probe", STRICT + ["C9"], faults=["crowd_kill"])
    _crowd(p, 2500)
    t = 4000 if bad else 2500
    p.meta["crowd"]["probes"].append({"id": "probe-1", "t0_ns": t * MS, "t1_ns": (t + 20) * MS,
                                      "err": "redlock-run: lock is held by another run"})
    return p, "C9"


def _once_skew(name, bad_twice=False, bad_clock=False):
    """Six rounds of a skewed --once pattern, one failed run each (the
    budget: 1), every ID on the lock service's clock (wall = monotonic
    here: 1970-01-01 00:00). Planted: a second run of round sk1 (a host
    that ran the ID again), or round sk3's ID from a clock a day ahead."""
    p = Planted(name, STRICT + ["C10"], once28=dict(mode="skew"))
    p.seq(6)
    recs = {}
    for i in range(6):
        p.runs["r%d" % i]["tags"] = {"once_round": "sk%d" % i, "once_pattern": "sk%d-%%F-%%H%%M" % i,
                                    "attempts": 1}
        day = "1970-01-02" if bad_clock and i == 3 else "1970-01-01"
        recs["sk%d-%s-0000" % (i, day)] = [{"status": "failed", "attempts": "1", "exit_code": "1"}]
    if bad_twice:
        p.sec("r1b", 1300, 1350)
        p.runs["r1b"]["tags"] = dict(p.runs["r1"]["tags"])
    p.meta["once28"] = {"mode": "skew", "records": recs, "history": [], "resolves": []}
    return p


def c10_twice(bad):
    return _once_skew("c10-once-twice", bad_twice=bad), "C10"


def c10_clock(bad):
    return _once_skew("c10-once-clock", bad_clock=bad), "C10"


def _once_guard(name, bad_lost=False, lock_pttl=900):
    p = Planted(name, STRICT + ["C10", "C11"], once28=dict(mode="guard"))
    p.seq(6)
    for i in range(6):
        p.runs["r%d" % i]["tags"] = {"once": "gk0-%d" % i, "exit": 0}
    p.runs["r0"]["signals"].append("KILL-guard")
    rec = {"status": "lost", "exit_code": "0"} if bad_lost else {"status": "succeeded", "exit_code": "0"}
    if bad_lost:
        p.runs["r0"]["rc"] = 79
    ep = {"once": "gk0-0", "attempt": "r0", "phase": "grace", "target": "guard", "exit": 0,
          "retries": [], "after": None, "record1": {"rec": rec, "lock_pttl": lock_pttl},
          "record2": None, "kill": {"what": ["guard"], "started": True, "ended": True}}
    p.meta["once28"] = {"mode": "guard", "episodes": [ep], "records": {}, "history": [],
                        "resolves": []}
    return p


def c11_lost(bad):
    """The guard killed while it waits out the grace after its command
    exited 0 (issue 28, 2): recorded succeeded, exit 0; planted: recorded
    lost and exit 79 (the command had ended)."""
    return _once_guard("c11-lost-after-reap", bad_lost=bad), "C11"


def c11_lock_ttl(bad):
    """The lock key read with the record: within its lease (1000 ms);
    planted: no TTL (-1), a key left beyond any lease."""
    return _once_guard("c11-lock-no-ttl", lock_pttl=-1 if bad else 900), "C11"


CONTROLS = [c0_too_few, c0_kind_never, c1_nothing, c1_audit, c1_pause_after, c1_pause_ended,
            c1_pause_other, c1_stop_wrapper, c1_release_plain, c1_release_late, c1_kill_old,
            c1_kill_other, c1_network_old, c1_network_strict, c1_kclash, c1_kclash_limit,
            c1_late_klock, c1_late_earlier_missing, c2_lost, c2_excess, c3_inversion,
            c3_explained, c4_stale, c5_exit0, c5_rc, c5_hung, c5_lock_left, c5_lock_release_lost,
            c5_lock_fault_old, c5_lock_kill_old, c5_records_held,
            c5_records_abandoned, c5_release_waits, c5_release_69, c5_planned, c6_late, c6_renewed, c7_once,
            c8_over, c8_pause_after, c9_idle, c9_probe, c10_twice, c10_clock, c11_lost,
            c11_lock_ttl]


def run_controls(outdir):
    """Every control, as result dicts of check() with "scenario",
    "must_fail", "went_red" (the planted log failed the verdict on its
    check) and "twin_ok" (the clean log passed)."""
    out = []
    for fn in CONTROLS:
        clean, must = fn(False)
        d0 = os.path.join(outdir, "planted", clean.name + "-clean")
        clean.write(d0)
        r0 = check(d0)
        bad, _ = fn(True)
        d1 = os.path.join(outdir, "planted", bad.name)
        bad.write(d1)
        res = check(d1)
        res["scenario"] = "planted:" + bad.name
        res["faults"] = bad.meta.get("faults") or {}
        res["must_fail"] = [must]
        res["twin_ok"] = r0["ok"]
        res["twin_failed"] = r0["failed"]
        res["went_red"] = (not res["ok"]) and must in res["failed"] and r0["ok"]
        out.append(res)
    return out
