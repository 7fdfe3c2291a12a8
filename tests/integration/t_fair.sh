#!/usr/bin/env bash
# t_fair.sh — fair waiting (the queue beside the lock) and --limit N.
# run.sh: alone (waiters are woken and ordered within deadlines)
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

start_redis F
start_redis G
start_redis H
U=$F_URL

k_queue() { printf 'redlock:{%s}:queue' "$1"; }
qlen() { R F ZCARD "$(k_queue "$1")"; }
qlen_is() { [ "$(qlen "$1")" = "$2" ]; }

# Script calls (EVALSHA + EVAL) since the last CONFIG RESETSTAT.
script_calls() {
    R F INFO commandstats | tr -d '\r' |
        sed -nE 's/^cmdstat_(evalsha|eval):calls=([0-9]+).*/\2/p' |
        awk '{ s += $1 } END { print s + 0 }'
}

# fifo_round JOB N — a holder, then N waiters 60 ms apart, each started
# once the one before it is in the queue (so that their arrival order is
# their start order however loaded the machine is); prints the order in
# which they ran (their numbers, space-separated).
fifo_round() {
    local job=$1 n=$2 d=$TMP/$1 i pids=()
    mkdir -p "$d"
    bg "$d/h" "$RR_BIN" -r "$U" "$job" -- sh -c 'touch "$1"; sleep 2' sh "$d/held"
    pids+=("$BG")
    wait_for 10 file_there "$d/held" || fail "holder did not start"
    for i in $(seq -w 1 "$n"); do
        bg "$d/w$i" "$RR_BIN" -r "$U" -w 60s "$job" -- sh -c 'echo "$1" >> "$2"' sh "$i" "$d/order"
        pids+=("$BG")
        nap 0.06
        wait_for 2 qlen_is "$job" "$((10#$i))" || true
    done
    for p in "${pids[@]}"; do wait_pid "$p" 60; done
    tr '\n' ' ' < "$d/order" | sed 's/ $//'
}

t "12 waiters 60 ms apart run in arrival order (3 rounds)"
want=$(seq -w 1 12 | tr '\n' ' ' | sed 's/ $//')
for round in 1 2 3; do
    got=$(fifo_round "fifo$round" 12)
    note "round $round: $got"
    assert_eq "$want" "$got" "order of round $round"
done
assert_eq 0 "$(qlen fifo1)" "queue left behind"
end_test

t "script calls per completed run: 32 waiters cost at most 1.5x what 4 cost"
# Each waiter: one try that queues it, one after its subscription, one when
# woken (it gets the lock), its release: O(1) per handoff. Before the queue,
# every release woke every waiter (4.7 calls per run with 4, 19.7 with 32).
per_run() {
    local n=$1 d=$TMP/cost$1 i pids=() calls
    mkdir -p "$d"
    R F CONFIG RESETSTAT >/dev/null
    bg "$d/h" "$RR_BIN" -r "$U" "cost$n" -- sh -c 'touch "$1"; sleep 0.5' sh "$d/held"
    pids+=("$BG")
    wait_for 10 file_there "$d/held"
    for i in $(seq 1 "$n"); do
        bg "$d/w$i" "$RR_BIN" -r "$U" -w 120s "cost$n" -- sleep 0.02
        pids+=("$BG")
    done
    for p in "${pids[@]}"; do wait_pid "$p" 120; done
    calls=$(script_calls)
    echo "$calls $((n + 1))"
}
read -r c4 r4 < <(per_run 4)
read -r c32 r32 < <(per_run 32)
note "4 waiters: $c4 script calls for $r4 runs; 32 waiters: $c32 for $r32 runs"
# ratio = (c32/r32) / (c4/r4) <= 1.5  <=>  2 * c32 * r4 <= 3 * c4 * r32
[ $((2 * c32 * r4)) -le $((3 * c4 * r32)) ] ||
    fail "per-run cost grew: $c32/$r32 with 32 waiters vs $c4/$r4 with 4"
end_test

t "a plain run (no --wait) does no queue work and costs what it did before"
R F FLUSHALL >/dev/null
rr_direct -r "$U" plain -- true   # loads the scripts
R F CONFIG RESETSTAT >/dev/null
rr_direct -r "$U" plain -- true
assert_rc 0
stats=$(R F INFO commandstats | tr -d '\r' | grep '^cmdstat_' | grep -v -E 'cmdstat_(info|config)')
note "$(echo "$stats" | sed -E 's/cmdstat_([a-z|]+):calls=([0-9]+).*/\1=\2/' | tr '\n' ' ')"
total=$(echo "$stats" | sed -nE 's/.*:calls=([0-9]+).*/\1/p' | awk '{ s += $1 } END { print s + 0 }')
assert_eq 2 "$(script_calls)" "round trips (acquire and release EVALSHA)"
assert_not_contains "$stats" "cmdstat_z" "queue commands on a plain run"
# 25 commands in all (2 EVALSHA + 23 inside the scripts), measured on main
# before the queue existed.
[ "$total" -le 25 ] || fail "a plain run made $total commands, more than the 25 before the queue"
end_test

t "a run that finds the lock held makes one round trip, and says for how long it has been held"
# The busy answer carries the holder's start. Before, the loser read it with
# an HMGET of its own after the script's answer: two round trips.
bg "$TMP/held" "$RR_BIN" -r "$U" held -- sh -c 'touch "$1"; sleep 30' sh "$TMP/held.started"
w=$BG
wait_for 10 file_there "$TMP/held.started" || fail "the holder did not start"
R F CONFIG RESETSTAT >/dev/null
rr_direct -r "$U" held -- true
assert_rc 75
assert_contains "$(cat "$ERR")" "(fence " "the holder named"
assert_contains "$(cat "$ERR")" ") for " "for how long it has held the lock"
stats=$(R F INFO commandstats | tr -d '\r' | grep '^cmdstat_' | grep -v -E 'cmdstat_(info|config)')
note "$(echo "$stats" | sed -E 's/cmdstat_([a-z|]+):calls=([0-9]+).*/\1=\2/' | tr '\n' ' ')"
assert_eq 1 "$(script_calls)" "script calls (the acquire)"
assert_eq 1 "$(echo "$stats" | sed -nE 's/^cmdstat_hmget:calls=([0-9]+).*/\1/p')" \
    "HMGETs: the script's read of the holder's record, none after it"
kill_wait TERM "$w" 10
end_test

# assert_gap END START LIMIT WHAT — the times (ms) in files END and START:
# START came less than LIMIT ms after END.
assert_gap() {
    local gap
    if [ -s "$1" ] && [ -s "$2" ]; then
        gap=$(( $(cat "$2") - $(cat "$1") ))
        note "$4: ${gap}"
        assert_lt "$gap" "$3" "$4"
    else
        fail "$4: $1 or $2 was not written (a command did not run)"
    fi
}

# dead_waiter JOB WHERE OVER URL-ARGS... — a holder and three waiters a, b,
# c on JOB (--ttl 3s: queue entries live 1.5s and are refreshed every 0.5s);
# b is killed -9 in the queue; c must start within two thirds of a lease
# (2000 ms) after a ended: the README's bound for a waiter that dies (its
# q: key expires within an entry TTL, 1.5 s, and c retries every 0.5 s;
# both count from b's death, which came before a's end).
# WHERE and OVER end two messages (" on the first master", " over 3 masters").
dead_waiter() {
    local job=$1 where=$2 over=$3 d=$TMP/$1 h a b c p gap; shift 3
    mkdir -p "$d"
    bg "$d/h" "$RR_BIN" "$@" -t 3s "$job" -- sh -c 'touch "$1"; sleep 1' sh "$d/held"
    h=$BG
    wait_for 10 file_there "$d/held" || fail "holder did not start"
    bg "$d/a" "$RR_BIN" "$@" -t 3s -w 30s "$job" -- sh -c 'sleep 0.3; date +%s%3N > "$1"' sh "$d/a.end"
    a=$BG
    sleep 0.1
    bg "$d/b" "$RR_BIN" "$@" -t 3s -w 30s "$job" -- touch "$d/b.ran"
    b=$BG
    sleep 0.1
    bg "$d/c" "$RR_BIN" "$@" -t 3s -w 30s "$job" -- sh -c 'date +%s%3N > "$1"' sh "$d/c.start"
    c=$BG
    wait_for 5 qlen_is "$job" 3 || fail "expected 3 queued$where, saw $(qlen "$job")"
    kill_wait KILL "$b" 5
    for p in "$h" "$a" "$c"; do wait_pid "$p" 30; done
    assert_rc 0 "the waiter behind the dead one"
    assert_no_file "$d/b.ran" "the killed waiter's command"
    assert_gap "$d/a.end" "$d/c.start" 2000 "delay behind a dead waiter$over (ms), 2/3 of the 3000 ms lease"
}

t "a waiter killed -9 in the middle of the queue delays the next by at most 2/3 of a lease"
job=killmid
dead_waiter "$job" "" "" -r "$U"
wait_for 3 qlen_is "$job" 0 || fail "the dead waiter's entry is still queued"
end_test

# crowd JOB TTL N — a holder that holds JOB until $TMP/JOB/go exists, then
# writes its end time to h.end; N waiters (--ttl TTL) queued behind it
# (crowd_kill: SIGKILLed all at once). Sets H to the holder, CROWD to the
# waiters. The holder's lease is long: starting N processes may starve it.
crowd() {
    local job=$1 ttl=$2 n=$3 d=$TMP/$1 i
    mkdir -p "$d"
    bg "$d/h" "$RR_BIN" -r "$U" -t 30s "$job" -- sh -c \
        'touch "$1"; while [ ! -e "$2" ]; do sleep 0.02; done; date +%s%3N > "$3"' \
        sh "$d/held" "$d/go" "$d/h.end"
    H=$BG
    wait_for 10 file_there "$d/held" || fail "holder did not start"
    CROWD=()
    for i in $(seq 1 "$n"); do
        bg "$d/c$i" "$RR_BIN" -r "$U" -t "$ttl" -w 120s "$job" -- touch "$d/crowd.ran"
        CROWD+=("$BG")
    done
    wait_for 90 qlen_is "$job" "$n" || fail "expected $n queued, saw $(qlen "$job")"
}
crowd_kill() {
    kill -KILL "${CROWD[@]}" 2>/dev/null
    wait "${CROWD[@]}" 2>/dev/null
}

t "150 waiters killed at once cost the live waiter behind them at most 2/3 of a lease (README)"
# --ttl 3s: entries live 1.5 s, a waiter retries every 0.5 s: the README
# promises at most two thirds of the lease (2000 ms) from their death,
# which came before the holder's end (measured from there). Before, an
# acquire dropped about 11 dead entries and a release 100, so the live
# waiter got the lock about 6 s after the release.
job=crowd d=$TMP/crowd
crowd "$job" 3s 150
bg "$d/w" "$RR_BIN" -r "$U" -t 3s -w 60s "$job" -- sh -c 'date +%s%3N > "$1"' sh "$d/w.start"
w=$BG
wait_for 10 qlen_is "$job" 151 || fail "the live waiter did not queue"
crowd_kill
touch "$d/go"
wait_pid "$H" 30
assert_rc 0 "the holder"
wait_pid "$w" 60
assert_rc 0 "the live waiter"
assert_no_file "$d/crowd.ran" "a killed waiter's command"
assert_gap "$d/h.end" "$d/w.start" 2000 \
    "delay behind 150 dead waiters (ms), 2/3 of the 3000 ms lease"
wait_for 3 qlen_is "$job" 0 || fail "dead entries left: $(qlen "$job")"
end_test

t "a run without --wait, lock free but waiters queued: says they are ahead, not 'held'"
# --ttl 20s: stopped waiters (SIGSTOP) still listen on their channels and
# their entries live 10 s: nobody can tell them from live ones. (Killed
# ones are seen dead at once: their channels go silent.)
job=crowdmsg d=$TMP/crowdmsg
crowd "$job" 20s 30
kill -STOP "${CROWD[@]}"
touch "$d/go"
wait_pid "$H" 30
assert_rc 0 "the holder"
assert_eq 0 "$(R F EXISTS "$(k_lock "$job")")" "the lock key after the release"
rr_direct -r "$U" "$job" -- touch "$d/ran"
assert_rc 75 "a run without --wait"
assert_no_file "$d/ran" "the command of the run without --wait"
assert_contains "$(cat "$ERR")" "not running: 30 waiters are queued ahead (the lock is free; they take it in turn)"
assert_not_contains "$(cat "$ERR")" "held"
crowd_kill
end_test

t "a waiter whose --wait ran out, or that got SIGTERM, is gone from the queue at once"
job=giveup d=$TMP/giveup
mkdir -p "$d"
bg "$d/h" "$RR_BIN" -r "$U" "$job" -- sh -c 'touch "$1"; sleep 3' sh "$d/held"
h=$BG
wait_for 10 file_there "$d/held" || fail "holder did not start"
rr_direct -r "$U" -w 500ms "$job" -- touch "$d/ran"
assert_rc 75 "wait ran out"
assert_eq 0 "$(qlen "$job")" "queue entries after the wait ran out"
assert_eq "" "$(R F --scan --pattern "redlock:{$job}:q:*")" "waiter keys left"
# -E 0: the exit status of giving up is 0, and it still leaves the queue.
rr_direct -r "$U" -w 300ms -E 0 "$job" -- touch "$d/ran"
assert_rc 0 "wait ran out with -E 0"
assert_eq 0 "$(qlen "$job")" "queue entries after the wait ran out (-E 0)"
bg "$d/w" "$RR_BIN" -r "$U" -w 30s "$job" -- touch "$d/ran"
w=$BG
wait_for 5 qlen_is "$job" 1 || fail "waiter did not queue"
kill_wait TERM "$w" 5
assert_eq 143 "$RC" "waiter's status after SIGTERM"
assert_eq 0 "$(qlen "$job")" "queue entries after SIGTERM"
assert_no_file "$d/ran"
wait_pid "$h" 10
end_test

t "--wait 0 does not jump ahead of a queued waiter"
job=nojump d=$TMP/nojump
mkdir -p "$d"
bg "$d/h" "$RR_BIN" -r "$U" "$job" -- sh -c 'touch "$1"; sleep 1' sh "$d/held"
h=$BG
wait_for 10 file_there "$d/held" || fail "holder did not start"
bg "$d/w" "$RR_BIN" -r "$U" -w 30s "$job" -- sleep 1
w=$BG
wait_for 5 qlen_is "$job" 1 || fail "waiter did not queue"
# Take the holder's lock away by hand: the lock is free, a waiter is queued.
R F DEL "$(k_lock "$job")" >/dev/null
rr_direct -r "$U" "$job" -- touch "$d/jumped"
assert_rc 75 "a newcomer with a waiter queued"
assert_no_file "$d/jumped"
for p in "$h" "$w"; do wait_pid "$p" 15; done
end_test

t "40 waiters queued for 3 s: those far back refresh rarely, and the queue drains in order"
# --ttl 3s: entries live 1.5 s and were refreshed every 0.5 s: 40 waiters
# made about 240 script calls in 3 s. Now the first 4 refresh that often,
# those behind as their rank squared allows (queue.h: rr_queue_rank_ttl),
# and each is brought near by a message as its turn approaches.
# held_queue JOB N ARGS... — JOB's lock held by hand, then N waiters
# (--ttl 3s), each queued before the next starts, running ARGS... and
# their number (01..N); PIDS: theirs. Then 1.5 s: every subscription
# confirmed, every first refresh done. free_lock JOB: the release's part,
# DEL and a message to the first waiter.
held_queue() {
    local job=$1 n=$2 i; shift 2
    mkdir -p "$TMP/$job"
    R F SET "$(k_lock "$job")" someone-else PX 60000 >/dev/null
    PIDS=()
    for i in $(seq -w 1 "$n"); do
        bg "$TMP/$job/w$i" "$RR_BIN" -r "$U" -t 3s -w 60s "$job" -- "$@" "$i"
        PIDS+=("$BG")
        wait_for 5 qlen_is "$job" "$((10#$i))" || true
    done
    sleep 1.5
}
free_lock() {
    R F DEL "$(k_lock "$1")" >/dev/null
    R F PUBLISH "redlock:{$1}:wake:$(R F ZRANGE "$(k_queue "$1")" 0 0)" 1 >/dev/null
}
job=far d=$TMP/far
held_queue "$job" 40 sh -c 'echo "$2" >> "$1"' sh "$d/order"
pids=("${PIDS[@]}")
R F CONFIG RESETSTAT >/dev/null
sleep 3
calls=$(script_calls)
note "script calls of 40 queued waiters in 3 s: $calls"
assert_lt "$calls" 80 "script calls of 40 queued waiters in 3 s"
t0=$(now_ms)
free_lock "$job"
assert_drained "$t0" "$d/order" 40 10000 "${pids[@]}"
end_test

t "a waiter far back that stops answering (SIGSTOP) delays the next by at most 2/3 of a lease"
# It still listens (its connections stay open, as a lost host's would),
# and its entry was set to live long; as it comes near, release.lua gives
# it the short TTL back, which it does not refresh.
job=farstop d=$TMP/farstop
held_queue "$job" 14 sh -c 'date +%s%3N > "$1/s$2"; sleep 0.05; date +%s%3N > "$1/e$2"' sh "$d"
pids=("${PIDS[@]}")
stopped=${pids[11]}   # the 12th: rank 11, its entry lives 11.3 s
kill -STOP "$stopped"
free_lock "$job"
for p in "${pids[@]:0:11}" "${pids[@]:12}"; do wait_pid "$p" 60; done
assert_gap "$d/e11" "$d/s13" 2000 "delay behind a stopped waiter far back (ms), 2/3 of the 3000 ms lease"
kill -KILL "$stopped" 2>/dev/null
wait "$stopped" 2>/dev/null
end_test

t "15 waiters killed ahead of a stopped one far back: the next live waiter waits at most 2/3 of a lease"
# The holder's release drops the 15 (their channels are silent) and meets,
# first, one whose entry was set to live 21 s (rank 15): it gets the short
# TTL as it becomes first, as those behind it do.
job=farhead d=$TMP/farhead
crowd "$job" 3s 15
bg "$d/s" "$RR_BIN" -r "$U" -t 3s -w 60s "$job" -- touch "$d/s.ran"
stopped=$BG
wait_for 10 qlen_is "$job" 16 || fail "the 16th did not queue"
bg "$d/w" "$RR_BIN" -r "$U" -t 3s -w 60s "$job" -- sh -c 'date +%s%3N > "$1"' sh "$d/w.start"
w=$BG
wait_for 10 qlen_is "$job" 17 || fail "the live waiter did not queue"
sleep 1.5   # the 16th's entry is set to live long
kill -STOP "$stopped"
crowd_kill
touch "$d/go"
wait_pid "$H" 30
wait_pid "$w" 60
assert_rc 0 "the live waiter"
assert_gap "$d/h.end" "$d/w.start" 2000 "delay behind 15 dead and a stopped waiter (ms), 2/3 of the 3000 ms lease"
kill -KILL "$stopped" 2>/dev/null
wait "$stopped" 2>/dev/null
end_test

t "a live waiter whose entry was dropped takes back its place, not the end of the queue"
# As when its refresh came late (a starved machine) and a release dropped
# it as dead: its ticket says where it belongs.
job=rejoin d=$TMP/rejoin
mkdir -p "$d"
R F SET "$(k_lock "$job")" someone-else PX 60000 >/dev/null
pids=()
for i in 1 2 3; do
    bg "$d/w$i" "$RR_BIN" -r "$U" -t 3s -w 30s "$job" -- true
    pids+=("$BG")
    wait_for 5 qlen_is "$job" "$i" || fail "waiter $i did not queue"
done
first=$(R F ZRANGE "$(k_queue "$job")" 0 0)
R F ZREM "$(k_queue "$job")" "$first" >/dev/null
R F DEL "redlock:{$job}:q:$first" >/dev/null
wait_for 5 qlen_is "$job" 3 || fail "the dropped waiter did not come back"
assert_eq 0 "$(R F ZRANK "$(k_queue "$job")" "$first")" "the dropped waiter's place"
R F DEL "$(k_lock "$job")" >/dev/null
for p in "${pids[@]}"; do wait_pid "$p" 30; done
end_test

t "a waiter whose subscription was refused (maxclients) subscribes again, and is woken"
# Its SUBSCRIBE got "max number of clients reached": it used to poll every
# refresh (3.3 s at the default lease) for the rest of its wait, and a
# release's message woke nobody. A connection held open here does the
# server's side: maxclients one above the clients now, the waiter, then
# maxclients back, then the release's part: DEL and PUBLISH.
job=resub d=$TMP/resub
mkdir -p "$d"
R F SET "$(k_lock "$job")" someone-else PX 60000 >/dev/null
read -r wid nsub rc late < <($PY - "$F_PORT" "$RR_BIN" "$U" "$job" "$d" <<'PY'
import socket, subprocess, sys, time
port, rr, url, job, d = sys.argv[1:6]
s = socket.create_connection(("127.0.0.1", int(port)))
f = s.makefile("rb")
def read():
    line = f.readline()
    t, rest = line[:1], line[1:-2]
    if t in (b"+", b"-", b":"):
        return rest.decode()
    if t == b"$":
        return None if int(rest) < 0 else f.read(int(rest) + 2)[:-2].decode()
    return [read() for _ in range(int(rest))]
def cmd(*a):
    s.sendall(("*%d\r\n" % len(a) + "".join("$%d\r\n%s\r\n" % (len(x), x) for x in a)).encode())
    return read()
n = int(cmd("INFO", "clients").split("connected_clients:")[1].split()[0])
cmd("CONFIG", "SET", "maxclients", str(n + 1))
p = subprocess.Popen([rr, "-r", url, "-t", "30s", "-w", "20s", job, "--", "sh", "-c",
                      "date +%s%3N > " + d + "/start"], stderr=open(d + "/w.err", "w"))
time.sleep(1.5)
q = cmd("ZRANGE", "redlock:{%s}:queue" % job, "0", "0")
cmd("CONFIG", "SET", "maxclients", "10000")
time.sleep(1.0)
wid = q[0] if q else "-"
nsub = cmd("PUBSUB", "NUMSUB", "redlock:{%s}:wake:%s" % (job, wid))[1]
t0 = int(time.time() * 1000)
cmd("DEL", "redlock:{%s}:lock" % job)
cmd("PUBLISH", "redlock:{%s}:wake:%s" % (job, wid), "1")
rc = p.wait(30)
try:
    late = int(open(d + "/start").read()) - t0
except (OSError, ValueError):
    late = -1
print(wid, nsub, rc, late)
PY
)
note "waiter $wid: subscribed $nsub after maxclients was raised; ran $late ms after the release"
assert_eq 0 "$rc" "the waiter's run"
assert_eq 1 "$nsub" "its subscriptions once the server took clients again"
assert_lt "$late" 1000 "from the release to its command (ms)"
end_test

t "a wake-up while the refresh timer is armed starts one try, not two"
# A release message woke the waiter while its refresh timer was still armed;
# the timer then fired during that try and started a second acquisition
# with a new token: the first one's lock was then renewed with the second's
# token and lost (79), or the two answers crossed (the chaos harness saw a
# crash). Here one transaction frees the lock, wakes the waiter and pauses
# every client for 400 ms, so the woken try waits longer than the waiter's
# refresh interval (200 ms with --ttl 1200ms). CLIENT PAUSE without a mode
# pauses every client: ALL is the default, and a word Redis 6.0 lacks.
job=wake2 d=$TMP/wake2
mkdir -p "$d"
R F SET "$(k_lock "$job")" someone-else PX 60000 >/dev/null
bg "$d/w" "$RR_BIN" -r "$U" -t 1200ms --redis-timeout 2s -w 20s "$job" -- sleep 1
w=$BG
wait_for 5 qlen_is "$job" 1 || fail "the waiter did not queue"
wid=$(R F ZRANGE "$(k_queue "$job")" 0 0)
sleep 0.3   # its subscription is confirmed and its first retry done
printf 'MULTI\nDEL %s\nPUBLISH %s 1\nCLIENT PAUSE 400\nEXEC\n' "$(k_lock "$job")" \
    "redlock:{$job}:wake:$wid" | timeout 10 redis-cli -p "$F_PORT" > "$d/multi.out"
grep -q ERR "$d/multi.out" && fail "the transaction: $(tr '\n' ' ' < "$d/multi.out")"
wait_pid "$w" 20
assert_rc 0 "the woken waiter's run"
assert_not_contains "$(cat "$d/w.err")" "lost" "the waiter's stderr"
end_test

t "--limit 3 with nine 1-second jobs: never more than 3 at once, done in about 3 s"
job=lim3 d=$TMP/lim3
mkdir -p "$d"
pids=()
t0=$(now_ms)
for i in $(seq 1 9); do
    bg "$d/j$i" "$RR_BIN" -r "$U" --limit 3 -w 60s "$job" -- sh -c \
        'echo "S $(date +%s%3N) $REDLOCK_SLOT" >> "$1"; sleep 1; echo "E $(date +%s%3N) $REDLOCK_SLOT" >> "$1"' \
        sh "$d/times"
    pids+=("$BG")
done
wait_all 60 "${pids[@]}"
el=$(( $(now_ms) - t0 ))
assert_eq 0 "$FAILS" "jobs that failed"
read -r maxc starts slots < <(limit_stats "$d/times")
note "9 jobs in $el ms, at most $maxc at once, slots $slots"
assert_eq 9 "$starts" "jobs that ran"
[ "${maxc:-9}" -le 3 ] || fail "$maxc jobs ran at once with --limit 3"
assert_eq "1,2,3" "$slots" "REDLOCK_SLOT values"
[ "$el" -ge 3000 ] || fail "nine 1 s jobs, 3 at a time, took only $el ms"
assert_lt "$el" 8000 "time for nine 1 s jobs, 3 at a time (ms)"
end_test

t "a --limit holder killed -9 frees its place within its TTL"
job=limkill d=$TMP/limkill
mkdir -p "$d"
hs=()
for i in 1 2; do
    bg "$d/h$i" "$RR_BIN" -r "$U" --limit 2 -t 2s "$job" -- sh -c 'touch "$1"; sleep 30' sh "$d/held$i"
    hs+=("$BG")
    wait_for 10 file_there "$d/held$i" || fail "holder $i did not start"
done
bg "$d/w" "$RR_BIN" -r "$U" --limit 2 -t 2s -w 20s "$job" -- sh -c 'date +%s%3N > "$1"' sh "$d/w.start"
w=$BG
wait_for 5 qlen_is "$job" 1 || fail "the third did not queue"
tk=$(now_ms)
kill_wait KILL "${hs[0]}" 5
wait_pid "$w" 20
assert_rc 0 "the waiter"
if [ -s "$d/w.start" ]; then
    gap=$(( $(cat "$d/w.start") - tk ))
    note "the waiter ran $gap ms after a holder was killed (TTL 2000 ms)"
    assert_lt "$gap" 2600 "time to free a killed holder's place (ms)"
else
    fail "the waiter never ran"
fi
kill_wait TERM "${hs[1]}" 10
end_test

t "--status shows every --limit holder and the queue"
job=limstat d=$TMP/limstat
mkdir -p "$d"
hs=()
for i in 1 2; do
    bg "$d/h$i" "$RR_BIN" -r "$U" --limit 2 "$job" -- sh -c 'touch "$1"; sleep 30' sh "$d/held$i"
    hs+=("$BG")
    wait_for 10 file_there "$d/held$i" || fail "holder $i did not start"
done
bg "$d/w" "$RR_BIN" -r "$U" --limit 2 -w 30s "$job" -- true
w=$BG
wait_for 5 qlen_is "$job" 1 || fail "the third did not queue"
rr -r "$U" --status "$job"
note "$(tr '\n' '|' < "$OUT")"
assert_contains "$(cat "$OUT")" "slot 2" "--status"
assert_contains "$(cat "$OUT")" "queue" "--status"
assert_contains "$(cat "$OUT")" "1 waiting" "--status"
rr -r "$U" --status --json "$job"
$PY -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["holders"]) == 2 and len(d["queue"]) == 1, d' "$OUT" ||
    fail "--status --json: $(cat "$OUT")"
kill_wait TERM "$w" 5
for p in "${hs[@]}"; do kill_wait TERM "$p" 10; done
end_test

# --- give-backs whose reply was lost, and dead runs, with --limit ---------------

# hold_slot1 JOB DIR — a run of --limit 2 that holds slot 1 for 30 s; its
# wrapper's pid in A.
hold_slot1() {
    bg "$2/a" "$RR_BIN" -r "$U" --limit 2 "$1" -- sh -c 'touch "$1"; sleep 30' sh "$2/held"
    A=$BG
    wait_for 10 file_there "$2/held" || fail "A did not start"
}

# dead_slot2 JOB DIR — a run that takes slot 2 and is killed -9; returns
# when its lock has expired (its record still says running). Its pid in D.
dead_slot2() {
    bg "$2/dd" "$RR_BIN" -r "$U" --limit 2 -t 1s "$1" -- sh -c 'touch "$1"; sleep 30' sh "$2/dheld"
    D=$BG
    wait_for 10 file_there "$2/dheld" || fail "D did not start"
    kill_wait KILL "$D" 5
    wait_for 5 key_gone F "$(k_lock "$1"):2" || fail "D's lock did not expire"
}

# lost_reply DIR ARGS... — B runs redlock-run ARGS while the server is
# stopped for 0.45 s: its acquire is answered after --redis-timeout 300ms,
# so B gives up (69) and gives back without the reply. Its pid in B.
lost_reply() {
    local d=$1; shift
    pause_redis F
    bg "$d/b" "$RR_BIN" -r "$U" -t 3s --redis-timeout 300ms "$@" -- touch "$d/b.ran"
    B=$BG
    sleep 0.45
    resume_redis F
    wait_pid "$B" 10
    assert_rc 69 "B, whose reply was lost"
    assert_no_file "$d/b.ran" "B's command"
}

# abandoned_pids JOB — the pids the job's 'abandoned' history entries name.
abandoned_pids() {
    R F XRANGE "$(k_hist "$1")" - + | tr '\n' ' ' |
        grep -o "status abandoned exit_code  signal  host [^ ]* pid [0-9]*" |
        sed 's/.* pid //' | tr '\n' ' '
}

t "--limit 2: one waiter queued, both slots free: a run without --wait takes the slot the waiter leaves"
# F free slots go to the first F live waiters; a slot no waiter is first
# for is anyone's. (One waiter queued used to refuse every run: 75 while a
# slot stood free.) The waiter is stopped, so it cannot take its slot yet;
# it still listens, so it is live.
job=limfree d=$TMP/limfree
mkdir -p "$d"
for x in a b; do
    bg "$d/$x" "$RR_BIN" -r "$U" --limit 2 "$job" -- sh -c \
        'touch "$1"; i=0; while [ ! -e "$2" ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done' \
        sh "$d/$x.on" "$d/stop"
    eval "$x=\$BG"
    wait_for 10 file_there "$d/$x.on" || fail "holder $x did not start"
done
rr_direct -r "$U" --limit 2 "$job" -- true
assert_rc 75 "a run while both slots are held"
assert_contains "$(cat "$ERR")" "not running: all 2 slots are held (--limit 2); the one that frees first is held by "
bg "$d/w" "$RR_BIN" -r "$U" --limit 2 -w 60s "$job" -- true
w=$BG
wait_for 10 qlen_is "$job" 1 || fail "the waiter did not queue"
kill -STOP "$w"
touch "$d/stop"
wait_pid "$a" 10
wait_pid "$b" 10
rr_direct -r "$U" --limit 2 "$job" -- true
assert_rc 0 "a run without --wait, one waiter queued, two slots free ($(cat "$ERR"))"
rr_direct -r "$U" --limit 2 "$job" -- true
assert_rc 0 "another (the first one's slot is free again)"
# Still queued (its entry lives 10 s): else the runs met an empty queue,
# and nothing was tested.
assert_eq 1 "$(qlen "$job")" "the stopped waiter's place in the queue"
kill -CONT "$w"
wait_pid "$w" 20
assert_eq 0 "$RC" "the waiter, continued"
end_test

# holder JOB DIR [OPTIONS...] — a run of JOB that holds it until DIR/stop
# (20 s at most); returns once its command started. Its pid in h.
holder() {
    local job=$1 d=$2
    shift 2
    mkdir -p "$d"
    bg "$d/h" "$RR_BIN" -r "$U" "$@" "$job" -- sh -c \
        'touch "$1"; i=0; while [ ! -e "$2" ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done' \
        sh "$d/held" "$d/stop"
    h=$BG
    wait_for 10 file_there "$d/held" || fail "the holder did not start"
}

# behind_holder JOB DIR 'W1 OPTIONS' 'W2 OPTIONS' [HOLDER OPTIONS...] — a
# holder runs JOB until DIR/stop; W1, then W2 queue behind it with -w 60s
# (their commands write when they ran to DIR/w1.at, DIR/w2.at). Then
# the holder is stopped ($t0: when) and must end 0; $w1, $w2: the waiters.
behind_holder() {
    local job=$1 d=$2 o1=$3 o2=$4
    shift 4
    holder "$job" "$d" "$@"
    # shellcheck disable=SC2086 # the options are words
    bg "$d/w1" "$RR_BIN" -r "$U" $o1 -w 60s "$job" -- sh -c 'date +%s%3N > "$1"' sh "$d/w1.at"
    w1=$BG
    wait_for 10 qlen_is "$job" 1 || fail "W1 did not queue"
    # shellcheck disable=SC2086
    bg "$d/w2" "$RR_BIN" -r "$U" $o2 -w 60s "$job" -- sh -c 'date +%s%3N > "$1"' sh "$d/w2.at"
    w2=$BG
    wait_for 10 qlen_is "$job" 2 || fail "W2 did not queue"
    t0=$(now_ms)
    touch "$d/stop"
    wait_pid "$h" 10
    assert_eq 0 "$RC" "the holder"
}

t "a waiter woken for a free lock that its --once ID no longer needs wakes the next waiter"
# W1 (ID d1, which the holder is settling) is first; the holder's release
# wakes W1 only. W1's acquire finds d1 done and takes nothing: the lock is
# still free, and W2 behind it (ID d2) must hear so at once, not at its
# next refresh (3.3 s at the default lease: it has just refreshed).
job=oncewake d=$TMP/oncewake
behind_holder "$job" "$d" "--once d1" "--once d2" --once d1
wait_pid "$w1" 10
assert_eq 0 "$RC" "W1 (d1 was done)"
assert_no_file "$d/w1.at" "W1's command"
wait_pid "$w2" 20
assert_eq 0 "$RC" "W2"
assert_ran_within "$d/w2.at" "$t0" 2000 "W2 (after the holder's end)"
end_test

t "a waiter refused for a dead run's --once ID: its record is marked abandoned, even if the next waiter took the lock first"
# x1's record is a dead run's, still 'running'. W1 (--once x1, --on-stale
# refuse) is first behind the holder, W2 second. W1's refusal is marked by
# abandon.lua after its acquire, which wakes W2: W2 could take the lock
# before the marks, and abandon.lua, finding the lock held, left x1's
# record 'running'. It is a race, so three rounds. D's death has one
# history entry (the holder's acquire wrote it, burying D's state record).
for k in 1 2 3; do
    job=stalewake$k d=$TMP/stalewake$k
    mkdir -p "$d"
    bg "$d/dd" "$RR_BIN" -r "$U" --once x1 -t 1s "$job" -- sh -c 'touch "$1"; sleep 30' sh "$d/dheld"
    D=$BG
    wait_for 10 file_there "$d/dheld" || fail "D did not start"
    kill_wait KILL "$D" 5
    wait_for 5 key_gone F "$(k_lock "$job")" || fail "D's lock did not expire"
    behind_holder "$job" "$d" "--once x1 --on-stale refuse" ""
    wait_pid "$w1" 10
    assert_eq 65 "$RC" "W1 (x1's last run died)"
    assert_no_file "$d/w1.at" "W1's command"
    wait_pid "$w2" 20
    assert_eq 0 "$RC" "W2"
    assert_ran_within "$d/w2.at" "$t0" 2000 "W2 (after the holder's end)"
    assert_hash F "$(k_once "$job" x1)" status abandoned
    assert_eq "$D " "$(abandoned_pids "$job")" "the pids of the abandoned entries (D once)"
done
end_test

t "a release that shortens the lock to the rest of --min-hold wakes the first waiter"
# The holder (--min-hold 1.5s) is stopped just after W1 and W2 queued: its
# lock ends 1.5 s after it started. W1, told at once, sleeps until then;
# told nobody, W1 learned it at its next refresh, 3.3 s after it queued.
job=minhold d=$TMP/minhold
behind_holder "$job" "$d" "" "" --min-hold 1500ms
note "the lock's PTTL after the holder's end: $(R F PTTL "$(k_lock $job)") ms"
wait_pid "$w1" 20
assert_eq 0 "$RC" "W1"
assert_ran_within "$d/w1.at" "$t0" 2500 "W1 (after the holder was told to stop)"
wait_pid "$w2" 20
assert_eq 0 "$RC" "W2"
end_test

t "--limit: a give-back after a lost reply frees the slot it took, whatever slot that is"
# A holds slot 1, so B's acquire takes slot 2. The give-back must find B's
# token there, free the slot and put back the slot's record, or C gets
# "held" while only A runs, and a later run records B, which ran nothing,
# as abandoned.
job=limgive d=$TMP/limgive
mkdir -p "$d"
hold_slot1 "$job" "$d"
lost_reply "$d" --limit 2 "$job"
note "B: $(tr '\n' '|' < "$d/b.err")"
assert_eq 0 "$(R F EXISTS "$(k_lock $job):2")" "slot 2's lock after B's give-back"
st2=$(R F HMGET "$(k_state $job):2" status pid | tr '\n' ' ')
note "slot 2's record after the give-back: $st2"
[ "$st2" != "running $B " ] || fail "slot 2's record is B's, running: $st2"
rr_direct -r "$U" --limit 2 "$job" -- true
assert_rc 0 "C, while A holds slot 1 ($(cat "$ERR"))"
# Once B's lease would have ended, a run takes slot 2 again.
wait_for 5 key_gone F "$(k_lock $job):2"
rr_direct -r "$U" --limit 2 "$job" -- true
assert_rc 0 "D, after B's lease"
assert_eq "" "$(abandoned_pids $job)" "abandoned entries (A runs, B ran nothing, C and D succeeded)"
kill_wait TERM "$A" 10
end_test

t "--limit: a lost-reply give-back over a dead run's record leaves one abandoned entry, for that run"
# Slot 2's record is a dead run's (D, killed -9). B's acquire takes slot 2,
# records D abandoned and keeps D's record; B never hears of it. Its
# give-back puts D's record back and takes its entry back too (the round
# had no quorum), so the run that next takes slot 2 records D once, and
# nobody records B.
job=limdead d=$TMP/limdead
mkdir -p "$d"
hold_slot1 "$job" "$d"
dead_slot2 "$job" "$d"
lost_reply "$d" --limit 2 "$job"
assert_eq "running $D " "$(R F HMGET "$(k_state $job):2" status pid | tr '\n' ' ')" "slot 2's record"
rr_direct -r "$U" --limit 2 "$job" -- true
assert_rc 0 "C, while A holds slot 1 ($(cat "$ERR"))"
assert_eq "$D " "$(abandoned_pids $job)" "the pids of the abandoned entries (D once, never B $B)"
kill_wait TERM "$A" 10
end_test

t "--limit --on-stale refuse: the dead run's slot is marked abandoned, not slot 1"
# abandon.lua used to look at slot 1 only: while A held it, slot 2's dead
# record stayed 'running' (no history entry) however often runs refused it.
job=limstale d=$TMP/limstale
mkdir -p "$d"
hold_slot1 "$job" "$d"
dead_slot2 "$job" "$d"
rr_direct -r "$U" --limit 2 --on-stale refuse "$job" -- touch "$d/e.ran"
assert_rc 65 "E, refused for the dead run"
assert_no_file "$d/e.ran" "E's command"
assert_hash F "$(k_state $job):2" status abandoned
assert_hash F "$(k_state $job)" status running
assert_eq "$D " "$(abandoned_pids $job)" "the pids of the abandoned entries (D once)"
kill_wait TERM "$A" 10
end_test

t "plain master: a give-back after a lost reply frees the lock and puts back the record"
# Without --limit there is one slot: the give-back names its keys.
job=plaingive d=$TMP/plaingive
mkdir -p "$d"
rr_direct -r "$U" "$job" -- true
assert_rc 0 "the first run"
lost_reply "$d" "$job"
# B's acquire ran (it drew a fence) after B had stopped waiting for it.
assert_ne "$(hget F "$(k_state $job)" fence)" "$(R F GET "$(k_fence $job)")" \
    "the fence counter (B's acquire never ran: no reply was lost)"
assert_eq 0 "$(R F EXISTS "$(k_lock $job)")" "the lock after B's give-back"
assert_hash F "$(k_state $job)" status succeeded
rr_direct -r "$U" "$job" -- true
assert_rc 0 "C, after B"
assert_eq "" "$(abandoned_pids $job)" "abandoned entries"
end_test

t "--limit with --once, and bad --limit values: 64 with a message"
rr -r "$U" --limit 3 --once daily x -- true
assert_rc 64 "--limit with --once"
assert_contains "$(cat "$ERR")" "--limit cannot be used with --once"
assert_eq 1 "$(grep -c '' "$ERR")" "lines of the message"
for v in 0 -1 abc 99999999999999999999 101; do
    rr -r "$U" --limit "$v" x -- true
    assert_rc 64 "--limit $v"
    assert_contains "$(cat "$ERR")" "--limit must be a number of holders from 1 to 100" "--limit $v"
done
rr -r "$U" -r "$G_URL" -r "$H_URL" --limit 2 x -- true
assert_rc 64 "--limit with several masters"
assert_contains "$(cat "$ERR")" "needs one lock service"
end_test

t "Redlock (3 masters): waiters still run in arrival order"
job=fair3 d=$TMP/fair3
mkdir -p "$d"
M=(-r "$U" -r "$G_URL" -r "$H_URL")
bg "$d/h" "$RR_BIN" "${M[@]}" "$job" -- sh -c 'touch "$1"; sleep 2' sh "$d/held"
pids=("$BG")
wait_for 10 file_there "$d/held" || fail "holder did not start"
for i in 01 02 03 04 05 06; do
    bg "$d/w$i" "$RR_BIN" "${M[@]}" -w 60s "$job" -- sh -c 'echo "$1" >> "$2"' sh "$i" "$d/order"
    pids+=("$BG")
    nap 0.08
    wait_for 2 qlen_is "$job" "$((10#$i))" || true   # queued (on the first master) before the next
done
wait_all 60 "${pids[@]}"
got=$(tr '\n' ' ' < "$d/order" | sed 's/ $//')
note "order: $got"
assert_eq 0 "$FAILS" "runs that failed"
assert_eq "01 02 03 04 05 06" "$got" "order over 3 masters"
end_test

t "Redlock (3 masters): a waiter killed in the queue does not stall the ones behind it"
dead_waiter kill3 " on the first master" " over 3 masters" "${M[@]}"
end_test

done_testing
