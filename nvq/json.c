/*
 * json.c: nvq's JSON values (json.h): a tree of objects, arrays and
 * scalars, each node with its key (in an object) and its next sibling;
 * printed on one line with the escapes JSON needs and those a terminal
 * needs (DEL, C1 and format controls; bytes that are not UTF-8 as U+FFFD),
 * all of them common/esc.c's.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "esc.h"
#include "json.h"

enum json_type { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_RAW, JSON_STRING, JSON_ARRAY, JSON_OBJECT };

struct json {
	enum json_type	type;
	char		*key;	/* in an object; else NULL */
	char		*text;	/* JSON_STRING, JSON_RAW */
	double		num;	/* JSON_NUMBER; JSON_BOOL: 0 or 1 */
	struct json	*first, *last;	/* JSON_ARRAY, JSON_OBJECT */
	struct json	*next;
};

static struct json *
json_new(enum json_type type)
{
	struct json *v = calloc(1, sizeof(*v));

	if (v != NULL)
		v->type = type;
	return v;
}

static struct json *
json_text(enum json_type type, const char *s)
{
	struct json *v = json_new(type);

	if (v != NULL && (v->text = strdup(s != NULL ? s : "")) == NULL) {
		free(v);
		return NULL;
	}
	return v;
}

struct json *
json_object(void)
{
	return json_new(JSON_OBJECT);
}

struct json *
json_array(void)
{
	return json_new(JSON_ARRAY);
}

struct json *
json_string(const char *s)
{
	return json_text(JSON_STRING, s);
}

struct json *
json_raw(const char *s)
{
	return json_text(JSON_RAW, s);
}

struct json *
json_number(double d)
{
	struct json *v = json_new(JSON_NUMBER);

	if (v != NULL)
		v->num = d;
	return v;
}

struct json *
json_bool(int b)
{
	struct json *v = json_new(JSON_BOOL);

	if (v != NULL)
		v->num = b != 0;
	return v;
}

struct json *
json_null(void)
{
	return json_new(JSON_NULL);
}

void
json_add(struct json *o, const char *key, struct json *v)
{
	if (v == NULL)
		return;
	if (o == NULL || (o->type != JSON_OBJECT && o->type != JSON_ARRAY) ||
	    (o->type == JSON_OBJECT && (key == NULL || (v->key = strdup(key)) == NULL))) {
		json_free(v);
		return;
	}
	if (o->last != NULL)
		o->last->next = v;
	else
		o->first = v;
	o->last = v;
}

static int json_esc_flags;	/* esc_json's: ESC_ASCII for a terminal that is not UTF-8 */

void
json_set_ascii(int on)
{
	json_esc_flags = on ? ESC_ASCII : 0;
}

/* s as a JSON string, quotes included, escaped as esc.h says. */
static void
json_print_string(FILE *fp, const char *s)
{
	char small[512], *b = small;
	size_t need = ESC_JSON_MAX(strlen(s));

	if (need > sizeof(small) && (b = malloc(need)) == NULL) {
		fputs("\"\"", fp);	/* out of memory: nothing rather than raw text */
		return;
	}
	esc_json(b, s, json_esc_flags);
	fputc('"', fp);
	fputs(b, fp);
	fputc('"', fp);
	if (b != small)
		free(b);
}

/* Integers as integers; others with as many digits as give the same double back. */
static void
json_print_number(FILE *fp, double d)
{
	char buf[32];

	if (!isfinite(d))
		fputs("null", fp);	/* JSON has no infinity */
	else if (d == floor(d) && fabs(d) < 9007199254740992.0)
		fprintf(fp, "%lld", (long long)d);
	else {
		snprintf(buf, sizeof(buf), "%.15g", d);
		if (strtod(buf, NULL) != d)
			snprintf(buf, sizeof(buf), "%.17g", d);
		fputs(buf, fp);
	}
}

void
json_print(FILE *fp, const struct json *v)
{
	const struct json *c;

	if (v == NULL) {
		fputs("null", fp);
		return;
	}
	switch (v->type) {
	case JSON_NULL: fputs("null", fp); break;
	case JSON_BOOL: fputs(v->num != 0 ? "true" : "false", fp); break;
	case JSON_NUMBER: json_print_number(fp, v->num); break;
	case JSON_RAW: fputs(v->text, fp); break;
	case JSON_STRING: json_print_string(fp, v->text); break;
	case JSON_ARRAY:
	case JSON_OBJECT:
		fputc(v->type == JSON_ARRAY ? '[' : '{', fp);
		for (c = v->first; c != NULL; c = c->next) {
			if (c != v->first)
				fputc(',', fp);
			if (v->type == JSON_OBJECT) {
				json_print_string(fp, c->key);
				fputc(':', fp);
			}
			json_print(fp, c);
		}
		fputc(v->type == JSON_ARRAY ? ']' : '}', fp);
		break;
	}
}

void
json_free(struct json *v)
{
	struct json *c, *next;

	if (v == NULL)
		return;
	for (c = v->first; c != NULL; c = next) {
		next = c->next;
		json_free(c);
	}
	free(v->key);
	free(v->text);
	free(v);
}
