/*
 * portable.c: the job's exec, the shim's closefrom and its error words,
 * written out so that they do the same whatever the shim's C library
 * (portable.h).  musl's execvp runs no script without "#!" through
 * /bin/sh, as glibc's does and as jobs that are plain shell files expect,
 * musl 1.2 has no closefrom, and its strerror words some errors otherwise.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "portable.h"

#define EXEC_SHELL	"/bin/sh"
#define EXEC_DEFAULT_PATH	"/bin:/usr/bin"
#define EXEC_MAX_SCRIPT_ARGS	4096	/* what /bin/sh gets is on the stack */

size_t
shim_script_argv(char **sh, const char *file, char *const argv[], size_t argc)
{
	size_t i, n = 0;

	sh[n++] = (char *)EXEC_SHELL;
	sh[n++] = (char *)file;
	for (i = 1; i < argc; i++)
		sh[n++] = argv[i];
	sh[n] = NULL;
	return n;
}

/* execve, and for a file the kernel cannot run, /bin/sh with it (glibc's rule). */
static void
exec_one(const char *path, char *const argv[], char *const envp[])
{
	size_t argc;

	execve(path, argv, envp);
	if (errno != ENOEXEC)
		return;
	for (argc = 0; argv[argc] != NULL; argc++)
		if (argc >= EXEC_MAX_SCRIPT_ARGS) {
			errno = E2BIG;
			return;
		}
	{
		char *sh[argc + 3];

		shim_script_argv(sh, path, argv, argc);
		execve(EXEC_SHELL, sh, envp);
	}
}

static const char *
exec_path_of(char *const envp[])
{
	for (; envp != NULL && *envp != NULL; envp++)
		if (strncmp(*envp, "PATH=", 5) == 0)
			return *envp + 5;
	return EXEC_DEFAULT_PATH;
}

int
shim_execvpe(const char *file, char *const argv[], char *const envp[])
{
	char buf[PATH_MAX];
	const char *p, *end;
	size_t flen = strlen(file), dlen;
	int refused = 0;

	if (flen == 0) {
		errno = ENOENT;
		return -1;
	}
	if (strchr(file, '/') != NULL) {
		exec_one(file, argv, envp);
		return -1;
	}
	if (flen > NAME_MAX) {
		errno = ENAMETOOLONG;
		return -1;
	}
	errno = ENOENT;
	for (p = exec_path_of(envp);; p = end + 1) {
		if ((end = strchr(p, ':')) == NULL)
			end = p + strlen(p);
		dlen = (size_t)(end - p);
		if (dlen + 1 + flen < sizeof(buf)) {
			memcpy(buf, p, dlen);
			if (dlen > 0)
				buf[dlen++] = '/';
			memcpy(buf + dlen, file, flen + 1);
			exec_one(buf, argv, envp);
			switch (errno) {
			case EACCES:
				refused = 1;
				/* FALLTHROUGH */
			case ENOENT: case ENOTDIR: case ESTALE: case ENODEV: case ETIMEDOUT:
			case ENAMETOOLONG: case ELOOP:
				break;
			default:	/* found, but it cannot run: no further look */
				return -1;
			}
		}
		if (*end == '\0')
			break;
	}
	if (refused)
		errno = EACCES;
	return -1;
}

void
shim_closefrom(int lo)
{
	struct rlimit rl;
	long fd, max = 65536;

	if (syscall(SYS_close_range, (unsigned)lo, ~0U, 0) == 0)
		return;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max != RLIM_INFINITY)
		max = (long)rl.rlim_max;
	for (fd = lo; fd < max; fd++)
		close((int)fd);
}

const char *
shim_strerror(int e)
{
	static const struct { int e; const char *text; } glibc[] = {
		{ EIO, "Input/output error" },
		{ ECHILD, "No child processes" },
		{ ENOMEM, "Cannot allocate memory" },
		{ EBUSY, "Device or resource busy" },
		{ EXDEV, "Invalid cross-device link" },
		{ EMFILE, "Too many open files" },
		{ ENOTTY, "Inappropriate ioctl for device" },
		{ ESPIPE, "Illegal seek" },
		{ ERANGE, "Numerical result out of range" },
		{ ENAMETOOLONG, "File name too long" },
		{ ELOOP, "Too many levels of symbolic links" },
		{ EOVERFLOW, "Value too large for defined data type" },
		{ ELIBACC, "Can not access a needed shared library" },
		{ ELIBBAD, "Accessing a corrupted shared library" },
		{ ELIBEXEC, "Cannot exec a shared library directly" },
		{ EOPNOTSUPP, "Operation not supported" },
		{ ETIMEDOUT, "Connection timed out" },
		{ EUCLEAN, "Structure needs cleaning" },
		{ EDQUOT, "Disk quota exceeded" },
	};
	size_t i;

	for (i = 0; i < sizeof(glibc) / sizeof(glibc[0]); i++)
		if (glibc[i].e == e)
			return glibc[i].text;
	return strerror(e);
}
