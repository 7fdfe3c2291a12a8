# shellcheck shell=bash
# cluster_lib.sh — a throwaway Redis Cluster for t_cluster.sh (sourced after
# lib.sh): six nodes C1..C6, three masters with a replica each.
# (lib_topo.sh on the topo branch will offer the same; switch when it lands.)

# cl_ports N — N free ports below 55535 whose bus port (+10000) is free too.
cl_ports() {
    "$PY" - "$1" <<'PYEOF'
import random, socket, sys
n, out = int(sys.argv[1]), []
def free(p):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p)); return True
    except OSError:
        return False
    finally:
        s.close()
while len(out) < n:
    p = random.randrange(20000, 45000)
    if p not in out and free(p) and free(p + 10000):
        out.append(p)
print(" ".join(map(str, out)))
PYEOF
}

CL_NODES=(C1 C2 C3 C4 C5 C6)

# cl_start — start the nodes and create the cluster; 0 when it is ok.
cl_start() {
    local ports i p addrs=()
    read -r -a ports <<<"$(cl_ports 6)"
    for i in 0 1 2 3 4 5; do
        p=${ports[$i]}
        spawn_redis "${CL_NODES[$i]}" "$p" --cluster-enabled yes \
            --cluster-config-file "$TMP/nodes-$p.conf" --cluster-node-timeout 1000 \
            --cluster-replica-validity-factor 0 --dbfilename "dump-$p.rdb" || return 1
        SERVERS+=("${CL_NODES[$i]}")
        addrs+=("127.0.0.1:$p")
    done
    timeout 60 redis-cli --cluster create "${addrs[@]}" --cluster-replicas 1 \
        --cluster-yes >"$TMP/cluster-create.log" 2>&1 || return 1
    wait_for 30 cl_all_ok || return 1
    CL_SEEDS=$(IFS=,; echo "${addrs[*]}")
}

cl_all_ok() {
    local n
    for n in "${CL_NODES[@]}"; do
        cl_alive "$n" || continue
        R "$n" CLUSTER INFO 2>/dev/null | grep -q '^cluster_state:ok' || return 1
    done
    # Every replica in sync with its master.
    for n in "${CL_NODES[@]}"; do
        cl_alive "$n" || continue
        if R "$n" ROLE 2>/dev/null | head -1 | grep -q slave; then
            R "$n" INFO replication | grep -q 'master_link_status:up' || return 1
        fi
    done
}

cl_alive() { local pv="${1}_PID"; ! pid_gone "${!pv}"; }

# cl_name_of PORT — C1..C6.
cl_name_of() {
    local n pv
    for n in "${CL_NODES[@]}"; do
        pv="${n}_PORT"
        [ "${!pv}" = "$1" ] && { echo "$n"; return 0; }
    done
    return 1
}

# cl_any — a live node to ask.
cl_any() {
    local n
    for n in "${CL_NODES[@]}"; do cl_alive "$n" && { echo "$n"; return 0; }; done
}

# cl_owner SLOT [ASK_NODE] — the name of the master that serves SLOT, as
# ASK_NODE (default: any live node) sees it.
cl_owner() {
    local who=${2:-$(cl_any)} port
    port=$(R "$who" CLUSTER NODES | awk -v s="$1" '
        $3 ~ /master/ && $3 !~ /fail/ {
            for (i = 9; i <= NF; i++) {
                split($i, r, "-"); if (r[2] == "") r[2] = r[1]
                if ($i !~ /^\[/ && s + 0 >= r[1] + 0 && s + 0 <= r[2] + 0) {
                    split($2, a, "[:@]"); print a[2]; exit
                }
            }
        }')
    cl_name_of "$port"
}

# cl_id NAME — its node id.
cl_id() { R "$1" CLUSTER MYID; }

# cl_replica_of NAME — the name of a replica of that master.
cl_replica_of() {
    local id port
    id=$(cl_id "$1")
    port=$(R "$1" CLUSTER NODES | awk -v id="$id" '$4 == id && $3 !~ /fail/ { split($2, a, "[:@]"); print a[2]; exit }')
    cl_name_of "$port"
}

# cl_other_master NAME — a master other than NAME.
cl_other_master() {
    local port
    port=$(R "$1" CLUSTER NODES | awk '$3 ~ /master/ && $3 !~ /myself/ && $3 !~ /fail/ && NF >= 9 { split($2, a, "[:@]"); print a[2]; exit }')
    cl_name_of "$port"
}

# cl_url NAME... — a redis-cluster:// URL with those nodes as seeds.
cl_url() {
    local n pv list=()
    for n in "$@"; do pv="${n}_PORT"; list+=("127.0.0.1:${!pv}"); done
    echo "redis-cluster://$(IFS=,; echo "${list[*]}")"
}

# cl_slot KEY — the hash slot, from a node.
cl_slot() { R "$(cl_any)" CLUSTER KEYSLOT "$1"; }

# cl_migrate_begin SLOT FROM TO — IMPORTING on TO, MIGRATING on FROM.
cl_migrate_begin() {
    R "$3" CLUSTER SETSLOT "$1" IMPORTING "$(cl_id "$2")" >/dev/null &&
    R "$2" CLUSTER SETSLOT "$1" MIGRATING "$(cl_id "$3")" >/dev/null
}

# cl_migrate_keys SLOT FROM TO — MIGRATE every key of SLOT.
cl_migrate_keys() {
    local keys tp="${3}_PORT"
    while :; do
        mapfile -t keys < <(R "$2" CLUSTER GETKEYSINSLOT "$1" 100)
        [ "${#keys[@]}" -gt 0 ] && [ -n "${keys[0]}" ] || return 0
        R "$2" MIGRATE 127.0.0.1 "${!tp}" "" 0 5000 KEYS "${keys[@]}" >/dev/null || return 1
    done
}

# cl_migrate_finish SLOT FROM TO — SETSLOT NODE on both, then the rest.
cl_migrate_finish() {
    local id n
    id=$(cl_id "$3")
    R "$3" CLUSTER SETSLOT "$1" NODE "$id" >/dev/null
    R "$2" CLUSTER SETSLOT "$1" NODE "$id" >/dev/null
    for n in "${CL_NODES[@]}"; do
        [ "$n" = "$2" ] || [ "$n" = "$3" ] && continue
        cl_alive "$n" && R "$n" CLUSTER SETSLOT "$1" NODE "$id" >/dev/null 2>&1
    done
    return 0
}
