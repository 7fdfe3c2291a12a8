#!/usr/bin/env bash
# t_dist.sh — the release tarball (`make dist`, scripts/release.sh): it holds
# a binary that needs no shared library but libc, the man page, the
# completions, README.md and an install.sh; install.sh installs into a
# PREFIX (or stages under a DESTDIR), the installed binary runs and takes a
# lock, and a system whose glibc is too old (or that has none) is refused
# with the version needed; the GitHub example's install step works on it.
# (Debian 13: scripts/trixie-check install.)
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

VERSION=$(sed -n 's/^VERSION := *//p' "$TOP/Makefile")
NAME=redlock-run-$VERSION-linux-$(uname -m)
TGZ=$TMP/dist/$NAME.tar.gz

t "make dist builds $NAME.tar.gz: the binary needs only libc"
make_dist "$TMP/dist" ||
    fail "make dist: $(tail -3 "$TMP/dist.out")"
assert_file_exists "$TGZ" "the tarball"
mkdir -p "$TMP/x"
tar -xzf "$TGZ" -C "$TMP/x" || fail "tar -xzf $TGZ"
D=$TMP/x/$NAME
for f in redlock-run redlock-run.1 README.md install.sh completions/redlock-run.bash \
         completions/_redlock-run completions/redlock-run.fish copyright/redlock-run \
         copyright/libuv copyright/hiredis examples/kubernetes-cronjob.yml examples/Dockerfile; do
    assert_file_exists "$D/$f" "$f in the tarball"
done
needed=$(readelf -d "$D/redlock-run" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | paste -sd ' ' -)
assert_eq libc.so.6 "$needed" "the binary's NEEDED libraries"
glibc=$(objdump -T "$D/redlock-run" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1)
assert_contains "$(cat "$D/install.sh")" "NEED_GLIBC=$glibc" "install.sh's glibc"
assert_contains "$(cat "$TMP/dist.out")" "needs glibc >= $glibc" "make dist's last line"
end_test

t "SHA256SUMS: every tarball and every packed binary, and they match"
assert_file_exists "$TMP/dist/SHA256SUMS"
assert_contains "$(cat "$TMP/dist/SHA256SUMS")" "  $NAME.tar.gz" "the glibc tarball's line"
assert_contains "$(cat "$TMP/dist/SHA256SUMS")" "  $NAME/redlock-run" "the glibc binary's line"
(cd "$TMP/dist" && grep -v / SHA256SUMS | sha256sum -c --quiet) >"$TMP/sums.out" 2>&1 ||
    fail "sha256sum -c: $(tail -2 "$TMP/sums.out")"
end_test

# The static tarball is made when scripts/static-build has its libraries
# cached (`make static`; t_static.sh runs the binary itself).
S=$NAME-static
t "the static tarball installs with --sums on a musl root (busybox, musl; no glibc, no getconf)"
if [ ! -e "$TMP/dist/$S.tar.gz" ]; then
    why="no $S.tar.gz: the static libraries are not cached (make static)"
    if [ "${RR_STATIC:-1}" = 0 ] || [ "${RR_STATIC_IF_CACHED:-0}" = 1 ]; then skip_asked "$why"
    else skip "$why"; fi
elif [ "$(id -u)" != 0 ] || [ ! -x /bin/busybox ]; then
    skip "needs root (chroot) and /bin/busybox (busybox-static)"
else
    root=$TMP/muslroot
    mkdir -p "$root/bin" "$root/lib" "$root/tmp" "$root/pkg" "$root/dev"
    mknod -m 0666 "$root/dev/null" c 1 3 || fail "mknod $root/dev/null"
    cp /bin/busybox "$root/bin/"
    for a in $(/bin/busybox --list); do [ "$a" = busybox ] || ln -sf busybox "$root/bin/$a"; done
    cp /lib/ld-musl-"$(uname -m)".so.1 "$root/lib/" 2>/dev/null ||
        note "no musl loader here (musl): the root has busybox only"
    tar -xzf "$TMP/dist/$S.tar.gz" -C "$root/pkg"
    cp "$TMP/dist/SHA256SUMS" "$root/pkg/"
    assert_eq "" "$(readelf -l "$root/pkg/$S/redlock-run" | grep INTERP)" "the static binary's interpreter"
    rc env -i PATH=/bin "$(command -v chroot)" "$root" /bin/sh "/pkg/$S/install.sh" \
        --sha256 0000000000000000000000000000000000000000000000000000000000000000 --prefix /usr/local \
        >"$TMP/inst.out" 2>&1
    assert_eq 1 "$RC" "install.sh with a wrong --sha256"
    assert_contains "$(cat "$TMP/inst.out")" "not 0000" "its message"
    assert_no_file "$root/usr/local/bin/redlock-run" "a binary installed anyway"
    rc env -i PATH=/bin "$(command -v chroot)" "$root" /bin/sh "/pkg/$S/install.sh" \
        --sums /pkg/SHA256SUMS --prefix /usr/local >"$TMP/inst.out" 2>&1
    assert_eq 0 "$RC" "install.sh --sums: $(tail -2 "$TMP/inst.out")"
    assert_contains "$(cat "$TMP/inst.out")" "SHA-256 of redlock-run checked" "install.sh's check"
    start_redis M || fail "no redis-server"
    rc env -i PATH=/bin "$(command -v chroot)" "$root" /usr/local/bin/redlock-run -r "$M_URL" dist-musl -- /bin/true \
        >"$TMP/run.out" 2>&1
    assert_eq 0 "$RC" "a lock with the installed static binary: $(tail -2 "$TMP/run.out")"
    # The glibc tarball on the same root: refused, and pointed to -static.
    tar -xzf "$TGZ" -C "$root/pkg"
    rc env -i PATH=/bin "$(command -v chroot)" "$root" /bin/sh "/pkg/$NAME/install.sh" --prefix /opt/x \
        >"$TMP/inst.out" 2>&1
    assert_eq 1 "$RC" "the glibc tarball's install.sh on a musl root"
    assert_contains "$(cat "$TMP/inst.out")" "use the -static tarball" "its message"
    end_test
fi

# A real root whose glibc is older than the glibc build needs (Debian 11:
# 2.31), made outside this file: `debootstrap --variant=minbase bullseye DIR`
# takes minutes, so the case runs when RR_OLD_GLIBC_ROOT=DIR is given.
t "on a Debian 11 root (glibc 2.31): the glibc tarball is refused, the static one installs and takes a lock"
O=${RR_OLD_GLIBC_ROOT:-}
if [ -z "$O" ]; then
    skip_asked "RR_OLD_GLIBC_ROOT not given (a debootstrap'ed Debian 11 root)"
elif [ ! -e "$TMP/dist/$S.tar.gz" ]; then
    skip "no $S.tar.gz: the static libraries are not cached (make static)"
else
    rm -rf "$O/rr-pkg" && mkdir -p "$O/rr-pkg"
    cp "$TGZ" "$TMP/dist/$S.tar.gz" "$TMP/dist/SHA256SUMS" "$O/rr-pkg/"
    tar -xzf "$TGZ" -C "$O/rr-pkg" && tar -xzf "$TMP/dist/$S.tar.gz" -C "$O/rr-pkg"
    have=$(chroot "$O" getconf GNU_LIBC_VERSION 2>/dev/null)
    note "the root's C library: $have"
    rc chroot "$O" sh "/rr-pkg/$NAME/install.sh" --prefix /opt/rr-glibc >"$TMP/inst.out" 2>&1
    assert_eq 1 "$RC" "the glibc tarball's install.sh"
    assert_contains "$(cat "$TMP/inst.out")" "use the -static tarball" "its message"
    rc chroot "$O" sh "/rr-pkg/$S/install.sh" --sums /rr-pkg/SHA256SUMS --prefix /opt/rr-static >"$TMP/inst.out" 2>&1
    assert_eq 0 "$RC" "the static tarball's install.sh: $(tail -2 "$TMP/inst.out")"
    start_redis O || fail "no redis-server"
    rc chroot "$O" /opt/rr-static/bin/redlock-run -r "$O_URL" dist-old -- sh -c 'cat /etc/debian_version' \
        >"$TMP/run.out" 2>&1
    assert_eq 0 "$RC" "a lock on the old root: $(tail -2 "$TMP/run.out")"
    note "ran on Debian $(cat "$TMP/run.out")"
    rm -rf "$O/rr-pkg" "$O/opt/rr-static" "$O/opt/rr-glibc"
    end_test
fi

t "install.sh --prefix: binary, man page, completions; the binary runs and takes a lock"
P=$TMP/prefix
sh "$D/install.sh" --prefix "$P" >"$TMP/inst.out" 2>&1 || fail "install.sh: $(tail -2 "$TMP/inst.out")"
for f in bin/redlock-run share/man/man1/redlock-run.1 share/bash-completion/completions/redlock-run \
         share/zsh/site-functions/_redlock-run share/fish/vendor_completions.d/redlock-run.fish; do
    assert_file_exists "$P/$f" "$f"
done
assert_eq "redlock-run $VERSION" "$("$P/bin/redlock-run" --version 2>&1 | head -1)" "--version"
start_redis A || fail "no redis-server"
RR_BIN=$P/bin/redlock-run rr_direct -r "$A_URL" dist -- true
assert_rc 0 "a lock with the installed binary"
end_test

t "install.sh with PREFIX=/usr DESTDIR=...: staged under DESTDIR, zsh's vendor directory"
PREFIX=/usr DESTDIR=$TMP/stage sh "$D/install.sh" >"$TMP/inst.out" 2>&1 ||
    fail "install.sh: $(tail -2 "$TMP/inst.out")"
assert_file_exists "$TMP/stage/usr/bin/redlock-run"
assert_file_exists "$TMP/stage/usr/share/zsh/vendor-completions/_redlock-run"
end_test

t "install.sh refuses an older glibc, or none, and names the version it needs"
mkdir -p "$TMP/old" "$TMP/musl"
printf '#!/bin/sh\necho "glibc 2.31"\n' >"$TMP/old/getconf"
printf '#!/bin/sh\necho "getconf: GNU_LIBC_VERSION: unknown variable" >&2; exit 1\n' >"$TMP/musl/getconf"
chmod +x "$TMP/old/getconf" "$TMP/musl/getconf"
for fake in old musl; do
    rc env PATH="$TMP/$fake:$PATH" sh "$D/install.sh" --prefix "$TMP/no-$fake" >"$TMP/inst.out" 2>&1
    assert_eq 1 "$RC" "install.sh's exit status with the $fake getconf"
    assert_contains "$(cat "$TMP/inst.out")" "needs glibc $glibc or later" "its message ($fake)"
    assert_no_file "$TMP/no-$fake/bin/redlock-run" "a binary installed anyway ($fake)"
done
assert_contains "$(env PATH="$TMP/old:$PATH" sh "$D/install.sh" --prefix "$TMP/no" 2>&1)" "has glibc 2.31"
end_test

t "examples/github-actions.yml: its install step, as a runner runs it, fetches, checks and installs the release"
if "$PY" -c 'import yaml' 2>/dev/null; then
    step=$("$PY" -c 'import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
print([s["run"] for s in d["jobs"]["deploy"]["steps"] if s.get("name") == "Install redlock-run"][0])' \
        "$TOP/examples/github-actions.yml")
    mkdir -p "$TMP/runner"
    tb=$NAME.tar.gz
    [ -e "$TMP/dist/$S.tar.gz" ] && tb=$S.tar.gz
    : >"$TMP/github_path"
    (RUNNER_TEMP=$TMP/runner GITHUB_PATH=$TMP/github_path REDLOCK_RELEASE=file://$TMP/dist \
        REDLOCK_TARBALL=$tb REDLOCK_SHA256=$(awk -v f="$tb" '$2 == f { print $1 }' "$TMP/dist/SHA256SUMS") \
        bash -e -c "$step") >"$TMP/gh.out" 2>&1 ||
        fail "the install step: $(tail -2 "$TMP/gh.out")"
    assert_eq "$TMP/runner/redlock-run/bin" "$(cat "$TMP/github_path")" "GITHUB_PATH"
    assert_contains "$("$TMP/runner/redlock-run/bin/redlock-run" --version 2>&1)" "redlock-run $VERSION"
    end_test
else
    skip "python3-yaml missing (scripts/deps.sh test installs it)"
fi

done_testing
