/*
 * fake_job.c: a CUDA "job" for the system tests, linked with the fake
 * libcuda and run under nvqd with the hook preloaded.  It reaches the
 * driver the way frameworks do (cuGetProcAddress_v2), so every call goes
 * through the hook.
 *
 *   fake_job bursts SECONDS FILE
 *	a request every 200 ms (a copy in, 10 launches), idle in between;
 *   fake_job capture SECONDS
 *	launches into a stream capture for SECONDS (see fake_capture);
 *   fake_job poke
 *	tries to write the lc/be page the hook mapped (see fake_poke); with
 *	POKE_HOLD=SECONDS, where it can (lc), raises every word that long;
 *   fake_job launch SECONDS FILE [BYTES]
 *	allocates BYTES (64M), then launches kernels for SECONDS, writing
 *	the count so far to FILE every 20 ms;
 *   fake_job alloc BYTES SECONDS
 *	allocates BYTES, prints "alloc ok" or "alloc oom", holds it SECONDS;
 *   fake_job fork SECONDS
 *	allocates and launches, forks a child that does the same with its
 *	own budget, both hold on SECONDS, and prints what each got;
 *   fake_job race BYTES ROUNDS
 *	forks a child that makes a session of its own (as torchrun's
 *	workers do); in each round both allocate BYTES at the same instant,
 *	then free them; prints how many rounds one, both or none succeeded;
 *   fake_job data SECONDS FILE BYTES
 *	allocates BYTES and fills them with a pattern, then launches for
 *	SECONDS; after each launch its "kernel" reads a 2 MiB block of the
 *	allocation (in turn) straight from memory, as a GPU would, and the
 *	first word of every block: memory moved away and not back would
 *	fault, memory back but wrong is reported ("data bad at OFFSET",
 *	exit 1).  At the end every word is checked: "data ok LAUNCHES".
 *   fake_job ipc BYTES [SECONDS]
 *	allocates BYTES, fills them, makes a CUDA IPC handle of them and
 *	starts itself again (exec, in a session of its own, as spawned
 *	workers are) with the handle; that process opens it twice (one
 *	mapping), checks what it reads, writes another pattern and closes
 *	it; then the first checks that pattern.  Prints "handle HEX", then
 *	"child read ok" and "ipc ok BYTES",
 *	or what failed.  With SECONDS, the child holds the mapping that long
 *	and reads it again before it writes (for a suspend in between).
 *   fake_job ipc-fork BYTES SECONDS
 *	the same, and the first also forks a child (no exec, as DataLoader
 *	workers are) once the handle is made, which prints "forked PID" and
 *	sleeps SECONDS + 2.
 *   fake_job export BYTES SECONDS
 *	makes BYTES of device memory with cuMemCreate, exports it to a
 *	descriptor (as NCCL shares its buffers), holds it SECONDS, releases it;
 *	prints "exported ok" and "released ok".
 *   fake_job ipc-driver BYTES SECONDS
 *	allocates BYTES (under 2 MiB: the driver's memory, not the hook's VMM
 *	path), makes the driver's IPC handle of it and holds it SECONDS.
 *   fake_job ipc-orphan BYTES SECONDS
 *	the same, but the first process ends 2 s after starting the other,
 *	which maps its memory on: the last holder of it.
 *   fake_job ddp RANKS SECONDS FILE
 *	RANKS ranks of a data-parallel job over fake NCCL collectives
 *	(fake_ddp.c); each writes its steps to FILE.rankN; prints
 *	"ddp ok STEPS" when every rank ended after the same step.
 *   fake_job nccl BYTES SECONDS [orphan | freed]
 *	NCCL's way of sharing a buffer between ranks: the first process makes
 *	BYTES with cuMemCreate (POSIX descriptors requested), maps it and
 *	writes the first half; it starts another (exec, a session of its
 *	own) and passes it a descriptor of the memory over a Unix socket
 *	(SCM_RIGHTS), closing its own.  That one imports it, maps it, releases
 *	its handle (the mapping keeps the memory), maps it again through
 *	cuMemRetainAllocationHandle, checks the first half and writes the
 *	second, then prints "peer mapped".  Both wait SECONDS (a suspend and
 *	resume in between), read what the other wrote, at the same addresses,
 *	and the peer writes the first half again, which the first checks;
 *	the first exports it again (NCCL connects lazily) and the peer
 *	imports and maps it a second time and reads it there: "peer ok", then
 *	"nccl ok BYTES".  The first holds two references to its handle
 *	(NCCL's refcount, cuMemRetainAllocationHandle) and releases both.
 *	With orphan the first process ends once the other has mapped the
 *	memory ("exporter ends"); with freed it unmaps and releases it then,
 *	and lives on SECONDS ("exporter freed it"); with fork it forks a
 *	child then (no exec, as DataLoader workers are), which prints
 *	"forked PID" and sleeps SECONDS + 2 (a suspend meanwhile must free
 *	the memory all the same).
 *   fake_job nccl-reuse BYTES SECONDS
 *	handle values the driver hands out again after a suspend
 *	(fake_reuse.c).
 */
#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cuda_decls.h"
#include "fake_job.h"

typedef CUresult (*gpa2_fn)(const char *, void **, int, cuuint64_t,
    CUdriverProcAddressQueryResult *);
typedef CUresult (*alloc_fn)(CUdeviceptr *, size_t);
typedef CUresult (*launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned,
    unsigned, unsigned, CUstream, void **, void **);

CUresult cuGetProcAddress_v2(const char *, void **, int, cuuint64_t,
    CUdriverProcAddressQueryResult *);

void *
resolve(const char *name)
{
	CUdriverProcAddressQueryResult st;
	void *p = NULL;

	if (cuGetProcAddress_v2(name, &p, 12000, 0, &st) != CUDA_SUCCESS || p == NULL) {
		fprintf(stderr, "fake_job: cannot resolve %s\n", name);
		exit(3);
	}
	return p;
}

double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void
put_count(const char *file, long n)
{
	char tmp[4096];
	FILE *fp;

	snprintf(tmp, sizeof(tmp), "%s.tmp", file);
	if ((fp = fopen(tmp, "w")) == NULL)
		return;
	fprintf(fp, "%ld\n", n);
	fclose(fp);
	rename(tmp, file);
}

static uint64_t
pattern(size_t i)
{
	return (uint64_t)i * 0x9e3779b97f4a7c15ULL ^ 0x6e7671ULL;
}

/* Words [from, to) of the allocation: the first that is wrong, or -1. */
static long
data_check(const uint64_t *w, size_t from, size_t to)
{
	size_t i;

	for (i = from; i < to; i++)
		if (w[i] != pattern(i))
			return (long)i;
	return -1;
}

static int
do_data(double secs, const char *file, size_t bytes)
{
	typedef CUresult (*htod_fn)(CUdeviceptr, const void *, size_t);
	const size_t block = (2u << 20) / 8, words = bytes / 8;
	size_t i, b, nblocks = (words + block - 1) / block;
	launch_fn launch = (launch_fn)resolve("cuLaunchKernel");
	CUdeviceptr p;
	uint64_t *w, *host;
	double end, last = 0;
	long n = 0, bad;

	if (((alloc_fn)resolve("cuMemAlloc"))(&p, bytes) != CUDA_SUCCESS) {
		printf("alloc oom\n");
		return 1;
	}
	w = (uint64_t *)(uintptr_t)p;
	/* filled through a copy, as a job fills device memory */
	if ((host = malloc(bytes)) == NULL)
		return 1;
	for (i = 0; i < words; i++)
		host[i] = pattern(i);
	if (((htod_fn)resolve("cuMemcpyHtoD"))(p, host, bytes) != CUDA_SUCCESS) {
		printf("copy failed\n");
		return 1;
	}
	free(host);
	end = now() + secs;
	while (now() < end) {
		launch(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
		b = (size_t)n % nblocks;
		bad = data_check(w, b * block, (b + 1) * block < words ? (b + 1) * block : words);
		for (i = 0; bad < 0 && i < nblocks; i++)
			if (w[i * block] != pattern(i * block))
				bad = (long)(i * block);
		if (bad >= 0) {
			printf("data bad at %ld\n", bad * 8);
			return 1;
		}
		n++;
		if (now() - last >= 0.02) {
			put_count(file, n);
			last = now();
		}
		usleep(500);
	}
	put_count(file, n);
	launch(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
	if ((bad = data_check(w, 0, words)) >= 0) {
		printf("data bad at %ld\n", bad * 8);
		return 1;
	}
	printf("data ok %ld\n", n);
	return 0;
}

static int
do_alloc(size_t bytes)
{
	CUdeviceptr p;

	return ((alloc_fn)resolve("cuMemAlloc"))(&p, bytes) == CUDA_SUCCESS ? 0 : -1;
}

typedef CUresult (*free_fn)(CUdeviceptr);

/* Two processes of one job allocate at the same instant, rounds times. */
static int
do_race(size_t bytes, int rounds)
{
	alloc_fn alloc = (alloc_fn)resolve("cuMemAlloc");
	free_fn release = (free_fn)resolve("cuMemFree");
	int go[2], res[2], r, one = 0, both = 0, none = 0;
	CUdeviceptr p;
	char mine, theirs, c;
	pid_t pid;

	if (pipe(go) == -1 || pipe(res) == -1)
		return 1;
	if ((pid = fork()) == -1)
		return 1;
	if (pid == 0) {
		setsid();
		for (r = 0; r < rounds; r++) {
			if (read(go[0], &c, 1) != 1)
				_exit(1);
			if (c == 'a') {
				mine = alloc(&p, bytes) == CUDA_SUCCESS ? 'y' : 'n';
				if (write(res[1], &mine, 1) != 1)
					_exit(1);
				if (read(go[0], &c, 1) != 1)
					_exit(1);
				if (mine == 'y')
					release(p);
				if (write(res[1], "f", 1) != 1)
					_exit(1);
			}
		}
		_exit(0);
	}
	for (r = 0; r < rounds; r++) {
		/* the child wakes as the parent allocates */
		if (write(go[1], "a", 1) != 1)
			return 1;
		mine = alloc(&p, bytes) == CUDA_SUCCESS ? 'y' : 'n';
		if (read(res[0], &theirs, 1) != 1)
			return 1;
		if (mine == 'y' && theirs == 'y')
			both++;
		else if (mine == 'y' || theirs == 'y')
			one++;
		else
			none++;
		if (mine == 'y')
			release(p);
		if (write(go[1], "f", 1) != 1 || read(res[0], &c, 1) != 1)
			return 1;
	}
	waitpid(pid, NULL, 0);
	printf("race rounds %d one %d both %d none %d\n", rounds, one, both, none);
	return 0;
}

typedef CUresult (*copy_fn)(void *, CUdeviceptr, size_t);
typedef CUresult (*htod_fn)(CUdeviceptr, const void *, size_t);
typedef CUresult (*ipc_get_fn)(struct nvq_cu_ipc_mem_handle *, CUdeviceptr);
typedef CUresult (*ipc_open_fn)(CUdeviceptr *, struct nvq_cu_ipc_mem_handle, unsigned int);
typedef CUresult (*ipc_close_fn)(CUdeviceptr);

/* Writes (pattern(i) ^ flip) into p, or checks it there: -1 on a mismatch or error. */
int
ipc_words(CUdeviceptr p, size_t bytes, uint64_t flip, int check)
{
	size_t i, words = bytes / 8;
	uint64_t *host = malloc(bytes);
	CUresult r;
	int bad = 0;

	if (host == NULL)
		return -1;
	if (check) {
		r = ((copy_fn)resolve("cuMemcpyDtoH"))(host, p, bytes);
		for (i = 0; r == CUDA_SUCCESS && i < words && !bad; i++)
			bad = host[i] != (pattern(i) ^ flip);
	} else {
		for (i = 0; i < words; i++)
			host[i] = pattern(i) ^ flip;
		r = ((htod_fn)resolve("cuMemcpyHtoD"))(p, host, bytes);
	}
	free(host);
	if (r != CUDA_SUCCESS)
		printf("copy failed: CUDA error %d\n", (int)r);
	return r != CUDA_SUCCESS || bad ? -1 : 0;
}

/* orphan 1: the first process leaves the other 2 s after starting it; 2: it forks a child. */
/* Waits for a child forked without exec (kid > 0): 1 (said) if it failed. */
static int
kid_failed(pid_t kid)
{
	int st;

	if (kid > 0 && (waitpid(kid, &st, 0) == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)) {
		printf("the forked child failed\n");
		return 1;
	}
	return 0;
}

static int
do_ipc(size_t bytes, const char *self, const char *hold, int orphan)
{
	struct nvq_cu_ipc_mem_handle h;
	char hex[2 * sizeof(h) + 1], size[32];
	CUdeviceptr p;
	CUresult r;
	size_t i;
	pid_t pid, kid = 0;
	int st;

	if (((alloc_fn)resolve("cuMemAlloc"))(&p, bytes) != CUDA_SUCCESS) {
		printf("alloc oom\n");
		return 1;
	}
	if (ipc_words(p, bytes, 0, 0) == -1)
		return 1;
	if ((r = ((ipc_get_fn)resolve("cuIpcGetMemHandle"))(&h, p)) != CUDA_SUCCESS) {
		printf("cuIpcGetMemHandle: CUDA error %d\n", (int)r);
		return 1;
	}
	for (i = 0; i < sizeof(h); i++)
		snprintf(hex + 2 * i, 3, "%02x", (unsigned char)h.reserved[i]);
	snprintf(size, sizeof(size), "%zu", bytes);
	printf("handle %s\n", hex);
	fflush(stdout);
	if ((pid = fork()) == 0) {
		setsid();
		execl(self, self, "ipc-child", hex, size, hold, (char *)NULL);
		_exit(127);
	}
	if (orphan == 2 && (kid = fork()) == 0) {
		printf("forked %d\n", (int)getpid());
		fflush(stdout);
		sleep((unsigned)atoi(hold) + 2);
		_exit(0);
	}
	if (orphan == 1 && pid > 0) {
		sleep(2);
		printf("exporter ends\n");
		return 0;
	}
	if (pid == -1 || waitpid(pid, &st, 0) == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		printf("the other process failed\n");
		return 1;
	}
	if (ipc_words(p, bytes, 1, 1) == -1) {
		printf("the other process's writes are not here\n");
		return 1;
	}
	if (kid_failed(kid))
		return 1;
	printf("ipc ok %zu\n", bytes);
	return 0;
}

static int
do_ipc_child(const char *hex, size_t bytes, const char *hold)
{
	ipc_open_fn open_ = (ipc_open_fn)resolve("cuIpcOpenMemHandle");
	ipc_close_fn close_ = (ipc_close_fn)resolve("cuIpcCloseMemHandle");
	struct nvq_cu_ipc_mem_handle h;
	CUdeviceptr p, q;
	unsigned int b;
	CUresult r;
	size_t i;

	memset(&h, 0, sizeof(h));
	for (i = 0; i < sizeof(h) && sscanf(hex + 2 * i, "%2x", &b) == 1; i++)
		h.reserved[i] = (char)b;
	if ((r = open_(&p, h, 1)) != CUDA_SUCCESS || (r = open_(&q, h, 1)) != CUDA_SUCCESS) {
		printf("cuIpcOpenMemHandle: CUDA error %d\n", (int)r);
		return 1;
	}
	if (p != q) {
		printf("one handle opened twice gave two mappings\n");
		return 1;
	}
	if (ipc_words(p, bytes, 0, 1) == -1) {
		printf("the memory read through the handle is not the other process's\n");
		return 1;
	}
	if (hold != NULL) {
		sleep((unsigned)atoi(hold));
		/* a suspend meanwhile moved it out and back: still the other process's */
		if (ipc_words(p, bytes, 0, 1) == -1) {
			printf("the memory is not the same after the wait\n");
			return 1;
		}
	}
	if (ipc_words(p, bytes, 1, 0) == -1 || close_(p) != CUDA_SUCCESS ||
	    close_(q) != CUDA_SUCCESS) {
		printf("writing or closing failed\n");
		return 1;
	}
	printf("child read ok\n");
	return 0;
}


/* Device memory made with the VMM API and exported to a descriptor, as NCCL does. */
static int
do_export(size_t bytes, unsigned hold)
{
	struct nvq_cu_mem_allocation_prop prop;
	CUmemGenericAllocationHandle h;
	CUresult r;
	int fd = -1;

	memset(&prop, 0, sizeof(prop));
	prop.type = NVQ_CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = NVQ_CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = 0;
	prop.requestedHandleTypes = NVQ_CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
	if ((r = ((create_fn)resolve("cuMemCreate"))(&h, bytes, &prop, 0)) != CUDA_SUCCESS ||
	    (r = ((export_fn)resolve("cuMemExportToShareableHandle"))(&fd, h,
	    NVQ_CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0)) != CUDA_SUCCESS) {
		printf("export failed: CUDA error %d\n", (int)r);
		return 1;
	}
	printf("exported ok\n");
	fflush(stdout);
	sleep(hold);
	close(fd);
	r = ((release_fn)resolve("cuMemRelease"))(h);
	printf("released %s\n", r == CUDA_SUCCESS ? "ok" : "failed");
	return r != CUDA_SUCCESS;
}

/* ---- NCCL's sharing (nccl mode), after src/transport/p2p.cc and src/proxy.cc ---- */


/* Reserves a range, maps h there readable and writable from device 0: 0, or -1. */
int
nccl_map(CUmemGenericAllocationHandle h, size_t bytes, CUdeviceptr *p)
{
	struct nvq_cu_mem_access_desc d;
	CUresult r;

	memset(&d, 0, sizeof(d));
	d.location.type = NVQ_CU_MEM_LOCATION_TYPE_DEVICE;
	d.flags = NVQ_CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	if ((r = ((reserve_fn)resolve("cuMemAddressReserve"))(p, bytes, 0, 0, 0)) != CUDA_SUCCESS ||
	    (r = ((map_fn)resolve("cuMemMap"))(*p, bytes, 0, h, 0)) != CUDA_SUCCESS ||
	    (r = ((access_fn)resolve("cuMemSetAccess"))(*p, bytes, &d, 1)) != CUDA_SUCCESS) {
		printf("mapping failed: CUDA error %d\n", (int)r);
		return -1;
	}
	return 0;
}

int
nccl_unmap(CUdeviceptr p, size_t bytes)
{
	return ((unmap_fn)resolve("cuMemUnmap"))(p, bytes) == CUDA_SUCCESS &&
	    ((addr_free_fn)resolve("cuMemAddressFree"))(p, bytes) == CUDA_SUCCESS ? 0 : -1;
}

/* One byte over the socket, each way. */
static int
nccl_say(int s, char c)
{
	return send(s, &c, 1, MSG_NOSIGNAL) == 1 ? 0 : -1;
}

static int
nccl_hear(int s, char want)
{
	char c = 0;

	return read(s, &c, 1) == 1 && c == want ? 0 : -1;
}

/* A one-byte message with room for one descriptor (SCM_RIGHTS), as NCCL's ipcsocket.cc sends. */
struct nccl_msg {
	char		byte;
	struct iovec	iov;
	union { char buf[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } ctl;
	struct msghdr	m;
};

static void
nccl_msg_init(struct nccl_msg *x)
{
	memset(x, 0, sizeof(*x));
	x->byte = 'f';
	x->iov.iov_base = &x->byte;
	x->iov.iov_len = 1;
	x->m.msg_iov = &x->iov;
	x->m.msg_iovlen = 1;
	x->m.msg_control = x->ctl.buf;
	x->m.msg_controllen = sizeof(x->ctl.buf);
}

static int
nccl_send_fd(int s, int fd)
{
	struct nccl_msg x;
	struct cmsghdr *c;

	nccl_msg_init(&x);
	c = CMSG_FIRSTHDR(&x.m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(s, &x.m, 0) == 1 ? 0 : -1;
}

static int
nccl_recv_fd(int s)
{
	struct nccl_msg x;
	struct cmsghdr *c;
	int fd;

	nccl_msg_init(&x);
	if (recvmsg(s, &x.m, 0) != 1 || (c = CMSG_FIRSTHDR(&x.m)) == NULL ||
	    c->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* NCCL's proxy (proxyGetFd): exports h on request, sends it over its socket, closes its own. */
static int
nccl_proxy_send(int s, CUmemGenericAllocationHandle h)
{
	CUresult r;
	int fd = -1;

	if ((r = ((export_fn)resolve("cuMemExportToShareableHandle"))(&fd, h,
	    NVQ_CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0)) != CUDA_SUCCESS ||
	    nccl_send_fd(s, fd) == -1) {
		printf("export failed: CUDA error %d\n", (int)r);
		return -1;
	}
	close(fd);
	return 0;
}

static int
do_nccl(size_t bytes, const char *self, const char *hold, int orphan)
{
	struct nvq_cu_mem_allocation_prop prop;
	CUmemGenericAllocationHandle h, hr;
	size_t half = bytes / 2;
	CUdeviceptr p;
	char sfd[16], size[32];
	CUresult r;
	int sv[2], st;
	pid_t pid, kid = 0;

	memset(&prop, 0, sizeof(prop));
	prop.type = NVQ_CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = NVQ_CU_MEM_LOCATION_TYPE_DEVICE;
	prop.requestedHandleTypes = NVQ_CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
	if ((r = ((create_fn)resolve("cuMemCreate"))(&h, bytes, &prop, 0)) != CUDA_SUCCESS) {
		printf("cuMemCreate: CUDA error %d\n", (int)r);
		return 1;
	}
	if (nccl_map(h, bytes, &p) == -1 || ipc_words(p, half, 0, 0) == -1)
		return 1;
	/* NCCL's refcount: one more reference to the handle, released at the end */
	if ((r = ((retain_fn)resolve("cuMemRetainAllocationHandle"))(&hr, (void *)(uintptr_t)p)) !=
	    CUDA_SUCCESS || hr != h) {
		printf("retain: CUDA error %d, or another handle\n", (int)r);
		return 1;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == -1)
		return 1;
	snprintf(sfd, sizeof(sfd), "%d", sv[1]);
	snprintf(size, sizeof(size), "%zu", bytes);
	fflush(stdout);
	if ((pid = fork()) == 0) {
		close(sv[0]);
		setsid();
		execl(self, self, "nccl-peer", sfd, size, hold, (char *)NULL);
		_exit(127);
	}
	close(sv[1]);
	if (nccl_proxy_send(sv[0], h) == -1)
		return 1;
	if (nccl_hear(sv[0], 'm') == -1) {
		printf("the peer did not map it\n");
		return 1;
	}
	if (orphan == 1) {
		printf("exporter ends\n");
		return 0;
	}
	if (orphan == 3 && (kid = fork()) == 0) {
		printf("forked %d\n", (int)getpid());
		fflush(stdout);
		sleep((unsigned)atoi(hold) + 2);
		_exit(0);
	}
	if (orphan == 2) {
		/* frees its memory while the peer maps it on (undefined in CUDA, done anyway) */
		if (nccl_unmap(p, bytes) == -1 ||
		    ((release_fn)resolve("cuMemRelease"))(hr) != CUDA_SUCCESS ||
		    ((release_fn)resolve("cuMemRelease"))(h) != CUDA_SUCCESS)
			return 1;
		printf("exporter freed it\n");
		fflush(stdout);
		sleep((unsigned)atoi(hold));
		return 0;
	}
	if (nccl_hear(sv[0], 'w') == -1 || ipc_words(p, half, 2, 1) == -1 ||
	    ipc_words(p + half, half, 1, 1) == -1) {
		printf("the peer's writes after the wait are not here\n");
		return 1;
	}
	/* a connection made after the wait (NCCL connects lazily): exported again */
	if (nccl_proxy_send(sv[0], h) == -1 || nccl_hear(sv[0], 'i') == -1) {
		printf("the peer could not import it again\n");
		return 1;
	}
	nccl_say(sv[0], 'd');
	if (waitpid(pid, &st, 0) == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		printf("the peer failed\n");
		return 1;
	}
	if (nccl_unmap(p, bytes) == -1 || ((release_fn)resolve("cuMemRelease"))(hr) != CUDA_SUCCESS ||
	    ((release_fn)resolve("cuMemRelease"))(h) != CUDA_SUCCESS) {
		printf("freeing failed\n");
		return 1;
	}
	if (kid_failed(kid))
		return 1;
	printf("nccl ok %zu\n", bytes);
	return 0;
}

/* The other rank: imports, maps twice, releases its handle, reads and writes. */
static int
do_nccl_peer(int s, size_t bytes, unsigned hold)
{
	CUmemGenericAllocationHandle h, h2;
	size_t half = bytes / 2;
	CUdeviceptr p, q, q2;
	CUresult r;
	int fd;

	if ((fd = nccl_recv_fd(s)) == -1) {
		printf("peer: no descriptor\n");
		return 1;
	}
	if ((r = ((import_fn)resolve("cuMemImportFromShareableHandle"))(&h, (void *)(intptr_t)fd,
	    NVQ_CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)) != CUDA_SUCCESS) {
		printf("peer: import: CUDA error %d\n", (int)r);
		return 1;
	}
	close(fd);
	if (nccl_map(h, bytes, &p) == -1 ||
	    ((release_fn)resolve("cuMemRelease"))(h) != CUDA_SUCCESS ||
	    ((retain_fn)resolve("cuMemRetainAllocationHandle"))(&h2, (void *)(uintptr_t)p) !=
	    CUDA_SUCCESS || nccl_map(h2, bytes, &q) == -1 ||
	    ((release_fn)resolve("cuMemRelease"))(h2) != CUDA_SUCCESS) {
		printf("peer: mapping it twice failed\n");
		return 1;
	}
	if (ipc_words(q, half, 0, 1) == -1 || ipc_words(p + half, half, 1, 0) == -1) {
		printf("peer: the memory is not the first process's\n");
		return 1;
	}
	printf("peer mapped\n");
	fflush(stdout);
	nccl_say(s, 'm');
	sleep(hold);
	/* a suspend meanwhile: both halves as they were, at the same addresses */
	if (ipc_words(q, half, 0, 1) == -1 || ipc_words(q + half, half, 1, 1) == -1 ||
	    ipc_words(p, half, 0, 1) == -1) {
		printf("peer: the memory is not the same after the wait\n");
		return 1;
	}
	if (ipc_words(p, half, 2, 0) == -1 || nccl_say(s, 'w') == -1) {
		printf("peer: writing failed\n");
		return 1;
	}
	/* imported a second time, from a descriptor exported after the wait */
	if ((fd = nccl_recv_fd(s)) == -1 ||
	    ((import_fn)resolve("cuMemImportFromShareableHandle"))(&h, (void *)(intptr_t)fd,
	    NVQ_CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) != CUDA_SUCCESS ||
	    nccl_map(h, bytes, &q2) == -1 || ipc_words(q2, half, 2, 1) == -1 ||
	    nccl_unmap(q2, bytes) == -1 || ((release_fn)resolve("cuMemRelease"))(h) != CUDA_SUCCESS) {
		printf("peer: the second import is not the same memory\n");
		return 1;
	}
	close(fd);
	if (nccl_say(s, 'i') == -1 || nccl_hear(s, 'd') == -1 ||
	    nccl_unmap(p, bytes) == -1 || nccl_unmap(q, bytes) == -1) {
		printf("peer: writing or unmapping failed\n");
		return 1;
	}
	printf("peer ok\n");
	return 0;
}

/* A small allocation (the driver's own, not VMM) shared by the driver's IPC handle. */
static int
do_ipc_driver(size_t bytes, unsigned hold)
{
	struct nvq_cu_ipc_mem_handle h;
	CUdeviceptr p;
	CUresult r;

	if (((alloc_fn)resolve("cuMemAlloc"))(&p, bytes) != CUDA_SUCCESS) {
		printf("alloc oom\n");
		return 1;
	}
	if ((r = ((ipc_get_fn)resolve("cuIpcGetMemHandle"))(&h, p)) != CUDA_SUCCESS) {
		printf("cuIpcGetMemHandle: CUDA error %d\n", (int)r);
		return 1;
	}
	printf("driver handle ok\n");
	fflush(stdout);
	sleep(hold);
	return 0;
}

/*
 * fake_job bursts SECONDS FILE: an inference loop's shape: every 200 ms a
 * request (a host-to-device copy, then 10 launches 500 us apart), idle in
 * between; FILE counts the requests.
 */
static int
fake_bursts(double secs, const char *file)
{
	launch_fn launch = (launch_fn)resolve("cuLaunchKernel");
	htod_fn htod = (htod_fn)resolve("cuMemcpyHtoD");
	CUdeviceptr p;
	alloc_fn alloc = (alloc_fn)resolve("cuMemAlloc");
	char host[4096] = { 0 };
	double end = now() + secs;
	long n = 0;
	int k;

	if (alloc(&p, sizeof(host)) != CUDA_SUCCESS)
		return 1;
	while (now() < end) {
		htod(p, host, sizeof(host));
		for (k = 0; k < 10; k++) {
			launch(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
			usleep(500);
		}
		put_count(file, ++n);
		usleep(200000);
	}
	printf("requests %ld\n", n);
	return 0;
}

/*
 * fake_job capture SECONDS: an lc job capturing a CUDA graph: launches
 * into a capture for SECONDS (as the fake driver sees a capture: a
 * synchronize from any thread meanwhile breaks it), then ends it and
 * prints "capture ok" or "capture invalidated (CODE)".
 */
static int
fake_capture(double secs)
{
	typedef CUresult (*begin_fn)(CUstream, int);
	typedef CUresult (*end_fn)(CUstream, void **);
	launch_fn launch = (launch_fn)resolve("cuLaunchKernel");
	begin_fn begin = (begin_fn)resolve("cuStreamBeginCapture");
	end_fn end = (end_fn)resolve("cuStreamEndCapture");
	CUstream s = (CUstream)(uintptr_t)0x5;
	void *g = NULL;
	double until;
	CUresult r;

	if (do_alloc(1 << 20) == -1)
		return 1;
	/* work before: the lc page is raised and the watcher at work */
	launch(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
	usleep(50000);
	if (begin(s, 0) != CUDA_SUCCESS)
		return 1;
	for (until = now() + secs; now() < until; usleep(500))
		launch(NULL, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL);
	if ((r = end(s, &g)) == CUDA_SUCCESS)
		printf("capture ok\n");
	else
		printf("capture invalidated (%d)\n", (int)r);
	return 0;
}

static sigjmp_buf poke_jmp;

static void
poke_segv_cb(int sig)
{
	(void)sig;
	siglongjmp(poke_jmp, 1);
}

/* A store of all ones at w: "written", or "denied" where it faults. */
static const char *
poke_store(volatile uint64_t *w)
{
	if (sigsetjmp(poke_jmp, 1) != 0)
		return "denied";
	*w = ~0ULL;
	return "written";
}

/*
 * fake_job poke: after a launch (the hook attached the lc/be page), tries
 * every way a job's process has to raise the page's words: a store, making
 * the mapping writable, opening it again through /proc/self/map_files, a
 * write through /proc/self/mem.  Prints what each did; then how many of
 * nvqd's live pages it has (a be process: 1) and whether a store to one
 * was let through.
 */
static int
fake_poke(void)
{
	launch_fn launch = (launch_fn)resolve("cuLaunchKernel");
	struct sigaction sa;
	char line[512], path[128], range[64];
	unsigned long lo = 0, hi = 0;
	uint64_t v = ~0ULL;
	volatile uint64_t *w;
	FILE *fp;
	int fd, found = 0, pages = 0, lives = 0;
	unsigned long live = 0;
	const char *store, *prot, *mapf, *mem, *trunc, *live_store = "none";
	struct dirent *d;
	DIR *dir;

	/* an allocation first: the hook's link starts, and attaches the page */
	if (do_alloc(1 << 20) == -1)
		return 1;
	launch(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
	if ((fp = fopen("/proc/self/maps", "r")) == NULL)
		return 1;
	while (fgets(line, sizeof(line), fp) != NULL)
		if (strstr(line, "nvq-lcbe-live") != NULL) {
			if (++lives == 1)
				sscanf(line, "%lx-", &live);
		} else if (strstr(line, "nvq-lcbe") != NULL && ++pages == 1 &&
		    sscanf(line, "%lx-%lx", &lo, &hi) == 2) {
			found = 1;
			snprintf(range, sizeof(range), "%lx-%lx", lo, hi);
		}
	fclose(fp);
	if (!found) {
		printf("poke: no page\n");
		return 1;
	}
	w = (volatile uint64_t *)lo;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = poke_segv_cb;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	store = poke_store(w);
	prot = mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE) == 0 ? "allowed" : "denied";
	snprintf(path, sizeof(path), "/proc/self/map_files/%s", range);
	fd = open(path, O_RDWR);
	mapf = fd >= 0 ? "opened" : "denied";
	if (fd >= 0)
		close(fd);
	mem = "denied";
	if ((fd = open("/proc/self/mem", O_RDWR)) >= 0) {
		if (pwrite(fd, &v, sizeof(v), (off_t)lo) == (ssize_t)sizeof(v))
			mem = "written";
		close(fd);
	}
	/*
	 * and a truncate of the page's file (a SIGBUS for every other mapping of
	 * it), through any descriptor of it this process has or can open
	 */
	trunc = "denied";
	if ((fd = open(path, O_RDWR)) >= 0) {
		if (ftruncate(fd, 0) == 0)
			trunc = "done";
		close(fd);
	}
	if ((dir = opendir("/proc/self/fd")) != NULL) {
		while ((d = readdir(dir)) != NULL) {
			char link[256], fdp[64];
			ssize_t n;

			snprintf(fdp, sizeof(fdp), "/proc/self/fd/%s", d->d_name);
			if ((n = readlink(fdp, link, sizeof(link) - 1)) <= 0)
				continue;
			link[n] = '\0';
			if (strstr(link, "nvq-lcbe") != NULL && ftruncate(atoi(d->d_name), 0) == 0)
				trunc = "done";
		}
		closedir(dir);
	}
	if (live != 0)
		live_store = poke_store((volatile uint64_t *)live);
	printf("poke: pages=%d store=%s mprotect=%s map_files=%s proc_mem=%s truncate=%s "
	    "live=%d live_store=%s\n", pages, store, prot, mapf, mem, trunc, lives, live_store);
	fflush(stdout);
	/* POKE_HOLD=SECONDS, where it may write (lc): every word and beat up that long */
	if (strcmp(store, "written") == 0 && getenv("POKE_HOLD") != NULL) {
		struct timespec ts;
		double until = now() + atof(getenv("POKE_HOLD"));
		size_t k, words = (hi - lo) / sizeof(uint64_t);

		while (now() < until) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			/* the page's layout (lcbe_page.h): up[64], beat[64], owner[64] */
			for (k = 0; k < 128 && k < words; k++)
				w[k] = k < 64 ? ~0ULL :
				    (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
			usleep(10000);
		}
	}
	return 0;
}

int
main(int argc, char **argv)
{
	launch_fn launch;
	double end, last = 0;
	long n = 0;
	pid_t pid;
	int st;

	if (argc >= 4 && strcmp(argv[1], "launch") == 0) {
		if (do_alloc(argc > 4 ? strtoull(argv[4], NULL, 10) : 64 << 20) == -1) {
			printf("alloc oom\n");
			return 1;
		}
		launch = (launch_fn)resolve("cuLaunchKernel");
		end = now() + atof(argv[2]);
		while (now() < end) {
			launch(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
			n++;
			if (now() - last >= 0.02) {
				put_count(argv[3], n);
				last = now();
			}
			usleep(500);
		}
		put_count(argv[3], n);
		printf("launched %ld\n", n);
		return 0;
	}
	if (argc == 4 && strcmp(argv[1], "bursts") == 0)
		return fake_bursts(atof(argv[2]), argv[3]);
	if (argc == 3 && strcmp(argv[1], "capture") == 0)
		return fake_capture(atof(argv[2]));
	if (argc == 2 && strcmp(argv[1], "poke") == 0)
		return fake_poke();
	if (argc == 5 && strcmp(argv[1], "ddp") == 0)
		return fake_ddp(atoi(argv[2]), atof(argv[3]), argv[4]);
	if (argc == 4 && strcmp(argv[1], "race") == 0)
		return do_race(strtoull(argv[2], NULL, 10), atoi(argv[3]));
	if ((argc == 3 || argc == 4) && strcmp(argv[1], "ipc") == 0)
		return do_ipc(strtoull(argv[2], NULL, 10), argv[0], argc == 4 ? argv[3] : NULL, 0);
	if (argc == 4 && strcmp(argv[1], "ipc-driver") == 0)
		return do_ipc_driver(strtoull(argv[2], NULL, 10), (unsigned)atoi(argv[3]));
	if (argc == 4 && strcmp(argv[1], "export") == 0)
		return do_export(strtoull(argv[2], NULL, 10), (unsigned)atoi(argv[3]));
	if ((argc == 4 || argc == 5) && strcmp(argv[1], "nccl") == 0)
		return do_nccl(strtoull(argv[2], NULL, 10), argv[0], argv[3],
		    argc < 5 ? 0 : strcmp(argv[4], "orphan") == 0 ? 1 : strcmp(argv[4], "freed") == 0 ?
		    2 : strcmp(argv[4], "fork") == 0 ? 3 : 0);
	if (argc == 4 && strcmp(argv[1], "nccl-reuse") == 0)
		return fake_reuse(strtoull(argv[2], NULL, 10), (unsigned)atoi(argv[3]));
	if (argc == 5 && strcmp(argv[1], "nccl-peer") == 0)
		return do_nccl_peer(atoi(argv[2]), strtoull(argv[3], NULL, 10),
		    (unsigned)atoi(argv[4]));
	if (argc == 4 && strcmp(argv[1], "ipc-orphan") == 0)
		return do_ipc(strtoull(argv[2], NULL, 10), argv[0], argv[3], 1);
	if (argc == 4 && strcmp(argv[1], "ipc-fork") == 0)
		return do_ipc(strtoull(argv[2], NULL, 10), argv[0], argv[3], 2);
	if ((argc == 4 || argc == 5) && strcmp(argv[1], "ipc-child") == 0)
		return do_ipc_child(argv[2], strtoull(argv[3], NULL, 10), argc == 5 ? argv[4] : NULL);
	if (argc == 5 && strcmp(argv[1], "data") == 0)
		return do_data(atof(argv[2]), argv[3], strtoull(argv[4], NULL, 10));
	if (argc == 4 && strcmp(argv[1], "alloc") == 0) {
		st = do_alloc(strtoull(argv[2], NULL, 10));
		printf("alloc %s\n", st == 0 ? "ok" : "oom");
		fflush(stdout);
		sleep((unsigned)atoi(argv[3]));
		return st == 0 ? 0 : 1;
	}
	if (argc == 3 && strcmp(argv[1], "fork") == 0) {
		st = do_alloc(1 << 20);
		launch = (launch_fn)resolve("cuLaunchKernel");
		launch(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
		printf("parent alloc %s\n", st == 0 ? "ok" : "oom");
		fflush(stdout);
		if ((pid = fork()) == 0) {
			st = do_alloc(2 << 20);
			launch(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
			printf("child alloc %s\n", st == 0 ? "ok" : "oom");
			fflush(stdout);
			sleep((unsigned)atoi(argv[2]));
			_exit(0);
		}
		sleep((unsigned)atoi(argv[2]));
		waitpid(pid, &st, 0);
		printf("child exited %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		return 0;
	}
	fprintf(stderr, "usage: fake_job launch SECONDS FILE [BYTES] | alloc BYTES SECONDS | "
	    "fork SECONDS | race BYTES ROUNDS | data SECONDS FILE BYTES | ipc BYTES [SECONDS]\n");
	return 2;
}
