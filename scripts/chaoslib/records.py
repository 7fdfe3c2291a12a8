"""records — what the job's keys say while a scenario runs, for C5.

A scenario with records=True (limit.py's give-backs, cluster.py's
half-way slots) has its slot keys read every SAMPLE_MS: for each slot K
of --limit N (slot 1 without --limit), the lock key's token and PTTL and
the state record's token and pid, in one EVAL. A slot whose lock and
record carry one token, with the pid of a run that already exited, is
written down (meta.json "records" "held"); after the last wrapper the
job's history stream is read too ("history": its 'abandoned' entries).
scripts/chaoslib/checks.py (check_records) decides which of them are
wrong: a run that exited 69/75 without running its command, or 0, must
hold no slot and must never be recorded abandoned.

The server is read directly (not through a proxy), only while the harness
has it up; port_of(sc) says which port (the slot's owner on a Cluster).
Works on a Scenario object of scripts/chaos (sc); imports nothing from it.
"""

from .checks import MS
from .nodes import mono
from .resp import try_resp

SAMPLE_MS = 150

READ_SLOTS = """
local out = {}
for i = 1, #KEYS, 2 do
  local h = redis.call('HMGET', KEYS[i + 1], 'token', 'pid')
  out[#out + 1] = {redis.call('GET', KEYS[i]) or '', h[1] or '', h[2] or '',
                   redis.call('PTTL', KEYS[i])}
end
return out
"""


def slot_keys(sc):
    """[lock, state] of every slot: slot 1 is ...:lock, slot K ...:lock:K."""
    pre = "redlock:{%s}:" % sc.lock_name()
    keys = []
    for k in range(1, (sc.s.get("limit") or 1) + 1):
        sfx = "" if k == 1 else ":%d" % k
        keys += [pre + "lock" + sfx, pre + "state" + sfx]
    return keys


def start(sc, port_of):
    """Sample every SAMPLE_MS from now on (sc.later: only while the
    scenario's faults run; the last wrappers drain without it)."""
    sc.records = {"held": [], "history": [], "samples": 0, "errors": 0}
    keys = slot_keys(sc)

    def sample():
        sc.later(SAMPLE_MS * MS, sample)
        port = port_of(sc)
        if port is None:
            return
        rep = try_resp(port, "EVAL", READ_SLOTS, len(keys), *keys, timeout=0.1)
        if not isinstance(rep, list):
            sc.records["errors"] += 1
            return
        sc.records["samples"] += 1
        now = mono()
        exited = {}
        for r in sc.runs:
            if r.exit_ns is not None and r.exit_ns < now:
                exited[r.proc.pid] = r
        for k, row in enumerate(rep, 1):
            if not (isinstance(row, list) and len(row) == 4) or not row[0] or row[0] != row[1]:
                continue
            try:
                pid = int(row[2])
            except ValueError:
                continue
            if pid in exited:
                sc.records["held"].append({"slot": k, "pid": pid, "t_ns": now, "pttl": row[3],
                                           "id": exited[pid].id})
    sc.later(SAMPLE_MS * MS, sample)


def read_history(sc, port):
    """After the last wrapper: the history stream's 'abandoned' entries."""
    rec = getattr(sc, "records", None)
    if rec is None or port is None:
        return
    rep = try_resp(port, "XRANGE", "redlock:{%s}:history" % sc.lock_name(), "-", "+", timeout=2)
    if not isinstance(rep, list):
        rec["errors"] += 1
        return
    n = 0
    for ent in rep:
        if not (isinstance(ent, list) and len(ent) == 2 and isinstance(ent[1], list)):
            continue
        n += 1
        f = ent[1]
        d = {f[i]: f[i + 1] for i in range(0, len(f) - 1, 2)}
        if d.get("status") == "abandoned":
            rec["history"].append({k: d.get(k) for k in ("status", "pid", "fence", "once",
                                                          "started_ms", "host")})
    rec["history_entries"] = n


def finish(sc):
    rec = getattr(sc, "records", None)
    return {"records": rec} if rec is not None else {}
