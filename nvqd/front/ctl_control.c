/*
 * ctl_control.c: the requests that steer the GPUs and what runs on them:
 * suspend and resume of a job (its GPU memory out to host memory and back,
 * through GPU control, gpuctl.h), drain and undrain of a GPU, and a Slurm
 * step handed to nvqd by nvq's SPANK plugin (adopt.h).  ctl.c's dispatcher
 * has checked who sends each (the job's owner or an admin; an admin; root)
 * and found the job; the handlers here do the work.  Each returns 0 or -1
 * with req->err set.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "adopt.h"
#include "ctl_control.h"
#include "ctl_req.h"
#include "gpuctl.h"
#include "submit.h"

/* nvq suspend / nvq resume: the job's GPU memory out to host memory, and back. */
int
ctl_control_suspend(struct ctl_req *r, struct proto_buf *out)
{
	int suspend = r->msg->type == MSG_SUSPEND;
	struct gc_event ev = { 0 };
	char by[64], err[896];
	int64_t id = ctl_req_id(r);

	if (r->slurm)
		return ctl_req_slurm(r, out, suspend ? "suspend" : "resume");
	ctl_req_user(r->uid, by, sizeof(by));
	ev.type = suspend ? GC_EV_SUSPEND : GC_EV_RELEASE;
	ev.job = id;
	ev.n = GC_USER;
	snprintf(ev.by, sizeof(ev.by), "%s", by);
	if (engine_gpu(r->e, &ev, err, sizeof(err)) == -1)
		return ctl_req_error(r, "cannot %s job %lld: %s", suspend ? "suspend" : "resume",
		    (long long)id, err);
	proto_put_int(out, "id", id);
	return 0;
}

/* nvq drain GPU [REASON] / nvq undrain GPU: administrators only (its row). */
int
ctl_control_drain(struct ctl_req *r, struct proto_buf *out)
{
	int drain = r->msg->type == MSG_DRAIN, g;
	const char *spec = proto_str(r->msg, "gpu"), *reason = proto_str(r->msg, "reason");
	char by[64];

	if (spec == NULL)
		return ctl_req_error(r, "which GPU? (an index or a UUID)");
	if ((g = submit_gpu_index(r->e, spec, strlen(spec), r->err, sizeof(r->err))) == -1)
		return -1;
	if (!!(r->e->drained & (1ULL << g)) == drain)
		return ctl_req_error(r, "GPU %d is %s", g, drain ? "drained already" :
		    "not drained");
	ctl_req_user(r->uid, by, sizeof(by));
	if (engine_drain(r->e, g, drain, by, reason) == -1)
		return ctl_req_error(r, "cannot record the %s of GPU %d (see nvqd's log)",
		    drain ? "drain" : "undrain", g);
	proto_put_int(out, "index", g);
	proto_put_str(out, "uuid", r->e->gpus.gpus[g].uuid);
	return 0;
}

/*
 * nvq's SPANK plugin in slurmstepd, as root (its row): the step becomes a
 * running job (adopt.h), the peer's pid its supervisor.
 */
int
ctl_control_adopt(struct ctl_req *r, struct proto_buf *out)
{
	struct adopt_req a;
	char uuids[SCHED_MAX_GPUS * 97], status[PATH_MAX], user[64];
	int64_t id;

	if (r->e->slurm != NULL)
		return ctl_req_error(r, "this nvqd is in front of Slurm ([cluster] engine = "
		    "slurm); the plugin's nvqd= must name a node's own nvqd");
	memset(&a, 0, sizeof(a));
	a.slurm_job = proto_int(r->msg, "slurm_job", 0);
	a.step = proto_str(r->msg, "step");
	a.uid = (uint32_t)proto_int(r->msg, "uid", -1);
	a.gid = (uint32_t)proto_int(r->msg, "gid", -1);
	a.gpus = proto_str(r->msg, "gpus");
	a.mem = (uint64_t)proto_int(r->msg, "mem", 0);
	if (proto_int(r->msg, "uid", -1) < 0 || proto_int(r->msg, "gid", -1) < 0 ||
	    proto_int(r->msg, "mem", 0) < 0)
		return ctl_req_error(r, "a step needs its uid, gid and memory");
	ctl_req_user(a.uid, user, sizeof(user));
	a.user = user;
	if (adopt_step(r->e, &a, r->pid, &id, uuids, sizeof(uuids), r->err, sizeof(r->err)) == -1)
		return -1;
	engine_status_path(r->e, id, status, sizeof(status));
	proto_put_int(out, "id", id);
	proto_put_str(out, "uuids", uuids);
	proto_put_str(out, "status", status);
	return 0;
}
