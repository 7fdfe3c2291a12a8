#!/usr/bin/env bash
# t_app.sh — an application's own lock on the same key (README "Sharing a
# lock with an application"): redis-py's Lock (Debian's python3-redis) on
# redlock:{NAME}:lock and redlock-run exclude each other both ways;
# --release revokes an application's lock like a live run's (it waits for
# its lease, or needs --force), never deletes it at once; a waiter behind
# the application takes the lock within a bounded time of its release;
# --limit N counts the application's key as one of the N; a hash on the
# key (Redisson's RLock) is named as such.
# shellcheck disable=SC2016  # child commands
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

start_redis A || { t "start redis"; fail "cannot start redis-server"; done_testing; exit 1; }
U=$A_URL

# The application: redis-py's Lock, as an application would use it.
#   app.py hold URL KEY TIMEOUT_S DIR [extend] — take the lock (waiting up to
#     10 s), write DIR/acquired, then until DIR/stop appears: extend every
#     TIMEOUT_S/3 with "extend" (a lost lock: DIR/lost, exit 3); then
#     release (DIR/released, or DIR/release-error naming the exception).
#     Each file holds the time in ms.
#   app.py try URL KEY — take it at once and let it go: exit 0, or 1 busy.
cat > "$TMP/app.py" <<'EOF'
import os, sys, time
import redis
from redis.exceptions import LockError

def ms():
    return int(time.time() * 1000)

def mark(d, name, text=""):
    with open(os.path.join(d, name + ".tmp"), "w") as f:
        f.write("%d %s\n" % (ms(), text))
    os.rename(os.path.join(d, name + ".tmp"), os.path.join(d, name))

mode, url, key = sys.argv[1], sys.argv[2], sys.argv[3]
r = redis.Redis.from_url(url)
if mode == "try":
    lock = r.lock(key, timeout=5)
    if not lock.acquire(blocking=False):
        sys.exit(1)
    lock.release()
    sys.exit(0)
timeout, d = float(sys.argv[4]), sys.argv[5]
extend = len(sys.argv) > 6 and sys.argv[6] == "extend"
lock = r.lock(key, timeout=timeout, sleep=0.01, blocking_timeout=10)
if not lock.acquire():
    sys.exit(2)
mark(d, "acquired", lock.local.token.decode())
next_extend = time.time() + timeout / 3
while not os.path.exists(os.path.join(d, "stop")):
    if extend and time.time() >= next_extend:
        try:
            lock.extend(timeout, replace_ttl=True)
        except LockError as e:
            mark(d, "lost", type(e).__name__)
            sys.exit(3)
        next_extend = time.time() + timeout / 3
    time.sleep(0.005)
try:
    lock.release()
    mark(d, "released")
except LockError as e:
    mark(d, "release-error", type(e).__name__)
EOF

# app_hold DIR TIMEOUT_S [extend] — start the application holding KEY's
# lock (job $job); sets APP (its pid) once it holds it.
app_hold() {
    local d=$1
    rm -rf "$d"
    mkdir -p "$d"
    bg "$d/app" "$PY" "$TMP/app.py" hold "$U" "$(k_lock "$job")" "$2" "$d" ${3:+"$3"}
    APP=$BG
    wait_for 10 test -e "$d/acquired" || fail "the application did not take the lock: $(cat "$d/app.err")"
}
app_try() { "$PY" "$TMP/app.py" try "$U" "$(k_lock "$job")"; }
ms_of() { cut -d' ' -f1 "$1" 2>/dev/null; }
revoked() { [ "$(R A GET "$(k_lock "$job")" | cut -c1-8)" = revoked: ]; }

t "redis-py is there (python3-redis: scripts/deps.sh test installs it)"
if ! "$PY" -c 'import redis.lock' 2>/dev/null; then
    skip "python3-redis is not installed: scripts/deps.sh test installs it"
    done_testing
    exit 0
fi
note "redis-py $("$PY" -c 'import redis; print(redis.__version__)')"

t "an application's lock on the key keeps redlock-run out, and redlock-run's keeps it out"
job=excl
app_hold "$TMP/x" 30
rr_direct -r "$U" "$job" -- touch "$TMP/x.ran"
assert_rc 75 "a run while the application holds the lock"
assert_no_file "$TMP/x.ran"
assert_contains "$(cat "$ERR")" "not running: lock is held" "what it says"
rr_direct -r "$U" --status "$job"
assert_contains "$(cat "$OUT")" "held by a program that is not redlock-run" "--status"
touch "$TMP/x/stop"
wait_pid "$APP" 10
assert_rc 0 "the application"
assert_file_exists "$TMP/x/released"
bg "$TMP/x.rr" "$RR_BIN" -r "$U" "$job" -- \
    sh -c 'touch "$1.on"; while [ ! -e "$1.stop" ]; do sleep 0.02; done' sh "$TMP/x"
h=$BG
wait_for 10 test -e "$TMP/x.on" || fail "redlock-run's command did not start"
app_try
assert_eq 1 "$?" "the application's try while redlock-run holds the lock"
touch "$TMP/x.stop"
wait_pid "$h" 10
assert_rc 0 "redlock-run"
app_try
assert_eq 0 "$?" "the application's try once redlock-run released it"

t "--release does not delete an application's lock: it revokes it and waits for its lease"
# On the code before this change it deleted the lock at once ("released
# ... (holder unknown)") and a run could start beside the application.
job=rel
app_hold "$TMP/r" 3 extend
bg "$TMP/r.rel" "$RR_BIN" -v -r "$U" --release "$job"
rel=$BG
wait_for 5 revoked || fail "the lock was not marked revoked: $(R A GET "$(k_lock "$job")")"
key_there A "$(k_lock "$job")" || fail "--release deleted the application's lock"
rr_direct -r "$U" "$job" -- touch "$TMP/r.ran"
assert_rc 75 "a run during the wait"
assert_no_file "$TMP/r.ran"
wait_for 5 test -e "$TMP/r/lost" || fail "the application's extend did not fail"
assert_contains "$(cat "$TMP/r/lost" 2>/dev/null)" "LockNotOwnedError" "what the application saw"
wait_pid "$rel" 10
assert_rc 0 "--release"
assert_contains "$(cat "$TMP/r.rel.err")" "revoked the lock of $job held by a program that is not redlock-run" "the wait's line"
assert_contains "$(cat "$TMP/r.rel.out")" "its lease ended, and the lock with it" "the result"
assert_key_gone A "$(k_lock "$job")"
wait_pid "$APP" 5

t "--release --force deletes an application's lock at once and says what that risks"
job=force
app_hold "$TMP/f" 30
rr_direct -r "$U" --release --force "$job"
assert_rc 0 "--release --force"
assert_key_gone A "$(k_lock "$job")"
assert_contains "$(cat "$ERR")" "a run that takes the lock meanwhile overlaps it" "the warning"
touch "$TMP/f/stop"
wait_pid "$APP" 10
assert_file_exists "$TMP/f/release-error" "the application's release found the lock gone"

t "--release leaves an application's lock with no expiry alone, and says --force deletes it"
job=forever
R A SET "$(k_lock "$job")" apptoken >/dev/null
rr_direct -r "$U" --release "$job"
assert_rc 1 "--release"
assert_contains "$(cat "$OUT")" "with no expiry: there is no lease to wait for" "what it says"
assert_eq apptoken "$(R A GET "$(k_lock "$job")")" "the lock is untouched"
R A DEL "$(k_lock "$job")" >/dev/null

t "a waiter takes the lock within 1 s of the application's release (it polls every 250 ms behind it)"
# On the code before this change the first waiter slept a third of its
# queue entry's life (3.3 s at the default --ttl 30s) between looks: an
# application publishes nothing when it lets go.
job=wake
app_hold "$TMP/w" 30
bg "$TMP/w.rr" "$RR_BIN" -r "$U" -w 20s "$job" -- sh -c 'date +%s%3N > "$1"' sh "$TMP/w.ran"
h=$BG
wait_for 10 grep -q 'waiting up to' "$TMP/w.rr.err" || fail "the waiter did not say it waits"
nap 0.5
touch "$TMP/w/stop"
wait_pid "$h" 15
assert_rc 0 "the waiter"
rel=$(ms_of "$TMP/w/released") ran=$(cat "$TMP/w.ran" 2>/dev/null)
note "released at $rel, the waiter's command ran at $ran: $(( ran - rel )) ms"
assert_lt "$(( ran - rel ))" 1000 "from the application's release to the waiter's command (ms)"
wait_pid "$APP" 5

t "a waiter takes the lock within 1 s of an application's lock expiring"
job=expire
R A SET "$(k_lock "$job")" apptoken PX 1500 >/dev/null
stamp
t0=$NOW_MS
rr_direct -r "$U" -w 20s "$job" -- true
assert_rc 0 "the waiter"
note "the lock expired 1500 ms after it was set; the waiter was done after $(( NOW_MS - t0 )) ms"
assert_lt "$(( NOW_MS - t0 ))" 2500 "from SET to the waiter's end (ms)"

t "--limit 2: the application's key is one holder of the two"
job=lim
app_hold "$TMP/l" 30
bg "$TMP/l.rr" "$RR_BIN" -r "$U" --limit 2 "$job" -- sh -c 'echo "$REDLOCK_SLOT" > "$1"; sleep 2' sh "$TMP/l.slot"
h=$BG
wait_for 10 test -s "$TMP/l.slot" || fail "the --limit 2 run did not start"
assert_eq 2 "$(cat "$TMP/l.slot" 2>/dev/null)" "REDLOCK_SLOT of the run beside the application"
rr_direct -r "$U" --limit 2 "$job" -- touch "$TMP/l.third"
assert_rc 75 "a third holder"
assert_no_file "$TMP/l.third"
wait_pid "$h" 10
assert_rc 0 "the --limit 2 run"
touch "$TMP/l/stop"
wait_pid "$APP" 10

t "a hash on the lock key (Redisson's RLock) is an outage whose hint names it, not 'is Redis up'"
job=hash
R A HSET "$(k_lock "$job")" "app:1" 1 >/dev/null
R A PEXPIRE "$(k_lock "$job")" 30000 >/dev/null
rr_direct -r "$U" "$job" -- touch "$TMP/h.ran"
assert_rc 69 "a run"
assert_no_file "$TMP/h.ran"
assert_contains "$(cat "$ERR")" "Redisson's RLock keeps a hash" "the hint"
assert_not_contains "$(cat "$ERR")" "check that Redis is up" "no outage hint"
R A DEL "$(k_lock "$job")" >/dev/null

done_testing
