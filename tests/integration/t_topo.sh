#!/usr/bin/env bash
# t_topo.sh — the self-test of lib_topo.sh, with redis-cli only (redlock-run
# is not needed): a Sentinel group and its failover, a Sentinel group with
# passwords whose master is killed, a Cluster with a slot migrated in two
# halves and in one go, a Cluster failover; and that a test that fails
# leaves no redis process behind.
#
# Skip it with RR_SKIP_TOPO=1 (it takes ~15 s and starts up to 8 servers at once).
# shellcheck disable=SC2153,SC2086,SC2119  # variables from lib_topo.sh; words() splits on purpose; functions called without args
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/lib_topo.sh
. "$(dirname "$0")/lib_topo.sh"

if [ "${RR_SKIP_TOPO:-0}" = 1 ]; then
    t "the topology library"
    skip_asked "RR_SKIP_TOPO=1"
    done_testing
    exit 0
fi
if ! command -v redis-sentinel >/dev/null 2>&1; then
    t "redis-sentinel"; fail "redis-sentinel not installed (scripts/deps.sh test)"; done_testing; exit 1
fi

words() { echo $#; }
cli_c() { timeout 5 redis-cli -c -h 127.0.0.1 -p "$1" "${@:2}" 2>&1 | tr -d '\r'; }

# --- Sentinel ----------------------------------------------------------------

t "topo_sentinel_start: 1 master, 2 replicas, 3 sentinels that know each other"
t0=$(now_ms)
if topo_sentinel_start; then
    note "sentinel group up in $(( $(now_ms) - t0 )) ms: master $MASTER_PORT, replicas $REPLICA_PORTS, sentinels $SENT_PORTS"
    assert_eq 3 "$(words $SENT_PORTS)" "sentinels"
    assert_eq 2 "$(words $REPLICA_PORTS)" "replicas"
    assert_eq mymaster "$SENT_NAME" "default name"
    read -r s1 s2 s3 <<<"$SENT_PORTS"
    assert_eq "redis-sentinel://127.0.0.1:$s1,127.0.0.1:$s2,127.0.0.1:$s3/mymaster" "$SENT_URL" "SENT_URL"
    assert_eq "$SENT_URL" "$SENT_URL_AUTH" "SENT_URL_AUTH without a password"
    assert_eq "$MASTER_PORT" "$(topo_sentinel_master)" "topo_sentinel_master"
    assert_eq master "$(topo_role "$MASTER_PORT")" "ROLE of the master"
    for p in $REPLICA_PORTS; do assert_eq slave "$(topo_role "$p")" "ROLE of $p"; done
    for p in $SENT_PORTS; do assert_eq sentinel "$(topo_role "$p")" "ROLE of $p"; done
    for p in $SENT_PORTS $MASTER_PORT $REPLICA_PORTS; do
        pid=$(topo_pid "$p")
        if assert_int "$pid" "topo_pid $p"; then
            pid_gone "$pid" && fail "topo_pid $p: $pid is not running"
        fi
    done
    assert_eq OK "$(topo_cli "$s2" SENTINEL CKQUORUM mymaster | cut -c1-2)" "CKQUORUM"
    SENT_OK=1
else
    fail "topo_sentinel_start failed"
    SENT_OK=0
fi

t "topo_sentinel_failover: a new master that all sentinels name"
if [ "$SENT_OK" = 1 ]; then
    topo_cli "$MASTER_PORT" SET topo-key before-failover >/dev/null
    topo_cli "$MASTER_PORT" WAIT 2 2000 >/dev/null
    old=$MASTER_PORT
    t0=$(now_ms)
    if topo_sentinel_failover; then
        note "failover took $(( $(now_ms) - t0 )) ms: $old -> $MASTER_PORT"
        new=$(topo_sentinel_master)
        assert_ne "$old" "$new" "master after the failover"
        assert_eq "$new" "$MASTER_PORT" "MASTER_PORT follows"
        assert_eq master "$(topo_role "$new")" "ROLE of the new master"
        assert_contains " $REPLICA_PORTS " " $old " "the old master is among REPLICA_PORTS"
        for s in $SENT_PORTS; do
            assert_eq "$new" "$(topo_cli "$s" SENTINEL get-master-addr-by-name mymaster | sed -n 2p)" "sentinel $s"
        done
        assert_eq before-failover "$(topo_cli "$new" GET topo-key)" "the key on the new master"
    else
        fail "topo_sentinel_failover failed"
    fi
else
    fail "no sentinel group"
fi

t "topo_sentinel_stop: every process of the group is gone"
pids=()
for p in $SENT_PORTS $TOPO_DATA_PORTS; do pids+=("$(topo_pid "$p")"); done
topo_sentinel_stop
for pid in "${pids[@]}"; do pid_gone "$pid" || fail "pid $pid still running"; done

t "topo_sentinel_auth: passwords on the sentinels and on the data nodes"
if topo_sentinel_auth; then
    read -r s1 _ <<<"$SENT_PORTS"
    out=$(timeout 5 redis-cli -h 127.0.0.1 -p "$s1" SENTINEL masters 2>&1)
    assert_contains "$out" NOAUTH "sentinel without its password"
    out=$(timeout 5 redis-cli -h 127.0.0.1 -p "$MASTER_PORT" GET x 2>&1)
    assert_contains "$out" NOAUTH "master without its password"
    assert_eq "$MASTER_PORT" "$(topo_sentinel_master)" "master with the password"
    assert_ne "" "$SENT_PASS" "SENT_PASS"
    assert_ne "" "$MASTER_PASS" "MASTER_PASS"
    assert_eq "redis-sentinel://:$MASTER_PASS@${SENT_URL#redis-sentinel://}" "$SENT_URL_AUTH" "SENT_URL_AUTH"
    AUTH_OK=1
else
    fail "topo_sentinel_auth failed"
    AUTH_OK=0
fi

t "topo_sentinel_wait_master_change: the master is killed, the sentinels elect another"
if [ "$AUTH_OK" = 1 ]; then
    old=$MASTER_PORT
    topo_kill "$old" || fail "topo_kill $old"
    t0=$(now_ms)
    if topo_sentinel_wait_master_change "$old"; then
        note "failover after kill -9 took $(( $(now_ms) - t0 )) ms: $old -> $MASTER_PORT"
        assert_ne "$old" "$MASTER_PORT" "new master"
        assert_eq master "$(topo_role "$MASTER_PORT")" "ROLE"
        # The one live replica was repointed during the failover.
        t0=$(now_ms)
        if topo_sentinel_wait_synced; then
            note "settled in $(( $(now_ms) - t0 )) ms"
        else
            fail "topo_sentinel_wait_synced"
        fi
    else
        fail "no new master"
    fi
else
    fail "no sentinel group with auth"
fi
topo_sentinel_stop

# --- Cluster -------------------------------------------------------------------

# A dump.rdb in $TMP (as lib.sh's servers and replicas leave) must not reach
# the cluster nodes: a node loading keys of unassigned slots claims them.
if start_redis STRAY; then
    R STRAY SET topo-key stray >/dev/null
    R STRAY SAVE >/dev/null
    stop_redis STRAY
fi

t "topo_cluster_start: 6 nodes, 3 masters with a replica each, state ok"
t0=$(now_ms)
if topo_cluster_start 2>"$TMP/topo-cluster.err"; then
    note "cluster up in $(( $(now_ms) - t0 )) ms: $CLUSTER_PORTS"
    assert_eq 6 "$(words $CLUSTER_PORTS)" "CLUSTER_PORTS"
    for p in $CLUSTER_PORTS; do
        assert_lt "$p" 55535 "port $p"
        assert_int "$(topo_pid "$p")" "topo_pid $p"
        assert_eq 0 "$(topo_cli "$p" DBSIZE)" "keys on $p"
    done
    read -r c1 c2 c3 _ <<<"$CLUSTER_PORTS"
    assert_eq "redis-cluster://127.0.0.1:$c1,127.0.0.1:$c2,127.0.0.1:$c3" "$CLUSTER_URL" "CLUSTER_URL"
    assert_eq 3 "$(topo_cluster_masters | wc -l)" "masters"
    assert_not_contains "$(cat "$TMP/topo-cluster.err")" "attempt" "started at the first attempt"
    for m in $(topo_cluster_masters); do
        r=$(topo_cluster_replica_of "$m")
        assert_eq slave "$(topo_role "$r")" "replica $r of $m"
    done
    CL_OK=1
else
    fail "topo_cluster_start failed"
    sed 's/^/#   /' "$TMP/topo-cluster.err"
    CL_OK=0
fi

t "topo_cluster_slot_of / owner / nonowner"
if [ "$CL_OK" = 1 ]; then
    slot=$(topo_cluster_slot_of '{topo}a')
    assert_eq "$slot" "$(topo_cluster_slot_of 'x{topo}y')" "hash tag"
    assert_int "$slot" "slot"
    from=$(topo_cluster_owner "$slot")
    to=$(topo_cluster_nonowner "$slot")
    assert_int "$from" "owner"
    assert_int "$to" "nonowner"
    assert_ne "$from" "$to" "owner and nonowner"
    for i in 1 2 3 4 5; do topo_cli "$from" SET "{topo}k$i" "v$i" >/dev/null; done
    out=$(topo_cli "$to" GET '{topo}k1' 2>&1)
    assert_contains "$out" MOVED "GET on a non-owner"
fi

t "topo_cluster_migrate_begin: the slot is half-way (ASK for keys not there)"
if [ "$CL_OK" = 1 ] && topo_cluster_migrate_begin "$slot" "$from" "$to"; then
    assert_contains "$(topo_cli "$from" CLUSTER NODES)" "[$slot->-" "MIGRATING marker on the source"
    assert_contains "$(topo_cli "$to" CLUSTER NODES)" "[$slot-<-" "IMPORTING marker on the target"
    assert_eq v1 "$(topo_cli "$from" GET '{topo}k1')" "a key still on the source"
    out=$(topo_cli "$from" GET '{topo}absent' 2>&1)
    assert_contains "$out" ASK "a missing key is redirected with ASK"
    assert_eq "$from" "$(topo_cluster_owner "$slot")" "the owner is still the source"
else
    fail "topo_cluster_migrate_begin failed"
fi

t "topo_cluster_migrate_finish: keys moved, the slot belongs to the target everywhere"
if [ "$CL_OK" = 1 ] && topo_cluster_migrate_finish "$slot" "$from" "$to"; then
    assert_eq "$to" "$(topo_cluster_owner "$slot")" "new owner"
    assert_eq 5 "$(topo_cli "$to" CLUSTER COUNTKEYSINSLOT "$slot")" "keys on the target"
    assert_eq 0 "$(topo_cli "$from" CLUSTER COUNTKEYSINSLOT "$slot")" "keys on the source"
    for p in $CLUSTER_PORTS; do
        assert_eq v3 "$(cli_c "$p" GET '{topo}k3')" "redis-cli -c -p $p GET"
    done
else
    fail "topo_cluster_migrate_finish failed"
fi

t "topo_cluster_migrate_slot: a slot with keys, in one go"
if [ "$CL_OK" = 1 ]; then
    slot2=$(topo_cluster_slot_of '{topo2}')
    from2=$(topo_cluster_owner "$slot2")
    to2=$(topo_cluster_nonowner "$slot2")
    for i in 1 2 3; do topo_cli "$from2" SET "{topo2}k$i" "w$i" >/dev/null; done
    if topo_cluster_migrate_slot "$slot2" "$from2" "$to2"; then
        assert_eq "$to2" "$(topo_cluster_owner "$slot2")" "new owner"
        assert_eq 3 "$(topo_cli "$to2" CLUSTER COUNTKEYSINSLOT "$slot2")" "keys on the target"
        assert_eq w2 "$(cli_c "$c1" GET '{topo2}k2')" "redis-cli -c GET"
    else
        fail "topo_cluster_migrate_slot failed"
    fi
fi

t "topo_cluster_failover: the replica takes over, the keys stay readable"
if [ "$CL_OK" = 1 ]; then
    r=$(topo_cluster_replica_of "$to")
    t0=$(now_ms)
    if topo_cluster_failover "$to"; then
        note "cluster failover took $(( $(now_ms) - t0 )) ms: $to -> $r"
        assert_eq master "$(topo_role "$r")" "ROLE of the promoted replica"
        assert_eq slave "$(topo_role "$to")" "ROLE of the old master"
        assert_eq "$r" "$(topo_cluster_owner "$slot")" "owner of the migrated slot"
        assert_eq "$to" "$(topo_cluster_replica_of "$r")" "the old master replicates the new one"
        for i in 1 2 3 4 5; do
            assert_eq "v$i" "$(cli_c "$c2" GET "{topo}k$i")" "{topo}k$i after the failover"
        done
        topo_cluster_wait_ok 5 || fail "topo_cluster_wait_ok"
    else
        fail "topo_cluster_failover failed"
    fi
fi

# --- cleanup when a test fails -------------------------------------------------

t "a failing test file leaves no redis process behind"
child=$TMP/child.sh
cat >"$child" <<EOF
. "$LIB_DIR/lib.sh"
. "$LIB_DIR/lib_topo.sh"
_topo_data_node '' && p1=\$TOPO_LAST
_topo_cluster_node && p2=\$TOPO_LAST
echo "\$(topo_pid "\$p1") \$(topo_pid "\$p2")" >"$TMP/child.pids"
t "fails on purpose"; fail "on purpose"
done_testing
EOF
timeout 30 bash "$child" >"$TMP/child.out" 2>&1
crc=$?
assert_eq 1 "$crc" "the child's exit status"
read -r -a cpids <"$TMP/child.pids" 2>/dev/null
assert_eq 2 "${#cpids[@]}" "the child's pids"
for pid in "${cpids[@]}"; do
    wait_for 5 pid_gone "$pid" || fail "pid $pid of the failed child still runs: $(tr '\0' ' ' <"/proc/$pid/cmdline")"
done

done_testing
