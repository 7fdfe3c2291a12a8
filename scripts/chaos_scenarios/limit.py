"""limit — scripts/chaos scenarios for --limit N (a counting lease).

With --limit N up to N wrappers hold NAME at once, so the checks for one
holder do not apply: C1 (no overlap), C2 (no lost update of the witness's
read-modify-write counter), C3 (fences in start order) and C4 (the fenced
sink) are measured but not asserted. What is asserted instead:

  C8  never more than N critical sections at once: every moment covered by
      N+1 or more sections is a violation, unless a pause of a whole holder
      (the harness's STOP of wrapper, guard and command) is among them
      (the same excuse C1 accepts)

and C5 as everywhere (exit codes agree with what the witness saw, no hung
wrapper). The faults are the single-master ones that pause no holder:
killed wrappers (their slot must come back within the lease), TERM storms,
a paused or partitioned Redis, network delay.

Give-backs (records=True): an acquisition whose reply came too late (or
turned into an error) is given back, and the give-back must free the slot
that acquisition took, whichever it was. The fault:

  blip_redis   SIGSTOP the redis-server for 0.15-0.6 s (around the
               wrappers' --redis-timeout of 150 ms) while they acquire:
               the acquires queued behind the stop run when it resumes,
               after their clients gave up, and their give-backs (on new
               connections) run after them

with the job's keys read every 150 ms (scripts/chaoslib/records.py) and
its history at the end. C5 then also fails on a slot still held by the
token of a run that exited 69/75 without running its command (or 0), and
on an 'abandoned' history entry for such a run (checks.py, check_records).
A SIGSTOP loses no byte, so every give-back lands in the end: none of
these is excused here.

A --limit operator (lease.py's force_release, with lease.release): --slot K,
--all-slots, --fence F of a holder; C8 and the release checks of C5.

Only plain data, and the hooks below: C8 itself is judged in
scripts/chaoslib/checks.py; nothing is imported from scripts/chaos.
"""

from chaoslib import records
from chaoslib.checks import MS

SHORT = [
    dict(name="single-limit3-faults", masters=1, wrappers=10, duration=7, limit=3,
         faults=["kill_wrapper", "term_storm", "pause_redis", "partition", "delay"],
         asserted=["C5", "C8"]),
]

LONG = [
    dict(name="single-limit3-faults", masters=1, wrappers=12, duration=20, limit=3,
         faults=["kill_wrapper", "term_storm", "pause_redis", "partition", "delay"],
         asserted=["C5", "C8"]),
    dict(name="single-limit2-baseline", masters=1, wrappers=10, duration=10, limit=2,
         faults=[], asserted=["C5", "C8"]),
    # Give-backs: runs that do not wait (a pause of 50-250 ms between a
    # slot's runs), so that acquires are always in flight when the server
    # stops; and waiters, whose acquires are given back as well.
    dict(name="single-limit2-giveback", masters=1, wrappers=10, duration=20, limit=2,
         faults=["blip_redis"], fault_every=(0.4, 1.0), wait_ms=0, respawn_ms=(50, 250),
         redis_timeout="150ms", hold_ms=100, records=True, asserted=["C5", "C8"]),
    dict(name="single-limit3-giveback-wait", masters=1, wrappers=12, duration=20, limit=3,
         faults=["blip_redis"], fault_every=(0.4, 1.0), redis_timeout="150ms", hold_ms=100,
         records=True, asserted=["C5", "C8"]),
    # An operator frees slots of live holders: --slot K, --all-slots,
    # --fence F (lease.py's force_release); each holder stops its command
    # before its slot can be taken again.
    dict(name="single-limit3-release", masters=1, wrappers=10, duration=20, limit=3,
         faults=["force_release"], fault_every=(0.6, 1.4), wait_ms=4000, ttl_ms=1500,
         asserted=["C5", "C8"],
         lease=dict(hold=(300, 1500), short=0.3, strict_release=True,
                    release=dict(fence=0.3, all_slots=0.3, slot=0.4))),
]


# Negative control: the checker is told --limit 2 while the wrappers run
# with --limit 4; C8 must go red.
CONTROL = dict(name="control-limit-exceeded", masters=1, wrappers=8, duration=3, limit=2,
               limit_run=4, faults=[], asserted=["C8"], must_fail=["C8"])


def options(spec):
    """Extra redlock-run options for a scenario's wrappers."""
    n = spec.get("limit_run", spec.get("limit"))
    return ["--limit", str(n)] if n else []


NETWORK_FAULTS = {"blip_redis"}


def f_blip_redis(sc):
    ups = [sv for sv in sc.servers if sv.state == "up"]
    if not ups or not sc.s.get("records"):
        return False
    sv = sc.rng.choice(ups)
    sv.pause()

    def resume(sv=sv):
        if sv.state == "paused":
            sv.resume()
    sc.later(int(sc.rng.uniform(0.15, 0.6) * 1000) * MS, resume)
    return True


FAULTS = {"blip_redis": f_blip_redis}


def _port(sc):
    sv = sc.servers[0] if sc.servers else None
    return sv.port if sv is not None and sv.state == "up" else None


def setup(sc):
    if sc.s.get("records") and not sc.s.get("cluster"):
        records.start(sc, _port)


def quiesce(sc):
    if sc.s.get("records") and not sc.s.get("cluster"):
        records.read_history(sc, _port(sc))


def finish(sc):
    return records.finish(sc) if not sc.s.get("cluster") else {}
