#!/usr/bin/env bash
# run-unit.sh BIN... — run Check unit-test binaries and sum their results.
#
# Prints each binary's output, then one line
#   unit: N passed, N failed, N skipped
# where the numbers come from Check's "Checks: X, Failures: Y, Errors: Z"
# lines (passed = X - Y - Z - skipped, failed = Y + Z). A test that cannot
# run here returns early after a line "skipped: REASON" (rr_unit_skip,
# tests/unit.h) or "check_NAME: REASON: skipped": Check counts it as passed,
# this script as skipped. A binary that exits non-zero without such a line
# (crash, missing) counts as one failure.
#
#   RR_NO_SKIP=1  a skipped test is a failure (.ci/run: its machine, root
#       with cgroup2, must run every test).
# Exit status: 1 if anything failed.
#
#   RR_UNIT_NOFORK="check_a check_b"  run these suites' tests in one process
#       (CK_FORK=no). For suites of pure functions that pass that way: under
#       ASan each forked test costs about 65 ms here (check_cli: 13.5 s
#       forked, 0.25 s not). A suite that needs the fork (check_log) fails
#       without it, so it is never the default.
set -u

passed=0 failed=0 skipped=0
if [ $# = 0 ]; then
    echo "run-unit.sh: no unit-test binaries given" >&2
fi
for bin in "$@"; do
    echo "# --- $(basename "$bin")"
    if [ ! -x "$bin" ]; then
        echo "run-unit.sh: $bin: not an executable" >&2
        failed=$((failed + 1))
        continue
    fi
    nofork=()
    case " ${RR_UNIT_NOFORK:-} " in *" $(basename "$bin") "*) nofork=(env CK_FORK=no) ;; esac
    out=$(timeout -k 5 300 "${nofork[@]}" "$bin" 2>&1)
    status=$?
    printf '%s\n' "$out"
    found=0 bad=0 skip=0
    while IFS= read -r line; do
        if [[ $line =~ ^skipped:\  ]] || [[ $line =~ ^check_[a-z0-9_]+:\ .*:\ skipped$ ]]; then
            skip=$((skip + 1))
            continue
        fi
        # e.g. "100%: Checks: 12, Failures: 0, Errors: 0"
        if [[ $line =~ Checks:\ ([0-9]+),\ Failures:\ ([0-9]+),\ Errors:\ ([0-9]+) ]]; then
            found=1
            c=${BASH_REMATCH[1]} f=${BASH_REMATCH[2]} e=${BASH_REMATCH[3]}
            passed=$((passed + c - f - e))
            failed=$((failed + f + e))
            bad=$((bad + f + e))
        fi
    done <<<"$out"
    if [ "$skip" -gt 0 ] && [ "$found" = 1 ]; then
        passed=$((passed - skip))
        if [ "${RR_NO_SKIP:-0}" = 1 ]; then
            echo "run-unit.sh: $bin: $skip test(s) skipped on a machine that must run them (RR_NO_SKIP=1)" >&2
            failed=$((failed + skip))
        else
            skipped=$((skipped + skip))
        fi
    fi
    if [ "$found" = 0 ]; then
        echo "run-unit.sh: $bin: exit $status and no Check summary" >&2
        failed=$((failed + 1))
    elif [ "$status" != 0 ] && [ "$bad" = 0 ]; then
        echo "run-unit.sh: $bin: exit $status although no check failed" >&2
        failed=$((failed + 1))
    fi
done
echo "unit: $passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
