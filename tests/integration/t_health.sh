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
assert_contains "$(cat "$OUT")" "did you mean settle? redlock-run --status settle"
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
end_test

t "an --once ID that never ran exits 4 and names the closest ID of the job"
rr -r "$U" --once settle-2026-12-03 settle2 -- true
assert_rc 0 "the run"
rr -r "$U" --status --once settle-2026-12-3 settle2
assert_rc 4 "an ID that never ran"
assert_contains "$(cat "$OUT")" "did you mean settle-2026-12-03? redlock-run --status --once settle-2026-12-03 settle2"
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
assert_contains "$(cat "$OUT")" "REDLOCK WARNING - stale --once d1 abandoned, settle it with: redlock-run --resolve succeeded|clear --once d1 stale; succeeded "
assert_eq 3 "$(list_code "$job")" "--list --json status_code is what --status exits with"
rr -r "$U" --list
assert_contains "$(grep '^stale ' "$OUT")" "--once d2; not settled: --once d1 abandoned" "--list names the unsettled ID"
# A failed day is unsettled too (not abandoned: --status exits 0 on the job).
rr -r "$U" --once d3 "$job" -- false
rr -r "$U" --once d4 "$job" -- true
rr -r "$U" --status --max-age 25h "$job"
assert_rc 1 "two days unsettled: WARNING"
assert_contains "$(cat "$OUT")" "2 --once IDs not settled ("
assert_contains "$(cat "$OUT")" "d3 failed"
# Settled, the check clears.
rr -r "$U" --resolve succeeded --once d1 "$job"
assert_rc 0 "resolve d1"
# d3 used its one attempt (issue 28's budget): one more is allowed first.
rr -r "$U" --resolve retry --once d3 "$job"
assert_rc 0 "allow d3 one more attempt"
rr -r "$U" --once d3 "$job" -- true
assert_rc 0 "d3 re-run"
rr -r "$U" --status --max-age 25h "$job"
assert_rc 0 "every day settled: OK"
assert_eq 0 "$(list_code "$job")" "--list status_code once settled"
end_test

done_testing
