/* guard_impl.h — what the guard's two halves share (guard.h): guard.c, R's
 * side, which forks the guard and asks it, and guard_proc.c, the guard
 * process itself. Only guard.c calls into guard_proc.c. */
#ifndef RR_GUARD_IMPL_H
#define RR_GUARD_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct rr_cgroup;
struct rr_leftover;

/* Killing: how often to look again while something is left, and after how
 * long what is left is said to survive SIGKILL (then looked at less often). */
#define TICK_MS 10
#define GIVE_UP_MS 2000
#define STUCK_TICK_MS 250
#define KEEP_MAX 16
/* The most a spawn request may carry (argv and environment). */
#define SPAWN_MAX (64L << 20)

/* The page R and the guard share; the fields are read and written
 * atomically. */
struct shared {
    int64_t deadline_ms;
    int64_t grace_ms;
    int child_pid;            /* 0 until spawned */
    int termed, fired, hurry;
};


/* R's requests: fixed size, under PIPE_BUF, so each write is whole. */
enum { REQ_SPAWN = 'S', REQ_SIGNAL = 's', REQ_STOP = 't', REQ_WAKE = 'w', REQ_EXIT = 'x' };
struct req {
    int32_t op;
    int32_t arg;              /* REQ_SIGNAL: the signal; REQ_SPAWN: tty */
    int64_t ms;               /* REQ_STOP: the grace; REQ_SPAWN: the bytes that follow */
    int32_t argc, envc;       /* REQ_SPAWN */
};

/* ---- guard_spawn.c: the wire ---- */

/* Send a request on fd: its header, with xfd (SCM_RIGHTS) unless -1, then
 * len bytes of data. 0, or -EPIPE (the other end is gone). R's one way to
 * send the guard a request. */
int rr_guard_send_req(int fd, const struct req *q, int xfd, const void *data, size_t len);

/* One request's header, with the descriptor that came with it (a spawn's
 * exec pipe), if any, in *fd. False at EOF (the sender is gone) or on
 * error. */
bool rr_guard_recv_req(int fd, struct req *q, int *xfd);

/* len bytes from fd; false at EOF or on error. */
bool rr_guard_read_all(int fd, void *buf, size_t len);

/* Tell R through its exec pipe errfd why there is no command (exec.h's
 * codes), and close it. */
void rr_guard_spawn_failed(int errfd, int code);

enum phase { G_IDLE, G_RUN, G_SWEEP, G_DONE };

/* The guard process's own state. */
struct gstate {
    struct shared *sh;
    const struct rr_cgroup *cgroup;
    const struct rr_leftover *leftover;   /* tree mode's mark (leftover.h), or NULL */
    bool foreground;
    pid_t self, parent, own_pgid, cpid;
    int ctl, rep, sfd;
    int gp;                        /* C's exec pipe until its outcome is known, else -1 */
    int64_t exec_until;            /* no KILL before then while C has not exec'd */
    int64_t kill_at;               /* R's stop: KILL to C's group then (RR_INF: none) */
    enum phase phase;
    bool c_reaped, begun, killed, said_stuck;
    bool owe_reaped, owe_gone;     /* reports the pipe had no room for */
    int cstatus;
    int64_t until;
};

static inline int64_t rr_guard_load64(const int64_t *p) { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }
static inline int rr_guard_load32(const int *p) { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }
static inline void rr_guard_store32(int *p, int v) { __atomic_store_n(p, v, __ATOMIC_SEQ_CST); }
static inline void rr_guard_store64(int64_t *p, int64_t v) { __atomic_store_n(p, v, __ATOMIC_SEQ_CST); }

/* ---- guard_spawn.c: the command's process ---- */

/* In the guard, at R's spawn request q whose strings (argv, then envp,
 * NUL-separated) are blob: fork the command's process (born in the cgroup
 * where the kernel can), which runs exec.c's rr_exec_child with R's exec
 * pipe errfd. Sets s->gp to a pipe whose EOF says the command exec'd or
 * died. Its pid, -EINVAL if the strings do not add up, or -errno. */
pid_t rr_guard_fork_command(struct gstate *s, const struct req *q, char *blob, int errfd);

/* The guard process: waits for R's requests, spawns and guards the
 * command, exits when R stands it down or dies. Never returns. */
void rr_guard_main(struct gstate *s) __attribute__((noreturn));

/* The successor of a guard that died (rr_guard_start_successor). Never
 * returns. */
void rr_guard_successor_main(struct gstate *s) __attribute__((noreturn));

#endif
