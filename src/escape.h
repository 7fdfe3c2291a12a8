/* escape.h — one escaping function per output kind. Everything that did not
 * come from us (a record another tenant wrote into Redis, a server's error
 * reply, a user's argument) passes through the one for where it goes:
 *
 *   terminal text   rr_text_escape    --status, --list, log lines, syslog
 *   JSON string     rr_json_escape    --status --json, --list --json, JSON logs
 *   monitoring line rr_nagios_escape  --status --max-age's plugin line
 *   metrics label   rr_label_escape   --metrics-file's label values
 *
 * and a number from Redis is written into JSON only once rr_json_int says
 * it is one. All of them are pure, always NUL-terminate out (when outlen >
 * 0), never cut an escape or a UTF-8 sequence in half, and return the
 * length written: a value that does not fit is cut short, never spilled.
 */
#ifndef RR_ESCAPE_H
#define RR_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>

enum rr_esc_kind {
    /* Control bytes as \n, \r, \t, \xHH; invalid UTF-8 as \xHH; the code
     * points that move or hide text on a terminal (C1 controls, the line
     * and paragraph separators, bidirectional overrides and isolates) as
     * \uHHHH. Printable text, backslashes included, is kept. */
    RR_ESC_TEXT,
    /* The body of a JSON string (RFC 8259): quotes, backslashes and
     * control bytes escaped; invalid UTF-8 as \ufffd; the code points
     * RR_ESC_TEXT escapes as \uHHHH as well (the same string to a parser,
     * nothing raw on the terminal it is read on). */
    RR_ESC_JSON,
    /* RR_ESC_TEXT, and '|' (where a plugin's perfdata starts) as \x7c:
     * one line, whose perfdata only we write. */
    RR_ESC_NAGIOS,
    /* A Prometheus label value: \\, \" and \n escaped; invalid UTF-8 as
     * U+FFFD (one bad byte would make the whole file unreadable). */
    RR_ESC_LABEL,
};

/* Escape the len bytes of s for kind into out. *consumed (if not NULL)
 * gets how many bytes of s fit. */
size_t rr_escape_n(enum rr_esc_kind kind, const char *s, size_t len, char *out, size_t outlen,
                   size_t *consumed);

/* The NUL-terminated s (NULL as "") escaped for each kind; see above. */
size_t rr_text_escape(const char *s, char *out, size_t outlen);
size_t rr_json_escape(const char *s, char *out, size_t outlen);
size_t rr_nagios_escape(const char *s, char *out, size_t outlen);
size_t rr_label_escape(const char *s, char *out, size_t outlen);

/* s as one word a POSIX shell reads back as s, for a command we print
 * for the user to paste: as it is if every byte is a letter, a digit or one
 * of ._-:/@%+=,; else in single quotes (a ' as '\''). Give it text already
 * escaped for the terminal. Returns out ("" if it does not fit). */
const char *rr_shell_word(const char *s, char *out, size_t outlen);

/* Is s a JSON integer that fits a long long: an optional '-', then digits
 * without a leading zero (but "0")? No sign '+', no space, no fraction,
 * no "inf" or "nan". Sets *out (if not NULL). */
bool rr_json_int(const char *s, long long *out);

#endif
