#!/usr/bin/env bash
# run.sh — run the integration test files and sum their results.
#
#   RR_BIN=/path/to/redlock-run RR_HELPERS=build/tests tests/integration/run.sh [FILTER...]
#
# Each tests/integration/t_*.sh runs under `timeout 300`; a FILTER runs only
# the files whose name contains it (run.sh t_core). The last line is always
#   integration: N passed, N failed, N skipped
# (a skipped case, "ok - NAME # SKIP reason", is not a pass: what it needs
# is missing here; lib.sh's RR_NO_SKIP=1 makes it a failure) and the exit
# status is 1 if any test failed or any file crashed.
#
#   RR_JOBS=N    run up to N files at once (default 1). Most of a file's time
#                is spent waiting for leases, failovers and timeouts, so two
#                at once on two cores take little more than the longer one.
#                A file whose header has the line "# run.sh: alone" (its
#                checks depend on timing: lease ends, failovers, measured
#                overlaps) runs by itself, after the others. One whose
#                header has "# run.sh: early" (one of the longest) starts
#                before the rest, so that two at a time end together.
#   RR_SKIP="t_a t_b"
#                leave out the files whose name contains one of the words
#                (.ci/run: the files that do not run redlock-run under
#                valgrind are left out of the valgrind pass).
# Each file's output is printed whole when it ends, with its time.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
export RR_BIN=${RR_BIN:-$top/redlock-run}
export RR_HELPERS=${RR_HELPERS:-$top/build/tests}
jobs=${RR_JOBS:-1}
case $jobs in '' | *[!0-9]* | 0) echo "run.sh: RR_JOBS must be a number >= 1, not '$jobs'" >&2; exit 2 ;; esac

if [ ! -x "$RR_BIN" ]; then
    echo "run.sh: no redlock-run binary at $RR_BIN (run make first)" >&2
fi
for tool in redis-server redis-cli python3 timeout; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "run.sh: $tool is missing (scripts/deps.sh test installs it)" >&2
        echo "integration: 0 passed, 1 failed, 0 skipped"
        exit 1
    fi
done

matches() { # NAME WORDS... — does NAME contain one of the words?
    local name=$1 pat
    shift
    for pat in "$@"; do
        case $name in *"$pat"*) return 0 ;; esac
    done
    return 1
}

together=() alone=() early=()
for f in "$here"/t_*.sh; do
    [ -e "$f" ] || continue
    name=$(basename "$f")
    if [ $# -gt 0 ] && ! matches "$name" "$@"; then continue; fi
    # shellcheck disable=SC2086  # a list of words
    if [ -n "${RR_SKIP:-}" ] && matches "$name" ${RR_SKIP}; then
        echo "# --- $(basename "$f" .sh): left out (RR_SKIP)"
        continue
    fi
    if grep -q '^# run.sh: alone' "$f"; then
        alone+=("$f")
    elif grep -q '^# run.sh: early' "$f"; then
        early+=("$f")
    else
        together+=("$f")
    fi
done
together=(${early[@]+"${early[@]}"} ${together[@]+"${together[@]}"})

if [ $((${#together[@]} + ${#alone[@]})) = 0 ]; then
    echo "run.sh: no test file matches: $*" >&2
    echo "integration: 0 passed, 1 failed, 0 skipped"
    exit 1
fi

out=$(mktemp -d "${TMPDIR:-/tmp}/rr-run.XXXXXX")
trap 'rm -rf "$out"' EXIT

# start FILE — run one file in the background; its log, exit status and
# time go to $out/NAME.{log,rc,secs}.
start() {
    local f=$1 name
    name=$(basename "$f" .sh)
    (
        s0=$(date +%s)
        timeout -k 5 300 bash "$f" >"$out/$name.log" 2>&1
        echo $? >"$out/$name.rc"
        echo $(($(date +%s) - s0)) >"$out/$name.secs"
    ) &
    echo "$name" >"$out/pid.$!"
}

passed=0 failed=0 skipped=0 crashed=()
skips=()
# collect NAME — print a finished file's log and add up its results.
collect() {
    local name=$1 status line p q k re
    re='^# result: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped$'
    status=$(cat "$out/$name.rc")
    echo "# --- $name"
    cat "$out/$name.log"
    line=$(grep -E "$re" "$out/$name.log" | tail -1)
    if [ -z "$line" ]; then
        if [ "$status" = 124 ] || [ "$status" = 137 ]; then
            crashed+=("$name (timed out after 300 s)")
        else
            crashed+=("$name (exit $status, no result line)")
        fi
        failed=$((failed + 1))
        return
    fi
    [[ $line =~ $re ]]
    p=${BASH_REMATCH[1]} q=${BASH_REMATCH[2]} k=${BASH_REMATCH[3]}
    passed=$((passed + p))
    failed=$((failed + q))
    skipped=$((skipped + k))
    while IFS= read -r line; do
        skips+=("$name: ${line#ok - }")
    done < <(grep -E '^ok - .* # SKIP ' "$out/$name.log")
    if [ "$q" = 0 ] && [ "$status" != 0 ]; then
        crashed+=("$name (exit $status after all its tests passed)")
        failed=$((failed + 1))
    fi
    echo "# $name: $p passed, $q failed, $k skipped ($(cat "$out/$name.secs") s)"
}

# run_pool N FILES... — at most N files at once, each collected as it ends.
run_pool() {
    local n=$1 running=0 f pidf pid
    shift
    for f in "$@"; do
        while [ "$running" -ge "$n" ]; do
            wait -n 2>/dev/null || true
            for pidf in "$out"/pid.*; do
                [ -e "$pidf" ] || continue
                pid=${pidf##*.}
                if ! kill -0 "$pid" 2>/dev/null; then
                    collect "$(cat "$pidf")"
                    rm -f "$pidf"
                    running=$((running - 1))
                fi
            done
        done
        start "$f"
        running=$((running + 1))
    done
    wait
    for pidf in "$out"/pid.*; do
        [ -e "$pidf" ] || continue
        collect "$(cat "$pidf")"
        rm -f "$pidf"
    done
}

t0=$(date +%s)
[ ${#together[@]} -gt 0 ] && run_pool "$jobs" "${together[@]}"
[ ${#alone[@]} -gt 0 ] && run_pool 1 "${alone[@]}"

for c in "${skips[@]+"${skips[@]}"}"; do
    echo "# skipped: $c"
done
for c in "${crashed[@]+"${crashed[@]}"}"; do
    echo "# crashed: $c"
done
echo "# total time $(($(date +%s) - t0)) s"
echo "integration: $passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ] && [ ${#crashed[@]} = 0 ]
