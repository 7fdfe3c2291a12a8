"""once — scripts/chaos scenarios for "once means once" (issue 28).

A --once ID settles a slot once: a run of it that failed, was killed or
died is not repeated by accident, on any server, whatever their clocks
say. Two families, each asserting C1-C5 and:

  C10 once means once: the commands of one --once ID ran at most its
      attempt budget (--attempts, 1 by default; one more per --resolve
      retry) times in all; every ID the job's records hold is one that
      the lock service's clock (Redis TIME, here the harness's own clock:
      same machine) gave while its runs were alive, never one of a
      skewed host's clock; a record's attempts stay within the budget;
      after --resolve retry the next run is not refused
  C11 (guard family) the record says what happened: a run whose
      command's exit status is known (its witness wrote "end") is
      recorded with it, or not at all; a run whose command never
      started leaves no succeeded/failed record; `lost` only where the
      guard died before the command was reaped; `running` or
      `abandoned` only where the wrapper died (or 74); a run that
      survived returns what its record says; the retries of an ID
      are refused (65), or skipped (0) only when it succeeded

skew: "hosts" (the wrapper slots), most with a wall clock skewed by
      libfaketime (LD_PRELOAD=libfaketimeMT.so.1 FAKETIME=+X, as
      `faketime -f +Xs` does, seconds to a day either way;
      FAKETIME_DONT_FAKE_MONOTONIC=1, since a host whose wall clock is off
      still has a true monotonic clock, and the witness stamps with it),
      fire `redlock-run --once 'skR-%F-%H%M' [--attempts N]` of a command
      that does its work and exits 1, every 100-400 ms each, so that
      several contenders race for each ID, at once and one after another.
      R is a round of round_s seconds; N is drawn per round (1, 2, 3).
      The minute in the ID makes a skew of seconds visible: a host that
      expanded the pattern on its own clock would run another ID, and so
      run the command again. Faults: kill_command (SIGKILL of a holder's
      command: recorded failed, signal 9) and kill_wrapper (the run dies:
      abandoned).
guard: each slot plays episodes on an ID of its own: one attempt, killed
      at a phase — spawn (the command's exec held 0.4-0.8 s by strace:
      killed before the command runs), run (in its critical section),
      grace (the command exited 0 or 1 leaving a helper that ignores
      SIGTERM, --kill-after 1.5 s: killed while the guard waits the grace
      out), release (the proxy delays the master 250-400 ms from just
      before the command's end: killed while the release is in flight) —
      by SIGKILL to the guard (the wrapper's child named redlock-guard in
      /proc), the wrapper, or both; then two plain runs of the ID (the
      retries: never run), then, unless it succeeded, `--resolve retry`
      and one run that must run. The record is read after the attempt
      and after the retries.

Only plain data, the hooks below and the harness's Scenario (sc); C10 and
C11 themselves are judged in scripts/chaoslib/checks.py.
"""

import glob
import os
import shutil
import signal
import subprocess
import time

from chaoslib.checks import ALL_CHECKS, MS, NS
from chaoslib.nodes import mono
from chaoslib.resp import pairs, try_resp

SKEW_CHECKS = list(ALL_CHECKS) + ["C10"]
GUARD_CHECKS = list(ALL_CHECKS) + ["C10", "C11"]

# The skews a host may have (s): a day either way, an hour or two, and
# seconds (drawn 1-59 either way where None).
SKEWS = (86400, -86400, 7200, -3600, None, None)
PHASES = ("spawn", "run", "grace", "release")
TARGETS = ("guard", "wrapper", "both")

# Counted by the episodes themselves (C0: every phase killed at least once).
KILLS = ["kill_" + p for p in PHASES]

SHORT = [
    dict(name="single-once-skew-short", masters=1, wrappers=8, duration=8,
         faults=["kill_command"], asserted=SKEW_CHECKS, respawn_ms=(100, 400),
         min_completed=4, once28=dict(mode="skew", round_s=1.0, attempts=(1, 1, 2, 3),
                                      hold=(50, 300))),
]

LONG = [
    dict(name="single-once-skew", masters=1, wrappers=10, duration=25,
         faults=["kill_command", "kill_wrapper"], asserted=SKEW_CHECKS, respawn_ms=(100, 400),
         once28=dict(mode="skew", round_s=1.5, attempts=(1, 1, 2, 3), hold=(50, 400))),
    dict(name="redlock5-once-skew", masters=5, wrappers=10, duration=25,
         faults=["kill_command", "kill_wrapper"], asserted=SKEW_CHECKS, respawn_ms=(100, 400),
         once28=dict(mode="skew", round_s=1.5, attempts=(1, 1, 2, 3), hold=(50, 400))),
    dict(name="single-once-guard-killed", masters=1, wrappers=4, duration=40, faults=KILLS,
         asserted=GUARD_CHECKS, respawn_ms=(100, 300), ttl_ms=1500, wait_ms=5000,
         redis_timeout="1s",
         kill_after="1500ms", min_completed=5, once28=dict(mode="guard")),
]


def _alive_pid(pid):
    try:
        os.kill(pid, 0)
        return True
    except OSError:
        return False


def _comm(pid):
    try:
        with open("/proc/%d/comm" % pid) as f:
            return f.read().strip()
    except OSError:
        return None


def _cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read().split(b"\0")[0].decode(errors="replace").strip()
    except OSError:
        return ""


def _kids(pid):
    out = []
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return out
    for t in tids:
        try:
            with open("/proc/%d/task/%s/children" % (pid, t)) as f:
                out += [int(x) for x in f.read().split()]
        except (OSError, ValueError):
            pass
    return out


def find_procs(r):
    """(wrapper pid, guard pid) of run r, from /proc: the wrapper is the
    run's process or, under strace, its child called redlock-run; the
    guard the wrapper's child whose command line names it redlock-guard."""
    wrapper = r.proc.pid
    if _comm(wrapper) != "redlock-run":
        wrapper = next((k for k in _kids(r.proc.pid) if _comm(k) == "redlock-run"), None)
    if wrapper is None:
        return None, None
    guard = next((k for k in _kids(wrapper) if _cmdline(k) == "redlock-guard"), None)
    return wrapper, guard


def setup(sc):
    O = sc.s.get("once28")
    if O is None:
        return
    rng = sc.rng
    skews = [0]   # one host with a true clock
    for _ in range(1, sc.s["wrappers"]):
        s = rng.choice(SKEWS)
        skews.append(s if s is not None else rng.choice((-1, 1)) * rng.randint(1, 59))
    sc.once28 = {"t0": mono(), "rounds": {}, "skews": skews, "slots": {}, "episodes": [],
                 "resolves": [], "proxy_busy": False}
    os.makedirs(os.path.join(sc.dir, "metrics"), exist_ok=True)
    # The first that the dynamic loader takes for this machine's programs
    # (one of another architecture is refused, with a warning).
    libs = [lib for lib in glob.glob("/usr/lib/*/faketime/libfaketimeMT.so.1") + glob.glob(
        "/usr/lib/faketime/libfaketimeMT.so.1")
            if not subprocess.run(["/bin/true"], env=dict(os.environ, LD_PRELOAD=lib),
                                  capture_output=True).stderr]
    if any(skews) and not libs:
        raise RuntimeError("libfaketime is not installed (Debian: faketime; needed by %s)"
                           % sc.s["name"])
    sc.once28["libfaketime"] = libs[0] if libs else None
    if O["mode"] == "guard" and not shutil.which("strace"):
        raise RuntimeError("strace is not installed (needed by %s)" % sc.s["name"])


def adapt(sc, r, prefix, opts, command, env):
    """Adapt run r (after lease.prepare): --once, --attempts, the skew,
    the command's exit, the kill of the guard family."""
    O = sc.s.get("once28")
    if O is None:
        return prefix, opts, command, env
    env["TZ"] = "UTC"
    r.metrics = os.path.join(sc.dir, "metrics", r.id + ".prom")
    opts = opts + ["--metrics-file", r.metrics, "--state-ttl", "120s"]
    if O["mode"] == "skew":
        return _adapt_skew(sc, O, r, prefix, opts, command, env)
    return _adapt_guard(sc, r, prefix, opts, command, env)


def _hold(command, ms):
    return command[:-1] + [str(ms)]


def _adapt_skew(sc, O, r, prefix, opts, command, env):
    st = sc.once28
    rnd = int((mono() - st["t0"]) / (O["round_s"] * NS))
    rd = st["rounds"].setdefault(rnd, {"attempts": sc.rng.choice(O["attempts"])})
    pattern = "sk%d-%%F-%%H%%M" % rnd
    opts = opts + ["--once", pattern]
    if rd["attempts"] != 1:
        opts += ["--attempts", str(rd["attempts"])]
    skew = st["skews"][r.slot]
    if skew:
        # libfaketime itself: the faketime(1) wrapper's semaphore
        # (sem_open) made one of many wrappers started at once exit 1
        # ("sem_open: File exists") without running redlock-run.
        env.update(LD_PRELOAD=st["libfaketime"], FAKETIME="%+d" % skew,
                   FAKETIME_DONT_FAKE_MONOTONIC="1")
    r.tags.update(once_round="sk%d" % rnd, once_pattern=pattern, attempts=rd["attempts"],
                  skew_s=skew, exit=1)
    command = _hold(command, sc.rng.randint(*O["hold"])) + ["--exit", "1"]
    return prefix, opts, command, env


# -- the guard family ---------------------------------------------------------

GRACE_SH = '"$@"; s=$?; trap "" TERM; sleep 4 & exit $s'


def _read_record(sc, oid):
    key = "redlock:{%s}:once:%s" % (sc.lock_name(), oid)
    rec = pairs(try_resp(sc.servers[0].port, "HGETALL", key))
    lock = try_resp(sc.servers[0].port, "PTTL", "redlock:{%s}:lock" % sc.lock_name())
    return {"t_ns": mono(), "rec": {k: rec.get(k) for k in ("status", "exit_code", "signal", "pid",
                                                            "fence", "attempts", "retry")
                                    if rec.get(k) not in (None, "")},
            "lock_pttl": lock}


def _resolve(sc, oid):
    urls = ",".join("redis://127.0.0.1:%d" % sv.port for sv in sc.servers)
    t0 = mono()
    try:
        p = subprocess.run([sc.args.bin, "-r", urls, "--redis-timeout", "1s", "--resolve", "retry",
                            "--once", oid, sc.lock_name()], stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=10)
        rc, out = p.returncode, p.stdout.decode(errors="replace").strip()
    except subprocess.TimeoutExpired:
        rc, out = None, "timeout"
    ev = {"once": oid, "t0_ns": t0, "t1_ns": mono(), "rc": rc, "out": out[:300]}
    sc.once28["resolves"].append(ev)
    return ev


def _adapt_guard(sc, r, prefix, opts, command, env):
    rng = sc.rng
    st = sc.once28
    sl = st["slots"].setdefault(r.slot, {"n": 0, "step": 0, "ep": None})
    hold = rng.randint(200, 400)
    if sl["step"] == 0:
        # Every phase and target in turn, in an order drawn anew each
        # round. (In the release the guard is gone: it is let go once the
        # command and what it left are.)
        if not st.get("combos"):
            st["combos"] = [(p, t) for p in PHASES for t in TARGETS
                            if not (p == "release" and t == "guard")]
            rng.shuffle(st["combos"])
        phase, target = st["combos"].pop()
        ep = {"once": "gk%d-%d" % (r.slot, sl["n"]), "attempt": r.id, "phase": phase,
              "target": target,
              "exit": rng.choice((0, 1)), "retries": [],
              "after": None, "record1": None, "record2": None, "kill": None}
        sl["n"] += 1
        sl["ep"] = ep
        st["episodes"].append(ep)
        role = "attempt"
        if ep["phase"] == "run":
            hold = rng.randint(400, 900)
    else:
        ep = sl["ep"]
        role = "retry"
        if sl["step"] == 1:
            ep["record1"] = _read_record(sc, ep["once"])
        elif sl["step"] == 3:
            ep["record2"] = _read_record(sc, ep["once"])
            status = (ep["record2"]["rec"] or {}).get("status")
            if status == "succeeded" or not status:
                # Nothing to resolve: a new episode with this run.
                sl["step"] = 0
                return _adapt_guard(sc, r, prefix, opts, command, env)
            ep["resolve"] = _resolve(sc, ep["once"])
            role = "after"
            ep["after"] = r.id
        if role == "retry":
            ep["retries"].append(r.id)
    sl["step"] = (sl["step"] + 1) % 4
    opts = opts + ["--once", ep["once"]]
    r.tags.update(once=ep["once"], role=role, exit=ep["exit"] if role != "after" else 0)
    command = _hold(command, hold) + ["--exit", str(r.tags["exit"])]
    if role != "attempt":
        return prefix, opts, command, env
    r.tags.update(phase=ep["phase"], target=ep["target"])
    if ep["phase"] == "grace":
        command = ["sh", "-c", GRACE_SH, "sh"] + command
    if ep["phase"] == "spawn":
        delay_ms = rng.randint(400, 800)
        prefix = ["strace", "-f", "-qq", "--seccomp-bpf", "-o", "/dev/null", "-P", sc.args.witness,
                  "-e", "trace=execve", "-e", "inject=execve:delay_enter=%d" % (delay_ms * 1000)] + prefix
        r.extra_ns = delay_ms * MS
        r.tags["exec_delay_ms"] = delay_ms
    plan = {"t_ns": None, "guard_seen_ns": None, "start_seen_ns": None, "end_seen_ns": None,
            "delay_ms": rng.randint(100, 300) if ep["phase"] == "spawn"
            else rng.randint(50, 400) if ep["phase"] == "grace"
            else rng.randint(5, 150) if ep["phase"] == "release"
            else int(hold * rng.uniform(0.2, 0.6)),
            "hold": hold, "proxy": False}
    sc.later(5 * MS, lambda: _poll(sc, r, ep, plan))
    return prefix, opts, command, env


def _holds(sc, oid, wrapper):
    """Does the ID's record say that wrapper runs it (it took the lock)?"""
    key = "redlock:{%s}:once:%s" % (sc.lock_name(), oid)
    rep = try_resp(sc.servers[0].port, "HMGET", key, "status", "pid", timeout=0.1)
    return isinstance(rep, list) and rep[0] == "running" and rep[1] == str(wrapper)


def _kill(sc, r, ep, plan, wrapper, guard):
    now = mono()
    what = []
    if ep["target"] in ("guard", "both") and guard and _alive_pid(guard):
        os.kill(guard, signal.SIGKILL)
        r.signals.append("KILL-guard")
        what.append("guard")
    if ep["target"] in ("wrapper", "both") and wrapper and _alive_pid(wrapper):
        os.kill(wrapper, signal.SIGKILL)
        r.signals.append("KILL")
        what.append("wrapper")
    ep["kill"] = {"t_ns": now, "what": what, "started": r.started, "ended": r.ended,
                  "guard": guard, "wrapper": wrapper}
    if what:
        sc.count("kill_" + ep["phase"], id=r.id, what=what)


def _poll(sc, r, ep, plan):
    """Every 5 ms while run r lives: kill at its phase, once."""
    if ep["kill"] is not None or not r.alive():
        if ep["kill"] is None:
            ep["kill"] = {"t_ns": None, "what": [], "missed": True, "started": r.started,
                          "ended": r.ended}
        _proxy_back(sc, plan)
        return
    now = mono()
    wrapper, guard = find_procs(r)
    phase = ep["phase"]
    if r.started and plan["start_seen_ns"] is None:
        plan["start_seen_ns"] = now
    if r.ended and plan["end_seen_ns"] is None:
        plan["end_seen_ns"] = now
    due = False
    if phase == "spawn":
        if r.started:   # too late for this phase: count it missed
            ep["kill"] = {"t_ns": None, "what": [], "missed": True, "started": True, "ended": r.ended}
            return
        # Once the lock is taken (the ID's record names this wrapper as
        # running): the guard is forked before the acquisition.
        if guard and plan["guard_seen_ns"] is None and _holds(sc, ep["once"], wrapper):
            plan["guard_seen_ns"] = now
        due = plan["guard_seen_ns"] is not None and now >= plan["guard_seen_ns"] + plan["delay_ms"] * MS
    elif phase == "run":
        due = (plan["start_seen_ns"] is not None and not r.ended
               and now >= plan["start_seen_ns"] + plan["delay_ms"] * MS)
    elif phase == "grace":
        due = plan["end_seen_ns"] is not None and now >= plan["end_seen_ns"] + plan["delay_ms"] * MS
    elif phase == "release":
        st = sc.once28
        if (plan["start_seen_ns"] is not None and not plan["proxy"] and not st["proxy_busy"]
                and now >= plan["start_seen_ns"] + (plan["hold"] - 40) * MS):
            st["proxy_busy"] = plan["proxy"] = True
            d = sc.rng.randint(250, 400)
            sc.proxies[0].set_mode("delay", d)
            sc.count("delay_release", servers=[0], delay_ms=d)
            sc.later((d + 600) * MS, lambda: _proxy_back(sc, plan))
        due = (plan["proxy"] and plan["end_seen_ns"] is not None
               and now >= plan["end_seen_ns"] + plan["delay_ms"] * MS)
    if due:
        _kill(sc, r, ep, plan, wrapper, guard)
        return
    sc.later(5 * MS, lambda: _poll(sc, r, ep, plan))


def _proxy_back(sc, plan):
    if plan.get("proxy") and sc.once28["proxy_busy"]:
        sc.proxies[0].set_mode("pass")
        sc.once28["proxy_busy"] = False
        plan["proxy"] = False
        for ev in reversed(sc.fault_events):
            if ev["kind"] == "delay_release" and "until_ns" not in ev:
                ev["until_ns"] = mono()
                break


# -- faults (the skew family) ---------------------------------------------------

def f_kill_command(sc):
    """SIGKILL the command (the witness) of a run in its critical section."""
    hs = [r for r in sc.holders() if r.tags.get("once_round") and r.child_pid
          and _comm(r.child_pid) == "witness"]
    if not hs:
        return False
    r = sc.rng.choice(hs)
    try:
        os.kill(r.child_pid, signal.SIGKILL)
    except OSError:
        return False
    r.signals.append("KILL-cmd")
    return True


def f_armed(sc):
    return "armed"   # the guard family's kills: the episodes count them


FAULTS = dict({"kill_command": f_kill_command}, **{k: f_armed for k in KILLS})
NETWORK_FAULTS = {"delay_release"}


def quiesce(sc):
    """After the last wrapper: every once record of the job and its history
    (every master's: with several, any may hold what one run wrote)."""
    if sc.s.get("once28") is None:
        return
    st = sc.once28
    st["records"], st["history"] = {}, []
    pat = "redlock:{%s}:once:*" % sc.lock_name()
    for sv in sc.servers:
        cur = "0"
        for _ in range(1000):
            rep = try_resp(sv.port, "SCAN", cur, "MATCH", pat, "COUNT", 1000)
            if not isinstance(rep, list) or len(rep) != 2:
                break
            cur, keys = rep
            for k in keys:
                oid = k.split("}:once:", 1)[1]
                rec = pairs(try_resp(sv.port, "HGETALL", k))
                if rec:
                    st["records"].setdefault(oid, []).append(
                        {"server": sv.idx, "status": rec.get("status"), "attempts": rec.get("attempts"),
                         "exit_code": rec.get("exit_code"), "signal": rec.get("signal"),
                         "fence": rec.get("fence"), "started_ms": rec.get("started_ms")})
            if cur == "0":
                break
        hist = try_resp(sv.port, "XRANGE", "redlock:{%s}:history" % sc.lock_name(), "-", "+")
        for e in hist if isinstance(hist, list) else []:
            if isinstance(e, list) and len(e) == 2:
                d = pairs(e[1])
                st["history"].append({"server": sv.idx, "status": d.get("status"),
                                      "once": d.get("once"), "fence": d.get("fence"),
                                      "pid": d.get("pid"), "exit_code": d.get("exit_code")})


def finish(sc):
    if sc.s.get("once28") is None:
        return {}
    st = sc.once28
    return {"once28": {"mode": sc.s["once28"]["mode"], "skews": st["skews"],
                       "rounds": {str(k): v for k, v in st["rounds"].items()},
                       "episodes": st["episodes"], "resolves": st["resolves"],
                       "records": st.get("records", {}), "history": st.get("history", []),
                       "wall_read_ns": time.time_ns()}}
