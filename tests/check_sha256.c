/* check_sha256.c — SHA-256 against FIPS 180-4's vectors; the command
 * fingerprint. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "sha256.h"
#include "unit.h"

static void hex_of(const char *msg, size_t len, size_t chunk, char out[65])
{
    struct rr_sha256 s;
    unsigned char d[32];

    rr_sha256_init(&s);
    for (size_t i = 0; i < len; i += chunk)
        rr_sha256_update(&s, msg + i, len - i < chunk ? len - i : chunk);
    rr_sha256_final(&s, d);
    for (int i = 0; i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", d[i]);
}

START_TEST(test_vectors)
{
    char h[65];
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    static char million[1000000];

    hex_of("", 0, 1, h);
    ck_assert_str_eq(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    hex_of("abc", 3, 1, h);
    ck_assert_str_eq(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    for (size_t chunk = 1; chunk <= 64; chunk *= 4) {
        hex_of(two, strlen(two), chunk, h);
        ck_assert_str_eq(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    }
    memset(million, 'a', sizeof million);
    hex_of(million, sizeof million, 1000, h);
    ck_assert_str_eq(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}
END_TEST

/* Each argument counts on its own: "a b" is not "a" "b". */
START_TEST(test_fingerprint)
{
    char *ab[] = { (char *)"a", (char *)"b" }, *a_b[] = { (char *)"a b" };
    char x[17], y[17];

    rr_command_fingerprint(ab, 2, x);
    rr_command_fingerprint(a_b, 1, y);
    ck_assert_uint_eq(strlen(x), 16);
    ck_assert_str_ne(x, y);
    rr_command_fingerprint(ab, 2, y);
    ck_assert_str_eq(x, y);
    /* Digits do not count: a date in the arguments is the same command. */
    char *d1[] = { (char *)"report", (char *)"--day", (char *)"2026-12-01" };
    char *d2[] = { (char *)"report", (char *)"--day", (char *)"2027-1-9" };
    char *d3[] = { (char *)"report", (char *)"--week", (char *)"2026-12-01" };
    rr_command_fingerprint(d1, 3, x);
    rr_command_fingerprint(d2, 3, y);
    ck_assert_str_eq(x, y);
    rr_command_fingerprint(d3, 3, y);
    ck_assert_str_ne(x, y);
}
END_TEST

static Suite *sha256_suite(void)
{
    Suite *s = suite_create("sha256");
    TCase *tc = tcase_create("pure");

    tcase_add_test(tc, test_vectors);
    tcase_add_test(tc, test_fingerprint);
    suite_add_tcase(s, tc);
    return s;
}

const struct rr_unit rr_unit = { "sha256", sha256_suite, NULL, NULL };
