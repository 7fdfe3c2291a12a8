#!/usr/bin/env bash
# t_release.sh — --release of a --limit N lock's slots: --slot K,
# --all-slots, --fence F (found in whichever slot holds it), bad input.
# Each live holder is revoked and stops by itself at its next renewal.
# shellcheck disable=SC2016  # child commands
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

start_redis S || { t "start redis"; fail "cannot start redis-server"; done_testing; exit 1; }
U=$S_URL

# holders JOB PREFIX — start two --limit 2 holders that tick every 20 ms
# into PREFIX.1 / PREFIX.2; sets H1 (slot 1's wrapper pid), H2 (slot 2's),
# T1, T2 (their tick files) and E2 (slot 2's holder's stderr).
holders() {
    local job=$1 p=$2 a b
    bg "$p.w1" "$RR_BIN" -r "$U" --limit 2 -t 3s "$job" -- \
        sh -c 'while :; do date +%s%3N >> "$1"; sleep 0.02; done' sh "$p.1"
    a=$BG
    wait_for 10 test -s "$p.1" || fail "the first holder did not start"
    bg "$p.w2" "$RR_BIN" -r "$U" --limit 2 -t 3s "$job" -- \
        sh -c 'while :; do date +%s%3N >> "$1"; sleep 0.02; done' sh "$p.2"
    b=$BG
    wait_for 10 test -s "$p.2" || fail "the second holder did not start"
    if [ "$(hget S "$(k_state "$job"):2" pid)" = "$b" ]; then
        H1=$a H2=$b T1=$p.1 T2=$p.2 E2=$p.w2.err
    else
        H1=$b H2=$a T1=$p.2 T2=$p.1 E2=$p.w1.err
    fi
}

t "--release --slot 2 stops only slot 2's holder; a new run then takes slot 2, no overlap"
job=slots
holders "$job" "$TMP/s"
rr_direct -r "$U" --release --slot 2 "$job"
assert_rc 0 "--release --slot 2"
assert_contains "$(cat "$OUT")" "released slot 2 of the lock of $job: the holder" "what it says"
assert_not_contains "$(cat "$OUT")" "slot 1" "one line, for slot 2 only"
rr_direct -r "$U" --limit 2 "$job" -- sh -c 'date +%s%3N > "$1"' sh "$TMP/s.new"
assert_rc 0 "a run right after, with slot 1 still held"
wait_pid "$H2" 15
assert_rc 79 "slot 2's holder"
assert_contains "$(cat "$E2")" "the lock was revoked by --release ($(id -un)@$(hostname):" \
    "slot 2's holder names who released it"
pid_gone "$H1" && fail "slot 1's holder stopped too"
last=$(tail -1 "$T2"); first=$(head -1 "$TMP/s.new" 2>/dev/null)
note "slot 2's old command last ticked at $last, the new run's command ran at $first"
[ -n "$first" ] && [ "$first" -gt "$last" ] 2>/dev/null ||
    fail "the new run's command ($first) ran while slot 2's old one still ticked (last $last)"
key_there S "$(k_lock "$job")" || fail "slot 1's lock is gone"
rr_direct -r "$U" --release --slot 1 "$job"
assert_rc 0 "--release --slot 1"
wait_pid "$H1" 15
assert_rc 79 "slot 1's holder, after --slot 1"

t "--release --all-slots stops every holder, each waited for; one line per slot"
holders "$job" "$TMP/a"
rr_direct -r "$U" --release --all-slots "$job"
assert_rc 0 "--release --all-slots"
assert_contains "$(cat "$OUT")" "released slot 1 of the lock of $job: the holder" "slot 1"
assert_contains "$(cat "$OUT")" "released slot 2 of the lock of $job: the holder" "slot 2"
[ "$(wc -l < "$OUT")" -eq 2 ] || fail "not one line per slot: $(cat "$OUT")"
assert_lt "$ELAPSED_MS" 3500 "waited in parallel, within one lease (ms)"
wait_pid "$H1" 15
assert_rc 79 "slot 1's holder"
wait_pid "$H2" 15
assert_rc 79 "slot 2's holder"
assert_key_gone S "$(k_lock "$job")"
assert_key_gone S "$(k_lock "$job"):2"
rr_direct -r "$U" --release --all-slots "$job"
assert_rc 1 "--all-slots with nothing held"
assert_contains "$(cat "$OUT")" "no slot of the lock of $job is held" "what it says"

t "--release --fence F finds the slot whose holder has fence F"
holders "$job" "$TMP/f"
f2=$(hget S "$(k_state "$job"):2" fence)
rr_direct -r "$U" --release --fence 99999 "$job"
assert_rc 1 "a fence nobody has"
assert_contains "$(cat "$OUT")" "not by fence 99999" "what it says"
rr_direct -r "$U" --release --fence "$f2" "$job"
assert_rc 0 "--release --fence (slot 2's holder)"
assert_contains "$(cat "$OUT")" "released slot 2 of the lock of $job" "the slot it found"
wait_pid "$H2" 15
assert_rc 79 "slot 2's holder"
assert_contains "$(cat "$E2")" "the lock was revoked by --release ($(id -un)@$(hostname):" \
    "slot 2's holder names who released it"
pid_gone "$H1" && fail "slot 1's holder stopped too"
f1=$(hget S "$(k_state "$job")" fence)
rr_direct -r "$U" --release --slot 2 --fence "$f1" "$job"
assert_rc 1 "--slot 2 with slot 1's fence"
rr_direct -r "$U" --release --slot 1 --fence "$f1" "$job"
assert_rc 0 "--slot 1 with slot 1's fence"
assert_contains "$(cat "$OUT")" "released slot 1 of the lock of $job" "what it says"
wait_pid "$H1" 15
assert_rc 79 "slot 1's holder"
rr_direct -r "$U" --release --slot 2 "$job"
assert_rc 1 "--slot 2 with nothing held"
assert_contains "$(cat "$OUT")" "slot 2 of the lock of $job is not held" "what it says"

t "--release --force wakes the first waiter at once"
# The deleted lock is free, and the forced-out holder no longer owns the
# key, so its own release wakes nobody: --release wakes the first live
# waiter, as a release does. (It did not: the waiter, queued a moment
# before, learned at its next refresh, 3.3 s at the default lease.)
d=$TMP/forcewake
mkdir -p "$d"
bg "$d/h" "$RR_BIN" -r "$U" forcewake -- sh -c 'touch "$1"; sleep 30' sh "$d/held"
h=$BG
wait_for 10 file_there "$d/held" || fail "the holder did not start"
bg "$d/w" "$RR_BIN" -r "$U" -w 60s forcewake -- sh -c 'date +%s%3N > "$1"' sh "$d/w.at"
w=$BG
queued() { [ "$(R S ZCARD "redlock:{forcewake}:queue")" = 1 ]; }
wait_for 10 queued || fail "the waiter did not queue"
t0=$(now_ms)
rr_direct -r "$U" --release --force forcewake
assert_rc 0 "--release --force"
wait_pid "$w" 20
assert_eq 0 "$RC" "the waiter"
assert_ran_within "$d/w.at" "$t0" 2000 "the waiter (after --release --force)"
kill_wait TERM "$h" 10
end_test

t "--slot and --all-slots: bad input is a one-line usage error (64)"
for args in "--release --slot 0" "--release --slot abc" "--release --slot 101" \
            "--slot 2" "--all-slots" "--release --slot 2 --all-slots" \
            "--release --limit 2 --slot 3"; do
    # shellcheck disable=SC2086  # the words of each case
    rr_direct -r "$U" $args "$job"
    assert_rc 64 "$args"
    [ "$(wc -l < "$ERR")" -eq 1 ] || fail "$args: not one line: $(cat "$ERR")"
done

done_testing
