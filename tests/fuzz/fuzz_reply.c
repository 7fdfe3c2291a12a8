/* fuzz_reply.c — libFuzzer target for the reply classifiers.
 *
 * The input is a byte stream from a Redis server. It goes through a hiredis
 * redisReader as it comes from the socket, and every complete
 * reply (and each element of an array reply) is classified with
 * rr_lock_classify_acquire, rr_lock_classify_renew and rr_job_record_parse.
 * Invariants:
 *   - a malformed reply is never counted as a vote: RR_VOTE_OK only for an
 *     array whose first element is exactly "OK" (all of its bytes) and whose
 *     fence is a positive integer: an integer reply, or a bulk string that
 *     is a decimal number in all of its bytes; the vote's fence is that
 *     number;
 *   - an ERR vote has a reason; BUSY/DONE/STALE only for their tags (BUSY: an
 *     array of exactly 9);
 *   - renew says 1 or 0 only for the integer replies 1 and 0;
 *   - a parsed record's strings are NUL-terminated and its status known;
 *   - the capped reader (resp.h) gives the same replies as a plain hiredis
 *     reader, and the same protocol error, until it stops at the cap.
 *
 * hiredis 0.14 allocates an array's element table as soon as it reads the
 * "*N" header, so "*1000000000\r\n" asks for 8 GB; inputs with a count
 * above MAX_COUNT are skipped so the fuzzer does not stop on that (see
 * docs/FUZZING.md). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "conn.h"
#include "job.h"
#include "lock.h"
#include "resp.h"

#define FAIL(...) do { fprintf(stderr, "fuzz_reply: " __VA_ARGS__); fputc('\n', stderr); abort(); } while (0)
#define MAX_COUNT 100000
#define MAX_REPLIES 256

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Is there a "*N" with N > MAX_COUNT anywhere (a cheap over-approximation
 * of the multi-bulk headers the reader will see)? */
static bool huge_count(const uint8_t *d, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (d[i] != '*')
            continue;
        unsigned long long v = 0;
        size_t j = i + 1;
        if (j < n && (d[j] == '+' || d[j] == '-'))
            j++;
        for (; j < n && d[j] >= '0' && d[j] <= '9'; j++) {
            v = v * 10 + (d[j] - '0');
            if (v > MAX_COUNT)
                return true;
        }
    }
    return false;
}

static bool is_text(const redisReply *e)
{
    return e->type == REDIS_REPLY_STRING || e->type == REDIS_REPLY_STATUS;
}

static bool text_is(const redisReply *e, const char *s)
{
    return is_text(e) && e->len == strlen(s) && memcmp(e->str, s, e->len) == 0;
}

/* A positive integer: an integer reply, or a bulk string that is a decimal
 * number in every one of its bytes (strtoll's own syntax). */
static bool positive_int(const redisReply *e, long long *out)
{
    char *end;

    if (e->type == REDIS_REPLY_INTEGER) {
        *out = e->integer;
        return e->integer > 0;
    }
    if (e->type != REDIS_REPLY_STRING || e->len == 0)
        return false;
    errno = 0;
    *out = strtoll(e->str, &end, 10);
    return errno == 0 && end == e->str + e->len && *out > 0;
}

static void check_acquire(const redisReply *r)
{
    struct rr_vote v;
    long long fence;

    rr_lock_classify_acquire(RR_REPLY_OK, r, &v);
    switch (v.kind) {
    case RR_VOTE_OK:
        if (r->type != REDIS_REPLY_ARRAY || r->elements < 4)
            FAIL("OK vote from a reply of type %d with %zu elements", r->type, r->elements);
        if (!text_is(r->element[0], "OK"))
            FAIL("OK vote from a reply whose first element is not exactly \"OK\" (type %d, len %zu)",
                 r->element[0]->type, r->element[0]->len);
        if (!positive_int(r->element[1], &fence))
            FAIL("OK vote with a fence that is not a positive integer (type %d, len %zu)",
                 r->element[1]->type, r->element[1]->len);
        if (v.fence != fence)
            FAIL("OK vote with fence %lld, reply says %lld", v.fence, fence);
        break;
    case RR_VOTE_BUSY:
    case RR_VOTE_DONE:
    case RR_VOTE_STALE:
        if (r->type != REDIS_REPLY_ARRAY || r->elements < 5 ||
            (v.kind == RR_VOTE_BUSY && r->elements != 9))
            FAIL("vote %d from a reply of type %d with %zu elements", (int)v.kind, r->type, r->elements);
        if (!is_text(r->element[0]))
            FAIL("vote %d from a reply whose tag has type %d", (int)v.kind, r->element[0]->type);
        if (strcmp(r->element[0]->str, v.kind == RR_VOTE_BUSY ? "BUSY"
                                         : v.kind == RR_VOTE_DONE ? "DONE" : "STALE") != 0)
            FAIL("vote %d from tag '%s'", (int)v.kind, r->element[0]->str);
        if (strnlen(v.host, sizeof v.host) == sizeof v.host)
            FAIL("host is not NUL-terminated");
        if (v.kind == RR_VOTE_BUSY && (v.rank < -1 || v.ahead < -1 || v.since_ms < 0 ||
                                       (v.foreign && (v.ahead != -1 || v.host[0]))))
            FAIL("BUSY vote out of range: rank %lld ahead %lld since %lld foreign %d",
                 v.rank, v.ahead, v.since_ms, (int)v.foreign);
        break;
    case RR_VOTE_ERR:
        if (v.detail[0] == '\0' || strnlen(v.detail, sizeof v.detail) == sizeof v.detail)
            FAIL("ERR vote without a NUL-terminated reason");
        break;
    default:
        FAIL("vote kind %d", (int)v.kind);
    }
}

static void check_renew(const redisReply *r)
{
    char by[16];
    int k = rr_lock_classify_renew(RR_REPLY_OK, r, by, sizeof by);
    bool revoked = r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
                   r->element[0]->type == REDIS_REPLY_INTEGER && r->element[0]->integer == 0 &&
                   r->element[1]->type == REDIS_REPLY_STRING;

    if (k == 1 && !(r->type == REDIS_REPLY_INTEGER && r->integer == 1))
        FAIL("renew counted as extended from a reply of type %d", r->type);
    if (k == 0 && !(r->type == REDIS_REPLY_INTEGER && r->integer == 0) && !revoked)
        FAIL("renew counted as a mismatch from a reply of type %d", r->type);
    if (strlen(by) >= sizeof by || (by[0] && !revoked))
        FAIL("renew named a revoker from a reply of type %d", r->type);
    if (k < -1 || k > 1)
        FAIL("renew returned %d", k);
}

static void check_record(const redisReply *r)
{
    struct rr_job_record rec;

    rr_job_record_parse(&rec, r);
    if ((int)rec.status < RR_JOB_NONE || rec.status > RR_JOB_UNKNOWN)
        FAIL("record status %d", (int)rec.status);
    if (strnlen(rec.host, sizeof rec.host) == sizeof rec.host ||
        strnlen(rec.once, sizeof rec.once) == sizeof rec.once ||
        strnlen(rec.token, sizeof rec.token) == sizeof rec.token)
        FAIL("a record string is not NUL-terminated");
    if (r->type != REDIS_REPLY_ARRAY && (rec.status != RR_JOB_NONE || rec.exit_code != -1 || rec.signal != -1))
        FAIL("a record from a reply of type %d", r->type);
}

static void check_all(const redisReply *r)
{
    check_acquire(r);
    check_renew(r);
    check_record(r);
}

/* The capped reader's answer next to hiredis's own: rc and reply as
 * redisReaderGetReply gave them. Returns false once it stopped at the cap. */
static bool same_as_capped(struct rr_resp_reader *cr, int rc, const redisReply *r)
{
    redisReply *c = NULL;
    int crc = rr_resp_get(cr, &c);

    if (crc == RR_RESP_TOO_LARGE)
        return false;
    if (rc != REDIS_OK) {
        if (crc != RR_RESP_PROTO)
            FAIL("hiredis failed, the capped reader gave %d", crc);
        return false;
    }
    if (!r != !c || (r && (r->type != c->type || r->len != c->len || r->elements != c->elements)))
        FAIL("the capped reader gave another reply (%d, type %d) than hiredis (type %d)", crc,
             c ? c->type : -1, r ? r->type : -1);
    if (c)
        freeReplyObject(c);
    return r != NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct rr_resp_reader *cr;
    redisReader *rd;
    struct rr_vote v;
    void *reply;
    int n = 0;

    if (huge_count(data, size))
        return 0;

    /* What the callers see when there is no reply at all. */
    rr_lock_classify_acquire(RR_REPLY_TIMEOUT, NULL, &v);
    if (v.kind != RR_VOTE_ERR)
        FAIL("a timeout counted as a vote");
    rr_lock_classify_acquire(RR_REPLY_IOERR, NULL, &v);
    if (v.kind != RR_VOTE_ERR || rr_lock_classify_renew(RR_REPLY_IOERR, NULL, NULL, 0) != -1)
        FAIL("an I/O error counted as a vote");

    rd = redisReaderCreate();
    cr = rr_resp_reader_new();
    if (!rd || !cr)
        abort();
    if (redisReaderFeed(rd, (const char *)data, size) != REDIS_OK
        || rr_resp_feed(cr, (const char *)data, size) != RR_RESP_OK)
        abort();
    bool capped = true;
    while (n++ < MAX_REPLIES) {
        int rc = redisReaderGetReply(rd, &reply);
        if (capped)
            capped = same_as_capped(cr, rc, rc == REDIS_OK ? reply : NULL);
        if (rc != REDIS_OK || reply == NULL)
            break;
        const redisReply *r = reply;
        check_all(r);
        if (r->type == REDIS_REPLY_ARRAY)
            for (size_t i = 0; i < r->elements; i++)
                check_all(r->element[i]);
        freeReplyObject(reply);
    }
    rr_resp_reader_free(cr);
    redisReaderFree(rd);
    return 0;
}
