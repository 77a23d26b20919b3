# lib.sh: what the benchmarks share.  Sourced from the repository root.

# The median of the numbers on stdin (the mean of the middle two if even).
median() {
	sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

# Builds nvq and build/load (bench/load.c: clients submitting at once).
bench_load_helper() {
	make -s
	cc -O2 -std=c11 -D_GNU_SOURCE -iquote common -iquote nvq -o build/load bench/load.c \
	    nvq/client.c nvq/fmt.c common/proto.c common/parse.c common/paths.c -linih
}

# bench_nvqd DIR NVQD [LINE...]: a fresh DIR with a configuration (its
# socket, database and spool in DIR, log_level = warn, then the lines
# given, "[section]" lines too) and NVQD started on it; its pid in
# BENCH_PID, once its socket is there.
bench_nvqd() {
	local dir=$1 nvqd=$2 i
	shift 2
	rm -rf "$dir"; mkdir -p "$dir"
	{
		printf '[daemon]\nsocket = %s/sock\ndatabase = %s/nvq.db\nspool = %s/spool\nlog_level = warn\n' \
		    "$dir" "$dir" "$dir"
		printf '%s\n' "$@"
	} > "$dir/nvq.ini"
	"$nvqd" -c "$dir/nvq.ini" 2> "$dir/log" &
	BENCH_PID=$!
	for i in $(seq 100); do [ -S "$dir/sock" ] && return 0; sleep 0.05; done
	echo "nvqd did not start:"; cat "$dir/log"
	return 1
}
