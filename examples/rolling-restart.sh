#!/bin/sh
# rolling-restart.sh — start this on every web host at once (ansible, pssh,
# a CI matrix): the hosts restart at most MAX_AT_ONCE at a time, first come,
# first served, each waiting up to an hour for its turn. A host that dies
# while waiting loses its place within seconds; one that dies while
# restarting frees its slot when its lease (2m) runs out.
set -eu
: "${REDLOCK_URL:=redis://redis.internal:6379}"
export REDLOCK_URL
exec redlock-run --limit "${MAX_AT_ONCE:-2}" --wait 1h --ttl 2m rolling-restart-web -- \
    sh -c 'echo "slot $REDLOCK_SLOT: restarting web on $(hostname)"
           systemctl restart web
           sleep "${SETTLE:-10}"   # let it warm up before the next host goes'
