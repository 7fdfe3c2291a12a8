#!/usr/bin/env bash
# t_checker.sh — the chaos checker's controls, judged on the verdict.
#
# scripts/chaos --planted writes logs by hand (scripts/chaoslib/controls.py,
# and the two planted logs of scripts/chaos) and runs the checker on them:
# no server, no wrapper, a second or so. Each control is one test: its
# planted log must make the verdict FAIL on the check it names, and its
# clean twin (the same log without the defect) must PASS. One per check
# C0-C9 and per way an overlap may or may not be explained (in time: a
# pause that covers it, a forced release within a renewal, a kill -9 or a
# network fault within the last lease), and per way a lock key left after
# every wrapper ended may not be (a fault of another master, one long
# before it was written, a kill -9 before it). A control that stays green means
# the checker is blind to that defect (docs/RELIABILITY.md, "Controls").
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

t "scripts/chaos --planted runs"
timeout -k 5 60 "$PY" "$TOP/scripts/chaos" --planted >"$TMP/planted.out" 2>&1
RC=$?
case $RC in 0 | 1) ;; *) fail "scripts/chaos --planted exited $RC: $(tail -5 "$TMP/planted.out")" ;; esac
grep -q '^chaos: ' "$TMP/planted.out" || fail "no verdict line: $(tail -5 "$TMP/planted.out")"
n=$(grep -c '^  control ' "$TMP/planted.out")
[ "$n" -ge 30 ] || fail "only $n controls ran"
end_test

while IFS= read -r line; do
    name=${line#  control }
    name=${name%%: *}
    name=$(echo "$name" | tr -s ' ')
    t "control $name"
    case $line in
        *": red (good)") ;;
        *) fail "${line##*: }" ;;
    esac
done < <(grep '^  control ' "$TMP/planted.out")
end_test

t "the verdict of the controls is PASS (every control red, every clean twin green)"
[ "$RC" = 0 ] || fail "scripts/chaos --planted exited $RC"
grep -qx 'chaos: PASS' "$TMP/planted.out" || fail "$(grep '^chaos: ' "$TMP/planted.out")"
end_test

# The witness's kernel lock (--klock, scripts/chaoslib/klock.py): what the
# checker trusts must be what the witness logs.
W="$RR_HELPERS/witness"
t "witness --klock: a second holder of one slot logs kclash naming the first's pid; another slot and a later run log klock"
if [ ! -x "$W" ]; then
    fail "no witness at $W (make DEVELOPER=1 tests)"
else
    kl="$TMP/kl"
    RR_ID=a REDLOCK_SLOT=1 "$W" "$TMP/w.log" "$TMP/w.counter" --klock "$kl" --hold 600 &
    apid=$!
    for _ in $(seq 100); do grep -q '^start .* a ' "$TMP/w.log" 2>/dev/null && break; sleep 0.02; done
    RR_ID=b REDLOCK_SLOT=1 "$W" "$TMP/w.log" "$TMP/w.counter" --klock "$kl" --hold 1 || fail "witness b exited $?"
    RR_ID=c REDLOCK_SLOT=2 "$W" "$TMP/w.log" "$TMP/w.counter" --klock "$kl" --hold 1 || fail "witness c exited $?"
    wait "$apid" || fail "witness a exited $?"
    RR_ID=d REDLOCK_SLOT=1 "$W" "$TMP/w.log" "$TMP/w.counter" --klock "$kl" --hold 1 || fail "witness d exited $?"
    grep -Eq "^klock [0-9]+ a - pid=$apid file=kl\.1\$" "$TMP/w.log" || fail "no klock for a: $(cat "$TMP/w.log")"
    grep -Eq "^kclash [0-9]+ b - pid=[0-9]+ file=kl\.1 holder=$apid\$" "$TMP/w.log" \
        || fail "no kclash naming $apid for b: $(cat "$TMP/w.log")"
    grep -Eq "^klock [0-9]+ c - .* file=kl\.2\$" "$TMP/w.log" || fail "no klock for c: $(cat "$TMP/w.log")"
    grep -Eq "^klock [0-9]+ d - .* file=kl\.1\$" "$TMP/w.log" || fail "no klock for d: $(cat "$TMP/w.log")"
    # Each record comes before its start line, with a stamp no later.
    awk '$1 == "klock" || $1 == "kclash" { k[$3] = $2 } $1 == "start" { if (!($3 in k) || k[$3] > $2) bad = bad " " $3 }
         END { if (bad != "") { print "late or missing record:" bad; exit 1 } }' "$TMP/w.log" || fail "$(cat "$TMP/w.log")"
fi
end_test

t "witness --klock: killed in its section, it frees the lock by dying"
if [ -x "$W" ]; then
    RR_ID=e "$W" "$TMP/k.log" "$TMP/k.counter" --klock "$TMP/kk" --hold 5000 &
    epid=$!
    for _ in $(seq 100); do grep -q '^start .* e ' "$TMP/k.log" 2>/dev/null && break; sleep 0.02; done
    kill -9 "$epid"
    wait "$epid" 2>/dev/null
    RR_ID=f "$W" "$TMP/k.log" "$TMP/k.counter" --klock "$TMP/kk" --hold 1 || fail "witness f exited $?"
    grep -Eq "^klock [0-9]+ f - .* file=kk\$" "$TMP/k.log" || fail "$(cat "$TMP/k.log")"
    grep -q '^end .* e ' "$TMP/k.log" && fail "e was not killed in its section: $(cat "$TMP/k.log")"
fi
end_test

if [ "$N_FAIL" != 0 ]; then
    sed 's/^/# /' "$TMP/planted.out"
fi
done_testing
