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
		COMPREPLY=($(compgen -W "submit run list show cancel hold release top modify requeue restart stats web-token
		    drain undrain suspend resume log wait history gpus shares -s --help" -- "$cur"))
		return
	fi
	case $prev in
	--state) COMPREPLY=($(compgen -W "PENDING RUNNING SUSPENDED COMPLETED FAILED CANCELLED
	    TIMEOUT NODE_FAIL" -- "$cur")); return ;;
	-u|--user) COMPREPLY=($(compgen -u -- "$cur")); return ;;
	-o|-e|--output|--error) COMPREPLY=($(compgen -f -- "$cur")); return ;;
	-g|-m|-p|-n|-t|-w|-x|--after|--since|--signal|--array|--notify|--mail-user|--format) return ;;
	esac
	case $cmd in
	submit|run) COMPREPLY=($(compgen -W "-g -m -p -n -t -o -e -w -x --after --hold --requeue
		    --signal --notify --mail-user --array --stdin --parsable --json" -- "$cur"))
		[ ${#COMPREPLY[@]} = 0 ] && COMPREPLY=($(compgen -c -- "$cur")) ;;
	list) COMPREPLY=($(compgen -W "-a -r -u --state --format --json" -- "$cur")) ;;
	modify) COMPREPLY=($(compgen -W "-p -m -t" -- "$cur")) ;;
	history) COMPREPLY=($(compgen -W "--since -u --state --format --json" -- "$cur")) ;;
	web-token) COMPREPLY=($(compgen -W "--new" -- "$cur")) ;;
	stats) COMPREPLY=($(compgen -W "--since -u --json" -- "$cur")) ;;
	restart) COMPREPLY=($(compgen -W "--failed --since --json" -- "$cur")) ;;
	log) COMPREPLY=($(compgen -W "-f --err" -- "$cur")) ;;
	gpus|shares) COMPREPLY=($(compgen -W "--format --json" -- "$cur")) ;;
	show) COMPREPLY=($(compgen -W "--json" -- "$cur")) ;;
	esac
}
complete -F _nvq nvq
