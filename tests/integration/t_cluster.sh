#!/usr/bin/env bash
# t_cluster.sh — redis-cluster:// against a real six-node cluster (three
# masters, a replica each) that this file creates: routing from any seed,
# dead seeds, every mode, waiters on sharded pub/sub, a resharding, a
# CLUSTER FAILOVER and a kill -9 of the slot's owner mid-run, and a slot
# nobody serves (CLUSTERDOWN).
# shellcheck disable=SC2016,SC2153  # child commands; NAME_PORT etc. come from spawn_redis
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/cluster_lib.sh
. "$(dirname "$0")/cluster_lib.sh"

if ! cl_start; then
    t "start a cluster"
    fail "cannot create the cluster (see below)"
    tail -5 "$TMP/cluster-create.log" 2>/dev/null | sed 's/^/# /'
    done_testing
    exit 1
fi

# A child that says it started and lives until STOP exists (at most 30 s).
hold_cmd() { HOLD=(sh -c 'touch "$1"; i=0; while [ ! -e "$2" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done' sh "$1.started" "$1.stop"); }

# cmdstats NODE — "cmd calls" lines, the test's own commands left out.
cmdstats() {
    R "$1" INFO commandstats | tr -d '\r' | grep '^cmdstat_' |
        grep -v -e 'cmdstat_config' -e 'cmdstat_info' -e 'cmdstat_cluster' -e 'cmdstat_ping' \
            -e 'cmdstat_role' -e 'cmdstat_hget:' -e 'cmdstat_exists:' -e 'cmdstat_get:' |
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

t "the first seed dead: the next one answers, in well under a connect timeout"
dead_ports
rr -r "redis-cluster://127.0.0.1:${DEAD[0]},127.0.0.1:$(p="${OTHER}_PORT"; echo "${!p}")" "$JOB" -- true
assert_rc 0
assert_lt "$ELAPSED_MS" 1500 "elapsed ms"

t "no seed reachable: 69 in bounded time, naming what was tried"
rr -r "redis-cluster://127.0.0.1:${DEAD[0]},127.0.0.1:${DEAD[1]}" "$JOB" -- true
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

done_testing
