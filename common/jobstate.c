/*
 * jobstate.c: a job's state names, and lists of them (see jobstate.h).
 */
#include <string.h>

#include "jobstate.h"

const char *const jobstate_names[JOBSTATE_N] = {
	"PENDING", "RUNNING", "SUSPENDED", "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT",
	"NODE_FAIL"
};

int
jobstate_list(const char *list, unsigned *mask)
{
	const char *p = list, *e;
	size_t n;
	int i, items = 0;

	*mask = 0;
	if (list == NULL || *list == '\0')
		return -1;
	for (;;) {
		e = p + strcspn(p, ",");
		n = (size_t)(e - p);
		for (i = 0; i < JOBSTATE_N; i++)
			if (strlen(jobstate_names[i]) == n && strncmp(jobstate_names[i], p, n) == 0)
				break;
		if (i == JOBSTATE_N)
			return -1;	/* none of them, or empty */
		*mask |= 1u << i;
		items++;
		if (*e == '\0')
			return items;
		p = e + 1;
	}
}
