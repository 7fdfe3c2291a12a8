#!/usr/bin/env bash
# t_audit.sh — what an operator sees: every run's outcome in syslog (a
# socket the test binds stands in for /dev/log), whatever -q does to stderr;
# a waiter says what it waits for, then how long it waited.
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
end = time.time() + 120
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

t "--syslog -q: a failed run reaches syslog at warning, stderr stays silent"
rr -q --syslog -r "$U" aud1 -- sh -c 'exit 3'
assert_rc 3
assert_eq "$(cat "$ERR")" "" "stderr with -q"
wait_for 3 logged '<12>.*redlock-run\[[0-9]*\]: aud1: run failed (exit 3)' ||
    fail "no warning for the failed run in syslog: $(tail -3 "$TMP/syslog.txt")"
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
rr -r "$U" --release aud3
wait_pid "$w" 5
assert_rc 79
wait_for 3 logged '<13>.*aud3: not running: lock is held' || fail "no notice for the busy run"
wait_for 3 logged '<11>.*aud3: run lost' || fail "no error for the lost run: $(tail -3 "$TMP/syslog.txt")"
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
bg "$TMP/hold3" "$RR_BIN" -r "$U" aud5 -- sleep 1
w=$BG
wait_for 5 key_there S "$(k_lock aud5)" || fail "the holder did not start"
rr -q -r "$U" -w inf aud5 -- true
assert_rc 0
assert_eq "$(cat "$ERR")" "" "stderr with -q"
wait_pid "$w" 5
end_test

t "--log-format json: the released event carries exit_code and signal"
rr -v --log-format json -r "$U" aud6 -- sh -c 'kill -TERM $$'
assert_rc 143
line=$(grep '"event":"released"' "$ERR")
assert_contains "$line" '"exit_code":-1'
assert_contains "$line" '"signal":15'
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
echo "$st" | grep -Eq '^  .*  released +- .* by [^ ]+:[0-9]+$' || fail "no 'by HOST:PID' on the forced release: $st"
echo "$st" | grep -Eq '^  .*  lost +signal 9 ' || fail "no 'lost signal 9' row: $st"
end_test

done_testing
