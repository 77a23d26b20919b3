/*
 * roff.c: man pages from the programs' tables (see roff.h).
 */
#include "roff.h"

void
roff_head(FILE *fp, const char *name, int section, const char *what)
{
	fprintf(fp, ".TH %s %d \"\" \"nvq\" \"nvq\"\n.SH NAME\n%s \\- ", name, section, name);
	roff_text(fp, what);
	fputc('\n', fp);
}

void
roff_text(FILE *fp, const char *s)
{
	int bol = 1;

	for (; *s; s++) {
		if (bol && (*s == '.' || *s == '\''))
			fputs("\\&", fp);
		if (*s == '\\')
			fputs("\\e", fp);
		else if (*s == '-')
			fputs("\\-", fp);
		else
			fputc(*s, fp);
		bol = *s == '\n';
	}
}

void
roff_para(FILE *fp, const char *s)
{
	fputs(".PP\n", fp);
	roff_text(fp, s);
	fputc('\n', fp);
}

void
roff_item(FILE *fp, const char *bold, const char *plain, const char *text)
{
	fputs(".TP\n\\fB", fp);
	roff_text(fp, bold);
	fputs("\\fR", fp);
	if (plain != NULL) {
		fputc(' ', fp);
		roff_text(fp, plain);
	}
	fputc('\n', fp);
	roff_text(fp, text);
	fputc('\n', fp);
}
