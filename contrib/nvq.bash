# bash completion for nvq
_nvq() {
	local cur prev cmd i
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD-1]}
	cmd=""
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		-s) ((i++)) ;;
		-*) ;;
		*) cmd=${COMP_WORDS[i]}; break ;;
		esac
	done
	if [ -z "$cmd" ]; then
		COMPREPLY=($(compgen -W "submit list show cancel log wait history gpus -s --help" -- "$cur"))
		return
	fi
	case $prev in
	--state) COMPREPLY=($(compgen -W "PENDING RUNNING COMPLETED FAILED CANCELLED TIMEOUT" -- "$cur")); return ;;
	-u|--user) COMPREPLY=($(compgen -u -- "$cur")); return ;;
	-o|-e|--output|--error) COMPREPLY=($(compgen -f -- "$cur")); return ;;
	-g|-m|-p|-n|-t|--after|--since) return ;;
	esac
	case $cmd in
	submit) COMPREPLY=($(compgen -W "-g -m -p -n -t -o -e --after --requeue --signal --parsable" -- "$cur")
		[ ${#COMPREPLY[@]} = 0 ] && COMPREPLY=($(compgen -c -- "$cur")) ;;
	list) COMPREPLY=($(compgen -W "-a -u --state --json" -- "$cur")) ;;
	history) COMPREPLY=($(compgen -W "--since -u --state --json" -- "$cur")) ;;
	log) COMPREPLY=($(compgen -W "-f --err" -- "$cur")) ;;
	show|gpus) COMPREPLY=($(compgen -W "--json" -- "$cur")) ;;
	esac
}
complete -F _nvq nvq
