/* check_child.c — spawning, exit codes, process groups, stopping, the env passed. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "cgroup.h"
#include "child.h"
#include "child_env.h"
#include "rr.h"

/* No lease to enforce in these tests: the guard only watches for our death. */
static const struct rr_child_opts BG = { .foreground = false, .deadline_ms = RR_INF, .grace_ms = 0 };
static const struct rr_child_opts FG = { .foreground = true, .deadline_ms = RR_INF, .grace_ms = 0 };
#include "rr.h"
#include "unit.h"

extern char **environ;

/* Slack on top of a grace period: valgrind and loaded CI machines are slow. */
#define SLACK_MS 1500

#define PATHLEN 300
#define SCRIPTLEN 2048

struct outcome {
    int calls;
    int wstatus;
    bool free_in_cb;
};

static void on_child_exit(struct rr_child *ch, int wstatus, void *arg)
{
    struct outcome *o = arg;
    o->calls++;
    o->wstatus = wstatus;
    if (o->free_in_cb)
        rr_child_free(ch);
}

/* Alive and not a zombie (the command is the guard's child, not ours). */
static bool running(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

static char tmpdir[256];

static void make_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/rr-child-XXXXXX", base && *base ? base : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void remove_tmpdir(void)
{
    char cmd[PATHLEN + 16];
    if (!tmpdir[0])
        return;
    snprintf(cmd, sizeof cmd, "/bin/rm -rf '%s'", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
    tmpdir[0] = '\0';
}

static void tmppath(char *out, size_t outlen, const char *name)
{
    snprintf(out, outlen, "%s/%s", tmpdir, name);
}

/* Read a whole small file; "" if it does not exist. Caller frees. */
static char *slurp(const char *path)
{
    char *buf = calloc(1, 65536);
    ck_assert_ptr_nonnull(buf);
    FILE *f = fopen(path, "r");
    if (f) {
        size_t n = fread(buf, 1, 65535, f);
        buf[n] = '\0';
        fclose(f);
    }
    return buf;
}

/* Wait until path exists (written atomically by mv), up to timeout_ms. */
static bool wait_for_file(const char *path, int timeout_ms)
{
    for (int waited = 0; waited < timeout_ms; waited += 10) {
        if (access(path, F_OK) == 0)
            return true;
        usleep(10000);
    }
    return false;
}

static long read_pid_file(const char *path)
{
    ck_assert_msg(wait_for_file(path, 5000), "%s never appeared", path);
    char *s = slurp(path);
    long pid = strtol(s, NULL, 10);
    free(s);
    ck_assert_int_gt(pid, 1);
    return pid;
}

/* Does text contain exactly this line? */
static bool has_line(const char *text, const char *line)
{
    size_t n = strlen(line);
    for (const char *p = text; (p = strstr(p, line)) != NULL; p++) {
        if ((p == text || p[-1] == '\n') && (p[n] == '\n' || p[n] == '\0'))
            return true;
    }
    return false;
}

static int64_t elapsed_since(int64_t start)
{
    return rr_now_ms() - start;
}

/* rr_child_start, and the loop run until the spawn's outcome is known: what
 * a caller whose loop has nothing else to do would see. */
struct started {
    bool done;
    int rc;
    char err[RR_ERRLEN];
};

static void on_started(struct rr_child *ch, int rc, const char *err, void *arg)
{
    struct started *st = arg;
    (void)ch;
    st->done = true;
    st->rc = rc;
    snprintf(st->err, sizeof st->err, "%s", err);
}

static struct started started_box;
static rr_child_exit_fn exit_fn;
static void *exit_arg;

static void on_exit_relay(struct rr_child *ch, int wstatus, void *arg)
{
    (void)arg;
    exit_fn(ch, wstatus, exit_arg);
}

static int spawn_sync(uv_loop_t *loop, struct rr_child **out, char *const argv[],
                      char *const envp[], const struct rr_child_opts *o,
                      rr_child_exit_fn exit_cb, void *arg, char *err, size_t errlen)
{
    memset(&started_box, 0, sizeof started_box);
    exit_fn = exit_cb;
    exit_arg = arg;
    int rc = rr_child_start(loop, out, argv, envp, o, on_exit_relay, on_started, &started_box,
                            err, errlen);
    if (rc != 0)
        return rc;
    while (!started_box.done)
        uv_run(loop, UV_RUN_ONCE);
    if (started_box.rc != 0) {
        *out = NULL;
        snprintf(err, errlen, "%s", started_box.err);
    }
    return started_box.rc;
}

/* Run a started child to its end and tear everything down, checking that
 * exit_cb ran exactly once and that the loop closes cleanly. */
static int finish(uv_loop_t *loop, struct rr_child *ch, struct outcome *o)
{
    ck_assert_int_eq(uv_run(loop, UV_RUN_DEFAULT), 0);
    ck_assert_int_eq(o->calls, 1);
    if (!o->free_in_cb)
        rr_child_free(ch);
    uv_run(loop, UV_RUN_DEFAULT);
    ck_assert_int_eq(uv_loop_close(loop), 0);
    return rr_child_exit_code(o->wstatus);
}

/* Spawn argv, wait for it, return its shell-style exit code. */
static int run_argv(char *const argv[], char *const envp[], bool foreground)
{
    uv_loop_t loop;
    struct rr_child *ch = NULL;
    struct outcome o = { 0 };
    char err[RR_ERRLEN] = "";
    ck_assert_int_eq(uv_loop_init(&loop), 0);
    int r = spawn_sync(&loop, &ch, argv, envp, (foreground ? &FG : &BG), on_child_exit, &o,
                           err, sizeof err);
    ck_assert_msg(r == 0, "spawn failed: %d %s", r, err);
    ck_assert_ptr_nonnull(ch);
    ck_assert_int_gt(rr_child_pid(ch), 0);
    return finish(&loop, ch, &o);
}

static int run_sh(const char *script)
{
    char *argv[] = { (char *)"sh", (char *)"-c", (char *)script, NULL };
    return run_argv(argv, NULL, false);
}

/* Expect spawning argv to fail with code rc and message err_expected. */
static void expect_spawn_error(char *const argv[], int rc, const char *err_expected)
{
    uv_loop_t loop;
    struct rr_child *ch = NULL;   /* NULL: spawn makes its own guard; NULL again on failure */
    struct outcome o = { 0 };
    char err[RR_ERRLEN] = "";
    /* The guards of earlier runs exit by themselves (rr_guard_let_go):
     * reaped here, so that what is left below is this spawn's. */
    while (waitpid(-1, NULL, 0) > 0)
        ;
    ck_assert_int_eq(uv_loop_init(&loop), 0);
    int r = spawn_sync(&loop, &ch, argv, NULL, &BG, on_child_exit, &o, err, sizeof err);
    ck_assert_int_eq(r, rc);
    ck_assert_ptr_null(ch);
    ck_assert_str_eq(err, err_expected);
    ck_assert_int_eq(uv_run(&loop, UV_RUN_DEFAULT), 0);
    ck_assert_int_eq(o.calls, 0);
    ck_assert_int_eq(uv_loop_close(&loop), 0);
    /* The failed child was reaped by spawn itself. */
    ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
    ck_assert_int_eq(errno, ECHILD);
}

static void write_file(const char *path, const char *content, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, content, strlen(content)), (ssize_t)strlen(content));
    close(fd);
    ck_assert_int_eq(chmod(path, mode), 0);
}

/* ---- exit codes ---- */

START_TEST(test_exit_zero)
{
    ck_assert_int_eq(run_sh("exit 0"), 0);
    char *argv[] = { (char *)"true", NULL };
    ck_assert_int_eq(run_argv(argv, NULL, false), 0);
}
END_TEST

START_TEST(test_exit_three)
{
    ck_assert_int_eq(run_sh("exit 3"), 3);
    char *argv[] = { (char *)"false", NULL };
    ck_assert_int_eq(run_argv(argv, NULL, false), 1);
}
END_TEST

START_TEST(test_exit_signal)
{
    ck_assert_int_eq(run_sh("kill -USR1 $$"), 128 + SIGUSR1);
    ck_assert_int_eq(run_sh("kill -KILL $$"), 128 + SIGKILL);
}
END_TEST

START_TEST(test_quick_exits)
{
    /* A child that exits before the SIGCHLD watcher starts must still be
     * seen, every time. */
    for (int i = 0; i < 25; i++) {
        char *argv[] = { (char *)"/bin/true", NULL };
        ck_assert_int_eq(run_argv(argv, NULL, i % 2 == 0), 0);
    }
}
END_TEST

/* ---- exec failures ---- */

START_TEST(test_not_found)
{
    char *argv[] = { (char *)"rr-no-such-command-q7z", NULL };
    expect_spawn_error(argv, -127, "cannot run 'rr-no-such-command-q7z': command not found");
}
END_TEST

START_TEST(test_not_found_path)
{
    char *argv[] = { (char *)"/nonexistent-rr/bin/tool", NULL };
    expect_spawn_error(argv, -127, "cannot run '/nonexistent-rr/bin/tool': no such file or directory");
    char *argv2[] = { (char *)"", NULL };
    expect_spawn_error(argv2, -127, "cannot run '': command not found");
}
END_TEST

START_TEST(test_not_found_empty_path)
{
    make_tmpdir();
    ck_assert_int_eq(setenv("PATH", tmpdir, 1), 0);
    char *argv[] = { (char *)"sh", NULL };
    expect_spawn_error(argv, -127, "cannot run 'sh': command not found");
    remove_tmpdir();
}
END_TEST

START_TEST(test_not_executable)
{
    char path[PATHLEN], expected[PATHLEN + 100];
    make_tmpdir();
    tmppath(path, sizeof path, "script");
    write_file(path, "#!/bin/sh\nexit 0\n", 0644);
    snprintf(expected, sizeof expected, "cannot run '%s': permission denied", path);
    char *argv[] = { path, NULL };
    expect_spawn_error(argv, -126, expected);   /* even for root: no x bit */
    remove_tmpdir();
}
END_TEST

START_TEST(test_directory)
{
    char expected[PATHLEN + 100];
    make_tmpdir();
    snprintf(expected, sizeof expected, "cannot run '%s': permission denied", tmpdir);
    char *argv[] = { tmpdir, NULL };
    expect_spawn_error(argv, -126, expected);
    remove_tmpdir();
}
END_TEST

START_TEST(test_exec_format)
{
    char path[PATHLEN], expected[PATHLEN + 100];
    make_tmpdir();
    tmppath(path, sizeof path, "garbage");
    write_file(path, "\x7f" "ELF not really\n", 0755);
    snprintf(expected, sizeof expected, "cannot run '%s': exec format error", path);
    char *argv[] = { path, NULL };
    expect_spawn_error(argv, -126, expected);
    remove_tmpdir();
}
END_TEST

START_TEST(test_script_without_shebang)
{
    /* Like execvp and the shells: a text file without "#!" runs under sh. */
    char path[PATHLEN], marker[PATHLEN], body[2 * PATHLEN];
    make_tmpdir();
    tmppath(path, sizeof path, "noshebang");
    tmppath(marker, sizeof marker, "ran");
    snprintf(body, sizeof body, "echo \"$1\" > '%s'\nexit 3\n", marker);
    write_file(path, body, 0755);
    char *argv[] = { path, (char *)"hello", NULL };
    ck_assert_int_eq(run_argv(argv, NULL, false), 3);
    char *got = slurp(marker);
    ck_assert_str_eq(got, "hello\n");
    free(got);
    remove_tmpdir();
}
END_TEST

START_TEST(test_path_search_eacces)
{
    /* Like execvp: a non-executable match is remembered, a later
     * executable one wins, and EACCES is reported if nothing else is
     * found. */
    char a[PATHLEN], b[PATHLEN], pa[PATHLEN + 16], pb[PATHLEN + 16], path[2 * PATHLEN];
    make_tmpdir();
    tmppath(a, sizeof a, "a");
    tmppath(b, sizeof b, "b");
    ck_assert_int_eq(mkdir(a, 0755), 0);
    ck_assert_int_eq(mkdir(b, 0755), 0);
    snprintf(pa, sizeof pa, "%s/rrtool", a);
    snprintf(pb, sizeof pb, "%s/rrtool", b);
    write_file(pa, "#!/bin/sh\nexit 0\n", 0644);
    write_file(pb, "#!/bin/sh\nexit 5\n", 0755);
    char *argv[] = { (char *)"rrtool", NULL };

    snprintf(path, sizeof path, "%s:%s", a, b);
    ck_assert_int_eq(setenv("PATH", path, 1), 0);
    ck_assert_int_eq(run_argv(argv, NULL, false), 5);

    snprintf(path, sizeof path, "/nonexistent-rr:%s", a);
    ck_assert_int_eq(setenv("PATH", path, 1), 0);
    expect_spawn_error(argv, -126, "cannot run 'rrtool': permission denied");
    remove_tmpdir();
}
END_TEST

/* ---- process group, signals, environment ---- */

START_TEST(test_own_process_group)
{
    uv_loop_t loop;
    struct rr_child *ch = NULL;
    struct outcome o = { 0 };
    char err[RR_ERRLEN];
    char *argv[] = { (char *)"sleep", (char *)"30", NULL };
    ck_assert_int_eq(uv_loop_init(&loop), 0);
    ck_assert_int_eq(spawn_sync(&loop, &ch, argv, NULL, &BG, on_child_exit, &o,
                                    err, sizeof err), 0);
    pid_t pid = rr_child_pid(ch);
    /* Right when spawn returns, not eventually: the parent sets it too. */
    ck_assert_int_eq(getpgid(pid), pid);
    ck_assert_int_ne(getpgid(pid), getpgrp());
    rr_child_stop(ch, 10000);
    ck_assert_int_eq(finish(&loop, ch, &o), 128 + SIGTERM);
}
END_TEST

START_TEST(test_foreground_group)
{
    uv_loop_t loop;
    struct rr_child *ch = NULL;
    struct outcome o = { 0 };
    char err[RR_ERRLEN];
    char *argv[] = { (char *)"sleep", (char *)"30", NULL };
    ck_assert_int_eq(uv_loop_init(&loop), 0);
    ck_assert_int_eq(spawn_sync(&loop, &ch, argv, NULL, &FG, on_child_exit, &o,
                                    err, sizeof err), 0);
    ck_assert_int_eq(getpgid(rr_child_pid(ch)), getpgrp());
    /* In our group, a killpg would hit us too: kill() must be used. */
    ck_assert_int_eq(rr_child_signal(ch, SIGUSR2), 0);
    ck_assert_int_eq(finish(&loop, ch, &o), 128 + SIGUSR2);
}
END_TEST

START_TEST(test_signal_forward)
{
    uv_loop_t loop;
    struct rr_child *ch = NULL;
    struct outcome o = { 0 };
    char err[RR_ERRLEN], ready[PATHLEN], script[SCRIPTLEN];
    make_tmpdir();
    tmppath(ready, sizeof ready, "ready");
    snprintf(script, sizeof script, "touch '%s'; sleep 30; exit 0", ready);
    char *argv[] = { (char *)"sh", (char *)"-c", script, NULL };
    ck_assert_int_eq(uv_loop_init(&loop), 0);
    ck_assert_int_eq(spawn_sync(&loop, &ch, argv, NULL, &BG, on_child_exit, &o,
                                    err, sizeof err), 0);
    ck_assert(wait_for_file(ready, 5000));
    ck_assert_int_eq(rr_child_signal(ch, SIGUSR1), 0);
    ck_assert_int_eq(uv_run(&loop, UV_RUN_DEFAULT), 0);
    ck_assert_int_eq(o.calls, 1);
    ck_assert_int_eq(rr_child_exit_code(o.wstatus), 128 + SIGUSR1);
    /* After the reap: nothing is sent (the pid may be reused). */
    ck_assert_int_eq(rr_child_signal(ch, SIGKILL), 0);
    rr_child_stop(ch, 0);
    ck_assert_int_eq(uv_run(&loop, UV_RUN_DEFAULT), 0);
    ck_assert_int_eq(o.calls, 1);
    rr_child_free(ch);
    uv_run(&loop, UV_RUN_DEFAULT);
    ck_assert_int_eq(uv_loop_close(&loop), 0);
    remove_tmpdir();
}
END_TEST

START_TEST(test_env_passed)
{
    char out[PATHLEN], script[SCRIPTLEN];
    make_tmpdir();
    tmppath(out, sizeof out, "env");
    ck_assert_int_eq(setenv("REDLOCK_PASSWORD", "hunter2", 1), 0);
    ck_assert_int_eq(setenv("REDLOCK_NAME", "stale-from-outside", 1), 0);
    ck_assert_int_eq(setenv("RR_KEEP_ME", "kept", 1), 0);
    const char *drop[] = { "REDLOCK_PASSWORD", "REDLOCK_USER", NULL };
    const char *add[] = { "REDLOCK_NAME=settle", "REDLOCK_FENCE=42", NULL };
    char **env = rr_child_env(environ, drop, add);
    ck_assert_ptr_nonnull(env);

    snprintf(script, sizeof script, "env > '%s'", out);
    char *argv[] = { (char *)"sh", (char *)"-c", script, NULL };
    ck_assert_int_eq(run_argv(argv, env, false), 0);
    rr_child_env_free(env);

    char *got = slurp(out);
    ck_assert_ptr_null(strstr(got, "REDLOCK_PASSWORD"));
    ck_assert_ptr_null(strstr(got, "hunter2"));
    ck_assert_ptr_null(strstr(got, "stale-from-outside"));
    ck_assert(has_line(got, "REDLOCK_NAME=settle"));
    ck_assert(has_line(got, "REDLOCK_FENCE=42"));
    ck_assert(has_line(got, "RR_KEEP_ME=kept"));
    free(got);
    remove_tmpdir();
}
END_TEST

/* SigBlk must be empty and SigIgn too, except glibc's two internal
 * real-time signals (32 and 33): glibc's sigaction refuses to touch them,
 * and an exec'd glibc program installs its own handlers for them anyway.
 * (make(1), for one, starts its commands with them ignored.) */
static void assert_sig_clean(const char *got)
{
    unsigned long long blk = ~0ULL, ign = ~0ULL;

    ck_assert_int_eq(sscanf(got, "SigBlk:\t%llx\nSigIgn:\t%llx", &blk, &ign), 2);
    ck_assert_uint_eq(blk, 0);
    ck_assert_uint_eq(ign & ~0x180000000ULL, 0);
}

START_TEST(test_signals_reset)
{
    /* Ignored signals and the signal mask survive exec: both must be clean
     * in the child even though we ignore SIGPIPE and block others. */
    char out[PATHLEN], script[SCRIPTLEN];
    make_tmpdir();
    tmppath(out, sizeof out, "status");
    signal(SIGPIPE, SIG_IGN);
    signal(SIGUSR2, SIG_IGN);
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGUSR1);
    sigaddset(&block, SIGHUP);
    ck_assert_int_eq(sigprocmask(SIG_BLOCK, &block, NULL), 0);

    /* The command reads its own status: `exec` keeps the pid, the mask and
     * the dispositions. (Reading the shell's status from a child of the
     * shell races with dash, which blocks every signal around its vfork.) */
    snprintf(script, sizeof script, "exec grep -E '^Sig(Ign|Blk):' /proc/self/status > '%s'", out);
    char *argv[] = { (char *)"sh", (char *)"-c", script, NULL };
    ck_assert_int_eq(run_argv(argv, NULL, false), 0);
    char *got = slurp(out);
    assert_sig_clean(got);
    free(got);
    remove_tmpdir();
}
END_TEST

/* ---- stopping ---- */

/* Start `sh -c 'trap "" TERM; ...'` and wait until the trap is in place. */
static struct rr_child *spawn_term_ignorer(uv_loop_t *loop, struct outcome *o)
{
    struct rr_child *ch = NULL;
    char err[RR_ERRLEN], ready[PATHLEN], script[SCRIPTLEN];
    tmppath(ready, sizeof ready, "ready");
    unlink(ready);
    snprintf(script, sizeof script, "trap '' TERM; touch '%s'; sleep 30; exit 0", ready);
    char *argv[] = { (char *)"sh", (char *)"-c", script, NULL };
    ck_assert_int_eq(uv_loop_init(loop), 0);
    ck_assert_int_eq(spawn_sync(loop, &ch, argv, NULL, &BG, on_child_exit, o,
                                    err, sizeof err), 0);
    ck_assert(wait_for_file(ready, 5000));
    return ch;
}

START_TEST(test_stop_escalates_to_kill)
{
    uv_loop_t loop;
    struct outcome o = { 0 };
    make_tmpdir();
    struct rr_child *ch = spawn_term_ignorer(&loop, &o);
    int64_t start = rr_now_ms();
    rr_child_stop(ch, 300);
    ck_assert_int_eq(finish(&loop, ch, &o), 128 + SIGKILL);
    int64_t took = elapsed_since(start);
    ck_assert_int_ge(took, 290);
    ck_assert_int_lt(took, 300 + SLACK_MS);
    remove_tmpdir();
}
END_TEST

START_TEST(test_stop_sooner_deadline_wins)
{
    make_tmpdir();
    for (int order = 0; order < 2; order++) {
        uv_loop_t loop;
        struct outcome o = { 0 };
        struct rr_child *ch = spawn_term_ignorer(&loop, &o);
        int64_t start = rr_now_ms();
        rr_child_stop(ch, order ? 300 : 20000);
        rr_child_stop(ch, order ? 20000 : 300);
        ck_assert_int_eq(finish(&loop, ch, &o), 128 + SIGKILL);
        ck_assert_int_lt(elapsed_since(start), 300 + SLACK_MS);
    }
    remove_tmpdir();
}
END_TEST

START_TEST(test_stop_no_escalation_when_it_exits)
{
    /* A child that exits on TERM is reaped and the KILL timer stops, so
     * the loop ends at once instead of waiting out the grace period. */
    uv_loop_t loop;
    struct rr_child *ch = NULL;
    struct outcome o = { 0 };
    char err[RR_ERRLEN];
    char *argv[] = { (char *)"sleep", (char *)"30", NULL };
    ck_assert_int_eq(uv_loop_init(&loop), 0);
    ck_assert_int_eq(spawn_sync(&loop, &ch, argv, NULL, &BG, on_child_exit, &o,
                                    err, sizeof err), 0);
    int64_t start = rr_now_ms();
    rr_child_stop(ch, 20000);
    ck_assert_int_eq(finish(&loop, ch, &o), 128 + SIGTERM);
    ck_assert_int_lt(elapsed_since(start), SLACK_MS);
}
END_TEST

START_TEST(test_stop_reaches_grandchild)
{
    uv_loop_t loop;
    struct rr_child *ch = NULL;
    struct outcome o = { 0 };
    char err[RR_ERRLEN], pidfile[PATHLEN], script[SCRIPTLEN];
    make_tmpdir();
    /* Orphans come to us, so we can see how the grandchild died. */
    ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
    tmppath(pidfile, sizeof pidfile, "gpid");
    snprintf(script, sizeof script, "sleep 30 & echo $! > '%s.tmp'; mv '%s.tmp' '%s'; wait",
             pidfile, pidfile, pidfile);
    char *argv[] = { (char *)"sh", (char *)"-c", script, NULL };
    ck_assert_int_eq(uv_loop_init(&loop), 0);
    ck_assert_int_eq(spawn_sync(&loop, &ch, argv, NULL, &BG, on_child_exit, &o,
                                    err, sizeof err), 0);
    pid_t gpid = (pid_t)read_pid_file(pidfile);
    ck_assert_int_eq(getpgid(gpid), rr_child_pid(ch));

    rr_child_stop(ch, 20000);   /* no KILL within this test: TERM only */
    ck_assert_int_eq(finish(&loop, ch, &o), 128 + SIGTERM);

    bool gone = false;
    for (int i = 0; i < 200 && !gone; i++) {
        int st;
        pid_t r = waitpid(gpid, &st, WNOHANG);
        if (r == gpid) {
            ck_assert(WIFSIGNALED(st));
            ck_assert_int_eq(WTERMSIG(st), SIGTERM);
            gone = true;
        } else if (r < 0 && kill(gpid, 0) < 0 && errno == ESRCH) {
            gone = true;   /* the shell reaped it first */
        } else {
            usleep(10000);
        }
    }
    ck_assert_msg(gone, "grandchild %d survived the stop", (int)gpid);
    remove_tmpdir();
}
END_TEST

START_TEST(test_pdeathsig)
{
    char pidfile[PATHLEN], script[SCRIPTLEN];
    make_tmpdir();
    ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
    tmppath(pidfile, sizeof pidfile, "cpid");
    snprintf(script, sizeof script, "echo $$ > '%s.tmp'; mv '%s.tmp' '%s'; exec sleep 30",
             pidfile, pidfile, pidfile);

    /* The intermediate plays redlock-run and is killed without warning. */
    pid_t mid = fork();
    ck_assert_int_ge(mid, 0);
    if (mid == 0) {
        uv_loop_t loop;
        struct rr_child *ch = NULL;
        struct outcome o = { 0 };
        char err[RR_ERRLEN];
        char *argv[] = { (char *)"sh", (char *)"-c", script, NULL };
        if (uv_loop_init(&loop) != 0 ||
            spawn_sync(&loop, &ch, argv, NULL, &BG, on_child_exit, &o, err, sizeof err) != 0)
            _exit(1);
        uv_run(&loop, UV_RUN_DEFAULT);
        _exit(2);
    }
    pid_t cpid = (pid_t)read_pid_file(pidfile);
    ck_assert_int_eq(kill(mid, SIGKILL), 0);
    int st;
    ck_assert_int_eq(waitpid(mid, &st, 0), mid);
    ck_assert(WIFSIGNALED(st));

    /* The command is the guard's child, and the guard kills it (and dies
     * of our death): gone, whoever reaped it. */
    int64_t start = rr_now_ms();
    bool gone = false;
    while (!gone && elapsed_since(start) < 1000) {
        gone = !running(cpid);
        if (!gone)
            usleep(5000);
    }
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ;   /* the guard, re-parented to us, and what it left */
    if (!gone)
        kill(cpid, SIGKILL);
    ck_assert_msg(gone, "child %d outlived its parent by 1s", (int)cpid);
    remove_tmpdir();
}
END_TEST

/* ---- job control in cgroup mode ---- */

/* "1" or "0": the cgroup's cgroup.freeze. */
static char freeze_state(const struct rr_cgroup *cg)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/cgroup.freeze", rr_cgroup_path(cg));
    char *s = slurp(path);
    char c = s[0];
    free(s);
    return c;
}

/* rr_child_pause freezes the command's cgroup, rr_child_resume thaws it;
 * rr_child_stop thaws it after the TERM, so that a command which handles
 * TERM (a trap here) ends by it rather than by the KILL after the grace. */
START_TEST(test_pause_freezes_cgroup)
{
    uv_loop_t loop;
    struct rr_child *ch = NULL;
    struct rr_cgroup *cg = NULL;
    struct outcome o = { 0 };
    char err[RR_ERRLEN] = "", ready[PATHLEN], script[SCRIPTLEN];

    if (rr_cgroup_create(&cg, "unit/pause", err, sizeof err) != 0) {
        fprintf(stderr, "check_child: no real cgroup here (%s): skipped\n", err);
        return;
    }
    make_tmpdir();
    tmppath(ready, sizeof ready, "ready");
    snprintf(script, sizeof script,
             "exec 2>/dev/null; trap 'exit 7' TERM; : > '%s'; while :; do sleep 0.05; done",
             ready);
    char *argv[] = { (char *)"sh", (char *)"-c", script, NULL };
    struct rr_child_opts opts = BG;
    opts.cgroup = cg;
    ck_assert_int_eq(uv_loop_init(&loop), 0);
    ck_assert_int_eq(spawn_sync(&loop, &ch, argv, NULL, &opts, on_child_exit, &o,
                                    err, sizeof err), 0);
    ck_assert(wait_for_file(ready, 5000));
    ck_assert_int_eq(freeze_state(cg), '0');
    rr_child_pause(ch);
    ck_assert_int_eq(freeze_state(cg), '1');
    rr_child_resume(ch);
    ck_assert_int_eq(freeze_state(cg), '0');
    rr_child_pause(ch);
    ck_assert_int_eq(freeze_state(cg), '1');
    int64_t start = rr_now_ms();
    rr_child_stop(ch, 3000);
    /* The guard thaws it once the TERM is pending: soon after we ask. */
    for (int i = 0; i < 200 && freeze_state(cg) != '0'; i++)
        usleep(5000);
    ck_assert_int_eq(freeze_state(cg), '0');
    ck_assert_int_eq(finish(&loop, ch, &o), 7);
    ck_assert_int_lt(elapsed_since(start), 3000);
    /* Empty, and left to its owner (run.c) to remove. */
    ck_assert_int_eq(rr_cgroup_populated(cg), 0);
    ck_assert_int_eq(rr_cgroup_remove(cg), 0);
    rr_cgroup_free(cg);
    remove_tmpdir();
}
END_TEST

/* ---- handle lifetime ---- */

START_TEST(test_free_in_callback)
{
    uv_loop_t loop;
    struct rr_child *ch = NULL;
    struct outcome o = { .free_in_cb = true };
    char err[RR_ERRLEN];
    char *argv[] = { (char *)"sh", (char *)"-c", (char *)"exit 7", NULL };
    ck_assert_int_eq(uv_loop_init(&loop), 0);
    ck_assert_int_eq(spawn_sync(&loop, &ch, argv, NULL, &BG, on_child_exit, &o,
                                    err, sizeof err), 0);
    ck_assert_int_eq(finish(&loop, ch, &o), 7);
}
END_TEST

START_TEST(test_free_while_running)
{
    uv_loop_t loop;
    struct rr_child *ch = NULL;
    struct outcome o = { 0 };
    char err[RR_ERRLEN];
    char *argv[] = { (char *)"sleep", (char *)"30", NULL };
    ck_assert_int_eq(uv_loop_init(&loop), 0);
    ck_assert_int_eq(spawn_sync(&loop, &ch, argv, NULL, &BG, on_child_exit, &o,
                                    err, sizeof err), 0);
    pid_t pid = rr_child_pid(ch);
    rr_child_stop(ch, 100);   /* its KILL timer must go with the handles */
    rr_child_free(ch);
    int64_t start = rr_now_ms();
    ck_assert_int_eq(uv_run(&loop, UV_RUN_DEFAULT), 0);
    ck_assert_int_lt(elapsed_since(start), 90);
    ck_assert_int_eq(o.calls, 0);
    ck_assert_int_eq(uv_loop_close(&loop), 0);
    /* The guard, still there, reaps it. */
    kill(pid, SIGKILL);
    start = rr_now_ms();
    while (running(pid) && elapsed_since(start) < 2000)
        usleep(5000);
    ck_assert(!running(pid));
}
END_TEST

/* ---- pure functions ---- */

START_TEST(test_exit_code_mapping)
{
    ck_assert_int_eq(rr_child_exit_code(0), 0);
    ck_assert_int_eq(rr_child_exit_code(3 << 8), 3);
    ck_assert_int_eq(rr_child_exit_code(255 << 8), 255);
    ck_assert_int_eq(rr_child_exit_code(SIGKILL), 137);
    ck_assert_int_eq(rr_child_exit_code(SIGTERM), 143);
    ck_assert_int_eq(rr_child_exit_code(SIGSEGV | 0x80), 128 + SIGSEGV);   /* core dumped */
}
END_TEST


static Suite *child_suite(void)
{
    Suite *s = suite_create("child");
    TCase *tc = tcase_create("spawn");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_exit_zero);
    tcase_add_test(tc, test_exit_three);
    tcase_add_test(tc, test_exit_signal);
    tcase_add_test(tc, test_quick_exits);
    tcase_add_test(tc, test_not_found);
    tcase_add_test(tc, test_not_found_path);
    tcase_add_test(tc, test_not_found_empty_path);
    tcase_add_test(tc, test_not_executable);
    tcase_add_test(tc, test_directory);
    tcase_add_test(tc, test_exec_format);
    tcase_add_test(tc, test_script_without_shebang);
    tcase_add_test(tc, test_path_search_eacces);
    suite_add_tcase(s, tc);

    tc = tcase_create("process");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_own_process_group);
    tcase_add_test(tc, test_foreground_group);
    tcase_add_test(tc, test_signal_forward);
    tcase_add_test(tc, test_env_passed);
    tcase_add_test(tc, test_signals_reset);
    tcase_add_test(tc, test_stop_escalates_to_kill);
    tcase_add_test(tc, test_stop_sooner_deadline_wins);
    tcase_add_test(tc, test_stop_no_escalation_when_it_exits);
    tcase_add_test(tc, test_stop_reaches_grandchild);
    tcase_add_test(tc, test_pdeathsig);
    tcase_add_test(tc, test_free_in_callback);
    tcase_add_test(tc, test_free_while_running);
    tcase_add_test(tc, test_pause_freezes_cgroup);
    suite_add_tcase(s, tc);

    tc = tcase_create("pure");
    tcase_add_test(tc, test_exit_code_mapping);
    suite_add_tcase(s, tc);
    return s;
}

const struct rr_unit rr_unit = { "child", child_suite, NULL, NULL };
