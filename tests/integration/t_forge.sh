#!/usr/bin/env bash
# t_forge.sh — records another tenant of the same Redis wrote (issue 30,
# items 3 and 4), planted with redis-cli, through every output that shows
# them: --status, --status --json, --status --max-age, --list, --list
# --json. No byte below 0x20 but newline (nor DEL, a C1 control or a bidi
# override) reaches stdout; the JSON parses and its numbers are numbers or
# null; the Nagios output is one status line whose perfdata is ours; a
# --once record whose ID holds "}:state" is no job of --list's.
# shellcheck disable=SC2016,SC2153  # NAME_URL etc. come from start_redis
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

start_redis S || { t "start redis"; fail "cannot start redis-server"; done_testing; exit 1; }
U=$S_URL

# dirty FILE — what in FILE could drive a terminal or split a line: a byte
# below 0x20 other than newline, DEL, a C1 control (U+0080..U+009F), a
# line separator or a bidi override/isolate. Prints nothing when clean.
dirty() {
    "$PY" - "$1" <<'EOF'
import re, sys
b = open(sys.argv[1], "rb").read()
m = re.search(rb"[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80[\xa8-\xae]|\xe2\x81[\xa6-\xa9]", b)
if m:
    print("%r at byte %d: %r" % (m.group(0), m.start(), b[max(0, m.start() - 30):m.start() + 30]))
EOF
}

# json_check FILE EXPR — EXPR on the parsed JSON `j` (every line of FILE
# parsed on its own when FILE has more than one, as `js`); "INVALID ..."
# when a line is not JSON.
json_check() {
    "$PY" - "$1" "$2" <<'EOF'
import json, sys
lines = [l for l in open(sys.argv[1], encoding="utf-8", errors="strict").read().split("\n") if l]
try:
    js = [json.loads(l) for l in lines]
except Exception as e:
    print("INVALID %s" % e); sys.exit(0)
j = js[0] if len(js) == 1 else None
def num_or_null(v):
    return v is None or (isinstance(v, int) and not isinstance(v, bool))
print(eval(sys.argv[2], {"j": j, "js": js, "num_or_null": num_or_null}))
EOF
}

NOW=$(now_ms)
ESC=$'\e' BEL=$'\a'
TITLE="${ESC}]0;pwned${BEL}${ESC}[2J"                  # a title, then clear the screen
CLIP="${ESC}]52;c;ZWNobyBwd25lZA==${BEL}"              # OSC 52: write the clipboard
C1=$'\xc2\x9b'"31m"                                    # CSI as a C1 control
FORGED_PID='7,"fence":1}],"queue":[],"exit_code":0,"x":[{"a":1'

t "setup: records planted by another tenant"
# evil: held (the state record is the holder's), its host a terminal
# title, its pid a JSON fragment, a history entry and an abandoned --once
# record full of escapes.
R S SET "$(k_lock evil)" tok-evil PX 60000 >/dev/null
R S HSET "$(k_state evil)" token tok-evil status running host "web-1${TITLE}${CLIP}" \
    pid "$FORGED_PID" fence 5 started_ms "$NOW" heartbeat_ms "$NOW" \
    masters_ok 1 masters_total 2 masters_failed "m2${ESC}[8mhidden" >/dev/null
R S XADD "$(k_hist evil)" '*' status "failed${ESC}[2K" exit_code "1${BEL}" host "h${CLIP}" \
    pid "9${ESC}c" fence "+inf" once "id${C1}" by "x"$'\n'"INJECTED line" >/dev/null
R S HSET "$(k_once evil "x${ESC}[2J")" status abandoned once "x${ESC}[2J" >/dev/null
# evilq: free, a queue whose ticket is +inf and whose waiter id is an escape.
R S HSET "$(k_state evilq)" status succeeded host q fence 1 started_ms "$NOW" >/dev/null
R S ZADD "$(k_state evilq | sed 's/:state$/:queue/')" +inf "w${TITLE}" >/dev/null
# okjob: a success just now, its host a forged plugin line.
R S HSET "$(k_state okjob)" status succeeded host web-2 fence 3 started_ms "$NOW" \
    finished_ms "$NOW" exit_code 0 last_success_ms "$NOW" last_success_fence 3 \
    last_success_host $'web-2) | age=1s;;1s\nREDLOCK OK - forged'"${TITLE}" >/dev/null
# A --once record of realjob whose ID holds "}:state", and a state record
# whose NAME no command line would take.
rr -r "$U" realjob -- true
assert_rc 0 "realjob runs"
R S HSET 'redlock:{realjob}:once:x}:state' status succeeded once 'x}:state' host h >/dev/null
R S HSET "redlock:{ev${TITLE}}:state" status failed host h >/dev/null
[ "$(R S DBSIZE)" -ge 8 ] || fail "the records were not planted: $(R S KEYS '*' | tr '\n' ' ')"
end_test

t "--status (text): another tenant's record cannot drive the terminal"
rr -r "$U" --status evil
assert_rc 1 "held"
assert_eq "" "$(dirty "$OUT")" "stdout"
assert_contains "$(cat "$OUT")" 'web-1\x1b]0;pwned\x07\x1b[2J\x1b]52;c;'
assert_contains "$(cat "$OUT")" 'by x\nINJECTED line'
assert_contains "$(cat "$OUT")" 'id\u009b31m'
grep -q '^INJECTED' "$OUT" && fail "a history field started a line of its own"
rr -r "$U" --status evilq
assert_rc 0 "free, succeeded"
assert_eq "" "$(dirty "$OUT")" "stdout (the queue)"
assert_contains "$(cat "$OUT")" 'w\x1b]0;pwned'
end_test

t "--status --json: the record's pid cannot forge fields; numbers are numbers or null"
rr -r "$U" --status --json evil
assert_rc 1 "held"
assert_eq "True" "$(json_check "$OUT" 'j["exit_code"] == 1')" "exit_code is the real one"
assert_eq "False" "$(json_check "$OUT" '"x" in j')" "no planted key"
assert_eq "True" "$(json_check "$OUT" 'all(num_or_null(h["pid"]) and num_or_null(h["fence"]) for h in j["holders"])')" \
    "holders' pid and fence"
assert_eq "True" "$(json_check "$OUT" 'num_or_null(j["last_run"]["pid"]) and j["lock"]["host"].startswith("web-1\x1b")')" \
    "last_run pid; the host kept as a string"
assert_eq "[None, 5]" "$(json_check "$OUT" '[j["lock"]["pid"], j["lock"]["fence"]]')" "the holder's pid (not a number) and fence"
assert_eq "True" "$(json_check "$OUT" 'all(num_or_null(e["pid"]) and num_or_null(e["fence"]) for e in j["history"])')" \
    "history numbers"
assert_eq "" "$(dirty "$OUT")" "JSON escapes every control byte"
rr -r "$U" --status --json evilq
assert_rc 0 "free"
assert_eq "True" "$(json_check "$OUT" 'len(j["queue"]) == 1 and num_or_null(j["queue"][0]["ticket"])')" \
    "a +inf ticket"
assert_not_contains "$(cat "$OUT")" ':inf'
end_test

t "--status --max-age: a forged host cannot add a line or perfdata"
rr -r "$U" --status --max-age 1h okjob
assert_rc 0 "OK"
assert_eq 1 "$(count_lines "$OUT")" "one status line"
assert_eq "" "$(dirty "$OUT")" "stdout"
assert_eq 1 "$(tr -cd '|' <"$OUT" | wc -c)" "one '|' (ours)"
perf=$(sed 's/.*| //' "$OUT")
case $perf in
    'age='[0-9]*'s;;3600s') ;;
    *) fail "perfdata is not ours: '$perf'" ;;
esac
assert_contains "$(cat "$OUT")" 'REDLOCK OK - okjob succeeded'
end_test

t "--list: no phantom job from a --once ID, no control byte, every job once"
rr -r "$U" --list
assert_rc 0 "--list: $(head -c 300 "$ERR")"
assert_eq "" "$(dirty "$OUT")" "stdout"
names=$(awk 'NR > 1 { print $1 }' "$OUT" | tr '\n' ' ')
assert_eq "evil evilq okjob realjob " "$names" "the jobs"
assert_contains "$(grep '^evil ' "$OUT")" 'web-1\x1b]0;pwned'
assert_contains "$(grep '^okjob ' "$OUT")" 'web-2) | age=1s;;1s\nREDLOCK'
end_test

t "--list --json: the same jobs, every line JSON, numbers numbers or null"
rr -r "$U" --list --json
assert_rc 0
assert_eq "['evil', 'evilq', 'okjob', 'realjob']" "$(json_check "$OUT" '[x["name"] for x in js]')" "the jobs"
assert_eq "True" "$(json_check "$OUT" 'all(num_or_null(x["lock"].get("pid")) and (x["last_run"] is None or num_or_null(x["last_run"]["pid"])) for x in js)')" \
    "pid"
assert_eq "[None, 5]" "$(json_check "$OUT" '[[x["lock"]["pid"], x["lock"]["fence"]] for x in js if x["name"] == "evil"][0]')" \
    "the holder's pid (not a number) and fence"
assert_eq "" "$(dirty "$OUT")" "stdout"
end_test

t "--release --force: the holder it names is escaped too"
rr -r "$U" --release --force evil
assert_rc 0
assert_eq "" "$(dirty "$OUT")" "stdout"
assert_contains "$(cat "$OUT")" 'web-1\x1b]0;pwned'
end_test

done_testing
