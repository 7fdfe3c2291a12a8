#!/usr/bin/env bash
# t_cron.sh — examples/crontab, run by a real cron daemon, as if installed
# on two servers: both copies fire in the same minute against one
# redis-server, and each job's body runs exactly once. A third copy with
# the % left unescaped shows what cron does to it (the job never runs).
#
# Cron mails a job's output, and -q is what decides what is in it (issue 34,
# 7): the same minute runs lines of the test's own that must tell the
# operator something under -q (a password file others can read, a command
# that changed under its NAME, a --metrics-file name the collector ignores,
# a run after a dead run), and each must arrive as a mail holding just that
# warning, while the example's lines (ran, busy or skipped) mail nothing.
# Debian's cron has no option for its mailer: it runs /usr/sbin/sendmail
# -FCronDaemon -i -B8BITMIME -oem RECIPIENT, compiled in. When no sendmail
# is installed, the test puts a stand-in there that files each mail under
# its own directory, and removes it at exit (a trap); when a real MTA is
# installed, it leaves it alone, sets MAILTO="" and skips the mail checks.
#
# Needs root and Debian's cron (scripts/deps.sh test installs it). Uses the
# cron that is already running if there is one, else starts `cron -f` and
# stops it by its PID. Its files in /etc/cron.d are named after this run and
# removed at exit. Waits for the next minute boundary: up to 70 s.
# RR_CRON=0 skips it (.ci/run does, for the sanitizer and valgrind passes).
# run.sh: early (one of the longest: started first, so that the pool ends together)
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

EXAMPLE=$TOP/examples/crontab
CRON_FILES=()
CRON_PID=
MAILER=/usr/sbin/sendmail
MAILER_OURS=

cron_cleanup() {
    local f
    for f in "${CRON_FILES[@]}"; do rm -f "$f"; done
    # Our stand-in only: it names this run's directory.
    if [ -n "$MAILER_OURS" ] && grep -qF -- "$TMP/mail" "$MAILER" 2>/dev/null; then
        rm -f "$MAILER"
    fi
    if [ -n "$CRON_PID" ]; then
        kill -TERM "$CRON_PID" 2>/dev/null
        wait_for 5 pid_gone "$CRON_PID"
    fi
    cleanup
}
trap cron_cleanup EXIT

t "the example crontab exists and every % in it is escaped"
[ -r "$EXAMPLE" ] || fail "no $EXAMPLE"
bad=$(grep -nE '^[^#]*[^\\]%' "$EXAMPLE" | grep -v '^[0-9]*:[A-Z_]*=' || true)
[ -z "$bad" ] || fail "unescaped % in: $bad"
end_test

skip= asked=
cron_bin=$(command -v cron || true)
[ -z "$cron_bin" ] && [ -x /usr/sbin/cron ] && cron_bin=/usr/sbin/cron
if [ "${RR_CRON:-1}" = 0 ]; then
    skip="RR_CRON=0" asked=1
elif [ "${RR_VALGRIND:-0}" = 1 ]; then
    skip="under valgrind (cron runs the bare binary anyway)" asked=1
elif [ "$(id -u)" != 0 ]; then
    skip="not root: cannot write /etc/cron.d or start cron"
elif [ -z "$cron_bin" ]; then
    skip="no cron binary (apt-get install cron)"
elif [ ! -d /etc/cron.d ] || [ ! -w /etc/cron.d ]; then
    skip="/etc/cron.d is missing or not writable"
fi

# A live cron (not a zombie) that is not ours.
running_cron() {
    local p
    for p in $(pgrep -x cron 2>/dev/null); do
        pid_gone "$p" || { echo "$p"; return 0; }
    done
    return 1
}

t "under a real cron, two copies of the example crontab run each job once"
if [ -n "$skip" ]; then
    if [ -n "$asked" ]; then skip_asked "$skip"; else skip "$skip"; fi
    done_testing
    exit
fi

start_redis A --requirepass cron-secret || fail "no redis-server"
# The example's password file, as its comment says to make it: mode 0600.
mkdir -p "$TMP/etc"
install -m 0600 /dev/null "$TMP/etc/redis-password"
echo cron-secret >"$TMP/etc/redis-password"

# redlock-run, as cron finds it on the crontab's PATH: a wrapper that logs
# its arguments and exit status around the binary under test.
mkdir -p "$TMP/bin" "$TMP/opt/pay/bin"
cat >"$TMP/bin/redlock-run" <<WRAP
#!/bin/sh
printf '%s\n' "\$*" >>"$TMP/argv.log"
"$RR_BIN" "\$@"
rc=\$?
echo "\$rc \$*" >>"$TMP/exits.log"
exit \$rc
WRAP
chmod 755 "$TMP/bin/redlock-run"
# The jobs' bodies: log who ran, with what, and take 2 s, so that the two
# copies overlap.
for job in settle report sync neg; do
    cat >"$TMP/opt/pay/bin/$job" <<BODY
#!/bin/sh
echo "$job once=\${REDLOCK_ONCE:-} args=\$*" >>"$TMP/ran.log"
sleep 2
BODY
    chmod 755 "$TMP/opt/pay/bin/$job"
done
# The body of the test's own lines: quick, or, while $TMP/hold exists, a
# run that hangs (to be killed).
cat >"$TMP/opt/pay/bin/quiet" <<BODY
#!/bin/sh
[ -e "$TMP/hold" ] || exit 0
touch "$TMP/held"
exec sleep 30
BODY
chmod 755 "$TMP/opt/pay/bin/quiet"

# The mailer cron runs: a stand-in that files each mail (its arguments,
# then the message) as $TMP/mail/N, unless a real one is installed.
mkdir -p "$TMP/mail"
if [ ! -e "$MAILER" ] && [ ! -L "$MAILER" ] && [ -d "${MAILER%/*}" ]; then
    MAILER_OURS=1
    cat >"$MAILER.$$" <<MAIL
#!/bin/sh
# A stand-in for an MTA, put here by redlock-run's tests/integration/t_cron.sh
# (removed when it ends): files each mail under $TMP/mail.
n=\$(mktemp "$TMP/mail/m.XXXXXX") || exit 75
{ printf 'X-Stand-In-Argv: %s\n' "\$*"; cat; } >"\$n"
MAIL
    chmod 755 "$MAILER.$$"
    mv "$MAILER.$$" "$MAILER"
else
    note "$MAILER exists (a real MTA): MAILTO=\"\", the mail checks are skipped"
fi

# The lines of the test's own, one job each, whose -q output must be
# mailed: what each needs is set up here, before the minute.
install -m 0644 /dev/null "$TMP/etc/loose-password"
echo cron-secret >"$TMP/etc/loose-password"
# fp ran another command before: the cron line's command is a change.
"$RR_BIN" -q -r "$A_URL" --password-file "$TMP/etc/redis-password" fp -- true ||
    fail "fp's first run"
# dead: its last run, of the same command, died holding the lock (killed,
# its lease let expire).
touch "$TMP/hold"
bg "$TMP/dead" "$RR_BIN" -r "$A_URL" --password-file "$TMP/etc/redis-password" -t 1s \
    dead -- "$TMP/opt/pay/bin/quiet"
w=$BG
wait_for 10 file_there "$TMP/held" || fail "dead's first run did not start"
kill_wait KILL "$w" 5
rm -f "$TMP/hold"
wait_for 5 key_gone A "$(k_lock dead)" || fail "dead's lease did not expire"
# NAME OPTIONS...: the line, -q as in the example.
mail_line() {
    local name=$1; shift
    echo "$min $hour * * * root redlock-run -q $* $name -- $TMP/opt/pay/bin/quiet"
}
# The warning each job's mail must hold: name, then the words.
MAIL_WANT=(
    "pw|'$TMP/etc/loose-password' can be read by other users: chmod 600 it"
    "fp|the command differs from the last run's of fp"
    "mx|the node_exporter textfile collector reads only files ending in .prom"
    "dead|the previous run died without finishing"
)

# The minute both copies fire in: the next one, or the one after when the
# next is too close for cron to have read the files.
now=$(date +%s)
target=$(( (now / 60 + 1) * 60 ))
[ $((target - now)) -lt 8 ] && target=$((target + 60))
min=$((10#$(date -d "@$target" +%M)))
hour=$((10#$(date -d "@$target" +%H)))

# The example as a server would have it, except: the schedule (every job at
# the target minute), the Redis URL (our server), the PATH (our wrapper
# first), /opt (our bodies), /etc/redlock-run (our password file), and
# MAILTO when a real MTA would send the mail.
mailto='s#^MAILTO=.*#MAILTO=""#'
[ -n "$MAILER_OURS" ] && mailto='s#^MAILTO=(.*)#MAILTO=\1#'
adapt() {
    sed -E \
        -e "s#^PATH=#PATH=$TMP/bin:#" \
        -e "$mailto" \
        -e "s#^REDLOCK_URL=.*#REDLOCK_URL=$A_URL#" \
        -e "s#^([0-9*/,-]+[[:space:]]+){5}#$min $hour * * * #" \
        -e "s#/opt/#$TMP/opt/#g" \
        -e "s#/etc/redlock-run/#$TMP/etc/#g" \
        "$EXAMPLE"
}
tag=redlock-run-test-$$-$RANDOM
for host in a b; do
    f=/etc/cron.d/$tag-$host
    CRON_FILES+=("$f")
    adapt >"$f"
    chmod 644 "$f"
done
# The negative control: the settle line with its % unescaped.
f=/etc/cron.d/$tag-n
CRON_FILES+=("$f")
{
    adapt | grep -E '^[A-Z_]+='
    adapt | grep -E '^[0-9]+ [0-9]+ .*settle-' | sed -e 's/\\%/%/g' -e 's/settle/neg/g'
    # Proof that cron read this file and fired its lines.
    echo "$min $hour * * * root echo fired >>$TMP/neg-fired.log"
} >"$f"
chmod 644 "$f"
# The lines whose output must be mailed, with the example's variables.
f=/etc/cron.d/$tag-m
CRON_FILES+=("$f")
{
    adapt | grep -E '^[A-Z_]+='
    mail_line pw --password-file "$TMP/etc/loose-password"
    mail_line fp --password-file "$TMP/etc/redis-password"
    mail_line mx --password-file "$TMP/etc/redis-password" --metrics-file "$TMP/mx.txt"
    mail_line dead --password-file "$TMP/etc/redis-password"
} >"$f"
chmod 644 "$f"
n_mail=${#MAIL_WANT[@]}
n_lines=$(grep -cE '^[0-9]+ [0-9]+ ' "/etc/cron.d/$tag-a")
[ "$n_lines" -ge 2 ] || fail "expected at least 2 job lines in the example, found $n_lines"

if pid=$(running_cron); then
    note "using the cron already running (pid $pid)"
else
    "$cron_bin" -f -L 15 >"$TMP/cron.out" 2>&1 </dev/null &
    CRON_PID=$!
    sleep 0.5
    pid_gone "$CRON_PID" && fail "cron -f exited at once: $(head -c 300 "$TMP/cron.out")"
fi
note "waiting for $(date -d "@$target" +%H:%M) ($((target - $(date +%s))) s) for cron"

# Every job line of both copies, and each mail line, ends with one line in
# exits.log.
want=$((2 * n_lines + n_mail))
done_all() { [ "$(count_lines "$TMP/exits.log")" -ge "$want" ]; }
wait_for $((target - $(date +%s) + 40)) done_all ||
    fail "only $(count_lines "$TMP/exits.log") of $want cron runs finished by $(date +%T)"
# The negative control's shell ends at once; give stragglers a moment.
sleep 1

ran=$(cat "$TMP/ran.log" 2>/dev/null)
for job in settle report sync; do
    n=$(grep -c "^$job " <<<"$ran")
    assert_eq 1 "$n" "$job bodies run by the two copies"
done
assert_eq 1 "$(count_lines "$TMP/neg-fired.log")" "the control line beside the unescaped % line"
assert_eq 0 "$(grep -c '^neg ' <<<"$ran")" "runs of the unescaped % line"
assert_eq 0 "$(grep -c 'neg' "$TMP/argv.log" 2>/dev/null)" "redlock-run calls from the unescaped % line"

# cron turned \% into %, and redlock-run expanded it.
argv=$(cat "$TMP/argv.log" 2>/dev/null)
assert_contains "$argv" "--once settle-%F settle" "--once as redlock-run got it"
assert_contains "$argv" "--once report-%Y%m%d%H report" "--once as redlock-run got it"
assert_contains "$ran" "settle once=settle-$(date -d "@$target" +%F) " "REDLOCK_ONCE"
grep -qE "^report once=report-[0-9]{10} args=--hour [0-9]{2}$" <<<"$ran" ||
    fail "report body: $(grep '^report' <<<"$ran")"
assert_hash A "$(k_once settle "settle-$(date -d "@$target" +%F)")" status succeeded

# Each redlock-run exited 0 (ran, or --once already done) or 75 (busy).
while read -r code rest; do
    case $code in 0 | 75) ;; *) fail "exit $code: $rest" ;; esac
done <"$TMP/exits.log"
end_test

# mails_of NAME: the files of the mails whose Subject is a line of this run
# (it names $TMP) for job NAME.
mails_of() {
    grep -lE "^Subject: Cron <[^>]*> .*$TMP.* $1 -- " "$TMP"/mail/m.* 2>/dev/null
}
# mail_body FILE: the message after its headers.
mail_body() { sed '1,/^$/d' "$1"; }

t "under a real cron with a mail stand-in, -q mails the warnings to act on and nothing else"
if [ -z "$MAILER_OURS" ]; then
    skip "$MAILER is a real MTA: not replaced"
    done_testing
    exit
fi
# Cron mails after the job's output ends: give it the time to.
n_mailed() { cat "$TMP"/mail/m.* 2>/dev/null | grep -c '^Subject: '; }
all_mailed() { [ "$(n_mailed)" -ge "$n_mail" ]; }
wait_for 10 all_mailed || note "only $(n_mailed) mails by $(date +%T)"
sleep 1
for want in "${MAIL_WANT[@]}"; do
    job=${want%%|*} words=${want#*|}
    files=$(mails_of "$job")
    assert_eq 1 "$(echo "$files" | grep -c .)" "mails for $job"
    [ -n "$files" ] || continue
    assert_contains "$(head -1 "$files")" "-oem ops@example.com" "the stand-in's argv: the example's MAILTO"
    body=$(mail_body "$files")
    assert_contains "$body" "$words" "$job's mail"
    assert_eq 1 "$(echo "$body" | grep -c .)" "lines in $job's mail (-q: the warning only): $body"
done
# The example's lines ran, were busy or skipped: nothing to mail.
for job in settle report sync; do
    assert_eq "" "$(mails_of "$job")" "mails for the example's $job lines"
done
# And no other mail of this run (a Subject cut short would hide one above),
# but the unescaped % line's (sh's syntax error, cut at its %).
ours=$(grep -lE "^Subject: Cron <[^>]*> .*$TMP" "$TMP"/mail/m.* 2>/dev/null | grep -c .)
negs=$(grep -lE "^Subject: Cron <[^>]*> .*$TMP.*--once 'neg-" "$TMP"/mail/m.* 2>/dev/null | grep -c .)
assert_eq "$n_mail" "$((ours - negs))" "mails of this run, the unescaped % line's aside"
# The password came from a file: no mail holds it, headers included.
assert_eq "" "$(grep -l cron-secret "$TMP"/mail/m.* 2>/dev/null)" "mails holding the password"
end_test

done_testing
