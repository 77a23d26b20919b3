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
 *   - with nvqd=SOCKET (the node's own nvqd), slurmstepd hands the step to
 *     it before the step starts (MSG_ADOPT, as root: nvqd/engine/adopt.h): nvqd
 *     refuses it if its GPUs have no room beside nvqd's jobs (the step
 *     then fails, saying why), else follows it as a job of its own; the
 *     tasks get NVQ_JOB_ID and NVQ_HOOK_SOCKET so that their hooks link to
 *     it, and CUDA_VISIBLE_DEVICES as nvqd names the GPUs; at the step's
 *     end the plugin writes its exit status where nvqd reads it.  Without
 *     a running nvqd there, the step runs fenced by the hook alone.
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
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <slurm/spank.h>

#include "parse.h"
#include "proto.h"
#include "share.h"
#include "status.h"

SPANK_PLUGIN(nvq, 1);

#define NVQ_DEFAULT_HOOK	"/usr/libexec/nvq/libnvq-hook.so"

static uint64_t gpu_mem;		/* --gpu-mem, bytes; 0: not given */
static uint64_t shard_size = 1ULL << 30;
static char hook[PATH_MAX] = NVQ_DEFAULT_HOOK;
static char share[PATH_MAX];		/* this step's account on this node */
static char peaks[PATH_MAX];		/* peaks=: where steps' peaks go; "": nowhere */
static char gpus[256];			/* the step's GPUs on this node (SLURM_JOB_GPUS) */
static char node[128];			/* this node's name (SLURMD_NODENAME) */

static char nvqd[108];			/* nvqd=: the node's nvqd; "": none */
static long long adopted;		/* nvqd's job id for this step; 0: none */
static char adopted_uuids[1024];	/* its GPUs as nvqd names them */
static char adopted_status[PATH_MAX];	/* where its end goes */
static int task_status = -1;		/* the first task's wait status that was not 0 */
static char refused[512];		/* nvqd's refusal of the step, said by each task */

#ifndef SLURM_BATCH_SCRIPT
#define SLURM_BATCH_SCRIPT	0xfffffffb
#endif
#ifndef SLURM_EXTERN_CONT
#define SLURM_EXTERN_CONT	0xfffffffc
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
		else if (strncmp(av[i], "nvqd=", 5) == 0 && av[i][5] == '/' &&
		    strlen(av[i] + 5) < sizeof(nvqd))
			snprintf(nvqd, sizeof(nvqd), "%s", av[i] + 5);
		else {
			slurm_error("nvq: plugstack.conf: unknown argument \"%s\" (hook=PATH, "
			    "shard_size=SIZE, peaks=DIR, nvqd=SOCKET)", av[i]);
			return -1;
		}
	}
	return 0;
}

/* All of n bytes through fd, in (read) or out; 0, or -1. */
static int
nvq_io(int fd, void *buf, size_t n, int out)
{
	ssize_t k;
	size_t off = 0;

	while (off < n) {
		k = out ? write(fd, (char *)buf + off, n - off) : read(fd, (char *)buf + off, n - off);
		if (k <= 0)
			return -1;
		off += (size_t)k;
	}
	return 0;
}

/*
 * The step to the node's nvqd (slurmstepd, root, before the step starts):
 * adopted, or no nvqd to ask, or refused (why in refused, which fails each
 * task as it starts: an error here would drain the node).
 */
static int
nvq_adopt(spank_t sp)
{
	struct sockaddr_un sa;
	struct timeval tv = { 10, 0 };
	struct proto_buf b = { 0 };
	struct proto_msg m;
	uint8_t hdr[PROTO_HEADER], *body = NULL;
	uint32_t job = 0, step = 0, len;
	uid_t uid;
	gid_t gid;
	char stepname[16], err[256];
	const char *s;
	int fd, type;

	if (spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_GID, &gid) != ESPANK_SUCCESS || step == SLURM_EXTERN_CONT)
		return 0;
	if (step == SLURM_BATCH_SCRIPT)
		snprintf(stepname, sizeof(stepname), "batch");
	else
		snprintf(stepname, sizeof(stepname), "%u", step);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", nvqd);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return 0;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1) {
		slurm_info("nvq: no nvqd at %s (%s): step %u.%s runs fenced by the hook alone",
		    nvqd, strerror(errno), job, stepname);
		close(fd);
		return 0;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	proto_begin(&b, MSG_ADOPT);
	proto_put_int(&b, "slurm_job", job);
	proto_put_str(&b, "step", stepname);
	proto_put_int(&b, "uid", uid);
	proto_put_int(&b, "gid", gid);
	proto_put_str(&b, "gpus", gpus);
	proto_put_int(&b, "mem", (int64_t)gpu_mem);
	memset(&m, 0, sizeof(m));
	if (proto_end(&b) == -1 || nvq_io(fd, b.data, b.len, 1) == -1 ||
	    nvq_io(fd, hdr, sizeof(hdr), 0) == -1 ||
	    proto_header(hdr, &type, &len, err, sizeof(err)) == -1 ||
	    (body = malloc(len ? len : 1)) == NULL || nvq_io(fd, body, len, 0) == -1 ||
	    proto_decode(type, body, len, &m, err, sizeof(err)) == -1) {
		slurm_info("nvq: nvqd at %s did not answer: step %u.%s runs fenced by the hook "
		    "alone", nvqd, job, stepname);
		goto out;
	}
	if (type == MSG_ERROR) {
		s = proto_str(&m, "error");
		snprintf(refused, sizeof(refused), "nvq: nvqd on this node refused step %u.%s: %s",
		    job, stepname, s ? s : "no reason");
	} else if ((s = proto_str(&m, "status")) != NULL && *s == '/' &&
	    strlen(s) < sizeof(adopted_status) && proto_int(&m, "id", 0) > 0) {
		adopted = (long long)proto_int(&m, "id", 0);
		snprintf(adopted_status, sizeof(adopted_status), "%s", s);
		snprintf(adopted_uuids, sizeof(adopted_uuids), "%s",
		    proto_str(&m, "uuids") ? proto_str(&m, "uuids") : "");
	}
	proto_msg_free(&m);
out:
	free(body);
	proto_buf_free(&b);
	close(fd);
	return 0;
}

/* In slurmstepd, as root, once the options are known: the step to the node's nvqd. */
int
slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	if (!spank_remote(sp) || gpu_mem == 0 || nvqd[0] == '\0')
		return 0;
	if (spank_getenv(sp, "SLURM_JOB_GPUS", gpus, sizeof(gpus)) != ESPANK_SUCCESS)
		gpus[0] = '\0';
	return nvq_adopt(sp);
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
	if (refused[0] != '\0') {
		slurm_error("%s", refused);
		return -1;
	}
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
	if (adopted > 0) {
		/* its hooks link to the node's nvqd, which names its GPUs by UUID */
		snprintf(mem, sizeof(mem), "%lld", adopted);
		if (spank_setenv(sp, "NVQ_JOB_ID", mem, 1) != ESPANK_SUCCESS ||
		    spank_setenv(sp, "NVQ_HOOK_SOCKET", nvqd, 1) != ESPANK_SUCCESS ||
		    (adopted_uuids[0] != '\0' &&
		    (spank_setenv(sp, "CUDA_VISIBLE_DEVICES", adopted_uuids, 1) != ESPANK_SUCCESS ||
		    spank_setenv(sp, "CUDA_DEVICE_ORDER", "PCI_BUS_ID", 1) != ESPANK_SUCCESS))) {
			slurm_error("nvq: cannot set the task's environment");
			return -1;
		}
	}
	return 0;
}

/* In slurmstepd, as each task ends: the step's status is its first failure. */
int
slurm_spank_task_exit(spank_t sp, int ac, char **av)
{
	int st;

	(void)ac;
	(void)av;
	if (spank_remote(sp) && adopted > 0 && task_status <= 0 &&
	    spank_get_item(sp, S_TASK_EXIT_STATUS, &st) == ESPANK_SUCCESS)
		task_status = st;
	return 0;
}

/* The adopted step's end, where nvqd reads it (nvq-shim's record, status.h). */
static void
nvq_status(void)
{
	struct status_record rs;
	struct timespec ts;
	char buf[STATUS_SIZE];
	int fd, n, st = task_status < 0 ? 0 : task_status;

	memset(&rs, 0, sizeof(rs));
	clock_gettime(CLOCK_REALTIME, &ts);
	rs.ended_at = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	rs.cpu_time = -1;
	rs.max_rss = -1;
	if (WIFSIGNALED(st)) {
		rs.exit_code = -1;
		rs.signal = WTERMSIG(st);
	} else
		rs.exit_code = WEXITSTATUS(st);
	if ((n = status_format(&rs, buf, sizeof(buf))) == -1)
		return;
	fd = open(adopted_status, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd == -1 || nvq_io(fd, buf, (size_t)n, 1) == -1)
		slurm_error("nvq: %s: %s", adopted_status, strerror(errno));
	if (fd != -1)
		close(fd);
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
	if (spank_remote(sp) && adopted > 0)
		nvq_status();
	if (!spank_remote(sp) || share[0] == '\0')
		return 0;
	if (peaks[0] != '\0')
		nvq_peaks(sp);
	unlink(share);
	return 0;
}
