# fish completion for redlock(1)
#
# Completes subcommands, every option, the values of --on-lost, lock names
# from the server for release/renew/status/break, and an ordinary command after
# `--` in `redlock exec NAME -- CMD`. tests/unit/cli/docs_sync_test.cpp fails when
# an option of the program is missing here.

# Every option that takes a value (so that its value is never taken for the
# subcommand or a lock name).
set -g __redlock_value_opts -r --redis --prefix --connect-timeout --redis-timeout --timeout --tls-ca --tls-cert --tls-key \
    --tls-server-name --password-file --min-replicas --ttl -w --wait --token --limit -E --conflict-exit-code --on-lost \
    --kill-after --hold-at-least --max-runtime --warn-after --jitter --max-waiters --stale-after --skip-if-ok-within --note --on-busy --grace --for --reason \
    --max-age --format --interval --sort -o --columns --log-format --syslog-facility -c --while-pid

# Prints the subcommand, then the positional arguments after it, then `--`
# and what follows it, for the tokens before the cursor.
function __redlock_parse
    set -l tokens (commandline -opc)
    set -e tokens[1]
    set -l sub
    set -l skip 0
    for i in (seq (count $tokens))
        set -l t $tokens[$i]
        if test $skip -eq 1
            set skip 0
            continue
        end
        if test -n "$sub"; and test "$t" = --
            printf '%s\n' --
            for rest in $tokens[(math $i + 1)..-1]
                printf '%s\n' $rest
            end
            return
        end
        switch $t
            case '--*=*'
            case '-*'
                contains -- $t $__redlock_value_opts; and set skip 1
            case '*'
                if test -z "$sub"
                    if contains -- $t acquire release renew status break exec history overdue revoke suspend resume doctor events help
                        set sub $t
                        printf '%s\n' $t
                    end
                else
                    printf '%s\n' $t
                end
        end
    end
end

# True when no subcommand has been given yet.
function __redlock_no_subcommand
    set -l parsed (__redlock_parse)
    test (count $parsed) -eq 0
end

# True when the subcommand is one of the arguments (and the cursor is not
# after `--`).
function __redlock_using
    set -l parsed (__redlock_parse)
    test (count $parsed) -gt 0; and contains -- $parsed[1] $argv; and not contains -- -- $parsed
end

# True when the cursor is after `exec NAME --`.
function __redlock_after_dashdash
    set -l parsed (__redlock_parse)
    test (count $parsed) -gt 0; and test "$parsed[1]" = exec; and contains -- -- $parsed
end

# True when the subcommand is release or renew and it has no NAME yet, or
# the subcommand is status or break.
function __redlock_wants_lock_name
    set -l parsed (__redlock_parse)
    test (count $parsed) -gt 0; or return 1
    switch $parsed[1]
        case status break events release renew
            return 0
        case history overdue revoke suspend resume
            test (count $parsed) -eq 1
        case '*'
            return 1
    end
end

# Lock names held under the prefix, asked of the server with the
# --redis/--prefix/password/TLS options already on the command line and short
# timeouts; nothing when the server cannot be reached.
function __redlock_lock_names
    set -l tokens (commandline -opc)
    set -l prog $tokens[1]
    command -sq -- $prog; or set prog redlock
    command -sq -- $prog; or return
    set -l args
    set -l n (count $tokens)
    for i in (seq 2 $n)
        set -l t $tokens[$i]
        switch $t
            case --
                break
            case -r --redis --prefix --password-file --tls-ca --tls-cert --tls-key --tls-server-name
                if test $i -lt $n
                    set -a args $t $tokens[(math $i + 1)]
                end
            case '--redis=*' '--prefix=*' '--password-file=*' '--tls-ca=*' '--tls-cert=*' '--tls-key=*' \
                '--tls-server-name=*' --insecure
                set -a args $t
        end
    end
    set -l run $prog
    command -sq timeout; and set run timeout 3 $prog
    $run -q $args --connect-timeout 300ms --redis-timeout 300ms status --json 2>/dev/null </dev/null \
        | string replace -rf '^    "name": "(.*)",?$' '$1' \
        | string replace -a '\\"' '"' | string replace -a '\\\\' '\\'
end

# CMD and its arguments after `exec NAME --`, completed like any command line.
function __redlock_complete_command
    set -l parsed (__redlock_parse)
    set -l i (contains -i -- -- $parsed)
    set -l rest $parsed[(math $i + 1)..-1]
    complete -C (string join -- ' ' (string escape -- $rest) (commandline -ct))
end

complete -c redlock -f

# Subcommands
complete -c redlock -n __redlock_no_subcommand -a acquire -d 'take the lock and print its token'
complete -c redlock -n __redlock_no_subcommand -a release -d 'release the lock held by a token'
complete -c redlock -n __redlock_no_subcommand -a renew -d 'extend the lock held by a token'
complete -c redlock -n __redlock_no_subcommand -a status -d 'show who holds which lock, for how long, and who waits'
complete -c redlock -n __redlock_no_subcommand -a break -d 'free a lock whoever holds it, and wake its waiters'
complete -c redlock -n __redlock_no_subcommand -a exec -d 'run a command while holding the lock'
complete -c redlock -n __redlock_no_subcommand -a history -d 'show the last runs of a name across hosts'
complete -c redlock -n __redlock_no_subcommand -a suspend -d 'make new acquires and execs of a name busy until resumed'
complete -c redlock -n __redlock_no_subcommand -a resume -d 'lift a suspension'
complete -c redlock -n __redlock_no_subcommand -a doctor -d 'check the servers before trusting them'
complete -c redlock -n __redlock_no_subcommand -a events -d 'follow what happens to locks, one line each'
complete -c redlock -n __redlock_no_subcommand -a help -d 'show the help of redlock or of a subcommand'
complete -c redlock -n '__redlock_using help; and test (count (__redlock_parse)) -eq 1' -a 'acquire release renew status break exec history suspend resume doctor events' -d 'subcommand'

# Global options: before or after the subcommand, never after `--`
complete -c redlock -n 'not __redlock_after_dashdash' -s r -l redis -x -d 'Redis URL; repeat for Redlock over N masters'
complete -c redlock -n 'not __redlock_after_dashdash' -l prefix -x -d 'key prefix (default redlock:)'
complete -c redlock -n 'not __redlock_after_dashdash' -l connect-timeout -x -d 'per-connection timeout'
complete -c redlock -n 'not __redlock_after_dashdash' -l redis-timeout -x -d 'per-command round-trip timeout'
complete -c redlock -n 'not __redlock_after_dashdash' -l tls-ca -r -F -d 'CA certificates for rediss://'
complete -c redlock -n 'not __redlock_after_dashdash' -l tls-cert -r -F -d 'client certificate for rediss://'
complete -c redlock -n 'not __redlock_after_dashdash' -l tls-key -r -F -d 'client key for rediss://'
complete -c redlock -n 'not __redlock_after_dashdash' -l tls-server-name -x -d 'name to verify the server certificate against'
complete -c redlock -n 'not __redlock_after_dashdash' -l insecure -d 'do not verify TLS certificates'
complete -c redlock -n 'not __redlock_after_dashdash' -l password-file -r -F -d 'read the Redis password from a file'
complete -c redlock -n 'not __redlock_after_dashdash' -l min-replicas -x -d 'WAIT for N replicas after acquire/renew'
complete -c redlock -n 'not __redlock_after_dashdash' -s q -l quiet -d 'say nothing when busy or waiting; errors still print'
complete -c redlock -n 'not __redlock_after_dashdash' -l silent -d 'print nothing on stderr, not even errors'
complete -c redlock -n 'not __redlock_after_dashdash' -s v -l verbose -d 'say more on stderr'
complete -c redlock -n 'not __redlock_after_dashdash' -l log-format -x -a 'text json' -d 'how lines on stderr are written'
complete -c redlock -n 'not __redlock_after_dashdash' -l syslog -d 'send each line on stderr to syslog too'
complete -c redlock -n 'not __redlock_after_dashdash' -l syslog-facility -x -a 'user daemon cron auth authpriv syslog local0 local1 local2 local3 local4 local5 local6 local7' -d 'the syslog facility (implies --syslog)'
complete -c redlock -n 'not __redlock_after_dashdash' -s h -l help -d 'print help and exit'
complete -c redlock -n __redlock_no_subcommand -l version -d 'print the versions of redlock, hiredis and OpenSSL'

# acquire NAME
complete -c redlock -n '__redlock_using acquire' -l ttl -x -d 'how long the lock lives unless renewed'
complete -c redlock -n '__redlock_using acquire' -s w -l wait -x -a 'inf' -d 'how long to wait for a held lock'
complete -c redlock -n '__redlock_using acquire' -l timeout -x -d 'how long to wait for a held lock (as flock --timeout)'
complete -c redlock -n '__redlock_using acquire' -s n -l nonblock -d 'one try, do not wait (the default)'
complete -c redlock -n '__redlock_using acquire' -s x -l exclusive -d 'take the lock alone (the default)'
complete -c redlock -n '__redlock_using acquire' -l token -x -d 're-enter the lock if this token holds it'
complete -c redlock -n '__redlock_using acquire' -l limit -x -d 'a counting semaphore: up to N holders at once'
complete -c redlock -n '__redlock_using acquire' -s E -l conflict-exit-code -x -d 'exit status when the lock is busy'
complete -c redlock -n '__redlock_using acquire' -s s -l shared -d 'take a reader'\''s share of a readers/writer lock'
complete -c redlock -n '__redlock_using acquire' -l unfair -d 'race for the lock instead of waiting in line'
complete -c redlock -n '__redlock_using acquire' -l jitter -x -d 'sleep a random time below this before the first try'
complete -c redlock -n '__redlock_using acquire' -l max-waiters -x -d 'busy at once when this many wait in line'
complete -c redlock -n '__redlock_using acquire' -l stale-after -x -d 'when busy, say so even with -q if held longer than this'
complete -c redlock -n '__redlock_using acquire' -l note -x -d 'keep this text with the lock for status'
complete -c redlock -n '__redlock_using acquire' -l json -d 'print token, fence, ttl_ms and validity_ms as JSON'
complete -c redlock -n '__redlock_using acquire' -l while-pid -x -a '(__fish_complete_pids)' -d 'keep the lock while this process lives'

# release NAME
complete -c redlock -n '__redlock_using release' -l token -x -d "the holder's token"
complete -c redlock -n '__redlock_using release' -l hold-at-least -x -d 'keep the lock until this long after it was taken'

# renew NAME
complete -c redlock -n '__redlock_using renew' -l token -x -d "the holder's token"
complete -c redlock -n '__redlock_using renew' -l ttl -x -d 'the new time to live, from now'
complete -c redlock -n '__redlock_using renew' -l json -d 'print ttl_ms and validity_ms as JSON'

# status -o LIST: the column names, after what the list already has.
function __redlock_columns
    set -l listed (string replace -r '[^,]*$' '' -- (commandline -ct))
    set listed (string replace -r '^(--columns=|-o)' '' -- $listed)
    for c in name state host pid age ttl fence count waiting command
        echo $listed$c
    end
end

# status [NAME...]
complete -c redlock -n '__redlock_using status' -l json -d 'print a JSON array instead of a table'
complete -c redlock -n '__redlock_using status' -l format -x -a 'table json prometheus' -d 'how to print it'
complete -c redlock -n '__redlock_using status' -l watch -d 'show it again every --interval until interrupted'
complete -c redlock -n '__redlock_using status' -l interval -x -d 'how often --watch shows it'
complete -c redlock -n '__redlock_using status' -l sort -x -a 'name age ttl' -d 'order the locks by'
complete -c redlock -n '__redlock_using status' -l wide -d 'on a terminal too: every column, lines unclipped'
complete -c redlock -n '__redlock_using status' -s o -l columns -x -a '(__redlock_columns)' -d 'the table\'s columns to show, in this order'
complete -c redlock -n '__redlock_using status' -l scan -d 'find the locks by SCAN too, for those of versions before 0.2'

# break NAME...
complete -c redlock -n '__redlock_using break' -l json -d 'print a JSON array of what was broken'
complete -c redlock -n '__redlock_using break' -l grace -x -d 'ask the holder to give it back first; break it after this long'

# exec NAME -- CMD [ARG...]
complete -c redlock -n '__redlock_using exec' -l ttl -x -d 'the time to live, renewed every ttl/3'
complete -c redlock -n '__redlock_using exec' -s w -l wait -x -a 'inf' -d 'how long to wait for a held lock'
complete -c redlock -n '__redlock_using exec' -l timeout -x -d 'how long to wait for a held lock (as flock --timeout)'
complete -c redlock -n '__redlock_using exec' -s n -l nonblock -d 'one try, do not wait (the default)'
complete -c redlock -n '__redlock_using exec' -s x -l exclusive -d 'take the lock alone (the default)'
complete -c redlock -n '__redlock_using exec' -l token -x -d 're-enter the lock if this token holds it'
complete -c redlock -n '__redlock_using exec' -l on-lost -x -a 'term\t"SIGTERM, then SIGKILL" kill\t"SIGKILL at once" ignore\t"warn only"' -d 'what to do when the lock is lost'
complete -c redlock -n '__redlock_using exec' -l kill-after -x -d 'SIGKILL this long after SIGTERM'
complete -c redlock -n '__redlock_using exec' -l hold-at-least -x -d 'keep the lock until this long after it was taken'
complete -c redlock -n '__redlock_using exec' -l limit -x -d 'a counting semaphore: up to N holders at once'
complete -c redlock -n '__redlock_using exec' -s s -l shared -d 'take a reader'\''s share of a readers/writer lock'
complete -c redlock -n '__redlock_using exec' -s E -l conflict-exit-code -x -d 'exit status when the lock is busy'
complete -c redlock -n '__redlock_using exec' -l unfair -d 'race for the lock instead of waiting in line'
complete -c redlock -n '__redlock_using exec' -l jitter -x -d 'sleep a random time below this before the first try'
complete -c redlock -n '__redlock_using exec' -l max-waiters -x -d 'busy at once when this many wait in line'
complete -c redlock -n '__redlock_using exec' -l stale-after -x -d 'when busy, say so even with -q if held longer than this'
complete -c redlock -n '__redlock_using exec' -l note -x -d 'keep this text with the lock for status'
complete -c redlock -n '__redlock_using exec' -l on-busy -x -a 'fail\t"busy, or wait within --wait" replace\t"ask the holder to give it back as break --grace does, then wait"' -d 'what to do when the lock is busy'
complete -c redlock -n '__redlock_using exec' -l max-runtime -x -d 'end the command when it has run this long (exit 124)'
complete -c redlock -n '__redlock_using exec' -l warn-after -x -d 'say so when the command still runs after this long'
complete -c redlock -n '__redlock_using exec' -l skip-if-ok-within -x -d 'do not run when the last ok run ended within this long'
complete -c redlock -n '__redlock_using exec' -l no-history -d 'keep this run out of the history of NAME'
complete -c redlock -n '__redlock_using exec' -s c -x -d 'run STRING with $SHELL -c instead of CMD'

# history NAME
complete -c redlock -n '__redlock_using history' -l limit -x -d 'show at most N runs'
complete -c redlock -n '__redlock_using history' -l max-age -x -d 'exit 1 when the last ok run ended longer ago than this'
complete -c redlock -n '__redlock_using history' -l json -d 'print a JSON array of runs, or the --max-age decision'

# overdue NAME --max-age D: the older spelling of history --max-age (not
# offered, completed once typed)
complete -c redlock -n '__redlock_using overdue' -l max-age -x -d 'how long ago the last ok run may have ended'
complete -c redlock -n '__redlock_using overdue' -l json -d 'print the decision as JSON'

# revoke NAME (the older spelling of break --grace, not offered, completed
# once typed), suspend NAME, resume NAME
complete -c redlock -n '__redlock_using revoke' -l grace -x -d 'SIGKILL the command this long after SIGTERM, and wait that long'
complete -c redlock -n '__redlock_using suspend' -l for -x -d 'lift the suspension by itself after this long'
complete -c redlock -n '__redlock_using suspend' -l reason -x -d 'why, shown to every run it stops'
complete -c redlock -n '__redlock_using resume' -f -a '(__redlock_lock_names)' -d 'suspended name'
# doctor
complete -c redlock -n '__redlock_using doctor' -l ttl -x -d 'the TTL the jobs use, to judge round trips against'
complete -c redlock -n '__redlock_using doctor' -l json -d 'print the checks as a JSON array'

# Lock names from the server
complete -c redlock -n __redlock_wants_lock_name -a '(__redlock_lock_names)' -d 'lock'

# CMD after `exec NAME --`
complete -c redlock -n __redlock_after_dashdash -a '(__redlock_complete_command)'

# events [NAME...]
complete -c redlock -n '__redlock_using events' -l json -d 'print one JSON object a line'
