#!/usr/bin/env bash
# t_health.sh — the job's health, told truly (issue 34): a hung run shows
# (the busy message, --status and --list say for how long (since when) the
# holder has held the lock; --status --max-age --warn-held DUR warns past DUR); a NAME or
# --once ID that never ran is not healthy (exit 4, "did you mean");
# --status --max-age is OK only when no --once ID of the job is unsettled,
# and --list (--json) gives the same status_code as --status NAME.
# shellcheck disable=SC2016,SC2153  # child commands; NAME_URL etc. come from start_redis
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

start_redis S || { t "start redis"; fail "cannot start redis-server"; done_testing; exit 1; }
U=$S_URL

# jget FILE EXPR — a Python expression on the JSON in FILE (as j).
jget() {
    "$PY" - "$1" "$2" <<'EOF'
import json, sys
try:
    j = json.load(open(sys.argv[1]))
    v = eval(sys.argv[2], {"j": j})
except Exception as e:
    print("INVALID: %s" % e); sys.exit(0)
print(v if isinstance(v, str) else json.dumps(v))
EOF
}

# list_code NAME — the status_code --list --json gives NAME.
list_code() {
    rr -r "$U" --list --json
    "$PY" - "$OUT" "$1" <<'EOF'
import json, sys
for line in open(sys.argv[1]):
    j = json.loads(line)
    if j.get("name") == sys.argv[2]:
        print(j["status_code"])
EOF
}

# ---------------------------------------------------------------------------
t "a hung run shows: --status says for how long it has held the lock; --warn-held warns past it"
job=hung
bg "$TMP/hung" "$RR_BIN" -r "$U" -t 2s "$job" -- sh -c 'touch "$1"; sleep 30' sh "$TMP/hung.started"
w=$BG
wait_for 10 file_there "$TMP/hung.started" || fail "child did not start"
rr -r "$U" hung-ok -- true   # a success of another job, for --list below
sleep 3
fence=$(R S GET "$(k_fence $job)")
rr -r "$U" --status "$job"
assert_rc 1 "held"
assert_contains "$(cat "$OUT")" "held by $(hostname) pid $w (fence $fence) since "
assert_contains "$(cat "$OUT")" " (held for " "how long it has held it, not only the lease left"
rr -r "$U" "$job" -- true
assert_rc 75 "busy"
assert_contains "$(cat "$ERR")" "not running: lock is held by $(hostname) pid $w (fence $fence) for " "the busy message says for how long"
rr -r "$U" -w 300ms "$job" -- true
assert_rc 75 "busy after --wait"
assert_contains "$(cat "$ERR")" "waiting up to 300ms for $job: held by $(hostname) pid $w (fence $fence) for "
assert_contains "$(cat "$ERR")" "gave up waiting: lock is held by $(hostname) pid $w (fence $fence) for "
rr -r "$U" --status --max-age 25h --warn-held 2s "$job"
assert_rc 2 "never succeeded: CRITICAL, and the hung holder named"
assert_contains "$(cat "$OUT")" "REDLOCK CRITICAL - hung held "
assert_contains "$(cat "$OUT")" "s by $(hostname) (fence $fence), more than --warn-held 2s; never succeeded"
# The same job with an earlier success: WARNING, not OK.
R S HSET "$(k_state $job)" last_success_ms "$(( $(now_ms) - 3600000 ))" >/dev/null
rr -r "$U" --status --max-age 25h --warn-held 2s "$job"
assert_rc 1 "held past --warn-held: WARNING"
assert_contains "$(cat "$OUT")" "REDLOCK WARNING - hung held "
assert_contains "$(cat "$OUT")" "more than --warn-held 2s; succeeded 1h"
rr -r "$U" --status --max-age 25h --warn-held 1h "$job"
assert_rc 0 "held within --warn-held: OK"
assert_contains "$(cat "$OUT")" "REDLOCK OK - hung running now; succeeded 1h"
rr -r "$U" --status --max-age 25h "$job"
assert_rc 0 "no --warn-held: no bound"
rr -r "$U" --list --json
assert_contains "$(cat "$OUT")" "\"fence\":$fence,\"ttl_ms\":"
assert_contains "$(cat "$OUT")" "\"since_ms\":"
rr -r "$U" --warn-held 2s "$job" -- true
assert_rc 64 "--warn-held without --status --max-age"
assert_contains "$(cat "$ERR")" "--warn-held works only with --status --max-age"
rr -r "$U" --status --max-age 25h --warn-held 0 "$job"
assert_rc 3 "--warn-held 0: a bad check line is UNKNOWN"
kill_wait TERM "$w" 10
end_test

t "a NAME that never ran exits 4 and names the closest job there is"
rr -r "$U" settle -- true
assert_rc 0 "the run"
rr -r "$U" --status setle
assert_rc 4 "a typo of a NAME"
assert_contains "$(cat "$OUT")" "never ran (no record under redlock:{setle}:state)"
assert_contains "$(cat "$OUT")" "did you mean settle? redlock-run -r $U --status settle"
rr -r "$U" --status --json setle
assert_rc 4 "--json agrees"
cp "$OUT" "$TMP/near.json"
assert_eq settle "$(jget "$TMP/near.json" 'j["did_you_mean"]')" "did_you_mean"
assert_eq 4 "$(jget "$TMP/near.json" 'j["exit_code"]')" "exit_code"
rr -r "$U" --status --max-age 25h setle
assert_rc 2 "--max-age: CRITICAL"
assert_contains "$(cat "$OUT")" "REDLOCK CRITICAL - setle never ran (no record under redlock:{setle}:state); did you mean settle?"
rr -r "$U" --status zzzzzzzzzz
assert_rc 4 "nothing close"
assert_not_contains "$(cat "$OUT")" "did you mean"
# The command to paste is quoted for the shell; a short name is never
# "close" to a name it shares no letter with.
rr -r "$U" 'pay$day' -- true
rr -r "$U" --status 'pay-day'
assert_contains "$(cat "$OUT")" "did you mean pay\$day? redlock-run -r $U --status 'pay\$day'"
rr -r "$U" a? -- true
rr -r "$U" --status nc
assert_rc 4 "a short name that never ran"
assert_not_contains "$(cat "$OUT")" "did you mean"
end_test

t "an --once ID that never ran exits 4 and names the closest ID of the job"
rr -r "$U" --once settle-2026-12-03 settle2 -- true
assert_rc 0 "the run"
rr -r "$U" --status --once settle-2026-12-3 settle2
assert_rc 4 "an ID that never ran"
assert_contains "$(cat "$OUT")" "did you mean settle-2026-12-03? redlock-run -r $U --status --once settle-2026-12-03 settle2"
rr -r "$U" --status --once settle-2026-12-03 settle2
assert_rc 0 "the ID that ran"
end_test

t "a day never settled: --status --max-age is not OK after the next day succeeds; --list agrees with --status"
job=stale
bg "$TMP/d1" "$RR_BIN" -r "$U" -t 1s --once d1 "$job" -- sh -c 'touch "$1"; sleep 30' sh "$TMP/d1.started"
w=$BG
wait_for 10 file_there "$TMP/d1.started" || fail "child did not start"
kill_wait KILL "$w" 5
wait_for 5 key_gone S "$(k_lock $job)" || fail "lease did not expire"
rr -r "$U" --once d2 "$job" -- true
assert_rc 0 "d2"
rr -r "$U" --status "$job"
assert_rc 3 "--status: d1 abandoned"
rr -r "$U" --status --max-age 25h "$job"
assert_rc 1 "the check: WARNING, not OK"
assert_contains "$(cat "$OUT")" "REDLOCK WARNING - stale --once d1 abandoned, not settled: redlock-run -r $U --status stale says how to settle it; succeeded "
assert_eq 3 "$(list_code "$job")" "--list --json status_code is what --status exits with"
rr -r "$U" --list
assert_contains "$(grep '^stale ' "$OUT")" "--once d2; not settled: --once d1 abandoned" "--list names the unsettled ID"
# A failed day is unsettled too. Plain --status exits 2 for it, as for a
# failed last run, and names it (it exited 0 and said nothing before).
rr -r "$U" --once d3 "$job" -- false
rr -r "$U" --once d4 "$job" -- true
rr -r "$U" --status --max-age 25h "$job"
assert_rc 1 "two days unsettled: WARNING"
assert_contains "$(cat "$OUT")" "2 --once IDs not settled ("
assert_contains "$(cat "$OUT")" "d3 failed"
# Settled, the check clears.
rr -r "$U" --resolve succeeded --once d1 "$job"
assert_rc 0 "resolve d1"
rr -r "$U" --status "$job"
assert_rc 2 "--status: d3 failed, not settled"
assert_contains "$(cat "$OUT")" "not settled --once d3 failed"
assert_contains "$(cat "$OUT")" "settle it with one of these, once you know what the run did:"
line=$(grep -A1 -e '- allow one more attempt:' "$OUT" | tail -1)
assert_contains "$line" "redlock-run -r $U --resolve retry --once d3 $job" "the line to paste"
assert_eq 2 "$(list_code "$job")" "--list --json status_code agrees"
# d3 used its one attempt (issue 28's budget): one more is allowed first,
# by the line --status printed, pasted as it is (it names the server).
eval "set -- $line"
assert_eq redlock-run "$1" "the pasted line's command"
shift
rr "$@"
assert_rc 0 "allow d3 one more attempt (the pasted line)"
rr -r "$U" --once d3 "$job" -- true
assert_rc 0 "d3 re-run"
rr -r "$U" --status --max-age 25h "$job"
assert_rc 0 "every day settled: OK"
assert_eq 0 "$(list_code "$job")" "--list status_code once settled"
end_test

# ---------------------------------------------------------------------------
# Metrics of the job (issue 34, 2): the alerts read the file --list
# --metrics-file writes from every job's state in Redis. Each case runs real
# jobs, copies the files they wrote after each step, and hands them to
# promtool with examples/prometheus-rules.yml.
PROMTOOL=$(command -v promtool || echo "$TOP/build/tools/promtool")
PER=10   # samples (minutes) each step's files are seen for

# export_as STEP PREFIX [faked OFFSET] — the jobs' file under PREFIX now,
# kept as step STEP's.
export_as() {
    local step=$1 prefix=$2; shift 2
    if [ $# -gt 0 ]; then
        run_limited env $(faked "$2") "$RR_BIN" -r "$U" --prefix "$prefix" --list --metrics-file "$TMP/jobs.prom"
    else
        rr -r "$U" --prefix "$prefix" --list --metrics-file "$TMP/jobs.prom"
    fi
    assert_rc 0 "--list --metrics-file, step $step"
    assert_eq "" "$(cat "$OUT")" "--list --metrics-file prints nothing"
    cp "$TMP/jobs.prom" "$TMP/$prefix-$step.prom"
    SNAPS+=("$step:mon-1:$TMP/$prefix-$step.prom")
}

# promtool_case NAME EVALS — a promtool test of the snapshots in SNAPS;
# EVALS: its alert_rule_test lines. Fails with promtool's words.
promtool_case() {
    {
        echo "rule_files: [$EX/prometheus-rules.yml]"
        echo "evaluation_interval: 1m"
        echo "tests:"
        echo "  - interval: 1m"
        echo "    input_series:"
        "$PY" "$TOP/tests/integration/prom_series.py" "$PER" "${SNAPS[@]}"
        echo "    alert_rule_test:"
        printf '%s\n' "$2"
    } >"$TMP/$1.test.yml"
    "$PROMTOOL" test rules "$TMP/$1.test.yml" >"$TMP/$1.promtool" 2>&1 ||
        fail "promtool test rules ($1): $(tail -25 "$TMP/$1.promtool")"
}
EX=$TOP/examples

# fires AT ALERT LOCK SUMMARY DESCRIPTION / quiet AT ALERT — alert_rule_test
# lines: ALERT fires at AT for LOCK alone, or not at all.
fires() {
    printf '      - eval_time: %s\n        alertname: %s\n        exp_alerts:\n' "$1" "$2"
    printf '          - exp_labels: {severity: warning, lock: %s}\n' "$3"
    printf '            exp_annotations:\n              summary: "%s"\n' "$4"
    printf '              description: "%s"\n' "$5"
}
quiet() { printf '      - eval_time: %s\n        alertname: %s\n        exp_alerts: []\n' "$1" "$2"; }
FAILED_DESC="See redlock-run --status settle (exit code, host, history)."

t "metrics of the job: host A fails, host B succeeds, A's next run is busy: the failure alert clears"
if [ ! -x "$PROMTOOL" ]; then
    skip "promtool not found (scripts/deps.sh ci takes it from Debian's prometheus package)"
else
    P=mfail:
    SNAPS=()
    # "web-1" and "web-2" are two hosts' --metrics-file files.
    rr -r "$U" --prefix $P --metrics-file "$TMP/web-1.prom" settle -- false
    assert_rc 1 "host A's run fails"
    export_as 0 $P
    cp "$TMP/web-1.prom" "$TMP/w1-0.prom"; SNAPS+=("0:web-1:$TMP/w1-0.prom")
    rr -r "$U" --prefix $P --metrics-file "$TMP/web-2.prom" settle -- true
    assert_rc 0 "host B's run succeeds"
    export_as 1 $P
    SNAPS+=("1:web-1:$TMP/w1-0.prom")
    cp "$TMP/web-2.prom" "$TMP/w2-1.prom"; SNAPS+=("1:web-2:$TMP/w2-1.prom")
    bg "$TMP/mB" "$RR_BIN" -r "$U" --prefix $P --metrics-file "$TMP/web-2.prom" settle -- \
        sh -c 'touch "$1"; sleep 2' sh "$TMP/mB.started"
    w=$BG
    wait_for 10 file_there "$TMP/mB.started" || fail "B's second run did not start"
    rr -r "$U" --prefix $P --metrics-file "$TMP/web-1.prom" settle -- true
    assert_rc 75 "host A's next run is busy"
    export_as 2 $P
    cp "$TMP/web-1.prom" "$TMP/w1-2.prom"; SNAPS+=("2:web-1:$TMP/w1-2.prom" "2:web-2:$TMP/w2-1.prom")
    wait_pid "$w" 20 || fail "B's second run did not end"
    export_as 3 $P
    cp "$TMP/web-2.prom" "$TMP/w2-3.prom"; SNAPS+=("3:web-1:$TMP/w1-2.prom" "3:web-2:$TMP/w2-3.prom")
    assert_contains "$(cat "$TMP/w1-2.prom")" 'redlock_run_last_status{lock="settle",status="failed"} 1' \
        "host A's own file still says its last run failed"
    promtool_case fail "$(fires 5m RedlockJobFailed settle "settle: the last run did not succeed" "$FAILED_DESC"
        quiet 15m RedlockJobFailed; quiet 25m RedlockJobFailed; quiet 35m RedlockJobFailed)"
    end_test
fi

t "metrics of the job: a run hung far longer than usual alerts (the jobs' file read 2h later)"
if [ ! -x "$PROMTOOL" ]; then
    skip "promtool not found (scripts/deps.sh ci takes it from Debian's prometheus package)"
elif skip_without_faketime; then
    :
else
    P=mhung:
    SNAPS=()
    for i in 0 1 2; do
        rr -r "$U" --prefix $P settle -- sleep 0.2
        assert_rc 0 "run $i"
        export_as $i $P
    done
    bg "$TMP/mH" "$RR_BIN" -r "$U" --prefix $P -t 2s settle -- sh -c 'touch "$1"; sleep 60' sh "$TMP/mH.started"
    w=$BG
    wait_for 10 file_there "$TMP/mH.started" || fail "the hung run did not start"
    export_as 3 $P
    # The exporting host's clock 2 hours on: the run has held the lock 2h.
    export_as 4 $P faked +2h
    assert_contains "$(cat "$TMP/$P-4.prom")" 'redlock_job_held_seconds{lock="settle"} 72' "held for 2h"
    kill_wait TERM "$w" 10
    # As humanizeDuration says it (whole seconds, cut): the test's own lag
    # is in the figure.
    held=$(sed -n 's/^redlock_job_held_seconds{lock="settle"} \([0-9]*\).*/\1/p' "$TMP/$P-4.prom")
    held_s="$((held / 3600))h $((held % 3600 / 60))m $((held % 60))s"
    promtool_case hung "$(quiet 35m RedlockJobHeldTooLong
        fires 45m RedlockJobHeldTooLong settle \
            "settle: the current run has held the lock for $held_s, far longer than usual" \
            "redlock-run --status settle names its host, pid and fence.")"
    end_test
fi

t "metrics of the job: a day never settled alerts after the next day succeeds, until it is resolved"
if [ ! -x "$PROMTOOL" ]; then
    skip "promtool not found (scripts/deps.sh ci takes it from Debian's prometheus package)"
else
    P=mday:
    SNAPS=()
    bg "$TMP/mD" "$RR_BIN" -r "$U" --prefix $P -t 1s --once d1 settle -- sh -c 'touch "$1"; sleep 30' sh "$TMP/mD.started"
    w=$BG
    wait_for 10 file_there "$TMP/mD.started" || fail "d1 did not start"
    kill_wait KILL "$w" 5
    wait_for 5 key_gone S "$P{settle}:lock" || fail "lease did not expire"
    rr -r "$U" --prefix $P --once d2 settle -- true
    assert_rc 0 "d2"
    export_as 0 $P
    rr -r "$U" --prefix $P --resolve succeeded --once d1 settle
    assert_rc 0 "d1 resolved"
    export_as 1 $P
    promtool_case day "$(fires 5m RedlockJobNotSettled settle "settle: 1 --once ID(s) not settled" \
            "redlock-run --status --max-age 25h settle names them and the command that settles each."
        quiet 5m RedlockJobFailed; quiet 15m RedlockJobNotSettled)"
    end_test
fi

t "--resolve keeps history: clear keeps the last success and the job in --list; --status says who resolved what, when"
# Issue 34, 4: --resolve clear deleted the record: --status --max-age said
# CRITICAL never ran, and the job was gone from --list (failed before).
job=rclear
who="$(id -un)@$(hostname)"
rr -r "$U" "$job" -- true
rr -r "$U" "$job" -- false
assert_rc 1 "a failed run"
rr -r "$U" --resolve clear "$job"
assert_rc 0 "--resolve clear"
rr -r "$U" --status --max-age 25h "$job"
assert_rc 0 "the last success kept: OK"
assert_contains "$(cat "$OUT")" "REDLOCK OK - $job succeeded "
rr -r "$U" --list
assert_contains "$(grep "^$job " "$OUT")" " cleared " "the job keeps its place in --list"
rr -r "$U" --status "$job"
assert_rc 0 "--status after clear"
assert_contains "$(cat "$OUT")" "resolved   --resolve clear by $who:" "who and when"
assert_contains "$(cat "$OUT")" "(it was failed)" "what"
assert_contains "$(cat "$OUT")" "last ok" "the last success"
rr -r "$U" --status --json "$job"
cp "$OUT" "$TMP/rclear.json"
assert_eq clear "$(jget "$TMP/rclear.json" 'j["last_run"]["resolved"]')" "JSON resolved"
assert_eq "$who" "$(jget "$TMP/rclear.json" 'j["last_run"]["resolved_by"].rsplit(":", 1)[0]')" "JSON resolved_by (user@host:pid)"
assert_eq failed "$(jget "$TMP/rclear.json" 'j["last_run"]["resolved_from"]')" "JSON resolved_from"
assert_eq int "$(jget "$TMP/rclear.json" 'type(j["last_run"]["resolved_ms"]).__name__')" "JSON resolved_ms"
rr -r "$U" "$job" -- true
assert_rc 0 "the next run runs"
# An --once ID: cleared, not deleted; it runs again with its attempts
# counted afresh, and is not "unsettled".
rr -r "$U" --once c1 "$job" -- false
rr -r "$U" --resolve clear --once c1 "$job"
assert_rc 0 "--resolve clear --once"
rr -r "$U" --status --once c1 "$job"
assert_contains "$(cat "$OUT")" "resolved   --resolve clear by $who:"
rr -r "$U" --list --json
assert_contains "$(grep "\"name\":\"$job\"" "$OUT")" '"unsettled_once":0,' "a cleared ID is settled"
rr -r "$U" --once c1 "$job" -- true
assert_rc 0 "the cleared ID runs again (its one attempt counted afresh)"
# succeeded, after a dead run: recorded the same way.
bg "$TMP/rc" "$RR_BIN" -r "$U" -t 1s "$job" -- sh -c 'touch "$1"; sleep 30' sh "$TMP/rc.started"
w=$BG
wait_for 10 file_there "$TMP/rc.started" || fail "child did not start"
kill_wait KILL "$w" 5
wait_for 5 key_gone S "$(k_lock $job)" || fail "lease did not expire"
rr -r "$U" --resolve succeeded "$job"
rr -r "$U" --status "$job"
assert_contains "$(cat "$OUT")" "resolved   --resolve succeeded by $who:"
assert_contains "$(cat "$OUT")" "(it was abandoned)"
end_test

t "a NAME knows its command: a fingerprint per run, a warning (under -q too) when it changes, --status says so"
# Issue 34, 6: two jobs sharing a NAME by mistake: nothing recorded which
# command used it (failed before: no fingerprint, no warning).
job=fp
rr -r "$U" -q "$job" -- sh -c 'exit 0' settle-secret-arg
assert_rc 0 "first run"
assert_eq "" "$(cat "$ERR")" "first run: nothing to say"
fp1=$(hget S "$(k_state $job)" command)
assert_eq 16 "${#fp1}" "a 16-digit fingerprint is recorded"
R S HGETALL "$(k_state $job)" >"$TMP/fp.rec"
assert_not_contains "$(cat "$TMP/fp.rec")" "settle-secret-arg" "never the arguments"
rr -r "$U" -q "$job" -- sh -c 'exit 0' settle-secret-arg
assert_eq "" "$(cat "$ERR")" "the same command: no warning"
rr -r "$U" -q "$job" -- sh -c 'exit 0' report
assert_rc 0 "another command under the same NAME"
assert_contains "$(cat "$ERR")" "the command differs from the last run's of $job (fingerprint " "warned under -q"
fp2=$(hget S "$(k_state $job)" command)
assert_ne "$fp1" "$fp2" "the fingerprint changed"
rr -r "$U" --status "$job"
assert_contains "$(cat "$OUT")" "command    changed: fingerprint $fp2, the run before had $fp1" "--status says the command changed"
rr -r "$U" --status --json "$job"
cp "$OUT" "$TMP/fp.json"
assert_eq "$fp2" "$(jget "$TMP/fp.json" 'j["last_run"]["command"]')" "JSON command"
assert_eq "$fp1" "$(jget "$TMP/fp.json" 'j["last_run"]["command_prev"]')" "JSON command_prev"
rr -r "$U" --log-format json -q "$job" -- sh -c 'exit 0' settle-secret-arg
assert_contains "$(cat "$ERR")" '"level":"warn","job":"fp","event":"command_changed"' "JSON log: level warn"
rr -r "$U" -q "$job" -- sh -c 'exit 0' settle-secret-arg
rr -r "$U" --status "$job"
assert_not_contains "$(cat "$OUT")" "command    changed" "two runs of one command: no longer said"
end_test

t "every JSON field --status --json and --list --json print is in the man page"
# Issue 34, 7: holders and queue were undocumented (failed before).
job=jdoc
rr -r "$U" "$job" -- true
rr -r "$U" "$job" -- false
rr -r "$U" --resolve clear "$job"
rr -r "$U" "$job" -- sh -c 'exit 0' other
bg "$TMP/jd" "$RR_BIN" -r "$U" -t 2s "$job" -- sh -c 'touch "$1"; sleep 30' sh "$TMP/jd.started"
w=$BG
wait_for 10 file_there "$TMP/jd.started" || fail "child did not start"
bg "$TMP/jdw" "$RR_BIN" -r "$U" -w 20s "$job" -- true
ww=$BG
sleep 0.5
rr -r "$U" --status --json "$job"
cp "$OUT" "$TMP/jd1.json"
rr -r "$U" --once o1 "$job"2 -- true
rr -r "$U" --status --json --once o1 "$job"2
cp "$OUT" "$TMP/jd2.json"
rr -r "$U" --status --json --once o9 "$job"2
cp "$OUT" "$TMP/jd3.json"
rr -r "$U" --list --json
cp "$OUT" "$TMP/jd4.json"
rr -r "redis://127.0.0.1:$(free_port)" --status --json "$job"
cp "$OUT" "$TMP/jd5.json"
kill_wait TERM "$w" 10
kill_wait TERM "$ww" 10
"$PY" - "$TOP/man/redlock-run.1" "$TMP"/jd[1-5].json >"$TMP/jd.missing" <<'EOF2'
import json, sys
man = open(sys.argv[1]).read()
keys = set()
def walk(v):
    if isinstance(v, dict):
        for k, x in v.items():
            keys.add(k)
            walk(x)
    elif isinstance(v, list):
        for x in v:
            walk(x)
for path in sys.argv[2:]:
    for line in open(path):
        if line.strip():
            walk(json.loads(line))
for k in sorted(keys):
    if "\\fB%s\\fR" % k.replace("-", "\\-") not in man:
        print(k)
print("# %d keys" % len(keys), file=sys.stderr)
EOF2
assert_eq "" "$(cat "$TMP/jd.missing")" "JSON keys the man page does not name"
for k in holders queue alive waiter ticket command_prev resolved_by masters_failed; do
    grep -q "\"$k\"" "$TMP"/jd[1-5].json || fail "the JSON here has no $k: the check did not see it"
done
end_test

t "--list --metrics-file: a listing that is not complete leaves the file as it was; refusals"
echo "# a file written before" >"$TMP/keep.prom"
rr -r "redis://127.0.0.1:$(free_port)" --list --metrics-file "$TMP/keep.prom"
assert_rc 69 "no server"
assert_eq "# a file written before" "$(cat "$TMP/keep.prom")" "the old file stays"
rr -r "$U" --status --metrics-file "$TMP/x.prom" settle
assert_rc 64 "--metrics-file with --status"
assert_contains "$(cat "$ERR")" "--metrics-file works only when running a COMMAND, or with --list"
rr -r "$U" --list --json --metrics-file "$TMP/x.prom"
assert_rc 64 "--json with --list --metrics-file"
end_test

done_testing
