#!/usr/bin/env bash
# t_escape.sh — nothing the command starts outlives redlock-run's death or
# its guard's: issue 17's table, one case per row, each tried ROUNDS times.
# "Escaped" = the helper the command left still runs while a second run
# holds the lock (which it can take only once the first lease is gone).
#
# With 7c42a99's binary (the 25 ms walk and the environment marks), the
# last row fails every round (the guard's death went unnoticed: the helper
# ran on beside the next holder, and the run never said 79). The first three
# did not escape it on a busy 2-core host in 12 rounds each: there the exec
# chain of `setsid [env -i] sleep` outlasted a walk period, so the walk found
# the helper before the kill; the rows stay as regression tests of the
# arrangement that makes any such timing irrelevant.
#
# The command's $PPID is the guard (redlock-run -> redlock-guard -> command);
# with the binary before that arrangement it was redlock-run itself. The
# scripts below find redlock-run either way.
# run.sh: alone (the pid-wrap case moves the system's pid counter; kill -9 timing)
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

start_redis S
U=$S_URL
# The first run's lease: short, so that the second run gets the lock soon.
# Under valgrind the spawn alone can take seconds on a busy host: a longer
# lease, and one round (each waits for it to expire).
TTL=1s ROUNDS=${RR_CONTAIN_ROUNDS:-4}
if [ "${RR_VALGRIND:-0}" = 1 ]; then TTL=15s ROUNDS=${RR_CONTAIN_ROUNDS:-1}; fi

# Run inside the command: P = redlock-run's pid, G = the guard's.
FIND='p=$PPID; g=
if [ "$(cat /proc/$p/comm)" = redlock-guard ]; then g=$p; p=$(cut -d" " -f4 /proc/$p/stat)
else for c in $(cat /proc/$p/task/$p/children); do
    [ "$(cat /proc/$c/comm 2>/dev/null)" = redlock-guard ] && g=$c; done; fi'

# The containment modes to try: tree always; cgroup where the binary has
# --contain and a cgroup can be made.
MODES=(tree)
if "$RR_BIN" --help 2>&1 | grep -q -- '--contain'; then
    if "$RR_BIN" --contain cgroup -r "$U" -t 5s probe-cg -- true 2>/dev/null; then
        MODES+=(cgroup)
    else
        note "no cgroup could be made here: cgroup mode not tried"
    fi
fi
mode_args() {
    if "$RR_BIN" --help 2>&1 | grep -q -- '--contain'; then echo "--contain $1"; fi
}

# stat_start LINE: the start time (field 22) in a line of /proc/PID/stat.
stat_start() {
    local s=${1##*) }
    # shellcheck disable=SC2086  # the fields after the name
    set -- $s
    echo "${20:-}"
}

# escaped NAME HPID [STATFILE]: a second run takes the lock and looks at
# HPID. STATFILE, the helper's /proc/PID/stat line as its command saw it,
# tells the helper from a process that got its pid since (the pid counter
# wraps here): only the helper counts, and only the helper is killed.
escaped() {
    local st line want=
    [ -n "${3:-}" ] && read -r line <"$3" 2>/dev/null && want=$(stat_start "$line")
    rm -f "$TMP/$1.seen"
    rr_direct -r "$U" -t 5s --wait 30s "$1" -- \
        sh -c 'cat "/proc/$1/stat" > "$2" 2>/dev/null; exit 0' sh "$2" "$TMP/$1.seen"
    [ "$RC" = 0 ] || { fail "the second run did not get the lock (exit $RC)"; return 1; }
    line=$(cat "$TMP/$1.seen" 2>/dev/null)
    st=$(awk '{ print $3 }' <<<"$line")
    if [ -n "$want" ] && [ -n "$line" ] && [ "$(stat_start "$line")" != "$want" ]; then
        return 1   # the helper is gone; its pid is another process's now
    fi
    if [ -z "$want" ] || { start_time "$2" && [ "$START" = "$want" ]; }; then
        kill -KILL "$2" 2>/dev/null
    fi
    [ -n "$st" ] && [ "$st" != Z ] && note "helper $2 still runs: $line"
}

# show_tree PID: PID and each of its descendants, one line each (pid, ppid,
# state, kernel wait channel, name), with the kernel stack where it can be
# read: what a run that hangs is waiting for.
show_tree() {
    local todo=$1 p c
    while [ -n "$todo" ]; do
        p=${todo%% *}
        case $todo in *" "*) todo=${todo#* } ;; *) todo= ;; esac
        [ -r "/proc/$p/stat" ] || continue
        echo "#   $(cut -d' ' -f1-4 "/proc/$p/stat") wchan=$(cat "/proc/$p/wchan" 2>/dev/null)"
        sed 's/^/#       /' "/proc/$p/stack" 2>/dev/null | head -12
        for c in $(cat /proc/"$p"/task/*/children 2>/dev/null); do todo="$todo $c"; done
        todo=${todo# }
    done
}

# kill9_case NAME MODE PRE HELPER [POST]: the command starts HELPER in the
# background (PRE first, POST after, in the command), then kill -9 of
# redlock-run as soon as the helper runs sleep (waited for with builtins
# only: a fork would have let the old guard's walk see it). The command
# notes each step in NAME.h.steps (echo: a builtin, no fork).
kill9_case() {
    local name=$1 mode=$2 pre=$3 helper=$4 post=${5:-:} i w h esc=0
    local -a env_pre=()
    [ -n "${BIGENV:-}" ] && env_pre=(env "BIG1=$BIGENV" "BIG2=$BIGENV")
    for i in $(seq "$ROUNDS"); do
        rm -f "$TMP/$name.h" "$TMP/$name.h.steps" "$TMP/$name.h.stat"
        # shellcheck disable=SC2046
        bg "$TMP/$name" "${env_pre[@]}" "${RR[@]}" $(mode_args "$mode") -r "$U" -t "$TTL" \
            --kill-after 200ms "$name" -- sh -c "echo started >> \"\$1.steps\"
            $FIND
            echo found >> \"\$1.steps\"
            $pre
            echo pre >> \"\$1.steps\"
            ( $helper & echo \$! > \"\$1\" ); read -r h < \"\$1\"
            while read -r c < /proc/\$h/comm && [ \"\$c\" != sleep ]; do :; done
            read -r st < /proc/\$h/stat; echo \"\$st\" > \"\$1.stat\"
            $post
            kill -9 \$p; sleep 30" sh "$TMP/$name.h"
        w=$BG
        wait_pid "$w" 30
        nap 0.05
        h=$(cat "$TMP/$name.h" 2>/dev/null)
        if [ -z "$h" ]; then
            fail "round $i: the command did not start its helper"
            # What the first run said, how far its command got, and what
            # of its tree still runs, waiting for what.
            sed 's/^/#   first run: /' "$TMP/$name.err" | tail -5
            echo "#   the command's steps: $(tr '\n' ' ' < "$TMP/$name.h.steps" 2>/dev/null)"
            pid_gone "$w" || show_tree "$w"
            return
        fi
        if escaped "$name" "$h" "$TMP/$name.h.stat"; then esc=$((esc + 1)); fi
    done
    [ "$esc" = 0 ] || fail "$esc of $ROUNDS helpers escaped"
}

# helper_run NAME MODE: a run of NAME whose command leaves ( setsid sleep 30
# & ) and sleeps; sets w (the run's pid), rp, gp, hp (redlock-run's, the
# guard's and the helper's pids). Non-zero, with HELPER_WHY, if it did not
# get that far.
# pid_reaped PID: no process PID at all (not even a zombie), or another's.
pid_reaped() { ! still_ours "$1" || [ ! -e "/proc/$1" ]; }

helper_run() {
    local name=$1 mode=$2
    rm -f "$TMP/$name.h" "$TMP/$name.h.stat"
    # shellcheck disable=SC2046
    bg "$TMP/$name" "${RR[@]}" $(mode_args "$mode") -r "$U" -t "$TTL" --kill-after 200ms \
        "$name" -- sh -c "$FIND
        ( setsid sleep 30 & echo \$! > \"\$1.tmp\" )
        read -r h < \"\$1.tmp\"; read -r st < /proc/\$h/stat; echo \"\$st\" > \"\$1.stat\"
        echo \"\$p \$g \$(cat \"\$1.tmp\")\" > \"\$1.tmp2\"; mv \"\$1.tmp2\" \"\$1\"
        sleep 30" sh "$TMP/$name.h"
    w=$BG
    wait_for 30 test -s "$TMP/$name.h" || { HELPER_WHY="the command did not start"; return 1; }
    read -r rp gp hp < "$TMP/$name.h"
    [ -n "$gp" ] || { HELPER_WHY="no guard found"; return 1; }
}

NS_LAST=/proc/sys/kernel/ns_last_pid
for mode in "${MODES[@]}"; do
    t "$mode: ( setsid sleep 30 & ) with the pid counter wrapping, then kill -9 of redlock-run"
    if [ -w "$NS_LAST" ]; then
        saved=$(cat "$NS_LAST")
        # The subshell and the helper take the last pids before pid_max;
        # the four forks after them wrap the counter.
        kill9_case "wrap-$mode" "$mode" \
            'echo $(( $(cat /proc/sys/kernel/pid_max) - 4 )) > /proc/sys/kernel/ns_last_pid' \
            'setsid sleep 30' '/bin/true; /bin/true; /bin/true; /bin/true'
        echo "$saved" > "$NS_LAST"
    else
        note "$NS_LAST is not writable (not root): the wrap-around is not forced"
        kill9_case "wrap-$mode" "$mode" ':' 'setsid sleep 30'
    fi
    end_test

    t "$mode: the same from a command with a 2 x 70 KB inherited environment"
    BIGENV=$(printf '%070000d' 0)
    kill9_case "bigenv-$mode" "$mode" ':' 'setsid sleep 30'
    BIGENV=
    end_test

    t "$mode: ( setsid env -i sleep 30 & ), then kill -9 of redlock-run"
    kill9_case "envi-$mode" "$mode" ':' 'setsid env -i sleep 30'
    end_test

    t "$mode: pkill -9 -f 'redlock-run.*NAME' (the usual way to kill a stuck job): the guard is not matched, and nothing outlives the lease"
    # Before the guard was a process of its own, it shared redlock-run's
    # command line: this pkill killed both, and the helper ran on beside
    # the next holder (9 of 12 trials).
    name=pkill-$mode
    esc=0
    for i in $(seq "$ROUNDS"); do
        helper_run "$name" "$mode" || { fail "round $i: $HELPER_WHY"; break; }
        # What operators type matches redlock-run and never its guard.
        matched=" $(pgrep -d ' ' -f "redlock-run.*$name") "
        [[ $matched == *" $rp "* ]] || fail "round $i: pgrep -f does not find redlock-run ($rp) in:$matched"
        [[ $matched != *" $gp "* ]] || fail "round $i: pgrep -f 'redlock-run.*$name' matches the guard ($gp)"
        byname=" $(pgrep -d ' ' -x redlock-run) "
        [[ $byname != *" $gp "* ]] || fail "round $i: pgrep -x redlock-run (pkill's, killall's way) matches the guard"
        [ "$(cat "/proc/$gp/cmdline" | tr '\0' ' ' | sed 's/ *$//')" = redlock-guard ] ||
            fail "round $i: the guard's command line is not 'redlock-guard'"
        pkill -9 -f "redlock-run.*$name"
        { wait_pid "$w" 30; } 2>/dev/null   # (bash's "Killed" line)
        if escaped "$name" "$hp" "$TMP/$name.h.stat"; then esc=$((esc + 1)); fi
    done
    [ "$esc" = 0 ] || fail "$esc of $ROUNDS helpers escaped"
    end_test

    t "$mode: kill -9 of the guard, then SIGSTOP of redlock-run: the command and its helper stop"
    name=guard-$mode
    esc=0
    for i in $(seq "$ROUNDS"); do
        helper_run "$name" "$mode" || { fail "round $i: $HELPER_WHY"; break; }
        kill -KILL "$gp"
        # The stop comes once redlock-run has reaped the dead guard, as in
        # the issue's report: it reaps it after it has forked the guard's
        # successor, which acts whatever becomes of redlock-run. (Stopped
        # before that, nothing acts until it is continued: ARCHITECTURE's
        # row "G dies while R is stopped".)
        wait_for 3 pid_reaped "$gp"
        # Often gone already (it noticed at once): then its pid is not ours.
        still_ours "$rp" && kill -STOP "$rp" 2>/dev/null
        if escaped "$name" "$hp" "$TMP/$name.h.stat"; then esc=$((esc + 1)); fi
        still_ours "$rp" && kill -CONT "$rp" 2>/dev/null
        wait_pid "$w" 30
        if [ "$HUNG" = 1 ] || [ "$RC" != 79 ]; then
            fail "round $i: redlock-run ended with $RC (hung: $HUNG), not 79"
        fi
        assert_contains "$(cat "$TMP/$name.err")" "the guard (pid $gp) died: the lease could no longer be enforced; the command was stopped"
    done
    [ "$esc" = 0 ] || fail "$esc of $ROUNDS helpers escaped"
    end_test
done

done_testing
