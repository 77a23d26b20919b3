/*
 * lcclass.c: [class lc]'s users and groups resolved, and the check a submit
 * of --class lc makes (lcclass.h).  Names are resolved as [qos NAME]'s are
 * (qos_set's users and groups keys on a table of its own), so that both
 * sections read the same way; the rule differs: a [qos NAME] with nobody
 * named is everyone's, [class lc] with nobody named is root's only, since
 * an lc job makes others wait.  lcclass_decide is a submit's whole rule
 * (class, who, limit, default), pure: test_lcbe has its rows.
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

/* Whether w's ntasks more lc jobs stay within max_jobs_per_user. */
static int
lcclass_within(const struct lcclass *c, const struct lcclass_who *w, int ntasks)
{
	return w->uid == 0 || c->max_jobs_per_user <= 0 ||
	    (int64_t)w->active + ntasks <= c->max_jobs_per_user;
}

int
lcclass_decide(const struct lcclass *c, const char *asked, const struct lcclass_who *w,
    int ntasks, int *lc, char *err, size_t len)
{
	int may = lcclass_may_use(c, w->uid, w->gid, w->groups, w->ngroups);

	*lc = 0;
	if (asked == NULL) {
		*lc = c->default_lc && may && lcclass_within(c, w, ntasks);
		return 0;
	}
	if (strcmp(asked, "be") == 0)
		return 0;
	if (strcmp(asked, "lc") != 0) {
		snprintf(err, len, "--class %.16s: not a class (lc or be); nothing was queued",
		    asked);
		return -1;
	}
	if (!may) {
		snprintf(err, len, "--class lc: you may not submit latency-critical jobs (nvq.ini's "
		    "[class lc] users and groups); nothing was queued");
		return -1;
	}
	if (!lcclass_within(c, w, ntasks)) {
		snprintf(err, len, "--class lc: you have %d latency-critical jobs%s: [class lc] "
		    "max_jobs_per_user is %lld; nothing was queued", w->active, ntasks > 1 ?
		    " and ask for more" : "", (long long)c->max_jobs_per_user);
		return -1;
	}
	*lc = 1;
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
