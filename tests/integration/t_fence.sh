#!/usr/bin/env bash
# t_fence.sh — the fencing token strictly increases across holders, even when
# a single Redis loses its data, and across Redlock quorums that share only
# one master.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

fence_of() {  # run once and print the REDLOCK_FENCE the child saw
    local out=$TMP/fence.$RANDOM
    rr "$@" -- sh -c 'echo "$REDLOCK_FENCE" > "$1"' sh "$out"
    [ "$RC" = 0 ] || { echo "rc=$RC"; return; }
    cat "$out"
}

start_redis S
U=$S_URL

t "single Redis restarted without persistence: the next fence is still larger"
f1=$(fence_of -r "$U" restart)
restart_redis S
f2=$(fence_of -r "$U" restart)
note "fence before the restart $f1, after $f2"
assert_int "$f1" "fence before"
assert_int "$f2" "fence after"
[ "${f2:-0}" -gt "${f1:-0}" ] 2>/dev/null || fail "fence went from $f1 to $f2 across the restart"
end_test

t "Redlock: a holder whose quorum shares one master with the last one draws a larger fence"
start_redis M1; start_redis M2; start_redis M3
ropts=(-r "$M1_URL" -r "$M2_URL" -r "$M3_URL")
job=overlap
# M1's counter is far ahead of the others (it saw runs the others missed).
R M1 SET "$(k_fence $job)" 99999999999999 >/dev/null
# A can only use M1 and M2; B can only use M2 and M3.
R M3 SET "$(k_lock $job)" foreign PX 60000 >/dev/null
fa=$(fence_of "${ropts[@]}" "$job")
R M3 DEL "$(k_lock $job)" >/dev/null
R M1 SET "$(k_lock $job)" foreign PX 60000 >/dev/null
fb=$(fence_of "${ropts[@]}" "$job")
note "A's fence $fa (quorum M1 M2), B's fence $fb (quorum M2 M3)"
assert_int "$fa" "A's fence"
assert_int "$fb" "B's fence"
[ "${fb:-0}" -gt "${fa:-0}" ] 2>/dev/null || fail "B's fence $fb is not above A's $fa"
assert_eq foreign "$(R M1 GET "$(k_lock $job)")" "M1's foreign lock untouched"
end_test

done_testing
