#!/usr/bin/env bash
# t_lib.sh — the test library's outcomes: a skip is counted as a skip (a
# failure under RR_NO_SKIP=1), a fail outside a test case fails the file,
# valgrind's reports fail the case whatever the call's status, and
# scripts/run-unit.sh counts a unit test that says it skipped. Runs small
# test files written here; no server.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

demo=$TMP/t_demo.sh
cat >"$demo" <<EOT
. "$LIB_DIR/lib.sh"
t "passes"; end_test
t "needs a thing"; skip "no thing here"
t "asked to skip"; skip_asked "RR_X=0"
fail "a failure between cases"
t "passes too"; end_test
done_testing
EOT

t "skip, skip_asked and a fail outside a case: 2 passed, 1 failed, 2 skipped"
out=$(RR_NO_SKIP=0 bash "$demo" 2>&1)
RC=$?
assert_contains "$out" "ok - needs a thing # SKIP no thing here"
assert_contains "$out" "ok - asked to skip # SKIP RR_X=0 (asked)"
assert_contains "$out" "not ok - (outside a test case): a failure between cases"
assert_eq "# result: 2 passed, 1 failed, 2 skipped" "$(echo "$out" | tail -1)" "the result line"
assert_eq 1 "$RC" "the file's exit status"
end_test

t "RR_NO_SKIP=1: a skip fails, a skip the run asked for does not"
out=$(RR_NO_SKIP=1 bash "$demo" 2>&1)
assert_contains "$out" "not ok - needs a thing: skipped on a machine that must run it (RR_NO_SKIP=1): no thing here"
assert_eq "# result: 2 passed, 2 failed, 1 skipped" "$(echo "$out" | tail -1)" "the result line"
end_test

t "run-unit.sh: 'skipped: ...' and 'check_x: ...: skipped' lines are skips, not passes"
cat >"$TMP/fakeunit" <<'EOT'
#!/bin/sh
echo "check_cgroup: no real cgroup here (EACCES): skipped" >&2
echo "skipped: kernel without CLONE_INTO_CGROUP" >&2
echo "100%: Checks: 5, Failures: 0, Errors: 0"
EOT
chmod +x "$TMP/fakeunit"
assert_eq "unit: 3 passed, 0 failed, 2 skipped" "$(RR_NO_SKIP=0 "$TOP/scripts/run-unit.sh" "$TMP/fakeunit" 2>&1 | tail -1)"
assert_eq "unit: 3 passed, 2 failed, 0 skipped" "$(RR_NO_SKIP=1 "$TOP/scripts/run-unit.sh" "$TMP/fakeunit" 2>&1 | tail -1)" "under RR_NO_SKIP=1"
end_test

t "RR_VALGRIND=1: an invalid write fails the case, unchecked or in the background"
if command -v valgrind >/dev/null 2>&1 && command -v cc >/dev/null 2>&1; then
    printf '#include <stdlib.h>\nint main(int c, char **v) { char *p = malloc(16); (void)v; if (c > 1) p[16] = 1; free(p); return 0; }\n' >"$TMP/bad.c"
    cc -O0 -o "$TMP/bad" "$TMP/bad.c" || fail "cannot compile the bad program"
    cat >"$TMP/t_vg.sh" <<EOT
. "$LIB_DIR/lib.sh"
t "clean"; rr; end_test
t "unchecked"; rr bad; end_test
t "background"; bg "\$TMP/b" "\${RR[@]}" bad; wait_pid "\$BG" 30; end_test
done_testing
EOT
    out=$(RR_BIN=$TMP/bad RR_VALGRIND=1 bash "$TMP/t_vg.sh" 2>&1)
    assert_contains "$out" "ok - clean"
    assert_contains "$out" "not ok - unchecked: valgrind reported errors (exit 99)"
    assert_contains "$out" "not ok - background: valgrind: =="
    assert_eq "# result: 1 passed, 2 failed, 0 skipped" "$(echo "$out" | tail -1)" "the result line"
    end_test
else
    skip "valgrind or cc missing (scripts/deps.sh ci)"
fi

done_testing
