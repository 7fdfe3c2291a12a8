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

Only plain data: C8 itself is judged in scripts/chaoslib/checks.py;
nothing is imported from scripts/chaos.
"""

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
]


# Negative control: the checker is told --limit 2 while the wrappers run
# with --limit 4; C8 must go red.
CONTROL = dict(name="control-limit-exceeded", masters=1, wrappers=8, duration=3, limit=2,
               limit_run=4, faults=[], asserted=["C8"], must_fail=["C8"])


def options(spec):
    """Extra redlock-run options for a scenario's wrappers."""
    n = spec.get("limit_run", spec.get("limit"))
    return ["--limit", str(n)] if n else []
