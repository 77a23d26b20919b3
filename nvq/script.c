/*
 * script.c: `nvq submit SCRIPT`: the #SBATCH and #NVQ lines at the top of
 * a script, as sbatch reads #SBATCH lines, and the command that runs the
 * script.
 *
 * Directives are the lines "#SBATCH OPTIONS" and "#NVQ OPTIONS" in the
 * script's header: from the first line up to the first that is neither
 * blank nor a comment (where sbatch stops too).  Each gives options only
 * (sbatch's, translated by sbatch.c; nvq submit's), split at blanks, with
 * '...' and "..." quoting, and a word starting with '#' beginning a
 * comment.  All #SBATCH lines are applied first, then all #NVQ lines, then
 * the command line's options, so that the later win.  The words stay in
 * memory as long as nvq runs (the options point into them).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nvq.h"

#define SCRIPT_MAX_HEADER	(256 * 1024)	/* bytes of header read */
#define SCRIPT_MAX_WORDS	64		/* words on one #NVQ line */

/* What the options and the command point into, for as long as nvq runs */
static char	*script_header;
static char	**script_argv;
static int	script_owned;		/* script_argv's first words allocated here */

static void
script_cleanup(void)
{
	int i;

	for (i = 0; script_argv != NULL && i < script_owned; i++)
		free(script_argv[i]);
	free(script_argv);
	free(script_header);
}

/* Frees what the options and the command point into, at exit (once). */
static void
script_atexit(void)
{
	static int registered;

	if (!registered)
		registered = atexit(script_cleanup) == 0;
}

/* Keeps v (its first owned words allocated here) until exit. */
static void
script_keep(char **v, int owned)
{
	script_atexit();
	script_argv = v;
	script_owned = owned;
}

/*
 * Splits line (changed in place) into words; returns their count, or -1 if
 * a quote is not closed or there are too many.
 */
static int
script_words(char *line, char **w, int max)
{
	char *p = line, *o, q;
	int n = 0;

	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\0' || *p == '#')
			return n;
		if (n == max)
			return -1;
		w[n++] = o = p;
		while (*p != '\0' && *p != ' ' && *p != '\t') {
			if (*p == '\'' || *p == '"') {
				for (q = *p++; *p != q; *o++ = *p++)
					if (*p == '\0')
						return -1;
				p++;
			} else
				*o++ = *p++;
		}
		if (*p != '\0')
			p++;
		*o = '\0';
	}
}

/*
 * Up to cap bytes of path into buf (NUL-terminated): their count, or -1 if
 * it is not a regular file or cannot be read at once.  Without blocking:
 * nvq must not wait on the file (a FIFO, a lease someone holds on it); a
 * command it cannot read now is simply not a script.
 */
static ssize_t
script_read(const char *path, char *buf, size_t cap)
{
	struct stat st;
	ssize_t n, len = 0;
	int fd;

	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)) == -1)
		return -1;
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	while ((size_t)len < cap && (n = read(fd, buf + len, cap - (size_t)len)) != 0) {
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			close(fd);
			return -1;
		}
		len += n;
	}
	close(fd);
	buf[len] = '\0';
	return len;
}

/*
 * The lines of buf (changed in place) that start with the directive word
 * (followed by a blank or the line's end), up to the header's end, each
 * given to apply; 0, or what apply returned, or 2.
 */
static int
script_pass(const char *path, char *buf, const char *word,
    int (*apply)(void *, const char *, int, char **), void *arg)
{
	char *line, *next, *w[SCRIPT_MAX_WORDS + 1], where[PATH_MAX + 32];
	size_t len = strlen(word);
	int lineno = 0, n, rc = 0;

	for (line = buf; line != NULL && rc == 0; line = next) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		lineno++;
		line[strcspn(line, "\r")] = '\0';
		if (line[strspn(line, " \t")] == '\0')
			continue;
		if (line[0] != '#')
			break;	/* the header ends at the first command, as sbatch's */
		if (strncmp(line, word, len) != 0 || (line[len] != ' ' && line[len] != '\t' &&
		    line[len] != '\0'))
			continue;
		snprintf(where, sizeof(where), "%s, line %d", path, lineno);
		if ((n = script_words(line + len, w + 1, SCRIPT_MAX_WORDS)) == -1) {
			nvq_err("%s: an unclosed quote or over %d words", where, SCRIPT_MAX_WORDS);
			return 2;
		}
		w[0] = (char *)word;
		w[n + 1] = NULL;
		rc = apply(arg, where, n + 1, w);
	}
	return rc;
}

int
script_directives(const char *path, int (*apply)(void *, const char *, int, char **),
    void *arg)
{
	char *buf, *nvq;
	struct stat st;
	ssize_t len;
	int rc;

	/* only a regular file, and only one that starts like a script */
	if (stat(path, &st) == -1 || !S_ISREG(st.st_mode))
		return -1;
	if ((buf = malloc(2 * (SCRIPT_MAX_HEADER + 1))) == NULL) {
		nvq_err("out of memory");
		return 1;
	}
	if ((len = script_read(path, buf, SCRIPT_MAX_HEADER)) == -1) {
		free(buf);
		return -1;
	}
	if (len < 2 || buf[0] != '#' || buf[1] != '!') {
		free(buf);
		return -1;
	}
	script_atexit();
	free(script_header);
	script_header = buf;
	/* #SBATCH lines first, then #NVQ lines: each pass splits its own copy */
	nvq = buf + SCRIPT_MAX_HEADER + 1;
	memcpy(nvq, buf, (size_t)len + 1);
	if ((rc = script_pass(path, buf, "#SBATCH", apply, arg)) != 0)
		return rc;
	return script_pass(path, nvq, "#NVQ", apply, arg);
}

int
script_command(const char *path, int argc, char **argv, char ***out, int *outc)
{
	char head[512], *p, *interp, *iarg = NULL, **v;
	int i, k = 0;

	*out = NULL;
	*outc = 0;
	/* runnable as it is: only a bare name needs ./, as execvp would search PATH */
	if (access(path, X_OK) == 0) {
		if (strchr(path, '/') != NULL)
			return 0;
		if ((v = calloc((size_t)argc + 1, sizeof(*v))) == NULL ||
		    (v[0] = malloc(strlen(path) + 3)) == NULL) {
			free(v);
			return -1;
		}
		sprintf(v[0], "./%s", path);
		for (i = 1; i < argc; i++)
			v[i] = argv[i];
		script_keep(v, 1);
		*out = v;
		*outc = argc;
		return 0;
	}
	/* not executable: through the interpreter its #! line names, as the kernel would */
	if (script_read(path, head, sizeof(head) - 1) == -1)
		return -1;
	if ((p = strchr(head, '\n')) == NULL) {
		errno = ENAMETOOLONG;
		return -1;
	}
	*p = '\0';
	for (p = head + 2; *p == ' ' || *p == '\t'; p++)
		;
	interp = p;
	p += strcspn(p, " \t");
	if (*p != '\0') {
		*p++ = '\0';
		p += strspn(p, " \t");
		iarg = p;
		for (p = iarg + strlen(iarg); p > iarg && (p[-1] == ' ' || p[-1] == '\t' ||
		    p[-1] == '\r'); p--)
			;
		*p = '\0';
		if (*iarg == '\0')
			iarg = NULL;
	}
	if (*interp != '/') {
		errno = ENOEXEC;
		return -1;
	}
	if ((v = calloc((size_t)argc + 3, sizeof(*v))) == NULL)
		return -1;
	v[k++] = strdup(interp);
	if (iarg != NULL)
		v[k++] = strdup(iarg);
	v[k++] = argv[0];
	for (i = 1; i < argc; i++)
		v[k++] = argv[i];
	if (v[0] == NULL || (iarg != NULL && v[1] == NULL)) {
		free(v);
		return -1;
	}
	script_keep(v, iarg != NULL ? 2 : 1);
	*out = v;
	*outc = k;
	return 0;
}
