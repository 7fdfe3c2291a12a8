"""klock — the kernel's witness of overlaps (tests/helpers/witness.c,
--klock): each witness tries a flock on a file of its lock (and --limit
slot) before its start stamp and gives it back after its critical section,
before its end stamp. It logs what it found:

    klock  <mono_ns> <id> <fence> pid=<pid> file=<name>              taken
    kclash <mono_ns> <id> <fence> pid=<pid> file=<name> holder=<pid>  held

A flock is freed by the kernel when its holder gives it back or dies
(its last descriptor closes), never by the harness's view of things. So:

  kclash  another holder of that lock slot was alive (or stopped) at that
          instant: an overlap the kernel saw. It is explained like any
          overlap, by an event that covers it in time (explain_overlap at
          that instant; --limit does not explain it: one holder per slot),
          or it fails C1. It is never measurement lag.
  klock   the lock was free: every earlier holder that had taken it was
          out of its section. An overlap measured only from the time the
          harness saw a death (the earlier section has no end record) is
          then "closed by a late-seen death; the kernel's lock was free at
          the later start" (late_death_free): not an overlap, and not
          counted as unexplained; but only if both sides took the same
          lock (a klock record each): a missing record excuses nothing.

Works on plain data only.
"""

import os

from chaoslib.explain import LOOSE_EXCUSES, STRICT_EXCUSES, explain_overlap

MS = 1_000_000
CLOSED_LATE = "closed by a late-seen death; the kernel's lock was free at the later start"


def load_klocks(logdir):
    """The klock and kclash records of witness.log: {run id: [record]},
    each {"kind", "ns", "id", "fence", "pid", "file", "holder"}."""
    out = {}
    try:
        with open(os.path.join(logdir, "witness.log"), "r", errors="replace") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        return out
    for line in lines:
        p = line.split()
        if len(p) < 4 or p[0] not in ("klock", "kclash"):
            continue
        kv = dict(x.split("=", 1) for x in p[4:] if "=" in x)
        try:
            ns = int(p[1])
        except ValueError:
            continue
        out.setdefault(p[2], []).append({
            "kind": p[0], "ns": ns, "id": p[2], "fence": _int(p[3]), "pid": _int(kv.get("pid")),
            "file": kv.get("file"), "holder": _int(kv.get("holder"))})
    return out


def _int(s):
    return int(s) if isinstance(s, str) and s.lstrip("-").isdigit() else None


def took(kl, s):
    """The klock record of section s (it took the lock before its start),
    or None (it clashed, or logged nothing: an older witness, a missing
    line)."""
    recs = kl.get(s["id"]) or []
    if any(r["kind"] == "kclash" for r in recs):
        return None
    for r in recs:
        if r["kind"] == "klock" and r["ns"] <= s["start"]:
            return r
    return None


def late_death_free(a, b, kl):
    """Is the overlap of a (started first) and b only the harness's late
    view of a's death? a has no end record (closed when its death or its
    wrapper's exit was seen), both took the same lock, and b took it
    before its start: a was out of its section by then. Returns the
    detail, or None."""
    if a["how"] == "end":
        return None
    ka, kb = took(kl, a), took(kl, b)
    if not (ka is not None and kb is not None and ka["file"] == kb["file"] and kb["ns"] >= ka["ns"]):
        return None
    return {"why": CLOSED_LATE, "file": kb["file"],
            "free_before_start_ms": round((b["start"] - kb["ns"]) / MS, 3)}


def _holder(c, sections, kl):
    """The section whose witness held the lock when c clashed: of those
    whose witness had the holder's pid and took the same lock, the one
    that took it nearest c (its stamp may follow c's: it is read after
    the flock, and a witness may be descheduled in between)."""
    best = None
    for s in sections:
        k = took(kl, s)
        if (k is not None and c["holder"] is not None and k["pid"] == c["holder"]
                and k["file"] == c["file"]
                and (best is None or abs(k["ns"] - c["ns"]) < best[0])):
            best = (abs(k["ns"] - c["ns"]), s)
    return best[1] if best else None


def kclashes(sections, overlaps, kl, runs, meta, asserted):
    """Every kclash, judged at its instant: [{"b", "a", "t_ns", "explained",
    "by", "measured"}]. "measured": a logged overlap of the same pair
    (marked "kclash" there). --limit never explains one (the clash is
    within one slot); otherwise what explains an overlap where the
    scenario asserts C1 (or not) explains it."""
    excuses = STRICT_EXCUSES if "C1" in asserted else LOOSE_EXCUSES
    by_id = {s["id"]: s for s in sections}
    out = []
    for rid, recs in sorted(kl.items()):
        for c in recs:
            if c["kind"] != "kclash":
                continue
            a = _holder(c, sections, kl)
            b = dict(by_id.get(rid) or {"id": rid, "fence": c["fence"], "end": c["ns"],
                                         "how": "none"}, start=c["ns"])
            a = a or {"id": "?", "fence": None, "start": c["ns"], "end": c["ns"], "how": "none"}
            kind, detail = explain_overlap(a, b, runs, meta, excuses)
            e = {"kclash": True, "a": a["id"], "b": rid, "t_ns": c["ns"], "holder": c["holder"],
                 "file": c["file"], "explained": kind, "measured": False,
                 "why": "the kernel's lock of %s was held by another witness (pid %s) at this "
                        "start" % (c["file"], c["holder"] if c["holder"] else "?")}
            if detail:
                e["by"] = detail
            for o in overlaps:
                if {o["a"], o["b"]} == {a["id"], rid}:
                    o["kclash"] = True
                    e["measured"] = True
            out.append(e)
    return out
