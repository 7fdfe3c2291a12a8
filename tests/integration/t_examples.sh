#!/usr/bin/env bash
# t_examples.sh — the files in examples/ work as written, and the docs quote
# scheduler lines that a scheduler will not mangle:
#   * every crontab line in README.md, man/redlock-run.1 (source and
#     rendered) and examples/crontab writes % as \%;
#   * the systemd units pass `systemd-analyze verify` (where it exists), and
#     a copy with the %% turned back into % does not; their ExecStart, with
#     systemd's %% and ${CREDENTIALS_DIRECTORY} applied, runs and authenticates;
#   * the YAML files parse; the CI examples build the tarball (make dist) in
#     one job and install it in the next, and every shell step of theirs
#     runs here (ci_steps.py), against a TLS redis-server, but apt-get.
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
    end_test
else
    skip "groff not installed (scripts/deps.sh test)"
fi

t "the crontab checks catch an unescaped % (negative control)"
printf '0 2 * * * redlock-run --once x-%%F x -- true\n' >"$TMP/bad.txt"
[ -n "$(unescaped_pct '\\' "$TMP/bad.txt")" ] || fail "an unescaped % went unnoticed"
end_test

t "README.md and the man page point to every example and say why % differs"
for f in crontab systemd/settle.service systemd/settle.timer github-actions.yml gitlab-ci.yml kubernetes-cronjob.yml Dockerfile; do
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
    end_test
else
    skip "no systemd-analyze (scripts/deps.sh ci installs systemd)"
fi

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
    end_test
else
    skip "python3-yaml missing (scripts/deps.sh test installs it)"
fi

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

    t "GitHub Actions and GitLab CI: a release fetched and checked against a pinned SHA-256, rediss:// with a CA from a secret"
    G=$EX/github-actions.yml L=$EX/gitlab-ci.yml
    # GitHub: the release installed on ubuntu-latest itself, no container.
    assert_eq ubuntu-latest "$(yq "$G" "d['jobs']['deploy']['runs-on']")" "GitHub deploy's runner"
    assert_eq None "$(yq "$G" "d['jobs']['deploy'].get('container')")" "GitHub deploy's container"
    gi=$(yq "$G" '[s.get("run", "") for s in d["jobs"]["deploy"]["steps"]]')
    for w in 'curl -fsSLO' 'sha256sum -c -' 'install.sh" --prefix'; do
        assert_contains "$gi" "$w" "GitHub's install step"
    done
    assert_contains "$(yq "$G" 'd["jobs"]["deploy"]["steps"][1]["env"]["REDLOCK_TARBALL"]')" "-static.tar.gz" "GitHub: the static tarball"
    assert_contains "$(cat "$G")" "make dist" "GitHub: building from source, the alternative"
    assert_contains "$(cat "$G")" "rediss://" "GitHub: TLS to Redis"
    assert_contains "$gi" "--tls-ca" "GitHub: the CA"
    # GitLab: one stage; the release checked before anything of it runs.
    assert_eq "['deploy']" "$(yq "$L" 'd["stages"]')" "GitLab stages"
    gl=$(yq "$L" 'd["deploy-prod"]["before_script"]')
    assert_contains "$gl" "sha256sum -c -" "GitLab's install lines"
    assert_contains "$(yq "$L" 'd["variables"]["REDLOCK_TARBALL"]')" "-static.tar.gz" "GitLab: the static tarball"
    assert_contains "$(cat "$L")" "make -C src dist" "GitLab: building from source, the alternative"
    assert_contains "$(cat "$L")" "rediss://" "GitLab: TLS to Redis"
    assert_contains "$(cat "$L")" 'type "File"' "GitLab: the CA as a File variable"
    assert_contains "$(yq "$L" 'd["deploy-prod"]["script"]')" '--tls-ca "$LOCK_REDIS_CA"' "GitLab: the CA"
    # Every step says why it is there: a comment line in front of each
    # shell step of the deploy jobs.
    for f in "$G" "$L"; do
        n=$(grep -cE '^ *#' "$f")
        [ "$n" -ge 20 ] || fail "$(basename "$f"): only $n comment lines"
    done
    end_test

    t "GitHub Actions and GitLab CI: every shell step runs here, as written, on a real TLS Redis"
    # What the pipelines fetch: a release (make dist of the committed tree,
    # served as file://), the static tarball when the static build is
    # cached (make static), else the glibc one; and the repository being
    # deployed ($TMP/work).
    make_dist "$TMP/release" || fail "make dist: $(tail -3 "$TMP/dist.out")"
    tarball=$(cd "$TMP/release" && ls redlock-run-*-linux-"$(uname -m)"-static.tar.gz 2>/dev/null ||
        ls redlock-run-*-linux-"$(uname -m)".tar.gz)
    note "the pipelines install $tarball"
    sum=$(awk -v f="$tarball" '$2 == f { print $1 }' "$TMP/release/SHA256SUMS")
    # GitHub's step env comes from the file: a copy with the release's place
    # and checksum filled in, the rest as written.
    sed -e "s|^\( *REDLOCK_RELEASE:\).*|\1 file://$TMP/release|" \
        -e "s|^\( *REDLOCK_TARBALL:\).*|\1 $tarball|" \
        -e "s|^\( *REDLOCK_SHA256:\).*|\1 \"$sum\"|" "$G" >"$TMP/github-actions.yml"
    pki_node || fail "openssl could not make the certificates"
    start_tls LK s --requirepass "$PASS" || fail "cannot start a TLS redis-server"
    cat >"$TMP/ci-lib.sh" <<'CILIB'
# The CI system, as far as the examples use it (ci_steps.py prints the calls).
set -u
BASE_PATH=/usr/bin:/bin     # no redlock-run on it: the steps must install theirs
job() { mkdir -p "$CI_ROOT/$1/ws" "$CI_ROOT/$1/temp"; : >"$CI_ROOT/$1/path.add"; }
job_path() { local p=$BASE_PATH l; while read -r l; do p=$l:$p; done <"$CI_ROOT/$1/path.add"; echo "$p"; }
step() {
    local job=$1 name=$2 envl=$3 body=$4 rc
    (cd "$CI_ROOT/$job/ws" && unset MAKEFLAGS MFLAGS MAKELEVEL &&
        export RUNNER_TEMP=$CI_ROOT/$job/temp GITHUB_PATH=$CI_ROOT/$job/path.add \
               CI_PROJECT_DIR=$CI_ROOT/$job/ws PATH && PATH=$(job_path "$job") &&
        eval "$envl" && bash --noprofile --norc -eo pipefail -c "$body") </dev/null >>"$CI_ROOT/log" 2>&1
    rc=$?
    [ "$rc" = 0 ] || { echo "# step failed: $job: $name (exit $rc)"; exit "$rc"; }
    echo "# ran: $job: $name"
}
checkout_src() { git clone -q --depth 1 --branch "$2" "file://$SRC_REPO" "$CI_ROOT/$1/ws/src.tmp" &&
    (shopt -s dotglob; mv "$CI_ROOT/$1/ws/src.tmp"/* "$CI_ROOT/$1/ws/") && rmdir "$CI_ROOT/$1/ws/src.tmp" ||
    { echo "# step failed: $1: checkout"; exit 1; }; echo "# ran: $1: checkout of redlock-run $2"; }
checkout_app() { cp -a "$APP_REPO/." "$CI_ROOT/$1/ws/"; echo "# ran: $1: checkout"; }
upload() { mkdir -p "$CI_ROOT/artifacts/$2" && (cd "$CI_ROOT/$1/ws" && eval "cp $3 \"\$CI_ROOT/artifacts/$2/\"") ||
    { echo "# step failed: $1: upload $2"; exit 1; }; echo "# ran: $1: upload $2"; }
download() { local d=$3; case $d in /*) ;; *) d=$CI_ROOT/$1/ws/$d ;; esac
    mkdir -p "$d" && cp -a "$CI_ROOT/artifacts/$2/." "$d/" || { echo "# step failed: $1: download"; exit 1; }
    echo "# ran: $1: download $2"; }
gl_keep() { mkdir -p "$CI_ROOT/artifacts/gl-$1" && (cd "$CI_ROOT/$1/ws" && cp -a --parents $2 "$CI_ROOT/artifacts/gl-$1/") ||
    { echo "# step failed: $1: artifacts $2"; exit 1; }; }
gl_artifacts() { cp -a "$CI_ROOT/artifacts/gl-$1/." "$CI_ROOT/$2/ws/"; echo "# ran: $2: artifacts of $1"; }
CILIB
    : >"$TMP/ran.log"
    printf '%s\n' "$(cat "$PKI/ca.crt")" >"$TMP/ca-file-variable.pem"
    for kind in github gitlab; do
        f=$G; [ "$kind" = gitlab ] && f=$L
        [ "$kind" = github ] && f=$TMP/github-actions.yml
        gen=$("$PY" "$TOP/tests/integration/ci_steps.py" "$kind" "$f" 2>&1) || { fail "ci_steps.py $kind: $gen"; continue; }
        { cat "$TMP/ci-lib.sh"; echo "$gen"; } >"$TMP/ci-$kind.sh"
        rm -rf "$TMP/ci-$kind"; mkdir -p "$TMP/ci-$kind"
        CI_ROOT=$TMP/ci-$kind SRC_REPO=$TMP/srcrepo APP_REPO=$TMP/work \
            SECRET_LOCK_REDIS_URL=$LK_URL SECRET_LOCK_REDIS_PASSWORD=$PASS \
            SECRET_LOCK_REDIS_CA="$(cat "$PKI/ca.crt")" GITHUB_SHA=abc123 \
            REDLOCK_RELEASE=file://$TMP/release REDLOCK_TARBALL=$tarball REDLOCK_SHA256=$sum \
            REDLOCK_URL=$LK_URL REDLOCK_PASSWORD=$PASS \
            LOCK_REDIS_CA=$TMP/ca-file-variable.pem CI_COMMIT_SHA=abc123 \
            timeout 600 bash "$TMP/ci-$kind.sh" >"$TMP/ci-$kind.out" 2>&1
        RC=$?
        note "$kind: $(grep -c '^# ran' "$TMP/ci-$kind.out") steps ran, $(grep -c '^# skipped' "$TMP/ci-$kind.out") skipped"
        assert_eq 0 "$RC" "$kind pipeline: $(tail -3 "$TMP/ci-$kind.out" | tr '\n' ' ') $(tail -5 "$TMP/ci-$kind/log" 2>/dev/null)"
        [ "$(grep -c '^# skipped' "$TMP/ci-$kind.out")" = 0 ] || fail "$kind: a step was skipped"
    done
    # The deploys ran, each with the redlock-run its pipeline installed from
    # the release, over TLS with the password: one run each.
    assert_eq 2 "$(grep -c '^deploy once= pw=none args=abc123$' "$TMP/ran.log")" "deploys run"
    assert_file_exists "$TMP/ci-github/deploy/temp/redlock-run/bin/redlock-run" "GitHub: installed from the release"
    assert_file_exists "$TMP/ci-gitlab/deploy-prod/ws/.redlock-run/bin/redlock-run" "GitLab: installed from the release"
    assert_eq 2 "$(R LK XLEN "$(k_hist deploy-prod)")" "two runs recorded on the TLS server"
    end_test

    t "GitHub Actions: a tarball that is not the pinned one fails the install step; nothing runs"
    sed -e "s|^\( *REDLOCK_SHA256:\).*|\1 \"$(printf '%064d' 0 | tr 0 f)\"|" "$TMP/github-actions.yml" >"$TMP/gh-bad.yml"
    gen=$("$PY" "$TOP/tests/integration/ci_steps.py" github "$TMP/gh-bad.yml" 2>&1) || fail "ci_steps.py: $gen"
    { cat "$TMP/ci-lib.sh"; echo "$gen"; } >"$TMP/ci-bad.sh"
    rm -rf "$TMP/ci-bad"; mkdir -p "$TMP/ci-bad"
    : >"$TMP/ran.log"
    CI_ROOT=$TMP/ci-bad APP_REPO=$TMP/work SECRET_LOCK_REDIS_URL=$LK_URL SECRET_LOCK_REDIS_PASSWORD=$PASS \
        SECRET_LOCK_REDIS_CA="$(cat "$PKI/ca.crt")" GITHUB_SHA=abc123 \
        timeout 120 bash "$TMP/ci-bad.sh" >"$TMP/ci-bad.out" 2>&1
    assert_ne 0 "$?" "the pipeline's status"
    assert_contains "$(cat "$TMP/ci-bad.out")" "step failed: deploy: Install redlock-run" "the failed step"
    assert_contains "$(cat "$TMP/ci-bad/log")" "FAILED" "sha256sum's word"
    assert_no_file "$TMP/ci-bad/deploy/temp/redlock-run/bin/redlock-run" "a binary installed anyway"
    assert_eq 0 "$(count_lines "$TMP/ran.log")" "deploys run"
    end_test
else
    t "Kubernetes CronJob, GitHub Actions and GitLab CI examples"
    skip "python3-yaml missing (scripts/deps.sh test installs it)"
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

t "examples/prometheus-rules.yml: the metric names are the program's"
# Every redlock_run_* name in the rules is one that src/metrics.c writes.
for m in $(grep -o 'redlock_run_[a-z_]*' "$EX/prometheus-rules.yml" | sort -u); do
    grep -qw "$m" "$TOP/src/metrics.c" "$TOP/src/list_export.c" || fail "the rules use $m, which the program does not write"
done
grep -q 'examples/prometheus-rules.yml' "$README" || fail "README.md does not name examples/prometheus-rules.yml"
grep -q -- '--status --max-age' "$README" || fail "README.md does not show the --max-age check"
end_test

t "examples/prometheus-rules.yml: promtool check rules and test rules pass"
PROMTOOL=$(command -v promtool || echo "$TOP/build/tools/promtool")
if [ -x "$PROMTOOL" ]; then
    "$PROMTOOL" check rules "$EX/prometheus-rules.yml" >"$TMP/promtool.out" 2>&1 ||
        fail "promtool check rules: $(tail -3 "$TMP/promtool.out")"
    (cd "$EX" && "$PROMTOOL" test rules prometheus-rules.test.yml) >"$TMP/promtool.out" 2>&1 ||
        fail "promtool test rules: $(tail -20 "$TMP/promtool.out")"
    end_test
else
    # .ci/run's RR_NO_SKIP=1 makes this a failure there.
    skip "promtool not found (scripts/deps.sh ci takes it from Debian's prometheus package)"
fi

done_testing
