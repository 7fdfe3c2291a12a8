#!/usr/bin/env bash
# t_child.sh — the command never outlives a redlock-run that died: not the
# command itself (PR_SET_PDEATHSIG), nor what it started in its process group
# (the guard process). A grandchild left running would work without a lock.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

start_redis S
U=$S_URL

# assert_sibling_killed PID WHAT: the TERM-ignoring sibling PID is gone soon
# after WHAT; it is killed anyway so that a failure leaves nothing behind.
assert_sibling_killed() {
    if [ -z "$1" ]; then
        fail "could not find the sibling process"
        return
    fi
    wait_for 3 pid_gone "$1" || fail "the TERM-ignoring sibling $1 still runs after $2"
    kill -KILL "$1" 2>/dev/null
}
# sibling WRAPPER PATTERN: a process matching PATTERN in the process group of
# the wrapper's command (the group's id is the command's pid).
# The command is the guard's child (redlock-run -> redlock-guard -> command).
sibling() {
    local cmd c g
    for g in $(cat "/proc/$1/task/$1/children" 2>/dev/null); do
        [ "$(cat "/proc/$g/comm" 2>/dev/null)" = redlock-guard ] || continue
        for c in $(cat "/proc/$g/task/$g/children" 2>/dev/null); do cmd=$c; done
    done
    [ -n "$cmd" ] && pgrep -g "$cmd" -f "$2" | head -1
}

t "SIGKILL to redlock-run kills the command's grandchildren too"
bg "$TMP/gk" "$RR_BIN" -r "$U" -t 30s grandkids -- \
    sh -c 'sleep 60 & echo $! > "$1"; sleep 60 & echo $! > "$2"; wait' sh "$TMP/g1" "$TMP/g2"
w=$BG
wait_for 10 test -s "$TMP/g2" || fail "the command did not start"
g1=$(cat "$TMP/g1" 2>/dev/null); g2=$(cat "$TMP/g2" 2>/dev/null)
! pid_gone "$g1" || fail "grandchild $g1 is not running before the kill"
kill -KILL "$w"
wait_for 3 pid_gone "$g1" || fail "grandchild $g1 still runs after redlock-run was killed"
wait_for 3 pid_gone "$g2" || fail "grandchild $g2 still runs after redlock-run was killed"
end_test

t "a command that ends normally: what it left running is stopped before the release"
# Unlike flock(1): a background process left running would work on without
# the lock. (Until the guard and subreaper: it was left alone.)
rr -r "$U" bgleft -- sh -c 'sleep 5 & echo $! > "$1"' sh "$TMP/left"
assert_rc 0
l=$(cat "$TMP/left" 2>/dev/null)
! pid_gone "$l" && fail "the left-behind process $l still runs after redlock-run ended"
assert_contains "$(cat "$ERR")" "left $l ("
[ -n "$l" ] && kill "$l" 2>/dev/null
end_test

t "lock lost: a process of the command's group that survives SIGTERM is killed too"
# The group's leader dies of TERM; its sibling ignores TERM. Found in review:
# the sibling used to work on without a lock after redlock-run released it.
bg "$TMP/surv" "$RR_BIN" -r "$U" -t 2s --kill-after 300ms survivor -- \
    sh -c '(trap "" TERM; exec sleep 62) & exec sleep 100'
w=$BG
sleep 0.5
sib=$(sibling "$w" 'sleep 62')
R S DEL "$(k_lock survivor)" >/dev/null
wait_pid "$w" 10
assert_rc 79
assert_sibling_killed "$sib" "the loss"
end_test

t "--max-runtime: a process of the command's group that survives SIGTERM is killed too"
bg "$TMP/surv2" "$RR_BIN" -r "$U" --max-runtime 1s --kill-after 300ms survivor2 -- \
    sh -c '(trap "" TERM; exec sleep 61) & exec sleep 100'
w=$BG
sleep 0.5
sib=$(sibling "$w" 'sleep 61')
wait_pid "$w" 10
assert_rc 124
assert_sibling_killed "$sib" "--max-runtime"
end_test

t "--max-runtime: a command that ignores SIGTERM is KILLed; still exit 124, recorded as timeout"
# 124 says why it ended, whichever signal it took (timeout(1) without
# --preserve-status does the same); the record says timeout, not killed.
rr -r "$U" --max-runtime 1s --kill-after 300ms stubborn -- \
    sh -c 'trap "" TERM; while :; do sleep 0.1; done'
assert_rc 124
assert_hash S "$(k_state stubborn)" status timeout
assert_key_gone S "$(k_lock stubborn)"
end_test

t "the guard killed while redlock-run is stopped: the command dies with its guard (PR_SET_PDEATHSIG)"
# Nothing of ours runs to stop it then: redlock-run is stopped, its guard
# dead; the kernel's SIGKILL at the parent's death is all there is
# (ARCHITECTURE.md, "Who stops what when a process dies"). (scripts/mutants:
# no_pdeathsig.)
bg "$TMP/pd" "$RR_BIN" -r "$U" -t 20s pdeath -- sh -c 'echo $$ > "$1.tmp"; mv "$1.tmp" "$1"; exec sleep 60' sh "$TMP/pd.c"
w=$BG
wait_for 10 test -s "$TMP/pd.c" || fail "the command did not start"
c=$(cat "$TMP/pd.c" 2>/dev/null)
g=$(cut -d" " -f4 "/proc/$c/stat" 2>/dev/null)
assert_eq redlock-guard "$(cat "/proc/$g/comm" 2>/dev/null)" "the command's parent"
kill -STOP "$w"
[ -n "$g" ] && kill -KILL "$g"
wait_for 3 pid_gone "$c" || fail "the command $c still runs after its guard died (redlock-run stopped)"
kill -CONT "$w"
wait_pid "$w" 20
assert_eq "$HUNG" 0 "the run hung after its guard died"
assert_eq "$RC" 79 "the guard's death before the command's end: a loss"
[ -n "$c" ] && { pid_gone "$c" || kill -KILL "$c"; }
end_test

t "the guard killed while it stops what a successful command left: still a success, and nothing is left"
# The command exits 0 and leaves a helper that ignores TERM; the guard is
# SIGKILLed during the helper's grace. Issue 28: the run said "lock lost ...
# the command was stopped", exited 79 and recorded 'lost' (exit_code 0), so
# the next --once run of the ID ran again (8 of 8).
bg "$TMP/gd" "$RR_BIN" -r "$U" -t 40s --kill-after 8s gdone -- \
    sh -c 'sh -c "trap \"\" TERM; echo \$\$ > \"\$1.tmp\"; exec sleep 61" sh "$1" &
           while [ ! -s "$1.tmp" ]; do sleep 0.01; done; mv "$1.tmp" "$1"; exit 0' sh "$TMP/gd.h"
w=$BG
wait_for 10 test -s "$TMP/gd.h" || fail "the command did not start its helper"
h=$(cat "$TMP/gd.h" 2>/dev/null)
# The helper's parent is the guard once the command is gone.
wait_for 5 sh -c '[ "$(cut -d" " -f4 "/proc/$1/stat" 2>/dev/null)" != "" ] &&
    [ "$(cat "/proc/$(cut -d" " -f4 "/proc/$1/stat")/comm")" = redlock-guard ]' sh "$h" ||
    fail "the helper $h was not re-parented to the guard"
wait_for 5 grep -q 'left .*running' "$TMP/gd.err" || fail "the guard did not say what was left"
g=$(cut -d" " -f4 "/proc/$h/stat" 2>/dev/null)
[ -n "$g" ] && kill -KILL "$g"
wait_pid "$w" 20
assert_eq "$HUNG" 0 "the run hung after its guard died"
assert_eq "$RC" 0 "the command's own status (0)"
assert_eq "$(hget S "$(k_state gdone)" status)" succeeded
assert_not_contains "$(cat "$TMP/gd.err")" "lock lost"
assert_contains "$(cat "$TMP/gd.err")" "died after the command ended"
wait_for 3 pid_gone "$h" || fail "the helper $h outlived the run"
kill -KILL "$h" 2>/dev/null
end_test

# stranger_at PID FILE: a process of pid PID (through ns_last_pid, as a pid
# wrap would give it) that leads a session and group of its own and sleeps
# 20 s; FILE says it was made. Root only.
stranger_at() {
    "$PY" - "$1" "$2" <<'PYEOF'
import os, sys
target, out = int(sys.argv[1]), sys.argv[2]
for _ in range(200):
    with open("/proc/sys/kernel/ns_last_pid", "w") as f:
        f.write(str(target - 1))
    pid = os.fork()
    if pid == 0:
        if os.getpid() == target:
            os.setsid()
            with open(out + ".tmp", "w") as f:
                f.write(str(target))
            os.rename(out + ".tmp", out)
            os.execvp("sleep", ["sleep", "20"])
        os._exit(0)
    if pid == target:
        sys.exit(0)
    os.waitpid(pid, 0)
sys.exit(1)
PYEOF
}

t "the command's pid taken by a stranger's group while what it left is swept: the stranger lives"
# Once the command is reaped and its process group is empty, its pid (the
# group's id) is free, and another process may get it and lead a group of
# its own. Found in review: the sweep of what the command left signalled
# that group (TERM, then KILL every 10 ms after the grace). The stranger
# gets the pid through ns_last_pid, as a pid wrap would give it.
if [ "$(id -u)" != 0 ] || [ ! -w /proc/sys/kernel/ns_last_pid ]; then
    skip "needs root to write /proc/sys/kernel/ns_last_pid"
else
    bg "$TMP/ru" "$RR_BIN" -r "$U" -t 30s --kill-after 3s pidreuse -- \
        sh -c 'echo $$ > "$1"; setsid sh -c "trap \"\" TERM; echo > \"\$1.r\"; exec sleep 62" sh "$1" &
               while [ ! -e "$1.r" ]; do sleep 0.01; done' sh "$TMP/ru.c"
    w=$BG
    wait_for 10 grep -q 'left .*running' "$TMP/ru.err" || fail "the command left nothing running"
    c=$(cat "$TMP/ru.c" 2>/dev/null)
    # A process of pid $c that leads a session (and group) of its own.
    stranger_at "$c" "$TMP/ru.s"
    if [ ! -s "$TMP/ru.s" ]; then
        skip "could not get pid $c for the stranger (a busy machine)"
        kill -KILL "$w" 2>/dev/null
    else
        wait_pid "$w" 20
        assert_eq "$HUNG" 0 "the run hung"
        pid_gone "$c" && fail "the stranger (pid $c, its own group) was killed by the sweep"
        kill -KILL "$c" 2>/dev/null
        end_test
    fi
fi

t "the guard killed while it sweeps, the command's pid a stranger's by then: the successor spares it"
if [ "$(id -u)" != 0 ] || [ ! -w /proc/sys/kernel/ns_last_pid ]; then
    skip "needs root to write /proc/sys/kernel/ns_last_pid"
else
    bg "$TMP/rs" "$RR_BIN" -r "$U" -t 30s --kill-after 20s pidreuse2 -- \
        sh -c 'echo $$ > "$1"; setsid sh -c "trap \"\" TERM; echo \$\$ > \"\$1.r\"; exec sleep 63" sh "$1" &
               while [ ! -s "$1.r" ]; do sleep 0.01; done' sh "$TMP/rs.c"
    w=$BG
    wait_for 10 grep -q 'left .*running' "$TMP/rs.err" || fail "the command left nothing running"
    c=$(cat "$TMP/rs.c" 2>/dev/null)
    h=$(cat "$TMP/rs.c.r" 2>/dev/null)
    stranger_at "$c" "$TMP/rs.s"
    if [ ! -s "$TMP/rs.s" ]; then
        skip "could not get pid $c for the stranger (a busy machine)"
        kill -KILL "$w" 2>/dev/null
    else
        g=$(cut -d" " -f4 "/proc/$h/stat" 2>/dev/null)
        [ "$(cat "/proc/$g/comm" 2>/dev/null)" = redlock-guard ] && kill -KILL "$g"
        wait_pid "$w" 20
        assert_eq "$HUNG" 0 "the run hung after its guard died"
        wait_for 3 pid_gone "$h" || fail "the helper $h outlived the run"
        pid_gone "$c" && fail "the stranger (pid $c, its own group) was killed by the successor"
        kill -KILL "$c" "$h" 2>/dev/null
        end_test
    fi
fi

t "a run keeps no process of the command before it has the lock: while it waits, redlock-run and its guard only"
# The guard forks the command's process at the spawn: a queue of a
# thousand waiters holds no thousand idle processes more, and a herd's
# losers do not fork for nothing.
bg "$TMP/pw-h" "$RR_BIN" -r "$U" -t 5s prewait -- sh -c 'touch "$1"; while [ ! -e "$2" ]; do sleep 0.05; done' \
    sh "$TMP/pw-h.run" "$TMP/pw-h.stop"
h=$BG
wait_for 10 file_there "$TMP/pw-h.run" || fail "the holder did not start"
bg "$TMP/pw-w" "$RR_BIN" -r "$U" -t 5s -w 20s prewait -- touch "$TMP/pw-w.ran"
w=$BG
g=
for _ in $(seq 100); do
    g=$(for c in $(cat "/proc/$w/task/$w/children" 2>/dev/null); do
            [ "$(cat "/proc/$c/comm" 2>/dev/null)" = redlock-guard ] && echo "$c"; done | head -1)
    [ -n "$g" ] && break
    sleep 0.05
done
[ -n "$g" ] || fail "no guard under the waiter"
sleep 0.5   # well into the wait
assert_eq "" "$(cat "/proc/$g/task/$g/children" 2>/dev/null | tr -d ' ')" "the waiting guard's children"
touch "$TMP/pw-h.stop"
wait_pid "$h" 10
wait_pid "$w" 15
assert_eq 0 "$RC" "the waiter's status"
assert_file_exists "$TMP/pw-w.ran" "the waiter's command"
end_test

done_testing
