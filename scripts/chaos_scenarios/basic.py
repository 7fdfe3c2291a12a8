"""basic — scripts/chaos scenarios for the plain topologies and faults.

One or five independent redis-servers (plain, or TLS: `tls=True`), each
behind a proxy of the harness, and the original faults, each on its own
and mixed (the fault functions are in scripts/chaos, Scenario.fault):

  pause_holder   SIGSTOP the whole holder (wrapper, guard, command) past
                 its lease: explains overlaps, so C1/C2 are measured only
  pause_redis    SIGSTOP one redis-server
  restart_redis  kill -9 one redis-server, start it again (empty)
  partition      a proxy blackholes
  delay          a proxy delays every chunk
  kill_wrapper   kill -9 a wrapper
  term_storm     SIGTERM wrappers that are acquiring or releasing

Names: "single-*" (1 master), "redlock5-*" (5 masters), "*-tls-*" over
TLS. Only plain data: the runner (scripts/chaos) does the rest.
"""

from chaoslib.checks import ALL_CHECKS

NOPAUSE = ["kill_wrapper", "term_storm", "pause_redis", "partition", "delay"]

SHORT = [
    dict(name="redlock5-baseline", masters=5, wrappers=10, duration=3,
         faults=[], asserted=list(ALL_CHECKS)),
    dict(name="single-faults", masters=1, wrappers=10, duration=7,
         faults=NOPAUSE, asserted=list(ALL_CHECKS)),
    dict(name="single-pause-holder", masters=1, wrappers=8, duration=6,
         faults=["pause_holder", "kill_wrapper"], asserted=["C3", "C4", "C5"]),
    dict(name="redlock5-faults", masters=5, wrappers=10, duration=8,
         faults=NOPAUSE + ["restart_redis"], asserted=list(ALL_CHECKS)),
    dict(name="redlock5-pause-holder", masters=5, wrappers=8, duration=6,
         faults=["pause_holder", "pause_redis"], asserted=["C3", "C4", "C5"]),
    # rediss:// through the same byte-passing proxies.
    dict(name="single-tls-faults", masters=1, wrappers=8, duration=5,
         faults=NOPAUSE, asserted=list(ALL_CHECKS), tls=True),
]

LONG = []
for _m, _tag in ((1, "single"), (5, "redlock5")):
    LONG.append(dict(name="%s-baseline" % _tag, masters=_m, wrappers=12 if _m == 1 else 10,
                     duration=10, faults=[], asserted=list(ALL_CHECKS)))
    for _f in NOPAUSE + ["restart_redis", "pause_holder"]:
        _a = list(ALL_CHECKS)
        if _f == "pause_holder":
            _a = ["C3", "C4", "C5"]
        if _f == "restart_redis" and _m == 1:
            # One Redis without persistence forgets the lock when it
            # restarts: a second holder may start while the first still
            # runs, so C1/C2 are measured. The fence must still increase
            # (it never goes below the server's clock in ms).
            _a = ["C3", "C4", "C5"]
        LONG.append(dict(name="%s-%s" % (_tag, _f.replace("_", "-")), masters=_m,
                         wrappers=12 if _m == 1 else 10, duration=15, faults=[_f],
                         asserted=_a))
    LONG.append(dict(name="%s-mixed" % _tag, masters=_m, wrappers=20 if _m == 1 else 16,
                     duration=30, faults=NOPAUSE + ["pause_holder"] + (["restart_redis"] if _m > 1 else []),
                     asserted=["C3", "C4", "C5"]))
    LONG.append(dict(name="%s-tls-faults" % _tag, masters=_m, wrappers=12 if _m == 1 else 10,
                     duration=15, faults=NOPAUSE + (["restart_redis"] if _m > 1 else []),
                     asserted=list(ALL_CHECKS), tls=True))
