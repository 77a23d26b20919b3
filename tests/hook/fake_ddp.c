/*
 * fake_ddp.c: fake_job's "ddp" mode, a data-parallel training job of
 * RANKS ranks as torchrun starts them (each a child in a session of its
 * own), against the fake libcuda's collectives (fake_nccl.c).
 *
 * Each rank loops: three compute launches, a short random sleep (ranks
 * reach their collectives at different moments), an NCCL all-reduce on its
 * communicator (an argument block whose first 8 bytes are its own comm
 * pointer; by extra's buffer on odd steps as NCCL >= 2.19 launches, by
 * kernelParams on even ones as older NCCL does; named as the driver names
 * a C++ kernel on even ranks, plainly on odd ones), then a synchronous copy
 * (loss.item()), which waits until every rank launched that all-reduce.
 * It writes its pid to FILE.pidN, its all-reduces launched to FILE.collN, and after each step
 * its step count to FILE.rankN.  Rank 0 ends the
 * run after SECONDS, or once FILE.stop exists: every rank stops after the
 * same step.
 * FAKE_DDP_STALL=R:S:SECS makes rank R sleep SECS on the CPU before the
 * all-reduce of step S (a rank slow to reach a collective its peers have
 * launched); before the second one where there are two.
 * FAKE_DDP_COMM2=S: from step S on, each step launches a second all-reduce
 * on a second communicator after the first (a process group first used
 * late, as a model's second group is).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cuda_decls.h"
#include "fake_job.h"
#include "fake_nccl.h"

typedef CUresult (*ddp_launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned,
    unsigned, unsigned, CUstream, void **, void **);
typedef CUresult (*ddp_launch_ex_fn)(const void *, void *, void **, void **);
typedef CUresult (*ddp_getfn_fn)(void **, void *, const char *);
typedef CUresult (*ddp_alloc_fn)(CUdeviceptr *, size_t);
typedef CUresult (*ddp_dtoh_fn)(void *, CUdeviceptr, size_t);

/* FILE.WHATRANK: a rank's figure */
static void
ddp_put(const char *file, const char *what, int rank, long n)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s.%s%d", file, what, rank);
	put_count(path, n);
}

static int
ddp_rank(int rank, double secs, const char *file, struct fake_nccl_file *shared)
{
	ddp_launch_fn launch = (ddp_launch_fn)resolve("cuLaunchKernel");
	ddp_launch_ex_fn launch_ex = (ddp_launch_ex_fn)resolve("cuLaunchKernelEx");
	ddp_dtoh_fn dtoh = (ddp_dtoh_fn)resolve("cuMemcpyDtoH");
	static char comm_struct[64];	/* this rank's struct ncclDevComm */
	static char comm2_struct[64];	/* its second's (FAKE_DDP_COMM2) */
	struct { uint64_t comm, mask; } args = { (uint64_t)(uintptr_t)comm_struct, 1 };
	struct { uint64_t comm, mask; } args2 = { (uint64_t)(uintptr_t)comm2_struct, 1 };
	void *params2[] = { &args2.comm };
	size_t asz = sizeof(args);
	void *extra[] = { (void *)(uintptr_t)1, &args, (void *)(uintptr_t)2, &asz, NULL };
	void *params[] = { &args.comm };
	char cfg[64] = { 0 }, *stall = getenv("FAKE_DDP_STALL"), stopfile[4096];
	char *comm2 = getenv("FAKE_DDP_COMM2");
	void *compute, *allreduce;
	CUdeviceptr dev;
	uint64_t host, stop;
	int k, srank = -1, sstep = 0, sd = 0, two;
	long from2 = comm2 != NULL ? atol(comm2) : 0;
	long step = 0;
	double t0 = now();
	CUresult r;

	if (stall != NULL && sscanf(stall, "%d:%d:%d", &srank, &sstep, &sd) != 3)
		srank = -1;
	if (((ddp_getfn_fn)resolve("cuModuleGetFunction"))(&compute, NULL, "fake_compute") ||
	    ((ddp_getfn_fn)resolve("cuModuleGetFunction"))(&allreduce, NULL, rank % 2 ?
	    "ncclDevKernel_AllReduce_Sum_f32_RING_LL" :
	    "_Z21ncclDevKernel_Generic24ncclDevKernelArgsStorageILm4096EE") ||
	    ((ddp_alloc_fn)resolve("cuMemAlloc"))(&dev, 64) != CUDA_SUCCESS) {
		fprintf(stderr, "rank %d: no kernels or memory\n", rank);
		return 1;
	}
	snprintf(stopfile, sizeof(stopfile), "%s.stop", file);
	srand((unsigned)getpid());
	ddp_put(file, "pid", rank, (long)getpid());
	ddp_put(file, "rank", rank, 0);
	ddp_put(file, "coll", rank, 0);
	for (;;) {
		stop = __atomic_load_n(&shared->stop, __ATOMIC_SEQ_CST);
		if (stop != 0 && (uint64_t)step >= stop)
			break;
		if (rank == 0 && stop == 0 && (now() - t0 >= secs || access(stopfile, F_OK) == 0))
			__atomic_store_n(&shared->stop, (uint64_t)step + 2, __ATOMIC_SEQ_CST);
		for (k = 0; k < 3; k++)
			launch(compute, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
		usleep((useconds_t)(rand() % 3000));
		two = from2 > 0 && step + 1 >= from2;
		if (rank == srank && step + 1 == sstep && !two)
			sleep((unsigned)sd);
		if (step % 2)
			r = launch_ex(cfg, allreduce, NULL, extra);
		else
			r = launch(allreduce, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL);
		if (r == CUDA_SUCCESS && two) {
			if (rank == srank && step + 1 == sstep)
				sleep((unsigned)sd);
			r = launch(allreduce, 1, 1, 1, 1, 1, 1, 0, NULL, params2, NULL);
		}
		if (r == CUDA_SUCCESS) {
			ddp_put(file, "coll", rank, step + 1);
			r = dtoh(&host, dev, sizeof(host));	/* loss.item() */
		}
		if (r != CUDA_SUCCESS) {
			fprintf(stderr, "rank %d: step %ld failed (%d)\n", rank, step + 1, r);
			return 1;
		}
		ddp_put(file, "rank", rank, ++step);
	}
	printf("rank %d steps %ld\n", rank, step);
	fflush(stdout);
	return 0;
}

int
fake_ddp(int ranks, double secs, const char *file)
{
	char path[4096], num[16];
	struct fake_nccl_file *shared;
	pid_t pids[FAKE_NCCL_RANKS];
	int fd, r, st, bad = 0;
	long steps[FAKE_NCCL_RANKS];
	FILE *fp;

	if (ranks < 1 || ranks > FAKE_NCCL_RANKS)
		return 2;
	snprintf(path, sizeof(path), "%s.nccl", file);
	if ((fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600)) == -1 ||
	    ftruncate(fd, sizeof(*shared)) == -1 ||
	    (shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) ==
	    MAP_FAILED) {
		perror(path);
		return 1;
	}
	close(fd);
	setenv("FAKE_NCCL_FILE", path, 1);
	snprintf(num, sizeof(num), "%d", ranks);
	setenv("FAKE_NRANKS", num, 1);
	fflush(stdout);
	for (r = 0; r < ranks; r++) {
		if ((pids[r] = fork()) == 0) {
			setsid();	/* as torchrun's workers */
			snprintf(num, sizeof(num), "%d", r);
			setenv("FAKE_RANK", num, 1);
			fflush(stdout);
			_exit(ddp_rank(r, secs, file, shared));
		}
	}
	for (r = 0; r < ranks; r++)
		if (pids[r] < 0 || waitpid(pids[r], &st, 0) == -1 || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0)
			bad = 1;
	for (r = 0; r < ranks; r++) {
		snprintf(path, sizeof(path), "%s.rank%d", file, r);
		steps[r] = -1;
		if ((fp = fopen(path, "r")) != NULL) {
			if (fscanf(fp, "%ld", &steps[r]) != 1)
				steps[r] = -1;
			fclose(fp);
		}
		if (steps[r] != steps[0] || steps[r] <= 0)
			bad = 1;
	}
	printf(bad ? "ddp bad\n" : "ddp ok %ld\n", steps[0]);
	return bad;
}
