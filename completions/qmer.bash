# bash completion for qmer, loaded by bash-completion from share/bash-completion/completions/qmer.
# Subcommands, options and the values of an option with a fixed set (--filter) are read from
# qmer's own --help when TAB is pressed (bash-completion's _parse_help and CLI11's "{a,b}" value
# column), so this file names none of them and cannot fall behind the binary. Options whose value
# is TEXT take a file, DIR a folder; numbers and sizes get nothing.

# The subcommands listed under "Subcommands:" in `qmer --help`.
_qmer_subcommands() {
    LC_ALL=C "$1" --help 2>/dev/null | awk '/^Subcommands:/ { on = 1; next } on && NF { print $1 }'
}

# The value column CLI11 prints after an option in `qmer SUBCOMMAND --help`: its type ("TEXT",
# "UINT:UINT in [1 - 32]=31") or, for a fixed set of values, the set ("{a,b,c}=a"); nothing for a
# flag, whose description follows after several spaces.
_qmer_option_value() {
    local line names
    while IFS= read -r line; do
        [[ $line =~ ^[[:space:]]+(-[-[:alnum:],]+)\ ([^[:space:]]+) ]] || continue
        names=,${BASH_REMATCH[1]},
        if [[ $names == *,"$3",* ]]; then
            printf '%s\n' "${BASH_REMATCH[2]}"
            return
        fi
    done < <(LC_ALL=C "$1" "$2" --help 2>/dev/null)
}

_qmer() {
    local cur prev words cword split
    _init_completion -s || return

    # The subcommand is the first word that is not an option (qmer's own options take no value).
    local subcommand="" i
    for ((i = 1; i < cword; i++)); do
        if [[ ${words[i]} != -* ]]; then
            subcommand=${words[i]}
            break
        fi
    done

    if [[ -z $subcommand ]]; then
        if [[ $cur == -* ]]; then
            mapfile -t COMPREPLY < <(compgen -W "$(_parse_help "$1")" -- "$cur")
        else
            mapfile -t COMPREPLY < <(compgen -W "$(_qmer_subcommands "$1")" -- "$cur")
        fi
        return
    fi

    if [[ $prev == -* ]]; then
        local value
        value=$(_qmer_option_value "$1" "$subcommand" "$prev")
        case $value in
            *\{*\}*) # a fixed set: its values, read from the binary so they never go stale
                value=${value#*\{}
                value=${value%%\}*}
                mapfile -t COMPREPLY < <(compgen -W "${value//,/ }" -- "$cur")
                return
                ;;
            TEXT*)
                _filedir
                return
                ;;
            DIR*)
                _filedir -d
                return
                ;;
            ?*) return ;; # a number or a size: nothing to offer
        esac
    fi
    $split && return

    if [[ $cur == -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$(_parse_help "$1" "$subcommand --help")" -- "$cur")
        [[ ${COMPREPLY-} == *= ]] && compopt -o nospace
        return
    fi
    # Positionals are files: references, an index, reads.
    _filedir
}
complete -F _qmer qmer
