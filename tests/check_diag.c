/* check_diag.c — configuration refusals (exit 78) told from outages (69). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "unit.h"

static const char *diag(const char *msg)
{
    static char out[512];
    return rr_diag_config(msg, false, out, sizeof out) ? out : NULL;
}

START_TEST(test_config_refusals)
{
    const char *m;

    m = diag("127.0.0.1:6379: ERR Protocol error: unauthenticated multibulk length");
    ck_assert_ptr_nonnull(m);
    ck_assert_str_eq(m, "Redis at 127.0.0.1:6379 requires a password: set REDLOCK_PASSWORD "
                        "or --password-file (and REDLOCK_USER for an ACL user)");
    ck_assert_ptr_nonnull(diag("h:1: NOAUTH Authentication required."));
    /* We gave one: then "not authenticated" means it was refused. */
    char out[512];
    ck_assert(rr_diag_config("h:1: ERR Protocol error: unauthenticated multibulk length", true,
                             out, sizeof out));
    ck_assert_ptr_nonnull(strstr(out, "refused the password"));
    m = diag("h:1: authentication failed: WRONGPASS invalid username-password pair");
    ck_assert_ptr_nonnull(strstr(m, "Redis at h:1 refused the password"));
    m = diag("h:1: cannot select db 99: ERR DB index is out of range");
    ck_assert_ptr_nonnull(strstr(m, "fix ?db="));
    m = diag("h:1: ERR The user executing the script can't run this command or subcommand script: x");
    ck_assert_ptr_nonnull(strstr(m, "lacks a permission"));
    ck_assert_ptr_nonnull(strstr(m, "can't run this command"));
    ck_assert_ptr_nonnull(diag("h:1: NOPERM this user has no permissions to access one of the keys"));
    /* One hint per message: never two. */
    ck_assert_ptr_null(strstr(m, "check that Redis is up"));
}
END_TEST

START_TEST(test_sentinel_and_nopass_refusals)
{
    const char *m;

    m = diag("h:1: authentication failed: ERR AUTH <password> called without any password "
             "configured for the default user. Are you sure your configuration is correct?");
    ck_assert_ptr_nonnull(m);
    ck_assert_ptr_nonnull(strstr(m, "Redis at h:1 has no password set, but we sent one"));
    m = diag("no sentinel named the master of 'm': 127.0.0.1:7 is not a sentinel (it does not "
             "know SENTINEL): give the sentinels' addresses (port 26379 by default)");
    ck_assert_ptr_nonnull(m);
    ck_assert_ptr_nonnull(strstr(m, "127.0.0.1:7 is not a sentinel"));
    m = diag("no sentinel named the master of 'm': s:1 requires a password: set "
             "--sentinel-password-file or $REDLOCK_SENTINEL_PASSWORD");
    ck_assert_ptr_nonnull(m);
    ck_assert(strncmp(m, "s:1 requires a password", 23) == 0);
    /* An unknown master name is not a refusal of our configuration (69). */
    ck_assert_ptr_null(diag("no sentinel named the master of 'm': s:1 does not know a master "
                            "named 'm'"));
}
END_TEST

START_TEST(test_outages_are_not_config)
{
    ck_assert_ptr_null(diag("cannot connect to 127.0.0.1:6379: connection refused"));
    ck_assert_ptr_null(diag("127.0.0.1:6379: no reply within 500ms"));
    ck_assert_ptr_null(diag("h:1: LOADING Redis is loading the dataset in memory"));
    ck_assert_ptr_null(diag("no quorum"));
    ck_assert_ptr_null(diag(""));
    ck_assert_ptr_null(diag(NULL));
}
END_TEST

/* One master's failure in a few words, for the list of a degraded or
 * failed quorum; whether it is a refusal of our configuration. */
START_TEST(test_brief)
{
    char out[512];

    ck_assert(rr_diag_brief("h:1: authentication failed: WRONGPASS invalid username-password "
                            "pair or user is disabled.", true, false, out, sizeof out));
    ck_assert_str_eq(out, "h:1 refused our password (WRONGPASS)");
    ck_assert(rr_diag_brief("h:1: NOAUTH Authentication required.", false, false, out,
                            sizeof out));
    ck_assert_str_eq(out, "h:1 requires a password (NOAUTH)");
    ck_assert(rr_diag_brief("h:1: NOPERM User u has no permissions to run the 'wait' command",
                            true, false, out, sizeof out));
    ck_assert_str_eq(out, "h:1 lacks an ACL permission (NOPERM User u has no permissions to "
                          "run the 'wait' command)");
    ck_assert(!rr_diag_brief("cannot connect to h:1: connection refused", false, false, out,
                             sizeof out));
    ck_assert_str_eq(out, "cannot connect to h:1: connection refused");
    /* A TLS refusal is told by the connection, not the words. */
    ck_assert(rr_diag_brief("h:1: certificate verify failed", false, true, out, sizeof out));
    ck_assert_str_eq(out, "h:1: certificate verify failed");
}
END_TEST

START_TEST(test_unavailable_hints)
{
    ck_assert_str_eq(rr_diag_unavailable_hint("only 0 of 1 replicas confirmed the lock on h:1"),
                     "check the replicas' links to the master, or lower --sync-replicas");
    ck_assert_str_eq(rr_diag_unavailable_hint("h:1: TRYAGAIN Multiple keys request during "
                                              "rehashing of slot"),
                     "the job's cluster slot is being resharded: try again when it has moved, "
                     "or give --wait");
    ck_assert_str_eq(rr_diag_unavailable_hint("h:1: CLUSTERDOWN Hash slot not served"),
                     "the cluster serves no master for the job's slot: check CLUSTER INFO, or "
                     "give --wait");
    ck_assert_str_eq(rr_diag_unavailable_hint("cannot connect to h:1: connection refused"),
                     "check that Redis is up and -r/--redis is right");
    ck_assert_str_eq(rr_diag_unavailable_hint(""), "check that Redis is up and -r/--redis is right");
    ck_assert_str_eq(rr_diag_unavailable_hint(NULL), "check that Redis is up and -r/--redis is right");
}
END_TEST

static Suite *diag_suite(void)
{
    Suite *s = suite_create("diag");
    TCase *tc = tcase_create("pure");

    tcase_add_test(tc, test_config_refusals);
    tcase_add_test(tc, test_brief);
    tcase_add_test(tc, test_unavailable_hints);
    tcase_add_test(tc, test_outages_are_not_config);
    tcase_add_test(tc, test_sentinel_and_nopass_refusals);
    suite_add_tcase(s, tc);
    return s;
}

const struct rr_unit rr_unit = { "diag", diag_suite, NULL, NULL };
