#!/usr/bin/env bash
# t_core.sh — single-instance locking: mutual exclusion, exit statuses,
# renewal, loss, waiting, signals, Redis failures, credentials, usage errors.
# Every case checks the exit status and what Redis holds afterwards.
# shellcheck disable=SC2016,SC2153  # child commands; NAME_URL etc. come from start_redis
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

start_redis S || { t "start redis"; fail "cannot start redis-server"; done_testing; exit 1; }
U=$S_URL

# ---------------------------------------------------------------------------
t "two racing runs: one runs, the other exits 75"
job=race
m=$TMP/race.count
# The child holds the lock for 3 s, far longer than either start-up.
cmd=(sh -c 'echo x >> "$1"; sleep 3' sh "$m")
bg "$TMP/race1" "${RR[@]}" -r "$U" "$job" -- "${cmd[@]}"; p1=$BG
bg "$TMP/race2" "${RR[@]}" -r "$U" "$job" -- "${cmd[@]}"; p2=$BG
wait_pid "$p1" "$RR_LIMIT"; r1=$RC h1=$HUNG
wait_pid "$p2" "$RR_LIMIT"; r2=$RC h2=$HUNG
assert_eq "0 0" "$h1 $h2" "hung"
assert_eq "0 75" "$(printf '%s\n' "$r1" "$r2" | sort -n | tr '\n' ' ' | sed 's/ $//')" "exit statuses"
assert_eq 1 "$(count_lines "$m")" "times the child ran"
assert_key_gone S "$(k_lock $job)"
assert_hash S "$(k_state $job)" status succeeded
# The fence is at least Redis's clock in ms, and what the state records.
assert_eq "$(R S GET "$(k_fence $job)")" "$(hget S "$(k_state $job)" fence)" "fence"
assert_lt "$(($(date +%s%3N) - $(R S GET "$(k_fence $job)")))" 60000 "fence vs the clock (ms)"
assert_eq 0 "$(hget S "$(k_state $job)" exit_code)" "state exit_code"

# ---------------------------------------------------------------------------
t "the child's exit status is passed through (3), state failed"
job=exit3
rr -r "$U" "$job" -- sh -c 'exit 3'
assert_rc 3
assert_hash S "$(k_state $job)" status failed
assert_hash S "$(k_state $job)" exit_code 3
assert_key_gone S "$(k_lock $job)"
assert_eq 1 "$(R S XLEN "$(k_hist $job)")" "history entries"

t "a child killed by SIGTERM gives 143"
job=sig
rr -r "$U" "$job" -- sh -c 'kill -TERM $$'
assert_rc 143
assert_hash S "$(k_state $job)" status failed
assert_hash S "$(k_state $job)" signal 15
assert_key_gone S "$(k_lock $job)"

t "a file that is not executable gives 126"
job=noexec
printf '#!/bin/sh\ntouch %s\n' "$TMP/noexec.ran" >"$TMP/noexec.sh"
chmod 644 "$TMP/noexec.sh"
rr -r "$U" "$job" -- "$TMP/noexec.sh"
assert_rc 126
assert_no_file "$TMP/noexec.ran" "marker"
assert_key_gone S "$(k_lock $job)"

t "a command that does not exist gives 127"
job=notfound
rr -r "$U" "$job" -- redlock-run-test-no-such-command-zz
assert_rc 127
rr -r "$U" "$job" -- "$TMP/no/such/file"
assert_rc 127 "absolute path"
assert_key_gone S "$(k_lock $job)"

t "--max-runtime stops the child: 124, state timeout"
job=tmo
rr -r "$U" --max-runtime 0.3s "$job" -- sh -c 'sleep 10; touch "$1"' sh "$TMP/tmo.done"
assert_rc 124
assert_lt "$ELAPSED_MS" 5000 "time to stop (ms)"
assert_no_file "$TMP/tmo.done" "marker"
assert_hash S "$(k_state $job)" status timeout
assert_key_gone S "$(k_lock $job)"

t "-E 3 changes the busy exit status"
job=econf
R S SET "$(k_lock $job)" foreign-value PX 60000 >/dev/null
rr -r "$U" -E 3 "$job" -- touch "$TMP/econf.ran"
assert_rc 3
assert_no_file "$TMP/econf.ran" "marker"
assert_eq foreign-value "$(R S GET "$(k_lock $job)")" "foreign lock"
rr -r "$U" "$job" -- touch "$TMP/econf.ran"
assert_rc 75 "default busy status"
R S DEL "$(k_lock $job)" >/dev/null

# ---------------------------------------------------------------------------
t "a 1 s lease is renewed under a 3 s child; contenders get 75"
job=renew
bg "$TMP/renew" "$RR_BIN" -r "$U" -t 1s "$job" -- sh -c 'touch "$1"; sleep 3; touch "$2"' sh "$TMP/renew.started" "$TMP/renew.done"
holder=$BG
wait_for 10 file_there "$TMP/renew.started" || fail "holder's child did not start"
tries=0 busy=0 pttl_bad= last=0
t0=$(now_ms)
while [ $(( $(now_ms) - t0 )) -lt 2600 ] && [ ! -e "$TMP/renew.done" ]; do
    last=$(( $(now_ms) - t0 ))
    rr_direct -r "$U" -w 0 "$job" -- touch "$TMP/renew.contender"
    tries=$((tries + 1))
    [ "$RC" = 75 ] && busy=$((busy + 1))
    p=$(R S PTTL "$(k_lock $job)")
    if [ "$p" -le 0 ] 2>/dev/null || [ "$p" -gt 1000 ] 2>/dev/null; then pttl_bad="$pttl_bad $p"; fi
    sleep 0.25
done
note "contenders: $tries tried, $busy got 75"
assert_eq "$tries" "$busy" "contenders refused"
# What counts is that contenders were refused after the first lease had
# ended (1 s): only a renewal explains that. How many ran depends on load.
[ "$tries" -ge 2 ] && [ "$last" -ge 1200 ] ||
    fail "only $tries contender runs, the last $last ms in: none after the first lease's end"
assert_eq "" "$pttl_bad" "lock PTTL outside 1..1000 ms"
assert_no_file "$TMP/renew.contender" "contender's marker"
wait_pid "$holder" 10
assert_rc 0 "holder"
assert_file_exists "$TMP/renew.done" "holder's end marker"
assert_key_gone S "$(k_lock $job)"
assert_hash S "$(k_state $job)" status succeeded

# ---------------------------------------------------------------------------
t "lock deleted mid-run: child stopped, 79, state lost"
job=deleted
bg "$TMP/del" "$RR_BIN" -r "$U" -t 1s "$job" -- sh -c 'touch "$1"; sleep 6; touch "$2"' sh "$TMP/del.started" "$TMP/del.done"
holder=$BG
wait_for 10 file_there "$TMP/del.started" || fail "child did not start"
R S DEL "$(k_lock $job)" >/dev/null
wait_pid "$holder" 10
assert_rc 79
assert_lt "$ELAPSED_MS" 4000 "time to notice the loss (ms)"
assert_no_file "$TMP/del.done" "child's end marker"
assert_hash S "$(k_state $job)" status lost
assert_key_gone S "$(k_lock $job)"

t "lock taken over mid-run: 79, the other holder's value untouched"
job=stolen
bg "$TMP/steal" "$RR_BIN" -r "$U" -t 1s "$job" -- sh -c 'touch "$1"; sleep 6; touch "$2"' sh "$TMP/steal.started" "$TMP/steal.done"
holder=$BG
wait_for 10 file_there "$TMP/steal.started" || fail "child did not start"
R S SET "$(k_lock $job)" someone-else PX 60000 >/dev/null
wait_pid "$holder" 10
assert_rc 79
assert_no_file "$TMP/steal.done" "child's end marker"
assert_eq someone-else "$(R S GET "$(k_lock $job)")" "the other holder's lock"
p=$(R S PTTL "$(k_lock $job)")
[ "$p" -gt 50000 ] 2>/dev/null || fail "the other holder's PTTL was changed: $p"
assert_hash S "$(k_state $job)" status lost
R S DEL "$(k_lock $job)" >/dev/null

# ---------------------------------------------------------------------------
t "a waiter acquires within 200 ms of the release"
job=handoff
bg "$TMP/hold" "$RR_BIN" -r "$U" "$job" -- sh -c 'touch "$1"; sleep 1; date +%s%N > "$2"' sh "$TMP/hold.started" "$TMP/hold.end"
holder=$BG
wait_for 10 file_there "$TMP/hold.started" || fail "holder did not start"
bg "$TMP/waiter" "$RR_BIN" -r "$U" -w 10s "$job" -- sh -c 'date +%s%N > "$1"' sh "$TMP/waiter.start"
waiter=$BG
wait_pid "$holder" 10
assert_rc 0 "holder"
wait_pid "$waiter" 15
assert_rc 0 "waiter"
if [ -s "$TMP/hold.end" ] && [ -s "$TMP/waiter.start" ]; then
    gap=$(( ($(cat "$TMP/waiter.start") - $(cat "$TMP/hold.end")) / 1000000 ))
    note "hand-off gap: $gap ms"
    [ "$gap" -ge 0 ] || fail "waiter ran before the holder finished (gap $gap ms)"
    assert_lt "$gap" 200 "hand-off gap (ms)"
else
    fail "missing timestamps"
fi
# History, newest first: the waiter's fence is above the holder's.
fences=$(R S XREVRANGE "$(k_hist $job)" + - COUNT 2 | awk 'p{print; p=0} $0=="fence"{p=1}' | tr '\n' ' ')
read -r f_wait f_hold <<<"$fences"
[ "${f_wait:-0}" -gt "${f_hold:-0}" ] 2>/dev/null || fail "fences not increasing: holder $f_hold, waiter $f_wait"
assert_eq "$(R S GET "$(k_fence $job)")" "$(hget S "$(k_state $job)" fence)" "fence of the last run"
assert_key_gone S "$(k_lock $job)"

# ---------------------------------------------------------------------------
t "SIGTERM to redlock-run reaches the child; lock released"
job=term
bg "$TMP/term" "$RR_BIN" -r "$U" "$job" -- sh -c 'trap "echo term > \"$2\"; exit 143" TERM; touch "$1"; while :; do sleep 0.1; done' sh "$TMP/term.started" "$TMP/term.got"
w=$BG
wait_for 10 file_there "$TMP/term.started" || fail "child did not start"
kill -TERM "$w"
wait_pid "$w" 15
assert_rc 143
assert_file_exists "$TMP/term.got" "child's TERM marker"
assert_key_gone S "$(k_lock $job)"
assert_ne running "$(hget S "$(k_state $job)" status)" "state status"

t "SIGKILL to redlock-run kills the child within 2 s"
job=kill9
bg "$TMP/k9" "$RR_BIN" -r "$U" -t 2s "$job" -- sh -c 'echo $$ > "$1"; exec sleep 30' sh "$TMP/k9.pid"
w=$BG
wait_for 10 test -s "$TMP/k9.pid" || fail "child did not start"
cpid=$(cat "$TMP/k9.pid" 2>/dev/null)
if assert_int "$cpid" "child pid"; then
    kill_wait KILL "$w" 5
    if ! wait_for 2 pid_gone "$cpid"; then
        fail "child $cpid still alive 2 s after redlock-run was killed"
        kill -KILL "$cpid" 2>/dev/null
    fi
fi
# The lease expires by itself (2 s).
wait_for 5 key_gone S "$(k_lock $job)" || fail "lock did not expire"

# ---------------------------------------------------------------------------
t "Redis down: 69 quickly, child not run"
start_redis DOWN || fail "cannot start the second server"
DOWN_URL_SAVED=$DOWN_URL
stop_redis DOWN
rr_direct -r "$DOWN_URL_SAVED" down -- touch "$TMP/down.ran"
assert_rc 69
assert_lt "$ELAPSED_MS" 3000 "time to give up (ms)"
assert_no_file "$TMP/down.ran" "marker"
[ -s "$ERR" ] || fail "no message on stderr"

t "Redis stopped (SIGSTOP): 69 within the timeouts, child not run"
start_redis STOPPED || fail "cannot start the server"
pause_redis STOPPED
rr_direct -r "$STOPPED_URL" --redis-timeout 300ms --connect-timeout 1s stopped -- touch "$TMP/stopped.ran"
resume_redis STOPPED
assert_rc 69
assert_lt "$ELAPSED_MS" 3000 "time to give up (ms)"
assert_no_file "$TMP/stopped.ran" "marker"

# ---------------------------------------------------------------------------
start_redis SEC --requirepass secret || fail "cannot start the password server"
PORT_SEC=$SEC_PORT

t "password from \$REDLOCK_PASSWORD; the child never sees it"
job=pw
REDLOCK_PASSWORD=secret rr -r "redis://127.0.0.1:$PORT_SEC" "$job" -- \
    sh -c 'cat /proc/$$/environ | tr "\0" "\n" > "$1"; cat /proc/$$/cmdline > "$2"' sh "$TMP/pw.env" "$TMP/pw.cmdline"
assert_rc 0
assert_file_exists "$TMP/pw.env" "child's environment dump"
if [ -e "$TMP/pw.env" ]; then
    assert_not_contains "$(cat "$TMP/pw.env")" secret "child environment"
    assert_not_contains "$(cat "$TMP/pw.env")" REDLOCK_PASSWORD "child environment"
    assert_contains "$(cat "$TMP/pw.env")" "REDLOCK_NAME=$job" "child environment"
fi
assert_not_contains "$(tr '\0' ' ' <"$TMP/pw.cmdline" 2>/dev/null)" secret "child cmdline"
assert_hash SEC "$(k_state $job)" status succeeded

t "a wrong password gives 78 (fix the configuration), child not run"
REDLOCK_PASSWORD=badpass-zq rr -r "redis://127.0.0.1:$PORT_SEC" pwbad -- touch "$TMP/pwbad.ran"
assert_rc 78
assert_contains "$(cat "$ERR")" "refused the password"
assert_no_file "$TMP/pwbad.ran" "marker"
assert_not_contains "$(cat "$ERR")" badpass-zq "stderr"
rr -r "redis://127.0.0.1:$PORT_SEC" pwbad -- touch "$TMP/pwbad.ran"
assert_rc 78 "no password at all"
assert_no_file "$TMP/pwbad.ran" "marker"

t "a password in a URL is hidden from /proc/PID/cmdline"
job=pwurl
bg "$TMP/pwurl" "$RR_BIN" -r "redis://:secret@127.0.0.1:$PORT_SEC" "$job" -- sh -c 'touch "$1"; sleep 1' sh "$TMP/pwurl.started"
w=$BG
if wait_for 10 file_there "$TMP/pwurl.started"; then
    cl=$(tr '\0' ' ' <"/proc/$w/cmdline" 2>/dev/null)
    assert_contains "$cl" "$job" "wrapper cmdline"
    assert_not_contains "$cl" secret "wrapper cmdline"
else
    fail "child did not start"
fi
wait_pid "$w" 10
assert_rc 0
assert_not_contains "$(cat "$TMP/pwurl.err")" secret "stderr"

t "--password-file"
printf 'secret\n' >"$TMP/pwfile"
chmod 600 "$TMP/pwfile"
rr -r "redis://127.0.0.1:$PORT_SEC" --password-file "$TMP/pwfile" pwfile -- touch "$TMP/pwfile.ran"
assert_rc 0
assert_file_exists "$TMP/pwfile.ran" "marker"
assert_hash SEC "$(k_state pwfile)" status succeeded
assert_not_contains "$(cat "$ERR")" "can be read by other users" "stderr (mode 600)"

t "--password-file that others may read: runs, and says to chmod 600 it"
chmod 644 "$TMP/pwfile"
rr -r "redis://127.0.0.1:$PORT_SEC" --password-file "$TMP/pwfile" pwfile2 -- true
assert_rc 0
assert_contains "$(cat "$ERR")" "/pwfile' can be read by other users: chmod 600 it"
# Under -q too: it asks the operator to act (issue 34, 7; silent before).
rr -r "redis://127.0.0.1:$PORT_SEC" -q --password-file "$TMP/pwfile" pwfile2 -- true
assert_rc 0
assert_contains "$(cat "$ERR")" "/pwfile' can be read by other users: chmod 600 it" "-q"
chmod 600 "$TMP/pwfile"

# ---------------------------------------------------------------------------
t "child environment: REDLOCK_NAME, REDLOCK_FENCE (increasing), REDLOCK_TTL_MS"
job=envjob
envcmd=(sh -c 'printf "%s|%s|%s|%s\n" "$REDLOCK_NAME" "$REDLOCK_FENCE" "$REDLOCK_TTL_MS" "${REDLOCK_ONCE-unset}" >> "$1"' sh "$TMP/env.out")
rr -r "$U" -t 7s "$job" -- "${envcmd[@]}"
assert_rc 0 "first run"
rr -r "$U" -t 7s "$job" -- "${envcmd[@]}"
assert_rc 0 "second run"
l1=$(sed -n 1p "$TMP/env.out" 2>/dev/null) l2=$(sed -n 2p "$TMP/env.out" 2>/dev/null)
IFS='|' read -r n1 f1 ttl1 once1 <<<"$l1"
IFS="|" read -r n2 f2 _ <<<"$l2"
assert_eq "$job $job" "$n1 $n2" "REDLOCK_NAME"
assert_eq 7000 "$ttl1" "REDLOCK_TTL_MS"
assert_eq unset "$once1" "REDLOCK_ONCE without --once"
if assert_int "$f1" "REDLOCK_FENCE" && assert_int "$f2" "REDLOCK_FENCE"; then
    [ "$f2" -gt "$f1" ] || fail "fence did not increase: $f1 then $f2"
    [ "$f1" -ge 1 ] || fail "fence $f1 < 1"
fi
assert_eq "$f2" "$(R S GET "$(k_fence $job)")" "fence key"
assert_hash S "$(k_state $job)" fence "$f2"

# ---------------------------------------------------------------------------
t "one --limit per NAME: a run with another N while a slot is held is refused (78), naming both"
# Issue 28, 5: a host with --limit 2 and one without held the same NAME at
# once (saw it fail without the fix: both ran beside the --limit 3 holder).
job=onelimit
bg "$TMP/lim3" "$RR_BIN" -r "$U" --limit 3 "$job" -- sh -c 'touch "$1"; sleep 5' sh "$TMP/lim3.started"
w=$BG
wait_for 10 file_there "$TMP/lim3.started" || fail "the --limit 3 holder did not start"
assert_hash S "$(k_state $job)" limit 3
rr -r "$U" --limit 2 "$job" -- touch "$TMP/lim2.ran"
assert_rc 78 "--limit 2 beside a --limit 3 holder"
assert_contains "$(cat "$ERR")" "this run's --limit 2 differs from the --limit 3 its holders were admitted with" "message"
assert_no_file "$TMP/lim2.ran" "marker of --limit 2"
rr -r "$U" "$job" -- touch "$TMP/lim1.ran"
assert_rc 78 "no --limit beside a --limit 3 holder (slot 1 is held)"
assert_contains "$(cat "$ERR")" "this run's --limit 1 differs from the --limit 3" "message"
assert_no_file "$TMP/lim1.ran" "marker without --limit"
rr -r "$U" --limit 3 "$job" -- touch "$TMP/lim3b.ran"
assert_rc 0 "the same --limit 3: admitted"
kill_wait TERM "$w" 10
# No slot held: another N is admitted, and becomes the NAME's N.
rr -r "$U" --limit 2 "$job" -- true
assert_rc 0 "--limit 2 once no slot is held"
assert_hash S "$(k_state $job)" limit 2
# A plain holder in slot 1 keeps a --limit run out of slots 2..N.
bg "$TMP/lim1h" "$RR_BIN" -r "$U" "$job" -- sh -c 'touch "$1"; sleep 5' sh "$TMP/lim1h.started"
w=$BG
wait_for 10 file_there "$TMP/lim1h.started" || fail "the plain holder did not start"
rr -r "$U" --limit 3 "$job" -- touch "$TMP/lim3c.ran"
assert_rc 78 "--limit 3 beside a plain holder"
assert_contains "$(cat "$ERR")" "this run's --limit 3 differs from the --limit 1" "message"
assert_no_file "$TMP/lim3c.ran" "marker"
kill_wait TERM "$w" 10

t "usage errors: 64, one line on stderr, no child, nothing in Redis"
start_redis FRESH || fail "cannot start the fresh server"
F=$FRESH_URL
mk=$TMP/usage.ran
long=$(printf 'n%.0s' $(seq 201))
cases=(
    ""
    "-r $F"
    "-r $F job"
    "-r $F --no-such-option job -- touch $mk"
    "-r http://127.0.0.1:1 job -- touch $mk"
    "-r redis://127.0.0.1:99999 job -- touch $mk"
    "-r redis://127.0.0.1:notaport job -- touch $mk"
    "-r unix:// job -- touch $mk"
    "-r $F -t 5x job -- touch $mk"
    "-r $F -t abc job -- touch $mk"
    "-r $F -t -1s job -- touch $mk"
    "-r $F -w forever job -- touch $mk"
    "-r $F --max-runtime 1q job -- touch $mk"
    "-r $F --kill-after zz job -- touch $mk"
    "-r $F --renew 1x job -- touch $mk"
    "-r $F --min-hold nope job -- touch $mk"
    "-r $F --connect-timeout x job -- touch $mk"
    "-r $F --redis-timeout x job -- touch $mk"
    "-r $F -E abc job -- touch $mk"
    "-r $F -E 300 job -- touch $mk"
    "-r $F --on-stale maybe job -- touch $mk"
    "-r $F --log-format xml job -- touch $mk"
    "-r $F --password-file $TMP/no-such-password-file job -- touch $mk"
    "-r $F --resolve bogus job"
    "-r $F a{b -- touch $mk"
    "-r $F $long -- touch $mk"
)
bad=0
for c in "${cases[@]}"; do
    # shellcheck disable=SC2086  # word splitting is the point here
    rr $c
    lines=$(grep -c . "$ERR")
    if [ "$HUNG" = 1 ] || [ "$RC" != 64 ] || [ "$lines" != 1 ]; then
        bad=$((bad + 1))
        fail "redlock-run $c: exit $RC (hung $HUNG), $lines stderr lines: $(head -c 200 "$ERR" | tr '\n' ' ')"
    fi
done
# Arguments that need quoting.
for c in "a b" "" "$(printf 'a\tb')"; do
    rr -r "$F" "$c" -- touch "$mk"
    lines=$(grep -c . "$ERR")
    if [ "$HUNG" = 1 ] || [ "$RC" != 64 ] || [ "$lines" != 1 ]; then
        fail "redlock-run -r URL '$c' -- touch: exit $RC, $lines stderr lines"
    fi
done
rr -r "$F" --once '' job -- touch "$mk"
[ "$RC" = 64 ] || fail "--once '': exit $RC"
rr -r "$F" --once 'a b' job -- touch "$mk"
[ "$RC" = 64 ] || fail "--once 'a b': exit $RC"
note "$(( ${#cases[@]} + 5 )) usage cases, $bad of the first ${#cases[@]} wrong"
assert_no_file "$mk" "marker"
assert_eq 0 "$(R FRESH DBSIZE)" "keys in the fresh server"

t "--help and --version exit 0"
rr --help
assert_rc 0 "--help"
assert_contains "$(cat "$OUT")" "--ttl" "--help output"
rr --version
assert_rc 0 "--version"
[ -s "$OUT" ] || fail "--version printed nothing"

done_testing
