/*
 * spank_nvq.c: nvq's GPU memory fence under Slurm, as a SPANK plugin.
 *
 * It adds --gpu-mem=SIZE to sbatch, srun and salloc (SIZE as nvq's -m:
 * 512M, 20G, a bare number is MiB).  On the node, for every task of a job
 * that gave it:
 *   - the job's shards must cover it: SIZE <= shards x shard_size (the
 *     plugin's argument, 1G unless told: with one shard per GiB of each
 *     GPU in gres.conf, --gres=shard:N gives N GiB), else the task fails
 *     before it runs, saying why;
 *   - nvq's hook goes first in the task's LD_PRELOAD, with NVQ_GPU_MEM the
 *     budget, so that an allocation past it fails with CUDA's
 *     out-of-memory error, whatever node Slurm picked;
 *   - the job step's tasks on the node share one account (NVQ_SHARE, a file
 *     the plugin makes in /dev/shm for the step, owned by the job's user,
 *     removed when the step ends), so that N tasks together stay under it.
 *
 *   - with peaks=DIR, at the step's end, the most its tasks held at once on
 *     each of its GPUs goes to DIR/JOBID/STEP.NODE as "NODE INDEX BYTES" lines
 *     (the node's GPU index, from SLURM_JOB_GPUS), written by slurmstepd
 *     as root, where nvqd with [cluster] engine = slurm reads it for the
 *     job's history.
 *
 * plugstack.conf:
 *   required /usr/lib/x86_64-linux-gnu/slurm-wlm/spank_nvq.so \
 *       hook=/usr/libexec/nvq/libnvq-hook.so shard_size=1G peaks=/var/spool/nvq/slurm
 * (contrib/slurm/README.md has the rest.)
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <slurm/spank.h>

#include "parse.h"
#include "share.h"

SPANK_PLUGIN(nvq, 1);

#define NVQ_DEFAULT_HOOK	"/usr/libexec/nvq/libnvq-hook.so"

static uint64_t gpu_mem;		/* --gpu-mem, bytes; 0: not given */
static uint64_t shard_size = 1ULL << 30;
static char hook[PATH_MAX] = NVQ_DEFAULT_HOOK;
static char share[PATH_MAX];		/* this step's account on this node */
static char peaks[PATH_MAX];		/* peaks=: where steps' peaks go; "": nowhere */
static char gpus[256];			/* the step's GPUs on this node (SLURM_JOB_GPUS) */
static char node[128];			/* this node's name (SLURMD_NODENAME) */

#ifndef SLURM_BATCH_SCRIPT
#define SLURM_BATCH_SCRIPT	0xfffffffb
#endif

static int
nvq_opt_cb(int val, const char *arg, int remote)
{
	(void)val;
	(void)remote;
	if (arg == NULL || parse_size(arg, &gpu_mem) == -1 || gpu_mem == 0) {
		slurm_error("nvq: --gpu-mem=%s: not a size (512M, 20G, 1.5T; a bare number is MiB)",
		    arg ? arg : "");
		return -1;
	}
	return 0;
}

static struct spank_option nvq_option = {
	"gpu-mem", "SIZE", "GPU memory per GPU the job's processes may hold together "
	"(nvq's hook fences them there); covered by the job's shards", 1, 0, nvq_opt_cb
};

/* The plugin's arguments: hook=PATH, shard_size=SIZE. */
int
slurm_spank_init(spank_t sp, int ac, char **av)
{
	int i;

	if (spank_option_register(sp, &nvq_option) != ESPANK_SUCCESS) {
		slurm_error("nvq: cannot register --gpu-mem");
		return -1;
	}
	for (i = 0; i < ac; i++) {
		if (strncmp(av[i], "hook=", 5) == 0 && av[i][5] == '/' &&
		    strlen(av[i] + 5) < sizeof(hook))
			snprintf(hook, sizeof(hook), "%s", av[i] + 5);
		else if (strncmp(av[i], "shard_size=", 11) == 0 &&
		    parse_size(av[i] + 11, &shard_size) == 0 && shard_size > 0)
			;
		else if (strncmp(av[i], "peaks=", 6) == 0 && av[i][6] == '/' &&
		    strlen(av[i] + 6) < sizeof(peaks) - 64)
			snprintf(peaks, sizeof(peaks), "%s", av[i] + 6);
		else {
			slurm_error("nvq: plugstack.conf: unknown argument \"%s\" (hook=PATH, "
			    "shard_size=SIZE, peaks=DIR)", av[i]);
			return -1;
		}
	}
	return 0;
}

/* On the node, once per step: the account the step's tasks share. */
int
slurm_spank_user_init(spank_t sp, int ac, char **av)
{
	uid_t uid;
	gid_t gid;

	(void)ac;
	(void)av;
	if (!spank_remote(sp) || gpu_mem == 0)
		return 0;
	if (spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_GID, &gid) != ESPANK_SUCCESS)
		return 0;
	/* for the step's peaks, in slurmstepd at its end (nvq_peaks) */
	if (spank_getenv(sp, "SLURM_JOB_GPUS", gpus, sizeof(gpus)) != ESPANK_SUCCESS)
		gpus[0] = '\0';
	if (spank_getenv(sp, "SLURMD_NODENAME", node, sizeof(node)) != ESPANK_SUCCESS)
		node[0] = '\0';
	/* without it, each task keeps to the budget alone */
	if (share_create(share, sizeof(share), uid, gid) == 0)
		spank_setenv(sp, "NVQ_SHARE", share, 1);
	else
		share[0] = '\0';
	return 0;
}

/* In each task, just before it runs: the check, then the hook and its budget. */
int
slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	char shards[32], pre[4096], val[PATH_MAX + 4096 + 2], mem[32];
	char have[16], want[16], each[16];
	unsigned long long n = 0;

	(void)ac;
	(void)av;
	if (!spank_remote(sp) || gpu_mem == 0)
		return 0;
	if (spank_getenv(sp, "SLURM_SHARDS_ON_NODE", shards, sizeof(shards)) == ESPANK_SUCCESS)
		n = strtoull(shards, NULL, 10);
	/* whole GPUs (--gres=gpu:N): the budget is per GPU, and Slurm gave them all */
	if (n == 0 && spank_getenv(sp, "SLURM_JOB_GPUS", pre, sizeof(pre)) == ESPANK_SUCCESS &&
	    pre[0] != '\0')
		n = (gpu_mem + shard_size - 1) / shard_size;
	if (n == 0 || gpu_mem > n * shard_size) {
		fmt_size(gpu_mem, want, sizeof(want));
		fmt_size(n * shard_size, have, sizeof(have));
		fmt_size(shard_size, each, sizeof(each));
		slurm_error("nvq: --gpu-mem=%s is more than this job's shards give: %llu shard%s "
		    "of %s each, %s (ask --gres=shard:%llu)", want, n, n == 1 ? "" : "s",
		    each, have,
		    (unsigned long long)((gpu_mem + shard_size - 1) / shard_size));
		return -1;
	}
	if (access(hook, R_OK) != 0) {
		slurm_error("nvq: the hook %s cannot be read on this node: %s", hook,
		    strerror(errno));
		return -1;
	}
	if (spank_getenv(sp, "LD_PRELOAD", pre, sizeof(pre)) == ESPANK_SUCCESS && *pre)
		snprintf(val, sizeof(val), "%s:%s", hook, pre);
	else
		snprintf(val, sizeof(val), "%s", hook);
	snprintf(mem, sizeof(mem), "%llu", (unsigned long long)gpu_mem);
	if (spank_setenv(sp, "LD_PRELOAD", val, 1) != ESPANK_SUCCESS ||
	    spank_setenv(sp, "NVQ_GPU_MEM", mem, 1) != ESPANK_SUCCESS) {
		slurm_error("nvq: cannot set the task's environment");
		return -1;
	}
	return 0;
}

/*
 * The step's peaks on this node into DIR/JOBID/STEP.NODE: "NODE INDEX
 * BYTES" per GPU it used, INDEX the node's (the k-th of SLURM_JOB_GPUS for
 * CUDA's device k).  Written whole under a temporary name, then renamed.
 */
static void
nvq_peaks(spank_t sp)
{
	uint64_t p[SHARE_DEVS];
	uint32_t job = 0, step = 0;
	char dir[PATH_MAX], tmp[PATH_MAX + 80], path[PATH_MAX + 80], host[128], list[256];
	char *idx, *save = NULL;
	FILE *fp;
	int k, fd;

	if (share_peaks(share, p) == -1 ||
	    spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS)
		return;
	if (node[0] == '\0' || strspn(node, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789-_.") != strlen(node)) {
		if (gethostname(host, sizeof(host)) != 0)
			return;
		host[strcspn(host, ".")] = '\0';
	} else
		snprintf(host, sizeof(host), "%s", node);
	snprintf(dir, sizeof(dir), "%s/%u", peaks, job);
	if (mkdir(dir, 0755) == -1 && errno != EEXIST) {
		slurm_error("nvq: peaks: %s: %s", dir, strerror(errno));
		return;
	}
	if (step == SLURM_BATCH_SCRIPT)
		snprintf(path, sizeof(path), "%s/batch.%s", dir, host);
	else
		snprintf(path, sizeof(path), "%s/%u.%s", dir, step, host);
	snprintf(tmp, sizeof(tmp), "%s/.%u.%s.tmp", dir, step, host);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644)) == -1 ||
	    (fp = fdopen(fd, "w")) == NULL) {
		slurm_error("nvq: peaks: %s: %s", tmp, strerror(errno));
		if (fd != -1)
			close(fd);
		return;
	}
	snprintf(list, sizeof(list), "%s", gpus);
	for (k = 0, idx = strtok_r(list, ",", &save); k < SHARE_DEVS; k++) {
		if (idx != NULL)	/* each of its GPUs, 0 for one it did not use */
			fprintf(fp, "%s %s %llu\n", host, idx, (unsigned long long)p[k]);
		else if (p[k] > 0)	/* no GPU list: CUDA's own index */
			fprintf(fp, "%s %d %llu\n", host, k, (unsigned long long)p[k]);
		if (idx != NULL)
			idx = strtok_r(NULL, ",", &save);
	}
	if (fclose(fp) != 0 || rename(tmp, path) != 0) {
		slurm_error("nvq: peaks: %s: %s", path, strerror(errno));
		unlink(tmp);
	}
}

/* The step is over on this node: its peaks recorded, its account gone. */
int
slurm_spank_exit(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	if (!spank_remote(sp) || share[0] == '\0')
		return 0;
	if (peaks[0] != '\0')
		nvq_peaks(sp);
	unlink(share);
	return 0;
}
