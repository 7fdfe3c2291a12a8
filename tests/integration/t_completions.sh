#!/usr/bin/env bash
# t_completions.sh — the shell completions in completions/ know every long
# option of `redlock-run --help` and nothing more, and the fixed values
# (--on-stale run|refuse, --resolve succeeded|clear|retry, --log-format text|json,
# --contain auto|cgroup|tree).
# Adding an option to --help without adding it to the completions fails here.
# The bash (and, where fish is installed, fish) completion is also run for
# real: sourced, called with COMP_WORDS, its COMPREPLY checked.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

C=$TOP/completions
BASH_C=$C/redlock-run.bash
ZSH_C=$C/_redlock-run
FISH_C=$C/redlock-run.fish

help_opts() { "$RR_BIN" --help | grep -o -- '--[a-z][a-z-]*' | sort -u; }
# The long options each file names: bash and zsh spell them --NAME, fish
# writes -l NAME on the lines "$c ..." (the files keep option names out of
# their descriptions).
bash_opts() { grep -v '^ *#' "$BASH_C" | grep -o -- '--[a-z][a-z-]*' | sort -u; }
zsh_opts() { grep -v '^ *#' "$ZSH_C" | grep -o -- '--[a-z][a-z-]*' | sort -u; }
fish_opts() { grep '^\$c ' "$FISH_C" | grep -o -- ' -l [a-z][a-z-]*' | sed 's/ -l /--/' | sort -u; }

t "--help lists long options (the checks below can fail)"
n=$(help_opts | wc -l)
[ "$n" -ge 25 ] || fail "found only $n long options in --help"
end_test

for sh in bash zsh fish; do
    t "$sh completion names every long option of --help"
    missing=$(comm -23 <(help_opts) <(${sh}_opts) | tr '\n' ' ')
    [ -z "$missing" ] || fail "missing from the $sh completion: $missing"
    end_test

    t "$sh completion offers no option that --help does not list"
    extra=$(comm -13 <(help_opts) <(${sh}_opts) | tr '\n' ' ')
    [ -z "$extra" ] || fail "in the $sh completion but not in --help: $extra"
    end_test
done

t "every completion file knows the fixed values"
for f in "$BASH_C" "$ZSH_C" "$FISH_C"; do
    for v in 'run refuse' 'succeeded clear retry' 'text json' 'auto cgroup tree'; do
        grep -q -- "$v" "$f" || fail "$(basename "$f"): no '$v'"
    done
done
end_test

# complete_bash WORD... — run the bash completion for the command line
# WORD... (the last word is the one being completed) in a clean bash, with
# bash-completion's helpers when LOAD_BC=1; prints COMPREPLY, one a line.
complete_bash() {
    local load=
    if [ "${LOAD_BC:-0}" = 1 ]; then load=/usr/share/bash-completion/bash_completion; fi
    timeout 20 bash --norc --noprofile -c '
        load=$1; shift
        [ -n "$load" ] && . "$load"
        . "$0"
        COMP_WORDS=("$@")
        COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
        COMP_LINE="$*"
        COMP_POINT=${#COMP_LINE}
        COMPREPLY=()
        _redlock_run redlock-run "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
        printf "%s\n" "${COMPREPLY[@]}"
    ' "$BASH_C" "$load" "$@" | sort -u | grep -v '^$'
}

bash_checks() {
    local how=$1
    t "bash completion ($how): '--' offers exactly the long options of --help"
    got=$(complete_bash redlock-run -- | grep -- '^--')
    d=$(diff <(help_opts) <(echo "$got") | grep '^[<>]' | tr '\n' ' ')
    [ -z "$d" ] || fail "differs from --help (< only in --help, > only offered): $d"
    end_test

    t "bash completion ($how): fixed values"
    assert_eq "$(printf 'refuse\nrun')" "$(complete_bash redlock-run --on-stale '')" "--on-stale"
    assert_eq "$(printf 'clear\nretry\nsucceeded')" "$(complete_bash redlock-run --resolve '')" "--resolve"
    assert_eq "json" "$(complete_bash redlock-run -q --log-format j)" "--log-format j"
    # --on-stale=r<TAB>: readline hands "--on-stale" "=" "r".
    assert_eq "$(printf 'refuse\nrun')" "$(complete_bash redlock-run --on-stale = r)" "--on-stale=r"
    end_test

    t "bash completion ($how): options, then NAME, then the command"
    # A URL arrives split at ':' — still one option value, not NAME.
    assert_eq "--ttl" "$(complete_bash redlock-run -r redis : //h : 6379 --tt)" "option after a URL"
    assert_contains "$(complete_bash redlock-run -t 30s nightly -- ech)" "echo" "command after NAME --"
    assert_contains "$(complete_bash redlock-run -w 5m nightly ech)" "echo" "command after NAME"
    assert_eq "" "$(complete_bash redlock-run --status nightly '')" "nothing after NAME in --status"
    assert_eq "" "$(complete_bash redlock-run --resolve clear nightly '')" "nothing after NAME in --resolve"
    end_test

    t "bash completion ($how): flock's NAME -c CMD"
    assert_eq "--command" "$(complete_bash redlock-run -n nightly --com)" "-c's long form after NAME"
    assert_eq "" "$(complete_bash redlock-run -n nightly -c ech)" "CMD is a string to type"
    assert_eq "" "$(complete_bash redlock-run -c ech)" "-c's value before NAME"
    end_test
}

if ! command -v bash >/dev/null; then
    t "bash completion"
    skip "no bash"
else
    bash_checks "plain bash"
    if [ -r /usr/share/bash-completion/bash_completion ]; then
        LOAD_BC=1 bash_checks "with bash-completion"
    else
        t "bash completion with bash-completion's helpers"
        skip "bash-completion not installed (scripts/deps.sh test); ran it without its helpers only"
    fi
fi

t "zsh completion parses and compinit picks it up"
if command -v zsh >/dev/null; then
    out=$(zsh -n "$ZSH_C" 2>&1) || fail "zsh -n: $out"
    head -1 "$ZSH_C" | grep -qx '#compdef redlock-run' || fail "first line is not '#compdef redlock-run'"
    # compinit, with the directory in fpath, binds it to redlock-run.
    got=$(cd "$TMP" && timeout 20 zsh -f -c 'fpath=("$1" $fpath); autoload -Uz compinit; compinit -u -D -d "$2"; print -r -- ${_comps[redlock-run]}' zsh "$C" "$TMP/zcompdump" 2>&1)
    assert_eq _redlock-run "$got" "compinit's binding for redlock-run"
    end_test
else
    skip "zsh not installed (scripts/deps.sh ci)"
fi

if command -v fish >/dev/null; then
    complete_fish() {
        timeout 20 fish --no-config -c "source '$FISH_C'; complete -C '$1'" | cut -f1 | sort -u
    }
    t "fish completion parses and offers exactly the long options of --help"
    out=$(fish --no-config -n "$FISH_C" 2>&1) || fail "fish -n: $out"
    got=$(complete_fish 'redlock-run --' | grep -- '^--')
    d=$(diff <(help_opts) <(echo "$got") | grep '^[<>]' | tr '\n' ' ')
    [ -z "$d" ] || fail "differs from --help (< only in --help, > only offered): $d"
    end_test

    t "fish completion: fixed values, and the command after NAME"
    assert_eq "$(printf 'refuse\nrun')" "$(complete_fish 'redlock-run --on-stale ')" "--on-stale"
    assert_eq "$(printf 'clear\nretry\nsucceeded')" "$(complete_fish 'redlock-run --resolve ')" "--resolve"
    assert_eq "$(printf 'json\ntext')" "$(complete_fish 'redlock-run --log-format ')" "--log-format"
    assert_contains "$(complete_fish 'redlock-run -t 30s nightly -- ech')" "echo" "command after NAME"
    assert_eq "" "$(complete_fish 'redlock-run --status nightly ')" "nothing after NAME in --status"
    end_test
else
    t "fish completion parses and offers exactly the long options of --help"
    skip "fish not installed (scripts/deps.sh ci); checked its option list only"
fi

done_testing
