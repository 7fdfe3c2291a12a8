#!/usr/bin/env bash
# t_once.sh — --once IDs, stale runs, --resolve, --min-hold, and a run that
# lost its lock never overwriting the next holder's state.
# shellcheck disable=SC2016,SC2153  # child commands; NAME_URL etc. come from start_redis
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

start_redis S || { t "start redis"; fail "cannot start redis-server"; done_testing; exit 1; }
U=$S_URL

# counter FILE — a child command that appends one line per run.
counter() { COUNT_CMD=(sh -c 'echo "${REDLOCK_ONCE-}" >> "$1"' sh "$1"); }

# ---------------------------------------------------------------------------
t "--once 'slot-%F' twice: the child runs once, the second run exits 0"
job=slot
id="slot-$(date +%F)"
counter "$TMP/slot.count"
rr -r "$U" --once 'slot-%F' "$job" -- "${COUNT_CMD[@]}"
assert_rc 0 "first run"
rr -r "$U" --once 'slot-%F' "$job" -- "${COUNT_CMD[@]}"
assert_rc 0 "second run"
# Guard against the date turning over between the two runs.
if [ "slot-$(date +%F)" = "$id" ]; then
    assert_eq 1 "$(count_lines "$TMP/slot.count")" "times the child ran"
fi
assert_eq "$id" "$(head -1 "$TMP/slot.count" 2>/dev/null)" "REDLOCK_ONCE"
assert_hash S "$(k_once $job "$id")" status succeeded
assert_hash S "$(k_once $job "$id")" once "$id"
ttl=$(R S TTL "$(k_once $job "$id")")
[ "$ttl" -gt 0 ] 2>/dev/null || fail "once record has no TTL ($ttl)"
assert_key_gone S "$(k_lock $job)"

t "--state-ttl sets the once record's TTL"
job=statettl
rr -r "$U" --once id1 --state-ttl 1h "$job" -- true
assert_rc 0
ttl=$(R S TTL "$(k_once $job id1)")
if [ "$ttl" -gt 3600 ] 2>/dev/null || [ "$ttl" -lt 3500 ] 2>/dev/null || ! [ "$ttl" -ge 0 ] 2>/dev/null; then
    fail "once record TTL $ttl, expected about 3600"
fi

t "a run longer than --state-ttl keeps its once record: the ID is not run again"
# The once record's TTL used to be set only at acquire: a run longer than
# --state-ttl lost its record mid-run, no success was recorded, and the ID
# ran again (found in review).
job=longrun
counter "$TMP/longrun.count"
rr_direct -r "$U" -t 1s --state-ttl 2s --once L1 "$job" -- sh -c 'sleep 3.5; echo x >> "$1"' sh "$TMP/longrun.count"
assert_rc 0 "first run"
assert_hash S "$(k_once $job L1)" status succeeded
p=$(R S PTTL "$(k_once $job L1)")
if ! [ "$p" -gt 1000 ] 2>/dev/null || ! [ "$p" -le 2000 ] 2>/dev/null; then
    fail "once record PTTL after the run: $p, expected 1000..2000 (--state-ttl 2s)"
fi
rr_direct -r "$U" -t 1s --state-ttl 2s --once L1 "$job" -- "${COUNT_CMD[@]}"
assert_rc 0 "second run"
assert_eq 1 "$(count_lines "$TMP/longrun.count")" "times the child ran"

t "a failed attempt spends the ID's one attempt: the next run is refused (65), on every server"
# Issue 28, 1: the failed run of an ID used to be run again at once by
# every server that fired after it (saw it fail without the fix: the
# command ran 9 times of 10).
job=fan
counter "$TMP/fan.count"
for i in 1 2 3 4 5 6 7 8 9 10; do
    bg "$TMP/fan$i" "$RR_BIN" -q -r "$U" --once f1 "$job" -- \
        sh -c 'echo ran >> "$1"; sleep 0.2; exit 1' sh "$TMP/fan.count"
    eval "fan$i=\$BG"
    sleep 0.3
done
for i in 1 2 3 4 5 6 7 8 9 10; do eval "wait_pid \$fan$i 15"; done
assert_eq 1 "$(count_lines "$TMP/fan.count")" "times the command ran"
assert_hash S "$(k_once $job f1)" status failed
assert_hash S "$(k_once $job f1)" attempts 1
n=$(grep -l "has used 1 of 1 attempt: the last one failed (exit 1)" "$TMP"/fan*.err | wc -l)
assert_eq 9 "$n" "runs refused with the one line (under -q)"
line=$(grep -h "has used 1 of 1 attempt" "$TMP"/fan*.err | head -1)
assert_contains "$line" "on $(hostname)" "the refusal names the host"
assert_contains "$line" "then this allows one more: redlock-run -r $U --resolve retry --once f1 $job" "the refusal names the command, last on its line"
rr -r "$U" --once f1 "$job" -- "${COUNT_CMD[@]}"
assert_rc 65 "a later run"
assert_eq 1 "$(count_lines "$TMP/fan.count")" "times the command ran"

t "--resolve retry allows exactly one more attempt; --attempts N allows N"
job=retry
counter "$TMP/retry.count"
rr -r "$U" --once r1 "$job" -- sh -c 'echo x >> "$1"; exit 1' sh "$TMP/retry.count"
assert_rc 1 "first run"
rr -r "$U" --once r1 "$job" -- "${COUNT_CMD[@]}"
assert_rc 65 "second run, refused"
rr -r "$U" --status --once r1 "$job"
assert_contains "$(cat "$OUT")" "one more redlock-run -r $U --resolve retry --once r1 $job" "--status"
rr -r "$U" --resolve retry --once r1 "$job"
assert_rc 0 "--resolve retry"
assert_contains "$(cat "$OUT")" "may have one more attempt (the last was failed)" "--resolve retry says so"
rr -r "$U" --status --once r1 "$job"
assert_contains "$(cat "$OUT")" "1 used, one more allowed (--resolve retry)" "--status"
rr -r "$U" --once r1 "$job" -- sh -c 'echo x >> "$1"; exit 2' sh "$TMP/retry.count"
assert_rc 2 "the retried run"
assert_hash S "$(k_once $job r1)" attempts 2
rr -r "$U" --once r1 "$job" -- "${COUNT_CMD[@]}"
assert_rc 65 "after the retry failed too"
rr -r "$U" --once r1 --attempts 3 "$job" -- "${COUNT_CMD[@]}"
assert_rc 0 "--attempts 3: the third attempt"
assert_eq 3 "$(count_lines "$TMP/retry.count")" "times the child ran"
assert_hash S "$(k_once $job r1)" status succeeded
assert_hash S "$(k_once $job r1)" attempts 3
rr -r "$U" --once r1 --attempts 5 "$job" -- "${COUNT_CMD[@]}"
assert_rc 0 "after success"
assert_eq 3 "$(count_lines "$TMP/retry.count")" "times the child ran after success"
rr -r "$U" --resolve retry --once r1 "$job"
assert_rc 1 "--resolve retry of a succeeded ID"
assert_contains "$(cat "$OUT")" "succeeded: nothing to retry" "--resolve retry of a success"
rr -r "$U" --resolve retry "$job"
assert_rc 64 "--resolve retry without --once"
rr -r "$U" --attempts 2 "$job" -- true
assert_rc 64 "--attempts without --once"

t "a timed-out attempt spends the attempt; --attempts 2 runs it again"
job=tmo
rr -r "$U" --once t1 --max-runtime 0.3s "$job" -- sleep 10
assert_rc 124 "first run"
assert_hash S "$(k_once $job t1)" status timeout
rr -r "$U" --once t1 "$job" -- touch "$TMP/tmo.ran"
assert_rc 65 "second run"
assert_contains "$(cat "$ERR")" "the last one timed out" "the refusal"
assert_no_file "$TMP/tmo.ran" "second run's marker"
rr -r "$U" --once t1 --attempts 2 "$job" -- touch "$TMP/tmo.ran"
assert_rc 0 "--attempts 2"
assert_file_exists "$TMP/tmo.ran" "marker with --attempts 2"

t "an attempt that lost its lock spends the attempt; the next run is refused"
job=lostonce
bg "$TMP/lo" "$RR_BIN" -r "$U" -t 1s --once l1 "$job" -- sh -c 'touch "$1"; sleep 10' sh "$TMP/lo.started"
w=$BG
wait_for 10 file_there "$TMP/lo.started" || fail "first run did not start"
R S DEL "$(k_lock $job)" >/dev/null
wait_pid "$w" 10
assert_rc 79 "first run"
assert_hash S "$(k_once $job l1)" status lost
rr -r "$U" -q --once l1 "$job" -- touch "$TMP/lo.ran"
assert_rc 65 "second run"
assert_contains "$(cat "$ERR")" "the last one lost its lock" "the refusal, under -q"
assert_no_file "$TMP/lo.ran" "second run's marker"
rr -r "$U" --once l1 --attempts 2 "$job" -- touch "$TMP/lo.ran"
assert_rc 0 "--attempts 2"
assert_hash S "$(k_once $job l1)" status succeeded

t "a command that never started (not found: 127) uses no attempt and leaves the record as it was"
# Issue 28, 2: it was recorded 'failed' (saw it fail without the fix).
job=never
rr -r "$U" --once n1 "$job" -- "$TMP/no/such/command"
assert_rc 127 "not found"
assert_contains "$(cat "$ERR")" "it never started: the lock is given back, nothing is recorded" "message"
assert_key_gone S "$(k_once $job n1)" "the once record:"
assert_key_gone S "$(k_state $job)" "the state record:"
assert_key_gone S "$(k_lock $job)" "the lock:"
rr -r "$U" --once n1 "$job" -- touch "$TMP/never.ran"
assert_rc 0 "the next run"
assert_file_exists "$TMP/never.ran" "marker"
# A failed attempt's record stays as it was, its count too.
rr -r "$U" --once n2 --attempts 2 "$job" -- false
assert_rc 1 "a failed attempt"
before=$(R S HGETALL "$(k_once $job n2)" | tr -d '\r')
rr -r "$U" --once n2 --attempts 2 "$job" -- "$TMP/no/such/command"
assert_rc 127 "not found after a failure"
assert_eq "$before" "$(R S HGETALL "$(k_once $job n2)" | tr -d '\r')" "the once record"
assert_hash S "$(k_state $job)" status failed

t "the command cannot be forked (ulimit -u, an unprivileged user): 71, no record, no attempt used"
# Issue 28, 3: the guard forks, the command cannot be (RLIMIT_NPROC: us
# and the guard, no more); it was recorded 'failed exit_code 71' (saw it
# fail without the fix).
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null 2>&1; then
    skip "needs root and setpriv (to be an unprivileged user)"
else
    job=nofork
    # Every task of the user counts: the limit leaves room for us and the guard.
    n=$(( $(ps -L -u 65534 -o lwp= 2>/dev/null | wc -l) + 2 ))
    run_limited setpriv --reuid=65534 --regid=65534 --clear-groups \
        bash -c 'ulimit -u "$1"; shift; exec "$@"' sh "$n" \
        "$RR_BIN" -r "$U" --once u1 "$job" -- touch "$TMP/nofork.ran"
    assert_rc 71 "the run"
    assert_no_file "$TMP/nofork.ran" "marker"
    assert_key_gone S "$(k_once $job u1)" "the once record:"
    assert_key_gone S "$(k_state $job)" "the state record:"
    assert_key_gone S "$(k_lock $job)" "the lock:"
    rr -r "$U" --once u1 "$job" -- true
    assert_rc 0 "the next run, with no limit"
fi

t "--once IDs on the lock service's clock: a host a day ahead (faketime +1d) runs the same ID"
# Issue 28, 4: the ID came from the local clock, so a host a day ahead ran
# tomorrow's ID today (saw it fail without the fix: skew-<tomorrow>).
if skip_without_faketime; then
    :
else
    job=skew
    id="skew-$(date +%F)"
    run_limited env $(faked +1d) "$RR_BIN" -v -r "$U" --once 'skew-%F' "$job" -- \
        sh -c 'echo "$REDLOCK_ONCE" >> "$1"' sh "$TMP/skew.ids"
    assert_rc 0 "the run a day ahead"
    if [ "skew-$(date +%F)" = "$id" ]; then   # the date did not turn over meanwhile
        assert_eq "$id" "$(head -1 "$TMP/skew.ids" 2>/dev/null)" "REDLOCK_ONCE a day ahead"
        assert_hash S "$(k_once $job "$id")" status succeeded
        assert_contains "$(cat "$ERR")" "--once ID $id, from the lock service's clock" "-v"
        assert_contains "$(cat "$ERR")" "this host's clock is +8640" "-v: the skew"
        rr -r "$U" --once 'skew-%F' "$job" -- sh -c 'echo "$REDLOCK_ONCE" >> "$1"' sh "$TMP/skew.ids"
        assert_rc 0 "a normal run the same day"
        assert_eq 1 "$(count_lines "$TMP/skew.ids")" "times the command ran"
        # --status and --resolve look at the ID the runs used, not the one
        # of this host's clock (saw both fail before: tomorrow's ID, 'no
        # record of --once skewf-<tomorrow>').
        run_limited env $(faked +1d) "$RR_BIN" -v -r "$U" --status --once 'skew-%F' "$job"
        assert_rc 0 "--status a day ahead"
        assert_contains "$(cat "$OUT")" "once $id:" "--status: the ID"
        assert_contains "$(cat "$OUT")" "succeeded" "--status: its record"
        assert_contains "$(cat "$ERR")" "--once ID $id, from the lock service's clock" "--status -v"
        rr -r "$U" --once 'skewf-%F' "$job" -- false
        assert_rc 1 "a failed run"
        # The refusal a day ahead says how long ago on the server's clock
        # (saw "(1d0.045s ago)" of a run 45 ms old before: the host's clock).
        run_limited env $(faked +1d) "$RR_BIN" -r "$U" --once 'skewf-%F' "$job" -- true
        assert_rc 65 "the failed ID a day ahead"
        assert_contains "$(cat "$ERR")" "has used 1 of 1 attempt: the last one failed (exit 1)" "the refusal"
        assert_not_contains "$(cat "$ERR")" "(1d" "the refusal's 'ago', on the server's clock"
        run_limited env $(faked +1d) "$RR_BIN" -r "$U" --resolve retry --once 'skewf-%F' "$job"
        assert_rc 0 "--resolve retry a day ahead"
        assert_contains "$(cat "$OUT")" "--once skewf-$(date +%F) of $job may have one more attempt" "--resolve"
        rr -r "$U" --once 'skewf-%F' "$job" -- true
        assert_rc 0 "the retried run"
    fi
fi

t "--once without time fields asks no clock; a service that cannot tell the time: 69, nothing run"
job=noclock
rr -r "$U" -v --once plain "$job" -- true
assert_rc 0 "a literal ID"
assert_not_contains "$(cat "$ERR")" "from the lock service's clock" "-v"
dead=$(free_port)
rr -r "redis://127.0.0.1:$dead" --once 'x-%F' "$job" -- touch "$TMP/noclock.ran"
assert_rc 69 "no server"
assert_contains "$(cat "$ERR")" "cannot read the lock service's clock (TIME) for --once" "message"
assert_no_file "$TMP/noclock.ran" "marker"

t "no master answering TIME under --wait: waited out like any outage, 69 when the wait runs out"
# The clock is asked as part of the acquisition, so --wait retries it as it
# retries an unreachable Redis (saw it before: 69 at once, in ~0 s).
rr -r "redis://127.0.0.1:$dead" -w 2s --once 'x-%F' noclock -- touch "$TMP/noclock.ran"
assert_rc 69 "the wait ran out"
assert_no_file "$TMP/noclock.ran" "marker"
if [ "$ELAPSED_MS" -lt 1800 ]; then fail "gave up after ${ELAPSED_MS} ms of a 2 s wait"; fi
assert_contains "$(cat "$ERR")" "cannot read the lock service's clock (TIME) for --once" "message"
assert_contains "$(cat "$ERR")" "retrying until --wait runs out" "the wait said"
# A server that answers again within the wait: the run goes on, on its clock.
pause_redis S
( sleep 1.5; resume_redis S ) &
rr -r "$U" --redis-timeout 200ms -w 20s --once 'wt-%F' waittime -- \
    sh -c 'echo "$REDLOCK_ONCE" > "$1"' sh "$TMP/wt.id"
resume_redis S
wait
assert_rc 0 "the run, once the server answered"
assert_eq "wt-$(date +%F)" "$(cat "$TMP/wt.id" 2>/dev/null)" "REDLOCK_ONCE"
assert_contains "$(cat "$ERR")" "retrying until --wait runs out" "the wait said"
# A server that refuses TIME (an ACL) refuses our configuration: 78 at once.
R S ACL SETUSER notime on '>pw-notime' '~*' '&*' +@all -time >/dev/null
REDLOCK_USER=notime REDLOCK_PASSWORD=pw-notime rr -r "$U" -w 10s --once 'nt-%F' waittime -- true
assert_rc 78 "TIME refused"
assert_lt "$ELAPSED_MS" 3000 "ms (--wait does not retry a refusal)"
assert_contains "$(cat "$ERR")" "NOPERM" "the server's words"
R S ACL DELUSER notime >/dev/null
end_test

t "--status and --resolve with a pattern and no server: the clock line, 69"
rr -r "redis://127.0.0.1:$dead" --status --once 'x-%F' "$job"
assert_rc 69 "--status, no server"
assert_contains "$(cat "$ERR")" "cannot read the lock service's clock (TIME) for --once" "--status message"
rr -r "redis://127.0.0.1:$dead" --resolve retry --once 'x-%F' "$job"
assert_rc 69 "--resolve, no server"
assert_contains "$(cat "$ERR")" "cannot read the lock service's clock (TIME) for --once" "--resolve message"

# ---------------------------------------------------------------------------
# abandon JOB ID — start a --once run with a 1 s lease, kill -9 the wrapper
# while its child runs, and wait for the lease to expire.
abandon() {
    local job=$1 id=$2 started=$TMP/$1-$2.started
    bg "$TMP/$job-$id" "$RR_BIN" -r "$U" -t 1s ${id:+--once "$id"} "$job" -- sh -c 'touch "$1"; sleep 30' sh "$started"
    local w=$BG
    wait_for 10 file_there "$started" || { fail "abandon: child did not start"; return 1; }
    kill_wait KILL "$w" 5
    wait_for 5 key_gone S "$(k_lock "$job")" || { fail "abandon: lease did not expire"; return 1; }
    return 0
}

t "a --once run killed mid-way: the next run is refused with 65"
job=stale
abandon "$job" s1
rr -r "$U" --once s1 "$job" -- touch "$TMP/stale.ran"
assert_rc 65
assert_no_file "$TMP/stale.ran" "marker"
[ -s "$ERR" ] || fail "no message on stderr"
assert_key_gone S "$(k_lock $job)"
# With one master the refusal marks the dead run at once, as it always did.
assert_hash S "$(k_once $job s1)" status abandoned
assert_hash S "$(k_state $job)" status abandoned
assert_eq 1 "$(R S XRANGE "$(k_hist $job)" - + | grep -cx abandoned)" "abandoned entries"
rr -r "$U" --once s1 "$job" -- touch "$TMP/stale.ran"
assert_rc 65 "still refused"
assert_eq 1 "$(R S XRANGE "$(k_hist $job)" - + | grep -cx abandoned)" "abandoned entries after the second refusal"
assert_contains "$(cat "$ERR")" "has used 1 of 1 attempt: the last one died mid-way (abandoned), last seen" "the refusal"
rr -r "$U" --once s1 --on-stale run "$job" -- touch "$TMP/stale.ran"
assert_rc 65 "--on-stale run: the attempt is spent all the same"
assert_no_file "$TMP/stale.ran" "marker"
rr -r "$U" --once s1 --attempts 2 "$job" -- touch "$TMP/stale.ran"
assert_rc 65 "--attempts 2: a dead run is still refused (--on-stale refuse)"
assert_contains "$(cat "$ERR")" "died mid-way, last seen" "the refusal"
rr -r "$U" --once s1 --attempts 2 --on-stale run "$job" -- touch "$TMP/stale.ran"
assert_rc 0 "--attempts 2 --on-stale run"
assert_file_exists "$TMP/stale.ran" "marker with --on-stale run"

t "--resolve succeeded: the next run is skipped (0, not run)"
job=resolved
abandon "$job" s2
rr -r "$U" --resolve succeeded --once s2 "$job"
assert_rc 0 "--resolve"
assert_hash S "$(k_once $job s2)" status succeeded
rr -r "$U" --once s2 "$job" -- touch "$TMP/resolved.ran"
assert_rc 0
assert_no_file "$TMP/resolved.ran" "marker"

t "--resolve retry after a dead run: the next run runs, once"
job=retried
abandon "$job" s6
rr -r "$U" --resolve retry --once s6 "$job"
assert_rc 0 "--resolve retry"
assert_hash S "$(k_once $job s6)" retry 1
rr -r "$U" --once s6 "$job" -- sh -c 'touch "$1"; exit 3' sh "$TMP/retried.ran"
assert_rc 3 "the retried run"
assert_file_exists "$TMP/retried.ran" "marker"
assert_hash S "$(k_once $job s6)" attempts 2
rr -r "$U" --once s6 "$job" -- true
assert_rc 65 "and no more"

t "--resolve clear: the next run runs"
job=cleared
abandon "$job" s3
rr -r "$U" --once s3 "$job" -- touch "$TMP/cleared.ran"
assert_rc 65 "before --resolve"
rr -r "$U" --resolve clear --once s3 "$job"
assert_rc 0 "--resolve"
rr -r "$U" --once s3 "$job" -- touch "$TMP/cleared.ran"
assert_rc 0
assert_file_exists "$TMP/cleared.ran" "marker"
assert_hash S "$(k_once $job s3)" status succeeded

t "--status names the abandoned ID to resolve; --resolve clear without --once says it left the --once record"
job=named
abandon "$job" s4
rr -r "$U" --status "$job"
assert_rc 3 "--status"
assert_contains "$(cat "$OUT")" "redlock-run -r $U --resolve succeeded --once s4 $job" "--status"
# Each of the three is a line of its own, to paste as it is (the server
# named, no comment after it: zsh takes one for words).
grep 'redlock-run .*--resolve' "$OUT" > "$TMP/settle.cmds"
assert_eq 3 "$(wc -l < "$TMP/settle.cmds")" "the --resolve lines"
while read -r line; do
    eval "set -- $line"
    assert_eq "redlock-run -r $U --resolve" "$1 $2 $3 $4" "a pasted line's first words"
    assert_eq "--once s4 $job" "$6 $7 $8" "a pasted line's last words"
    assert_eq 8 "$#" "a pasted line's words"
done < "$TMP/settle.cmds"
rr -r "$U" --resolve clear "$job"
assert_rc 0 "--resolve clear without --once"
assert_contains "$(cat "$OUT")" "cleared the last run of $job (was running); --once records are not touched: add --once with the ID that --status lists" "--resolve clear"
assert_hash S "$(k_state $job)" status cleared   # kept, set aside (issue 34, 4)
assert_hash S "$(k_once $job s4)" status running
abandon "$job" s5
rr -r "$U" --status "$job"
assert_contains "$(cat "$OUT")" "settle each with one of these" "--status, two IDs"
assert_contains "$(cat "$OUT")" "redlock-run -r $U --resolve clear --once ID $job" "--status, two IDs"
rr -r "$U" --resolve clear --once s4 "$job"
assert_rc 0 "--resolve clear --once s4"
assert_not_contains "$(cat "$OUT")" "not touched" "--resolve clear --once"
end_test

t "without --once an abandoned run is reported (under -q too) and the next run goes ahead"
job=noonce
abandon "$job" ""
rr -r "$U" -q "$job" -- touch "$TMP/noonce.ran"
assert_rc 0
assert_file_exists "$TMP/noonce.ran" "marker"
assert_contains "$(cat "$ERR")" "the previous run died without finishing" "the warning under -q"
assert_hash S "$(k_state $job)" status succeeded
hist=$(R S XRANGE "$(k_hist $job)" - +)
assert_contains "$hist" abandoned "history"
assert_contains "$hist" succeeded "history"
rr -r "$U" --on-stale refuse "$job" -- true
assert_rc 0 "after a clean run nothing is stale"

t "a dead --once run refused first without --once, then with it, and then run: one history entry for its death"
# The run without --once marks the state record (entry 1); the refusal
# with --once s1 marks s1's record, and the run with --on-stale run
# replaces it: each wrote an entry of its own for the same death before.
job=once2log
abandon "$job" s1
rr -r "$U" --on-stale refuse "$job" -- true
assert_rc 65 "refused without --once"
rr -r "$U" --once s1 --on-stale refuse "$job" -- true
assert_rc 65 "refused with --once s1"
assert_hash S "$(k_once $job s1)" status abandoned
rr -r "$U" --once s1 --attempts 2 --on-stale run "$job" -- true
assert_rc 0 "s1 run again (--attempts 2 --on-stale run)"
assert_eq 1 "$(R S XRANGE "$(k_hist $job)" - + | grep -cx abandoned)" "abandoned entries"

t "--on-stale refuse without --once: 65"
job=refuse
abandon "$job" ""
rr -r "$U" --on-stale refuse "$job" -- touch "$TMP/refuse.ran"
assert_rc 65
assert_no_file "$TMP/refuse.ran" "marker"
# The command it names reaches the same server, pasted as it is.
assert_contains "$(cat "$ERR")" "'--resolve succeeded' skips it, and this runs it again: redlock-run -r $U --resolve clear $job" "the refusal"

# ---------------------------------------------------------------------------
t "an acquire that arrives after its own give-back takes nothing"
# A timed-out acquire is given back on a new connection, but the original
# request may still reach Redis later (delayed or retransmitted). It used to
# take the lock and write 'running': the next --once run was then refused
# (65) for a run that never happened (found in review). The proxy delivers
# the first connection's requests 1.5 s late, later connections at once.
job=phantom
rr -r "$U" phantom-warmup -- true   # a late EVALSHA must find the script loaded
assert_rc 0 "warm-up run"
bg "$TMP/proxy" "$PY" "$TOP/tests/helpers/delayproxy.py" "$S_PORT" 1500
proxy=$BG
wait_for 5 grep -q '^port ' "$TMP/proxy.out" || fail "the proxy did not start"
pport=$(sed -n 's/^port //p' "$TMP/proxy.out")
rr_direct -r "redis://127.0.0.1:$pport" --redis-timeout 300ms -t 5s --once P1 "$job" -- touch "$TMP/phantom.ran"
assert_rc 69 "the attempt whose acquire timed out"
assert_no_file "$TMP/phantom.ran" "marker"
wait_for 5 grep -q '^flushed [1-9]' "$TMP/proxy.out" || fail "the proxy did not deliver the delayed request"
sleep 0.3
assert_key_gone S "$(k_lock $job)" "the late acquire's lock:"
assert_ne running "$(hget S "$(k_once $job P1)" status)" "once record status"
assert_ne running "$(hget S "$(k_state $job)" status)" "state record status"
voids=$(R S --scan --pattern "redlock:{$job}:void:*")
assert_eq 1 "$(printf '%s' "$voids" | grep -c .)" "tombstones (the give-back voided the attempt's token)"
vt=$(R S PTTL "$(printf '%s' "$voids" | head -1)")
[ "$vt" -gt 100000 ] 2>/dev/null || fail "tombstone PTTL $vt, expected about 120000 ms"
rr -r "$U" --once P1 "$job" -- touch "$TMP/phantom.ran"
assert_rc 0 "the next run"
assert_file_exists "$TMP/phantom.ran" "the next run's marker"
kill_wait KILL "$proxy" 5

# ---------------------------------------------------------------------------
t "a run that lost its lock cannot overwrite the next holder's state"
job=paused
bg "$TMP/pa" "$RR_BIN" -r "$U" -t 1s "$job" -- sh -c 'echo $$ > "$1"; sleep 8; touch "$2"' sh "$TMP/pa.pid" "$TMP/pa.done"
wa=$BG
wait_for 10 test -s "$TMP/pa.pid" || fail "A's child did not start"
ca=$(cat "$TMP/pa.pid" 2>/dev/null)
fence_a=$(hget S "$(k_state $job)" fence)
kill -STOP "$wa"
[ -n "$ca" ] && kill -STOP -- "-$ca" 2>/dev/null
wait_for 5 key_gone S "$(k_lock $job)" || fail "A's lease did not expire while paused"
bg "$TMP/pb" "$RR_BIN" -r "$U" -t 10s "$job" -- sh -c 'echo "$REDLOCK_FENCE" > "$1"; sleep 3' sh "$TMP/pb.fence"
wb=$BG
wait_for 10 test -s "$TMP/pb.fence" || fail "B did not start while A was paused"
[ -n "$ca" ] && kill -CONT -- "-$ca" 2>/dev/null
kill -CONT "$wa"
wait_pid "$wa" 15
assert_rc 79 "A"
assert_no_file "$TMP/pa.done" "A's end marker"
fence_b=$(cat "$TMP/pb.fence" 2>/dev/null)
assert_hash S "$(k_state $job)" status running
assert_hash S "$(k_state $job)" fence "$fence_b"
tok=$(R S GET "$(k_lock $job)")
assert_hash S "$(k_state $job)" token "$tok"
assert_eq 32 "${#tok}" "B's token length"
[[ $tok =~ ^[0-9a-f]{32}$ ]] || fail "B's token is not 32 hex chars: $tok"
if [ -n "$fence_a" ] && [ -n "$fence_b" ]; then
    [ "$fence_b" -gt "$fence_a" ] 2>/dev/null || fail "B's fence $fence_b not above A's $fence_a"
fi
wait_pid "$wb" 15
assert_rc 0 "B"
assert_hash S "$(k_state $job)" status succeeded
assert_hash S "$(k_state $job)" fence "$fence_b"
hist=$(R S XRANGE "$(k_hist $job)" - +)
assert_contains "$hist" lost "history (A's entry)"

# ---------------------------------------------------------------------------
t "--min-hold keeps the lock after a short child"
job=minhold
t0=$(now_ms)
rr_direct -r "$U" --min-hold 3s "$job" -- sleep 0.1
assert_rc 0 "first run"
assert_lt "$ELAPSED_MS" 2000 "first run returns at once (ms)"
p=$(R S PTTL "$(k_lock $job)")
if ! [ "$p" -gt 1000 ] 2>/dev/null || ! [ "$p" -le 3000 ] 2>/dev/null; then
    fail "lock PTTL after the run: $p, expected 1000..3000"
fi
assert_hash S "$(k_state $job)" status succeeded
sleep 1
rr_direct -r "$U" "$job" -- touch "$TMP/minhold.1"
assert_rc 75 "run 1 s later"
assert_no_file "$TMP/minhold.1" "marker of the run 1 s later"
wait_for 5 key_gone S "$(k_lock $job)" || fail "the hold did not end"
held=$(( $(now_ms) - t0 ))
[ "$held" -ge 2800 ] || fail "the lock was held only $held ms"
rr_direct -r "$U" "$job" -- touch "$TMP/minhold.2"
assert_rc 0 "run after the hold"
assert_file_exists "$TMP/minhold.2" "marker of the later run"

# ---------------------------------------------------------------------------
t "the server restarts (persisted) as the command ends: the release is retried, --once is recorded succeeded"
# Issue 18.2 on a plain master. The command ends by killing the server;
# it comes back 1.5 s later from its AOF, with our lock, 'running' record
# and once record. The release is retried (and the lock renewed) until it
# lands; before, the wrapper warned and exited 0, the record stayed
# 'running', and the ID ran again under --on-stale run.
job=rsrel
# --appendfilename, not --appenddirname (7.0+): the test runs on Redis 6.0
# too; P is the only persisted server here, so the default directory will do.
start_redis P --appendonly yes --appendfsync always --appendfilename P.aof ||
    fail "cannot start a persisted redis-server"
bg "$TMP/rsrel" "$RR_BIN" -r "$P_URL" -t 6s --once d1 "$job" -- \
    sh -c 'echo ran >> "$1"; kill -9 "$2"' sh "$TMP/rsrel.ran" "$P_PID"
w=$BG
wait_for 10 pid_gone "$P_PID" || fail "the command did not stop the server"
sleep 1.5
spawn_redis P "$P_PORT" --appendonly yes --appendfsync always --appendfilename P.aof ||
    fail "cannot restart the persisted redis-server"
wait_pid "$w" 15
assert_rc 0 "the run"
assert_contains "$(cat "$TMP/rsrel.err")" "retrying while the lease lasts" "the retry is said"
assert_contains "$(cat "$TMP/rsrel.err")" "the release landed" "its landing is said"
assert_hash P "$(k_once $job d1)" status succeeded
assert_key_gone P "$(k_lock $job)"
rr_direct -r "$P_URL" --once d1 --on-stale run "$job" -- sh -c 'echo ran >> "$1"' sh "$TMP/rsrel.ran"
assert_rc 0 "the same ID again"
assert_eq 1 "$(count_lines "$TMP/rsrel.ran")" "times the command ran"
assert_not_contains "$(R P XRANGE "$(k_hist $job)" - + | tr -d '\r')" abandoned "history"

t "a release whose reply is lost (the server paused) is retried without writing twice"
# The command pauses the server and ends; the release and its retries
# queue up unanswered and all run when it is continued: one history entry,
# the record written once (finished_ms of the first), exit 0.
job=lostrep
bg "$TMP/lostrep" "$RR_BIN" -r "$U" -t 6s --redis-timeout 300ms --once d1 "$job" -- \
    sh -c 'kill -STOP "$1"' sh "$S_PID"
w=$BG
sleep 2
resume_redis S
wait_pid "$w" 15
assert_rc 0 "the run"
assert_contains "$(cat "$TMP/lostrep.err")" "the release landed" "its landing is said"
assert_hash S "$(k_once $job d1)" status succeeded
assert_hash S "$(k_state $job)" status succeeded
assert_key_gone S "$(k_lock $job)"
n=$(R S XLEN "$(k_hist $job)")
assert_eq 1 "$n" "history entries"
assert_eq "$(hget S "$(k_state $job)" finished_ms)" \
    "$(R S XRANGE "$(k_hist $job)" - + | tr -d '\r' | grep -A1 '^finished_ms$' | tail -1)" \
    "the record's finished_ms is the history entry's"

t "no release lands before the lease ends: exit 74, said as an unrecorded outcome, not as a success"
job=unrec
start_redis Q || fail "cannot start redis-server"
bg "$TMP/unrec" "$RR_BIN" -r "$Q_URL" -t 2s --once d1 "$job" -- sh -c 'kill -9 "$1"' sh "$Q_PID"
w=$BG
wait_pid "$w" 15
assert_rc 74 "the run"
assert_contains "$(cat "$TMP/unrec.err")" "the command ended with status 0, but its outcome could not be recorded" "message"

t "an unrecorded attempt (74) spends the attempt: the next run is refused (65)"
# The command kills a persisted server as it ends; it comes back from its
# AOF only after the lease: no release landed (74), the record says
# 'running', and the next run of the ID is refused.
job=unrec2
start_redis P2 --appendonly yes --appendfsync always --appenddirname P2.aof ||
    fail "cannot start a persisted redis-server"
bg "$TMP/unrec2" "$RR_BIN" -r "$P2_URL" -t 1s --once d2 "$job" -- \
    sh -c 'echo ran >> "$1"; kill -9 "$2"' sh "$TMP/unrec2.count" "$P2_PID"
w=$BG
wait_pid "$w" 15
assert_rc 74 "the run"
spawn_redis P2 "$P2_PORT" --appendonly yes --appendfsync always --appenddirname P2.aof ||
    fail "cannot restart the persisted redis-server"
wait_for 5 key_gone P2 "$(k_lock $job)" || fail "the lease did not end"
assert_hash P2 "$(k_once $job d2)" status running
rr -r "$P2_URL" --once d2 "$job" -- sh -c 'echo ran >> "$1"' sh "$TMP/unrec2.count"
assert_rc 65 "the next run"
assert_contains "$(cat "$ERR")" "the last one died mid-way (abandoned)" "the refusal"
assert_eq 1 "$(count_lines "$TMP/unrec2.count")" "times the command ran"

done_testing
