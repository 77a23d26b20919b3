/*
 * output.c: `nvq log [-f] [--err] ID`: prints a job's output file, and with
 * -f follows it until the job has ended.  nvq reads the file itself, with
 * the caller's own permissions.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nvq.h"

static int
log_copy(int fd)
{
	char buf[65536];
	ssize_t n;
	int any = 0;

	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		if (fwrite(buf, 1, (size_t)n, stdout) != (size_t)n)
			return -1;
		any = 1;
	}
	fflush(stdout);
	return any;
}

static int
log_empty(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0;
}

int
cmd_log(struct nvq_args *a)
{
	struct proto_msg m;
	struct nvq_row job;
	char path[4096], state[16];
	int64_t id;
	int fd = -1, done;

	switch (task_id(a->socket, a->argv[0], &id)) {
	case TASK_JOB:
		break;
	case TASK_ARRAY:
		nvq_err("log: %s is every task of an array: name one (%lld_0 for its first)",
		    a->argv[0], (long long)id);
		return 2;
	case TASK_FAILED:
		return 1;
	default:
		return 2;
	}
	for (;;) {
		if (jobs_fetch(a->socket, id, &m, &job) == -1)
			return 1;
		snprintf(path, sizeof(path), "%s",
		    row_str(&m, &job, a->stderr_log ? "stderr_path" : "stdout_path"));
		snprintf(state, sizeof(state), "%s", row_str(&m, &job, "state"));
		proto_msg_free(&m);
		done = !fmt_state_active(state);
		if (fd == -1 && (fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
			if (errno != ENOENT || !a->follow || done) {
				if (errno == ENOENT && strcmp(state, "PENDING") == 0)
					nvq_err("job %lld is PENDING: no output yet (use -f to wait "
					    "for it)", (long long)id);
				else
					nvq_err("cannot read %s: %s", fmt_safe(path),
					    strerror(errno));
				return 1;
			}
		}
		/* made ahead of its start (nvq-shim -w): empty until the job runs */
		if (fd != -1 && !a->follow && strcmp(state, "PENDING") == 0 && log_empty(fd)) {
			close(fd);
			nvq_err("job %lld is PENDING: no output yet (use -f to wait for it)",
			    (long long)id);
			return 1;
		}
		if (fd != -1 && log_copy(fd) == -1) {
			close(fd);
			return 1;
		}
		if (!a->follow || (done && fd != -1))
			break;
		usleep(200000);
	}
	if (fd != -1) {
		log_copy(fd);
		close(fd);
	}
	return 0;
}
