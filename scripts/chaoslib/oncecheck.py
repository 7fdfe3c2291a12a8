"""oncecheck — the checker's C10 and C11 (scripts/chaos_scenarios/once.py):
once means once. check_once_budget (C10): the command of one --once ID
ran at most its attempt budget times, and every ID recorded is one of the
lock service's clock; check_once_records (C11): after the guard, the
wrapper or both were SIGKILLed at a phase of an attempt, the ID's record
says what happened. Called by checks.check; plain data only (meta.json's
"once28", written by once.py's quiesce and finish).
"""

import time

NS = 1_000_000_000


def to_int(s):
    try:
        return int(s)
    except (TypeError, ValueError):
        return None

def once_expansions(pattern, w0_ns, w1_ns):
    """The IDs pattern expands to (strftime, UTC) on the wall clock from
    w0_ns to w1_ns, one second either side: the lock service's clock
    while the runs of one round were alive."""
    import time
    out = set()
    t = w0_ns // NS - 1
    while t <= w1_ns // NS + 1:
        out.add(time.strftime(pattern, time.gmtime(t)))
        t += 1
    return out


def _budget(o, oid, attempts):
    """The attempts an ID may use: its --attempts, one more per --resolve
    retry that succeeded."""
    return attempts + sum(1 for e in o.get("resolves") or [] if e.get("once") == oid and e.get("rc") == 0)


def check_once_budget(sections, runs, meta):
    """C10: the commands of one --once ID ran at most its attempt budget
    times in all (sections per ID; with skewed hosts, per round of one
    pattern, which may span two IDs only when the lock service's clock
    crossed a minute meanwhile); every ID recorded is one of the lock
    service's clock while its round's runs were alive; no record counts
    more attempts, no history more distinct fences, than the budget; a
    run after a --resolve retry is not refused."""
    o = meta.get("once28")
    if not o:
        return []
    off = meta.get("wall_minus_mono_ns") or 0
    out = []
    recs = o.get("records") or {}
    budgets = {}
    if o.get("mode") == "skew":
        win = {}
        for r in runs.values():
            t = r.get("tags") or {}
            rd = t.get("once_round")
            if not rd or r.get("spawn_ns") is None:
                continue
            b = r.get("exit_ns") or meta.get("end_ns") or r["spawn_ns"]
            w = win.setdefault(rd, {"w0": r["spawn_ns"], "w1": b, "pattern": t.get("once_pattern"),
                                    "attempts": t.get("attempts", 1), "sections": 0})
            w["w0"], w["w1"] = min(w["w0"], r["spawn_ns"]), max(w["w1"], b)
        for s in sections:
            rd = (runs.get(s["id"], {}).get("tags") or {}).get("once_round")
            if rd in win:
                win[rd]["sections"] += 1
        for rd, w in sorted(win.items()):
            ids = once_expansions(w["pattern"], w["w0"] + off, w["w1"] + off)
            seen = {oid for oid in recs if oid.startswith(rd + "-")}
            for oid in sorted(seen - ids):
                out.append({"round": rd, "once": oid, "clock": sorted(ids),
                            "why": "an ID the lock service's clock did not give while its runs lived "
                            "(a host's own clock?)"})
            allowed = w["attempts"] * max(1, len(seen & ids))
            if w["sections"] > allowed:
                out.append({"round": rd, "ids": sorted(seen), "ran": w["sections"], "allowed": allowed,
                            "why": "the command of one --once ID ran more often than its attempts"})
            for oid in seen:
                budgets[oid] = w["attempts"]
    else:
        count = {}
        for s in sections:
            oid = (runs.get(s["id"], {}).get("tags") or {}).get("once")
            if oid:
                count[oid] = count.get(oid, 0) + 1
        for oid, n in sorted(count.items()):
            budgets[oid] = 1
            if n > _budget(o, oid, 1):
                out.append({"once": oid, "ran": n, "allowed": _budget(o, oid, 1),
                            "why": "the command of one --once ID ran more often than its attempts"})
        for ep in o.get("episodes") or []:
            res, after = ep.get("resolve") or {}, runs.get(ep.get("after") or "", {})
            if res.get("rc") == 0 and after.get("rc") == 65:
                out.append({"once": ep["once"], "after": after.get("id"), "resolve": res.get("out"),
                            "why": "refused (65) right after --resolve retry allowed one more attempt"})
    for oid, rl in sorted(recs.items()):
        b = _budget(o, oid, budgets.get(oid, 1))
        for rec in rl:
            try:
                used = int(rec.get("attempts") or 0)
            except ValueError:
                used = 0
            if used > b:
                out.append({"once": oid, "record": rec, "allowed": b,
                            "why": "the record counts more attempts than the budget"})
    fences = {}
    for h in o.get("history") or []:
        if h.get("once") and h.get("fence"):
            fences.setdefault(h["once"], set()).add(h["fence"])
    for oid, fs in sorted(fences.items()):
        b = _budget(o, oid, budgets.get(oid, 1))
        if len(fs) > b:
            out.append({"once": oid, "fences": sorted(fs), "allowed": b,
                        "why": "the history holds more attempts of one --once ID than the budget"})
    return out


def _expected_rc(rec):
    st = rec.get("status")
    if st == "succeeded":
        return 0
    if st == "lost":
        return 79
    if st == "failed":
        if rec.get("signal"):
            return 128 + (to_int(rec["signal"]) or 0)
        return to_int(rec.get("exit_code"))
    return None


def check_once_records(sections, runs, meta):
    """C11 (the guard family of once.py): after the guard, the wrapper or
    both were SIGKILLed at a phase of an attempt, its record says what
    happened. The command's status is known when its witness wrote "end"
    (it exits with the episode's exit then)."""
    o = meta.get("once28")
    if not o or o.get("mode") != "guard":
        return []
    started = {s["id"] for s in sections}
    ended = {s["id"] for s in sections if s["how"] == "end"}
    out = []
    for ep in o.get("episodes") or []:
        k = ep.get("kill") or {}
        if not k.get("what"):
            continue   # the phase was missed: nothing killed
        a = runs.get(ep["attempt"], {})
        rid = ep["attempt"]
        wk, gk = "wrapper" in k["what"], "guard" in k["what"]
        # The record right after the attempt; where the scenario ended
        # first, the one read at its end.
        final = ((o.get("records") or {}).get(ep["once"]) or [{}])[0]
        rec = ((ep.get("record1") or {}).get("rec")) or {}
        if ep.get("record1") is None:
            rec = {k: v for k, v in final.items() if v not in (None, "")}
        s1 = rec.get("status")
        truth = ("succeeded" if ep["exit"] == 0 else "failed") if rid in ended else None
        reaped = ep["phase"] in ("grace", "release") and k.get("ended")
        base = {"once": ep["once"], "id": rid, "phase": ep["phase"], "killed": k["what"],
                "record": rec, "rc": a.get("rc"), "command_exit": ep["exit"] if truth else None}

        def bad(why):
            out.append(dict(base, why=why))
        if s1 in ("succeeded", "failed"):
            if rid not in started:
                bad("recorded %s, but its command never started" % s1)
            elif truth is None and s1 == "succeeded":
                bad("recorded succeeded, but its command was killed mid-way")
            elif truth is not None and (s1 != truth or to_int(rec.get("exit_code")) != ep["exit"]):
                bad("recorded %s (exit %s), but its command exited %d"
                    % (s1, rec.get("exit_code"), ep["exit"]))
        elif s1 == "lost":
            if reaped:
                bad("recorded lost, but its command had ended (exit %d) before the guard died"
                    % ep["exit"])
            elif not gk:
                bad("recorded lost, but its guard was not killed")
        elif s1 in ("running", "abandoned"):
            if not wk and a.get("rc") != 74:
                bad("recorded %s, but its wrapper lived to release (exit %s)" % (s1, a.get("rc")))
        elif s1 is None and rid in started:
            bad("no record, but its command ran")
        elif s1 is not None:
            bad("an unknown status %r" % s1)
        if a.get("rc") == 71 and s1 is not None:
            bad("exited 71 (the command never started: given back), but the record says %s" % s1)
        if not wk and s1 in ("succeeded", "failed", "lost") and a.get("rc") != _expected_rc(rec):
            bad("exited %s, but its record says %s" % (a.get("rc"), s1))
        # The lock key, read with each record: never beyond a lease (-1: no
        # TTL at all), whoever holds it by then.
        ttl = (meta.get("spec") or {}).get("ttl_ms") or 0
        for rr in (ep.get("record1"), ep.get("record2")):
            p = (rr or {}).get("lock_pttl")
            if isinstance(p, int) and (p == -1 or (ttl and p > ttl)):
                bad("the lock key's PTTL was %d ms, beyond its %d ms lease" % (p, ttl))
        # The retries: refused while the ID is not settled, skipped once it
        # succeeded; the record is then settled (not running without a lock).
        # (The record after the retries; where the scenario ended before
        # they did, the one read at its end.)
        r2 = ep.get("record2") or {}
        s2 = (r2.get("rec") or {}).get("status")
        if not ep.get("record2"):
            s2 = final.get("status")
        if s1 is None:
            continue   # no attempt used: a retry may run
        for x in ep.get("retries") or []:
            rr = runs.get(x, {})
            if x in started:
                continue   # C10 counts it
            if rr.get("rc") == 0 and s2 != "succeeded":
                bad("a retry (%s) exited 0 without running, but the record says %s" % (x, s2))
            if rr.get("rc") == 65 and s2 == "succeeded":
                bad("a retry (%s) was refused, but the ID succeeded" % x)
        if ep.get("record2") and s2 == "running" and r2.get("lock_pttl") == -2:
            bad("still running with no lock after the retries")
    return out
