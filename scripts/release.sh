#!/usr/bin/env bash
# release.sh [OUTDIR] — the release files (`make dist`), in OUTDIR
# (default build/dist):
#   redlock-run-VERSION-linux-ARCH.tar.gz          glibc build (this machine's ARCH)
#   redlock-run-VERSION-linux-x86_64-static.tar.gz  static (musl, OpenSSL linked in)
#   redlock-run-VERSION-linux-aarch64-static.tar.gz
#   SHA256SUMS   each tarball's and each packed binary's SHA-256
#
#   1. builds redlock-run with libuv and hiredis linked in (STATIC=1, in
#      build-dist/, with hardening flags), and refuses a binary that needs
#      any shared library but libc;
#   2. reads the newest glibc symbol version the binary needs (objdump -T)
#      and writes it into install.sh, which checks it before installing;
#   3. packs the binary (debug info stripped), the man page, the
#      completions, README.md, examples/, the copyright files of
#      redlock-run and of the libraries linked in, and install.sh; then
#      unpacks the tarball and runs the packed binary's --version (under
#      qemu-aarch64 for aarch64, when it is installed);
#   4. the static tarballs from scripts/static-build's binaries. RR_DIST_STATIC:
#      auto (default) packs the architectures whose libraries the static
#      build has cached (a second build is a minute; the first builds OpenSSL
#      from source), 1 builds them whatever it takes, 0 packs none.
#
# Build on the oldest release the glibc tarball is for (Debian 12): a
# binary runs on that glibc and every later one, not on older ones. The
# static ones run on any Linux of their architecture.
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

# pack NAME BINARY GLIBC [extra copyright name:file ...] — NAME.tar.gz in $out.
pack() {
    local name=$1 bin=$2 glibc=$3 d=$work/$1 arch c
    shift 3
    arch=${name#redlock-run-"$version"-linux-}
    arch=${arch%-static}
    rm -rf "$d" && mkdir -p "$d/completions" "$d/copyright" "$d/examples"
    strip --strip-debug -o "$d/redlock-run" "$bin" 2>/dev/null ||
        { cp "$bin" "$d/redlock-run"; aarch64-linux-gnu-strip --strip-debug "$d/redlock-run"; }
    install -m 0644 man/redlock-run.1 README.md "$d/"
    install -m 0644 completions/redlock-run.bash completions/_redlock-run \
        completions/redlock-run.fish "$d/completions/"
    cp -R examples/. "$d/examples/"
    install -m 0644 debian/copyright "$d/copyright/redlock-run"
    # libuv (MIT) and hiredis (BSD) are linked in: their notices go along.
    for c in libuv:/usr/share/doc/libuv1-dev/copyright \
             hiredis:/usr/share/doc/libhiredis-dev/copyright "$@"; do
        [ -r "${c#*:}" ] || die "${c#*:} is missing: the notice of ${c%%:*}, which the binary contains"
        install -m 0644 "${c#*:}" "$d/copyright/${c%%:*}"
    done
    sed -e "s/@VERSION@/$version/g" -e "s/@GLIBC@/$glibc/g" -e "s/@ARCH@/$arch/g" \
        scripts/install.sh.in >"$d/install.sh"
    chmod 0755 "$d/install.sh" "$d/redlock-run"
    chmod -R u+w,go-w,a+rX "$d"

    # The same bytes for the same commit: fixed owner, order and times.
    mkdir -p "$out"
    tar -C "$work" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" \
        -cf - "$name" | gzip -9n >"$out/$name.tar.gz.new"
    mv "$out/$name.tar.gz.new" "$out/$name.tar.gz"
    (cd "$work" && sha256sum "$name/redlock-run") >>"$work/sums"
    (cd "$out" && sha256sum "$name.tar.gz") >>"$work/sums"

    rm -rf "$work/check" && mkdir "$work/check"
    tar -xzf "$out/$name.tar.gz" -C "$work/check"
    if [ "$arch" = "$(uname -m)" ]; then
        "$work/check/$name/redlock-run" --version >/dev/null || die "the packed $name binary does not run"
    elif command -v "qemu-$arch-static" >/dev/null 2>&1; then
        "qemu-$arch-static" "$work/check/$name/redlock-run" --version >/dev/null ||
            die "the packed $name binary does not run under qemu-$arch-static"
    fi
}

epoch=$(git log -1 --format=%ct 2>/dev/null || date +%s)
: >"$work/sums"
pack "$name" "$bin" "$glibc"
echo "$prog: $out/$name.tar.gz (needs glibc >= $glibc; $(du -k "$out/$name.tar.gz" | cut -f1) KB)"

# The static tarballs: scripts/static-build's binaries, and the notices of
# musl and OpenSSL, which they contain too.
static=${RR_DIST_STATIC:-auto}
case $static in
    0) ;;
    1|auto)
        opt=
        [ "$static" = auto ] && opt=--if-cached
        for a in x86_64 aarch64; do
            scripts/static-build $opt "$a" >"$work/static-$a.log" 2>&1 ||
                { tail -20 "$work/static-$a.log" >&2; die "scripts/static-build $a failed"; }
            sb=build-static/$a/redlock-run
            if [ ! -e "$work/static-$a.log" ] || grep -q 'not cached' "$work/static-$a.log"; then
                echo "$prog: no static $a tarball: $(grep 'not cached' "$work/static-$a.log" | head -1)"
                continue
            fi
            sname=$name
            sname=${sname%-linux-*}-linux-$a-static
            src=$(scripts/static-build --cache-dir)
            pack "$sname" "$sb" static \
                "musl:/usr/share/doc/musl-dev/copyright" \
                "openssl:$(ls -d "$src"/src/openssl-*/debian/copyright | head -1)"
            echo "$prog: $out/$sname.tar.gz (static: any Linux on $a; $(du -k "$out/$sname.tar.gz" | cut -f1) KB)"
        done ;;
    *) die "RR_DIST_STATIC is $static: give auto, 1 or 0" ;;
esac
sort -k2 "$work/sums" >"$out/SHA256SUMS"
echo "$prog: $out/SHA256SUMS"
