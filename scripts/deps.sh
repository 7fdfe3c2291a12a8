#!/usr/bin/env bash
# deps.sh MODE — install the Debian packages redlock-run needs, only the
# missing ones.
#
#   build   gcc libc6-dev make pkg-config libhiredis-dev libuv1-dev libssl-dev
#           (libc6-dev by name: it is only gcc's Recommends, which
#           --no-install-recommends leaves out on a minimal system)
#   test    build + check redis-server redis-tools redis-sentinel python3
#           procps time openssl cron (t_cron.sh) python3-yaml groff-base
#           bash-completion (t_examples.sh, t_completions.sh) strace
#           (t_lease.sh: a slow vfork/exec, a missing close_range)
#           universal-ctags (scripts/check-layers, from t_docs.sh: no
#           function over 120 lines) faketime (t_once.sh: a host whose
#           clock is a day off; scripts/chaos: skewed hosts) python3-redis (t_app.sh: redis-py's Lock,
#           an application sharing the job's lock)
#   package build-essential debhelper devscripts lintian fakeroot dpkg-dev
#           (the Debian package: .ci/run builds it with dpkg-buildpackage)
#   static  musl-tools dpkg-dev cmake perl file busybox-static qemu-user-static
#           gcc-aarch64-linux-gnu libc6-dev-arm64-cross linux-libc-dev-arm64-cross
#           (make static, scripts/static-build; t_static.sh runs its binaries
#           in an empty root with busybox, aarch64's under qemu)
#   ci      test + package + static + valgrind clang zsh fish systemd (the
#           completions' syntax and fish's answers; systemd-analyze verify),
#           and promtool out of Debian's prometheus package (see below)
#   bench   test + hyperfine etcd-server etcd-client gnuplot-nox
#
# Quiet when nothing is missing. Runs `apt-get update` once, only when
# something is missing. Uses sudo when not root; without sudo, prints the
# command to run and exits 1.
set -euo pipefail

usage() { echo "usage: scripts/deps.sh build|test|package|static|ci|bench" >&2; exit 64; }
[ $# = 1 ] || usage

build=(gcc libc6-dev make pkg-config libhiredis-dev libuv1-dev libssl-dev)
test=("${build[@]}" check redis-server redis-tools redis-sentinel python3 procps time openssl
      cron python3-yaml groff-base bash-completion strace universal-ctags faketime python3-redis)
package=(build-essential debhelper devscripts lintian fakeroot dpkg-dev)
static=(musl-tools dpkg-dev cmake perl file busybox-static qemu-user-static
        gcc-aarch64-linux-gnu libc6-dev-arm64-cross linux-libc-dev-arm64-cross)
case $1 in
    build) want=("${build[@]}") ;;
    test) want=("${test[@]}") ;;
    package) want=("${package[@]}") ;;
    static) want=("${static[@]}") ;;
    ci) want=("${test[@]}" "${package[@]}" "${static[@]}" valgrind clang zsh fish systemd) ;;
    bench) want=("${test[@]}" hyperfine etcd-server etcd-client gnuplot-nox) ;;
    *) usage ;;
esac

if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "deps.sh: dpkg-query not found; this script knows Debian/Ubuntu only." >&2
    echo "deps.sh: install by hand: ${want[*]}" >&2
    exit 1
fi

# One dpkg-query for all of them; a package it does not know is missing.
installed=$(dpkg-query -W -f='${Package} ${Status}\n' "${want[@]}" 2>/dev/null |
    awk '$2 == "install" && $3 == "ok" && $4 == "installed" { print $1 }' || true)
missing=()
for p in "${want[@]}"; do
    grep -qxF "$p" <<<"$installed" || missing+=("$p")
done
# promtool (t_status.sh checks the metrics file with it, and must under CI)
# comes from Debian's prometheus package; installing the package would also
# start a Prometheus server, so only the tool is taken out of the .deb, into
# build/tools. Needs the package lists: after apt-get update.
promtool_from_deb() {
    local top tmp
    top=$(cd "$(dirname "$0")/.." && pwd)
    command -v promtool >/dev/null 2>&1 && return 0
    [ -x "$top/build/tools/promtool" ] && return 0
    tmp=$(mktemp -d)
    if (cd "$tmp" && apt-get download -q prometheus >/dev/null 2>&1) &&
        dpkg-deb -x "$tmp"/prometheus_*.deb "$tmp/x"; then
        mkdir -p "$top/build/tools"
        cp "$tmp/x/usr/bin/promtool" "$top/build/tools/promtool"
        echo "deps.sh: promtool taken from Debian's prometheus package into build/tools" >&2
    else
        echo "deps.sh: could not fetch Debian's prometheus package for promtool" >&2
    fi
    rm -rf "$tmp"
}

if [ ${#missing[@]} = 0 ]; then
    [ "$1" = ci ] && promtool_from_deb
    exit 0
fi

echo "deps.sh: installing ${missing[*]}" >&2
if [ "$(id -u)" = 0 ]; then
    sudo=()
elif command -v sudo >/dev/null 2>&1; then
    sudo=(sudo)
else
    echo "deps.sh: not root and no sudo; run as root:" >&2
    echo "  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${missing[*]}" >&2
    exit 1
fi

"${sudo[@]}" apt-get update
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y --no-install-recommends "${missing[@]}"
[ "$1" = ci ] && promtool_from_deb
exit 0
