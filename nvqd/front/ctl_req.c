/*
 * ctl_req.c: what the request rooms share (see ctl_req.h): the error
 * reply, the request's job id, the check of its row (ctl_check.h) against
 * the caller, the login names of uids (remembered until nvqd's SIGHUP),
 * and what nvq's job requests do to a job Slurm runs.
 */
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ctl_req.h"
#include "slurm.h"

static int ctl_req_names_epoch = 1;

int
ctl_req_error(struct ctl_req *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
	return -1;
}

int64_t
ctl_req_id(const struct ctl_req *r)
{
	return r->id != 0 ? r->id : proto_int(r->msg, "id", 0);
}

int
ctl_req_may(struct ctl_req *r, const struct ctl_owner *j)
{
	struct ctl_caller c = { r->uid, r->admin, r->e->cfg.has_admin_gid,
	    r->e->cfg.admin_group };

	return ctl_check(r->rule, &c, j, r->err, sizeof(r->err));
}

void
ctl_req_user(uid_t uid, char *buf, size_t len)
{
	static struct { uid_t uid; char name[64]; int used; } cache[16];
	static unsigned next;
	struct passwd *pw;
	unsigned i;

	for (i = 0; i < 16; i++)
		if (cache[i].used && cache[i].uid == uid && ctl_req_names_epoch == cache[i].used) {
			snprintf(buf, len, "%s", cache[i].name);
			return;
		}
	if ((pw = getpwuid(uid)) != NULL)
		snprintf(buf, len, "%s", pw->pw_name);
	else
		snprintf(buf, len, "%u", (unsigned)uid);
	i = next++ % 16;
	cache[i].uid = uid;
	cache[i].used = ctl_req_names_epoch;
	snprintf(cache[i].name, sizeof(cache[i].name), "%s", buf);
}

void
ctl_req_forget_names(void)
{
	ctl_req_names_epoch++;
}

int
ctl_req_slurm(struct ctl_req *r, struct proto_buf *out, const char *verb)
{
	int64_t id = ctl_req_id(r);
	char by[64], err[320];
	int k;

	ctl_req_user(r->uid, by, sizeof(by));
	if (strcmp(verb, "cancel") == 0)
		k = slurm_cancel(r->e->slurm, id, by, err, sizeof(err));
	else if (strcmp(verb, "hold") == 0 || strcmp(verb, "release") == 0)
		k = slurm_hold(r->e->slurm, id, strcmp(verb, "hold") == 0, by, err, sizeof(err));
	else {
		snprintf(err, sizeof(err), "job %lld runs under Slurm: nvq %s does not work on "
		    "Slurm's jobs (Slurm's own suspend leaves their GPU memory in place)",
		    (long long)id, verb);
		k = -1;
	}
	if (k == -1)
		return ctl_req_error(r, "%s", err);
	proto_put_int(out, "id", id);
	if (strcmp(verb, "hold") == 0 || strcmp(verb, "release") == 0)
		proto_put_str(out, "state", "PENDING");	/* Slurm's hold is of pending jobs */
	return 0;
}
