#!/usr/bin/env bash
# run-unit.sh BIN... — run Check unit-test binaries and sum their results.
#
# Prints each binary's output, then one line
#   unit: N passed, N failed
# where the numbers come from Check's "Checks: X, Failures: Y, Errors: Z"
# lines (passed = X - Y - Z, failed = Y + Z). A binary that exits non-zero
# without such a line (crash, missing) counts as one failure.
# Exit status: 1 if anything failed.
#
#   RR_UNIT_NOFORK="check_a check_b"  run these suites' tests in one process
#       (CK_FORK=no). For suites of pure functions that pass that way: under
#       ASan each forked test costs about 65 ms here (check_cli: 13.5 s
#       forked, 0.25 s not). A suite that needs the fork (check_log) fails
#       without it, so it is never the default.
set -u

passed=0 failed=0
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
    found=0 bad=0
    while IFS= read -r line; do
        # e.g. "100%: Checks: 12, Failures: 0, Errors: 0"
        if [[ $line =~ Checks:\ ([0-9]+),\ Failures:\ ([0-9]+),\ Errors:\ ([0-9]+) ]]; then
            found=1
            c=${BASH_REMATCH[1]} f=${BASH_REMATCH[2]} e=${BASH_REMATCH[3]}
            passed=$((passed + c - f - e))
            failed=$((failed + f + e))
            bad=$((bad + f + e))
        fi
    done <<<"$out"
    if [ "$found" = 0 ]; then
        echo "run-unit.sh: $bin: exit $status and no Check summary" >&2
        failed=$((failed + 1))
    elif [ "$status" != 0 ] && [ "$bad" = 0 ]; then
        echo "run-unit.sh: $bin: exit $status although no check failed" >&2
        failed=$((failed + 1))
    fi
done
echo "unit: $passed passed, $failed failed"
[ "$failed" = 0 ]
