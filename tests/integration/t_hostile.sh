#!/usr/bin/env bash
# t_hostile.sh — a "Redis" whose reply never ends (tests/helpers/
# hostile_server.py: a 4 GB bulk string, 2e9 elements, a line without CRLF).
# Every mode (a run, --status, --release) must stop at the reply cap: exit
# 69 long before the request deadline, peak RSS small, no child, and one
# stderr line that says what happened. And the largest reply our own
# scripts produce (--status of a job with a full record, 10 history entries
# and 100 abandoned --once IDs) must stay far below that cap.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

HS=$TOP/tests/helpers/hostile_server.py
MK=$TMP/ran
CAP_MSG='reply larger than 1 MiB (is it a Redis server?)'
RSS_MAX_KB=50000      # a normal run peaks at about 2 MB (docs/BENCHMARKS.md)
DEADLINE=5s           # --redis-timeout: the cap, not the deadline, must end it
FAST_MS=2500

if [ ! -x /usr/bin/time ]; then
    t "GNU time is installed"
    fail "/usr/bin/time is missing (scripts/deps.sh test installs the package time)"
    done_testing
    exit 1
fi

# hostile MODE — start the fake server; sets HP (its port) and HS_PID.
hostile() {
    rm -f "$TMP/hs.port"
    bg "$TMP/hs-$1" "$PY" "$HS" "$1" "$TMP/hs.port" --seconds 30
    HS_PID=$BG
    HP=
    if wait_for 5 file_there "$TMP/hs.port"; then
        HP=$(cat "$TMP/hs.port")
    else
        fail "hostile_server.py $1 did not start: $(head -c 300 "$TMP/hs-$1.err")"
    fi
}

# measured ARGS... — the bare binary under /usr/bin/time, with the hang
# limit. Sets RC, HUNG, ELAPSED_MS like rr, and RSS_KB (peak RSS).
measured() {
    local t0
    rm -f "$TMP/rss"
    t0=$(now_ms)
    timeout -k 2 "$RR_LIMIT" /usr/bin/time -f %M -o "$TMP/rss" \
        "$RR_BIN" "$@" >"$OUT" 2>"$ERR" </dev/null
    RC=$?
    ELAPSED_MS=$(( $(now_ms) - t0 ))
    HUNG=0
    if [ "$ELAPSED_MS" -ge $(( RR_LIMIT * 1000 )) ]; then HUNG=1; fi
    # time(1) writes "Command exited with non-zero status N" first.
    RSS_KB=$(tail -1 "$TMP/rss" 2>/dev/null)
}

# refused WHAT — the checks every mode shares.
refused() {
    assert_rc 69 "$1: exit status"
    assert_lt "$ELAPSED_MS" "$FAST_MS" "$1: ms to exit (request deadline $DEADLINE)"
    if assert_int "$RSS_KB" "$1: peak RSS"; then
        assert_lt "$RSS_KB" "$RSS_MAX_KB" "$1: peak RSS in kB"
    fi
    assert_eq 1 "$(grep -c '' "$ERR")" "$1: stderr lines"
    assert_contains "$(cat "$ERR")" "127.0.0.1:$HP: $CAP_MSG" "$1: stderr"
    note "$1: exit $RC after ${ELAPSED_MS} ms, peak RSS ${RSS_KB} kB"
}

for mode in bulk multibulk nested line; do
    t "a run against a server whose reply never ends ($mode): 69 at once, small, no child"
    hostile "$mode"
    rm -f "$MK"
    measured -r "redis://127.0.0.1:$HP" --redis-timeout "$DEADLINE" job -- touch "$MK"
    refused "run/$mode"
    assert_no_file "$MK" "the command's marker"
    kill_wait KILL "$HS_PID" 5
done

for mode in bulk multibulk; do
    t "--status and --release against that server ($mode): 69 at once, small"
    hostile "$mode"
    measured -r "redis://127.0.0.1:$HP" --redis-timeout "$DEADLINE" --status job
    refused "--status/$mode"
    measured -r "redis://127.0.0.1:$HP" --redis-timeout "$DEADLINE" --release job
    refused "--release/$mode"
    kill_wait KILL "$HS_PID" 5
done

# ---------------------------------------------------------------------------
t "the largest reply we expect (--status of a full job) is far below the cap"
start_redis S || fail "cannot start redis-server"
name=$(head -c 200 /dev/zero | tr '\0' n)
v200=$(head -c 200 /dev/zero | tr '\0' v)
fields=()
for f in status host pid fence token started_ms heartbeat_ms finished_ms exit_code signal once; do
    fields+=("$f" "$v200")
done
{
    # Every field 200 bytes (real ones are mostly short numbers), 10
    # history entries (what --status asks for), 100 abandoned --once IDs
    # of the longest length allowed (where the script stops collecting).
    printf 'HSET %s %s\n' "$(k_state "$name")" "${fields[*]}"
    for _ in $(seq 12); do
        printf 'XADD %s * %s\n' "$(k_hist "$name")" "${fields[*]}"
    done
    for i in $(seq 100); do
        id=$(printf '%03d%s' "$i" "${v200:3}")
        printf 'HSET %s status abandoned once %s\n' "$(k_once "$name" "$id")" "$id"
    done
} | R S >/dev/null
out_bytes() { R S INFO stats | tr -d '\r' | sed -n 's/^total_net_output_bytes://p'; }
b0=$(out_bytes)
measured -r "$S_URL" --status "$name"
b1=$(out_bytes)
assert_rc 3 "--status of a job with abandoned once IDs"
assert_int "$RSS_KB" "peak RSS" && assert_lt "$RSS_KB" "$RSS_MAX_KB" "peak RSS in kB"
assert_contains "$(cat "$OUT")" "$(printf '%03d' 100)" "the 100th abandoned ID"
# Everything Redis sent in that time (the status reply, the script load, one
# INFO reply): an upper bound of the reply's size on the wire.
bytes=$((b1 - b0))
note "worst --status: at most $bytes bytes from Redis, peak RSS ${RSS_KB} kB"
assert_lt "$bytes" $((128 * 1024)) "bytes Redis sent for the worst --status (cap: 1 MiB)"
end_test

done_testing
