#!/usr/bin/env bash
# deps.sh MODE — install the Debian packages redlock-run needs, only the
# missing ones.
#
#   build   gcc make pkg-config libhiredis-dev libuv1-dev libssl-dev
#   test    build + check redis-server redis-tools redis-sentinel python3
#           procps time openssl cron (t_cron.sh) python3-yaml groff-base
#           bash-completion (t_examples.sh, t_completions.sh)
#   package build-essential debhelper devscripts lintian fakeroot dpkg-dev
#           (the Debian package: .ci/run builds it with dpkg-buildpackage)
#   ci      test + package + valgrind clang zsh fish systemd (the
#           completions' syntax and fish's answers; systemd-analyze verify)
#   bench   test + hyperfine python3-redis etcd-server etcd-client gnuplot-nox
#
# Quiet when nothing is missing. Runs `apt-get update` once, only when
# something is missing. Uses sudo when not root; without sudo, prints the
# command to run and exits 1.
set -euo pipefail

usage() { echo "usage: scripts/deps.sh build|test|package|ci|bench" >&2; exit 64; }
[ $# = 1 ] || usage

build=(gcc make pkg-config libhiredis-dev libuv1-dev libssl-dev)
test=("${build[@]}" check redis-server redis-tools redis-sentinel python3 procps time openssl
      cron python3-yaml groff-base bash-completion)
package=(build-essential debhelper devscripts lintian fakeroot dpkg-dev)
case $1 in
    build) want=("${build[@]}") ;;
    test) want=("${test[@]}") ;;
    package) want=("${package[@]}") ;;
    ci) want=("${test[@]}" "${package[@]}" valgrind clang zsh fish systemd) ;;
    bench) want=("${test[@]}" hyperfine python3-redis etcd-server etcd-client gnuplot-nox) ;;
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
[ ${#missing[@]} = 0 ] && exit 0

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
