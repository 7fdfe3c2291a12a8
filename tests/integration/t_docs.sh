#!/usr/bin/env bash
# t_docs.sh — --help, the man page and the README agree (like curl's
# test1139): every long option the parser takes is in --help, in
# man/redlock-run.1, and every option in --help is in the man page; every
# exit status the man page lists is in --help and in the README; the
# warnings that -q keeps are the same list in all three; the examples the
# README and the man page quote (the crontab lines, the systemd unit, the
# Kubernetes command) are those of examples/. And the evidence the docs
# cite is there: every test file, unit suite and script they name exists,
# every test case they quote is a case of its file, and no Markdown table
# has a row broken by a stray |.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

MAN=$TOP/man/redlock-run.1
README=$TOP/README.md

help_opts() { "$RR_BIN" --help | grep -o -- '--[a-z][a-z-]*' | sort -u; }
# The options the source actually accepts, from the option table.
src_opts() {
    # Rows of kind RR_CLI_REFUSED* are habits refused with a hint, not options.
    grep '{ *\.name = "[a-z][a-z-]*"' "$TOP/src/cli.c" | grep -v 'RR_CLI_REFUSED' |
        grep -o '{ *\.name = "[a-z][a-z-]*"' |
        sed 's/.*"\([a-z-]*\)".*/--\1/' | sort -u
}
# The refused habits: named in the man page, so a reader learns the hint.
refused_opts() {
    grep '{ *\.name = "[a-z][a-z-]*".*RR_CLI_REFUSED' "$TOP/src/cli.c" |
        grep -o '{ *\.name = "[a-z][a-z-]*"' | sed 's/.*"\([a-z-]*\)".*/--\1/' | sort -u
}

# assert_in_man OPTION...: each long option is in the man page source, which
# writes an option's leading dashes as \-\-.
assert_in_man() {
    local o missing=
    for o in "$@"; do
        grep -q -- "\\\\-\\\\-${o#--}\\b" "$MAN" || missing="$missing $o"
    done
    [ -z "$missing" ] || fail "not in man/redlock-run.1:$missing"
}

t "the option table is not empty (the checks below can fail)"
n=$(src_opts | wc -l)
[ "$n" -ge 25 ] || fail "found only $n long options in src/cli.c"
end_test

t "every long option in src/cli.c is in --help"
missing=$(comm -23 <(src_opts) <(help_opts) | tr '\n' ' ')
[ -z "$missing" ] || fail "not in --help: $missing"
end_test

t "every refused habit (--timeout, --signal) is explained in the man page"
n=$(refused_opts | wc -l)
[ "$n" -ge 2 ] || fail "found only $n refused rows in src/cli.c"
assert_in_man $(refused_opts)
end_test

t "every long option in --help is in the man page"
assert_in_man $(help_opts)
end_test

t "every long option in --help is in the README or named in the man page only"
# The README shows the options that matter most, and says so; at least the
# operator modes and the main options must be there.
missing=
for o in --redis --ttl --wait --once --on-stale --max-runtime --min-hold --status \
         --release --resolve --password-file --log-format --metrics-file; do
    grep -q -- "$o" "$README" || missing="$missing $o"
done
[ -z "$missing" ] || fail "not in README.md:$missing"
end_test

t "every exit status of the man page is in --help and in the README"
codes=$(sed -n '/^\.SH EXIT STATUS/,/^\.SH /p' "$MAN" | sed -n 's/^\.B \([0-9][0-9]*\)$/\1/p' | sort -un)
[ "$(echo "$codes" | wc -w)" -ge 8 ] || fail "parsed too few codes from the man page: $codes"
h=$("$RR_BIN" --help)
for c in $codes; do
    echo "$h" | grep -qE "^ +$c " || fail "exit status $c not in --help"
    grep -qE "^\| ($c|[0-9 /]*\b$c\b[0-9 /]*) \|" "$README" || fail "exit status $c not in README"
done
end_test

# The warnings -q still prints, one a line, as each document lists them:
# README.md's -q row, between "ask you to act (" and ")"; the man page's -q
# paragraph, from "ask the operator to act:" to the full stop; --help's -q
# entry, the parenthesis under it. Markup, a leading "a" and line breaks go.
q_items() {
    tr '\n' ' ' | sed -E 's/[[:space:]]+/ /g; s/, /\n/g' | sed -E 's/^ *(an? )?//; s/ *$//'
}
q_readme() {
    # shellcheck disable=SC2016  # the backquotes are Markdown's, not a command
    grep -E '^\| `-q`' "$README" | sed -n 's/.*ask you to act (\([^)]*\)).*/\1/p' | tr -d '`' | q_items
}
q_man() {
    sed -n '/^\.BR \\-q ", " \\-\\-quiet/,/^\.TP/p' "$MAN" | tr '\n' ' ' |
        sed -n 's/.*ask the operator to act: \([^.]*\)\..*/\1/p' |
        sed -E 's/\\f[BIR]//g; s/\\-/-/g' | q_items
}
q_help() {
    "$RR_BIN" --help | sed -n '/^  -q, --quiet/,/)$/p' | tr '\n' ' ' |
        sed -n 's/^[^(]*(\([^)]*\)).*/\1/p' | q_items
}

t "-q: README, man page and --help list the same warnings that still print"
r=$(q_readme)
[ "$(grep -c . <<<"$r")" -ge 5 ] || fail "parsed too few items from README.md's -q row: $r"
m=$(q_man) h=$(q_help)
d=$(diff <(echo "$r") <(echo "$m")) || fail "README.md (<) and the man page (>) differ: $(tr "\n" " " <<<"$d")"
d=$(diff <(echo "$r") <(echo "$h")) || fail "README.md (<) and --help (>) differ: $(tr "\n" " " <<<"$d")"
end_test

# The man page's source as text: \% (no hyphenation) goes, \- is -, \e is \.
man_text() { sed -E 's/\\%//g; s/\\-/-/g; s/\\e/\\/g' "$MAN"; }
# The job lines of an /etc/cron.d file, as a document quotes them (4 spaces).
cron_d_lines() { grep -E '^    [0-9*@][^ ]* .* root redlock-run ' || true; }

t "the examples/crontab job lines are quoted as they are in README.md and the man page"
ex=$(grep -E '^[0-9*@]' "$TOP/examples/crontab" | sed 's/^/    /')
[ "$(grep -c . <<<"$ex")" -ge 3 ] || fail "found too few job lines in examples/crontab: $ex"
for doc in README.md man; do
    if [ "$doc" = man ]; then q=$(man_text | cron_d_lines); else q=$(cron_d_lines <"$README"); fi
    d=$(diff <(echo "$ex") <(echo "$q")) ||
        fail "examples/crontab (<) and $doc (>) differ: $(tr "\n" " " <<<"$d")"
done
end_test

# service_block: the quoted [Service] section (4 spaces in, up to a blank
# line or .fi), each line without its indentation.
service_block() {
    sed -n '/^    \[Service\]$/,/^\(\.fi\)\{0,1\}$/p' | sed -E '/^(\.fi)?$/d; s/^ +//'
}

t "the systemd unit quoted in README.md and the man page is examples/systemd/settle.service's"
unit=$TOP/examples/systemd/settle.service
r=$(service_block <"$README") m=$(man_text | service_block)
[ "$(grep -c . <<<"$r")" -ge 5 ] || fail "parsed too few lines of README.md's unit: $r"
d=$(diff <(echo "$r") <(echo "$m")) || fail "README.md (<) and the man page (>) quote it differently: $(tr "\n" " " <<<"$d")"
# Each quoted line is a line of the file (which says more, in comments).
while IFS= read -r line; do
    sed -E 's/^ +//' "$unit" | grep -qxF -- "$line" || fail "not a line of $unit: $line"
done <<<"$r"
end_test

t "the Kubernetes command quoted in README.md and the man page is examples/kubernetes-cronjob.yml's"
if python3 -c 'import yaml' 2>/dev/null; then
    # doc_cmd: the first "command: [redlock-run, ...]" line, as JSON.
    doc_cmd() {
        grep -m1 -E '^ +command: \[redlock-run' | python3 -c \
            'import json, sys, yaml; print(json.dumps(yaml.safe_load(sys.stdin.read().strip())["command"]))'
    }
    f=$(python3 -c 'import json, sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
print(json.dumps(d["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["command"]))' \
        "$TOP/examples/kubernetes-cronjob.yml")
    r=$(doc_cmd <"$README") m=$(man_text | doc_cmd)
    assert_contains "$f" '"redlock-run"' "the file's command"
    assert_eq "$f" "$r" "README.md's command"
    assert_eq "$f" "$m" "the man page's command"
    end_test
else
    skip "python3-yaml not installed (scripts/deps.sh test)"
fi

t "every exit status of --help and of the README's table is in the man page"
man_codes=$(sed -n '/^\.SH EXIT STATUS/,/^\.SH /p' "$MAN" | sed -n 's/^\.B \([0-9][0-9]*\)$/\1/p' | sort -un)
h=$("$RR_BIN" --help | sed -n '/^EXIT STATUS/,/^  --status/p' | sed -n 's/^  \([0-9][0-9]*\) .*/\1/p')
r=$(sed -n '/^## Exit status/,/^#/p' "$README" | sed -n 's/^| \([0-9][0-9 /]*\) |.*/\1/p' | tr -s '/ ' '\n')
[ "$(echo "$h" | wc -w)" -ge 8 ] || fail "parsed too few codes from --help: $h"
[ "$(echo "$r" | wc -w)" -ge 8 ] || fail "parsed too few codes from README.md: $r"
for c in $h $r; do
    grep -qx "$c" <<<"$man_codes" || fail "exit status $c is not in the man page's EXIT STATUS"
done
end_test

# The statuses --status NAME exits with: the numbers that open a clause (after
# a colon or a semicolon) of the man page's "With --status:" sentence and of
# --help's "--status NAME:" lines, and the first column of the README's table.
clause_codes() { tr '\n' ' ' | grep -oE '(^|[:;] +)[0-9]+ ' | grep -oE '[0-9]+' | sort -un | paste -sd' '; }
status_readme() {
    # shellcheck disable=SC2016  # the backquotes are Markdown's, not a command
    sed -n '/^`--status NAME` has statuses of its own:/,/^For a monitoring check/p' "$README" |
        sed -n 's/^| \([0-9][0-9 /]*\) |.*/\1/p' | tr -s '/ ' '\n' | grep . | sort -un | paste -sd' '
}
status_man() {
    sed -n '/^\.SH EXIT STATUS/,/^\.SH /p' "$MAN" |
        sed -n '/^With \\fB\\-\\-status\\fR:/,/^With \\fB\\-\\-status \\-\\-max-age/p' | sed '$d' | clause_codes
}
status_help() {
    "$RR_BIN" --help | sed -n '/^  --status NAME:/,/^  --status --max-age/p' | sed '$d' | clause_codes
}

t "--status NAME's exit statuses, and --max-age's, are the same in README.md, the man page and --help"
r=$(status_readme) m=$(status_man) h=$(status_help)
[ "$(echo "$r" | wc -w)" -ge 5 ] || fail "parsed too few --status codes from README.md: $r"
assert_eq "$r" "$m" "the man page's --status codes (README.md's: $r)"
assert_eq "$r" "$h" "--help's --status codes (README.md's: $r)"
plugin="0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN"
grep -qF "$plugin" "$README" || fail "README.md does not say: $plugin"
grep -qF "$plugin" "$MAN" || fail "the man page does not say: $plugin"
"$RR_BIN" --help | grep -qF "$plugin" || fail "--help does not say: $plugin"
end_test

t "the man page renders without warnings"
if command -v groff >/dev/null 2>&1; then
    out=$(groff -man -Tutf8 -ww -z "$MAN" 2>&1)
    [ -z "$out" ] || fail "groff: $(echo "$out" | head -3)"
    end_test
else
    skip "groff not installed (scripts/deps.sh test)"
fi

t "the layer table of docs/ARCHITECTURE.md holds in src/ (scripts/check-layers)"
if command -v python3 >/dev/null 2>&1; then
    out=$("$TOP/scripts/check-layers" "$TOP" 2>&1) ||
        fail "$(echo "$out" | grep -v ': note:' | head -5 | tr '\n' ' ')"
    case $out in *": note:"*) note "$(echo "$out" | grep ': note:')" ;; esac
    end_test
    t "no function in src/ is over 120 lines (scripts/check-layers, with universal-ctags)"
    case $out in
        *"universal-ctags not installed"*) skip "universal-ctags not installed (scripts/deps.sh test)" ;;
        *) end_test ;;
    esac
else
    skip "python3 not installed"
fi

t "check-layers sees a cycle of calls through a private header"
# lock.c and lock_release.c called each other through lock_impl.h, which
# the include graph cannot see (both include it): a tree of two such files.
if command -v python3 >/dev/null 2>&1; then
    mkdir -p "$TMP/cyc/src/lua" "$TMP/cyc/docs"
    printf '## Layers\n\n| layer | files | may include | holds |\n|---|---|---|---|\n| 0 base | `a.h` `a_impl.h` `a.c` `a_more.c` | 0 | x |\n' \
        >"$TMP/cyc/docs/ARCHITECTURE.md"
    printf 'void a_pub(void);\n' >"$TMP/cyc/src/a.h"
    printf 'int a_helper(int x);\nint a_more(int x);\n' >"$TMP/cyc/src/a_impl.h"
    printf '#include "a.h"\n#include "a_impl.h"\nint a_helper(int x)\n{\n    return x;\n}\nvoid a_pub(void)\n{\n    a_more(1);\n}\n' \
        >"$TMP/cyc/src/a.c"
    printf '#include "a_impl.h"\nint a_more(int x)\n{\n    return a_helper(x);\n}\n' \
        >"$TMP/cyc/src/a_more.c"
    out=$("$TOP/scripts/check-layers" "$TMP/cyc" 2>&1) && fail "a cycle passed: $out"
    case $out in
    *"a cycle of calls between src/a.c -> src/a_more.c"*) ;;
    *) fail "not the cycle: $out" ;;
    esac
    # One way only passes.
    printf '#include "a_impl.h"\nint a_more(int x)\n{\n    return x + 1;\n}\n' >"$TMP/cyc/src/a_more.c"
    out=$("$TOP/scripts/check-layers" "$TMP/cyc" 2>&1) || fail "one way failed: $out"
else
    note "python3 not installed; skipped the layer check"
fi
end_test

t "every file in src/ is in the README's source map"
# A header goes with its .c; a header without one, and each Lua script, is
# named itself.
map=$(sed -n '/^## Source map/,/^## /p' "$README")
missing=
for f in "$TOP"/src/*.c "$TOP"/src/*.h "$TOP"/src/lua/*.lua; do
    b=$(basename "$f")
    case $b in
    *.c) pat="\`src/$b\`" ;;
    *.h) [ -e "${f%.h}.c" ] && pat="\`src/${b%.h}.c\`" || pat="\`src/$b\`" ;;
    *.lua) pat="\`$b\`" ;;
    esac
    grep -qF -- "$pat" <<<"$map" || missing="$missing $b"
done
[ -z "$missing" ] || fail "not in README.md's source map:$missing"
gone=
# shellcheck disable=SC2016  # the backquotes are Markdown's, not a command
for f in $(grep -o '`src/[a-z_/]*\.[ch]`' <<<"$map" | tr -d '`'); do
    [ -e "$TOP/$f" ] || gone="$gone $f"
done
[ -z "$gone" ] || fail "in README.md's source map but not in the tree:$gone"
end_test

# The docs that name tests and scripts as the evidence of what they say:
# the README, the man page and docs/*.md.
EVIDENCE_DOCS=("$README" "$MAN" "$TOP"/docs/*.md)

t "every test file, unit suite and script the docs cite exists"
# t_NAME or t_NAME.sh (tests/integration/), check_NAME (tests/), and
# scripts/NAME; a renamed or deleted test must take its citations along.
n=0 gone=
for d in "${EVIDENCE_DOCS[@]}"; do
    for w in $(grep -oE '\bt_[a-z][a-z_0-9]*\b' "$d" | sort -u); do
        n=$((n + 1))
        [ -e "$TOP/tests/integration/$w.sh" ] || gone="$gone ${d#"$TOP"/}:$w"
    done
    for w in $(grep -oE '\bcheck_[a-z][a-z_0-9]*\.c\b|\bcheck_[a-z][a-z_0-9]*\b' "$d" | sed 's/\.c$//' | sort -u); do
        n=$((n + 1))
        [ -e "$TOP/tests/$w.c" ] || gone="$gone ${d#"$TOP"/}:$w"
    done
    for w in $(grep -oE '\bscripts/[A-Za-z0-9_.-]*[A-Za-z0-9_-]' "$d" | sort -u); do
        n=$((n + 1))
        [ -e "$TOP/$w" ] || gone="$gone ${d#"$TOP"/}:$w"
    done
done
[ "$n" -ge 50 ] || fail "found only $n citations (the patterns no longer match the docs?)"
[ -z "$gone" ] || fail "cited but not in the tree:$gone"
end_test

t "every test case the docs quote beside its file is a case of that file"
# The README's "Which test holds each promise" and docs/RELIABILITY.md quote
# cases as  t_NAME.sh: "title", "title"  (a … stands for a cut) and unit
# tests as  check_NAME.c: `test_fn`.
if command -v "$PY" >/dev/null 2>&1; then
    out=$("$PY" - "$TOP" "$README" "$TOP/docs/RELIABILITY.md" <<'PYEOF' 2>&1
import os, re, sys
top, bad, n = sys.argv[1], [], 0
for doc in sys.argv[2:]:
    text = open(doc, encoding="utf-8").read()
    name = os.path.relpath(doc, top)
    for m in re.finditer(r'\b(t_[a-z_0-9]+)\.sh:\s+((?:"[^"\n]+"(?:,\s*)?)+)', text):
        f = os.path.join(top, "tests/integration", m.group(1) + ".sh")
        src = open(f, encoding="utf-8").read() if os.path.exists(f) else ""
        for title in re.findall(r'"([^"\n]+)"', m.group(2)):
            n += 1
            for piece in title.split("\u2026"):
                piece = piece.strip(" ,.")
                if piece and piece not in src:
                    bad.append('%s: no case "%s" in %s.sh' % (name, piece, m.group(1)))
    for m in re.finditer(r'\b(check_[a-z_0-9]+)\.c:\s+((?:`test_[a-z_0-9]+`(?:,\s*)?)+)', text):
        f = os.path.join(top, "tests", m.group(1) + ".c")
        src = open(f, encoding="utf-8").read() if os.path.exists(f) else ""
        for fn in re.findall(r"`(test_[a-z_0-9]+)`", m.group(2)):
            n += 1
            if "START_TEST(%s)" % fn not in src:
                bad.append("%s: no %s in %s.c" % (name, fn, m.group(1)))
print("quoted: %d" % n)
print("\n".join(bad))
PYEOF
    )
    q=$(sed -n 's/^quoted: //p' <<<"$out")
    [ "${q:-0}" -ge 60 ] || fail "found only ${q:-0} quoted cases (the pattern no longer matches the docs?): $out"
    bad=$(grep -v '^quoted: ' <<<"$out" | grep .)
    [ -z "$bad" ] || fail "$(head -5 <<<"$bad" | tr '\n' ';')"
    end_test
else
    skip "python3 not installed"
fi

t "every row of a Markdown table has as many cells as its header"
# A | inside a cell, even in backquotes, starts a new cell unless written \|;
# a row with more cells is a table broken by an edit.
bad=$(awk '
    FNR == 1 { hdr = 0; fence = 0 }
    /^```/ { fence = !fence }
    fence { next }
    /^\|/ {
        line = $0; gsub(/\\\|/, "", line); n = gsub(/\|/, "", line)
        if (!hdr) hdr = n
        else if (n != hdr) printf "%s:%d has %d cells, its header %d; ", FILENAME, FNR, n - 1, hdr - 1
        next
    }
    { hdr = 0 }
' "$README" "$TOP"/docs/*.md)
[ -z "$bad" ] || fail "${bad//$TOP\//}"
end_test

t "docs/BENCHMARKS.md ends with scripts/bench-by-hand.md, which scripts/bench copies there"
# scripts/bench writes docs/BENCHMARKS.md anew and copies the figures measured
# by hand to its end from scripts/bench-by-hand.md: a figure added to the
# doc's copy alone would be lost at the next run of scripts/bench.
n=$(grep -c "" "$TOP/scripts/bench-by-hand.md")
if ! tail -n "$n" "$TOP/docs/BENCHMARKS.md" | cmp -s - "$TOP/scripts/bench-by-hand.md"; then
    fail "the end of docs/BENCHMARKS.md differs from scripts/bench-by-hand.md: $(
        diff <(tail -n "$n" "$TOP/docs/BENCHMARKS.md") "$TOP/scripts/bench-by-hand.md" | head -3 | cut -c1-120 | tr '\n' ';')"
fi
end_test

done_testing
