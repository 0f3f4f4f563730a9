# bash completion for qmer, loaded by bash-completion from share/bash-completion/completions/qmer.
# Subcommands and options are read from qmer's own --help when TAB is pressed (bash-completion's
# _parse_help), so this file names none of them and cannot fall behind the binary.

# The subcommands listed under "Subcommands:" in `qmer --help`.
_qmer_subcommands() {
    LC_ALL=C "$1" --help 2>/dev/null | awk '/^Subcommands:/ { on = 1; next } on && NF { print $1 }'
}

# The value type CLI11 prints after an option in `qmer SUBCOMMAND --help` ("-o,--output TEXT",
# "--fpr FLOAT:..."); nothing for a flag, whose description follows after several spaces.
_qmer_option_type() {
    local line names
    while IFS= read -r line; do
        [[ $line =~ ^[[:space:]]+(-[-[:alnum:],]+)\ ([A-Z]+) ]] || continue
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
        case $(_qmer_option_type "$1" "$subcommand" "$prev") in
            TEXT)
                _filedir
                return
                ;;
            ?*) return ;; # a number: nothing to offer
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
