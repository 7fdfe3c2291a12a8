#!/usr/bin/env bash
# t_cluster.sh — redis-cluster:// against a real six-node cluster (three
# masters, a replica each, from lib_topo.sh): routing from any seed, dead
# and silent seeds, every mode, waiters on sharded pub/sub, a resharding
# (renewals while the slot is half-way), CLUSTER FAILOVER and kill -9 of
# the slot's owner mid-run, a slot nobody serves (CLUSTERDOWN), and a
# TLS-only cluster (rediss-cluster://).
# run.sh: early (one of the longest: started first, so that the pool ends together)
# shellcheck disable=SC2016,SC2153,SC2015,SC2119  # child commands; NAME_PORT etc. from lib_topo; "a && b || fail" is meant
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/lib_topo.sh
. "$(dirname "$0")/lib_topo.sh"

if ! topo_cluster_start; then
    t "start a cluster"
    fail "cannot create the cluster (see above)"
    done_testing
    exit 1
fi

# lib_topo names nodes by port; lib.sh's helpers (R, assert_hash, k_*)
# by server name. These give each node its lib.sh name (TOPOn) and speak
# in names.
CL_NODES=()
for p in $CLUSTER_PORTS; do CL_NODES+=("${TOPO_NAME[$p]}"); done
cl_port() { local pv="${1}_PORT"; echo "${!pv}"; }
cl_name_of() { [ -n "${1:-}" ] && echo "${TOPO_NAME[$1]:-}"; }
cl_alive() { local pv="${1}_PID"; [ -n "${!pv:-}" ] && ! pid_gone "${!pv}"; }
cl_slot() { topo_cluster_slot_of "$1"; }
cl_owner() { cl_name_of "$(topo_cluster_owner "$1")"; }
cl_replica_of() { cl_name_of "$(topo_cluster_replica_of "$(cl_port "$1")")"; }
cl_id() { echo "${TOPO_CID[$(cl_port "$1")]}"; }
cl_other_master() {
    local m me
    me=$(cl_port "$1")
    for m in $(topo_cluster_masters); do [ "$m" != "$me" ] && { cl_name_of "$m"; return 0; }; done
    return 1
}
cl_kill() { topo_kill "$(cl_port "$1")"; }
cl_migrate_begin() { topo_cluster_migrate_begin "$1" "$(cl_port "$2")" "$(cl_port "$3")"; }
# (finish MIGRATEs what is left, then SETSLOT NODE everywhere, then waits.)
cl_migrate_finish() { topo_cluster_migrate_finish "$1" "$(cl_port "$2")" "$(cl_port "$3")"; }
# cl_migrate_keys SLOT FROM TO — only the MIGRATE step (the slot stays
# half-way: renewals meet ASK).
cl_migrate_keys() {
    local keys tp
    tp=$(cl_port "$3")
    for _ in $(seq 1 100); do
        mapfile -t keys < <(R "$2" CLUSTER GETKEYSINSLOT "$1" 100)
        [ "${#keys[@]}" -gt 0 ] && [ -n "${keys[0]}" ] || return 0
        R "$2" MIGRATE 127.0.0.1 "$tp" "" 0 5000 KEYS "${keys[@]}" >/dev/null || return 1
    done
}
# cl_url NAME... — a redis-cluster:// URL with those nodes as seeds.
cl_url() {
    local n list=()
    for n in "$@"; do list+=("127.0.0.1:$(cl_port "$n")"); done
    echo "redis-cluster://$(IFS=,; echo "${list[*]}")"
}
# cl_ports N — N free ports below 55535 whose bus port (+10000) is free too.
cl_ports() {
    "$PY" - "$1" <<'PYEOF'
import random, socket, sys
n, out = int(sys.argv[1]), []
def free(p):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p)); return True
    except OSError:
        return False
    finally:
        s.close()
while len(out) < n:
    p = random.randrange(20000, 45000)
    if p not in out and free(p) and free(p + 10000):
        out.append(p)
print(" ".join(map(str, out)))
PYEOF
}

# A child that says it started and lives until STOP exists (at most 30 s).
hold_cmd() { HOLD=(sh -c 'touch "$1"; i=0; while [ ! -e "$2" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done' sh "$1.started" "$1.stop"); }

# cmdstats NODE — "cmd calls" lines, the test's own commands left out.
# (REPLCONF: a replica's ACKs to its master, every second.)
cmdstats() {
    R "$1" INFO commandstats | tr -d '\r' | grep '^cmdstat_' |
        grep -v -e 'cmdstat_config' -e 'cmdstat_info' -e 'cmdstat_cluster' -e 'cmdstat_ping' \
            -e 'cmdstat_role' -e 'cmdstat_replconf' -e 'cmdstat_psync' |
        sed -E 's/^cmdstat_([^:]+):calls=([0-9]+),.*/\1 \2/' | sed 's/^spublish /publish /' | sort
}
resetstats() { local n; for n in "${CL_NODES[@]}"; do cl_alive "$n" && R "$n" CONFIG RESETSTAT >/dev/null; done; }

# job_on OWNER... — a job name whose slot is owned by none of the masters
# given (so that a run must be redirected), sets JOB and SLOT.
dead_ports() { read -r -a DEAD <<<"$(cl_ports 2)"; }

JOB=jobA
SLOT=$(cl_slot "{$JOB}")
OWNER=$(cl_owner "$SLOT")
OTHER=$(cl_other_master "$OWNER")
note "job $JOB: slot $SLOT on $OWNER; another master: $OTHER"

# ---------------------------------------------------------------------------
t "a run from a seed that owns the slot sends exactly the commands of a plain run"
rr -r "$(cl_url "$OWNER")" "$JOB" -- true   # loads the scripts on the owner
assert_rc 0 "warm-up run"
opp="${OWNER}_PORT"
resetstats
rr -r "redis://127.0.0.1:${!opp}" "$JOB" -- true
assert_rc 0 "plain redis:// run to the owner"
plain=$(cmdstats "$OWNER")
resetstats
rr -r "$(cl_url "$OWNER" "$OTHER")" "$JOB" -- true
assert_rc 0 "cluster run from the owner"
clus=$(cmdstats "$OWNER")
# The one difference: the release's SPUBLISH (sharded) for PUBLISH.
assert_eq "$plain" "$clus" "commands on the owner (spublish counted as publish)"
assert_eq "" "$(cmdstats "$OTHER")" "commands on the other seed"
note "commands per run: $(echo "$plain" | tr '\n' ' ')"

t "a run from a seed that does not own the slot follows MOVED"
resetstats
rr -r "$(cl_url "$OTHER")" "$JOB" -- sh -c 'echo ran'
assert_rc 0
assert_eq ran "$(cat "$OUT")" "child output"
assert_hash "$OWNER" "$(k_state $JOB)" status succeeded
assert_key_gone "$OWNER" "$(k_lock $JOB)"
# One refused script on the seed, nothing else.
assert_eq "evalsha 0" "$(cmdstats "$OTHER")" "commands on the non-owner seed"
assert_contains "$(R "$OTHER" INFO commandstats)" "cmdstat_evalsha:calls=0,usec=0,usec_per_call=0.00,rejected_calls=1" "the seed refused the script once (MOVED)"

t "a plain redis:// URL at a node that does not own the slot: 69, and the hint is redis-cluster://"
rr -r "redis://127.0.0.1:$(cl_port "$OTHER")" "$JOB" -- touch "$TMP/plain.ran"
assert_rc 69
assert_no_file "$TMP/plain.ran"
assert_contains "$(cat "$ERR")" "MOVED"
assert_contains "$(cat "$ERR")" "give the cluster as redis-cluster://HOST:PORT"
assert_not_contains "$(cat "$ERR")" "check that Redis is up"

t "the first seed dead: the next one answers, in well under a connect timeout"
dead_ports
rr_direct -r "redis-cluster://127.0.0.1:${DEAD[0]},127.0.0.1:$(p="${OTHER}_PORT"; echo "${!p}")" "$JOB" -- true
assert_rc 0
assert_lt "$ELAPSED_MS" 1500 "elapsed ms"

t "the first seed silent (connect never completes): one --redis-timeout, then the next seed"
# A listening socket whose backlog is full: the kernel drops our SYN, as
# for a host that is down without a reset.
"$PY" - "${DEAD[1]}" >"$TMP/hole.out" 2>&1 <<'PYEOF' &
import socket, sys, time
port = int(sys.argv[1])
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", port)); l.listen(0)
fill = []
for _ in range(3):
    c = socket.socket(); c.setblocking(False)
    try: c.connect(("127.0.0.1", port))
    except BlockingIOError: pass
    fill.append(c)
print("ready", flush=True)
time.sleep(60)
PYEOF
hole=$!
track_pid "$hole"
wait_for 5 grep -q ready "$TMP/hole.out" || fail "the silent port did not start"
rr_direct -r "redis-cluster://127.0.0.1:${DEAD[1]},127.0.0.1:$(p="${OTHER}_PORT"; echo "${!p}")" --redis-timeout 500ms "$JOB" -- true
assert_rc 0
assert_lt "$ELAPSED_MS" 1500 "elapsed ms (--redis-timeout 500ms, --connect-timeout 1s)"
kill -KILL "$hole" 2>/dev/null
wait "$hole" 2>/dev/null

t "no seed reachable: 69 in bounded time, naming what was tried"
rr_direct -r "redis-cluster://127.0.0.1:${DEAD[0]},127.0.0.1:${DEAD[1]}" "$JOB" -- true
assert_rc 69
assert_lt "$ELAPSED_MS" 3000 "elapsed ms"
assert_contains "$(cat "$ERR")" "127.0.0.1:${DEAD[0]}" "message"
assert_contains "$(cat "$ERR")" "127.0.0.1:${DEAD[1]}" "message"
[ "$(wc -l <"$ERR")" -le 2 ] || fail "more than two lines of stderr"

t "--once, --status, --release and --resolve through a non-owner seed"
U=$(cl_url "$OTHER")
rr -r "$U" --once day1 "$JOB" -- true
assert_rc 0 "--once run"
assert_hash "$OWNER" "$(k_once $JOB day1)" status succeeded
rr -r "$U" --once day1 "$JOB" -- sh -c 'echo again'
assert_rc 0 "--once again"
assert_eq "" "$(cat "$OUT")" "the child did not run again"
rr -r "$U" --status --json "$JOB"
assert_rc 0 "--status"
assert_contains "$(cat "$OUT")" '"status":"succeeded"' "--status output"
bg "$TMP/ab" "$RR_BIN" -r "$U" -t 1s --once day2 "$JOB" -- sh -c 'touch "$1"; sleep 30' sh "$TMP/ab.started"
w=$BG
wait_for 10 file_there "$TMP/ab.started" || fail "abandoned run: child did not start"
kill_wait KILL "$w" 5
wait_for 5 key_gone "$OWNER" "$(k_lock $JOB)" || fail "abandoned run: lease did not expire"
rr -r "$U" --once day2 "$JOB" -- true
assert_rc 65 "the abandoned --once ID is refused"
rr -r "$U" --resolve succeeded --once day2 "$JOB"
assert_rc 0 "--resolve"
assert_hash "$OWNER" "$(k_once $JOB day2)" status succeeded
hold_cmd "$TMP/rel"
bg "$TMP/rel" "$RR_BIN" -r "$U" -t 1s "$JOB" -- "${HOLD[@]}"
w=$BG
wait_for 10 file_there "$TMP/rel.started" || fail "holder's child did not start"
rr -r "$U" --status "$JOB"
assert_rc 1 "--status while held"
rr -r "$U" --release "$JOB"
assert_rc 0 "--release"
assert_key_gone "$OWNER" "$(k_lock $JOB)"
wait_pid "$w" 15
assert_rc 79 "the holder after --release"
assert_hash "$OWNER" "$(k_state $JOB)" status lost

t "--sync-replicas 1: WAIT on the slot's owner"
resetstats
rr -r "$(cl_url "$OTHER")" --sync-replicas 1 "$JOB" -- true
assert_rc 0
w=$(R "$OWNER" INFO commandstats | grep -o 'cmdstat_wait:calls=[0-9]*' | cut -d= -f2)
[ "${w:-0}" -ge 2 ] 2>/dev/null || fail "WAIT calls on the owner: '${w:-0}' (expected one per write)"
rr -r "$(cl_url "$OTHER")" --sync-replicas 2 "$JOB" -- true
assert_rc 69 "--sync-replicas 2 with one replica"

# subscribed NODE JOB — a waiter's sharded subscription (its own wake
# channel, redlock:{JOB}:wake:WAITER) is on NODE.
subscribed() { [ -n "$(R "$1" PUBSUB SHARDCHANNELS "redlock:{$2}:*")" ]; }
# renewed_on NODE — the PTTL of $J's lock on NODE is above $last_pttl (a
# renewal landed there); $last_pttl becomes the PTTL read.
renewed_on() {
    local p
    p=$(R "$1" PTTL "$(k_lock $J)")
    [ "$p" -gt "$last_pttl" ] 2>/dev/null && { last_pttl=$p; return 0; }
    last_pttl=$p
    return 1
}
# asking_pttl NODE KEY — PTTL on an IMPORTING node (after ASKING).
asking_pttl() { local pv="${1}_PORT"; printf 'ASKING\nPTTL %s\n' "$2" | timeout 10 redis-cli -p "${!pv}" | tail -1; }
owner_is() { [ "$(cl_owner "$1")" = "$2" ]; }
linked() { R "$1" INFO replication | grep -q 'master_link_status:up'; }
state_fail() { R "$1" CLUSTER INFO | grep -q '^cluster_state:fail'; }

t "a Redlock quorum of a cluster and two plain masters"
J=jobQ; S=$(cl_slot "{$J}"); O=$(cl_owner "$S"); T=$(cl_other_master "$O")
if start_redis Q1 && start_redis Q2; then
    rr -r "$(cl_url "$T")" -r "$Q1_URL" -r "$Q2_URL" "$J" -- sh -c 'echo "$REDLOCK_FENCE"'
    assert_rc 0
    assert_hash "$O" "$(k_state $J)" status succeeded
    assert_hash Q1 "$(k_state $J)" status succeeded
    assert_hash Q2 "$(k_state $J)" status succeeded
    # The cluster down (its URL's only seed a dead port) is one vote of three.
    dead_ports
    rr -r "redis-cluster://127.0.0.1:${DEAD[0]}" -r "$Q1_URL" -r "$Q2_URL" "$J" -- true
    assert_rc 0 "with the cluster unreachable: 2 of 3"
else
    fail "cannot start two plain redis-servers"
fi

t "--limit 2 and FIFO --wait through a non-owner seed: never more than 2 at once"
J=jobM; S=$(cl_slot "{$J}"); O=$(cl_owner "$S"); T=$(cl_other_master "$O")
d=$TMP/lim
mkdir -p "$d"
resetstats
pids=()
for i in 1 2 3 4 5; do
    bg "$d/j$i" "$RR_BIN" -r "$(cl_url "$T")" --limit 2 -w 20s "$J" -- sh -c \
        'echo "S $(date +%s%3N) $REDLOCK_SLOT" >> "$1"; sleep 0.6; echo "E $(date +%s%3N) $REDLOCK_SLOT" >> "$1"' \
        sh "$d/times"
    pids+=("$BG")
done
wait_all 30 "${pids[@]}"
assert_eq 0 "$FAILS" "jobs that failed"
read -r maxc starts slots < <(limit_stats "$d/times")
assert_eq 5 "$starts" "jobs that ran"
[ "${maxc:-9}" -le 2 ] || fail "$maxc jobs ran at once with --limit 2"
assert_eq "1,2" "$slots" "REDLOCK_SLOT values"
# Every wake-up and release message was sharded: no PUBLISH anywhere.
st=$(R "$O" INFO commandstats)
assert_contains "$st" "cmdstat_spublish:" "the owner's commands"
for n in "${CL_NODES[@]}"; do
    cl_alive "$n" && assert_not_contains "$(R "$n" INFO commandstats)" "cmdstat_publish:" "commands on $n"
done

t "a waiter follows its sharded channel across a resharding of the slot"
J=jobW; S=$(cl_slot "{$J}"); O=$(cl_owner "$S"); T=$(cl_other_master "$O")
U=$(cl_url "$T")
hold_cmd "$TMP/wh"
bg "$TMP/wh" "$RR_BIN" -r "$U" -t 30s "$J" -- "${HOLD[@]}"
h=$BG
wait_for 10 file_there "$TMP/wh.started" || fail "holder's child did not start"
bg "$TMP/ww" "$RR_BIN" -r "$U" --wait 25s "$J" -- sh -c 'date +%s%3N > "$1"' sh "$TMP/ww.at"
waiter=$BG
wait_for 5 subscribed "$O" "$J" || fail "the waiter is not subscribed (SSUBSCRIBE) on the owner $O"
assert_eq "" "$(R "$T" PUBSUB SHARDCHANNELS "redlock:{$J}:*")" "sharded channels on $T before"
assert_eq "" "$(R "$O" PUBSUB CHANNELS "redlock:{$J}:*")" "plain (broadcast) channels on the owner"
cl_migrate_begin "$S" "$O" "$T" && cl_migrate_keys "$S" "$O" "$T" && cl_migrate_finish "$S" "$O" "$T" ||
    fail "resharding slot $S from $O to $T failed"
wait_for 5 subscribed "$T" "$J" || fail "the waiter did not subscribe again on the new owner $T"
stop_at=$(now_ms)
touch "$TMP/wh.stop"
wait_pid "$h" 15
assert_rc 0 "the holder"
wait_pid "$waiter" 15
assert_rc 0 "the waiter"
if [ -s "$TMP/ww.at" ]; then
    lat=$(( $(cat "$TMP/ww.at") - stop_at ))
    note "waiter started ${lat} ms after the holder was told to stop"
    assert_lt "$lat" 1500 "waiter latency ms"
fi
assert_hash "$T" "$(k_state $J)" status succeeded

t "a resharding of the slot mid-run, with renewals while it is half-way"
J=jobR; S=$(cl_slot "{$J}"); O=$(cl_owner "$S"); T=$(cl_other_master "$O")
hold_cmd "$TMP/rs"
bg "$TMP/rs" "$RR_BIN" -r "$(cl_url "$O")" -t 3s "$J" -- "${HOLD[@]}"
h=$BG
wait_for 10 file_there "$TMP/rs.started" || fail "child did not start"
cl_migrate_begin "$S" "$O" "$T" || fail "SETSLOT IMPORTING/MIGRATING failed"
sleep 1.5     # renewals on the MIGRATING source (every key still there)
cl_migrate_keys "$S" "$O" "$T" || fail "MIGRATE failed"
p1=$(asking_pttl "$T" "$(k_lock $J)")
sleep 1.5     # renewals: ASK to the IMPORTING target, ASKING + script
p2=$(asking_pttl "$T" "$(k_lock $J)")
note "lock PTTL on the target after MIGRATE: $p1, 1.5 s later: $p2"
[ "$p2" -gt 1600 ] 2>/dev/null || fail "no renewal reached the importing node (PTTL $p1 then $p2)"
cl_migrate_finish "$S" "$O" "$T"
# Renewals (every second of the 3 s lease) now get MOVED from the old
# owner and go to the new one: the lock's PTTL there must go up (a renewal
# landed) within two renewal intervals, not just the run be alive.
last_pttl=$(R "$T" PTTL "$(k_lock $J)")
wait_for 2.5 renewed_on "$T" || fail "no renewal reached the new owner after MOVED (its PTTL: $last_pttl)"
note "lock PTTL on the new owner after a renewal through MOVED: $last_pttl"
pid_gone "$h" && fail "the run stopped mid-resharding"
touch "$TMP/rs.stop"
wait_pid "$h" 15
assert_rc 0 "the run"
assert_hash "$T" "$(k_state $J)" status succeeded
assert_key_gone "$T" "$(k_lock $J)"
assert_eq 0 "$(R "$O" DBSIZE)" "keys left on the old owner"

t "an acquire while the slot is half-way: TRYAGAIN, 69 with a hint; --wait rides it out"
# acquire.lua names keys that do not exist yet (the attempt's tombstone),
# so while the slot is MIGRATING/IMPORTING Redis refuses it (TRYAGAIN) on
# both nodes; it is retried until --redis-timeout.
J=jobH; S=$(cl_slot "{$J}"); O=$(cl_owner "$S"); T=$(cl_other_master "$O")
rr -r "$(cl_url "$O")" "$J" -- true
assert_rc 0 "a first run (the keys exist)"
cl_migrate_begin "$S" "$O" "$T" || fail "SETSLOT IMPORTING/MIGRATING failed"
rr_direct -r "$(cl_url "$O")" "$J" -- touch "$TMP/half.ran"
assert_rc 69
assert_no_file "$TMP/half.ran" "marker"
assert_contains "$(cat "$ERR")" "TRYAGAIN" "message"
assert_contains "$(cat "$ERR")" "resharded" "hint"
assert_lt "$ELAPSED_MS" 2000 "elapsed ms"
bg "$TMP/half" "$RR_BIN" -r "$(cl_url "$O")" --wait 15s "$J" -- touch "$TMP/half.ran"
w=$BG
sleep 1
cl_migrate_keys "$S" "$O" "$T" && cl_migrate_finish "$S" "$O" "$T" || fail "resharding failed"
wait_pid "$w" 15
assert_rc 0 "the --wait run once the slot has moved"
assert_file_exists "$TMP/half.ran" "marker"
assert_hash "$T" "$(k_state $J)" status succeeded

t "nodes that redirect to each other for a moment (MOVED ping-pong): waited out, not given up at once"
# SETSLOT NODE reaches the source before the target: the source answers
# MOVED to the target, the target (still IMPORTING, no ASKING) MOVED back.
J=jobP; S=$(cl_slot "{$J}"); O=$(cl_owner "$S"); T=$(cl_other_master "$O")
rr -r "$(cl_url "$O")" "$J" -- true
assert_rc 0 "a first run"
cl_migrate_begin "$S" "$O" "$T" && cl_migrate_keys "$S" "$O" "$T" || fail "resharding failed"
R "$O" CLUSTER SETSLOT "$S" NODE "$(cl_id "$T")" >/dev/null
bg "$TMP/pp" "$RR_BIN" -r "$(cl_url "$O")" --redis-timeout 3s "$J" -- touch "$TMP/pp.ran"
w=$BG
sleep 0.5
R "$T" CLUSTER SETSLOT "$S" NODE "$(cl_id "$T")" >/dev/null
cl_migrate_finish "$S" "$O" "$T"
wait_pid "$w" 15
assert_rc 0 "the run started during the ping-pong"
assert_file_exists "$TMP/pp.ran" "marker"

t "a resharding that leaves our lock behind: the run stops as lost (79), nothing re-acquires it"
J=jobL; S=$(cl_slot "{$J}"); O=$(cl_owner "$S"); T=$(cl_other_master "$O")
hold_cmd "$TMP/lb"
bg "$TMP/lb" "$RR_BIN" -r "$(cl_url "$O")" -t 3s "$J" -- "${HOLD[@]}"
h=$BG
wait_for 10 file_there "$TMP/lb.started" || fail "child did not start"
cl_migrate_begin "$S" "$O" "$T" || fail "SETSLOT IMPORTING/MIGRATING failed"
R "$O" DEL "$(k_lock $J)" >/dev/null
cl_migrate_keys "$S" "$O" "$T" && cl_migrate_finish "$S" "$O" "$T" || fail "resharding failed"
wait_pid "$h" 10
assert_rc 79 "the run"
assert_key_gone "$T" "$(k_lock $J)"
assert_hash "$T" "$(k_state $J)" status lost

t "CLUSTER FAILOVER of the slot's owner mid-run: the run goes on, the record lands on the new owner"
J=jobF; S=$(cl_slot "{$J}"); O=$(cl_owner "$S"); P=$(cl_replica_of "$O")
hold_cmd "$TMP/fo"
bg "$TMP/fo" "$RR_BIN" -r "$(cl_url "$O")" -t 3s "$J" -- "${HOLD[@]}"
h=$BG
wait_for 10 file_there "$TMP/fo.started" || fail "child did not start"
sleep 0.5
topo_cluster_failover "$(cl_port "$O")" || fail "CLUSTER FAILOVER of $O did not complete"
wait_for 10 owner_is "$S" "$P" || fail "$P did not take over slot $S"
sleep 2       # renewals on the new owner
pid_gone "$h" && fail "the run stopped at the failover"
touch "$TMP/fo.stop"
wait_pid "$h" 15
assert_rc 0 "the run"
assert_hash "$P" "$(k_state $J)" status succeeded
assert_key_gone "$P" "$(k_lock $J)"

t "kill -9 of the owner mid-run, --sync-replicas 1: a contender is refused (75), the run ends 0"
J=jobK; S=$(cl_slot "{$J}"); O=$(cl_owner "$S"); M2=$(cl_other_master "$O"); R2=$(cl_replica_of "$M2")
# A second replica for the owner, so one is left to confirm writes after
# the promotion.
R "$R2" CLUSTER REPLICATE "$(cl_id "$O")" >/dev/null
wait_for 15 linked "$R2" || fail "$R2 did not become a replica of $O"
U=$(cl_url "$M2" "$O")
hold_cmd "$TMP/k9"
# The lease (20 s) outlasts the promotion: 2-4 s usually, 7.8 s once in
# CI's ASan pass, where a 6 s lease ran out first: the run then rightly
# stopped as lost (79) and the contender rightly ran (0).
bg "$TMP/k9" "$RR_BIN" -r "$U" --sync-replicas 1 -t 20s "$J" -- "${HOLD[@]}"
h=$BG
wait_for 10 file_there "$TMP/k9.started" || fail "child did not start"
cl_kill "$O"
t0=$(now_ms)
topo_cluster_wait_ok 15 || fail "the cluster did not recover"
P=$(cl_owner "$S")
note "$O killed; slot $S served by $P after $(( $(now_ms) - t0 )) ms"
rr -r "$(cl_url "$M2")" --sync-replicas 1 "$J" -- true
assert_rc 75 "the contender"
pid_gone "$h" && fail "the run stopped after the owner was killed"
# A renewal (every 6.7 s) lands on the new owner, confirmed by its replica:
# the lock's PTTL there goes up.
last_pttl=$(R "$P" PTTL "$(k_lock $J)")
wait_for 10 renewed_on "$P" || fail "no renewal reached the new owner (its PTTL: $last_pttl)"
pid_gone "$h" && fail "the run stopped after the promotion"
touch "$TMP/k9.stop"
wait_pid "$h" 15
assert_rc 0 "the run"
[ -n "$P" ] && assert_hash "$P" "$(k_state $J)" status succeeded

t "the slot's master and replica both down (CLUSTERDOWN): 69 in bounded time"
J=jobK; S=$(cl_slot "{$J}"); O=$(cl_owner "$S"); P=$(cl_replica_of "$O")
L=$(cl_other_master "$O")
cl_kill "$O"
[ -n "$P" ] && cl_kill "$P"
wait_for 15 state_fail "$L" || fail "the cluster did not notice"
rr_direct -r "$(cl_url "$L")" "$J" -- true
assert_rc 69
assert_lt "$ELAPSED_MS" 3000 "elapsed ms"
assert_contains "$(cat "$ERR")" "CLUSTERDOWN" "message"

# ---------------------------------------------------------------------------
# A second cluster, TLS only (--port 0, tls-cluster, tls-replication).
tls_ok() {
    local p
    for p in "${TPORTS[@]}"; do
        timeout 5 redis-cli --tls --cacert "$PKI/ca.crt" -p "$p" CLUSTER INFO 2>/dev/null |
            grep -q '^cluster_state:ok' || return 1
    done
}
t "rediss-cluster://: TLS to every node the redirections name, from each node as the seed"
if ! command -v openssl >/dev/null || ! pki_node; then
    fail "openssl could not make the test certificates"
else
    # tls_node — one TLS-only node on a fresh port (another on a port taken
    # meanwhile); appends it to TPORTS.
    tls_node() {
        local p
        for _ in 1 2 3 4 5; do
            p=$(cl_ports 1)
            if spawn_tls "TLS$p" "$p" s --tls-cluster yes --tls-replication yes --cluster-enabled yes \
                --cluster-config-file "$TMP/tnodes-$p.conf" --cluster-node-timeout 1000 \
                --dbfilename "tls-$p.rdb"; then
                TPORTS+=("$p")
                return 0
            fi
            note "TLS node on $p did not start: $(tail -1 "$TMP/TLS$p.log" 2>/dev/null)"
        done
        return 1
    }
    TPORTS=()
    for _ in 1 2 3 4 5 6; do tls_node || fail "cannot start a TLS cluster node"; done
    taddrs=()
    for p in "${TPORTS[@]}"; do taddrs+=("127.0.0.1:$p"); done
    if [ "${#TPORTS[@]}" != 6 ]; then
        :   # (said above)
    elif ! timeout 60 redis-cli --tls --cacert "$PKI/ca.crt" --cluster create "${taddrs[@]}" \
            --cluster-replicas 1 --cluster-yes >"$TMP/tls-create.log" 2>&1; then
        fail "cannot create the TLS cluster: $(sed 's/\x1b\[[0-9;]*m//g' "$TMP/tls-create.log" | grep -v '^ *$' | tail -1)"
    elif ! wait_for 30 tls_ok; then
        fail "the TLS cluster did not become ok"
    else
        for p in "${TPORTS[@]}"; do
            # (Generous timeouts: a TLS handshake under valgrind takes longer
            # than the default 500 ms.)
            rr -r "rediss-cluster://127.0.0.1:$p" --tls-ca "$PKI/ca.crt" --redis-timeout 5s \
                --connect-timeout 5s tjob -- true
            assert_rc 0 "run from seed $p"
        done
        # The same generous timeouts: a handshake that is cut short by the
        # request's timeout is 69 (unavailable), not the refusal we look for.
        rr -r "rediss-cluster://127.0.0.1:${TPORTS[0]}" --tls-ca "$PKI/other.crt" --redis-timeout 5s \
            --connect-timeout 5s tjob -- true
        assert_rc 78 "a CA that did not sign the nodes' certificates"
    fi
fi

done_testing
