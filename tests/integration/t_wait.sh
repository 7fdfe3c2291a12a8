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

t "every acquisition attempt of a waiter uses a fresh token"
# A late request of an earlier attempt (a give-back delayed in the network)
# must not match a later attempt's lock. The chaos harness caught a waiter
# whose delayed give-back deleted its own new lock under its running command.
job=tokens
timeout 8 redis-cli -p "$W_PORT" MONITOR > "$TMP/monitor" 2>/dev/null &
mon=$!
track_pid "$mon"
sleep 0.2
bg "$TMP/th" "$RR_BIN" -r "$U" "$job" -- sleep 1.2
h=$BG
sleep 0.2
rr_direct -r "$U" -w 10s "$job" -- true
assert_rc 0 "waiter"
wait_pid "$h" 10
sleep 0.2
kill "$mon" 2>/dev/null
# The acquire script's ARGV[1] is the token; count the waiter's attempts
# and their distinct tokens.
read -r attempts distinct < <($PY - "$TMP/monitor" "$job" <<'PY'
import shlex, sys
lock = "redlock:{%s}:lock" % sys.argv[2]
toks = []
for line in open(sys.argv[1], errors="replace"):
    if '"EVALSHA"' not in line and '"EVAL"' not in line:
        continue
    f = shlex.split(line[line.index('"'):])
    # EVALSHA sha NKEYS lock fence state history void [once] token ttl ...
    if len(f) < 4 or not f[2].isdigit():
        continue
    nk = int(f[2])
    if nk >= 5 and len(f) > 4 + nk and f[3] == lock and f[4].endswith(":fence"):
        toks.append(f[3 + nk])
print(len(toks), len(set(toks)))
PY
)
note "acquire requests seen: $attempts, distinct tokens: $distinct"
[ "${attempts:-0}" -ge 3 ] || fail "expected the holder's and at least two of the waiter's attempts, saw $attempts"
assert_eq "$attempts" "$distinct" "distinct tokens"
end_test

t "the release message wakes waiters without telling them the token"
# release.lua and force.lua used to PUBLISH the lock token: any subscriber to
# the channel learnt the token, which is what grants the lock (found in
# review). Waiters only need the wake-up.
job=pubmsg
chan="redlock:{$job}:released"
timeout 15 redis-cli -p "$W_PORT" SUBSCRIBE "$chan" > "$TMP/sub.out" 2>/dev/null &
sub=$!
track_pid "$sub"
lines_ge() { [ "$(count_lines "$1")" -ge "$2" ]; }
wait_for 5 lines_ge "$TMP/sub.out" 3 || fail "not subscribed"
toks=()
# run_and_grab STOP_HOW — a holder runs; its token is read from the state
# record while it runs; it is stopped by finishing or by --release.
run_and_grab() {
    local d=$TMP/pub-$1 h
    mkdir -p "$d"
    bg "$d/h" "$RR_BIN" -r "$U" "$job" -- sh -c 'touch "$1"; sleep 1' sh "$d/started"
    h=$BG
    wait_for 10 file_there "$d/started" || fail "holder did not start ($1)"
    toks+=("$(hget W "$(k_state $job)" token)")
    [ "$1" = force ] && rr -r "$U" --release "$job"
    wait_pid "$h" 10
}
run_and_grab release
run_and_grab force
wait_for 5 lines_ge "$TMP/sub.out" 9 || fail "expected two messages, got $(count_lines "$TMP/sub.out") lines"
kill "$sub" 2>/dev/null
msgs=$(sed -n '4,$p' "$TMP/sub.out")
note "messages: $(echo "$msgs" | tr '\n' ' ')"
assert_eq 2 "$(echo "$msgs" | grep -cx message)" "messages on $chan"
for tok in "${toks[@]}"; do
    [[ $tok =~ ^[0-9a-f]{32}$ ]] || fail "token '$tok' read from the state record"
    assert_not_contains "$msgs" "$tok" "published messages"
done
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
