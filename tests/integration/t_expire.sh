#!/usr/bin/env bash
# t_expire.sh — every key of a job has an end (issue 33): a NAME that has
# not run for --state-ttl leaves nothing behind (state records, fence,
# history, queue), whatever way its runs ended; the fence still increases
# when the NAME comes back, even from a host whose clock is a day behind;
# the history is capped by age; --list says when the keys end and costs a
# few commands per job, whatever --limit may be.
# shellcheck disable=SC2016  # child commands
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

start_redis S || { t "start redis"; fail "cannot start redis-server"; done_testing; exit 1; }
U=$S_URL

# job_keys JOB — the job's keys there are, sorted, one a line.
job_keys() { R S --scan --pattern "redlock:{$1}*" | sort; }
no_keys() { [ -z "$(job_keys "$1")" ]; }

# keys_end JOB MAX_MS — every key of JOB has an expiry, at most MAX_MS.
keys_end() {
    local k p n=0
    for k in $(job_keys "$1"); do
        p=$(R S PTTL "$k")
        n=$((n + 1))
        if [ "$p" -lt 0 ] 2>/dev/null; then
            fail "$k has no expiry (PTTL $p)"
        elif [ "$p" -gt "$2" ]; then
            fail "$k expires in $p ms, more than $2"
        fi
    done
    [ "$n" -gt 0 ] || fail "$1 has no keys at all"
    note "$1: $n keys, each ending within $2 ms"
}

# fence_of [CMD...] -- ARGS... — run once (under CMD, if given) and print
# the REDLOCK_FENCE the child saw.
fence_of() {
    local out=$TMP/fence.$RANDOM pre=()
    while [ "$1" != -- ]; do pre+=("$1"); shift; done
    shift
    run_limited "${pre[@]}" "$RR_BIN" "$@" -- sh -c 'echo "$REDLOCK_FENCE" > "$1"' sh "$out"
    [ "$RC" = 0 ] || { echo "rc=$RC"; return; }
    cat "$out"
}

t "a job that is not run again for --state-ttl leaves no key behind"
# Before: state, history and fence had no expiry at all.
rr -r "$U" --state-ttl 1s -t 1s gone -- true
assert_rc 0
keys_end gone 2000
wait_for 6 no_keys gone || fail "keys left 6 s after the run: $(job_keys gone | tr '\n' ' ')"
end_test

t "each key a run writes ends --state-ttl after it (plus one lease), with the defaults too"
rr -r "$U" plain -- true
assert_rc 0
assert_eq "$(printf '%s\n' "$(k_fence plain)" "$(k_hist plain)" "$(k_state plain)")" \
    "$(job_keys plain)" "the keys of a plain run"
keys_end plain $(( 30 * 86400000 + 30000 ))
h=$(R S PTTL "$(k_hist plain)")
[ "$h" -le $(( 30 * 86400000 )) ] 2>/dev/null || fail "the history ends in $h ms, after --state-ttl"
end_test

t "a queue, a --limit slot and a dead run's record end too"
d=$TMP/q
mkdir -p "$d"
opts=(-r "$U" --state-ttl 1s -t 1s)
bg "$d/h" "$RR_BIN" "${opts[@]}" queued -- sh -c 'touch "$1"; sleep 1' sh "$d/held"
h=$BG
wait_for 10 file_there "$d/held" || fail "the holder did not start"
bg "$d/w" "$RR_BIN" "${opts[@]}" -w 20s queued -- true
w=$BG
wait_for 5 key_there S "redlock:{queued}:queue" || fail "the waiter did not queue"
keys_end queued 2000
wait_pid "$h" 20
wait_pid "$w" 20
# --limit 2: a second slot's record. Slot 1 is held until slot 2's run
# is done (under valgrind that run starts slower than a 'sleep 1').
bg "$d/l1" "$RR_BIN" "${opts[@]}" --limit 2 pool -- sh -c \
    'touch "$1"; i=0; while [ ! -e "$2" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done' \
    sh "$d/l1.on" "$d/l1.stop"
l1=$BG
wait_for 10 file_there "$d/l1.on" || fail "slot 1 did not start"
rr "${opts[@]}" --limit 2 pool -- true
assert_rc 0 "slot 2's run"
assert_contains "$(job_keys pool)" "redlock:{pool}:state:2" "slot 2's record"
keys_end pool 2000
touch "$d/l1.stop"
wait_pid "$l1" 20
# A wrapper killed -9 mid-run: its record stays 'running' until it ends.
bg "$d/k" "$RR_BIN" "${opts[@]}" killed -- sh -c 'touch "$1"; sleep 30' sh "$d/k.on"
k=$BG
wait_for 10 file_there "$d/k.on" || fail "the run to kill did not start"
kill_wait KILL "$k" 5
assert_hash S "$(k_state killed)" status running
keys_end killed 2000
for j in queued pool killed; do
    wait_for 8 no_keys "$j" || fail "$j: keys left: $(job_keys "$j" | tr '\n' ' ')"
done
end_test

t "a waiter behind a lock that has no record of ours leaves no key without an end"
# An application's own SET NX PX on the key: the waiter marks the job's
# record 'queued', which made a record that never ended.
R S SET "$(k_lock foreign)" app-token PX 3000 >/dev/null
rr -r "$U" --state-ttl 1s -t 1s -w 500ms foreign -- true
assert_rc 75 "a waiter whose --wait ran out"
keys_end foreign 3000
wait_for 8 no_keys foreign || fail "foreign: keys left: $(job_keys foreign | tr '\n' ' ')"
end_test

t "an operator's --resolve and --release that add the first history entry give it an end"
# The history was gone (expired, or never written); --resolve and --release
# write an entry: the stream they create ends --state-ttl later.
rr -r "$U" --state-ttl 1h opjob -- false
R S DEL "$(k_hist opjob)" >/dev/null
rr -r "$U" --state-ttl 1h --resolve succeeded opjob
assert_rc 0 "--resolve"
p=$(R S PTTL "$(k_hist opjob)")
[ "$p" -gt 0 ] && [ "$p" -le 3600000 ] 2>/dev/null || fail "--resolve's history: PTTL $p"
R S SET "$(k_lock opjob)" foreign PX 60000 >/dev/null
R S DEL "$(k_hist opjob)" >/dev/null
rr -r "$U" --state-ttl 1h --release --force opjob
assert_rc 0 "--release --force"
p=$(R S PTTL "$(k_hist opjob)")
[ "$p" -gt 0 ] && [ "$p" -le 3600000 ] 2>/dev/null || fail "--release's history: PTTL $p"
end_test

t "the fence still increases when a job comes back after its keys ended, from a clock a day behind"
# The counter is gone with the other keys: a new one starts at the greater
# of the host's clock and the server's (TIME), in ms. Without the server's,
# a host whose clock is behind drew a fence below the last one.
f1=$(fence_of -- -r "$U" --state-ttl 1s -t 1s back)
assert_int "$f1" "the first fence"
wait_for 6 no_keys back || fail "keys left: $(job_keys back | tr '\n' ' ')"
if skip_without_faketime; then
    :
else
    f2=$(fence_of env FAKETIME_DONT_FAKE_MONOTONIC=1 $(faked -1d) -- -r "$U" --state-ttl 1s -t 1s back)
    f3=$(fence_of -- -r "$U" --state-ttl 1s -t 1s back)
    note "fences: $f1, then from a day behind after the keys ended $f2, then $f3"
    assert_int "$f2" "the fence a day behind"
    assert_int "$f3" "the next fence"
    [ "${f2:-0}" -gt "${f1:-0}" ] 2>/dev/null || fail "the fence went back from $f1 to $f2"
    [ "${f3:-0}" -gt "${f2:-0}" ] 2>/dev/null || fail "the fence went back from $f2 to $f3"
fi
end_test

t "the history is capped by age: entries older than --state-ttl go at the next run"
# Before: only by count (MAXLEN ~ 1000), so a job run daily kept 1000 days.
for i in 1 2 3; do
    rr -r "$U" --state-ttl 3s aged -- true
    assert_rc 0 "run $i"
    [ "$i" = 3 ] || sleep 1.6
done
ids=$(R S XRANGE "$(k_hist aged)" - + | grep -E '^[0-9]+-[0-9]+$' | cut -d- -f1)
note "history entries (ms): $(echo "$ids" | tr '\n' ' ')"
last=$(echo "$ids" | tail -1)
assert_lt "$(echo "$ids" | wc -l)" 3 "entries left of 3 runs over 3.2 s or more"
for id in $ids; do
    [ $((last - id)) -le 3000 ] || fail "an entry $((last - id)) ms older than the last is left"
done
end_test

t "--list and --status say when a job's keys end (a key with no expiry: never)"
rr -r "$U" --state-ttl 1h listed -- true
rr -r "$U" --state-ttl 1h oldver -- true
R S PERSIST "$(k_hist oldver)" >/dev/null
rr -r "$U" --list
assert_rc 0
note "$(grep -E '^(NAME|listed|oldver)' "$OUT")"
assert_contains "$(head -1 "$OUT")" "KEYS END" "the header"
grep -qE '^listed .* in 1h$' "$OUT" || fail "listed's line does not end in 'in 1h'"
grep -qE '^oldver .* never$' "$OUT" || fail "oldver's line does not end in 'never'"
rr -r "$U" --list --json
assert_rc 0
ttl=$(grep '"name":"listed"' "$OUT" | grep -o '"keys_ttl_ms":[0-9]*' | cut -d: -f2)
assert_int "$ttl" "listed's keys_ttl_ms"
[ "${ttl:-0}" -gt 3500000 ] && [ "${ttl:-0}" -le $((3600000 + 30000)) ] ||
    fail "keys_ttl_ms $ttl is not about an hour"
assert_contains "$(grep '"name":"oldver"' "$OUT")" '"keys_ttl_ms":null' "oldver's"
rr -r "$U" --status listed
assert_contains "$(cat "$OUT")" "keys       end in 1h unless the job runs again" "--status"
rr -r "$U" --status --json oldver
assert_contains "$(cat "$OUT")" '"keys_ttl_ms":null}' "--status --json"
end_test

t "--list costs a few commands per job, whatever --limit may be"
# Before: one PTTL per possible --limit slot (100), 103 commands a job.
R S FLUSHALL >/dev/null
for i in $(seq 1 10); do rr -r "$U" "j$i" -- true; done
rr -r "$U" --limit 5 "j11" -- true
rr -r "$U" --list >/dev/null   # loads the script
R S CONFIG RESETSTAT >/dev/null
rr -r "$U" --list
assert_rc 0
stats=$(R S INFO commandstats | tr -d '\r' | grep '^cmdstat_' | grep -v -E 'cmdstat_(info|config)')
note "$(echo "$stats" | sed -E 's/cmdstat_([a-z|]+):calls=([0-9]+).*/\1=\2/' | tr '\n' ' ')"
total=$(echo "$stats" | sed -nE 's/.*:calls=([0-9]+).*/\1/p' | awk '{ s += $1 } END { print s + 0 }')
note "$total commands for 11 jobs"
[ "$total" -le $((11 * 15)) ] || fail "--list made $total commands for 11 jobs, more than 15 a job"
end_test

done_testing
