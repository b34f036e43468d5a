# bash completion for skillgate(1): commands, their subcommands and options,
# theme names, and files or folders where a path goes.
_skillgate()
{
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
    local cmds="validate inspect list run wrap record vet traces audit grants tui demo serve hook help"
    if [ "$COMP_CWORD" -eq 1 ]; then
        COMPREPLY=($(compgen -W "$cmds --help --version" -- "$cur"))
        return
    fi
    local cmd=${COMP_WORDS[1]} opts="" subs=""
    case "$prev" in
        --theme)
            COMPREPLY=($(compgen -W "$(skillgate tui --list-themes 2>/dev/null |
                                       awk '{print $1}')" -- "$cur"))
            return ;;
        --prompt)
            COMPREPLY=($(compgen -W "tty deny attached" -- "$cur"))
            return ;;
        --cwd|-C|--keep|--python)
            COMPREPLY=($(compgen -d -- "$cur"))
            return ;;
        --write)  # run's takes a folder; record's is a flag
            if [ "$cmd" = run ]; then
                COMPREPLY=($(compgen -d -- "$cur"))
                return
            fi ;;
        --env)
            COMPREPLY=($(compgen -e -- "$cur"))
            return ;;
        --module|-m|--publish)
            return ;;
        --input-file|-I|--trace-out|-o|--policy|--settings|--file|-f|--script|-s)
            COMPREPLY=($(compgen -f -- "$cur"))
            return ;;
    esac
    case "$cmd" in
        validate) opts="--strict --quiet --help" ;;
        inspect) opts="--json --help" ;;
        list) opts="--json --all --help" ;;
        run) opts="--input --input-file --timeout --memory --trace-out --watch --json --dry-run --script
                   --module --env --write --cwd --python --no-records --fresh-home --allow-degraded --prompt --policy
                   --prompt-timeout --allow-all --allow-upstream --resolve --publish --help" ;;
        wrap) opts="--settings --cwd --timeout --memory --trace-out --watch --json --dry-run --env
                    --write --no-records --allow-degraded --prompt --policy --prompt-timeout
                    --allow-upstream --resolve --publish --help" ;;
        record) opts="--input --timeout --cwd --script --allow-all --prompt --prompt-timeout
                      --resolve --allow-upstream --write --yes --json --help" ;;
        vet) subs="merge"; opts="--out --jobs --shard --rev --timeout --max-runs --static --against
                 --json --quiet --html --sarif --help" ;;
        traces) subs="list diff report"; opts="--json --html --md --output -o --against --no-diff
                   --help" ;;
        audit) subs="verify tail show"; opts="--file -n --help" ;;
        grants) subs="list revoke"; opts="--help" ;;
        tui) opts="--theme --list-themes --attach --prompt-timeout --help" ;;
        demo) opts="--auto --pace --theme --keep --help" ;;
        serve) opts="--help" ;;
        hook) subs="install uninstall"; opts="--user --project --dry-run --no-rewrite --settings
                                               --help" ;;
        help) COMPREPLY=($(compgen -W "$cmds" -- "$cur")); return ;;
    esac
    if [ -n "$subs" ] && [ "$COMP_CWORD" -eq 2 ]; then
        COMPREPLY=($(compgen -W "$subs" -- "$cur"))
    elif [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}
complete -o filenames -F _skillgate skillgate
