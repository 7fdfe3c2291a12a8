#!/usr/bin/env bash
# t_house.sh — house rules a build can be checked against (no servers):
# every exported symbol rr_*, no inline assembly and no CLONE_VM in src/
# (scripts/check-symbols, on the library beside the binary under test).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

t "exported symbols are rr_*; no asm, no CLONE_VM in src/"
lib=$(dirname "$RR_BIN")/librr.a
out=$("$(dirname "$0")/../../scripts/check-symbols" "$lib" 2>&1)
rc=$?
[ "$rc" = 0 ] || fail "$out"
end_test

done_testing
