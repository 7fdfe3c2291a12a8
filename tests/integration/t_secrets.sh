#!/usr/bin/env bash
# t_secrets.sh — the password is not in what the command can read of its
# parents: their /proc/PID/environ and cmdline show it nowhere, and they
# are not dumpable, so an unprivileged command cannot read their environ
# (nor mem, nor ptrace them). Issue 30: `tr "\0" "\n" </proc/$PPID/environ`
# printed REDLOCK_PASSWORD=… from the command, also as another user.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

PW=s3cret-$RANDOM-pw
start_redis S --requirepass "$PW"
U=redis://127.0.0.1:$S_PORT

# Inside the command: the guard's environ and cmdline ($PPID), then
# redlock-run's (the guard's parent), into FILE.
LOOK='g=$PPID; r=$(cut -d" " -f4 /proc/$g/stat)
for p in $g $r; do
    tr "\0" "\n" < /proc/$p/environ; echo "rc=$?"
    tr "\0" "\n" < /proc/$p/cmdline; echo
done > "$1" 2>&1'

t "REDLOCK_PASSWORD and a URL's password are not in the environ or cmdline of redlock-run or its guard"
REDLOCK_PASSWORD=$PW REDLOCK_SENTINEL_PASSWORD=$PW-s run_limited "$RR_BIN" -r "$U" envpw -- sh -c "$LOOK" sh "$TMP/seen1"
assert_rc 0
assert_contains "$(cat "$TMP/seen1")" "REDLOCK_PASSWORD="
assert_not_contains "$(cat "$TMP/seen1")" "$PW"
run_limited env REDLOCK_URL="redis://:$PW@127.0.0.1:$S_PORT" "$RR_BIN" urlpw -- sh -c "$LOOK" sh "$TMP/seen2"
assert_rc 0
assert_not_contains "$(cat "$TMP/seen2")" "$PW"
run_limited "$RR_BIN" -r "redis://:$PW@127.0.0.1:$S_PORT" argpw -- sh -c "$LOOK" sh "$TMP/seen3"
assert_rc 0
assert_not_contains "$(cat "$TMP/seen3")" "$PW"
end_test

t "an unprivileged command cannot read the environ of its parents (not dumpable)"
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null 2>&1 || ! id nobody >/dev/null 2>&1; then
    note "skip: needs root, setpriv and the user nobody"
else
    chmod 755 "$TMP"
    run_limited setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups \
        env REDLOCK_PASSWORD="$PW" "$RR_BIN" --contain tree -r "$U" nobodypw -- \
        sh -c 'for p in $PPID $(cut -d" " -f4 /proc/$PPID/stat); do
                   cat /proc/$p/environ >/dev/null 2>&1 && echo "read $p"; done; exit 0'
    assert_rc 0
    assert_not_contains "$(cat "$OUT")" "read "
fi
end_test

t "a password shorter than 4 bytes: the run works, and says (under -q too) that it is short"
start_redis SP --requirepass e
run_limited env REDLOCK_PASSWORD=e "$RR_BIN" -q -r "redis://127.0.0.1:$SP_PORT" shortpw -- true
assert_rc 0
assert_contains "$(cat "$ERR")" "a password is shorter than 4 bytes"
assert_eq 1 "$(wc -l < "$ERR")" "lines on stderr"
end_test

done_testing
