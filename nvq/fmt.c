/*
 * fmt.c: output helpers for nvq: JSON strings and rows, times.
 */
#include <string.h>
#include <time.h>

#include "nvq.h"

void
fmt_json_str(FILE *fp, const char *s)
{
	const unsigned char *p;

	fputc('"', fp);
	for (p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(fp, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", fp);
		else if (*p == '\t')
			fputs("\\t", fp);
		else if (*p < 0x20)
			fprintf(fp, "\\u%04x", *p);
		else
			fputc(*p, fp);
	}
	fputc('"', fp);
}

/* Times travel as "%.3f" strings; in JSON they are numbers. */
static int
fmt_is_time(const char *key)
{
	size_t n = strlen(key);

	return strcmp(key, "now") == 0 || strcmp(key, "at") == 0 || strcmp(key, "cpu_time") == 0 ||
	    (n > 3 && strcmp(key + n - 3, "_at") == 0);
}

void
fmt_json_row(FILE *fp, const struct proto_msg *m, const struct nvq_row *r)
{
	const struct proto_field *f;
	int i;

	fputc('{', fp);
	for (i = r->start; i < r->end; i++) {
		f = &m->fields[i];
		if (i > r->start)
			fputs(", ", fp);
		fmt_json_str(fp, f->key);
		fputs(": ", fp);
		if (f->kind == 'i')
			fprintf(fp, "%lld", (long long)f->i);
		else if (fmt_is_time(f->key))
			fputs(f->s, fp);
		else
			fmt_json_str(fp, f->s);
	}
	fputc('}', fp);
}

void
fmt_time(double t, char *buf, size_t len)
{
	struct tm tm;
	time_t tt = (time_t)t;

	if (t <= 0) {
		snprintf(buf, len, "-");
		return;
	}
	localtime_r(&tt, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
}

int
fmt_state_active(const char *s)
{
	return strcmp(s, "PENDING") == 0 || strcmp(s, "RUNNING") == 0 ||
	    strcmp(s, "SUSPENDED") == 0;
}

int
fmt_state_ok(const char *s)
{
	static const char *states[] = { "PENDING", "RUNNING", "COMPLETED", "FAILED",
	    "CANCELLED", "TIMEOUT", "NODE_FAIL", "SUSPENDED", NULL };
	int i;

	for (i = 0; states[i]; i++)
		if (strcmp(states[i], s) == 0)
			return 1;
	return 0;
}
