#!/usr/bin/env python3
"""ci_steps.py KIND FILE — a CI example as a bash script that runs its jobs
here, in order, step by step, as the CI system would (t_examples.sh).

KIND is github (a GitHub Actions workflow) or gitlab (a .gitlab-ci.yml).
The script it prints expects in its environment:

  CI_ROOT      a directory: each job gets CI_ROOT/JOB/ws (its workspace, the
               current directory of its steps) and CI_ROOT/JOB/temp
               (RUNNER_TEMP); artifacts go through CI_ROOT/artifacts
  SRC_REPO     a git repository with redlock-run's source (at the example's
               tag): what a checkout of redlock-run, or a clone, fetches
  APP_REPO     a directory: the repository being deployed (deploy.sh)
  SECRET_NAME  the value of ${{ secrets.NAME }} (GitHub)
  and, for GitLab, the CI/CD variables (they win over the file's own
  variables, as in GitLab).

Every `run:` step and every `script:` line runs as written, with bash -e,
except those that install system packages (apt-get: root and the network),
which are printed as skipped. `uses:` steps do what the action does:
checkout, upload-artifact, download-artifact. A step that fails stops the
script with its status, after a line "# step failed: NAME".
"""

import re
import shlex
import sys

import yaml

SKIP = re.compile(r"\bapt-get\b")


def say(msg):
    print("echo %s" % shlex.quote("# " + msg))


def expr(text, job):
    """${{ secrets.X }} and ${{ runner.temp }} as bash expansions."""
    def one(m):
        e = m.group(1).strip()
        if e.startswith("secrets."):
            return "${SECRET_%s}" % e[len("secrets."):]
        if e == "runner.temp":
            return "$CI_ROOT/%s/temp" % job
        raise SystemExit("ci_steps.py: unknown expression ${{ %s }}" % e)
    return re.sub(r"\$\{\{(.*?)\}\}", one, str(text))


def exports(env, job):
    # Values are bash words: expressions expand, nothing else does.
    out = []
    for k, v in (env or {}).items():
        out.append("export %s=\"%s\"" % (k, expr(v, job).replace('"', '\\"')))
    return "; ".join(out)


def run_block(job, name, body, env_line):
    print("step %s %s %s %s" % (shlex.quote(job), shlex.quote(name), shlex.quote(env_line),
                                shlex.quote(body)))


def github(d):
    jobs = d["jobs"]
    order, seen = [], set()

    def visit(j):
        if j in seen:
            return
        seen.add(j)
        needs = jobs[j].get("needs", [])
        for n in [needs] if isinstance(needs, str) else needs:
            visit(n)
        order.append(j)
    for j in jobs:
        visit(j)
    for j in order:
        print("job %s" % shlex.quote(j))
        for i, s in enumerate(jobs[j]["steps"]):
            name = s.get("name") or s.get("uses") or "step %d" % (i + 1)
            w = s.get("with", {}) or {}
            if "uses" in s:
                a = s["uses"].split("@")[0]
                if a == "actions/checkout":
                    if w.get("repository"):
                        print("checkout_src %s %s" % (shlex.quote(j), shlex.quote(str(w.get("ref", "HEAD")))))
                    else:
                        print("checkout_app %s" % shlex.quote(j))
                elif a == "actions/upload-artifact":
                    print("upload %s %s %s" % (shlex.quote(j), shlex.quote(w["name"]), shlex.quote(w["path"])))
                elif a == "actions/download-artifact":
                    print("download %s %s \"%s\"" % (shlex.quote(j), shlex.quote(w["name"]),
                                                     expr(w.get("path", "."), j)))
                else:
                    raise SystemExit("ci_steps.py: an action this does not know: %s" % a)
                continue
            body = expr(s["run"], j)
            if SKIP.search(body):
                say("skipped (installs system packages: root and the network): %s: %s" % (j, name))
                continue
            run_block(j, name, body, exports(s.get("env"), j))


def gitlab(d):
    stages = d.get("stages", ["build", "test", "deploy"])
    glob_vars = d.get("variables", {}) or {}
    jobs = [(k, v) for k, v in d.items() if isinstance(v, dict) and "script" in v]
    jobs.sort(key=lambda kv: stages.index(kv[1].get("stage", "test")))
    for j, v in jobs:
        print("job %s" % shlex.quote(j))
        print("checkout_app %s" % shlex.quote(j))    # a runner fetches the project first
        for n in v.get("needs", []) or []:
            n = n if isinstance(n, str) else n["job"]
            print("gl_artifacts %s %s" % (shlex.quote(n), shlex.quote(j)))
        env = dict(glob_vars)
        env.update(v.get("variables", {}) or {})
        # CI/CD variables given to the script win over the file's, as in GitLab.
        env_line = "; ".join("[ -n \"${%s+x}\" ] || export %s=%s" % (k, k, shlex.quote(str(x)))
                             for k, x in env.items())
        lines = []
        for line in (v.get("before_script", []) or []) + v["script"]:
            if SKIP.search(line):
                say("skipped (installs system packages: root and the network): %s: %s" % (j, line))
                continue
            lines.append(line)
        # One shell per job, as a GitLab runner does: an export carries on.
        run_block(j, "script", "\n".join(lines), env_line)
        for p in (v.get("artifacts", {}) or {}).get("paths", []):
            print("gl_keep %s %s" % (shlex.quote(j), shlex.quote(p)))


def main():
    kind, path = sys.argv[1], sys.argv[2]
    d = yaml.safe_load(open(path))
    {"github": github, "gitlab": gitlab}[kind](d)


main()
