#!/usr/bin/env bash
# t_static.sh — the static binaries (scripts/static-build, `make static`)
# where users run them:
#   * in an empty root: only the binary, the command and Debian's
#     busybox-static (no libc, no /etc, no /proc), as a `scratch` image
#     without a runtime's mounts: a lock, a rediss:// lock verified
#     against a CA (and refused against another CA), --status and --list;
#   * the aarch64 binary the same under qemu-aarch64-static, copied into
#     the root (no binfmt needed);
#   * examples/Dockerfile's image (scripts/image-root) running the command
#     of examples/kubernetes-cronjob.yml as PID 1 of its own PID namespace
#     (unshare --pid --fork --mount-proc), stopped by SIGTERM as the
#     kubelet stops a pod: the command gets it, the lock is released on all
#     three servers and the record says the run failed of signal 15.
# The binaries come from scripts/static-build's cache: the test links them
# when the libraries are cached (about a minute) and skips an architecture
# whose libraries are not (their first build compiles OpenSSL: `make
# static`). RR_STATIC=0 leaves the file out, and RR_STATIC_IF_CACHED=1
# (.ci/run) an architecture that is not cached: skips that were asked for.
# shellcheck disable=SC2016  # commands for the root's shell
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

ARCHS=(x86_64 aarch64)
CHROOT=$(command -v chroot || echo /usr/sbin/chroot)
UNSHARE=$(command -v unshare || echo /usr/bin/unshare)

# ready ARCH — build-static/ARCH/redlock-run is there (linked now from the
# cache if needed); sets WHY when not.
ready() {
    WHY='' ASKED=0
    if [ "${RR_STATIC:-1}" = 0 ]; then WHY="RR_STATIC=0"; return 1; fi
    [ "$(id -u)" = 0 ] || { WHY="chroot needs root"; return 1; }
    [ -x /bin/busybox ] || { WHY="/bin/busybox missing (busybox-static)"; return 1; }
    if [ "$1" = aarch64 ] && ! command -v qemu-aarch64-static >/dev/null; then
        WHY="qemu-aarch64-static missing (qemu-user-static)"; return 1
    fi
    env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL "$TOP/scripts/static-build" --if-cached "$1" \
        >"$TMP/build-$1.log" 2>&1 || { WHY="static-build failed: $(tail -1 "$TMP/build-$1.log")"; return 1; }
    if grep -q 'not cached' "$TMP/build-$1.log"; then
        WHY="the $1 static libraries are not cached: run 'make static ARCH=$1' once"
        [ "${RR_STATIC_IF_CACHED:-0}" = 1 ] && ASKED=1
        return 1
    fi
    [ -x "$TOP/build-static/$1/redlock-run" ] || { WHY="no build-static/$1/redlock-run"; return 1; }
}

# skip_case — the current case skips for $WHY (a skip asked for under
# RR_STATIC=0, or RR_STATIC_IF_CACHED=1 when not cached).
skip_case() {
    if [ "${RR_STATIC:-1}" = 0 ] || [ "$ASKED" = 1 ]; then skip_asked "$WHY"; else skip "$WHY"; fi
}

# in_root ARCH ROOT CMD... — CMD run in ROOT (chroot), the aarch64 binary
# through the qemu copied into ROOT; output in $OUT/$ERR, status in RC.
in_root() {
    local arch=$1 root=$2
    shift 2
    local q=()
    [ "$arch" = aarch64 ] && q=(/qemu-aarch64)
    rc env -i timeout 60 "$CHROOT" "$root" "${q[@]}" "$@" >"$OUT" 2>"$ERR"
}

pki_node || { t "make certificates"; fail "openssl could not make the test certificates"; done_testing; exit 1; }
start_redis S || { t "start redis"; fail "cannot start redis-server"; done_testing; exit 1; }
start_tls T s || { t "start TLS redis"; fail "cannot start a TLS redis-server"; done_testing; exit 1; }

for arch in "${ARCHS[@]}"; do
    t "$arch: the static binary is static (no interpreter, no NEEDED)"
    if ! ready "$arch"; then skip_case; continue; fi
    B=$TOP/build-static/$arch/redlock-run
    assert_contains "$(file -b "$B")" "statically linked" "file(1)"
    assert_eq "" "$(readelf -l "$B" | grep INTERP)" "a program interpreter"
    assert_eq "" "$(readelf -d "$B" 2>/dev/null | grep NEEDED)" "NEEDED libraries"
    end_test

    # The root: the binary, busybox (the command's shell), the CA; no /etc.
    root=$TMP/root-$arch
    mkdir -p "$root/bin"
    cp "$B" "$root/redlock-run"
    cp /bin/busybox "$root/bin/busybox"
    ln -s busybox "$root/bin/sh"
    cp "$PKI/ca.crt" "$root/ca.crt"
    cp "$PKI/other.crt" "$root/other.crt"
    [ "$arch" = aarch64 ] && cp "$(command -v qemu-aarch64-static)" "$root/qemu-aarch64"
    job=static-$arch

    t "$arch: a lock in an empty root (the binary, busybox; no libc, no /etc)"
    in_root "$arch" "$root" /redlock-run -r "$S_URL" "$job" -- /bin/sh -c 'echo ran >/ran'
    assert_eq 0 "$RC" "exit status ($(head -c 300 "$ERR"))"
    assert_eq ran "$(cat "$root/ran" 2>/dev/null)" "the command's mark"
    assert_key_gone S "$(k_lock "$job")"
    assert_hash S "$(k_state "$job")" status succeeded
    end_test

    t "$arch: a rediss:// lock, the server's certificate verified against --tls-ca"
    rm -f "$root/ran"
    in_root "$arch" "$root" /redlock-run -r "$T_IPURL" --tls-ca /ca.crt "$job-tls" -- /bin/sh -c 'echo ran >/ran'
    assert_eq 0 "$RC" "exit status ($(head -c 300 "$ERR"))"
    assert_eq ran "$(cat "$root/ran" 2>/dev/null)" "the command's mark"
    assert_key_gone T "$(k_lock "$job-tls")"
    assert_hash T "$(k_state "$job-tls")" status succeeded
    end_test

    t "$arch: rediss:// with another CA is refused; the command does not run"
    rm -f "$root/ran"
    in_root "$arch" "$root" /redlock-run -r "$T_IPURL" --tls-ca /other.crt "$job-tls" -- /bin/sh -c 'echo ran >/ran'
    assert_ne 0 "$RC" "exit status"
    assert_contains "$(cat "$ERR")" "certificate" "the message"
    assert_no_file "$root/ran" "the command's mark"
    end_test

    t "$arch: --status and --list in the empty root"
    in_root "$arch" "$root" /redlock-run -r "$S_URL" --status "$job"
    assert_eq 0 "$RC" "--status's exit status ($(head -c 300 "$ERR"))"
    assert_contains "$(cat "$OUT")" "succeeded" "--status"
    in_root "$arch" "$root" /redlock-run -r "$S_URL" --list
    assert_eq 0 "$RC" "--list's exit status ($(head -c 300 "$ERR"))"
    assert_contains "$(cat "$OUT")" "$job" "--list"
    end_test
done

# ---------------------------------------------------------------------------
# examples/Dockerfile's image and examples/kubernetes-cronjob.yml's command.

t "the Kubernetes example's command as PID 1 of the image; SIGTERM as at a pod's deletion"
if ! ready x86_64; then
    skip_case
elif ! "$PY" -c 'import yaml' 2>/dev/null; then
    skip "python3-yaml missing (scripts/deps.sh test installs it)"
else
    # The image is what examples/Dockerfile's last stage copies: the /out
    # that scripts/image-root makes in its build stage.
    D=$TOP/examples/Dockerfile
    assert_contains "$(grep -E '^ *scripts/image-root /out' "$D")" "image-root /out" "the Dockerfile's build stage"
    assert_eq "FROM scratch|COPY --from=build /out/ /" \
        "$(sed -n '/^FROM scratch/,$p' "$D" | grep -E '^(FROM|COPY|RUN|ADD)' | paste -sd '|' -)" \
        "the Dockerfile's last stage"
    img=$TMP/image
    "$TOP/scripts/image-root" "$img" x86_64 >"$TMP/image.log" 2>&1 ||
        fail "scripts/image-root: $(tail -2 "$TMP/image.log")"
    # The job the example's image runs (your image's own command): it
    # records the TERM it gets, then dies of it.
    mkdir -p "$img/opt/pay/bin"
    cat >"$img/opt/pay/bin/settle" <<'EOF'
#!/bin/sh
trap 'echo TERM >/tmp/got-term; trap - TERM; kill -TERM $$' TERM
echo $$ >/tmp/started
while :; do sleep 1; done
EOF
    chmod +x "$img/opt/pay/bin/settle"
    pw=k8s-secret
    start_redis K1 --requirepass "$pw" && start_redis K2 --requirepass "$pw" &&
        start_redis K3 --requirepass "$pw" || fail "cannot start three redis-servers"
    # The container's command and env, as the example writes them; the
    # Secret's value and the three lock servers are the test's.
    "$PY" - "$TOP/examples/kubernetes-cronjob.yml" >"$TMP/k8s.cmd" <<'PY'
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
c = d["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]
for e in c.get("env", []):
    if "value" in e:
        print("env", e["name"], e["value"])
    else:
        print("secret", e["name"])
for a in c["command"]:
    print("arg", a)
PY
    envs=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOSTNAME=settle-29000000-abcde)
    cmd=()
    while read -r kind name value; do
        case $kind in
            env) [ "$name" = REDLOCK_URL ] && value="$K1_URL,$K2_URL,$K3_URL"
                 envs+=("$name=$value") ;;
            secret) [ "$name" = REDLOCK_PASSWORD ] && envs+=("$name=$pw") ;;
            arg) cmd+=("$name${value:+ $value}") ;;
        esac
    done <"$TMP/k8s.cmd"
    assert_eq redlock-run "${cmd[0]}" "the example's command"
    job=settle
    for ((i = 1; i < ${#cmd[@]}; i++)); do [ "${cmd[i]}" = -- ] && job=${cmd[i - 1]}; done
    # PID 1 of a new PID namespace, /proc of that namespace mounted in the
    # image's root, as a container runtime sets it up.
    mkdir -p "$img/proc"
    env -i "${envs[@]}" "$UNSHARE" --pid --fork --mount --root="$img" --mount-proc \
        "${cmd[@]}" >"$TMP/pid1.out" 2>"$TMP/pid1.err" &
    u=$!
    track_pid "$u"
    wait_for 10 test -s "$img/tmp/started" || fail "the job did not start: $(tail -2 "$TMP/pid1.err")"
    pid1=$(pgrep -P "$u" | head -1)
    assert_eq 1 "$(awk '/^NSpid:/ { print $3 }' "/proc/$pid1/status" 2>/dev/null)" "its PID in its namespace"
    assert_eq "$img/usr/local/bin/redlock-run" "$(readlink "/proc/$pid1/exe" 2>/dev/null)" "PID 1's program"
    for k in K1 K2 K3; do
        assert_eq 1 "$(R "$k" EXISTS "$(k_lock "$job")")" "the lock on $k while it runs"
    done
    # The kubelet: SIGTERM to the container's PID 1, SIGKILL after the grace period.
    kill -TERM "$pid1"
    wait_for 30 pid_gone "$u" || { kill -KILL "$pid1" 2>/dev/null; fail "PID 1 still runs 30 s after SIGTERM"; }
    wait "$u"
    RC=$?
    assert_eq 143 "$RC" "the container's exit status ($(head -c 300 "$TMP/pid1.err"))"
    assert_eq TERM "$(cat "$img/tmp/got-term" 2>/dev/null)" "the job got SIGTERM"
    for k in K1 K2 K3; do
        assert_key_gone "$k" "$(k_lock "$job")"
        assert_hash "$k" "$(k_state "$job")" status failed
        assert_hash "$k" "$(k_state "$job")" signal 15
    done
    rc env -i REDLOCK_URL="$K1_URL,$K2_URL,$K3_URL" REDLOCK_PASSWORD=$pw \
        "$CHROOT" "$img" /usr/local/bin/redlock-run --status "$job" >"$OUT" 2>"$ERR"
    assert_contains "$(cat "$OUT")" "15" "--status after the pod's deletion"
    end_test
fi

done_testing
