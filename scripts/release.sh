#!/usr/bin/env bash
# release.sh [OUTDIR] — the release tarball (`make dist`):
# OUTDIR/redlock-run-VERSION-linux-ARCH.tar.gz (default OUTDIR: build/dist).
#
#   1. builds redlock-run with libuv and hiredis linked in (STATIC=1, in
#      build-dist/, with hardening flags), and refuses a binary that needs
#      any shared library but libc;
#   2. reads the newest glibc symbol version the binary needs (objdump -T)
#      and writes it into install.sh, which checks it before installing;
#   3. packs the binary (debug info stripped), the man page, the
#      completions, README.md, the copyright files of redlock-run and of the
#      two libraries linked in, and install.sh; then unpacks the tarball
#      and runs the packed binary's --version.
#
# Build on the oldest release the tarball is for (Debian 12): a binary
# runs on that glibc and every later one, not on older ones.
set -euo pipefail

prog=release.sh
die() { echo "$prog: $*" >&2; exit 1; }

top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/build/dist}
case $out in /*) ;; *) out=$(pwd)/$out ;; esac
cd "$top"

version=$(sed -n 's/^VERSION := *//p' Makefile)
[ -n "$version" ] || die "no VERSION := line in Makefile"
arch=$(uname -m)
name=redlock-run-$version-linux-$arch
for t in objdump readelf strip; do
    command -v "$t" >/dev/null 2>&1 || die "$t is missing (binutils)"
done

work=$(mktemp -d "${TMPDIR:-/tmp}/redlock-run-dist.XXXXXX")
trap 'rm -rf "$work"' EXIT

# A make of our own: not the caller's (make check's SANITIZE or -j flags
# must not reach a release build).
bin=build-dist/redlock-run
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL nice make --no-print-directory -j2 \
    BUILD=build-dist STATIC=1 SANITIZE= \
    CFLAGS="-O2 -g -fstack-protector-strong -fstack-clash-protection -fcf-protection -D_FORTIFY_SOURCE=2" \
    LDFLAGS="-Wl,-z,relro -Wl,-z,now" "$bin" >"$work/make.log" 2>&1 ||
    { tail -30 "$work/make.log" >&2; die "make failed"; }

needed=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | paste -sd ' ' -)
[ "$needed" = libc.so.6 ] ||
    die "$bin needs $needed, not only libc.so.6: install libuv1-dev and libhiredis-dev (their .a files) and run again"
glibc=$(objdump -T "$bin" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1)
[ -n "$glibc" ] || die "cannot read the glibc version $bin needs (objdump -T)"

d=$work/$name
mkdir -p "$d/completions" "$d/copyright"
strip --strip-debug -o "$d/redlock-run" "$bin"
install -m 0644 man/redlock-run.1 README.md "$d/"
install -m 0644 completions/redlock-run.bash completions/_redlock-run \
    completions/redlock-run.fish "$d/completions/"
install -m 0644 debian/copyright "$d/copyright/redlock-run"
# libuv (MIT) and hiredis (BSD) are linked in: their notices go along.
for lib in libuv1-dev:libuv libhiredis-dev:hiredis; do
    f=/usr/share/doc/${lib%%:*}/copyright
    [ -r "$f" ] || die "$f is missing: the notice of ${lib#*:}, which the binary contains"
    install -m 0644 "$f" "$d/copyright/${lib#*:}"
done
sed -e "s/@VERSION@/$version/g" -e "s/@GLIBC@/$glibc/g" -e "s/@ARCH@/$arch/g" \
    scripts/install.sh.in >"$d/install.sh"
chmod 0755 "$d/install.sh" "$d/redlock-run"

# The same bytes for the same commit: fixed owner, order and times.
epoch=$(git log -1 --format=%ct 2>/dev/null || date +%s)
mkdir -p "$out"
tar -C "$work" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" \
    -cf - "$name" | gzip -9n >"$out/$name.tar.gz.new"
mv "$out/$name.tar.gz.new" "$out/$name.tar.gz"

rm -rf "$work/check" && mkdir "$work/check"
tar -xzf "$out/$name.tar.gz" -C "$work/check"
"$work/check/$name/redlock-run" --version >/dev/null ||
    die "the packed binary does not run"
echo "$prog: $out/$name.tar.gz (needs glibc >= $glibc; $(du -k "$out/$name.tar.gz" | cut -f1) KB)"
