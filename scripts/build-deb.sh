#!/usr/bin/env bash
# build-deb.sh [OUTDIR] — build the Debian package the way a clean clone
# would, check it, and leave it in OUTDIR (default build/deb/).
#
#   1. copies the tree (tracked and untracked files git does not ignore) to a
#      temporary directory, so the build leaves nothing behind here;
#   2. dpkg-buildpackage -us -uc -b there (no tests: debian/rules skips them);
#   3. lintian on the .deb: any error fails; warnings are printed;
#   4. checks the .deb holds /usr/bin/redlock-run (which runs), the man page
#      and the bash, zsh and fish completions.
#
# Needs: scripts/deps.sh package, and the Build-Depends of debian/control
# (apt-get build-dep ./). Prints how long each part took.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/build/deb}
work=$(mktemp -d "${TMPDIR:-/tmp}/redlock-run-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT
t0=$(date +%s)
lap() { echo "build-deb.sh: $* ($(( $(date +%s) - t0 )) s)"; }

src=$work/redlock-run
mkdir -p "$src"
(cd "$top" && git ls-files -z -co --exclude-standard --deduplicate |
    while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
    tar -c --null -T - -f -) | tar -x -C "$src"

(cd "$src" && dpkg-checkbuilddeps)
(cd "$src" && nice dpkg-buildpackage -us -uc -b >"$work/build.log" 2>&1) || {
    tail -40 "$work/build.log" >&2
    echo "build-deb.sh: dpkg-buildpackage failed" >&2
    exit 1
}
deb=$(ls "$work"/redlock-run_*.deb)
lap "built $(basename "$deb")"

# Errors fail; warnings and pedantic notes are shown, not fatal.
lintian --fail-on error --display-info --pedantic "$deb" 2>&1 | grep -v 'running with root privileges' | tee "$work/lintian.txt" || true
if ! lintian --fail-on error "$deb" >/dev/null 2>&1; then
    echo "build-deb.sh: lintian reports errors" >&2
    exit 1
fi
lap "lintian: $(grep -c '^E:' "$work/lintian.txt" || true) errors, $(grep -c '^W:' "$work/lintian.txt" || true) warnings, $(grep -c '^[IP]:' "$work/lintian.txt" || true) notes"

contents=$(dpkg-deb -c "$deb" | awk '{ print $NF }' | sed 's#^\./#/#')
for p in /usr/bin/redlock-run /usr/share/man/man1/redlock-run.1.gz \
         /usr/share/bash-completion/completions/redlock-run \
         /usr/share/zsh/vendor-completions/_redlock-run \
         /usr/share/fish/vendor_completions.d/redlock-run.fish \
         /usr/share/doc/redlock-run/copyright \
         /usr/share/doc/redlock-run/examples/crontab; do
    grep -qxF "$p" <<<"$contents" || { echo "build-deb.sh: $p is not in the package" >&2; exit 1; }
done
dpkg-deb -x "$deb" "$work/root"
"$work/root/usr/bin/redlock-run" --version >/dev/null ||
    { echo "build-deb.sh: the packaged binary does not run" >&2; exit 1; }

mkdir -p "$out"
cp "$work"/redlock-run_*.deb "$out/"
lap "checked; $(ls "$out"/redlock-run_*.deb | tr '\n' ' ')"
