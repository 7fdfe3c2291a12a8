#!/usr/bin/env bash
# t_redlock.sh — the Redlock quorum over 3 and 5 real redis-server masters:
# every pattern of pre-held masters, masters killed, a master paused,
# a majority down.
# run.sh: early (one of the longest: started first, so that the pool ends together)
# shellcheck disable=SC2016,SC2153  # child commands; NAME_URL etc. come from start_redis
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

NAMES=()
for i in 1 2 3 4 5; do
    if start_redis "M$i"; then
        NAMES+=("M$i")
    else
        t "start 5 redis servers"; fail "cannot start M$i"; done_testing; exit 1
    fi
done

# urls N — the -r options for the first N masters.
urls() {
    local i v
    for ((i = 1; i <= $1; i++)); do
        v="M${i}_URL"
        printf -- '-r\n%s\n' "${!v}"
    done
}

popcount() {
    local n=$1 c=0
    while [ "$n" -gt 0 ]; do c=$((c + (n & 1))); n=$((n >> 1)); done
    echo "$c"
}

# --- every mask of pre-held masters -------------------------------------------
for n in 3 5; do
    mapfile -t ropts < <(urls "$n")
    quorum=$((n / 2 + 1))
    t "$n masters: every pattern of masters already held by someone else"
    wrong=0
    for ((mask = 0; mask < (1 << n); mask++)); do
        job="rl$n-m$mask"
        for ((i = 0; i < n; i++)); do
            if (( mask & (1 << i) )); then
                R "M$((i + 1))" SET "$(k_lock "$job")" foreign-value PX 60000 >/dev/null
            fi
        done
        free=$((n - $(popcount "$mask")))
        mark=$TMP/$job.ran
        rr "${ropts[@]}" "$job" -- sh -c 'echo "$REDLOCK_FENCE" > "$1"' sh "$mark"
        if [ "$free" -ge "$quorum" ]; then want=0; else want=75; fi
        if [ "$HUNG" = 1 ] || [ "$RC" != "$want" ]; then
            fail "mask $mask ($free of $n free): exit $RC (hung $HUNG), expected $want"
            wrong=$((wrong + 1))
        fi
        if [ "$want" = 0 ]; then
            if [ -e "$mark" ]; then
                f=$(cat "$mark")
                [ "$f" -ge 1 ] 2>/dev/null || fail "mask $mask: REDLOCK_FENCE '$f' is not >= 1"
            else
                fail "mask $mask: the child did not run"
            fi
        elif [ -e "$mark" ]; then
            fail "mask $mask: the child ran without a quorum"
        fi
        # No master keeps our token; foreign values are untouched.
        for ((i = 0; i < n; i++)); do
            v=$(R "M$((i + 1))" GET "$(k_lock "$job")")
            if (( mask & (1 << i) )); then
                [ "$v" = foreign-value ] || fail "mask $mask: master $((i + 1)) foreign lock became '$v'"
                p=$(R "M$((i + 1))" PTTL "$(k_lock "$job")")
                [ "$p" -gt 50000 ] 2>/dev/null || fail "mask $mask: master $((i + 1)) foreign PTTL changed to $p"
            else
                [ -z "$v" ] || fail "mask $mask: master $((i + 1)) still holds '$v'"
            fi
        done
    done
    note "$n masters: $((1 << n)) patterns, $wrong with a wrong exit status"
done

# --- fence is the maximum over the quorum --------------------------------------
t "5 masters: REDLOCK_FENCE is at least every master's fence"
job=rlfence
R M1 SET "$(k_fence $job)" 41 >/dev/null
R M4 SET "$(k_fence $job)" 7 >/dev/null
mapfile -t ropts < <(urls 5)
rr "${ropts[@]}" "$job" -- sh -c 'echo "$REDLOCK_FENCE" > "$1"' sh "$TMP/rlfence"
assert_rc 0
f=$(cat "$TMP/rlfence" 2>/dev/null)
if assert_int "$f" "REDLOCK_FENCE"; then
    [ "$f" -ge 42 ] || fail "REDLOCK_FENCE $f is below master 1's fence + 1 (42)"
fi
for m in M1 M2 M3 M4 M5; do assert_key_gone "$m" "$(k_lock $job)"; done

# release_waits RR JOB HOLDER DIR — --release (through RR: rr or rr_direct)
# of JOB, held by HOLDER, a 3-master run of ropts: it waits for the holder
# to stop at its next renewal (79) and says it released the lock, never that
# a new run holds it; then DIR/stop ends the holder's loop if it lingers.
release_waits() {
    "$1" "${ropts[@]}" --release "$2"
    assert_rc 0 "--release"
    assert_not_contains "$(cat "$OUT" "$ERR")" "a new run holds it"
    assert_contains "$(cat "$OUT" "$ERR")" "released it"
    wait_pid "$3" 10
    assert_eq 79 "$RC" "the revoked holder's status"
    touch "$4/stop"
}

t "3 masters: --status, the history and every master's records show the fence the command was given; --release waits for that holder"
# Each master draws its own fence; the command gets the quorum's largest,
# and the masters that drew less were raised to it. Their records kept
# their own draw: --status showed another fence than REDLOCK_FENCE, and
# --release, polling, took the second master's record for a new run's and
# said at once "a new run holds it now" while the holder still ran.
job=rlsame d=$TMP/rlsame
mkdir -p "$d"
R M2 SET "$(k_fence $job)" 1900000000000 >/dev/null
mapfile -t ropts < <(urls 3)
bg "$d/h" "$RR_BIN" "${ropts[@]}" -t 6s --once d1 "$job" -- sh -c \
    'echo "$REDLOCK_FENCE" > "$1"; i=0; while [ ! -e "$2" ] && [ $i -lt 300 ]; do sleep 0.05; i=$((i+1)); done' \
    sh "$d/fence" "$d/stop"
h=$BG
wait_for 10 test -s "$d/fence" || fail "the holder did not start"
f=$(cat "$d/fence" 2>/dev/null)
assert_eq 1900000000001 "$f" "REDLOCK_FENCE (master 2's draw, the largest)"
for m in M1 M2 M3; do
    assert_eq "$f" "$(hget "$m" "$(k_state $job)" fence)" "the state record's fence on $m"
    assert_eq "$f" "$(hget "$m" "redlock:{$job}:once:d1" fence)" "the --once record's fence on $m"
done
rr "${ropts[@]}" --status "$job"
assert_contains "$(cat "$OUT")" "(fence $f)" "--status of the holder"
# --release: the holder is revoked; it stops at its next renewal (2 s),
# and --release waits for that, then says the holder released it.
release_waits rr "$job" "$h" "$d"
end_test

t "3 masters, one answering after the quorum: it is given the command's fence; --release waits for the holder, not 'a new run holds it'"
# Without --once the run starts on a quorum's answers; the third master,
# paused, answers later with its own draw of the fence. --release polled
# its record and took it for a new run's (another fence): it said at once
# "a new run holds it now" while the revoked holder ran on. A run is its
# host and pid; and the late master is now given the command's fence.
job=rllate d=$TMP/rllate
mkdir -p "$d"
R M2 SET "$(k_fence $job)" 1900000000000 >/dev/null
R M3 CLIENT PAUSE 400 WRITE >/dev/null
mapfile -t ropts < <(urls 3)
bg "$d/h" "$RR_BIN" "${ropts[@]}" -t 6s "$job" -- sh -c \
    'echo "$REDLOCK_FENCE" > "$1"; i=0; while [ ! -e "$2" ] && [ $i -lt 300 ]; do sleep 0.05; i=$((i+1)); done' \
    sh "$d/fence" "$d/stop"
h=$BG
wait_for 10 test -s "$d/fence" || fail "the holder did not start"
m3() { [ "$(hget M3 "$(k_state $job)" pid)" = "$h" ]; }
wait_for 5 m3 || fail "the paused master never recorded the holder"
# Its answer came after the decision; it is then given the command's
# fence, as the quorum's masters were: its record shows that fence too.
f=$(cat "$d/fence")
m3_fenced() { [ "$(hget M3 "$(k_state $job)" fence)" = "$f" ]; }
wait_for 5 m3_fenced ||
    fail "M3's record keeps its own fence $(hget M3 "$(k_state $job)" fence), the command's is $f"
c3=$(R M3 GET "$(k_fence $job)")
[ "$c3" -ge "$f" ] 2>/dev/null || fail "M3's fence counter $c3 is below the command's fence $f"
release_waits rr_direct "$job" "$h" "$d"
end_test

# --- masters down ---------------------------------------------------------------
t "3 masters: a failed --once attempt is refused on every master; a master restarted empty does not bring it back"
# Issue 28, 1 with a quorum: the count is in each master's once record,
# and a refusal on any master wins while none has a holder.
mapfile -t ropts < <(urls 3)
job=rlspent
rr "${ropts[@]}" --once a1 "$job" -- sh -c 'echo ran >> "$1"; exit 1' sh "$TMP/rlspent.count"
assert_rc 1 "the failed attempt"
for m in M1 M2 M3; do assert_hash "$m" "$(k_once $job a1)" attempts 1; done
restart_redis M3 || fail "cannot restart M3"
rr "${ropts[@]}" --once a1 "$job" -- sh -c 'echo ran >> "$1"' sh "$TMP/rlspent.count"
assert_rc 65 "after M3 lost its records"
assert_contains "$(cat "$ERR")" "has used 1 of 1 attempt: the last one failed (exit 1)" "the refusal"
assert_eq 1 "$(count_lines "$TMP/rlspent.count")" "times the command ran"
rr "${ropts[@]}" --resolve retry --once a1 "$job"
assert_rc 0 "--resolve retry on the quorum"
rr "${ropts[@]}" --once a1 "$job" -- sh -c 'echo ran >> "$1"' sh "$TMP/rlspent.count"
assert_rc 0 "the allowed attempt"
assert_eq 2 "$(count_lines "$TMP/rlspent.count")" "times the command ran"

t "3 masters, 1 killed: still runs"
mapfile -t ropts < <(urls 3)
stop_redis M3
rr "${ropts[@]}" rl3down1 -- touch "$TMP/rl3down1.ran"
assert_rc 0
assert_file_exists "$TMP/rl3down1.ran" "marker"
assert_key_gone M1 "$(k_lock rl3down1)"
assert_key_gone M2 "$(k_lock rl3down1)"
assert_hash M1 "$(k_state rl3down1)" status succeeded
restart_redis M3 || fail "cannot restart M3"

t "5 masters, 2 killed: still runs"
mapfile -t ropts < <(urls 5)
stop_redis M2
stop_redis M5
rr "${ropts[@]}" rl5down2 -- touch "$TMP/rl5down2.ran"
assert_rc 0
assert_file_exists "$TMP/rl5down2.ran" "marker"
for m in M1 M3 M4; do assert_key_gone "$m" "$(k_lock rl5down2)"; done

t "5 masters, 3 killed: 69, child never ran"
stop_redis M4
rr "${ropts[@]}" rl5down3 -- touch "$TMP/rl5down3.ran"
assert_rc 69
assert_contains "$(cat "$ERR")" "no quorum, 3 of the 5 masters failed (a quorum needs 3): " "the message"
assert_no_file "$TMP/rl5down3.ran" "marker"
for m in M1 M3; do assert_key_gone "$m" "$(k_lock rl5down3)"; done
restart_redis M2 || fail "cannot restart M2"
restart_redis M4 || fail "cannot restart M4"
restart_redis M5 || fail "cannot restart M5"

t "3 masters, 2 killed: 69, child never ran"
mapfile -t ropts < <(urls 3)
stop_redis M1
stop_redis M2
rr "${ropts[@]}" rl3down2 -- touch "$TMP/rl3down2.ran"
assert_rc 69
assert_no_file "$TMP/rl3down2.ran" "marker"
assert_key_gone M3 "$(k_lock rl3down2)"
restart_redis M1 || fail "cannot restart M1"
restart_redis M2 || fail "cannot restart M2"

t "3 masters, 1 paused (SIGSTOP): still runs"
mapfile -t ropts < <(urls 3)
pause_redis M2
rr_direct "${ropts[@]}" --redis-timeout 300ms rl3paused -- sh -c 'touch "$1"; sleep 1' sh "$TMP/rl3paused.ran"
resume_redis M2
assert_rc 0
assert_lt "$ELAPSED_MS" 6000 "run time (ms)"
assert_file_exists "$TMP/rl3paused.ran" "marker"
assert_key_gone M1 "$(k_lock rl3paused)"
assert_key_gone M3 "$(k_lock rl3paused)"
# M2 may still execute the requests it queued while paused (a late acquire
# is the known Redlock artifact); it then expires by itself, so M2 is not
# checked here.

t "3 masters, 1 paused: the command starts on the quorum's answers, and -q still says the quorum was degraded"
# The round is decided once 2 OK are in (no --once, no refusal of stale
# records: nothing the third can say would change it), so the command does
# not wait for the paused master's --redis-timeout; that master's failure,
# known later, still gets the warning of a degraded quorum and the record.
mapfile -t ropts < <(urls 3)
pause_redis M2
t0=$(now_ms)
rr_direct "${ropts[@]}" -q --redis-timeout 3s rl3early -- sh -c 'date +%s%3N >"$1"; sleep 4' sh "$TMP/rl3early.t"
resume_redis M2
assert_rc 0
assert_file_exists "$TMP/rl3early.t" "marker"
started=$(( $(cat "$TMP/rl3early.t") - t0 ))
assert_lt "$started" 2500 "ms from the start to the command's (M2 answers after 3000)"
assert_contains "$(cat "$ERR")" "acquired on 2 of 3 masters"
assert_contains "$(cat "$ERR")" "127.0.0.1:$M2_PORT"
rr_direct "${ropts[@]}" --status rl3early
assert_contains "$(cat "$OUT")" "the run reached 2 of 3 masters (a degraded quorum)"
end_test

t "3 masters, 1 down while running: renewals keep the quorum"
mapfile -t ropts < <(urls 3)
bg "$TMP/rl3mid" "$RR_BIN" "${ropts[@]}" -t 1s rl3mid -- sh -c 'touch "$1"; sleep 2.5; touch "$2"' sh "$TMP/rl3mid.started" "$TMP/rl3mid.done"
w=$BG
wait_for 10 file_there "$TMP/rl3mid.started" || fail "child did not start"
stop_redis M3
wait_pid "$w" 15
assert_rc 0
assert_file_exists "$TMP/rl3mid.done" "child's end marker"
assert_key_gone M1 "$(k_lock rl3mid)"
assert_key_gone M2 "$(k_lock rl3mid)"
restart_redis M3 || fail "cannot restart M3"

t "3 masters, 2 down while running: lock lost, 79"
bg "$TMP/rl3lost" "$RR_BIN" "${ropts[@]}" -t 1s --redis-timeout 200ms rl3lost -- sh -c 'touch "$1"; sleep 6; touch "$2"' sh "$TMP/rl3lost.started" "$TMP/rl3lost.done"
w=$BG
wait_for 10 file_there "$TMP/rl3lost.started" || fail "child did not start"
stop_redis M2
stop_redis M3
wait_pid "$w" 10
assert_rc 79
assert_lt "$ELAPSED_MS" 4000 "time to stop the child (ms)"
assert_no_file "$TMP/rl3lost.done" "child's end marker"
restart_redis M2 || fail "cannot restart M2"
restart_redis M3 || fail "cannot restart M3"

t "3 masters: a partial acquisition given back leaves the previous run's record"
job=partial
mapfile -t ropts < <(urls 3)
rr "${ropts[@]}" "$job" -- true
assert_rc 0 "first run"
R M2 SET "$(k_lock $job)" foreign PX 60000 >/dev/null
R M3 SET "$(k_lock $job)" foreign PX 60000 >/dev/null
rr "${ropts[@]}" "$job" -- touch "$TMP/partial.ran"
assert_rc 75 "second run"
assert_no_file "$TMP/partial.ran"
# M1 granted the lock, wrote 'running', then got it back: the first run's
# record is there again, not a hole (found in review).
assert_key_gone M1 "$(k_lock $job)"
assert_hash M1 "$(k_state $job)" status succeeded
assert_eq "" "$(hget M1 "$(k_state $job)" prev)" "no saved copy left behind"
R M2 DEL "$(k_lock $job)" >/dev/null
R M3 DEL "$(k_lock $job)" >/dev/null
rr "${ropts[@]}" "$job" -- true
assert_rc 0 "third run"
assert_eq "" "$(hget M1 "$(k_state $job)" prev)" "no saved copy after a finished run"
end_test

# minority_loss JOB [--once ID] — a holder runs on 3 masters; M1 loses the
# lock key (a restart without persistence, an expiry while partitioned); a
# contender with the same options must get 75 and leave M1's records as
# they were: the run is alive on the quorum. The contender used to mark the
# live run 'abandoned' on M1, with a history entry (found in review).
minority_loss() {
    local job=$1; shift
    local dir=$TMP/$job tok h
    mkdir -p "$dir"
    bg "$dir/holder" "$RR_BIN" -r "$M1_URL" -r "$M2_URL" -r "$M3_URL" -t 3s "$@" "$job" -- \
        sh -c 'touch "$1"; i=0; while [ ! -e "$2" ] && [ $i -lt 300 ]; do sleep 0.05; i=$((i+1)); done' \
        sh "$dir/started" "$dir/stop"
    h=$BG
    wait_for 10 file_there "$dir/started" || fail "the holder did not start"
    tok=$(R M2 GET "$(k_lock "$job")")
    [ -n "$tok" ] || fail "no lock on M2"
    R M1 DEL "$(k_lock "$job")" >/dev/null
    rr_direct -r "$M1_URL" -r "$M2_URL" -r "$M3_URL" -t 3s "$@" "$job" -- touch "$dir/contender.ran"
    assert_rc 75 "contender"
    assert_no_file "$dir/contender.ran" "contender's marker"
    assert_key_gone M1 "$(k_lock "$job")" "M1 lock"
    assert_eq 0 "$(R M1 XRANGE "$(k_hist "$job")" - + | grep -cx abandoned)" "abandoned entries in M1's history"
    assert_hash M1 "$(k_state "$job")" status running
    assert_hash M1 "$(k_state "$job")" token "$tok"
    if [ "$1" = --once ]; then
        assert_hash M1 "$(k_once "$job" "$2")" status running
        assert_hash M1 "$(k_once "$job" "$2")" token "$tok"
    fi
    touch "$dir/stop"
    wait_pid "$h" 15
    assert_rc 0 "holder"
    for m in M1 M2 M3; do
        assert_hash "$m" "$(k_state "$job")" status succeeded
        assert_key_gone "$m" "$(k_lock "$job")"
        assert_eq 0 "$(R "$m" XRANGE "$(k_hist "$job")" - + | grep -cx abandoned)" "abandoned entries in $m's history"
    done
}

t "3 masters, one lost the key of a live run: a contender leaves no false 'abandoned' (OK path)"
minority_loss minority-run
end_test

t "3 masters, one lost the key of a live run: a --once contender leaves no false 'abandoned' (STALE path)"
minority_loss minority-once --once m1
end_test

t "3 masters, 1 stalled (SIGSTOP) for the whole run: renewals do not wait for it"
# Each renewal is answered as soon as a quorum has; before that fix, every
# renewal waited --redis-timeout for the stalled master and a 4 s lease
# renewed every 2 s was lost (found in review).
job=stall
pause_redis M3
rr_direct -r "$M1_URL" -r "$M2_URL" -r "$M3_URL" -t 4s --renew 2s --redis-timeout 1s \
    "$job" -- sh -c 'sleep 5; touch "$1"' sh "$TMP/stall.done"
resume_redis M3
assert_rc 0
assert_file_exists "$TMP/stall.done" "child's end marker"
end_test

# --- a degraded quorum (issue 19, point 4) -------------------------------------
# Two masters take our password, the third has another one.
start_redis D1 --requirepass dgpw
start_redis D2 --requirepass dgpw
start_redis D3 --requirepass other-pw
DU="$D1_URL,$D2_URL,$D3_URL"
D3_WHY="127.0.0.1:$D3_PORT refused our password (WRONGPASS)"

t "a degraded quorum: runs, and -q still prints one line that names the master and why"
REDLOCK_PASSWORD=dgpw rr -q -r "$DU" --metrics-file "$TMP/dg.prom" dg -- touch "$TMP/dg.ran"
assert_rc 0
assert_file_exists "$TMP/dg.ran" "marker"
assert_eq "$(wc -l <"$ERR")" 1 "lines on stderr"
assert_contains "$(cat "$ERR")" "acquired on 2 of 3 masters"
assert_contains "$(cat "$ERR")" "$D3_WHY"
end_test

t "a degraded quorum: the JSON acquired event is a warning with the failed masters"
REDLOCK_PASSWORD=dgpw rr -q --log-format json -r "$DU" dg -- true
assert_rc 0
assert_contains "$(cat "$ERR")" '"level":"warn","job":"dg","event":"acquired"'
assert_contains "$(cat "$ERR")" '"masters":2,"masters_total":3,"degraded":1'
assert_contains "$(cat "$ERR")" "\"failed_masters\":\"$D3_WHY\""
end_test

t "a degraded quorum: --status and the metrics file say so"
REDLOCK_PASSWORD=dgpw rr -r "$DU" --status dg
assert_rc 0
assert_contains "$(cat "$OUT")" "the run reached 2 of 3 masters (a degraded quorum): $D3_WHY"
REDLOCK_PASSWORD=dgpw rr -r "$DU" --status --json dg
assert_contains "$(cat "$OUT")" '"masters_ok":2,"masters_total":3'
assert_contains "$(cat "$TMP/dg.prom")" 'redlock_run_masters{lock="dg"} 3'
assert_contains "$(cat "$TMP/dg.prom")" 'redlock_run_masters_reachable{lock="dg"} 2'
PROMTOOL=$(command -v promtool || echo "$TOP/build/tools/promtool")
if [ -x "$PROMTOOL" ]; then
    "$PROMTOOL" check metrics <"$TMP/dg.prom" >"$TMP/promtool.out" 2>&1 ||
        fail "promtool: $(cat "$TMP/promtool.out")"
fi
end_test

t "a second master down as well: 69, and the message still names the refused password"
stop_redis D2
REDLOCK_PASSWORD=dgpw rr -r "$DU" dg -- touch "$TMP/dg2.ran"
assert_rc 69
assert_no_file "$TMP/dg2.ran" "marker"
assert_contains "$(cat "$ERR")" "no quorum, 2 of the 3 masters failed (a quorum needs 2)"
assert_contains "$(cat "$ERR")" "$D3_WHY"
assert_contains "$(cat "$ERR")" "cannot connect to 127.0.0.1:$D2_PORT"
restart_redis D2 || fail "cannot restart D2"
end_test

t "refusals alone leave no quorum: 78 at once, even with --wait, every master named"
REDLOCK_PASSWORD=other-pw rr -r "$DU" -w 30s dg -- touch "$TMP/dg3.ran"
assert_rc 78
assert_lt "$ELAPSED_MS" 3000
assert_no_file "$TMP/dg3.ran" "marker"
assert_contains "$(cat "$ERR")" "no quorum, 2 of the 3 masters refused our configuration"
assert_contains "$(cat "$ERR")" "127.0.0.1:$D1_PORT refused our password (WRONGPASS)"
assert_contains "$(cat "$ERR")" "127.0.0.1:$D2_PORT refused our password (WRONGPASS)"
assert_contains "$(cat "$ERR")" "check REDLOCK_USER and the password"
end_test

t "one server under two URLs (its TCP port and its unix socket): 78 naming both, nothing run (issue 28, 6)"
# The static check cannot tell a unix socket from a TCP port of the same
# server; INFO server's run_id can. --once waits for every master's
# answer, so the twin is always seen before the count (saw it run, exit 0,
# before the run_id check).
R M1 FLUSHALL >/dev/null
R M2 FLUSHALL >/dev/null
twin=(-r "$M1_URL" -r "$M1_SOCKURL" -r "$M2_URL")
rr_direct "${twin[@]}" --once t1 rltwin -- touch "$TMP/rltwin.ran"
assert_rc 78
assert_contains "$(cat "$ERR")" "127.0.0.1:$M1_PORT and $M1_SOCK are the same Redis server"
assert_no_file "$TMP/rltwin.ran" "marker"
assert_key_gone M1 "$(k_lock rltwin)"
assert_key_gone M2 "$(k_lock rltwin)"
assert_key_gone M1 "$(k_once rltwin t1)" "the once record (no attempt used):"
rr_direct "${twin[@]}" -w 20s --once t1 rltwin -- touch "$TMP/rltwin.ran"
assert_rc 78 "with --wait: retrying cannot help"
assert_lt "$ELAPSED_MS" 5000 "ms"
# Distinct servers, one URL each: as before.
rr_direct -r "$M1_SOCKURL" -r "$M2_URL" -r "$M3_URL" --once t1 rltwin -- touch "$TMP/rltwin.ran"
assert_rc 0 "three servers"
assert_file_exists "$TMP/rltwin.ran" "marker"
end_test

t "one server under two URLs, without --once: refused, or its renewals are no vote"
# Without --once a quorum of OK decides before the slowest master: when the
# other two servers' answers come before the twin's, the run holds a
# quorum of separate servers, warns with both URLs, and the twin never
# votes: losing the other server loses the lock (before the run_id check
# the twin's renewals made a quorum with its own server, and the run went
# on with one live server of two).
R M1 FLUSHALL >/dev/null
R M2 FLUSHALL >/dev/null
rm -f "$TMP/rltwin2.started"
bg "$TMP/rltwin2" "$RR_BIN" -q -t 1500ms "${twin[@]}" rltwin2 -- sh -c 'touch "$1"; sleep 8' sh "$TMP/rltwin2.started"
w=$BG
started_or_gone() { [ -e "$1" ] || pid_gone "$2"; }
wait_for 10 started_or_gone "$TMP/rltwin2.started" "$w" || true
if [ -e "$TMP/rltwin2.started" ]; then
    note "the quorum came first: the run goes on on two separate servers"
    stop_redis M2
    wait_pid "$w" 15
    assert_rc 79 "the other server gone: no quorum of servers is left"
    assert_contains "$(cat "$TMP/rltwin2.err")" "127.0.0.1:$M1_PORT and $M1_SOCK are the same Redis server"
    restart_redis M2 || fail "cannot restart M2"
else
    wait_pid "$w" 15
    assert_rc 78 "refused"
    assert_contains "$(cat "$TMP/rltwin2.err")" "127.0.0.1:$M1_PORT and $M1_SOCK are the same Redis server"
fi
end_test

done_testing
