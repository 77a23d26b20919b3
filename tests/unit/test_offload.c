/*
 * test_offload.c: hook/offload.c against the fake libcuda, whose VMM API is
 * real memory (a range that is not mapped faults, as on a GPU).  The job's
 * allocations go out to host memory and come back to the same addresses
 * with every byte as it was; a step that fails leaves what did not move
 * where it was, and a later call finishes the move.  Memory shared by CUDA
 * IPC goes out and comes back still shared.
 */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "link.h"
#include "offload.h"

#define MiB	(1ull << 20)

int	fake_calls(const char *);
int	fake_first_copy_regs(void);
size_t	fake_mapped_bytes(void);
CUresult cuMemcpyDtoH_v2(void *, CUdeviceptr, size_t);

static void test_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void
test_log(const char *fmt, ...)
{
	(void)fmt;
}

static void *
sym(const char *name)
{
	return dlsym(RTLD_DEFAULT, name);
}

/* A word per 8 bytes that depends on the allocation and the offset. */
static void
fill(CUdeviceptr p, size_t n, uint64_t seed)
{
	uint64_t *w = (uint64_t *)(uintptr_t)p;
	size_t i;

	for (i = 0; i < n / 8; i++)
		w[i] = seed * 0x9e3779b97f4a7c15ULL ^ i;
}

static int
intact(CUdeviceptr p, size_t n, uint64_t seed)
{
	const uint64_t *w = (const uint64_t *)(uintptr_t)p;
	size_t i;

	for (i = 0; i < n / 8; i++)
		if (w[i] != (seed * 0x9e3779b97f4a7c15ULL ^ i))
			return 0;
	return 1;
}

static int
setup(void **state)
{
	static int once;

	(void)state;
	if (!once)
		offload_init(1, sym, test_log);
	once = 1;
	return 0;
}

static void
test_sizes(void **state)
{
	(void)state;
	assert_int_equal(offload_size(1 * MiB), 0);	/* small: left to the driver */
	assert_int_equal(offload_size(2 * MiB), 2 * MiB);
	assert_int_equal(offload_size(5 * MiB), 6 * MiB);	/* the VMM granularity */
	assert_int_equal(offload_size(2 * MiB + 1), 4 * MiB);
}

static void
test_out_and_back(void **state)
{
	struct offload_stats st;
	CUdeviceptr a, b;
	uint64_t word;
	CUresult r;
	int reg = fake_calls("cuMemHostRegister_v2"), unreg = fake_calls("cuMemHostUnregister");
	int port = fake_calls("fake_register_portable");

	(void)state;
	assert_int_equal(offload_alloc(&a, 8 * MiB, 0), CUDA_SUCCESS);
	assert_int_equal(offload_alloc(&b, 6 * MiB, 0), CUDA_SUCCESS);
	fill(a, 8 * MiB, 1);
	fill(b, 6 * MiB, 2);
	assert_int_equal(fake_mapped_bytes(), 14 * MiB);
	assert_true(offload_resident());

	assert_int_equal(offload_out(&st), 0);
	assert_int_equal(st.bytes, 14 * MiB);
	assert_int_equal(st.left, 0);
	assert_string_equal(st.error, "");
	assert_int_equal(fake_mapped_bytes(), 0);	/* the device memory is gone */
	assert_int_equal(offload_staged(), 14 * MiB);	/* what it needs, not whole pieces */
	/* one staging area, page-locked in pieces of 4 MiB (this build's OFF_CHUNK):
	 * b's copy crosses the edge at 12 MiB */
	assert_int_equal(fake_calls("cuMemHostRegister_v2"), reg + 4);
	/* pinned for every context: a job's GPUs each copy at full speed */
	assert_int_equal(fake_calls("fake_register_portable"), port + 4);
	assert_false(offload_resident());
	/* the job's pointer now faults, as it would on the GPU */
	assert_int_equal(cuMemcpyDtoH_v2(&word, a, 8), 700);
	/* a second move out has nothing to do with memory that is out */
	assert_int_equal(offload_out(&st), -1);
	assert_string_equal(st.error, "memory is out already");

	assert_int_equal(offload_in(&st), 0);
	assert_int_equal(st.bytes, 14 * MiB);
	assert_int_equal(st.left, 0);
	assert_true(offload_resident());
	assert_int_equal(fake_mapped_bytes(), 14 * MiB);
	/* the same addresses, every byte as it was */
	assert_true(intact(a, 8 * MiB, 1));
	assert_true(intact(b, 6 * MiB, 2));
	offload_drop_staging();
	assert_int_equal(fake_calls("cuMemHostUnregister"), unreg + 4);

	assert_int_equal(offload_free(a, &r), 1);
	assert_int_equal(r, CUDA_SUCCESS);
	assert_int_equal(offload_free(b, &r), 1);
	assert_int_equal(fake_mapped_bytes(), 0);
	assert_int_equal(offload_free(12345, &r), 0);	/* not one of these */
}

/*
 * The copies out begin as soon as the first pieces of the staging are
 * page-locked, not after the last one: each worker fills the piece it
 * made while the others still make theirs (a registration here takes 1 ms,
 * as locking a GiB takes tens on the H100).
 */
static void
test_copies_overlap_staging(void **state)
{
	enum { PIECES = 64 };
	struct offload_stats st;
	CUdeviceptr a;
	CUresult r;
	int reg, at;

	(void)state;
	assert_int_equal(offload_alloc(&a, PIECES * 4 * MiB, 0), CUDA_SUCCESS);
	fill(a, PIECES * 4 * MiB, 8);
	reg = fake_calls("cuMemHostRegister_v2");
	fake_first_copy_regs();
	setenv("FAKE_REGISTER_US", "1000", 1);
	assert_int_equal(offload_out(&st), 0);
	unsetenv("FAKE_REGISTER_US");
	at = fake_first_copy_regs() - reg;
	assert_int_equal(st.bytes, PIECES * 4 * MiB);
	assert_int_equal(fake_calls("cuMemHostRegister_v2") - reg, PIECES);
	print_message("the first copy out began after %d of the %d pieces were page-locked\n", at,
	    PIECES);
	/* one piece per worker (16 at most) before the first copy, and room to spare */
	if (at < 1 || at > PIECES / 2)
		fail_msg("the first copy out began after %d of the %d pieces were page-locked", at,
		    PIECES);
	assert_int_equal(offload_in(&st), 0);
	assert_true(intact(a, PIECES * 4 * MiB, 8));
	offload_drop_staging();
	assert_int_equal(offload_staged(), 0);
	assert_int_equal(offload_free(a, &r), 1);
	assert_int_equal(fake_mapped_bytes(), 0);
}

static void
test_failed_restore_finishes_later(void **state)
{
	struct offload_stats st;
	CUdeviceptr a, b;
	CUresult r;

	(void)state;
	assert_int_equal(offload_alloc(&a, 4 * MiB, 0), CUDA_SUCCESS);
	assert_int_equal(offload_alloc(&b, 2 * MiB, 0), CUDA_SUCCESS);
	fill(a, 4 * MiB, 3);
	fill(b, 2 * MiB, 4);
	assert_int_equal(offload_out(&st), 0);

	/* no device memory to come back to: nothing is lost, the job stays out */
	setenv("FAKE_VMM_FAIL", "create", 1);
	assert_int_equal(offload_in(&st), -1);
	assert_int_equal(st.bytes, 0);
	assert_int_equal(st.left, 6 * MiB);
	assert_non_null(strstr(st.error, "creating"));
	assert_false(offload_resident());
	offload_drop_staging();		/* must keep the staging: memory is out */
	unsetenv("FAKE_VMM_FAIL");
	assert_int_equal(offload_in(&st), 0);
	assert_int_equal(st.bytes, 6 * MiB);
	assert_true(intact(a, 4 * MiB, 3));
	assert_true(intact(b, 2 * MiB, 4));

	/* mapping fails half way: the other comes back, then this one */
	assert_int_equal(offload_out(&st), 0);
	setenv("FAKE_VMM_FAIL", "map", 1);
	assert_int_equal(offload_in(&st), -1);
	assert_non_null(strstr(st.error, "mapping"));
	unsetenv("FAKE_VMM_FAIL");
	assert_int_equal(offload_in(&st), 0);
	assert_true(intact(a, 4 * MiB, 3));
	assert_true(intact(b, 2 * MiB, 4));

	/* freeing an allocation that is out: nothing of it comes back */
	assert_int_equal(offload_out(&st), 0);
	assert_int_equal(offload_free(a, &r), 1);
	assert_int_equal(r, CUDA_SUCCESS);
	assert_int_equal(offload_in(&st), 0);
	assert_int_equal(st.bytes, 2 * MiB);
	assert_true(intact(b, 2 * MiB, 4));
	offload_drop_staging();
	assert_int_equal(offload_free(b, &r), 1);
	assert_int_equal(fake_mapped_bytes(), 0);
}

static void
test_many(void **state)
{
	enum { N = 300 };
	static CUdeviceptr p[N];
	struct offload_stats st;
	CUresult r;
	int i;

	(void)state;
	/* enough to grow the table, and frees that leave tombs in it */
	for (i = 0; i < N; i++) {
		assert_int_equal(offload_alloc(&p[i], 2 * MiB, 0), CUDA_SUCCESS);
		fill(p[i], 2 * MiB, (uint64_t)i + 10);
	}
	for (i = 0; i < N; i += 2)
		assert_int_equal(offload_free(p[i], &r), 1);
	assert_int_equal(offload_out(&st), 0);
	assert_int_equal(st.bytes, (N / 2) * 2 * MiB);
	assert_int_equal(offload_in(&st), 0);
	for (i = 1; i < N; i += 2)
		assert_true(intact(p[i], 2 * MiB, (uint64_t)i + 10));
	for (i = 1; i < N; i += 2)
		assert_int_equal(offload_free(p[i], &r), 1);
	offload_drop_staging();
	assert_int_equal(fake_mapped_bytes(), 0);
}

/* Whether descriptor fd is /dev/null (what an exported one is while out). */
static int
is_null(int fd)
{
	struct stat a, b;

	return fstat(fd, &a) == 0 && stat("/dev/null", &b) == 0 && S_ISCHR(a.st_mode) &&
	    a.st_rdev == b.st_rdev;
}

/* Maps x's memory again, as a process that took it by CUDA IPC would. */
static CUdeviceptr
import(const struct offload_export *x, pid_t exporter)
{
	int pidfd = (int)syscall(SYS_pidfd_open, exporter, 0), fd = dup(x->fd);
	CUdeviceptr p = 0;

	assert_true(pidfd >= 0 && fd >= 0);
	assert_int_equal(offload_import(fd, x->size, x->dev, pidfd, x->fd, &p), CUDA_SUCCESS);
	close(fd);
	return p;
}

static void
test_shared_out_and_back(void **state)
{
	struct offload_export x;
	struct offload_stats st;
	CUdeviceptr a, b;
	CUresult r;

	(void)state;
	assert_int_equal(offload_alloc(&a, 4 * MiB, 0), CUDA_SUCCESS);
	fill(a, 4 * MiB, 5);
	assert_int_equal(offload_export(a + 4096, &x, &r), 1);
	assert_int_equal(r, CUDA_SUCCESS);
	assert_int_equal(x.base, a);
	b = import(&x, getpid());
	assert_true(b != a);
	fill(b, 4 * MiB, 6);	/* one memory, two addresses */
	assert_true(intact(a, 4 * MiB, 6));
	assert_int_equal(offload_unmovable(), 0);
	assert_int_equal(fake_mapped_bytes(), 8 * MiB);

	/* the exporter copies it out, the importer unmaps: no device memory left */
	assert_int_equal(offload_out(&st), 0);
	assert_string_equal(st.error, "");
	assert_int_equal(st.bytes, 4 * MiB);	/* copied once */
	assert_int_equal(st.left, 0);
	assert_int_equal(fake_mapped_bytes(), 0);
	assert_false(offload_resident());
	assert_true(is_null(x.fd));	/* the number handles name stays taken */

	assert_int_equal(offload_in(&st), 0);
	assert_string_equal(st.error, "");
	assert_int_equal(fake_mapped_bytes(), 8 * MiB);
	assert_true(offload_resident());
	assert_false(is_null(x.fd));
	assert_true(intact(a, 4 * MiB, 6));
	assert_true(intact(b, 4 * MiB, 6));
	fill(a, 4 * MiB, 7);	/* still one memory at both addresses */
	assert_true(intact(b, 4 * MiB, 7));
	offload_drop_staging();

	assert_int_equal(offload_unimport(b, &r), 1);
	assert_int_equal(r, CUDA_SUCCESS);
	assert_int_equal(offload_free(a, &r), 1);
	assert_int_equal(fake_mapped_bytes(), 0);
}

static void
test_orphan_import_refused(void **state)
{
	struct offload_export x;
	struct offload_stats st;
	CUdeviceptr a, b;
	CUresult r;
	pid_t pid;

	(void)state;
	assert_int_equal(offload_alloc(&a, 2 * MiB, 0), CUDA_SUCCESS);
	assert_int_equal(offload_export(a, &x, &r), 1);
	if ((pid = fork()) == 0)
		_exit(0);
	/* as if that process, which has ended, had exported it */
	b = import(&x, pid);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	assert_int_equal(offload_unmovable(), 2 * MiB);
	assert_int_equal(offload_out(&st), -1);
	assert_non_null(strstr(st.error, "the memory of a process that has ended"));
	assert_int_equal(st.bytes, 0);
	assert_int_equal(st.left, 2 * MiB);
	/* nothing was touched */
	assert_int_equal(fake_mapped_bytes(), 4 * MiB);
	assert_true(offload_resident());
	assert_false(is_null(x.fd));
	assert_int_equal(offload_unimport(b, &r), 1);
	assert_int_equal(offload_unmovable(), 0);
	assert_int_equal(offload_free(a, &r), 1);
	assert_int_equal(fake_mapped_bytes(), 0);
}

/*
 * [scheduler] staging: a process that may keep staging has it made ahead,
 * in the background, as its memory grows; a suspend then page-locks
 * nothing, and the staging stays after the resume until the share is taken
 * back.  A child never inherits it.
 */
static void
test_keep(void **state)
{
	struct offload_stats st;
	CUdeviceptr a, b;
	CUresult r;
	int reg, unreg, i, status;
	pid_t pid;

	(void)state;
	assert_int_equal(offload_staged(), 0);
	assert_int_equal(offload_alloc(&a, 8 * MiB, 0), CUDA_SUCCESS);
	assert_int_equal(offload_alloc(&b, 6 * MiB, 0), CUDA_SUCCESS);
	fill(a, 8 * MiB, 5);
	fill(b, 6 * MiB, 6);
	/* made ahead up to what the memory needs (14 MiB: 4 pieces of 4 MiB), not the whole share */
	offload_keep(64 * MiB);
	for (i = 0; i < 500 && offload_staged() < 16 * MiB; i++)
		usleep(10000);
	assert_int_equal(offload_staged(), 16 * MiB);
	usleep(300000);
	assert_int_equal(offload_staged(), 16 * MiB);
	/* a child has none of it */
	if ((pid = fork()) == 0) {
		offload_child();
		_exit(offload_staged() == 0 ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(status, 0);

	reg = fake_calls("cuMemHostRegister_v2");
	unreg = fake_calls("cuMemHostUnregister");
	assert_int_equal(offload_out(&st), 0);
	assert_int_equal(st.bytes, 14 * MiB);
	assert_int_equal(fake_calls("cuMemHostRegister_v2"), reg);	/* nothing to make now */
	assert_int_equal(offload_in(&st), 0);
	assert_true(intact(a, 8 * MiB, 5));
	assert_true(intact(b, 6 * MiB, 6));
	offload_drop_staging();
	assert_int_equal(offload_staged(), 16 * MiB);	/* kept for the next switch */
	assert_int_equal(fake_calls("cuMemHostUnregister"), unreg);

	/* the memory grows: so does the staging, up to the share */
	assert_int_equal(offload_free(b, &r), 1);
	assert_int_equal(offload_alloc(&b, 40 * MiB, 0), CUDA_SUCCESS);
	fill(b, 40 * MiB, 7);
	for (i = 0; i < 500 && offload_staged() < 48 * MiB; i++)
		usleep(10000);
	assert_int_equal(offload_staged(), 48 * MiB);
	assert_int_equal(offload_out(&st), 0);
	assert_int_equal(offload_in(&st), 0);
	assert_true(intact(a, 8 * MiB, 5));
	assert_true(intact(b, 40 * MiB, 7));

	/* a smaller share: whole pieces within it (20 MiB: 5), never more */
	offload_keep(22 * MiB);
	offload_drop_staging();
	assert_int_equal(offload_staged(), 20 * MiB);
	/* the share taken back: freed once nothing is out */
	offload_keep(0);
	offload_drop_staging();
	assert_int_equal(offload_staged(), 0);
	assert_int_equal(fake_calls("cuMemHostUnregister"), unreg + 12);
	assert_int_equal(offload_free(a, &r), 1);
	assert_int_equal(offload_free(b, &r), 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_sizes, setup),
		cmocka_unit_test_setup(test_out_and_back, setup),
		cmocka_unit_test_setup(test_copies_overlap_staging, setup),
		cmocka_unit_test_setup(test_keep, setup),
		cmocka_unit_test_setup(test_failed_restore_finishes_later, setup),
		cmocka_unit_test_setup(test_many, setup),
		cmocka_unit_test_setup(test_shared_out_and_back, setup),
		cmocka_unit_test_setup(test_orphan_import_refused, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
