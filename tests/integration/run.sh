#!/usr/bin/env bash
# run.sh — run the integration test files and sum their results.
#
#   RR_BIN=/path/to/redlock-run RR_HELPERS=build/tests tests/integration/run.sh [FILTER...]
#
# Each tests/integration/t_*.sh runs under `timeout 300`; a FILTER runs only
# the files whose name contains it (run.sh t_core). The last line is always
#   integration: N passed, N failed
# and the exit status is 1 if any test failed or any file crashed.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
export RR_BIN=${RR_BIN:-$top/redlock-run}
export RR_HELPERS=${RR_HELPERS:-$top/build/tests}

if [ ! -x "$RR_BIN" ]; then
    echo "run.sh: no redlock-run binary at $RR_BIN (run make first)" >&2
fi
for tool in redis-server redis-cli python3 timeout; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "run.sh: $tool is missing (scripts/deps.sh test installs it)" >&2
        echo "integration: 0 passed, 1 failed"
        exit 1
    fi
done

files=()
for f in "$here"/t_*.sh; do
    [ -e "$f" ] || continue
    if [ $# -gt 0 ]; then
        keep=0
        for pat in "$@"; do
            case $(basename "$f") in *"$pat"*) keep=1 ;; esac
        done
        [ "$keep" = 1 ] || continue
    fi
    files+=("$f")
done

if [ ${#files[@]} = 0 ]; then
    echo "run.sh: no test file matches: $*" >&2
    echo "integration: 0 passed, 1 failed"
    exit 1
fi

passed=0 failed=0 crashed=()
t0=$(date +%s)
for f in "${files[@]}"; do
    name=$(basename "$f" .sh)
    log=$(mktemp)
    echo "# --- $name"
    s0=$(date +%s)
    timeout -k 5 300 bash "$f" 2>&1 | tee "$log"
    status=${PIPESTATUS[0]}
    line=$(grep -E '^# result: [0-9]+ passed, [0-9]+ failed$' "$log" | tail -1)
    rm -f "$log"
    if [ -z "$line" ]; then
        if [ "$status" = 124 ] || [ "$status" = 137 ]; then
            crashed+=("$name (timed out after 300 s)")
        else
            crashed+=("$name (exit $status, no result line)")
        fi
        failed=$((failed + 1))
        continue
    fi
    p=$(echo "$line" | sed -E 's/^# result: ([0-9]+) passed, ([0-9]+) failed$/\1/')
    q=$(echo "$line" | sed -E 's/^# result: ([0-9]+) passed, ([0-9]+) failed$/\2/')
    passed=$((passed + p))
    failed=$((failed + q))
    if [ "$q" = 0 ] && [ "$status" != 0 ]; then
        crashed+=("$name (exit $status after all its tests passed)")
        failed=$((failed + 1))
    fi
    echo "# $name: $p passed, $q failed ($(( $(date +%s) - s0 )) s)"
done

for c in "${crashed[@]+"${crashed[@]}"}"; do
    echo "# crashed: $c"
done
echo "# total time $(( $(date +%s) - t0 )) s"
echo "integration: $passed passed, $failed failed"
[ "$failed" = 0 ] && [ ${#crashed[@]} = 0 ]
