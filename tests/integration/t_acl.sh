#!/usr/bin/env bash
# t_acl.sh — least privilege: the README's ACL line is enough for every mode,
# and a user without it is refused with a message that names what is missing.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

start_redis S
start_redis S2
U=$S_URL
# The README's line, as written there (between the markers).
acl=$(sed -n '/<!-- acl -->/,/<!-- \/acl -->/p' "$TOP/README.md" | grep '^    ACL SETUSER' | sed 's/^    //')
t "the README has an ACL SETUSER line"
[ -n "$acl" ] || fail "no ACL line between <!-- acl --> markers in README.md"
end_test
t "the man page has the same line (the .deb ships no README)"
man_acl=$(sed -n '/^\.SH LEAST PRIVILEGE/,/^\.SH /p' "$TOP/man/redlock-run.1" | grep '^ACL SETUSER' | sed 's/\\-/-/g')
assert_eq "$man_acl" "$acl" "the man page's ACL line"
end_test
# shellcheck disable=SC2086  # the line is split into words on purpose
R S ${acl//PASSWORD/s3cret-acl} >/dev/null
# shellcheck disable=SC2086
R S2 ${acl//PASSWORD/s3cret-acl} >/dev/null
export REDLOCK_USER=redlock REDLOCK_PASSWORD=s3cret-acl

t "as that user: a run, a --once run and a skip"
rr -r "$U" aclrun -- true
assert_rc 0
rr -r "$U" --once day1 aclonce -- true
assert_rc 0
rr -r "$U" --once day1 aclonce -- sh -c 'touch "$1"' sh "$TMP/again"
assert_rc 0
assert_no_file "$TMP/again"
end_test

t "as that user: one server under two URLs is told apart (INFO allowed): 78 naming both"
rr -r "$U" -r "unix://$S_SOCK" -r "$S2_URL" --once twin acltwin -- true
assert_rc 78
assert_contains "$(cat "$ERR")" "127.0.0.1:$S_PORT and $S_SOCK are the same Redis server"
end_test

t "as that user: a waiter is woken by the release (SUBSCRIBE allowed)"
bg "$TMP/h" "$RR_BIN" -r "$U" aclwait -- sleep 1
w=$BG
wait_for 5 key_there S "$(k_lock aclwait)" || fail "the holder did not start"
rr -r "$U" -w 10s aclwait -- true
assert_rc 0
wait_pid "$w" 5
assert_lt "$ELAPSED_MS" 3000
end_test

t "as that user: --status, --status --json, --release, --resolve"
rr -r "$U" --status aclrun
assert_rc 0
rr -r "$U" --status --json --once day1 aclonce
assert_rc 0
bg "$TMP/h2" "$RR_BIN" -r "$U" -t 3s aclrel -- sleep 30
w=$BG
wait_for 5 key_there S "$(k_lock aclrel)" || fail "the holder did not start"
rr -r "$U" --release aclrel
assert_rc 0
wait_pid "$w" 5
assert_rc 79
rr -r "$U" --resolve clear --once day1 aclonce
assert_rc 0
end_test

t "as that user: --limit 2, two holders at once"
bg "$TMP/l1" "$RR_BIN" -r "$U" --limit 2 acllim -- sleep 1
w=$BG
wait_for 5 key_there S "$(k_lock acllim)" || fail "the first holder did not start"
rr -r "$U" --limit 2 acllim -- true
assert_rc 0
wait_pid "$w" 5
assert_rc 0
end_test

start_redis RP --replicaof 127.0.0.1 "$S_PORT"
# Up on the replica's side, and acknowledged on the master's: WAIT answers 1.
# (The link can be up a moment before the master has the replica's first
# ACK; then a WAIT right away counts 0 replicas: seen once under ASan.)
rp_up() { R RP INFO replication | grep -q 'master_link_status:up' && [ "$(R S WAIT 1 200)" = 1 ]; }
t "as that user: --sync-replicas 1 (WAIT allowed)"
wait_for 10 rp_up || fail "the replica did not sync"
# (WAIT gets half the --redis-timeout: 250 ms by default, which a replica
# starved of CPU on a loaded machine can miss; this case is about the ACL.)
rr -r "$U" --redis-timeout 3s --sync-replicas 1 aclsync -- true
assert_rc 0
assert_hash S "$(k_state aclsync)" status succeeded
end_test

t "a user without +wait: --sync-replicas is a permission problem (78), not unconfirmed replicas"
# The same line for another user, less +wait.
nw=${acl//PASSWORD/nowait-pw}
# shellcheck disable=SC2086  # the line is split into words on purpose
R S ${nw/SETUSER redlock /SETUSER redlock-nowait } -wait >/dev/null
REDLOCK_USER=redlock-nowait REDLOCK_PASSWORD=nowait-pw rr -r "$U" --sync-replicas 1 aclnowait -- sh -c 'touch "$1"' sh "$TMP/nowait"
assert_rc 78
assert_no_file "$TMP/nowait"
assert_contains "$(cat "$ERR")" "lacks a permission"
assert_contains "$(cat "$ERR")" "WAIT after the lock was refused: NOPERM"
assert_contains "$(cat "$ERR")" "redlock-run(1), LEAST PRIVILEGE"
assert_not_contains "$(cat "$ERR")" "replicas confirmed"
end_test

t "a user without PUBSUB NUMSUB: the queue drains in order, every waiter refreshing as the first"
# An older README's line: the scripts cannot ask whether a waiter listens
# (they pcall), so every entry keeps the short TTL (its value '1'), and a
# waiter that cannot ask either never sleeps longer than its entry lives.
np=${acl//PASSWORD/nops-pw}
# shellcheck disable=SC2086  # the line is split into words on purpose
R S ${np/SETUSER redlock /SETUSER redlock-nops } '-pubsub|numsub' '-pubsub|shardnumsub' >/dev/null
qlen_s() { [ "$(R S ZCARD "redlock:{$1}:queue")" = "$2" ]; }
job=aclnops d=$TMP/aclnops
mkdir -p "$d"
R S SET "$(k_lock "$job")" someone-else PX 60000 >/dev/null
export REDLOCK_USER=redlock-nops REDLOCK_PASSWORD=nops-pw
pids=()
for i in $(seq -w 1 12); do
    bg "$d/w$i" "$RR_BIN" -r "$U" -t 3s -w 60s "$job" -- sh -c 'echo "$1" >> "$2"' sh "$i" "$d/order"
    pids+=("$BG")
    wait_for 5 qlen_s "$job" "$((10#$i))" || true
done
export REDLOCK_USER=redlock REDLOCK_PASSWORD=s3cret-acl
sleep 1.5
last=$(R S ZRANGE "redlock:{$job}:queue" -1 -1)
assert_eq 1 "$(R S GET "redlock:{$job}:q:$last")" "the last waiter's entry (not heard listening)"
t0=$(now_ms)
R S DEL "$(k_lock "$job")" >/dev/null
assert_drained "$t0" "$d/order" 12 6000 "${pids[@]}"
end_test

t "a user that lacks a permission: refused, not run, with the server's reason"
R S ACL SETUSER weak on '>weakpw' '~redlock:*' '&redlock:*' -@all +evalsha +eval +get >/dev/null
REDLOCK_USER=weak REDLOCK_PASSWORD=weakpw rr -r "$U" aclweak -- sh -c 'touch "$1"' sh "$TMP/weak"
assert_rc 78
assert_no_file "$TMP/weak"
# The server's own words: Redis 7.0 "can't run this command", Redis 7.2+
# and Valkey "ACL failure in script: … no permissions to run …".
grep -qE "can't run this command|no permissions to run" "$ERR" ||
    fail "the server's reason is not in the message: $(cat "$ERR")"
end_test

t "a user that lacks a permission, with --wait: 78 at once, not retried until --wait runs out"
REDLOCK_USER=weak REDLOCK_PASSWORD=weakpw rr -r "$U" -w 10s aclweakw -- sh -c 'touch "$1"' sh "$TMP/weakw"
assert_rc 78
assert_lt "$ELAPSED_MS" 3000 "ms before the run gave up"
assert_no_file "$TMP/weakw"
assert_contains "$(cat "$ERR")" "the user lacks a permission the lock needs"
assert_not_contains "$(cat "$ERR")" "retrying"
end_test

# Redis 7.2 and later (8, Valkey 8, 9) word a denial inside a script "ERR ACL
# failure in script: User weak has no permissions to run the 'exists'
# command", without NOPERM (check_diag.c has every wording): the same user,
# now with every command but EXISTS, against whatever redis-server is here.
t "a user denied one command inside the script: 78 with the ACL hint, whatever the server's wording"
R S ACL SETUSER weak2 on '>weak2pw' '~redlock:*' '&redlock:*' +@all -exists >/dev/null
REDLOCK_USER=weak2 REDLOCK_PASSWORD=weak2pw rr -r "$U" -w 10s aclweak2 -- sh -c 'touch "$1"' sh "$TMP/weak2"
assert_rc 78
assert_lt "$ELAPSED_MS" 3000 "ms before the run gave up"
assert_no_file "$TMP/weak2"
assert_contains "$(cat "$ERR")" "the user lacks a permission the lock needs"
note "$(redis-server --version | cut -d' ' -f1-3): $(head -c 300 "$ERR")"
end_test

start_redis P --requirepass pw-required
t "no password where one is required: 78, one line that says what to set"
REDLOCK_USER= REDLOCK_PASSWORD= rr -r "$P_URL" cfg1 -- sh -c 'touch "$1"' sh "$TMP/cfg1"
assert_rc 78
assert_no_file "$TMP/cfg1"
assert_eq "$(wc -l <"$ERR")" 1 "lines on stderr"
assert_contains "$(cat "$ERR")" "Redis at 127.0.0.1:$P_PORT requires a password: set REDLOCK_PASSWORD or --password-file"
case $(cat "$ERR") in *"check that Redis is up"*) fail "two hints in one message" ;; esac
end_test

t "a wrong password: 78, and --wait does not retry it"
REDLOCK_USER= REDLOCK_PASSWORD=wrong rr -r "$P_URL" -w 30s cfg2 -- true
assert_rc 78
assert_lt "$ELAPSED_MS" 3000
assert_contains "$(cat "$ERR")" "refused the password"
end_test

t "a DB index out of range: 78, fix the URL"
REDLOCK_USER= REDLOCK_PASSWORD=pw-required rr -r "$P_URL/99" cfg3 -- true
assert_rc 78
assert_contains "$(cat "$ERR")" "has no such database"
end_test

t "--status --json without the password: a JSON error object, 78"
REDLOCK_USER= REDLOCK_PASSWORD= rr -r "$P_URL" --status --json cfg4
assert_rc 78
assert_contains "$(cat "$OUT")" '"exit_code":78'
# The server is named, as a run's message names it.
assert_contains "$(cat "$OUT")" "Redis at 127.0.0.1:$P_PORT requires a password"
end_test

# --- a Cluster and a Sentinel group, as that user -----------------------------
. "$(dirname "$0")/lib_topo.sh"
unset REDLOCK_USER REDLOCK_PASSWORD
if topo_cluster_start; then
    for p in $CLUSTER_PORTS; do
        # shellcheck disable=SC2086  # the line is split into words on purpose
        topo_cli "$p" ${acl//PASSWORD/s3cret-acl} >/dev/null
    done
    export REDLOCK_USER=redlock REDLOCK_PASSWORD=s3cret-acl
    t "as that user on a Cluster: a run, --status, and a waiter woken by the release (SSUBSCRIBE, SPUBLISH)"
    rr -r "$CLUSTER_URL" aclcl -- true
    assert_rc 0
    rr -r "$CLUSTER_URL" --status aclcl
    assert_rc 0
    bg "$TMP/ch" "$RR_BIN" -r "$CLUSTER_URL" aclclw -- sleep 1
    w=$BG
    cl_held() { "$RR_BIN" -r "$CLUSTER_URL" --status aclclw >/dev/null 2>&1; [ $? = 1 ]; }
    wait_for 5 cl_held || fail "the holder did not start"
    rr -r "$CLUSTER_URL" -w 10s aclclw -- true
    assert_rc 0
    wait_pid "$w" 5
    assert_lt "$ELAPSED_MS" 3000
    end_test
    unset REDLOCK_USER REDLOCK_PASSWORD
else
    t "a Cluster to run as that user"; fail "the cluster did not start"; end_test
fi

if topo_sentinel_start; then
    for p in $TOPO_DATA_PORTS; do
        # shellcheck disable=SC2086  # the line is split into words on purpose
        topo_cli "$p" ${acl//PASSWORD/s3cret-acl} >/dev/null
    done
    export REDLOCK_USER=redlock REDLOCK_PASSWORD=s3cret-acl
    t "as that user behind Sentinel: a run with --sync-replicas 2 and --status (ROLE, WAIT)"
    rr -r "$SENT_URL" --redis-timeout 3s --sync-replicas 2 aclsent -- true
    assert_rc 0
    rr -r "$SENT_URL" --status aclsent
    assert_rc 0
    end_test
else
    t "a Sentinel group to run as that user"; fail "the sentinel group did not start"; end_test
fi

done_testing
