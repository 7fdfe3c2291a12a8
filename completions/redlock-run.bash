# bash completion for redlock-run(1)                       -*- shell-script -*-
#
# Installed as /usr/share/bash-completion/completions/redlock-run, where
# bash-completion loads it on demand. Works without bash-completion too
# (source this file); its helpers (_filedir, _command_offset) are used when
# they are there.
#
# tests/integration/t_completions.sh checks that every long option of
# `redlock-run --help` is offered here, and nothing else.

# COMPREPLY=($(compgen ...)) is the usual idiom: the words have no spaces.
# shellcheck disable=SC2207
_redlock_run() {
    # Options that take a value, and those that do not.
    local with_arg='-r --redis -t --ttl --renew -w --wait -E --conflict-exit-code
        --min-hold --limit --prefix --once --on-stale --attempts --state-ttl --max-runtime --kill-after
        --connect-timeout --redis-timeout --password-file --sentinel-password-file
        --sync-replicas --tls-ca --tls-ca-dir --tls-cert
        --tls-key --tls-sni --log-format --metrics-file --resolve --max-age --warn-held --contain --fence
        --slot -c --command'
    local no_arg='-n --nonblock --foreground --tls-insecure -q --quiet -v --verbose --syslog
        --status --json --release --force --all-slots --list -h --help -V --version'

    # Readline splits words at = and : (COMP_WORDBREAKS), so "--ttl=30s" and
    # "redis://h:6379" arrive in pieces: glue them back. S[n] is where word n
    # starts in COMP_WORDS.
    local -a W=() S=()
    local i t n=-1 glue=0 cw=0
    for ((i = 0; i < ${#COMP_WORDS[@]}; i++)); do
        t=${COMP_WORDS[i]}
        if ((n >= 0)) && { ((glue)) || [[ -n $t && -z ${t//[=:]/} ]]; }; then
            W[n]+=$t
            glue=0
            [[ -n $t && -z ${t//[=:]/} ]] && glue=1
        else
            n=$((n + 1))
            W[n]=$t
            S[n]=$i
            glue=0
        fi
        ((i == COMP_CWORD)) && cw=$n
    done
    local cur=${COMP_WORDS[COMP_CWORD]} word=${W[cw]} prev=
    ((cw > 0)) && prev=${W[cw - 1]}
    # "--opt=value": complete the value of --opt.
    if [[ $word == --*=* ]]; then
        prev=${word%%=*}
        cur=${word#*=}
        cur=${cur##*:}
    fi

    case $prev in
        --on-stale)
            COMPREPLY=($(compgen -W 'run refuse' -- "$cur"))
            return ;;
        --resolve)
            COMPREPLY=($(compgen -W 'succeeded clear retry' -- "$cur"))
            return ;;
        --log-format)
            COMPREPLY=($(compgen -W 'text json' -- "$cur"))
            return ;;
        --contain)
            COMPREPLY=($(compgen -W 'auto cgroup tree' -- "$cur"))
            return ;;
        --tls-ca-dir)
            if declare -F _filedir >/dev/null 2>&1; then
                _filedir -d
            else
                compopt -o filenames 2>/dev/null
                COMPREPLY=($(compgen -d -- "$cur"))
            fi
            return ;;
        --password-file | --sentinel-password-file | --tls-ca | --tls-cert | --tls-key | --metrics-file)
            if declare -F _filedir >/dev/null 2>&1; then
                _filedir
            else
                compopt -o filenames 2>/dev/null
                COMPREPLY=($(compgen -f -- "$cur"))
            fi
            return ;;
        -r | --redis | -t | --ttl | --renew | -w | --wait | -E | \
        --conflict-exit-code | --min-hold | --limit | --prefix | --once | --attempts | --state-ttl | \
        --max-runtime | --kill-after | --connect-timeout | --redis-timeout | --tls-sni | \
        -c | --command)
            # A URL, a duration, a number or free text: nothing to offer.
            COMPREPLY=()
            return ;;
    esac

    # Find NAME: the first word that is neither an option nor an option's
    # value (getopt stops there, or after "--").
    local w name_at=0 operator=0
    i=1
    while ((i < cw)); do
        w=${W[i]}
        case $w in
            --status | --release | --resolve | --resolve=*) operator=1 ;;
            --list) operator=2 ;;
        esac
        if [[ $w == -- ]]; then
            name_at=$((i + 1))
            break
        fi
        case " ${with_arg//$'\n'/ } " in
            *" $w "*) i=$((i + 2)); continue ;;
        esac
        case $w in
            -?*) i=$((i + 1)); continue ;;
        esac
        name_at=$i
        break
    done

    if ((operator == 2)); then
        # --list takes no NAME: only options.
        [[ $cur == -* ]] && COMPREPLY=($(compgen -W "$with_arg $no_arg" -- "$cur"))
        return
    fi
    if ((name_at == 0 || name_at >= cw)); then
        # Options, or NAME itself (free text: nothing to offer).
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "$with_arg $no_arg" -- "$cur"))
        fi
        return
    fi
    ((operator)) && return    # --status/--release/--resolve: NAME is last

    # After NAME: an optional "--", then COMMAND and its arguments; or
    # flock's "-c CMD", a string to type, after which nothing more goes.
    local cmd_at=$((name_at + 1))
    case ${W[cmd_at]} in
        -c | --command | --command=*) ((cmd_at < cw)) && return ;;
    esac
    if [[ ${W[cmd_at]} == -- ]] && ((cmd_at < cw)); then
        cmd_at=$((cmd_at + 1))
    fi
    if ((cmd_at == cw)); then
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W '-- -c --command' -- "$cur"))
        else
            COMPREPLY=($(compgen -c -- "$cur"))
        fi
    elif declare -F _command_offset >/dev/null 2>&1; then
        # Complete COMMAND's arguments as bash would for COMMAND itself.
        _command_offset "${S[cmd_at]}"
    else
        compopt -o default 2>/dev/null
        COMPREPLY=()
    fi
} &&
    complete -F _redlock_run redlock-run

# ex: filetype=sh
