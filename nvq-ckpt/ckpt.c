/*
 * ckpt.c: nvq-ckpt, which moves a job's GPU state to host memory and back
 * through the CUDA driver's checkpoint API, for nvqd.
 *
 *   nvq-ckpt [-l LIBCUDA] [-t LOCK_TIMEOUT_MS] [-n LIBNVML] suspend PID...
 *	locks every process (waiting for its submitted work), then
 *	checkpoints each: its device memory goes to host memory and the GPU
 *	is free of it.  With -n, NVML must then show none of them holding
 *	memory on any GPU (within CKPT_VERIFY_S; "verify" fails otherwise),
 *	so that nvqd never calls memory free that is not.  If a step fails,
 *	what was done is undone: every process runs again as before.
 *   nvq-ckpt [-l LIBCUDA] resume PID...
 *	restores every checkpointed process on its GPUs, then unlocks them.
 *   nvq-ckpt [options] wait
 *	loads the driver (cuInit) at once, then reads one line on stdin,
 *	"suspend PID..." or "resume PID...", and does that; end of file
 *	before a whole line: it exits 0, having done nothing.  nvqd starts
 *	one as a job's suspend begins, for its resume: in a process that
 *	called cuInit while the job still held its GPU, a restore took 0.63
 *	to 0.84 s on an H100, against 0.85 to 1.04 s for nvq-ckpt resume
 *	started after, whose cuInit alone takes 0.10 s once the GPU is idle
 *	(tests/gpu/ckpt_probe.sh).
 *
 * Either is idempotent: a process already in the state asked for is left
 * as it is.  A PID written ?PID is one that may not be a CUDA process at
 * all (it maps libcuda without the hook): if the driver will not lock it,
 * it is left out ("skip PID CODE TEXT") instead of failing the suspend.
 * PID@START names the process that had that pid and that start time (in
 * clock ticks since boot, /proc/PID/stat's 22nd field) when nvqd checked
 * it was the job's: nvq-ckpt runs as root, and a pid may have gone to
 * another user's process since.  It takes a pidfd of each, then reads the
 * start time again while the pidfd shows the process alive; one that is
 * not the same, or is gone, is left out ("skip PID 0 TEXT"), and each
 * driver call is made only while its pidfd shows it alive.  Each step is
 * reported on stdout, one line each:
 *   lock PID SECONDS | checkpoint PID SECONDS | restore PID SECONDS |
 *   unlock PID SECONDS | verify 0 SECONDS | skip PID CODE TEXT | ok SECONDS |
 *   error STEP PID CODE TEXT
 * and the exit status is 0 (ok), 1 (error, undone) or 2 (bad usage).
 *
 * A program of its own, run by nvqd for each switch: the checkpoint calls
 * block for seconds, and libcuda stays out of nvqd.  With -d PID it ends
 * when that process (nvqd) does: a restarted nvqd puts the job's processes
 * back to running itself, and must not race a switch its predecessor left.
 * With -c FD it closes FD once its last line is written, so that nvqd can
 * go on then: after a checkpoint, the process's own end (the driver's
 * teardown) takes another 0.05 to 0.11 s on an H100 (tests/gpu/
 * switch_trace.sh, docs/gpu-results.md).
 */
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cuda_decls.h"
#include "nvml_decls.h"
#include "proc.h"

#define CKPT_MAX_PIDS	256
#define CKPT_VERIFY_S	3.0	/* for NVML to stop listing a checkpointed process */
#define CKPT_NVML_PROCS	1024

typedef int (*init_fn)(unsigned int);
typedef int (*state_fn)(int, int *);
typedef int (*step_fn)(int, void *);
typedef int (*errstr_fn)(int, const char **);

/* A process to act on. */
struct ckpt_proc {
	int		pid;
	int		opt;		/* ?PID: maybe not a CUDA process */
	long long	start;		/* @START; -1: not given (not checked) */
	int		pidfd;		/* -1 if none */
};

static struct {
	init_fn		init;
	state_fn	state;
	step_fn		lock, checkpoint, restore, unlock;
	errstr_fn	errstr;
} cu;

static struct {
	nvml_ret	(*init)(void);
	nvml_ret	(*count)(unsigned int *);
	nvml_ret	(*handle)(unsigned int, void **);
	nvml_ret	(*procs)(void *, unsigned int *, struct nvml_process *);
} nv;

static double
ckpt_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static const char *
ckpt_errstr(int rc)
{
	const char *s = NULL;

	if (cu.errstr == NULL || cu.errstr(rc, &s) != 0 || s == NULL)
		return "CUDA error";
	return s;
}

static void
ckpt_error(const char *step, int pid, int rc)
{
	printf("error %s %d %d %s\n", step, pid, rc, ckpt_errstr(rc));
	fflush(stdout);
}

/* Runs one step on pid, timed; returns the driver's result. */
static int
ckpt_step(const char *name, step_fn fn, int pid, void *args)
{
	double t0 = ckpt_now();
	int rc = fn(pid, args);

	if (rc == 0) {
		printf("%s %d %.3f\n", name, pid, ckpt_now() - t0);
		fflush(stdout);
	}
	return rc;
}

/* The driver's state of a process, or -1 (gone, or no CUDA). */
static int
ckpt_state(const struct ckpt_proc *p)
{
	struct pollfd pf = { .fd = p->pidfd, .events = POLLIN };
	int st = -1;

	/* its pid is the one checked only while it runs */
	if (p->pidfd >= 0 && poll(&pf, 1, 0) != 0)
		return -1;
	if (cu.state(p->pid, &st) != 0)
		return -1;
	return st;
}

/*
 * Takes a pidfd of each process given with its start time and keeps those
 * that are still the same process; says "skip" for the others.  Returns how
 * many are left, first in procs.
 */
static int
ckpt_pin(struct ckpt_proc *procs, int n)
{
	struct pollfd pf;
	long long now;
	int i, k = 0;

	for (i = 0; i < n; i++) {
		struct ckpt_proc p = procs[i];

		if (p.start >= 0) {
			if ((p.pidfd = (int)syscall(SYS_pidfd_open, p.pid, 0)) == -1) {
				printf("skip %d 0 the process is gone\n", p.pid);
				continue;
			}
			now = proc_start_time(p.pid);
			pf.fd = p.pidfd;
			pf.events = POLLIN;
			/* alive after the read: the read was of the pidfd's process */
			if (now != p.start || poll(&pf, 1, 0) != 0) {
				printf("skip %d 0 %s\n", p.pid, now >= 0 && now != p.start ?
				    "not the job's process (its pid was reused)" :
				    "the process is gone");
				close(p.pidfd);
				continue;
			}
		}
		procs[k++] = p;
	}
	fflush(stdout);
	return k;
}

static int
ckpt_load(const char *lib)
{
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);

	if (h == NULL) {
		printf("error load 0 0 %s\n", dlerror());
		return -1;
	}
	cu.init = (init_fn)dlsym(h, "cuInit");
	cu.state = (state_fn)dlsym(h, "cuCheckpointProcessGetState");
	cu.lock = (step_fn)dlsym(h, "cuCheckpointProcessLock");
	cu.checkpoint = (step_fn)dlsym(h, "cuCheckpointProcessCheckpoint");
	cu.restore = (step_fn)dlsym(h, "cuCheckpointProcessRestore");
	cu.unlock = (step_fn)dlsym(h, "cuCheckpointProcessUnlock");
	cu.errstr = (errstr_fn)dlsym(h, "cuGetErrorString");
	if (cu.init == NULL || cu.state == NULL || cu.lock == NULL || cu.checkpoint == NULL ||
	    cu.restore == NULL || cu.unlock == NULL) {
		printf("error load 0 0 %s has no checkpoint API (driver 570 or later needed)\n",
		    lib);
		return -1;
	}
	if (cu.init(0) != 0) {
		printf("error init 0 0 cuInit failed\n");
		return -1;
	}
	return 0;
}

/* Puts procs[0..n-1] back to running from wherever they got to. */
static void
ckpt_undo(const struct ckpt_proc *procs, int n)
{
	struct nvq_cu_checkpoint_restore_args ra;
	struct nvq_cu_checkpoint_args ua;
	int i, st;

	for (i = 0; i < n; i++) {
		memset(&ra, 0, sizeof(ra));
		memset(&ua, 0, sizeof(ua));
		st = ckpt_state(&procs[i]);
		if (st == NVQ_CU_PROCESS_STATE_CHECKPOINTED &&
		    ckpt_step("restore", cu.restore, procs[i].pid, &ra) == 0)
			st = NVQ_CU_PROCESS_STATE_LOCKED;
		if (st == NVQ_CU_PROCESS_STATE_LOCKED)
			ckpt_step("unlock", cu.unlock, procs[i].pid, &ua);
	}
}

static int
ckpt_suspend(struct ckpt_proc *procs, int n, unsigned timeout_ms)
{
	struct nvq_cu_checkpoint_lock_args la;
	struct nvq_cu_checkpoint_args ca;
	struct ckpt_proc skipped;
	int i, rc, st;

	/* every process quiet first: one that still runs could wait on another */
	for (i = 0; i < n; i++) {
		st = ckpt_state(&procs[i]);
		if (st != NVQ_CU_PROCESS_STATE_RUNNING)
			continue;
		memset(&la, 0, sizeof(la));
		la.timeoutMs = timeout_ms;
		if ((rc = ckpt_step("lock", cu.lock, procs[i].pid, &la)) != 0 && procs[i].opt) {
			printf("skip %d %d %s\n", procs[i].pid, rc, ckpt_errstr(rc));
			n--;	/* not a CUDA process: left as it is */
			skipped = procs[i];
			procs[i] = procs[n];
			procs[n] = skipped;
			i--;
			continue;
		}
		if (rc != 0) {
			ckpt_error("lock", procs[i].pid, rc);
			ckpt_undo(procs, n);
			return 1;
		}
	}
	for (i = 0; i < n; i++) {
		if (ckpt_state(&procs[i]) != NVQ_CU_PROCESS_STATE_LOCKED)
			continue;
		memset(&ca, 0, sizeof(ca));
		if ((rc = ckpt_step("checkpoint", cu.checkpoint, procs[i].pid, &ca)) != 0) {
			ckpt_error("checkpoint", procs[i].pid, rc);
			ckpt_undo(procs, n);
			return 1;
		}
	}
	return 0;
}

/* NVML, for ckpt_verify: 0, or -1 (then there is nothing to verify with). */
static int
ckpt_nvml_load(const char *lib)
{
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);

	if (h == NULL)
		return -1;
	*(void **)&nv.init = dlsym(h, "nvmlInit_v2");
	*(void **)&nv.count = dlsym(h, "nvmlDeviceGetCount_v2");
	*(void **)&nv.handle = dlsym(h, "nvmlDeviceGetHandleByIndex_v2");
	if ((*(void **)&nv.procs = dlsym(h, "nvmlDeviceGetComputeRunningProcesses_v3")) == NULL)
		*(void **)&nv.procs = dlsym(h, "nvmlDeviceGetComputeRunningProcesses_v2");
	if (nv.init == NULL || nv.count == NULL || nv.handle == NULL || nv.procs == NULL ||
	    nv.init() != NVML_SUCCESS)
		return -1;
	return 0;
}

/*
 * Whether NVML shows any of procs[0..n-1] holding device memory: 0 when none
 * does, else 1 with the first in *pid, *gpu and *bytes; -1 if NVML cannot say.
 */
static int
ckpt_holding(const struct ckpt_proc *procs, int n, int *pid, unsigned *gpu,
    unsigned long long *bytes)
{
	static struct nvml_process p[CKPT_NVML_PROCS];
	unsigned int ngpu, g, np, k;
	void *dev;
	int i;

	if (nv.count(&ngpu) != NVML_SUCCESS)
		return -1;
	for (g = 0; g < ngpu; g++) {
		np = CKPT_NVML_PROCS;
		if (nv.handle(g, &dev) != NVML_SUCCESS || nv.procs(dev, &np, p) != NVML_SUCCESS)
			return -1;
		for (k = 0; k < np && k < CKPT_NVML_PROCS; k++)
			for (i = 0; i < n; i++)
				if ((int)p[k].pid == procs[i].pid && p[k].used > 0) {
					/* listed, its figure hidden (a container): still there */
					*pid = procs[i].pid;
					*gpu = g;
					*bytes = p[k].used == NVML_VALUE_NOT_AVAILABLE ? 0 : p[k].used;
					return 1;
				}
	}
	return 0;
}

/* After a checkpoint: 0 once NVML shows none of procs holding memory, else -1. */
static int
ckpt_verify(const struct ckpt_proc *procs, int n)
{
	double t0 = ckpt_now(), until = t0 + CKPT_VERIFY_S;
	unsigned long long bytes = 0;
	unsigned gpu = 0;
	int pid = 0, r;

	while ((r = ckpt_holding(procs, n, &pid, &gpu, &bytes)) == 1 && ckpt_now() < until)
		usleep(100 * 1000);
	if (r == -1) {
		printf("error verify 0 0 NVML cannot list the GPUs' processes\n");
		return -1;
	}
	if (r == 1) {
		printf("error verify %d 0 NVML still shows it holding %llu MiB on GPU %u "
		    "%.0f s after its checkpoint\n", pid, bytes >> 20, gpu, CKPT_VERIFY_S);
		return -1;
	}
	printf("verify 0 %.3f\n", ckpt_now() - t0);
	return 0;
}

static int
ckpt_resume(const struct ckpt_proc *procs, int n)
{
	struct nvq_cu_checkpoint_restore_args ra;
	struct nvq_cu_checkpoint_args ua;
	int i, rc;

	for (i = 0; i < n; i++) {
		if (ckpt_state(&procs[i]) != NVQ_CU_PROCESS_STATE_CHECKPOINTED)
			continue;
		memset(&ra, 0, sizeof(ra));
		if ((rc = ckpt_step("restore", cu.restore, procs[i].pid, &ra)) != 0) {
			ckpt_error("restore", procs[i].pid, rc);
			return 1;
		}
	}
	for (i = 0; i < n; i++) {
		if (ckpt_state(&procs[i]) != NVQ_CU_PROCESS_STATE_LOCKED)
			continue;
		memset(&ua, 0, sizeof(ua));
		if ((rc = ckpt_step("unlock", cu.unlock, procs[i].pid, &ua)) != 0) {
			ckpt_error("unlock", procs[i].pid, rc);
			return 1;
		}
	}
	return 0;
}

static int
ckpt_usage(void)
{
	fprintf(stderr, "usage: nvq-ckpt [-l LIBCUDA] [-t LOCK_TIMEOUT_MS] [-n LIBNVML] "
	    "[-d PARENT] [-c FD] suspend|resume [?]PID[@START]... | wait\n");
	return 2;
}

int
main(int argc, char **argv)
{
	const char *lib = "libcuda.so.1", *nvml = NULL;
	unsigned long timeout = 30000;
	static struct ckpt_proc procs[CKPT_MAX_PIDS];
	static char order[CKPT_MAX_PIDS * 48];
	static char *words[CKPT_MAX_PIDS + 1];
	int n = 0, nw = 0, c, i, rc, done_fd = -1, loaded = 0;
	double t0 = ckpt_now();
	char *end, *w = NULL, *save;
	long v;

	while ((c = getopt(argc, argv, "+l:t:d:n:c:")) != -1) {
		switch (c) {
		case 'c':
			v = strtol(optarg, &end, 10);
			if (*end != '\0' || v < 3 || v > 1023)
				return ckpt_usage();
			done_fd = (int)v;
			break;
		case 'l': lib = optarg; break;
		case 'n': nvml = optarg; break;
		case 'd':
			/* dies with its parent; gone already: nothing to do */
			v = strtol(optarg, &end, 10);
			if (*end != '\0' || v <= 0)
				return ckpt_usage();
			if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1 || getppid() != (pid_t)v) {
				printf("error start 0 0 nvqd is gone\n");
				return 1;
			}
			break;
		case 't':
			errno = 0;
			timeout = strtoul(optarg, &end, 10);
			if (errno != 0 || *end != '\0' || timeout > 3600000)
				return ckpt_usage();
			break;
		default:
			return ckpt_usage();
		}
	}
	if (argc - optind == 1 && strcmp(argv[optind], "wait") == 0) {
		/* ready ahead: the driver loaded now, the order on stdin later */
		if (ckpt_load(lib) == -1)
			return 1;
		if (fgets(order, sizeof(order), stdin) == NULL || strchr(order, '\n') == NULL)
			return 0;	/* called off (or no whole line) */
		t0 = ckpt_now();
		for (w = strtok_r(order, " \n", &save); w != NULL && nw < CKPT_MAX_PIDS + 1;
		    w = strtok_r(NULL, " \n", &save))
			words[nw++] = w;
		if (w != NULL)
			return ckpt_usage();
		loaded = 1;
	} else
		for (i = optind; i < argc && nw < CKPT_MAX_PIDS + 1; i++)
			words[nw++] = argv[i];
	if (nw < 2 || nw - 1 > CKPT_MAX_PIDS || (loaded ? 0 : argc - optind != nw))
		return ckpt_usage();
	for (i = 1; i < nw; i++) {
		struct ckpt_proc *p = &procs[n++];

		errno = 0;
		p->opt = words[i][0] == '?';
		p->start = -1;
		p->pidfd = -1;
		v = strtol(words[i] + p->opt, &end, 10);
		if (errno != 0 || (*end != '\0' && *end != '@') || v <= 0 || v > 0x3fffffff)
			return ckpt_usage();
		p->pid = (int)v;
		if (*end == '@') {
			const char *digits = end + 1;

			p->start = strtoll(digits, &end, 10);
			if (errno != 0 || *end != '\0' || end == digits || p->start < 0)
				return ckpt_usage();
		}
	}
	if (strcmp(words[0], "suspend") != 0 && strcmp(words[0], "resume") != 0)
		return ckpt_usage();
	if (!loaded && ckpt_load(lib) == -1)
		return 1;
	n = ckpt_pin(procs, n);
	if (strcmp(words[0], "suspend") == 0) {
		rc = ckpt_suspend(procs, n, (unsigned)timeout);
		/* where NVML answers: the GPUs are free of them, or all is undone */
		if (rc == 0 && nvml != NULL && ckpt_nvml_load(nvml) == 0 &&
		    ckpt_verify(procs, n) == -1) {
			ckpt_undo(procs, n);
			rc = 1;
		}
	} else
		rc = ckpt_resume(procs, n);
	if (rc == 0)
		printf("ok %.3f\n", ckpt_now() - t0);
	fflush(stdout);
	if (done_fd >= 0)
		close(done_fd);	/* all said: nvqd need not wait for the end */
	return rc;
}
