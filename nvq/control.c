/*
 * control.c: `nvq cancel`, `nvq hold`, `nvq release` and `nvq wait`.
 *
 * wait exits 0 when every job COMPLETED; otherwise with the status of the
 * first job (in the order given) that did not: its exit code, 128 + the
 * signal that killed it, 124 for TIMEOUT, 125 for CANCELLED.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nvq.h"

int
cmd_cancel(struct nvq_args *a)
{
	struct proto_buf b = { 0 };
	struct proto_msg m;
	int64_t id;
	int i, rc = 0;

	for (i = 0; i < a->argc; i++) {
		if (parse_id(a->argv[i], &id) == -1) {
			nvq_err("\"%s\" is not a job id", a->argv[i]);
			rc = rc ? rc : 2;
			continue;
		}
		proto_begin(&b, MSG_CANCEL);
		proto_put_int(&b, "id", id);
		if (client_call(a->socket, &b, &m) == -1) {
			rc = 1;
			continue;
		}
		proto_msg_free(&m);
	}
	proto_buf_free(&b);
	return rc;
}

/*
 * nvq hold ID...: takes each job's GPU locks back and waits (up to a
 * minute) until its processes have drained their GPU work, or nvqd
 * stopped them for not answering.  nvq release ID... gives them back.
 */
int
cmd_hold(struct nvq_args *a)
{
	int hold = strcmp(a->cmd, "hold") == 0;
	struct proto_buf b = { 0 };
	struct proto_msg m;
	struct nvq_row job;
	const char *lock;
	int64_t id;
	int i, k, rc = 0;

	for (i = 0; i < a->argc; i++) {
		if (parse_id(a->argv[i], &id) == -1) {
			nvq_err("\"%s\" is not a job id", a->argv[i]);
			rc = rc ? rc : 2;
			continue;
		}
		proto_begin(&b, hold ? MSG_HOLD : MSG_RELEASE);
		proto_put_int(&b, "id", id);
		if (client_call(a->socket, &b, &m) == -1) {
			rc = 1;
			continue;
		}
		proto_msg_free(&m);
		if (!hold) {
			printf("job %lld released\n", (long long)id);
			continue;
		}
		for (k = 0; k < 6000; k++) {
			if (jobs_fetch(a->socket, id, &m, &job) == -1) {
				rc = 1;
				break;
			}
			lock = row_str(&m, &job, "lock");
			if (lock == NULL || strcmp(lock, "holding") != 0) {
				printf("job %lld held: %s\n", (long long)id, lock == NULL ?
				    "it has ended" : strcmp(lock, "stopped") == 0 ?
				    "it did not answer in time and was stopped (SIGSTOP)" :
				    "its GPU work has drained");
				proto_msg_free(&m);
				break;
			}
			proto_msg_free(&m);
			usleep(10000);
		}
	}
	proto_buf_free(&b);
	return rc;
}

static int
wait_status(const char *state, int64_t code, int64_t sig)
{
	if (strcmp(state, "COMPLETED") == 0)
		return 0;
	if (strcmp(state, "TIMEOUT") == 0)
		return 124;
	if (strcmp(state, "CANCELLED") == 0)
		return 125;
	if (sig > 0)
		return 128 + (int)sig;
	return code > 0 && code < 256 ? (int)code : 1;
}

int
cmd_wait(struct nvq_args *a)
{
	struct proto_msg m;
	struct nvq_row job;
	int64_t id;
	useconds_t delay;
	const char *st;
	int i, rc = 0, r;

	for (i = 0; i < a->argc; i++)
		if (parse_id(a->argv[i], &id) == -1) {
			nvq_err("\"%s\" is not a job id", a->argv[i]);
			return 2;
		}
	for (i = 0; i < a->argc; i++) {
		parse_id(a->argv[i], &id);
		for (delay = 20000;; delay = delay < 500000 ? delay * 2 : 500000) {
			if (jobs_fetch(a->socket, id, &m, &job) == -1)
				return 1;
			st = row_str(&m, &job, "state");
			if (st && strcmp(st, "PENDING") != 0 && strcmp(st, "RUNNING") != 0)
				break;
			proto_msg_free(&m);
			usleep(delay);
		}
		r = wait_status(st, row_int(&m, &job, "exit_code", -1), row_int(&m, &job, "signal", 0));
		proto_msg_free(&m);
		if (rc == 0)
			rc = r;
	}
	return rc;
}
