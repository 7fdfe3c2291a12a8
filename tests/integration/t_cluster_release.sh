#!/usr/bin/env bash
# t_cluster_release.sh — a release that a real six-node cluster refuses for
# now (the job's slot half-way: TRYAGAIN) is retried while the lock is
# renewed, so a succeeded --once run is recorded 'succeeded' and never runs
# again. A file of its own: t_cluster.sh is near run.sh's 300 s bound.
# shellcheck disable=SC2016,SC2153  # child commands; NAME_PORT etc. from lib_topo
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

# As in t_cluster.sh: nodes by their lib.sh names.
cl_port() { local pv="${1}_PORT"; echo "${!pv}"; }
cl_name_of() { [ -n "${1:-}" ] && echo "${TOPO_NAME[$1]:-}"; }
cl_slot() { topo_cluster_slot_of "$1"; }
cl_owner() { cl_name_of "$(topo_cluster_owner "$1")"; }
cl_other_master() {
    local m me
    me=$(cl_port "$1")
    for m in $(topo_cluster_masters); do [ "$m" != "$me" ] && { cl_name_of "$m"; return 0; }; done
    return 1
}
cl_migrate_begin() { topo_cluster_migrate_begin "$1" "$(cl_port "$2")" "$(cl_port "$3")"; }
cl_url() {
    local n list=()
    for n in "$@"; do list+=("127.0.0.1:$(cl_port "$n")"); done
    echo "redis-cluster://$(IFS=,; echo "${list[*]}")"
}
hold_cmd() { HOLD=(sh -c 'touch "$1"; i=0; while [ ! -e "$2" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done' sh "$1.started" "$1.stop"); }

t "a release refused for now (slot half-way, TRYAGAIN) is retried while renewed: --once day1 recorded succeeded, never run again"
# Issue 18.2. MIGRATING/IMPORTING with no key moved: release.lua names keys
# that do not exist (the queue, the tombstone), so both nodes refuse it
# (TRYAGAIN) past --redis-timeout; renew.lua's keys all exist and it runs.
# 3 s later the slot is STABLE again and a retried release lands.
J=jobT; S=$(cl_slot "{$J}"); O=$(cl_owner "$S"); T=$(cl_other_master "$O")
U=$(cl_url "$O")
rr -r "$U" "$J" -- true
assert_rc 0 "a first run (the keys exist)"
hold_cmd "$TMP/tg"
bg "$TMP/tg" "$RR_BIN" -r "$U" -t 9s --once day1 "$J" -- \
    sh -c 'echo ran >> "$0.ran"; "$@"' "$TMP/tg" "${HOLD[@]}"
h=$BG
wait_for 10 file_there "$TMP/tg.started" || fail "child did not start"
cl_migrate_begin "$S" "$O" "$T" || fail "SETSLOT IMPORTING/MIGRATING failed"
touch "$TMP/tg.stop"
sleep 3
R "$T" CLUSTER SETSLOT "$S" STABLE >/dev/null
R "$O" CLUSTER SETSLOT "$S" STABLE >/dev/null
wait_pid "$h" 20
assert_rc 0 "the run whose release was refused for 3 s"
assert_contains "$(cat "$TMP/tg.err")" "retrying while the lease lasts" "the retry is said"
assert_contains "$(cat "$TMP/tg.err")" "the release landed" "its landing is said"
assert_hash "$O" "$(k_once $J day1)" status succeeded
assert_hash "$O" "$(k_state $J)" status succeeded
assert_key_gone "$O" "$(k_lock $J)"
rr -r "$U" --once day1 --on-stale run "$J" -- sh -c 'echo ran >> "$0.ran"' "$TMP/tg"
assert_rc 0 "the same --once ID again"
assert_eq 1 "$(count_lines "$TMP/tg.ran")" "times the command ran"
hist=$(R "$O" XRANGE "$(k_hist $J)" - + | tr -d '\r')
assert_not_contains "$hist" "abandoned" "history"
assert_eq 2 "$(grep -c '^succeeded$' <<<"$hist")" "succeeded entries (the first run and ours: once each)"

done_testing
