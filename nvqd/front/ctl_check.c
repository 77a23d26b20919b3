/*
 * ctl_check.c: who may send a request (see ctl_check.h).  The refusals'
 * words are those users have always read: the system tests and scripts
 * match them.  Returns 0 or -1; no I/O, no engine, no allocation.
 */
#include <stdio.h>

#include "ctl_check.h"

/* The refusal of a job's owner's request to someone else; returns -1. */
static int
ctl_check_owner(const struct ctl_rule *rule, const struct ctl_caller *c,
    const struct ctl_owner *j, char *err, size_t len)
{
	if (j->user == NULL)
		snprintf(err, len, "job %lld belongs to another user; only its owner, root%s may "
		    "%s it", (long long)j->id, c->has_group ? " or members of [security] "
		    "admin_group" : "", rule->verb);
	else if (c->has_group)
		snprintf(err, len, "job %lld belongs to %s; only its owner, root or members of "
		    "%s may %s it", (long long)j->id, j->user, c->group, rule->verb);
	else
		snprintf(err, len, "job %lld belongs to %s; only its owner or root may %s it",
		    (long long)j->id, j->user, rule->verb);
	return -1;
}

int
ctl_check(const struct ctl_rule *rule, const struct ctl_caller *c, const struct ctl_owner *j,
    char *err, size_t len)
{
	switch (rule->who) {
	case CTL_OWNER:
	case CTL_SELF:
		if (j == NULL) {
			snprintf(err, len, "no job given");
			return -1;
		}
		break;
	default:
		break;
	}
	switch (rule->who) {
	case CTL_ANYONE:
		return 0;
	case CTL_OWNER:
		if (c->uid == j->uid || c->admin)
			return 0;
		return ctl_check_owner(rule, c, j, err, len);
	case CTL_SELF:
		if (c->uid == j->uid)
			return 0;
		if (rule->why != NULL)
			snprintf(err, len, "job %lld is not yours: only its owner may %s it (%s)",
			    (long long)j->id, rule->verb, rule->why);
		else if (c->admin)
			snprintf(err, len, "job %lld is not yours", (long long)j->id);
		else
			return ctl_check_owner(rule, c, j, err, len);
		return -1;
	case CTL_ADMIN:
		if (c->admin)
			return 0;
		snprintf(err, len, "only root%s%s may %s", c->has_group ? " and members of " : "",
		    c->group, rule->verb);
		return -1;
	case CTL_ROOT:
		if (c->uid == 0)
			return 0;
		snprintf(err, len, "only root%s%s%s may %s", rule->why != NULL ? " (" : "",
		    rule->why != NULL ? rule->why : "", rule->why != NULL ? ")" : "", rule->verb);
		return -1;
	}
	snprintf(err, len, "a request no one may send");
	return -1;
}

int
ctl_check_admin(uint32_t uid, uint32_t gid, const gid_t *groups, int n, int has_gid,
    uint32_t admin_gid)
{
	int i;

	if (uid == 0)
		return 1;
	if (!has_gid)
		return 0;
	if (gid == admin_gid)
		return 1;
	for (i = 0; groups != NULL && i < n; i++)
		if (groups[i] == admin_gid)
			return 1;
	return 0;
}
