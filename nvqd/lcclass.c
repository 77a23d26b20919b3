/*
 * lcclass.c: [class lc]'s users and groups resolved, and the check a submit
 * of --class lc makes (lcclass.h).  Names are resolved as [qos NAME]'s are
 * (qos_set's users and groups keys on a table of its own), so that both
 * sections read the same way; the rule differs: a [qos NAME] with nobody
 * named is everyone's, [class lc] with nobody named is root's only, since
 * an lc job makes others wait.
 */
#include <stdio.h>
#include <string.h>

#include "lcclass.h"

int
lcclass_finish(struct lcclass *c, char *msg, size_t len)
{
	struct qos_table t;

	memset(&t, 0, sizeof(t));
	memset(&c->who, 0, sizeof(c->who));
	c->everyone = strcmp(c->users, "*") == 0;
	if (!c->everyone && c->users[0] != '\0' &&
	    qos_set(&t, "qos lc", "users", c->users, msg, len) == -1)
		return -1;
	if (c->groups[0] != '\0' && qos_set(&t, "qos lc", "groups", c->groups, msg, len) == -1)
		return -1;
	if (t.n > 0)
		c->who = t.c[0];
	return 0;
}

int
lcclass_may_use(const struct lcclass *c, uint32_t uid, uint32_t gid, const gid_t *groups, int n)
{
	if (uid == 0 || c->everyone)
		return 1;
	if (c->who.nusers == 0 && c->who.ngroups == 0)
		return 0;
	return qos_may_use(&c->who, uid, gid, groups, n);
}
