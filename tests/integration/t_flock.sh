#!/usr/bin/env bash
# t_flock.sh — flock(1)'s lines, as the README's "Coming from flock" table
# writes them, run through sh against a real redis-server: each beside the
# real flock on a lock file, where flock is installed, so that the statuses
# can be compared (flock's busy 1 is our 75, or 1 with -E 1). -n is taken,
# -n with -w is 64, NAME -c CMD is sh -c CMD, and the two forms of a script
# (the ( flock -n 9 ... ) 9>FILE block, and a script that locks itself).
# shellcheck disable=SC2016  # the lines are run by sh, which expands them
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

start_redis F || { t "start redis"; fail "cannot start redis-server"; done_testing; exit 1; }
export REDLOCK_URL=$F_URL
# The lines say "redlock-run", as a crontab would.
mkdir -p "$TMP/bin"
ln -s "$RR_BIN" "$TMP/bin/redlock-run"
export PATH="$TMP/bin:$PATH"
LK=$TMP/x.lock       # flock's lock file; the same string is the lock's NAME
LOG=$TMP/log
export LK LOG TMP
FLOCK=$(command -v flock || :)
[ -n "$FLOCK" ] || note "flock is not installed: the lines run with redlock-run only"

# line TEXT — run TEXT with sh, bounded; RC, $OUT, $ERR as for rr.
line() { run_limited sh -c "$1"; }

# hold TOOL — take the lock with TOOL (flock on $LK, or redlock-run on NAME
# $LK) and keep it until unhold.
hold() {
    rm -f "$TMP/held" "$TMP/release"
    bg "$TMP/holder" "$1" "$LK" sh -c \
        'touch "$1"; while [ ! -e "$2" ]; do sleep 0.05; done' sh "$TMP/held" "$TMP/release"
    HOLDER=$BG
    wait_for 10 file_there "$TMP/held" || fail "the holder ($1) did not start"
}
unhold() {
    touch "$TMP/release"
    wait_pid "$HOLDER" 10
    assert_eq "0 0" "$HUNG $RC" "the holder's hang and status"
}

# each TOOL... — the tools to compare: flock where installed, redlock-run.
tools() { [ -n "$FLOCK" ] && echo flock; echo redlock-run; }

t "the crontab line: TOOL -n FILE cmd runs the command, its status passed on"
for tool in $(tools); do
    rm -f "$LOG"
    line "$tool -n \"\$LK\" sh -c 'echo ran >> \"\$LOG\"; exit 3'"
    assert_rc 3 "$tool -n, free"
    assert_eq 1 "$(count_lines "$LOG")" "$tool: times the command ran"
done
assert_key_gone F "$(k_lock "$LK")"
assert_hash F "$(k_state "$LK")" status failed
end_test

t "the crontab line while the lock is held: flock's 1, our 75, 1 with -E 1; -q says nothing"
for tool in $(tools); do
    hold "$tool"
    rm -f "$LOG"
    line "$tool -n \"\$LK\" sh -c 'echo ran >> \"\$LOG\"'"
    if [ "$tool" = flock ]; then
        assert_rc 1 "flock -n, busy"
    else
        assert_rc 75 "redlock-run -n, busy"
        line "redlock-run -n -E 1 \"\$LK\" sh -c 'echo ran >> \"\$LOG\"'"
        assert_rc 1 "redlock-run -n -E 1, busy"
        line "redlock-run -q -n -E 1 \"\$LK\" sh -c 'echo ran >> \"\$LOG\"'"
        assert_rc 1 "redlock-run -q -n -E 1, busy"
        assert_eq "" "$(cat "$OUT" "$ERR")" "what -q prints for a busy lock (cron mails it)"
    fi
    assert_eq 0 "$(count_lines "$LOG")" "$tool: times the command ran while busy"
    unhold
done
end_test

t "-w N: gives up after N seconds, or runs once the holder lets go within them"
for tool in $(tools); do
    want=1; [ "$tool" = redlock-run ] && want=75
    hold "$tool"
    line "$tool -w 1 \"\$LK\" true"
    assert_rc "$want" "$tool -w 1, held throughout"
    [ "$ELAPSED_MS" -ge 900 ] || fail "$tool -w 1 gave up after $ELAPSED_MS ms"
    # Let go half a second into a 10 s wait.
    (sleep 0.5; touch "$TMP/release") &
    line "$tool -w 10 \"\$LK\" sh -c 'echo ran >> \"\$LOG\"'"
    assert_rc 0 "$tool -w 10, released after 0.5 s"
    wait_pid "$HOLDER" 10
done
end_test

t "flock's plain FILE cmd waits for ever: -w inf here"
for tool in $(tools); do
    hold "$tool"
    (sleep 0.5; touch "$TMP/release") &
    if [ "$tool" = flock ]; then
        line "flock \"\$LK\" true"
    else
        line "redlock-run -w inf \"\$LK\" true"
    fi
    assert_rc 0 "$tool, waiting for the holder"
    [ "$ELAPSED_MS" -ge 400 ] || fail "$tool did not wait ($ELAPSED_MS ms)"
    wait_pid "$HOLDER" 10
done
end_test

t "-n with -w, in either order: 64, one line, nothing run, nothing in Redis"
R F FLUSHALL >/dev/null
rm -f "$LOG"
for l in 'redlock-run -n -w 5 "$LK" sh -c "echo ran >> \"\$LOG\""' \
         'redlock-run -w 5 --nonblock "$LK" sh -c "echo ran >> \"\$LOG\""' \
         'redlock-run -nw0 "$LK" sh -c "echo ran >> \"\$LOG\""'; do
    line "$l"
    assert_rc 64 "$l"
    assert_eq 1 "$(grep -c '' "$ERR")" "stderr lines of $l"
    assert_contains "$(cat "$ERR")" "-n/--nonblock and -w/--wait cannot be used together"
done
assert_eq 0 "$(count_lines "$LOG")" "times the command ran"
assert_eq 0 "$(R F DBSIZE)" "keys in Redis"
end_test

t "FILE -c 'CMD': sh -c CMD, as flock runs it; one word only, as in flock"
for tool in $(tools); do
    # flock runs $SHELL; ours is sh from PATH (the same under cron).
    SHELL=/bin/sh line "X=exported; export X; $tool \"\$LK\" -c 'echo \"a \$X\" && echo b; exit 4'"
    assert_rc 4 "$tool FILE -c"
    assert_eq "$(printf 'a exported\nb')" "$(cat "$OUT")" "$tool FILE -c: output"
    line "$tool \"\$LK\" -c 'echo \"\$1\"' one"
    assert_rc 64 "$tool FILE -c CMD ARG"
done
assert_contains "$(cat "$ERR")" "NAME -- sh -c 'CMD' sh ARG1 ARG2" "the hint"
# The hint's form, and the long spellings.
line 'redlock-run "$LK" -- sh -c '"'"'echo "$1"'"'"' sh one'
assert_rc 0 "the hint's form"
assert_eq one "$(cat "$OUT")" "the hint's form: output"
line 'redlock-run "$LK" --command "echo long"'
assert_rc 0 "--command CMD"
assert_eq long "$(cat "$OUT")" "--command CMD: output"
line 'redlock-run -c "echo before" "$LK"'
assert_rc 0 "-c CMD before NAME"
assert_eq before "$(cat "$OUT")" "-c CMD before NAME: output"
hold redlock-run
line 'redlock-run -E 1 "$LK" -c "echo ran"'
assert_rc 1 "FILE -c while busy, -E 1"
assert_eq "" "$(cat "$OUT")" "output while busy"
unhold
end_test

# The fd form: a block of a script under the lock; a second copy started
# while the first holds it leaves at once with 1.
cat >"$TMP/fd-flock.sh" <<'EOF'
#!/bin/sh
(
    flock -n 9 || exit 1
    echo "$1" >> "$LOG"
    touch "$TMP/held"; while [ ! -e "$TMP/release" ]; do sleep 0.05; done
) 9>"$LK"
EOF
cat >"$TMP/fd-redlock.sh" <<'EOF'
#!/bin/sh
ARG=$1; export ARG
redlock-run -E 1 x -c '
    echo "$ARG" >> "$LOG"
    touch "$TMP/held"; while [ ! -e "$TMP/release" ]; do sleep 0.05; done
' || exit 1
EOF
chmod +x "$TMP/fd-flock.sh" "$TMP/fd-redlock.sh"

t "the fd form ( flock -n 9 || exit 1; ... ) 9>FILE, and its redlock-run form"
forms=("$TMP/fd-redlock.sh")
[ -n "$FLOCK" ] && forms=("$TMP/fd-flock.sh" "${forms[@]}")
for s in "${forms[@]}"; do
    rm -f "$LOG" "$TMP/held" "$TMP/release"
    bg "$TMP/first" "$s" first; first=$BG
    wait_for 10 file_there "$TMP/held" || fail "$(basename "$s"): the first copy did not start"
    run_limited "$s" second
    assert_rc 1 "$(basename "$s"): the second copy, while the first holds the lock"
    touch "$TMP/release"
    wait_pid "$first" 10
    assert_eq "0 0" "$HUNG $RC" "$(basename "$s"): the first copy's hang and status"
    assert_eq first "$(cat "$LOG")" "$(basename "$s"): what ran"
    rm -f "$TMP/held" "$TMP/release"
    (sleep 0.3; touch "$TMP/release") &
    run_limited "$s" third
    assert_rc 0 "$(basename "$s"): a copy once the lock is free"
done
assert_key_gone F "$(k_lock x)"
end_test

t "a script that locks itself whole: [ \"\$REDLOCK_NAME\" = NAME ] || exec redlock-run ... -- \"\$0\" \"\$@\""
cat >"$TMP/self.sh" <<'EOF'
#!/bin/sh
[ "$REDLOCK_NAME" = selfjob ] || exec redlock-run -E 1 selfjob -- "$0" "$@"
echo "$1 $2" >> "$LOG"
touch "$TMP/held"; while [ ! -e "$TMP/release" ]; do sleep 0.05; done
EOF
chmod +x "$TMP/self.sh"
rm -f "$LOG" "$TMP/held" "$TMP/release"
bg "$TMP/self1" "$TMP/self.sh" first 'two words'; first=$BG
wait_for 10 file_there "$TMP/held" || fail "the first copy did not start"
run_limited "$TMP/self.sh" second x
assert_rc 1 "the second copy"
touch "$TMP/release"
wait_pid "$first" 10
assert_eq "0 0" "$HUNG $RC" "the first copy's hang and status"
assert_eq "first two words" "$(cat "$LOG")" "what ran, with its arguments"
assert_key_gone F "$(k_lock selfjob)"
end_test

t "flock's other letters: 64, one line that says what to write instead"
R F FLUSHALL >/dev/null
for pair in "-xn|the lock is always exclusive" "-e|the lock is always exclusive" \
            "-o|COMMAND never holds the lock" "-F|COMMAND always runs as a child" \
            "-s|there are no shared locks"; do
    opt=${pair%%|*} want=${pair#*|}
    line "redlock-run $opt \"\$LK\" true"
    assert_rc 64 "redlock-run $opt"
    assert_eq 1 "$(grep -c '' "$ERR")" "stderr lines of $opt"
    assert_contains "$(cat "$ERR")" "$want" "$opt"
done
line 'redlock-run -u 9'
assert_rc 64 "redlock-run -u 9"
assert_contains "$(cat "$ERR")" "there is no descriptor to unlock"
assert_eq 0 "$(R F DBSIZE)" "keys in Redis"
end_test

done_testing
