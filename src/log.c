/* log.c — messages to stderr (text or JSON lines) and optionally syslog.
 *
 * Every line is built whole in a buffer and handed to one write(2): lines
 * of at most 4 KiB (PIPE_BUF on Linux) written to a pipe by several
 * redlock-run processes at once then never interleave.
 *
 * Logging never blocks: a full stderr pipe nobody reads, a tty stopped
 * with ^S or a stalled syslog daemon must not hold up the loop that renews
 * the lock and stops the command. A line that cannot be written at once is
 * dropped, and the next line that gets through says how many were. Syslog
 * is our own non-blocking datagram to /dev/log (glibc's syslog() blocks).
 */
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "escape.h"
#include "log.h"

/* The whole line, newline included. */
#define LINE_CAP 4096
#define JOB_MAX 255
#define ELLIPSIS "..."
#define TEXT_PREFIX "redlock-run: "

static struct {
    char job[JOB_MAX + 1];
    bool has_job;
    int verbosity;
    bool json;
    bool use_syslog;
    bool syslog_open;
    int syslog_fd;
    unsigned dropped;           /* stderr lines we could not write */
    char **secrets;
    size_t n_secrets;
} st;

static const char *const level_names[] = { "error", "warn", "notice", "info", "debug" };
static const int syslog_prio[] = { LOG_ERR, LOG_WARNING, LOG_NOTICE, LOG_INFO, LOG_DEBUG };

void rr_log_init(const char *job, int verbosity, bool json, bool use_syslog)
{
    st.has_job = job != NULL;
    snprintf(st.job, sizeof st.job, "%s", job ? job : "");
    st.verbosity = verbosity;
    st.json = json;
    st.use_syslog = use_syslog;
    if (!use_syslog && st.syslog_open) {
        if (st.syslog_fd >= 0)
            close(st.syslog_fd);
        st.syslog_open = false;
    }
}

void rr_log_secret(const char *secret)
{
    if (!secret || !*secret)
        return;
    for (size_t i = 0; i < st.n_secrets; i++)
        if (strcmp(st.secrets[i], secret) == 0)
            return;
    /* No fixed limit: silently dropping a secret would leak it. */
    char **grown = realloc(st.secrets, (st.n_secrets + 1) * sizeof *grown);
    if (!grown)
        return;
    st.secrets = grown;
    if ((st.secrets[st.n_secrets] = strdup(secret)) != NULL)
        st.n_secrets++;
}

static enum rr_log_level max_level(void)
{
    if (st.verbosity < 0)
        return RR_LOG_ERROR;
    if (st.verbosity == 0)
        return RR_LOG_NOTICE;
    if (st.verbosity == 1)
        return RR_LOG_INFO;
    return RR_LOG_DEBUG;
}

bool rr_log_enabled(enum rr_log_level level)
{
    return level <= max_level();
}

/* The line being built, bounded by LINE_CAP. */
struct line {
    char buf[LINE_CAP + 1];
    size_t len;
};

static size_t room(const struct line *l)
{
    return LINE_CAP - 1 - l->len;   /* keep one byte for the newline */
}

static void put(struct line *l, const char *s)
{
    size_t n = strlen(s);
    if (n > room(l))
        n = room(l);
    memcpy(l->buf + l->len, s, n);
    l->len += n;
    l->buf[l->len] = '\0';
}

/* Append s escaped, using at most max bytes; when it does not all fit, cut
 * it short and end it with "..." (within the same max). */
static void put_escaped(struct line *l, const char *s, size_t slen, size_t max, bool json)
{
    enum rr_esc_kind kind = json ? RR_ESC_JSON : RR_ESC_TEXT;
    if (max > room(l))
        max = room(l);
    size_t used;
    size_t n = rr_escape_n(kind, s, slen, l->buf + l->len, max + 1, &used);
    if (used < slen) {
        size_t keep = max >= sizeof ELLIPSIS - 1 ? max - (sizeof ELLIPSIS - 1) : 0;
        n = rr_escape_n(kind, s, slen, l->buf + l->len, keep + 1, NULL);
        memcpy(l->buf + l->len + n, ELLIPSIS, max - keep);
        n += max - keep;
    }
    l->len += n;
    l->buf[l->len] = '\0';
}

/* A byte that continues a word: ASCII letters, digits, '_', and any byte
 * of a multi-byte character. */
static bool word_byte(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           c == '_' || c >= 0x80;
}

/* Does secret k (sl bytes) stand at s + i (of len) where it is redacted?
 * The rule: a secret of RR_LOG_SECRET_SUBSTR bytes or more wherever it
 * occurs, even inside a word; a shorter one only as a whole token (no word
 * byte right before or after it: "redis://:pw@h", "AUTH pw", a field that
 * is exactly it). A 1-character password redacted inside words would
 * garble every message ("acquir***d ... f***nc***") and, by the gaps,
 * show where it occurs. */
static bool secret_at(const char *s, size_t len, size_t i, const char *secret, size_t sl)
{
    if (sl > len - i || memcmp(s + i, secret, sl) != 0)
        return false;
    if (sl >= RR_LOG_SECRET_SUBSTR)
        return true;
    return (i == 0 || !word_byte((unsigned char)s[i - 1])) &&
           (i + sl == len || !word_byte((unsigned char)s[i + sl]));
}

/* A copy of s (len bytes) with every registered secret replaced by "***"
 * as secret_at says (the longest match wins where secrets overlap).
 * Returns NULL when out of memory: the caller must then show nothing of s. */
static char *redact(const char *s, size_t len, size_t *outlen)
{
    size_t cap = len + 1, o = 0;
    char *out = malloc(cap);
    if (!out)
        return NULL;
    for (size_t i = 0; i < len;) {
        size_t best = 0;
        for (size_t k = 0; k < st.n_secrets; k++) {
            size_t sl = strlen(st.secrets[k]);
            if (sl > best && secret_at(s, len, i, st.secrets[k], sl))
                best = sl;
        }
        const char *piece = best ? "***" : s + i;
        size_t plen = best ? 3 : 1;
        if (o + plen + 1 > cap) {
            /* Only a secret shorter than "***" makes the text grow. */
            char *grown = realloc(out, cap * 2 + plen);
            if (!grown) {
                free(out);
                return NULL;
            }
            out = grown;
            cap = cap * 2 + plen;
        }
        memcpy(out + o, piece, plen);
        o += plen;
        i += best ? best : 1;
    }
    out[o] = '\0';
    *outlen = o;
    return out;
}

/* Fields rendered as ,"key":value in at most max bytes; a field that does
 * not fit ends the list (a long string value is cut with "..." instead if
 * enough of it fits to be useful). */
static void put_fields(struct line *l, const struct rr_field *fields, size_t max)
{
    size_t limit = l->len + (max < room(l) ? max : room(l));
    for (const struct rr_field *f = fields; f && f->key; f++) {
        char val[32];
        const char *sval = f->str;
        char *red = NULL;
        size_t slen = 0;
        if (sval) {
            slen = strlen(sval);
            if (st.n_secrets && !(red = redact(sval, slen, &slen))) {
                sval = "***";
                slen = 3;
            } else if (red) {
                sval = red;
            }
        } else {
            snprintf(val, sizeof val, "%lld", f->num);
        }

        char key[200];
        rr_escape_n(RR_ESC_JSON, f->key, strlen(f->key), key, sizeof key, NULL);
        size_t head = strlen(key) + 5;   /* ,"key": */
        size_t left = limit - l->len;
        bool fits;
        if (sval) {
            char probe[LINE_CAP];
            size_t used;
            size_t n = rr_escape_n(RR_ESC_JSON, sval, slen, probe, sizeof probe, &used);
            fits = used == slen && head + n + 2 <= left;
        } else {
            fits = head + strlen(val) <= left;
        }
        bool cut = !fits && sval && head + 2 + 32 <= left;
        if (fits || cut) {
            put(l, ",\"");
            put(l, key);
            put(l, "\":");
            if (sval) {
                put(l, "\"");
                put_escaped(l, sval, slen, left - head - 2, true);
                put(l, "\"");
            } else {
                put(l, val);
            }
        }
        free(red);
        if (!fits)
            break;
    }
}

static void put_time(struct line *l)
{
    struct timespec ts;
    struct tm tm;
    char buf[64];
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    size_t n = strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, sizeof buf - n, ".%03ldZ", ts.tv_nsec / 1000000);
    put(l, buf);
}

/* Room kept for the message when fields are long. */
#define MSG_MIN 256

static void build_json(struct line *l, enum rr_log_level level, const char *event,
                       const struct rr_field *fields, const char *msg, size_t msglen)
{
    put(l, "{\"time\":\"");
    put_time(l);
    put(l, "\",\"level\":\"");
    put(l, level_names[level]);
    put(l, "\"");
    if (st.has_job) {
        put(l, ",\"job\":\"");
        put_escaped(l, st.job, strlen(st.job), 1024, true);
        put(l, "\"");
    }
    if (event) {
        put(l, ",\"event\":\"");
        put_escaped(l, event, strlen(event), 256, true);
        put(l, "\"");
    }

    /* Fields go after msg in the line, but are rendered first into a side
     * buffer so the message gets whatever room they leave. */
    struct line fl = { .len = 0 };
    size_t msg_fixed = strlen(",\"msg\":\"\"}");
    size_t avail = room(l) - msg_fixed;
    size_t fmax = avail > MSG_MIN ? avail - MSG_MIN : 0;
    fl.buf[0] = '\0';
    put_fields(&fl, fields, fmax);

    put(l, ",\"msg\":\"");
    put_escaped(l, msg, msglen, room(l) - fl.len - 2, true);
    put(l, "\"");
    put(l, fl.buf);
    put(l, "}");
}

static void build_text(struct line *l, bool prefix, const char *msg, size_t msglen)
{
    if (prefix)
        put(l, TEXT_PREFIX);
    if (st.has_job) {
        put_escaped(l, st.job, strlen(st.job), 1024, false);
        put(l, ": ");
    }
    put_escaped(l, msg, msglen, room(l), false);
}

/* Can fd take a write without blocking? A pipe that says so has a free
 * page, enough for one line of at most PIPE_BUF bytes. */
static bool writable(int fd)
{
    struct pollfd p = { .fd = fd, .events = POLLOUT };
    int r;

    do {
        r = poll(&p, 1, 0);
    } while (r < 0 && errno == EINTR);
    return r == 1 && (p.revents & POLLOUT);
}

/* Our own way to stderr that cannot block. O_NONBLOCK on fd 2 itself would
 * change the file description we share with the command (its writes would
 * fail with EAGAIN), and poll-then-write races with the command's own
 * writes. So a pipe, FIFO or terminal is opened again, as a description
 * of our own, non-blocking; a socket (journald's stdout) gets MSG_DONTWAIT;
 * a regular file never blocks. Only when none of that works do we fall
 * back to poll before write. */
static struct {
    bool init, sock, nonblock, partial;
    int fd;
} out;

static void out_init(void)
{
    struct stat sb;

    out.init = true;
    out.fd = STDERR_FILENO;
    if (fstat(STDERR_FILENO, &sb) != 0)
        return;
    if (S_ISSOCK(sb.st_mode)) {
        out.sock = out.nonblock = true;
    } else if (S_ISFIFO(sb.st_mode) || S_ISCHR(sb.st_mode)) {
        int fd = open("/proc/self/fd/2", O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (fd >= 0) {
            out.fd = fd;
            out.nonblock = true;
        }
    } else if (S_ISREG(sb.st_mode)) {
        out.nonblock = true;
    }
}

static bool write_all(const char *p, size_t left)
{
    if (!out.init)
        out_init();
    while (left > 0) {
        if (!out.nonblock && !writable(out.fd))
            return false;
        ssize_t w = out.sock ? send(out.fd, p, left, MSG_DONTWAIT | MSG_NOSIGNAL)
                             : write(out.fd, p, left);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        p += w;
        left -= (size_t)w;
        out.partial = left > 0;   /* a line cut short needs its newline */
    }
    return true;
}

static void write_line(struct line *l)
{
    l->buf[l->len++] = '\n';
    if (out.partial && !write_all("\n", 1)) {
        st.dropped++;
        return;
    }
    if (st.dropped) {
        char note[128];
        int n = snprintf(note, sizeof note,
                         TEXT_PREFIX "%u log line%s dropped: stderr was not being read\n",
                         st.dropped, st.dropped == 1 ? "" : "s");
        if (!write_all(note, (size_t)n)) {
            st.dropped++;
            return;
        }
        st.dropped = 0;
    }
    if (!write_all(l->buf, l->len))
        st.dropped++;
}

/* RFC 3164 to the local syslog socket, without ever waiting for it. */
static void syslog_send(int prio, const char *msg)
{
    if (!st.syslog_open) {
        const char *path = getenv("REDLOCK_SYSLOG_SOCKET");
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        st.syslog_open = true;
        snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path && *path ? path : "/dev/log");
        st.syslog_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (st.syslog_fd >= 0 && connect(st.syslog_fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
            int e = errno;
            close(st.syslog_fd);
            st.syslog_fd = -1;
            /* Once, on stderr whatever -q says: the audit trail is not
             * where the operator looks for it. */
            char note[sizeof sa.sun_path + 160];
            int n = snprintf(note, sizeof note,
                             TEXT_PREFIX "--syslog: cannot reach %s (%s), so nothing is "
                             "logged there: start a syslog daemon (rsyslog, journald)\n",
                             sa.sun_path, strerror(e));
            if (n > 0)
                write_all(note, (size_t)n < sizeof note ? (size_t)n : sizeof note - 1);
        }
    }
    if (st.syslog_fd < 0)
        return;
    char buf[LINE_CAP + 128], ts[32] = "";
    time_t now = time(NULL);
    struct tm tm;
    if (localtime_r(&now, &tm))
        strftime(ts, sizeof ts, "%b %e %H:%M:%S", &tm);
    int n = snprintf(buf, sizeof buf, "<%d>%s redlock-run[%ld]: %s", LOG_USER | prio, ts,
                     (long)getpid(), msg);
    if (n > 0)
        send(st.syslog_fd, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1,
             MSG_DONTWAIT | MSG_NOSIGNAL);
}

/* How a line is routed (see log.h): a plain line goes where its level
 * says; an outcome also reaches syslog always, and under -q stderr too when
 * it is a failure; a progress line is left to the outcome under -q; a
 * line that asks the operator to act goes to stderr whatever -q says. */
enum kind { PLAIN, OUTCOME, PROGRESS, ACT };

static void vlog(enum rr_log_level level, enum kind kind, const char *event,
                 const struct rr_field *fields, const char *fmt, va_list ap_in)
{
    if ((int)level < 0)
        level = RR_LOG_ERROR;
    if (level > RR_LOG_DEBUG)
        level = RR_LOG_DEBUG;
    bool quiet = st.verbosity < 0;
    bool to_stderr = kind == OUTCOME    ? rr_log_enabled(level) || level <= RR_LOG_WARN
                     : kind == PROGRESS ? rr_log_enabled(level) && !quiet
                     : kind == ACT      ? true
                                        : rr_log_enabled(level);
    bool to_syslog = st.use_syslog && (to_stderr || kind != PLAIN);
    if (!to_stderr && !to_syslog)
        return;
    int saved_errno = errno;   /* callers may log between a call and errno */

    char stackbuf[1024];
    char *heap = NULL, *red = NULL;
    const char *msg = stackbuf;
    va_list ap, ap2;
    va_copy(ap, ap_in);
    va_copy(ap2, ap_in);
    int n = vsnprintf(stackbuf, sizeof stackbuf, fmt, ap);
    va_end(ap);
    if (n < 0) {
        msg = "(unformattable message)";
    } else if ((size_t)n >= sizeof stackbuf) {
        /* Format it whole: redacting a cut text could leave part of a
         * secret at the cut. */
        heap = malloc((size_t)n + 1);
        if (heap) {
            vsnprintf(heap, (size_t)n + 1, fmt, ap2);
            msg = heap;
        } else {
            msg = "(message dropped: out of memory)";
        }
    }
    va_end(ap2);

    size_t msglen = strlen(msg);
    if (st.n_secrets) {
        red = redact(msg, msglen, &msglen);
        if (!red) {
            msg = "***";
            msglen = 3;
        } else {
            msg = red;
        }
    }

    struct line l = { .len = 0 };
    l.buf[0] = '\0';
    if (to_stderr) {
        if (st.json)
            build_json(&l, level, event, fields, msg, msglen);
        else
            build_text(&l, true, msg, msglen);
        write_line(&l);
    }

    if (to_syslog) {
        struct line sl = { .len = 0 };
        sl.buf[0] = '\0';
        build_text(&sl, false, msg, msglen);
        syslog_send(syslog_prio[level], sl.buf);
    }

    free(heap);
    free(red);
    errno = saved_errno;
}

void rr_log(enum rr_log_level level, const char *event,
            const struct rr_field *fields, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(level, PLAIN, event, fields, fmt, ap);
    va_end(ap);
}

void rr_log_audit(enum rr_log_level level, const char *event,
                  const struct rr_field *fields, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(level, OUTCOME, event, fields, fmt, ap);
    va_end(ap);
}

void rr_log_progress(enum rr_log_level level, const char *event,
                     const struct rr_field *fields, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(level, PROGRESS, event, fields, fmt, ap);
    va_end(ap);
}

void rr_log_act(const char *event, const struct rr_field *fields, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(RR_LOG_WARN, ACT, event, fields, fmt, ap);
    va_end(ap);
}
