#!/usr/bin/env bash
# t_tty.sh — interactive commands under a real pseudo-terminal: without
# --foreground the command's process group gets the terminal while it runs
# (a read works), Ctrl-Z stops the job as a whole in an interactive bash and
# fg continues it, and a command that reads the terminal from a backgrounded
# redlock-run stops the job instead of holding the lock while stopped. And
# without a terminal (cron, CI: a session of its own, under setsid) nothing
# could ever continue a stopped job: redlock-run is never left stopped.
# shellcheck disable=SC2016  # the commands are for the pty's shell
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

start_redis R || { t "start redis"; fail "cannot start"; done_testing; exit 1; }

# pty_run MODE [FILE GO] — drive redlock-run under a pty (python's pty
# module); the transcript goes to $TMP/pty.out. MODE: direct (redlock-run is
# the session's foreground job), ctrlz, fgctrlz (ctrlz with --foreground),
# background or lease (an interactive
# bash runs it; lease: the command stamps FILE, and fg waits for GO to exist).
# freeze CG2 SCRIPT PIDF STAMPS END: redlock-run --contain cgroup runs sh
# SCRIPT PIDF STAMPS END as a job; it is stopped (kill -TSTP %1) for 1 s,
# then fg; the transcript says how many lines STAMPS had at each step and
# what the cgroup.events of PIDF's cgroup (under the cgroup2 mount CG2) said.
# lease_cg SCRIPT A GO: lease with --contain cgroup, running sh SCRIPT A.
pty_run() {
    timeout -k 2 30 "$PY" - "$RR_BIN" "$R_URL" "$@" >"$TMP/pty.out" 2>&1 <<'PY'
import os, pty, sys, time, select
rr, url, mode = sys.argv[1:4]
cmd = ["sh", "-c", 'read x; echo "got:$x"']
if mode == "direct":
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(rr, [rr, "-r", url, "tty-direct", "--"] + cmd)
else:
    pid, fd = pty.fork()
    if pid == 0:
        os.environ["PS1"] = "PROMPT> "
        os.execv("/bin/bash", ["bash", "--norc", "--noprofile", "-i"])
out = b""
def drain(sec, until=None):
    global out
    end = time.time() + sec
    while time.time() < end and not (until and until()):
        r, _, _ = select.select([fd], [], [], 0.05)
        if r:
            try:
                d = os.read(fd, 4096)
            except OSError:
                return
            if not d:
                return
            out += d
def send(b):
    os.write(fd, b)
if mode == "direct":
    send(b"hello\n")
    drain(4)
    _, st = os.waitpid(pid, 0)
    out += b"\nRC=%d\n" % os.waitstatus_to_exitcode(st)
elif mode == "freeze":
    cg2, script, pidf, stamps, end = sys.argv[4:9]
    def lines():
        try:
            return len(open(stamps).read().splitlines())
        except OSError:
            return -1
    def frozen():
        try:
            hp = open(pidf).read().strip()
            rel = [l[3:] for l in open("/proc/%s/cgroup" % hp).read().splitlines()
                   if l.startswith("0::")][0]
            ev = open(cg2 + rel + "/cgroup.events").read().split()
            return "frozen=" + ev[ev.index("frozen") + 1]
        except (OSError, IndexError, ValueError):
            return "frozen=?"
    drain(0.5)
    send(("%s -t 10s --contain cgroup -r %s tty-freeze -- sh %s %s %s %s &\n"
          % (rr, url, script, pidf, stamps, end)).encode())
    drain(5, lambda: lines() > 0)
    drain(0.5)
    send(b"kill -TSTP %1\n")
    drain(0.7)
    n1 = lines()
    drain(1.0)
    n2 = lines()
    f1 = frozen()
    send(b"echo JOBS; jobs\n")
    drain(0.5)
    send(b"fg; echo RC=$?\n")
    drain(1.0)
    n3 = lines()
    f2 = frozen()
    open(end, "w").close()
    drain(10, lambda: b"RC=" in out)
    drain(0.3)
    out += b"\nSTOPPED %d %d %s\nCONTINUED %d %s\n" % (n1, n2, f1.encode(), n3, f2.encode())
    send(b"exit\n")
    drain(0.5)
    os.waitpid(pid, 0)
elif mode in ("lease", "lease_cg"):
    if mode == "lease":
        a, go = sys.argv[4:6]
        run = ("tty-lease -- sh -c 'while :; do date +%%s%%N >> \"$1\"; sleep 0.05; done' "
               "sh %s" % a)
    else:
        script, a, go = sys.argv[4:7]
        run = "--contain cgroup tty-lease-cg -- sh %s %s" % (script, a)
    drain(0.5)
    send(("%s -t 2s --kill-after 300ms -r %s %s &\n" % (rr, url, run)).encode())
    drain(5, lambda: os.path.exists(a) and os.path.getsize(a) > 0)
    send(b"kill -TSTP %1\n")
    drain(0.5)
    send(b"echo JOBS; jobs\n")
    drain(0.5)
    drain(20, lambda: os.path.exists(go))
    send(b"fg; echo RC=$?\n")
    drain(10, lambda: b"RC=" in out)
    drain(0.3)
    send(b"exit\n")
    drain(0.5)
    os.waitpid(pid, 0)
else:
    drain(0.5)
    line = "%s -t 10s %s-r %s tty-%s -- sh -c 'read x; echo got:$x'%s\n" % (
        rr, "--foreground " if mode == "fgctrlz" else "", url, mode,
        " &" if mode == "background" else "")
    send(line.encode())
    drain(1.0)
    if mode in ("ctrlz", "fgctrlz"):
        send(b"\x1a")
        drain(1.0)
    else:
        send(b"\n")
        drain(0.5)
    send(b"echo JOBS; jobs\n")
    drain(0.5)
    send(b"fg\n")
    drain(0.8)
    send(b"hello\n")
    drain(1.0)
    send(b"echo RC=$?\n")
    drain(0.5)
    send(b"exit\n")
    drain(0.5)
    if b"There are stopped jobs" in out:   # a job stopped again: say so, end it
        send(b"exit\n")
        drain(0.5)
    os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors="replace"))
PY
}

t "an interactive command reads the terminal without --foreground"
pty_run direct
o=$(cat "$TMP/pty.out")
assert_contains "$o" "got:hello" "the command's output"
assert_contains "$o" "RC=0" "exit status"
assert_key_gone R "$(k_lock tty-direct)"

t "Ctrl-Z stops the job as a whole in an interactive shell; fg continues it with the terminal"
pty_run ctrlz
o=$(cat "$TMP/pty.out")
assert_contains "$o" "stopped (SIGTSTP), and the command with us" "our message"
assert_contains "$o" "Stopped" "bash's job table"
assert_contains "$o" "got:hello" "the command's output after fg"
assert_contains "$o" "RC=0" "exit status"
assert_not_contains "$o" "by another process" "our own stop of the command read as another's"
assert_key_gone R "$(k_lock tty-ctrlz)"

t "--foreground: Ctrl-Z stops the job as a whole; one fg continues it"
# The terminal's SIGTSTP reaches the command and us (one process group): the
# command's own stop report, read after fg, must not stop the job again.
pty_run fgctrlz
o=$(cat "$TMP/pty.out")
assert_contains "$o" "stopped (SIGTSTP), and the command with us" "our message"
assert_contains "$o" "got:hello" "the command's output after one fg"
assert_contains "$o" "RC=0" "exit status"
assert_not_contains "$o" "by another process" "our own stop of the command read as another's"
assert_key_gone R "$(k_lock tty-fgctrlz)"

t "a command reading the terminal from a backgrounded redlock-run stops the job; fg continues it"
pty_run background
o=$(cat "$TMP/pty.out")
assert_contains "$o" "the command was stopped by SIGTTIN" "our message"
assert_contains "$o" "Stopped" "bash's job table"
assert_contains "$o" "got:hello" "the command's output after fg"
assert_contains "$o" "RC=0" "exit status"
assert_not_contains "$o" "by another process" "our own stop of the command read as another's"
assert_key_gone R "$(k_lock tty-background)"

t "SIGTSTP to a job of an interactive shell stops the command too; the lease runs out; no overlap"
# (Was t_lease.sh's, without a terminal; the whole job stops only where a
# shell can continue it.) The command stamps A every 50 ms; once the lease is
# gone a second run takes the lock and stamps B; fg then ends the first with 79.
lease_gone() { key_gone R "$(k_lock tty-lease)"; }
pty_run lease "$TMP/lease.a" "$TMP/lease.go" &
py=$!
track_pid "$py"
wait_for 8 test -s "$TMP/lease.a" || fail "the first command did not start"
wait_for 8 lease_gone || fail "the lock was never given up"
rr_direct -r "$R_URL" -t 5s tty-lease -- \
    sh -c 'date +%s%N >> "$1"; sleep 1; date +%s%N >> "$1"' sh "$TMP/lease.b"
assert_rc 0 "the second run"
: >"$TMP/lease.go"
wait_pid "$py" 30
o=$(cat "$TMP/pty.out")
assert_contains "$o" "stopped (SIGTSTP), and the command with us" "our message"
assert_contains "$o" "Stopped" "bash's job table"
assert_contains "$o" "RC=79" "the first run's exit status after fg"
assert_not_contains "$o" "by another process" "our own stop of the command read as another's"
a_max=$(sort -n "$TMP/lease.a" 2>/dev/null | tail -1)
b_min=$(sort -n "$TMP/lease.b" 2>/dev/null | head -1)
if [ -z "$a_max" ] || [ -z "$b_min" ]; then
    fail "a run did not stamp (a: '$a_max', b: '$b_min')"
elif [ "$a_max" -gt "$b_min" ]; then
    fail "overlap: the first command still ran $(( (a_max - b_min) / 1000000 ))ms after the second started"
fi
end_test

# ---- cgroup mode: the whole cgroup stops with the job ----------------------

CG2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
if "$RR_BIN" -r "$R_URL" --contain cgroup tty-probe true 2>/dev/null; then
    # The command starts a helper in a session of its own (setsid: outside
    # its process group, which SIGSTOP reaches), which stamps a file every
    # 50 ms, and waits for END.
    cat >"$TMP/freeze.sh" <<'EOF'
( setsid sh -c 'echo $$ >"$1"; while :; do date +%s%N >>"$2"; sleep 0.05; done' sh "$1" "$2" & )
while [ ! -e "$3" ]; do sleep 0.05; done
EOF
    t "cgroup mode: a stopped job freezes its cgroup (a setsid'd helper stops too); fg thaws it"
    pty_run freeze "$CG2" "$TMP/freeze.sh" "$TMP/freeze.pid" "$TMP/freeze.stamps" "$TMP/freeze.end"
    o=$(cat "$TMP/pty.out")
    assert_contains "$o" "stopped (SIGTSTP), and the command with us" "our message"
    assert_contains "$o" "Stopped" "bash's job table"
    assert_contains "$o" "RC=0" "exit status after fg"
    assert_not_contains "$o" "by another process" "our own stop of the command read as another's"
    read -r _ n1 n2 f1 <<<"$(grep '^STOPPED ' "$TMP/pty.out" | tr -d '\r')"
    read -r _ n3 f2 <<<"$(grep '^CONTINUED ' "$TMP/pty.out" | tr -d '\r')"
    note "helper stamps: $n1 when stopped, $n2 a second later ($f1), $n3 a second after fg ($f2)"
    [ "${n1:-0}" -gt 0 ] || fail "the helper never stamped"
    [ "${n2:--1}" = "${n1:-0}" ] ||
        fail "the setsid'd helper ran on while the job was stopped: $n1 -> $n2 stamps in 1 s"
    assert_eq frozen=1 "$f1" "its cgroup while stopped"
    [ "${n3:-0}" -gt "$(( ${n2:-0} + 5 ))" ] ||
        fail "the helper did not run again after fg: $n2 -> $n3 stamps in 1 s"
    assert_eq frozen=0 "$f2" "its cgroup after fg"
    hp=$(cat "$TMP/freeze.pid" 2>/dev/null)
    wait_for 3 pid_gone "$hp" || fail "the helper $hp outlived the run"
    assert_key_gone R "$(k_lock tty-freeze)"
    end_test

    # The helper stamps A and traps TERM (as a cleanup would); the command waits.
    cat >"$TMP/lease-cg.sh" <<'EOF'
( setsid sh -c 'trap "echo TERM >>\"\$1.term\"; exit 0" TERM
               while :; do date +%s%N >>"$1"; sleep 0.05; done' sh "$1" & )
while :; do sleep 0.05; done
EOF
    t "cgroup mode: the lease runs out while the job is stopped and frozen: the frozen helper gets its TERM; no overlap"
    lcg_gone() { key_gone R "$(k_lock tty-lease-cg)"; }
    pty_run lease_cg "$TMP/lease-cg.sh" "$TMP/lcg.a" "$TMP/lcg.go" &
    py=$!
    track_pid "$py"
    wait_for 8 test -s "$TMP/lcg.a" || fail "the helper did not start"
    wait_for 8 lcg_gone || fail "the lock was never given up"
    # Once or twice: the guard's sweep after the command's end sends TERM
    # again to what is left, maybe while the trap runs.
    assert_contains "$(cat "$TMP/lcg.a.term" 2>/dev/null)" TERM \
        "the helper's TERM trap (a frozen process holds a handled TERM until thawed)"
    rr_direct -r "$R_URL" -t 5s tty-lease-cg -- \
        sh -c 'date +%s%N >> "$1"; sleep 1; date +%s%N >> "$1"' sh "$TMP/lcg.b"
    assert_rc 0 "the second run"
    : >"$TMP/lcg.go"
    wait_pid "$py" 30
    o=$(cat "$TMP/pty.out")
    assert_contains "$o" "stopped (SIGTSTP), and the command with us" "our message"
    assert_contains "$o" "RC=79" "the first run's exit status after fg"
assert_not_contains "$o" "by another process" "our own stop of the command read as another's"
    a_max=$(sort -n "$TMP/lcg.a" 2>/dev/null | tail -1)
    b_min=$(sort -n "$TMP/lcg.b" 2>/dev/null | head -1)
    if [ -z "$a_max" ] || [ -z "$b_min" ]; then
        fail "a run did not stamp (a: '$a_max', b: '$b_min')"
    elif [ "$a_max" -gt "$b_min" ]; then
        fail "overlap: the helper still ran $(( (a_max - b_min) / 1000000 ))ms after the second run started"
    fi
    left=$(find "$CG2" -maxdepth 4 -name 'redlock-run.*.tty-lease-cg' 2>/dev/null)
    [ -z "$left" ] || fail "a cgroup was left: $left"
    end_test
else
    t "the cgroup-mode cases"
    skip "no cgroup can be made here"
fi

# ---- without a terminal ----------------------------------------------------

# no_tty PREFIX ARGS... — redlock-run ARGS in a session of its own without a
# controlling terminal, as under cron or CI, in the background. W: its pid,
# BG: the job (setsid, or redlock-run itself), T0: when it was started.
no_tty() {
    local prefix=$1; shift
    rm -f "$prefix.pid"
    T0=$(now_ms)
    setsid -w sh -c 'echo $$ >"$0.pid"; exec "$@"' "$prefix" "$RR_BIN" "$@" \
        >"$prefix.out" 2>"$prefix.err" </dev/null &
    BG=$!
    track_pid "$BG"
    wait_for 5 test -s "$prefix.pid"
    W=$(cat "$prefix.pid" 2>/dev/null)
    track_pid "$W"
    ERR=$prefix.err
}

# watch_no_tty SECONDS — wait for the no_tty run at most SECONDS after its
# start, looking at its state every 20 ms: STATES has every state seen (T
# is stopped). Then it is continued and killed if still there; RC, HUNG
# (1: it had to be killed), ELAPSED_MS from its start.
watch_no_tty() {
    local deadline=$(( T0 + $(secs_ms "$1") )) st hung=0
    STATES=
    while ! pid_gone "$W" && [ "$(now_ms)" -lt "$deadline" ]; do
        st=$(awk '{ print $3 }' "/proc/$W/stat" 2>/dev/null)
        case $STATES in *"$st"*) ;; *) STATES=$STATES$st ;; esac
        nap 0.02
    done
    if ! pid_gone "$W"; then
        hung=1
        { kill -CONT "$W"; kill -KILL "$W"; } 2>/dev/null
    fi
    wait_pid "$BG" 5
    ELAPSED_MS=$(( $(now_ms) - T0 ))
    [ "$hung" = 0 ] || HUNG=1
}

# assert_never_stopped WHAT — redlock-run was never seen stopped (state T).
assert_never_stopped() {
    case $STATES in *T*) fail "$1: redlock-run was seen stopped (states seen: $STATES)" ;; esac
}

# The bound: the lease (-t 3s) and the grace (min(--kill-after, ttl/4):
# 750ms). Today's redlock-run needs a fraction of it; the old one stayed
# stopped for ever once the guard had killed the command at the lease's end.
BOUND=3.75

for sig in TTIN TTOU TSTP; do
    t "no terminal: a command stopped by SIG$sig is continued; redlock-run ends by itself with its status"
    no_tty "$TMP/nt-$sig" -t 3s -r "$R_URL" "notty-$sig" -- \
        sh -c "kill -$sig \$\$; kill -$sig \$\$; echo after the stops"
    watch_no_tty "$BOUND"
    assert_rc 0
    assert_never_stopped "SIG$sig"
    assert_contains "$(cat "$TMP/nt-$sig.out")" "after the stops" "the command's output"
    e=$(cat "$ERR")
    assert_contains "$e" "the command was stopped by SIG$sig, sent by a process: there is no terminal to continue it; continued it" "our message"
    assert_not_contains "$e" "read the terminal" "our message"
    assert_not_contains "$e" "stopping with it" "our message"
    # Said once: the second stop is in the debug log only.
    [ "$(grep -c "stopped by SIG$sig" "$ERR")" = 1 ] || fail "the warning is not said once: $e"
    assert_key_gone R "$(k_lock "notty-$sig")"
    end_test
done

t "no terminal: SIGTSTP to redlock-run is ignored with a warning; the command ends normally"
no_tty "$TMP/nt-self" -t 3s -r "$R_URL" notty-self -- \
    sh -c ': >"$1"; sleep 1; echo finished' sh "$TMP/nt-self.started"
wait_for 3 test -e "$TMP/nt-self.started" || fail "the command did not start"
kill -TSTP "$W"
watch_no_tty "$BOUND"
assert_rc 0
assert_never_stopped "SIGTSTP to redlock-run"
assert_contains "$(cat "$TMP/nt-self.out")" "finished" "the command's output"
assert_contains "$(cat "$ERR")" "ignored SIGTSTP: there is no terminal to continue redlock-run" "our message"
assert_key_gone R "$(k_lock notty-self)"
end_test

t "no terminal: a command that keeps stopping itself is still ended by --max-runtime"
no_tty "$TMP/nt-loop" -t 3s --max-runtime 1s --kill-after 200ms -r "$R_URL" notty-loop -- \
    sh -c 'while :; do kill -TSTP $$; done'
watch_no_tty "$BOUND"
assert_rc 124
assert_never_stopped "a command stopping itself in a loop"
assert_contains "$(cat "$ERR")" "ran longer than --max-runtime" "our message"
assert_key_gone R "$(k_lock notty-loop)"
end_test

done_testing
