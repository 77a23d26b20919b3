/*
 * cglimit.c: a job's host memory limit and CPU quota (see cglimit.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "cglimit.h"

#define CGLIMIT_PERIOD	100000	/* cpu.max's and cfs_period_us's, in microseconds */

/* Whether the comma-separated list has word as one of its items. */
static int
cglimit_has(const char *list, const char *word)
{
	size_t n = strlen(word);
	const char *p = list;

	while ((p = strstr(p, word)) != NULL) {
		if ((p == list || p[-1] == ',' || p[-1] == ':' || p[-1] == ' ') &&
		    (p[n] == ',' || p[n] == ':' || p[n] == '\0' || p[n] == '\n' || p[n] == ' '))
			return 1;
		p += n;
	}
	return 0;
}

/*
 * The folder of this process's cgroup in the v1 hierarchy of controller:
 * the hierarchy's mount point, less its root, and the path that
 * /proc/self/cgroup gives.  0 or -1.
 */
static int
cglimit_v1_own(const char *controller, char *out, size_t len)
{
	char line[4096], mnt[PATH_MAX] = "", root[PATH_MAX] = "", own[PATH_MAX] = "";
	char *p, *f[6];
	size_t r;
	FILE *fp;
	int i;

	if ((fp = fopen("/proc/self/mountinfo", "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), fp) != NULL) {
		if ((p = strstr(line, " - cgroup ")) == NULL || !cglimit_has(p + 10, controller))
			continue;
		*p = '\0';
		f[0] = strtok(line, " ");
		for (i = 1; i < 5 && f[i - 1] != NULL; i++)
			f[i] = strtok(NULL, " ");
		if (i == 5 && f[4] != NULL && strchr(f[4], '\\') == NULL) {
			snprintf(root, sizeof(root), "%s", f[3]);
			snprintf(mnt, sizeof(mnt), "%s", f[4]);
		}
		break;
	}
	fclose(fp);
	if ((fp = fopen("/proc/self/cgroup", "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), fp) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if ((p = strchr(line, ':')) == NULL || strncmp(p, "::", 2) == 0)
			continue;
		if (cglimit_has(p + 1, controller) && (p = strchr(p + 1, ':')) != NULL) {
			snprintf(own, sizeof(own), "%s", p + 1);
			break;
		}
	}
	fclose(fp);
	if (*mnt == '\0' || *own != '/') {
		errno = ENOENT;
		return -1;
	}
	/* a mount of part of the hierarchy (a container's): the path below its root */
	r = strcmp(root, "/") == 0 ? 0 : strlen(root);
	if (r > 0 && strncmp(own, root, r) == 0)
		memmove(own, own + r, strlen(own + r) + 1);
	if (snprintf(out, len, "%s%s", mnt, strcmp(own, "/") == 0 ? "" : own) >= (int)len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/* Makes controller's v1 folder for the job: <own>/nvq/<name>. */
static int
cglimit_v1_make(const char *controller, const char *name, char *out, size_t len)
{
	char own[PATH_MAX];

	if (cglimit_v1_own(controller, own, sizeof(own)) == -1)
		return -1;
	if (snprintf(out, len, "%s/nvq", own) >= (int)len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (mkdir(out, 0755) == -1 && errno != EEXIST)
		return -1;
	if (snprintf(out, len, "%s/nvq/%s", own, name) >= (int)len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (mkdir(out, 0755) == -1 && errno != EEXIST) {
		*out = '\0';
		return -1;
	}
	return 0;
}

int
cglimit_set(struct cglimit *l, const char *dir, uint64_t bytes, int cpus)
{
	const char *name = strrchr(dir, '/');
	char v[48];
	int rc = 0;

	memset(l, 0, sizeof(*l));
	name = name != NULL ? name + 1 : dir;
	if (bytes > 0) {
		snprintf(v, sizeof(v), "%llu", (unsigned long long)bytes);
		if (cgroup_write(dir, "memory.max", v) == 0)
			cgroup_write(dir, "memory.swap.max", "0");	/* --mem is memory, not swap */
		else if (cglimit_v1_make("memory", name, l->mem1, sizeof(l->mem1)) == -1 ||
		    cgroup_write(l->mem1, "memory.limit_in_bytes", v) == -1) {
			cglimit_remove(l);
			rc = -1;
		} else
			cgroup_write(l->mem1, "memory.memsw.limit_in_bytes", v);
	}
	if (cpus > 0) {
		snprintf(v, sizeof(v), "%lld %d", (long long)cpus * CGLIMIT_PERIOD, CGLIMIT_PERIOD);
		if (cgroup_write(dir, "cpu.max", v) == 0)
			return rc;
		snprintf(v, sizeof(v), "%lld", (long long)cpus * CGLIMIT_PERIOD);
		if (cglimit_v1_make("cpu", name, l->cpu1, sizeof(l->cpu1)) == -1 ||
		    cgroup_write(l->cpu1, "cpu.cfs_quota_us", v) == -1) {
			if (*l->cpu1 != '\0')
				rmdir(l->cpu1);
			l->cpu1[0] = '\0';
			rc = -1;
		}
	}
	return rc;
}

int
cglimit_enter(const struct cglimit *l)
{
	if (*l->mem1 != '\0' && cgroup_enter(l->mem1) == -1)
		return -1;
	if (*l->cpu1 != '\0' && cgroup_enter(l->cpu1) == -1)
		return -1;
	return 0;
}

long long
cglimit_oom_kills(const struct cglimit *l, const char *dir)
{
	char path[PATH_MAX], line[128];
	long long n = 0, v;
	FILE *fp;

	/* v2's memory.events, or v1's memory.oom_control (Linux 4.13 on) */
	if (*l->mem1 != '\0')
		snprintf(path, sizeof(path), "%s/memory.oom_control", l->mem1);
	else
		snprintf(path, sizeof(path), "%s/memory.events", dir);
	if ((fp = fopen(path, "r")) == NULL)
		return 0;
	while (fgets(line, sizeof(line), fp) != NULL)
		if (sscanf(line, "oom_kill %lld", &v) == 1)
			n = v;
	fclose(fp);
	return n;
}

void
cglimit_remove(const struct cglimit *l)
{
	if (*l->mem1 != '\0')
		rmdir(l->mem1);
	if (*l->cpu1 != '\0')
		rmdir(l->cpu1);
}

const char *
cglimit_where(const char *base, int cpu)
{
	char path[PATH_MAX], line[512] = "";
	FILE *fp;

	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", base);
	if ((fp = fopen(path, "r")) != NULL) {
		if (fgets(line, sizeof(line), fp) == NULL)
			line[0] = '\0';
		fclose(fp);
	}
	line[strcspn(line, "\n")] = '\0';
	if (*base != '\0' && cglimit_has(line, cpu ? "cpu" : "memory"))
		return "cgroup v2";
	if (cglimit_v1_own(cpu ? "cpu" : "memory", path, sizeof(path)) == 0)
		return "cgroup v1";
	return NULL;
}
