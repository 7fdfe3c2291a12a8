#!/usr/bin/env bash
# t_audit.sh — what an operator sees: every run's outcome in syslog (a
# socket the test binds stands in for /dev/log), whatever -q does to stderr;
# under -q, exactly one line on stderr (cron's mail) for every run that went
# wrong and none for one that did not; a waiter says what it waits for, then
# how long it waited.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

start_redis S
U=$S_URL

# A syslog stand-in: every datagram on $TMP/log.sock, one per line.
"$PY" - "$TMP/log.sock" "$TMP/syslog.txt" <<'EOF2' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(0.2)
end = time.time() + 300
with open(sys.argv[2], "a") as out:
    while time.time() < end:
        try:
            d = s.recv(8192)
        except socket.timeout:
            continue
        out.write(d.decode("utf-8", "replace").replace("\n", " ") + "\n")
        out.flush()
EOF2
track_pid $!
wait_for 5 test -S "$TMP/log.sock" || fail "no syslog stand-in"
export REDLOCK_SYSLOG_SOCKET=$TMP/log.sock
logged() { grep -q -- "$1" "$TMP/syslog.txt" 2>/dev/null; }

# Under -q: exactly one line on stderr, the run's outcome.
one_line() {
    assert_eq 1 "$(grep -c '' "$ERR")" "lines on stderr with -q ($(head -c 300 "$ERR"))"
}

t "-q --syslog: a failed run prints one line (cron mails it), and syslog has it at warning"
rr -q --syslog -r "$U" aud1 -- false
assert_rc 1
one_line
assert_contains "$(cat "$ERR")" "aud1: run failed (exit 1)"
wait_for 3 logged '<12>.*redlock-run\[[0-9]*\]: aud1: run failed (exit 1)' ||
    fail "no warning for the failed run in syslog: $(tail -3 "$TMP/syslog.txt")"
end_test

t "-q --syslog: a command killed by SIGKILL: one line, exit 137, in syslog too"
rr -q --syslog -r "$U" aud1k -- sh -c 'kill -KILL $$'
assert_rc 137
one_line
assert_contains "$(cat "$ERR")" "aud1k: run failed (signal 9)"
wait_for 3 logged '<12>.*aud1k: run failed (signal 9)' ||
    fail "no warning for the killed run in syslog: $(tail -3 "$TMP/syslog.txt")"
end_test

t "-q --syslog: a timed-out run prints one line, 124; syslog has the timeout and the outcome"
rr -q --syslog -r "$U" --max-runtime 200ms aud1t -- sleep 30
assert_rc 124
one_line
assert_contains "$(cat "$ERR")" "aud1t: run timeout (signal 15)"
wait_for 3 logged '<11>.*aud1t: run timeout (signal 15)' ||
    fail "no error for the timed-out run in syslog: $(tail -3 "$TMP/syslog.txt")"
logged '<11>.*aud1t: command ran longer than --max-runtime' ||
    fail "syslog lost the timeout line under -q: $(tail -3 "$TMP/syslog.txt")"
end_test

t "-q --syslog: a command that cannot be executed: one line, 127, in syslog too"
rr -q --syslog -r "$U" aud1x -- "$TMP/no-such-command"
assert_rc 127
one_line
wait_for 3 logged "<11>.*aud1x: cannot run" || fail "not in syslog: $(tail -3 "$TMP/syslog.txt")"
end_test

t "-q --syslog: Redis unavailable (69) and a refused configuration (78): one line each"
dead=$(free_port)
rr -q --syslog -r "redis://127.0.0.1:$dead" aud1u -- true
assert_rc 69
one_line
wait_for 3 logged "<11>.*aud1u: cannot take the lock" || fail "69 not in syslog"
rr -q --syslog -r "$U/99" aud1c -- true
assert_rc 78
one_line
wait_for 3 logged "<11>.*aud1c: cannot take the lock" || fail "78 not in syslog"
end_test

t "-q --syslog: a stale refusal (65): one line, in syslog too"
bg "$TMP/stale" "$RR_BIN" -r "$U" -t 1s --once s1 aud1s -- sh -c 'touch "$1"; sleep 30' sh "$TMP/stale.started"
w=$BG
wait_for 10 file_there "$TMP/stale.started" || fail "the run to abandon did not start"
kill_wait KILL "$w" 5
wait_for 5 key_gone S "$(k_lock aud1s)" || fail "the lease did not expire"
rr -q --syslog -r "$U" --once s1 aud1s -- true
assert_rc 65
one_line
wait_for 3 logged "<11>.*aud1s: not running: --once s1 has used 1 of 1 attempt" || fail "65 not in syslog"
end_test

t "-q: a succeeded, a busy and a skipped run print nothing"
rr -q -r "$U" --once q1 aud1q -- true
assert_rc 0
assert_eq "" "$(cat "$ERR")" "stderr of a success"
rr -q -r "$U" --once q1 aud1q -- true
assert_rc 0
assert_eq "" "$(cat "$ERR")" "stderr of a skipped run"
end_test

t "-q --syslog: --metrics-file in a missing directory: one error line, in syslog; the run's status stands"
# One command throughout (its exit status from C): a changed command
# would be warned about under -q too (issue 34, 6).
rr -q --syslog -r "$U" --metrics-file "$TMP/no-such-dir/m.prom" aud1m -- sh -c 'exit ${C:-0}'
assert_rc 0
one_line
assert_contains "$(cat "$ERR")" "cannot write --metrics-file $TMP/no-such-dir/m.prom: No such file or directory; create the directory $TMP/no-such-dir"
wait_for 3 logged "<11>.*aud1m: cannot write --metrics-file" || fail "not in syslog: $(tail -3 "$TMP/syslog.txt")"
export C=3
rr -q -r "$U" --metrics-file "$TMP/no-such-dir/m.prom" aud1m -- sh -c 'exit ${C:-0}'
unset C
assert_rc 3
assert_eq 2 "$(grep -c '' "$ERR")" "lines: the failed run and the metrics error"
# A file too large to be ours is never overwritten (what we could not read would be lost).
head -c 5000000 /dev/zero | tr '\0' x >"$TMP/big.prom"
rr -q -r "$U" --metrics-file "$TMP/big.prom" aud1m -- sh -c 'exit ${C:-0}'
assert_rc 0
one_line
assert_contains "$(cat "$ERR")" "cannot write --metrics-file $TMP/big.prom: it is over 4 MiB"
assert_eq 5000000 "$(stat -c %s "$TMP/big.prom")" "size of the file not ours"
end_test

t "--metrics-file not ending in .prom: a warning at start (the textfile collector would not read it)"
rr -r "$U" --metrics-file "$TMP/m.txt" aud1w -- true
assert_rc 0
assert_contains "$(cat "$ERR")" "--metrics-file $TMP/m.txt: the node_exporter textfile collector reads only files ending in .prom"
[ -s "$TMP/m.txt" ] || fail "the metrics were not written all the same"
rr -r "$U" --metrics-file "$TMP/m.prom" aud1w -- true
assert_eq "" "$(cat "$ERR")" "stderr with a .prom name"
# Under -q too, and for --list --metrics-file (issue 34, 7; silent before).
rr -r "$U" -q --metrics-file "$TMP/m.txt" aud1w -- true
assert_contains "$(cat "$ERR")" "--metrics-file $TMP/m.txt: the node_exporter textfile collector reads only files ending in .prom" "-q"
rr -r "$U" -q --list --metrics-file "$TMP/jobs.txt"
assert_rc 0 "--list --metrics-file"
assert_contains "$(cat "$ERR")" "--metrics-file $TMP/jobs.txt: the node_exporter textfile collector reads only" "--list -q"
end_test

t "--syslog -q: a succeeded run reaches syslog at info, with host, pid and fence"
rr -q --syslog -r "$U" aud2 -- true
assert_rc 0
wait_for 3 logged "<14>.*aud2: run succeeded (exit 0) after .*, fence [0-9]*, on $(hostname) pid" ||
    fail "no info line for the run in syslog: $(tail -3 "$TMP/syslog.txt")"
end_test

t "--syslog: a lost run is an error, a busy one a notice"
bg "$TMP/hold" "$RR_BIN" -q --syslog -r "$U" -t 3s aud3 -- sleep 30
w=$BG
wait_for 5 key_there S "$(k_lock aud3)" || fail "the holder did not start"
rr -q --syslog -r "$U" aud3 -- true
assert_rc 75
assert_eq "" "$(cat "$ERR")" "stderr of a busy run with -q"
rr -r "$U" --release aud3
wait_pid "$w" 5
assert_rc 79
wait_for 3 logged '<13>.*aud3: not running: lock is held' || fail "no notice for the busy run"
wait_for 3 logged '<11>.*aud3: run lost' || fail "no error for the lost run: $(tail -3 "$TMP/syslog.txt")"
# The lost run under -q: one line, its outcome.
assert_eq 1 "$(grep -c '' "$TMP/hold.err")" "lines of the lost run with -q ($(head -c 300 "$TMP/hold.err"))"
assert_contains "$(cat "$TMP/hold.err")" "aud3: run lost"
end_test

t "a waiter says once what it waits for, and then how long it waited"
bg "$TMP/hold2" "$RR_BIN" -r "$U" aud4 -- sleep 1.5
w=$BG
wait_for 5 key_there S "$(k_lock aud4)" || fail "the holder did not start"
rr -r "$U" -w 30m aud4 -- true
assert_rc 0
assert_contains "$(cat "$ERR")" "waiting up to 30m for aud4: held by $(hostname) pid $w"
assert_contains "$(cat "$ERR")" "got the lock after waiting"
assert_eq "$(grep -c waiting "$ERR")" 2 "lines about waiting"
wait_pid "$w" 5
end_test

t "-q silences the waiter's messages"
# The holder and the waiter run one command (D: how long it sleeps).
bg "$TMP/hold3" env D=1 "$RR_BIN" -r "$U" aud5 -- sh -c 'sleep ${D:-0}'
w=$BG
wait_for 5 key_there S "$(k_lock aud5)" || fail "the holder did not start"
rr -q -r "$U" -w inf aud5 -- sh -c 'sleep ${D:-0}'
assert_rc 0
assert_eq "$(cat "$ERR")" "" "stderr with -q"
wait_pid "$w" 5
end_test

t "--log-format json: the released event: exit_code or signal (never -1), host and pid"
rr -v --log-format json -r "$U" aud6 -- sh -c 'kill -TERM $$'
assert_rc 143
line=$(grep '"event":"released"' "$ERR")
assert_contains "$line" '"signal":15'
assert_not_contains "$line" '"exit_code"'
assert_contains "$line" "\"host\":\"$(hostname)\""
assert_contains "$line" '"pid":'
rr --log-format json -r "$U" aud6 -- sh -c 'exit 3'
assert_rc 3
line=$(grep '"event":"released"' "$ERR")
assert_contains "$line" '"exit_code":3'
assert_not_contains "$line" '"signal"'
# A timed-out run: how the command ended (TERM), not a made-up -1.
rr --log-format json -r "$U" --max-runtime 200ms aud6 -- sleep 30
assert_rc 124
line=$(grep '"event":"released"' "$ERR")
assert_contains "$line" '"status":"timeout"'
assert_contains "$line" '"signal":15'
assert_not_contains "$line" '"exit_code":-1'
"$PY" -c 'import json,sys,os; j=json.loads(sys.argv[1]); assert j["host"] and j["pid"] > 0 and "exit_code" not in j, j' "$line" ||
    fail "not the fields expected: $line"
end_test

t "--status --json with Redis down: a JSON error object on stdout, exit 69"
dead=$(free_port)
rr --status --json -r "redis://127.0.0.1:$dead" aud7
assert_rc 69
"$PY" -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["name"]=="aud7" and j["exit_code"]==69 and "connection refused" in j["error"], j' "$OUT" ||
    fail "not a JSON error object: $(cat "$OUT")"
end_test

if command -v script >/dev/null 2>&1; then
    # Since "tty: an interactive command works without --foreground" the
    # command gets the terminal instead of being stopped by SIGTTIN (the
    # stopped cases are t_tty.sh's): its read sees the end of script(1)'s
    # input, the run ends on its own and says how, and the lock is gone.
    t "a command that reads the terminal gets it without --foreground; its run ends and is reported"
    # script(1) gives the run a terminal, as an operator's shell would.
    script -qec "$RR_BIN -r $U ttyjob -- sh -c 'read x'" /dev/null </dev/null >"$TMP/tty.out" 2>&1 &
    s=$!
    track_pid "$s"
    wait_for 5 grep -q "ttyjob: run failed (exit 1)" "$TMP/tty.out" ||
        fail "the run did not end with the read's exit 1: $(cat "$TMP/tty.out")"
    assert_not_contains "$(cat "$TMP/tty.out")" "SIGTTIN"
    wait_for 5 key_gone S "$(k_lock ttyjob)" || fail "the lock was kept after the run ended"
    end_test
fi

t "--status history rows: how each run ended (exit N or signal N), and who forced a release"
rr -r "$U" hrow -- sh -c 'kill -TERM $$'
bg "$TMP/hr" "$RR_BIN" -r "$U" -t 3s hrow -- sleep 30
w=$BG
wait_for 5 key_there S "$(k_lock hrow)" || fail "the holder did not start"
rr -r "$U" --release hrow
wait_pid "$w" 5
rr -r "$U" --status hrow
st=$(cat "$OUT")
echo "$st" | grep -Eq '^  .*  failed +signal 15 ' || fail "no 'signal 15' row: $st"
echo "$st" | grep -Eq '^  .*  released +- .* by [^ @]+@[^ ]+:[0-9]+$' || fail "no 'by USER@HOST:PID' on the forced release: $st"
echo "$st" | grep -Eq '^  .*  lost +signal 9 ' || fail "no 'lost signal 9' row: $st"
end_test

done_testing
