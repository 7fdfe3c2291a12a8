#!/usr/bin/env bash
# t_tty.sh — interactive commands under a real pseudo-terminal: without
# --foreground the command's process group gets the terminal while it runs
# (a read works), Ctrl-Z stops the job as a whole in an interactive bash and
# fg continues it, and a command that reads the terminal from a backgrounded
# redlock-run stops the job instead of holding the lock while stopped.
# shellcheck disable=SC2016  # the commands are for the pty's shell
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

start_redis R || { t "start redis"; fail "cannot start"; done_testing; exit 1; }

# pty_run MODE — drive redlock-run under a pty (python's pty module); the
# transcript goes to $TMP/pty.out. MODE: direct (redlock-run is the session's
# foreground job), ctrlz or background (an interactive bash runs it).
pty_run() {
    timeout -k 2 20 "$PY" - "$RR_BIN" "$R_URL" "$1" >"$TMP/pty.out" 2>&1 <<'PY'
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
def drain(sec):
    global out
    end = time.time() + sec
    while time.time() < end:
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
else:
    drain(0.5)
    line = "%s -t 10s -r %s tty-%s -- sh -c 'read x; echo got:$x'%s\n" % (
        rr, url, mode, " &" if mode == "background" else "")
    send(line.encode())
    drain(1.0)
    if mode == "ctrlz":
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
assert_key_gone R "$(k_lock tty-ctrlz)"

t "a command reading the terminal from a backgrounded redlock-run stops the job; fg continues it"
pty_run background
o=$(cat "$TMP/pty.out")
assert_contains "$o" "the command was stopped by SIGTTIN" "our message"
assert_contains "$o" "Stopped" "bash's job table"
assert_contains "$o" "got:hello" "the command's output after fg"
assert_contains "$o" "RC=0" "exit status"
assert_key_gone R "$(k_lock tty-background)"

done_testing
