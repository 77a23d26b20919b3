/*
 * table.c: the CLI's tables (see table.h).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "nvq.h"
#include "table.h"

/* ANSI colours of states: running green, waiting yellow, failed red, ... */
static const char *
table_state_color(const char *s)
{
	if (strcmp(s, "RUNNING") == 0)
		return "\033[32m";
	if (strcmp(s, "PENDING") == 0)
		return "\033[33m";
	if (strcmp(s, "SUSPENDED") == 0)
		return "\033[36m";
	if (strcmp(s, "FAILED") == 0 || strcmp(s, "TIMEOUT") == 0 || strcmp(s, "NODE_FAIL") == 0)
		return "\033[31m";
	if (strcmp(s, "CANCELLED") == 0)
		return "\033[35m";
	return NULL;
}

int
table_colors(void)
{
	const char *nc = getenv("NO_COLOR"), *term = getenv("TERM");

	return (nc == NULL || *nc == '\0') && (term == NULL || strcmp(term, "dumb") != 0);
}

int
table_init(struct table *t, const struct table_col *cols, int ncols, const char *deflt,
    const char *format)
{
	struct winsize ws;
	const char *p = format != NULL ? format : deflt;
	char name[32], known[512];
	size_t n, off = 0;
	int i;

	memset(t, 0, sizeof(*t));
	t->cols = cols;
	t->ncols = ncols;
	while (*p != '\0') {
		n = strcspn(p, ",");
		for (i = 0; i < ncols; i++)
			if (strlen(cols[i].name) == n && strncasecmp(cols[i].name, p, n) == 0)
				break;
		if (i == ncols || t->nsel == TABLE_MAX_COLS) {
			for (i = 0; i < ncols; i++)
				off += (size_t)snprintf(known + off, off < sizeof(known) ?
				    sizeof(known) - off : 0, "%s%s", i ? "," : "", cols[i].name);
			snprintf(name, sizeof(name), "%.*s", (int)(n < 31 ? n : 31), p);
			nvq_err("--format: %s column \"%s\"; the columns: %s", i == ncols ?
			    "no" : "too many columns at", fmt_safe(name), known);
			return -1;
		}
		t->sel[t->nsel++] = i;
		p += n;
		if (*p == ',')
			p++;
	}
	if (t->nsel == 0) {
		nvq_err("--format: no column");
		return -1;
	}
	if (isatty(1)) {
		if (ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
			t->width = ws.ws_col;
		t->color = table_colors();
	}
	return 0;
}

int
table_shows(const struct table *t, const char *name)
{
	int i;

	for (i = 0; i < t->nsel; i++)
		if (strcmp(t->cols[t->sel[i]].name, name) == 0)
			return 1;
	return 0;
}

/* Characters on the screen of UTF-8 text (fmt_safe's: no controls). */
static size_t
table_cells(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* Appends text, padded to w; not at all past the terminal's width (*used so far). */
static void
table_put(struct table *t, size_t *off, const char *s, int w, int right, const char *color,
    size_t *used)
{
	size_t len = table_cells(s), pad = w > 0 && (size_t)w > len ? (size_t)w - len : 0;
	size_t need = *off + strlen(s) + pad + 16, i;
	char *nl;

	if (need > t->cap) {
		if ((nl = realloc(t->line, need * 2)) == NULL)
			return;
		t->line = nl;
		t->cap = need * 2;
	}
	if (right)
		for (i = 0; i < pad; i++)
			t->line[(*off)++] = ' ';
	if (color != NULL)
		*off += (size_t)sprintf(t->line + *off, "%s", color);
	memcpy(t->line + *off, s, strlen(s));
	*off += strlen(s);
	if (color != NULL)
		*off += (size_t)sprintf(t->line + *off, "\033[0m");
	if (!right)
		for (i = 0; i < pad; i++)
			t->line[(*off)++] = ' ';
	*used += len + pad;
	t->line[*off] = '\0';
}

/* The line, cut to the terminal's width: whole characters, a … where it was cut. */
static void
table_emit(struct table *t, size_t used)
{
	size_t cells = 0, i, keep = 0;
	int in_esc = 0;

	if (t->line == NULL)
		return;
	/* no trailing blanks */
	for (i = strlen(t->line); i > 0 && t->line[i - 1] == ' '; i--)
		;
	t->line[i] = '\0';
	if (t->width == 0 || used <= (size_t)t->width) {
		puts(t->line);
		return;
	}
	for (i = 0; t->line[i]; i++) {
		if (t->line[i] == '\033')
			in_esc = 1;
		if (!in_esc && ((unsigned char)t->line[i] & 0xc0) != 0x80) {
			if (cells == (size_t)t->width - 1)
				break;
			cells++;
		}
		if (in_esc && t->line[i] == 'm')
			in_esc = 0;
		keep = i + 1;
	}
	while (keep > 0 && ((unsigned char)t->line[keep] & 0xc0) == 0x80)
		keep--;
	t->line[keep] = '\0';
	/* a colour cut in its middle is ended; "~" where the charset has no … */
	printf("%s%s%s\n", t->line, t->color ? "\033[0m" : "", fmt_cut_mark());
}

void
table_header(struct table *t)
{
	char name[32];
	size_t off = 0, used = 0, i;
	int k;

	for (k = 0; k < t->nsel; k++) {
		const struct table_col *c = &t->cols[t->sel[k]];

		snprintf(name, sizeof(name), "%s", c->name);
		for (i = 0; name[i]; i++)
			name[i] = (char)toupper((unsigned char)name[i]);
		if (k > 0)
			table_put(t, &off, " ", 0, 0, NULL, &used);
		table_put(t, &off, name, k == t->nsel - 1 && !c->right ? 0 : c->width, c->right,
		    NULL, &used);
	}
	table_emit(t, used);
}

void
table_row(struct table *t, const char *const *cells)
{
	size_t off = 0, used = 0;
	int k;

	for (k = 0; k < t->nsel; k++) {
		int i = t->sel[k];
		const struct table_col *c = &t->cols[i];
		const char *s = cells[i] != NULL ? cells[i] : "-";

		if (k > 0)
			table_put(t, &off, " ", 0, 0, NULL, &used);
		table_put(t, &off, s, k == t->nsel - 1 && !c->right ? 0 : c->width, c->right,
		    t->color && strcmp(c->name, "state") == 0 ? table_state_color(s) : NULL,
		    &used);
	}
	table_emit(t, used);
}

void
table_free(struct table *t)
{
	free(t->line);
	t->line = NULL;
}
