/* metrics_file.h — the --metrics-file on disk: read what is there, fold
 * one run in (metrics.h), write it back whole.
 *
 * Written as a temporary file in the same directory, then renamed, so the
 * collector never reads half a file; runs on this host take turns with
 * flock(2) on the directory, so two jobs that share a file and finish at
 * once do not lose each other's series or counts.
 *
 * Nothing another local user owns can hold a run up: what is at the path
 * is read only if it is a regular file (opened O_NOFOLLOW | O_NONBLOCK, so
 * a symlink or a FIFO planted there is refused, not followed or waited
 * on), the temporary file is made with O_EXCL (mkstemp) and renamed over
 * the name itself, and the flock is waited for 1 s at most.
 */
#ifndef RR_METRICS_FILE_H
#define RR_METRICS_FILE_H

#include <stddef.h>
#include <stdio.h>

#include "metrics.h"

/* Read PATH, fold rep in as lock's run (every other lock's series kept as
 * it was), write PATH atomically. Returns 0, or -1 with err: one line that
 * names the file and what to check. */
int rr_metrics_write(const char *path, const char *lock, const struct rr_run_report *rep,
                     char *err, size_t errlen);

/* Write PATH whole with what put writes (put(f, arg)), atomically, under
 * the same flock and the same refusals (a symbolic link, a FIFO...): for a
 * file that is rewritten from scratch each time (--list --metrics-file).
 * Returns 0, or -1 with err. */
int rr_metrics_file_put(const char *path, void (*put)(FILE *f, const void *arg), const void *arg,
                        char *err, size_t errlen);

#endif
