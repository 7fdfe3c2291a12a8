#!/usr/bin/env bash
# t_house.sh — house rules a build can be checked against (no servers):
# every exported symbol rr_*, no inline assembly and no CLONE_VM in src/
# (scripts/check-symbols, on the library beside the binary under test);
# no planted defect (scripts/mutants) in the binary.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

t "exported symbols are rr_*; no asm, no CLONE_VM in src/"
lib=$(dirname "$RR_BIN")/librr.a
out=$("$(dirname "$0")/../../scripts/check-symbols" "$lib" 2>&1)
rc=$?
[ "$rc" = 0 ] || fail "$out"
end_test

t "no planted defect's marker in the binary (scripts/mutants, src/mutant.h)"
# gen-lua.sh sends each "--mutant NAME: CODE" line of a Lua script as an
# empty line, in every build; RR_MUTANT_IS() is a macro, 0 in a normal
# build, and leaves no string. (scripts/mutants checks more broadly that no
# string says "mutant"; here a directory in the debug info might.)
found=$(strings "$RR_BIN" | grep -E -e '--mutant|RR_MUTANT' | head -3)
[ -z "$found" ] || fail "the binary holds a planted defect's marker: $found"
end_test

done_testing
