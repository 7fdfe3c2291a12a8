"""lease — scripts/chaos scenarios for the lease's enforcement.

The guard process (src/guard.h) enforces the end of the lease by itself,
so a wrapper that is stopped, blocked or slow can no longer extend its
command's life past the lease. These scenarios attack exactly that:

  fault / run kind     what the harness does
  -------------------  ------------------------------------------------------
  tstp_wrapper         SIGTSTP to a wrapper only (kill -TSTP), SIGCONT after
                       0.2-2.5 x TTL: sometimes within the lease, often after
  stop_wrapper         SIGSTOP to a holding wrapper only (not its command, not
                       its guard) for 1.5-2.5 x TTL, then SIGCONT
  stop_wrapper_cmd     the same, and its command too, but not its guard
  force_release        `redlock-run --release NAME` (an operator) while
                       wrappers run; combined with stalled stderr; in the
                       *-release-holders scenarios also --fence F, --force
                       (and, in limit.py, --slot K, --all-slots)
  late_acquire         the proxy of one master delivers the client->server
                       bytes of the next connection that carries an acquire
                       0.25-1.5 s late (longer than --redis-timeout); the
                       give-back goes out on a new connection first
  stalled stderr       some slots' stderr is a pipe nobody reads, filled by
                       the command (tests/helpers/spew) before it execs the
                       witness; those wrappers run with -v (a line per renewal)
  slow exec            some wrappers run under strace, which delays the exec
                       of the witness by 0.1-2 x TTL (longer than the lease)
  stragglers           the command is `sh -c 'witness ... & exit 0'` (or a
                       subshell, a setsid'd or a SIGTERM-ignoring witness):
                       what it leaves must be stopped before the release
  once                 --once with a few IDs; with --state-ttl 1s and 2-3 s runs

The only overlap these scenarios accept is one that a pause of the *whole*
holder (wrapper, guard and command: pause_holder, in the mixed scenarios)
explains, or one on the side of a holder an operator released with
--force, bounded by the renewal interval (the holder notices at its next
renewal). A plain --release revokes the lock and waits for the holder's own
release: it explains no overlap. Two more checks, reported everywhere,
asserted here:

  C6  no command started after its lease had ended: the witness's start,
      on the wall clock, later than its fence + TTL (the fence is at least
      the acquiring host's clock in ms when it sent the acquire), or, for a
      run whose exec was slowed, later than the last renewal its wrapper
      confirmed before that start (sent + TTL; its -v JSON log): the
      wrapper renews while the command starts
  C7  a --once ID that succeeded did not run again within --state-ttl of
      the end of that run (its record must say succeeded until then)

Everything here works on a Scenario object of scripts/chaos (sc) and plain
data; nothing is imported from there. The checks C6 and C7, and what a
forced release explains, are in scripts/chaoslib/checks.py.
"""

import os
import re
import shutil
import subprocess
import tempfile

from chaoslib.checks import ALL_CHECKS, MS, NS
from chaoslib.nodes import mono

LEASE_CHECKS = list(ALL_CHECKS) + ["C6"]
ONCE_CHECKS = LEASE_CHECKS + ["C7"]


# ---------------------------------------------------------------------------
# Scenario specs (merged into SHORT / LONG by scripts/chaos)
# ---------------------------------------------------------------------------

# --once IDs: drawn at random from a small pool, so that an ID comes back
# while its record still says succeeded (and again after it expired).
ONCE_IDS = dict(ids=3, state_ttl="1s", state_ttl_ms=1000)
ONCE_FEW = dict(ids=4, state_ttl="2s", state_ttl_ms=2000)
# A skipped --once run ends at once: wait a little before the slot's next
# run, as cron would, rather than spin.
RESPAWN = (100, 400)

# Holds of up to 2.5 x TTL: a command still working when its wrapper's
# lease runs out, which only the guard can stop.
LONG_HOLD = (200, 2500)

SHORT = [
    # The guard alone must stop the command of a wrapper stopped past its
    # lease: 0 overlap, asserted.
    # (12 s and 10 wrappers: in 8 s with 8, a clean-clone CI run once
    # completed only 4 runs, below C0's 5.)
    dict(name="single-stop-wrapper", masters=1, wrappers=10, duration=12,
         faults=["stop_wrapper", "stop_wrapper_cmd"], asserted=LEASE_CHECKS,
         fault_every=(0.6, 1.4), wait_ms=4000, lease=dict(hold=LONG_HOLD, short=0.5)),
]

STRAGGLERS_SAFE = ["bg", "double", "setsid", "noterm"]

LONG = [
    dict(name="single-tstp", masters=1, wrappers=10, duration=15,
         faults=["tstp_wrapper"], asserted=LEASE_CHECKS, fault_every=(0.6, 1.4), wait_ms=4000,
         lease=dict(hold=LONG_HOLD, short=0.5)),
    dict(name="single-stop-wrapper", masters=1, wrappers=10, duration=15,
         faults=["stop_wrapper", "stop_wrapper_cmd"], asserted=LEASE_CHECKS,
         fault_every=(0.6, 1.4), wait_ms=4000,
         lease=dict(hold=LONG_HOLD, short=0.5)),
    dict(name="redlock5-stop-wrapper", masters=5, wrappers=10, duration=15,
         faults=["stop_wrapper", "stop_wrapper_cmd", "tstp_wrapper"], asserted=LEASE_CHECKS,
         fault_every=(0.6, 1.4), wait_ms=4000,
         lease=dict(hold=LONG_HOLD, short=0.5)),
    dict(name="single-stalled-stderr", masters=1, wrappers=10, duration=15,
         faults=["force_release", "pause_redis"], asserted=LEASE_CHECKS,
         lease=dict(stalled=0.5, allow_refused=True)),
    dict(name="single-slow-exec", masters=1, wrappers=10, duration=15, faults=[],
         asserted=LEASE_CHECKS, lease=dict(strace=0.5, exec_delay=(0.1, 2.0))),
    # Few wrappers, resting between runs: the lock is often free when a
    # late acquire arrives, which is when it could take it.
    dict(name="single-late-acquire-once", masters=1, wrappers=5, duration=15,
         faults=["late_acquire"], asserted=ONCE_CHECKS, fault_every=(0.3, 0.8),
         respawn_ms=(200, 800), lease=dict(once=ONCE_FEW)),
    dict(name="redlock5-late-acquire-once", masters=5, wrappers=5, duration=15,
         faults=["late_acquire"], asserted=ONCE_CHECKS, fault_every=(0.3, 0.8),
         respawn_ms=(200, 800), lease=dict(once=ONCE_FEW)),
    dict(name="single-stragglers", masters=1, wrappers=10, duration=15, faults=[],
         asserted=LEASE_CHECKS, lease=dict(stragglers=0.5, straggler_kinds=STRAGGLERS_SAFE)),
    # A straggler that setsid'd itself and ignores SIGTERM, while its
    # wrapper is kill -9'd: the guard then kills the command's group only.
    dict(name="single-stragglers-kill", masters=1, wrappers=10, duration=15,
         faults=["kill_wrapper"], asserted=LEASE_CHECKS,
         lease=dict(stragglers=0.6, straggler_kinds=STRAGGLERS_SAFE + ["setsid-noterm", "setsid-wait"],
                    allow_refused=True)),
    dict(name="single-once-long", masters=1, wrappers=8, duration=20, faults=[],
         asserted=ONCE_CHECKS, wait_ms=4000, min_completed=4, respawn_ms=RESPAWN,
         lease=dict(once=ONCE_IDS, hold=(2000, 3000))),
]
# An operator's --release of live holders (holds of 0.3-1.5 s under a
# 1.5 s lease, so that it nearly always meets one in its section): the
# holder must stop its command before anybody else can take the lock, so
# no overlap at all, and --release returns only after that (C5: it ends 0
# or 1, and the holder it names has ended). A fifth of them --force (the
# one kind whose overlap a renewal interval explains), a third --fence F
# of a holder it saw running.
RELEASE_OPTS = dict(force=0.2, fence=0.35)
# The short form, in --short: plain releases only (no --force, so no
# overlap is excused), about 8 releases in 8 s.
# --short: C7 (an ID that succeeded comes back within --state-ttl: skipped).
SHORT.append(dict(name="single-late-acquire-once-short", masters=1, wrappers=5, duration=6,
                  faults=["late_acquire"], asserted=ONCE_CHECKS, fault_every=(0.3, 0.8),
                  respawn_ms=(200, 800), lease=dict(once=ONCE_FEW)))
SHORT.append(dict(name="single-release-holders-short", masters=1, wrappers=6, duration=8,
                  faults=["force_release"], asserted=LEASE_CHECKS, fault_every=(0.6, 1.2),
                  ttl_ms=1500, wait_ms=4000,
                  lease=dict(hold=(200, 800), short=0.5, strict_release=True,
                             release=dict(fence=0.35))))
for _m, _tag in ((1, "single"), (5, "redlock5")):
    LONG.append(dict(name="%s-release-holders" % _tag, masters=_m, wrappers=8, duration=20,
                     faults=["force_release"], asserted=LEASE_CHECKS, fault_every=(0.6, 1.4),
                     ttl_ms=1500, wait_ms=4000,
                     lease=dict(hold=(300, 1500), short=0.3, strict_release=True,
                                release=RELEASE_OPTS)))
for _m, _tag in ((1, "single"), (5, "redlock5")):
    LONG.append(dict(
        name="%s-lease-mixed" % _tag, masters=_m, wrappers=16, duration=30,
        faults=["tstp_wrapper", "stop_wrapper", "stop_wrapper_cmd", "force_release",
                "pause_redis", "kill_wrapper", "pause_holder"],
        asserted=LEASE_CHECKS, wait_ms=4000,
        lease=dict(stalled=0.25, stragglers=0.25, straggler_kinds=STRAGGLERS_SAFE,
                   hold=(50, 800), allow_refused=True)))


# ---------------------------------------------------------------------------
# Per-scenario and per-run set-up
# ---------------------------------------------------------------------------

def setup(sc):
    """Called once per scenario, after the servers and proxies are up."""
    L = sc.s.get("lease")
    sc.lease = {"pipes": {}, "releases": [], "late": [], "late_armed": 0}
    if L is None:
        return
    os.makedirs(os.path.join(sc.dir, "metrics"), exist_ok=True)
    n = sc.s["wrappers"]
    stalled = int(round(n * L.get("stalled", 0)))
    for slot in range(stalled):
        # A pipe nobody reads: we hold the read end open (so that writes
        # find it full rather than broken) and never read it.
        r, w = os.pipe()
        sc.lease["pipes"][slot] = (r, w)
    if L.get("strace") and not shutil.which("strace"):
        raise RuntimeError("strace is not installed (needed by %s)" % sc.s["name"])


def teardown(sc):
    for r, w in sc.lease.get("pipes", {}).values():
        for fd in (r, w):
            try:
                os.close(fd)
            except OSError:
                pass
    sc.lease["pipes"] = {}


# The witness of a straggler is not a child of anything we can wait for,
# and the sweep often kills it before we could open a pidfd for it. So it
# holds the only writer of a FIFO of ours ($RR_DEATH_FIFO, opened by the
# shell just before it execs the witness): EOF there is the moment it died.
STRAGGLER_SH = {
    # The command ends at once and leaves the witness running...
    "bg": '"$@" 9>"$RR_DEATH_FIFO" & exit 0',
    # ... re-parented at once (a subshell that exits) ...
    "double": '("$@" 9>"$RR_DEATH_FIFO" &); exit 0',
    # ... outside the command's process group and session ...
    "setsid": 'setsid "$@" 9>"$RR_DEATH_FIFO" & exit 0',
    # ... ignoring SIGTERM (only the SIGKILL after the grace stops it) ...
    "noterm": 'trap "" TERM; "$@" 9>"$RR_DEATH_FIFO" & exit 0',
    # ... both, and working for longer than a lease ...
    "setsid-noterm": 'trap "" TERM; setsid "$@" 9>"$RR_DEATH_FIFO" & exit 0',
    # ... or outside the group while the command waits for it (no
    # straggler then, unless the wrapper dies).
    "setsid-wait": 'setsid "$@" 9>"$RR_DEATH_FIFO" & wait',
}


def prepare(sc, r, opts, command):
    """Adapt run r of a lease scenario. opts: redlock-run's options (before
    NAME); command: the witness argv. Returns (prefix, opts, command,
    stderr, env); prefix goes in front of redlock-run (strace), env is added
    to its environment."""
    L = sc.s.get("lease")
    stderr = sc.errf
    env = {}
    if L is None:
        return [], opts, command, stderr, env
    rng = sc.rng
    prefix = []
    r.metrics = os.path.join(sc.dir, "metrics", r.id + ".prom")
    opts = opts + ["--metrics-file", r.metrics]
    if L.get("hold") and rng.random() >= L.get("short", 0):
        # (else the default hold: quick runs, so that enough complete)
        hold = rng.randint(*L["hold"])
        command = command[:-1] + [str(hold)]
    once = L.get("once")
    if once:
        oid = "id-%d" % rng.randrange(once["ids"])
        opts += ["--once", oid, "--state-ttl", once["state_ttl"]]
        if once.get("on_stale"):
            opts += ["--on-stale", once["on_stale"]]
        r.tags["once"] = oid
    if r.slot in sc.lease["pipes"]:
        # Loud (a line per renewal), into a pipe that the command fills first.
        opts = ["-v" if o == "-q" else o for o in opts]
        stderr = sc.lease["pipes"][r.slot][1]
        command = [sc.args.spew, "-n", "65536"] + command
        r.tags["stderr"] = "stalled"
    if L.get("stragglers") and rng.random() < L["stragglers"]:
        kind = rng.choice(L.get("straggler_kinds", list(STRAGGLER_SH)))
        if kind == "noterm":
            command = command[:-1] + [str(rng.randint(50, 400))]
        elif kind in ("setsid-noterm", "setsid-wait"):
            command = command[:-1] + [str(rng.randint(1200, 2000))]
        command = ["sh", "-c", STRAGGLER_SH[kind], "sh"] + command
        r.tags["straggler"] = kind
        fifo = os.path.join(sc.dir, "fifo", r.id)
        os.makedirs(os.path.dirname(fifo), exist_ok=True)
        os.mkfifo(fifo)
        # Read end, never blocking; EOF (readable) once the writer is gone.
        # Linux reports no hang-up before the first writer has opened it.
        sc.watch_death(r, os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
        env["RR_DEATH_FIFO"] = fifo
    if L.get("strace") and rng.random() < L["strace"] and r.tags.get("stderr") != "stalled":
        lo, hi = L.get("exec_delay", (0.1, 2.0))
        delay_ms = int(rng.uniform(lo, hi) * sc.s["ttl_ms"])
        # The wrapper renews while the command starts: C6 counts the
        # renewals it confirmed before the witness started, from its log.
        r.tags["log"] = os.path.join(sc.dir, "logs", r.id + ".json")
        os.makedirs(os.path.dirname(r.tags["log"]), exist_ok=True)
        opts = ["-v" if o == "-q" else o for o in opts] + ["--log-format", "json"]
        stderr = open(r.tags["log"], "ab")
        # -P: only the exec of the witness is delayed, not that of
        # redlock-run itself. --seccomp-bpf: only execve stops the tracees,
        # so the wrapper and its guard run at full speed otherwise.
        prefix = ["strace", "-f", "-qq", "--seccomp-bpf", "-o", "/dev/null",
                  "-P", sc.args.witness, "-e", "trace=execve",
                  "-e", "inject=execve:delay_enter=%d" % (delay_ms * 1000)]
        r.tags["exec_delay_ms"] = delay_ms
        r.extra_ns = delay_ms * MS
    return prefix, opts, command, stderr, env


def read_status(path):
    """The status that --metrics-file says the run ended with, or None:
    redlock_run_last_attempt_status (this very run), or, from builds that
    do not write it, redlock_run_last_status."""
    found = {}
    try:
        with open(path) as f:
            for line in f:
                m = re.match(r'redlock_run_(last_attempt_status|last_status)\{.*status="(\w+)"\} 1\s*$',
                             line)
                if m:
                    found[m.group(1)] = m.group(2)
    except (OSError, TypeError):
        pass
    return found.get("last_attempt_status", found.get("last_status"))


# ---------------------------------------------------------------------------
# Faults
# ---------------------------------------------------------------------------

def _pick_holder(sc):
    hs = [r for r in sc.holders() if not r.tags.get("exec_delay_ms")]
    return sc.rng.choice(hs) if hs else None


def f_tstp(sc):
    rng = sc.rng
    r = _pick_holder(sc) if rng.random() < 0.7 else None
    if r is None:
        pool = [x for x in sc.runs if x.alive() and not x.paused
                and not x.tags.get("exec_delay_ms")]
        if not pool:
            return False
        r = rng.choice(pool)
    return sc.pause(r, "tstp", sc.ttl_ns(0.2, 2.5))


def f_stop_wrapper(sc):
    r = _pick_holder(sc)
    return r is not None and sc.pause(r, "wrapper", sc.ttl_ns(1.5, 2.5))


def f_stop_wrapper_cmd(sc):
    r = _pick_holder(sc)
    return r is not None and sc.pause(r, "wrapper_cmd", sc.ttl_ns(1.5, 2.5))


def f_force_release(sc):
    """An operator's `redlock-run --release NAME`: it revokes a live
    holder's lock and waits for the holder to stop its command and release
    (so no overlap is explained by it). The spec's lease.release may add,
    each with its probability: fence (--fence F of a holder in its section,
    as read in --status), force (--force: deleted at once, the one kind
    whose overlap a renewal interval explains), all_slots / slot (with
    --limit: --all-slots, or --slot K of a slot in 1..N)."""
    if any(rel.get("t1") is None for rel in sc.lease["releases"]):
        return False   # one operator at a time
    opt = ((sc.s.get("lease") or {}).get("release")) or {}
    rng = sc.rng
    urls = ",".join("redis://127.0.0.1:%d" % sv.port for sv in sc.servers)
    args = []
    if rng.random() < opt.get("force", 0):
        args.append("--force")
    holders = [x for x in sc.runs if x.alive() and x.started and not x.ended and x.fence]
    if holders and rng.random() < opt.get("fence", 0):
        args += ["--fence", str(rng.choice(holders).fence)]
    n = sc.s.get("limit") or 0
    if n and "--fence" not in args:
        u = rng.random()
        if u < opt.get("all_slots", 0):
            args.append("--all-slots")
        elif u < opt.get("all_slots", 0) + opt.get("slot", 0):
            args += ["--slot", str(rng.randint(1, n))]
    if n:
        args += ["--limit", str(n)]
    rel = {"t0": mono(), "t1": None, "rc": None, "fence": None, "pid": None, "args": args,
           "force": "--force" in args,
           "in_section": [x.id for x in sc.runs if x.alive() and x.started and not x.ended]}
    proc = subprocess.Popen([sc.args.bin, "-r", urls, "--redis-timeout", "500ms",
                             "--connect-timeout", "500ms", "--release"] + args + [sc.lock_name()],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    sc.lease["releases"].append(rel)

    def done(now, rel=rel, proc=proc):
        rel["t1"] = now
        rel["rc"] = proc.wait()
        out = proc.stdout.read().decode(errors="replace")
        proc.stdout.close()
        m = re.search(r"pid (\d+) \(fence (\d+)\)", out)
        if m:
            rel["pid"], rel["fence"] = int(m.group(1)), int(m.group(2))
        rel["fences"] = [int(f) for f in re.findall(r"\(fence (\d+)\)", out)]
        rel["out"] = out.strip()
    sc.watch(proc, done)
    return True


def acquire_sha():
    """The SHA1 of acquire.lua as redlock-run sends it: scripts/gen-lua.sh
    rewrites the script's --! header lines before hashing, so the file's own
    hash is not the one on the wire. None if the generator cannot run."""
    top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    lua = os.path.join(top, "src", "lua", "acquire.lua")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "scripts_gen.h")
        try:
            subprocess.run([os.path.join(top, "scripts", "gen-lua.sh"), out, lua],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            with open(out, "rb") as f:
                m = re.search(rb'\[RR_SCRIPT_ACQUIRE\] = \{ "([0-9a-f]{40})"', f.read())
        except (OSError, subprocess.CalledProcessError):
            return None
    return m.group(1) if m else None


def f_late_acquire(sc):
    # The connections delayed so far (the proxy's thread appends them):
    # counted now too, or the runner, which goes on past a scenario's
    # duration while a fault kind it names was never injected, would run
    # every late-acquire scenario three times as long.
    if sc.lease["late"]:
        sc.faults["late_acquire"] = len(sc.lease["late"])
    pool = [p for p in sc.proxies if p.late is None]
    if not pool:
        return False
    p = sc.rng.choice(pool)
    sha = sc.lease.setdefault("sha", acquire_sha())
    # (chaoslib/proxy.py's late_handle delivers the matching connection.)
    plan = {"delay_ms": sc.rng.randint(250, 1500), "match": lambda data: is_acquire(data, sha),
            "events": sc.lease["late"], "proxy": sc.proxies.index(p)}
    p.late = plan
    sc.lease["late_armed"] += 1

    def disarm(p=p, plan=plan):
        if p.late is plan:
            p.late = None
    sc.later(2 * NS, disarm)
    return "armed"   # counted when a connection is actually delayed


FAULTS = {
    "tstp_wrapper": f_tstp,
    "stop_wrapper": f_stop_wrapper,
    "stop_wrapper_cmd": f_stop_wrapper_cmd,
    "force_release": f_force_release,
    "late_acquire": f_late_acquire,
}


def finish(sc):
    """Called after the scenario ran: what goes into meta.json."""
    L = sc.s.get("lease")
    if sc.lease["late"]:
        sc.faults["late_acquire"] = len(sc.lease["late"])
    return {"releases": sc.lease["releases"], "late_acquires": sc.lease["late"],
            "lease": L}


# ---------------------------------------------------------------------------
# The proxy: which connection's bytes are delivered late
# ---------------------------------------------------------------------------

def is_acquire(data, sha):
    """An acquire: EVALSHA of acquire.lua, or (whatever the version of the
    script) the only request whose keys are both the lock and the fence
    counter of a job."""
    return ((sha is not None and sha in data)
            or (b"EVAL" in data and b"}:lock" in data and b"}:fence" in data
                and b"}:history" in data))


# ---------------------------------------------------------------------------
# Negative control
# ---------------------------------------------------------------------------

PLANTED_MUST_FAIL = ["C1", "C5", "C6", "C7"]


def write_planted(d):
    """A hand-written scenario directory with one violation of each lease
    check, and one overlap that a --release --force does explain: C1 (an
    overlap that lasts longer than the renewal after a forced release, and
    one within a renewal of a plain --release, which waits for the holder
    and so explains nothing), C5 (a witness alive after its wrapper
    exited), C6 (a start after fence + TTL) and C7 (a succeeded --once ID
    run again) must go red, and the explained overlap must not count."""
    import json
    os.makedirs(os.path.join(d, "sink"), exist_ok=True)
    off = 5_000_000_000 * MS          # wall = mono + 5e9 ms
    ttl = 1000

    def w(ms):                         # the fence of an acquire at mono ms
        return 5_000_000_000 + ms

    sec = [  # id, start ms, end ms, fence
        ("a", 1000, 1050, w(1000)),
        ("late", 3000, 3050, w(1500)),            # C6: 500 ms after its lease
        ("x", 4000, 4050, w(4000)),
        ("y", 4200, 4250, w(4200)),               # C7: id-0 again, 150 ms later
        ("p", 5000, 5200, w(5000)),               # released at 5110: explained
        ("q", 5120, 5170, w(5120)),
        ("r1", 6000, 7000, w(6000)),              # released at 6110: runs on
        ("s1", 6120, 6170, w(6120)),              # C1
        ("o", 8000, 8050, w(8000)),               # C5: outlived its wrapper
        ("u1", 9000, 9200, w(9000)),              # revoked (no --force) at 9110:
        ("v1", 9120, 9170, w(9120)),              # C1 all the same
    ]
    lines = []
    n = 0
    for rid, a, b, f in sorted(sec, key=lambda x: x[1]):
        lines.append((a, "start %d %s %d pid=%d" % (a * MS, rid, f, 100 + n)))
        lines.append((b, "end %d %s %d pid=%d read=%d prev=-" % (b * MS, rid, f, 100 + n, n)))
        n += 1
    with open(os.path.join(d, "witness.log"), "w") as fh:
        fh.write("\n".join(x[1] for x in sorted(lines)) + "\n")
    with open(os.path.join(d, "counter"), "w") as fh:
        fh.write("%d o\n" % len(sec))
    with open(os.path.join(d, "runs.jsonl"), "w") as fh:
        for rid, a, b, f in sec:
            r = {"id": rid, "rc": 0, "signals": [], "tags": {}, "exit_ns": (b + 5) * MS}
            if rid in ("x", "y"):
                r["tags"]["once"] = "id-0"
            if rid in ("p", "r1", "u1"):
                r["rc"] = 79
            if rid == "o":
                r["outlived"] = True
            fh.write(json.dumps(r) + "\n")
    releases = [{"t0": 5100 * MS, "t1": 5110 * MS, "rc": 0, "fence": w(5000), "pid": 1, "force": True},
                {"t0": 6100 * MS, "t1": 6110 * MS, "rc": 0, "fence": w(6000), "pid": 2, "force": True},
                {"t0": 9100 * MS, "t1": 9110 * MS, "rc": 0, "fence": w(9000), "pid": 3, "force": False}]
    spec = {"name": "control-planted-lease", "ttl_ms": ttl,
            "lease": {"once": {"ids": 1, "state_ttl": "1s", "state_ttl_ms": 1000}}}
    with open(os.path.join(d, "meta.json"), "w") as fh:
        json.dump({"scenario": "control-planted-lease", "asserted": ONCE_CHECKS,
                   "spec": spec, "releases": releases, "wall_minus_mono_ns": off}, fh)
    return PLANTED_MUST_FAIL
