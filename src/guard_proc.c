/* guard_proc.c — the guard process (guard.h, guard_impl.h): the lease's
 * clock, the command's spawn, its reaping, the sweep of what it left, the
 * kill when R dies; and the successor of a guard that died.
 *
 * The guard is a plain fork of redlock-run made before the event loop has
 * a thread, and uses libc as any single-threaded process does. The command
 * is forked from it (or clone3'd into its cgroup, clone3.h), so the guard
 * is its parent from its first instruction and knows its pid before it
 * execs. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "clone3.h"
#include "exec.h"
#include "guard.h"
#include "guard_impl.h"
#include "leftover.h"
#include "log.h"
#include "mutant.h"
#include "proc.h"
#include "rr.h"

/* ---- the clock ---- */

#define load64 rr_guard_load64
#define load32 rr_guard_load32
#define store32 rr_guard_store32

enum rr_guard_act rr_guard_clock(int64_t now, int64_t deadline, int64_t grace, bool termed,
                                 bool fired, int64_t *wait_ms)
{
    enum rr_guard_act act = RR_GUARD_WAIT;
    int64_t w;

    if (fired || now >= deadline) {
        act = RR_GUARD_KILL;
        w = TICK_MS;
    } else if (now >= deadline - grace) {
        act = termed ? RR_GUARD_WAIT : RR_GUARD_TERM;
        w = deadline - now;
    } else {
        w = deadline - grace - now;
    }
    *wait_ms = w > 60000 ? 60000 : w < 1 ? 1 : w;
    return act;
}

/* ---- reports to R ---- */

static bool write_all(int fd, const void *buf, size_t len)
{
    ssize_t w;
    do {
        w = write(fd, buf, len);
    } while (w < 0 && errno == EINTR);
    return w == (ssize_t)len;
}

static bool report(struct gstate *s, int kind, int value, const pid_t *pids, int n)
{
    struct rr_guard_report r = { kind, value, n, { 0 } };

    for (int i = 0; i < n && i < RR_GUARD_REPORT_PIDS; i++)
        r.pids[i] = pids[i];
    return write_all(s->rep, &r, sizeof r);
}

/* The two reports R cannot do without are sent again until there was room.
 * Both at once (C left nothing behind, the usual end) go in one write,
 * under PIPE_BUF so never split: R wakes once for them, not twice. */
static void report_owed(struct gstate *s)
{
    if (s->owe_reaped && s->owe_gone) {
        struct rr_guard_report r[2] = { { RR_GUARD_REAPED, s->cstatus, 0, { 0 } },
                                        { RR_GUARD_GONE, 0, 0, { 0 } } };
        if (write_all(s->rep, r, sizeof r))
            s->owe_reaped = s->owe_gone = false;
        return;
    }
    if (s->owe_reaped && report(s, RR_GUARD_REAPED, s->cstatus, NULL, 0))
        s->owe_reaped = false;
    if (!s->owe_reaped && s->owe_gone && report(s, RR_GUARD_GONE, 0, NULL, 0))
        s->owe_gone = false;
}

/* ---- signalling what we have ---- */

static bool cgroup_populated(const struct gstate *s)
{
    return s->cgroup && rr_cgroup_populated(s->cgroup) == 1;
}

/* sig to C's group (C alone in foreground, or while it is not reaped). */
static void signal_command(struct gstate *s, int sig)
{
    if (s->cpid <= 0 || s->c_reaped)
        return;
    kill(s->cpid, sig);
    if (!s->foreground)
        kill(-s->cpid, sig);
}

/* May C's process group still be signalled? Until C is reaped, yes (its
 * pid is pinned). After, only while the group may have members (we have a
 * child) and no process has C's pid: the id of a group with members is
 * never given to a new process, so one that has it now means the group is
 * empty and the id someone else's (a pid wrap), maybe a group's of its own. */
static bool group_ours(const struct gstate *s, int n)
{
    if (s->cpid <= 0 || s->foreground)
        return false;
    if (!s->c_reaped)
        return true;
    return n > 0 && kill(s->cpid, 0) < 0 && errno == ESRCH;
}

/* sig to C (its group unless foreground), to each of our children and its
 * group (never R's group, never ours), and for SIGKILL to the cgroup. A
 * TERM or KILL also thaws the cgroup (R froze it if the job was stopped,
 * job control): a frozen process holds a handled SIGTERM until it is
 * thawed, so TERM is made pending first and the thaw comes after it (the
 * SIGCONT that follows a TERM then reaches them all). Returns how many
 * children we have (pids in kids, at most RR_PROC_MAX). */
static int signal_all(struct gstate *s, int sig, pid_t *kids)
{
    int n = rr_proc_own_children(s->self, kids, RR_PROC_MAX);
    if (n < 0)
        n = 0;
    if (sig == 0)
        return n;
    if (s->cpid > 0 && !s->c_reaped)
        kill(s->cpid, sig);
    /* A group lives on while it has members, whatever became of its
     * leader; its id is not reused meanwhile. Every member is C or a
     * descendant of ours (we are the subreaper), so once C is reaped and
     * we have no child left the group is empty; and if some process has
     * C's pid again, it is empty too. Its id may then name someone else's
     * group: it is not signalled then (group_ours). */
    if (group_ours(s, n))
        kill(-s->cpid, sig);
    if (sig == SIGKILL && s->cgroup && !RR_MUTANT_IS(no_cgroup_kill))
        rr_cgroup_kill(s->cgroup);
    for (int i = 0; i < n; i++) {
        kill(kids[i], sig);
        pid_t pg = getpgid(kids[i]);
        if (pg > 1 && pg != s->own_pgid && pg != s->self)
            kill(-pg, sig);
    }
    if ((sig == SIGTERM || sig == SIGKILL) && s->cgroup)
        rr_cgroup_freeze(s->cgroup, 0);
    return n;
}

/* Has C yet to exec? gp, a close-on-exec pipe only C holds, reads EOF
 * once C exec'd or died. The loop watches it too, so that a TERM or KILL
 * put off until then (enforce) comes as soon as the exec is over. */
static bool exec_pending(struct gstate *s)
{
    struct pollfd p = { .fd = s->gp, .events = POLLIN };

    if (s->gp < 0)
        return false;
    if (poll(&p, 1, 0) == 0)
        return true;
    close(s->gp);
    s->gp = -1;
    return false;
}

/* Reap every child of ours that ended; C's stops, continuations and exit
 * are reported. */
static void reap(struct gstate *s)
{
    bool c_ended = false;
    pid_t r;

    for (;;) {
        int st = 0;
        r = waitpid(-1, &st, WNOHANG | WUNTRACED | WCONTINUED | __WALL);
        if (r <= 0)
            break;
        if (r != s->cpid || s->c_reaped)
            continue;   /* an orphan of C's, or one's stop */
        if (WIFSTOPPED(st)) {
            report(s, RR_GUARD_STOPPED, WSTOPSIG(st), NULL, 0);
        } else if (WIFCONTINUED(st)) {
            report(s, RR_GUARD_CONTINUED, 0, NULL, 0);
        } else {
            if (s->gp >= 0) {   /* it exec'd or died: nothing to wait for */
                close(s->gp);
                s->gp = -1;
            }
            s->c_reaped = true;
            s->cstatus = st;
            s->owe_reaped = true;
            s->phase = G_SWEEP;
            c_ended = true;
        }
    }
    if (!c_ended)
        return;
    /* Nothing left already (no child, live or dead: as the subreaper we
     * then have no descendant either; and the cgroup is empty): gone too,
     * told with the reap. Else the sweep begins. */
    if (r < 0 && errno == ECHILD && !cgroup_populated(s)) {
        s->phase = G_DONE;
        s->owe_gone = true;
    }
    report_owed(s);
}

/* C was reaped: stop what it left. Returns the ms until the next look, -1
 * once nothing is left. */
static int64_t sweep_step(struct gstate *s, int64_t now)
{
    pid_t kids[RR_PROC_MAX];
    int n = signal_all(s, 0, kids);

    if (n == 0 && !cgroup_populated(s)) {
        s->phase = G_DONE;
        s->owe_gone = true;
        report_owed(s);
        return -1;
    }
    if (!s->begun) {
        s->begun = true;
        report(s, RR_GUARD_LEFT, 0, kids, n);
        if (load32(&s->sh->hurry) || load32(&s->sh->fired)) {
            s->killed = true;
            s->until = now + GIVE_UP_MS;
            signal_all(s, SIGKILL, kids);
        } else {
            s->until = now + s->sh->grace_ms;
            signal_all(s, SIGTERM, kids);
            signal_all(s, SIGCONT, kids);
        }
        return TICK_MS;
    }
    if (!s->killed && (now >= s->until || load32(&s->sh->hurry))) {
        s->killed = true;
        s->until = now + GIVE_UP_MS;
    }
    if (s->killed) {
        /* Again on every look: one re-parented to us meanwhile. */
        signal_all(s, SIGKILL, kids);
        if (now >= s->until && !s->said_stuck) {
            s->said_stuck = true;
            report(s, RR_GUARD_STUCK, 0, kids, n);
        }
    } else if (s->until - now < TICK_MS * 5) {
        return s->until - now < 1 ? 1 : s->until - now;
    }
    return s->said_stuck ? STUCK_TICK_MS : s->killed ? TICK_MS : TICK_MS * 5;
}

static void drain_signals(struct gstate *s)
{
    struct signalfd_siginfo si[4];
    while (read(s->sfd, si, sizeof si) > 0)
        ;
}

/* R is gone or stands down: SIGKILL to everything we have, reap, look
 * again, until no child is left and the cgroup is empty (a SIGKILLed
 * process forks no more, and the pids of our unreaped children are ours). */
static void kill_everything(struct gstate *s)
{
    pid_t kids[RR_PROC_MAX];
    int64_t start = rr_now_ms();

    /* Told gone (the usual stand-down), or never spawned: nothing left. */
    if ((s->phase == G_DONE || s->phase == G_IDLE) && !cgroup_populated(s))
        return;
    for (;;) {
        int n = signal_all(s, SIGKILL, kids);
        reap(s);
        if (n == 0 && !cgroup_populated(s))
            break;
        bool slow = rr_now_ms() - start > GIVE_UP_MS;
        struct pollfd p[2] = { { .fd = s->sfd, .events = POLLIN },
                               { .fd = s->cgroup ? rr_cgroup_events_fd(s->cgroup) : -1,
                                 .events = POLLPRI } };
        poll(p, 2, slow ? STUCK_TICK_MS : TICK_MS);
        drain_signals(s);
    }
}

/* ---- spawning ---- */

/* Hold nothing open but our own: not R's descriptors that C inherited (a
 * terminal, an output pipe someone waits to see closed). With a cgroup,
 * its fds stay. */
static void close_others(struct gstate *s)
{
    int keep[KEEP_MAX + 4];
    int nk = 0;

    keep[nk++] = s->ctl;
    keep[nk++] = s->rep;
    keep[nk++] = s->sfd;
    if (s->gp >= 0)
        keep[nk++] = s->gp;
    nk += rr_cgroup_fds(s->cgroup, keep + nk, KEEP_MAX);
    if (rr_leftover_fd(s->leftover) >= 0)
        keep[nk++] = rr_leftover_fd(s->leftover);
    DIR *d = opendir("/proc/self/fd");
    if (!d) {
        /* No /proc (an empty root): one by one. */
        for (int fd = 0; fd < 1024; fd++) {
            bool mine = false;
            for (int i = 0; i < nk; i++)
                mine = mine || keep[i] == fd;
            if (!mine)
                close(fd);
        }
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char *end;
        long fd = strtol(e->d_name, &end, 10);
        if (*end || end == e->d_name || fd == dirfd(d))
            continue;
        bool mine = false;
        for (int i = 0; i < nk; i++)
            mine = mine || keep[i] == fd;
        if (!mine)
            close((int)fd);
    }
    closedir(d);
}

/* R's spawn request: read the command, fork it (rr_guard_fork_command).
 * errfd is R's exec pipe (it came with the request): C's exec closes C's
 * copy, ours is closed once C's pid is in the shared page, so R's EOF
 * means both. On failure R is told there (RR_EXEC_FORK - errno) and
 * nothing is left to guard. */
static void spawn(struct gstate *s, const struct req *q, int errfd)
{
    char *blob = NULL;
    int code = RR_EXEC_FORK - EINVAL;

    if (errfd < 0 || q->ms <= 0 || q->ms > SPAWN_MAX || q->argc < 1 || q->envc < 0 ||
        !(blob = malloc((size_t)q->ms)) || !rr_guard_read_all(s->ctl, blob, (size_t)q->ms))
        goto fail;
    pid_t pid = rr_guard_fork_command(s, q, blob, errfd);
    if (pid < 0) {
        code = RR_EXEC_FORK + pid;   /* -EINVAL: the strings did not add up */
        goto fail;
    }
    s->cpid = pid;
    s->phase = G_RUN;
    /* Also from this side, so the group exists before R hears of it.
     * EACCES once it has exec'd: then it did setpgid itself. */
    if (!s->foreground) {
        setpgid(pid, pid);
        rr_leftover_note(s->leftover, pid);
    }
    store32(&s->sh->child_pid, (int)pid);
    close(errfd);
    int64_t soonest = rr_now_ms() + 100;
    s->exec_until = load64(&s->sh->deadline_ms);
    if (s->exec_until < soonest)
        s->exec_until = soonest;
    free(blob);
    /* What C inherited is not ours to keep open. */
    close_others(s);
    return;
fail:
    free(blob);
    rr_guard_spawn_failed(errfd, code);
    s->phase = G_DONE;
}

/* ---- the guard's loop ---- */

/* The lease's clock; returns the ms to wait. */
static int64_t enforce(struct gstate *s, int64_t now)
{
    pid_t kids[RR_PROC_MAX];
    int64_t wait;

    enum rr_guard_act a = rr_guard_clock(now, load64(&s->sh->deadline_ms), s->sh->grace_ms,
                                         load32(&s->sh->termed), load32(&s->sh->fired), &wait);
    if (RR_MUTANT_IS(no_guard_deadline))
        a = RR_GUARD_WAIT;
    /* While C has not exec'd: no TERM (C is before its own lease check,
     * which fails as RR_EXEC_LATE, not a lost lease; or in execve), and no
     * KILL before exec_until (the lease's end, >= 100 ms after the spawn):
     * then an exec still running dies before its first instruction. A
     * certain loss (R's kill: the deadline 0) is KILL at once all the
     * same: another holder may be running already. */
    if (a != RR_GUARD_WAIT && load64(&s->sh->deadline_ms) > 0 && exec_pending(s)) {
        int64_t until = a == RR_GUARD_TERM ? load64(&s->sh->deadline_ms) : s->exec_until;
        if (now < until)
            return until - now;
    }
    if (a == RR_GUARD_TERM) {
        store32(&s->sh->termed, 1);
        signal_all(s, SIGTERM, kids);
        signal_all(s, SIGCONT, kids);
    } else if (a == RR_GUARD_KILL) {
        store32(&s->sh->fired, 1);
        if (signal_all(s, SIGKILL, kids) == 0 && !cgroup_populated(s))
            wait = 60000;   /* nothing left to kill: C's exit is being told */
    }
    return wait;
}

/* R's stop: TERM now, then the thaw and CONT; KILL to the group at kill_at. */
static void stop_command(struct gstate *s, int64_t grace_ms)
{
    store32(&s->sh->hurry, 1);
    if (s->c_reaped || s->cpid <= 0)
        return;
    signal_command(s, SIGTERM);
    if (s->cgroup)
        rr_cgroup_freeze(s->cgroup, 0);
    signal_command(s, SIGCONT);
    if (grace_ms == RR_INF)
        return;
    int64_t at = rr_now_ms() + (grace_ms < 0 ? 0 : grace_ms);
    if (at < s->kill_at)
        s->kill_at = at;
}

/* The next thing to do, in ms (-1: nothing but what wakes us). */
static int64_t next_wait(struct gstate *s, int64_t now)
{
    int64_t wait = s->phase == G_RUN || s->phase == G_SWEEP ? enforce(s, now) : -1;

    if (s->kill_at != RR_INF && !s->c_reaped) {
        if (now >= s->kill_at) {
            s->kill_at = RR_INF;
            signal_command(s, SIGKILL);
        } else if (wait < 0 || s->kill_at - now < wait) {
            wait = s->kill_at - now;
        }
    }
    if (s->phase == G_SWEEP) {
        int64_t w = sweep_step(s, now);
        if (w >= 0 && (wait < 0 || w < wait))
            wait = w;
    }
    if (s->phase == G_DONE || s->phase == G_IDLE)
        wait = -1;
    if (s->owe_reaped || s->owe_gone)
        wait = wait < 0 || wait > TICK_MS ? TICK_MS : wait;
    return wait;
}

/* One request from R. Returns false once the guard is to exit. */
static bool handle_request(struct gstate *s)
{
    struct req q;
    int fd = -1;
    bool gone = !rr_guard_recv_req(s->ctl, &q, &fd);

    if (gone || q.op == REQ_EXIT) {
        if (fd >= 0)
            close(fd);
        kill_everything(s);
        /* R is gone: the cgroup is ours to remove. */
        if (gone && s->cgroup)
            rr_cgroup_remove(s->cgroup);
        return false;
    }
    if (q.op == REQ_SPAWN && s->phase == G_IDLE) {
        spawn(s, &q, fd);
        fd = -1;
    } else if (q.op == REQ_SIGNAL)
        signal_command(s, q.arg);
    else if (q.op == REQ_STOP)
        stop_command(s, q.ms);
    if (fd >= 0)
        close(fd);   /* a descriptor with a request that takes none */
    return true;   /* REQ_WAKE: the loop looks at the deadline again */
}

static void guard_loop(struct gstate *s)
{
    for (;;) {
        int64_t wait = next_wait(s, rr_now_ms());
        int efd = s->phase == G_SWEEP && s->cgroup ? rr_cgroup_events_fd(s->cgroup) : -1;
        struct pollfd p[4] = { { .fd = s->ctl, .events = POLLIN },
                               { .fd = s->sfd, .events = POLLIN },
                               { .fd = efd, .events = POLLPRI },
                               { .fd = s->gp, .events = POLLIN } };
        struct timespec ts = { (time_t)(wait / 1000), (long)(wait % 1000) * 1000000L };
        /* No mask of ppoll's own: every signal stays blocked, so SIGCHLD
         * is queued for the signalfd (an empty one would let the kernel
         * discard it, its default action being to ignore it). */
        int r = ppoll(p, 4, wait < 0 ? NULL : &ts, NULL);
        if (r > 0 && p[3].revents)
            exec_pending(s);   /* C exec'd or died: gp closed */
        if (r > 0 && (p[1].revents & POLLIN))
            drain_signals(s);
        reap(s);
        report_owed(s);
        if (r > 0 && (p[0].revents & (POLLIN | POLLHUP | POLLERR)) && !handle_request(s))
            return;
    }
}

void rr_guard_main(struct gstate *s)
{
    s->self = getpid();
    /* A process group and a name of our own: `kill -9 -PGID` of the
     * wrapper's group, `pkill redlock-run` or `pkill -f 'redlock-run.*NAME'`
     * must not take the guard with it. */
    setpgid(0, 0);
    prctl(PR_SET_NAME, "redlock-guard");
    rr_set_title("redlock-guard");
    /* Whatever C leaves is re-parented to us, not to R or init. */
    prctl(PR_SET_CHILD_SUBREAPER, !RR_MUTANT_IS(no_subreaper));
    /* R's SIGCHLD action came with us (a handler, SA_NOCLDSTOP): default,
     * and blocked like every signal (R blocked them all for the fork), so
     * it is queued for the signalfd. */
    signal(SIGCHLD, SIG_DFL);
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    s->sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
    /* Reports never block us: R may be stopped and read none, and a
     * command that stops and continues over and over fills the pipe; a
     * guard asleep in write(2) would never kill at the lease's end. A
     * report with no room is dropped, but for the two R cannot do without
     * (report_owed: sent again every TICK_MS until there is room). */
    fcntl(s->rep, F_SETFL, O_NONBLOCK);
    /* A dead run of this job may have left its command's descendants in
     * its cgroup with nothing of ours to stop them: killed now, while R
     * asks for the lock, and before our command can run beside them. */
    char first[320];
    bool cg = s->cgroup != NULL;
    int dead = RR_MUTANT_IS(no_kill_dead) ? 0
               : cg ? rr_cgroup_kill_dead(s->cgroup, GIVE_UP_MS, first, sizeof first)
                    : rr_leftover_kill_dead(s->leftover, GIVE_UP_MS, first, sizeof first);
    if (dead > 0)
        rr_log(RR_LOG_WARN, "leftovers", (struct rr_field[]){ RR_FN("count", dead), RR_FIELD_END },
               "killed what a dead run of this job left running in its %s %s%s: its "
               "redlock-run and its guard had both died", cg ? "cgroup" : "process group",
               first, dead > 1 ? " and others" : "");
    /* R's descriptors stay open until C is spawned: C is to inherit those
     * R would have handed it, and the others are close-on-exec, some of
     * them libuv's, whose fork handler in C closes them by number (closed
     * here, the numbers could name ours by then). */
    guard_loop(s);
    _exit(0);
}

/* ---- the successor ---- */

/* Kill what is left of the command after its guard's death: see guard.h. */
void rr_guard_successor_main(struct gstate *s)
{
    pid_t kids[RR_PROC_MAX];
    int64_t start = rr_now_ms();

    s->self = getpid();
    setpgid(0, 0);
    prctl(PR_SET_NAME, "redlock-guard");
    rr_set_title("redlock-guard");
    close(s->ctl);
    s->ctl = -1;
    close_others(s);
    for (;;) {
        /* Once: the group's id may be someone else's later; and if C was
         * reaped, already now if a process has its pid again (group_ours). */
        if (group_ours(s, 1))
            kill(-s->cpid, SIGKILL);
        s->cpid = 0;
        if (s->cgroup && !RR_MUTANT_IS(no_cgroup_kill))
            rr_cgroup_kill(s->cgroup);
        int n = rr_proc_children(s->parent, s->self, kids, RR_PROC_MAX);
        for (int i = 0; i < n; i++) {
            kill(kids[i], SIGKILL);
            pid_t pg = getpgid(kids[i]);
            if (pg > 1 && pg != s->own_pgid)
                kill(-pg, SIGKILL);
        }
        if (s->cgroup)
            rr_cgroup_freeze(s->cgroup, 0);
        /* R reaps what dies (it is their parent); nothing left, or R gone:
         * done. */
        if ((n <= 0 && !cgroup_populated(s)) || getppid() != s->parent)
            _exit(0);
        struct timespec ts = { 0, (rr_now_ms() - start > GIVE_UP_MS ? STUCK_TICK_MS : TICK_MS) *
                                      1000000L };
        nanosleep(&ts, NULL);
    }
}
