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

if [ "$N_FAIL" != 0 ]; then
    sed 's/^/# /' "$TMP/planted.out"
fi
done_testing
