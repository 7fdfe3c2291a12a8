"""mutations — does every planted control matter? Edits checks.py (or
explain.py, klock.py, oncecheck.py) one mutation at a time (the audit's: every C2/C3 explained,
C0/C9/the C5 extras removed, a pause that does not cover the overlap, ...), runs
`scripts/chaos --planted`, and restores the file. Each mutation must turn
at least one control green (the run then says FAIL): prints, per
mutation, the controls that noticed it.

    python3 scripts/chaoslib/mutations.py       (from the top; ~10 s)

Exit status 1 if a mutation went unnoticed. It rewrites checks.py,
explain.py, klock.py and oncecheck.py while it runs (restored on exit, also on an error): not while
others use them.
"""

import os
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIB = os.path.join(TOP, "scripts", "chaoslib")
# name: (text in checks.py or explain.py, what it becomes)
M = {
 "C2: every lost update explained": ('e["explained"] = "lost_updates" in e and e["lost_updates"] <= explained_pairs', 'e["explained"] = True'),
 "C3: every fence inversion explained": ('"explained": frozenset((prev["id"], s["id"])) in explained_pair}', '"explained": True}'),
 "C0 removed": ('c0 = c0_evidence(spec, meta, completed)', 'c0 = []'),
 "C0: only 'no fault at all' (the old rule)": ('    never = faults_never_injected(spec, meta)\n    if never:', '    never = faults_never_injected(spec, meta)\n    if never and not meta.get("faults"):'),
 "C9 removed": ('c9 = check_crowd(sections, runs, meta)', 'c9 = []'),
 "C5 records removed": ('+ check_records(sections, runs, meta)', '+ []'),
 "C5 operator releases removed": ('keys_left + check_releases(sections, runs, meta)', 'keys_left + []'),
 "C5 lock keys left removed": ('c5 += (keys_left + ', 'c5 += ('),
 "C5 planned failovers removed": ('+ check_planned(sections, runs, meta))', '+ [])'),
 "a pause explains whenever it was (per run, not per moment)": ('if kind == "whole" and t0 < t_ns and (t1 is None or t1 + grace_ns >= t_ns):', 'if kind == "whole":'),
 "a pause of any stop kind explains": ('if kind == "whole" and t0 < t_ns', 'if t0 < t_ns'),
 "a kill explains whenever it was": ('and lo <= e["t_ns"] <= t:', ':'),
 "a network fault explains whenever it was": ('if w0 <= t and w1 >= lo:', 'if True:'),
 "C1 judged only where asserted (the old rule)": ('    asserted = list(asserted) + [c for c in ["C1"] + (["C8"] if limit else [])\n                                 if c not in asserted]', '    asserted = list(asserted)'),
 "C8 excess explained by any pause": ('paused = any(pause_covers(runs.get(x, {}), cur["from_ns"], grace) for x in cur["ids"])', 'paused = any("STOP" in runs.get(x, {}).get("signals", []) for x in cur["ids"])'),
 "a release explains without --force": ('not rel.get("force", True):', 'False:'),
 "a leftover lock: a fault on any master explains it": ('if not e.get("network") or ("servers" in e and k.get("server") not in e["servers"]):', 'if not e.get("network"):'),
 "a leftover lock: a fault explains it whenever it was": ('if w0 <= written and w1 >= written - ttl:', 'if True:'),
 "a leftover lock: any kill -9 explains it": ('if died and end is not None and written - SEEN_SLACK_MS * MS <= end <= t:', 'if died:'),
 "kclash: never judged": ('            if c["kind"] != "kclash":', '            if True:'),
 "kclash: --limit explains it": ('kc = kclashes(sections, overlaps, kl, runs, meta, asserted)', 'kc = [] if limit else kclashes(sections, overlaps, kl, runs, meta, asserted)'),
 "a late-seen death excuses without the kernel's lock": ('    ka, kb = took(kl, a), took(kl, b)\n', '    ka = kb = {"file": "-", "ns": 0}\n'),
 "a late-seen death excuses with the later witness's lock alone": ('    ka, kb = took(kl, a), took(kl, b)\n', '    ka, kb = took(kl, b), took(kl, b)\n'),
 "C10: the runs of a round not counted": ('            if w["sections"] > allowed:', '            if False:'),
 "C10: any recorded ID taken for the lock service's clock": ('for oid in sorted(seen - ids):', 'for oid in []:'),
 "C11: lost allowed whenever the guard was killed": ('            if reaped:\n', '            if False:\n'),
 "C11: the lock key's PTTL not judged": ('if isinstance(p, int) and (p == -1 or (ttl and p > ttl)):', 'if False:'),
}


def main():
    files = {}
    for name in ("checks.py", "explain.py", "klock.py", "oncecheck.py"):
        with open(os.path.join(LIB, name)) as f:
            files[name] = f.read()
    survived = 0
    try:
        for name, (a, b) in M.items():
            where = [n for n, text in files.items() if text.count(a) == 1]
            if len(where) != 1:
                print("%-58s cannot apply: the text is not in exactly one file" % name)
                survived += 1
                continue
            with open(os.path.join(LIB, where[0]), "w") as f:
                f.write(files[where[0]].replace(a, b))
            out = subprocess.run([sys.executable, os.path.join(TOP, "scripts", "chaos"), "--planted"],
                                 capture_output=True, text=True).stdout
            with open(os.path.join(LIB, where[0]), "w") as f:
                f.write(files[where[0]])
            green = [ln.split()[1] for ln in out.splitlines()
                     if ln.startswith("  control ") and "red (good)" not in ln]
            verdict = [ln for ln in out.splitlines() if ln.startswith("chaos: ")]
            survived += not green
            print("%-58s %s; green: %s" % (name, verdict[0] if verdict else "?",
                                           ", ".join(green) or "NONE (the mutation survived)"))
    finally:
        for name, text in files.items():
            with open(os.path.join(LIB, name), "w") as f:
                f.write(text)
    print("mutations: %d noticed, %d survived" % (len(M) - survived, survived))
    return 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main())
