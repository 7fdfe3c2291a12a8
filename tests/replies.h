/* replies.h — build hiredis replies from RESP text in unit tests, through the
 * same redisReader the program uses, so tests see real reply shapes. */
#ifndef RR_TEST_REPLIES_H
#define RR_TEST_REPLIES_H

#include <string.h>
#include <hiredis/hiredis.h>

/* Parse one complete RESP reply; returns NULL for a protocol error or an
 * incomplete (truncated) reply. Free with freeReplyObject. */
static inline redisReply *resp_n(const char *text, size_t len)
{
    redisReader *rd = redisReaderCreate();
    void *reply = NULL;

    redisReaderFeed(rd, text, len);
    if (redisReaderGetReply(rd, &reply) != REDIS_OK)
        reply = NULL;
    redisReaderFree(rd);
    return reply;
}

static inline redisReply *resp(const char *text)
{
    return resp_n(text, strlen(text));
}

#endif
