#!/usr/bin/env bash
# t_examples.sh — the files in examples/ work as written, and the docs quote
# scheduler lines that a scheduler will not mangle:
#   * every crontab line in README.md, man/redlock-run.1 (source and
#     rendered) and examples/crontab writes % as \%;
#   * the systemd units pass `systemd-analyze verify` (where it exists), and
#     a copy with the %% turned back into % does not; their ExecStart, with
#     systemd's %% and ${CREDENTIALS_DIRECTORY} applied, runs and authenticates;
#   * the YAML files parse, and the redlock-run commands in them run.
# (examples/crontab under a real cron daemon: t_cron.sh.)
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

EX=$TOP/examples
MAN=$TOP/man/redlock-run.1
README=$TOP/README.md

# Lines that look like a crontab entry: five schedule fields, or @daily etc.
cron_lines() {
    grep -nE '^[[:space:]]*(@(reboot|yearly|annually|monthly|weekly|daily|midnight|hourly)|([0-9*][0-9*/,-]*[[:space:]]+){5})[^[:space:]]' "$@" || true
}
# Of those, the ones with a % not preceded by a backslash. ESC is what the
# backslash looks like in that file (\ in text, \e in roff source).
unescaped_pct() {
    local esc=$1; shift
    cron_lines "$@" | sed "s/${esc}%//g" | grep '%' || true
}

t "every crontab line in README.md escapes %"
n=$(cron_lines "$README" | wc -l)
[ "$n" -ge 2 ] || fail "found only $n crontab lines in README.md (the check below can fail)"
bad=$(unescaped_pct '\\' "$README")
[ -z "$bad" ] || fail "unescaped %: $bad"
end_test

t "every crontab line in the man page source escapes % (as \\e%)"
n=$(cron_lines "$MAN" | wc -l)
[ "$n" -ge 2 ] || fail "found only $n crontab lines in the man page"
bad=$(unescaped_pct '\\e' "$MAN")
[ -z "$bad" ] || fail "unescaped %: $bad"
end_test

t "every crontab line in the rendered man page escapes %"
if command -v groff >/dev/null 2>&1; then
    groff -man -Tutf8 -P-cbou "$MAN" 2>/dev/null >"$TMP/man.txt"
    n=$(cron_lines "$TMP/man.txt" | wc -l)
    [ "$n" -ge 2 ] || fail "found only $n crontab lines in the rendered man page"
    bad=$(unescaped_pct '\\' "$TMP/man.txt")
    [ -z "$bad" ] || fail "unescaped % as the reader sees it: $bad"
else
    note "groff not installed; skipped the rendered check"
fi
end_test

t "the crontab checks catch an unescaped % (negative control)"
printf '0 2 * * * redlock-run --once x-%%F x -- true\n' >"$TMP/bad.txt"
[ -n "$(unescaped_pct '\\' "$TMP/bad.txt")" ] || fail "an unescaped % went unnoticed"
end_test

t "README.md and the man page point to every example and say why % differs"
for f in crontab systemd/settle.service systemd/settle.timer github-actions.yml gitlab-ci.yml kubernetes-cronjob.yml; do
    [ -r "$EX/$f" ] || fail "no examples/$f"
    grep -q "examples/$f" "$README" || fail "README.md does not name examples/$f"
    sed 's/\\-/-/g' "$MAN" | grep -q "examples/$f" || fail "the man page does not name examples/$f"
done
grep -qi 'unescaped' "$README" || fail "README.md does not say that cron cuts at an unescaped %"
grep -q '%%' "$README" || fail "README.md does not say that % is %% in systemd units"
grep -q '%%' "$MAN" || fail "the man page does not say that % is %% in systemd units"
end_test

# --- systemd ---------------------------------------------------------------------

SVC=$EX/systemd/settle.service
TIMER=$EX/systemd/settle.timer

t "systemd units: Type=oneshot, SuccessExitStatus=75, LoadCredential, every % doubled"
svc=$(cat "$SVC")
assert_contains "$svc" "Type=oneshot"
assert_contains "$svc" "SuccessExitStatus=75"
assert_contains "$svc" "LoadCredential=redis-password:"
assert_contains "$svc" '--password-file "${CREDENTIALS_DIRECTORY}/redis-password"'
# In Exec lines, a % that is not %% is a specifier: none are wanted.
bad=$(grep -E '^Exec' "$SVC" | sed 's/%%//g' | grep '%' || true)
[ -z "$bad" ] || fail "a single % in: $bad"
grep -q 'Unit=\|^\[Timer\]' "$TIMER" || fail "settle.timer has no [Timer] section"
end_test

t "systemd units pass systemd-analyze verify (and a unit with %F does not)"
if command -v systemd-analyze >/dev/null 2>&1; then
    mkdir -p "$TMP/units" "$TMP/bad-units"
    # verify checks that ExecStart's binary exists: point it at ours.
    sed "s#/usr/bin/redlock-run#$RR_BIN#" "$SVC" >"$TMP/units/settle.service"
    cp "$TIMER" "$TMP/units/settle.timer"
    if ! out=$(cd "$TMP/units" && timeout 60 systemd-analyze verify --man=no settle.service settle.timer 2>&1); then
        fail "systemd-analyze verify: $(echo "$out" | head -5)"
    fi
    sed 's/%%/%/g' "$TMP/units/settle.service" >"$TMP/bad-units/settle.service"
    cp "$TIMER" "$TMP/bad-units/settle.timer"
    if (cd "$TMP/bad-units" && timeout 60 systemd-analyze verify --man=no settle.service settle.timer >/dev/null 2>&1); then
        fail "a unit with a single % passed verify: the check proves nothing"
    fi
else
    note "no systemd-analyze; skipped"
fi
end_test

# The ExecStart command as systemd would run it: continuation lines joined,
# %% → %, ${CREDENTIALS_DIRECTORY} → the credential directory, quotes
# removed; then every -r URL pointed at our server and /opt at our bodies.
exec_start() {
    "$PY" - "$SVC" "$1" "$2" "$3" <<'PYEOF'
import re, shlex, sys
unit, creds, url, opt = sys.argv[1:5]
text = open(unit).read().replace("\\\n", " ")
line = [l for l in text.splitlines() if l.startswith("ExecStart=")][0]
cmd = line[len("ExecStart="):].replace("%%", "%")
cmd = cmd.replace("${CREDENTIALS_DIRECTORY}", creds)
args = shlex.split(cmd)
out, skip = [], False
for i, a in enumerate(args):
    if skip:
        skip = False
        continue
    if a == "-r":
        if "-r" not in out:
            out += ["-r", url]
        skip = True
        continue
    out.append(a.replace("/opt/", opt + "/"))
print("\0".join(out), end="")
PYEOF
}

mkdir -p "$TMP/opt/pay/bin" "$TMP/creds" "$TMP/work"
for job in settle deploy; do
    cat >"$TMP/opt/pay/bin/$job" <<BODY
#!/bin/sh
echo "$job once=\${REDLOCK_ONCE:-} pw=\${REDLOCK_PASSWORD:-none} args=\$*" >>"$TMP/ran.log"
BODY
    chmod 755 "$TMP/opt/pay/bin/$job"
done
cp "$TMP/opt/pay/bin/deploy" "$TMP/work/deploy.sh"

PASS=s3cr3t-$$
start_redis P --requirepass "$PASS" || true
printf '%s\n' "$PASS" >"$TMP/creds/redis-password"
chmod 600 "$TMP/creds/redis-password"

t "systemd ExecStart, as systemd runs it, authenticates and runs once per day"
mapfile -d '' cmd < <(exec_start "$TMP/creds" "$P_URL" "$TMP/opt")
[ "${cmd[0]:-}" = /usr/bin/redlock-run ] || fail "ExecStart does not start /usr/bin/redlock-run: ${cmd[*]}"
cmd[0]=$RR_BIN
rr_direct "${cmd[@]:1}"
assert_rc 0 "first run"
rr_direct "${cmd[@]:1}"
assert_rc 0 "second run (already done today)"
ran=$(cat "$TMP/ran.log" 2>/dev/null)
assert_eq 1 "$(grep -c '^settle ' <<<"$ran")" "settlement bodies"
assert_contains "$ran" "settle once=settle-$(date +%F) pw=none" "the body's environment"
assert_hash P "$(k_once settle "settle-$(date +%F)")" status succeeded
end_test

# --- YAML ------------------------------------------------------------------------

have_yaml=1
"$PY" -c 'import yaml' 2>/dev/null || have_yaml=0

t "the YAML examples parse"
if [ "$have_yaml" = 1 ]; then
    for f in github-actions.yml gitlab-ci.yml kubernetes-cronjob.yml; do
        out=$("$PY" -c 'import sys, yaml; list(yaml.safe_load_all(open(sys.argv[1])))' "$EX/$f" 2>&1) ||
            fail "$f: $(echo "$out" | tail -2)"
    done
else
    note "python3-yaml missing (scripts/deps.sh test installs it); skipped the YAML checks"
fi
end_test

# yq FILE EXPR — evaluate a Python expression over the parsed document d.
yq() { "$PY" -c 'import sys, yaml; d = yaml.safe_load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"; }

if [ "$have_yaml" = 1 ]; then
    t "Kubernetes CronJob: Forbid, says why that is not enough, and its command runs once"
    K=$EX/kubernetes-cronjob.yml
    assert_eq CronJob "$(yq "$K" 'd["kind"]')" kind
    assert_eq Forbid "$(yq "$K" 'd["spec"]["concurrencyPolicy"]')" concurrencyPolicy
    grep -qi 'two clusters\|another cluster' "$K" || fail "no word on other clusters"
    grep -qi 're-created' "$K" || fail "no word on a re-created CronJob"
    c='d["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]'
    mapfile -d '' kcmd < <(yq "$K" "'\0'.join(${c}['command'])" | tr -d '\n')
    tz=$(yq "$K" "[e['value'] for e in ${c}['env'] if e['name'] == 'TZ'][0]")
    [ "${kcmd[0]:-}" = redlock-run ] || fail "the container does not run redlock-run: ${kcmd[*]}"
    kcmd=("${kcmd[@]/\/opt\//$TMP/opt/}")
    : >"$TMP/ran.log"
    R P FLUSHALL >/dev/null    # the systemd case settled today already
    for i in 1 2; do
        TZ=$tz REDLOCK_URL=$P_URL REDLOCK_PASSWORD=$PASS rr_direct "${kcmd[@]:1}"
        assert_rc 0 "run $i ($(head -c 300 "$ERR"))"
    done
    assert_eq 1 "$(grep -c '^settle ' "$TMP/ran.log")" "settlement bodies"
    assert_contains "$(cat "$TMP/ran.log")" "once=settle-$(TZ=$tz date +%F) pw=none" "the body's environment"
    end_test

    t "GitHub Actions and GitLab CI: the deploy command runs as written"
    gh=$(yq "$EX/github-actions.yml" '[s["run"] for s in d["jobs"]["deploy"]["steps"] if s.get("run", "").startswith("redlock-run")][0]')
    gl=$(yq "$EX/gitlab-ci.yml" '[l for l in d["deploy-prod"]["script"] if l.startswith("redlock-run")][0]')
    assert_contains "$gh" "redlock-run " "the GitHub step"
    assert_contains "$gl" "redlock-run " "the GitLab job"
    # GitHub: the tarball is built on Debian 12 (the oldest glibc it is
    # for) and installed on ubuntu-latest itself, with no container.
    G=$EX/github-actions.yml
    assert_eq debian:bookworm "$(yq "$G" 'd["jobs"]["redlock-run"].get("container")')" "the GitHub build job's container"
    assert_contains "$(yq "$G" '[s.get("run") for s in d["jobs"]["redlock-run"]["steps"]]')" "'make dist'" "the build job"
    assert_eq ubuntu-latest "$(yq "$G" 'd["jobs"]["deploy"]["runs-on"]')" "the deploy job's runner"
    assert_eq None "$(yq "$G" 'd["jobs"]["deploy"].get("container")')" "the deploy job's container"
    assert_eq redlock-run "$(yq "$G" 'd["jobs"]["deploy"]["needs"]')" "the deploy job's needs"
    assert_contains "$(yq "$G" '[s.get("run", "") for s in d["jobs"]["deploy"]["steps"]]')" "install.sh --prefix" "the install step"
    assert_eq debian:bookworm "$(yq "$EX/gitlab-ci.yml" 'd["deploy-prod"].get("image")')" "the GitLab job's image"
    : >"$TMP/ran.log"
    mkdir -p "$TMP/pathbin"
    ln -sf "$RR_BIN" "$TMP/pathbin/redlock-run"
    for line in "$gh" "$gl"; do
        (cd "$TMP/work" && PATH=$TMP/pathbin:$PATH GITHUB_SHA=abc123 CI_COMMIT_SHA=abc123 \
            REDLOCK_URL=$P_URL REDLOCK_PASSWORD=$PASS \
            timeout 20 bash -ec "$line" >"$TMP/ci.out" 2>&1 </dev/null)
        RC=$?
        assert_eq 0 "$RC" "exit status of: $line ($(head -c 200 "$TMP/ci.out"))"
    done
    assert_eq 2 "$(grep -c '^deploy once= pw=none args=abc123$' "$TMP/ran.log")" "deploys run"
    end_test
fi

# --- rolling restart ---------------------------------------------------------------

t "examples/rolling-restart.sh: 5 hosts, at most 2 restarting at once, all done"
start_redis X
mkdir -p "$TMP/rr-bin"
ln -sf "$RR_BIN" "$TMP/rr-bin/redlock-run"
printf '#!/bin/sh\necho "S $(date +%%s%%3N)" >> "%s"\n' "$TMP/restarts" > "$TMP/rr-bin/systemctl"
chmod +x "$TMP/rr-bin/systemctl"
pids=()
for h in 1 2 3 4 5; do
    PATH=$TMP/rr-bin:$PATH REDLOCK_URL=$X_URL SETTLE=0.4 \
        bg "$TMP/host$h" sh "$EX/rolling-restart.sh"
    pids+=("$BG")
done
wait_all 30 "${pids[@]}"
assert_eq 0 "$FAILS" "hosts that failed"
assert_eq 5 "$(count_lines "$TMP/restarts")" "restarts"
assert_eq 2 "$(cat "$TMP"/host*.out | grep -o 'slot [0-9]' | sort -u | wc -l | tr -d ' ')" "slots used"
end_test

t "examples/prometheus-rules.yml: promtool check rules and test rules pass; the metric names are the program's"
PROMTOOL=$(command -v promtool || echo "$TOP/build/tools/promtool")
if [ -x "$PROMTOOL" ]; then
    "$PROMTOOL" check rules "$EX/prometheus-rules.yml" >"$TMP/promtool.out" 2>&1 ||
        fail "promtool check rules: $(tail -3 "$TMP/promtool.out")"
    (cd "$EX" && "$PROMTOOL" test rules prometheus-rules.test.yml) >"$TMP/promtool.out" 2>&1 ||
        fail "promtool test rules: $(tail -20 "$TMP/promtool.out")"
elif [ "${CI:-}" = true ]; then
    fail "promtool not found (scripts/deps.sh ci takes it from Debian's prometheus package)"
else
    note "promtool not found: the alert rules were not checked (scripts/deps.sh ci)"
fi
# Every redlock_run_* name in the rules is one that src/metrics.c writes.
for m in $(grep -o 'redlock_run_[a-z_]*' "$EX/prometheus-rules.yml" | sort -u); do
    grep -q "\"$m\"" "$TOP/src/metrics.c" || fail "the rules use $m, which the program does not write"
done
grep -q 'examples/prometheus-rules.yml' "$README" || fail "README.md does not name examples/prometheus-rules.yml"
grep -q -- '--status --max-age' "$README" || fail "README.md does not show the --max-age check"
end_test

done_testing
