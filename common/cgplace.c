/*
 * cgplace.c: which cgroup nvqd manages (see cgplace.h).
 */
#include <stdio.h>
#include <string.h>

#include "cgplace.h"

int
cgplace_plan(const char *own, int systemd, struct cgplace *out)
{
	size_t n, leaf = strlen(CGPLACE_LEAF);
	const char *slash;

	memset(out, 0, sizeof(*out));
	if (own == NULL || *own != '/' || strstr(own, "/../") != NULL)
		return -1;
	n = strlen(own);
	if (n >= 3 && strcmp(own + n - 3, "/..") == 0)
		return -1;
	while (n > 1 && own[n - 1] == '/')
		n--;
	if (n >= sizeof(out->delegated))
		return -1;
	slash = own + n;
	while (slash > own && slash[-1] != '/')
		slash--;
	if ((size_t)(own + n - slash) == leaf && strncmp(slash, CGPLACE_LEAF, leaf) == 0) {
		/* in the leaf: its parent is the delegated cgroup ("" for the mount's root) */
		n = (size_t)(slash - 1 - own);
		out->in_leaf = 1;
	} else {
		if (n == 1)
			n = 0;	/* the mount's root (a container's: the real one never refuses) */
		out->may_move = !systemd;
	}
	memcpy(out->delegated, own, n);
	out->delegated[n] = '\0';
	return 0;
}

enum cgplace_act
cgplace_act(const struct cgplace *p, int holds, int mixable)
{
	if (mixable || !holds)
		return CGPLACE_ENABLE;
	return p->may_move ? CGPLACE_MOVE : CGPLACE_NONE;
}
