# lib.sh: what the Slurm checks share (tests/slurm/check.sh, tests/gpu/slurm_check.sh).

# slurm_state ID: waits (a minute at most) for Slurm job ID to end; prints its state
slurm_state() {
	local i s
	for i in $(seq 600); do
		s=$(scontrol show job -o "$1" | grep -o 'JobState=[A-Z_]*' | cut -d= -f2)
		case $s in PENDING|RUNNING|CONFIGURING|COMPLETING|"") sleep 0.1 ;; *) echo "$s"; return ;; esac
	done
	echo "$s"
}
