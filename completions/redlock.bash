# bash completion for redlock(1)                           -*- shell-script -*-
#
# Completes subcommands, every option, the values of --on-lost, lock names
# from the server for release/renew/status/break/history/overdue/revoke/suspend/resume/events, and an ordinary command after
# `--` in `redlock exec NAME -- CMD`. Works with or without the
# bash-completion package (which, when loaded, completes CMD's own arguments).
# tests/unit/cli/docs_sync_test.cpp fails when an option of the program is missing
# here; tests/shell/completion_bash.sh drives this file through
# COMP_WORDS/COMP_CWORD.

_redlock_subcommands='acquire release renew status break exec history suspend resume doctor events help'
# Older spellings (of break --grace and history --max-age): not offered, but
# their options and names are completed once typed.
_redlock_older_subcommands='overdue revoke'
_redlock_global_opts='-r --redis --prefix --connect-timeout --redis-timeout --tls-ca --tls-cert --tls-key --tls-server-name --insecure --password-file --min-replicas -q --quiet --silent -v --verbose --log-format --syslog --syslog-facility -h --help'
# Every option that takes a value (so that its value is never taken for the
# subcommand or a lock name).
_redlock_value_opts='-r --redis --prefix --connect-timeout --redis-timeout --timeout --tls-ca --tls-cert --tls-key --tls-server-name --password-file --min-replicas --ttl -w --wait --token --limit -E --conflict-exit-code --while-pid --on-lost --kill-after --hold-at-least --max-runtime --warn-after --jitter --max-waiters --stale-after --skip-if-ok-within --max-age --format --interval --sort -o --columns --log-format --syslog-facility --note --on-busy --grace --for --reason -c'

# Options of one subcommand (besides the global ones).
_redlock_subcommand_opts() {
    case $1 in
        acquire) echo '--ttl -w --wait --timeout -n --nonblock --token --limit -s --shared -x --exclusive -E --conflict-exit-code --unfair --jitter --max-waiters --stale-after --note --json --while-pid' ;;
        release) echo '--token --hold-at-least' ;;
        renew) echo '--token --ttl --json' ;;
        status) echo '--json --format --watch --interval --sort --wide -o --columns --scan' ;;
        break) echo '--json --grace' ;;
        exec) echo '--ttl -w --wait --timeout -n --nonblock --token --limit -s --shared -x --exclusive --on-lost --kill-after --hold-at-least --max-runtime --warn-after -E --conflict-exit-code --unfair --jitter --max-waiters --stale-after --skip-if-ok-within --no-history --note --on-busy -c' ;;
        history) echo '--limit --max-age --json' ;;
        overdue) echo '--max-age --json' ;;
        revoke) echo '--grace' ;;
        suspend) echo '--for --reason' ;;
        resume) echo '' ;;
        doctor) echo '--ttl --json' ;;
        events) echo '--json' ;;
    esac
}

_redlock_takes_value() {
    [[ " $_redlock_value_opts " == *" $1 "* ]]
}

# COMP_WORDS with the pieces that COMP_WORDBREAKS split off (`:` and `=` in
# redis://host:port or --prefix=x:) glued back to their neighbours, into
# _redlock_words, and the cursor's index in it, into _redlock_cword.
_redlock_reassemble() {
    local i j=-1 pos=0
    local -a start
    for ((i = 0; i < ${#COMP_WORDS[@]}; i++)); do
        while [[ ${COMP_LINE:pos:1} == [[:blank:]] ]]; do ((pos++)); done
        start[i]=$pos
        pos=$((pos + ${#COMP_WORDS[i]}))
    done
    _redlock_words=()
    _redlock_cword=0
    for ((i = 0; i < ${#COMP_WORDS[@]}; i++)); do
        if ((j >= 1)) && _redlock_glued "$i"; then
            _redlock_words[j]+=${COMP_WORDS[i]}
        else
            _redlock_words[++j]=${COMP_WORDS[i]}
        fi
        ((i == COMP_CWORD)) && _redlock_cword=$j
    done
}

# True when COMP_WORDS[$1] continues the previous word: the two touch in
# COMP_LINE and one of them is made of separators only.
_redlock_glued() {
    local w=${COMP_WORDS[$1]} p=${COMP_WORDS[$1 - 1]}
    [[ -n $w ]] || return 1
    [[ -z ${w//[:=]/} || -z ${p//[:=]/} ]] || return 1
    [[ -z $COMP_LINE ]] && return 0
    ((start[$1] == start[$1 - 1] + ${#p}))
}

# Lock names held under the prefix, one a line, asked of the server with the
# --redis/--prefix/password/TLS options already on the command line and short
# timeouts. Prints nothing when the server cannot be reached.
_redlock_lock_names() {
    local i w prog args=()
    prog=${_redlock_words[0]}
    [[ $prog == '~/'* ]] && prog=$HOME/${prog#'~/'}
    command -v -- "$prog" >/dev/null 2>&1 || prog=redlock
    command -v -- "$prog" >/dev/null 2>&1 || return 0
    for ((i = 1; i < ${#_redlock_words[@]}; i++)); do
        ((i == _redlock_cword)) && continue
        w=${_redlock_words[i]}
        case $w in
            --) break ;;
            -r | --redis | --prefix | --password-file | --tls-ca | --tls-cert | --tls-key | --tls-server-name)
                args+=("$w" "$(_redlock_dequote "${_redlock_words[i + 1]}")")
                ((i++))
                ;;
            --redis=* | --prefix=* | --password-file=* | --tls-ca=* | --tls-cert=* | --tls-key=* | --tls-server-name=*)
                args+=("$(_redlock_dequote "$w")")
                ;;
            --insecure) args+=("$w") ;;
            *) _redlock_takes_value "$w" && ((i++)) ;;
        esac
    done
    local run=("$prog")
    command -v timeout >/dev/null 2>&1 && run=(timeout 3 "$prog")
    "${run[@]}" -q "${args[@]}" --connect-timeout 300ms --redis-timeout 300ms status --json 2>/dev/null </dev/null |
        sed -n 's/^    "name": "\(.*\)",\{0,1\}$/\1/p' |
        sed -e 's/\\"/"/g' -e 's/\\\\/\\/g'
}

# A word as the shell will pass it (quotes removed; no expansions run).
_redlock_dequote() {
    local w=$1
    case $w in
        \'*\') w=${w:1:${#w}-2} ;;
        \"*\") w=${w:1:${#w}-2} ;;
        *) w=${w//\\/} ;;
    esac
    printf '%s\n' "$w"
}

_redlock() {
    local cur prev sub='' i w dashdash=-1 raw_dashdash=-1 npos=0
    local -a _redlock_words
    local _redlock_cword
    _redlock_reassemble
    local cword=$_redlock_cword
    cur=${_redlock_words[cword]}
    prev=${_redlock_words[cword - 1]}
    COMPREPLY=()

    # Find the subcommand, `--` and how many positionals came before the cursor.
    for ((i = 1; i < cword; i++)); do
        w=${_redlock_words[i]}
        if [[ -n $sub && $w == -- ]]; then
            dashdash=$i
            break
        fi
        case $w in
            --*=*) ;;
            -*) _redlock_takes_value "$w" && ((i++)) ;;
            *)
                if [[ -z $sub ]]; then
                    [[ " $_redlock_subcommands $_redlock_older_subcommands " == *" $w "* ]] && sub=$w
                else
                    ((npos++))
                fi
                ;;
        esac
    done

    # exec NAME -- CMD [ARG...]: complete CMD like any command line.
    if ((dashdash >= 0)); then
        for ((i = 1; i < COMP_CWORD; i++)); do
            if [[ ${COMP_WORDS[i]} == -- ]]; then
                raw_dashdash=$i
                break
            fi
        done
        if ((raw_dashdash >= 0)) && declare -F _command_offset >/dev/null; then
            _command_offset $((raw_dashdash + 1))
        elif ((cword == dashdash + 1)); then
            COMPREPLY=($(compgen -c -- "$cur"))
        else
            COMPREPLY=($(compgen -f -- "$cur"))
        fi
        return 0
    fi

    # Values of options.
    local value_of='' value_cur=$cur
    if [[ $cur == --*=* ]]; then
        value_of=${cur%%=*}
        value_cur=${cur#*=}
    elif _redlock_takes_value "$prev"; then
        value_of=$prev
    fi
    if [[ -n $value_of ]]; then
        case $value_of in
            --on-lost) COMPREPLY=($(compgen -W 'term kill ignore' -- "$value_cur")) ;;
            --on-busy) COMPREPLY=($(compgen -W 'fail replace' -- "$value_cur")) ;;
            --tls-ca | --tls-cert | --tls-key | --password-file)
                compopt -o filenames 2>/dev/null
                COMPREPLY=($(compgen -f -- "$value_cur"))
                ;;
            --wait) COMPREPLY=($(compgen -W 'inf' -- "$value_cur")) ;;
            --format) COMPREPLY=($(compgen -W 'table json prometheus' -- "$value_cur")) ;;
            --sort) COMPREPLY=($(compgen -W 'name age ttl' -- "$value_cur")) ;;
            -o | --columns)
                # A comma-separated list: the names after the last comma.
                local listed=${value_cur%"${value_cur##*,}"}
                compopt -o nospace 2>/dev/null
                COMPREPLY=($(compgen -P "$listed" -W 'name state host pid age ttl fence count waiting command' -- "${value_cur##*,}"))
                ;;
        esac
        return 0
    fi

    if [[ $cur == -* ]]; then
        if [[ -z $sub ]]; then
            COMPREPLY=($(compgen -W "$_redlock_global_opts --version" -- "$cur"))
        else
            COMPREPLY=($(compgen -W "$(_redlock_subcommand_opts "$sub") $_redlock_global_opts" -- "$cur"))
        fi
        return 0
    fi

    if [[ -z $sub ]]; then
        COMPREPLY=($(compgen -W "$_redlock_subcommands" -- "$cur"))
        return 0
    fi

    case $sub in
        help)
        ((npos > 0)) && return 0
        COMPREPLY=($(compgen -W "${_redlock_subcommands% help}" -- "$cur"))
        ;;
        release | renew | status | break | history | overdue | revoke | suspend | resume | events)
        [[ $sub != status && $sub != break && $sub != events && $sub != release && $sub != renew ]] &&
            ((npos > 0)) && return 0
        local name IFS=$'\n'
        for name in $(_redlock_lock_names); do
            [[ $name == "$cur"* ]] || continue
            # bash replaces only what follows the last `:` of the word.
            if [[ $cur == *:* && $COMP_WORDBREAKS == *:* ]]; then
                name=${name#"${cur%:*}:"}
            fi
            COMPREPLY+=("$(printf '%q' "$name")")
        done
        ;;
    esac
    return 0
}

complete -F _redlock redlock
