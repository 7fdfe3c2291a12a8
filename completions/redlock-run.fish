# fish completion for redlock-run(1). Installed as
# /usr/share/fish/vendor_completions.d/redlock-run.fish.
#
# tests/integration/t_completions.sh checks that every long option of
# `redlock-run --help` is here (as -l NAME), and nothing else.

# Prints the position of NAME among the words before the cursor (after the
# command name), or nothing when NAME has not been typed yet. Prints "op" as
# a second line in an operator mode (nothing follows NAME there).
function __redlock_run_name_at
    set -l args (commandline -opc)
    set -e args[1]
    set -l takes redis r ttl t renew wait w conflict-exit-code E min-hold limit prefix once \
        on-stale attempts state-ttl max-runtime kill-after connect-timeout redis-timeout \
        password-file sentinel-password-file sync-replicas tls-ca tls-ca-dir tls-cert tls-key tls-sni log-format metrics-file resolve max-age warn-held contain \
        command c
    set -l skip 0
    set -l op
    set -l i 0
    for a in $args
        set i (math $i + 1)
        if test $skip = 1
            set skip 0
            continue
        end
        switch $a
            case '--status' '--release' '--resolve=*' '--list'
                set op op
            case '--resolve'
                set op op
                set skip 1
                continue
        end
        switch $a
            case '--'
                # getopt stops here: NAME is the next word.
                test $i -lt (count $args); and echo (math $i + 1) $op
                return
            case '--*=*'
                continue
            case '--*'
                contains -- (string sub -s 3 -- $a) $takes; and set skip 1
                continue
            case '-?'
                contains -- (string sub -s 2 -- $a) $takes; and set skip 1
                continue
            case '-*'
                continue
        end
        echo $i $op
        return
    end
end

# True while we are still among redlock-run's own options, or at NAME.
function __redlock_run_before_name
    set -l at (__redlock_run_name_at)
    test -z "$at"
end

# After NAME (and an optional --): COMMAND, completed as fish would on its
# own. Nothing after NAME in an operator mode.
function __redlock_run_command
    set -l at (string split ' ' -- (__redlock_run_name_at))
    test -n "$at[1]"; or return
    test (count $at) -gt 1; and return
    set -l args (commandline -opc)
    set -e args[1]
    set -l rest
    test $at[1] -lt (count $args); and set rest $args[(math $at[1] + 1)..-1]
    test "$rest[1]" = '--'; and set -e rest[1]
    complete -C (string join ' ' -- (string escape -- $rest) (commandline -ct))
end

complete -c redlock-run -n 'not __redlock_run_before_name' -x -a '(__redlock_run_command)'

set -l c complete -c redlock-run -n __redlock_run_before_name
$c -s r -l redis -x -d 'Redis master URL; repeat for a Redlock quorum'
$c -s t -l ttl -x -d 'Lock lease, renewed while the command runs'
$c -l renew -x -d 'Renewal interval'
$c -s w -l wait -x -d 'Wait for a busy lock (inf = forever)'
$c -s n -l nonblock -d "Do not wait: the default (flock's -n)"
$c -s E -l conflict-exit-code -x -d "Exit status when busy (flock's is 1)"
$c -s c -l command -x -d 'The command is sh -c CMD'
$c -l min-hold -x -d 'Keep the lock this long after acquiring'
$c -l limit -x -d 'Up to N holders at once (REDLOCK_SLOT 1..N)'
$c -l prefix -x -d 'Redis key prefix'
$c -l once -x -d 'Succeed at most once per ID'
$c -l on-stale -x -a 'run refuse' -d 'If the last run died mid-way'
$c -l attempts -x -d 'With --once: attempts per ID (1)'
$c -l state-ttl -x -d 'How long the keys of a job outlive its last run'
$c -l max-runtime -x -d 'Stop the command after this long, exit 124'
$c -l kill-after -x -d 'Grace from SIGTERM to SIGKILL'
$c -l foreground -d 'Keep the command in our process group'
$c -l contain -x -a 'auto cgroup tree' -d 'Hold the command in a cgroup of its own, or by the process tree'
$c -l connect-timeout -x -d 'Limit per connection attempt'
$c -l redis-timeout -x -d 'Limit per request'
$c -l password-file -r -F -d 'File whose first line is the password'
$c -l sentinel-password-file -r -F -d "File whose first line is the sentinels' password"
$c -l sync-replicas -x -d 'Replicas that must confirm each lock write'
$c -l tls-ca -r -F -d 'CA bundle for rediss URLs'
$c -l tls-ca-dir -x -a '(__fish_complete_directories)' -d 'Directory of CA certificates for rediss URLs'
$c -l tls-cert -r -F -d 'Client certificate for rediss URLs'
$c -l tls-key -r -F -d 'Client private key for rediss URLs'
$c -l tls-sni -x -a '(__fish_print_hostnames)' -d 'Server name to send and verify'
$c -l tls-insecure -d 'Do not verify the server certificate'
$c -s q -l quiet -d 'Only a line for each run that went wrong, and errors'
$c -s v -l verbose -d 'Narrate each step; twice for debug'
$c -l log-format -x -a 'text json' -d 'Log line format'
$c -l syslog -d 'Also log to syslog'
$c -l metrics-file -r -F -d 'Write Prometheus textfile metrics'
$c -l status -d 'Show the holder and the last run'
$c -l json -d 'Print JSON (status and list modes)'
$c -l max-age -x -d 'Monitoring check: succeeded within DUR? (status mode)'
$c -l warn-held -x -d 'With --max-age: WARNING if held longer than DUR'
$c -l release -d 'Free the lock: its holder stops and releases first'
$c -l force -d 'With --release: delete now, even under a live holder'
$c -l fence -x -d 'With --release: only if the holder has this fence, in any slot'
$c -l slot -x -d 'With --release: only this --limit slot'
$c -l all-slots -d 'With --release: every held --limit slot'
$c -l list -d 'Every job under the prefix: lock, holder, last run'
$c -l resolve -x -a 'succeeded clear retry' -d 'Settle a dead run or a spent ID'
$c -s h -l help -d 'Show the help'
$c -s V -l version -d 'Show the version'
