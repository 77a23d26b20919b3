/*
 * portable.h: what the shim needs from a C library that not every one has
 * or does alike (the shim is built with musl where it can be, with glibc
 * where not): running the job's command as glibc's execvp would, closing
 * every descriptor from one on, and the words of an error, which reach
 * users in their jobs' reasons.
 */
#ifndef NVQ_SHIM_PORTABLE_H
#define NVQ_SHIM_PORTABLE_H

#include <stddef.h>

/*
 * Runs file with argv and envp as glibc's execvpe does: a name without a
 * slash is looked up in envp's PATH ("/bin:/usr/bin" without one; an empty
 * entry is the working folder), and a file the kernel cannot run (ENOEXEC:
 * a script without "#!") is run by /bin/sh.  Only returns on failure, with
 * errno: EACCES where some candidate was refused that way, else the last
 * lookup's error (ENOENT where there was none).  Allocates nothing (it runs
 * in a process that shares the shim's memory), using stack for one path.
 */
int	shim_execvpe(const char *file, char *const argv[], char *const envp[]);

/*
 * What /bin/sh gets to run a script (file) that the kernel could not: the
 * shell, file, then argv[1] to argv[argc - 1], and a NULL, in sh, which has
 * room for argc + 3 pointers.  The count before the NULL.
 */
size_t	shim_script_argv(char **sh, const char *file, char *const argv[], size_t argc);

/* Closes every descriptor from lo on (close_range, or one by one where the kernel has none). */
void	shim_closefrom(int lo);

/*
 * strerror's text, in glibc's words where musl's differ for an error the
 * shim can meet (ELOOP: "Too many levels of symbolic links", not "Symbolic
 * link loop"), so that a job's reason reads the same whichever built it.
 */
const char	*shim_strerror(int e);

#endif
