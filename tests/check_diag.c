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
    /* acquire.lua's --limit refusal: its own words, without the tag. */
    m = diag("127.0.0.1:6379: LIMIT this run's --limit 2 differs from the --limit 3 its "
             "holders were admitted with: give a NAME one --limit on every host");
    ck_assert_ptr_nonnull(m);
    ck_assert_str_eq(m, "this run's --limit 2 differs from the --limit 3 its holders were "
                        "admitted with: give a NAME one --limit on every host");
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
    /* Redis 7.0's words when Redisson's RLock (a hash) holds the lock key. */
    ck_assert(strstr(rr_diag_unavailable_hint("127.0.0.1:6379: WRONGTYPE Operation against a key "
                                              "holding the wrong kind of value script: c5c7, on "
                                              "@user_script:161."),
                     "Redisson's RLock keeps a hash"));
    ck_assert_str_eq(rr_diag_unavailable_hint("cannot connect to h:1: connection refused"),
                     "check that Redis is up and -r/--redis is right");
    ck_assert_str_eq(rr_diag_unavailable_hint(""), "check that Redis is up and -r/--redis is right");
    ck_assert_str_eq(rr_diag_unavailable_hint(NULL), "check that Redis is up and -r/--redis is right");
}
END_TEST

/* Every wording of an ACL refusal the servers use, as they put it (Redis
 * 6.0 to 8, Valkey 8 to 9), directly and inside our scripts: a refusal of
 * our configuration (78) with the ACL hint, never an outage (issue 31). */
static const char *const acl_wordings[] = {
    /* Redis 6.x, a command */
    "h:1: NOPERM this user has no permissions to run the 'eval' command or its subcommand",
    "h:1: NOPERM this user has no permissions to access one of the keys used as arguments",
    "h:1: NOPERM this user has no permissions to access one of the channels used as arguments",
    /* Redis 7.x, 8, Valkey: a command */
    "h:1: NOPERM User weak has no permissions to run the 'evalsha' command",
    "h:1: NOPERM No permissions to access a key",
    "h:1: NOPERM No permissions to access a channel",
    "h:1: -NOPERM this user has no permissions to run the 'wait' command",
    /* Redis 6.2, 7.0: inside a script */
    "h:1: ERR Error running script (call to f_0123): @user_script:1: @user_script: 1: The user "
    "executing the script can't run this command or subcommand",
    "h:1: ERR The user executing the script can't run this command or subcommand script: "
    "0123abcd, on @user_script:3.",
    "h:1: ERR The user executing the script can't access at least one of the keys mentioned "
    "in the command script: 0123abcd, on @user_script:3.",
    /* Redis 7.2, 8, Valkey 8, 9: inside a script */
    "h:1: ERR ACL failure in script: User weak has no permissions to run the 'exists' command",
    "h:1: ERR ACL failure in script: User weak has no permissions to run the 'exists' command "
    "script: 0123abcd, on @user_script:4.",
    "h:1: ERR ACL failure in script: No permissions to access a key script: 0123abcd, on "
    "@user_script:4.",
    "h:1: ERR ACL failure in script: No permissions to access a channel",
    "h:1: ERR ACL failure in script: User weak has no permissions to access the 'redlock:{j}:state' key",
    "h:1: ERR ACL failure in script: No permissions to access database",
    /* through a sentinel's master, a cluster's node: the same words after
     * the node's name */
    "10.0.0.5:7001: ERR ACL failure in script: User weak has no permissions to run the 'hset' command",
};

START_TEST(test_acl_wordings)
{
    const char *msg = acl_wordings[_i];
    char out[512];

    ck_assert_msg(rr_diag_config(msg, true, out, sizeof out), "not a refusal: %s", msg);
    ck_assert_msg(strstr(out, "the user lacks a permission the lock needs"), "%s", out);
    ck_assert_msg(strstr(out, "redlock-run(1), LEAST PRIVILEGE"), "%s", out);
    ck_assert_ptr_null(strstr(out, "check that Redis is up"));
    ck_assert(rr_diag_brief(msg, true, false, out, sizeof out));
    ck_assert_msg(strstr(out, "lacks an ACL permission"), "%s", out);
    /* the same without a password sent (a default user with an ACL) */
    ck_assert(rr_diag_config(msg, false, out, sizeof out));
    ck_assert_ptr_nonnull(strstr(out, "lacks a permission"));
}
END_TEST

START_TEST(test_cluster_redirect_hint)
{
    static const char *const redirects[] = {
        "cannot take the lock: 127.0.0.1:7001: MOVED 15495 127.0.0.1:7003",
        "127.0.0.1:7001: ASK 15495 127.0.0.1:7003",
        "MOVED 0 [::1]:7003",
        "h:1: -MOVED 12 h:2",
    };
    for (size_t i = 0; i < sizeof redirects / sizeof redirects[0]; i++) {
        const char *h = rr_diag_unavailable_hint(redirects[i]);
        ck_assert_msg(strstr(h, "give the cluster as redis-cluster://"), "%s: %s", redirects[i], h);
        ck_assert_ptr_null(strstr(h, "check that Redis is up"));
        /* an outage, not a refusal: it may be a slot on its way */
        char out[512];
        ck_assert(!rr_diag_config(redirects[i], false, out, sizeof out));
    }
    /* words that are not a redirection */
    ck_assert_str_eq(rr_diag_unavailable_hint("h:1: the file was MOVED away"),
                     "check that Redis is up and -r/--redis is right");
    ck_assert_str_eq(rr_diag_unavailable_hint("h:1: TASK 12 failed"),
                     "check that Redis is up and -r/--redis is right");
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
    tcase_add_loop_test(tc, test_acl_wordings, 0, (int)(sizeof acl_wordings / sizeof acl_wordings[0]));
    tcase_add_test(tc, test_cluster_redirect_hint);
    suite_add_tcase(s, tc);
    return s;
}

const struct rr_unit rr_unit = { "diag", diag_suite, NULL, NULL };
