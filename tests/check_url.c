/* check_url.c — unit tests for rr_url_parse, rr_url_scrub and
 * rr_url_same_host. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rr.h"
#include "url.h"
#include "unit.h"

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Every password in these tables contains this marker, so a test can check
 * that no error message ever shows any part of one. */
#define SECRET "S3cr3t"

struct good {
    const char *url;
    enum rr_transport transport;
    bool tls, sentinel;
    const char *host;
    int port;
    const char *path;
    int db;
    const char *user;       /* NULL: has_user false */
    const char *password;   /* NULL: has_password false */
    const char *display;
};

static const struct good goods[] = {
    { "redis://127.0.0.1:6379", RR_TRANSPORT_TCP, false, false, "127.0.0.1", 6379, "", 0, NULL, NULL, "127.0.0.1:6379" },
    { "redis://localhost", RR_TRANSPORT_TCP, false, false, "localhost", 6379, "", 0, NULL, NULL, "localhost:6379" },
    { "redis://localhost/", RR_TRANSPORT_TCP, false, false, "localhost", 6379, "", 0, NULL, NULL, "localhost:6379" },
    { "redis://h:1/0", RR_TRANSPORT_TCP, false, false, "h", 1, "", 0, NULL, NULL, "h:1" },
    { "redis://h:65535/10000", RR_TRANSPORT_TCP, false, false, "h", 65535, "", 10000, NULL, NULL, "h:65535" },
    { "REDIS://Cache-1.example.com:7000/3", RR_TRANSPORT_TCP, false, false, "Cache-1.example.com", 7000, "", 3, NULL, NULL, "Cache-1.example.com:7000" },
    { "redis://[::1]:6380", RR_TRANSPORT_TCP, false, false, "::1", 6380, "", 0, NULL, NULL, "[::1]:6380" },
    { "redis://[2001:db8::7]/2", RR_TRANSPORT_TCP, false, false, "2001:db8::7", 6379, "", 2, NULL, NULL, "[2001:db8::7]:6379" },
    { "redis://:" SECRET "@h", RR_TRANSPORT_TCP, false, false, "h", 6379, "", 0, NULL, SECRET, "h:6379" },
    { "redis://alice:" SECRET "@h:7/1", RR_TRANSPORT_TCP, false, false, "h", 7, "", 1, "alice", SECRET, "h:7" },
    { "redis://alice@h", RR_TRANSPORT_TCP, false, false, "h", 6379, "", 0, "alice", NULL, "h:6379" },
    { "redis://alice:@h", RR_TRANSPORT_TCP, false, false, "h", 6379, "", 0, "alice", NULL, "h:6379" },
    { "redis://a%40b:" SECRET "%3A%2F%25x@h", RR_TRANSPORT_TCP, false, false, "h", 6379, "", 0, "a@b", SECRET ":/%x", "h:6379" },
    /* Unencoded '@', '/' and '?' in a password: the last '@' ends it. */
    { "redis://:" SECRET "@/?x@h:6390", RR_TRANSPORT_TCP, false, false, "h", 6390, "", 0, NULL, SECRET "@/?x", "h:6390" },
    { "redis://:" SECRET "@[::1]", RR_TRANSPORT_TCP, false, false, "::1", 6379, "", 0, NULL, SECRET, "[::1]:6379" },
    { "rediss://h:6380", RR_TRANSPORT_TCP, true, false, "h", 6380, "", 0, NULL, NULL, "h:6380" },
    { "redis-sentinel://s1:26379,s2,[::1]:5/mymaster", RR_TRANSPORT_TCP, false, true, "s1", 26379, "", 0, NULL, NULL, "mymaster via sentinel s1:26379" },
    { "redis-sentinel://s1/m", RR_TRANSPORT_TCP, false, true, "s1", 26379, "", 0, NULL, NULL, "m via sentinel s1:26379" },
    { "redis-sentinel://u:" SECRET "@s1/m?db=3", RR_TRANSPORT_TCP, false, true, "s1", 26379, "", 3, "u", SECRET, "m via sentinel s1:26379" },
    { "rediss-sentinel://s1:5000/m", RR_TRANSPORT_TCP, true, true, "s1", 5000, "", 0, NULL, NULL, "m via sentinel s1:5000" },
    { "unix:///run/redis.sock", RR_TRANSPORT_UNIX, false, false, "", 0, "/run/redis.sock", 0, NULL, NULL, "/run/redis.sock" },
    /* Credentials before the path, as redis-cli -u and redis-py take them. */
    { "unix://:" SECRET "@/run/r.sock", RR_TRANSPORT_UNIX, false, false, "", 0, "/run/r.sock", 0, NULL, SECRET, "/run/r.sock" },
    { "unix://alice:" SECRET "@/run/r.sock?db=2", RR_TRANSPORT_UNIX, false, false, "", 0, "/run/r.sock", 2, "alice", SECRET, "/run/r.sock" },
    { "unix://alice@/run/r.sock", RR_TRANSPORT_UNIX, false, false, "", 0, "/run/r.sock", 0, "alice", NULL, "/run/r.sock" },
    { "unix:/run/redis.sock", RR_TRANSPORT_UNIX, false, false, "", 0, "/run/redis.sock", 0, NULL, NULL, "/run/redis.sock" },
    { "unix:///tmp/r.sock?db=4", RR_TRANSPORT_UNIX, false, false, "", 0, "/tmp/r.sock", 4, NULL, NULL, "/tmp/r.sock" },
    { "unix:///tmp/my%20dir/r.sock", RR_TRANSPORT_UNIX, false, false, "", 0, "/tmp/my dir/r.sock", 0, NULL, NULL, "/tmp/my dir/r.sock" },
    /* 107 bytes: the longest path sun_path can hold. */
    { "unix:///aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
      RR_TRANSPORT_UNIX, false, false, "", 0,
      "/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 0, NULL, NULL,
      "/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" },
};

static const char *const bads[] = {
    NULL,
    "",
    "localhost:6379",
    "127.0.0.1",
    "http://h:6379",
    "redis:/h",
    "redis://",
    "redis://:6379",
    "redis://:" SECRET "@",
    "redis://:" SECRET "@:6379",
    "redis://h:0",
    "redis://h:65536",
    "redis://h:-1",
    "redis://h:",
    "redis://h:63x",
    "redis://h:99999999999999999",
    "redis://h/-1",
    "redis://h/10001",
    "redis://h/x",
    "redis://h/1/2",
    "redis://h/1?db=2",
    "redis://h#frag",
    "redis://h:6379junk",
    "redis://h j",
    "redis://h\n",
    "redis://::1",
    "redis://[::1",
    "redis://[::1]x",
    "redis://[nothex]:1",
    "redis://[]:1",
    "redis://[::1]:0",
    "redis://:" SECRET "%zz@h",
    "redis://:" SECRET "%2@h",
    "redis://:" SECRET "%00@h",
    "redis://u%0@h",
    "redis://:" SECRET "@h:" SECRET,
    "redis://:" SECRET "@h/" SECRET,
    "redis://\xff\xfe:1",
    "unix:",
    "unix://",
    "unix:///",
    "unix://host/run/r.sock",
    "unix:relative.sock",
    "unix:///run/r.sock?password=" SECRET,
    "unix:///run/r.sock?db=x",
    "unix:///run/r.sock?db=",
    "unix:///run/r.sock?foo=1",
    "unix://:" SECRET "@run/r.sock",
    "unix://:" SECRET "@host/run/r.sock",
    "unix:///run/%zz.sock",
    "unix:///run/a%00.sock",
    "unix:///run/r.sock#x",
    /* 108 bytes: one too many for sun_path. */
    "unix:///aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "redis-sentinel://s1:26379",
    "redis-sentinel://s1/",
    "redis-sentinel://s1,,s2/m",
    "redis-sentinel://s1:0/m",
    "redis-sentinel://s1/m/x",
    "redis-sentinel://s1/m?password=" SECRET,
    "redis-sentinel://s1/m?db=x",
    "redis-sentinel://s1,s2,s3,s4,s5,s6,s7,s8,s9/m",
    "redis-cluster://h:7000/0",
    "redis-cluster://h:7000?x=1",
    "redis-cluster://h:7000,,h2:7000",
    "redis-cluster://:" SECRET "@",
    "ftp://:" SECRET "@h",
    /* A forgotten "@host" puts the password where the port goes. */
    "redis://default:" SECRET,
    "redis://default:" SECRET "/0",
};

static void assert_clean_error(const char *url, const char *err)
{
    ck_assert_msg(err[0] != '\0', "'%s': empty error message", url ? url : "(null)");
    ck_assert_msg(strchr(err, '\n') == NULL, "error has a newline: %s", err);
    for (const char *p = err; *p; p++)
        ck_assert_msg((unsigned char)*p >= 0x20 && (unsigned char)*p < 0x7f,
                      "error message has a non-printable byte: %s", err);
    ck_assert_msg(strstr(err, SECRET) == NULL && strstr(err, "3cr3") == NULL,
                  "error shows the password: %s", err);
    ck_assert_msg(err[strlen(err) - 1] != '.', "error ends with a full stop: %s", err);
}

START_TEST(parse_good)
{
    const struct good *g = &goods[_i];
    struct rr_endpoint ep;
    char err[RR_ERRLEN] = "";

    ck_assert_msg(rr_url_parse(g->url, &ep, err, sizeof err) == 0, "'%s' rejected: %s", g->url, err);
    ck_assert_int_eq(ep.transport, g->transport);
    ck_assert_int_eq(ep.tls, g->tls);
    ck_assert_int_eq(ep.kind == RR_EP_SENTINEL, g->sentinel);
    ck_assert_str_eq(ep.host, g->host);
    ck_assert_int_eq(ep.port, g->port);
    ck_assert_str_eq(ep.path, g->path);
    ck_assert_int_eq(ep.db, g->db);
    ck_assert_int_eq(ep.has_user, g->user != NULL);
    ck_assert_str_eq(ep.user, g->user ? g->user : "");
    ck_assert_int_eq(ep.has_password, g->password != NULL);
    ck_assert_str_eq(ep.password, g->password ? g->password : "");
    ck_assert_str_eq(ep.display, g->display);
    ck_assert_ptr_null(strstr(ep.display, SECRET));
}
END_TEST

/* Formatted back (--status's commands to paste), every good URL reads as
 * the same endpoint, without its password. */
START_TEST(format_round_trip)
{
    const struct good *g = &goods[_i];
    struct rr_endpoint ep, back;
    char err[RR_ERRLEN] = "", url[2048];

    ck_assert_int_eq(rr_url_parse(g->url, &ep, err, sizeof err), 0);
    ck_assert_int_eq(rr_url_format(&ep, url, sizeof url), 0);
    ck_assert_ptr_null(strstr(url, SECRET));
    ck_assert_msg(rr_url_parse(url, &back, err, sizeof err) == 0, "'%s' -> '%s': %s", g->url, url,
                  err);
    ck_assert_int_eq(back.transport, ep.transport);
    ck_assert_int_eq(back.tls, ep.tls);
    ck_assert_int_eq(back.kind, ep.kind);
    ck_assert_str_eq(back.host, ep.host);
    ck_assert_int_eq(back.port, ep.port);
    ck_assert_str_eq(back.path, ep.path);
    ck_assert_int_eq(back.db, ep.db);
    ck_assert_str_eq(back.user, ep.user);
    ck_assert_str_eq(back.master, ep.master);
    ck_assert_int_eq(back.n_nodes, ep.n_nodes);
    ck_assert_str_eq(back.display, ep.display);
    ck_assert(!back.has_password);
    ck_assert_int_eq(rr_url_format(&ep, url, 8), -1);
}
END_TEST

START_TEST(parse_bad)
{
    const char *url = bads[_i];
    struct rr_endpoint ep;
    char err[RR_ERRLEN] = "";

    memset(&ep, 0x5a, sizeof ep);
    ck_assert_msg(rr_url_parse(url, &ep, err, sizeof err) == -1, "'%s' accepted", url);
    assert_clean_error(url, err);
    /* A failed parse leaves no secret behind. */
    ck_assert_msg(!ep.has_password && ep.password[0] == '\0', "'%s': password left in ep", url);
}
END_TEST

START_TEST(node_lists)
{
    struct rr_endpoint ep;
    char err[RR_ERRLEN] = "";

    ck_assert_int_eq(rr_url_parse("redis-cluster://a:7000,[::1]:7001,c", &ep, err, sizeof err), 0);
    ck_assert_int_eq(ep.kind, RR_EP_CLUSTER);
    ck_assert_int_eq(ep.n_nodes, 3);
    ck_assert_str_eq(ep.nodes[0].host, "a");
    ck_assert_int_eq(ep.nodes[0].port, 7000);
    ck_assert_str_eq(ep.nodes[1].host, "::1");
    ck_assert_int_eq(ep.nodes[1].port, 7001);
    ck_assert_str_eq(ep.nodes[2].host, "c");
    ck_assert_int_eq(ep.nodes[2].port, 6379);
    ck_assert_str_eq(ep.display, "cluster a:7000");
    ck_assert_int_eq(rr_url_parse("rediss-cluster://u:" SECRET "@a:1", &ep, err, sizeof err), 0);
    ck_assert(ep.tls && ep.kind == RR_EP_CLUSTER && ep.has_password);
    ck_assert_int_eq(rr_url_parse("redis-sentinel://s1,s2:1/mymaster", &ep, err, sizeof err), 0);
    ck_assert_int_eq(ep.n_nodes, 2);
    ck_assert_str_eq(ep.master, "mymaster");
    ck_assert_int_eq(ep.nodes[1].port, 1);
    ck_assert_int_eq(ep.nodes[0].port, 26379);
    ck_assert_int_eq(rr_url_parse("redis-sentinel://s1/m?x=1", &ep, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "?db=N"));
}
END_TEST

START_TEST(specific_messages)
{
    struct rr_endpoint ep;
    char err[RR_ERRLEN];

    ck_assert_int_eq(rr_url_parse("redis://h:70000", &ep, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "65535"));
    ck_assert_ptr_nonnull(strstr(err, "70000"));

    ck_assert_int_eq(rr_url_parse("http://x", &ep, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "unknown scheme 'http:'"));
    /* HOST:PORT, as redis-cli users write it: the URL to write instead. */
    ck_assert_int_eq(rr_url_parse("127.0.0.1:31379", &ep, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "missing scheme; write it as redis://127.0.0.1:31379"));
    ck_assert_int_eq(rr_url_parse("user:" SECRET "@h", &ep, err, sizeof err), -1);
    ck_assert_ptr_null(strstr(err, SECRET));

    ck_assert_int_eq(rr_url_parse("redis://:6379", &ep, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "empty host"));

    ck_assert_int_eq(rr_url_parse("unix:///x?password=" SECRET, &ep, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "--password-file"));

    ck_assert_int_eq(rr_url_parse("redis://::1", &ep, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "brackets"));

    /* A space after a comma of a URL list is not an IPv6 address. */
    ck_assert_int_eq(rr_url_parse("redis://a:6379, redis://b:6379", &ep, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "remove the space after the comma"));
    ck_assert_ptr_null(strstr(err, "IPv6"));
    ck_assert_int_eq(rr_url_parse("redis://a, redis://b", &ep, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "remove the space after the comma"));

    /* A unix:// URL's credentials: the path follows the '@'. */
    ck_assert_int_eq(rr_url_parse("unix://:" SECRET "@run/r.sock", &ep, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "follows the '@'"));
    ck_assert_ptr_null(strstr(err, SECRET));

    /* A tiny buffer is still terminated. */
    char tiny[10];
    ck_assert_int_eq(rr_url_parse("nope", &ep, tiny, sizeof tiny), -1);
    ck_assert_uint_eq(strlen(tiny), sizeof tiny - 1);
}
END_TEST

START_TEST(long_fields)
{
    struct rr_endpoint ep;
    char url[2048], err[RR_ERRLEN];

    /* A 511-byte password fits; 512 does not. */
    strcpy(url, "redis://:");
    memset(url + 9, 'p', 511);
    strcpy(url + 9 + 511, "@h");
    ck_assert_int_eq(rr_url_parse(url, &ep, err, sizeof err), 0);
    ck_assert_uint_eq(strlen(ep.password), 511);

    memset(url + 9, 'p', 512);
    strcpy(url + 9 + 512, "@h");
    ck_assert_int_eq(rr_url_parse(url, &ep, err, sizeof err), -1);
    ck_assert_ptr_null(strstr(err, "ppp"));

    /* A 256-byte host name does not fit. */
    strcpy(url, "redis://");
    memset(url + 8, 'h', 256);
    url[8 + 256] = '\0';
    ck_assert_int_eq(rr_url_parse(url, &ep, err, sizeof err), -1);
    ck_assert_uint_lt(strlen(err), 200);

    /* A 127-byte user fits; 128 does not. */
    strcpy(url, "redis://");
    memset(url + 8, 'u', 128);
    strcpy(url + 8 + 128, ":x@h");
    ck_assert_int_eq(rr_url_parse(url, &ep, err, sizeof err), -1);
    memmove(url + 8, url + 9, strlen(url + 9) + 1);
    ck_assert_int_eq(rr_url_parse(url, &ep, err, sizeof err), 0);
    ck_assert_uint_eq(strlen(ep.user), 127);
}
END_TEST

struct scrub {
    const char *in;
    const char *out;
    bool hidden;
};

static const struct scrub scrubs[] = {
    { "redis://:abc@h:6379", "redis://:***@h:6379", true },
    { "redis://user:pw@h", "redis://user:**@h", true },
    { "rediss://u:p%40ss@h/2", "rediss://u:******@h/2", true },
    { "redis://:a@b/c?d@h", "redis://:*******@h", true },
    { "redis-sentinel://:pw@s1,s2/m", "redis-sentinel://:**@s1,s2/m", true },
    { "redis://user@h", "redis://user@h", false },
    { "redis://user:@h", "redis://user:@h", false },
    { "redis://h:6379", "redis://h:6379", false },
    { "unix:///run/r.sock", "unix:///run/r.sock", false },
    { "unix://u:pw@/run/r.sock", "unix://u:**@/run/r.sock", true },
    { "", "", false },
    { "not a url", "not a url", false },
};

START_TEST(scrub_table)
{
    char buf[256];

    snprintf(buf, sizeof buf, "%s", scrubs[_i].in);
    ck_assert_int_eq(rr_url_scrub(buf), scrubs[_i].hidden);
    ck_assert_str_eq(buf, scrubs[_i].out);
    ck_assert_uint_eq(strlen(buf), strlen(scrubs[_i].in));
}
END_TEST

/* What scrub hides is exactly what parse takes as the password. */
START_TEST(scrub_matches_parse)
{
    static const char *const urls[] = {
        "redis://:" SECRET "@h", "redis://u:" SECRET "@h:1/2",
        "redis://:" SECRET "@/?x@h", "redis://:" SECRET ":" SECRET "@[::1]",
    };
    struct rr_endpoint ep;
    char buf[256], err[RR_ERRLEN];

    for (size_t i = 0; i < sizeof urls / sizeof urls[0]; i++) {
        ck_assert_int_eq(rr_url_parse(urls[i], &ep, err, sizeof err), 0);
        snprintf(buf, sizeof buf, "%s", urls[i]);
        ck_assert(rr_url_scrub(buf));
        ck_assert_ptr_null(strstr(buf, SECRET));
        ck_assert_uint_eq(strspn(strchr(buf + 8, ':') + 1, "*"), strlen(ep.password));
    }
}
END_TEST

/* Which two hosts are one server, decided without a lookup. */
static const struct {
    const char *a, *b;
    bool same;
} hosts[] = {
    { "127.0.0.1", "127.0.0.1", true },
    { "127.0.0.1", "localhost", true },
    { "localhost", "127.0.0.1", true },
    { "LocalHost.", "127.0.0.1", true },
    { "localhost", "::1", true },
    { "::1", "localhost", true },
    { "localhost", "LOCALHOST", true },
    { "localhost", "localhost.", true },
    { "127.1", "127.0.0.1", true },
    { "2130706433", "127.0.0.1", true },
    { "0x7f.0.0.1", "127.0.0.1", true },
    { "::ffff:127.0.0.1", "127.0.0.1", true },
    { "::ffff:127.0.0.1", "localhost", true },
    { "0:0::1", "::1", true },
    { "::FFFF:10.0.0.5", "10.0.0.5", true },
    { "redis.example.com", "REDIS.example.com.", true },
    /* Only the servers can tell these. */
    { "127.0.0.1", "::1", false },
    { "127.0.0.2", "localhost", false },
    { "127.0.0.2", "127.0.0.1", false },
    { "10.0.0.5", "localhost", false },
    { "localhost", "localhost.localdomain", false },
    { "myhost", "127.0.1.1", false },
    { "redis.example.com", "10.0.0.5", false },
    { "a.example", "b.example", false },
    { "a.example", "a.example..", false },
    { "localhostx", "127.0.0.1", false },
    { ".", "", false },
};

START_TEST(same_host)
{
    ck_assert_msg(rr_url_same_host(hosts[_i].a, hosts[_i].b) == hosts[_i].same,
                  "'%s' and '%s': want %s", hosts[_i].a, hosts[_i].b,
                  hosts[_i].same ? "the same" : "not the same");
    ck_assert(rr_url_same_host(hosts[_i].b, hosts[_i].a) == hosts[_i].same);
}
END_TEST

static Suite *url_suite(void)
{
    Suite *s = suite_create("url");
    TCase *tc = tcase_create("parse");

    tcase_add_loop_test(tc, parse_good, 0, N(goods));
    tcase_add_loop_test(tc, format_round_trip, 0, N(goods));
    tcase_add_loop_test(tc, parse_bad, 0, N(bads));
    tcase_add_test(tc, specific_messages);
    tcase_add_test(tc, node_lists);
    tcase_add_test(tc, long_fields);
    tcase_add_loop_test(tc, same_host, 0, N(hosts));
    suite_add_tcase(s, tc);

    tc = tcase_create("scrub");
    tcase_add_loop_test(tc, scrub_table, 0, N(scrubs));
    tcase_add_test(tc, scrub_matches_parse);
    suite_add_tcase(s, tc);
    return s;
}

const struct rr_unit rr_unit = { "url", url_suite, NULL, NULL };
