#!/usr/bin/env bash
# t_status.sh — the operator modes (--status, --status --json, --release),
# --metrics-file and --log-format json.
# shellcheck disable=SC2016,SC2153  # child commands; NAME_URL etc. come from start_redis
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

start_redis S || { t "start redis"; fail "cannot start redis-server"; done_testing; exit 1; }
U=$S_URL

# json_get FILE EXPR — evaluate a Python expression on the parsed JSON `j`;
# prints the result (JSON-encoded), or "INVALID: ..." if it does not parse.
json_get() {
    "$PY" - "$1" "$2" <<'EOF'
import json, sys
try:
    with open(sys.argv[1]) as f:
        j = json.load(f)
except Exception as e:
    print("INVALID: %s" % e)
    sys.exit(0)
try:
    v = eval(sys.argv[2], {"j": j})
except Exception as e:
    print("MISSING: %s" % e)
    sys.exit(0)
print(v if isinstance(v, str) else json.dumps(v))
EOF
}

# status_both JOB EXPECTED MSG [--once ID] — --status and --status --json
# agree on the exit status; the JSON is left in $TMP/status.json.
status_both() {
    local job=$1 want=$2 msg=$3; shift 3
    rr -r "$U" --status "$@" "$job"
    assert_rc "$want" "$msg: --status"
    [ -s "$OUT" ] || fail "$msg: --status printed nothing"
    rr -r "$U" --status --json "$@" "$job"
    assert_rc "$want" "$msg: --status --json"
    cp "$OUT" "$TMP/status.json"
    local v
    v=$(json_get "$TMP/status.json" 'sorted(k for k in ("name","lock","last_run","history","abandoned_once") if k not in j)')
    assert_eq "[]" "$v" "$msg: missing JSON keys"
    assert_eq "$job" "$(json_get "$TMP/status.json" 'j["name"]')" "$msg: JSON name"
}

# ---------------------------------------------------------------------------
t "--status of a job that never ran: 4 (issue 34: a typo is not healthy)"
status_both never 4 "never ran"
assert_eq true "$(json_get "$TMP/status.json" 'j["never_ran"]')" "never_ran"
rr -r "$U" --status never
assert_contains "$(cat "$OUT")" "never ran (no record under redlock:{never}:state)"
assert_eq false "$(json_get "$TMP/status.json" 'j["lock"]["held"]')" "lock.held"
assert_eq "[]" "$(json_get "$TMP/status.json" 'j["history"]')" "history"

t "--status after a successful run: 0"
job=good
rr -r "$U" "$job" -- true
assert_rc 0 "the run"
status_both "$job" 0 "succeeded"
assert_eq false "$(json_get "$TMP/status.json" 'j["lock"]["held"]')" "lock.held"
assert_eq succeeded "$(json_get "$TMP/status.json" 'j["last_run"]["status"]')" "last_run.status"
assert_eq 0 "$(json_get "$TMP/status.json" 'j["last_run"]["exit_code"]')" "last_run.exit_code"
assert_eq 1 "$(json_get "$TMP/status.json" 'len(j["history"])')" "history length"

t "--status while the lock is held: 1"
job=held
# A 1 s lease (renewed every 333 ms) so the holder notices --release below;
# the child lives until the test lets it go (at most 20 s).
bg "$TMP/held" "$RR_BIN" -r "$U" -t 1s "$job" -- sh -c 'touch "$1"; i=0; while [ ! -e "$2" ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i+1)); done' sh "$TMP/held.started" "$TMP/held.stop"
w=$BG
wait_for 10 file_there "$TMP/held.started" || fail "child did not start"
status_both "$job" 1 "held"
assert_eq true "$(json_get "$TMP/status.json" 'j["lock"]["held"]')" "lock.held"
assert_eq "$(R S GET "$(k_fence $job)")" "$(json_get "$TMP/status.json" 'j["lock"]["fence"]')" "lock.fence"
assert_eq "$w" "$(json_get "$TMP/status.json" 'j["lock"]["pid"]')" "lock.pid"
assert_eq "$(hostname)" "$(json_get "$TMP/status.json" 'j["lock"]["host"]')" "lock.host"
ttl=$(json_get "$TMP/status.json" 'j["lock"]["ttl_ms"]')
if ! { [ "$ttl" -gt 0 ] && [ "$ttl" -le 1000 ]; } 2>/dev/null; then fail "lock.ttl_ms $ttl"; fi
assert_eq running "$(json_get "$TMP/status.json" 'j["last_run"]["status"]')" "last_run.status"

t "--release removes a held lock; the holder then stops with 79"
rr -r "$U" --release "$job"
assert_rc 0 "--release"
[ -s "$OUT" ] || [ -s "$ERR" ] || fail "--release said nothing about what it removed"
assert_key_gone S "$(k_lock $job)"
rr -r "$U" --release "$job"
assert_rc 1 "--release with no lock held"
wait_pid "$w" 15
assert_rc 79 "the holder"
assert_hash S "$(k_state $job)" status lost

t "--status after a failed run: 2"
job=bad
rr -r "$U" "$job" -- sh -c 'exit 5'
assert_rc 5 "the run"
status_both "$job" 2 "failed"
assert_eq failed "$(json_get "$TMP/status.json" 'j["last_run"]["status"]')" "last_run.status"
assert_eq 5 "$(json_get "$TMP/status.json" 'j["last_run"]["exit_code"]')" "last_run.exit_code"

t "--status after a timed-out run: 2"
job=slow
rr -r "$U" --max-runtime 0.2s "$job" -- sleep 5
assert_rc 124 "the run"
status_both "$job" 2 "timeout"
assert_eq timeout "$(json_get "$TMP/status.json" 'j["last_run"]["status"]')" "last_run.status"

t "--status of an abandoned run: 3"
job=dead
bg "$TMP/dead" "$RR_BIN" -r "$U" -t 1s "$job" -- sh -c 'touch "$1"; sleep 30' sh "$TMP/dead.started"
w=$BG
wait_for 10 file_there "$TMP/dead.started" || fail "child did not start"
kill_wait KILL "$w" 5
wait_for 5 key_gone S "$(k_lock $job)" || fail "lease did not expire"
status_both "$job" 3 "abandoned"
assert_eq false "$(json_get "$TMP/status.json" 'j["lock"]["held"]')" "lock.held"
assert_eq abandoned "$(json_get "$TMP/status.json" 'j["last_run"]["status"]')" "last_run.status"

t "--status --once of an abandoned ID: 3, listed in abandoned_once"
job=deadonce
bg "$TMP/deadonce" "$RR_BIN" -r "$U" -t 1s --once id7 "$job" -- sh -c 'touch "$1"; sleep 30' sh "$TMP/deadonce.started"
w=$BG
wait_for 10 file_there "$TMP/deadonce.started" || fail "child did not start"
kill_wait KILL "$w" 5
wait_for 5 key_gone S "$(k_lock $job)" || fail "lease did not expire"
status_both "$job" 3 "abandoned once" --once id7
assert_eq abandoned "$(json_get "$TMP/status.json" 'j["once"]["status"]')" "once.status"
assert_eq '["id7"]' "$(json_get "$TMP/status.json" 'j["abandoned_once"]')" "abandoned_once"
status_both "$job" 3 "abandoned once, without --once"

t "--status with Redis unavailable: 69"
start_redis GONE || fail "cannot start a server"
gone_url=$GONE_URL
stop_redis GONE
rr -r "$gone_url" --status good
assert_rc 69
rr -r "$gone_url" --status --json good
assert_rc 69 "--json"
rr -r "$gone_url" --release good
assert_rc 69 "--release"

t "history in --status --json: newest 10 at most"
job=many
for i in $(seq 12); do rr_direct -r "$U" "$job" -- sh -c "exit $((i % 2))"; done
rr -r "$U" --status --json "$job"
cp "$OUT" "$TMP/status.json"
assert_eq 10 "$(json_get "$TMP/status.json" 'len(j["history"])')" "history length"
assert_eq 12 "$(R S XLEN "$(k_hist $job)")" "history stream length"

# ---------------------------------------------------------------------------
t "--metrics-file: Prometheus text, never seen half-written"
job=metered
mf=$TMP/metrics/redlock.prom
mkdir -p "$TMP/metrics"
# The reader checks every read: empty or cut short means a torn write.
"$PY" - "$mf" "$TMP/metrics.stop" >"$TMP/reader.out" 2>&1 <<'EOF' &
import os, re, sys, time
path, stop = sys.argv[1], sys.argv[2]
sample = re.compile(r'^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[^}]*\})? \S+( [0-9]+)?$')
reads = bad = 0
torn = []
deadline = time.time() + 60
while not os.path.exists(stop) and time.time() < deadline:
    try:
        with open(path) as f:
            s = f.read()
    except FileNotFoundError:
        time.sleep(0.001)
        continue
    reads += 1
    lines = s.splitlines()
    if (not s.endswith("\n") or "# HELP" not in s or "# TYPE" not in s
            or not sample.match(lines[-1])):
        bad += 1
        torn.append(s[-120:])
    time.sleep(0.001)
print("reads=%d bad=%d" % (reads, bad))
for x in torn[:3]:
    print("torn: %r" % x)
EOF
reader=$!
track_pid "$reader"
for i in $(seq 15); do
    rr_direct -r "$U" --metrics-file "$mf" "$job" -- sh -c "exit $((i % 3 == 0))"
done
touch "$TMP/metrics.stop"
wait_pid "$reader" 10
res=$(cat "$TMP/reader.out")
note "metrics reader: $(head -1 "$TMP/reader.out")"
assert_contains "$res" "bad=0" "reader"
case $res in reads=0*) fail "the reader never saw the file" ;; esac
if [ -s "$mf" ]; then
    body=$(cat "$mf")
    assert_contains "$body" "# HELP " "metrics"
    assert_contains "$body" "# TYPE " "metrics"
    grep -v '^#' "$mf" | grep -q "lock=\"$job\"" || fail "no sample with lock=\"$job\""
    grep -q 'job=' "$mf" && fail "a job= label (Prometheus's own label name)"
    # 15 runs, every third failed: the counters survived across runs.
    assert_contains "$body" "redlock_run_runs_total{lock=\"$job\",status=\"succeeded\"} 10"
    assert_contains "$body" "redlock_run_runs_total{lock=\"$job\",status=\"failed\"} 5"
    # Every sample line: name{labels} value
    badl=$(grep -v '^#' "$mf" | grep -v '^$' | grep -Evc '^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[^}]*\})? [-+0-9.eEInfa]+( [0-9]+)?$')
    assert_eq 0 "$badl" "malformed sample lines"
    # The final line of the final file is a complete sample.
    last=$(tail -1 "$mf")
    [ -n "$last" ] || fail "empty last line"
else
    fail "no metrics file at $mf"
fi
left=$(find "$TMP/metrics" -type f ! -name redlock.prom | head -3)
assert_eq "" "$left" "temporary files left next to the metrics file"

# ---------------------------------------------------------------------------
t "--log-format json: every stderr line is JSON"
job=jsonlog
check_json_lines() {
    "$PY" - "$1" <<'EOF'
import json, sys
bad = 0
n = 0
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    if not line:
        continue
    n += 1
    try:
        if not isinstance(json.loads(line), dict):
            bad += 1
    except Exception:
        bad += 1
        print("not JSON: %r" % line[:200])
print("lines=%d bad=%d" % (n, bad))
EOF
}
rr -r "$U" -v --log-format json "$job" -- true
assert_rc 0 "verbose run"
r=$(check_json_lines "$ERR")
assert_contains "$r" "bad=0" "verbose run's stderr"
case $r in *lines=0\ *) fail "-v printed nothing on stderr" ;; esac
R S SET "$(k_lock $job)" foreign-value PX 60000 >/dev/null
rr -r "$U" --log-format json "$job" -- true
assert_rc 75 "busy run"
r=$(check_json_lines "$ERR")
assert_contains "$r" "bad=0" "busy run's stderr"
case $r in *lines=0\ *) fail "the busy run said nothing" ;; esac
R S DEL "$(k_lock $job)" >/dev/null
start_redis GONE2 || fail "cannot start a server"
g2=$GONE2_URL
stop_redis GONE2
rr -r "$g2" -v --log-format json "$job" -- true
assert_rc 69 "unavailable run"
r=$(check_json_lines "$ERR")
assert_contains "$r" "bad=0" "unavailable run's stderr"

t "-q: a busy run prints nothing"
job=quiet
R S SET "$(k_lock $job)" foreign-value PX 60000 >/dev/null
rr -r "$U" -q "$job" -- true
assert_rc 75
[ -s "$ERR" ] && fail "stderr not empty: $(head -c 200 "$ERR")"
R S DEL "$(k_lock $job)" >/dev/null

t "--metrics-file: a busy run keeps the holder's figures; last success survives a failure"
mf2=$TMP/metrics/held.prom
bg "$TMP/mh" "$RR_BIN" -r "$U" --metrics-file "$mf2" heldm -- sleep 1.5
w=$BG
wait_for 5 key_there S "$(k_lock heldm)" || fail "the holder did not start"
fence=$(hget S "$(k_state heldm)" fence)
rr_direct -r "$U" --metrics-file "$mf2" heldm -- true
assert_rc 75
wait_pid "$w" 10
assert_rc 0
body=$(cat "$mf2" 2>/dev/null)
assert_contains "$body" "redlock_run_last_fence{lock=\"heldm\"} $fence"
assert_contains "$body" "redlock_run_runs_total{lock=\"heldm\",status=\"busy\"} 1"
assert_contains "$body" "redlock_run_last_status{lock=\"heldm\",status=\"succeeded\"} 1"
assert_contains "$body" "redlock_run_last_success_timestamp_seconds{lock=\"heldm\"} 1"
rr_direct -r "$U" --metrics-file "$mf2" heldm -- false
body=$(cat "$mf2" 2>/dev/null)
assert_contains "$body" "redlock_run_last_status{lock=\"heldm\",status=\"failed\"} 1"
assert_contains "$body" "redlock_run_last_success_timestamp_seconds{lock=\"heldm\"} 1"
end_test

t "--metrics-file shared by two jobs finishing at once: both series kept, no count lost"
mf3=$TMP/metrics/shared.prom
for job in sharea shareb; do
    (for i in $(seq 8); do "$RR_BIN" -r "$U" --metrics-file "$mf3" "$job" -- sh -c "exit $((i % 4 == 0))"; done) \
        >"$TMP/$job.loop" 2>&1 &
    track_pid $!
    eval "loop_$job=\$!"
done
wait_pid "$loop_sharea" 60
wait_pid "$loop_shareb" 60
body=$(cat "$mf3" 2>/dev/null)
for job in sharea shareb; do
    assert_contains "$body" "redlock_run_runs_total{lock=\"$job\",status=\"succeeded\"} 6"
    assert_contains "$body" "redlock_run_runs_total{lock=\"$job\",status=\"failed\"} 2"
    assert_contains "$body" "redlock_run_last_fence{lock=\"$job\"} "
done
assert_eq 1 "$(grep -c '^# TYPE redlock_run_runs_total counter$' "$mf3")" "TYPE lines of one family"
end_test

t "promtool check metrics accepts the metrics files written above"
PROMTOOL=$(command -v promtool || echo "$TOP/build/tools/promtool")
if [ -x "$PROMTOOL" ]; then
    "$PROMTOOL" check metrics <"$mf3" >"$TMP/promtool.out" 2>&1 || fail "promtool: $(cat "$TMP/promtool.out")"
    "$PROMTOOL" check metrics <"$mf2" >"$TMP/promtool.out" 2>&1 || fail "promtool: $(cat "$TMP/promtool.out")"
    "$PROMTOOL" check metrics <"$mf" >"$TMP/promtool.out" 2>&1 || fail "promtool: $(cat "$TMP/promtool.out")"
    end_test
else
    # .ci/run's RR_NO_SKIP=1 makes this a failure there.
    skip "promtool not found (scripts/deps.sh ci takes it from Debian's prometheus package)"
fi

# ---------------------------------------------------------------------------
# The metrics file in a world-writable sticky directory (/tmp's mode), and
# another local user (nobody, when we are root) who plants a FIFO and a
# symlink there and holds the directory's flock (issue 30, item 2): the run
# ends at once with its command's status, and one error line says why.
md=$TMP/shared-tmp
mkdir -p "$md"
chmod 1777 "$md"
chmod o+x "$TMP"
OTHER=()
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1; then
    OTHER=(setpriv --reuid=65534 --regid=65534 --clear-groups)
fi
t "--metrics-file: a FIFO planted at the path is left alone; the run does not wait for a writer"
"${OTHER[@]}" mkfifo "$md/fifo.prom" || fail "cannot plant the FIFO"
rr_direct -r "$U" --metrics-file "$md/fifo.prom" mfifo -- sh -c 'exit 3'
assert_rc 3 "the command's status"
assert_lt "$ELAPSED_MS" 3000 "the run's time (ms)"
assert_contains "$(cat "$ERR")" "cannot write --metrics-file $md/fifo.prom: it is a FIFO, not a regular file"
[ -p "$md/fifo.prom" ] || fail "the FIFO was replaced"
end_test

t "--metrics-file: a symlink planted at the path is not followed, nor replaced"
echo "not yours" >"$TMP/target.prom"
"${OTHER[@]}" ln -s "$TMP/target.prom" "$md/link.prom" || fail "cannot plant the symlink"
rr_direct -r "$U" --metrics-file "$md/link.prom" mlink -- true
assert_rc 0 "the command's status"
assert_contains "$(cat "$ERR")" "cannot write --metrics-file $md/link.prom: it is a symbolic link, not a regular file"
assert_eq "not yours" "$(cat "$TMP/target.prom")" "the link's target"
[ -L "$md/link.prom" ] || fail "the symlink was replaced"
end_test

t "--metrics-file: another user's flock on the directory holds the run up 1 s at most"
# One process holds it: flock(1) locks the shell's fd 9, which becomes sleep.
bg "$TMP/flocker" "${OTHER[@]}" bash -c 'exec 9<"$1" && flock 9 && exec sleep 30' _ "$md"
flocker=$BG
dir_locked() { ! flock -n "$md" true; }
wait_for 5 dir_locked || fail "flock(1) did not take the directory's lock"
rr_direct -r "$U" --metrics-file "$md/ok.prom" mlocked -- sh -c 'exit 4'
assert_rc 4 "the command's status"
assert_lt "$ELAPSED_MS" 4000 "the run's time (ms)"
assert_contains "$(cat "$ERR")" "cannot write --metrics-file $md/ok.prom: another process has held its directory's flock for over 1000 ms"
assert_eq 1 "$(grep -c 'metrics-file' "$ERR")" "one line about it"
assert_no_file "$md/ok.prom" "a metrics file written without the lock"
kill_wait TERM "$flocker" 5
rr_direct -r "$U" --metrics-file "$md/ok.prom" mlocked -- true
assert_rc 0
grep -q 'redlock_run_runs_total{lock="mlocked",status="succeeded"} 1' "$md/ok.prom" 2>/dev/null ||
    fail "no figures once the lock is free: $(head -c 300 "$ERR")"
end_test

# ---------------------------------------------------------------------------
t "--status --max-age: a job that never ran is CRITICAL (2)"
rr -r "$U" --status --max-age 25h chk-never
assert_rc 2 "never ran"
assert_contains "$(cat "$OUT")" "REDLOCK CRITICAL - chk-never never ran (no record under redlock:{chk-never}:state)"
rr -r "$U" --status --max-age 25h --once day-1 chk-never
assert_rc 2 "an ID that never ran"
assert_contains "$(cat "$OUT")" "REDLOCK CRITICAL - chk-never --once day-1 never ran"
end_test

t "--status --max-age: success within DUR is OK (0) with perfdata"
rr -r "$U" chk -- true
assert_rc 0 "the run"
fence=$(hget S "$(k_state chk)" fence)
rr -r "$U" --status --max-age 25h chk
assert_rc 0 "succeeded just now"
assert_contains "$(cat "$OUT")" "REDLOCK OK - chk succeeded "
assert_contains "$(cat "$OUT")" " ago (fence $fence on $(hostname)) | age="
assert_contains "$(cat "$OUT")" "s;;90000s"
assert_eq 1 "$(wc -l <"$OUT")" "one line"
end_test

t "last success in --status --json, kept after a failed run; --max-age is WARNING (1)"
rr -r "$U" --status --json chk
assert_eq "$fence" "$(json_get "$OUT" 'j["last_run"]["last_success_fence"]')" "last_success_fence"
assert_eq "$(hostname)" "$(json_get "$OUT" 'j["last_run"]["last_success_host"]')" "last_success_host"
ok_ms=$(json_get "$OUT" 'j["last_run"]["last_success_ms"]')
assert_int "$ok_ms" "last_success_ms"
rr -r "$U" chk -- false
assert_rc 1 "the failed run"
rr -r "$U" --status --json chk
assert_eq failed "$(json_get "$OUT" 'j["last_run"]["status"]')" "last_run.status"
assert_eq "$ok_ms" "$(json_get "$OUT" 'j["last_run"]["last_success_ms"]')" "last_success_ms kept"
assert_eq "$fence" "$(json_get "$OUT" 'j["last_run"]["last_success_fence"]')" "last_success_fence kept"
rr -r "$U" --status chk
assert_contains "$(cat "$OUT")" "last ok"
rr -r "$U" --status --max-age 25h chk
assert_rc 1 "failed after a success within"
assert_contains "$(cat "$OUT")" "REDLOCK WARNING - chk last run failed; succeeded"
end_test

t "--status --max-age: a success older than DUR is CRITICAL (2)"
sleep 2
rr -r "$U" --status --max-age 1s chk
assert_rc 2 "success too old"
assert_contains "$(cat "$OUT")" "REDLOCK CRITICAL - chk last run failed; succeeded"
assert_contains "$(cat "$OUT")" "more than --max-age 1s"
rr -r "$U" chk-old -- true
sleep 2
rr -r "$U" --status --max-age 1s chk-old
assert_rc 2 "last run succeeded, too long ago"
assert_contains "$(cat "$OUT")" "REDLOCK CRITICAL - chk-old succeeded"
end_test

t "--status --max-age: only failures is CRITICAL; a bad check line is UNKNOWN (3); --max-age without --status is refused (64)"
rr -r "$U" chk-bad -- false
rr -r "$U" --status --max-age 25h chk-bad
assert_rc 2 "never succeeded"
assert_contains "$(cat "$OUT")" "REDLOCK CRITICAL - chk-bad never succeeded (last run failed)"
rr -r "$U" --max-age 25h chk-bad -- true
assert_rc 64 "--max-age on a run"
rr -r "$U" --status --json --max-age 25h chk-bad
assert_rc 3 "--max-age with --json: UNKNOWN"
rr -r "$U" --status --max-age 25x chk-bad
assert_rc 3 "a bad --max-age: UNKNOWN"
assert_contains "$(cat "$OUT")" "REDLOCK UNKNOWN - "
end_test

t "--status --max-age: Redis unavailable is UNKNOWN (3)"
port=$(free_port)
rr -r "redis://127.0.0.1:$port" --connect-timeout 500ms --status --max-age 25h chk
assert_rc 3 "unavailable"
assert_contains "$(cat "$OUT")" "REDLOCK UNKNOWN - "
end_test

# ---------------------------------------------------------------------------
# Issue 18.5: --release of a live holder never lets the next run overlap it.
tick_cmd() { TICK=(sh -c 'while :; do date +%s%3N >> "$1"; sleep 0.02; done' sh "$1"); }

t "--release of a live holder: the holder stops first, a run right after never overlaps it"
job=revoke
tick_cmd "$TMP/rv.a"
bg "$TMP/rv" "$RR_BIN" -r "$U" -t 9s "$job" -- "${TICK[@]}"
w=$BG
wait_for 10 test -s "$TMP/rv.a" || fail "the holder did not start"
rr_direct -r "$U" --release "$job"
assert_rc 0 "--release"
assert_contains "$(cat "$OUT")" "released it at" "what --release says"
assert_contains "$(cat "$OUT")" "recorded lost (its command was stopped)" "how the holder ended"
rr_direct -r "$U" "$job" -- sh -c 'date +%s%3N > "$1"' sh "$TMP/rv.b"
assert_rc 0 "a run right after --release"
wait_pid "$w" 15
assert_rc 79 "the revoked holder"
last_a=$(tail -1 "$TMP/rv.a"); first_b=$(head -1 "$TMP/rv.b" 2>/dev/null)
note "the old command's last tick $last_a, the new run's command $first_b"
[ -n "$first_b" ] && [ "$first_b" -gt "$last_a" ] 2>/dev/null ||
    fail "the new run's command ($first_b) ran while the old one still ticked (last $last_a)"
assert_hash S "$(k_state $job)" status succeeded

t "--release --force deletes at once and says what it risks"
job=forced
bg "$TMP/fo" "$RR_BIN" -r "$U" -t 9s "$job" -- sleep 30
w=$BG
wait_for 10 key_there S "$(k_lock $job)" || fail "the holder did not start"
rr_direct -r "$U" --release --force "$job"
assert_rc 0 "--release --force"
assert_lt "$ELAPSED_MS" 2000 "--force does not wait for the holder (ms)"
assert_key_gone S "$(k_lock $job)"
assert_contains "$(cat "$ERR")" "--force: the holder" "the warning"
assert_contains "$(cat "$ERR")" "overlaps it" "the warning says the risk"
wait_pid "$w" 15
assert_rc 79 "the holder, at its next renewal"

t "--release --fence F acts only on the holder of fence F"
job=fenced
bg "$TMP/fe" "$RR_BIN" -r "$U" -t 3s "$job" -- sleep 30
w=$BG
wait_for 10 key_there S "$(k_lock $job)" || fail "the holder did not start"
f=$(hget S "$(k_state $job)" fence)
rr_direct -r "$U" --release --fence 12345 "$job"
assert_rc 1 "another fence"
assert_contains "$(cat "$OUT")" "not by fence 12345" "what it says"
key_there S "$(k_lock $job)" || fail "the lock was released for a fence it does not have"
pid_gone "$w" && fail "the holder stopped"
rr_direct -r "$U" --release --fence "$f" "$job"
assert_rc 0 "the holder's own fence"
assert_key_gone S "$(k_lock $job)"
wait_pid "$w" 15
assert_rc 79 "the holder"
rr_direct -r "$U" --release --fence abc "$job"
assert_rc 64 "--fence that is not a number"
rr_direct -r "$U" --force "$job" -- true
assert_rc 64 "--force without --release"

t "--release of a lock whose run has ended (--min-hold): deleted at once, nothing to wait for"
job=tail
rr -r "$U" --min-hold 20s "$job" -- true
assert_rc 0
key_there S "$(k_lock $job)" || fail "no --min-hold lock"
rr_direct -r "$U" --release "$job"
assert_rc 0 "--release"
assert_lt "$ELAPSED_MS" 2000 "elapsed ms"
assert_key_gone S "$(k_lock $job)"

t "--status says what it knows: held since / last renewed, being released, a holder that stopped renewing"
job=words
bg "$TMP/wd" "$RR_BIN" -r "$U" -t 9s "$job" -- sleep 30
w=$BG
wait_for 10 key_there S "$(k_lock $job)" || fail "the holder did not start"
rr -r "$U" --status "$job"
assert_contains "$(cat "$OUT")" "pid $w (fence" "the holder"
assert_contains "$(cat "$OUT")" ", last renewed " "when it last renewed"
# The holder's lock revoked, as --release leaves it until the holder's
# next renewal (set by hand here, so that it stays so for this check).
tok=$(R S GET "$(k_lock $job)")
R S SET "$(k_lock $job)" "revoked:$tok" KEEPTTL >/dev/null
rr -r "$U" --status "$job"
assert_contains "$(cat "$OUT")" "being released (--release): held by" "a revoked lock"
wait_pid "$w" 15
assert_rc 79 "the revoked holder"
# A record left 'running' with no lock: what is known, not a guess.
R S HSET "$(k_state $job)" status running >/dev/null
rr -r "$U" --status "$job"
assert_contains "$(cat "$OUT")" "stopped renewing at" "a holder gone"
assert_not_contains "$(cat "$OUT")" "its holder died" "no guess"

done_testing
