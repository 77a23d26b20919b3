# t_arrays.sh: an array as one thing, as in Slurm: A_ (every task) and A_I
# (its task of index I) wherever a job id is taken, --after A as all of
# A's tasks; Slurm's dependency kinds (-d, --dependency); nvq cancel by
# filter.  Sourced by run.sh (helpers in lib.sh).

t_arrays_after_whole() {	# --after A (an array's id) and A_ wait for every task, A_I for one; kept over a restart
	write_config; start_nvqd || return
	local a b c d out
	# task 0 ends at once, the others later
	a=$(submit -g 0 --array 0-2 sh -c 'sleep $((NVQ_ARRAY_INDEX * 2))')
	b=$(submit -g 0 --after "$a" true)
	c=$(submit -g 0 --after "${a}_" true)
	d=$(submit -g 0 --after "${a}_0" true)
	wait_state "$d" COMPLETED
	expect_eq "A_0 done: --after A_0 ran" "$(state "$d")" COMPLETED
	expect_eq "--after A (the array's id) waits for its other tasks" "$(state "$b")" PENDING
	expect_eq "--after A_ waits too" "$(state "$c")" PENDING
	expect_match "its reason" "$(nvq list | awk -v id="$b" '$1 == id')" "Dependency \(afterok:${a}_\)"
	stop_nvqd; start_nvqd || return	# what it waits for is stored
	expect_eq "stored as the whole array" \
	    "$(sqlite3 "$T/nvq.db" "SELECT after FROM jobs WHERE id IN ($b, $c, $d) ORDER BY id")" \
	    "afterok:${a}_"$'\n'"afterok:${a}_"$'\n'"afterok:$a"
	expect_eq "still waits after a restart" "$(state "$b")" PENDING
	wait_state "$b" COMPLETED 10; wait_state "$c" COMPLETED
	expect_eq "b started after the last task ended" \
	    "$(awk -v s="$(field "$b" started_at)" -v e="$(field "$((a + 2))" ended_at)" 'BEGIN{print (s >= e)}')" 1
	# a task that fails: afterok on the array can never hold
	a=$(submit -g 0 --array 0-1 sh -c 'exit $NVQ_ARRAY_INDEX')
	b=$(submit -g 0 --after "$a" true)
	wait_state "$b" CANCELLED
	expect_eq "its reason" "$(field "$b" reason)" \
	    "DependencyNeverSatisfied (afterok:${a}_: 1 task did not complete)"
	out=$(nvq submit --after "${a}_7" true 2>&1)
	expect_match "unknown A_I" "$out" "no task ${a}_7"
	expect_eq "in one line" "$(echo "$out" | wc -l)" 1
	expect_match "A_ of no array" "$(nvq submit --after "${b}_" true 2>&1)" "job $b is not an array's id"
}
