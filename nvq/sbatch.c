/*
 * sbatch.c: a #SBATCH line in nvq's words, and the values of the
 * Slurm-named options nvq takes (see sbatch.h).
 *
 * The table below is the whole of what nvq makes of sbatch's options: each
 * row honoured by one of nvq's options (its value passed on as it is, to be
 * checked by that option's parser, so that a #SBATCH line and the command
 * line mean the same), or accepted as meaningless on one server, or refused
 * with its reason.  An option not in it is an error naming it: a #SBATCH
 * line is never dropped silently.  Long names are matched whole (sbatch's
 * getopt also takes unambiguous prefixes; nvq does not).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "parse.h"
#include "sbatch.h"

#define SB_ONE	"this is one server: "

static int	sbatch_check_gpus(const char *, const char *, char *, size_t);
static int	sbatch_check_nodes(const char *, const char *, char *, size_t);
static int	sbatch_check_mail(const char *, const char *, char *, size_t);
static int	sbatch_check_export(const char *, const char *, char *, size_t);
static int	sbatch_check_signal(const char *, const char *, char *, size_t);

const struct sbatch_row sbatch_table[] = {
	/* honoured: the job's name, GPUs, time, outputs, array, dependencies */
	{ "job-name", 'J', 1, SBATCH_WORD, "--job-name", NULL, NULL },
	{ "gres", 0, 1, SBATCH_WORD, "--gres", NULL, sbatch_check_gpus },
	{ "gpus", 'G', 1, SBATCH_WORD, "--gpus", NULL, sbatch_check_gpus },
	{ "gpus-per-node", 0, 1, SBATCH_WORD, "--gpus-per-node", NULL, sbatch_check_gpus },
	{ "gpus-per-task", 0, 1, SBATCH_WORD, "--gpus-per-task", NULL, sbatch_check_gpus },
	{ "time", 't', 1, SBATCH_WORD, "--time", NULL, NULL },
	{ "output", 'o', 1, SBATCH_WORD, "--output", NULL, NULL },
	{ "error", 'e', 1, SBATCH_WORD, "--error", NULL, NULL },
	{ "array", 'a', 1, SBATCH_WORD, "--array", NULL, NULL },
	{ "dependency", 'd', 1, SBATCH_WORD, "--dependency", NULL, NULL },
	/* host memory and CPUs (nvq's options of the same names) */
	{ "mem", 0, 1, SBATCH_WORD, "--mem", NULL, NULL },
	{ "mem-per-cpu", 0, 1, SBATCH_WORD, "--mem-per-cpu", NULL, NULL },
	{ "cpus-per-task", 'c', 1, SBATCH_WORD, "--cpus-per-task", NULL, NULL },
	/* passed on to Slurm under [cluster] engine = slurm, else refused by nvqd (submit.c) */
	{ "partition", 'p', 1, SBATCH_WORD, "--partition", NULL, NULL },
	{ "account", 'A', 1, SBATCH_WORD, "--account", NULL, NULL },
	/* a class of nvq.ini's [qos NAME] sections */
	{ "qos", 'q', 1, SBATCH_WORD, "--qos", NULL, NULL },
	/* where, with what, who is told, in what order */
	{ "chdir", 'D', 1, SBATCH_WORD, "--chdir", NULL, NULL },
	{ "export", 0, 1, SBATCH_WORD, "--export", NULL, sbatch_check_export },
	{ "mail-type", 0, 1, SBATCH_WORD, "--mail-type", NULL, sbatch_check_mail },
	{ "mail-user", 0, 1, SBATCH_WORD, "--mail-user", NULL, NULL },
	{ "nice", 0, 2, SBATCH_WORD, "--nice", "100", NULL },
	{ "requeue", 0, 0, SBATCH_FLAG, "--requeue", NULL, NULL },
	/* [B:]SIG[@TIME]: on a #SBATCH line always Slurm's warning (nvq.c) */
	{ "signal", 0, 1, SBATCH_WORD, "--signal", NULL, sbatch_check_signal },
	{ "hold", 'H', 0, SBATCH_FLAG, "--hold", NULL, NULL },
	{ "parsable", 0, 0, SBATCH_FLAG, "--parsable", NULL, NULL },
	/* one node, tasks for srun */
	{ "nodes", 'N', 1, SBATCH_WORD, "--nodes", NULL, sbatch_check_nodes },
	{ "ntasks", 'n', 1, SBATCH_WORD, "--ntasks", NULL, NULL },
	{ "ntasks-per-node", 0, 1, SBATCH_WORD, "--ntasks-per-node", NULL, NULL },
	/* accepted, meaningless here */
	{ "no-requeue", 0, 0, SBATCH_MEANINGLESS, "nvq requeues only with --requeue", NULL, NULL },
	{ "exclusive", 0, 2, SBATCH_MEANINGLESS, "the server is the only node, and a job's GPUs "
	  "are its own unless it asks for GPU memory (--gpu-mem)", NULL, NULL },
	{ "comment", 0, 1, SBATCH_MEANINGLESS, "nvq keeps no comment", NULL, NULL },
	{ "verbose", 'v', 0, SBATCH_MEANINGLESS, "sbatch's own talk", NULL, NULL },
	{ "quiet", 'Q', 0, SBATCH_MEANINGLESS, "sbatch's own talk", NULL, NULL },
	{ "cpu-bind", 0, 1, SBATCH_MEANINGLESS, "tasks are not bound to CPUs", NULL, NULL },
	{ "gpu-bind", 0, 1, SBATCH_MEANINGLESS, "tasks are not bound to GPUs", NULL, NULL },
	{ "kill-on-invalid-dep", 0, 1, SBATCH_MEANINGLESS, "nvq cancels a job whose "
	  "dependency can no longer be met", NULL, NULL },
	/* refused: what one server cannot honour */
	{ "reservation", 0, 1, SBATCH_REFUSE, SB_ONE "nvq has no reservations", NULL, NULL },
	{ "constraint", 'C', 1, SBATCH_REFUSE, SB_ONE "no node features to choose from "
	  "(GPUs: -w, -x)", NULL, NULL },
	{ "prefer", 0, 1, SBATCH_REFUSE, SB_ONE "no node features to choose from", NULL, NULL },
	{ "nodelist", 'w', 1, SBATCH_REFUSE, SB_ONE "no nodes to choose (GPUs: nvq's -w)", NULL, NULL },
	{ "exclude", 'x', 1, SBATCH_REFUSE, SB_ONE "no nodes to exclude (GPUs: nvq's -x)", NULL, NULL },
	{ "clusters", 'M', 1, SBATCH_REFUSE, SB_ONE "no clusters", NULL, NULL },
	{ "licenses", 'L', 1, SBATCH_REFUSE, SB_ONE "nvq counts no licences", NULL, NULL },
	{ "switches", 0, 1, SBATCH_REFUSE, SB_ONE "no network switches", NULL, NULL },
	{ "wckey", 0, 1, SBATCH_REFUSE, "nvq has no workload keys", NULL, NULL },
	{ "begin", 'b', 1, SBATCH_REFUSE, "nvq has no start times: --hold, then nvq release",
	  NULL, NULL },
	{ "deadline", 0, 1, SBATCH_REFUSE, "nvq has no deadlines", NULL, NULL },
	{ "wait", 'W', 0, SBATCH_REFUSE, "submit, then nvq wait ID", NULL, NULL },
	{ "mem-per-gpu", 0, 1, SBATCH_REFUSE, "host memory is per job (--mem) or per CPU "
	  "(--mem-per-cpu); GPU memory per GPU is nvq's --gpu-mem", NULL, NULL },
	{ "cpus-per-gpu", 0, 1, SBATCH_REFUSE, "CPUs are per task: --cpus-per-task", NULL, NULL },
	{ "tmp", 0, 1, SBATCH_REFUSE, "nvq sets no local disk aside", NULL, NULL },
	{ "input", 'i', 1, SBATCH_REFUSE, "nvq's jobs read no input file", NULL, NULL },
	{ "uid", 0, 1, SBATCH_REFUSE, "a job runs as its submitter", NULL, NULL },
	{ "gid", 0, 1, SBATCH_REFUSE, "a job runs with its submitter's groups", NULL, NULL },
	{ "test-only", 0, 0, SBATCH_REFUSE, "nvq has no dry run", NULL, NULL },
	{ "wrap", 0, 1, SBATCH_REFUSE, "give the command to nvq submit instead", NULL, NULL },
	{ "get-user-env", 0, 2, SBATCH_REFUSE, "nvq runs no login shell: the job gets the "
	  "submitting environment (--export)", NULL, NULL },
	{ "container", 0, 1, SBATCH_REFUSE, "nvq runs no containers", NULL, NULL },
};
const int sbatch_nrows = sizeof(sbatch_table) / sizeof(sbatch_table[0]);

const struct sbatch_row *
sbatch_find(const char *name, char letter)
{
	int i;

	for (i = 0; i < sbatch_nrows; i++)
		if (name != NULL ? strcmp(sbatch_table[i].name, name) == 0 :
		    letter != 0 && sbatch_table[i].letter == letter)
			return &sbatch_table[i];
	return NULL;
}

/* The words for row r given value val (NULL: none) into out at *n; -1 if they do not fit. */
static int
sbatch_emit(const struct sbatch_row *r, const char *val, const char **out, int max, int *n,
    char *why, size_t whylen)
{
	if (r->how == SBATCH_REFUSE) {
		snprintf(why, whylen, "--%s: %s", r->name, r->to);
		return -1;
	}
	if (r->how == SBATCH_MEANINGLESS)
		return 0;
	if (*n + 2 > max) {
		snprintf(why, whylen, "over %d options on one line", max / 2);
		return -1;
	}
	if (r->check != NULL && val != NULL && r->check(r->name, val, why, whylen) == -1)
		return -1;
	out[(*n)++] = r->to;
	if (r->how == SBATCH_WORD)
		out[(*n)++] = val != NULL ? val : r->dflt;
	return 0;
}

int
sbatch_translate(int argc, char **argv, const char **out, int max, char *why, size_t whylen)
{
	const struct sbatch_row *r;
	char name[64];
	const char *w, *val, *eq;
	int i, n = 0;
	size_t len;

	for (i = 0; i < argc; i++) {
		w = argv[i];
		val = NULL;
		if (strncmp(w, "--", 2) == 0 && w[2] != '\0') {
			eq = strchr(w + 2, '=');
			len = eq != NULL ? (size_t)(eq - (w + 2)) : strlen(w + 2);
			if (len >= sizeof(name)) {
				snprintf(why, whylen, "unknown sbatch option %.40s...", w);
				return -1;
			}
			memcpy(name, w + 2, len);
			name[len] = '\0';
			if ((r = sbatch_find(name, 0)) == NULL) {
				snprintf(why, whylen, "unknown sbatch option --%s", name);
				return -1;
			}
			if (eq != NULL && r->arg == 0) {
				snprintf(why, whylen, "--%s takes no value", name);
				return -1;
			}
			if (eq != NULL)
				val = eq + 1;
			else if (r->arg == 1 && i + 1 < argc)
				val = argv[++i];
			else if (r->arg == 1) {
				snprintf(why, whylen, "--%s needs a value", name);
				return -1;
			}
		} else if (w[0] == '-' && w[1] != '\0' && w[1] != '-') {
			if ((r = sbatch_find(NULL, w[1])) == NULL) {
				snprintf(why, whylen, "unknown sbatch option -%c", w[1]);
				return -1;
			}
			if (r->arg == 0 && w[2] != '\0') {
				snprintf(why, whylen, "-%c takes no value (one letter a word)", w[1]);
				return -1;
			}
			if (r->arg != 0 && w[2] != '\0')
				val = w + 2;
			else if (r->arg != 0 && i + 1 < argc)
				val = argv[++i];
			else if (r->arg != 0) {
				snprintf(why, whylen, "-%c needs a value", w[1]);
				return -1;
			}
		} else {
			snprintf(why, whylen, "#SBATCH lines take options only, not \"%.60s\"", w);
			return -1;
		}
		if (sbatch_emit(r, val, out, max, &n, why, whylen) == -1)
			return -1;
	}
	return n;
}

/* A whole number from 0 to 64 in [s, s + len); -1 if it is not one. */
static int
sbatch_count(const char *s, size_t len)
{
	int v = 0;
	size_t i;

	if (len == 0 || len > 2)
		return -1;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v <= 64 ? v : -1;
}

int
sbatch_gpus(const char *opt, const char *val, int *n, char *why, size_t whylen)
{
	const char *p, *last, *end;
	int v;

	if (strcmp(opt, "gres") != 0) {
		/* [TYPE:]N */
		last = strrchr(val, ':');
		p = last != NULL ? last + 1 : val;
		if (strchr(val, ',') != NULL || (last != NULL && last == val) ||
		    (v = sbatch_count(p, strlen(p))) == -1) {
			snprintf(why, whylen, "--%s %s: not a number of GPUs, [TYPE:]N, N from 0 "
			    "to 64 (TYPE is not checked: any of this server's GPUs)", opt, val);
			return -1;
		}
		*n = v;
		return 0;
	}
	/* gpu[:TYPE][:N], or "none"; several gpu entries add up */
	if (strcmp(val, "none") == 0) {
		*n = 0;
		return 0;
	}
	*n = 0;
	for (p = val; *p != '\0'; p = *end == ',' ? end + 1 : end) {
		end = p + strcspn(p, ",");
		if (strncmp(p, "gpu", 3) != 0 || (p[3] != ':' && p + 3 != end)) {
			snprintf(why, whylen, "--gres %s: GPUs only (gpu[:TYPE][:N]); this server "
			    "has no other generic resources", val);
			return -1;
		}
		v = 1;
		if (p + 3 != end) {
			last = p + 3;
			while (memchr(last + 1, ':', (size_t)(end - last - 1)) != NULL)
				last = memchr(last + 1, ':', (size_t)(end - last - 1));
			/* gpu:N, gpu:TYPE, gpu:TYPE:N */
			v = sbatch_count(last + 1, (size_t)(end - last - 1));
			if (v == -1 && (last != p + 3 || strspn(last + 1, "0123456789") >=
			    (size_t)(end - last - 1))) {
				snprintf(why, whylen, "--gres %s: not gpu[:TYPE][:N], N from 0 to 64",
				    val);
				return -1;
			}
			if (v == -1)
				v = 1;	/* gpu:TYPE */
		}
		if ((*n += v) > 64) {
			snprintf(why, whylen, "--gres %s: over 64 GPUs", val);
			return -1;
		}
		if (*end == ',' && end[1] == '\0')
			break;
	}
	return 0;
}

int
sbatch_nodes(const char *val, char *why, size_t whylen)
{
	const char *dash = strchr(val, '-');

	if (strcmp(val, "1") == 0 || (dash != NULL && strncmp(val, "1-", 2) == 0 &&
	    strspn(dash + 1, "0123456789") == strlen(dash + 1) && dash[1] != '\0' &&
	    dash[1] != '0'))
		return 0;
	snprintf(why, whylen, "--nodes %s: " SB_ONE "a job runs on one node (-N 1)", val);
	return -1;
}

int
sbatch_mail_type(const char *val, int *mail, char *why, size_t whylen)
{
	static const char *const refused[][2] = {
		{ "BEGIN", "nvq mails only at a job's end" },
		{ "REQUEUE", "nvq mails only at a job's end" },
		{ "TIME_LIMIT", "nvq sends no warning before the time limit" },
		{ "TIME_LIMIT_90", "nvq sends no warning before the time limit" },
		{ "TIME_LIMIT_80", "nvq sends no warning before the time limit" },
		{ "TIME_LIMIT_50", "nvq sends no warning before the time limit" },
		{ "INVALID_DEPEND", "nvq mails only at a job's end" },
		{ "STAGE_OUT", "nvq has no stage-out" },
		{ "ALL", "it includes BEGIN, and nvq mails only at a job's end (END,FAIL is "
		  "what it can do)" },
	};
	char t[32];
	const char *p, *end;
	int none = 0, end_ = 0, fail = 0;
	size_t len, i;

	for (p = val; ; p = end + 1) {
		end = p + strcspn(p, ",");
		len = (size_t)(end - p);
		if (len == 0 || len >= sizeof(t))
			goto bad;
		memcpy(t, p, len);
		t[len] = '\0';
		if (strcasecmp(t, "NONE") == 0)
			none = 1;
		else if (strcasecmp(t, "END") == 0)
			end_ = 1;
		else if (strcasecmp(t, "FAIL") == 0)
			fail = 1;
		else if (strcasecmp(t, "ARRAY_TASKS") == 0)
			;	/* nvq mails for each task always */
		else {
			for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
				if (strcasecmp(t, refused[i][0]) == 0) {
					snprintf(why, whylen, "--mail-type %s: %s", t, refused[i][1]);
					return -1;
				}
			goto bad;
		}
		if (*end == '\0')
			break;
	}
	if (fail && !end_) {
		snprintf(why, whylen, "--mail-type FAIL: nvq mails at every end, not only a "
		    "failure's (say END or END,FAIL)");
		return -1;
	}
	*mail = !none;
	return 0;
bad:
	snprintf(why, whylen, "--mail-type %s: not a list of NONE, END, FAIL, ARRAY_TASKS", val);
	return -1;
}

/* Whether name (len bytes) is a variable's name. */
static int
sbatch_is_name(const char *s, size_t len)
{
	size_t i;

	if (len == 0 || (s[0] >= '0' && s[0] <= '9'))
		return 0;
	for (i = 0; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return 0;
	return 1;
}

int
sbatch_export_check(const char *spec, char *why, size_t whylen)
{
	const char *p, *end, *eq;

	if (strcmp(spec, "ALL") == 0 || strcmp(spec, "NONE") == 0)
		return 0;
	for (p = spec; ; p = end + 1) {
		end = p + strcspn(p, ",");
		eq = memchr(p, '=', (size_t)(end - p));
		if (!((size_t)(end - p) == 3 && strncmp(p, "ALL", 3) == 0) &&
		    !sbatch_is_name(p, eq != NULL ? (size_t)(eq - p) : (size_t)(end - p))) {
			snprintf(why, whylen, "--export %s: not ALL, NONE, or a list of NAME and "
			    "NAME=VALUE (with ALL or without; a value cannot hold a comma)", spec);
			return -1;
		}
		if (*end == '\0')
			return 0;
	}
}

int
sbatch_export_keeps(const char *spec, const char *entry)
{
	size_t nlen = strcspn(entry, "="), len;
	const char *p, *end;
	int all = 0, named = 0, valued = 0;

	if (strcmp(spec, "NONE") == 0)
		return strncmp(entry, "SLURM_", 6) == 0;
	for (p = spec; ; p = end + 1) {
		end = p + strcspn(p, ",");
		len = strcspn(p, ",=");
		if (len == 3 && strncmp(p, "ALL", 3) == 0)
			all = 1;
		else if (len == nlen && strncmp(p, entry, len) == 0 && p[len] == '=')
			valued = 1;	/* NAME=VALUE: the spec's value instead */
		else if (len == nlen && strncmp(p, entry, len) == 0)
			named = 1;
		if (*end == '\0')
			break;
	}
	return !valued && (named || all || strncmp(entry, "SLURM_", 6) == 0);
}

const char *
sbatch_export_value(const char *spec, int i, char *buf, size_t len)
{
	const char *p, *end;
	size_t n;

	for (p = spec; ; p = end + 1) {
		end = p + strcspn(p, ",");
		n = (size_t)(end - p);
		if (memchr(p, '=', n) != NULL && i-- == 0) {
			snprintf(buf, len, "%.*s", (int)n, p);
			return buf;
		}
		if (*end == '\0')
			return NULL;
	}
}

/* The table's checks: the parsers above, their results dropped. */
static int
sbatch_check_gpus(const char *name, const char *val, char *why, size_t whylen)
{
	int n;

	return sbatch_gpus(name, val, &n, why, whylen);
}

static int
sbatch_check_nodes(const char *name, const char *val, char *why, size_t whylen)
{
	(void)name;
	return sbatch_nodes(val, why, whylen);
}

static int
sbatch_check_mail(const char *name, const char *val, char *why, size_t whylen)
{
	int mail;

	(void)name;
	return sbatch_mail_type(val, &mail, why, whylen);
}

static int
sbatch_check_export(const char *name, const char *val, char *why, size_t whylen)
{
	(void)name;
	return sbatch_export_check(val, why, whylen);
}

/* --signal [{R|B}:]SIG[@TIME], checked at once so that its line is named */
static int
sbatch_check_signal(const char *name, const char *val, char *why, size_t whylen)
{
	char w[160];
	int sig, secs, batch;

	if (parse_warn(val, &sig, &secs, &batch, w, sizeof(w)) == 0)
		return 0;
	snprintf(why, whylen, "--%s %s: %s", name, val, w);
	return -1;
}
