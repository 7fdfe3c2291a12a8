/* check_scripts.c — the embedded Lua scripts (src/scripts.c): each SHA1 is
 * the one Redis computes for the source as sent, the source reads its KEYS
 * and ARGV by name only, and a call whose counts do not fit the script's
 * --! lines is refused before anything is sent. No server. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scripts.h"
#include "unit.h"

/* sha1sum(1) of src: EVALSHA's SHA1 is that of the script's bytes. */
static void sha1_of(const char *src, char *out, size_t len)
{
    char path[] = "/tmp/check_scripts.XXXXXX", cmd[64];
    int fd = mkstemp(path);
    FILE *f;

    ck_assert_int_ge(fd, 0);
    f = fdopen(fd, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fputs(src, f) >= 0, 1);
    fclose(f);
    snprintf(cmd, sizeof cmd, "sha1sum < %s", path);
    f = popen(cmd, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(fgets(out, (int)len, f));
    pclose(f);
    remove(path);
    out[strcspn(out, " \n")] = '\0';
}

START_TEST(test_sha_is_of_the_source_sent)
{
    char sha[128];

    sha1_of(rr_script_src(_i), sha, sizeof sha);
    ck_assert_uint_eq(strlen(rr_script_sha(_i)), 40);
    ck_assert_str_eq(sha, rr_script_sha(_i));
}
END_TEST

START_TEST(test_names_not_numbers)
{
    const char *src = rr_script_src(_i);

    /* gen-lua.sh refuses a literal index; the positions are the locals it
     * put where the --! lines were. */
    for (int d = 0; d <= 9; d++) {
        char k[16], a[16];
        snprintf(k, sizeof k, "KEYS[%d", d);
        snprintf(a, sizeof a, "ARGV[%d", d);
        ck_assert_ptr_null(strstr(src, k));
        ck_assert_ptr_null(strstr(src, a));
    }
    ck_assert_ptr_null(strstr(src, "--! "));
    ck_assert_ptr_nonnull(strstr(src, "local KEY_"));
}
END_TEST

START_TEST(test_positions)
{
    /* The C side counts from 0, Lua from 1; both come from the --! lines. */
    ck_assert_int_eq(RR_ACQUIRE_KEY_LOCK, 0);
    ck_assert_int_eq(RR_ACQUIRE_NKEYS, RR_ACQUIRE_KEY_ONCE + 1);
    ck_assert_ptr_nonnull(strstr(rr_script_src(RR_SCRIPT_ACQUIRE), "KEY_LOCK, KEY_FENCE,"));
    /* release.lua ends in a rest (the history ids to undo): NARGS is where
     * it starts. */
    ck_assert_int_eq(RR_RELEASE_NARGS, RR_RELEASE_ARG_HISTORY_ID);
    ck_assert_int_eq(RR_RELEASE_ARG_MASTERS_FAILED + 1, RR_RELEASE_NARGS);
}
END_TEST

static void never(struct rr_svc *s, int status, redisReply *reply, void *arg)
{
    (void)s;
    (void)status;
    (void)reply;
    (void)arg;
    ck_abort_msg("a refused call must not call back");
}

START_TEST(test_counts_refused)
{
    const char *v[32] = { "x" };

    for (int i = 1; i < 32; i++)
        v[i] = "x";
    /* Checked before the service is touched: NULL is never used. */
    ck_assert_int_lt(rr_script_call(NULL, RR_SCRIPT_RENEW, RR_RENEW_KEY_ONCE - 1, v,
                                    RR_RENEW_NARGS, v, never, NULL), 0);
    ck_assert_int_lt(rr_script_call(NULL, RR_SCRIPT_RENEW, RR_RENEW_NKEYS + 1, v,
                                    RR_RENEW_NARGS, v, never, NULL), 0);
    ck_assert_int_lt(rr_script_call(NULL, RR_SCRIPT_RENEW, RR_RENEW_NKEYS, v,
                                    RR_RENEW_NARGS - 1, v, never, NULL), 0);
    ck_assert_int_lt(rr_script_call(NULL, RR_SCRIPT_RENEW, RR_RENEW_NKEYS, v,
                                    RR_RENEW_NARGS + 1, v, never, NULL), 0);
    ck_assert_int_lt(rr_script_call(NULL, RR_SCRIPT_RELEASE, RR_RELEASE_NKEYS, v,
                                    RR_RELEASE_NARGS - 1, v, never, NULL), 0);
}
END_TEST

static Suite *scripts_suite(void)
{
    Suite *s = suite_create("scripts");
    TCase *tc = tcase_create("core");

    tcase_add_loop_test(tc, test_sha_is_of_the_source_sent, 0, RR_SCRIPT_COUNT);
    tcase_add_loop_test(tc, test_names_not_numbers, 0, RR_SCRIPT_COUNT);
    tcase_add_test(tc, test_positions);
    tcase_add_test(tc, test_counts_refused);
    suite_add_tcase(s, tc);
    return s;
}

const struct rr_unit rr_unit = { "scripts", scripts_suite, NULL, NULL };
