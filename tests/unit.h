/* unit.h — what each Check suite (tests/check_*.c) gives the one main() in
 * tests/unit_main.c: its name, the function that builds its Suite, and
 * optional hooks run once before and after the whole suite (check_conn.c
 * and check_service.c make and remove their servers' directory there). */
#ifndef RR_TEST_UNIT_H
#define RR_TEST_UNIT_H

#include <check.h>

struct rr_unit {
    const char *name;
    Suite *(*suite)(void);
    int (*begin)(const char *name);   /* 0, or the suite does not run */
    void (*end)(void);
};

/* Defined by exactly one tests/check_*.c in each test program. */
extern const struct rr_unit rr_unit;

#endif
