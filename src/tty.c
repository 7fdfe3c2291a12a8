/* tty.c — handing the terminal to the command's group and back (tty.h). */
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
