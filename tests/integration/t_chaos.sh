#!/usr/bin/env bash
# t_chaos.sh — the short chaos run (scripts/chaos --short) as test results.
#
# scripts/chaos starts its own redis-servers, proxies and wrappers, injects
# faults and checks the witness logs (see docs/RELIABILITY.md). Here every
# check that a scenario asserts becomes one test, and every negative control
# becomes one test that passes only if the control went red. Measured values
# that are not assertions (overlap under pause faults) are printed as notes.
#
#   RR_CHAOS_SEED=N   replay a given seed (the seed is printed on every run)
# run.sh: alone (it measures overlaps in milliseconds)
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

CHAOS=$TOP/scripts/chaos
SUMMARY=$TMP/chaos.json
seed_args=()
[ -n "${RR_CHAOS_SEED:-}" ] && seed_args=(--seed "$RR_CHAOS_SEED")

t "chaos --short runs to the end"
witness_args=()
[ -x "$RR_HELPERS/witness" ] && witness_args=(--witness "$RR_HELPERS/witness")
# Bounded: the short run takes about 130 s on two loaded cores; 230 s
# means it hung.
timeout -k 5 230 "$PY" "$CHAOS" --short --bin "$RR_BIN" "${witness_args[@]}" \
    "${seed_args[@]}" --out "$TMP/chaos" --json "$SUMMARY" >"$TMP/chaos.out" 2>&1
RC=$?
sed 's/^/# /' "$TMP/chaos.out"
if [ ! -s "$SUMMARY" ]; then
    fail "no summary (exit $RC; see the output above)"
    done_testing
    exit
fi
case $RC in 0 | 1) ;; *) fail "scripts/chaos exited $RC" ;; esac

# One test line per asserted check and per control, from the JSON summary.
"$PY" - "$SUMMARY" >"$TMP/chaos.tests" <<'EOF'
import json, sys
sm = json.load(open(sys.argv[1]))
names = {"C0": "enough completed runs to judge",
         "C1": "every overlap is explained in time",
         "C2": "no lost counter update",
         "C3": "fences strictly increase",
         "C4": "the fenced sink accepted no stale write",
         "C5": "exit codes, no hang, no lock left behind",
         "C6": "no command started after its lease ended",
         "C7": "a succeeded --once ID did not run again",
         "C8": "never more than N sections at once",
         "C9": "dead waiters cost the live ones at most 2/3 of a lease",
         "C10": "a --once ID ran at most its attempts, on the lock service's clock",
         "C11": "the record says what happened when the guard or the wrapper was killed"}
for r in sm["scenarios"]:
    unexplained = r.get("unexplained", {})
    failing = r.get("asserted_failing", {})
    for c in sorted(names):
        if c not in r["violations"]:
            continue
        # C1, C2: what a whole-holder pause or a forced release explains
        # does not count (scripts/chaos says which); the rest all counts.
        n = failing.get(c, unexplained.get(c, r["violations"][c]))
        if c in r["asserted"]:
            bad = r["details"][c]
            why = "%d violation(s), first: %s" % (n, json.dumps(bad[0])) if n else ""
            print("T\tchaos %s %s %s\t%s" % (r["scenario"], c, names[c], why))
        elif r["violations"].get(c):
            extra = ""
            if c == "C1":
                extra = " (overlap max %.1f ms, total %.1f ms)" % (r["overlap_ms_max"], r["overlap_ms_total"])
            elif c == "C2" and r["details"]["C2"]:
                extra = " (%s)" % json.dumps(r["details"]["C2"][0])
            print("N\t%s %s measured, not asserted: %d%s" % (r["scenario"], c, r["violations"][c], extra))
    if r.get("overlaps"):
        by = ", ".join("%s %d" % kv for kv in sorted((r.get("overlaps_by") or {}).items()))
        print("N\t%s overlaps %d (max %.1f ms): %s" % (r["scenario"], r["overlaps"], r["overlap_ms_max"], by))
for c in sm["controls"]:
    why = "" if c["went_red"] else "stayed green on %s: the checker cannot see a broken lock" % ",".join(c["must_fail"])
    print("T\tchaos control %s goes red on %s\t%s" % (c["scenario"], ",".join(c["must_fail"]), why))
EOF

notes=()
while IFS=$'\t' read -r kind name why; do
    if [ "$kind" = N ]; then
        notes+=("$name")
        continue
    fi
    t "$name"
    [ -z "$why" ] || fail "$why"
done <"$TMP/chaos.tests"
end_test
for n in "${notes[@]+"${notes[@]}"}"; do note "$n"; done

if [ "$N_FAIL" != 0 ] || [ -n "$CUR_REASON" ]; then
    cp -r "$TMP/chaos" "${TMPDIR:-/tmp}/rr-chaos-failed.$$" 2>/dev/null &&
        note "logs kept in ${TMPDIR:-/tmp}/rr-chaos-failed.$$ (scripts/chaos --check DIR/SCENARIO)"
fi
done_testing
