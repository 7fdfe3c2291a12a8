/* log.h — messages to stderr (text or JSON lines) and optionally syslog.
 *
 * Levels: errors always show; -q silences warnings and notices (busy,
 * skipped) except a run's outcome when it is a failure (rr_log_audit) and
 * a warning that asks the operator to act (rr_log_act);
 * INFO is -v narration (acquired in N ms, renewed, released); DEBUG is -vv.
 * Every line passes through redaction: registered secrets become "***"
 * (short ones only as whole tokens: rr_log_secret).
 */
#ifndef RR_LOG_H
#define RR_LOG_H

#include <stdbool.h>
#include <stddef.h>

enum rr_log_level { RR_LOG_ERROR, RR_LOG_WARN, RR_LOG_NOTICE, RR_LOG_INFO, RR_LOG_DEBUG };

/* A structured field for JSON output. Terminate arrays with RR_FIELD_END. */
struct rr_field {
    const char *key;
    const char *str;      /* string value, or NULL to use num */
    long long num;
};
#define RR_FS(k, v) ((struct rr_field){ (k), (v), 0 })
#define RR_FN(k, v) ((struct rr_field){ (k), NULL, (long long)(v) })
#define RR_FIELD_END ((struct rr_field){ NULL, NULL, 0 })

/* Configure: job name (may be NULL), verbosity (-1 quiet .. 2 debug),
 * json (one JSON object a line), use_syslog (also send to syslog, LOG_USER,
 * ident "redlock-run"). Safe to call again. */
void rr_log_init(const char *job, int verbosity, bool json, bool use_syslog);

/* Secrets this long or longer are redacted wherever they occur; shorter
 * ones only where they stand alone as a token (see rr_log_secret). */
#define RR_LOG_SECRET_SUBSTR 4

/* Register a secret to redact from every later line (copied). A secret of
 * RR_LOG_SECRET_SUBSTR bytes or more becomes "***" wherever it occurs;
 * a shorter one only as a whole token, with no letter, digit, '_' or
 * non-ASCII byte right before or after it ("redis://:pw@host", "AUTH pw",
 * a field that is exactly "pw"), so that a one-letter password does not
 * garble every word that holds the letter. */
void rr_log_secret(const char *secret);

/* Log one line. Text: "redlock-run: JOB: message". JSON:
 * {"time":"2026-11-30T02:00:00.123Z","level":"info","job":"JOB",
 *  "event":"EVENT","msg":"message",<fields...>}. fields may be NULL.
 * Never longer than 4 KiB; escaped as escape.h says for text or JSON. */
void rr_log(enum rr_log_level level, const char *event,
            const struct rr_field *fields, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The same, for a run's outcome (one line a run): it reaches syslog (with
 * --syslog) whatever -q/-v do to stderr, so that syslog keeps an audit trail
 * of every run; under -q it reaches stderr too when level is WARN or worse,
 * so that cron mails every run that went wrong and none that did not. */
void rr_log_audit(enum rr_log_level level, const char *event,
                  const struct rr_field *fields, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* A line about a run in progress that its outcome line will follow (the
 * command timed out or lost the lock and is being stopped): shown as level
 * says, except on stderr under -q, where the outcome stands for it; with
 * --syslog it reaches syslog whatever -q says. */
void rr_log_progress(enum rr_log_level level, const char *event,
                     const struct rr_field *fields, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* A warning that asks the operator to act (a world-readable password
 * file, a metrics file the collector ignores, a command that changed under
 * a NAME): level warn, shown on stderr under -q too (-q hides what needs
 * nobody; these need someone). */
void rr_log_act(const char *event, const struct rr_field *fields, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Would a message at this level be shown anywhere? */
bool rr_log_enabled(enum rr_log_level level);

#endif
