/* check_child_env.c — the command's environment. */
#include <check.h>
#include <stddef.h>
#include <string.h>

#include "child_env.h"
#include "unit.h"

static size_t env_count(char **env)
{
    size_t n = 0;
    while (env[n])
        n++;
    return n;
}

START_TEST(test_env_build)
{
    char *env[] = {
        (char *)"PATH=/bin", (char *)"REDLOCK_PASSWORD=x", (char *)"REDLOCK_PASSWORD_HINT=y",
        (char *)"REDLOCK_FENCE=1", (char *)"NOEQUALS", (char *)"REDLOCK_USER=u",
        (char *)"HOME=/root", NULL,
    };
    const char *drop[] = { "REDLOCK_PASSWORD", "REDLOCK_USER", NULL };
    const char *add[] = { "REDLOCK_FENCE=9", "REDLOCK_NAME=job", NULL };
    char **out = rr_child_env(env, drop, add);
    ck_assert_ptr_nonnull(out);
    ck_assert_uint_eq(env_count(out), 6);
    /* Order kept, added ones last, a name is never a prefix match. */
    ck_assert_str_eq(out[0], "PATH=/bin");
    ck_assert_str_eq(out[1], "REDLOCK_PASSWORD_HINT=y");
    ck_assert_str_eq(out[2], "NOEQUALS");
    ck_assert_str_eq(out[3], "HOME=/root");
    ck_assert_str_eq(out[4], "REDLOCK_FENCE=9");
    ck_assert_str_eq(out[5], "REDLOCK_NAME=job");
    ck_assert_ptr_null(out[6]);
    /* Copies, not the caller's strings. */
    ck_assert_ptr_ne(out[0], env[0]);
    rr_child_env_free(out);

    out = rr_child_env(NULL, NULL, NULL);
    ck_assert_ptr_nonnull(out);
    ck_assert_ptr_null(out[0]);
    rr_child_env_free(out);

    out = rr_child_env(env, NULL, NULL);
    ck_assert_uint_eq(env_count(out), 7);
    ck_assert_str_eq(out[6], "HOME=/root");
    rr_child_env_free(out);

    rr_child_env_free(NULL);
}
END_TEST

/* The entry named name in env, or NULL. */
static const char *find(char **env, const char *name)
{
    size_t len = strlen(name);
    for (; *env; env++)
        if (strncmp(*env, name, len) == 0 && (*env)[len] == '=')
            return *env;
    return NULL;
}

START_TEST(test_env_for_run)
{
    char *env[] = {
        (char *)"PATH=/bin", (char *)"REDLOCK_PASSWORD=x", (char *)"REDLOCK_USER=u",
        (char *)"REDISCLI_AUTH=a", (char *)"REDLOCK_SENTINEL_PASSWORD=s",
        (char *)"REDLOCK_SENTINEL_USER=su", (char *)"REDLOCK_URL=redis://h:1",
        (char *)"REDLOCK_FENCE=old", (char *)"REDLOCK_ONCE=old", NULL,
    };
    struct rr_child_env_run run = { "job", 42, 30000, 0, "" };
    char **out = rr_child_env_for_run(env, &run);

    ck_assert_ptr_nonnull(out);
    ck_assert_uint_eq(env_count(out), 7);
    ck_assert_str_eq(out[0], "PATH=/bin");
    /* a URL without credentials stays; without --once an inherited
     * REDLOCK_ONCE is left as it is; the run's own come last */
    ck_assert_str_eq(out[1], "REDLOCK_URL=redis://h:1");
    ck_assert_str_eq(out[2], "REDLOCK_ONCE=old");
    ck_assert_str_eq(out[3], "REDLOCK_NAME=job");
    ck_assert_str_eq(out[4], "REDLOCK_FENCE=42");
    ck_assert_str_eq(out[5], "REDLOCK_TTL_MS=30000");
    ck_assert_str_eq(out[6], "REDLOCK_SLOT=1");
    rr_child_env_free(out);

    /* credentials in the URL (the first one counts): dropped */
    char *env2[] = { (char *)"REDLOCK_URL=redis://:pw@h:1", (char *)"REDLOCK_URL=redis://h",
                     (char *)"HOME=/", NULL };
    struct rr_child_env_run run2 = { "j", 7, 1000, 3, "id-1" };
    out = rr_child_env_for_run(env2, &run2);
    ck_assert_ptr_nonnull(out);
    ck_assert_ptr_null(find(out, "REDLOCK_URL"));
    ck_assert_str_eq(find(out, "REDLOCK_SLOT"), "REDLOCK_SLOT=3");
    ck_assert_str_eq(find(out, "REDLOCK_ONCE"), "REDLOCK_ONCE=id-1");
    ck_assert_str_eq(out[0], "HOME=/");
    rr_child_env_free(out);

    char *env3[] = { (char *)"REDLOCK_URL=redis://h", (char *)"REDLOCK_URL=redis://:pw@h", NULL };
    out = rr_child_env_for_run(env3, &run);
    ck_assert_uint_eq(env_count(out), 4 + 2);
    rr_child_env_free(out);

    out = rr_child_env_for_run(NULL, &run);
    ck_assert_uint_eq(env_count(out), 4);
    rr_child_env_free(out);
}
END_TEST

static Suite *child_env_suite(void)
{
    Suite *s = suite_create("child_env");
    TCase *tc = tcase_create("pure");
    tcase_add_test(tc, test_env_build);
    tcase_add_test(tc, test_env_for_run);
    suite_add_tcase(s, tc);
    return s;
}

const struct rr_unit rr_unit = { "child_env", child_env_suite, NULL, NULL };
