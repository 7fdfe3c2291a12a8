/* tty.c — handing the terminal to the command's group and back, and
 * whether job control can continue us (tty.h). */
#include <fcntl.h>
#include <termios.h>
#include <unistd.h>

#include "tty.h"

bool rr_tty_ours(void)
{
    pid_t fg;

    if (!isatty(STDIN_FILENO))
        return false;
    fg = tcgetpgrp(STDIN_FILENO);
    return fg > 0 && fg == getpgrp();
}

void rr_tty_give(pid_t pgid)
{
    if (pgid > 0)
        (void)tcsetpgrp(STDIN_FILENO, pgid);
}

void rr_tty_take(pid_t pgid)
{
    if (pgid > 0 && isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == pgid)
        (void)tcsetpgrp(STDIN_FILENO, getpgrp());
}

bool rr_tty_in_job(const struct rr_tty_proc *chain, int n)
{
    if (n < 1 || chain[0].pgid <= 0 || chain[0].sid <= 0)
        return false;
    for (int i = 1; i < n; i++) {
        if (chain[i].sid != chain[0].sid)
            return false;   /* our group is led from outside the session */
        if (chain[i].pgid != chain[0].pgid)
            return true;    /* a parent in our session, in another group */
    }
    return false;   /* nobody above us seen outside our group */
}

bool rr_tty_job_control(const struct rr_tty_facts *f)
{
    return f->terminal && f->n > 0 && f->tty_sid == f->chain[0].sid &&
           rr_tty_in_job(f->chain, f->n);
}

void rr_tty_facts(struct rr_tty_facts *f, pid_t (*parent_of)(pid_t pid))
{
    int fd = open("/dev/tty", O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);

    f->terminal = fd >= 0;
    f->tty_sid = fd >= 0 ? tcgetsid(fd) : -1;
    if (fd >= 0)
        close(fd);
    f->n = 0;
    /* Up from us while the processes are in our group: the first one
     * outside it is all rr_tty_in_job needs. */
    for (pid_t pid = getpid(); pid > 0 && f->n < RR_TTY_CHAIN;) {
        struct rr_tty_proc *p = &f->chain[f->n];
        p->pgid = getpgid(pid);
        p->sid = getsid(pid);
        if (p->pgid < 0 || p->sid < 0)
            break;
        f->n++;
        if (f->n > 1 && p->pgid != f->chain[0].pgid)
            break;
        pid = f->n == 1 ? getppid() : parent_of(pid);
    }
}
