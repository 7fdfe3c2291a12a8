#!/usr/bin/env bash
# demo.sh — the quick start: build redlock-run, start a throwaway Redis on a
# unix socket, and race two runs of the same job. The first runs its command;
# the second finds the lock busy and exits 75 without running anything.
#
# Exit status: 0 when the race came out as promised (A 0, B 75), else 1.
set -euo pipefail

cd "$(dirname "$0")/.."

scripts/deps.sh test
make --no-print-directory

dir=$(mktemp -d "${TMPDIR:-/tmp}/redlock-demo.XXXXXX")
sock=$dir/redis.sock
server_pid=
a_pid=
# shellcheck disable=SC2317  # called by the trap
cleanup() {
    [ -n "$a_pid" ] && kill -KILL "$a_pid" 2>/dev/null
    [ -n "$server_pid" ] && kill -KILL "$server_pid" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Port 0: no TCP listener at all, only the socket in our temp dir.
redis-server --port 0 --unixsocket "$sock" --unixsocketperm 700 \
    --save '' --appendonly no --dir "$dir" --daemonize no \
    --logfile "$dir/redis.log" </dev/null >/dev/null 2>&1 &
server_pid=$!
disown "$server_pid"   # we kill it at exit; no "Killed" report from bash
for _ in $(seq 100); do
    [ "$(redis-cli -s "$sock" PING 2>/dev/null)" = PONG ] && break
    sleep 0.05
done
if [ "$(redis-cli -s "$sock" PING 2>/dev/null)" != PONG ]; then
    echo "demo: redis-server did not start; its log:" >&2
    cat "$dir/redis.log" >&2
    exit 1
fi
echo "demo: redis-server running on unix://$sock (pid $server_pid)"
echo

say_status() { # WHO STATUS
    case $2 in
        0) echo "$1 exited 0: its command ran and succeeded." ;;
        75) echo "$1 exited 75: the lock was busy, so its command did not run." ;;
        69) echo "$1 exited 69: Redis was unavailable." ;;
        *) echo "$1 exited $2." ;;
    esac
}

# shellcheck disable=SC2016  # $REDLOCK_FENCE is for the child's shell
job=(sh -c 'echo "A: settling (fence $REDLOCK_FENCE)"; sleep 2')
# shellcheck disable=SC2016
job_b=(sh -c 'echo "B: settling (fence $REDLOCK_FENCE)"; sleep 2')

echo "# run A:"
echo "\$ ./redlock-run -v -r unix://$sock demo-settle -- sh -c '${job[2]}' &"
./redlock-run -v -r "unix://$sock" demo-settle -- "${job[@]}" &
a_pid=$!
sleep 0.3
echo "# run B, 0.3 s later, while A holds the lock:"
echo "\$ ./redlock-run -v -r unix://$sock demo-settle -- sh -c '${job_b[2]}'"
set +e
./redlock-run -v -r "unix://$sock" demo-settle -- "${job_b[@]}"
b=$?
wait "$a_pid"
a=$?
set -e
a_pid=
echo
say_status "run A" "$a"
say_status "run B" "$b"
echo

echo "\$ ./redlock-run -r unix://$sock --status demo-settle"
set +e
./redlock-run -r "unix://$sock" --status demo-settle
st=$?
set -e
if [ "$st" != 0 ] && [ "$st" != 1 ] && [ "$st" != 2 ] && [ "$st" != 3 ] && [ "$st" != 4 ]; then
    echo "(--status is not available: exit $st; here is the raw record)"
    echo "\$ redis-cli -s $sock HGETALL 'redlock:{demo-settle}:state'"
    redis-cli -s "$sock" HGETALL 'redlock:{demo-settle}:state'
fi
echo

if [ "$a" = 0 ] && [ "$b" = 75 ]; then
    echo "demo: as expected: one run did the work, the other stood aside."
    exit 0
fi
echo "demo: unexpected result (wanted A 0 and B 75)." >&2
exit 1
