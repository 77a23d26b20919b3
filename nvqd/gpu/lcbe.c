/*
 * lcbe.c: the lc/be page and its slots (lcbe.h).
 *
 * A page per GPU, a memfd made at the first hello of a job there, mode
 * 0644 and nvqd's (root's): an lc process gets the read-write descriptors
 * of its job's GPUs' pages alone, a be process ones opened read-only
 * through /proc/self/fd (its mapping can never be made writable, and it
 * cannot open the file again for writing: it is not the owner).  In GPU
 * g's page only up[g] is used (common/lcbe_page.h).  Slots are the lc processes of the host, one per
 * hook session; a slot's bits and owner are cleared when it is released,
 * so an lc job killed with SIGKILL leaves nothing up once nvqd sees its
 * connections close.  The live page (one, written by nvqd alone, read-only
 * to be processes of hook version 5 on) names the slots given on each GPU:
 * a page an lc process handed on before its end raises nothing after it.
 * Costs: a hello is O(slots); nothing here walks jobs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lcbe.h"
#include "lcbe_page.h"
#include "lcbestat.h"
#include "log.h"

/* One GPU's page: made at the first hello of a job there. */
struct lcbe_gpu {
	int		fd_rw, fd_ro;
	struct lcbe_page *page;
	int		failed;		/* could not be made: said once, not tried again */
};

/*
 * An lc job's processes take at most this many of the host's LCBE_SLOTS:
 * one job that connects again and again cannot leave the others unyielded
 * to (a rank per GPU of an 8-GPU job, and some helpers, fit).
 */
#define LCBE_JOB_SLOTS	16
/* and one user's at most this many: two users' lc jobs always find slots */
#define LCBE_USER_SLOTS	32

struct lcbe {
	struct lcbe_gpu	g[LCBE_GPUS];
	int		live_rw, live_ro, live_failed;
	struct lcbe_live *live;		/* nvqd's alone (lcbe_page.h) */
	int		used[LCBE_SLOTS];
	int64_t		job[LCBE_SLOTS];	/* whose slot it is */
	uint32_t	uid[LCBE_SLOTS];	/* and its user */
};

/*
 * A page of LCBE_SIZE named name: its read-write and read-only descriptors
 * and nvqd's mapping; NULL (errno set, nothing left open) if it cannot be.
 * Sealed at its size: an lc process holds its GPUs' pages writable, and a
 * truncate would make every access to a mapping, nvqd's and be processes',
 * a SIGBUS.  F_SEAL_SEAL: nor may it add seals of its own.
 */
static void *
lcbe_make(const char *name, int *rw, int *ro)
{
	char path[64];
	void *m;
	int e;

	*rw = *ro = -1;
	if ((*rw = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING)) == -1 ||
	    ftruncate(*rw, LCBE_SIZE) == -1 || fchmod(*rw, 0644) == -1 ||
	    fcntl(*rw, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) == -1)
		goto fail;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", *rw);
	if ((*ro = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		goto fail;
	if ((m = mmap(NULL, LCBE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, *rw, 0)) != MAP_FAILED)
		return m;
fail:
	e = errno;
	if (*rw >= 0)
		close(*rw);
	if (*ro >= 0)
		close(*ro);
	*rw = *ro = -1;
	errno = e;
	return NULL;
}

/* GPU g's page, made if need be; NULL if it cannot be. */
static struct lcbe_gpu *
lcbe_page_of(struct lcbe *l, int g)
{
	struct lcbe_gpu *p = &l->g[g];

	if (p->page != NULL || p->failed)
		return p->page != NULL ? p : NULL;
	if ((p->page = lcbe_make("nvq-lcbe", &p->fd_rw, &p->fd_ro)) != NULL)
		return p;
	log_warn("GPU %d: the lc/be page could not be made: lc jobs there are not yielded to", g);
	p->failed = 1;
	return NULL;
}

/* The live page, made if need be; NULL if it cannot be. */
static struct lcbe_live *
lcbe_live_of(struct lcbe *l)
{
	if (l->live != NULL || l->live_failed)
		return l->live;
	if ((l->live = lcbe_make("nvq-lcbe-live", &l->live_rw, &l->live_ro)) != NULL)
		return l->live;
	log_warn("the lc/be live page could not be made: be jobs wait for every raised bit");
	l->live_failed = 1;
	return NULL;
}

int
lcbe_hello(struct engine *e, struct server_conn *conn, struct job *j, int live)
{
	struct proto_buf b = { 0 };
	struct lcbe_gpu *p[LCBE_MAX_FDS];
	struct lcbe *l = e->lcbe;
	int fds[LCBE_MAX_FDS + 1], gpu[LCBE_MAX_FDS], g, k, n = 0, slot = -1;

	if (j->gpumask == 0)
		return -1;
	if (l == NULL && (l = e->lcbe = calloc(1, sizeof(*l))) == NULL)
		return -1;
	if (j->lc) {
		int mine = 0;

		for (k = 0, g = 0; k < LCBE_SLOTS; k++) {
			g += l->used[k] && l->job[k] == j->id;
			mine += l->used[k] && l->uid[k] == j->uid;
		}
		if (g >= LCBE_JOB_SLOTS) {
			log_warnx("job %lld: more than %d lc processes of one job: this one is not "
			    "yielded to", (long long)j->id, LCBE_JOB_SLOTS);
			return -1;
		}
		if (mine >= LCBE_USER_SLOTS) {
			log_warnx("job %lld: more than %d lc processes of user %s: this one is not "
			    "yielded to", (long long)j->id, LCBE_USER_SLOTS, j->user);
			return -1;
		}
		for (slot = 0; slot < LCBE_SLOTS && l->used[slot]; slot++)
			;
		if (slot == LCBE_SLOTS) {
			log_warnx("job %lld: more than %d lc processes on this host: this one is "
			    "not yielded to", (long long)j->id, LCBE_SLOTS);
			return -1;
		}
	}
	proto_begin(&b, MSG_HOOK_LCBE);
	proto_put_int(&b, "lc", j->lc != 0);
	if (j->lc)
		proto_put_int(&b, "slot", slot);
	proto_put_int(&b, "wait", e->cfg.lcbe.be_max_wait);
	/* a page per GPU of the job, in this order: an lc process writes its GPUs' alone */
	for (g = 0; g < e->gpus.n && g < LCBE_GPUS && n < LCBE_MAX_FDS; g++)
		if ((j->gpumask & (1ULL << g)) && (p[n] = lcbe_page_of(l, g)) != NULL) {
			proto_put_int(&b, "gpu", g);
			fds[n] = j->lc ? p[n]->fd_rw : p[n]->fd_ro;
			gpu[n++] = g;
		}
	if (n == 0 || (j->lc && lcbe_live_of(l) == NULL)) {
		proto_buf_free(&b);
		return -1;
	}
	/* a be process of hook version 5 on reads who is lc by nvqd's word: after its pages */
	k = n;
	if (!j->lc && live && lcbe_live_of(l) != NULL) {
		proto_put_int(&b, "live", 1);
		fds[k++] = l->live_ro;
	}
	if (server_push_fd(conn, &b, fds, k) == -1) {
		log_warnx("job %lld: the lc/be pages could not be sent to a process", (long long)j->id);
		return -1;
	}
	if (!j->lc)
		return -1;
	l->used[slot] = 1;
	l->job[slot] = j->id;
	l->uid[slot] = j->uid;
	for (k = 0; k < n; k++) {
		__atomic_store_n(&p[k]->page->owner[slot], j->id, __ATOMIC_RELAXED);
		__atomic_fetch_or(&l->live->live[gpu[k]], 1ULL << slot, __ATOMIC_SEQ_CST);
	}
	return slot;
}

void
lcbe_release(struct engine *e, int slot)
{
	struct lcbe *l = e->lcbe;
	struct lcbe_page *p;
	int g;

	if (l == NULL || slot < 0 || slot >= LCBE_SLOTS || !l->used[slot])
		return;
	for (g = 0; g < LCBE_GPUS; g++) {
		if (l->live != NULL)	/* first: what its page still says no longer counts */
			__atomic_fetch_and(&l->live->live[g], ~(1ULL << slot), __ATOMIC_SEQ_CST);
		if ((p = l->g[g].page) == NULL)
			continue;
		__atomic_fetch_and(&p->up[g], ~(1ULL << slot), __ATOMIC_SEQ_CST);
		__atomic_store_n(&p->beat[slot], 0, __ATOMIC_RELAXED);
		__atomic_store_n(&p->owner[slot], 0, __ATOMIC_RELAXED);
	}
	l->used[slot] = 0;
}

int
lcbe_report(struct job *j, const struct proto_msg *m, uint64_t *last, char *err, size_t errlen)
{
	struct lcbestat_claims c;
	int k;

	if (lcbestat_parse(m, &c, err, errlen) == -1)
		return -1;
	/* a total of the process's: only what is new counts, and sums stop short of wrapping */
	if (c.has_yield && lcbestat_yield(&j->lc_yield_us, last, c.yield_us, err, errlen) == -1)
		return -1;
	if (c.n > 0 && j->lc_hist == NULL &&
	    (j->lc_hist = calloc(LCBE_HIST, sizeof(uint64_t))) == NULL)
		return 0;
	for (k = 0; k < c.n; k++)
		lcbestat_add(&j->lc_hist[c.bucket[k]], c.count[k]);
	return 0;
}

int
lcbe_gpu(struct engine *e, int g, const char *ids, char *lc, size_t len)
{
	struct lcbe *l = e->lcbe;
	const char *p = ids;
	struct job *j;
	size_t off = 0;
	char *end;
	long long id;

	lc[0] = '\0';
	while (*p != '\0') {
		id = strtoll(p, &end, 10);
		if (end == p)
			break;
		if ((j = engine_find(e, id)) != NULL && j->lc && off < len)
			off += (size_t)snprintf(lc + off, len - off, "%s%lld", off ? "," : "", id);
		p = *end == ',' ? end + 1 : end;
	}
	if (off >= len && len > 0)
		lc[len - 1] = '\0';
	return l != NULL && g >= 0 && g < LCBE_GPUS && l->g[g].page != NULL && l->live != NULL &&
	    (__atomic_load_n(&l->g[g].page->up[g], __ATOMIC_RELAXED) &
	    __atomic_load_n(&l->live->live[g], __ATOMIC_RELAXED)) != 0;
}

void
lcbe_put_live(const struct job *j, struct proto_buf *out)
{
	if (j->lc_hist != NULL) {
		proto_put_int(out, "lc_p50_ns", (int64_t)lcbestat_quantile(j->lc_hist, 0.5));
		proto_put_int(out, "lc_p99_ns", (int64_t)lcbestat_quantile(j->lc_hist, 0.99));
		proto_put_int(out, "lc_p999_ns", (int64_t)lcbestat_quantile(j->lc_hist, 0.999));
	}
	if (!j->lc && j->lc_yield_us > 0)
		proto_put_int(out, "be_yield_us", (int64_t)j->lc_yield_us);
}

void
lcbe_free(struct engine *e)
{
	struct lcbe *l = e->lcbe;
	int g;

	if (l == NULL)
		return;
	for (g = 0; g < LCBE_GPUS; g++) {
		if (l->g[g].page != NULL)
			munmap(l->g[g].page, LCBE_SIZE);
		if (l->g[g].page != NULL || l->g[g].failed) {
			if (l->g[g].fd_rw >= 0)
				close(l->g[g].fd_rw);
			if (l->g[g].fd_ro >= 0)
				close(l->g[g].fd_ro);
		}
	}
	if (l->live != NULL) {
		munmap(l->live, LCBE_SIZE);
		close(l->live_rw);
		close(l->live_ro);
	}
	free(l);
	e->lcbe = NULL;
}
