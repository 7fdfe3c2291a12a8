# scripts/bench-lib.sh — sourced by bench-herd, bench-drain and bench-keys.
# shellcheck shell=bash

# bench_cleanup DIR [KEEP] — stop the redis-server whose pid is in DIR/pid,
# wait until it is gone (it may still write in DIR as it ends), then remove
# DIR unless KEEP is 1. For an EXIT trap: it never fails the script.
bench_cleanup() {
    local dir=$1 keep=${2:-0} p
    p=$(cat "$dir/pid" 2>/dev/null) || p=
    if [ -n "$p" ]; then
        kill "$p" 2>/dev/null || :
        for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
    fi
    [ "$keep" = 1 ] && return 0
    rm -rf "$dir" 2>/dev/null || { sleep 0.5; rm -rf "$dir" 2>/dev/null; } || :
}
