#!/usr/bin/env bash
# t_contain.sh — --contain: which containment holds the run, and saying so
# (-v, the JSON acquired event, the state record, --status of the holder);
# --contain cgroup refusing with 71, before the lock is asked for, where no
# cgroup can be made (no cgroup2 mounted, a read-only one, no permission).
# The cgroup cases run where this test may make a cgroup (root on a host
# with a writable cgroup2); the refusals need unshare(1) and root.
# shellcheck disable=SC2016  # child commands
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

start_redis S || { t "start redis"; fail "cannot start redis-server"; done_testing; exit 1; }
U=$S_URL

# json_field FILE EVENT KEY — KEY of the first JSON log line of EVENT.
json_field() {
    "$PY" - "$1" "$2" "$3" <<'EOF'
import json, sys
for line in open(sys.argv[1]):
    try:
        j = json.loads(line)
    except ValueError:
        continue
    if j.get("event") == sys.argv[2]:
        v = j.get(sys.argv[3])
        print("null" if v is None else v)
        sys.exit(0)
print("MISSING")
EOF
}

# The cgroup2 mount point, or nothing.
CG2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
can_cgroup=0
if "$RR_BIN" -r "$U" --contain cgroup probe-cg true 2>/dev/null; then can_cgroup=1; fi
note "cgroup2 at ${CG2:-nowhere}; a cgroup can be made here: $can_cgroup"

# kill_pair PID — stop, then SIGKILL, the run PID and its guard, so that
# neither acts on the other's death. When the guard cannot be found it
# fails the case and kills the run (killing redlock-run alone lets the live
# guard kill the command's group, so the case would test nothing).
# The guard dies first: redlock-run's death would orphan the guard's
# process group (a group of its own) with the guard stopped in it, and the
# kernel then sends that group SIGHUP and SIGCONT. The guard, continued,
# sees redlock-run gone and kills the command's group before the SIGKILL
# that follows reaches it (CI failed both cases on that race, tree and
# cgroup: "the dead run's helper does not run").
kill_pair() {
    local r=$1 g=
    guard_of() { g=$(pgrep -P "$r" -x redlock-guard | head -1); [ -n "$g" ]; }
    if ! wait_for 5 guard_of; then
        fail "no guard of run $r found: $(ps -o pid,ppid,pgid,comm -e --forest 2>&1 | grep -w -- "$r")"
        kill -9 "$r" 2>/dev/null   # nothing of the run lingers into the next case
        return 1
    fi
    kill -STOP "$g" "$r"
    kill -9 "$g"
    wait_for 2 pid_gone "$g" || fail "the guard $g outlived its SIGKILL"
    kill -9 "$r"
    wait_pid "$r" 2
}

# beating FILE — FILE grows (a helper still writes to it), within 3 s.
beating() {
    local n1
    n1=$(count_lines "$1")
    grows() { [ "$(count_lines "$1")" -gt "$n1" ]; }
    wait_for 3 grows "$1"
}

# hold JOB ARGS... — start a holder of JOB (a 1 s lease) whose command waits
# for $TMP/JOB.stop; returns once it runs. Its pid is in $BG.
hold() {
    local job=$1; shift
    bg "$TMP/$job" "$RR_BIN" -r "$U" -t 1s "$@" "$job" -- sh -c \
        'touch "$1"; i=0; while [ ! -e "$2" ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i+1)); done' \
        sh "$TMP/$job.started" "$TMP/$job.stop"
    wait_for 10 file_there "$TMP/$job.started" || fail "the holder of $job did not start"
}

t "--contain tree: -v, the JSON acquired event and the state record say 'tree'"
rr -r "$U" -v --contain tree treejob true
assert_rc 0 "a run in tree mode"
grep -q 'containment: process tree (the guard is the subreaper of every process the command starts)' "$ERR" ||
    fail "-v does not say the tree holds the run: $(cat "$ERR")"
grep -q 'containment: cgroup' "$ERR" && fail "-v names a cgroup in tree mode"
assert_eq tree "$(hget S "$(k_state treejob)" contain)" "the state record's contain"
rr -r "$U" -v --log-format json --contain tree treejob true
assert_rc 0 "a run in tree mode, JSON"
assert_eq tree "$(json_field "$ERR" acquired contain)" "the acquired event's contain"
end_test

t "--status of a holder in tree mode shows its containment (text and JSON)"
hold treeheld --contain tree
rr -r "$U" --status treeheld
assert_rc 1 "--status of a held lock"
grep -qE '^contain +process tree' "$OUT" || fail "--status does not show the tree: $(cat "$OUT")"
rr -r "$U" --status --json treeheld
assert_eq '"tree"' "$("$PY" -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["lock"]["contain"]))' "$OUT")" "lock.contain"
touch "$TMP/treeheld.stop"
wait_pid "$BG" 10
assert_eq 0 "$RC" "the holder's status"
end_test

t "--status of a free lock shows no containment line"
rr -r "$U" --status treeheld
assert_rc 0 "--status of a free lock"
grep -q '^contain' "$OUT" && fail "a free lock shows a containment: $(cat "$OUT")"
end_test

# Where tree mode keeps its mark of a run, for root (leftover.h).
if [ -d /run ] && [ -w /run ]; then MARKS=/run/redlock-run; else MARKS=/tmp/redlock-run-0; fi

t "--contain tree: redlock-run and its guard both killed: the next run of the job kills what its command left in its group"
# Both stopped, then both SIGKILLed: the command dies with its guard
# (PDEATHSIG), but a process it started in its group runs on, re-parented
# to init, past the lease. The next run of the same job on this host finds
# the dead run's mark (its flock free) and kills the recorded group before
# its own command runs. (A 3 s lease, as in the cgroup case.)
if [ "$(id -u)" = 0 ]; then
    job=treedead$$
    bg "$TMP/treedead" "$RR_BIN" -r "$U" -t 3s --contain tree "$job" -- sh -c \
        'sh -c "echo \$\$ > \"\$1.pid\"; trap \"\" TERM; while :; do echo x >> \"\$1\"; sleep 0.05; done" sh "$1" &
         sleep 60' sh "$TMP/treedead.beat"
    r=$BG
    wait_for 10 file_there "$TMP/treedead.beat" || fail "the command did not start its helper"
    [ -e "$MARKS/redlock-run.$r.$job" ] || fail "no mark of the run in $MARKS: $(ls -la "$MARKS" 2>&1)"
    kill_pair "$r"
    sleep 3.2   # past the 3 s lease
    beats() { wc -l < "$TMP/treedead.beat"; }
    beating "$TMP/treedead.beat" || fail "the dead run's helper does not run (nothing to test)"
    rr -r "$U" --contain tree "$job" true
    assert_rc 0 "the next run of the job"
    assert_contains "$(cat "$ERR")" "killed what a dead run of this job left running in its process group"
    assert_contains "$(cat "$ERR")" "(run $r)"
    n1=$(beats); sleep 0.3
    assert_eq "$n1" "$(beats)" "lines written by the dead run's helper after the next run"
    [ -e "$MARKS/redlock-run.$r.$job" ] && fail "the dead run's mark is left"
    ls "$MARKS" | grep -q "\.$job\$" && fail "a mark of the job is left: $(ls "$MARKS")"
    kill -9 "$(cat "$TMP/treedead.beat.pid")" 2>/dev/null   # (if the test failed)
else
    skip "needs root (the mark's directory is /tmp/redlock-run-UID otherwise)"
fi
end_test

t "--contain tree: a busy run leaves a live holder's command alone; no run leaves its mark behind"
# The holder's mark is locked while it lives: a busy run's guard, which
# looks for dead runs' marks when it starts, must pass it by.
hold treelive --contain tree -t 5s
h=$BG
for i in 1 2 3; do
    rr -r "$U" --contain tree treelive true
    assert_rc 75 "a busy run ($i)"
    assert_not_contains "$(cat "$ERR")" "killed what a dead run"
done
touch "$TMP/treelive.stop"
wait_pid "$h" 10
assert_eq 0 "$RC" "the holder's status (its command was not killed)"
if [ "$(id -u)" = 0 ]; then
    left=$(ls "$MARKS" | grep '\.treelive$')
    assert_eq "" "$left" "marks left by the holder and the busy runs"
fi
end_test

t "--contain tree: a dead run's mark whose group id is now another process's pid is left alone"
# The recorded command's pid was reused by a process born later: its start
# time differs from the mark's, so nothing is killed; the mark goes.
if [ "$(id -u)" = 0 ]; then
    bg "$TMP/innocent" sleep 30
    o=$BG
    job=treereuse$$
    printf '%s 1\n' "$o" > "$MARKS/redlock-run.999999.$job"
    rr -r "$U" --contain tree "$job" true
    assert_rc 0 "the next run of the job"
    assert_not_contains "$(cat "$ERR")" "killed what a dead run"
    kill -0 "$o" 2>/dev/null || fail "the process $o, whose pid the mark names, was killed"
    [ -e "$MARKS/redlock-run.999999.$job" ] && fail "the dead run's mark is left"
    kill "$o"
    wait_pid "$o" 2
else
    skip "needs root"
fi
end_test

t "--contain tree: a mark directory someone else made turns the mark off; the run goes on"
# /tmp/redlock-run-UID made first by another user (here root): never used,
# never a stall; -vv says why. A uid no other test uses (65534 is nobody's,
# and t_once's or t_status's runs as nobody leave its directory behind).
ouid=
for u in 2147483001 2147483002 2147483003 2147483004 2147483005; do
    [ -e "/tmp/redlock-run-$u" ] || { ouid=$u; break; }
done
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1 && [ -n "$ouid" ]; then
    mkdir -m 0755 "/tmp/redlock-run-$ouid"   # readable: the owner check, not the mode, refuses it
    run_limited setpriv --reuid="$ouid" --regid="$ouid" --clear-groups \
        "$RR_BIN" -r "$U" -vv --contain tree treeother true
    rmdir "/tmp/redlock-run-$ouid"
    assert_rc 0 "a run whose mark directory is another user's"
    assert_contains "$(cat "$ERR")" "no directory of ours for the run's mark (/tmp/redlock-run-$ouid: not ours, or open to others)"
else
    skip "needs root, setpriv and a uid whose /tmp/redlock-run-UID is free"
fi
end_test

if [ "$can_cgroup" = 1 ]; then
    t "--contain cgroup: -v names the cgroup, which is gone after the run"
    rr -r "$U" -v --contain cgroup 'cg/job:1' true
    assert_rc 0 "a run in cgroup mode"
    path=$(sed -n 's/.*containment: cgroup \(.*\) (cgroup.kill stops every process of the command at once)$/\1/p' "$ERR")
    case $path in
        "$CG2"/*redlock-run.[0-9]*.cg_job_1) ;;
        *) fail "-v does not name the cgroup under $CG2: $(cat "$ERR")" ;;
    esac
    [ -n "$path" ] && [ -e "$path" ] && fail "the cgroup $path is left after the run"
    assert_eq cgroup "$(hget S "$(k_state 'cg/job:1')" contain)" "the state record's contain"
    end_test

    t "--contain auto makes a cgroup where one can be made; JSON and --status say so"
    rr -r "$U" -v --log-format json autojob true
    assert_rc 0 "a run in auto mode"
    assert_eq cgroup "$(json_field "$ERR" acquired contain)" "the acquired event's contain"
    hold autoheld
    rr -r "$U" --status autoheld
    grep -qE '^contain +cgroup \(cgroup.kill' "$OUT" || fail "--status does not show the cgroup: $(cat "$OUT")"
    ls -d "$CG2"/redlock-run."$BG".autoheld >/dev/null 2>&1 || fail "no cgroup redlock-run.$BG.autoheld under $CG2"
    touch "$TMP/autoheld.stop"
    wait_pid "$BG" 10
    assert_eq 0 "$RC" "the holder's status"
    [ -e "$CG2/redlock-run.$BG.autoheld" ] && fail "the holder's cgroup is left after the run"
    end_test

    t "--contain cgroup: a process that joined the command's cgroup from outside is killed before the release"
    # cgroup.kill reaches every member, not only the guard's descendants
    # (what no signal of the guard's reaches): here the command, as root
    # may, moves a process of ours into its cgroup. The guard waits for
    # 'populated 0' before the release, so without cgroup.kill the run
    # would keep the lock until that process ended by itself.
    # (scripts/mutants: no_cgroup_kill.)
    bg "$TMP/outsider" sleep 30
    o=$BG
    rr_direct -r "$U" -t 2s --contain cgroup joined -- sh -c \
        'echo "$1" > "$2$(sed -n "s/^0:://p" /proc/self/cgroup)/cgroup.procs"' sh "$o" "$CG2"
    assert_rc 0 "the run whose cgroup a process joined"
    [ "$HUNG" = 1 ] && fail "the run hung: nothing stopped the process that joined its cgroup"
    assert_lt "$ELAPSED_MS" 5000
    pid_gone "$o" || fail "the process $o that joined the cgroup still runs after the run"
    wait_pid "$o" 1   # reaped, quietly
    end_test

    t "--contain cgroup: cgroups the command made inside its own go with it, and what ran in them"
    # A command running as root may make cgroups below its own (a container
    # runtime does) and put a process there: cgroup.kill reaches it, and the
    # run must remove those cgroups before its own (an rmdir of a cgroup
    # with children is EBUSY), or the run leaves its cgroup behind.
    rr_direct -r "$U" -t 3s --contain cgroup nested -- sh -c '
        me=$1$(sed -n "s/^0:://p" /proc/self/cgroup)
        mkdir "$me/inner" "$me/inner/deeper" "$me/empty"
        sh -c "echo \$\$ > \"$me/inner/deeper/cgroup.procs\"; exec sleep 30" &
        sleep 0.2' sh "$CG2"
    assert_rc 0 "the run whose command made cgroups"
    assert_not_contains "$(cat "$ERR")" "cannot remove the cgroup"
    left=$(cd "$CG2" && ls -d redlock-run.*.nested 2>/dev/null)
    assert_eq "" "$left" "the run's cgroup, left after it"
    end_test

    t "--contain cgroup: a run that does not get the lock leaves no cgroup and says one line"
    # The guard forks the command's process into the cgroup when it starts,
    # before the lock is asked for; a busy run must still find the cgroup
    # empty when it removes it (the guard has killed and reaped that
    # process first).
    hold busycg -t 5s   # (a longer lease than hold's: its renewals must not miss under load)
    h=$BG
    for i in 1 2 3 4 5; do
        rr_direct -r "$U" --contain cgroup busycg -- true
        assert_rc 75 "a busy run ($i)"
        assert_eq 1 "$(wc -l < "$ERR")" "lines on stderr of a busy run ($i): $(cat "$ERR")"
        left=$(cd "$CG2" && ls -d redlock-run.*.busycg 2>/dev/null | grep -vx "redlock-run.$h.busycg")
        assert_eq "" "$left" "cgroups left by the busy runs ($i)"
    done
    touch "$TMP/busycg.stop"
    wait_pid "$h" 10
    end_test

    t "--contain cgroup: redlock-run and its guard both killed: the next run of the job kills what they left"
    # Both stopped, then both SIGKILLed: nothing of ours is left to act, and
    # what the command started in a session of its own runs on in the dead
    # run's cgroup, past the lease. The next run of the same job on this
    # host kills it (cgroup.kill) before its own command runs.
    # (A 3 s lease: at 1 s, a loaded machine can miss a renewal, and the run
    # then stops its own command before the test kills it.)
    bg "$TMP/deadpair" "$RR_BIN" -r "$U" -t 3s --contain cgroup deadpair -- sh -c \
        'setsid sh -c "echo \$\$ > \"\$1.pid\"; trap \"\" TERM; while :; do echo x >> \"\$1\"; sleep 0.05; done" sh "$1" & sleep 60' \
        sh "$TMP/deadpair.beat"
    r=$BG
    wait_for 10 file_there "$TMP/deadpair.beat" || fail "the command did not start its helper"
    kill_pair "$r"
    sleep 3.2   # past the 3 s lease
    beats() { wc -l < "$TMP/deadpair.beat"; }
    beating "$TMP/deadpair.beat" || fail "the dead run's helper does not run (nothing to test)"
    rr -r "$U" --contain cgroup deadpair true
    assert_rc 0 "the next run of the job"
    assert_contains "$(cat "$ERR")" "killed what a dead run of this job left running in its cgroup redlock-run.$r.deadpair"
    n1=$(beats); sleep 0.3
    assert_eq "$n1" "$(beats)" "lines written by the dead run's helper after the next run"
    [ -e "$CG2/redlock-run.$r.deadpair" ] && fail "the dead run's cgroup is left"
    kill -9 "$(cat "$TMP/deadpair.beat.pid")" 2>/dev/null   # (if the test failed)
    end_test

    t "--contain cgroup: a run in another pid namespace leaves a live holder's command alone"
    # The holder's pid, in its cgroup's name, is no process in the other
    # run's pid namespace: that does not make the holder dead. A busy run
    # there (its guard starts all the same) must not kill the command.
    if unshare --pid --fork --mount-proc true 2>/dev/null; then
        hold pidns --contain cgroup
        h=$BG
        run_limited unshare --pid --fork --mount-proc "$RR_BIN" -r "$U" --contain cgroup pidns true
        assert_rc 75 "a run of the held job in another pid namespace"
        grep -q 'killed what a dead run' "$ERR" && fail "it killed a live run's command: $(cat "$ERR")"
        touch "$TMP/pidns.stop"
        wait_pid "$h" 10
        assert_eq 0 "$RC" "the holder's status (its command was not killed)"
    else
        skip "unshare --pid cannot be used here"
    fi
    end_test

    t "--contain cgroup: other jobs' cgroups cost a run a name comparison: no kill(2) for them, none removed"
    # 100 of live runs of other jobs (pid 1 lives), 100 of dead runs of
    # other jobs made two minutes ago: what a busy host has beside us. A
    # run's work must not grow with them (issue 33: it sent kill(pid, 0) to
    # every one of them at its end, and removed the dead ones' directories).
    if command -v strace >/dev/null 2>&1; then
        dead=$(sh -c 'echo $$')
        for i in $(seq 100); do
            mkdir "$CG2/redlock-run.1.sib$$-live$i" "$CG2/redlock-run.$dead.sib$$-dead$i"
            touch -d '2 minutes ago' "$CG2/redlock-run.$dead.sib$$-dead$i"
        done
        ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 run_limited \
            strace -f -qq -o "$TMP/sib.strace" -e trace=kill "$RR_BIN" -r "$U" --contain cgroup sibjob true
        assert_rc 0 "a run beside 200 other jobs' cgroups"
        assert_eq 0 "$(grep -cE 'kill\((1|'"$dead"'), 0\)' "$TMP/sib.strace")" \
            "kill(2) calls for other jobs' runs: $(grep -E 'kill\((1|'"$dead"'), 0\)' "$TMP/sib.strace" | head -3)"
        left=$(cd "$CG2" && ls -d redlock-run.*.sib$$-* | wc -l)
        assert_eq 200 "$left" "other jobs' cgroups still there"
        for i in $(seq 100); do rmdir "$CG2/redlock-run.1.sib$$-live$i" "$CG2/redlock-run.$dead.sib$$-dead$i"; done
    else
        skip "strace not installed"
    fi
    end_test

    t "--contain cgroup: the next run of a job removes the empty cgroup a dead run of the job left, once a minute old"
    # A run killed with its guard while it waited leaves its cgroup empty.
    # One made just now is kept: it may be a run in another pid namespace
    # that has not taken its directory's flock yet.
    dead=$(sh -c 'echo $$')
    dead2=$(sh -c 'echo $$')
    mkdir "$CG2/redlock-run.$dead.emptyjob" "$CG2/redlock-run.$dead2.emptyjob"
    touch -d '2 minutes ago' "$CG2/redlock-run.$dead.emptyjob"
    rr -r "$U" --contain cgroup emptyjob true
    assert_rc 0 "the next run of the job"
    [ -e "$CG2/redlock-run.$dead.emptyjob" ] && fail "the dead run's empty cgroup, two minutes old, is left"
    [ -e "$CG2/redlock-run.$dead2.emptyjob" ] || fail "the empty cgroup made just now was removed"
    rmdir "$CG2/redlock-run.$dead2.emptyjob" 2>/dev/null
    end_test
else
    t "the cgroup-mode cases"
    skip "no cgroup can be made here"
fi

# in_ns SETUP ARGS... — run redlock-run ARGS in a mount namespace of its own
# after the shell commands SETUP (nothing outside the namespace changes).
in_ns() {
    local setup=$1; shift
    run_limited unshare -m sh -c "$setup"' && exec "$@"' sh "$RR_BIN" "$@"
}

if [ -n "$CG2" ] && [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
    t "--contain cgroup with the cgroup2 mount read-only: 71, and the lock was never asked for"
    # A bind remount changes this mount's flag in this namespace only, not
    # the cgroup2 filesystem.
    in_ns "mount -o remount,bind,ro $CG2" -r "$U" --contain cgroup rojob true
    assert_rc 71 "--contain cgroup without a writable cgroup2"
    grep -q -- '--contain cgroup: .*read-only file system' "$ERR" || fail "the message: $(cat "$ERR")"
    [ "$(wc -l <"$ERR")" = 1 ] || fail "more than one line: $(cat "$ERR")"
    key_gone S "$(k_state rojob)" || fail "the lock was asked for"
    end_test

    t "--contain auto with the cgroup2 mount read-only: the tree holds the run"
    in_ns "mount -o remount,bind,ro $CG2" -r "$U" -v --contain auto rojob true
    assert_rc 0 "--contain auto without a writable cgroup2"
    grep -q 'containment: process tree' "$ERR" || fail "-v: $(cat "$ERR")"
    end_test

    t "--contain cgroup with no cgroup2 mounted: 71, 'no cgroup v2 mounted'"
    in_ns "umount -l $CG2" -r "$U" --contain cgroup nocgjob true
    assert_rc 71 "--contain cgroup without cgroup2"
    grep -q -- '--contain cgroup: no cgroup v2 mounted' "$ERR" || fail "the message: $(cat "$ERR")"
    key_gone S "$(k_state nocgjob)" || fail "the lock was asked for"
    end_test
else
    t "the refusal cases"
    skip "not root, no cgroup2 or no unshare"
fi

if [ -n "$CG2" ] && [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1 &&
    ! setpriv --reuid=65534 --regid=65534 --clear-groups test -w "$CG2/cgroup.procs"; then
    t "--contain cgroup as a user who may not write our cgroup: 71, permission denied, a hint"
    run_limited setpriv --reuid=65534 --regid=65534 --clear-groups "$RR_BIN" -r "$U" --contain cgroup userjob true
    assert_rc 71 "--contain cgroup without permission"
    grep -q -- '--contain cgroup: .*permission denied (run as a systemd unit with Delegate=yes' "$ERR" ||
        fail "the message: $(cat "$ERR")"
    key_gone S "$(k_state userjob)" || fail "the lock was asked for"
    end_test
fi

# A cgroup of our own whose cgroup.max.descendants is 0: a run in it finds
# its cgroup writable, but the kernel refuses the mkdir (EAGAIN).
if [ "$can_cgroup" = 1 ] && [ -w "$CG2/cgroup.procs" ]; then
    t "--contain auto where the kernel refuses the mkdir: the tree holds it, and every report says so"
    NODESC=$CG2/rr-test-nodesc.$$
    mkdir "$NODESC" || fail "cannot make $NODESC"
    RMDIRS+=("$NODESC")
    echo 0 >"$NODESC/cgroup.max.descendants" || fail "cannot limit $NODESC"
    run_limited sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$NODESC" \
        "$RR_BIN" -r "$U" -v --contain auto nodescjob -- sh -c 'cat /proc/self/cgroup > "$1"' sh "$TMP/nodesc.cg"
    assert_rc 0 "a run in a cgroup that may have no child"
    grep -q 'containment: process tree' "$ERR" || fail "-v does not say the tree holds it: $(cat "$ERR")"
    grep -q 'containment: cgroup' "$ERR" && fail "-v names a cgroup the command never had: $(cat "$ERR")"
    grep -q 'rr-test-nodesc' "$TMP/nodesc.cg" || fail "the command's cgroup: $(cat "$TMP/nodesc.cg")"
    assert_eq tree "$(hget S "$(k_state nodescjob)" contain)" "the state record's contain"
    rmdir "$NODESC" || fail "cannot remove $NODESC: a process or a cgroup is left in it"
    end_test
fi

# A cgroup namespace of our own (unshare -C) in a cgroup of our own: from
# inside, our path is "/", while the cgroup2 mount we inherited shows the
# host's whole hierarchy, on which "/" is its root. The run must never make
# its cgroup there, outside the caller's: it cannot tell where it is, so
# --contain auto falls back to the tree and --contain cgroup refuses. With a
# cgroup2 mounted inside the namespace (as a container has), the mount's
# root is ours, and the command's cgroup is made under the caller's.
NSCG=$CG2/rr-test-cgns.$$
if [ "$can_cgroup" = 1 ] && [ -w "$CG2/cgroup.procs" ] && unshare -C -m true 2>/dev/null &&
    mkdir "$NSCG"; then
    RMDIRS+=("$NSCG")
    # in_cgns SETUP ARGS... — redlock-run ARGS in $NSCG, in a cgroup and a
    # mount namespace of its own, after the shell commands SETUP.
    in_cgns() {
        local setup=$1; shift
        run_limited sh -c 'echo $$ > "$1/cgroup.procs" || exit 1; shift; exec unshare -C -m sh -c "$@"' \
            sh "$NSCG" "$setup"' && exec "$@"' sh "$RR_BIN" "$@"
    }

    t "a cgroup namespace of its own that sees the host's cgroup2: auto falls back to the tree, never the host's root"
    in_cgns true -r "$U" -v --contain auto cgnsjob -- sh -c 'grep "^0::" /proc/self/cgroup > "$1"' sh "$TMP/cgns.cg"
    assert_rc 0 "--contain auto in a cgroup namespace of its own"
    grep -q 'containment: process tree' "$ERR" || fail "-v: $(cat "$ERR")"
    assert_eq "0::/" "$(cat "$TMP/cgns.cg")" "the command's cgroup, seen from the namespace"
    ls -d "$CG2"/redlock-run.*.cgnsjob 2>/dev/null && fail "a cgroup was made at the hierarchy's root"
    assert_eq tree "$(hget S "$(k_state cgnsjob)" contain)" "the state record's contain"
    end_test

    t "the same with --contain cgroup: 71, says our cgroup cannot be found, the lock was never asked for"
    in_cgns true -r "$U" --contain cgroup cgnsjob2 true
    assert_rc 71 "--contain cgroup in a cgroup namespace of its own"
    grep -q -- '--contain cgroup: our cgroup is not to be found under the cgroup v2 mount' "$ERR" ||
        fail "the message: $(cat "$ERR")"
    key_gone S "$(k_state cgnsjob2)" || fail "the lock was asked for"
    end_test

    t "a cgroup namespace with its own cgroup2 mount: the command's cgroup is under the caller's"
    in_cgns "umount -l $CG2 && mount -t cgroup2 none $CG2" -r "$U" -v --contain cgroup cgnsjob3 -- \
        sh -c 'grep "^0::" /proc/self/cgroup > "$1"' sh "$TMP/cgns3.cg"
    assert_rc 0 "--contain cgroup with the namespace's own mount"
    grep -q "^0::/redlock-run\.[0-9]*\.cgnsjob3\$" "$TMP/cgns3.cg" || fail "the command's cgroup: $(cat "$TMP/cgns3.cg")"
    ls -d "$CG2"/redlock-run.*.cgnsjob3 2>/dev/null && fail "a cgroup was made at the hierarchy's root"
    ls -d "$NSCG"/redlock-run.* 2>/dev/null && fail "the command's cgroup is left after the run"
    rmdir "$NSCG" || fail "cannot remove $NSCG: a process or a cgroup is left in it"
    end_test
else
    t "the cgroup namespace cases"
    skip "no cgroup, no unshare -C, or no test cgroup of ours"
fi

done_testing
