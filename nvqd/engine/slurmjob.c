/*
 * slurmjob.c: sbatch's arguments and script, squeue's rows, Slurm's states,
 * scontrol's GPUs and the plugin's peaks (slurmjob.h).  No I/O.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "slurmjob.h"

/* the largest GPU index on a node it believes */
#define SLURM_MAX_INDEX	1023

uint64_t
slurmjob_shards(uint64_t mem, uint64_t shard_size)
{
	if (shard_size == 0)
		return 0;
	return mem / shard_size + (mem % shard_size != 0);
}

/* Appends one argument to buf; -1 if it does not fit. */
static int
slurmjob_arg(char *buf, size_t len, size_t *off, char **argv, int *n, int max,
    const char *fmt, ...)
{
	va_list ap;
	int k;

	if (*n >= max - 1 || *off >= len)
		return -1;
	va_start(ap, fmt);
	k = vsnprintf(buf + *off, len - *off, fmt, ap);
	va_end(ap);
	if (k < 0 || (size_t)k >= len - *off)
		return -1;
	argv[(*n)++] = buf + *off;
	*off += (size_t)k + 1;
	return 0;
}

int
slurmjob_sbatch_args(const struct slurm_req *r, const char *sbatch, char *buf, size_t len,
    char **argv, int max, char *why, size_t whylen)
{
	size_t off = 0;
	int n = 0, ok = 0;
	int64_t t = r->time_limit;

	if (strchr(r->out, '%') != NULL || strchr(r->err, '%') != NULL) {
		snprintf(why, whylen, "Slurm reads %% in output paths as its own patterns; "
		    "give -o and -e without %%");
		return -1;
	}
	if (r->mem > 0 && r->gpus == 1 && r->shard_size == 0) {
		snprintf(why, whylen, "[cluster] shard_size is 0");
		return -1;
	}
	ok = slurmjob_arg(buf, len, &off, argv, &n, max, "%s", sbatch) == 0 &&
	    slurmjob_arg(buf, len, &off, argv, &n, max, "--parsable") == 0 &&
	    slurmjob_arg(buf, len, &off, argv, &n, max, "--job-name=%s", r->name) == 0 &&
	    slurmjob_arg(buf, len, &off, argv, &n, max, "--chdir=%s", r->cwd) == 0 &&
	    slurmjob_arg(buf, len, &off, argv, &n, max, "--output=%s", r->out) == 0 &&
	    slurmjob_arg(buf, len, &off, argv, &n, max, "--error=%s", r->err) == 0 &&
	    slurmjob_arg(buf, len, &off, argv, &n, max, "--comment=nvq:%lld", (long long)r->id) == 0;
	if (ok && r->gpus == 1 && r->mem > 0)
		ok = slurmjob_arg(buf, len, &off, argv, &n, max, "--gres=shard:%llu",
		    (unsigned long long)slurmjob_shards(r->mem, r->shard_size)) == 0;
	else if (ok && r->gpus > 0)
		ok = slurmjob_arg(buf, len, &off, argv, &n, max, "--gres=gpu:%d", r->gpus) == 0;
	if (ok && r->gpus > 0 && r->mem > 0)
		ok = slurmjob_arg(buf, len, &off, argv, &n, max, "--gpu-mem=%lluM",
		    (unsigned long long)((r->mem + (1 << 20) - 1) >> 20)) == 0;
	if (ok && t > 0)
		ok = slurmjob_arg(buf, len, &off, argv, &n, max, "--time=%lld:%02lld:%02lld",
		    (long long)(t / 3600), (long long)(t / 60 % 60), (long long)(t % 60)) == 0;
	if (ok && r->cpus > 0)
		ok = slurmjob_arg(buf, len, &off, argv, &n, max, "--cpus-per-task=%d", r->cpus) == 0;
	if (ok && r->mem_per_cpu > 0)
		ok = slurmjob_arg(buf, len, &off, argv, &n, max, "--mem-per-cpu=%lluM",
		    (unsigned long long)((r->mem_per_cpu + (1 << 20) - 1) >> 20)) == 0;
	else if (ok && r->host_mem > 0)
		ok = slurmjob_arg(buf, len, &off, argv, &n, max, "--mem=%lluM",
		    (unsigned long long)((r->host_mem + (1 << 20) - 1) >> 20)) == 0;
	if (ok && r->partition != NULL && *r->partition != '\0')
		ok = slurmjob_arg(buf, len, &off, argv, &n, max, "--partition=%s", r->partition) == 0;
	if (ok && r->account != NULL && *r->account != '\0')
		ok = slurmjob_arg(buf, len, &off, argv, &n, max, "--account=%s", r->account) == 0;
	if (ok && r->warn_sig > 0)
		ok = slurmjob_arg(buf, len, &off, argv, &n, max, "--signal=%s%d@%d",
		    r->warn_batch ? "B:" : "", r->warn_sig, r->warn_time) == 0;
	if (!ok) {
		snprintf(why, whylen, "sbatch's arguments are too long");
		return -1;
	}
	argv[n] = NULL;
	return n;
}

int
slurmjob_script(int64_t id, const char *argv, int argv_len, char *buf, size_t len)
{
	size_t off;
	int i, k;

	k = snprintf(buf, len, "#!/bin/sh\n# nvq job %lld\nexec", (long long)id);
	if (k < 0 || (size_t)k >= len || argv_len <= 0 || argv[argv_len - 1] != '\0')
		return -1;
	off = (size_t)k;
	for (i = 0; i < argv_len; i++) {
		if (i == 0 || argv[i - 1] == '\0') {
			if (off + 2 >= len)
				return -1;
			buf[off++] = ' ';
			buf[off++] = '\'';
		}
		if (argv[i] == '\0') {
			if (off + 1 >= len)
				return -1;
			buf[off++] = '\'';
		} else if (argv[i] == '\'') {
			if (off + 4 >= len)
				return -1;
			memcpy(buf + off, "'\\''", 4);
			off += 4;
		} else {
			if (off + 1 >= len)
				return -1;
			buf[off++] = argv[i];
		}
	}
	if (off + 2 > len)
		return -1;
	buf[off++] = '\n';
	buf[off] = '\0';
	return (int)off;
}

/* The next |-ended field of *p into out (cut to len); -1 if there is none. */
static int
slurmjob_field(const char **p, char *out, size_t len)
{
	const char *bar = strchr(*p, '|');
	size_t n;

	if (bar == NULL)
		return -1;
	n = (size_t)(bar - *p);
	if (n >= len)
		n = len - 1;
	memcpy(out, *p, n);
	out[n] = '\0';
	*p = bar + 1;
	return 0;
}

double
slurmjob_time(const char *s)
{
	struct tm tm;
	const char *end;

	memset(&tm, 0, sizeof(tm));
	if ((end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm)) == NULL || *end != '\0')
		return 0;
	tm.tm_isdst = -1;
	return (double)mktime(&tm);
}

int
slurmjob_parse_row(const char *line, struct slurm_row *r)
{
	char id[24], st[24], code[24], start[32], end[32], *e;
	long long v;

	memset(r, 0, sizeof(*r));
	if (slurmjob_field(&line, id, sizeof(id)) == -1 ||
	    slurmjob_field(&line, st, sizeof(st)) == -1 ||
	    slurmjob_field(&line, code, sizeof(code)) == -1 ||
	    slurmjob_field(&line, r->nodes, sizeof(r->nodes)) == -1 ||
	    slurmjob_field(&line, start, sizeof(start)) == -1 ||
	    slurmjob_field(&line, end, sizeof(end)) == -1 ||
	    slurmjob_field(&line, r->reason, sizeof(r->reason)) == -1)
		return -1;
	v = strtoll(id, &e, 10);
	if (e == id || *e != '\0' || v <= 0)
		return -1;
	r->sid = v;
	if (st[0] == '\0' || strspn(st, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") != strlen(st))
		return -1;
	snprintf(r->state, sizeof(r->state), "%s", st);
	v = strtoll(code, &e, 10);
	r->status = e != code && *e == '\0' && v >= 0 && v <= 0xffff ? (int)v : 0;
	r->start = slurmjob_time(start);
	r->end = slurmjob_time(end);
	return 0;
}

static const struct {
	const char	*slurm, *nvq;
	int		final;
} slurm_states[] = {
	{ "PENDING", "PENDING", 0 }, { "REQUEUED", "PENDING", 0 },
	{ "REQUEUE_HOLD", "PENDING", 0 }, { "REQUEUE_FED", "PENDING", 0 },
	{ "RESV_DEL_HOLD", "PENDING", 0 },
	{ "CONFIGURING", "RUNNING", 0 }, { "RUNNING", "RUNNING", 0 },
	{ "COMPLETING", "RUNNING", 0 }, { "RESIZING", "RUNNING", 0 },
	{ "SIGNALING", "RUNNING", 0 }, { "STAGE_OUT", "RUNNING", 0 },
	{ "STOPPED", "RUNNING", 0 }, { "SUSPENDED", "SUSPENDED", 0 },
	{ "COMPLETED", "COMPLETED", 1 }, { "CANCELLED", "CANCELLED", 1 },
	{ "TIMEOUT", "TIMEOUT", 1 }, { "DEADLINE", "TIMEOUT", 1 },
	{ "NODE_FAIL", "NODE_FAIL", 1 }, { "BOOT_FAIL", "FAILED", 1 },
	{ "FAILED", "FAILED", 1 }, { "OUT_OF_MEMORY", "FAILED", 1 },
	{ "PREEMPTED", "FAILED", 1 }, { "REVOKED", "CANCELLED", 1 },
	{ "SPECIAL_EXIT", "FAILED", 1 },
};

const char *
slurmjob_state(const char *state, int *final)
{
	size_t i;

	for (i = 0; i < sizeof(slurm_states) / sizeof(slurm_states[0]); i++)
		if (strcmp(state, slurm_states[i].slurm) == 0) {
			*final = slurm_states[i].final;
			return slurm_states[i].nvq;
		}
	*final = 0;
	return NULL;
}

/* Appends s to out at *off (a comma first unless at 0); -1 if it does not fit. */
static int
slurmjob_put(char *out, size_t len, size_t *off, const char *node, size_t nlen, long idx)
{
	int k;

	if (idx >= 0)
		k = snprintf(out + *off, len - *off, "%s%.*s:%ld", *off ? "," : "", (int)nlen,
		    node, idx);
	else
		k = snprintf(out + *off, len - *off, "%s%.*s", *off ? "," : "", (int)nlen, node);
	if (k < 0 || (size_t)k >= len - *off)
		return -1;
	*off += (size_t)k;
	return 0;
}

int
slurmjob_gpus(const char *line, char *out, size_t len)
{
	const char *p = line, *node, *next, *g, *idx;
	size_t off = 0, nlen;
	long a, b, i;
	char *e;

	if (len == 0)
		return -1;
	out[0] = '\0';
	while ((p = strstr(p, " Nodes=")) != NULL) {
		node = p + 7;
		nlen = strcspn(node, " ");
		if (nlen == 0)
			return -1;
		next = strstr(node, " Nodes=");
		g = strstr(node, " GRES=");
		idx = g != NULL && (next == NULL || g < next) ? strstr(g, "(IDX:") : NULL;
		if (idx == NULL || (next != NULL && idx > next)) {
			if (slurmjob_put(out, len, &off, node, nlen, -1) == -1)
				return -1;
		} else {
			for (idx += 5;;) {
				a = strtol(idx, &e, 10);
				if (e == idx || a < 0)
					break;
				if (a > SLURM_MAX_INDEX)
					return -1;
				b = a;
				if (*e == '-') {
					idx = e + 1;
					b = strtol(idx, &e, 10);
					if (e == idx || b < a || b > SLURM_MAX_INDEX)
						return -1;
				}
				for (i = a; i <= b; i++)
					if (slurmjob_put(out, len, &off, node, nlen, i) == -1)
						return -1;
				if (*e != ',')
					break;
				idx = e + 1;
			}
		}
		p = node;
	}
	return off == 0 ? -1 : 0;
}

int
slurmjob_peak_line(const char *line, char *gpu, size_t len, uint64_t *bytes)
{
	char node[128];
	unsigned long long v;
	long idx;
	int n = 0, k;

	if (sscanf(line, "%127s %ld %llu%n", node, &idx, &v, &n) != 3 || idx < 0 ||
	    idx > SLURM_MAX_INDEX)
		return -1;
	while (line[n] == ' ' || line[n] == '\n')
		n++;
	if (line[n] != '\0' || strspn(node, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789-_.") != strlen(node))
		return -1;
	k = snprintf(gpu, len, "%s:%ld", node, idx);
	if (k < 0 || (size_t)k >= len)
		return -1;
	*bytes = v;
	return 0;
}
