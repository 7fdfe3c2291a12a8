/* resp.c — pure RESP: encoding, classification, the capped reader (resp.h).
 *
 * The cap works on the stream, not inside hiredis: a small framer walks
 * every byte before hiredis does, knows where each reply starts and ends,
 * and charges each reply what hiredis will allocate for it. hiredis
 * allocates an array's element table as soon as it has read the "*N"
 * header, so the framer must see a header before hiredis does; what lies
 * beyond the point where a reply outgrows the cap is never fed.
 *
 * The framer accepts at least everything hiredis accepts (any hiredis that
 * speaks RESP2, and RESP3's types for 1.x), with the same lengths. Where
 * it cannot follow (an unknown type byte, a length hiredis rejects), it
 * stops framing and leaves the error to hiredis, which fails the stream on
 * that same byte.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE  /* strncasecmp */
#endif
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "resp.h"

/* ---- encoding and classification -------------------------------------- */

int rr_resp_format(char **out, size_t *len, int argc, const char **argv,
                   const size_t *argvlen)
{
    char *cmd = NULL;
    int n = redisFormatCommandArgv(&cmd, argc, argv, argvlen);

    if (n < 0 || !cmd)
        return RR_RESP_NOMEM;
    *out = cmd;
    *len = (size_t)n;
    return RR_RESP_OK;
}

bool rr_resp_is_command(const char **argv, const size_t *argvlen, const char *name)
{
    size_t len = argvlen ? argvlen[0] : strlen(argv[0]);

    return len == strlen(name) && strncasecmp(argv[0], name, len) == 0;
}

int rr_resp_confirm_count(int argc, const char **argv, const size_t *argvlen)
{
    static const char *const cmds[] = { "subscribe", "psubscribe", "unsubscribe",
                                        "punsubscribe", "ssubscribe", "sunsubscribe" };
    size_t i;

    if (argc < 2)
        return 1;
    for (i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        if (rr_resp_is_command(argv, argvlen, cmds[i]))
            return argc - 1;
    return 1;
}

static bool is_str(const redisReply *r, const char *s)
{
    return (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS)
        && r->len == strlen(s) && strncasecmp(r->str, s, r->len) == 0;
}

bool rr_resp_is_push(const redisReply *r)
{
    return r->type == REDIS_REPLY_ARRAY && r->elements >= 3
        && (is_str(r->element[0], "message") || is_str(r->element[0], "pmessage")
            || is_str(r->element[0], "smessage"));
}

bool rr_resp_is_confirm(const redisReply *r)
{
    return r->type == REDIS_REPLY_ARRAY && r->elements == 3
        && (is_str(r->element[0], "subscribe") || is_str(r->element[0], "psubscribe")
            || is_str(r->element[0], "unsubscribe")
            || is_str(r->element[0], "punsubscribe")
            || is_str(r->element[0], "ssubscribe")
            || is_str(r->element[0], "sunsubscribe"));
}

bool rr_resp_ended_unasked(const redisReply *r, bool asked)
{
    return !asked && r->type == REDIS_REPLY_ARRAY && r->elements == 3
        && is_str(r->element[0], "sunsubscribe");
}

/* ---- the framer --------------------------------------------------------- */

/* What one array element costs hiredis: its slot and its reply object. */
#define ELEMENT_COST (sizeof(redisReply *) + sizeof(redisReply))
/* Deeper than any hiredis goes (0.14 stops at 7); deeper is no Redis. */
#define MAX_DEPTH 64

enum at { AT_TYPE, AT_LINE, AT_BODY };

struct frame {
    enum at at;
    char type;                  /* of the item being read */
    bool cr;                    /* the line's last byte was '\r' */
    bool neg, bad;              /* the line as a length: sign, not a number */
    unsigned long long num;     /* the line as a length, so far */
    size_t line;                /* bytes of the line so far, without CRLF */
    unsigned long long body;    /* bytes of a bulk body (and CRLF) still due */
    int depth;                  /* open aggregates */
    long long left[MAX_DEPTH];  /* elements each still waits for */
    size_t held;                /* charged to the reply being read */
    bool lost;                  /* hiredis will fail the stream here */
    bool over;                  /* the reply being read is past the cap */
};

struct rr_resp_reader {
    redisReader *r;
    struct frame f;
};

/* Charge n parts of each bytes to the reply being read. */
static bool charge(struct frame *f, unsigned long long n, size_t each)
{
    if (n > (RR_RESP_CAP - f->held) / each)
        return false;
    f->held += (size_t)n * each;
    return true;
}

/* One item is complete: count it against its aggregates; a whole reply
 * starts its own account. */
static void item_done(struct frame *f)
{
    f->at = AT_TYPE;
    for (;;) {
        if (f->depth == 0) {
            f->held = 0;
            return;
        }
        if (--f->left[f->depth - 1] > 0)
            return;
        f->depth--;
    }
}

/* A length line of an aggregate of n elements (each counted per). Returns
 * false when the reply is past the cap. */
static bool aggregate(struct frame *f, long long n, int per)
{
    if (n == -1) {          /* a nil */
        item_done(f);
        return true;
    }
    if (n < -1 || n > INT_MAX) {
        f->lost = true;     /* "Multi-bulk length out of range" */
        return true;
    }
    if (!charge(f, (unsigned long long)n * (unsigned)per + 1, ELEMENT_COST))
        return false;
    if (n == 0) {
        item_done(f);
        return true;
    }
    if (f->depth == MAX_DEPTH)
        return false;
    f->left[f->depth++] = n * per;
    f->at = AT_TYPE;
    return true;
}

/* The line of the current item is complete. Returns false when the reply
 * is past the cap. */
static bool line_done(struct frame *f)
{
    long long n = f->neg ? -(long long)f->num : (long long)f->num;
    bool number = !f->bad && f->line > (f->neg ? 1u : 0u);

    switch (f->type) {
    case '$':   /* bulk string */
    case '=':   /* verbatim string (RESP3) */
        if (!number || n < -1) {
            f->lost = true;
            return true;
        }
        if (n == -1) {
            item_done(f);
            return true;
        }
        if (!charge(f, (unsigned long long)n, 1))
            return false;
        f->body = (unsigned long long)n + 2;
        f->at = AT_BODY;
        return true;
    case '*': case '~': case '>':   /* array, set, push */
    case '%': case '|':             /* map, attribute: a key and a value each */
        if (!number) {
            f->lost = true;
            return true;
        }
        return aggregate(f, n, f->type == '%' || f->type == '|' ? 2 : 1);
    case '+': case '-': case '(':   /* status, error, big number: strings */
        charge(f, f->line, 1);      /* cannot fail: checked byte by byte */
        break;
    }
    item_done(f);
    return true;
}

/* Take in one byte of a line; the length is parsed on the way. */
static bool line_byte(struct frame *f, char ch)
{
    if (f->cr && ch == '\n')
        return line_done(f);
    if (f->cr) {            /* that '\r' was part of the line */
        f->line++;
        f->bad = true;
    }
    f->cr = ch == '\r';
    if (f->cr)
        return true;
    if (f->line == 0 && ch == '-')
        f->neg = true;
    else if (ch < '0' || ch > '9'
             || f->num > ((unsigned long long)LLONG_MAX - (unsigned)(ch - '0')) / 10)
        f->bad = true;
    else
        f->num = f->num * 10 + (unsigned)(ch - '0');
    f->line++;
    /* A line hiredis keeps waiting for counts while it grows. */
    return f->line + 1 <= RR_RESP_CAP - f->held;
}

static void start_item(struct frame *f, char type)
{
    switch (type) {
    case '$': case '=': case '*': case '~': case '>': case '%': case '|':
    case '+': case '-': case '(': case ':': case ',': case '_': case '#':
        f->type = type;
        f->at = AT_LINE;
        f->cr = f->neg = f->bad = false;
        f->num = 0;
        f->line = 0;
        return;
    }
    f->lost = true;         /* "Protocol error, got ... as reply type byte" */
}

/* Frame data; returns how many of its bytes may go to hiredis (all of
 * them unless the reply being read outgrew the cap). */
static size_t frame(struct frame *f, const char *data, size_t len)
{
    size_t i = 0;

    while (i < len && !f->lost) {
        if (f->at == AT_BODY) {
            size_t n = f->body < len - i ? (size_t)f->body : len - i;
            i += n;
            if ((f->body -= n) == 0)
                item_done(f);
            continue;
        }
        if (f->at == AT_TYPE)
            start_item(f, data[i]);
        else if (!line_byte(f, data[i])) {
            f->over = true;
            return i;       /* the byte that made it too large stays out */
        }
        i++;
    }
    return len;
}

/* ---- the reader --------------------------------------------------------- */

struct rr_resp_reader *rr_resp_reader_new(void)
{
    struct rr_resp_reader *rd = calloc(1, sizeof *rd);

    if (!rd)
        return NULL;
    if (!(rd->r = redisReaderCreate())) {
        free(rd);
        return NULL;
    }
#if defined(HIREDIS_MAJOR) && HIREDIS_MAJOR >= 1
    /* 0.14 refuses more than INT_MAX elements; the framer relies on it. */
    rd->r->maxelements = INT_MAX;
#endif
    return rd;
}

void rr_resp_reader_free(struct rr_resp_reader *rd)
{
    if (!rd)
        return;
    redisReaderFree(rd->r);
    free(rd);
}

int rr_resp_feed(struct rr_resp_reader *rd, const char *data, size_t len)
{
    size_t n;

    if (rd->f.over)
        return RR_RESP_OK;  /* the stream ends there */
    n = frame(&rd->f, data, len);
    if (n > 0 && redisReaderFeed(rd->r, data, n) != REDIS_OK)
        return RR_RESP_NOMEM;
    return RR_RESP_OK;
}

int rr_resp_get(struct rr_resp_reader *rd, redisReply **out)
{
    void *reply = NULL;

    *out = NULL;
    if (redisReaderGetReply(rd->r, &reply) != REDIS_OK)
        return RR_RESP_PROTO;
    if (reply) {
        *out = reply;
        return 1;
    }
    return rd->f.over ? RR_RESP_TOO_LARGE : 0;
}

const char *rr_resp_errstr(const struct rr_resp_reader *rd)
{
    return rd->r->err ? rd->r->errstr : "";
}
