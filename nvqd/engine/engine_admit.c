/*
 * engine_admit.c: admission and the queues, the first stage of a job's
 * life (job.h): a committed submit becomes an active job (engine_add,
 * engine_extras, engine_charge), counted per user, and is filed where
 * passes look for it by its state: the order of ready jobs (waitq.h), the
 * jobs waiting for --after (deptab.h) or for a place in their array
 * (gate.h), held ones, and, once running, e->held (engine_queue_in/out,
 * engine_state).  Also what changes a pending job in place (hold and
 * release, modify, top, nvq run's attach), drains, and the sentence for
 * why a job waits.  It calls engine_usage.c and engine_base.c only.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dep.h"
#include "engine_rooms.h"
#include "gpuctl.h"
#include "log.h"

/* uid's place in e->users, or -1; few users, a short array. */
static int
engine_user_find(const struct engine *e, uint32_t uid)
{
	int i;

	for (i = 0; i < e->nusers; i++)
		if (e->users[i].uid == uid)
			return i;
	return -1;
}

/* Likewise, made if it has none; -1 out of memory. */
static int
engine_user(struct engine *e, uint32_t uid)
{
	int i = engine_user_find(e, uid);
	void *n;

	if (i >= 0)
		return i;
	if ((n = realloc(e->users, (size_t)(e->nusers + 1) * sizeof(*e->users))) == NULL) {
		log_warnx("out of memory: uid %u's jobs go uncounted", (unsigned)uid);
		return -1;
	}
	e->users = n;
	memset(&e->users[e->nusers], 0, sizeof(e->users[0]));
	e->users[e->nusers].uid = uid;
	return e->nusers++;
}

int
engine_pending(const struct engine *e, uint32_t uid)
{
	int i = engine_user_find(e, uid);

	return i >= 0 ? e->users[i].pending : 0;
}

uint64_t
engine_stored(const struct engine *e, uint32_t uid)
{
	int i = engine_user_find(e, uid);

	return i >= 0 ? e->users[i].stored : 0;
}

int
engine_lc_active(const struct engine *e, uint32_t uid)
{
	int i = engine_user_find(e, uid);

	return i >= 0 ? e->users[i].lc : 0;
}

void
engine_lc(struct engine *e, struct job *j, int lc)
{
	int i;

	if ((lc != 0) == (j->lc != 0))
		return;
	j->lc = lc != 0;
	if ((i = engine_user(e, j->uid)) >= 0 && (e->users[i].lc += lc ? 1 : -1) < 0)
		e->users[i].lc = 0;
}

/* Counts a job in (d = 1) or out (-1) of its user's pending jobs. */
void
engine_count_pending(struct engine *e, const struct job *j, int d)
{
	int i;

	if (j->state != JOB_PENDING || (i = engine_user(e, j->uid)) < 0)
		return;
	if ((e->users[i].pending += d) < 0)
		e->users[i].pending = 0;
}

/* A job as the scheduler sees it. */
void
engine_sj(const struct engine *e, const struct job *j, double now, struct sched_job *sj)
{
	memset(sj, 0, sizeof(*sj));
	sj->id = j->id;
	sj->uid = j->uid;
	sj->share = e->cfg.fairshare ? fairshare_bonus(&e->fs, j->uid) : 0;
	/* a job whose end is not recorded yet still holds its GPUs */
	sj->running = engine_holds(j);
	sj->ngpus = j->ngpus;
	sj->mem = j->mem;
	sj->priority = j->priority;
	sj->qos = j->qos_i;
	sj->qos_preempts = e->cfg.qos.c[j->qos_i].preempts;
	sj->qos_prio = e->cfg.qos.c[j->qos_i].priority;
	sj->lc = j->lc;
	sj->submitted_at = j->state == JOB_SUSPENDED ? j->gc.suspended_at : j->submitted_at;
	sj->dep_wait = j->dep_wait;
	sj->gpumask = j->gpumask;
	sj->suspended = j->state == JOB_SUSPENDED;
	sj->may_resume = !j->gc.hold;
	/*
	 * a job that is switching or ending (STOPPING, EXITED: job.h; a linked
	 * job is never GONE) stays, and so does its GPU
	 */
	sj->busy = j->gc.phase != GC_NONE || job_life(j) >= JOB_LIFE_STOPPING;
	/* a Slurm step (adopt.h) is Slurm's to stop, never the scheduler's */
	sj->pinned = gpuctl_pinned(j, now) || j->slurm_id != 0;
	sj->requeue = j->requeue;
	/* memory its processes share cannot be moved out (gpuctl refuses), or a suspend failed */
	sj->unsuspendable = gpuctl_unsuspendable(j, now, NULL, 0);
	sj->slice_start = j->gc.slice_start;
	sj->restrict_gpus = j->placed;
	sj->allowed = j->allowed;
	sj->cpus = j->cpus;
	sj->host_mem = j->host_mem;
}

/* Pushes j on the front of a list of e->deps or e->held. */
static void
engine_list_push(struct job **head, struct job *j)
{
	j->lprev = NULL;
	j->lnext = *head;
	if (*head != NULL)
		(*head)->lprev = j;
	*head = j;
}

static void
engine_list_del(struct job **head, struct job *j)
{
	if (j->lprev != NULL)
		j->lprev->lnext = j->lnext;
	else
		*head = j->lnext;
	if (j->lnext != NULL)
		j->lnext->lprev = j->lprev;
	j->lnext = j->lprev = NULL;
}

/* Files an active job where passes look for it, by its state and --after. */
void
engine_queue_in(struct engine *e, struct job *j)
{
	/* what its place in the order depends on: pending, so its submit time */
	struct sched_job sj = { .priority = j->priority, .submitted_at = j->submitted_at,
	    .qos_prio = e->cfg.qos.c[j->qos_i].priority };

	if (j->state == JOB_PENDING && j->parked) {
		j->queue = JOB_Q_PARKED;	/* held: in no list, no pass sees it, no array place */
	} else if (j->state != JOB_PENDING) {
		/* running already: it holds its place, over the limit if it must */
		if (j->array_limit > 0)
			gates_enter(&e->gates, j->array_id, j->array_limit, &j->gn, 1);
		j->queue = JOB_Q_HELD;
		engine_list_push(&e->held, j);
	} else if (j->dep_wait) {
		int64_t on[PARSE_MAX_IDS];
		int k;

		j->queue = JOB_Q_DEPS;
		engine_list_push(&e->deps, j);
		/* filed under the job's or the array's id, whatever the kind */
		for (k = 0; k < j->nafter; k++)
			on[k] = dep_id(j->after[k]);
		if (deptab_add(&e->deptab, j, on, j->nafter, &j->depn) == -1)
			e->deps_all = 1;	/* found by reading every waiting job */
	} else if (j->array_limit > 0 &&
	    !gates_enter(&e->gates, j->array_id, j->array_limit, &j->gn, 0)) {
		j->queue = JOB_Q_GATED;	/* its array's places are taken: no pass sees it */
	} else {
		j->queue = JOB_Q_READY;
		j->on.key = sched_key(&sj, &e->cfg.sched);
		j->on.at = sj.submitted_at;
		j->on.id = j->id;
		/* nvq top: up its owner's list as if submitted at top_at, its own key kept */
		j->on.up_at = j->top_at > 0 && j->top_at < j->submitted_at ?
		    j->submitted_at - j->top_at : 0;
		j->on.up_key = e->cfg.sched.aging * j->on.up_at / 3600.0;
		if (waitq_add(&e->wq, j->uid, j->ngpus == 0 ? WAITQ_CPU : WAITQ_GPU, j->mem,
		    &j->on) == -1) {
			/* filed again at the next reload or restart */
			log_warnx("job %lld: out of memory; it waits for nvqd's next reload",
			    (long long)j->id);
			j->queue = JOB_Q_NONE;
		}
	}
}

void
engine_queue_out(struct engine *e, struct job *j)
{
	if (j->queue == JOB_Q_HELD)
		engine_list_del(&e->held, j);
	else if (j->queue == JOB_Q_DEPS) {
		engine_list_del(&e->deps, j);
		deptab_del(&e->deptab, j->depn, j->nafter);
		j->depn = NULL;
	}
	else if (j->queue == JOB_Q_READY)
		waitq_del(&e->wq, j->uid, j->ngpus == 0 ? WAITQ_CPU : WAITQ_GPU, j->mem,
		    &j->on);
	else if (j->queue == JOB_Q_GATED)
		gates_cancel(&e->gates, j->array_id, &j->gn);
	j->queue = JOB_Q_NONE;
}

/* Notes an id whose dependents (or itself, a job that came waiting) to look at. */
void
engine_dep_note(struct engine *e, int64_t id)
{
	int64_t *n;

	if (e->ndep_ids == e->dep_cap) {
		if ((n = realloc(e->dep_ids, (e->dep_cap ? e->dep_cap * 2 : 64) *
		    sizeof(*n))) == NULL) {
			e->deps_all = 1;
			return;
		}
		e->dep_ids = n;
		e->dep_cap = e->dep_cap ? e->dep_cap * 2 : 64;
	}
	e->dep_ids[e->ndep_ids++] = id;
}

/* Every change of a linked job's state goes through here, for the counts above. */
void
engine_state(struct engine *e, struct job *j, int state)
{
	if (e->on_change != NULL)
		e->on_change(NULL);
	engine_count_pending(e, j, -1);
	if ((j->state == JOB_PENDING) != (state == JOB_PENDING)) {
		engine_queue_out(e, j);
		j->state = state;
		engine_queue_in(e, j);
	} else
		j->state = state;
	engine_count_pending(e, j, 1);
}

static int
engine_link(struct engine *e, struct job *j)
{
	if (jobtab_put(&e->jobtab, j) == -1)
		return -1;
	if (j->array_id != 0 && deptab_add(&e->arrtab, j, &j->array_id, 1, &j->arrn) == -1) {
		jobtab_del(&e->jobtab, j);
		return -1;
	}
	engine_count_pending(e, j, 1);
	engine_queue_in(e, j);
	j->next = e->jobs;
	if (e->jobs != NULL)
		e->jobs->prev = j;
	e->jobs = j;
	e->njobs++;
	return 0;
}

/* j gives its array's place back: the next task waiting for one is filed to run. */
void
engine_gate_leave(struct engine *e, struct job *j)
{
	struct gate_node *n;
	struct job *next;

	if (j->array_limit == 0 || (n = gates_leave(&e->gates, j->array_id, &j->gn)) == NULL)
		return;
	next = (struct job *)(void *)((char *)n - offsetof(struct job, gn));
	next->queue = JOB_Q_NONE;	/* out of the gate's list already */
	engine_queue_in(e, next);
	engine_kick(e);
}

/* nvq run's descriptors, once its start has them or it will never start */
void
engine_close_stdio(struct engine *e, struct job *j)
{
	int i, had = 0;

	for (i = 0; i < 3; i++)
		if (j->stdio[i] >= 0) {
			close(j->stdio[i]);
			j->stdio[i] = -1;
			had = 1;
		}
	if (had && (i = engine_user_find(e, j->uid)) >= 0 && e->users[i].attached > 0)
		e->users[i].attached--;
}

int
engine_attached(const struct engine *e, uint32_t uid)
{
	int i = engine_user_find(e, uid);

	return i >= 0 ? e->users[i].attached : 0;
}

/* What engine_charge counted of j, given back: it is no longer active. */
void
engine_uncharge(struct engine *e, struct job *j)
{
	uint64_t less = j->stored;
	int i;

	if (j->stored_key != 0)
		less += stored_drop(&e->shared, j->stored_key);
	if ((i = engine_user_find(e, j->uid)) >= 0)
		e->users[i].stored = e->users[i].stored > less ? e->users[i].stored - less : 0;
	j->stored = 0;
	j->stored_key = 0;
}

int
engine_add(struct engine *e, int64_t id, uint32_t uid, uint32_t gid, const char *user,
    int ngpus, uint64_t mem, int priority, double now, int64_t limit, const int64_t *after,
    int nafter, const struct engine_array *arr)
{
	struct job *j;

	if ((j = calloc(1, sizeof(*j))) == NULL)
		return -1;
	j->id = id;
	j->uid = uid;
	j->gid = gid;
	j->stdio[0] = j->stdio[1] = j->stdio[2] = -1;
	snprintf(j->user, sizeof(j->user), "%s", user);
	j->state = JOB_PENDING;
	j->ngpus = ngpus;
	j->mem = mem;
	j->priority = priority;
	j->qos_i = e->cfg.qos.dflt;
	snprintf(j->qos, sizeof(j->qos), "%s", e->cfg.qos.c[j->qos_i].name);
	j->submitted_at = now;
	j->time_limit = limit;
	j->pidfd = -1;
	j->endfd = -1;
	j->go_fd = -1;
	gpuctl_init(j);
	if (nafter > PARSE_MAX_IDS)
		nafter = PARSE_MAX_IDS;
	if (nafter > 0)
		memcpy(j->after, after, sizeof(*after) * (size_t)nafter);
	j->nafter = nafter;
	j->dep_wait = nafter > 0;
	if (arr != NULL) {
		j->array_id = arr->id;
		j->array_index = arr->index;
		j->array_limit = arr->limit;
	}
	if (engine_link(e, j) == -1) {
		free(j);
		return -1;
	}
	if (nafter > 0)
		engine_dep_note(e, id);
	return 0;
}

/* The REASON of a job waiting for its dependencies: "Dependency (afterok:12)". */
static void
engine_dep_reason(const struct job *j, char *buf, size_t len)
{
	int64_t v;

	if (j->dep_first < 0 || j->dep_first >= j->nafter) {
		snprintf(buf, len, "Dependency");
		return;
	}
	v = j->after[j->dep_first];
	snprintf(buf, len, "Dependency (%s:%lld%s)", dep_kind_name(dep_kind(v)),
	    (long long)dep_id(v), dep_whole(v) ? "_" : "");
}

void
engine_reason(struct engine *e, const struct job *j, char *buf, size_t len)
{
	struct sched_decision dec = j->dec;
	struct sched_job sj;
	char a[16], b[16];

	if (j->queue == JOB_Q_PARKED) {
		snprintf(buf, len, "held; nvq release %lld starts it", (long long)j->id);
		return;
	}
	/* outside the passes: waits for a place in its array */
	if (j->queue == JOB_Q_GATED) {
		snprintf(buf, len, "array limit (%d of array %lld at once)", j->array_limit,
		    (long long)j->array_id);
		return;
	}
	/* not reached by the last pass (it stopped where nothing more could start) */
	if (j->state == JOB_PENDING && j->dec_pass != e->npass && e->npass > 0) {
		engine_sj(e, j, engine_now(), &sj);
		sched_explain(&e->pass, &sj, &dec);
	}
	switch (dec.why) {
	case SCHED_WAIT_DEP:
		engine_dep_reason(j, buf, len);
		break;
	case SCHED_WAIT_USER_JOBS:
		snprintf(buf, len, "user limit (%d running jobs)", e->cfg.sched.max_running_jobs);
		break;
	case SCHED_WAIT_USER_GPUS:
		snprintf(buf, len, "user limit (%d GPUs)", e->cfg.sched.max_gpus);
		break;
	case SCHED_WAIT_QOS_JOBS:
		snprintf(buf, len, "qos limit (%d running jobs of class %s per user)",
		    e->cfg.qos.c[j->qos_i].max_jobs_per_user, j->qos);
		break;
	case SCHED_WAIT_QOS_GPUS:
		snprintf(buf, len, "qos limit (%d GPUs of class %s per user)",
		    e->cfg.qos.c[j->qos_i].max_gpus_per_user, j->qos);
		break;
	case SCHED_WAIT_GPUS:
		snprintf(buf, len, "needs %d GPUs, %d present", j->ngpus, e->gpus.n);
		break;
	case SCHED_WAIT_MEM:
		fmt_size(dec.largest_free, b, sizeof(b));
		if (j->mem == 0)
			snprintf(buf, len, "needs %d whole GPU%s, none free", j->ngpus,
			    j->ngpus == 1 ? "" : "s");
		else if (j->state == JOB_SUSPENDED) {
			fmt_size(j->mem, a, sizeof(a));
			snprintf(buf, len, "resumes when %s is free on its GPU%s", a,
			    j->ngpus == 1 ? "" : "s");
		} else {
			fmt_size(j->mem, a, sizeof(a));
			snprintf(buf, len, "needs %s on %d GPU%s, largest free %s", a, j->ngpus,
			    j->ngpus == 1 ? "" : "s", b);
		}
		break;
	case SCHED_WAIT_PRIORITY:
		snprintf(buf, len, "priority (behind job %lld)", (long long)dec.behind);
		break;
	case SCHED_WAIT_PLACE:
		snprintf(buf, len, "needs %d GPU%s among those its -w and -x allow, not drained",
		    j->ngpus, j->ngpus == 1 ? "" : "s");
		break;
	case SCHED_WAIT_CPUS:
		snprintf(buf, len, "waiting for %d CPU%s: %llu of %d in use", j->cpus > 0 ?
		    j->cpus : 1, j->cpus > 1 ? "s" : "", (unsigned long long)dec.host_used,
		    e->cfg.sched.cpus);
		break;
	case SCHED_WAIT_HOST_MEM:
		fmt_size(j->host_mem, a, sizeof(a));
		fmt_size(dec.host_used, b, sizeof(b));
		{
			char t[16];

			fmt_size(e->cfg.sched.host_mem, t, sizeof(t));
			snprintf(buf, len, "waiting for %s of host memory: %s of %s in use", a, b,
			    t);
		}
		break;
	case SCHED_SUSPENDED:
		snprintf(buf, len, "suspended by %s; nvq resume %lld", j->gc.by[0] ?
		    j->gc.by : "a user", (long long)j->id);
		break;
	default:
		snprintf(buf, len, "%s", j->state == JOB_PENDING ? "starting" : "");
	}
}

void
engine_charge(struct engine *e, struct job *j, uint64_t own, int64_t key, uint64_t shared)
{
	uint64_t more = 0;
	int i;

	if ((i = engine_user(e, j->uid)) < 0 ||
	    (key != 0 && stored_add(&e->shared, key, shared, &more) == -1)) {
		log_warnx("out of memory: job %lld's stored bytes go uncounted", (long long)j->id);
		return;
	}
	e->users[i].stored += own + more;
	j->stored = own;
	j->stored_key = key;
}

/* The GPUs whose UUIDs list names (comma-separated), by index. */
static uint64_t
engine_uuid_mask(const struct engine *e, const char *list)
{
	uint64_t mask = 0;
	const char *p = list, *end;
	size_t n;
	int g;

	while (p != NULL && *p != '\0') {
		end = strchr(p, ',');
		n = end ? (size_t)(end - p) : strlen(p);
		for (g = 0; g < e->gpus.n; g++)
			if (strlen(e->gpus.gpus[g].uuid) == n &&
			    strncmp(e->gpus.gpus[g].uuid, p, n) == 0)
				mask |= 1ULL << g;
		p = end ? end + 1 : NULL;
	}
	return mask;
}

void
engine_extras(struct engine *e, struct job *j, const struct engine_extra *x)
{
	engine_queue_out(e, j);
	j->parked = x->parked && j->state == JOB_PENDING;
	if (x->rank_at > 0)
		j->submitted_at = x->rank_at;	/* only the order reads it */
	j->top_at = x->top_at;
	if (x->allow != NULL || x->deny != NULL) {
		j->placed = 1;
		j->allowed = (x->allow != NULL ? engine_uuid_mask(e, x->allow) :
		    (e->gpus.n >= 64 ? ~0ULL : (1ULL << e->gpus.n) - 1)) &
		    ~engine_uuid_mask(e, x->deny);
	}
	engine_queue_in(e, j);
}

void
engine_qos(struct engine *e, struct job *j, const char *name)
{
	int i = name != NULL ? qos_find(&e->cfg.qos, name) : -1;

	if (i == -1 && name != NULL)
		log_warnx("job %lld: class %s is not in the configuration: it is of %s",
		    (long long)j->id, name, e->cfg.qos.c[e->cfg.qos.dflt].name);
	if (i == -1)
		i = e->cfg.qos.dflt;
	if (i == j->qos_i && strcmp(j->qos, e->cfg.qos.c[i].name) == 0)
		return;
	engine_queue_out(e, j);
	j->qos_i = i;
	snprintf(j->qos, sizeof(j->qos), "%s", e->cfg.qos.c[i].name);
	engine_queue_in(e, j);
}

int
engine_park(struct engine *e, struct job *j, int parked, const char *why)
{
	if (store_job_held(e->store, j->id, parked, engine_now(), why) == -1)
		return -1;
	engine_queue_out(e, j);
	j->parked = parked;
	engine_queue_in(e, j);
	if (!parked && j->dep_wait)
		engine_dep_note(e, j->id);	/* its --after, looked at again */
	log_info("job %lld %s", (long long)j->id, why);
	engine_kick(e);
	return 0;
}

int
engine_modify(struct engine *e, struct job *j, const struct store_change *c, const char *why)
{
	if (store_job_modify(e->store, j->id, c, engine_now(), why) == -1)
		return -1;
	/* out of the order under its old keys, in again under the new */
	engine_queue_out(e, j);
	if (c->has_priority)
		j->priority = c->priority;
	if (c->has_mem)
		j->mem = c->mem;
	if (c->has_time)
		j->time_limit = c->time_limit;
	if (c->top_at > 0)
		j->top_at = c->top_at;
	if (c->has_cpus)
		j->cpus = c->cpus;
	if (c->has_host_mem) {
		j->host_mem = c->host_mem;
		j->mem_per_cpu = c->mem_per_cpu;
	}
	engine_queue_in(e, j);
	log_info("job %lld %s", (long long)j->id, why);
	engine_kick(e);
	return 0;
}

double
engine_top_at(struct engine *e, const struct job *j)
{
	const struct order_node *n;
	const struct job *k;

	n = waitq_front(&e->wq, j->uid, j->ngpus == 0 ? WAITQ_CPU : WAITQ_GPU);
	for (; n != NULL; n = order_next(n)) {
		k = (const struct job *)(const void *)n;	/* on is its job's first field */
		if (k == j)
			return 0;
		if (k->priority == j->priority)
			return n->at - n->up_at - 0.001;
	}
	return 0;
}

void
engine_drain_why(struct engine *e, int i, const char *by, const char *reason)
{
	snprintf(e->drain_why[i], sizeof(e->drain_why[i]), "by %s%s%.150s", by ? by : "?",
	    reason && *reason ? ": " : "", reason ? reason : "");
}

int
engine_drain(struct engine *e, int i, int drained, const char *by, const char *reason)
{
	if (store_drain(e->store, e->gpus.gpus[i].uuid, drained, by, reason, engine_now()) == -1)
		return -1;
	if (drained)
		e->drained |= 1ULL << i;
	else
		e->drained &= ~(1ULL << i);
	engine_drain_why(e, i, by, reason);
	log_info("GPU %d (%s) %s by %s%s%s", i, e->gpus.gpus[i].uuid, drained ? "drained" :
	    "undrained", by, reason && *reason ? ": " : "", reason ? reason : "");
	engine_kick(e);
	return 0;
}

int
engine_attach(struct engine *e, struct job *j, const int fds[3])
{
	int i;

	engine_close_stdio(e, j);
	for (i = 0; i < 3; i++)
		j->stdio[i] = fds[i];
	if ((fds[0] >= 0 || fds[1] >= 0 || fds[2] >= 0) && (i = engine_user(e, j->uid)) >= 0)
		e->users[i].attached++;
	if (j->parked && engine_park(e, j, 0, "released: nvq run attached") == -1) {
		engine_close_stdio(e, j);
		return -1;
	}
	return 0;
}
