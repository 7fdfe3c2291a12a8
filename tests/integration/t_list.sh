#!/usr/bin/env bash
# t_list.sh — --list, the fleet view: every job under the prefix (held,
# free, failed, a --limit lock, a --once job), one aligned line each or one
# JSON object each; SCAN finds them among many unrelated keys; a prefix of
# its own; bad input (64); no server (69); an ACL user with the README's
# line, and one without SCAN (78); the master a sentinel group names; a
# cluster's masters, all of them, and a
# partial listing when one master does not answer (69, said on stdout).
# shellcheck disable=SC2016,SC2153,SC2015,SC2119  # child commands; NAME_URL etc. come from start_redis; "a && b || fail" is meant
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/lib_topo.sh
. "$(dirname "$0")/lib_topo.sh"

start_redis S || { t "start redis"; fail "cannot start redis-server"; done_testing; exit 1; }
U=$S_URL

# jq_lines EXPR — evaluate EXPR on each JSON line of $OUT (as `j`) and
# print the results, one a line; "INVALID ..." for a line that is not JSON.
jq_lines() {
    "$PY" - "$OUT" "$1" <<'PYEOF'
import json, sys
for line in open(sys.argv[1]):
    try:
        j = json.loads(line)
    except Exception as e:
        print("INVALID %s: %r" % (e, line)); continue
    try:
        print(eval(sys.argv[2], {"j": j}))
    except Exception as e:
        print("MISSING %s" % e)
PYEOF
}

# line_of NAME — the --list text line of NAME (from $OUT)
line_of() { awk -v n="$1" '$1 == n' "$OUT"; }

t "setup: a free job, a failed one, a --once job, a held one, a --limit lock with two holders"
rr -r "$U" backup -- true
assert_rc 0
rr -r "$U" failing -- sh -c 'exit 3'
assert_rc 3
rr -r "$U" --once 'day-%F' daily -- true
assert_rc 0
bg "$TMP/held" "$RR_BIN" -r "$U" held -- sleep 30
HELD=$BG
bg "$TMP/p1" "$RR_BIN" -r "$U" --limit 3 pool -- sleep 30
P1=$BG
bg "$TMP/p2" "$RR_BIN" -r "$U" --limit 3 pool -- sleep 30
P2=$BG
wait_for 5 key_there S "$(k_lock held)" || fail "the holder did not start"
wait_for 5 key_there S "redlock:{pool}:lock:2" || fail "the second --limit holder did not start"
end_test

t "--list: a header and one line per job, sorted by name, the columns aligned"
rr -r "$U" --list
assert_rc 0 "--list: $(cat "$ERR")"
names=$(awk 'NR > 1 { print $1 }' "$OUT" | tr '\n' ' ')
assert_eq "$names" "backup daily failing held pool " "the jobs, sorted"
head -1 "$OUT" | grep -q '^NAME  *LOCK  *HOLDER' || fail "no header: $(head -1 "$OUT")"
# LOCK starts at the same column on every line: two blanks before it
col=$(head -1 "$OUT" | awk '{ print index($0, "LOCK") }')
bad=$(awk -v c="$col" 'substr($0, c - 2, 2) != "  " || substr($0, c, 1) == " "' "$OUT")
assert_eq "$bad" "" "the LOCK column is aligned"
assert_contains "$(line_of backup)" " free "
assert_contains "$(line_of backup)" " succeeded "
assert_contains "$(line_of failing)" " failed "
assert_contains "$(line_of failing)" " 3 "
assert_contains "$(line_of failing)" " never"
assert_contains "$(line_of held)" " held "
assert_contains "$(line_of held)" "pid $HELD"
assert_contains "$(line_of held)" " running "
assert_contains "$(line_of pool)" " held 2 "
assert_contains "$(line_of daily)" "--once day-$(date +%F)"
grep -q ' $' "$OUT" && fail "a line ends in a blank"
end_test

t "--list --json: one object per job, as --status reads them"
rr -r "$U" --list --json
assert_rc 0
assert_eq "$(wc -l <"$OUT" | tr -d ' ')" 5 "five lines"
got=$(jq_lines '"%s %s %s %s %s" % (j["name"], j["lock"]["held"], j["lock"]["slots_held"], (j["last_run"] or {}).get("status"), j["status_code"])' | tr '\n' ';')
assert_eq "$got" "backup False 0 succeeded 0;daily False 0 succeeded 0;failing False 0 failed 2;held True 1 running 1;pool True 2 running 1;"
assert_eq "$(jq_lines 'j["lock"]["pid"]' | sed -n 4p)" "$HELD" "the holder's pid"
assert_eq "$(jq_lines 'j["last_run"]["exit_code"]' | sed -n 3p)" 3 "the failed run's exit code"
assert_eq "$(jq_lines 'j["last_success"] is not None and j["last_success"]["host"] != ""' | sed -n 1p)" True "last success of backup"
assert_eq "$(jq_lines 'j["last_success"]' | sed -n 3p)" None "failing never succeeded"
end_test

t "a run whose holder died shows as abandoned, as --status says"
kill -KILL "$HELD"
wait_pid "$HELD" 5
R S DEL "$(k_lock held)" >/dev/null
rr -r "$U" --list
assert_rc 0
assert_contains "$(line_of held)" " free "
assert_contains "$(line_of held)" " abandoned "
rr -r "$U" --status held
assert_rc 3 "--status agrees"
end_test
kill "$P1" "$P2" 2>/dev/null
wait_pid "$P1" 10
wait_pid "$P2" 10

t "SCAN finds every job among 50000 unrelated keys (never KEYS)"
for i in $(seq 1 25); do rr_direct -r "$U" "many-$i" -- true; done
"$PY" -c '
import sys
for i in range(50000):
    k = "junk:%d" % i
    sys.stdout.write("*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$1\r\nx\r\n" % (len(k), k))
' | redis-cli -p "$S_PORT" --pipe >/dev/null
assert_eq "$(R S DBSIZE)" "$((50000 + $(R S KEYS 'redlock:*' | wc -l)))" "the junk is there"
R S CONFIG RESETSTAT >/dev/null
rr -r "$U" --list --json
assert_rc 0
assert_eq "$(grep -c '"name":"many-' "$OUT")" 25 "all 25 jobs"
assert_eq "$(wc -l <"$OUT" | tr -d ' ')" 30 "and the five others"
calls=$(R S INFO commandstats | tr -d '\r')
assert_contains "$calls" "cmdstat_scan:"
assert_contains "$(cat "$OUT")" '"name":"many-25"' 
assert_not_contains "$calls" "cmdstat_keys:"
end_test

t "--prefix: only that prefix's jobs; the default prefix does not see them"
rr -r "$U" --prefix 'team-b:' other -- true
assert_rc 0
rr -r "$U" --prefix 'team-b:' --list
assert_rc 0
assert_eq "$(awk 'NR > 1 { print $1 }' "$OUT")" "other"
rr -r "$U" --list --json
assert_not_contains "$(cat "$OUT")" '"other"'
rr -r "$U" --prefix 'nobody:' --list
assert_rc 0
assert_contains "$(cat "$OUT")" "no job under the prefix nobody:"
end_test

t "bad input: a NAME, a command, another mode, --once, --max-age (64)"
rr -r "$U" --list backup
assert_rc 64
assert_contains "$(cat "$ERR")" "--list takes no NAME"
rr -r "$U" --list -- true
assert_rc 64
rr -r "$U" --list --status
assert_rc 64
assert_contains "$(cat "$ERR")" "cannot be used together"
rr -r "$U" --list --once x
assert_rc 64
rr -r "$U" --list --max-age 1h
assert_rc 64
[ -s "$OUT" ] && fail "printed on stdout: $(cat "$OUT")"
end_test

t "no server: 69, nothing on stdout, one line on stderr"
rr -r "redis://127.0.0.1:$(free_port)" --list
assert_rc 69
[ -s "$OUT" ] && fail "printed on stdout: $(cat "$OUT")"
assert_contains "$(cat "$ERR")" "cannot list the jobs"
end_test

t "the README's ACL line is enough for --list; a user without SCAN is refused (78)"
acl=$(sed -n '/<!-- acl -->/,/<!-- \/acl -->/p' "$TOP/README.md" | grep '^    ACL SETUSER' | sed 's/^    //')
[ -n "$acl" ] || fail "no ACL line in README.md"
# shellcheck disable=SC2086  # the line is split into words on purpose
R S ${acl//PASSWORD/s3cret-acl} >/dev/null
REDLOCK_USER=redlock REDLOCK_PASSWORD=s3cret-acl rr -r "$U" --list
assert_rc 0 "as the README's user: $(cat "$ERR")"
assert_contains "$(line_of backup)" " succeeded "
R S ACL SETUSER noscan on '>noscan' '~redlock:*' '&redlock:*' -@all +evalsha +eval +get +hgetall >/dev/null
REDLOCK_USER=noscan REDLOCK_PASSWORD=noscan rr -r "$U" --list
assert_rc 78 "without +scan: $(cat "$ERR")"
assert_contains "$(cat "$ERR")" "scan"
end_test

stop_redis S

t "sentinel: the jobs of the master the sentinels name"
if topo_sentinel_start; then
    # a sentinel lookup is two round trips before the first command: room for a slow host
    rr -r "$SENT_URL" --redis-timeout 2s s-job -- true
    assert_rc 0 "run: $(cat "$ERR")"
    rr -r "$SENT_URL" --redis-timeout 2s --list
    assert_rc 0 "--list: $(cat "$ERR")"
    assert_contains "$(line_of s-job)" " succeeded "
    topo_sentinel_stop
else
    fail "cannot start a sentinel group (see above)"
fi
end_test

if ! topo_cluster_start; then
    t "start a cluster"
    fail "cannot create the cluster (see above)"
    done_testing
    exit 1
fi
SEED=${CLUSTER_URL#redis-cluster://}
SEED=${SEED%%,*}

t "a cluster: every master is scanned, every job is listed"
for j in c-alpha c-bravo c-charlie c-delta c-echo c-fox c-golf c-hotel; do
    rr -r "$CLUSTER_URL" "$j" -- true
    assert_rc 0 "run $j: $(cat "$ERR")"
done
owners=$(for j in c-alpha c-bravo c-charlie c-delta c-echo c-fox c-golf c-hotel; do
    topo_cluster_owner "$(topo_cluster_slot_of "{$j}")"; done | sort -u | wc -l)
[ "$owners" -ge 2 ] || fail "the jobs are on $owners master(s) only: the test proves nothing"
rr -r "$CLUSTER_URL" --list
assert_rc 0 "--list: $(cat "$ERR")"
assert_eq "$(awk 'NR > 1 { print $1 }' "$OUT" | tr '\n' ' ')" \
    "c-alpha c-bravo c-charlie c-delta c-echo c-fox c-golf c-hotel " "all eight, sorted"
end_test

t "a cluster master that does not answer: the others' jobs, 'partial' on stdout, 69"
# the master that holds c-alpha's keys, as the nodes themselves say
victim='' others=''
for p in $CLUSTER_PORTS; do
    [ "$(topo_role "$p")" = master ] || continue
    if [ "$(topo_cli "$p" EXISTS "$(k_state c-alpha)" | tr -d '\r')" = 1 ]; then victim=$p; else others=$p; fi
done
[ -n "$victim" ] && [ -n "$others" ] || fail "cannot find c-alpha's master ($victim) and another ($others)"
kill -STOP "$(topo_pid "$victim")"
rr -r "redis-cluster://127.0.0.1:$others" --redis-timeout 200ms --list
kill -CONT "$(topo_pid "$victim")"
assert_rc 69 "partial: $(cat "$OUT" "$ERR")"
assert_contains "$(tail -1 "$OUT")" "partial:"
awk 'NR > 1 { print $1 }' "$OUT" | grep -qx c-alpha && fail "c-alpha listed though its master did not answer"
[ "$(grep -c '^c-' "$OUT")" -ge 1 ] || fail "the other masters' jobs are missing: $(cat "$OUT")"
end_test

done_testing
