# t_supervisor.sh: the job's supervisor (nvq-shim) against a hostile
# submitter: nothing of the user's environment reaches the shim, which runs
# as root; no stage of a job blocks its cancel; nothing a user controls
# forges the status record; the record survives a full disk; [limits]
# max_procs holds a fork bomb.  Sourced by run.sh (helpers in lib.sh).

sup_root() {	# whether the tests that need root and test users can run
	[ "$(id -u)" = 0 ] && command -v setpriv > /dev/null && command -v useradd > /dev/null &&
	    make_users
}

# $T/lib/e.so: its constructor appends "EUID PROGRAM" to $E_LOG; it is an
# audit module too (la_version), for LD_AUDIT.
sup_evil_lib() {
	mkdir -p "$T/lib" "$T/pub" && chmod 755 "$T/lib" && chmod 1777 "$T/pub" || return 1
	cat > "$T/lib/e.c" <<-'EOF'
	#include <errno.h>
	#include <stdio.h>
	#include <stdlib.h>
	#include <unistd.h>
	unsigned int la_version(unsigned int v);
	static void __attribute__((constructor))
	e_init(void)
	{
		const char *log = getenv("E_LOG");
		FILE *fp;

		if (log != NULL && (fp = fopen(log, "a")) != NULL) {
			fprintf(fp, "%u %s\n", (unsigned)geteuid(), program_invocation_short_name);
			fclose(fp);
		}
	}
	unsigned int la_version(unsigned int v) { return v; }
	EOF
	$CC -D_GNU_SOURCE -shared -fPIC -o "$T/lib/e.so" "$T/lib/e.c" && chmod 755 "$T/lib/e.so"
}

t_supervisor_env() {	# the user's LD_PRELOAD, LD_AUDIT... reach the job, after the drop, never root
	if ! sup_root; then
		skip "needs root, setpriv and useradd"
		return
	fi
	chmod 755 "$T"
	sup_evil_lib || { fail "cannot build the test library"; return; }
	write_config; start_nvqd || return
	local a b c uid want got
	uid=$(id -u nvqta)
	# (an ASan build of nvq refuses to run after a preload but for that setting)
	a=$(as_user nvqta env LD_PRELOAD="$T/lib/e.so" E_LOG="$T/pub/preload" SECRET_OF_A=hunter2 \
	    ASAN_OPTIONS=verify_asan_link_order=0 \
	    "$NVQ_BIN" -s "$T/sock" submit --parsable -g 0 sh -c 'sleep 1.5')
	b=$(as_user nvqta env LD_AUDIT="$T/lib/e.so" E_LOG="$T/pub/audit" \
	    "$NVQ_BIN" -s "$T/sock" submit --parsable -g 0 sh -c 'exit 0')
	wait_state "$a" RUNNING
	expect_eq "the shim's environment is nvqd's, none of the user's" \
	    "$(tr '\0' ' ' < "/proc/$(shim_pid "$a")/environ")" "PATH=/usr/sbin:/usr/bin:/sbin:/bin "
	wait_state "$a" COMPLETED 5; wait_state "$b" COMPLETED 5
	expect_eq "LD_PRELOAD: never loaded as root" "$(grep -c '^0 ' "$T/pub/preload")" 0
	expect_match "but loaded in the job, as the user" "$(cat "$T/pub/preload")" "(^|"$'\n'")$uid sh"
	expect_eq "LD_AUDIT: never loaded as root" "$(grep -c '^0 ' "$T/pub/audit" 2>/dev/null)" 0
	expect_match "but in the job, as the user" "$(cat "$T/pub/audit" 2>/dev/null)" "(^|"$'\n'")$uid sh"
	# the job gets exactly its environment, nvqd's variables and the hook added
	# (and Slurm's of its resources, SLURM_CPUS_PER_TASK, issue 42)
	want=$(cd /tmp && env -i A=1 B=x=y "C=l1
l2" EMPTY= LD_LIBRARY_PATH="$T/lib" PATH=/usr/bin:/bin /usr/bin/env -0 | sort -z | tr '\0' '|')
	c=$(cd /tmp && env -i A=1 B=x=y "C=l1
l2" EMPTY= LD_LIBRARY_PATH="$T/lib" PATH=/usr/bin:/bin setpriv --reuid=nvqta \
	    --regid="$(id -g nvqta)" --init-groups -- "$NVQ_BIN" -s "$T/sock" submit --parsable \
	    -g 0 -o "$T/pub/env.out" /usr/bin/env -0)
	wait_state "$c" COMPLETED
	got=$(grep -zvE '^(CUDA_VISIBLE_DEVICES|CUDA_DEVICE_ORDER|NVQ_[A-Z_]*|SLURM_[A-Z_]*|LD_PRELOAD)=' \
	    "$T/pub/env.out" | sort -z | tr '\0' '|')
	expect_eq "the job's environment, exactly" "$got" "$want"
	local hook; hook=$(sed -n 's/^nvqd: jobs get //p' "$T/nvqd.log")
	[ -z "$hook" ] || expect_eq "the hook in its LD_PRELOAD" \
	    "$(grep -zc "^LD_PRELOAD=$hook$" "$T/pub/env.out")" 1
}

t_supervisor_fifo() {	# an output that could block the job before exec is refused at once
	write_config; start_nvqd || return
	local a b c d
	mkfifo "$T/out.fifo" "$T/read.fifo"
	a=$(submit -g 2 -t 20s -o "$T/out.fifo" echo hi)
	wait_state "$a" FAILED 3
	expect_eq "its reason" "$(field "$a" reason)" "cannot open $T/out.fifo: not a regular file"
	expect_eq "its exit code" "$(field "$a" exit_code)" 126
	b=$(submit -g 2 true)
	wait_state "$b" COMPLETED 3
	# a FIFO that has a reader: opened without blocking, then refused
	sleep 20 <> "$T/read.fifo" & local reader=$!
	c=$(submit -g 0 -o "$T/out.txt" -e "$T/read.fifo" echo hi)
	wait_state "$c" FAILED 3
	expect_eq "a read FIFO too" "$(field "$c" reason)" "cannot open $T/read.fifo: not a regular file"
	kill "$reader"; wait "$reader" 2> /dev/null
	d=$(submit -g 0 -o /dev/null echo hi)
	wait_state "$d" COMPLETED
	# (before the fix, the job hangs in open: unblock it)
	[ "$(state "$a")" = FAILED ] || timeout 2 cat "$T/out.fifo" > /dev/null
}

t_supervisor_cancel_early() {	# a job is cancelled within kill_grace whatever stage it is in
	write_config "[scheduler]" "kill_grace = 2s"
	start_nvqd || return
	local a b t0 t1 holder
	a=$(submit -g 0 sleep 100)
	t0=$(date +%s.%N); nvq cancel "$a" > /dev/null
	wait_state "$a" CANCELLED 3
	t1=$(date +%s.%N)
	expect_eq "cancelled right after its submit, within kill_grace" \
	    "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print (b - a < 2.5) }')" 1
	# its exec blocked: breaking a lease on its program, until lease-break-time
	if [ "$(id -u)" != 0 ] || [ "$(cat /proc/sys/fs/leases-enable 2>/dev/null)" != 1 ] ||
	    [ "$(cat /proc/sys/fs/lease-break-time 2>/dev/null || echo 0)" -lt 10 ]; then
		skip "needs root, leases and a lease-break-time of 10 s or more"
		return
	fi
	cat > "$T/lease.c" <<-'EOF'
	#define _GNU_SOURCE
	#include <fcntl.h>
	#include <signal.h>
	#include <stdio.h>
	#include <unistd.h>
	int
	main(int argc, char **argv)
	{
		int fd;

		signal(SIGIO, SIG_IGN);	/* keep the lease until lease-break-time */
		if (argc != 2 || (fd = open(argv[1], O_RDONLY)) == -1 ||
		    fcntl(fd, F_SETLEASE, F_WRLCK) == -1) {
			perror("lease");
			return 1;
		}
		printf("leased\n");
		fflush(stdout);
		pause();
		return 0;
	}
	EOF
	$CC -o "$T/lease" "$T/lease.c" || { fail "cannot build the lease holder"; return; }
	cp /bin/sleep "$T/prog"; chmod 755 "$T/prog"
	"$T/lease" "$T/prog" > "$T/leased" & holder=$!
	for i in $(seq 50); do [ -s "$T/leased" ] && break; sleep 0.05; done
	b=$(submit -g 0 "$T/prog" 100)
	wait_state "$b" RUNNING
	for i in $(seq 40); do grep -q BREAKING /proc/locks && break; sleep 0.05; done
	expect_match "its exec is blocked on the lease" "$(grep LEASE /proc/locks)" BREAKING
	t0=$(date +%s.%N); nvq cancel "$b" > /dev/null
	wait_state "$b" CANCELLED 4
	t1=$(date +%s.%N)
	expect_eq "cancelled within kill_grace" \
	    "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print (b - a < 2.5) }')" 1
	kill "$holder"; wait "$holder" 2> /dev/null
}

t_supervisor_forged_status() {	# a reason (a user's path) cannot add fields to the status record
	write_config; start_nvqd || return
	local a path=$'/nonexistent/x\nexit 0\ncpu 99999\nrss 99999999999'
	a=$(submit -g 0 -o "$path" true)
	wait_state "$a" FAILED
	expect_eq "its exit code" "$(sqlite3 "$T/nvq.db" "SELECT exit_code FROM runs WHERE job_id = $a")" 126
	expect_eq "in the job too" "$(sqlite3 "$T/nvq.db" "SELECT exit_code FROM jobs WHERE id = $a")" 126
	expect_eq "no forged CPU time" "$(sqlite3 "$T/nvq.db" "SELECT cpu_time = 99999 OR max_rss = 99999999999
	    FROM runs WHERE job_id = $a")" 0
	expect_eq "no raw newline in its reason" "$(sqlite3 "$T/nvq.db" "SELECT instr(reason, char(10))
	    FROM jobs WHERE id = $a")" 0
	expect_eq "the reason, escaped" "$(sqlite3 "$T/nvq.db" "SELECT reason FROM jobs WHERE id = $a")" \
	    'cannot open /nonexistent/x\nexit 0\ncpu 99999\nrss 99999999999: No such file or directory'
	expect_eq "nvq show's reason, on its line" "$(nvq show "$a" | grep '^reason')" \
	    'reason        cannot open /nonexistent/x\nexit 0\ncpu 99999\nrss 99999999999: No such file or directory'
}

t_supervisor_disk_full() {	# the end of a job whose spool is on a full file system is recorded
	small_fs spool 1m || return
	write_config; start_nvqd || { umount "$T/spool"; return; }
	local a
	a=$(submit -g 0 sh -c 'sleep 1; exit 5')
	wait_state "$a" RUNNING
	sleep 0.2
	dd if=/dev/zero of="$T/spool/filler" bs=4k 2> /dev/null
	expect_eq "the spool is full" "$(df --output=avail "$T/spool" | tail -1 | tr -d ' ')" 0
	wait_state "$a" FAILED 5
	expect_eq "its exit code, recorded on a full disk" "$(field "$a" exit_code)" 5
	expect_eq "its reason" "$(field "$a" reason)" "exit code 5"
	stop_nvqd
	umount "$T/spool"
}

t_supervisor_max_procs() {	# [limits] max_procs holds a fork bomb; the job can still be cancelled
	if ! sup_root; then
		skip "needs root, setpriv and useradd"
		return
	fi
	# RLIMIT_NPROC counts the user's processes: a user of its own, with none
	id nvqtp > /dev/null 2>&1 || useradd -M -N -g nogroup -s /bin/sh nvqtp || { fail "useradd"; return; }
	if [ -n "$(pgrep -u nvqtp)" ]; then
		fail "nvqtp has processes already"
		return
	fi
	chmod 755 "$T"
	write_config "[limits]" "max_procs = 20" "[scheduler]" "kill_grace = 2s"
	start_nvqd || return
	local a n
	# the bomb in a shell of its own (dash exits at a fork that fails); the
	# job's own shell then goes on without forking
	a=$(as_user nvqtp "$NVQ_BIN" -s "$T/sock" submit --parsable -g 0 \
	    sh -c 'sh -c "for i in \$(seq 60); do sleep 30 & done; wait"; echo "bomb: $?"; exec sleep 30')
	wait_state "$a" RUNNING
	sleep 1.5
	n=$(pgrep -c -u nvqtp)
	expect_eq "at most 20 processes ($n)" "$(( n <= 20 && n >= 10 ))" 1
	expect_match "forks were refused" "$(nvq log --err "$a")" "(fork|Resource temporarily unavailable)"
	expect_eq "the machine is fine" "$(nvq list > /dev/null; echo $?)" 0
	expect_eq "the job runs on" "$(state "$a")" RUNNING
	nvq cancel "$a" > /dev/null
	wait_state "$a" CANCELLED 5
	sleep 0.3
	expect_eq "nothing of it is left" "$(pgrep -c -u nvqtp)" 0
}
