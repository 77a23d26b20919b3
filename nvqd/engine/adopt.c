/*
 * adopt.c: a Slurm step on this node as a running job (adopt.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adopt.h"
#include "log.h"
#include "parse.h"
#include "proc.h"

/* The step's GPUs ("0,2", the node's indexes) as a mask of nvqd's; -1 with err. */
static int
adopt_mask(struct engine *e, const char *gpus, uint64_t *mask, char *err, size_t errlen)
{
	const char *p = gpus;
	char *end;
	long g;

	*mask = 0;
	while (p != NULL && *p != '\0') {
		g = strtol(p, &end, 10);
		if (end == p || g < 0 || (*end != ',' && *end != '\0')) {
			snprintf(err, errlen, "\"%s\" is not a list of GPU indexes", gpus);
			return -1;
		}
		if (g >= e->gpus.n) {
			snprintf(err, errlen, "Slurm gave this step GPU %ld; nvqd has %d GPU%s (gres.conf "
			    "and nvq gpus must count the same)", g, e->gpus.n, e->gpus.n == 1 ? "" : "s");
			return -1;
		}
		*mask |= 1ULL << g;
		p = *end == ',' ? end + 1 : NULL;
	}
	if (*mask == 0) {
		snprintf(err, errlen, "the step has no GPU (SLURM_JOB_GPUS is empty)");
		return -1;
	}
	return 0;
}

/* Whether each GPU of mask has room for mem beside nvqd's jobs; -1 with err. */
static int
adopt_room(struct engine *e, uint64_t mask, uint64_t mem, char *err, size_t errlen)
{
	char ids[128], b[16], d[16], w[16];
	uint64_t budget, held, want;
	int g;

	for (g = 0; g < e->gpus.n; g++) {
		if (!(mask & (1ULL << g)))
			continue;
		budget = engine_budget(e, g);
		held = engine_demanded(e, g, ids, sizeof(ids));
		want = mem > 0 ? mem : budget;
		if (held > budget || want > budget - held) {
			fmt_size(budget, b, sizeof(b));
			fmt_size(held, d, sizeof(d));
			fmt_size(want, w, sizeof(w));
			snprintf(err, errlen, "GPU %d has no room for it: its budget is %s, nvqd's "
			    "jobs hold %s (%s), this step asks %s", g, b, d, ids[0] ? ids : "-", w);
			return -1;
		}
	}
	return 0;
}

int
adopt_step(struct engine *e, const struct adopt_req *r, pid_t pid, int64_t *idp, char *uuids,
    size_t ulen, char *err, size_t errlen)
{
	struct store_job_new n;
	const struct store_job_new *jp = &n;
	struct gc_event ev = { .type = GC_EV_RECOVER };
	char name[64], cmd[96], why[128];
	const char *user = r->user;
	static const char argv[] = "slurmstepd";
	struct job *j;
	uint64_t mask;
	int64_t start, id;
	double now = engine_now();
	size_t off = 0;
	int g, ngpus;

	if (r->slurm_job <= 0 || r->step == NULL || *r->step == '\0' || strlen(r->step) > 16 ||
	    strspn(r->step, "abcdefghijklmnopqrstuvwxyz0123456789") != strlen(r->step)) {
		snprintf(err, errlen, "a Slurm job id and step are needed");
		return -1;
	}
	if (adopt_mask(e, r->gpus ? r->gpus : "", &mask, err, errlen) == -1 ||
	    adopt_room(e, mask, r->mem, err, errlen) == -1)
		return -1;
	if ((start = proc_start_time(pid)) < 0) {
		snprintf(err, errlen, "process %d has ended", (int)pid);
		return -1;
	}
	uuids[0] = '\0';
	for (g = 0, ngpus = 0; g < e->gpus.n; g++)
		if (mask & (1ULL << g)) {
			off += (size_t)snprintf(uuids + off, off < ulen ? ulen - off : 0, "%s%s",
			    ngpus ? "," : "", e->gpus.gpus[g].uuid);
			ngpus++;
		}
	snprintf(name, sizeof(name), "slurm-%lld.%s", (long long)r->slurm_job, r->step);
	snprintf(cmd, sizeof(cmd), "(Slurm job %lld, step %s)", (long long)r->slurm_job, r->step);
	memset(&n, 0, sizeof(n));
	n.uid = r->uid;
	n.gid = r->gid;
	n.user = user;
	n.name = name;
	n.command = cmd;
	n.argv = argv;
	n.argv_len = sizeof(argv);
	n.cwd = "/";
	n.gpus = ngpus;
	n.mem = r->mem;
	n.stdout_path = "/dev/null";	/* Slurm's: where sbatch -o said */
	n.stderr_path = "/dev/null";
	n.spool = e->cfg.spool;
	n.now = now;
	snprintf(why, sizeof(why), "Slurm job %lld's step %s started on this node",
	    (long long)r->slurm_job, r->step);
	if (store_jobs_insert(e->store, &jp, 1, &id) == -1 ||
	    store_job_slurm(e->store, id, r->slurm_job, r->step, now, why) == -1 ||
	    store_job_start(e->store, id, now, uuids, ngpus, r->mem, 0) == -1) {
		snprintf(err, errlen, "cannot store it: %s", store_errmsg(e->store));
		return -1;
	}
	store_lazy_begin(e->store);
	store_job_set_pid(e->store, id, (int)pid, start, e->boot_id, NULL);
	store_env_delete(e->store, id);
	store_lazy_commit(e->store);
	if (engine_add(e, id, r->uid, r->gid, user, ngpus, r->mem, 0, now, 0, NULL, 0, NULL) == -1) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	j = e->jobs;
	engine_state(e, j, JOB_RUNNING);
	j->started_at = now;
	gpuctl_loaded(j, 1, 0, 0, 0, NULL, 0, now);
	j->pid = pid;
	j->pid_start = start;
	j->slurm_id = r->slurm_job;
	j->gpumask = mask;
	j->granted = r->mem;
	for (g = 0; g < e->gpus.n && r->mem == 0; g++)
		if (mask & (1ULL << g))
			j->granted = engine_budget(e, g);
	engine_track(e, j);
	engine_watch(e, j);
	ev.job = id;
	engine_gpu(e, &ev, NULL, 0);
	engine_kick(e);
	log_info("job %lld: Slurm job %lld's step %s (slurmstepd %d) on %s", (long long)id,
	    (long long)r->slurm_job, r->step, (int)pid, uuids);
	*idp = id;
	return 0;
}
