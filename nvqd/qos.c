/*
 * qos.c: the job classes of [qos NAME] sections (see qos.h).
 *
 * config.c hands over the keys of every [qos NAME] section as inih reads
 * them, and calls qos_finish once the file is read.  Classes are few
 * (QOS_MAX) and so are their members: lookups are linear.  Who may use a
 * class is decided here (qos_may_use, pure); which running job gives way
 * is preempt.c's, from the masks made here.
 */
#include <ctype.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"
#include "qos.h"
#include "roff.h"

#define QOS_PREFIX	"qos "

enum { QK_PRIORITY, QK_PREEMPTS, QK_USERS, QK_GROUPS, QK_MAX_GPUS, QK_MAX_JOBS };

/* The keys of a [qos NAME] section, with the text nvq.ini and nvq.ini(5) give them. */
static const struct {
	const char	*key;
	const char	*dflt;
	const char	*help;
} qos_keys[] = {
	[QK_PRIORITY] = { "priority", "0",
	  "Points added to the place in the order of this class's jobs, whoever\n"
	  "submits them (Slurm's QOS priority factor); -1000000 to 1000000." },
	[QK_PREEMPTS] = { "preempts", "",
	  "The classes (comma-separated) whose running jobs this class's waiting\n"
	  "jobs may preempt, whosever they are and whatever their -p, as\n"
	  "[scheduler] preempt says (Slurm's Preempt= under preempt/qos). Without\n"
	  "it, a job preempts only its own user's jobs of lower -p (root's: any)." },
	[QK_USERS] = { "users", "",
	  "Who may submit with --qos NAME: user names (comma-separated); with\n"
	  "groups, members of either. Both empty: everyone. Root always may." },
	[QK_GROUPS] = { "groups", "",
	  "Groups (comma-separated) whose members may use the class." },
	[QK_MAX_GPUS] = { "max_gpus_per_user", "0",
	  "GPUs a user's running jobs of this class hold at once; more wait\n"
	  "(reason: qos limit). 0 for no limit." },
	[QK_MAX_JOBS] = { "max_jobs_per_user", "0",
	  "Running jobs of this class per user; more wait (reason: qos limit).\n"
	  "0 for no limit." },
};
#define QOS_NKEYS	(sizeof(qos_keys) / sizeof(qos_keys[0]))

int
qos_section(const char *section)
{
	return strncmp(section, QOS_PREFIX, strlen(QOS_PREFIX)) == 0;
}

int
qos_find(const struct qos_table *t, const char *name)
{
	int i;

	for (i = 0; i < t->n; i++)
		if (strcmp(t->c[i].name, name) == 0)
			return i;
	return -1;
}

/* Whether s is a class's name: letters, digits, _ and -, not too long. */
static int
qos_name_ok(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n < QOS_NAME_MAX && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789_-") == n;
}

/* The class named, made if it is new; NULL with msg set. */
static struct qos_class *
qos_class(struct qos_table *t, const char *name, char *msg, size_t len)
{
	int i;

	if (!qos_name_ok(name)) {
		snprintf(msg, len, "[qos %s]: a class's name is letters, digits, _ and -, at most "
		    "%d", name, QOS_NAME_MAX - 1);
		return NULL;
	}
	if ((i = qos_find(t, name)) >= 0)
		return &t->c[i];
	if (t->n == QOS_MAX) {
		snprintf(msg, len, "[qos %s]: more than %d classes", name, QOS_MAX);
		return NULL;
	}
	memset(&t->c[t->n], 0, sizeof(t->c[t->n]));
	snprintf(t->c[t->n].name, QOS_NAME_MAX, "%s", name);
	return &t->c[t->n++];
}

/* The names of a comma-separated list as uids or gids (NSS, or numbers): 0, or -1. */
static int
qos_members(const char *v, int groups, uint32_t *ids, int *n, char *msg, size_t len)
{
	char buf[256], *p, *tok, *save = NULL;
	long long num;

	*n = 0;
	if (strlen(v) >= sizeof(buf)) {
		snprintf(msg, len, "%s: longer than %zu bytes", groups ? "groups" : "users",
		    sizeof(buf) - 1);
		return -1;
	}
	strcpy(buf, v);
	for (p = buf; (tok = strtok_r(p, ", \t", &save)) != NULL; p = NULL) {
		if (*n == QOS_MAX_MEMBERS) {
			snprintf(msg, len, "%s: more than %d names", groups ? "groups" : "users",
			    QOS_MAX_MEMBERS);
			return -1;
		}
		if (groups) {
			struct group *gr = getgrnam(tok);

			if (gr == NULL && parse_int(tok, 0, UINT32_MAX - 1, &num) == -1) {
				snprintf(msg, len, "groups: no group \"%s\"", tok);
				return -1;
			}
			ids[(*n)++] = gr != NULL ? (uint32_t)gr->gr_gid : (uint32_t)num;
		} else {
			struct passwd *pw = getpwnam(tok);

			if (pw == NULL && parse_int(tok, 0, UINT32_MAX - 1, &num) == -1) {
				snprintf(msg, len, "users: no user \"%s\"", tok);
				return -1;
			}
			ids[(*n)++] = pw != NULL ? (uint32_t)pw->pw_uid : (uint32_t)num;
		}
	}
	return 0;
}

/* The class's name in a section's name s of n bytes ("qos NAME", spaces around it cut). */
static void
qos_name_of(const char *s, size_t n, char *name, size_t len)
{
	s += strlen(QOS_PREFIX);
	n -= strlen(QOS_PREFIX);
	for (; n > 0 && (*s == ' ' || *s == '\t'); s++, n--)
		;
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	snprintf(name, len, "%.*s", (int)(n < len - 1 ? n : len - 1), s);
}

int
qos_line(struct qos_table *t, const char *line, char *msg, size_t len)
{
	char name[QOS_NAME_MAX + 8];
	const char *p = line + strspn(line, " \t"), *end;

	if (*p != '[' || (end = strchr(p, ']')) == NULL)
		return 0;
	p += 1 + strspn(p + 1, " \t");
	if (end < p || !qos_section(p))
		return 0;
	qos_name_of(p, (size_t)(end - p), name, sizeof(name));
	return qos_class(t, name, msg, len) == NULL ? -1 : 0;
}

int
qos_set(struct qos_table *t, const char *section, const char *key, const char *value,
    char *msg, size_t len)
{
	char name[QOS_NAME_MAX + 8];
	struct qos_class *c;
	long long n;
	size_t k;

	qos_name_of(section, strlen(section), name, sizeof(name));
	if ((c = qos_class(t, name, msg, len)) == NULL)
		return -1;
	for (k = 0; k < QOS_NKEYS && strcmp(qos_keys[k].key, key) != 0; k++)
		;
	switch (k) {
	case QK_PRIORITY:
		if (parse_int(value, -QOS_MAX_PRIO, QOS_MAX_PRIO, &n) == -1)
			break;
		c->priority = (int)n;
		return 0;
	case QK_PREEMPTS:
		if (strlen(value) >= sizeof(c->preempts_list))
			break;
		strcpy(c->preempts_list, value);
		return 0;
	case QK_USERS:
		return qos_members(value, 0, c->uids, &c->nusers, msg, len);
	case QK_GROUPS:
		return qos_members(value, 1, c->gids, &c->ngroups, msg, len);
	case QK_MAX_GPUS: case QK_MAX_JOBS:
		if (parse_int(value, 0, 1000000, &n) == -1)
			break;
		*(k == QK_MAX_GPUS ? &c->max_gpus_per_user : &c->max_jobs_per_user) = (int)n;
		return 0;
	default:
		snprintf(msg, len, "unknown key \"%s\" in [%s] (priority, preempts, users, groups, "
		    "max_gpus_per_user, max_jobs_per_user)", key, section);
		return -1;
	}
	snprintf(msg, len, "%s: \"%s\" is not %s", key, value, k == QK_PREEMPTS ?
	    "a list of classes (too long)" : k == QK_PRIORITY ?
	    "a whole number from -1000000 to 1000000" : "a whole number from 0 to 1000000");
	return -1;
}

/* Whether class i reaches class i again through preempts (a ring); depth-first. */
static int
qos_ring(const struct qos_table *t, int from, int i, uint32_t *seen)
{
	int k;

	for (k = 0; k < t->n; k++) {
		if (!(t->c[i].preempts & (1U << k)))
			continue;
		if (k == from)
			return 1;
		if (*seen & (1U << k))
			continue;
		*seen |= 1U << k;
		if (qos_ring(t, from, k, seen))
			return 1;
	}
	return 0;
}

int
qos_finish(struct qos_table *t, char *msg, size_t len)
{
	char buf[256], *p, *tok, *save;
	uint32_t seen;
	int i, k;

	if ((t->dflt = qos_find(t, t->default_name)) == -1) {
		if (strcmp(t->default_name, "normal") != 0) {
			snprintf(msg, len, "[scheduler] default_qos = %s: there is no [qos %s]",
			    t->default_name, t->default_name);
			return -1;
		}
		if (t->n == QOS_MAX) {
			snprintf(msg, len, "more than %d classes with \"normal\"", QOS_MAX - 1);
			return -1;
		}
		memset(&t->c[t->n], 0, sizeof(t->c[t->n]));
		strcpy(t->c[t->n].name, "normal");
		t->dflt = t->n++;
	}
	for (i = 0; i < t->n; i++) {
		t->c[i].preempts = 0;
		snprintf(buf, sizeof(buf), "%s", t->c[i].preempts_list);
		save = NULL;
		for (p = buf; (tok = strtok_r(p, ", \t", &save)) != NULL; p = NULL) {
			if ((k = qos_find(t, tok)) == -1) {
				snprintf(msg, len, "[qos %s] preempts %s: there is no such class%s",
				    t->c[i].name, tok, strcmp(tok, "normal") == 0 ? "" :
				    " (define it with a [qos] section)");
				return -1;
			}
			if (k == i) {
				snprintf(msg, len, "[qos %s] preempts itself: jobs of one class "
				    "give way to each other by -p and root alone", t->c[i].name);
				return -1;
			}
			t->c[i].preempts |= 1U << k;
		}
	}
	for (i = 0; i < t->n; i++) {
		seen = 0;
		if (qos_ring(t, i, i, &seen)) {
			snprintf(msg, len, "[qos %s]: classes preempt each other in a ring; a "
			    "suspend would answer a suspend", t->c[i].name);
			return -1;
		}
	}
	return 0;
}

int
qos_may_use(const struct qos_class *c, uint32_t uid, uint32_t gid, const gid_t *groups, int n)
{
	int i, k;

	if (uid == 0 || (c->nusers == 0 && c->ngroups == 0))
		return 1;
	for (i = 0; i < c->nusers; i++)
		if (c->uids[i] == uid)
			return 1;
	for (i = 0; i < c->ngroups; i++) {
		if (c->gids[i] == gid)
			return 1;
		for (k = 0; groups != NULL && k < n; k++)
			if ((uint32_t)groups[k] == c->gids[i])
				return 1;
	}
	return 0;
}

void
qos_print(FILE *fp)
{
	const char *p, *nl;
	size_t i;

	fprintf(fp, "\n# Job classes (Slurm's QOS), one section each, e.g. [qos high];\n"
	    "# jobs pick one with --qos NAME. [qos normal] exists without a section.\n"
	    "# Between users, only these (and root) preempt. Keys, with their defaults:\n");
	for (i = 0; i < QOS_NKEYS; i++) {
		fputs("#\n", fp);
		for (p = qos_keys[i].help; *p; p = nl + 1) {
			if ((nl = strchr(p, '\n')) == NULL) {
				fprintf(fp, "# %s\n", p);
				break;
			}
			fprintf(fp, "# %.*s\n", (int)(nl - p), p);
		}
		fprintf(fp, "# %s =%s%s\n", qos_keys[i].key, *qos_keys[i].dflt ? " " : "",
		    qos_keys[i].dflt);
	}
}

void
qos_print_man(FILE *fp)
{
	char dflt[64];
	size_t i;

	fputs(".SH \"[qos NAME]\"\n", fp);
	roff_text(fp, "Job classes, as Slurm's QOS: one section per class; a job names its class "
	    "with nvq submit --qos NAME, else it is of [scheduler] default_qos. A class "
	    "\"normal\" exists without a section (priority 0, preempts nothing, everyone "
	    "may use it). A user's -p orders only that user's jobs; between users, a "
	    "running job gives way only to a class that preempts its class, or to root's "
	    "jobs.\n");
	for (i = 0; i < QOS_NKEYS; i++) {
		snprintf(dflt, sizeof(dflt), "= %s", *qos_keys[i].dflt ? qos_keys[i].dflt :
		    "(empty)");
		roff_item(fp, qos_keys[i].key, dflt, qos_keys[i].help);
	}
}
