/*
 * roff.h: man pages written by the programs themselves, from their own
 * tables (nvq's commands, nvqd's options, nvq.ini's keys), so that a page
 * cannot drift from what the program accepts.
 */
#ifndef NVQ_ROFF_H
#define NVQ_ROFF_H

#include <stdio.h>

/* The page's header: .TH NAME SECTION, and its NAME section. */
void	roff_head(FILE *, const char *name, int section, const char *what);
/* Text as roff reads it: backslashes, dashes, and a line's leading . and ' escaped. */
void	roff_text(FILE *, const char *s);
/* A tagged paragraph: bold, then plain after it on the tag's line (NULL: none), then text. */
void	roff_item(FILE *, const char *bold, const char *plain, const char *text);
/* A paragraph of text (lines of it as they are). */
void	roff_para(FILE *, const char *s);

#endif
