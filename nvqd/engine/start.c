/*
 * start.c: a job's command, environment and groups made into its
 * supervisor's spawn (see start.h).
 */
#include <grp.h>
#include <limits.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"
#include "start.h"
#include "store.h"

#define START_MAX_GROUPS 1024

/* The job's environment (NUL-separated) as a vector with room for extra. */
static char **
start_env_vector(char *buf, int len, int extra)
{
	char **env, *p;
	int count = 0, i = 0;

	for (p = buf; p < buf + len; p += strlen(p) + 1)
		count++;
	if ((env = calloc((size_t)(count + extra + 1), sizeof(*env))) == NULL)
		return NULL;
	for (p = buf; p < buf + len; p += strlen(p) + 1)
		env[i++] = p;
	return env;
}

/* Sets name=value in env (which has room), replacing an entry of that name. */
static void
start_setenv(char **env, char *entry)
{
	size_t n = strchr(entry, '=') - entry + 1;
	int i;

	for (i = 0; env[i] != NULL; i++)
		if (strncmp(env[i], entry, n) == 0) {
			env[i] = entry;
			return;
		}
	env[i] = entry;
	env[i + 1] = NULL;
}

/* The job's command, environment and identity, copied out of the store's row. */
struct start_exec {
	char		**argv;
	char		*argvbuf;
	char		*envbuf;	/* NULL if the environment is missing */
	int		envlen;
	char		cwd[PATH_MAX], out[PATH_MAX], err[PATH_MAX], user[64];
	char		name[256];
	char		groups[START_MAX_GROUPS * 11];
	int		has_groups;	/* recorded at submit ("" is none) */
	uint32_t	uid, gid;
	int64_t		array_count, array_min, array_max, array_step;	/* count 0: none */
	int		found;
};

/* store_job_exec's row into x: found is set once it is whole. */
static int
start_exec_cb(void *arg, const struct store_job_exec *r)
{
	struct start_exec *x = arg;
	int count = 0, i = 0, k;
	char *p;

	if (r->argv == NULL || r->argv_len <= 0)
		return 1;
	if ((x->argvbuf = malloc((size_t)r->argv_len + 1)) == NULL)
		return 1;
	memcpy(x->argvbuf, r->argv, (size_t)r->argv_len);
	x->argvbuf[r->argv_len] = '\0';
	for (k = 0; k < r->argv_len; k++)
		count += x->argvbuf[k] == '\0';
	if ((x->argv = calloc((size_t)count + 1, sizeof(char *))) == NULL)
		return 1;
	for (p = x->argvbuf; p < x->argvbuf + r->argv_len; p += strlen(p) + 1)
		x->argv[i++] = p;
	snprintf(x->cwd, sizeof(x->cwd), "%s", r->cwd ? r->cwd : "/");
	snprintf(x->out, sizeof(x->out), "%s", r->stdout_path ? r->stdout_path : "/dev/null");
	snprintf(x->err, sizeof(x->err), "%s", r->stderr_path ? r->stderr_path : "/dev/null");
	x->uid = r->uid;
	x->gid = r->gid;
	snprintf(x->user, sizeof(x->user), "%s", r->user ? r->user : "");
	snprintf(x->name, sizeof(x->name), "%s", r->name ? r->name : "");
	if (r->env != NULL && (x->envbuf = malloc((size_t)r->env_len + 1)) != NULL) {
		memcpy(x->envbuf, r->env, (size_t)r->env_len);
		x->envbuf[r->env_len] = '\0';
		x->envlen = r->env_len;
	}
	snprintf(x->groups, sizeof(x->groups), "%s", r->groups ? r->groups : "");
	x->has_groups = r->groups != NULL;
	x->array_count = r->array_count;
	x->array_min = r->array_min;
	x->array_max = r->array_max;
	x->array_step = r->array_step;
	x->found = 1;
	return 1;
}

/* The most variables start_slurm sets */
#define START_SLURM_VARS	28

/*
 * Slurm's variables that scripts read, as Slurm sets them in a one-node
 * job's batch step (x's job j on the GPUs of mask), into env, which has
 * room for START_SLURM_VARS more, their text in buf; and nvq's srun first
 * on its PATH.  Returns that PATH's entry (the caller's to free), or NULL.
 * Not under [cluster] engine = slurm, where Slurm sets them.
 */
static char *
start_slurm(const struct start_ctx *c, const struct job *j, const struct start_exec *x,
    uint64_t mask, char **env, char *buf, size_t len)
{
	char host[256], gpus[SCHED_MAX_GPUS * 4], *p = buf, *path = NULL;
	const char *old = NULL;
	size_t o = 0;
	int i, k;

	if (gethostname(host, sizeof(host)) != 0)
		snprintf(host, sizeof(host), "localhost");
	host[sizeof(host) - 1] = '\0';
	gpus[0] = '\0';
	for (i = 0; i < SCHED_MAX_GPUS; i++)
		if (mask >> i & 1)
			o += (size_t)snprintf(gpus + o, sizeof(gpus) - o, "%s%d", o ? "," : "", i);
#define START_PUT(...) do {							\
		k = snprintf(p, len - (size_t)(p - buf), __VA_ARGS__);		\
		if (k < 0 || (size_t)k >= len - (size_t)(p - buf))		\
			return NULL;						\
		start_setenv(env, p);						\
		p += k + 1;							\
	} while (0)
	START_PUT("SLURM_JOB_ID=%lld", (long long)j->id);
	START_PUT("SLURM_JOBID=%lld", (long long)j->id);
	START_PUT("SLURM_JOB_NAME=%s", x->name);
	if (j->array_id != 0) {
		START_PUT("SLURM_ARRAY_JOB_ID=%lld", (long long)j->array_id);
		START_PUT("SLURM_ARRAY_TASK_ID=%lld", (long long)j->array_index);
	}
	/* the array's shape as submitted (tasks stored before 025 have none) */
	if (j->array_id != 0 && x->array_count > 0) {
		START_PUT("SLURM_ARRAY_TASK_COUNT=%lld", (long long)x->array_count);
		START_PUT("SLURM_ARRAY_TASK_MIN=%lld", (long long)x->array_min);
		START_PUT("SLURM_ARRAY_TASK_MAX=%lld", (long long)x->array_max);
		START_PUT("SLURM_ARRAY_TASK_STEP=%lld", (long long)x->array_step);
	}
	START_PUT("SLURM_CLUSTER_NAME=%s", c->cfg->cluster_name[0] != '\0' ?
	    c->cfg->cluster_name : host);
	START_PUT("SLURM_JOB_USER=%s", x->user);
	START_PUT("SLURM_JOB_UID=%u", (unsigned)x->uid);
	START_PUT("SLURM_JOB_GID=%u", (unsigned)x->gid);
	START_PUT("SLURM_SUBMIT_HOST=%s", host);
	START_PUT("SLURM_NNODES=1");
	START_PUT("SLURM_JOB_NUM_NODES=1");
	START_PUT("SLURM_NODELIST=%s", host);
	START_PUT("SLURM_JOB_NODELIST=%s", host);
	START_PUT("SLURMD_NODENAME=%s", host);
	START_PUT("SLURM_NODEID=0");
	START_PUT("SLURM_PROCID=0");
	START_PUT("SLURM_LOCALID=0");
	START_PUT("SLURM_GPUS_ON_NODE=%d", j->ngpus);
	START_PUT("SLURM_JOB_GPUS=%s", gpus);
#undef START_PUT
	if (c->srun[0] == '\0')
		return NULL;
	for (i = 0; env[i] != NULL; i++)
		if (strncmp(env[i], "PATH=", 5) == 0)
			old = env[i] + 5;
	/* without a PATH (--export=NONE), the shell's own default after srun's */
	if (old == NULL)
		old = "/usr/local/bin:/usr/bin:/bin";
	if ((path = malloc(strlen(c->srun) + strlen(old) + 8)) != NULL) {
		sprintf(path, "PATH=%s:%s", c->srun, old);
		start_setenv(env, path);
	}
	return path;
}

pid_t
start_shim(const struct start_ctx *c, const struct job *j, uint64_t mask, const char *uuids,
    uint64_t granted, const char *status_path, struct runner_standby *sb, int prepare, char *err,
    size_t errlen)
{
	char slurm[PATH_MAX + 2048], *path = NULL;
	struct start_exec x;
	struct runner_spec rs;
	char cvd[SCHED_MAX_GPUS * 97 + 32], jid[48], gmem[48], aid[48], aidx[48];
	char order[] = "CUDA_DEVICE_ORDER=PCI_BUS_ID", offload[] = "NVQ_HOOK_OFFLOAD=1";
	char **env = NULL, hsock[PATH_MAX + 32], ncpu[3][48];
	gid_t groups[START_MAX_GROUPS];
	pid_t pid = -1;

	memset(&x, 0, sizeof(x));
	if (store_job_exec(c->store, j->id, start_exec_cb, &x) == -1 || !x.found) {
		snprintf(err, errlen, "cannot read its command from the database");
		goto out;
	}
	if (x.envbuf == NULL || (env = start_env_vector(x.envbuf, x.envlen,
	    12 + START_SLURM_VARS)) == NULL) {
		snprintf(err, errlen, "its environment is missing from the private database");
		goto out;
	}
	snprintf(cvd, sizeof(cvd), "CUDA_VISIBLE_DEVICES=%s", uuids);
	snprintf(jid, sizeof(jid), "NVQ_JOB_ID=%lld", (long long)j->id);
	snprintf(gmem, sizeof(gmem), "NVQ_GPU_MEM=%llu", (unsigned long long)granted);
	start_setenv(env, cvd);
	start_setenv(env, order);
	start_setenv(env, jid);
	start_setenv(env, gmem);
	if (j->array_id != 0) {
		/* a task of an array: which, as Slurm's SLURM_ARRAY_JOB_ID and _TASK_ID */
		snprintf(aid, sizeof(aid), "NVQ_ARRAY_ID=%lld", (long long)j->array_id);
		snprintf(aidx, sizeof(aidx), "NVQ_ARRAY_INDEX=%lld", (long long)j->array_index);
		start_setenv(env, aid);
		start_setenv(env, aidx);
	}
	/* its CPUs and host memory, as nvq's and Slurm's variables say them (MiB) */
	snprintf(ncpu[0], sizeof(ncpu[0]), "NVQ_CPUS=%d", j->cpus > 0 ? j->cpus : 1);
	snprintf(ncpu[1], sizeof(ncpu[1]), "SLURM_CPUS_PER_TASK=%d", j->cpus > 0 ? j->cpus : 1);
	start_setenv(env, ncpu[0]);
	start_setenv(env, ncpu[1]);
	if (j->host_mem > 0) {
		snprintf(ncpu[2], sizeof(ncpu[2]), "%s=%llu", j->mem_per_cpu > 0 ?
		    "SLURM_MEM_PER_CPU" : "SLURM_MEM_PER_NODE", (unsigned long long)((j->mem_per_cpu >
		    0 ? j->mem_per_cpu : j->host_mem) >> 20));
		start_setenv(env, ncpu[2]);
	}
	if (!c->cfg->slurm)
		path = start_slurm(c, j, &x, mask, env, slurm, sizeof(slurm));
	/* where the hook registers, reports and gets its lock */
	snprintf(hsock, sizeof(hsock), "NVQ_HOOK_SOCKET=%s", c->cfg->socket);
	start_setenv(env, hsock);
	/* the hook's allocations movable by itself on a suspend ([scheduler] offload) */
	if (c->cfg->offload)
		start_setenv(env, offload);

	memset(&rs, 0, sizeof(rs));
	rs.id = j->id;
	rs.argv = x.argv;
	rs.envp = env;
	rs.cwd = x.cwd;
	rs.out = x.out;
	rs.err = x.err;
	rs.status_path = status_path;
	rs.ticket = j->ticket;
	rs.user = x.user;
	rs.uid = x.uid;
	rs.gid = x.gid;
	rs.drop = c->is_root;
	rs.shim = c->shim;
	/* the shim puts the hook into LD_PRELOAD for the job, not for itself */
	rs.preload = c->hook[0] != '\0' ? c->hook : NULL;
	rs.umask = c->cfg->job_umask;
	rs.rlimits = c->cfg->rlimits;
	rs.cgroup_base = c->cgroup_base[0] != '\0' ? c->cgroup_base : NULL;
	rs.max_procs = c->cfg->max_procs;
	rs.host_mem = j->host_mem;
	rs.cpus = j->cpus;
	rs.preempt_signal = j->preempt_signal;
	rs.prepare = prepare;
	if (j->stdio[0] >= 0 || j->stdio[1] >= 0 || j->stdio[2] >= 0)
		rs.stdio = j->stdio;
	if (rs.drop && x.has_groups) {
		/* the groups the submitting process had */
		char *tok, *save;

		rs.groups = groups;
		for (tok = strtok_r(x.groups, ",", &save); tok && rs.ngroups < START_MAX_GROUPS;
		    tok = strtok_r(NULL, ",", &save))
			groups[rs.ngroups++] = (gid_t)strtoul(tok, NULL, 10);
	} else if (rs.drop) {
		/* submitted before they were recorded: the user's, resolved here,
		 * where NSS is loaded once, not in every job */
		rs.groups = groups;
		rs.ngroups = START_MAX_GROUPS;
		if (getgrouplist(x.user, x.gid, groups, &rs.ngroups) == -1) {
			snprintf(err, errlen, "cannot read the submitter's groups (over "
			    "START_MAX_GROUPS, or the user is gone)");
			goto out;
		}
	}
	pid = runner_spawn(&rs, sb, err, errlen);
out:
	free(path);
	free(env);
	free(x.envbuf);
	free(x.argv);
	free(x.argvbuf);
	return pid;
}
