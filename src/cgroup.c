/* cgroup.c — STUB of the tree branch until the cgroup branch lands with the
 * real implementation (its version replaces this file whole). Nothing here
 * ever creates a cgroup, so the command always runs in tree mode. */
#include <errno.h>

#include "cgroup.h"

int rr_cgroup_enter_self(const struct rr_cgroup *cg) { (void)cg; return -ENOSYS; }
int rr_cgroup_kill(const struct rr_cgroup *cg) { (void)cg; return -ENOSYS; }
int rr_cgroup_populated(const struct rr_cgroup *cg) { (void)cg; return -ENOSYS; }
int rr_cgroup_events_fd(const struct rr_cgroup *cg) { (void)cg; return -1; }
int rr_cgroup_freeze(const struct rr_cgroup *cg, int on) { (void)cg; (void)on; return -ENOSYS; }
int rr_cgroup_remove(const struct rr_cgroup *cg) { (void)cg; return -ENOSYS; }
const char *rr_cgroup_path(const struct rr_cgroup *cg) { (void)cg; return ""; }
