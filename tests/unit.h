/* unit.h — what each Check suite (tests/check_*.c) gives the one main() in
 * tests/unit_main.c: its name, the function that builds its Suite, and
 * optional hooks run once before and after the whole suite (check_conn.c
 * and check_service.c make and remove their servers' directory there). */
#ifndef RR_TEST_UNIT_H
#define RR_TEST_UNIT_H

#include <check.h>
#include <stdio.h>

/* rr_unit_skip("no real cgroup here (%s)", err); return; — a test that
 * cannot run here says so, on a line of its own that scripts/run-unit.sh
 * counts as a skip, not a pass ("skipped: REASON"; under RR_NO_SKIP=1,
 * which .ci/run sets, a failure). The test returns right after it.
 * run-unit.sh also counts the older form "check_NAME: REASON: skipped". */
#define rr_unit_skip(...) \
    (fprintf(stderr, "skipped: " __VA_ARGS__), fputc('\n', stderr), fflush(stderr))

struct rr_unit {
    const char *name;
    Suite *(*suite)(void);
    int (*begin)(const char *name);   /* 0, or the suite does not run */
    void (*end)(void);
};

/* Defined by exactly one tests/check_*.c in each test program. */
extern const struct rr_unit rr_unit;

#endif
