# shellcheck shell=bash
# lib.sh — sourced by every tests/integration/t_*.sh.
#
# Gives each test file: a private temp dir, throwaway redis-server instances
# (never port 6379, never the system Redis), bounded ways to run redlock-run,
# assertions, and TAP-like output:
#
#   ok - NAME
#   not ok - NAME: reason
#   ok - NAME # SKIP reason             (skip: what the case needs is missing)
#   # result: N passed, N failed, N skipped   (the last line; run.sh sums these)
#
# A fail outside a test case (before the first t, after an end_test) is a
# failed case of its own, "not ok - (outside a test case): reason": it is
# never dropped.
#
# Every wait here has a deadline. Every process started here is killed by its
# PID at exit, if that PID still names it (its start time is noted: a PID may
# be another process's once it ended); nothing is ever killed by name.
#
# Environment:
#   RR_BIN       the redlock-run binary (default: ./redlock-run at the top)
#   RR_HELPERS   build/tests (helper binaries, optional)
#   RR_VALGRIND  1 = wrap "${RR[@]}" calls in valgrind (timing-sensitive
#                calls use "$RR_BIN" directly and are never wrapped)
#   RR_LIMIT     seconds before a redlock-run call counts as hung (20)
#   RR_TEST_TIMES  1 = print each test case's time after its result
#   RR_NO_SKIP   1 = a skip (what a case needs is missing here) is a failure:
#                .ci/run sets it, its machine (Debian 12, root, cgroup2,
#                scripts/deps.sh ci) has everything. skip_asked (a skip the
#                run asked for: RR_CRON=0, RR_VALGRIND=1) is never one.

LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$LIB_DIR/../.." && pwd)
TEST_FILE=$(basename "$0" .sh)

RR_BIN=${RR_BIN:-$TOP/redlock-run}
RR_HELPERS=${RR_HELPERS:-$TOP/build/tests}
RR_LIMIT=${RR_LIMIT:-20}
export RR_BIN RR_HELPERS

# The command used for calls that are not sensitive to timing.
RR=("$RR_BIN")
if [ "${RR_VALGRIND:-0}" = 1 ]; then
    # shellcheck disable=SC2054  # the commas belong to valgrind's option
    # --read-inline-info=no: a tenth less start-up (0.57 s -> 0.51 s a
    # call here, most of it reading libc's debug info), for stacks that
    # name the function an inlined one was inlined into.
    RR=(valgrind --error-exitcode=99 --leak-check=full --child-silent-after-fork=no
        --errors-for-leak-kinds=definite,indirect --read-inline-info=no -q "$RR_BIN")
    # Valgrind makes start-up slow; give calls more time before "hung".
    RR_LIMIT=$((RR_LIMIT * 2))
fi

# Debian's python3 starts faster than a pyenv shim; only the stdlib is used.
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3

# Never let a stray setting reach the binary under test.
unset REDLOCK_URL REDLOCK_PASSWORD REDLOCK_USER

TMP=$(mktemp -d "${TMPDIR:-/tmp}/rr-${TEST_FILE}.XXXXXX")

# Under valgrind each wrapped process writes its report to a file of its own
# ($TMP/valgrind/PID.log): valgrind_errors (at each end_test) fails the case
# when one holds an error, whatever the call's exit status was or whether
# the test looked at it (a call in the background, one whose status is not
# checked: valgrind's 99 would pass there).
if [ "${RR_VALGRIND:-0}" = 1 ]; then
    mkdir -p "$TMP/valgrind"
    RR=("${RR[0]}" "--log-file=$TMP/valgrind/%p.log" "${RR[@]:1}")
fi
SERVERS=()       # names given to start_redis
BG_PIDS=()       # background jobs to kill at exit

N_OK=0
N_FAIL=0
N_SKIP=0
CUR_TEST=
CUR_REASON=
CUR_SKIP=

# --- cleanup -----------------------------------------------------------------

RMDIRS=()

cleanup() {
    local name pidvar pid i
    set +e
    for pid in "${BG_PIDS[@]}"; do
        [ -n "$pid" ] || continue
        kill_ours KILL "$pid"
    done
    for name in "${SERVERS[@]}"; do
        pidvar="${name}_PID"
        pid=${!pidvar:-}
        [ -n "$pid" ] || continue
        kill_ours KILL "$pid"
    done
    # Give the kernel a moment so rm does not race with dying servers.
    for pid in "${BG_PIDS[@]}"; do wait "$pid" 2>/dev/null; done
    # Directories a file made outside $TMP (cgroups), deepest last listed.
    for ((i = ${#RMDIRS[@]} - 1; i >= 0; i--)); do rmdir "${RMDIRS[$i]}" 2>/dev/null; done
    if [ "${RR_KEEP_TMP:-0}" = 1 ]; then
        echo "# kept $TMP" >&2
    else
        rm -rf "$TMP"
    fi
    # Bash reports killed background jobs when it exits; those are ours.
    exec 2>/dev/null
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A pid names a process only while it lives: once it ended (and bash reaps
# its jobs by itself) the number may be anyone's, and soon so when the pid
# counter wraps (t_escape.sh makes it wrap). So the start time (field 22 of
# /proc/PID/stat) of each process we start is noted, and a signal goes only
# to the process that has both. Builtins only: no fork.
declare -A PID_START=()

# start_time PID — its start time (clock ticks since boot) in START;
# returns 1, START empty, if it is gone. No subshell.
start_time() {
    local st
    START=
    { read -r st <"/proc/$1/stat"; } 2>/dev/null || return 1
    st=${st##*) }
    # shellcheck disable=SC2086  # split into the fields after the name
    set -- $st
    START=${20:-}
    [ -n "$START" ]
}

# note_pid PID — remember which process PID is now ("" if it already ended).
note_pid() { start_time "$1"; PID_START[$1]=$START; }

# still_ours PID — PID is still the process note_pid saw (true for a pid
# never noted: nothing to tell it by).
still_ours() {
    [ -n "${PID_START[$1]+set}" ] || return 0
    [ -n "${PID_START[$1]}" ] && start_time "$1" && [ "$START" = "${PID_START[$1]}" ]
}

# kill_ours SIG PID — SIGCONT and SIG to PID if it is still ours.
kill_ours() {
    still_ours "$2" || return 0
    kill -CONT "$2" 2>/dev/null
    kill "-$1" "$2" 2>/dev/null
}

track_pid() { BG_PIDS+=("$1"); note_pid "$1"; }

# --- time and bounded waits ----------------------------------------------------

# stamp — NOW_MS, milliseconds since the epoch, from bash's own clock
# (EPOCHREALTIME: microseconds, with the locale's decimal mark). No process:
# a test file asks for the time hundreds of times, and on a small machine
# each `date` (a fork and an exec) cost more than the wait it measured.
stamp() { NOW_MS=$(( ${EPOCHREALTIME//[!0-9]/} / 1000 )); }
now_ms() { stamp; echo "$NOW_MS"; }

# nap SECONDS — sleep without a process: a read that times out on a FIFO
# only we hold open (read and write, so no data and no end of file).
NAP_FIFO=$TMP/.nap
mkfifo "$NAP_FIFO"
nap() { read -r -t "$1" <>"$NAP_FIFO" || :; }

# secs_ms SECONDS — "2", "0.3", "1.25" → milliseconds.
secs_ms() {
    local s=$1 i f
    i=${s%%.*}
    if [[ $s == *.* ]]; then f=${s#*.}000; f=${f:0:3}; else f=000; fi
    echo $(( 10#${i:-0} * 1000 + 10#$f ))
}

# wait_for SECONDS CMD... — poll CMD every 20 ms until it succeeds.
# Returns 0 when it did, 1 when the deadline passed.
wait_for() {
    local limit=$1; shift
    local deadline
    stamp
    deadline=$(( NOW_MS + $(secs_ms "$limit") ))
    while :; do
        "$@" && return 0
        stamp
        [ "$NOW_MS" -ge "$deadline" ] && return 1
        nap 0.02
    done
}

# Is PID gone (or a zombie nobody reaped, or, noted, another process now)?
pid_gone() {
    local st
    still_ours "$1" || return 0
    [ -r "/proc/$1/stat" ] || return 0
    { read -r st <"/proc/$1/stat"; } 2>/dev/null || return 0
    st=${st##*) }
    st=${st%% *}
    [ -z "$st" ] || [ "$st" = Z ] || [ "$st" = X ]
}

# wait_pid PID SECONDS — wait for a background job of this shell, bounded.
# Sets RC (its exit status) and HUNG (1 if it had to be killed: RC is then
# meaningless). ELAPSED_MS is measured from the call.
wait_pid() {
    # stderr is closed throughout: bash would print "Killed" for jobs that
    # the test itself killed on purpose.
    {
        local pid=$1 limit=$2 t0
        stamp
        t0=$NOW_MS
        HUNG=0
        RC=
        if ! wait_for "$limit" pid_gone "$pid"; then
            HUNG=1
            kill_ours KILL "$pid"
        fi
        wait "$pid"
        RC=$?
        stamp
        ELAPSED_MS=$(( NOW_MS - t0 ))
    } 2>/dev/null
    return 0
}

# kill_wait SIG PID SECONDS — signal a background job and wait for it
# (bounded, like wait_pid), without bash's "Killed" report on stderr.
kill_wait() {
    {
        still_ours "$2" && kill "-$1" "$2"
        wait_pid "$2" "$3"
    } 2>/dev/null
}

# wait_all SECONDS PID... — wait_pid for each; FAILS is how many did not
# exit 0 (a hung one counts).
wait_all() {
    local limit=$1 p; shift
    FAILS=0
    for p in "$@"; do
        wait_pid "$p" "$limit"
        [ "$RC" = 0 ] || FAILS=$((FAILS + 1))
    done
}

# --- running things ------------------------------------------------------------

# rc CMD... — run CMD, store its status in RC, never abort.
rc() {
    "$@"
    RC=$?
    return 0
}

# rr ARGS... — run "${RR[@]}" ARGS with a hang limit. stdout → $OUT,
# stderr → $ERR (files, also kept in $TMP/last.*). Sets RC, HUNG, ELAPSED_MS.
# rr_direct is the same with the bare binary (for timing-sensitive calls).
OUT=$TMP/last.out
ERR=$TMP/last.err
rr() {
    run_limited "${RR[@]}" "$@"
    # valgrind's --error-exitcode (redlock-run never exits 99)
    if [ "${RR_VALGRIND:-0}" = 1 ] && [ "$RC" = 99 ]; then
        fail "valgrind reported errors (exit 99): $*"
    fi
    return 0
}
rr_direct() { run_limited "$RR_BIN" "$@"; }

run_limited() {
    local t0
    stamp
    t0=$NOW_MS
    timeout -k 2 "$RR_LIMIT" "$@" >"$OUT" 2>"$ERR" </dev/null
    RC=$?
    stamp
    ELAPSED_MS=$(( NOW_MS - t0 ))
    HUNG=0
    if [ "$ELAPSED_MS" -ge $(( RR_LIMIT * 1000 )) ]; then HUNG=1; fi
    return 0
}

# bg PREFIX CMD... — start CMD in the background (stdout PREFIX.out, stderr
# PREFIX.err, stdin /dev/null), track it, and leave its PID in BG.
bg() {
    local prefix=$1; shift
    "$@" >"$prefix.out" 2>"$prefix.err" </dev/null &
    BG=$!
    track_pid "$BG"
}

# make_dist DISTDIR — `make dist` of the tree into DISTDIR, its output in
# $TMP/dist.out. One at a time (flock on the tree's Makefile, its
# descriptor not passed to make, -o): t_dist and
# t_examples may run side by side (run.sh's pool), and both build into the
# tree's build-dist/; two at once broke one's link (CI, t_dist's 6 cases).
make_dist() {
    env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL flock -o "$TOP/Makefile" \
        make -C "$TOP" --no-print-directory dist DISTDIR="$1" >"$TMP/dist.out" 2>&1
}

# --- redis servers -------------------------------------------------------------

free_port() {
    "$PY" - <<'EOF'
import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
s.close()
EOF
}

# start_redis NAME [redis-server args...]
# Exposes NAME_PORT, NAME_SOCK, NAME_URL, NAME_SOCKURL, NAME_PID (and
# NAME_PASS when --requirepass is among the args).
start_redis() {
    local name=$1; shift
    local port
    for _ in 1 2 3 4 5; do
        port=$(free_port)
        if [ "$port" = 6379 ]; then continue; fi
        if spawn_redis "$name" "$port" "$@"; then
            SERVERS+=("$name")
            return 0
        fi
    done
    echo "# cannot start redis-server $name (see $TMP/$name.log)" >&2
    tail -5 "$TMP/$name.log" >&2 2>/dev/null
    return 1
}

# requirepass_of ARGS... — prints the value after --requirepass, if any.
requirepass_of() {
    local a prev=''
    for a in "$@"; do
        [ "$prev" = --requirepass ] && printf %s "$a"
        prev=$a
    done
}

# _server_vars NAME PID PORT PASS — the NAME_* variables every server has.
_server_vars() {
    printf -v "${1}_PID" %s "$2"
    printf -v "${1}_PORT" %s "$3"
    printf -v "${1}_PASS" %s "$4"
}

spawn_redis() {
    local name=$1 port=$2; shift 2
    local sock=$TMP/$name.sock pid
    rm -f "$sock"
    redis-server --port "$port" --bind 127.0.0.1 \
        --unixsocket "$sock" --unixsocketperm 700 \
        --save '' --appendonly no --dir "$TMP" \
        --daemonize no --logfile "$TMP/$name.log" "$@" </dev/null >/dev/null 2>&1 &
    pid=$!
    note_pid "$pid"
    # Not a job we wait for: keeps bash from reporting "Killed" for it.
    disown "$pid"
    _server_vars "$name" "$pid" "$port" "$(requirepass_of "$@")"
    printf -v "${name}_SOCK" %s "$sock"
    printf -v "${name}_URL" %s "redis://127.0.0.1:$port"
    printf -v "${name}_SOCKURL" %s "unix://$sock"
    if wait_for 10 redis_up "$name"; then return 0; fi
    kill_ours KILL "$pid"
    return 1
}

redis_up() {
    local pidvar="${1}_PID" out
    pid_gone "${!pidvar}" && return 1
    out=$(R "$1" PING 2>&1)
    [ "$out" = PONG ]
}

# R NAME ARGS... — redis-cli against that server (raw output, no tty).
# A server from start_tls is reached over TLS without verifying (some have
# bad certificates on purpose; a redis-cli without --insecure verifies with
# $PKI/ca.crt), with $PKI/client.crt when there is one (for
# --tls-auth-clients yes).
RR_CLI_INSECURE=$(redis-cli --help 2>&1 | grep -c -- --insecure)
R() {
    local name=$1; shift
    local pv="${name}_PORT" pw="${name}_PASS" tv="${name}_TLS"
    if [ -n "${!tv:-}" ]; then
        local tls=(--tls --insecure) auth=()
        [ "$RR_CLI_INSECURE" != 0 ] || tls=(--tls --cacert "$PKI/ca.crt")
        [ -e "$PKI/client.crt" ] && tls+=(--cert "$PKI/client.crt" --key "$PKI/client.key")
        [ -n "${!pw}" ] && auth=(env REDISCLI_AUTH="${!pw}")
        "${auth[@]}" timeout 10 redis-cli --no-auth-warning "${tls[@]}" -h 127.0.0.1 -p "${!pv}" "$@"
    elif [ -n "${!pw}" ]; then
        REDISCLI_AUTH=${!pw} timeout 10 redis-cli --no-auth-warning -h 127.0.0.1 -p "${!pv}" "$@"
    else
        timeout 10 redis-cli -h 127.0.0.1 -p "${!pv}" "$@"
    fi
}

stop_redis() {
    local pv="${1}_PID"
    kill_ours KILL "${!pv}"
    wait_for 5 pid_gone "${!pv}"
    return 0
}
pause_redis() { local pv="${1}_PID"; still_ours "${!pv}" && kill -STOP "${!pv}"; }
resume_redis() { local pv="${1}_PID"; still_ours "${!pv}" && kill -CONT "${!pv}"; }

# restart_redis NAME — kill it and start it again on the same port, empty.
restart_redis() {
    local name=$1 pp="${1}_PORT" port pass pw="${1}_PASS"
    port=${!pp}
    pass=${!pw}
    stop_redis "$name"
    if [ -n "$pass" ]; then
        spawn_redis "$name" "$port" --requirepass "$pass"
    else
        spawn_redis "$name" "$port"
    fi
}

# --- certificates and TLS servers ----------------------------------------------

# Certificates live in $PKI; pki_ca and pki_cert return non-zero when openssl
# is missing or fails, so a caller can say "openssl could not make ...".
PKI=$TMP/pki
PKI_EC=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)

# The openssl ca database pki_cert signs with; made once, on first use.
_pki_db() {
    [ -e "$PKI/ca.cnf" ] && return 0
    mkdir -p "$PKI/db/new" || return 1
    : >"$PKI/db/index.txt"
    echo 1000 >"$PKI/db/serial"
    cat >"$PKI/ca.cnf" <<EOF
[ca]
default_ca = d
[d]
dir = $PKI/db
database = \$dir/index.txt
new_certs_dir = \$dir/new
serial = \$dir/serial
default_md = sha256
policy = p
copy_extensions = copy
unique_subject = no
[p]
commonName = supplied
EOF
}

# pki_ca NAME — a self-signed CA: $PKI/NAME.crt and $PKI/NAME.key.
pki_ca() {
    mkdir -p "$PKI" &&
        openssl req -x509 "${PKI_EC[@]}" -keyout "$PKI/$1.key" -out "$PKI/$1.crt" -days 30 \
            -subj "/CN=rr test $1" 2>/dev/null
}

# pki_cert NAME CA SAN [openssl ca date options...] — $PKI/NAME.crt (and
# .key) for subjectAltName SAN, signed by the CA that pki_ca made as CA.
pki_cert() {
    local name=$1 ca=$2 san=$3; shift 3
    _pki_db &&
        openssl req "${PKI_EC[@]}" -keyout "$PKI/$name.key" -out "$PKI/$name.csr" -subj "/CN=$name" \
            -addext "subjectAltName=$san" 2>/dev/null &&
        openssl ca -batch -notext -config "$PKI/ca.cnf" -cert "$PKI/$ca.crt" -keyfile "$PKI/$ca.key" \
            -in "$PKI/$name.csr" -out "$PKI/$name.crt" "$@" >/dev/null 2>&1
}

# pki_node — what the Sentinel and Cluster TLS cases need: a CA "ca", a
# node certificate "s" for localhost and 127.0.0.1, and a CA "other" that
# signed nothing.
pki_node() {
    pki_ca ca && pki_ca other && pki_cert s ca "DNS:localhost,IP:127.0.0.1" -days 30
}

# tls_args CERT — sets TLS_ARGS: redis-server's TLS options for $PKI/CERT,
# clients not asked for a certificate.
tls_args() {
    TLS_ARGS=(--tls-cert-file "$PKI/$1.crt" --tls-key-file "$PKI/$1.key"
              --tls-ca-cert-file "$PKI/ca.crt" --tls-auth-clients no)
}

# spawn_tls NAME PORT CERT [redis-server args...] — a TLS-only redis-server
# (--port 0) on PORT with $PKI/CERT; exposes NAME_PORT, NAME_PID, NAME_PASS,
# NAME_TLS=1, NAME_URL (rediss://localhost:PORT) and NAME_IPURL (by IP).
# Returns 1 (and kills it) when it does not answer within 10 s.
spawn_tls() {
    local name=$1 port=$2 cert=$3 pid; shift 3
    tls_args "$cert"
    redis-server --port 0 --tls-port "$port" --bind 127.0.0.1 "${TLS_ARGS[@]}" \
        --save '' --appendonly no --dir "$TMP" \
        --daemonize no --logfile "$TMP/$name.log" "$@" </dev/null >/dev/null 2>&1 &
    pid=$!
    disown "$pid"
    _server_vars "$name" "$pid" "$port" "$(requirepass_of "$@")"
    printf -v "${name}_TLS" %s 1
    printf -v "${name}_URL" %s "rediss://localhost:$port"
    printf -v "${name}_IPURL" %s "rediss://127.0.0.1:$port"
    if wait_for 10 redis_up "$name"; then
        SERVERS+=("$name")
        return 0
    fi
    kill -KILL "$pid" 2>/dev/null
    printf -v "${name}_PID" %s ''
    return 1
}

# start_tls NAME CERT [redis-server args...] — spawn_tls on a free port.
start_tls() {
    local name=$1 port; shift
    for _ in 1 2 3 4 5; do
        port=$(free_port)
        [ "$port" = 6379 ] && continue
        spawn_tls "$name" "$port" "$@" && return 0
    done
    echo "# cannot start TLS redis-server $name (see $TMP/$name.log)" >&2
    tail -5 "$TMP/$name.log" >&2 2>/dev/null
    return 1
}

# --- what ran at once ------------------------------------------------------------

# limit_stats FILE — FILE has lines "S|E MILLISECONDS SLOT" (a job's start
# and its end); prints "MOST-AT-ONCE STARTS SLOT,SLOT,...".
limit_stats() {
    "$PY" - "$1" <<'PY'
import sys
ev = []
slots = set()
for line in open(sys.argv[1]):
    k, t, s = line.split()
    ev.append((int(t), 0 if k == "E" else 1))   # an end before a start at the same ms
    slots.add(s)
cur = mx = n = 0
for t, k in sorted(ev):
    cur += 1 if k else -1
    n += k
    mx = max(mx, cur)
print(mx, n, ",".join(sorted(slots)))
PY
}

# Key names for a job (default prefix).
k_lock() { printf 'redlock:{%s}:lock' "$1"; }
k_fence() { printf 'redlock:{%s}:fence' "$1"; }
k_state() { printf 'redlock:{%s}:state' "$1"; }
k_once() { printf 'redlock:{%s}:once:%s' "$1" "$2"; }
k_hist() { printf 'redlock:{%s}:history' "$1"; }

# hget SERVER KEY FIELD
hget() { R "$1" HGET "$2" "$3"; }

# key_gone SERVER KEY — for wait_for.
key_gone() { [ "$(R "$1" EXISTS "$2")" = 0 ]; }
key_there() { [ "$(R "$1" EXISTS "$2")" = 1 ]; }

file_there() { [ -e "$1" ]; }

# count_lines FILE — lines in FILE, 0 when it does not exist.
count_lines() { if [ -e "$1" ]; then wc -l <"$1" | tr -d ' '; else echo 0; fi; }

# --- test cases and assertions ---------------------------------------------------

# t NAME — start a test case (ends the previous one).
# RR_TEST_TIMES=1 prints each case's time after its result line, to find
# where a file's time goes.
t() {
    end_test
    CUR_TEST=$1
    CUR_REASON=
    CUR_SKIP=
    stamp
    CUR_T0=$NOW_MS
}

end_test() {
    [ -n "$CUR_TEST" ] || return 0
    valgrind_errors
    if [ -z "$CUR_REASON" ] && [ -n "$CUR_SKIP" ]; then
        echo "ok - $CUR_TEST # SKIP $CUR_SKIP"
        N_SKIP=$((N_SKIP + 1))
    elif [ -z "$CUR_REASON" ]; then
        echo "ok - $CUR_TEST"
        N_OK=$((N_OK + 1))
    else
        echo "not ok - $CUR_TEST: $CUR_REASON"
        N_FAIL=$((N_FAIL + 1))
        if [ -s "$ERR" ]; then
            echo "#   last stderr of redlock-run:"
            head -c 2000 "$ERR" | sed 's/^/#     /'
        fi
    fi
    if [ "${RR_TEST_TIMES:-0}" = 1 ]; then
        stamp
        echo "#   took $(( NOW_MS - CUR_T0 )) ms"
    fi
    CUR_TEST=
    CUR_REASON=
    CUR_SKIP=
}

# fail REASON — mark the current test failed (the first reason is kept,
# later ones are printed as comments). Outside a test case it is a failed
# case of its own.
fail() {
    if [ -z "$CUR_TEST" ]; then
        echo "not ok - (outside a test case): $1"
        N_FAIL=$((N_FAIL + 1))
        return 1
    fi
    if [ -z "$CUR_REASON" ]; then
        CUR_REASON=$1
    else
        echo "#   also: $1"
    fi
    return 1
}

# valgrind_errors — under RR_VALGRIND=1, fail for every report
# valgrind wrote since the last look (an error's first line: "==PID== "
# and a word; its "Warning:" lines are not errors), printing its first lines;
# each report is read once (done_testing looks again: outside a case).
valgrind_errors() {
    local f bad
    [ "${RR_VALGRIND:-0}" = 1 ] && [ -d "$TMP/valgrind" ] || return 0
    for f in "$TMP"/valgrind/*.log; do
        [ -s "$f" ] || continue
        bad=$(grep -E '^==[0-9]+== [^ ]' "$f" | grep -v '^==[0-9]*== Warning:' | head -1)
        if [ -n "$bad" ]; then
            fail "valgrind: $bad (valgrind/${f##*/})"
            head -c 3000 "$f" | sed 's/^/#     /'
        fi
        mv "$f" "$f.read"
    done
}

# skip REASON — end the current case as skipped: something it needs is
# missing here (a program, root, a cgroup). Counted apart from passes; under
# RR_NO_SKIP=1 (.ci/run) a failure instead. Nothing of the case may run
# after it (a later assertion would be outside a test case).
skip() {
    if [ -z "$CUR_TEST" ]; then
        fail "skip outside a test case: $1"
        return 1
    fi
    if [ "${RR_NO_SKIP:-0}" = 1 ]; then
        fail "skipped on a machine that must run it (RR_NO_SKIP=1): $1"
    else
        CUR_SKIP=$1
    fi
    end_test
}

# skip_asked REASON — end the current case as skipped because the run asked
# for it (RR_CRON=0, RR_VALGRIND=1): a skip even under RR_NO_SKIP=1.
skip_asked() {
    if [ -z "$CUR_TEST" ]; then
        fail "skip outside a test case: $1"
        return 1
    fi
    CUR_SKIP="$1 (asked)"
    end_test
}

# The library faketime(1) preloads (Debian's package faketime): the first
# one found that the dynamic loader takes for this machine's programs (a
# library of another architecture is refused with a warning).
FAKETIME_LIB=
for _lib in /usr/lib/*/faketime/libfaketime.so.1 /usr/lib/faketime/libfaketime.so.1 \
    /usr/lib64/faketime/libfaketime.so.1 /usr/local/lib/faketime/libfaketime.so.1; do
    if [ -f "$_lib" ] && [ -z "$(LD_PRELOAD=$_lib /bin/true 2>&1)" ]; then
        FAKETIME_LIB=$_lib
        break
    fi
done
unset _lib

# faked OFFSET — the environment (words for env(1)) that moves a command's
# wall clock by OFFSET (libfaketime's FAKETIME syntax: +1d, -2h, ...), as
# `faketime -f OFFSET` does but without faketime(1) itself: the wrapper
# makes a semaphore named after its own pid with O_EXCL
# (/dev/shm/sem.faketime_sem_PID), one that is killed leaves it behind, and
# a later wrapper given the same pid exits 1 ("sem_open: File exists")
# without running the command. Use: run_limited env $(faked +1d) CMD ...
faked() { echo "LD_PRELOAD=$FAKETIME_LIB FAKETIME=$1"; }

# skip_without_faketime — end the current case as skipped (and return 0)
# when faketime cannot run redlock-run here: not installed, or the ASan
# build (libfaketime preloaded before ASan's runtime: ASan refuses to start;
# the plain pass runs the case). Returns 1 when it can.
skip_without_faketime() {
    if [ -z "$FAKETIME_LIB" ]; then
        skip "needs libfaketime (Debian's package faketime: scripts/deps.sh test)"
    elif ldd "$RR_BIN" 2>/dev/null | grep -q libasan; then
        skip_asked "faketime cannot be preloaded into the ASan build"
    else
        return 1
    fi
    return 0
}

# note TEXT — a comment line in the output.
note() { echo "# $*"; }

assert_eq() {
    [ "$1" = "$2" ] && return 0
    fail "${3:-value}: expected '$1', got '$2'"
}

assert_ne() {
    [ "$1" != "$2" ] && return 0
    fail "${3:-value}: expected anything but '$1'"
}

# assert_rc EXPECTED MSG — checks RC (and that the call did not hang).
assert_rc() {
    if [ "${HUNG:-0}" = 1 ]; then
        HUNG=0
        fail "${2:-exit status}: hung (killed after the limit)"
        return 1
    fi
    [ "$RC" = "$1" ] && return 0
    fail "${2:-exit status}: expected $1, got $RC"
}

assert_file_exists() {
    [ -e "$1" ] && return 0
    fail "${2:-file} $1 does not exist"
}

assert_no_file() {
    [ ! -e "$1" ] && return 0
    fail "${2:-file} $1 exists"
}

assert_contains() {
    case $1 in *"$2"*) return 0 ;; esac
    fail "${3:-text}: '$2' not found in '$(printf %s "$1" | head -c 300)'"
}

assert_not_contains() {
    case $1 in *"$2"*) fail "${3:-text}: '$2' found in '$(printf %s "$1" | head -c 300)'"; return 1 ;; esac
    return 0
}

# assert_lt A B MSG — integers.
# assert_drained T0 ORDER N LIMIT PID... — the waiters PID... all end; the
# file ORDER holds their numbers 01..N in that order, and the last ended
# less than LIMIT ms after T0 (ms, now_ms).
assert_drained() {
    local t0=$1 order=$2 n=$3 limit=$4 p el; shift 4
    for p in "$@"; do wait_pid "$p" 60; done
    el=$(( $(now_ms) - t0 ))
    note "$n runs drained in $el ms"
    assert_eq "$(seq -w 1 "$n" | tr '\n' ' ')" "$(tr '\n' ' ' < "$order")" "order of the $n"
    assert_lt "$el" "$limit" "time to drain $n waiters (ms)"
}

assert_lt() {
    [ "$1" -lt "$2" ] 2>/dev/null && return 0
    fail "${3:-value}: expected $1 < $2"
}

# assert_ran_within FILE T0_MS MS WHAT — FILE holds the time in ms (date
# +%s%3N) at which WHAT's command started: less than MS after T0_MS.
assert_ran_within() {
    if [ -s "$1" ]; then
        assert_lt "$(( $(cat "$1") - $2 ))" "$3" "ms from the event to $4's start"
    else
        fail "$4's command did not run"
    fi
}

assert_int() {
    case $1 in '' | *[!0-9]*) fail "${2:-value}: '$1' is not a non-negative integer"; return 1 ;; esac
    return 0
}

# assert_key_gone SERVER KEY MSG
assert_key_gone() {
    local e
    e=$(R "$1" EXISTS "$2")
    [ "$e" = 0 ] && return 0
    fail "${3:-key} $2 still exists ($(R "$1" TYPE "$2"))"
}

# assert_hash SERVER KEY FIELD EXPECTED
assert_hash() {
    local v
    v=$(R "$1" HGET "$2" "$3")
    assert_eq "$4" "$v" "$2 $3"
}

# done_testing — print the counts; exit 1 if anything failed.
done_testing() {
    end_test
    valgrind_errors
    echo "# result: $N_OK passed, $N_FAIL failed, $N_SKIP skipped"
    [ "$N_FAIL" = 0 ]
}

# A test file cannot run without the binary; say so once, clearly.
if [ ! -x "$RR_BIN" ]; then
    echo "# redlock-run binary not found at $RR_BIN (set RR_BIN or run make)" >&2
fi
