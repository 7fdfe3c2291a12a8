/* sweep.c — the command's stragglers (see sweep.h). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "log.h"
#include "proc.h"
#include "rr.h"
#include "sweep.h"

#define SWEEP_TICK_MS 20
#define SWEEP_STUCK_TICK_MS 250
#define SWEEP_GIVE_UP_MS 2000

/* Reap those of our children that are gone; returns how many remain
 * (counting the command's group as one while it has members), the pids of
 * those that remain in pids. */
static int reap_stragglers(const struct rr_sweep *s, pid_t *pids, int *n)
{
    int left = 0;

    *n = rr_proc_children(getpid(), s->skip, pids, RR_PROC_MAX);
    if (*n < 0)
        *n = 0;
    for (int i = 0; i < *n; i++) {
        pid_t r;
        do {
            r = waitpid(pids[i], NULL, WNOHANG | __WALL);
        } while (r < 0 && errno == EINTR);
        if (r == 0)
            pids[left++] = pids[i];
    }
    *n = left;
    /* EPERM: a member we may not signal (setuid, sudo) is still a member. */
    if (s->pgid > 0 && (killpg(s->pgid, 0) == 0 || errno == EPERM))
        left++;
    if (s->cgroup && rr_cgroup_populated(s->cgroup) == 1)
        left++;
    return left;
}

static void signal_stragglers(const struct rr_sweep *s, const pid_t *pids, int n, int sig)
{
    pid_t own = getpgrp();

    if (s->pgid > 0)
        killpg(s->pgid, sig);
    if (s->cgroup && sig == SIGKILL)
        rr_cgroup_kill(s->cgroup);
    for (int i = 0; i < n; i++) {
        kill(pids[i], sig);
        pid_t pg = getpgid(pids[i]);
        if (pg > 1 && pg != own)
            killpg(pg, sig);
    }
    /* As the guard does: frozen (the job was stopped), a handled TERM
     * would wait for the thaw; and nothing stays frozen after us. */
    if (s->cgroup && (sig == SIGTERM || sig == SIGKILL))
        rr_cgroup_freeze(s->cgroup, 0);
}

/* "123 (sleep), 124 (sh), and 3 more" for the log. */
static void describe(const pid_t *pids, int n, char *buf, size_t len)
{
    size_t o = 0;

    buf[0] = '\0';
    for (int i = 0; i < n && i < 8 && o + 40 < len; i++) {
        char comm[32];
        rr_proc_comm(pids[i], comm, sizeof comm);
        o += (size_t)snprintf(buf + o, len - o, "%s%d (%s)", i ? ", " : "", (int)pids[i], comm);
    }
    if (n > 8 && o + 16 < len)
        snprintf(buf + o, len - o, ", and %d more", n - 8);
}

int64_t rr_sweep_begin(struct rr_sweep *s, pid_t pgid, pid_t skip, int64_t grace_ms,
                       bool kill_now, const struct rr_cgroup *cgroup)
{
    pid_t pids[RR_PROC_MAX];
    int n;

    memset(s, 0, sizeof *s);
    s->pgid = pgid;
    s->skip = skip;
    s->cgroup = cgroup;
    if (reap_stragglers(s, pids, &n) == 0)
        return 0;   /* the usual case: nothing left */
    char who[512];
    describe(pids, n, who, sizeof who);
    rr_log(RR_LOG_WARN, "stragglers",
           (struct rr_field[]){ RR_FN("count", n), RR_FIELD_END },
           "the command left %s running; stopping %s before the lock is released",
           n ? who : "processes in its group", n == 1 ? "it" : "them");
    /* We were stopping the command (lock lost, --max-runtime): no more grace. */
    if (kill_now) {
        s->killed = true;
        s->until = rr_now_ms() + SWEEP_GIVE_UP_MS;
        signal_stragglers(s, pids, n, SIGKILL);
    } else {
        s->until = rr_now_ms() + grace_ms;
        signal_stragglers(s, pids, n, SIGTERM);
        signal_stragglers(s, pids, n, SIGCONT);
    }
    return SWEEP_TICK_MS;
}

int64_t rr_sweep_look(struct rr_sweep *s)
{
    pid_t pids[RR_PROC_MAX];
    int n;

    if (reap_stragglers(s, pids, &n) == 0)
        return 0;
    int64_t now = rr_now_ms();
    if (!s->killed && now >= s->until) {
        s->killed = true;
        s->until = now + SWEEP_GIVE_UP_MS;
    }
    if (s->killed) {
        /* Again on every look: a process re-parented to us meanwhile. */
        signal_stragglers(s, pids, n, SIGKILL);
        if (now >= s->until && !s->said_stuck) {
            /* One we may not signal (it became root: sudo, a setuid
             * helper) or one stuck in the kernel. Releasing now would let
             * the next holder overlap it: the lock stays, renewed, until
             * it is gone. */
            char who[512];
            s->said_stuck = true;
            describe(pids, n, who, sizeof who);
            rr_log(RR_LOG_ERROR, "stragglers", NULL,
                   "processes the command left behind survive SIGKILL (another user's, or "
                   "stuck): %s; keeping the lock until they are gone",
                   n ? who : "members of the command's process group");
        }
    }
    return s->said_stuck ? SWEEP_STUCK_TICK_MS : SWEEP_TICK_MS;
}
