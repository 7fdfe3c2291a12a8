/* duration.h — human durations to milliseconds. */
#ifndef RR_DURATION_H
#define RR_DURATION_H

#include <stddef.h>
#include <stdint.h>

/* Parse a duration such as `500ms`, `30s`, `5m`, `1h30m`, `2d`, `1.5s`, or
 * `inf` (which yields RR_INF). A bare number means seconds, as in timeout(1).
 * Units: ms, s, m, h, d; components may be chained in any order of size but
 * each unit at most once ("1h30m", "2m10s500ms"). Negative values, empty
 * strings, overflow past ~292 million years, and garbage are errors.
 * Returns 0 and sets *ms, or -1 and writes a one-line reason to err. */
int rr_duration_parse(const char *s, int64_t *ms, char *err, size_t errlen);

/* Format ms for humans: "250ms", "1.5s", "2m30s", "1h2m", "inf".
 * Writes at most len bytes into buf (always NUL-terminated); returns buf. */
char *rr_duration_format(int64_t ms, char *buf, size_t len);

#endif
