"""checks — the checker: reads one scenario's directory (witness.log,
counter, sink/log, runs.jsonl, meta.json) and judges C0-C11 (what each
means: the docstring of scripts/chaos). check() is the entry; the lease
checks C6/C7 (scenarios of scripts/chaos_scenarios/lease.py), C8
(--limit N, scripts/chaos_scenarios/limit.py), C5's operator releases and
records, C9 (crowds of dead waiters, crowd.py), C10 and C11 (once means
once, once.py) are at the end. What
may explain an overlap, in time: explain.py.

Works on plain data only: no process, no server.
"""

import datetime
import json
import os

NS = 1_000_000_000
MS = 1_000_000

from chaoslib.explain import (LOOSE_EXCUSES, SEEN_SLACK_MS, STRICT_EXCUSES,  # noqa: F401
                              explain_leftover, explain_overlap, fault_windows, pause_covers,
                              pause_grace_ns, release_explains)
from chaoslib.klock import kclashes, late_death_free, load_klocks
from chaoslib.oncecheck import check_once_budget, check_once_records

ALL_CHECKS = ("C1", "C2", "C3", "C4", "C5")
EXTRA_CHECKS = ("C6", "C7", "C8", "C9", "C10", "C11")
# What the harness stopped, as recorded in a run's "signals". Only "STOP",
# the whole holder (wrapper, guard and command, like a frozen machine),
# explains an overlap: the guard must stop the command of any other.
STOP_LABELS = {"whole": "STOP", "wrapper": "STOP-wrapper", "wrapper_cmd": "STOP-wrapper-cmd",
               "tstp": "TSTP"}


def read_lines(path):
    try:
        with open(path, "r", errors="replace") as f:
            return f.read().splitlines()
    except FileNotFoundError:
        return []


def parse_kv(parts):
    kv = {}
    for p in parts:
        if "=" in p:
            k, v = p.split("=", 1)
            kv[k] = v
    return kv


def to_int(s):
    try:
        return int(s)
    except (TypeError, ValueError):
        return None


def load(logdir):
    """A scenario directory's meta.json, runs.jsonl (by run id) and
    witness.log (start and end records by key; a run id seen twice gets a
    unique key): (meta, runs, starts, ends, bad_lines)."""
    meta = {}
    try:
        with open(os.path.join(logdir, "meta.json")) as f:
            meta = json.load(f)
    except (FileNotFoundError, ValueError):
        pass
    runs = {}
    for line in read_lines(os.path.join(logdir, "runs.jsonl")):
        try:
            r = json.loads(line)
        except ValueError:
            continue
        runs[r["id"]] = r

    starts, ends = {}, {}
    bad_lines = 0
    for line in read_lines(os.path.join(logdir, "witness.log")):
        p = line.split()
        if p and p[0] in ("klock", "kclash"):
            continue   # the kernel's lock: klock.load_klocks
        if len(p) < 4 or p[0] not in ("start", "end") or to_int(p[1]) is None:
            bad_lines += 1
            continue
        rec = {"ns": int(p[1]), "id": p[2], "fence": to_int(p[3]), "kv": parse_kv(p[4:])}
        key = p[2]
        if p[0] == "start":
            if key in starts:  # the same id twice: keep both, make keys unique
                key = "%s#%d" % (key, len(starts))
            starts[key] = rec
        else:
            ends[key] = rec
    return meta, runs, starts, ends, bad_lines


def sections_of(starts, ends, runs, scen_end):
    """The critical sections, in start order: (sections, open_sections,
    completed)."""
    # Critical sections: [start, end]; an unfinished one ends when its
    # witness was seen dead, else when its wrapper exited, else at the end
    # of the scenario (the most conservative bound we have).
    sections = []
    open_sections = 0
    for key, s in starts.items():
        e = ends.get(key)
        if e is not None:
            end_ns, how = e["ns"], "end"
        else:
            open_sections += 1
            r = runs.get(s["id"], {})
            if r.get("child_death_ns"):
                end_ns, how = r["child_death_ns"], "death"
            elif r.get("exit_ns"):
                end_ns, how = r["exit_ns"], "wrapper-exit"
            elif scen_end:
                end_ns, how = scen_end, "scenario-end"
            else:
                end_ns, how = None, "unknown"
            if end_ns is None:
                end_ns = max([x["ns"] for x in ends.values()] + [s["ns"]])
        sections.append({"id": s["id"], "start": s["ns"], "end": max(end_ns, s["ns"]),
                         "fence": s["fence"], "how": how})
    sections.sort(key=lambda x: (x["start"], x["id"]))
    completed = sum(1 for k in starts if k in ends)
    return sections, open_sections, completed


def c1_overlaps(sections, runs, meta, excuses, kl=None):
    """C1: every pair of sections that overlaps (a sorted sweep), with what
    explains it at the moment it began, if anything (explain_overlap); one
    that nothing explains but that was measured only from a late-seen
    death, while the kernel's lock was free at the later start, is
    "closed_late" (klock.late_death_free)."""
    overlaps = []
    active = []
    for s in sections:
        active = [a for a in active if a["end"] > s["start"]]
        for a in active:
            ov = min(a["end"], s["end"]) - s["start"]
            if ov > 0:
                o = {"a": a["id"], "b": s["id"], "fence_a": a["fence"],
                     "fence_b": s["fence"], "ms": round(ov / MS, 3),
                     "a_end": a["how"], "b_end": s["how"]}
                kind, detail = explain_overlap(a, s, runs, meta, excuses)
                o["explained"] = kind
                if detail:
                    o["by"] = detail
                o["paused"] = kind == "pause"
                o["released"] = kind == "release"
                late = None if kind else late_death_free(a, s, kl or {})
                if late:
                    o["closed_late"] = late
                overlaps.append(o)
        active.append(s)
    return overlaps


def covered_twice(sections):
    """The time (ns) covered by two sections or more: their union."""
    events = []
    for s in sections:
        events.append((s["start"], 1))
        events.append((s["end"], -1))
    events.sort(key=lambda x: (x[0], x[1]))
    depth, last, covered2 = 0, None, 0
    for t, d in events:
        if depth >= 2 and last is not None:
            covered2 += t - last
        depth += d
        last = t
    return covered2


def c2_counter(logdir, ends, start_ids, end_ids, completed, open_sections, explained_pairs):
    """C2: the counter against the completed runs: (violations, counter,
    the ids that wrote without completing)."""
    # C2: counter == completed runs. A witness killed after writing the
    # counter but before its "end" line wrote once without completing; it is
    # identified by the next reader ("prev=") or as the counter's last writer.
    counter_val, counter_writer = 0, None
    for line in read_lines(os.path.join(logdir, "counter")):
        p = line.split()
        if p:
            counter_val = to_int(p[0]) or 0
            counter_writer = p[1] if len(p) > 1 else None
    orphans = set()
    for e in ends.values():
        prev = e["kv"].get("prev")
        if prev and prev in start_ids and prev not in end_ids:
            orphans.add(prev)
    if counter_writer and counter_writer in start_ids and counter_writer not in end_ids:
        orphans.add(counter_writer)
    expected = completed + len(orphans)
    c2 = []
    if counter_val < expected:
        c2.append({"counter": counter_val, "completed": completed,
                   "writes_without_end": len(orphans), "lost_updates": expected - counter_val})
    elif counter_val > completed + open_sections:
        c2.append({"counter": counter_val, "completed": completed,
                   "open_sections": open_sections, "excess": counter_val - completed - open_sections})
    # Each lost update is the write-back of a section that overlapped the
    # writer of the update it undid: no more are lost than there are
    # overlapping pairs. Where every overlap is explained, so are up to
    # that many lost updates.
    for e in c2:
        e["explained"] = "lost_updates" in e and e["lost_updates"] <= explained_pairs
        if e["explained"]:
            e["explained_pairs"] = explained_pairs
    return c2, counter_val, orphans


def c3_fences(sections, overlaps):
    """C3: fences strictly increase in start order."""
    # C3: fences strictly increase in start order. Two sections that overlap
    # for an explained reason (a forced release) may start in either order:
    # such an inversion is explained too.
    explained_pair = {frozenset((o["a"], o["b"])) for o in overlaps if o["explained"]}
    c3 = []
    prev = None
    for s in sections:
        if s["fence"] is None:
            c3.append({"id": s["id"], "fence": None, "why": "no fence", "explained": False})
            continue
        if prev is not None and s["fence"] <= prev["fence"]:
            c3.append({"prev": prev["id"], "prev_fence": prev["fence"],
                       "id": s["id"], "fence": s["fence"],
                       "explained": frozenset((prev["id"], s["id"])) in explained_pair})
        prev = s
    return c3


def c4_sink(logdir):
    """C4: stale writes the sink accepted: (violations, accepted, rejected)."""
    # C4: replay the sink: an accepted write with a fence below one already
    # accepted (or equal to it, from another holder) is a stale write.
    c4, accepted, rejected = [], 0, 0
    high, high_id = None, None
    for line in read_lines(os.path.join(logdir, "sink", "log")):
        p = line.split()
        if len(p) < 3:
            continue
        f = to_int(p[1])
        if p[0] == "reject":
            rejected += 1
        elif p[0] == "accept":
            accepted += 1
            if f is None or (high is not None and (f < high or (f == high and p[2] != high_id))):
                c4.append({"id": p[2], "fence": f, "highest_accepted": high, "by": high_id})
            if high is None or (f is not None and f >= high):
                high, high_id = f, p[2]
    return c4, accepted, rejected


def c5_exits(runs, start_ids, end_ids, meta):
    """C5: exit codes, hangs, locks left behind: (violations, exit code
    histogram, paused past the lease, stopped past the lease, the longest
    a witness outlived a kill -9'd wrapper in ms)."""
    spec = meta.get("spec") or {}
    c5 = []
    hist = {}
    lspec = spec.get("lease") or {}
    for rid, r in sorted(runs.items()):
        rc = r.get("rc")
        hist[str(rc)] = hist.get(str(rc), 0) + 1
        sent = r.get("signals", [])
        tags = r.get("tags") or {}
        status = r.get("status")
        started, ended = rid in start_ids, rid in end_ids
        if r.get("hung"):
            c5.append({"id": rid, "why": "hung: killed after %.1fs" % (r.get("life_ms", 0) / 1000)})
        # A straggler is not the command: the command may end (0) while
        # what it left is stopped. A skipped --once run runs nothing.
        if rc == 0 and not ended and not tags.get("straggler") and status != "skipped":
            c5.append({"id": rid, "rc": rc, "why": "exit 0 but the command did not finish"})
        if rc in (65, 69, 75) and started:
            c5.append({"id": rid, "rc": rc, "why": "exit %d but the command ran" % rc})
        if status == "skipped" and started:
            c5.append({"id": rid, "rc": rc, "why": "skipped (--once succeeded) but the command ran"})
        # 74: the command ended, but no release landed within its lease (a
        # fault that outlasted it); the wrapper says its outcome may not be
        # recorded. Only after the command's end.
        if rc == 74 and not ended and not tags.get("straggler"):
            c5.append({"id": rid, "rc": rc, "why": "exit 74 but the command did not finish"})
        known = rc in (0, 69, 74, 75, 79, 128 + 15, -9) or (rc == -15 and sent)
        if rc == 65 and lspec.get("allow_refused"):
            known = True   # a run that died mid-way (kill -9, a missed release)
        if spec.get("once28"):
            # once.py: refusals of a spent --once ID (65), the command's own
            # failure (--exit N, once it finished), the command killed (by
            # the harness, or with its guard).
            want = tags.get("exit")
            if rc == 65 or (rc == 128 + 9 and {"KILL-cmd", "KILL-guard"} & set(sent)):
                known = True
            elif rc == 71 and "KILL-guard" in sent:
                known = True   # the guard died before the command's exec: given back
                if started:
                    c5.append({"id": rid, "rc": rc, "why": "exit 71 but the command ran"})
            elif want and rc == want:
                known = True
                if not ended:
                    c5.append({"id": rid, "rc": rc, "why": "exit %d but the command did not finish" % rc})
        if rc == 128 + 15 and not any(x.startswith("TERM") for x in sent):
            known = False
        if rc == -9 and "KILL" not in sent and not r.get("hung"):
            known = False
        if not known:
            c5.append({"id": rid, "rc": rc, "signals": sent, "status": status,
                       "why": "unexpected exit code"})
        if rc == 74 and spec.get("release_room"):
            c5.append({"id": rid, "rc": rc, "why": "no release landed within the lease, "
                       "although every fault here is shorter than the lease"})
        if r.get("outlived"):
            c5.append({"id": rid, "rc": rc, "tags": tags, "child_pid": r.get("child_pid"),
                       "why": "the witness was still alive after its wrapper exited"})
        # An exec slowed down by at most 0.6 x TTL ends well before the
        # guard's TERM (at TTL - 1% - 2 ms - grace, 0.74 x TTL here) and
        # leaves the lease valid: nothing else being wrong, such a run must
        # not end as lost.
        delay = tags.get("exec_delay_ms")
        if (delay is not None and rc == 79 and not sent and spec.get("ttl_ms")
                and delay <= 0.6 * spec["ttl_ms"] and not spec.get("faults")):
            c5.append({"id": rid, "rc": rc, "exec_delay_ms": delay, "started": started,
                       "why": "lost (79) although its exec took %d ms of a %d ms lease"
                       % (delay, spec["ttl_ms"])})
    ttl_ms = (meta.get("spec") or {}).get("ttl_ms")
    paused_past_lease = {}
    stopped_past_lease = {}
    for rid, r in runs.items():
        if ttl_ms and r.get("paused_ms", 0) > ttl_ms:
            k = str(r.get("rc"))
            kind = r.get("stop_kind") or "whole"
            if kind == "whole":
                paused_past_lease[k] = paused_past_lease.get(k, 0) + 1
            d = stopped_past_lease.setdefault(STOP_LABELS.get(kind, kind), {})
            d[k] = d.get(k, 0) + 1
    # How long a witness outlived a wrapper that was kill -9'd (the guard
    # kills the command's group at once; PR_SET_PDEATHSIG the command).
    outlived_kill_ms = 0
    for r in runs.values():
        if "KILL" in r.get("signals", []) and r.get("child_death_ns") and r.get("exit_ns"):
            outlived_kill_ms = max(outlived_kill_ms, (r["child_death_ns"] - r["exit_ns"]) / MS)
    # Judged by the harness that wrote the log (before meta "lock_keys").
    for left in meta.get("locks_left", []):
        c5.append(dict(left, why="lock left behind after every wrapper ended"))
    return c5, hist, paused_past_lease, stopped_past_lease, outlived_kill_ms


def c5_lock_keys(runs, meta):
    """C5: the lock keys read after every wrapper ended (meta "lock_keys"),
    each explained in time (explain.explain_leftover) or a violation:
    (violations, explained)."""
    bad, ok = [], []
    ttl_ms = (meta.get("spec") or {}).get("ttl_ms") or 1000
    for k in meta.get("lock_keys") or []:
        kind, detail = explain_leftover(k, runs, meta)
        pttl = k.get("pttl_ms")
        if kind:
            ok.append(dict(k, by=kind, detail=detail))
        elif not isinstance(pttl, int) or pttl == -1 or pttl > ttl_ms:
            bad.append(dict(k, why="lock left behind after every wrapper ended (no TTL within a lease)"))
        else:
            bad.append(dict(k, why="lock left behind after every wrapper ended: no kill -9 since it "
                            "was written, no fault on that master within the lease before it "
                            "or since"))
    return bad, ok


def c0_evidence(spec, meta, completed):
    """C0: enough evidence. A scenario where (almost) nothing ran proves
    nothing, whatever C1-C5 say (e.g. the witness binary vanished)."""
    c0 = []
    need = spec.get("min_completed", 5)
    if completed < need:
        c0.append({"completed": completed, "needed": need,
                   "why": "too few completed runs to judge"})
    # A fault that can never be injected (a holder the harness cannot
    # find, say) would leave a scenario that tests nothing but passes:
    # every kind the scenario names must have been injected at least once.
    never = faults_never_injected(spec, meta)
    if never:
        c0.append({"faults": never, "why": "faults never injected: %s" % ", ".join(never)})
    return c0


def faults_never_injected(spec, meta):
    """The kinds of spec "faults" that meta "faults" counts no injection of
    (term_storm: its SIGTERMs, while acquiring or releasing)."""
    got = {k for k, v in (meta.get("faults") or {}).items() if v}
    return [k for k in spec.get("faults") or []
            if not (k in got or (k == "term_storm" and got & {"sigterm_acquire", "sigterm_release"}))]


def check(logdir, asserted=None):
    """Check one scenario directory. Returns a dict (see keys below)."""
    meta, runs, starts, ends, bad_lines = load(logdir)
    if asserted is None:
        asserted = meta.get("asserted", list(ALL_CHECKS))
    sections, open_sections, completed = sections_of(starts, ends, runs, meta.get("end_ns"))
    spec = meta.get("spec") or {}
    limit = spec.get("limit")
    # --limit N: every pair is allowed (labelled "limit"); C8 judges the count.
    excuses = () if limit else STRICT_EXCUSES if "C1" in asserted else LOOSE_EXCUSES
    kl = load_klocks(logdir)
    overlaps = c1_overlaps(sections, runs, meta, excuses, kl)
    if limit:
        # --limit N: up to N at once is the point; C8 judges the count.
        for o in overlaps:
            if not o["explained"] and not o.get("closed_late"):
                o["explained"] = "limit"
    # The kernel's clashes: judged with C1 (below), by what the spec's C1
    # allows, never by --limit (a clash is within one slot).
    kc = kclashes(sections, overlaps, kl, runs, meta, asserted)
    covered2 = covered_twice(sections)
    ov_ms = [o["ms"] for o in overlaps]
    # An overlap that nothing explains fails the run, whatever the
    # scenario asserts (C1 is always judged; what explains one: excuses).
    unexplained = sum(1 for o in overlaps if not o["explained"] and not o.get("closed_late"))
    closed_late = sum(1 for o in overlaps if o.get("closed_late"))
    without_pause = sum(1 for o in overlaps if not o["paused"])
    start_ids = {s["id"] for s in starts.values()}
    end_ids = {e["id"] for e in ends.values()}
    c2, counter_val, orphans = c2_counter(logdir, ends, start_ids, end_ids, completed,
                                          open_sections, sum(1 for o in overlaps if o["explained"]))
    c3 = c3_fences(sections, overlaps)
    c4, accepted, rejected = c4_sink(logdir)
    c5, hist, paused_past_lease, stopped_past_lease, outlived_kill_ms = \
        c5_exits(runs, start_ids, end_ids, meta)
    # C6, C7 (lease scenarios), C8 (--limit N), C9 (crowds), and C5's
    # operator releases and records: below.
    keys_left, keys_explained = c5_lock_keys(runs, meta)
    c5 += (keys_left + check_releases(sections, runs, meta) + check_records(sections, runs, meta)
           + check_planned(sections, runs, meta))
    c6 = check_late_start(sections, runs, meta)
    c7 = check_once(sections, runs, meta)
    c8 = check_limit(sections, runs, meta)
    c9 = check_crowd(sections, runs, meta)
    c10 = check_once_budget(sections, runs, meta)
    c11 = check_once_records(sections, runs, meta)
    c0 = []
    if spec and not spec.get("must_fail"):
        asserted = list(asserted) + ["C0"]
        c0 = c0_evidence(spec, meta, completed)
    # Every overlap is judged (C1), and, with --limit N, the count (C8).
    asserted = list(asserted) + [c for c in ["C1"] + (["C8"] if limit else [])
                                 if c not in asserted]
    violations = {"C0": c0, "C1": overlaps + kc, "C2": c2, "C3": c3, "C4": c4, "C5": c5,
                  "C6": c6, "C7": c7, "C8": c8, "C9": c9, "C10": c10, "C11": c11}
    # What an asserted check may not have: C1 an overlap nothing explains
    # (a whole-holder pause; a forced release, within a renewal), C2 more
    # lost updates than explained overlaps; the others, anything.
    failing = dict(violations)
    failing["C1"] = ([o for o in overlaps if not o["explained"] and not o.get("closed_late")]
                     + [e for e in kc if not e["explained"]])
    failing["C2"] = [e for e in c2 if not e["explained"]]
    failing["C3"] = [e for e in c3 if not e["explained"]]
    failing["C8"] = [e for e in c8 if not e["explained"]]
    failed = [c for c in ("C0",) + ALL_CHECKS + EXTRA_CHECKS if c in asserted and failing[c]]
    # Details: what fails first, then the rest.
    details = {}
    for c, v in violations.items():
        bad = failing[c]
        ids = {id(x) for x in bad}
        details[c] = (bad[:20] + [x for x in v if id(x) not in ids])[:20]
    # Listed faults that never happened (C0 fails on them).
    never = faults_never_injected(spec, meta)
    paused_ms = [o["ms"] for o in overlaps if o["explained"] == "pause"]
    released_ms = [o["ms"] for o in overlaps if o["explained"] == "release"]
    by = {}
    for o in overlaps:
        k = o["explained"] or ("closed-late" if o.get("closed_late") else "nothing")
        by[k] = by.get(k, 0) + 1
    return {
        "logdir": logdir,
        "runs": len(runs),
        "sections": len(sections),
        "completed": completed,
        "open_sections": open_sections,
        "counter": counter_val,
        "writes_without_end": len(orphans),
        "bad_lines": bad_lines,
        "violations": {c: len(v) for c, v in violations.items()},
        "unexplained": {c: len(failing[c]) for c in ("C1", "C2", "C3")},
        # What counts against the verdict, per asserted check (C0 included).
        "asserted_failing": {c: len(failing[c]) for c in ("C0",) + ALL_CHECKS + EXTRA_CHECKS
                             if c in asserted},
        "details": details,
        "overlaps_without_pause": without_pause,
        "overlaps": len(overlaps),
        "overlaps_by": by,
        "overlap_excuses": list(excuses) + (["limit"] if limit else []),
        "limit": limit,
        "limit_exceeded": len(c8),
        "limit_exceeded_unexplained": len(failing["C8"]),
        "overlaps_unexplained": unexplained,
        "overlaps_closed_late": closed_late,
        "kclash": len(kc),
        "kclash_unexplained": sum(1 for e in kc if not e["explained"]),
        "kclash_unmeasured": sum(1 for e in kc if not e["measured"]),
        "klock_taken": sum(1 for recs in kl.values() for x in recs if x["kind"] == "klock"),
        "overlaps_explained_by_pause": len(paused_ms),
        "overlaps_explained_by_release": len(released_ms),
        "overlap_ms_max_paused": max(paused_ms) if paused_ms else 0,
        "overlap_ms_max_released": max(released_ms) if released_ms else 0,
        "witness_outlived_killed_wrapper_ms_max": round(outlived_kill_ms, 3),
        "overlap_ms_max": max(ov_ms) if ov_ms else 0,
        "overlap_ms_total": round(covered2 / MS, 3),
        "sink_accepted": accepted,
        "stale_writes_rejected": rejected,
        "stale_writes_accepted": len(c4),
        "exit_codes": dict(sorted(hist.items(), key=lambda kv: str(kv[0]))),
        "paused_past_lease_exit_codes": paused_past_lease,
        "stopped_past_lease_exit_codes": stopped_past_lease,
        "faults_never_injected": never,
        "locks_left_explained": keys_explained,
        "excused": meta.get("excused", []),
        "asserted": list(asserted),
        "failed": failed,
        "ok": not failed,
    }


# ---------------------------------------------------------------------------
# C6, C7 (lease scenarios), C8 (--limit N)
# ---------------------------------------------------------------------------

def confirmed_renewals(path):
    """(confirmed, sent) wall ms of each renewal a wrapper's -v JSON log
    (--log-format json) says was confirmed: "renewed" lines, sent = the
    line's time less its round trip."""
    out = []
    try:
        with open(path, errors="replace") as f:
            for line in f:
                try:
                    e = json.loads(line)
                except ValueError:
                    continue
                if e.get("event") != "renewed" or "time" not in e:
                    continue
                t = datetime.datetime.strptime(e["time"], "%Y-%m-%dT%H:%M:%S.%fZ")
                ms = t.replace(tzinfo=datetime.timezone.utc).timestamp() * 1000
                out.append((ms, ms - int(e.get("rtt_ms", 0))))
    except (OSError, TypeError):
        pass
    return out


def check_late_start(sections, runs, meta):
    """C6: a witness that started after its lease had ended on the wall
    clock: fence + TTL, moved by each renewal its wrapper confirmed before
    the start (to sent + TTL; a run with a log: tags["log"])."""
    off = meta.get("wall_minus_mono_ns")
    ttl_ms = (meta.get("spec") or {}).get("ttl_ms")
    out = []
    if off is None or not ttl_ms:
        return out
    for s in sections:
        r = runs.get(s["id"], {})
        tags = r.get("tags") or {}
        if s["fence"] is None or tags.get("straggler"):
            continue   # a straggler may start after renewals: not the exec
        wall_ms = (s["start"] + off) / MS
        end_ms = s["fence"] + ttl_ms
        renewed = 0
        # (+1: the log's times are truncated to the ms)
        for confirmed, sent in confirmed_renewals(tags.get("log")):
            if confirmed <= wall_ms + 1 and sent + ttl_ms > end_ms:
                end_ms = sent + ttl_ms
                renewed += 1
        late = wall_ms - end_ms
        if late > 0:
            out.append({"id": s["id"], "fence": s["fence"], "late_ms": round(late, 3),
                        "exec_delay_ms": tags.get("exec_delay_ms"), "renewals": renewed,
                        "why": "the command started after its lease had ended"})
    return out


def check_once(sections, runs, meta):
    """C7: a succeeded --once ID ran again within --state-ttl of its end."""
    once = ((meta.get("spec") or {}).get("lease") or {}).get("once")
    out = []
    if not once:
        return out
    # The record expires --state-ttl after the release, which comes after
    # the witness's end; a few ms less, for Redis's ms clock.
    keep_ns = (once["state_ttl_ms"] - 5) * MS
    by_id = {}
    for s in sections:
        oid = (runs.get(s["id"], {}).get("tags") or {}).get("once")
        if oid:
            by_id.setdefault(oid, []).append(s)
    for oid, ss in by_id.items():
        for s in ss:
            r = runs.get(s["id"], {})
            if r.get("rc") != 0 or s["how"] != "end":
                continue
            for t in ss:
                if t is not s and s["end"] < t["start"] < s["end"] + keep_ns:
                    out.append({"once": oid, "succeeded": s["id"], "again": t["id"],
                                "after_ms": round((t["start"] - s["end"]) / MS, 3),
                                "why": "a succeeded --once ID ran again within --state-ttl"})
    return out


def check_limit(sections, runs, meta):
    """C8: the intervals where more than --limit sections were open; one
    is explained only by a whole-holder pause of one of them that began
    before the interval and lasted into it (pause_covers)."""
    spec = meta.get("spec") or {}
    grace = pause_grace_ns(spec)
    n = spec.get("limit")
    if not n:
        return []
    events = []
    for s in sections:
        events.append((s["start"], 1, s["id"]))
        events.append((s["end"], -1, s["id"]))
    # An end before a start at the same instant: touching is not overlapping.
    events.sort(key=lambda e: (e[0], e[1]))
    active, out, cur = set(), [], None
    for t, d, rid in events:
        if d > 0:
            active.add(rid)
        else:
            active.discard(rid)
        if len(active) > n and cur is None:
            cur = {"from_ns": t, "ids": sorted(active)}
        elif len(active) > n and cur is not None:
            cur["ids"] = sorted(set(cur["ids"]) | active)
        elif cur is not None:
            cur["ms"] = round((t - cur["from_ns"]) / MS, 3)
            paused = any(pause_covers(runs.get(x, {}), cur["from_ns"], grace) for x in cur["ids"])
            cur["explained"] = "pause" if paused else None
            cur["limit"] = n
            out.append(cur)
            cur = None
    return out


# ---------------------------------------------------------------------------
# Operator releases, records, crowds of dead waiters (C5 extras, C9)
# ---------------------------------------------------------------------------

def check_releases(sections, runs, meta):
    """C5, where the spec says lease.strict_release: an operator's plain
    --release (no --force) of a live holder ends 0 (released) or 1 (not
    held, another fence), never 69 (the holder did not release within its
    lease: nothing here keeps it from renewing); and when it names the
    holder it released (its fence), that holder's command had ended before
    --release returned: it waits for the holder to stop."""
    spec = meta.get("spec") or {}
    if not (spec.get("lease") or {}).get("strict_release"):
        return []
    by_fence = {}
    for s in sections:
        by_fence.setdefault(s["fence"], []).append(s)
    out = []
    for rel in meta.get("releases") or []:
        if rel.get("force") or rel.get("t1") is None:
            continue
        if rel.get("rc") not in (0, 1):
            out.append({"release": rel.get("out", ""), "rc": rel.get("rc"), "args": rel.get("args"),
                        "why": "--release of a live holder ended %s" % rel.get("rc")})
            continue
        if rel.get("rc") != 0:
            continue
        fences = rel.get("fences") or ([rel["fence"]] if rel.get("fence") is not None else [])
        for s in [x for f in fences for x in by_fence.get(f, [])]:
            if s["start"] < rel["t1"] and s["end"] > rel["t1"] + SEEN_SLACK_MS * MS:
                out.append({"id": s["id"], "fence": s["fence"], "release": rel.get("out", ""),
                            "ran_on_ms": round((s["end"] - rel["t1"]) / MS, 3),
                            "why": "--release returned while the holder it released still ran"})
    return out


def check_planned(sections, runs, meta):
    """C5 in the planned-failover scenarios (sentinel.py, sentinel.keeps):
    a holder lost (79) across a SENTINEL FAILOVER that its lease leaves room
    for. Except, with --sync-replicas below the number of replicas, a run
    whose command started between a SENTINEL FAILOVER and the promotion:
    its lock may have been confirmed by the replica that was not promoted
    (docs/RELIABILITY.md, "Found by the Sentinel scenarios"; README: give
    --sync-replicas every replica); those are listed under "excused"."""
    spec = meta.get("spec") or {}
    sen = spec.get("sentinel") or {}
    if not sen.get("keeps"):
        return []
    windows = [(e["t0_ns"], e["promoted_ns"]) for e in (meta.get("sentinel") or {}).get("events", [])
               if e.get("promoted_ns")]
    start = {s["id"]: s["start"] for s in sections}
    out = []
    for rid, r in sorted(runs.items()):
        if r.get("rc") != 79:
            continue
        t = start.get(rid)
        if (sen.get("sync_replicas", 0) < 2 and t is not None
                and any(a <= t <= b for a, b in windows)):
            meta.setdefault("excused", []).append({"id": rid, "why": "acquired during a failover "
                                                   "with --sync-replicas below the replicas"})
            continue
        out.append({"id": rid, "rc": 79, "why": "lost (79) across a planned failover "
                    "that its lease leaves room for"})
    return out


def _run_of_pid(pid, runs, t_ns):
    """The run whose wrapper had pid at (monotonic) time t_ns, if one."""
    best = None
    for r in runs.values():
        if str(r.get("pid")) != str(pid) or r.get("spawn_ns") is None or r["spawn_ns"] > t_ns:
            continue
        if best is None or r["spawn_ns"] > best["spawn_ns"]:
            best = r
    return best


# Runs that must hold no lock and leave no 'abandoned' record once they
# exited: those that never ran their command (69, 75, or a SIGTERM while
# acquiring: their acquisition, if any, was given back) and those that
# ended 0 (their release landed).
def _must_be_clean(r, started_ids):
    rc = r.get("rc")
    return rc == 0 or (rc in (69, 75, 143) and r["id"] not in started_ids)


def check_records(sections, runs, meta):
    """C5, where the scenario samples the job's keys (meta "records",
    scripts/chaoslib/records.py): no slot's lock key still carries the token
    of a run that exited more than SEEN_SLACK_MS before (69/75/143 without
    running its command: a give-back must free exactly the slot it took;
    0: its release landed), and no 'abandoned' history entry names such a
    run (a given-back acquisition, or a run that succeeded)."""
    rec = meta.get("records")
    if not rec:
        return []
    started = {s["id"] for s in sections}
    out = []
    for h in rec.get("held") or []:
        r = _run_of_pid(h["pid"], runs, h["t_ns"])
        if (r is None or r.get("exit_ns") is None or r["exit_ns"] > h["t_ns"] - SEEN_SLACK_MS * MS
                or not _must_be_clean(r, started)):
            continue
        out.append({"id": r["id"], "rc": r.get("rc"), "slot": h["slot"], "pttl_ms": h.get("pttl"),
                    "after_exit_ms": round((h["t_ns"] - r["exit_ns"]) / MS, 1),
                    "why": "slot %s still held by the token of a run that exited %s"
                    % (h["slot"], r.get("rc"))})
    off = meta.get("wall_minus_mono_ns")
    for e in rec.get("history") or []:
        if e.get("status") != "abandoned" or off is None:
            continue
        t_ns = int(e.get("started_ms") or 0) * MS - off
        r = _run_of_pid(e.get("pid"), runs, t_ns + 50 * MS)
        if r is None or not _must_be_clean(r, started):
            continue
        out.append({"id": r["id"], "rc": r.get("rc"), "fence": e.get("fence"), "once": e.get("once"),
                    "why": "history records as abandoned a run that exited %s%s"
                    % (r.get("rc"), "" if r["id"] in started else " without running its command")})
    return out


def check_crowd(sections, runs, meta):
    """C9 (scripts/chaos_scenarios/crowd.py): dead waiters, however many,
    cost the live ones at most what the README promises: two thirds of a
    lease (the dead entries' q: keys expire within one queue-entry TTL, half
    the lease, and a live waiter retries every third of that). After a
    crowd of waiters was SIGKILLed at once (t), every stretch in which
    nobody holds the lock while a live waiter is queued must end by
    max(its start + one refresh interval, t + 2/3 TTL) (+ slack), or, if
    a killed waiter held the lock, by the end of its lease + a refresh
    interval (a waiter's retry); and a run without --wait may
    say "lock is held" only while a section runs (or a killed holder's
    lease lasts)."""
    crowd = meta.get("crowd")
    if not crowd:
        return []
    ttl = ((meta.get("spec") or {}).get("ttl_ms") or 1000) * MS
    slack = crowd.get("slack_ms", 400) * MS
    refresh = ttl // 6
    kills = sorted(k["t_ns"] for k in crowd.get("kills") or [])
    killed_holders = []   # (kill time) of crowd members killed in their section
    ends = {s["id"]: s for s in sections}
    for k in crowd.get("kills") or []:
        for rid in k.get("ids") or []:
            s = ends.get(rid)
            if s is not None and s["start"] <= k["t_ns"] and s["how"] != "end":
                killed_holders.append(k["t_ns"])
    # A lock seen held by a dead crowd member (crowd.py samples it): until
    # its lease ends (as killed_holders, which are kill time + TTL).
    for h in crowd.get("dead_holders") or []:
        if isinstance(h.get("pttl"), int) and h["pttl"] > 0:
            killed_holders.append(h["t_ns"] + h["pttl"] * MS - ttl)
    out = []
    # The idle stretches: between the end of everything so far and the next start.
    waiters = [r for r in runs.values() if not (r.get("tags") or {}).get("crowd")
               and not (r.get("tags") or {}).get("probe")]
    started_at = {s["id"]: s["start"] for s in sections}
    reach = None
    for s in sections:
        if reach is not None and s["start"] > reach and kills and s["start"] > kills[0]:
            g0, g1 = reach, s["start"]
            t = max(k for k in kills if k <= g1)
            allowed = g0 + refresh + slack
            if t is not None:
                allowed = max(allowed, t + 2 * ttl // 3 + slack)
            # A dead holder's lock: its lease, then a waiter's retry.
            allowed = max([allowed] + [kh + ttl + refresh + slack for kh in killed_holders
                                       if kh <= g1])
            if g1 > allowed:
                live = [r["id"] for r in waiters
                        if r.get("spawn_ns", 0) <= g0 - 200 * MS
                        and (r.get("exit_ns") or g1) >= g1
                        and started_at.get(r["id"], g1) >= g1]
                if live:
                    out.append({"idle_from_ns": g0, "idle_ms": round((g1 - g0) / MS, 1),
                                "after_kill_ms": round((g1 - t) / MS, 1),
                                "allowed_ms": round((allowed - g0) / MS, 1), "next": s["id"],
                                "live_waiters": len(live),
                                "why": "the lock stayed unused with live waiters queued"})
        reach = s["end"] if reach is None else max(reach, s["end"])
    for p in crowd.get("probes") or []:
        if "lock is held" not in (p.get("err") or ""):
            continue
        lo, hi = p["t0_ns"] - slack, p["t1_ns"] + slack
        held = any(s["start"] <= hi and s["end"] >= lo for s in sections)
        held = held or any(kh <= hi and kh + ttl >= lo for kh in killed_holders)
        if not held:
            out.append({"probe": p.get("id"), "err": p["err"][:200],
                        "why": "a run without --wait said 'lock is held' while nobody held it"})
    return out

