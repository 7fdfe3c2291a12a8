#!/usr/bin/env bash
# t_wait.sh — --wait beyond a busy lock: a Redis that is down for a moment
# is waited out; one that stays down gives 69 when the wait runs out.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

start_redis W
U=$W_URL

t "--wait rides out a Redis restart"
stop_redis W
bg "$TMP/ride" "$RR_BIN" -r "$U" -w 10s --connect-timeout 200ms ride -- touch "$TMP/ride.ran"
w=$BG
sleep 1
spawn_redis W "$W_PORT" || fail "cannot restart redis"
wait_pid "$w" 15
assert_rc 0
assert_file_exists "$TMP/ride.ran"
assert_contains "$(cat "$TMP/ride.err")" "retrying until --wait runs out" "the warning"
assert_eq 1 "$(grep -c '' "$TMP/ride.err")" "one warning, not one per retry"
end_test

t "--wait with Redis down for good: 69 when the wait runs out, child never ran"
stop_redis W
t0=$(now_ms)
rr_direct -r "$U" -w 1500ms --connect-timeout 200ms down -- touch "$TMP/down.ran"
el=$(( $(now_ms) - t0 ))
assert_rc 69
assert_no_file "$TMP/down.ran"
note "gave up after $el ms"
[ "$el" -ge 1400 ] || fail "gave up after $el ms, before the 1.5 s wait ran out"
assert_lt "$el" 5000 "time to give up (ms)"
end_test

done_testing
