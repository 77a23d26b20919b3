/*
 * fmt.c: output helpers for nvq: JSON strings and rows, times, and
 * fmt_safe(), through which every string from nvqd passes on its way to a
 * person's terminal: names, commands, paths and reasons are other users'
 * text, and an escape sequence in them must not reach the terminal.  What
 * is escaped, and how, is common/esc.c's (JSON's too, in json.c).
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "esc.h"
#include "json.h"
#include "nvq.h"

#define FMT_SAFE_RING	8

static int fmt_esc_flags;	/* esc_term's: ESC_ASCII where the charset is not UTF-8 */

void
fmt_locale(void)
{
	int ascii = !esc_locale_utf8(getenv("LC_ALL"), getenv("LC_CTYPE"), getenv("LANG"));

	fmt_esc_flags = ascii ? ESC_ASCII : 0;
	json_set_ascii(ascii);
}

int
fmt_ascii(void)
{
	return fmt_esc_flags & ESC_ASCII;
}

const char *
fmt_safe(const char *s)
{
	static char *ring[FMT_SAFE_RING];
	static size_t caps[FMT_SAFE_RING];
	static unsigned next;
	size_t need;
	unsigned k = next++ % FMT_SAFE_RING;
	char *b;

	if (s == NULL)
		return "";
	need = ESC_TERM_MAX(strlen(s));
	if (need > caps[k]) {
		if ((b = realloc(ring[k], need)) == NULL)
			return "?";
		ring[k] = b;
		caps[k] = need;
	}
	esc_term(ring[k], s, fmt_esc_flags);
	return ring[k];
}

void
fmt_json_print(FILE *fp, struct json *j)
{
	json_print(fp, j);
	json_free(j);
}

void
fmt_json_str(FILE *fp, const char *s)
{
	fmt_json_print(fp, json_string(s != NULL ? s : ""));
}

/* Times and seconds travel as "%.3f" strings; in JSON they are numbers. */
static int
fmt_is_time(const char *key)
{
	size_t n = strlen(key);

	return strcmp(key, "now") == 0 || strcmp(key, "at") == 0 ||
	    (n > 3 && strcmp(key + n - 3, "_at") == 0) ||
	    (n > 5 && strcmp(key + n - 5, "_time") == 0) ||
	    (n >= 7 && strcmp(key + n - 7, "seconds") == 0);
}

/* Whether s is a number as nvqd writes one ("%.4f", "-2"): it goes out as one. */
static int
fmt_is_number(const char *s)
{
	char *end;

	if (*s == '\0' || strspn(s, "-0123456789.") != strlen(s))
		return 0;
	(void)strtod(s, &end);
	return *end == '\0';
}

struct json *
fmt_json_obj(const struct proto_msg *m, const struct nvq_row *r, int numbers)
{
	const struct proto_field *f;
	struct json *o = json_object();
	int i;

	for (i = r->start; o != NULL && i < r->end; i++) {
		f = &m->fields[i];
		if (f->kind == 'i')
			json_add(o, f->key, json_number((double)f->i));
		else if ((fmt_is_time(f->key) || numbers) && fmt_is_number(f->s))
			json_add(o, f->key, json_raw(f->s));
		else
			json_add(o, f->key, json_string(f->s));
	}
	return o;
}

void
fmt_json_row(FILE *fp, const struct proto_msg *m, const struct nvq_row *r)
{
	fmt_json_print(fp, fmt_json_obj(m, r, 0));
}

/*
 * The last few seconds written, and their text: a listing writes the same
 * second many times (an array's tasks share their submission), and
 * localtime_r and strftime cost some microseconds each with musl.
 */
#define FMT_TIME_CACHE	4
static struct {
	time_t	t;
	char	text[32];
} fmt_times[FMT_TIME_CACHE];
static unsigned fmt_times_next;

void
fmt_copy(char *buf, size_t len, const char *s)
{
	size_t l = strlen(s);

	if (len == 0)
		return;
	if (l >= len)
		l = len - 1;
	memcpy(buf, s, l);
	buf[l] = '\0';
}

const char *
fmt_cut_mark(void)
{
	return fmt_ascii() ? "~" : "\xe2\x80\xa6";
}

void
fmt_cut(char *buf, size_t len, const char *s, size_t cells)
{
	const char *mark = fmt_cut_mark();
	size_t n = 0, i, keep = 0;

	for (i = 0; s[i]; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80 && ++n == cells)
			keep = i;	/* where the last whole character that fits begins */
	if (n <= cells) {
		fmt_copy(buf, len, s);
		return;
	}
	if (keep + strlen(mark) >= len)
		keep = 0;
	memcpy(buf, s, keep);
	snprintf(buf + keep, len - keep, "%s", mark);
}

void
fmt_time(double t, char *buf, size_t len)
{
	struct tm tm;
	time_t tt = (time_t)t;
	unsigned i;

	if (t <= 0) {
		fmt_copy(buf, len, "-");
		return;
	}
	for (i = 0; i < FMT_TIME_CACHE; i++)
		if (fmt_times[i].t == tt && fmt_times[i].text[0] != '\0') {
			fmt_copy(buf, len, fmt_times[i].text);
			return;
		}
	localtime_r(&tt, &tm);
	i = fmt_times_next++ % FMT_TIME_CACHE;
	if (strftime(fmt_times[i].text, sizeof(fmt_times[i].text), "%Y-%m-%dT%H:%M:%S", &tm) == 0)
		fmt_times[i].text[0] = '\0';
	fmt_times[i].t = tt;
	fmt_copy(buf, len, fmt_times[i].text);
}

int
fmt_state_active(const char *s)
{
	return strcmp(s, "PENDING") == 0 || strcmp(s, "RUNNING") == 0 ||
	    strcmp(s, "SUSPENDED") == 0;
}

/* Whether the comma-separated list has word as one of its items. */
static int
fmt_has_word(const char *list, const char *word)
{
	size_t n = strlen(word);
	const char *p = list;

	for (; (p = strstr(p, word)) != NULL; p += n)
		if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
			return 1;
	return 0;
}

const char *
fmt_state(const char *s)
{
	/* nvq's names, and Slurm's short codes (squeue's ST column) */
	static const char *const states[][2] = { { "PENDING", "PD" }, { "RUNNING", "R" },
	    { "COMPLETED", "CD" }, { "FAILED", "F" }, { "CANCELLED", "CA" },
	    { "TIMEOUT", "TO" }, { "NODE_FAIL", "NF" }, { "SUSPENDED", "S" } };
	size_t i;

	for (i = 0; i < sizeof(states) / sizeof(states[0]); i++)
		if (strcasecmp(states[i][0], s) == 0 || strcasecmp(states[i][1], s) == 0)
			return states[i][0];
	return NULL;
}

int
fmt_states(const char *list, char *out, size_t len, char *bad, size_t badlen)
{
	char buf[128], *p, *tok, *save = NULL;
	const char *st;
	size_t n = 0;

	*out = '\0';
	snprintf(bad, badlen, "%s", list);
	if (strlen(list) >= sizeof(buf))
		return -1;
	snprintf(buf, sizeof(buf), "%s", list);
	for (p = buf; (tok = strtok_r(p, ",", &save)) != NULL; p = NULL) {
		if ((st = fmt_state(tok)) == NULL) {
			snprintf(bad, badlen, "%s", tok);
			return -1;
		}
		/* each once, in the order given */
		if (fmt_has_word(out, st))
			continue;
		if (snprintf(out + n, len - n, "%s%s", n ? "," : "", st) >= (int)(len - n))
			return -1;
		n = strlen(out);
	}
	return n > 0 ? 0 : -1;
}

void
fmt_duration(int64_t s, char *buf, size_t len)
{
	if (s < 0)
		s = 0;
	if (s < 60)
		snprintf(buf, len, "%llds", (long long)s);
	else if (s < 3600)
		snprintf(buf, len, "%lldm%02llds", (long long)(s / 60), (long long)(s % 60));
	else if (s < 86400)
		snprintf(buf, len, "%lldh%02lldm", (long long)(s / 3600), (long long)(s % 3600 / 60));
	else
		snprintf(buf, len, "%lldd%02lldh", (long long)(s / 86400),
		    (long long)(s % 86400 / 3600));
}
