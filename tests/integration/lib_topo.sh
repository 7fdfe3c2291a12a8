# shellcheck shell=bash
# lib_topo.sh — real Redis Sentinel groups and Redis Clusters for integration
# tests. Source it after lib.sh:
#
#   . "$(dirname "$0")/lib.sh"
#   . "$(dirname "$0")/lib_topo.sh"
#
# Like lib.sh: every process lives in the test's $TMP, listens on 127.0.0.1
# on a port that was free when it was picked, runs under `nice`, is recorded
# in SERVERS (NAME_PID, NAME_PORT, NAME_PASS) so that lib.sh's cleanup kills
# it by PID at exit, and every wait has a deadline. Nothing is killed by
# name. Functions return non-zero (after a "# ..." line on stderr) when
# something did not come up in time; they never exit the test themselves.
#
# Sentinel
#   topo_sentinel_start [--pass PW] [--sentinel-pass PW] [NAME]
#                       1 master + 2 replicas + 3 sentinels (quorum 2), NAME
#                       defaults to mymaster; returns when the replicas are
#                       in sync and every sentinel knows both replicas and
#                       the other two sentinels
#   topo_sentinel_auth [NAME]
#                       the same with passwords: data nodes $MASTER_PASS
#                       (requirepass/masterauth/sentinel auth-pass), the
#                       sentinels $SENT_PASS (requirepass + sentinel-pass)
#   topo_sentinel_master           current master's port, as the sentinels say
#   topo_sentinel_failover [SECS]  SENTINEL FAILOVER, wait for the new master
#   topo_sentinel_wait_master_change OLDPORT [SECS]
#                       wait until all live sentinels name another master
#                       and it answers ROLE master (after killing OLDPORT)
#   topo_sentinel_wait_synced [SECS]
#                       wait until every live data node but the master
#                       replicates from it with the link up, and the
#                       sentinels know them all (before a second failover)
#   topo_sentinel_stop             kill the whole group (by PID)
#   Exports SENT_NAME SENT_PORTS SENT_URL MASTER_PORT REPLICA_PORTS
#   SENT_PASS MASTER_PASS (empty without auth), SENT_URL_AUTH (SENT_URL with
#   :MASTER_PASS@ when there is one), TOPO_DATA_PORTS (all three data nodes).
#   MASTER_PORT and REPLICA_PORTS follow the failovers seen by the functions
#   above. A second topo_sentinel_start replaces these variables.
#
# Cluster
#   topo_cluster_start [SECS]   6 nodes (3 masters, 3 replicas), ports < 55535
#   topo_cluster_wait_ok [SECS] cluster_state:ok everywhere, one slot map,
#                               replicas' links up
#   topo_cluster_slot_of KEY    CLUSTER KEYSLOT
#   topo_cluster_owner SLOT     port of the master serving SLOT
#   topo_cluster_replica_of PORT  port of a replica of the master at PORT
#   topo_cluster_nonowner SLOT  port of a master that does not own SLOT
#   topo_cluster_masters        ports of the current masters, one a line
#   topo_cluster_migrate_slot SLOT FROM TO   begin + finish
#   topo_cluster_migrate_begin SLOT FROM TO  IMPORTING on TO, MIGRATING on FROM
#   topo_cluster_migrate_finish SLOT FROM TO MIGRATE every key, SETSLOT NODE
#   topo_cluster_failover PORT [force|takeover] [SECS]
#                       CLUSTER FAILOVER on PORT's replica; waits for the
#                       roles to swap and the cluster to be ok again
#   Exports CLUSTER_PORTS (all six) and CLUSTER_URL (three seeds).
#
# Both
#   topo_pid PORT        PID of the process on PORT (started here)
#   topo_cli PORT ARGS   redis-cli -h 127.0.0.1 -p PORT (with its password)
#   topo_role PORT       master / slave / sentinel (first line of ROLE)
#   topo_kill PORT       SIGKILL it by PID and wait until it is gone
#   topo_log PORT        path of its log file (for a failing test's output)

declare -A TOPO_PID=()     # port -> pid
declare -A TOPO_NAME=()    # port -> its name in SERVERS (NAME_PID, NAME_PORT, NAME_PASS)
declare -A TOPO_PASS=()    # port -> password ('' for none)
declare -A TOPO_CID=()     # port -> cluster node id
TOPO_SEQ=0
TOPO_NICE=(nice -n 10)
# Sentinels before Redis 6.2 have no `sentinel sentinel-pass`: they give
# their peers their own requirepass (the same password here). Asked once.
TOPO_SENTINEL_PASS=1
case $(redis-server --version 2>/dev/null) in
    "Redis server v="[2-5].* | "Redis server v=6."[01].*) TOPO_SENTINEL_PASS=0 ;;
esac

SENT_NAME='' SENT_PORTS='' SENT_URL='' SENT_URL_AUTH='' SENT_PASS='' MASTER_PORT='' REPLICA_PORTS='' MASTER_PASS=''
TOPO_DATA_PORTS=''
CLUSTER_PORTS='' CLUSTER_URL=''
TOPO_LAST=''
export SENT_NAME SENT_PORTS SENT_URL SENT_URL_AUTH SENT_PASS MASTER_PORT REPLICA_PORTS MASTER_PASS
export TOPO_DATA_PORTS CLUSTER_PORTS CLUSTER_URL

_topo_say() { echo "# topo: $*" >&2; }

topo_pid() { echo "${TOPO_PID[$1]:-}"; }

topo_cli() {
    local port=$1; shift
    local pw=${TOPO_PASS[$port]:-}
    if [ -n "$pw" ]; then
        REDISCLI_AUTH=$pw timeout 5 redis-cli --no-auth-warning -h 127.0.0.1 -p "$port" "$@"
    else
        timeout 5 redis-cli -h 127.0.0.1 -p "$port" "$@"
    fi
}

topo_log() { local n=${TOPO_NAME[$1]:-}; [ -n "$n" ] && echo "$TMP/$n.log"; }

topo_role() { topo_cli "$1" ROLE 2>/dev/null | head -1; }

# _topo_alive PORT — our process on PORT is still running (NAME_PID is
# emptied once topo_kill has seen it gone, so a reused PID never counts).
_topo_alive() {
    local n=${TOPO_NAME[$1]:-} pv
    [ -n "$n" ] || return 1
    pv="${n}_PID"
    [ -n "${!pv:-}" ] && ! pid_gone "${!pv}"
}

topo_kill() {
    local p=${TOPO_PID[$1]:-} n=${TOPO_NAME[$1]:-}
    [ -n "$p" ] || { _topo_say "topo_kill: nothing of ours on port $1"; return 1; }
    kill -CONT "$p" 2>/dev/null
    kill -KILL "$p" 2>/dev/null
    wait_for 5 pid_gone "$p" || return 1
    # Gone: neither lib.sh's cleanup nor _topo_alive looks at this PID again.
    printf -v "${n}_PID" %s ''
}

# _topo_up PORT — answers PING (a process of ours that is still alive).
_topo_up() {
    _topo_alive "$1" || return 1
    [ "$(topo_cli "$1" PING 2>/dev/null)" = PONG ]
}

# _topo_spawn PORT PASS ARGS... — start `redis-server ARGS...` (ARGS hold
# the port) in the background, record it, wait until it answers. Returns 1
# (and kills it) when it does not come up, e.g. because the port was taken.
_topo_spawn() {
    local port=$1 pw=$2; shift 2
    local name pid
    TOPO_SEQ=$((TOPO_SEQ + 1))
    name=TOPO$TOPO_SEQ
    "${TOPO_NICE[@]}" redis-server "$@" </dev/null >>"$TMP/$name.out" 2>&1 &
    pid=$!
    disown "$pid"
    _server_vars "$name" "$pid" "$port" "$pw"
    SERVERS+=("$name")
    TOPO_PID[$port]=$pid
    TOPO_NAME[$port]=$name
    TOPO_PASS[$port]=$pw
    if wait_for 10 _topo_up "$port"; then return 0; fi
    _topo_say "redis-server on port $port did not come up ($TMP/$name.log):"
    tail -3 "$TMP/$name.log" 2>/dev/null | sed 's/^/#   /' >&2
    kill -KILL "$pid" 2>/dev/null
    wait_for 5 pid_gone "$pid"
    printf -v "${name}_PID" %s ''   # so that cleanup never signals a reused PID
    unset "TOPO_PID[$port]" "TOPO_NAME[$port]" "TOPO_PASS[$port]"
    return 1
}

# _topo_data_node PASS ARGS... — a plain redis-server on a free port; prints
# nothing, leaves the port in TOPO_LAST.
_topo_data_node() {
    local pw=$1; shift
    local port pwargs=()
    [ -n "$pw" ] && pwargs=(--requirepass "$pw" --masterauth "$pw")
    for _ in 1 2 3 4 5; do
        port=$(free_port)
        case $port in 6379 | 26379) continue ;; esac
        # repl-diskless-sync-delay 0: no 5 s pause before each full sync.
        # Its own dbfilename: a replica writes the RDB of each full sync,
        # and a node started later in $TMP must not load another's data.
        if _topo_spawn "$port" "$pw" --port "$port" --bind 127.0.0.1 \
            --save '' --appendonly no --dir "$TMP" --daemonize no \
            --dbfilename "TOPO$((TOPO_SEQ + 1)).rdb" --repl-diskless-sync-delay 0 \
            --logfile "$TMP/TOPO$((TOPO_SEQ + 1)).log" "${pwargs[@]}" "$@"; then
            TOPO_LAST=$port
            return 0
        fi
    done
    return 1
}

# --- Sentinel ---------------------------------------------------------------

# _topo_sentinel_node CONFFILE-BODY — a redis-sentinel on a free port.
_topo_sentinel_node() {
    local body=$1 port conf n
    for _ in 1 2 3 4 5; do
        port=$(free_port)
        case $port in 6379 | 26379) continue ;; esac
        n=$((TOPO_SEQ + 1))
        conf=$TMP/TOPO$n-sentinel.conf
        # Sentinel rewrites this file; it must be writable and its own.
        printf 'port %s\nbind 127.0.0.1\ndaemonize no\nsave ""\nappendonly no\ndir %s\nlogfile %s\n%s\n' \
            "$port" "$TMP" "$TMP/TOPO$n.log" "$body" >"$conf"
        if _topo_spawn "$port" "$SENT_PASS" "$conf" --sentinel; then
            TOPO_LAST=$port
            return 0
        fi
    done
    return 1
}

# _topo_field FIELD — from redis-cli's raw output of an array of maps
# (SENTINEL replicas ...), print the value after every line equal to FIELD.
_topo_field() { awk -v f="$1" 'prev == f { print } { prev = $0 }'; }

_topo_link_up() {
    topo_cli "$1" INFO replication 2>/dev/null | tr -d '\r' | grep -qx 'master_link_status:up'
}

# _topo_master_of PORT — the master_port its INFO replication names.
_topo_master_of() {
    topo_cli "$1" INFO replication 2>/dev/null | tr -d '\r' | sed -n 's/^master_port://p'
}

_topo_live_sentinels() {
    local p
    for p in $SENT_PORTS; do _topo_alive "$p" && echo "$p"; done
}

# _topo_sentinel_knows SPORT NREPLICAS NSENTINELS — this sentinel sees that
# many healthy replicas (flags exactly "slave", link ok) and other sentinels
# (flags "sentinel", or "sentinel,master_down").
_topo_sentinel_knows() {
    local s=$1 nr=$2 ns=$3 out
    out=$(topo_cli "$s" SENTINEL replicas "$SENT_NAME" 2>/dev/null) || return 1
    [ "$(_topo_field flags <<<"$out" | grep -cx slave)" -ge "$nr" ] || return 1
    [ "$(_topo_field master-link-status <<<"$out" | grep -cx ok)" -ge "$nr" ] || return 1
    out=$(topo_cli "$s" SENTINEL sentinels "$SENT_NAME" 2>/dev/null) || return 1
    # A sentinel flagged "sentinel,master_down" is a healthy peer: the flag is
    # its last vote on an older master's state, which Valkey 9.1 was seen to
    # keep after a failover (scripts/server-matrix), so it is left out.
    [ "$(_topo_field flags <<<"$out" | sed 's/,master_down$//' | grep -cx sentinel)" -ge "$ns" ] || return 1
}

_topo_sentinel_ready() {
    local p nl ns nr
    nl=$(_topo_live_sentinels | wc -l)
    ns=$((nl - 1))
    nr=0
    for p in $REPLICA_PORTS; do
        _topo_alive "$p" || continue
        _topo_link_up "$p" || return 1
        [ "$(_topo_master_of "$p")" = "$MASTER_PORT" ] || return 1
        nr=$((nr + 1))
    done
    for p in $(_topo_live_sentinels); do
        _topo_sentinel_knows "$p" "$nr" "$ns" || return 1
    done
}

topo_sentinel_start() {
    local data_pw='' sent_pw='' name=mymaster p i body port
    while [ $# -gt 0 ]; do
        case $1 in
            --pass) data_pw=$2; shift 2 ;;
            --sentinel-pass) sent_pw=$2; shift 2 ;;
            *) name=$1; shift ;;
        esac
    done
    SENT_NAME=$name SENT_PASS=$sent_pw MASTER_PASS=$data_pw
    SENT_PORTS='' REPLICA_PORTS='' MASTER_PORT='' TOPO_DATA_PORTS=''

    _topo_data_node "$data_pw" || { _topo_say "cannot start the master"; return 1; }
    MASTER_PORT=$TOPO_LAST
    for i in 1 2; do
        _topo_data_node "$data_pw" --replicaof 127.0.0.1 "$MASTER_PORT" ||
            { _topo_say "cannot start replica $i"; return 1; }
        REPLICA_PORTS="$REPLICA_PORTS${REPLICA_PORTS:+ }$TOPO_LAST"
    done
    TOPO_DATA_PORTS="$MASTER_PORT $REPLICA_PORTS"
    for p in $REPLICA_PORTS; do
        wait_for 10 _topo_link_up "$p" ||
            { _topo_say "replica $p: master_link_status never up"; return 1; }
    done

    body="sentinel monitor $name 127.0.0.1 $MASTER_PORT 2
sentinel down-after-milliseconds $name 1000
sentinel failover-timeout $name 3000
sentinel parallel-syncs $name 1"
    [ -n "$data_pw" ] && body="$body
sentinel auth-pass $name $data_pw"
    # requirepass guards this sentinel; sentinel-pass is what it gives the
    # other sentinels (the same password, so they can talk to each other).
    [ -n "$sent_pw" ] && body="$body
requirepass $sent_pw"
    [ -n "$sent_pw" ] && [ "$TOPO_SENTINEL_PASS" = 1 ] && body="$body
sentinel sentinel-pass $sent_pw"
    for i in 1 2 3; do
        _topo_sentinel_node "$body" || { _topo_say "cannot start sentinel $i"; return 1; }
        SENT_PORTS="$SENT_PORTS${SENT_PORTS:+ }$TOPO_LAST"
    done
    SENT_URL="redis-sentinel://"
    for port in $SENT_PORTS; do SENT_URL="${SENT_URL}127.0.0.1:$port,"; done
    SENT_URL="${SENT_URL%,}/$name"
    # The credentials in a sentinel URL are the data nodes' (src/url.h); the
    # sentinels' own password is given to redlock-run separately.
    SENT_URL_AUTH=$SENT_URL
    [ -n "$data_pw" ] && SENT_URL_AUTH="redis-sentinel://:$data_pw@${SENT_URL#redis-sentinel://}"

    if ! wait_for 20 _topo_sentinel_ready; then
        _topo_say "the sentinels did not discover each other and both replicas in 20 s"
        return 1
    fi
}

topo_sentinel_auth() {
    topo_sentinel_start --pass "${TOPO_DATA_PASS:-data-secret}" \
        --sentinel-pass "${TOPO_SENT_PASS:-sentinel-secret}" "${1:-mymaster}"
}

# _topo_sent_master SPORT — port that sentinel gives for the master.
_topo_sent_master() {
    topo_cli "$1" SENTINEL get-master-addr-by-name "$SENT_NAME" 2>/dev/null | sed -n 2p
}

topo_sentinel_master() {
    local s m
    for s in $(_topo_live_sentinels); do
        m=$(_topo_sent_master "$s")
        case $m in '' | *[!0-9]*) continue ;; esac
        echo "$m"
        return 0
    done
    return 1
}

# _topo_sent_agree_not OLD — every live sentinel names the same master, not
# OLD, and that node says ROLE master. Leaves it in TOPO_LAST.
_topo_sent_agree_not() {
    local old=$1 s m first=''
    for s in $(_topo_live_sentinels); do
        m=$(_topo_sent_master "$s")
        case $m in '' | *[!0-9]*) return 1 ;; esac
        [ -z "$first" ] && first=$m
        [ "$m" = "$first" ] || return 1
    done
    [ -n "$first" ] && [ "$first" != "$old" ] || return 1
    [ "$(topo_role "$first")" = master ] || return 1
    # The failover is over, not just past the promotion (during which the
    # leader already names the promoted replica), and nobody else is trying.
    for s in $(_topo_live_sentinels); do
        [ "$(topo_cli "$s" SENTINEL master "$SENT_NAME" 2>/dev/null | _topo_field flags)" = master ] || return 1
    done
    TOPO_LAST=$first
}

# _topo_sent_roles NEWMASTER — MASTER_PORT and REPLICA_PORTS after a change.
_topo_sent_roles() {
    local p
    MASTER_PORT=$1
    REPLICA_PORTS=
    for p in $TOPO_DATA_PORTS; do
        [ "$p" = "$MASTER_PORT" ] || REPLICA_PORTS="$REPLICA_PORTS${REPLICA_PORTS:+ }$p"
    done
}

topo_sentinel_wait_master_change() {
    local old=$1 secs=${2:-20}
    if ! wait_for "$secs" _topo_sent_agree_not "$old"; then
        _topo_say "the sentinels did not agree on a new master (other than $old) in $secs s"
        return 1
    fi
    _topo_sent_roles "$TOPO_LAST"
}

_topo_sent_failover_cmd() {
    local s out
    for s in $(_topo_live_sentinels); do
        out=$(topo_cli "$s" SENTINEL FAILOVER "$SENT_NAME" 2>&1)
        [ "$out" = OK ] && return 0
        TOPO_FAILOVER_ERR=$out
    done
    return 1
}

topo_sentinel_failover() {
    local secs=${1:-15} old
    old=$(topo_sentinel_master) || { _topo_say "no sentinel names a master"; return 1; }
    # NOGOODSLAVE right after a previous change: the sentinels have not yet
    # seen a healthy replica; try again for a few seconds.
    TOPO_FAILOVER_ERR=
    if ! wait_for 5 _topo_sent_failover_cmd; then
        _topo_say "SENTINEL FAILOVER refused: $TOPO_FAILOVER_ERR"
        return 1
    fi
    topo_sentinel_wait_master_change "$old" "$secs"
}

topo_sentinel_wait_synced() {
    local secs=${1:-30}
    if ! wait_for "$secs" _topo_sentinel_ready; then
        _topo_say "the group did not settle around master $MASTER_PORT in $secs s"
        _topo_sentinel_explain >&2
        return 1
    fi
}

# _topo_sentinel_explain — what each node and sentinel says (for failures).
_topo_sentinel_explain() {
    local p out
    for p in $REPLICA_PORTS; do
        _topo_alive "$p" || { echo "#   $p: not running"; continue; }
        echo "#   $p: role $(topo_role "$p"), master_port $(_topo_master_of "$p"), $(topo_cli "$p" INFO replication 2>/dev/null | tr -d '\r' | grep -E '^master_link_status:')"
    done
    for p in $(_topo_live_sentinels); do
        out=$(topo_cli "$p" SENTINEL replicas "$SENT_NAME" 2>&1)
        echo "#   sentinel $p: master $(_topo_sent_master "$p"); replicas (name flags link):" \
            "$(paste -d' ' <(_topo_field name <<<"$out") <(_topo_field flags <<<"$out") <(_topo_field master-link-status <<<"$out") | tr '\n' ';')" \
            "sentinels: $(_topo_field flags <<<"$(topo_cli "$p" SENTINEL sentinels "$SENT_NAME" 2>&1)" | tr '\n' ' ')"
    done
}

topo_sentinel_stop() {
    local p
    for p in $SENT_PORTS $TOPO_DATA_PORTS; do
        _topo_alive "$p" && topo_kill "$p"
    done
    return 0
}

# --- Cluster ----------------------------------------------------------------

# _topo_cluster_port — a port P < 55535 with P and P+10000 both free,
# picked at random from 25000-55534: like free_port's ports, not the round
# numbers (16379, 17000, 20000...) that people and stale clients use.
_topo_cluster_port() {
    "$PY" - <<'EOF'
import random, socket
for _ in range(200):
    p = random.randint(25000, 55534)
    if p in (26379, 36379):
        continue
    socks = []
    try:
        for q in (p, p + 10000):
            s = socket.socket()
            s.bind(("127.0.0.1", q))
            socks.append(s)
    except OSError:
        continue
    finally:
        for s in socks:
            s.close()
    print(p)
    break
EOF
}

_topo_cluster_node() {
    local port n
    for _ in 1 2 3 4 5; do
        port=$(_topo_cluster_port)
        [ -n "$port" ] || continue
        n=$((TOPO_SEQ + 1))
        # (A node that loads keys of unassigned slots claims those slots.)
        if _topo_spawn "$port" '' --port "$port" --bind 127.0.0.1 \
            --save '' --appendonly no --dir "$TMP" --daemonize no \
            --dbfilename "TOPO$n.rdb" --repl-diskless-sync-delay 0 \
            --logfile "$TMP/TOPO$n.log" \
            --cluster-enabled yes --cluster-config-file "$TMP/TOPO$n-nodes.conf" \
            --cluster-node-timeout "${TOPO_CLUSTER_NODE_TIMEOUT:-1000}"; then
            TOPO_LAST=$port
            return 0
        fi
    done
    return 1
}

_topo_cluster_live() {
    local p
    for p in $CLUSTER_PORTS; do _topo_alive "$p" && echo "$p"; done
}

# _topo_nodes — CLUSTER NODES from the first live node that answers.
_topo_nodes() {
    local p out
    for p in $(_topo_cluster_live); do
        out=$(topo_cli "$p" CLUSTER NODES 2>/dev/null) || continue
        [ -n "$out" ] || continue
        printf '%s\n' "$out"
        return 0
    done
    return 1
}

# _topo_map — the slot map as one node sees it, in a form to compare:
# "M id slots..." for masters, "S id masterid" for replicas, sorted. The
# node's own [slot->-id] migration markers and fail flags are left out.
_topo_map() {
    topo_cli "$1" CLUSTER NODES 2>/dev/null | tr -d '\r' | awk '
        NF >= 8 {
            if ($3 ~ /master/) {
                s = ""
                for (i = 9; i <= NF; i++) if ($i !~ /^\[/) s = s " " $i
                print "M " $1 s
            } else if ($3 ~ /slave/) print "S " $1 " " $4
        }' | sort
}

_topo_cluster_ok() {
    local p first='' m info n
    n=$(wc -w <<<"$CLUSTER_PORTS")
    for p in $(_topo_cluster_live); do
        info=$(topo_cli "$p" CLUSTER INFO 2>/dev/null | tr -d '\r')
        grep -qx 'cluster_state:ok' <<<"$info" || return 1
        # Exactly our nodes: a foreign node that got in shows up here.
        grep -qx "cluster_known_nodes:$n" <<<"$info" || return 1
        m=$(_topo_map "$p")
        [ -n "$m" ] || return 1
        if [ -z "$first" ]; then first=$m; elif [ "$m" != "$first" ]; then return 1; fi
        if [ "$(topo_role "$p")" = slave ]; then _topo_link_up "$p" || return 1; fi
    done
    [ -n "$first" ]
}

topo_cluster_wait_ok() {
    local secs=${1:-20}
    if ! wait_for "$secs" _topo_cluster_ok; then
        _topo_say "the cluster is not ok (or its nodes disagree on the slot map) after $secs s"
        return 1
    fi
}

# _topo_cluster_fresh PORT — the node knows only itself, serves no slot and
# holds no key (a safety net: see --dbfilename above).
_topo_cluster_fresh() {
    local info
    info=$(topo_cli "$1" CLUSTER INFO 2>/dev/null | tr -d '\r')
    grep -qx 'cluster_known_nodes:1' <<<"$info" &&
        grep -qx 'cluster_slots_assigned:0' <<<"$info" &&
        [ "$(topo_cli "$1" DBSIZE 2>/dev/null | tr -d '\r')" = 0 ]
}

topo_cluster_start() {
    local secs=${1:-30} i p seeds=() out attempt
    for attempt in 1 2 3; do
        CLUSTER_PORTS='' seeds=()
        for i in 1 2 3 4 5 6; do
            _topo_cluster_node || { _topo_say "cannot start cluster node $i"; return 1; }
            CLUSTER_PORTS="$CLUSTER_PORTS${CLUSTER_PORTS:+ }$TOPO_LAST"
        done
        for p in $CLUSTER_PORTS; do
            seeds+=("127.0.0.1:$p")
            TOPO_CID[$p]=$(topo_cli "$p" CLUSTER MYID | tr -d '\r')
        done
        out=''
        for p in $CLUSTER_PORTS; do
            _topo_cluster_fresh "$p" ||
                out="node $p is not fresh: $(topo_cli "$p" DBSIZE 2>&1) keys; $(topo_cli "$p" CLUSTER INFO 2>&1 | grep -E 'known_nodes|slots_assigned' | tr -d '\r' | tr '\n' ' ')"
        done
        if [ -z "$out" ] && out=$(timeout "$secs" "${TOPO_NICE[@]}" redis-cli --cluster create "${seeds[@]}" \
            --cluster-replicas 1 --cluster-yes </dev/null 2>&1); then
            printf '%s\n' "$out" >"$TMP/topo-cluster-create.log"
            CLUSTER_URL="redis-cluster://${seeds[0]},${seeds[1]},${seeds[2]}"
            topo_cluster_wait_ok "$secs"
            return
        fi
        _topo_say "cluster attempt $attempt failed, trying new ports:"
        printf '%s\n' "$out" | sed 's/\x1b\[[0-9;]*m//g' | grep -v '^ *$' | tail -3 | sed 's/^/#   /' >&2
        for p in $CLUSTER_PORTS; do
            topo_cli "$p" CLUSTER NODES 2>/dev/null | sed "s/^/#   $p knows: /" >&2
            topo_kill "$p"
        done
    done
    _topo_say "redis-cli --cluster create failed 3 times"
    return 1
}

_topo_any_cluster_port() { _topo_cluster_live | head -1; }

topo_cluster_slot_of() {
    topo_cli "$(_topo_any_cluster_port)" CLUSTER KEYSLOT "$1" | tr -d '\r'
}

# _topo_port_of_addr "127.0.0.1:7000@17000" -> 7000
_topo_port_of_addr() { local a=${1%@*}; echo "${a##*:}"; }

topo_cluster_owner() {
    local slot=$1
    _topo_nodes | tr -d '\r' | awk -v s="$slot" '
        $3 ~ /master/ && $3 !~ /fail/ {
            for (i = 9; i <= NF; i++) {
                if ($i ~ /^\[/) continue
                n = split($i, r, "-")
                lo = r[1] + 0; hi = (n == 2 ? r[2] : r[1]) + 0
                if (s + 0 >= lo && s + 0 <= hi) { print $2; exit }
            }
        }' | { read -r a && _topo_port_of_addr "$a"; }
}

topo_cluster_masters() {
    _topo_nodes | tr -d '\r' | awk '$3 ~ /master/ && $3 !~ /fail/ && NF >= 9 { print $2 }' |
        while read -r a; do _topo_port_of_addr "$a"; done
}

topo_cluster_replica_of() {
    local id=${TOPO_CID[$1]:-}
    [ -n "$id" ] || { _topo_say "no cluster node of ours on port $1"; return 1; }
    _topo_nodes | tr -d '\r' | awk -v m="$id" '$3 ~ /slave/ && $3 !~ /fail/ && $4 == m { print $2 }' |
        { read -r a && _topo_port_of_addr "$a"; }
}

topo_cluster_nonowner() {
    local owner m
    owner=$(topo_cluster_owner "$1") || return 1
    for m in $(topo_cluster_masters); do
        [ "$m" != "$owner" ] && { echo "$m"; return 0; }
    done
    return 1
}

# _topo_ok_reply WHAT CMD... — run CMD; complain unless it answered OK.
_topo_ok_reply() {
    local what=$1 out; shift
    out=$("$@" 2>&1 | tr -d '\r')
    [ "$out" = OK ] && return 0
    _topo_say "$what: $out"
    return 1
}

topo_cluster_migrate_begin() {
    local slot=$1 from=$2 to=$3
    _topo_ok_reply "SETSLOT $slot IMPORTING on $to" \
        topo_cli "$to" CLUSTER SETSLOT "$slot" IMPORTING "${TOPO_CID[$from]}" || return 1
    _topo_ok_reply "SETSLOT $slot MIGRATING on $from" \
        topo_cli "$from" CLUSTER SETSLOT "$slot" MIGRATING "${TOPO_CID[$to]}" || return 1
}

topo_cluster_migrate_finish() {
    local slot=$1 from=$2 to=$3
    local keys _ m out pw auth=()
    pw=${TOPO_PASS[$to]:-}
    [ -n "$pw" ] && auth=(AUTH "$pw")
    # Bounded: at most 1000 rounds of 100 keys.
    for _ in $(seq 1 1000); do
        mapfile -t keys < <(topo_cli "$from" CLUSTER GETKEYSINSLOT "$slot" 100 | tr -d '\r')
        if [ ${#keys[@]} = 0 ] || [ -z "${keys[0]}" ]; then break; fi
        out=$(topo_cli "$from" MIGRATE 127.0.0.1 "$to" "" 0 5000 "${auth[@]}" KEYS "${keys[@]}" 2>&1 | tr -d '\r')
        case $out in
            OK | NOKEY) ;;
            *) _topo_say "MIGRATE slot $slot $from -> $to: $out"; return 1 ;;
        esac
    done
    # The target first, then the source (so that it stops redirecting with
    # ASK), then every other master.
    _topo_ok_reply "SETSLOT $slot NODE on $to" \
        topo_cli "$to" CLUSTER SETSLOT "$slot" NODE "${TOPO_CID[$to]}" || return 1
    _topo_ok_reply "SETSLOT $slot NODE on $from" \
        topo_cli "$from" CLUSTER SETSLOT "$slot" NODE "${TOPO_CID[$to]}" || return 1
    for m in $(topo_cluster_masters); do
        [ "$m" = "$to" ] || [ "$m" = "$from" ] && continue
        _topo_ok_reply "SETSLOT $slot NODE on $m" \
            topo_cli "$m" CLUSTER SETSLOT "$slot" NODE "${TOPO_CID[$to]}" || return 1
    done
    topo_cluster_wait_ok
}

topo_cluster_migrate_slot() {
    topo_cluster_migrate_begin "$@" && topo_cluster_migrate_finish "$@"
}

# _topo_swapped OLDMASTER NEWMASTER
_topo_swapped() {
    [ "$(topo_role "$2")" = master ] || return 1
    if _topo_alive "$1"; then [ "$(topo_role "$1")" = slave ] || return 1; fi
    _topo_cluster_ok
}

topo_cluster_failover() {
    local port=$1 mode=() secs=20 r
    shift
    case ${1:-} in force | takeover) mode=("${1^^}"); shift ;; esac
    [ $# -gt 0 ] && secs=$1
    r=$(topo_cluster_replica_of "$port")
    if [ -z "$r" ]; then _topo_say "the master at $port has no replica"; return 1; fi
    _topo_ok_reply "CLUSTER FAILOVER ${mode[*]} on $r" topo_cli "$r" CLUSTER FAILOVER "${mode[@]}" || return 1
    if ! wait_for "$secs" _topo_swapped "$port" "$r"; then
        _topo_say "failover of $port to $r: roles not swapped / cluster not ok in $secs s"
        return 1
    fi
    TOPO_LAST=$r
}
