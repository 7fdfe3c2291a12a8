/* main.c — parse, set up logging and the signal dispositions, dispatch the
 * mode, and return the mode's exit status (rr_run and rr_status_main choose
 * it). No other file ends the process (the forked child's _exit aside). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <uv.h>

#include "cli.h"
#include "rr.h"
#include "log.h"
#include "revoke.h"
#include "run.h"
#include "status.h"
#include "list.h"
#include "metrics.h"

int main(int argc, char **argv)
{
    static struct rr_config cfg;
    char err[RR_ERRLEN];
    uv_loop_t loop;
    int code;

    /* A blocked signal mask is inherited across exec (a parent that blocked
     * SIGCHLD and SIGTERM, then exec'd us): we would never see the command
     * end, renew its lock forever, and not even timeout(1) could stop us. */
    /* Not dumpable: our /proc/PID/environ, mem and ptrace are closed to
     * the command (and to every user but root), the guard's too (a fork
     * keeps it); the command's exec makes it dumpable again. */
    prctl(PR_SET_DUMPABLE, 0);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    /* Job-control stops from the terminal are not for us: we never read it,
     * and a log line written from the background must not stop us while
     * the command runs on (SIGTSTP is handled while it runs; see run_step.c). */
    signal(SIGTTIN, SIG_IGN);
    signal(SIGTTOU, SIG_IGN);
    rr_log_init(NULL, 0, false, false);
    if (rr_cli_parse_zeroed(argc, argv, &cfg, err, sizeof(err)) != 0) {
        rr_log(RR_LOG_ERROR, "usage", NULL, "%s (see redlock-run --help)", err);
        if (rr_cli_wants_check(argc, (const char *const *)argv)) {
            /* A monitoring check's caller reads stdout and 3, not 64. */
            printf("REDLOCK UNKNOWN - %s\n", err);
            return 3;
        }
        return RR_EXIT_USAGE;
    }
    rr_cli_scrub_argv(argc, argv);
    rr_cli_scrub_env();
    rr_title_init(argc, argv);
    if (cfg.mode == RR_MODE_HELP) {
        rr_cli_usage(stdout);
        return 0;
    }
    if (cfg.mode == RR_MODE_VERSION) {
        printf("redlock-run %s\n", RR_VERSION);
        return 0;
    }
    rr_log_init(cfg.name, cfg.verbosity, cfg.log_format == RR_LOGFMT_JSON, cfg.use_syslog);
    if (cfg.has_password)
        rr_log_secret(cfg.password);
    if (cfg.has_sentinel_password)
        rr_log_secret(cfg.sentinel_password);
    /* Warnings that ask the operator to act: said under -q too. */
    if (cfg.loose_secret_file)
        rr_log_act("secret_file", NULL,
                   "'%s' can be read by other users: chmod 600 it (the password is in it)",
                   cfg.loose_secret_file);
    if (cfg.metrics_file && !rr_metrics_name_collected(cfg.metrics_file))
        rr_log_act("metrics", NULL,
                   "--metrics-file %s: the node_exporter textfile collector reads only files "
                   "ending in .prom; rename it if that collector is to read it",
                   cfg.metrics_file);
    bool short_pw = (cfg.has_password && strlen(cfg.password) < RR_LOG_SECRET_SUBSTR) ||
                    (cfg.has_sentinel_password &&
                     strlen(cfg.sentinel_password) < RR_LOG_SECRET_SUBSTR);
    for (int i = 0; i < cfg.n_endpoints; i++)
        if (cfg.endpoints[i].has_password) {
            rr_log_secret(cfg.endpoints[i].password);
            short_pw = short_pw || strlen(cfg.endpoints[i].password) < RR_LOG_SECRET_SUBSTR;
        }
    /* Said under -q too: only the operator can fix it. */
    if (short_pw)
        rr_log(RR_LOG_ERROR, "secret", NULL,
               "a password is shorter than %d bytes: easy to guess, and redacted from messages "
               "only where it stands alone; use a long random one", RR_LOG_SECRET_SUBSTR);

    /* A write to a closed socket must be an error we handle, not a death. */
    signal(SIGPIPE, SIG_IGN);
    /* An ignored SIGCHLD is inherited across exec (some daemons and shells
     * set it) and would make the kernel reap our child before we see how it
     * ended. */
    signal(SIGCHLD, SIG_DFL);
    /* Too few descriptors: libuv aborts (4-5) or a watcher fails mid-setup
     * (9-14). Said once, before anything is asked of Redis. */
    struct rlimit nofile;
    if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur != RLIM_INFINITY &&
        nofile.rlim_cur < RR_MIN_FDS) {
        rr_log(RR_LOG_ERROR, "setup", NULL,
               "too few open files allowed (ulimit -n is %llu): redlock-run needs at least %d; "
               "raise the limit (ulimit -n %d, LimitNOFILE= in a systemd unit)",
               (unsigned long long)nofile.rlim_cur, RR_MIN_FDS, RR_MIN_FDS);
        return RR_EXIT_OSERR;
    }
    if (uv_loop_init(&loop) != 0) {
        rr_log(RR_LOG_ERROR, "internal", NULL, "cannot create the event loop");
        return RR_EXIT_OSERR;
    }
    if (cfg.mode == RR_MODE_RUN)
        code = rr_run(&loop, &cfg);
    else if (cfg.mode == RR_MODE_LIST)
        code = rr_list_main(&loop, &cfg, stdout);
    else if (cfg.mode == RR_MODE_RELEASE)
        code = rr_revoke_main(&loop, &cfg, stdout);
    else
        code = rr_status_main(&loop, &cfg, stdout);
    fflush(stdout);
    if (uv_loop_close(&loop) != 0)
        rr_log(RR_LOG_DEBUG, "internal", NULL, "event loop closed with handles open");
    return code;
}
